"""Sparse COO behaviour compared with PyTorch, continued from test_sparse_parity3: the function forms
(``torch.abs(s)``, ``torch.permute(s, ...)``) and the elementwise ops PyTorch has sparse kernels for give COO results
with PyTorch's indices, values and coalesced flag; ``narrow_copy``/``index_select`` keep the entries PyTorch's
kernels keep; ``torch.sparse.mm``/``addmm``/``sum``/``softmax`` hand a sparse operand its gradient at its entries
only; a backward PyTorch has no sparse kernel for (a sparse gradient reaching ``s.unsqueeze(0)``, any reaching
``s.sqrt()``) raises its error, while one it runs passes."""
import math

import pytest

from oracle import run_both

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


def _sparse(lib, kind):
    """"u" uncoalesced (a duplicate at (0, 2)), "c" coalesced, "h" hybrid (1 sparse + 1 dense dim, row 1 twice),
    "i" int64 uncoalesced; all 2 x 3 (the kernels compiled for one serve the others)."""
    if kind == "h":
        return lib.sparse_coo_tensor([[1, 1]], [[0.1, -0.2, 0.3], [0.3, 0.4, -0.5]], (2, 3))
    values = [3, -4, 5, 1] if kind == "i" else [0.3, -0.4, 0.5, 0.1]
    s = lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], values, (2, 3))
    return s.coalesce() if kind == "c" else s


def _describe(lib, t):
    if isinstance(t, (tuple, list)):
        return [_describe(lib, x) for x in t]
    if not isinstance(t, lib.Tensor):
        return t
    if t.layout != lib.sparse_coo:
        return "dense", tuple(t.shape), str(t.dtype).split(".")[-1], t.detach().tolist()
    return ("coo", tuple(t.shape), t.sparse_dim(), t.dense_dim(), t.is_coalesced(), t._indices().tolist(),
            str(t.dtype).split(".")[-1], t._values().detach().tolist())


def _outcome(lib, fn):
    """``_describe`` of ``fn()``, or its error: type and first sentence (PyTorch's dispatcher errors go on to list
    the backends; its internal asserts name its source files)."""
    try:
        return _describe(lib, fn())
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e).split(" This could be")[0].split("  (Could")[0]


