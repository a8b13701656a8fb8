"""``torchish.accelerator``: PyTorch's device-neutral accelerator API (``torch.accelerator``), over
:mod:`torchish.cuda` — the accelerator JAX has (GPU, else TPU) is ``"cuda"`` here.

Recent PyTorch tutorials pick their device with it::

    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

Without an accelerator ``is_available()`` is False, ``current_accelerator()`` is None and the calls that need a device
raise PyTorch's RuntimeError."""
from __future__ import annotations

import contextlib

from . import _device, cuda as _cuda

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "empty_cache", "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "synchronize", "current_stream", "set_stream"]

_NONE = "Cannot access accelerator device when none is available."


def _require():
    if not _cuda.is_available():
        raise RuntimeError(_NONE)


def is_available() -> bool:
    return _cuda.is_available()


def device_count() -> int:
    return _cuda.device_count()


def current_accelerator(check_available=False):
    """The accelerator's device type as a device (``device(type='cuda')``), or None without one."""
    return _device.device("cuda") if _cuda.is_available() else None


def current_device_index() -> int:
    _require()
    return _cuda.current_device()


def set_device_index(device, /) -> None:
    _require()
    _cuda.set_device(device)


current_device_idx, set_device_idx = current_device_index, set_device_index


@contextlib.contextmanager
def device_index(device, /):
    """Make ``device`` (an index; None: no change) the current accelerator inside the block."""
    if device is None:
        yield
        return
    _require()
    previous = _cuda.current_device()
    _cuda.set_device(device)
    try:
        yield
    finally:
        _cuda.set_device(previous)


def _needs_device(fn):
    def call(*args):
        _require()
        return fn(*args)
    call.__name__, call.__doc__ = fn.__name__, fn.__doc__
    return call


synchronize = _needs_device(_cuda.synchronize)
current_stream = _needs_device(_cuda.current_stream)
set_stream = _needs_device(_cuda.set_stream)
empty_cache = _needs_device(_cuda.empty_cache)
memory_allocated = _needs_device(_cuda.memory_allocated)
max_memory_allocated = _needs_device(_cuda.max_memory_allocated)
memory_reserved = _needs_device(_cuda.memory_reserved)
max_memory_reserved = _needs_device(_cuda.max_memory_reserved)
memory_stats = _needs_device(_cuda.memory_stats)
reset_peak_memory_stats = _needs_device(_cuda.reset_peak_memory_stats)


@_needs_device
def reset_accumulated_memory_stats(device_index=None, /) -> None:
    """Nothing accumulates: XLA's allocator keeps no running totals torchish reports."""


def get_device_module(device=None):
    """``torch.get_device_module``: the module of a device type (``torchish.cuda``, ``torchish.cpu``...); None means
    the accelerator's, else the CPU's."""
    import torchish
    if isinstance(device, _device.device):
        name = device.type
    elif isinstance(device, str):
        name = _device.device(device).type
    elif device is None:
        name = "cuda" if _cuda.is_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = getattr(torchish, name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return module


def is_vulkan_available() -> bool:
    return False
