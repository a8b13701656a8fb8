"""``torchish.profiler``: PyTorch's profiler surface over JAX's (XLA) profiler.

``profile`` starts ``jax.profiler.start_trace`` when its schedule enters a recording phase and stops it when the
phase ends; the trace (``plugins/profile/<run>/*.xplane.pb``, plus a Perfetto/Chrome ``*.trace.json.gz``) lands in
the directory of ``tensorboard_trace_handler(dir)`` — open it with TensorBoard's profile plugin or
ui.perfetto.dev — or in a temporary directory (``prof.trace_dir``) that ``export_chrome_trace`` reads from.

``record_function(name)`` marks a region: it is a ``jax.profiler.TraceAnnotation`` (visible in the XLA trace) and,
while a profile records, its host wall time is accumulated. ``key_averages().table()`` is that host-side summary —
wall time per ``record_function`` region and, with a schedule, per step (``ProfilerStep#N``, grouped as
``ProfilerStep*``), total and self (minus nested regions), for the current or last schedule cycle — not
a per-kernel table: XLA traces are not parsed here, and device time is not measured (``cuda_time`` sort keys
order by wall time). ``record_shapes`` and ``with_flops`` are accepted and have no effect; ``with_stack`` turns on
JAX's Python tracer; ``profile_memory`` saves a device memory profile (``memory.prof``, pprof format) with each
trace.

Example:
    >>> import torchish
    >>> from torchish.profiler import profile, record_function, ProfilerActivity
    >>> with profile(activities=[ProfilerActivity.CPU]) as prof:          # doctest: +SKIP
    ...     with record_function("forward"):
    ...         y = torchish.ones(4).sum()
    >>> print(prof.key_averages().table(sort_by="cpu_time_total"))        # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
import enum
import glob
import gzip
import itertools
import os
import shutil
import tempfile
import threading
import time
import warnings

import jax

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "kineto_available"]


class ProfilerActivity(enum.Enum):
    """What to trace. JAX's profiler always traces the host and every device, so these only document intent."""

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3


def supported_activities() -> set:
    """The activities :class:`profile` accepts here: CPU, and CUDA where a GPU is (PyTorch's answer on a CPU build
    is ``{ProfilerActivity.CPU}``)."""
    from . import cuda
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cuda.is_available() else {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """True: PyTorch's kineto-based :class:`profile` API is available (it records with JAX's profiler)."""
    return True


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """A step -> :class:`ProfilerAction` function: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last one saves), ``repeat`` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    period = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError("step must be non-negative")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // period >= repeat:
            return ProfilerAction.NONE
        pos = step % period
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < period - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class tensorboard_trace_handler:
    """``on_trace_ready`` that puts traces in ``dir_name`` (as ``plugins/profile/<run>/``, where TensorBoard's
    profile plugin looks). JAX writes there directly while recording; ``worker_name`` and ``use_gzip`` are accepted
    for PyTorch compatibility."""

    def __init__(self, dir_name, worker_name=None, use_gzip=False):
        self.dir_name = os.fspath(dir_name)
        self.worker_name = worker_name

    def __call__(self, prof):
        if os.path.abspath(prof.trace_dir) != os.path.abspath(self.dir_name):
            shutil.copytree(prof.trace_dir, self.dir_name, dirs_exist_ok=True)


# ----------------------------------------------------------------------------------------------------------------
# host-side timing of record_function regions


class _Stats:
    """The ranges recorded while some profile records: finished :class:`FunctionEvent` objects, and per thread the stack
    of open ones."""

    def __init__(self):
        self.events = []
        self.local = threading.local()

    def stack(self):
        st = getattr(self.local, "stack", None)
        if st is None:
            st = self.local.stack = []
        return st


_ACTIVE: list = []  # the profiles recording now (their _Stats)
_NEXT_ID = itertools.count(1)


def _key(name: str) -> str:
    """The name PyTorch's event lists group by: every ``ProfilerStep#N`` is ``ProfilerStep*``."""
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class _TimeStrings:
    """What an event and a row of the table share: the fields torchish does not measure (memory, flops, device
    time: zeros) and PyTorch's formatted times (``cpu_time_total_str`` ...)."""

    is_user_annotation = True
    node_id = -1
    flops = 0
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    device_time_total = self_device_time_total = 0  # (no device time is measured)
    device_time = 0.0

    cpu_time_str = property(lambda self: _fmt_us(self.cpu_time))
    cpu_time_total_str = property(lambda self: _fmt_us(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _fmt_us(self.self_cpu_time_total))
    device_time_str = property(lambda self: _fmt_us(self.device_time))
    device_time_total_str = property(lambda self: _fmt_us(self.device_time_total))
    self_device_time_total_str = property(lambda self: _fmt_us(self.self_device_time_total))
    cuda_time = property(lambda self: self.device_time)
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)


class FunctionEvent(_TimeStrings):
    """One recorded range (``record_function`` region or profiler step): host times in microseconds, its
    enclosing range (``cpu_parent``) and the ranges directly inside it (``cpu_children``)."""

    def __init__(self, name, start_us, thread):
        self.id = next(_NEXT_ID)
        self.name = self.key = _key(name)
        self.trace_name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.count = 1
        self.cpu_parent = None
        self.cpu_children = []
        self.input_shapes = []
        self.stack = []
        self.is_async = False
        self.is_remote = False

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_fmt_us(self.cpu_time_total)} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread}>")


