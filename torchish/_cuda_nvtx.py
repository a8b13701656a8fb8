"""``torchish.cuda.nvtx``: NVTX ranges, as JAX profiler annotations.

With an accelerator a range is a ``jax.profiler.TraceAnnotation``: it shows in the traces ``torchish.profiler`` and
``jax.profiler`` record (and, on a GPU, beside the kernels in the trace viewer). Without one these raise as in a
CPU-only PyTorch build ("NVTX functions not installed").
"""
from __future__ import annotations

import contextlib
import itertools
import threading

import jax

from . import _device

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_NOT_INSTALLED = "NVTX functions not installed. Are you sure you have a CUDA build?"
_STACK = threading.local()  # each thread's pushed ranges
_STARTED: dict = {}  # range_start's ranges by handle (they may end on another thread)
_HANDLES = itertools.count(1)


def _require(call):
    if not _device.accelerators():
        if call in ("rangeStartA", "rangeEnd"):  # (PyTorch's stub has no such attribute)
            raise AttributeError(f"'_NVTXStub' object has no attribute '{call}'")
        raise RuntimeError(_NOT_INSTALLED)


def _stack() -> list:
    if not hasattr(_STACK, "ranges"):
        _STACK.ranges = []
    return _STACK.ranges


def range_push(msg) -> int:
    """Start a nested range; returns its zero-based depth."""
    _require("rangePushA")
    ann = jax.profiler.TraceAnnotation(str(msg))
    ann.__enter__()
    stack = _stack()
    stack.append(ann)
    return len(stack) - 1


def range_pop() -> int:
    """End the innermost range; returns its zero-based depth (-1 when none is open)."""
    _require("rangePop")
    stack = _stack()
    if not stack:
        return -1
    stack.pop().__exit__(None, None, None)
    return len(stack)


def range_start(msg) -> int:
    """Start a range that ``range_end(handle)`` ends; returns the handle."""
    _require("rangeStartA")
    handle = next(_HANDLES)
    ann = _STARTED[handle] = jax.profiler.TraceAnnotation(str(msg))
    ann.__enter__()
    return handle


def range_end(range_id) -> None:
    _require("rangeEnd")
    ann = _STARTED.pop(range_id, None)
    if ann is not None:
        ann.__exit__(None, None, None)


def mark(msg) -> None:
    """An instant marker in the trace."""
    _require("markA")
    with jax.profiler.TraceAnnotation(str(msg)):
        pass


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """``with torch.cuda.nvtx.range("step {}", i):`` a range around the block (the message formatted with the
    arguments); also a decorator."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
