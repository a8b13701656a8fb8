"""Sparse COO/CSR behaviour compared with PyTorch: ``unsqueeze``, ``select``, indexing, ``permute`` and ``abs`` of a
COO tensor stay sparse with PyTorch's indices, values and coalesced flag; ``to_dense()`` masks its gradient to the
entries; ``.data`` assignment across layouts, the strided queries (``is_contiguous``, ``stride``, ``data_ptr``) and
the indexing PyTorch has no sparse kernel for raise its errors."""
import warnings

import pytest

from oracle import check_raises, run_both, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


def _sparse(lib, kind):
    """A small COO tensor: "u" uncoalesced (a duplicate at (0, 2)), "c" coalesced, "h" hybrid (1 sparse + 1 dense
    dim), "s3" coalesced 3-d, "e" without entries."""
    if kind == "u":
        return lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [3., -4., 5., 1.], (2, 3))
    if kind == "c":
        return lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [3., -4., 5., 1.], (2, 3)).coalesce()
    if kind == "h":
        return lib.sparse_coo_tensor([[0, 1]], [[1., -2.], [3., 4.]], (3, 2))
    if kind == "s3":
        return lib.tensor([[[0., 1.], [2., 0.]], [[0., 0.], [-3., 4.]]]).to_sparse()
    return lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0), (2, 3))


def _csr(lib, rows):
    """``rows`` (a tensor or nested lists) as a CSR tensor (PyTorch's beta warning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (rows if isinstance(rows, lib.Tensor) else lib.tensor(rows)).to_sparse_csr()


def _describe(lib, t):
    """What PyTorch shows of a result: a COO tensor's shape, dims, coalesced flag, raw entries and dtype; a dense
    tensor's values; and the grad_fn name."""
    name = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    if t.layout != lib.sparse_coo:
        return "dense", tuple(t.shape), t.detach().tolist(), name
    return ("coo", tuple(t.shape), t.sparse_dim(), t.dense_dim(), t.is_coalesced(), t._indices().tolist(),
            t._values().detach().tolist(), str(t.dtype).split(".")[-1], name)


_OPS = {
    "unsqueeze(0)": lambda s: s.unsqueeze(0),
    "unsqueeze(1)": lambda s: s.unsqueeze(1),
    "unsqueeze(-1)": lambda s: s.unsqueeze(-1),
    "select(0, 1)": lambda s: s.select(0, 1),
    "select(1, 0)": lambda s: s.select(1, 0),
    "select(-1, 1)": lambda s: s.select(-1, 1),
    "[0]": lambda s: s[0],
    "[-1]": lambda s: s[-1],
    "[:, 1]": lambda s: s[:, 1],
    "[0:5, 1]": lambda s: s[0:5, 1],
    "[None]": lambda s: s[None],
    "[..., 0]": lambda s: s[..., 0],
    "[1, None, 0]": lambda s: s[1, None, 0],
    "[0, 1]": lambda s: s[0, 1],
    "permute(1, 0)": lambda s: s.permute(1, 0),
    "permute(0, 1)": lambda s: s.permute((0, 1)),
    "permute(-2, -1)": lambda s: s.permute(-2, -1),
    "abs": lambda s: s.abs(),
    "abs()": lambda s: abs(s),
}


def _outcome(lib, fn):
    """``_describe`` of ``fn()``, or the error it raises (type and message)."""
    try:
        return _describe(lib, fn())
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)


@pytest.mark.parametrize("op", list(_OPS))
@pytest.mark.parametrize("kind", ["u", "c", "h", "e"])
def test_shape_ops_and_abs_stay_sparse_with_torchs_entries(kind, op):
    ref, got = run_both(lambda lib: _outcome(lib, lambda: _OPS[op](_sparse(lib, kind))))
    assert got == ref


@pytest.mark.parametrize("op", ["permute(0, 2, 1)", "permute(2, 0, 1)", "permute(-3, 1, 2)", "[1]", "[:, 0]",
                                "[..., 1]", "[None, 0, None]", "unsqueeze(3)"])
def test_shape_ops_of_a_3d_tensor(op):
    ref, got = run_both(lambda lib: _describe(lib, eval("s." + op if op[0] != "[" else "s" + op,
                                                        {"s": _sparse(lib, "s3")})))
    assert got == ref


def test_results_keep_the_inputs_dtype_and_abs_of_complex_is_real():
    def fn(lib):
        out = []
        for dt in (lib.int8, lib.float64, lib.complex64):
            v = lib.tensor([3, -4, 5, 1]).to(dt)
            s = lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], v, (2, 3))
            out += [_describe(lib, s.abs()), _describe(lib, s.unsqueeze(0)), _describe(lib, s[1])]
        return out
    ref, got = run_both(fn)
    assert got == ref


def test_abs_in_place():
    def fn(lib):
        s = _sparse(lib, "c")
        s.abs_()
        return _describe(lib, s)
    ref, got = run_both(fn)
    assert got == ref
    same_error(lambda lib: _sparse(lib, "u").abs_())


@pytest.mark.parametrize("index", ["[0:1]", "[:]", "[0:1, 1]", "[-2:, 1]", "[1, 0:2]", "[True]", "[1, False]",
                                   "[torch.tensor([0])]", "[[0, 1]]", "[torch.tensor(1.)]", "[:, :]", "[...]",
                                   "[()]", "[2]", "[0, -4]", "[0, 0, 0]"])
