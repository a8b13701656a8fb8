"""``torchish.cuda``: the accelerator JAX has (GPU, else TPU), under PyTorch's ``torch.cuda`` names.

Without an accelerator these behave as in a CPU-only PyTorch build: ``is_available()`` is False,
``device_count()`` is 0, and calls that need a device raise ``AssertionError("Torch not compiled with CUDA
enabled")``.

Example:
    >>> import torchish as torch
    >>> device = "cuda" if torch.cuda.is_available() else "cpu"
    >>> x = torch.ones(3, device=device)
"""
from __future__ import annotations

import jax

from . import _device, _random
from .streams import CudaEvent as Event, CudaStream as Stream, StreamContext  # noqa: F401  (torch.cuda's names)
from .streams import current_stream, default_stream, set_stream, stream, wait_for  # noqa: F401
from . import _cuda_nvtx as nvtx  # noqa: F401  (torch.cuda.nvtx; registered as torchish.cuda.nvtx)

_NO_CUDA = "Torch not compiled with CUDA enabled"


class OutOfMemoryError(RuntimeError):
    """``torch.OutOfMemoryError`` (also ``torch.cuda.OutOfMemoryError``): named in ``except`` clauses of scripts
    that retry with a smaller batch; an ``except`` naming it must not fail itself when another error passes."""


class AcceleratorError(RuntimeError):
    """``torch.AcceleratorError``: an error reported by the accelerator runtime."""


def is_available() -> bool:
    """Whether an accelerator (GPU or TPU) is visible to JAX."""
    return bool(_device.accelerators())


def device_count() -> int:
    return len(_device.accelerators())


def is_initialized() -> bool:
    return is_available()


def _require():
    if not is_available():
        raise AssertionError(_NO_CUDA)


def _index(device=None, optional=True):
    """The accelerator index named by ``device``, as PyTorch's ``torch.cuda._utils._get_device_index``: a string or
    device must be of type cuda, an int (or bool) is the index; without an index, the current accelerator's
    (None without one, as in a CPU-only build) where ``optional``, else its ValueError."""
    if isinstance(device, str):
        device = _device.device(device)
    idx = None
    if isinstance(device, _device.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        idx = device.index
    elif isinstance(device, int):
        idx = device
    if idx is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        idx = _device.current_index() if is_available() else None
    return idx


def _no_binding(name):
    """A CPU-only PyTorch build lacks the CUDA bindings these calls go to: its AttributeError."""
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def current_device() -> int:
    """The index of the accelerator that ``"cuda"`` (without an index) means."""
    _require()
    return _device.current_index()


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or a device) the current accelerator; a negative index does nothing."""
    idx = _index(device, optional=False)
    if idx < 0:
        return
    if not is_available():
        raise _no_binding("_cuda_setDevice")
    if idx >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    _device.set_current_index(idx)


def _exchange_device(idx) -> int:
    """Make ``idx`` current and return the index it replaces (-1, doing nothing, for a negative one)."""
    if idx < 0:
        return -1
    if not is_available():
        raise RuntimeError("PyTorch was compiled without CUDA support")
    prev = _device.current_index()
    set_device(idx)
    return prev


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 works on the accelerator (XLA supports it on every GPU and TPU); False without one."""
    return is_available()


def get_device_name(device=None) -> str:
    _require()
    return _device.accelerators()[_index(device)].device_kind


def synchronize(device=None) -> None:
    """Wait until all work queued on the accelerator has finished."""
    _require()
    wait_for(_device.accelerators()[_index(device)])


class device:
    """Context manager that changes the current accelerator: ``with torchish.cuda.device(1): ...`` (a negative
    index leaves it; entering yields None, as PyTorch's)."""

    def __init__(self, device):
        self.idx = _index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, *exc):
        self.idx = _exchange_device(self.prev_idx)
        return False


class device_of(device):
    """``device`` of the accelerator ``obj`` (a tensor) is on; does nothing for a CPU tensor."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


# ----------------------------------------------------------------------------------------------------------------
# random: torchish has one default generator for every device, so with an accelerator these seed it as
# ``torchish.manual_seed`` does; without one they do nothing (PyTorch's CPU generator is not touched either)


def manual_seed(seed) -> None:
    """Seed the random generator (torchish shares one generator across devices)."""
    if is_available():
        _random.manual_seed(seed)


def manual_seed_all(seed) -> None:
    manual_seed(seed)


def seed() -> None:
    if is_available():
        _random.seed()


def seed_all() -> None:
    seed()


def initial_seed() -> int:
    _require()
    return _random.initial_seed()


def get_rng_state(device="cuda"):
    _require()
    return _random.get_rng_state()


def set_rng_state(new_state, device="cuda") -> None:
    """Without an accelerator PyTorch queues the call for CUDA's initialisation, which never comes: nothing."""
    if is_available():
        _random.set_rng_state(new_state)


