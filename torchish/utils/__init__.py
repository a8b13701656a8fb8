"""``torchish.utils``: data loading, activation checkpointing, graph pictures, TensorBoard logging.

Submodules are imported on first use (``torchish.utils.data``, ``torchish.utils.checkpoint``, ...), as with
``import torch.utils.data``.
"""
from __future__ import annotations

import importlib as _importlib

_SUBMODULES = ("data", "checkpoint", "viz", "tensorboard", "_pytree", "hooks", "dlpack", "benchmark", "deterministic")


def __getattr__(name):
    if name == "swap_tensors":
        from ._swap import swap_tensors
        return swap_tensors
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
