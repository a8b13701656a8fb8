"""The switches ``torch.autograd.graph`` offers for CUDA streams and ``torch.compile``'s memory planning.

torchish has no CUDA streams (XLA orders the work on a device itself) and ``torchish.compile`` leaves the choice of
what to keep for backward and what to recompute to XLA, so these are checked as PyTorch checks them and kept as
flags, with no effect on what runs.
"""
from __future__ import annotations

import contextlib

# the process-wide settings, as PyTorch's (not per thread)
FLAGS = {"warn_on_accumulate_grad_stream_mismatch": True, "override_stale_capture_stream": False}


def _set(name, enabled):
    if not isinstance(enabled, bool):
        raise RuntimeError(f"enabled must be a bool, but got {type(enabled).__name__}")
    FLAGS[name] = enabled


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Whether to warn when a leaf's AccumulateGrad runs on another CUDA stream than the gradient's producer.
    A flag only: torchish has no streams, so it never warns."""
    _set("warn_on_accumulate_grad_stream_mismatch", enabled)


def set_override_stale_capture_stream(enabled: bool) -> None:
    """What autograd does with a stale stream during CUDA graph capture. A flag only: torchish captures no CUDA
    graphs (``torchish.compile`` makes one XLA program instead)."""
    _set("override_stale_capture_stream", enabled)


def region_activation_memory_budget(budget: float):
    """Context manager: the activation memory budget (0 = recompute all, 1 = keep all) for the forward traced
    under it in a compiled function. Accepted inside ``torchish.compile`` (where XLA plans what to keep for
    backward itself, so the budget is not applied); outside it raises, as PyTorch's does in eager mode.

    Example::

        >>> @torchish.compile
        ... def step(x):
        ...     with torchish.autograd.graph.region_activation_memory_budget(0.5):
        ...         y = layer(x)
        ...     y.sum().backward()
    """
    name = "torch.autograd.graph.region_activation_memory_budget"
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(f"{name}: expects a float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"{name}: must be in [0, 1], got {budget}")
    from ..compiler import is_compiling
    if not is_compiling():
        raise RuntimeError(f"{name} can only be used inside a torch.compile region; it has no effect in eager "
                           "mode.")
    return contextlib.nullcontext()
