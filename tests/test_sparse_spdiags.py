"""``torch.sparse.spdiags`` against PyTorch: the entries (order, values, coalesced flag), the dense matrix, the CSR
layout, the argument errors in PyTorch's order, and the backward PyTorch does not implement."""
import pytest

from oracle import run_both, same, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR")


def _diags(t):
    return t.arange(1., 13.).view(3, 4)


BUILDS = {
    "square_band": lambda t: t.sparse.spdiags(t.stack([t.ones(4), -2 * t.ones(4), t.ones(4)]),
                                              t.tensor([-1, 0, 1]), (4, 4)),
    "offsets_unsorted": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, -1, 2]), (4, 5)),
    "clipped_to_shape": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, -1, 2]), (3, 3)),
    "vector_and_scalar_offset": lambda t: t.sparse.spdiags(t.arange(1., 5.), t.tensor(1), [4, 4]),
    "integer_values": lambda t: t.sparse.spdiags(t.arange(6).view(2, 3), t.tensor([1, -1]), (3, 3)),
    "one_entry": lambda t: t.sparse.spdiags(t.ones(1, 1), t.tensor([0]), (4, 4)),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_entries_and_values(name):
    def fn(t):
        S = BUILDS[name](t)
        return S._indices(), S._values(), S.is_coalesced(), S._nnz(), S.to_dense(), str(S.layout)
    same(fn)


def test_csr_layout_and_use_as_an_operator():
    def fn(t):
        C = t.sparse.spdiags(_diags(t), t.tensor([0, -1, 2]), (4, 5), layout=t.sparse_csr)
        A = BUILDS["square_band"](t)
        return (C.crow_indices(), C.col_indices(), C.values(), str(C.layout), A @ t.arange(4.),
                t.sparse.mm(A, t.ones(4, 2)), A.coalesce().indices())
    same(fn)


ERRORS = {
    "offsets_list": lambda t: t.sparse.spdiags(_diags(t), [0, 1, 2], (4, 4)),
    "diagonals_3d": lambda t: t.sparse.spdiags(t.ones(1, 3, 4), t.tensor([0, 1, 2]), (4, 4)),
    "shape_3d": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, 1, 2]), (4, 4, 4)),
    "shape_int": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, 1, 2]), 4),
    "offsets_2d": lambda t: t.sparse.spdiags(_diags(t), t.tensor([[0, 1, 2]]), (4, 4)),
    "count": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, 1]), (4, 4)),
    "strided_layout": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, 1, 2]), (4, 4), t.strided),
    "int32_offsets": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, 1, 2]).int(), (4, 4)),
    "float_offsets": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0., 1, 2]), (4, 4)),
    "duplicate_offsets": lambda t: t.sparse.spdiags(_diags(t), t.tensor([0, 0, 1]), (4, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    same_error(ERRORS[name])


def test_requires_grad_but_backward_is_not_implemented():
    def fn(t):
        d = _diags(t).requires_grad_()
        S = t.sparse.spdiags(d, t.tensor([0, -1, 2]), (4, 5))
        with t.no_grad():
            plain = t.sparse.spdiags(d, t.tensor([0, -1, 2]), (4, 5))
        return S.requires_grad, type(S.grad_fn).__name__, S._values().requires_grad, plain.requires_grad
    same(fn)
    ref, got = run_both(_backward_message)
    assert ref == "derivative for aten::_spdiags is not implemented" and got == ref


def _backward_message(t):
    S = t.sparse.spdiags(_diags(t)[0].requires_grad_(), t.tensor([0]), (4, 4))
    try:
        (S.to_dense() * 2).sum().backward()
    except RuntimeError as e:
        return str(e)
    return None
