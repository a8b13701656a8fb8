"""The ``grad_fn`` names PyTorch shows for linear-algebra calls (``type(out.grad_fn).__name__`` of every tensor
output), with their values and gradients: composites named after PyTorch's top node (cond's squeeze or nan_to_num,
vander's cat, matrix_norm's permute back, lstsq's residuals), ops PyTorch records as one node (lu_unpack's L and
U, triangular_solve's copy of A, block_diag), reshape's ReshapeAliasBackward0 for a non-contiguous input (tensorinv),
vecdot of two vectors as vdot; and tensordot's size-1 contracted dims, which PyTorch broadcasts (the cases a survey
of PyTorch's OpInfo samples found differing)."""
import math
import re

import numpy as np
import pytest

import torchish

from oracle import arr, check, check_raises, run_both

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")


def _names(res):
    """The grad_fn class name of every tensor in ``res`` (None where it has none)."""
    if isinstance(res, (tuple, list)):
        return [n for r in res for n in _names(r)]
    return [type(res.grad_fn).__name__ if res.grad_fn is not None else None]


def _sq(n=3, seed=0, batch=()):
    """Well-conditioned square matrices (float64)."""
    return arr(*batch, n, n, seed=seed, dtype=np.float64) + 3 * np.eye(n)


def _lu_unpack(lib, a, **kw):
    return lib.lu_unpack(*lib.linalg.lu_factor(a), **kw)


INF = math.inf
# name -> (fn(lib, *tensors), numpy inputs)
CASES = {
    "vecdot 1-d": (lambda L, x, y: L.linalg.vecdot(x, y), [arr(3, dtype=np.float64), arr(3, seed=1, dtype=np.float64)]),
    "cond": (lambda L, a: L.linalg.cond(a), [_sq()]),
    "cond -2 nuc": (lambda L, a: [L.linalg.cond(a, -2), L.linalg.cond(a, "nuc")], [_sq(batch=(2,))]),
    "vander N batched": (lambda L, x: L.linalg.vander(x, N=4), [arr(2, 3, dtype=np.float64)]),
    "vander 0-d": (lambda L, x: L.linalg.vander(x, N=3), [np.array(0.5)]),
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a, ind=1), [_sq(4).reshape(4, 2, 2)]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b), [arr(4, 2, dtype=np.float64), arr(4, 3, seed=1, dtype=np.float64)]),
    "lstsq gelsd vector": (lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd"),
                           [arr(4, 2, dtype=np.float64), arr(4, seed=1, dtype=np.float64)]),
    "lu_unpack tall batched": (_lu_unpack, [arr(2, 3, 2, dtype=np.float64)]),
    "triangular_solve lower T batched": (
        lambda L, b, a: L.triangular_solve(b, a, upper=False, transpose=True, unitriangular=True),
        [arr(2, 3, 2, dtype=np.float64), _sq(seed=1)]),
    "block_diag mixed dtypes": (lambda L, a, b, c: L.block_diag(a, b, c),
                                [arr(2, 2, dtype=np.float32), arr(1, 3, seed=1, dtype=np.float64), np.array(2.0)]),
    "matrix_norm keepdim dims (2, 0)": (  # (the SVD-based ords, and one induced norm)
        lambda L, a: [L.linalg.matrix_norm(a, o, dim=(2, 0), keepdim=True) for o in ("nuc", 2, -2, -1)],
        [_sq(batch=(2,))]),
}


@pytest.mark.parametrize("case", CASES)
def test_names_values_and_grads_match_torch(case):
    fn, inputs = CASES[case]
    ref, got = check(fn, inputs)  # (every float input requires grad)
    assert _names(got) == _names(ref)


@pytest.mark.parametrize("p", ["fro", 1, -INF])
def test_cond_backward_raises_as_pytorchs(p):
    """PyTorch's cond fills the inverse in place (masked_fill_) after inv_ex saved it: backward raises. The values
    and the top node (nan_to_num) are PyTorch's."""
    ref, got = run_both(lambda L: L.linalg.cond(L.tensor(_sq(batch=(2,))).requires_grad_(), p))
    assert _names(got) == _names(ref)
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy())
    check_raises(lambda L: L.linalg.cond(L.tensor(_sq(batch=(2,))).requires_grad_(), p).backward())


def test_one_node_for_the_outputs_pytorch_records_together():
    """lu_unpack's L and U share one node (its empty ones too), and so do triangular_solve's solution and copy of A:
    a loss on the copy alone gives ``b`` a (zero) gradient, and the copy requires grad when only ``b`` does;
    block_diag's node lists every block."""
    def run(lib):
        lu, piv = lib.linalg.lu_factor(lib.tensor(_sq()))
        lu.requires_grad_()
        _, L, U = lib.lu_unpack(lu, piv)
        a, b = lib.tensor(_sq(seed=1)).requires_grad_(), lib.tensor(arr(3, 2, dtype=np.float64)).requires_grad_()
        X, M = lib.triangular_solve(b, a)
        (M * M).sum().backward()
        _, M2 = lib.triangular_solve(b, a.detach())
        nexts = [f is not None for f, _ in lib.block_diag(lib.ones(2).requires_grad_(), lib.ones(1)).grad_fn
                 .next_functions]
        empty = lib.lu_unpack(lu, piv, unpack_data=False)  # (empty L and U, still from the node)
        return (L.grad_fn is U.grad_fn, X.grad_fn is M.grad_fn, a.grad, b.grad, M2.requires_grad, nexts,
                _names([L, U, X, M, M2]), _names(empty), [tuple(t.shape) for t in empty])
    ref, got = run_both(run)
    assert got[:2] == ref[:2] == (True, True)
    np.testing.assert_allclose(got[2].numpy(), ref[2].numpy())
    np.testing.assert_array_equal(got[3].numpy(), ref[3].numpy())
    assert got[4:] == ref[4:]


