"""``Timer``: times a Python statement as ``torch.utils.benchmark.Timer`` does, waiting for the work it queued.

JAX dispatches asynchronously, so a statement returns before its computation ends. Each timed block therefore ends
by waiting for every array still being computed on any device (``jax.live_arrays()``), inside the timed region, as
PyTorch's timer synchronizes CUDA before it reads the clock; the blocks are sized so that this wait is a small part
of each (``_estimate_block_size``).
"""
from __future__ import annotations

import enum
import timeit

import jax
import numpy as np

from . import common

__all__ = ["Timer", "Language", "timer"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _wait_for_devices():
    for a in jax.live_arrays():
        if not a.is_deleted():
            a.block_until_ready()


def timer() -> float:
    """The default clock: ``timeit.default_timer`` after the devices finished the work queued so far."""
    _wait_for_devices()
    return timeit.default_timer()


class Timer:
    """Time ``stmt`` (Python source) run in ``globals`` after ``setup``.

    Args:
        stmt, setup: statements (``setup`` runs once per measurement, untimed).
        global_setup: C++ only in PyTorch; must be empty here.
        timer: the clock (default: :func:`timer`, which waits for queued device work).
        globals: the namespace the statements run in (copied).
        label, sub_label, description, env, num_threads: how :class:`Compare` arranges the results.
        language: ``Language.PYTHON`` (C++ statements need PyTorch's C++ toolchain: ValueError).
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise ValueError("torchish.utils.benchmark times Python statements only (C++ needs PyTorch's toolchain)")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError("global_setup is C++ only.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", __import__("torchish"))
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # (no statement takes less than a nanosecond)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """``stmt`` run ``number`` times, after a warm-up of ``number // 100`` (at least 2) runs."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return common.Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: grown tenfold until the clock's own cost (and its wait for the devices) is at most 1e-4
        of a block and a block takes a thousandth of ``min_run_time``, or a block alone exceeds it."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000 or taken > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _measure(self, number, stop, min_run_time, max_run_time=None, callback=None):
        times: list = []
        total, done = 0.0, False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not done:
                t = self._timeit(number)
                times.append(t)
                total += t
                if callback:
                    callback(number, t)
                done = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return common.Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of runs (sized by ``_estimate_block_size``) until ``min_run_time`` seconds were spent."""
        number = self._estimate_block_size(min_run_time)
        return self._measure(number, lambda times: True, min_run_time, callback=callback)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> common.Measurement:
        """Blocks until the interquartile range is below ``threshold`` of the median (at least 4 blocks and
        ``min_run_time`` seconds; at most ``max_run_time``)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times):
            return len(times) > 3 and common.Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return self._measure(number, confident, min_run_time, max_run_time, callback)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("collect_callgrind needs valgrind and PyTorch's C++ bindings; time with "
                                  "blocked_autorange")
