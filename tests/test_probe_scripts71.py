"""Third-party programs, round 71 (helper 188): benchmarking and profiling scripts as people who benchmark
accelerators write them, compared only on what is deterministic (types, structure, counts, names, error families
and computed values, never times): ``torch.utils.benchmark.Timer`` (``stmt``/``setup``/``globals``/``label``/
``sub_label``/``description``/``num_threads``) with ``timeit``, ``blocked_autorange`` and ``adaptive_autorange``
(callbacks, the ``Measurement`` fields ``number_per_run``/``times``/``raw_times``/``mean``/``median``/
``task_spec``/``title``/``as_row_name``), ``Measurement`` statistics and ``repr`` from fixed times, ``merge``,
``Compare`` tables printed from fixed measurements (trimmed, coloured, with warnings) and from timed ones, the
``torch.utils.benchmark.utils.common``/``timer``/``compare`` import paths; ``torch.profiler.profile`` with
``record_function`` ranges (``key_averages`` counts, ``events()`` with parents and children, ``table``),
``schedule`` + ``on_trace_ready`` call counts and per-cycle results with ``prof.step()``, ``start()``/``stop()`` with
``acc_events``, ``export_chrome_trace``, the memory recipe's tables (``sort_by="self_cpu_memory_usage"``, by input
shape), ``total_average``, ``*_str`` fields, metadata and ``export_stacks``, the legacy
``torch.autograd.profiler.profile`` (disabled, and read inside its block);
``FlopCounterMode`` totals, per-module breakdowns and printed tables of Linear/Conv/matmul/attention models forward
and backward, and per-op counts of a zoo of matmul/conv/attention ops;
``torch.cuda.is_available()``-guarded timing code (``cuda.Event``/``synchronize`` against ``time.perf_counter``
with ``.item()``), device and thread queries, backend flags (``cudnn.benchmark``, ``set_float32_matmul_precision``,
TF32 switches), CUDA memory helpers on a CPU-only build (error families, through ``torch.cuda.memory`` too),
and a ``torch.compile``d function benchmarked with warm-up calls into a results table; re-implemented here, run
with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import contextlib
import io
import json
import math
import os
import tempfile
import time
from importlib import import_module

import pytest

import torchish
from oracle import formula_data, formula_init, outcome as _family, same, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _bm(lib):
    return import_module(lib.__name__ + ".utils.benchmark")


def _prof(lib):
    return import_module(lib.__name__ + ".profiler")


def _no_addr(s):
    """A repr without its first line (``<... object at 0x...>``)."""
    return s.splitlines()[1:]


def case_timer_timeit_measurement_fields(lib):
    """The first cell of every micro-benchmark notebook: ``Timer(stmt, setup, globals, label, sub_label,
    description, num_threads)`` and ``timeit(n)``, then everything in the ``Measurement`` except the times."""
    torch = lib
    benchmark = _bm(lib)
    x = formula_data(torch, 16, 16)
    t = benchmark.Timer(stmt="torch.mm(x, y)", setup="y = x.t().contiguous()", globals={"x": x},
                        label="matmul", sub_label="16x16", description="float32", num_threads=1)
    m = t.timeit(20)
    spec = m.task_spec
    res = {"type": type(m).__name__, "npr": m.number_per_run, "ntimes": len(m.times), "nraw": len(m.raw_times),
           "types": (type(m.mean).__name__, type(m.median).__name__, type(m.iqr).__name__, type(m.times).__name__),
           "pos": (m.mean > 0, m.median > 0, m.times[0] == m.raw_times[0] / 20),
           "title": m.title, "row": m.as_row_name, "env": m.env, "meta": m.metadata,
           "spec": (type(spec).__name__, spec.stmt, spec.setup, spec.global_setup, spec.label, spec.sub_label,
                    spec.description, spec.env, spec.num_threads, spec.title),
           "fields": (m.stmt, m.setup, m.label, m.sub_label, m.description, m.num_threads)}
    # no label: the title is the statement; a multi-line statement gets an indented title
    m2 = benchmark.Timer("x.sum()", globals={"x": x}, sub_label="sum").timeit(5)
    m3 = benchmark.Timer("y = x * 2\nz = y.relu()", globals={"x": x}).timeit(3)
    m4 = benchmark.Timer("x.abs()", globals={"x": x}, description="abs").timeit(2)
    res["titles"] = (m2.title, m2.as_row_name, m3.title, m3.as_row_name, m4.title, m4.as_row_name, m4.description)
    res["summary"] = (spec.summarize(), m3.task_spec.summarize(), benchmark.TaskSpec("a", "pass").summarize())
    res["same_spec"] = (m.task_spec == t.timeit(1).task_spec, hash(m.task_spec) == hash(t.timeit(1).task_spec))
    res["default"] = benchmark.Timer().timeit(3).title
    seen = []
    prior = torch.get_num_threads()
    m5 = benchmark.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen}, num_threads=2).timeit(4)
    res["threads"] = (sorted(set(seen)), m5.num_threads, torch.get_num_threads() == prior, len(seen) >= 4)
    runs = []
    benchmark.Timer("runs.append('stmt')", setup="runs.append('setup')", globals={"runs": runs}).timeit(3)
    res["runs"] = (runs.count("setup") >= 1, runs.count("stmt") >= 3, runs[0])
    g, box = {"x": x}, {"n": 0}
    benchmark.Timer("global y\ny = x * 2\nbox['n'] += 1", globals={**g, "box": box}).timeit(5)
    res["globals"] = (sorted(g), box["n"] >= 5)
    return res


def case_blocked_and_adaptive_autorange_with_callbacks(lib):
    """``blocked_autorange(min_run_time=)`` and ``adaptive_autorange(threshold, min_run_time, max_run_time)`` as
    benchmark suites call them, with a callback collecting ``(number, time)`` per block: block counts agree with
    ``times``, every block ran ``number_per_run`` times, adaptive runs at least 4 blocks."""
    torch = lib
    benchmark = _bm(lib)
    a = formula_data(torch, 8, 8)
    seen = []
    t = benchmark.Timer("a @ a", globals={"a": a}, label="mm", description="8x8")
    m = t.blocked_autorange(callback=lambda n, s: seen.append((n, s > 0)), min_run_time=0.01)
    blocked = (type(m.number_per_run).__name__, m.number_per_run >= 1, len(m.times) == len(seen),
               all(n == m.number_per_run and ok for n, ok in seen), sum(m.raw_times) >= 0.01, m.title)
    seen2 = []
    m2 = t.adaptive_autorange(threshold=10.0, min_run_time=0.005, max_run_time=5.0,
                              callback=lambda n, s: seen2.append(n))
    adaptive = (len(m2.times) >= 4, len(seen2) == len(m2.times), set(seen2) == {m2.number_per_run},
                type(m2).__name__, m2.meets_confidence(10.0))
    errs = (_family(lambda: t.repeat()), _family(lambda: t.autorange()),
            _family(lambda: benchmark.Timer(stmt=lambda: a @ a)),
            _family(lambda: benchmark.Timer("a +", globals={"a": a}).timeit(1)),
            _family(lambda: benchmark.Timer("b + 1", globals={"a": a}).timeit(1)),
            _family(lambda: benchmark.Timer("a", setup="import nonexistent_mod_xyz").timeit(1)))
    return blocked, adaptive, errs


def case_measurement_statistics_from_fixed_times(lib):
    """Results reloaded from a pickle/JSON into ``Measurement(number_per_run, raw_times, task_spec)``: the
    statistics (``mean``/``median``/``iqr``/``significant_figures``), the variance warnings, ``meets_confidence``,
    the printed summary and ``Measurement.merge`` of replicates."""
    benchmark = _bm(lib)
    spec = benchmark.TaskSpec("model(x)", "x = torch.randn(8)", label="fwd", sub_label="bs8", description="eager",
                              num_threads=4)
    steady = benchmark.Measurement(100, [1.00e-3, 1.01e-3, 0.99e-3, 1.02e-3, 1.00e-3, 0.98e-3], spec)
    noisy = benchmark.Measurement(10, [2e-4, 5e-4, 1e-4, 9e-4, 3e-4], spec)
    single = benchmark.Measurement(1000, [0.25], benchmark.TaskSpec("f()", "pass"))
    rows = []
    for m in (steady, noisy, single):
        rows.append((m.mean, m.median, m.iqr, m.times, m.significant_figures, m.has_warnings,
                     m.meets_confidence(), m.meets_confidence(0.9), _no_addr(repr(m)), m.title, m.as_row_name))
    merged = benchmark.Measurement.merge([steady, noisy, single])
    merged_rows = [(m.number_per_run, m.times, m.title, m.task_spec == spec) for m in merged]
    units = [benchmark.select_unit(t) for t in (3e-9, 4.5e-7, 2e-5, 0.3, 12.0)]
    return (rows, merged_rows, units, [benchmark.unit_to_english(u) for u, _ in units],
            benchmark.trim_sigfig(3.14159, 2), benchmark.trim_sigfig(123456.0, 3),
            benchmark.ordered_unique([3, 1, 3, 2, 1]))


def _fixed(benchmark, stmt, label, sub, desc, t, threads=1, env=None, spread=0.0):
    spec = benchmark.TaskSpec(stmt, "pass", label=label, sub_label=sub, description=desc, num_threads=threads,
                              env=env)
    return benchmark.Measurement(10, [t * 10 * (1 + spread * d) for d in (0.0, 0.02, -0.02, 0.01, -0.01, 0.5,
                                                                          -0.5)][:7], spec)


def case_compare_tables_from_fixed_measurements(lib):
    """A sweep's results table (``benchmark.Compare``) built from measurements with fixed times: rows per
    sub_label and thread count, columns per description, two labels, an env column, the trimmed, coloured and
    warning-highlighted variants, ``extend_results`` and a bad result."""
    benchmark = _bm(lib)
    results = []
    for threads in (1, 4):
        for size, base in (("n=64", 2e-6), ("n=1024", 3.1e-5)):
            for desc, k in (("eager", 1.0), ("compiled", 0.42), ("half", 1.9)):
                results.append(_fixed(benchmark, "f(x)", "matmul", size, desc, base * k / threads, threads))
    results.append(_fixed(benchmark, "g(x)", "softmax", None, "eager", 7.5e-4))
    results.append(_fixed(benchmark, "g(x)", "softmax", None, "compiled", 2.5e-4, spread=1.0))
    c = benchmark.Compare(results)
    plain = str(c)
    c.trim_significant_figures()
    trimmed = str(c)
    c.colorize()
    coloured = str(c)
    c.colorize(rowwise=True)
    rowwise = str(c)
    c2 = benchmark.Compare(results[:2])
    c2.highlight_warnings()
    c2.extend_results([results[-1], results[-2]])
    warned = str(c2)
    envs = benchmark.Compare([_fixed(benchmark, "h()", "lbl", "s", "d", 1e-3, env="cpu-a"),
                              _fixed(benchmark, "h()", "lbl", "s", "d", 2e-3, env="cpu-b")])
    return (plain, trimmed, coloured, rowwise, warned, str(envs),
            _family(lambda: benchmark.Compare([results[0], 1.5])),
            _family(lambda: benchmark.Compare([]).__str__()))


def case_compare_of_timed_measurements_layout(lib):
    """``Compare`` of real measurements, printed: only the layout is compared (row names in the first column,
    the number of lines, the header cells), never the numbers."""
    torch = lib
    benchmark = _bm(lib)
    results = []
    for n in (4, 32):
        x = formula_data(torch, n, n)
        for desc, stmt in (("mm", "x @ x"), ("add", "x + x"), ("sum", "x.sum()")):
            results.append(benchmark.Timer(stmt, globals={"x": x}, label="ops", sub_label=f"[{n}, {n}]",
                                           description=desc).timeit(5))
    text = str(benchmark.Compare(results))
    lines = text.splitlines()
    return (len(lines), [ln.split("|")[0].rstrip().rstrip("-") for ln in lines[1:-2]],
            [c.strip() for c in lines[1].split("|")],
            lines[0].strip("[]-").strip(), lines[-1].startswith("Times are in"))


def case_benchmark_utils_module_paths(lib):
    """Import paths suites use: ``torch.utils.benchmark.utils.common`` (``Measurement``, ``TaskSpec``,
    ``select_unit``, ``trim_sigfig``), ``...utils.timer.Timer`` and ``...utils.compare.Compare``: the same objects
    as the package's."""
    benchmark = _bm(lib)
    common = import_module(lib.__name__ + ".utils.benchmark.utils.common")
    timer_mod = import_module(lib.__name__ + ".utils.benchmark.utils.timer")
    compare_mod = import_module(lib.__name__ + ".utils.benchmark.utils.compare")
    m = common.Measurement(4, [8e-6, 8e-6], common.TaskSpec("x", "pass", label="L", description="cpu"))
    return (common.Measurement is benchmark.Measurement, common.TaskSpec is benchmark.TaskSpec,
            timer_mod.Timer is benchmark.Timer, compare_mod.Compare is benchmark.Compare,
            timer_mod.Language.PYTHON is benchmark.Language.PYTHON, common.select_unit(m.median),
            common.trim_sigfig(0.0123456, 3), common.unit_to_english("us"), str(compare_mod.Compare([m])))


