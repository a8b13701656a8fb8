"""``torchish.cpu``: PyTorch's ``torch.cpu`` module (the host as a device, and ``torch.cpu.amp``)."""
from __future__ import annotations

from . import amp as amp  # noqa: F401
from .._device import cpu as _cpu
from ..streams import CpuEvent as Event, CpuStream as Stream, CpuStreamContext as StreamContext, wait_for as _wait_for
from ..streams import cpu_current_stream as current_stream, cpu_stream as stream

__all__ = ["Event", "Stream", "StreamContext", "amp", "current_device", "current_stream", "device_count",
           "is_available", "is_initialized", "set_device", "stream", "synchronize"]


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
    _wait_for(_cpu())
