"""torchish.utils._pytree, hooks, dlpack and benchmark against torch.utils's: pytrees of PyTorch's node types (dict
order kept, None a leaf), specs printed alike, the same errors; Timer/Measurement/Compare with PyTorch's statistics
and printed forms."""
import collections
import re

import pytest

from oracle import needs_torch, torch, torchish

pytestmark = needs_torch

NT = collections.namedtuple("NT", "x y")


def _pytree_outcomes(P):
    out = [repr(P.tree_flatten(None)), repr(P.tree_flatten({"b": 1, "a": (2, [3, None])}))]
    leaves, spec = P.tree_flatten([NT(1, 2), collections.OrderedDict(z=3, a=4), collections.deque([5]),
                                   collections.defaultdict(int, {"k": 6})])
    out += [leaves, repr(spec), (spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf()),
            repr(P.tree_unflatten([10, 20, 30, 40, 50, 60], spec)),
            P.tree_map(lambda x: x * 2, {"a": [1, 2], "b": (3,)}), P.tree_map(lambda x, y: x + y, [1, 2], [10, 20]),
            P.tree_map(lambda x, y: x + y, {"a": 1, "b": 2}, {"b": 20, "a": 10}),
            P.tree_map_only(int, lambda x: -x, [1, "a", 2.0]), repr(P.tree_structure((1, 2))),
            (P.tree_all(lambda x: x > 0, [1, 2]), P.tree_any(lambda x: x > 1, [1, 2]),
             P.tree_all_only(int, lambda x: x > 0, [1, "a"]), P.tree_any_only(str, lambda x: x == "b", [1, "a"])),
            repr(P.tree_leaves([(), {}, [None], 1])), P.tree_structure([1, (2,)]) == P.tree_structure([5, (6,)]),
            P.tree_structure([1, (2,)]) == P.tree_structure([5, [6]]),
            [(P.keystr(k), v) for k, v in P.tree_flatten_with_path({"a": [1, NT(2, 3)], "b": (4,)})[0]],
            P.tree_map_with_path(lambda k, v: P.keystr(k) + str(v), {"a": [1, 2]}),
            P.tree_flatten([1, [2, 3]], is_leaf=lambda x: isinstance(x, list) and x[:1] == [2])[0],
            [t.tolist() for t in P.tree_leaves({"w": torch.ones(2) if P is torch.utils._pytree else torchish.ones(2)})]]
    for bad in (lambda: P.tree_map(lambda x, y: x, [1, 2], [1]), lambda: P.tree_unflatten([1], spec),
                lambda: P.tree_map(lambda x, y: x, [1], (1,)), lambda: P.tree_map(lambda x, y: x, {"a": 1}, {"b": 1})):
        with pytest.raises(ValueError) as e:
            bad()
        out.append(str(e.value).replace("torchish", "torch"))
    seen = []
    assert P.tree_map_(seen.append, [91, (92,)]) == [91, (92,)]
    return out + [seen]


def test_pytree_matches_torch():
    import torch.utils._pytree  # noqa: F401
    assert _pytree_outcomes(torchish.utils._pytree) == _pytree_outcomes(torch.utils._pytree)


def test_pytree_registered_nodes():
    P = torchish.utils._pytree

    class Point:
        def __init__(self, a, b):
            self.a, self.b = a, b
    P.register_pytree_node(Point, lambda p: ([p.a, p.b], None), lambda xs, _: Point(*xs))
    leaves, spec = P.tree_flatten({"p": Point(1, [2, 3])})
    assert leaves == [1, 2, 3] and P.tree_unflatten([7, 8, 9], spec)["p"].b == [8, 9]
    assert repr(spec) == "TreeSpec(dict, ['p'], [TreeSpec(Point, None, [*,\n    TreeSpec(list, None, [*,\n      *])])])"
    with pytest.raises(ValueError, match="already registered"):
        P.register_pytree_node(Point, lambda p: ([], None), lambda xs, _: None)


def test_hooks_and_dlpack():
    from torchish.utils import dlpack, hooks
    h = torchish.ones(2, requires_grad=True).register_hook(lambda g: g)
    assert isinstance(h, hooks.RemovableHandle)
    assert dlpack.from_dlpack(dlpack.to_dlpack(torchish.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
    assert dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4.0))).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(torchish.arange(2.0))).tolist() == [0.0, 1.0]
    assert dlpack.from_dlpack(dlpack.to_dlpack(torchish.ones(2, requires_grad=True))).tolist() == [1.0, 1.0]
    assert int(dlpack.DLDeviceType.kDLCUDA) == int(torch.utils.dlpack.DLDeviceType.kDLCUDA)
    f = hooks.unserializable_hook(lambda g: g)
    assert f.__torch_unserializable__


def _benchmark_outcomes(B):
    specs = [B.TaskSpec("x * 2", "x = torch.ones(100)", label="mul", sub_label="ones(100)", description="cpu"),
             B.TaskSpec("x + 2", "x = torch.ones(100)", label="mul", sub_label="ones(100)", description="gpu"),
             B.TaskSpec("x + 2", "pass", label="mul", sub_label="zeros", description="cpu", num_threads=4),
             B.TaskSpec("a = 1\nb = 2", "pass")]
    ms = [B.Measurement(1000, [0.0021, 0.0023, 0.0022, 0.0030, 0.0021], specs[0]),
          B.Measurement(10, [0.00031], specs[1]), B.Measurement(100, [0.9, 1.1, 1.0, 1.05], specs[2]),
          B.Measurement(1000, [0.0025, 0.0024], specs[0]), B.Measurement(3, [1e-8, 2e-8, 3e-8, 9e-8], specs[3])]
    out = [re.sub(r"<[\w.]+ object at 0x[0-9a-f]+>", "M", repr(m)) for m in ms]
    out += [(round(m.median, 15), round(m.mean, 15), round(m.iqr, 15), m.significant_figures, m.has_warnings,
             m.title, m.as_row_name, m.env, m.stmt, m.number_per_run, m.times) for m in ms]
    for setup in (lambda c: None, lambda c: c.trim_significant_figures(), lambda c: c.colorize(),
                  lambda c: c.highlight_warnings(), lambda c: c.colorize(rowwise=True)):
        c = B.Compare(ms[:4])
        setup(c)
        out.append(str(c))
    out.append((B.select_unit(3e-7), B.select_unit(0.5), B.select_unit(12.0), B.trim_sigfig(123.456, 2),
                B.unit_to_english("us"), [m.times for m in B.Measurement.merge(ms)]))
    return out


def test_benchmark_measurements_and_tables_match_torch():
    import torch.utils.benchmark  # noqa: F401  (a submodule torch imports on request)
    assert _benchmark_outcomes(torchish.utils.benchmark) == _benchmark_outcomes(torch.utils.benchmark)


def test_timer_times_torchish_statements():
    B = torchish.utils.benchmark
    t = B.Timer("y = x @ x", setup="x = torch.ones(32, 32)", label="mm", sub_label="32", description="cpu")
    m = t.timeit(20)
    assert m.number_per_run == 20 and len(m.times) == 1 and m.median > 0
    m = t.blocked_autorange(min_run_time=0.02)
    assert m.number_per_run >= 1 and sum(m.raw_times) >= 0.02 and "runs" in repr(m)
    m = t.adaptive_autorange(min_run_time=0.01, max_run_time=0.2)
    assert len(m.times) >= 1 and m.task_spec.label == "mm"
    assert "mm" in str(B.Compare([m])) and "32" in str(B.Compare([m]))
    with pytest.raises(ValueError, match="only a `str` stmt"):
        B.Timer(lambda: 1)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.autorange()
