"""``torchish.fx`` graph editing against ``torch.fx``: the same edits of the same traced module (relu replaced by
gelu while iterating the nodes, a node inserted with ``inserting_after``, an unused node erased, dead code
eliminated, ``recompile()``) give the same code and values; an Interpreter subclass sees the same calls; a
Transformer swapping add for mul, ``replace_pattern`` and ``Graph`` built by hand give the same code; tracing errors
(control flow on a Proxy, ``len(proxy)``, erasing a node with users) raise the same exception types and wording."""
import copy
import operator

import numpy as np
import pytest

from oracle import tol
import torchish

torch = pytest.importorskip("torch")
F32 = tol("float32")  # (the suite's float32 tolerance)


def _model(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            y = lib.relu(self.lin(x))
            z = y + x
            return F.relu(z) + lib.relu(z * 2)
    return Block()


def _pair():
    ref, got = _model(torch), _model(torchish)
    with torchish.no_grad():
        for key, value in ref.state_dict().items():
            got.state_dict()[key].copy_(torchish.tensor(value.detach().numpy()))
    return torch.fx.symbolic_trace(ref), torchish.fx.symbolic_trace(got)


X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def _same_values(ref_gm, got_gm):
    np.testing.assert_allclose(got_gm(torchish.tensor(X)).detach().numpy(),
                               ref_gm(torch.tensor(X)).detach().numpy(), **F32)


def _surgery(lib, gm):
    """relu -> gelu, a neg inserted after the add, an unused node added then erased, dead code removed."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is lib.relu:
            node.target = lib.nn.functional.gelu
    add = next(n for n in gm.graph.nodes if n.target is operator.add)
    with gm.graph.inserting_after(add):
        neg = gm.graph.call_function(operator.neg, (add,))
    add.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
    with gm.graph.inserting_before(neg):
        unused = gm.graph.call_method("sum", (add,))
    gm.graph.erase_node(unused)
    with gm.graph.inserting_before(neg):
        gm.graph.call_function(lib.sigmoid, (add,))
    removed = gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return removed, [n.name for n in neg.users], neg.all_input_nodes[0].name


def test_graph_surgery_and_recompile_match_torch():
    ref, got = _pair()
    assert _surgery(torchish, got) == _surgery(torch, ref)
    assert got.code == ref.code
    assert str(got.graph) == str(ref.graph)
    _same_values(ref, got)


def test_node_links_args_setters_and_copies():
    ref, got = _pair()
    for gm in (ref, got):
        nodes = list(gm.graph.nodes)
        assert nodes[1].prev is nodes[0] and nodes[0].next is nodes[1]
    ref_add = next(n for n in ref.graph.nodes if n.name == "add")
    got_add = next(n for n in got.graph.nodes if n.name == "add")
    for add, x in ((ref_add, next(iter(ref.graph.nodes))), (got_add, next(iter(got.graph.nodes)))):
        add.args = (x, x)
        add.replace_input_with(x, x)
        add.update_arg(1, 2.0)
        add.kwargs = {}
    assert [sorted(u.name for u in n.users) for n in got.graph.nodes] == \
        [sorted(u.name for u in n.users) for n in ref.graph.nodes]
    assert [[i.name for i in n.all_input_nodes] for n in got.graph.nodes] == \
        [[i.name for i in n.all_input_nodes] for n in ref.graph.nodes]
    ref.recompile()
    got.recompile()
    assert got.code == ref.code
    ref_copy, got_copy = copy.deepcopy(ref), copy.deepcopy(got)
    assert got_copy.code == ref_copy.code and got_copy.graph is not got.graph
    _same_values(ref_copy, got_copy)
    new_ref, new_got = torch.fx.Graph(), torchish.fx.Graph()
    ref_out = new_ref.graph_copy(ref.graph, {})
    got_out = new_got.graph_copy(got.graph, {})
    new_ref.output(ref_out)
    new_got.output(got_out)
    assert str(new_got) == str(new_ref)


def _interpreter_counts(lib, gm):
    class Count(lib.fx.Interpreter):
        def run_node(self, n):
            self.seen = getattr(self, "seen", []) + [(n.op, n.name)]
            return super().run_node(n)

        def call_function(self, target, args, kwargs):
            self.calls = getattr(self, "calls", 0) + 1
            return super().call_function(target, args, kwargs)
    interp = Count(gm)
    out = interp.run(lib.tensor(X))
    return interp.seen, interp.calls, out.detach().numpy()


def test_interpreter_subclass_sees_the_same_calls():
    ref, got = _pair()
    ref_seen, ref_calls, ref_out = _interpreter_counts(torch, ref)
    got_seen, got_calls, got_out = _interpreter_counts(torchish, got)
    assert (got_seen, got_calls) == (ref_seen, ref_calls)
    np.testing.assert_allclose(got_out, ref_out, **F32)


def _add_to_mul(lib, gm):
    class AddToMul(lib.fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(operator.mul if target is operator.add else target, args, kwargs)
    return AddToMul(gm).transform()


def test_transformer_swapping_add_for_mul_matches_torch():
    ref, got = _pair()
    ref_new, got_new = _add_to_mul(torch, ref), _add_to_mul(torchish, got)
    assert isinstance(got_new, torchish.fx.GraphModule)
    assert got_new.code == ref_new.code
    _same_values(ref_new, got_new)


def _replace(lib, gm):
    def pattern(x):
        return lib.relu(x)

    def replacement(x):
        return lib.sigmoid(x) * x
    matches = lib.fx.replace_pattern(gm, pattern, replacement)
    return [(m.anchor.name, sorted((p.name, g.name) for p, g in m.nodes_map.items())) for m in matches]


def test_replace_pattern_matches_torch():
    ref, got = _pair()
    assert _replace(torchish, got) == _replace(torch, ref)
    assert got.code == ref.code
    _same_values(ref, got)


def test_graph_built_by_hand():
    out = {}
    for lib in (torch, torchish):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        w = g.placeholder("w", default_value=2.0)
        s = g.call_method("sum", (x,), {"dim": 0})
        r = g.call_function(lib.relu, (s,))
        g.output((g.call_function(operator.mul, (r, w)), x))
        gm = lib.fx.GraphModule(lib.nn.Module(), g)
        res = gm(lib.tensor(X))
        out[lib.__name__] = (gm.code, str(g), res[0].detach().numpy())
    assert out["torchish"][:2] == out["torch"][:2]
    np.testing.assert_allclose(out["torchish"][2], out["torch"][2], **F32)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["control_flow", "len", "iterate", "erase_used"])
def test_errors_match_torch(case):
    def run(lib):
        def control_flow(x):
            if x.sum() > 0:
                return x
            return -x

        def use_len(x):
            return x + len(x)

        def iterate(x):
            return [v for v in x]

        if case == "erase_used":
            gm = lib.fx.symbolic_trace(lambda x: lib.relu(x) + 1)
            relu = next(n for n in gm.graph.nodes if n.op == "call_function")
            return _error(lambda: gm.graph.erase_node(relu))
        fn = {"control_flow": control_flow, "len": use_len, "iterate": iterate}[case]
        return _error(lambda: lib.fx.symbolic_trace(fn))
    got, ref = run(torchish), run(torch)
    assert got[0] == ref[0]
    assert got[1] == ref[1]
    if case == "control_flow":
        assert issubclass(torchish.fx.proxy.TraceError, ValueError)


def _fuse_conv_bn(lib, model):
    """The conv-bn fusion pass of PyTorch's FX tutorial: the BatchNorm folded into the Conv2d before it."""
    from importlib import import_module
    fusion = import_module(f"{lib.__name__}.nn.utils.fusion")
    gm = lib.fx.symbolic_trace(copy.deepcopy(model))
    modules = dict(gm.named_modules())
    for node in gm.graph.nodes:
        if node.op != "call_module" or type(modules[node.target]) is not lib.nn.BatchNorm2d:
            continue
        conv_node = node.args[0]
        if conv_node.op != "call_module" or type(modules[conv_node.target]) is not lib.nn.Conv2d:
            continue
        fused = fusion.fuse_conv_bn_eval(modules[conv_node.target], modules[node.target])
        *parent, name = conv_node.target.rsplit(".", 1)
        setattr(modules[parent[0]] if parent else gm, name, fused)
        node.replace_all_uses_with(conv_node)
        gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


def _conv_bn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(),
                         nn.Sequential(nn.Conv2d(3, 2, 1), nn.BatchNorm2d(2))).eval()


