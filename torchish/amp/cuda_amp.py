"""``torchish.cuda.amp``: PyTorch's deprecated cuda spellings of ``torchish.amp``.

Each warns with PyTorch's ``FutureWarning`` when used, then behaves as the ``torchish.amp`` form with
``device_type='cuda'``.
"""
from __future__ import annotations

import functools
import warnings

from .. import _dtype
from . import autocast_mode as _mode
from . import grad_scaler as _scaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def device_spellings(device, default_dtype, module):
    """PyTorch's deprecated ``torch.<device>.amp.autocast`` / ``GradScaler``: the ``torchish.amp`` classes bound to
    ``device``, warning with PyTorch's FutureWarning when constructed."""
    def warn(old, new):
        warnings.warn(f"`torch.{device}.amp.{old}(args...)` is deprecated. Please use `torch.amp.{new}` instead.",
                      FutureWarning, stacklevel=3)

    class autocast(_mode.autocast):
        __doc__ = f"``torchish.amp.autocast({device!r}, ...)``."

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warn("autocast", f"autocast('{device}', args...)")
            super().__init__(device, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    class GradScaler(_scaler.GradScaler):
        __doc__ = f"``torchish.amp.GradScaler({device!r}, ...)``."

        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warn("GradScaler", f"GradScaler('{device}', args...)")
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    for cls in (autocast, GradScaler):
        cls.__module__, cls.__qualname__ = module, cls.__name__
    return autocast, GradScaler, warn


autocast, GradScaler, _warn = device_spellings("cuda", _dtype.float16, __name__)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torchish.amp.custom_fwd(device_type='cuda', cast_inputs=...)``."""
    _warn("custom_fwd", "custom_fwd(args..., device_type='cuda')")
    return functools.partial(_mode.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``torchish.amp.custom_bwd(device_type='cuda')``."""
    _warn("custom_bwd", "custom_bwd(args..., device_type='cuda')")
    return functools.partial(_mode.custom_bwd, device_type="cuda")(bwd)


def amp_definitely_not_available() -> bool:
    from .. import cuda
    return not cuda.is_available()