def test_reshape_of_a_non_contiguous_view_is_reshape_alias():
    """PyTorch's reshape views a contiguous tensor (ViewBackward0) and aliases any other it can view
    (ReshapeAliasBackward0); what it cannot view it copies (UnsafeViewBackward0)."""
    makes = (lambda x: x.t(), lambda x: x[:, :1], lambda x: x[:1].expand(3, 4), lambda x: x, lambda x: x[:2])

    def run(lib):
        base = lib.tensor(arr(4, 4)).requires_grad_()
        outs = []
        for make in makes:
            x = make(base * 1)
            outs += [x.reshape(-1), x.reshape(x.shape[0], 1, -1)]
        sum(o.sum() for o in outs).backward()
        return _names(outs), base.grad
    ref, got = run_both(run)
    assert got[0] == ref[0]
    np.testing.assert_array_equal(got[1].numpy(), ref[1].numpy())


TENSORDOT = [
    ((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])),
    ((1, 3), (2, 3), ([0], [0])),
    ((2, 3), (1, 3), ([0], [0])),
    ((1, 1), (2, 1), ([0, 1], [0, 1])),
    ((3, 2), (1, 2), 1),
    ((2, 2), (2, 1), ([0, 1], [1, 0])),
    ((0, 3), (1, 2), ([0], [0])),
    ((1, 2), (2, 1, 2), ([0, -1], [0, 2])),
]


@pytest.mark.parametrize("sa, sb, dims", TENSORDOT)
def test_tensordot_broadcasts_size_one_contracted_dims(sa, sb, dims):
    check(lambda L, a, b: L.tensordot(a, b, dims=dims),
          [arr(*sa, dtype=np.float64), arr(*sb, seed=1, dtype=np.float64)])


@pytest.mark.parametrize("dtype", ["int32", "float16", "complex64"])
def test_tensordot_broadcast_keeps_the_dtype(dtype):
    def run(L):
        dt = getattr(L, dtype)
        return L.tensordot(L.ones(1, 3, dtype=dt), L.ones(2, 3, dtype=dt), dims=([0], [0]))
    ref, got = run_both(run)
    assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@pytest.mark.parametrize("sa, sb, dims, dtype", [
    ((2, 3), (3, 3), ([0], [0]), "float32"),      # mismatched sizes, neither 1
    ((1, 3), (2, 4), ([0, 1], [0, 1]), "float32"),
    ((2, 2), (2, 2), ([0, 1], [1, 1]), "float32"),  # a dim listed twice
    ((1, 2), (2, 2), ([0, 0], [1, 0]), "float32"),
    ((2, 2), (1, 2), ([0, -2], [0, 1]), "float32"),
    ((2, 3), (2, 3), ([0, 5], [0, 1]), "float32"),  # out of range: IndexError
    ((1, 2), (2, 1), 1, "bool"),                  # PyTorch's dot / mm kernels have no bool version
    ((1, 3), (2, 3), ([0], [0]), "bool"),
], ids=["sizes", "sizes2", "repeated-b", "repeated-a", "repeated-wrapped", "range", "bool-dot", "bool-mm"])
def test_tensordot_refusals(sa, sb, dims, dtype):
    check_raises(lambda L: L.tensordot(L.ones(sa, dtype=getattr(L, dtype)), L.ones(sb, dtype=getattr(L, dtype)),
                                       dims=dims))


def test_cond_edge_cases():
    """Empty matrices have condition number 0 (no node); singular ones inf; the order is checked first."""
    def run(lib):
        out = [lib.linalg.cond(lib.zeros(shape, requires_grad=True), p)
               for shape, p in (((0, 0), None), ((2, 0, 0), "fro"), ((3, 0), 1))]
        out += [lib.linalg.cond(lib.ones(2, 2), p) for p in ("fro", INF)]
        return out, _names(out)
    ref, got = run_both(run)
    assert got[1] == ref[1]
    for r, g in zip(ref[0], got[0]):
        assert tuple(g.shape) == tuple(r.shape)
        np.testing.assert_array_equal(g.numpy(), r.numpy())
    for a, p in (((2, 2), 3), ((2, 2), "abc"), ((3,), 2), ((2, 3), "fro"), ((2, 3), 1)):
        check_raises(lambda L: L.linalg.cond(L.ones(a), p))


def test_vecdot_of_vectors_ignores_dim():
    ref, got = run_both(lambda L: [L.linalg.vecdot(L.ones(3), L.arange(3.0), dim=d).item() for d in (0, 1, -2, 5)])
    assert got == ref


@pytest.mark.parametrize("sa, sb", [((2, 4, 2), (4,)), ((4, 2), ()), ((4, 2), (3,)), ((4, 2), (2, 3, 4, 1))])
def test_lstsq_refuses_operands_as_pytorch(sa, sb):
    """A right-hand side of more dims than A, or two fewer, is refused before its sizes are read."""
    err = check_raises(lambda L: L.linalg.lstsq(L.ones(sa), L.ones(sb)))
    with pytest.raises(RuntimeError, match=re.escape(str(err))):
        torchish.linalg.lstsq(torchish.ones(sa), torchish.ones(sb))
