"""``torchish.cpu``: PyTorch's ``torch.cpu`` module (the host as a device, and ``torch.cpu.amp``)."""
from __future__ import annotations

from . import amp as amp  # noqa: F401

__all__ = ["amp", "current_device", "device_count", "is_available", "is_initialized", "set_device", "synchronize"]


def is_available() -> bool:
    """Always True: there is a CPU."""
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Does nothing (there is one CPU device), as in PyTorch."""


def synchronize(device=None) -> None:
    """Wait for the work queued on the CPU (JAX's asynchronous dispatch) to finish."""
    import jax
    from .. import _device
    cpu = _device.cpu()
    for a in jax.live_arrays():
        if cpu in a.devices():
            a.block_until_ready()
