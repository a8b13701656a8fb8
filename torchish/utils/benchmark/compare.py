"""``Compare``: measurements as the tables ``torch.utils.benchmark.Compare`` prints — one per label, a row per
(threads, env, sub_label or stmt), a column per description, each cell a median in the unit of the table's
fastest one."""
from __future__ import annotations

import collections
import enum
import math

from . import common

__all__ = ["Compare", "Colorize"]

_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _painted(text, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


class _Table:
    """One label's measurements laid out (rows grouped by thread count)."""

    def __init__(self, results, colorize, trim, highlight):
        self.results, self.colorize, self.trim = results, colorize, trim
        self.highlight = highlight and any(r.has_warnings for r in results)
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(r.median for r in results))
        self.rows = sorted(common.ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results),
                           key=lambda k: k[:2])  # (stable: statements keep their order)
        self.cols = common.ordered_unique(r.description for r in results)
        cell = {((r.num_threads, r.env, r.as_row_name), r.description): r for r in results}
        self.grid = [[cell.get((row, col)) for col in self.cols] for row in self.rows]
        self.formats = [self._column_format([row[j] for row in self.grid]) for j in range(len(self.cols))]

    def _column_format(self, column):
        """``(template, whether the column marks high-variance cells)``: one number layout per column."""
        present = [m for m in column if m is not None]
        lead = [math.ceil(math.log10(m.median / self.scale)) for m in present]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(present, lead)) if self.trim else 1
        width = max(lead) + decimals + (1 if decimals else 0)
        marks = self.highlight and any(m.has_warnings for m in present)
        return f"{{:>{width}.{decimals}f}}{{:>{7 if marks else 0}}}", marks

    def _number(self, fmt, m):
        fmt, marks = fmt
        if m is None:
            return " " * len(fmt.format(1.0, ""))
        value = m.median / self.scale
        if self.trim:
            value = common.trim_sigfig(value, m.significant_figures)
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if marks and m.has_warnings else ""
        return fmt.format(value, spread)

    def render(self) -> str:
        envs = {r.env for r in self.results}
        show_env = len(envs) > 1
        env_width = max(len(e) for e in envs) if show_env else 0
        strings = [[""] + [c if c is not None else "" for c in self.cols]]
        prior_env = None
        for row, cells in zip(self.rows, self.grid):
            env = f"({row[1]})" if show_env and row[1] != prior_env else ""
            prior_env = row[1]
            strings.append(["  " + env.ljust(env_width + 4) + row[2]] +
                           [self._number(f, m) for f, m in zip(self.formats, cells)])
        widths = [max(len(s[j]) for s in strings) for j in range(len(strings[0]))]
        lines = ["  |  ".join(s.center(w) for s, w in zip(strings[0], widths))]
        total = len(lines[0])
        prior_threads = None
        for row, cells, s in zip(self.rows, self.grid, strings[1:]):
            if row[0] != prior_threads:
                lines.append(f"{row[0]} threads: ".ljust(total, "-"))
                prior_threads = row[0]
            best = self._best(row, cells)
            parts = [s[0].ljust(widths[0])]
            for text, w, m, b in zip(s[1:], widths[1:], cells, best):
                text = text.center(w)
                if self.colorize != Colorize.NONE and m is not None and b is not None:
                    text = _painted(text, m.median, b)
                parts.append(text)
            lines.append("  |  ".join(parts))
        out = [f"[{(' ' + (self.label or '') + ' ').center(total - 2, '-')}]", *lines, "",
               f"Times are in {common.unit_to_english(self.unit)}s ({self.unit}).", ""]
        if self.highlight:
            out.insert(-1, "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.")
        return "\n".join(out)

    def _best(self, row, cells):
        if self.colorize == Colorize.ROWWISE:
            return [min(m.median for m in cells if m is not None)] * len(cells)
        if self.colorize == Colorize.COLUMNWISE:  # (the best among the rows of the same thread count)
            group = [c for r, c in zip(self.rows, self.grid) if r[0] == row[0]]
            return [min((c[j].median for c in group if c[j] is not None), default=None) for j in range(len(cells))]
        return [None] * len(cells)


class Compare:
    """Tables of many measurements (``print()`` or ``str()``), laid out by their Timer's ``label``,
    ``sub_label``, ``description``, ``env`` and ``num_threads``; replicates of one task are merged."""

    def __init__(self, results):
        self._results: list = []
        self.extend_results(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._highlight = False

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight = True

    def __str__(self):
        groups: dict = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            groups[m.label].append(m)
        return "\n".join(_Table(g, self._colorize, self._trim, self._highlight).render() for g in groups.values())

    def print(self):
        print(str(self))
