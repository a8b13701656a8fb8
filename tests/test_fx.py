"""``torchish.fx`` against ``torch.fx``: the same modules traced by both give the same nodes (op, name, target as
printed), ``str(graph)``, ``gm.code``, ``print_readable()`` and ``print_tabular()`` text, and the GraphModules
compute the same values and gradients (torchish's parameters copied from torch's); ShapeProp records the same
metadata. Graph surgery (relu -> gelu, a node inserted, one erased, ``recompile()``), Interpreter and Transformer
passes, ``replace_pattern`` and the tracing errors are compared in test_fx_graph.py."""
import contextlib
import io
import re

import numpy as np
import pytest

from oracle import tol
import torchish

torch = pytest.importorskip("torch")
F32 = tol("float32")  # (the suite's float32 tolerance)


def _scaled(x, n):
    return x * n


torch.fx.wrap("_scaled")  # (each library's wrap: calls of _scaled in traced code become one node)
torchish.fx.wrap("_scaled")
torch.fx.wrap("len")  # (a builtin: len(proxy) becomes a node instead of an error)
torchish.fx.wrap("len")


def _libs():
    return (torch, torch.nn, torch.nn.functional, torch.fx), \
        (torchish, torchish.nn, torchish.nn.functional, torchish.fx)


def _modules(lib, nn, F, fx):
    """name -> (module, inputs (as numpy), concrete_args, Tracer class)."""
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))

        def forward(self, x):
            return self.net(x).softmax(-1)

    class Functional(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.ones(4, 4) * 0.5)
            self.lin = nn.Linear(4, 4)

        def forward(self, x, y):
            a = F.gelu(F.linear(x, self.w))
            b = lib.relu(a) + F.relu(a)
            c = b.view(b.shape[0], -1) * b.size(1)
            d = lib.flatten(c, 1).T[:, 0] - 1
            e = self.lin(x) + lib.cat([c, y], 1).sum(dim=1, keepdim=True)
            return d, e, -(x @ y.transpose(0, 1)), lib.tanh(e).mean()

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 2, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(2)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)) + x)

    class ParamRead(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.tensor([1.5, -0.5, 2.0]))
            self.register_buffer("shift", lib.tensor([0.1, 0.2, 0.3]))
            self.inner = nn.Linear(3, 3)

        def forward(self, x):
            return self.inner(x * self.scale + self.shift) * self.scale

    class Gate(nn.Module):  # a user module kept as a leaf by the custom tracer
        def forward(self, x):
            return x * lib.sigmoid(x)

    class WithLeaf(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = Gate()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.gate(self.lin(x)) + self.gate(x)

    class LeafTracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Gate) or super().is_leaf_module(m, qualname)

    class Concrete(nn.Module):
        def forward(self, x, flag, bias=None):
            if flag:
                x = lib.exp(x)
            if bias is not None:
                x = x + bias
            return x * 2

    class Misc(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3), nn.Tanh())])
            self.drop = nn.Dropout(0.1)
            self.register_buffer("buf", lib.ones(3))
            self.const = lib.arange(3.0)

        def forward(self, x: lib.Tensor, *, scale=2) -> lib.Tensor:
            for layer in self.layers:
                x = layer(x)
            x = F.dropout(x, p=0.2, training=self.training)
            n = x.dim() + x.size()[1]
            y = _scaled(x, len(self.layers)) + self.const + self.buf
            return self.drop(y) * x.new_ones(3) + n + x.float().sum(-1, keepdim=True).clamp(min=0.0) + \
                x.max(dim=1).values.unsqueeze(1) + scale

    class Chunks(nn.Module):
        def forward(self, x):
            a, b = x.chunk(2, dim=-1)
            c = a.to(lib.float64).to(dtype=lib.float32, device=lib.device("cpu"))
            d = lib.where(c > 0, c, lib.zeros_like(c))
            e = F.softmax(d, dim=-1) + lib.arange(2)[None]
            f = lib.stack([e, b], 0).permute(1, 0, 2).reshape(-1)
            return {"out": f, "masked": e.masked_fill(e > 0.6, float("-inf")).exp()}

    x4 = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    x3 = np.linspace(-2, 1, 6, dtype=np.float32).reshape(2, 3)
    return {
        "mlp": (MLP(), (x4,), None, fx.Tracer),
        "functional": (Functional(), (x4, x4[::-1].copy()), None, fx.Tracer),
        "residual": (Residual(), (np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 2, 4, 4),), None, fx.Tracer),
        "param_read": (ParamRead(), (x3,), None, fx.Tracer),
        "leaf": (WithLeaf(), (x3,), None, LeafTracer),
        "concrete": (Concrete(), (x3, True), {"flag": True, "bias": None}, fx.Tracer),
        "misc": (Misc().eval(), (x3,), None, fx.Tracer),
        "chunks": (Chunks(), (x4,), None, fx.Tracer),
    }


