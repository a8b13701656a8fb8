"""Anomaly detection: record where each node was created, and fail when a backward produces NaN."""
from __future__ import annotations

import warnings

from .grad_mode import STATE, _DecoratorContextManager, set_anomaly


class detect_anomaly(_DecoratorContextManager):
    """Inside this block, nodes remember the forward traceback and a NaN in backward raises RuntimeError
    naming the op (``Function 'DivBackward0' returned nan values in its 0th output.``)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = (STATE.anomaly, STATE.anomaly_check_nan)  # read when made, as PyTorch's (not on entry)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        set_anomaly(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly(*self.prev)
        return False

    def clone(self):
        return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """``set_detect_anomaly(True)`` turns anomaly detection on (at once, or for a block when used as a context)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (STATE.anomaly, STATE.anomaly_check_nan)
        self.mode, self.check_nan = bool(mode), check_nan
        set_anomaly(self.mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly(*self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode, self.check_nan)


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_check_nan


# ----------------------------------------------------------------------------------------------------------------
# what the engine calls while anomaly detection is on

_PKG_DIR = __file__.rsplit("/autograd/", 1)[0] + "/"


def forward_trace(node) -> str:
    """The traceback recorded when ``node`` was created, without torchish's own frames (the user's code)."""
    frames = getattr(node, "_trace", None) or []
    return "".join(f for f in frames if _PKG_DIR not in f.split("\n", 1)[0])


def report_error(node) -> None:
    """Warn with the forward traceback of the node whose backward failed (PyTorch's anomaly-mode warning)."""
    trace = forward_trace(node)
    if trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}",
                      UserWarning, stacklevel=3)


def check_nan(node, grads_in) -> None:
    """Raise PyTorch's error when ``node`` produced NaN gradients (only when anomaly mode checks NaNs)."""
    if not STATE.anomaly_check_nan:
        return
    import jax.numpy as jnp
    for i, g in enumerate(grads_in):
        if g is not None and g._v.dtype.kind in "fc" and bool(jnp.isnan(g._d).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
