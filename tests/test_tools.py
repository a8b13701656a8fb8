"""Tools around training: make_dot (against real torch's graph), SummaryWriter (event files read back), the
profiler (trace files, schedule against torch's), and the memory statistics' CPU fallback."""
from __future__ import annotations

import collections
import glob
import json
import os
import re
import shutil
import struct
import sys
import zlib

import numpy as np
import pytest

import torchish
from torchish.utils import viz
from oracle import arr, needs_torch, run_both, torch

# ----------------------------------------------------------------------------------------------------------------
# make_dot


def _mlp(T, x):
    """A two-layer MLP written with explicit ops, so both libraries record the same grad_fns."""
    w1 = T.nn.Parameter(T.tensor(arr(4, 3, seed=1)))
    b1 = T.nn.Parameter(T.tensor(arr(4, seed=2)))
    w2 = T.nn.Parameter(T.tensor(arr(2, 4, seed=3)))
    params = {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2}
    h = T.relu(T.matmul(T.tensor(x), w1.t()) + b1)
    return (T.matmul(h, w2.t()) ** 2).mean(), params


def _torch_graph(out, params):
    """Labels and labelled edges of torch's graph, walked over next_functions as torchviz draws it."""
    names = {id(p): n for n, p in params.items()}

    def leaf(t):
        return f"{names.get(id(t), '')}\n ({', '.join(str(s) for s in t.shape)})"

    labels, edges, seen, stack = [leaf(out)], [(type(out.grad_fn).__name__, leaf(out))], set(), [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        labels.append(type(fn).__name__)
        if hasattr(fn, "variable"):
            labels.append(leaf(fn.variable))
            edges.append((leaf(fn.variable), type(fn).__name__))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                edges.append((type(nxt).__name__, type(fn).__name__))
                stack.append(nxt)
    return collections.Counter(labels), collections.Counter(edges)


_NODE = re.compile(r'^\s*("?)(\w+)\1 \[label=("(?:[^"\\]|\\.)*"|[^\s\]]+)', re.M)
_EDGE = re.compile(r'^\s*"?(\w+)"? -> "?(\w+)"?', re.M)


def _parse_dot(source):
    """(labels, labelled edges) of DOT text written by graphviz or by torchish's fallback Digraph."""
    ids = {}
    for _, node_id, label in _NODE.findall(source):
        if label.startswith('"'):
            label = label[1:-1].replace("\\n", "\n").replace('\\"', '"')
        ids[node_id] = label
    edges = collections.Counter((ids[a], ids[b]) for a, b in _EDGE.findall(source))
    return collections.Counter(ids.values()), edges


@pytest.fixture(params=["graphviz", "builtin"])
def backend(request, monkeypatch):
    if request.param == "graphviz":
        pytest.importorskip("graphviz")
    else:
        monkeypatch.setattr(viz, "_new_graph", lambda: viz.Digraph(node_attr=viz._NODE_ATTR))
    return request.param


@needs_torch
def test_make_dot_matches_torch_graph(backend):
    x = arr(5, 3, seed=4)
    ref_out, ref_params = _mlp(torch, x)
    out, params = _mlp(torchish, x)
    dot = viz.make_dot(out, params=params)
    labels, edges = _parse_dot(dot.source)
    ref_labels, ref_edges = _torch_graph(ref_out, ref_params)
    assert labels == ref_labels
    assert edges == ref_edges
    assert "fc1.weight\n (4, 3)" in labels and labels["AccumulateGrad"] == 3


@needs_torch
def test_make_dot_of_nn_linear_mlp_names_parameters(backend):
    """nn.Linear is one fused node in torchish, which shows PyTorch's nodes under it (the weight's TBackward0
    included): the graph agrees with torch's, node for node."""
    x = arr(5, 3, seed=4)

    def run(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2))
        return model(T.tensor(x)).sum(), dict(model.named_parameters())

    ref_labels, _ = _torch_graph(*run(torch))
    labels, edges = _parse_dot(viz.make_dot(*run(torchish)).source)
    assert labels == ref_labels
    for name, shape in [("0.weight", "(4, 3)"), ("0.bias", "(4)"), ("2.weight", "(2, 4)"), ("2.bias", "(2)")]:
        assert edges[(f"{name}\n {shape}", "AccumulateGrad")] == 1


