"""What a :class:`~torchish.utils.benchmark.Timer` measures: the task (:class:`TaskSpec`) and its times
(:class:`Measurement`), with PyTorch's statistics, warnings and printed form."""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from typing import Any

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGFIGS = 4
_MIN_CONFIDENCE = 25e-9  # (seconds: no interval is taken narrower than the clock can tell)
_IQR_WARN, _IQR_GROSS_WARN = 0.1, 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """The definition of a timed task (without its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self) -> str:
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """Times of one task: ``raw_times`` are per block of ``number_per_run`` runs; ``times`` per run."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __getattr__(self, name: str) -> Any:
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    def _stats(self):
        key = (len(self.raw_times), self.number_per_run)
        cached = self.__dict__.get("_cache")
        if cached is None or cached[0] != key:
            t = np.sort(np.asarray(self.times, np.float64))
            q25, med, q75 = np.quantile(t, [0.25, 0.5, 0.75]) if len(t) else (math.nan,) * 3
            stats = {"sorted": tuple(t), "median": float(med), "mean": float(t.mean()) if len(t) else math.nan,
                     "p25": float(q25), "p75": float(q75)}
            rel = (stats["p75"] - stats["p25"]) / stats["median"] if len(t) else 0.0
            stats["warnings"] = ()
            if len(t) and not rel < _IQR_GROSS_WARN:
                stats["warnings"] = (f"  WARNING: Interquartile range is {rel * 100:.1f}% of the median measurement."
                                     "\n           This suggests significant environmental influence.",)
            elif len(t) and not rel < _IQR_WARN:
                stats["warnings"] = (f"  WARNING: Interquartile range is {rel * 100:.1f}% of the median measurement."
                                     "\n           This could indicate system fluctuation.",)
            self.__dict__["_cache"] = cached = (key, stats)
        return cached[1]

    @property
    def median(self) -> float:
        return self._stats()["median"]

    @property
    def mean(self) -> float:
        return self._stats()["mean"]

    @property
    def iqr(self) -> float:
        s = self._stats()
        return s["p75"] - s["p25"]

    @property
    def has_warnings(self) -> bool:
        return bool(self._stats()["warnings"])

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self) -> int:
        """Figures the interquartile points support (a 90% interval of their mean, at least 25 ns wide)."""
        t = self._stats()["sorted"]
        mid = np.asarray(t[len(t) // 4:math.ceil(3 * len(t) / 4)])
        ci = max(1.645 * float(mid.std()) / math.sqrt(len(mid)), _MIN_CONFIDENCE)
        return min(max(int(math.floor(math.log10(self.median / ci))), 1), _MAX_SIGFIGS)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env  # (PyTorch's property means "Unspecified env" for None but gives None)

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        s = self._stats()
        n = len(s["sorted"])
        unit, scale = select_unit(s["median"])
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{s['median'] / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({s['p25'] / scale:.2f} to {s['p75'] / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.extend(s["warnings"])
        return "\n".join(line for line in "\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements) -> list:
        """Replicates of one task as one measurement of ``number_per_run=1`` (metadata dropped)."""
        groups: dict = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t: float):
    """``(unit, seconds per unit)`` that makes ``t`` (seconds) a number of order 1 to 999."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3) if t > 0 else -4, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(np.round(np.float32(x / scale)) * scale)


def ordered_unique(elements) -> list:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int):
    """PyTorch's intra-op thread count for a measurement; XLA sizes its own pools, so the count is recorded only."""
    from ... import _runtime
    prior = _runtime.get_num_threads()
    _runtime.set_num_threads(n)
    try:
        yield
    finally:
        _runtime.set_num_threads(prior)