# ----------------------------------------------------------------------------------------------------------------
# memory statistics
#
# With an accelerator the numbers come from XLA's allocator (``Device.memory_stats()``: ``bytes_in_use``,
# ``peak_bytes_in_use``, ``bytes_reserved`` ...). XLA's peak cannot be reset, so ``reset_peak_memory_stats`` notes
# the allocator's peak at that moment: until XLA's peak grows past it, the peak reported is the largest current
# value seen by these functions since the reset.
#
# Without an accelerator, ``memory_allocated()`` and friends return 0, as in PyTorch's CPU-only build. Asked about
# the CPU explicitly (``memory_allocated("cpu")``) they measure it instead, since XLA's CPU backend has no
# allocator stats: "allocated" is the sum of ``nbytes`` of the live JAX arrays on the CPU (``jax.live_arrays()``,
# which includes arrays not owned by tensors), "reserved" equals "allocated" (no pool), and the peak is the largest
# value seen at calls of these functions since the last reset — a lower bound of the true peak.

_PEAKS: dict = {}  # jax device -> [allocator peak at the last reset (or None), largest current value seen]


def _mem_device(device=None):
    """The jax device to measure: the accelerator named, the CPU when asked for explicitly, else None (0)."""
    if device is not None and not isinstance(device, int) and _device.device(device).type == "cpu":
        return _device.cpu()
    if is_available():
        return _device.accelerators()[_index(device)]
    return None


def _live_bytes(jdev) -> int:
    total = 0
    for a in jax.live_arrays():
        devs = a.devices()
        if len(devs) == 1:
            if jdev in devs:
                total += a.nbytes
        else:
            total += sum(s.data.nbytes for s in a.addressable_shards if s.device == jdev)
    return total


def _current(device=None):
    """(jax device, allocator stats or None, bytes in use now, bytes reserved now); updates the seen peak."""
    jdev = _mem_device(device)
    stats = None if jdev is None else (jdev.memory_stats() or None)
    if jdev is None:
        used = reserved = 0
    elif stats is not None:
        used = int(stats.get("bytes_in_use", 0))
        reserved = int(stats.get("bytes_reserved", stats.get("pool_bytes", used)))
    else:
        used = reserved = _live_bytes(jdev)
    rec = _PEAKS.setdefault(jdev, [None, 0])
    rec[1] = max(rec[1], used)
    return jdev, stats, used, reserved


def _peak(jdev, stats, used) -> int:
    at_reset, seen = _PEAKS[jdev]
    if stats is not None and "peak_bytes_in_use" in stats:
        xla_peak = int(stats["peak_bytes_in_use"])
        if at_reset is None or xla_peak > at_reset:
            return xla_peak
    return max(seen, used)


def memory_allocated(device=None) -> int:
    """Bytes of device memory held by arrays now (0 without an accelerator; ``"cpu"``: see the notes above)."""
    return _current(device)[2]


def max_memory_allocated(device=None) -> int:
    """The most bytes held at once since the program started or ``reset_peak_memory_stats``."""
    jdev, stats, used, _ = _current(device)
    return _peak(jdev, stats, used)


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds (its pool); equal to ``memory_allocated`` without allocator stats."""
    return _current(device)[3]


def max_memory_reserved(device=None) -> int:
    jdev, stats, used, reserved = _current(device)
    if stats is not None and "peak_bytes_reserved" in stats:
        return int(stats["peak_bytes_reserved"])
    return max(reserved, _peak(jdev, stats, used))


def reset_peak_memory_stats(device=None) -> None:
    """Start measuring the peak afresh from the current usage."""
    if _mem_device(device) is None:
        raise _no_binding("_cuda_resetPeakMemoryStats")
    jdev, stats, used, _ = _current(device)
    at_reset = int(stats["peak_bytes_in_use"]) if stats is not None and "peak_bytes_in_use" in stats else None
    _PEAKS[jdev] = [at_reset, used]


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated PyTorch spelling of :func:`reset_peak_memory_stats`."""
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """PyTorch's allocation counters: torchish keeps none beyond the peak, so nothing to reset (with a device)."""
    if _mem_device(device) is None:
        raise _no_binding("_cuda_resetAccumulatedMemoryStats")


def memory_stats(device=None) -> dict:
    """PyTorch-named counters (``allocated_bytes.all.current`` / ``.peak``, ``reserved_bytes.all.current`` /
    ``.peak``) plus, with an accelerator, XLA's own statistics under their names."""
    jdev, stats, used, reserved = _current(device)
    if jdev is None:
        return {}  # PyTorch's CPU-only build has no statistics either
    peak = _peak(jdev, stats, used)
    out = {"allocated_bytes.all.current": used, "allocated_bytes.all.peak": peak,
           "active_bytes.all.current": used, "active_bytes.all.peak": peak,
           "reserved_bytes.all.current": reserved,
           "reserved_bytes.all.peak": max(reserved, int((stats or {}).get("peak_bytes_reserved", peak))),
           "num_ooms": 0}
    if stats is not None:
        out["num_alloc_retries"] = 0
        out.update({k: v for k, v in stats.items() if k not in out})
    return dict(sorted(out.items()))


