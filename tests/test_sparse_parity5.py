"""Sparse COO behaviour compared with PyTorch, continued from test_sparse_parity4: a sparse leaf's ``.grad`` has
PyTorch's layout (sparse through ``to_dense``/``torch.sparse.*``/``values()``/the sparse-to-sparse ops, dense
through ``s.sum()``/``s @ x``); ``F.relu(s)`` is sparse; the ops PyTorch has no sparse kernel for (``s.exp()``,
``s.mean()``, ``s == 0``, ``torch.where(m, s, x)``, ``F.gelu(s)``...) raise its errors; ``out=`` takes a sparse
tensor and refuses a strided one; casts, transposes, ``s.sum(dim)``, products with dense and sparse tensors,
``cat``/``stack``, ``zeros_like`` and ``sparse_mask`` give PyTorch's sparse results."""
import pytest

from oracle import run_both
from test_sparse_parity4 import _describe, _outcome, _same

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


def _sparse(lib, kind, requires_grad=False):
    """"u" uncoalesced (a duplicate at (0, 2)), "c" coalesced, "h" hybrid (1 sparse + 1 dense dim); all 2 x 3."""
    if kind == "h":
        return lib.sparse_coo_tensor([[1, 1]], [[0.1, -0.2, 0.3], [0.3, 0.4, -0.5]], (2, 3))
    s = lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [0.3, -0.4, 0.5, 0.1], (2, 3))
    s = s.coalesce() if kind == "c" else s
    return s.requires_grad_() if requires_grad else s


def _env(lib, kind):
    return {"torch": lib, "F": lib.nn.functional, "s": _sparse(lib, kind), "h": _sparse(lib, "h"),
            "d": lib.arange(1., 7.).reshape(2, 3), "w": lib.ones(3, 2),
            "t": lib.sparse_coo_tensor([[0, 0, 0], [2, 0, 2]], [2., 3., 1.], (2, 3))}


def _check(exprs, kinds="uc"):
    def fn(lib):
        return [[_outcome(lib, lambda: eval(e, _env(lib, kind))) for kind in kinds] for e in exprs]
    ref, got = run_both(fn)
    bad = [f"{e}:\n torch    {r}\n torchish {g}" for e, r, g in zip(exprs, ref, got) if not _same(r, g)]
    assert not bad, "\n".join(bad)


_GRADS = {
    "to_dense": ["s.to_dense()", "(s * 2).to_dense()", "(-s).t().to_dense()", "s.double().to_dense()",
                 "s.coalesce().to_dense()", "s.permute(1, 0).to_dense()", "(s * d).to_dense()",
                 "s.to_dense(masked_grad=False) * torch.tensor([[0., 1., 2.], [3., 0., 0.]])"],
    "sparse_namespace": ["torch.sparse.sum(s)", "torch.sparse.sum(s * 2)", "torch.sparse.sum(s, 1).to_dense()",
                         "torch.sparse.mm(s, w)", "torch.sparse.addmm(torch.ones(2, 2), s, w)",
                         "torch.sparse.softmax(s, 1).to_dense()", "s.coalesce().values()",
                         "s.abs().to_dense()", "(s ** 2).to_dense()"],
    "dense": ["s.sum()", "s @ w", "(s * 2).sum()", "s.to_dense().sum() + s.sum()", "s.unsqueeze(0).sum()",
              "s.sum(1).to_dense()", "torch.cat([s, s]).to_dense()"],
}


@pytest.mark.parametrize("group", sorted(_GRADS))
def test_sparse_leaf_gradient_layout(group):
    """The leaf's ``.grad``: PyTorch's layout, entries, coalesced flag and values (or the backward's error)."""
    def fn(lib):
        out = []
        for expr in _GRADS[group]:
            for kind in "uc":
                s = _sparse(lib, kind, requires_grad=True)
                env = {"torch": lib, "s": s, "w": lib.arange(1., 7.).reshape(3, 2),
                       "d": lib.arange(1., 7.).reshape(2, 3)}

                def grad():
                    r = eval(expr, env)
                    (r * lib.arange(1., r.numel() + 1).reshape(r.shape)).sum().backward()
                    return s.grad
                out.append((expr, kind, _outcome(lib, grad)))
        return out
    ref, got = run_both(fn)
    bad = [f"{r[0]} [{r[1]}]:\n torch    {r[2]}\n torchish {g[2]}" for r, g in zip(ref, got) if not _same(r, g)]
    assert not bad, "\n".join(bad)


def test_sparse_gradient_through_a_hook_and_accumulation():
    """A hook sees the sparse gradient; a second backward adds to the sparse ``.grad``."""
    def fn(lib):
        s = _sparse(lib, "c", requires_grad=True)
        seen = []
        s.register_hook(lambda g: seen.append(_describe(lib, g)))
        torch_sum = lib.sparse.sum
        torch_sum(s * 2).backward()
        torch_sum(s).backward()
        return seen, _describe(lib, s.grad.coalesce())
    ref, got = run_both(fn)
    assert _same(ref, got), f"\n torch    {ref}\n torchish {got}"


def test_a_dense_source_keeps_a_dense_gradient():
    """A dense tensor made sparse (``x.to_sparse()``) gets a strided gradient through the same ops."""
    def fn(lib):
        out = []
        for expr in ("(x.to_sparse() * 2).to_dense()", "x.to_sparse().abs().to_dense()",
                     "torch.sparse.mm(x.to_sparse(), torch.ones(3, 2))", "x.to_sparse().coalesce().values()"):
            x = lib.tensor([[0., 0., .4], [-.4, 0., .5]], requires_grad=True)
            eval(expr, {"torch": lib, "x": x}).sum().backward()
            out.append(_describe(lib, x.grad))
        return out
    ref, got = run_both(fn)
    assert _same(ref, got), f"\n torch    {ref}\n torchish {got}"


