"""Sparse COO behaviour compared with PyTorch, continued from test_sparse_parity5: the product of two COO matrices
is COO (``@``, ``torch.mm``, ``torch.sparse.mm``) with PyTorch's sparse gradients; the functions and modules
PyTorch refuses or keeps sparse (``nn.Sigmoid``, ``torch.einsum``, ``tensordot``, ``cdist``, ``kron``,
``linalg.det``/``svd``, ``copy_`` between layouts); ``sparse_resize_``; stack's and cat's sparse input gradients."""
import pytest

from oracle import run_both
from test_sparse_parity4 import _outcome, _same

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


def _sparse(lib, kind, requires_grad=False):
    """"u" uncoalesced (a duplicate at (0, 2)), "c" coalesced; 2 x 3."""
    s = lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [0.3, -0.4, 0.5, 0.1], (2, 3))
    s = s.coalesce() if kind == "c" else s
    return s.requires_grad_() if requires_grad else s


def _env(lib, kind, requires_grad=False):
    return {"torch": lib, "F": lib.nn.functional, "nn": lib.nn, "s": _sparse(lib, kind, requires_grad),
            "s2": lib.sparse_coo_tensor([[0, 2], [1, 0]], [2., 3.], (3, 2), requires_grad=requires_grad),
            "sq": lib.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2)),
            "h": lib.sparse_coo_tensor([[1, 1]], [[0.1, -0.2], [0.3, 0.4]], (3, 2)),
            "d": lib.arange(1., 7.).reshape(2, 3), "w": lib.ones(3, 2)}


def _check(exprs, kinds="uc"):
    def fn(lib):
        return [[_outcome(lib, lambda: eval(e, _env(lib, kind))) for kind in kinds] for e in exprs]
    ref, got = run_both(fn)
    bad = [f"{e}:\n torch    {r}\n torchish {g}" for e, r, g in zip(exprs, ref, got) if not _same(r, g)]
    assert not bad, "\n".join(bad)


def test_product_of_two_coo_matrices_is_coo():
    _check(["s @ s2", "torch.sparse.mm(s, s2)", "torch.mm(s, s2)", "torch.matmul(s, s2)", "s.mm(s2)",
            "(s @ s2).is_coalesced()", "torch.sparse.mm(s, s2.t())", "s @ h", "torch.sparse.mm(s, s2.double())",
            "torch.sparse.mm(s.long(), s2.long())", "s @ w", "torch.sparse.mm(s, w)"])


@pytest.mark.parametrize("expr", ["torch.sparse.mm(s, s2)", "s @ s2"])
def test_product_of_two_coo_matrices_gradients(expr):
    """Both inputs' gradients: PyTorch's layout, entries and values, and the result's grad_fn."""
    def fn(lib):
        out = []
        for kind in "uc":
            env = _env(lib, kind, requires_grad=True)
            r = eval(expr, env)
            (r.to_dense() * lib.tensor([[1., 2.], [3., 4.]])).sum().backward()
            out.append((type(r.grad_fn).__name__, _outcome(lib, lambda: env["s"].grad),
                        _outcome(lib, lambda: env["s2"].grad)))
        return out
    ref, got = run_both(fn)
    assert _same(ref, got), f"\n torch    {ref}\n torchish {got}"


@pytest.mark.parametrize("exprs", [
    ["nn.Sigmoid()(s)", "nn.Tanh()(s)", "nn.ReLU()(s)", "nn.GELU()(s)", "nn.Softmax(1)(s)"],
    ["d.mul(s)", "d.multiply(s)", "torch.mul(d, s)", "torch.multiply(d, s)", "torch.mul(2, s)", "torch.mul(s, d)",
     "d * s", "str(d.mul(d).layout)", "str(torch.mul(d, d).layout)"],
    ["torch.einsum('ij,jk->ik', s, w)", "torch.einsum('ij,jk->ik', d, s2)", "torch.einsum('ij,jk', s, s2)",
     "torch.einsum('ij,ij->', s, d)", "torch.einsum('ij,jk->ik', [s, w])", "torch.einsum('ij->ji', s)"],
    ["F.embedding(torch.tensor([0, 1]), s)", "F.embedding(torch.tensor([1, 1]), s)",
     "F.embedding(torch.tensor([[0], [1]]), s)", "F.embedding(torch.tensor([0, 2]), h)",
     "F.embedding(torch.tensor([0, 1]), s, padding_idx=0)", "torch.embedding(s, torch.tensor([1, 0]))"],
], ids=["modules", "mul", "einsum", "embedding"])
def test_functions_and_modules_on_a_coo_input(exprs):
    """PyTorch's COO result or its error, through the module (``nn.Sigmoid`` calls ``torch.sigmoid``), the
    dense tensor's method (``d.mul(s)``) and the functions with a COO operand anywhere."""
    _check(exprs)


