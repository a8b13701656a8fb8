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

_NO_CUDA = "Torch not compiled with CUDA enabled"


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


def _index(device=None) -> int:
    """The accelerator index named by ``device`` (None: the current one)."""
    if device is None:
        return _device.current_index()
    if isinstance(device, int):
        return device
    dev = _device.device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index if dev.index is not None else _device.current_index()


def current_device() -> int:
    """The index of the accelerator that ``"cuda"`` (without an index) means."""
    _require()
    return _device.current_index()


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or a device) the current accelerator."""
    _require()
    idx = _index(device)
    if idx < 0:
        return  # PyTorch ignores negative indices here
    if idx >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    _device.set_current_index(idx)


def get_device_name(device=None) -> str:
    _require()
    return _device.accelerators()[_index(device)].device_kind


def synchronize(device=None) -> None:
    """Wait until all work queued on the accelerator has finished."""
    _require()
    jdev = _device.accelerators()[_index(device)]
    for a in jax.live_arrays():
        if jdev in a.devices():
            a.block_until_ready()


class device:
    """Context manager that changes the current accelerator: ``with torchish.cuda.device(1): ...``."""

    def __init__(self, device):
        self.idx = _index(device) if device is not None else -1
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev >= 0:
            set_device(self.prev)
        return False


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
    _require()
    _random.set_rng_state(new_state)


# ----------------------------------------------------------------------------------------------------------------
# memory statistics (0 without an accelerator, as in PyTorch)


def _stats(device=None) -> dict:
    if not is_available():
        return {}
    return _device.accelerators()[_index(device)].memory_stats() or {}


def memory_allocated(device=None) -> int:
    return int(_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device=None) -> int:
    return int(_stats(device).get("peak_bytes_in_use", 0))


def memory_reserved(device=None) -> int:
    s = _stats(device)
    return int(s.get("bytes_reserved", s.get("bytes_in_use", 0)))


def max_memory_reserved(device=None) -> int:
    s = _stats(device)
    return int(s.get("peak_bytes_reserved", s.get("peak_bytes_in_use", 0)))


def empty_cache() -> None:
    """Nothing to free: XLA's allocator manages its pool itself."""