def case_profiler_record_function_ranges(lib):
    """``torch.profiler.profile(activities=[CPU], record_shapes=True, profile_memory=True, with_stack=...)`` around
    a model with nested ``record_function`` ranges: the user ranges' counts in ``key_averages()``, their events in
    ``events()`` (names and counts), no ``ProfilerStep`` rows without a schedule, ``table()`` a str, the model's
    outputs unchanged."""
    torch = lib
    nn = torch.nn
    P = _prof(lib)
    model = formula_init(torch, nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 3)))
    x = formula_data(torch, 4, 6)
    user = {"forward", "loss", "backward", "inner", "decorated"}

    @P.record_function("decorated")
    def head(t):
        return t.softmax(-1)

    outs = []
    for with_stack in (False, True):
        with P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                       with_stack=with_stack) as prof:
            for _ in range(3):
                with P.record_function("forward"):
                    y = model(x)
                    with P.record_function("inner"):
                        y = head(y)
                with P.record_function("loss"):
                    loss = (y * y).mean()
                with P.record_function("backward"):
                    loss.backward()
            prof.step()
        ka = prof.key_averages()
        counts = {e.key: e.count for e in ka if e.key in user}
        names = sorted(e.name for e in prof.events() if e.name in user)
        steps = sorted(e.key for e in ka if e.key.startswith("ProfilerStep"))
        table = ka.table(sort_by="self_cpu_time_total", row_limit=5)
        outs.append((counts, names, steps, type(table).__name__, type(ka).__name__,
                     all(isinstance(e.cpu_time_total, float) for e in ka if e.key in user), y, loss))
    return outs, model[0].weight.grad, P.supported_activities() == {P.ProfilerActivity.CPU}


