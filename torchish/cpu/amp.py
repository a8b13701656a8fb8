"""``torchish.cpu.amp``: PyTorch's deprecated CPU spellings of ``torchish.amp``.

Each warns with PyTorch's ``FutureWarning`` when used, then behaves as the ``torchish.amp`` form with ``'cpu'``.
"""
from __future__ import annotations

import warnings

from .. import _dtype
from ..amp import autocast_mode as _mode
from ..amp import grad_scaler as _scaler

__all__ = ["autocast", "GradScaler"]


def _warn(old, new):
    warnings.warn(f"`torch.cpu.amp.{old}(args...)` is deprecated. Please use `torch.amp.{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_mode.autocast):
    """``torchish.amp.autocast("cpu", ...)``."""

    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        _warn("autocast", "autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_scaler.GradScaler):
    """``torchish.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn("GradScaler", "GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