def test_make_dot_attrs_and_saved_values():
    x = torchish.tensor(arr(2, 3), requires_grad=True)
    y = x.sum(dim=1, keepdim=True).exp()
    src = viz.make_dot(y, show_attrs=True, show_saved=True).source
    assert re.search(r"keepdims\s*:\s*True", src)
    assert "fillcolor=orange" in src.replace('"', "")
    y.sum().backward()  # saved values are freed: nothing left to show
    assert "orange" not in viz.make_dot(y, show_saved=True).source
    with pytest.raises(TypeError):
        viz.make_dot(y, params={"x": 1.0})


def test_make_dot_render(tmp_path, monkeypatch):
    out, params = _mlp(torchish, arr(5, 3, seed=4))
    dot = viz.Digraph(node_attr=viz._NODE_ATTR)
    monkeypatch.setattr(viz, "_new_graph", lambda: dot)
    viz.make_dot(out, params=params)
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="Graphviz"):
            dot.render(str(tmp_path / "g"), format="png")
        pytest.skip("Graphviz's dot program is not installed: PNG rendering not checked")
    path = dot.render(str(tmp_path / "g"), format="png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in dot._repr_svg_()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz"):
        dot.render(str(tmp_path / "h"), format="png")


# ----------------------------------------------------------------------------------------------------------------
# SummaryWriter


def _events(log_dir):
    """Every Event in the event files of ``log_dir`` (TFRecord framing read directly)."""
    from tensorboardX.proto import event_pb2
    out = []
    for path in sorted(glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))):
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            (n,) = struct.unpack("<Q", data[pos:pos + 8])
            out.append(event_pb2.Event.FromString(data[pos + 12:pos + 12 + n]))
            pos += 12 + n + 4
    return out


def _png_pixels(png):
    """(height, width, channels) uint8 pixels of an unfiltered 8-bit PNG."""
    pos, idat, header = 8, b"", None
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos:pos + 4])
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, _, color = header[:4]
    c = {0: 1, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * c)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(h, w, c)


def test_summary_writer_round_trip(tmp_path):
    pytest.importorskip("tensorboardX")
    from torchish.utils.tensorboard import SummaryWriter
    weights = torchish.tensor(arr(4, 3))
    chw = arr(3, 2, 5, lo=0, hi=1)
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("loss", torchish.tensor(1.0 / (step + 1)), step)
        w.add_histogram("fc.weight", weights, 2)
        w.add_image("chw", torchish.tensor(chw), 2)
        w.add_image("hwc", torchish.tensor(chw).permute(1, 2, 0), 2, dataformats="HWC")
        w.add_text("note", "hello", 2)
        w.add_graph(torchish.nn.Sequential(torchish.nn.Linear(3, 2), torchish.nn.ReLU()), torchish.ones(1, 3))
    events = _events(str(tmp_path))
    values = {}
    for e in events:
        for v in e.summary.value:
            values.setdefault(v.tag, []).append((e.step, v))
    assert [(s, round(v.simple_value, 6)) for s, v in values["loss"]] == [(0, 1.0), (1, 0.5), (2, 0.333333)]
    histo = values["fc.weight"][0][1].histo
    assert histo.num == 12 and np.isclose(histo.sum, arr(4, 3).sum(), rtol=1e-5)
    assert np.isclose(histo.min, arr(4, 3).min()) and np.isclose(histo.max, arr(4, 3).max())
    expected = (chw.transpose(1, 2, 0) * 255).astype(np.uint8)
    for tag in ("chw", "hwc"):
        img = values[tag][0][1].image
        assert (img.height, img.width, img.colorspace) == (2, 5, 3)
        np.testing.assert_array_equal(_png_pixels(img.encoded_image_string), expected)
    assert "note/text_summary" in values
    graph = next(e.graph_def for e in events if e.graph_def)
    from tensorboardX.proto import graph_pb2
    nodes = {n.name: n for n in graph_pb2.GraphDef.FromString(graph).node}
    assert nodes["0/AddmmBackward0_1"].op == "AddmmBackward0"
    assert list(nodes["0/AddmmBackward0_1"].input) == ["input/0", "0/weight", "0/bias"]
    assert list(nodes["output/0"].input) == ["1/ReluBackward0_1"]


