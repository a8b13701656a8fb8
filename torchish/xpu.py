"""``torchish.xpu``: PyTorch's Intel-GPU module. JAX offers torchish no XPU device, so this is PyTorch's CPU-only
build of it: ``is_available()`` is False (device-picking code falls through to CUDA or the CPU), the seeding and
memory calls that PyTorch lets pass do nothing, and the calls that need a device raise its AssertionError."""
from __future__ import annotations

_NO_XPU = "Torch not compiled with XPU enabled"
default_generators = ()


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def _no_device(*args, **kwargs):
    raise AssertionError(_NO_XPU)


synchronize = current_device = get_device_name = get_device_properties = get_device_capability = _no_device
initial_seed = get_rng_state = get_rng_state_all = mem_get_info = init = current_stream = set_device = _no_device
set_stream = _no_device


def _nothing(*args, **kwargs) -> None:
    return None


manual_seed = manual_seed_all = seed = seed_all = set_rng_state = set_rng_state_all = empty_cache = _nothing


def _zero(device=None) -> int:
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero


def memory_stats(device=None) -> dict:
    return {}


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list:
    return []


class device:
    """``with torch.xpu.device(i):`` raises on entry (whatever ``i``, as PyTorch without XPU)."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        raise NotImplementedError("PyTorch was compiled without XPU support")

    def __exit__(self, *exc):
        return False


class Stream:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Stream")


class Event:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class StreamContext:
    """``with torch.xpu.stream(None):`` changes nothing (no XPU stream can exist here)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)