def test_conv_bn_fusion_pass_matches_torch():
    ref_model, got_model = _conv_bn(torch), _conv_bn(torchish)
    with torchish.no_grad():
        for key, value in ref_model.state_dict().items():
            value = value.detach().numpy()
            if key.endswith("running_var") or key.endswith("running_mean"):
                value = value + np.linspace(0.1, 0.5, value.size, dtype=value.dtype).reshape(value.shape)
            got_model.state_dict()[key].copy_(torchish.tensor(value))
            ref_model.state_dict()[key].copy_(torch.tensor(value))
    ref, got = _fuse_conv_bn(torch, ref_model), _fuse_conv_bn(torchish, got_model)
    assert got.code == ref.code
    assert sorted(got.state_dict()) == sorted(ref.state_dict())
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 2, 4, 4)
    np.testing.assert_allclose(got(torchish.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(),
                               **F32)
    np.testing.assert_allclose(got(torchish.tensor(x)).detach().numpy(),
                               got_model(torchish.tensor(x)).detach().numpy(), **F32)


def _custom_tracer(lib):
    class Recording(lib.fx.Tracer):
        def __init__(self):
            super().__init__()
            self.calls = []

        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            node = super().create_node(kind, target, args, kwargs, name, type_expr)
            node.meta["kind"] = kind
            return node

        def call_module(self, m, forward, args, kwargs):
            self.calls.append(type(m).__name__)
            return super().call_module(m, forward, args, kwargs)

        def getattr(self, attr, attr_val, parameter_proxy_cache):
            self.calls.append(attr)
            return super().getattr(attr, attr_val, parameter_proxy_cache)
    tracer = Recording()
    graph = tracer.trace(_model(lib))
    assert isinstance(graph, lib.fx.Graph)
    return tracer.calls, [n.meta["kind"] for n in graph.nodes], str(graph)


def test_tracer_overrides_see_the_same_calls():
    assert _custom_tracer(torchish) == _custom_tracer(torch)


def test_pickle_and_copy_of_a_graph_module():
    import pickle
    ref, got = _pair()
    ref_back, got_back = pickle.loads(pickle.dumps(ref)), pickle.loads(pickle.dumps(got))
    assert got_back.code == got.code
    assert str(got_back.graph) == str(ref_back.graph)
    _same_values(ref_back, got_back)
    assert type(copy.copy(got)).__name__ == type(copy.copy(ref)).__name__


def _extras(lib):
    import math
    nn, F = lib.nn, lib.nn.functional

    class Extras(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(4)
            self.emb = nn.Embedding(5, 4)
            self.p = nn.Parameter(lib.linspace(-1, 1, 4))

        def forward(self, x, idx):
            y = lib.ones(4) + x  # (a tensor made in forward: a _tensor_constant attribute)
            z = F.layer_norm(y, y.shape[-1:]) + self.ln(y) + self.emb(idx).mean(1)
            w = z.new_zeros(z.shape) + lib.matmul(z, self.p.t().unsqueeze(-1)) + z.size(-1)
            v = w.add_(1).mul(2).masked_fill(w < 0, 0.0)
            return lib.sum(v, dim=(0,), keepdim=False) + math.sqrt(z.shape[0]), x.device, x.dtype
    lib.manual_seed(0)
    gm = lib.fx.symbolic_trace(Extras())
    out = gm(lib.tensor(X[:, :2].repeat(2, 1)), lib.tensor([[1, 2], [3, 4]]))
    return gm, out


def test_constants_inplace_methods_and_autowrapped_math_match_torch():
    ref, ref_out = _extras(torch)
    got, got_out = _extras(torchish)
    assert got.code == ref.code
    assert str(got.graph) == str(ref.graph)
    assert (str(got_out[1]), str(got_out[2])) == (str(ref_out[1]), str(ref_out[2]))
    assert got_out[0].shape == ref_out[0].shape


@pytest.mark.parametrize("marked", [False, True])
def test_dead_code_elimination_and_has_side_effect(marked):
    def log(x):
        return x

    def run(lib):
        g = lib.fx.Graph()
        a = g.placeholder("a")
        g.call_function(log, (g.call_function(lib.relu, (a,)),))
        g.call_method("add_", (a, 1))
        g.output(a)
        if marked:
            lib.fx.has_side_effect(log)
        return g.eliminate_dead_code(), [n.name for n in g.nodes]
    assert run(torchish) == run(torch)


def test_proxies_around_a_graph_built_by_hand_and_a_dict_root():
    """torch.fx's docs: wrap a placeholder in a Proxy, compute with it, output the node; a GraphModule whose root
    is a dict of name -> module."""
    out = {}
    for lib in (torch, torchish):
        lib.manual_seed(0)
        g = lib.fx.Graph()
        x = lib.fx.Proxy(g.placeholder("x"))
        y = lib.relu(x) * 2 + x.sum(dim=-1, keepdim=True)
        g.output(g.call_module("lin", (y.node,)))
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(X[:, :3].repeat(1, 1)))
            lin.bias.zero_()
        gm = lib.fx.GraphModule({"lin": lin}, g)
        out[lib.__name__] = (gm.code, gm(lib.tensor(X)).detach().numpy())
    assert out["torchish"][0] == out["torch"][0]
    np.testing.assert_allclose(out["torchish"][1], out["torch"][1], **F32)


def _submodule_surgery(lib):
    nn = lib.nn
    gm = lib.fx.symbolic_trace(nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 2)), nn.Tanh()))
    names = [[n for n, _ in gm.named_modules()]]
    added = gm.add_submodule("extra.act", nn.Sigmoid())
    last = [n for n in gm.graph.nodes if n.op == "call_module"][-1]
    with gm.graph.inserting_after(last):
        new = gm.graph.call_module("extra.act", (last,))
    last.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)
    tanh = next(n for n in gm.graph.nodes if n.target == "2")
    tanh.replace_all_uses_with(tanh.args[0])
    gm.graph.erase_node(tanh)
    gm.recompile()
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    names.append([n for n, _ in gm.named_modules()])
    return names, added, gm.code, str(gm), _error(lambda: gm.graph.inserting_before(lib.fx.Graph().placeholder("z")))


