"""``torchish.autograd.profiler``: PyTorch's legacy profiler API over :mod:`torchish.profiler`.

``profile`` is :class:`torchish.profiler.profile` with the legacy constructor (``enabled``, ``use_cuda``, ...)
and the legacy result accessors (``prof.table()``, ``prof.function_events``, ``prof.self_cpu_time_total``); its
``key_averages().table()`` is the same host-side summary (wall time per ``record_function`` region).

Example:
    >>> with torchish.autograd.profiler.profile() as prof:          # doctest: +SKIP
    ...     with torchish.autograd.profiler.record_function("step"):
    ...         loss = model(x).sum()
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total"))  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib

from .. import profiler as _profiler
from ..profiler import record_function as record_function, EventList as EventList  # noqa: F401
from ..profiler import FunctionEventAvg as FunctionEventAvg  # noqa: F401

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEventAvg"]


class profile(_profiler.profile):
    """Profile the ``with`` block (PyTorch's ``torch.autograd.profiler.profile``).

    Args:
        enabled: when False the block runs unprofiled and there are no results (as in PyTorch).
        use_cuda, use_device, use_kineto, use_cpu, with_flops, with_modules, experimental_config, acc_events,
            custom_trace_id_callback: accepted for compatibility; JAX traces host and devices regardless.
        record_shapes, profile_memory, with_stack: as in :class:`torchish.profiler.profile`.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules, experimental_config=experimental_config)
        self.enabled = enabled
        self.entered = False
        self._finished = False

    def __enter__(self):
        if not self.enabled:
            return None  # (as PyTorch's: ``with profile(enabled=False) as prof`` binds None)
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop()
            self._finished = True
        return False

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The ranges grouped by name; empty while the block runs (as in PyTorch, whose results exist only once
        the block ended)."""
        return _profiler._averages(self.function_events)

    @property
    def function_events(self):
        """Every recorded range (:class:`~torchish.profiler.FunctionEvent`), in order of their start."""
        if not self.enabled:  # (PyTorch's disabled profiler never set its results up)
            raise AttributeError("'profile' object has no attribute 'experimental_config' (the profiler was "
                                 "disabled: profile(enabled=False) records nothing)")
        return self.events() if self._finished else EventList()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit,
                                         max_name_column_width=max_name_column_width)

    @property
    def self_cpu_time_total(self):
        """Total self host time in microseconds."""
        return sum(row.self_cpu_time_total for row in self.key_averages())

    def total_average(self):
        rows = self.key_averages()
        total = _profiler.FunctionEventAvg("Total", sum(r.count for r in rows), 0.0, 0.0)
        total.cpu_time_total = sum(r.cpu_time_total for r in rows)
        total.self_cpu_time_total = sum(r.self_cpu_time_total for r in rows)
        total.cpu_time = total.cpu_time_total / max(total.count, 1)
        return total

    def __str__(self):
        return self.table()


class emit_nvtx(contextlib.ContextDecorator):
    """NVTX ranges for every op (for ``nsys``). Needs CUDA: without it entering raises PyTorch's
    ``AssertionError``; on a CUDA device it adds nothing to the ``record_function`` annotations JAX emits."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        from .. import cuda
        if not cuda.is_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        self.entered = True
        return self

    def __exit__(self, *exc):
        self.entered = False
        return False


class emit_itt(contextlib.ContextDecorator):
    """Intel ITT ranges for every op (for VTune): nothing is emitted here; the block runs unchanged."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, *exc):
        self.entered = False
        return False