class record_function(contextlib.ContextDecorator):
    """Mark a region of code: shown in the XLA trace, and timed (host wall time) while a profile records.

    Example:
        >>> with record_function("data loading"):            # doctest: +SKIP
        ...     batch = next(it)
    """

    def __init__(self, name: str, args=None):
        self.name = name
        self._ann = None
        self._frames = []

    def __enter__(self):
        self._ann = jax.profiler.TraceAnnotation(self.name)
        self._ann.__enter__()
        now = time.perf_counter() * 1e6
        for s in _ACTIVE:
            s.stack().append(FunctionEvent(self.name, now, threading.get_ident()))
        self._frames = list(_ACTIVE)
        return self

    def __exit__(self, *exc):
        now = time.perf_counter() * 1e6
        for s in self._frames:
            st = s.stack()
            if not st:
                continue
            ev = st.pop()
            ev.end_us = now
            if st:
                ev.cpu_parent = st[-1]
                st[-1].cpu_children.append(ev)
            s.events.append(ev)
        self._ann.__exit__(*exc)
        return False


class FunctionEventAvg(_TimeStrings):
    """One row of :meth:`profile.key_averages`: a range name's call count and host times (microseconds)."""

    def __init__(self, key, count, total_s, self_s):
        self.key = key
        self.count = count
        self.cpu_time_total = total_s * 1e6
        self.self_cpu_time_total = self_s * 1e6
        self.cpu_time = self.cpu_time_total / max(count, 1)
        self.input_shapes = ""
        self.stack = []

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us count={self.count}>")


def _averages(events) -> "EventList":
    """Events grouped by key, in order of first appearance (PyTorch's ``EventList.key_averages``)."""
    rows: dict = {}
    for ev in events:
        row = rows.setdefault(ev.key, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += ev.cpu_time_total / 1e6
        row[2] += ev.self_cpu_time_total / 1e6
    return EventList(FunctionEventAvg(k, c, t, s) for k, (c, t, s) in rows.items())


_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "cpu_time": "cpu_time", "count": "count", "cuda_time_total": "cpu_time_total",
              "self_cuda_time_total": "self_cpu_time_total", "cuda_time": "cpu_time",
              "device_time_total": "cpu_time_total", "self_device_time_total": "self_cpu_time_total"}