def case_profiler_schedule_trace_ready_cycles(lib):
    """The tensorboard recipe without the handler's files: ``schedule(wait=1, warmup=1, active=2, repeat=2)``,
    ``on_trace_ready`` recording the step and the per-cycle ``key_averages`` counts, ``prof.step()`` per training
    step; the schedule's actions (with ``skip_first``) and what is left in ``key_averages`` after the block."""
    torch = lib
    nn = torch.nn
    P = _prof(lib)
    model = formula_init(torch, nn.Linear(5, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = formula_data(torch, 3, 5)
    ready = []

    def handler(p):
        counts = {e.key: e.count for e in p.key_averages() if e.key in ("train_step", "ProfilerStep*")}
        ready.append((p.step_num, counts))

    sched = P.schedule(wait=1, warmup=1, active=2, repeat=2)
    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=sched, on_trace_ready=handler) as prof:
        for step in range(10):
            with P.record_function("train_step"):
                opt.zero_grad()
                model(x).pow(2).sum().backward()
                opt.step()
            prof.step()
    final = {e.key: e.count for e in prof.key_averages() if e.key in ("train_step", "ProfilerStep*")}
    actions = [P.schedule(wait=2, warmup=1, active=3, repeat=1, skip_first=2)(i).name for i in range(10)]
    actions2 = [sched(i).name for i in range(12)]
    return ready, final, actions, actions2, prof.step_num, model.weight, \
        _family(lambda: P.schedule(wait=1, warmup=1, active=0))


def case_profiler_start_stop_acc_events_and_export(lib):
    """The non-context-manager profiler (``prof = profile(...); prof.start(); ...; prof.stop()``) with a schedule
    and ``acc_events=True`` keeping every cycle's ranges, ``record_function`` as a decorator on a module's
    ``forward``, ``events()`` parents and children, and ``export_chrome_trace`` writing a JSON trace."""
    torch = lib
    nn = torch.nn
    P = _prof(lib)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        @P.record_function("Block.forward")
        def forward(self, x):
            with P.record_function("activation"):
                return self.fc(x).tanh()

    model = formula_init(torch, nn.Sequential(Block(), Block()))
    x = formula_data(torch, 2, 4)
    traces = []
    prof = P.profile(activities=[P.ProfilerActivity.CPU], schedule=P.schedule(wait=0, warmup=1, active=1),
                     on_trace_ready=lambda p: traces.append(p.step_num), acc_events=True)
    prof.start()
    for _ in range(6):
        y = model(x)
        prof.step()
    prof.stop()
    counts = {e.key: e.count for e in prof.key_averages() if e.key in ("Block.forward", "activation",
                                                                       "ProfilerStep*")}
    evs = [e for e in prof.events() if e.name in ("Block.forward", "activation")]
    tree = [(e.name, e.cpu_parent.name if e.cpu_parent is not None else None,
             sorted(c.name for c in e.cpu_children if c.name in ("Block.forward", "activation"))) for e in evs]
    with P.profile(activities=[P.ProfilerActivity.CPU]) as p2:
        with P.record_function("export_me"):
            model(x)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        p2.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    return (traces, counts, tree[:4], len(evs), "traceEvents" in trace, type(trace["traceEvents"]).__name__, y,
            [e.key for e in p2.key_averages() if e.key == "export_me"])


def case_profiler_memory_tutorial_tables(lib):
    """The profiler recipe's memory part: ``profile(activities=[CPU], profile_memory=True, record_shapes=True,
    with_stack=True)``, tables sorted by ``self_cpu_memory_usage``/``cpu_memory_usage``/``cpu_time_total``, by
    input shape, ``total_average()``, the ``*_str`` fields scripts print, metadata, and ``export_stacks`` for a
    flame graph; only types, names and the presence of files are compared."""
    torch = lib
    nn = torch.nn
    P = _prof(lib)
    model = formula_init(torch, nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                              nn.Flatten(), nn.Linear(4, 2)))
    inputs = formula_data(torch, 2, 3, 8, 8)
    with P.profile(activities=[P.ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                   with_stack=True) as prof:
        with P.record_function("model_inference"):
            out = model(inputs)
    prof.add_metadata("batch_size", "2")
    prof.add_metadata_json("config", '{"lr": 0.1}')
    ka = prof.key_averages()
    tables = [type(ka.table(sort_by=key, row_limit=10)).__name__ for key in
              ("self_cpu_memory_usage", "cpu_memory_usage", "cpu_time_total", "self_cpu_time_total", "count",
               "self_cuda_time_total", "flops")]
    tables.append(type(prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                                           row_limit=10)).__name__)
    tables.append(type(prof.key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total",
                                                                    row_limit=2)).__name__)
    row = next(e for e in ka if e.key == "model_inference")
    fields = (row.count, type(row.cpu_time_total_str).__name__, type(row.self_cpu_time_total_str).__name__,
              type(row.cpu_time_str).__name__, type(row.device_time_total_str).__name__, row.flops,
              type(row.cpu_time).__name__, row.device_memory_usage)
    total = ka.total_average()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "profiler_stacks.txt")
        prof.export_stacks(path, "self_cpu_time_total")
        exported = os.path.exists(path)
    return (tables, fields, type(total).__name__, total.key, exported, out,
            _family(lambda: ka.table(sort_by="not_a_column")))


