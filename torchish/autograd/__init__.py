"""``torchish.autograd``: backward/grad, grad modes, the graph records, custom Functions and functional helpers.

The records (``graph``, ``grad_mode``) sit below the Tensor facade; the engine and everything built on it sit above,
so they are loaded on first use (the facade imports this package while it is itself being imported).
"""
from __future__ import annotations

import importlib

from .grad_mode import (no_grad as no_grad, enable_grad as enable_grad, set_grad_enabled as set_grad_enabled,
                        inference_mode as inference_mode, is_grad_enabled as is_grad_enabled,
                        is_inference_mode_enabled as is_inference_mode_enabled,
                        is_multithreading_enabled as is_multithreading_enabled,
                        set_multithreading_enabled as set_multithreading_enabled)
from . import graph as graph

_LAZY = {
    "backward": ("engine", "backward"), "grad": ("engine", "grad"),
    "Function": ("function", "Function"), "once_differentiable": ("function", "once_differentiable"),
    "FunctionCtx": ("function", "FunctionCtx"),
    "detect_anomaly": ("anomaly_mode", "detect_anomaly"), "set_detect_anomaly": ("anomaly_mode", "set_detect_anomaly"),
    "is_anomaly_enabled": ("anomaly_mode", "is_anomaly_enabled"),
    "Variable": ("variable", "Variable"),
    "gradcheck": ("gradcheck", "gradcheck"), "gradgradcheck": ("gradcheck", "gradgradcheck"),
    "is_anomaly_check_nan_enabled": ("anomaly_mode", "is_anomaly_check_nan_enabled"),
    "_is_checkpoint_valid": ("engine", "_is_checkpoint_valid"),
}
_SUBMODULES = ("engine", "function", "functional", "forward_ad", "anomaly_mode", "profiler")


def __getattr__(name):
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
        globals()[name] = value  # importing submodule `gradcheck` bound the module to this name: the function wins
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'torchish.autograd' has no attribute '{name}'")