def _trace(lib_tuple, name):
    lib, nn, F, fx = lib_tuple
    module, inputs, concrete, tracer_cls = _modules(lib, nn, F, fx)[name]
    graph = tracer_cls().trace(module, concrete_args=concrete)
    return module, fx.GraphModule(module, graph, type(module).__name__), inputs


NAMES = ["mlp", "functional", "residual", "param_read", "leaf", "concrete", "misc", "chunks"]


@pytest.fixture(scope="module")
def traced():
    ref_lib, got_lib = _libs()
    out = {}
    for name in NAMES:
        ref_mod, ref_gm, inputs = _trace(ref_lib, name)
        got_mod, got_gm, _ = _trace(got_lib, name)
        with torchish.no_grad():
            for key, value in ref_mod.state_dict().items():
                got_mod.state_dict()[key].copy_(torchish.tensor(value.detach().numpy()))
        out[name] = (ref_gm, got_gm, inputs)
    return out


def _printed(fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()


@pytest.mark.parametrize("name", NAMES)
def test_graph_text_and_code_match_torch(traced, name):
    ref, got, _ = traced[name]
    assert [(n.op, n.name) for n in got.graph.nodes] == [(n.op, n.name) for n in ref.graph.nodes]
    assert str(got.graph) == str(ref.graph)
    assert got.code == ref.code
    assert _printed(got.print_readable) == _printed(ref.print_readable)
    assert sorted(got.state_dict()) == sorted(ref.state_dict())


def _table(gm):
    """print_tabular's text with the call_function targets' reprs (addresses, builtin vs Python function) cut."""
    text = _printed(gm.graph.print_tabular)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("---"))
    return re.sub(r"<(built-in|function|method-wrapper)[^>]*>", "<fn>", text)


@pytest.mark.parametrize("name", ["functional", "residual"])
def test_print_tabular_matches_torch(traced, name):
    ref, got, _ = traced[name]
    ref_rows = [line.split() for line in _table(ref).splitlines()]
    got_rows = [line.split() for line in _table(got).splitlines()]
    assert [r[:2] for r in got_rows] == [r[:2] for r in ref_rows]
    assert _table(got).replace(" ", "") == _table(ref).replace(" ", "")


@pytest.mark.parametrize("name", NAMES)
def test_outputs_and_gradients_match_torch(traced, name):
    ref, got, inputs = traced[name]
    ref_in = [torch.tensor(a, requires_grad=True) for a in inputs if isinstance(a, np.ndarray)]
    got_in = [torchish.tensor(a, requires_grad=True) for a in inputs if isinstance(a, np.ndarray)]
    extra = [a for a in inputs if not isinstance(a, np.ndarray)]
    ref_out, got_out = ref(*ref_in, *extra), got(*got_in, *extra)
    ref_flat = list(ref_out.values() if isinstance(ref_out, dict) else ref_out) \
        if isinstance(ref_out, (tuple, dict)) else [ref_out]
    got_flat = list(got_out.values() if isinstance(got_out, dict) else got_out) \
        if isinstance(got_out, (tuple, dict)) else [got_out]
    assert len(got_flat) == len(ref_flat)
    for r, g in zip(ref_flat, got_flat):
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), **F32)
    sum(o.float().sum() for o in ref_flat).backward()
    sum(o.float().sum() for o in got_flat).backward()
    for r, g in zip(ref_in, got_in):
        np.testing.assert_allclose(g.grad.numpy(), r.grad.numpy(), **F32)
    ref_params, got_params = dict(ref.named_parameters()), dict(got.named_parameters())
    assert sorted(got_params) == sorted(ref_params)
    for key, r in ref_params.items():
        np.testing.assert_allclose(got_params[key].grad.numpy(), r.grad.numpy(), **F32)