def case_autograd_profiler_legacy_api(lib):
    """``torch.autograd.profiler.profile()`` with ``record_function`` ranges, as older benchmark scripts write it:
    counts by name, ``function_events`` names, ``table()``/``str`` types, ``self_cpu_time_total`` and
    ``total_average()`` types, a disabled profiler, and reading results before the block ends."""
    torch = lib
    AP = torch.autograd.profiler
    x = formula_data(torch, 5, 5)
    with AP.profile() as prof:
        for _ in range(2):
            with AP.record_function("matmul_block"):
                y = x @ x
        with AP.record_function("reduce"):
            s = y.sum()
    counts = {e.key: e.count for e in prof.key_averages() if e.key in ("matmul_block", "reduce")}
    names = sorted(e.name for e in prof.function_events if e.name in ("matmul_block", "reduce"))
    res = {"counts": counts, "names": names,
           "table": type(prof.key_averages().table(sort_by="cpu_time_total")).__name__,
           "str": type(str(prof)).__name__, "self": type(prof.self_cpu_time_total).__name__,
           "avg": type(prof.total_average()).__name__, "s": s}
    disabled = AP.profile(enabled=False)
    with disabled as off:
        x + 1
    res["off"] = (off is None, _family(lambda: disabled.key_averages()), _family(lambda: disabled.function_events),
                  _family(lambda: disabled.table()), disabled.enabled)
    early = AP.profile()
    with early:
        res["early"] = _family(lambda: early.key_averages())
    res["reenter"] = _family(lambda: early.__enter__())
    return res