def test_copy_between_layouts():
    _check(["torch.ones(2, 3).copy_(s)", "torch.ones(2, 3).double().copy_(s)", "s.copy_(torch.ones(2, 3))",
            "s.clone().copy_(s2.t())", "torch.ones(2, 3).copy_(d)"])


def test_functions_without_a_sparse_kernel_raise():
    _check(["torch.tensordot(s, w, 1)", "torch.tensordot(d, s2, 1)", "torch.tensordot(s, w, ([1], [0]))",
            "torch.cdist(s, d)", "torch.cdist(d, s)", "torch.kron(s, d)", "torch.kron(d, s)", "torch.linalg.det(sq)",
            "torch.det(sq)", "torch.linalg.svd(sq)", "torch.svd(sq)", "torch.linalg.slogdet(sq)",
            "torch.linalg.inv(sq)", "torch.linalg.svdvals(sq)", "torch.linalg.eigvals(sq)", "torch.linalg.qr(sq)",
            "torch.linalg.norm(sq)", "torch.linalg.matrix_rank(sq)", "torch.linalg.solve(sq, torch.ones(2, 2))",
            "torch.linalg.det(torch.eye(2))"], kinds="c")


def test_unbound_tensor_methods_act_as_bound():
    """``torch.Tensor.exp(s)`` is ``s.exp()`` (the base class's function with a COO ``self``)."""
    _check(["torch.Tensor.exp(s)", "torch.Tensor.abs(s)", "torch.Tensor.sum(s, 0)", "torch.Tensor.mean(s)",
            "torch.Tensor.t(s)", "torch.Tensor.mul(s, 2)", "torch.Tensor.add(s, s)", "torch.Tensor.relu(s)",
            "torch.Tensor.view(s, -1)", "torch.Tensor.double(s)",
            "torch.Tensor.sin(s)", "torch.Tensor.permute(s, 1, 0)", "torch.Tensor.reshape(s, -1)",
            "torch.Tensor.coalesce(s)", "torch.Tensor.to_dense(s)", "torch.Tensor.clone(s)"])


_RESIZE = ["s.sparse_resize_((3, 4), 2, 0)", "s.sparse_resize_((2, 3), 2, 0)", "s.sparse_resize_([3, 4], 2, 0)",
           "(s.sparse_resize_((3, 4), 2, 0), s.to_dense())[1]", "s.sparse_resize_((3, 4), 2, 0) is s",
           "s.sparse_resize_((1, 3), 2, 0)", "s.sparse_resize_((2, 2), 2, 0)", "s.sparse_resize_((3, 4, 2), 2, 1)",
           "s.sparse_resize_((3, 4, 2), 3, 0)", "s.sparse_resize_((3, 4), 1, 1)", "s.sparse_resize_((3, 4), 2, 1)",
           "h.sparse_resize_((4, 2), 1, 1)", "h.sparse_resize_((4, 1), 1, 1)",
           "torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (2, 3))"
           ".sparse_resize_((1, 1, 1), 1, 2)",
           "s.sparse_resize_and_clear_((3, 4), 2, 0)", "s.sparse_resize_and_clear_((1, 1), 2, 0)",
           "s.sparse_resize_and_clear_((3, 4, 5), 1, 2)", "torch.ones(2, 3).sparse_resize_((3, 4), 2, 0)",
           "torch.ones(2, 3).sparse_resize_and_clear_((3, 4), 2, 0)",
           "s.requires_grad_().sparse_resize_((3, 4), 2, 0)"]


def test_sparse_resize():
    """The size grows with the entries kept; PyTorch's errors for fewer/more dims or a smaller size with entries;
    ``sparse_resize_and_clear_`` drops them."""
    _check(_RESIZE)


@pytest.mark.parametrize("expr", [
    "torch.stack([a, b]).to_dense()", "torch.stack([a, b], 1).to_dense()", "torch.stack([a, b], 2).to_dense()",
    "torch.stack([a, a]).to_dense()", "torch.stack([a, b.detach()]).to_dense()",
    "torch.sparse.sum(torch.stack([a, b]))",
    "torch.stack([a, b]).sum()", "torch.cat([a, b]).to_dense()", "torch.sparse.sum(torch.cat([a, b]))",
    "torch.cat([a, b], 1).sum()"])
