"""``register_autocast``: how a custom operator behaves inside ``torchish.autocast``, as in PyTorch.

Inside an autocast region for the registered device type, the op's floating-point tensor arguments on that device
(float64 excepted) are cast to the registered dtype and the op runs with autocast off for that device type.
"""
from __future__ import annotations

import contextlib


def validate(device_type):
    from ..amp import _state
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if not _state.is_autocast_available(device_type):
        raise ValueError(f"Device type '{device_type}' does not support autocast.")


def _cast(value, device_type, dtype):
    from .. import float64
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


@contextlib.contextmanager
def _autocast_off(device_type):
    from ..amp import _state
    _state.set_autocast_enabled(device_type, False)
    try:
        yield
    finally:
        _state.set_autocast_enabled(device_type, True)


def call_with_autocast(e, pos, kw, run):
    """``run(e, pos, kw)`` under the op's autocast rule when autocast is on for one of its registered devices."""
    from ..amp import _state
    for device_type, dtype in e.autocast.items():
        if _state.is_autocast_enabled(device_type):
            if kw:
                raise AssertionError(f"Custom ops do not support kwargs yet, got {list(kw.keys())}")
            pos = [_cast(v, device_type, dtype) for v in pos]
            with _autocast_off(device_type):
                return call_with_autocast(e, pos, kw, run)
    return run(e, pos, kw)