def _attn_net(lib):
    nn = lib.nn

    class Attention(nn.Module):
        def __init__(self, dim=16, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, -1)
            q, k, v = [t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v)]
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            y = att.softmax(-1) @ v
            return self.proj(y.transpose(1, 2).reshape(B, T, C))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.to_tokens = nn.Linear(8, 16)
            self.attn = Attention()
            self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
            self.head = nn.Linear(16, 10, bias=False)

        def forward(self, img):
            f = self.stem(img).relu()
            tok = self.to_tokens(f.flatten(2).transpose(1, 2))
            tok = tok + self.attn(tok)
            tok = tok + self.mlp(tok)
            return self.head(tok.mean(1))

    return Net()


def case_flop_counter_model_breakdown(lib):
    """``FlopCounterMode(display=False, depth=)`` around a conv + attention (matmuls written out) + MLP model: total
    flops forward and forward+backward, the per-module breakdown (module paths and per-op counts), under
    ``no_grad``, a counter reused for more passes, ``get_table`` and the tables printed with ``display=True`` at
    depths 1-3 (the whole text)."""
    torch = lib
    FC = import_module(lib.__name__ + ".utils.flop_counter")
    net = formula_init(torch, _attn_net(lib))
    img = formula_data(torch, 2, 3, 8, 8)

    def counts(fc):
        return {mod: {str(op): n for op, n in ops.items()} for mod, ops in fc.get_flop_counts().items()}

    fwd = FC.FlopCounterMode(display=False, depth=2)
    with fwd:
        out = net(img)
    both = FC.FlopCounterMode(display=False)
    with both:
        net(img).square().sum().backward()
    with torch.no_grad(), FC.FlopCounterMode(display=False) as nog:
        net(img)
    again = []
    for _ in range(2):
        with fwd:
            net(img)
        again.append(fwd.get_total_flops())
    printed = []
    for depth in (1, 2, 3):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), FC.FlopCounterMode(display=True, depth=depth):
            net(img)
        printed.append(buf.getvalue())
    return (fwd.get_total_flops(), counts(both), both.get_total_flops(), nog.get_total_flops(), again,
            both.get_table(depth=2), both.get_table(), printed, out, net.stem.weight.grad.shape)