_FUNCTIONAL = ["F.relu(s)", "F.relu(s, inplace=True)", "F.relu_(s)", "torch.nn.ReLU()(s)", "F.tanh(s)",
               "F.sigmoid(s)", "F.gelu(s)", "F.silu(s)", "F.elu(s)", "F.leaky_relu(s)", "F.relu6(s)",
               "F.softmax(s, 1)", "F.log_softmax(s, 1)", "F.normalize(s)", "F.hardtanh(s, inplace=True)",
               "torch.nn.GELU()(s)", "torch.nn.Softmax(1)(s)"]


def test_relu_and_functional_forms():
    _check(_FUNCTIONAL)


_REFUSED = [
    "s.exp()", "torch.exp(s)", "s.cos()", "torch.cos(s)", "s.sigmoid()", "torch.sigmoid(s)", "s.log()", "s.exp_()",
    "s.reciprocal()", "s.rsqrt()", "s.erfc()", "s.mean()", "torch.mean(s, 1)", "s.max()", "s.max(0)", "torch.max(s)",
    "s.max(d)", "s.prod()", "s.amax()", "s.argmax()", "s.std()", "s.var(0)", "s.all()", "s.nonzero()",
    "s.count_nonzero()", "s.clamp(0, 1)", "s.clamp(min=d)", "torch.clamp(s, 0, 1)", "s.clip(0, 1)",
    "s == 0", "s.eq(s)", "s > 0", "d == s", "s.ne(0)", "s.isfinite()", "s.maximum(d)", "s.remainder(2)", "s % 2",
    "2 ** s", "2 / s", "d / s", "s / d", "s // d", "s.softmax(1)", "torch.softmax(s, 1)", "s.log_softmax(0)",
    "s.cumsum(0)", "s.flip(0)", "s.roll(1, 0)", "s.sort()", "s.topk(1)", "s.tril()", "torch.triu(s)", "s.trace()",
    "s.diag()", "s.where(d > 0, d)", "torch.where(d > 0, s, d)", "torch.where(d > 0, d, s)",
    "s.masked_fill(d > 0, 1.)", "s.masked_fill_(d > 0, 1.)", "s.index_fill_(0, torch.tensor([0]), 1.)",
    "torch.ones_like(s)", "torch.full_like(s, 2)", "s.new_ones(2)", "s.uniform_()", "s.isclose(s)",
    "torch.allclose(s, s)", "torch.equal(s, s)", "s.ravel()", "s.repeat(2, 1)", "s.tile(2)", "s.chunk(2)",
    "s.split(1)", "s.tolist()", "s.dot(s)", "s.lerp(d, 0.5)", "s.add(1)", "s.add(d)", "torch.add(s, d)",
    "s.sub(2)", "1 + s", "1 - s", "s.copy_(d)", "s.type_as(d)", "s.unique()", "s.logical_not()", "s & s",
    "s.float_power(0)",
]


def test_ops_without_a_sparse_kernel_raise_torchs_errors():
    _check(_REFUSED)


_OUT = ["torch.abs(s, out=d)", "torch.neg(s, out=d)", "torch.sqrt(s, out=d)", "torch.exp(s, out=d)",
        "torch.abs(s, out=torch.zeros(2, 3).to_sparse())", "torch.neg(s, out=torch.zeros(2, 3).to_sparse())",
        "torch.sqrt(s, out=torch.zeros(2, 3).to_sparse())", "torch.mul(s, 2, out=torch.zeros(2, 3).to_sparse())",
        "torch.add(s, s, out=torch.zeros(2, 3).to_sparse())"]


def test_out_argument():
    """A sparse ``out`` receives the sparse result; a strided one is PyTorch's RuntimeError (torchish wrote the
    dense value into it)."""
    _check(_OUT)


_RESULTS = [
    "s.sum(0)", "s.sum(1, keepdim=True)", "torch.sum(s, 1)", "s.sum((0, 1))", "s.sum(-1, dtype=torch.float64)",
    "h.sum(0)", "h.sum(1)", "s * d", "d * s", "s.mul(d)", "s * torch.tensor([1., 2., 3.])", "s * s", "s * t", "t * s",
    "s * t.coalesce()", "s * torch.tensor(2.)", "s ** 2", "s.floor_divide(2)", "s // 2", "s.add(s, alpha=2)",
    "torch.add(s, s)", "s.sub(s)", "torch.sub(s, t)", "d + s", "d - s", "s.bool()", "s.long()", "s.int()",
    "s.type(torch.float64)", "s.type()", "s.type_as(d.double().to_sparse())", "s.T", "s.mT", "s.adjoint()",
    "s.movedim(0, 1)", "s.t_()", "s.transpose_(0, 1)", "s.unbind(0)", "s.unbind(1)", "torch.cat([s, s])",
    "torch.cat([s, s], 1)", "torch.stack([s, s])", "torch.stack([s, s], -1)", "torch.cat([h, h], 1)",
    "torch.cat([s, d])", "torch.zeros_like(s)", "torch.zeros_like(s, dtype=torch.float64)",
    "torch.zeros_like(s, layout=torch.strided)", "torch.empty_like(h)", "s.new_zeros(2, 3)", "s.new_empty((4,))",
    "d.sparse_mask(s)", "s.sparse_mask(t)", "s.to_sparse_coo()", "s.float_power(2)", "s.crow_indices()",
]


def test_ops_with_sparse_results():
    _check(_RESULTS)
