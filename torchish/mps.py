"""``torchish.mps``: PyTorch's Apple-GPU module. JAX offers torchish no Metal device, so this is PyTorch's build
without MPS: ``is_available()`` is False, ``device_count()`` 0, ``manual_seed`` does nothing, and the calls that need
the device raise its RuntimeError ("Cannot execute ... without MPS backend.")."""
from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    """Nothing to seed (PyTorch ignores it too without MPS)."""


def _needs_backend(call):
    def fn(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {call}() without MPS backend.")
    return fn


seed = get_rng_state = set_rng_state = _needs_backend("getDefaultGenerator")
synchronize = _needs_backend("deviceSynchronize")
empty_cache = _needs_backend("emptyCache")
current_allocated_memory = _needs_backend("getCurrentAllocatedMemory")
driver_allocated_memory = _needs_backend("getDriverAllocatedMemory")
recommended_max_memory = _needs_backend("getRecommendedMaxMemory")
set_per_process_memory_fraction = _needs_backend("setMemoryFraction")


class Event:
    def __init__(self, enable_timing=False):
        raise RuntimeError("Cannot execute acquireEvent() without MPS backend.")
