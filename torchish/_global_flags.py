"""Process-wide switches PyTorch exposes at top level: ``set_warn_always``, ``set_anomaly_enabled`` (the function
spelling of ``autograd.set_detect_anomaly``) and ``set_flush_denormal``.

Example:
    >>> import torchish as torch
    >>> torch.set_warn_always(True); torch.is_warn_always_enabled()
    True
"""
from __future__ import annotations

import platform

from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.grad_mode import STATE

__all__ = ["set_warn_always", "is_warn_always_enabled", "set_anomaly_enabled", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_flush_denormal"]

_FLAGS = {"warn_always": False, "flush_denormal": False}


def set_warn_always(b: bool) -> None:
    """Make warnings PyTorch shows once per process show every time (torchish records the flag; its own warnings
    follow Python's ``warnings`` filters)."""
    _FLAGS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _FLAGS["warn_always"]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd anomaly detection on or off (``autograd.set_detect_anomaly`` without the context)."""
    STATE.anomaly, STATE.anomaly_check_nan = bool(enabled), bool(check_nan)


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero is supported (True on x86, as PyTorch): the flag is recorded only,
    XLA's CPU kernels choose their own denormal handling."""
    supported = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    if supported:
        _FLAGS["flush_denormal"] = bool(mode)
    return supported