def test_stack_and_cat_input_gradients(expr):
    """A sparse gradient reaching a stack reaches its COO inputs sparse (a dense one dense); a cat's backward of a
    sparse gradient is PyTorch's error."""
    def fn(lib):
        def grads():
            a = _sparse(lib, "u", requires_grad=True)
            b = lib.sparse_coo_tensor([[1, 0], [1, 0]], [2., 3.], (2, 3)).coalesce().requires_grad_()
            r = eval(expr, {"torch": lib, "a": a, "b": b})
            (r * lib.arange(1., r.numel() + 1).reshape(r.shape)).sum().backward()
            return [type(r.grad_fn).__name__, a.grad, b.grad]
        return _outcome(lib, grads)
    ref, got = run_both(fn)
    assert _same(ref, got), f"{expr}:\n torch    {ref}\n torchish {got}"


# the sparse-aware functions in a fresh process: untouched until the first COO tensor, then the same objects with
# new code; ``__torch_function__`` dispatch turned on before (its check outside the sparse one) and off after
_FRESH = r"""
import torchish as torch
from torchish import _subclass
from torchish.nn import functional as F
exp, relu, cat, det, tmul = torch.exp, F.relu, torch.cat, torch.linalg.det, torch.Tensor.mul
codes = [f.__code__ for f in (exp, relu, cat, det, tmul)]
assert [f.__code__ for f in (exp, relu, cat, det, tmul)] == codes  # (dense calls run the functions' own code)
seen = []

class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})

x = torch.ones(2, 2).as_subclass(Logged)
torch.exp(x)
s = torch.tensor([[0., 2.], [3., 0.]]).to_sparse()  # (dispatch on: put back, the sparse check, dispatch again)
assert (torch.exp, F.relu, torch.cat, torch.linalg.det, torch.Tensor.mul) == (exp, relu, cat, det, tmul)
assert all(f.__code__ is not c for f, c in zip((exp, relu, cat, det, tmul), codes))
torch.exp(x), F.relu(x), torch.cat([x, x])
assert seen[0] is exp and seen[1] is exp and seen[2] is relu and seen[3] is cat, seen
assert type(torch.exp(x)) is Logged and torch.abs(s).layout == torch.sparse_coo
assert F.relu(s).layout == torch.sparse_coo and torch.cat([s, s]).layout == torch.sparse_coo
for call in (lambda: exp(s), lambda: det(s)):
    try:
        call()
        raise AssertionError("no error")
    except NotImplementedError:
        pass
_subclass.deactivate()  # (dispatch off: the sparse check stays)
assert torch.abs(s).layout == torch.sparse_coo and torch.exp(torch.zeros(1)).tolist() == [1.0]
assert torch.ones(2).mul(s[0]).layout == torch.sparse_coo and torch.Tensor.mul(s, 2).layout == torch.sparse_coo
print("ok")
"""


def test_sparse_aware_functions_are_swapped_in_place_and_compose_with_torch_function():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def test_subclass_after_sparse_dispatches_and_sparse_stays():
    """In this process COO tensors exist already: a subclass made now turns dispatch on over the sparse-aware code
    (``func`` is the function the program called) and off again without taking the sparse forms away."""
    import torchish
    from torchish import _subclass
    s = torchish.tensor([[0., 2.], [3., 0.]]).to_sparse()
    seen = []

    class Logged(torchish.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = torchish.ones(2).as_subclass(Logged)
    assert type(torchish.abs(x)) is Logged and seen[0] is torchish.abs
    assert torchish.abs(s).layout == torchish.sparse_coo
    with pytest.raises(NotImplementedError, match="aten::exp"):
        torchish.exp(s)
    _subclass.deactivate()
    assert torchish.abs(s).layout == torchish.sparse_coo
    with pytest.raises(NotImplementedError, match="aten::exp"):
        torchish.Tensor.exp(s)


def test_warnings_of_swapped_functions_point_at_the_callers_line():
    """Once a COO tensor has swapped the sparse check into ``torch.var`` and ``F.softmax``, the warnings they raise
    for their caller (``stacklevel``) still name this file, not the generated check's frame."""
    import warnings

    import torchish
    torchish.sparse_coo_tensor([[0]], [1.0], (2,))  # (makes the functions sparse-aware, if nothing did before)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torchish.var(torchish.tensor([1.0]))
        torchish.std(torchish.tensor([1.0]), 0)
        torchish.nn.functional.softmax(torchish.ones(2, 3))
    assert len(caught) == 3
    assert {w.filename for w in caught} == {__file__}, [(w.filename, str(w.message)[:40]) for w in caught]