def _fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """The rows of :meth:`profile.key_averages`; ``table()`` formats them as PyTorch's CPU table does."""

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, **_ignored) -> str:
        rows = list(self)
        if sort_by is not None:
            key = _SORT_KEYS.get(sort_by, sort_by)  # (any attribute: memory, flops...; unknown: AttributeError)
            rows.sort(key=lambda r: getattr(r, key), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total_self = sum(r.self_cpu_time_total for r in self) or 1.0
        width = max([len("Name")] + [min(len(r.key), max_name_column_width) for r in rows])
        head = ["Name".ljust(width), "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                "# of Calls"]
        lines = ["  ".join(f"{h:>12}" if i else h for i, h in enumerate(head))]
        sep = "-" * len(lines[0])
        for r in rows:
            cells = [r.key[:width].ljust(width), f"{100 * r.self_cpu_time_total / total_self:.2f}%",
                     _fmt_us(r.self_cpu_time_total), f"{100 * r.cpu_time_total / total_self:.2f}%",
                     _fmt_us(r.cpu_time_total), _fmt_us(r.cpu_time), str(r.count)]
            lines.append("  ".join(f"{c:>12}" if i else c for i, c in enumerate(cells)))
        foot = f"Self CPU time total: {_fmt_us(sum(r.self_cpu_time_total for r in self))} (host wall time of " \
               "record_function regions and profiler steps; XLA kernels are in the trace)"
        return "\n".join([sep, lines[0], sep, *lines[1:], sep, foot]) + "\n"

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events grouped by name (a list of :class:`FunctionEvent` in, rows out)."""
        return _averages(self)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(ev.self_cpu_time_total for ev in self)

    def total_average(self) -> FunctionEventAvg:
        """All rows (or events) as one ``"Total"`` row."""
        return FunctionEventAvg("Total", sum(ev.count for ev in self), sum(ev.cpu_time_total for ev in self) / 1e6,
                                sum(ev.self_cpu_time_total for ev in self) / 1e6)

    def __str__(self):
        return self.table()


# ----------------------------------------------------------------------------------------------------------------
# the profiler


class profile:
    """Profile the code in its ``with`` block (or between ``start()`` and ``stop()``) with JAX's profiler.

    Args:
        activities: :class:`ProfilerActivity` values (JAX traces host and devices regardless).
        schedule: a step -> :class:`ProfilerAction` function (see :func:`schedule`), advanced by ``step()``;
            without one, everything between start and stop is recorded.
        on_trace_ready: called with this profiler each time a trace is saved (e.g.
            :func:`tensorboard_trace_handler`, whose directory then receives JAX's trace directly).
        record_shapes: accepted; no effect (XLA records shapes in its trace).
        profile_memory: also save a device memory profile (``memory.prof``) with each trace.
        with_stack: trace Python calls too (JAX's Python tracer).
        acc_events: keep the ranges of every cycle in the results (by default each cycle starts afresh, and
            ``key_averages()``/``events()`` give the current or last one, as PyTorch's).
        with_flops, with_modules, experimental_config, use_cuda: accepted for compatibility; no effect.

    With a schedule, each step is also a range, ``ProfilerStep#N`` (keyed ``ProfilerStep*``, as PyTorch groups it).

    Example:
        >>> from torchish.profiler import profile, schedule, tensorboard_trace_handler
        >>> with profile(schedule=schedule(wait=1, warmup=1, active=2),           # doctest: +SKIP
        ...              on_trace_ready=tensorboard_trace_handler("./log")) as prof:
        ...     for batch in loader:
        ...         train_step(batch)
        ...         prof.step()
    """

    def __init__(self, activities=None, *, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 **_ignored):
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None  # (PyTorch adds step ranges only with a schedule)
        self.acc_events = acc_events
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self.trace_dir = None
        self._tmp = None
        self._tracing = False
        self._stats = _Stats()
        self._step_region = None
        self.metadata: dict = {}

    # ---- lifetime -----------------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._enter(ProfilerAction.NONE, self.current_action)

    def stop(self):
        self._close_step()
        if self.current_action in _RECORDING:
            self._save()
        self.current_action = ProfilerAction.NONE

    def step(self):
        """Mark the end of one training step: advances the schedule (starting/stopping/saving traces; the trace
        is handed to ``on_trace_ready`` when a ``RECORD_AND_SAVE`` step ends)."""
        prev = self.current_action
        self._close_step()
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._save()
        elif prev == ProfilerAction.RECORD and self.current_action not in _RECORDING:
            self._save(ready=False)  # (PyTorch: "Incorrect schedule": the trace stops, unsaved)
        self._enter(prev, self.current_action)

    # ---- recording ----------------------------------------------------------------------------------------
    def _enter(self, prev, action):
        if (action != ProfilerAction.NONE and prev in (ProfilerAction.NONE, ProfilerAction.RECORD_AND_SAVE)
                and not self.acc_events):
            self._stats.events = []  # a new cycle: the previous one's ranges are dropped
        if action in _RECORDING:
            if not self._tracing:
                self._start_trace()
            if self.record_steps:
                self._step_region = record_function(f"ProfilerStep#{self.step_num}")
                self._step_region.__enter__()

    def _close_step(self):
        if self._step_region is not None:
            self._step_region.__exit__(None, None, None)
            self._step_region = None

    def _start_trace(self):
        target = getattr(self.on_trace_ready, "dir_name", None)
        if target is None:
            self._tmp = self._tmp or tempfile.mkdtemp(prefix="torchish_profile_")
            target = self._tmp
        os.makedirs(target, exist_ok=True)
        self.trace_dir = target
        opts = jax.profiler.ProfileOptions()
        opts.python_tracer_level = 1 if self.with_stack else 0
        jax.profiler.start_trace(target, profiler_options=opts)
        self._tracing = True
        _ACTIVE.append(self._stats)

    def _save(self, ready=True):
        if not self._tracing:
            return
        if self.profile_memory:
            jax.profiler.save_device_memory_profile(os.path.join(self.trace_dir, "memory.prof"))
        jax.profiler.stop_trace()
        self._tracing = False
        if self._stats in _ACTIVE:
            _ACTIVE.remove(self._stats)
        if ready and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _runs(self):
        return sorted(glob.glob(os.path.join(self.trace_dir, "plugins", "profile", "*")))

    # ---- results ------------------------------------------------------------------------------------------
    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False) -> EventList:
        """Host wall time per ``record_function`` region and profiler step (see the module docstring)."""
        return _averages(self._stats.events)

    def events(self) -> EventList:
        """Every recorded range (:class:`FunctionEvent`), in order of their start."""
        return EventList(sorted(self._stats.events, key=lambda ev: (ev.start_us, -ev.end_us)))

    def add_metadata(self, key: str, value: str) -> None:
        """Attach a string to the trace (kept in ``self.metadata``; JAX's trace format has no user metadata)."""
        self.metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """As :meth:`add_metadata`, with a JSON-encoded value."""
        self.metadata[key] = value

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the recorded ranges in the collapsed-stack format of flame graph tools: a line per range,
        ``outer;inner <metric in integer microseconds>`` (the nesting of ``record_function`` ranges; Python
        frames are in the XLA trace). Needs ``with_stack=True``, as PyTorch's."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        metrics = ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total", "self_privateuse1_time_total"]
        if metric not in metrics:
            raise ValueError("metric should be one of: " + str(metrics))
        metric = metric.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        lines = []
        for ev in self.events():
            names, e = [], ev
            while e is not None:
                names.append(e.trace_name)
                e = e.cpu_parent
            lines.append(f"{';'.join(reversed(names))} {int(getattr(ev, metric))}\n")
        with open(path, "w") as f:
            f.writelines(lines)

    def export_chrome_trace(self, path):
        """Write the latest trace as Chrome/Perfetto trace-event JSON (from JAX's ``*.trace.json.gz``)."""
        runs = self._runs() if self.trace_dir else []
        files = sorted(glob.glob(os.path.join(runs[-1], "*.trace.json.gz"))) if runs else []
        if not files:
            raise RuntimeError("export_chrome_trace(): no trace has been saved yet (profile a region first)")
        with gzip.open(files[-1], "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