def test_indexing_without_a_sparse_kernel_raises_torchs_error(index):
    def fn(lib):
        return eval("s" + index, {"s": _sparse(lib, "c"), "torch": lib})
    err = check_raises(fn)
    with pytest.raises(Exception) as got:
        fn(__import__("torchish"))
    # (PyTorch's dispatcher errors go on to list its backends: the sentence naming the kernel is compared)
    assert str(got.value).split(" This could be")[0] == str(err).split(" This could be")[0]


def test_shape_op_errors():
    same_error(lambda lib: _sparse(lib, "h").permute(1, 0))
    same_error(lambda lib: _sparse(lib, "c").permute(0))
    same_error(lambda lib: _sparse(lib, "c").select(0, 2))
    same_error(lambda lib: _sparse(lib, "c").unsqueeze(3))


@pytest.mark.parametrize("op", ["permute", "abs", "t", "to_dense", "to_dense_unmasked", "coalesce_to_dense",
                                "select_sparse_then_dense"])
@pytest.mark.parametrize("source", ["leaf", "dense"])
def test_gradients_as_torch_gives_them(op, source):
    """The gradient reaching a sparse leaf (PyTorch's is sparse: compared densely) or the dense tensor a sparse one
    was made from, through to_dense() (masked to the entries unless masked_grad=False)."""
    def fn(lib):
        if source == "leaf":
            s = x = lib.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [3., -4., 5., 1.], (2, 3), requires_grad=True)
        else:
            x = lib.tensor([[0., 0., 4.], [-4., 0., 5.]], requires_grad=True)
            s = x.to_sparse()
        out = {"permute": lambda: s.permute(1, 0).to_dense(), "abs": lambda: s.abs().to_dense(),
               "t": lambda: s.t().to_dense(), "to_dense": lambda: s.to_dense(),
               "to_dense_unmasked": lambda: s.to_dense(masked_grad=False),
               "coalesce_to_dense": lambda: s.coalesce().to_dense(),
               "select_sparse_then_dense": lambda: s[0, 2] * 1}[op]()
        (out * lib.arange(1., out.numel() + 1).reshape(out.shape)).sum().backward()
        g = x.grad
        g = g.to_dense() if g.layout == lib.sparse_coo else g
        return type(out.grad_fn).__name__, out.tolist(), g.tolist()
    ref, got = run_both(fn)
    if op == "permute":  # (PyTorch's grad_fn here is the to_dense's)
        assert got[1:] == ref[1:]
    else:
        assert got == ref


def test_csr_to_dense_masks_its_gradient():
    def fn(lib):
        x = lib.tensor([[0., 0., 4.], [-4., 0., 5.]], requires_grad=True)
        out = []
        for masked in (None, False):
            x.grad = None
            d = _csr(lib, x).to_dense(masked_grad=masked)
            (d * lib.arange(1., 7.).reshape(2, 3)).sum().backward()
            out.append((type(d.grad_fn).__name__, x.grad.tolist()))
        return out
    ref, got = run_both(fn)
    assert got == ref
    same_error(lambda lib: lib.eye(2).to_sparse().to_dense(lib.float32))
    same_error(lambda lib: _csr(lib, lib.eye(2)).to_dense(lib.float64))


def _set_data(t, new):
    t.data = new
    return t


def test_data_assignment_across_layouts():
    same_error(lambda lib: _set_data(_csr(lib, [[0., 1.], [2., 0.]]), lib.zeros(2, 2)))
    same_error(lambda lib: _set_data(lib.zeros(2, 2), _csr(lib, [[0., 1.], [2., 0.]])))
    same_error(lambda lib: _set_data(lib.zeros(2, 2), lib.eye(2).to_sparse()))
    same_error(lambda lib: _set_data(lib.eye(2).to_sparse(), lib.zeros(2, 2)))
    ref, got = run_both(lambda lib: _describe(lib, _set_data(lib.tensor([[0., 1.], [2., 0.]]).to_sparse(),
                                                             _sparse(lib, "u"))))
    assert got == ref

    def csr_entries(lib):  # (PyTorch's CSR tensor keeps its entries)
        t = _set_data(_csr(lib, [[0., 1.], [2., 0.]]), _csr(lib, [[3., 0.], [0., 4.]]))
        return t.crow_indices().tolist(), t.col_indices().tolist(), t.values().tolist(), t.to_dense().tolist()
    ref, got = run_both(csr_entries)
    assert got == ref


@pytest.mark.parametrize("kind", ["c", "h", "s3"])
def test_coo_strided_queries(kind):
    ref, got = run_both(lambda lib: (_sparse(lib, kind).is_contiguous(), _sparse(lib, kind).stride(),
                                     _sparse(lib, kind).stride(-1), _sparse(lib, kind).storage_offset()))
    assert got == ref
    same_error(lambda lib: _sparse(lib, kind).data_ptr())
    same_error(lambda lib: _sparse(lib, kind).stride(3))
    same_error(lambda lib: _sparse(lib, kind).untyped_storage())


def test_csr_strided_queries():
    def csr(lib):
        return _csr(lib, [[0., 1.], [2., 0.]])
    for fn in (lambda lib: csr(lib).is_contiguous(), lambda lib: csr(lib).stride(), lambda lib: csr(lib).stride(0),
               lambda lib: csr(lib).data_ptr(), lambda lib: csr(lib).untyped_storage()):
        same_error(fn)