def case_flop_counter_op_zoo(lib):
    """Flops per op as roofline scripts count them: ``addmm``, ``mm``, ``bmm``, ``baddbmm``, broadcast ``matmul``
    (vector-matrix, batched-by-matrix), ``einsum``, ``F.linear`` with and without bias, grouped/dilated/strided
    ``conv1d``/``conv2d``/``conv3d``, ``conv_transpose2d``, and ``scaled_dot_product_attention``; each op's
    count and the total, then achieved TFLOP/s formatted from a fixed time."""
    torch = lib
    F = torch.nn.functional
    FC = import_module(lib.__name__ + ".utils.flop_counter")
    d = lambda *s: formula_data(torch, *s)  # noqa: E731
    progs = {
        "addmm": lambda: torch.addmm(d(3), d(2, 4), d(4, 3)),
        "mm": lambda: d(5, 7) @ d(7, 2),
        "bmm": lambda: torch.bmm(d(2, 3, 4), d(2, 4, 5)),
        "baddbmm": lambda: torch.baddbmm(d(2, 3, 3), d(2, 3, 4), d(2, 4, 3), beta=0.5),
        "vecmat": lambda: torch.matmul(d(4), d(4, 3)),
        "batched": lambda: torch.matmul(d(2, 3, 4, 5), d(5, 6)),
        "einsum": lambda: torch.einsum("bhqd,bhkd->bhqk", d(1, 2, 3, 4), d(1, 2, 5, 4)),
        "linear": lambda: F.linear(d(5, 7), d(3, 7), d(3)),
        "linear_nobias": lambda: F.linear(d(2, 5, 7), d(3, 7)),
        "conv1d": lambda: F.conv1d(d(1, 4, 11), d(6, 2, 3), groups=2, dilation=2),
        "conv2d": lambda: F.conv2d(d(2, 3, 9, 9), d(4, 3, 3, 3), stride=2, padding=1),
        "conv3d": lambda: F.conv3d(d(1, 2, 4, 5, 5), d(3, 2, 2, 3, 3)),
        "convT": lambda: F.conv_transpose2d(d(1, 4, 5, 5), d(4, 2, 3, 3), stride=2, padding=1),
        "sdpa": lambda: F.scaled_dot_product_attention(d(1, 2, 4, 8), d(1, 2, 6, 8), d(1, 2, 6, 8)),
    }
    res = {}
    for name, f in progs.items():
        with FC.FlopCounterMode(display=False) as fc:
            out = f()
        total = fc.get_total_flops()
        res[name] = (total, {str(k): v for k, v in fc.get_flop_counts()["Global"].items()}, out.shape,
                     f"{total / 1.25e-3 / 1e12:.6f} TFLOP/s")
    return res


def case_cuda_guarded_timing_script(lib):
    """The timing harness every benchmark script has: pick the device, and time with ``cuda.Event`` +
    ``synchronize`` when CUDA is there, else with ``time.perf_counter`` and ``.item()`` as the sync point; the
    branch taken, the device queries, ``set_num_threads(1)``, and the (deterministic) values computed in the loop."""
    torch = lib
    nn = torch.nn
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    info = {"device": str(device), "count": torch.cuda.device_count(), "mps": torch.backends.mps.is_available(),
            "mps_built": torch.backends.mps.is_built(), "avail": torch.cuda.is_available(),
            "acc": torch.accelerator.is_available(), "cpu_avail": torch.cpu.is_available(),
            "cpu_count": torch.cpu.device_count()}
    prior = torch.get_num_threads()
    torch.set_num_threads(1)
    info["threads"] = torch.get_num_threads()
    model = formula_init(torch, nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))).to(device)
    x = formula_data(torch, 32, 8).to(device)
    branch, checks, elapsed = [], [], []
    with torch.inference_mode():
        for _ in range(3):  # warm-up
            model(x)
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(5):
                y = model(x)
            end.record()
            torch.cuda.synchronize()
            elapsed.append(start.elapsed_time(end))
            branch.append("cuda")
        else:
            t0 = time.perf_counter()
            for i in range(5):
                y = model(x)
                checks.append(y.sum().item())
            elapsed.append((time.perf_counter() - t0) * 1e3)
            branch.append("cpu")
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    torch.set_num_threads(prior)
    info["restored"] = torch.get_num_threads() == prior
    return (info, branch, checks, [type(e).__name__ for e in elapsed], y, y.device.type, y.is_inference(),
            torch.cpu.synchronize())