def test_submodule_surgery_matches_torch():
    assert _submodule_surgery(torchish) == _submodule_surgery(torch)


def _helper(x):
    return x + 1


def _varargs_and_interpreter_errors(lib):
    class M(lib.nn.Module):
        def forward(self, x, *args, **kwargs):
            return _helper(x) * 2
    tracer = lib.fx.Tracer(autowrap_functions=(_helper,))
    graph = tracer.trace(M())
    gm = lib.fx.GraphModule(tracer.root, graph)
    value = gm(lib.ones(2), 3, a=1)
    node = list(gm.graph.nodes)[1]
    interp = lib.fx.Interpreter(gm)
    missing = _error(interp.run)
    missing = (missing[0], missing[1].split("\nUse tlparse")[0])  # (PyTorch's hint about its own tool)
    return (str(gm.graph), gm.code, value.tolist(), node.prev.name, node.next.name, node.format_node(),
            sorted(u.name for u in node.users), missing)


def test_varargs_autowrap_functions_and_interpreter_errors_match_torch():
    assert _varargs_and_interpreter_errors(torchish) == _varargs_and_interpreter_errors(torch)


def _chained_patterns(lib):
    """Two-input pattern whose matches chain (one match's result feeds the next) and a two-output pattern."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            a = lib.sigmoid(x + y) * 2
            b = lib.sigmoid(a + x) * 2
            c = lib.sigmoid(b + 1) * 3
            d = lib.sigmoid(c + b)
            return d * 2 + d + a

    def pattern(p, q):
        return lib.sigmoid(p + q) * 2

    def replacement(p, q):
        return lib.nn.functional.relu(lib.sub(p, q))

    def pattern2(p):
        s = lib.sigmoid(p)
        return s, s * 2

    def replacement2(p):
        s = lib.tanh(p)
        return s, s + s
    out = []
    for pat, rep in ((pattern, replacement), (pattern2, replacement2)):
        gm = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(gm, pat, rep)
        gm.graph.lint()
        out.append(([(m.anchor.name, sorted((p.name, g.name) for p, g in m.nodes_map.items())) for m in matches],
                    gm.code, gm(lib.tensor(X), lib.tensor(X[::-1].copy())).tolist()))
    return out


def test_replace_pattern_chained_and_multi_output_matches_torch():
    got, ref = _chained_patterns(torchish), _chained_patterns(torch)
    for (g_matches, g_code, g_values), (r_matches, r_code, r_values) in zip(got, ref):
        assert (g_matches, g_code) == (r_matches, r_code)
        np.testing.assert_allclose(np.array(g_values), np.array(r_values), **F32)
