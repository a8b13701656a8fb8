"""The device APIs of the top-level namespace against a CPU-only PyTorch build: streams and events
(torch.Stream/Event, torch.cuda/cpu stream APIs), torch.cuda.nvtx, the torch.xpu and torch.mps modules,
get_device_module, to_dlpack; what works, what raises and with which message. Their behaviour with an accelerator (an event's timing around
queued work, the current stream under ``torch.cuda.stream``) is checked in tests/_device_worker.py, where a second
host device stands for ``cuda``."""
from __future__ import annotations

import pytest

from oracle import needs_torch, raised, same, same_error, torch, torchish


def _outcome(fn):
    """What ``fn()`` returns (None, a bool, an int, a str) or raises, as comparable data."""
    err = raised(fn)
    return ("raised", *err) if err else ("ok", fn())


@needs_torch
def test_device_neutral_stream_on_the_cpu():
    same(lambda T: (repr(T.Stream()), T.Stream().device_type, T.Stream().device_index, T.Stream().stream_id,
                    str(T.Stream().device), T.Stream().query(), T.Stream().synchronize(),
                    T.Stream() == T.Stream(), hash(T.Stream()) == hash(T.Stream()), repr(T.Stream(priority=-1)),
                    T.Stream().wait_event(T.Event())))
    same_error(lambda T: T.Stream().record_event())
    same_error(lambda T: T.Stream().wait_stream(T.Stream()))
    same_error(lambda T: T.Stream(device="cuda"))


@needs_torch
def test_device_neutral_event_on_the_cpu():
    same(lambda T: (T.Event().query(), T.Event().synchronize(), T.Event().wait(), str(T.Event().device),
                    T.Event().event_id, T.Event(enable_timing=True).query()))
    same_error(lambda T: T.Event().record())
    same_error(lambda T: T.Event(enable_timing=True).record(T.Stream()))
    same_error(lambda T: T.Event().elapsed_time(T.Event()))  # ValueError: timing first
    same_error(lambda T: T.Event(enable_timing=True).elapsed_time(T.Event(enable_timing=True)))
    same_error(lambda T: T.Event(device="cuda"))


@needs_torch
@pytest.mark.parametrize("call", ["Event(enable_timing=True)", "Event()", "Stream()", "current_stream()",
                                  "default_stream()", "stream(None).__enter__()", "StreamContext(None).__enter__()",
                                  "set_stream(None)", "nvtx.range_push('a')", "nvtx.range_pop()",
                                  "nvtx.range_start('a')", "nvtx.range_end(1)", "nvtx.mark('a')",
                                  "nvtx.range('a {}', 1).__enter__()", "set_per_process_memory_fraction(0.5)",
                                  "can_device_access_peer(0, 0)", "get_gencode_flags()"])
def test_cuda_streams_without_cuda(call):
    outcomes = [_outcome(lambda: eval(f"lib.cuda.{call}", {"lib": lib})) for lib in (torch, torchish)]
    assert outcomes[0] == outcomes[1]


@needs_torch
def test_cpu_streams():
    def run(T):
        s = T.cpu.Stream()
        with T.cpu.stream(s) as entered:
            inside = T.cpu.current_stream() is s
        e = T.cpu.Event()
        return (entered, inside, T.cpu.current_stream() is s, s.wait_stream(s), s.record_event(), s.wait_event(e),
                e.query(), e.record(), e.synchronize(), e.wait(), T.cpu.synchronize(), T.cpu.stream(None).__enter__())
    same(run)
    same_error(lambda T: T.accelerator.current_stream())


XPU = ["is_available()", "device_count()", "is_initialized()", "synchronize()", "current_device()",
       "get_device_name()", "get_device_properties()", "get_device_capability()", "manual_seed(0)",
       "manual_seed_all(0)", "seed()", "seed_all()", "initial_seed()", "get_rng_state()", "empty_cache()",
       "memory_allocated()", "max_memory_allocated()", "memory_reserved()", "max_memory_reserved()",
       "memory_stats() == {}", "mem_get_info()", "is_bf16_supported()", "is_tf32_supported()", "get_arch_list()",
       "init()", "current_stream()", "set_device(0)", "device(0).__enter__()", "device(-1).__enter__()",
       "device(None).__enter__()", "Stream()", "Event()", "stream(None).__enter__()",
       "default_generators"]
MPS = ["is_available()", "device_count()", "manual_seed(0)", "seed()", "get_rng_state()", "synchronize()",
       "empty_cache()", "current_allocated_memory()", "driver_allocated_memory()", "recommended_max_memory()",
       "set_per_process_memory_fraction(0.5)"]  # (torch.mps.Event() raises too, and its __del__ then fails)


@needs_torch
@pytest.mark.parametrize("call", [f"xpu.{c}" for c in XPU] + [f"mps.{c}" for c in MPS])
def test_xpu_and_mps_modules_are_those_of_a_build_without_them(call):
    outcomes = [_outcome(lambda: eval(f"lib.{call}", {"lib": lib})) for lib in (torch, torchish)]
    assert outcomes[0] == outcomes[1]


def test_mps_event_needs_the_backend():
    with pytest.raises(RuntimeError, match="without MPS backend"):
        torchish.mps.Event()


@needs_torch
def test_get_device_module_and_dlpack_capsules():
    same(lambda T: (T.get_device_module().__name__.split(".")[-1], T.get_device_module("cpu").__name__.split(".")[-1],
                    T.get_device_module(T.device("xpu")).__name__.split(".")[-1], T.is_vulkan_available()))
    same_error(lambda T: T.get_device_module("meta"))
    same_error(lambda T: T.get_device_module(3))
    same(lambda T: T.from_dlpack(T.to_dlpack(T.arange(3.0, requires_grad=True) * 2)))
    cap = torch.to_dlpack(torch.arange(4, dtype=torch.int32))
    assert torchish.from_dlpack(cap).tolist() == [0, 1, 2, 3]