def case_backend_flags_read_write(lib):
    """The block at the top of benchmark scripts: ``cudnn.benchmark = True``, ``set_float32_matmul_precision
    ("high")``, ``backends.cuda.matmul.allow_tf32`` and ``cudnn.allow_tf32``, read back and restored; the SDP
    backend switches; and a matmul computed under the flags (CPU: float32 results unchanged)."""
    torch = lib
    saved = (torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision(),
             torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cudnn.deterministic)
    res = {"before": saved}
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("high")
    res["after_high"] = (torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision(),
                         torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    res["after_tf32"] = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32,
                         torch.backends.cudnn.allow_tf32)
    torch.set_float32_matmul_precision("medium")
    res["medium"] = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
    a = formula_data(torch, 6, 6)
    res["mm"] = a @ a
    res["bad"] = _family(lambda: torch.set_float32_matmul_precision("fastest"))
    res["sdp"] = (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.mem_efficient_sdp_enabled(),
                  torch.backends.cuda.math_sdp_enabled(), torch.backends.cudnn.is_available(),
                  torch.backends.cudnn.enabled)
    torch.backends.cudnn.benchmark = saved[0]
    torch.set_float32_matmul_precision(saved[1])
    torch.backends.cuda.matmul.allow_tf32 = saved[2]
    torch.backends.cudnn.allow_tf32 = saved[3]
    res["restored"] = (torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision(),
                       torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    return res


def case_cuda_memory_helpers_on_cpu_build(lib):
    """Memory reporting as benchmark scripts write it, on a CPU-only build: which helpers answer (zeros, empty
    stats) and which raise (error families), through ``torch.cuda`` and ``torch.cuda.memory``; the guarded
    ``peak = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0.0`` idiom."""
    torch = lib
    c = torch.cuda
    res = {name: _family(f) for name, f in {
        "max_alloc": lambda: c.max_memory_allocated(), "alloc": lambda: c.memory_allocated(),
        "reserved": lambda: c.memory_reserved(), "max_reserved": lambda: c.max_memory_reserved(),
        "reset_peak": lambda: c.reset_peak_memory_stats(), "empty": lambda: c.empty_cache(),
        "mem_info": lambda: c.mem_get_info(), "event": lambda: c.Event(enable_timing=True).record(),
        "sync": lambda: c.synchronize(), "name": lambda: c.get_device_name(0),
        "cap": lambda: c.get_device_capability(), "props": lambda: c.get_device_properties(0),
        "stream": lambda: c.current_stream(), "to_cuda": lambda: torch.ones(2).cuda(),
        "mem_max_alloc": lambda: c.memory.max_memory_allocated(),
        "mem_reset": lambda: c.memory.reset_peak_memory_stats(),
        "mem_stats": lambda: c.memory.memory_stats(), "summary": lambda: c.memory_summary(),
        "mem_summary": lambda: c.memory.memory_summary(abbreviated=True),
    }.items()}
    res["values"] = (c.memory_allocated(), c.max_memory_allocated(), c.memory_reserved(), dict(c.memory_stats()),
                     c.is_initialized())
    peak = torch.cuda.max_memory_allocated() / 2 ** 20 if torch.cuda.is_available() else 0.0
    res["peak"] = (peak, type(peak).__name__)
    return res


def case_compiled_function_benchmark_table(lib, jit):
    """``torch.compile`` of a benchmarked function (GELU-MLP with a residual and layer norm), warm-up calls, a
    ``perf_counter`` loop synchronised by ``.item()``, a ``benchmark.Timer`` of the compiled and eager versions,
    and the results table as scripts print it: (name, checksum, max abs diff to eager, shape); a second input
    shape recompiles and still matches."""
    torch = lib
    F = torch.nn.functional
    benchmark = _bm(lib)
    w1, w2 = formula_data(torch, 32, 16), formula_data(torch, 16, 32, seed=1)
    ln_w = formula_data(torch, 16, seed=2)

    def block(x):
        h = F.gelu(x @ w1.t()) @ w2.t()
        return F.layer_norm(x + h, (16,), ln_w)

    compiled = jit(block)
    table = []
    for shape in ((8, 16), (4, 3, 16)):
        x = formula_data(torch, *shape, seed=3)
        for _ in range(3):
            compiled(x)
        t0 = time.perf_counter()
        sums = [compiled(x).sum().item() for _ in range(4)]
        ms = (time.perf_counter() - t0) * 1e3 / 4
        ref = block(x)
        out = compiled(x)
        ms_t = benchmark.Timer("f(x)", globals={"f": compiled, "x": x}, label="block", sub_label=str(shape),
                               description="compiled").timeit(5)
        table.append((str(tuple(shape)), round(sums[-1], 3), len(set(sums)), (out - ref).abs().max().item() < 1e-5,
                      tuple(out.shape), type(ms).__name__, ms_t.number_per_run, ms_t.sub_label, out))
    header = f"{'shape':<12}{'checksum':>12}"
    lines = [header] + [f"{r[0]:<12}{r[1]:>12.3f}" for r in table]
    return table, "\n".join(lines)


test_script_matches_torch = script_test(globals())


# --- the fixes

def _step_counts(lib, sched=None, steps=4, **kw):
    """Names and counts of the ranges a profile keeps, and when ``on_trace_ready`` ran."""
    P = _prof(lib)
    ready = []
    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=sched, on_trace_ready=lambda p: ready.append(
            (p.step_num, sorted((e.key, e.count) for e in p.key_averages() if not e.key.startswith("aten")))),
            **kw) as prof:
        for _ in range(steps):
            with P.record_function("work"):
                lib.ones(2) + 1
            prof.step()
    return ready, sorted((e.key, e.count) for e in prof.key_averages() if not e.key.startswith("aten"))


def test_profiler_step_ranges_only_with_a_schedule_and_grouped_as_pytorch():
    """``ProfilerStep#N`` ranges exist only with a schedule and are keyed ``ProfilerStep*`` (torchish added a row
    per step always, under its numbered name)."""
    same(lambda lib: _step_counts(lib))
    same(lambda lib: _step_counts(lib, _prof(lib).schedule(wait=0, warmup=1, active=2, repeat=1), steps=5))


