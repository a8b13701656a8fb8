"""Process-wide switches PyTorch exposes at top level: ``set_warn_always``, ``set_anomaly_enabled`` (the function
spelling of ``autograd.set_detect_anomaly``) and ``set_flush_denormal``.

Example:
    >>> import torchish as torch
    >>> torch.set_warn_always(True); torch.is_warn_always_enabled()
    True
"""
from __future__ import annotations

import platform
import warnings

from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.grad_mode import set_anomaly

__all__ = ["set_warn_always", "is_warn_always_enabled", "set_anomaly_enabled", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_flush_denormal"]

_FLAGS = {"warn_always": False, "flush_denormal": False}
_WARNED_ONCE: set = set()  # keys of warn_once calls already shown (tests clear it)


def warn_once(message: str, category: type = UserWarning, *, key: str | None = None, stacklevel: int = 2) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: show ``message`` the first time its ``key`` (default: the message) is reached
    in this process, every time after ``set_warn_always(True)``. Python's ``warnings`` filters still apply.

    Example:
        >>> warn_once("torch.cholesky is deprecated ...", key="cholesky")
    """
    key = message if key is None else key
    if _FLAGS["warn_always"] or key not in _WARNED_ONCE:
        _WARNED_ONCE.add(key)
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def set_warn_always(b: bool) -> None:
    """Make warnings PyTorch shows once per process show every time (torchish records the flag; its own warnings
    follow Python's ``warnings`` filters)."""
    _FLAGS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _FLAGS["warn_always"]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd anomaly detection on or off (``autograd.set_detect_anomaly`` without the context)."""
    set_anomaly(enabled, bool(check_nan))


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero is supported (True on x86, as PyTorch): the flag is recorded only,
    XLA's CPU kernels choose their own denormal handling."""
    supported = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    if supported:
        _FLAGS["flush_denormal"] = bool(mode)
    return supported