@pytest.mark.parametrize("name", ["functional", "residual", "misc", "chunks"])
def test_shape_prop_matches_torch(traced, name):
    from torch.fx.passes.shape_prop import ShapeProp as RefShapeProp
    from torchish.fx.passes.shape_prop import ShapeProp, TensorMetadata
    ref, got, inputs = traced[name]
    RefShapeProp(ref).propagate(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs])
    ShapeProp(got).propagate(*[torchish.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs])
    assert TensorMetadata._fields == ("shape", "dtype", "requires_grad", "stride", "memory_format",
                                      "is_quantized", "qparams")

    def summary(meta):
        if isinstance(meta, tuple) and hasattr(meta, "_fields"):
            return (tuple(meta.shape), str(meta.dtype).split(".")[-1], meta.requires_grad, tuple(meta.stride),
                    str(meta.memory_format).split(".")[-1], meta.is_quantized, meta.qparams)
        if isinstance(meta, (tuple, list)):
            return type(meta).__name__, [summary(m) for m in meta]
        if isinstance(meta, dict):
            return {k: summary(v) for k, v in meta.items()}
        return meta
    for r, g in zip(ref.graph.nodes, got.graph.nodes):
        assert ("tensor_meta" in g.meta) == ("tensor_meta" in r.meta), g.name
        if "tensor_meta" in r.meta:
            assert summary(g.meta["tensor_meta"]) == summary(r.meta["tensor_meta"]), g.name


def test_wrapped_builtin_len_matches_torch():
    def f(lib):
        def body(x):
            return x + len(x)
        gm = lib.fx.symbolic_trace(body)
        return gm.code, gm(lib.ones(3)).tolist()
    assert f(torchish) == f(torch)


def test_symbolic_trace_of_functions_and_public_names():
    def f(x, y=3):
        return torchish.sin(x) + y

    def f_ref(x, y=3):
        return torch.sin(x) + y
    assert torchish.fx.symbolic_trace(f).code == torch.fx.symbolic_trace(f_ref).code
    assert set(torchish.fx.__all__) == set(torch.fx.__all__)
    from torchish.fx.node import map_aggregate
    assert map_aggregate((1, [2, {"a": 3}]), lambda v: v * 2) == (2, [4, {"a": 6}])


@pytest.mark.parametrize("space", ["torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"])
def test_qualified_names_of_public_functions_match_torch(space):
    """The target names generated code writes: torchish's function -> the name torch.fx gives PyTorch's."""
    from torch.fx.node import _get_qualified_name
    from torchish import _overridable as tables
    from torchish.fx._names import qualified_name
    names = {"torch": tables.TORCH, "torch.nn.functional": tables.FUNCTIONAL + tables.PYTHON_FUNCTIONAL_UNLISTED,
             "torch.linalg": tables.LINALG,
             "torch.fft": tables.FFT, "torch.special": tables.SPECIAL}[space]
    ref_space = eval(space, {"torch": torch})
    got_space = eval(space.replace("torch", "torchish", 1), {"torchish": torchish})
    mismatched = []
    for name in names:
        ref_fn, got_fn = getattr(ref_space, name, None), getattr(got_space, name, None)
        if ref_fn is None or got_fn is None or isinstance(got_fn, type) or isinstance(ref_fn, type):
            continue
        try:
            expected = _get_qualified_name(ref_fn)
        except Exception:  # noqa: BLE001  (torch cannot name a few of its own)
            continue
        if qualified_name(got_fn) != expected:
            mismatched.append((name, qualified_name(got_fn), expected))
    assert mismatched == []


@pytest.mark.parametrize("name", ["functional", "residual", "param_read", "misc", "chunks"])
def test_identity_transformer_and_interpreter_match_torch(traced, name):
    """Transformer(gm).transform() rewrites each traced module into the same code as torch's; Interpreter(gm).run
    gives the module's values."""
    ref, got, inputs = traced[name]
    assert torchish.fx.Transformer(got).transform().code == torch.fx.Transformer(ref).transform().code
    args = [torchish.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
    direct, interpreted = got(*args), torchish.fx.Interpreter(got).run(*args)
    flat = list(direct.values() if isinstance(direct, dict) else direct) if isinstance(direct, (tuple, dict)) \
        else [direct]
    again = list(interpreted.values() if isinstance(interpreted, dict) else interpreted) \
        if isinstance(interpreted, (tuple, dict)) else [interpreted]
    for d, i in zip(flat, again):
        np.testing.assert_array_equal(i.detach().numpy(), d.detach().numpy())