def memory_summary(device=None, abbreviated=False) -> str:
    """A short text report of :func:`memory_stats`. Without an accelerator there are no statistics to report, and
    PyTorch's CPU-only build raises the ``KeyError`` of its first missing counter: so does this."""
    s = memory_stats(device)
    if not s:
        raise KeyError("allocated_bytes.all.current")
    rows = [f"{k:<40} {v:>16}" for k, v in s.items()]
    return "\n".join([f"torchish memory summary ({_mem_device(device) or 'no device'})", "-" * 57, *rows]) + "\n"


def empty_cache() -> None:
    """Nothing to free: XLA's allocator manages its pool itself."""


def memory_cached(device=None) -> int:
    """Deprecated PyTorch name of :func:`memory_reserved`."""
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated PyTorch name of :func:`max_memory_reserved`."""
    return max_memory_reserved(device)


def mem_get_info(device=None):
    """(free, total) bytes of the accelerator, from XLA's allocator limit."""
    _require()
    jdev = _device.accelerators()[_index(device)]
    stats = jdev.memory_stats() or {}
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total


def get_rng_state_all():
    """The generator state of every accelerator ([] without one; torchish shares one generator across devices)."""
    return [get_rng_state() for _ in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for state in new_states:
        set_rng_state(state)


def get_device_capability(device=None):
    """(major, minor) compute capability of a GPU (JAX reports it as ``"9.0"``); (0, 0) for a TPU."""
    _require()
    cap = getattr(_device.accelerators()[_index(device)], "compute_capability", None)
    return tuple(int(p) for p in str(cap).split(".")[:2]) if cap else (0, 0)


class _DeviceProperties:
    def __init__(self, jdev, capability, total):
        self.name, self.total_memory = jdev.device_kind, total
        self.major, self.minor = capability
        self.multi_processor_count = int(getattr(jdev, "core_count", 0) or 0)
        self.is_integrated = False

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """The accelerator's name, compute capability, memory and multiprocessor count."""
    _require()
    idx = _index(device)
    return _DeviceProperties(_device.accelerators()[idx], get_device_capability(idx), mem_get_info(idx)[1])


def is_tf32_supported() -> bool:
    """Whether the GPU has TF32 matmuls (compute capability 8.0 and later)."""
    return is_available() and get_device_capability() >= (8, 0)


def get_arch_list() -> list:
    return []  # torchish compiles no CUDA kernels of its own (XLA compiles for the device it runs on)


def get_gencode_flags() -> str:
    return ""


def can_device_access_peer(device, peer_device) -> bool:
    """Whether the two accelerators can read each other's memory directly (XLA moves data between them either way;
    reported True for two devices of one platform)."""
    _require()
    for idx, what in ((_index(device), "device"), (_index(peer_device), "peer device")):
        if not 0 <= idx < device_count():
            raise AssertionError(f"Invalid {what} id")
    return True


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """PyTorch's cap on the caching allocator. XLA sizes its memory pool once, when JAX starts on the device
    (``XLA_PYTHON_CLIENT_MEM_FRACTION``, ``XLA_PYTHON_CLIENT_PREALLOCATE``), so a cap set later is checked as
    PyTorch checks it and then only warned about."""
    _require()
    _index(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    from ._global_flags import warn_once
    warn_once("torchish.cuda.set_per_process_memory_fraction does not cap XLA's memory pool, which is sized when "
              "JAX starts: set XLA_PYTHON_CLIENT_MEM_FRACTION (and XLA_PYTHON_CLIENT_PREALLOCATE=false) in the "
              "environment before importing torchish instead", key="set_per_process_memory_fraction")


def init() -> None:
    _require()


def ipc_collect() -> None:
    _require()


def is_current_stream_capturing() -> bool:
    """Whether a CUDA graph is being captured on the current stream: never (torchish captures no CUDA graphs).
    Without an accelerator it raises as a CPU-only PyTorch build does (its CUDA binding is a dummy there)."""
    if not is_available():
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    return False


has_half = True
default_generators = ()


def _submodule(name, doc, names):
    """A ``torchish.cuda.<name>`` module holding some of this module's functions (``torchish.cuda`` is a single
    module, PyTorch's is a package): importable, and an attribute here."""
    import sys
    import types
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    for n in names:
        setattr(mod, n, globals()[n])
    mod.__all__ = list(names)
    sys.modules[mod.__name__] = mod
    return mod


memory = _submodule("memory", "``torch.cuda.memory``: the memory statistics of :mod:`torchish.cuda`.", (
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "reset_max_memory_allocated", "reset_accumulated_memory_stats", "memory_stats", "memory_summary",
    "empty_cache", "memory_cached", "max_memory_cached", "mem_get_info", "set_per_process_memory_fraction"))
