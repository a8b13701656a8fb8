"""Anomaly detection: record where each node was created, and fail when a backward produces NaN."""
from __future__ import annotations

import warnings

from .grad_mode import STATE, _DecoratorContextManager


class detect_anomaly(_DecoratorContextManager):
    """Inside this block, nodes remember the forward traceback and a NaN in backward raises RuntimeError
    naming the op (``Function 'DivBackward0' returned nan values in its 0th output.``)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = None
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (STATE.anomaly, STATE.anomaly_check_nan)
        STATE.anomaly, STATE.anomaly_check_nan = True, self.check_nan

    def __exit__(self, *exc):
        STATE.anomaly, STATE.anomaly_check_nan = self.prev
        return False

    def clone(self):
        return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """``set_detect_anomaly(True)`` turns anomaly detection on (at once, or for a block when used as a context)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (STATE.anomaly, STATE.anomaly_check_nan)
        self.mode, self.check_nan = bool(mode), check_nan
        STATE.anomaly, STATE.anomaly_check_nan = self.mode, check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.anomaly, STATE.anomaly_check_nan = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode, self.check_nan)


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_check_nan