def test_profiler_each_cycle_starts_afresh_unless_acc_events():
    """Each schedule cycle's results replace the last (torchish summed every cycle); ``acc_events=True`` keeps
    them all (torchish refused the argument)."""
    same(lambda lib: _step_counts(lib, _prof(lib).schedule(wait=1, warmup=1, active=2, repeat=3), steps=14))
    same(lambda lib: _step_counts(lib, _prof(lib).schedule(wait=1, warmup=1, active=2, repeat=3), steps=14,
                                  acc_events=True))


def test_profiler_record_then_none_stops_without_trace_ready():
    """A schedule going from RECORD straight to NONE stops the trace without calling ``on_trace_ready``, as
    PyTorch's "Incorrect schedule" transition does (torchish called it)."""
    def run(lib):
        P = _prof(lib)
        with pytest.warns(UserWarning) if lib.__name__ == "torch" else contextlib.nullcontext():
            return _step_counts(lib, lambda step: P.ProfilerAction.RECORD if step < 2 else P.ProfilerAction.NONE)
    same(run)


def test_profiler_events_are_ranges_with_names_and_tree():
    """``profile.events()`` (and the legacy ``function_events``) are the recorded ranges, each with ``name``,
    ``count`` 1, its parent and children (torchish returned the per-name averages, which have no ``name``)."""
    def run(lib):
        P = _prof(lib)
        with P.profile(activities=[P.ProfilerActivity.CPU]) as prof:
            for _ in range(2):
                with P.record_function("outer"):
                    with P.record_function("inner"):
                        pass
        evs = [e for e in prof.events() if not e.name.startswith("aten")]
        with lib.autograd.profiler.profile() as legacy:
            with lib.autograd.profiler.record_function("r"):
                pass
        return ([(e.name, e.key, e.count, e.cpu_parent.name if e.cpu_parent else None,
                  [c.name for c in e.cpu_children]) for e in evs],
                [e.name for e in legacy.function_events if not e.name.startswith("aten")],
                type(prof.events()).__name__)
    same(run)


def test_legacy_profiler_disabled_binds_none_and_results_empty_while_running():
    """``with autograd.profiler.profile(enabled=False) as p`` binds None, as PyTorch's; results asked for inside
    the block are empty (torchish raised RuntimeError)."""
    def run(lib):
        AP = lib.autograd.profiler
        with AP.profile(enabled=False) as off:
            pass
        running = AP.profile()
        with running:
            with AP.record_function("r"):
                pass
            inside = (len(running.key_averages()), len(running.function_events))
        return off is None, inside, [e.key for e in running.key_averages()]
    same(run)


def test_benchmark_utils_module_paths():
    """``torch.utils.benchmark.utils.common``/``timer``/``compare`` import (torchish: ModuleNotFoundError) and are
    the package's modules."""
    from torchish.utils.benchmark.utils.common import Measurement
    from torchish.utils.benchmark.utils.timer import Timer
    import torchish.utils.benchmark.utils.compare as compare
    from torchish.utils import benchmark
    assert Measurement is benchmark.Measurement and Timer is benchmark.Timer and compare.Compare is benchmark.Compare


def test_cuda_memory_submodule_and_summary_on_cpu_build():
    """``torch.cuda.memory`` is importable with the statistics functions (torchish: AttributeError), and on a
    CPU-only build ``memory_summary()`` raises PyTorch's KeyError."""
    import torchish.cuda.memory as mem
    assert mem.max_memory_allocated is torchish.cuda.max_memory_allocated
    if not torchish.cuda.is_available():
        same(lambda lib: (lib.cuda.memory.max_memory_allocated(), lib.cuda.memory.memory_allocated(),
                          _family(lambda: lib.cuda.memory_summary()),
                          _family(lambda: lib.cuda.memory.memory_summary())))


def test_profiler_table_sort_keys_totals_and_time_strings():
    """``table(sort_by=)`` takes any column (the recipe's ``self_cpu_memory_usage``; torchish: AttributeError),
    ``EventList.total_average()`` and the ``*_str`` fields exist, ``export_stacks`` writes a file."""
    def run(lib):
        P = _prof(lib)
        with P.profile(activities=[P.ProfilerActivity.CPU], profile_memory=True) as prof:
            with P.record_function("r"):
                lib.ones(3) * 2
        ka = prof.key_averages()
        row = next(e for e in ka if e.key == "r")
        with P.profile(activities=[P.ProfilerActivity.CPU], with_stack=True) as stacked:
            lib.ones(3) * 2
        with tempfile.TemporaryDirectory() as tmp:
            stacked.export_stacks(os.path.join(tmp, "s.txt"))
            exported = (os.path.exists(os.path.join(tmp, "s.txt")),
                        _family(lambda: stacked.export_stacks(os.path.join(tmp, "t.txt"), "cpu_time_total")),
                        _family(lambda: prof.export_stacks(os.path.join(tmp, "u.txt"))))
        return ([type(ka.table(sort_by=k)).__name__ for k in ("self_cpu_memory_usage", "cpu_memory_usage", "flops")],
                ka.total_average().key, [type(getattr(row, f + "_str")).__name__ for f in
                                         ("cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time_total",
                                          "self_device_time_total")], exported, _family(lambda: ka.table(sort_by="x")))
    same(run)