def _same(ref, got):
    """Equal, floats within a few ulps (the kernels' sin/asin... differ in the last bit), NaN equal to NaN."""
    if isinstance(ref, float) and isinstance(got, float):
        return math.isclose(ref, got, rel_tol=1e-5, abs_tol=1e-7) or math.isnan(ref) and math.isnan(got)
    if isinstance(ref, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(ref) == len(got) and all(_same(r, g) for r, g in zip(ref, got))
    return type(ref) is type(got) and ref == got


def _check(expr, kinds="uch"):
    def fn(lib):
        return [_outcome(lib, lambda: eval(expr, {"torch": lib, "s": _sparse(lib, kind)})) for kind in kinds]
    ref, got = run_both(fn)
    assert _same(ref, got), f"{expr}:\n torch    {ref}\n torchish {got}"


@pytest.mark.parametrize("expr", [
    "torch.abs(s)", "torch.absolute(s)", "torch.neg(s)", "torch.negative(s)", "torch.permute(s, (1, 0))",
    "torch.unsqueeze(s, 0)", "torch.unsqueeze(input=s, dim=-1)", "torch.select(s, 0, 1)", "torch.t(s)",
    "torch.transpose(s, 0, 1)", "torch.swapaxes(s, 0, 1)", "torch.narrow_copy(s, 0, 0, 1)",
    "torch.index_select(s, 0, torch.tensor([1, 0]))", "torch.mul(s, 2)", "torch.div(s, 2)",
    "torch.div(s, 2, rounding_mode='floor')", "torch.clone(s)", "torch.sqrt(s)", "torch.sin(s)", "torch.pow(s, 2)",
    "torch.isnan(s)", "torch.nan_to_num(s, nan=1.0)", "torch.round(s)", "torch.relu(s)"])
def test_function_forms_give_torchs_sparse_results(expr):
    _check(expr)


@pytest.mark.parametrize("expr", ["torch.abs(s)", "s.sign()", "s.ceil()", "s.frac()", "s.sqrt()", "s.pow(2.5)",
                                  "s.pow(-1)", "torch.div(s, 2, rounding_mode='floor')", "torch.sparse.softmax(s, 0)",
                                  "torch.sparse.mm(s, torch.ones(3, 2))", "s.isnan()"])
def test_integer_tensors(expr):
    _check(expr, "i")


@pytest.mark.parametrize("op", ["abs", "sgn", "sign", "asin", "arcsin", "asinh", "atan", "atanh", "ceil", "floor",
                                "round", "trunc", "fix", "frac", "erf", "erfinv", "expm1", "log1p", "rad2deg",
                                "deg2rad", "relu", "sin", "sinh", "sqrt", "tan", "tanh", "isnan", "isinf",
                                "isposinf", "isneginf", "signbit", "nan_to_num", "square"])
def test_elementwise_ops_coalesce_and_stay_sparse(op):
    _check(f"s.{op}()")


@pytest.mark.parametrize("expr", ["s.pow(-1)", "s.pow(2.5)", "s.pow(0)", "s.pow(torch.tensor(2.))",
                                  "s.round(decimals=1)", "s.sqrt_()", "s.coalesce().sqrt_()", "s.relu_()",
                                  "s.coalesce().relu_()", "s.fix_()", "s.coalesce().arcsin_()", "s.pow_(2)",
                                  "s.square_()", "s.coalesce().neg_()"])
def test_pow_and_in_place_forms(expr):
    _check(expr)


@pytest.mark.parametrize("expr", [
    "s.narrow_copy(1, 1, 2)", "s.narrow_copy(0, 1, 1)", "s.narrow_copy(-1, 1, 2)", "s.narrow_copy(0, -1, 1)",
    "s.narrow_copy(0, 0, -1)", "s.index_select(1, torch.tensor([2, 2]))", "s.index_select(1, torch.tensor([0, 1, 2]))",
    "s.index_select(0, torch.tensor([-1]))", "s.index_select(0, torch.tensor([], dtype=torch.long))",
    "s.index_select(0, torch.tensor([5]))", "s.index_select(0, torch.tensor([1.]))",
    "s.index_select(1, torch.tensor([[1]]))", "s.t()", "s.transpose(1, 1)"])
def test_narrow_copy_index_select_and_transpose(expr):
    _check(expr)


def test_index_select_order_with_fewer_entries_than_indices():
    """PyTorch's small-input kernel walks the entries outermost when there are fewer of them than indices."""
    _check("torch.sparse_coo_tensor([[2, 0]], [1., 2.], (4,)).index_select(0, torch.tensor([0, 1, 2]))", "u")


@pytest.mark.parametrize("expr", [
    "torch.sparse.mm(s, torch.ones(2, 2))", "torch.sparse.mm(s, torch.ones(3, 2, dtype=torch.float64))",
    "torch.sparse.addmm(torch.ones(2, 2), s, torch.ones(3, 2), beta=2, alpha=3)",
    "torch.sparse.addmm(torch.ones(2), s, torch.ones(3, 2))",
    "torch.sparse.addmm(torch.full((2, 2), float('nan')), s, torch.ones(3, 2), beta=0)",
    "torch.sparse.addmm(torch.ones(2, 2, dtype=torch.float64), s, torch.ones(3, 2))",
    "torch.sparse.sum(s, 1)", "torch.sparse.sum(s, (0, 1))", "torch.sparse.softmax(s, 0)",
    "torch.sparse.log_softmax(s, -1)"])
def test_sparse_namespace_values_and_errors(expr):
    _check(expr)


_GRAD_EXPRS = ["torch.sparse.mm(s, d)", "torch.sparse.addmm(m, s, d)", "torch.sparse.sum(s)",
               "torch.sparse.sum(s, 0)", "torch.sparse.sum(s, 1)", "torch.sparse.sum(s, (0, 1))",
               "torch.sparse.softmax(s, 0)", "torch.sparse.log_softmax(s, 1)", "torch.mm(s, d)", "s @ d",
               "torch.abs(s)", "s.pow(0.5).sum()", "s.relu()", "s.log1p()", "s.neg()", "torch.t(s)",
               "s.unsqueeze(0).sum()", "s[0, 2] * 1", "s.unsqueeze(0)", "s.select(0, 1)", "s[1]",
               "torch.unsqueeze(s, 0).neg()", "s.narrow_copy(1, 1, 2)", "s.index_select(1, torch.tensor([2, 0]))",
               "torch.sparse.sum(s.unsqueeze(0), 0)", "s.unsqueeze(0).abs().sum()", "s.sqrt()", "s.sin().sum()",
               "s.asin()", "s.atanh()",
               "s.unsqueeze(0).to_dense(masked_grad=False)"]


@pytest.mark.parametrize("expr", _GRAD_EXPRS)
def test_gradients_and_backward_errors(expr):
    """The output's grad_fn name and values, and the gradient reaching the dense tensor a sparse one was made from
    and a sparse leaf (PyTorch's is sparse: compared densely), or the error the backward raises."""
    def fn(lib):
        out = []
        for source in ("dense", "leaf"):
            if source == "leaf":
                s = x = lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [.3, -.4, .5, .1], (2, 3),
                                              requires_grad=True)
            else:
                x = lib.tensor([[0., 0., .4], [-.4, 0., .5]], requires_grad=True)
                s = x.to_sparse()
            env = {"torch": lib, "s": s, "d": lib.arange(1., 7.).reshape(3, 2), "m": lib.ones(2, 2)}
            r = eval(expr, env)
            name = type(r.grad_fn).__name__
            r = r.to_dense() if r.layout == lib.sparse_coo else r
            try:
                (r * lib.arange(1., r.numel() + 1).reshape(r.shape)).sum().backward()
                g = x.grad.to_dense() if x.grad.layout == lib.sparse_coo else x.grad
                out.append((name, r.tolist(), g.tolist()))
            except Exception as e:  # noqa: BLE001 - the error is the outcome
                out.append((name, type(e).__name__, str(e).split(" This could be")[0]))
        return out
    ref, got = run_both(fn)
    assert _same(ref, got), f"{expr}:\n torch    {ref}\n torchish {got}"
