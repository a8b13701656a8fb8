"""``torchish.nn.attention``: choosing the kernel behind ``F.scaled_dot_product_attention`` (PyTorch's
``SDPBackend`` and the ``sdpa_kernel`` context manager).

torchish computes attention one way (XLA fuses it), so the choice changes no numbers. It keeps PyTorch's rules for
which choices can run on the CPU, where PyTorch has a math kernel and a flash kernel: with both turned off
attention raises "No viable backend", and the flash kernel alone refuses what it cannot take (dropout, inputs that
are not 4-D). The flags are ``torchish.backends.cuda``'s (``enable_flash_sdp``...), as in PyTorch."""
from __future__ import annotations

import contextlib
import enum

from ...backends import _SDP

__all__ = ["SDPBackend", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The kernels of scaled dot product attention."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash", SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
         SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.OVERRIDEABLE: "overrideable"}
_ORDER = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
          SDPBackend.OVERRIDEABLE)


def _cur_sdpa_kernel_backends(with_priority=False):
    """The backends enabled now."""
    return [b for b in _ORDER if _SDP[_FLAG[b]]]


def _sdpa_kernel(backends, set_priority=False):
    for b, flag in _FLAG.items():
        _SDP[flag] = b in backends


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only ``backends`` (an :class:`SDPBackend` or a list of them) inside the block; the previous flags
    come back after it."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = _cur_sdpa_kernel_backends()
    try:
        _sdpa_kernel(list(dict.fromkeys(backends)), set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