def test_summary_writer_scalars_and_hparams_runs(tmp_path):
    pytest.importorskip("tensorboardX")
    from torchish.utils.tensorboard import SummaryWriter
    w = SummaryWriter(str(tmp_path))
    w.add_scalars("acc", {"train": 0.5, "val": torchish.tensor(0.25)}, 1)
    w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hp/acc": 0.9}, run_name="run1")
    w.close()
    got = {}
    for run in ("acc/train", "acc/val", "run1"):
        for e in _events(str(tmp_path / run)):
            for v in e.summary.value:
                got[(run, v.tag)] = v
    assert got[("acc/train", "acc")].simple_value == 0.5 and got[("acc/val", "acc")].simple_value == 0.25
    assert np.isclose(got[("run1", "hp/acc")].simple_value, 0.9)
    assert any(tag == "_hparams_/experiment" for _, tag in got)


def test_summary_writer_without_tensorboardx(monkeypatch):
    from torchish.utils.tensorboard import SummaryWriter
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match=r"pip install torchish\[tensorboard\]"):
        SummaryWriter("unused")


# ----------------------------------------------------------------------------------------------------------------
# profiler


@needs_torch
def test_profiler_schedule_matches_torch():
    kw = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    ref = torch.profiler.schedule(**kw)
    got = torchish.profiler.schedule(**kw)
    assert [got(i).name for i in range(14)] == [ref(i).name for i in range(14)]
    with pytest.raises(AssertionError):
        torch.profiler.schedule(wait=0, warmup=0, active=0)
    with pytest.raises(AssertionError):
        torchish.profiler.schedule(wait=0, warmup=0, active=0)


def test_profiler_writes_a_trace_and_summarises_regions(tmp_path):
    from torchish.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler
    saved = []
    handler = tensorboard_trace_handler(str(tmp_path / "tb"))
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: (saved.append(p.step_num), handler(p))) as prof:
        for _ in range(5):
            with record_function("forward"):
                x = torchish.ones(4) * 2
                with record_function("loss"):
                    x.sum().item()
            prof.step()
    assert saved == [4]  # one cycle: steps 2 and 3 recorded, saved when step 3 ended
    files = glob.glob(str(tmp_path / "tb" / "plugins" / "profile" / "*" / "*.xplane.pb"))
    assert files and all(os.path.getsize(f) > 0 for f in files)
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["forward"].count == 2 and rows["loss"].count == 2  # only the recorded steps
    assert set(rows) == {"forward", "loss", "ProfilerStep*"}  # (steps grouped as PyTorch's key_averages does)
    assert rows["ProfilerStep*"].count == 2
    assert rows["forward"].cpu_time_total >= rows["loss"].cpu_time_total
    assert np.isclose(rows["forward"].self_cpu_time_total,
                      rows["forward"].cpu_time_total - rows["loss"].cpu_time_total)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    assert table.splitlines()[3].startswith("ProfilerStep#") or "forward" in table
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    with open(tmp_path / "trace.json") as f:
        assert "traceEvents" in json.load(f)


# ----------------------------------------------------------------------------------------------------------------
# memory statistics


def test_memory_stats_track_allocations():
    """On an accelerator: XLA's allocator stats. On CPU, the fallback measures the CPU when asked for it."""
    c = torchish.cuda
    dev = None if c.is_available() else "cpu"
    before = c.memory_allocated(dev)
    big = torchish.zeros(1 << 18)  # 1 MiB of float32
    during = c.memory_allocated(dev)
    assert isinstance(before, int) and isinstance(during, int)
    assert during - before >= big.nbytes
    assert c.max_memory_allocated(dev) >= during
    assert c.memory_reserved(dev) >= during
    assert c.memory_stats(dev)["allocated_bytes.all.current"] == c.memory_allocated(dev)
    del big
    assert c.memory_allocated(dev) <= during - (1 << 20)
    assert c.max_memory_allocated(dev) >= during  # the peak remembers
    c.reset_peak_memory_stats(dev)
    if dev == "cpu":  # the fallback's peak restarts from the current usage
        assert c.max_memory_allocated(dev) < during


@needs_torch
@pytest.mark.skipif(torchish.cuda.is_available(), reason="an accelerator is present")
def test_memory_stats_without_accelerator_match_torch_cpu_build():
    ref, got = run_both(lambda T: [T.cuda.memory_allocated(), T.cuda.max_memory_allocated(),
                                   T.cuda.memory_reserved(), T.cuda.max_memory_reserved(), T.cuda.memory_stats()])
    assert got == [ref[0], ref[1], ref[2], ref[3], dict(ref[4])]
