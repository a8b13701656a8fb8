"""``torch.sparse_csr_tensor`` and ``Tensor.to_sparse_csr``: 2-D compressed-sparse-row tensors, held densely.

As :mod:`torchish.sparse` holds a COO tensor, a CSR tensor here is a Tensor whose value is the dense matrix its
entries make, with ``crow_indices``, ``col_indices`` and ``values`` kept beside it. Dense arithmetic on it
(``A @ x``, ``torch.mm``, ``torch.sparse.mm``/``addmm``, ``A.sum()``) is ordinary ops on that value, and
``torch.sparse.mm(A, x, reduce)`` works on the entries (:func:`mm_reduce`), so gradients reach ``values`` (when it
requires grad) and the dense operand as in PyTorch; ``layout``, ``is_sparse_csr``,
``_nnz()``, printing, ``to_dense()``, ``to_sparse_coo()`` and ``to_sparse_csr()`` answer as for PyTorch's CSR
tensors, and ``clone``/``detach``/dtype casts/scaling by a number keep the CSR entries.

``torch.sparse.sampled_addmm`` samples a dense product at a CSR matrix's entries (:func:`sampled_addmm`); pickling
and ``torch.save`` keep the entries. ``numpy()``, ``tolist()``, ``view``, ``reshape`` and ``flatten`` raise
PyTorch's errors.

Differences: only 2-D CSR tensors with scalar values (PyTorch also has batched and hybrid ones); other ops on a CSR
tensor (``A.t()``, which is CSC in PyTorch, ``A + B``) give dense tensors with the same values.

Example:
    >>> import torchish as torch
    >>> A = torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
    >>> A.crow_indices(), A.col_indices()
    (tensor([0, 1, 2]), tensor([1, 0]))
    >>> A @ torch.ones(2)
    tensor([1., 2.])
"""
from __future__ import annotations

import numpy as np

from . import _dtype, _layout
from ._subclass import _disabled_torch_function_impl
from ._tensor import Tensor
from ._tensor_str import _add_suffixes, sparse_parts
from .ops import copying as _copying, creation as _creation
from .ops.registry import apply, overload
from ._global_flags import warn_once
from ._sparse_invariants import checking
from .ops.stats import _user_stacklevel

__all__ = ["sparse_csr_tensor"]


class _CSR:
    """The entries of a CSR matrix: ``crow`` (rows + 1 offsets), ``col`` and ``values`` (one per entry); ``built``:
    the tensor was made from them (its gradient goes to ``values``: PyTorch's SparseCompressedTensorBackward0)."""

    __slots__ = ("crow", "col", "values", "built")

    def __init__(self, crow, col, values, built=False):
        self.crow, self.col, self.values, self.built = crow, col, values, built


class _SparseCsrTensor(Tensor):
    """A CSR tensor's class: a Tensor (its dense value) that keeps its CSR entries in ``_csr``."""
    __slots__ = ()
    __torch_function__ = _disabled_torch_function_impl  # (torchish's own: results are plain dense tensors)

    @property
    def layout(self):
        return _layout.sparse_csr

    @property
    def is_sparse_csr(self):
        return True

    def crow_indices(self):
        return self._csr.crow

    def col_indices(self):
        return self._csr.col

    def values(self):
        return self._csr.values

    def _nnz(self):
        return int(self._csr.col.shape[0])

    def to_dense(self, dtype=None, *, masked_grad=None):
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        from .sparse import dense_of  # (ToDenseBackward0, the gradient masked to the entries)
        csr = self._csr
        return dense_of(self, _creation.tensor(_entry_indices(csr)), masked_grad)

    # a CSR tensor has no strides or storage (PyTorch's errors)
    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def stride(self, dim=None):
        raise RuntimeError("Sparse CSR tensors do not have strides")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of SparseCsrTensorImpl")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force=False):
        raise TypeError("can't convert SparseCsr layout tensor to numpy. Use Tensor.to_dense() first.")

    # its dims are sparse (PyTorch's CSR matrix of scalars); the views of a strided tensor it has none of
    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def view(self, *args, **kwargs):
        from .sparse import dispatch_error
        raise NotImplementedError(dispatch_error("view", "SparseCsrCPU"))

    def reshape(self, *args, **kwargs):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def flatten(self, *args, **kwargs):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def to_sparse_csr(self, dense_dim=None):
        return self

    def to_sparse_coo(self):
        from .sparse import sparse_coo_tensor
        indices = _creation.tensor(_entry_indices(self._csr))
        return sparse_coo_tensor(indices, self._csr.values, tuple(self.shape), is_coalesced=True)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        if layout in (None, _layout.sparse_coo) and not args:
            return self.to_sparse_coo()
        if layout is _layout.sparse_csr:
            return self
        return Tensor.to_sparse(self.to_dense(), *args, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def __reduce_ex__(self, protocol):  # (pickled as PyTorch pickles it: its entries, not its dense value)
        from .sparse import rebuild_sparse, sparse_reduction
        return rebuild_sparse, sparse_reduction(self)

    def __repr__(self, *, tensor_contents=None):
        return _csr_repr(self)

    __str__ = __repr__


def _rows(crow):
    """The row of each entry (int64), from the row offsets."""
    counts = np.diff(np.asarray(crow.detach()._d).astype(np.int64))
    return _creation.tensor(np.repeat(np.arange(len(counts), dtype=np.int64), counts))


def _entry_indices(csr):
    """The (row, col) of each entry, a 2 x nnz int64 array."""
    return np.stack([np.asarray(_rows(csr.crow)._d), np.asarray(csr.col._d).astype(np.int64)]).reshape(2, -1)


def _mark(t, csr):
    # (PyTorch's CSR tensors warn once when the first is made, whichever op makes it)
    warn_once("Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor support, "
              "please submit a feature request to https://github.com/pytorch/pytorch/issues.",
              stacklevel=_user_stacklevel())
    t._csr = csr
    t.__class__ = _SparseCsrTensor
    return t


def _from_entries(crow, col, values, size, requires_grad=False):
    """The CSR tensor of ``size`` with these entries: its value sums them into zeros (an accumulating index_put,
    so the gradient of each value is the dense gradient at its place)."""
    dense = _creation.zeros(size, dtype=values.dtype)
    if requires_grad:
        values = values.detach()
    if col.shape[0]:
        dense = dense.index_put((_rows(crow), col.long()), values, accumulate=True)
    if requires_grad:
        dense.requires_grad_(True)
    return _mark(dense, _CSR(crow, col, values, built=True))


def _as_tensor(x, dtype=None):
    return x if isinstance(x, Tensor) else _creation.tensor(x, dtype=dtype)


def _check_invariants(crow, col, values, size):
    """PyTorch's checks under ``check_invariants=True`` (without it PyTorch checks nothing), with its messages."""
    if crow.dtype != col.dtype:
        raise RuntimeError(f"crow_indices and col_indices must have the same dtype, bot got "
                           f"{_dtype.scalar_type_name(crow.dtype)} and {_dtype.scalar_type_name(col.dtype)}, "
                           "respectively")
    if crow.dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError(f"crow_indices and col_indices dtype must be Int or Long, but got "
                           f"{_dtype.scalar_type_name(crow.dtype)}")
    if crow.shape[0] != size[0] + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 (={size[0] + 1}), but "
                           f"got {crow.shape[0]}")
    if col.shape[0] != values.shape[0]:
        raise RuntimeError(f"col_indices.shape[-1] must be equal to nnz (={values.shape[0]}) as defined by "
                           f"values.shape[0], but got {col.shape[0]}")
    c, k = np.asarray(crow._d).astype(np.int64), np.asarray(col._d).astype(np.int64)
    if c[0] != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if c[-1] != k.shape[0]:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    step = np.diff(c)
    if (step < 0).any() or (step > size[1]).any():
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if k.size and ((k < 0).any() or (k >= size[1]).any()):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    _check_sorted(c, k)


def _check_placeable(crow, col, size):
    """With checking off PyTorch builds whatever it is given; torchish places the entries in a dense value, and
    refuses, with the check's message, row offsets or columns that do not place them."""
    c, k = np.asarray(crow._d).astype(np.int64), np.asarray(col._d).astype(np.int64)
    if not c.size or c[0] != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if c[-1] != k.shape[0]:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    step = np.diff(c)
    if (step < 0).any() or step[size[0]:].any():  # (offsets beyond the last row may only repeat nnz)
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if k.size and ((k < 0).any() or (k >= size[1]).any()):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")


def _check_sorted(c, k):
    for r in range(len(c) - 1):
        if (np.diff(k[c[r]:c[r + 1]]) <= 0).any():
            raise RuntimeError("`col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = 1, "
                               "..., nrows are sorted and distinct along the last dimension values` is not "
                               "satisfied.")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A 2-D CSR tensor: row ``i`` holds ``values[crow_indices[i]:crow_indices[i + 1]]`` at columns
    ``col_indices[crow_indices[i]:crow_indices[i + 1]]`` (PyTorch's ``torch.sparse_csr_tensor``). As PyTorch,
    the entries are checked only under ``check_invariants=True`` (default: the state of
    ``torch.sparse.check_sparse_tensor_invariants``), except those torchish cannot place (:func:`_check_placeable`)."""
    check = checking(check_invariants)
    crow, col = _as_tensor(crow_indices), _as_tensor(col_indices)
    values = _as_tensor(values, dtype)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if crow.dim() != 1 or col.dim() != 1 or values.dim() != 1:
        raise NotImplementedError("torchish's sparse_csr_tensor holds 2-D matrices of scalars: crow_indices, "
                                  "col_indices and values must be 1-D (batched and hybrid CSR are not supported)")
    if size is None:  # (PyTorch's estimate of the size has no kernel for floating indices; a given size needs none)
        for t in (crow, col):
            if t.dtype.is_floating_point or t.dtype.is_complex:
                raise NotImplementedError(f"\"estimate_sparse_compressed_tensor_size\" not implemented for "
                                          f"'{_dtype.scalar_type_name(t.dtype)}'")
        ncols = int(col.max()) + 1 if col.shape[0] else 0
        size = (crow.shape[0] - 1, ncols)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError(f"torchish's sparse_csr_tensor holds 2-D matrices, got size {size}")
    if check:
        _check_invariants(crow, col, values, size)
    _check_placeable(crow, col, size)
    return _from_entries(crow, col, values, size, requires_grad)


# the CSR copy's node: to_sparse_csr() ToSparseCsrBackward0 (to_sparse(layout=torch.sparse_csr) passes its own)
_TO_CSR = overload(_copying._CLONE, "ToSparseCsrBackward0")


def to_sparse_csr(self, dense_dim=None, *, _node=_TO_CSR):
    """``x.to_sparse_csr()`` of a dense or COO matrix: its nonzero entries (a COO tensor's coalesced entries), row
    by row."""
    if dense_dim is not None:
        raise NotImplementedError("to_sparse_csr: dense_dim (hybrid CSR) is not supported")
    if self.dim() != 2:
        raise NotImplementedError(f"to_sparse_csr: torchish's CSR tensors are 2-D, got a {self.dim()}-D tensor")
    if self._coo is not None:
        coo = self.coalesce()._coo
        rows, cols, values = coo.indices[0], coo.indices[1], coo.values
    else:
        nz = np.nonzero(np.asarray(self.detach()._concrete()))
        rows, cols = _creation.tensor(nz[0].astype(np.int64)), _creation.tensor(nz[1].astype(np.int64))
        values = self[rows, cols]
    counts = np.bincount(np.asarray(rows._d).astype(np.int64), minlength=self.shape[0])
    crow = _creation.tensor(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
    out = apply(_node, (self,))  # the same dense value, with the gradient to this tensor
    return _mark(out, _CSR(crow, cols, values))


Tensor.to_sparse_csr = to_sparse_csr


def _keeps_csr(name, entries):
    """``Tensor.<name>`` for CSR tensors: the dense result also keeps ``entries(self, out, *args, **kwargs)``
    (None: the result is dense)."""
    dense_method = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        out = dense_method(self, *args, **kwargs)
        if out is self:
            return out
        csr = entries(self, out, *args, **kwargs)
        return out if csr is None else _mark(out, csr)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense_method.__doc__
    setattr(_SparseCsrTensor, name, method)


def _same(self, out, *args, **kwargs):
    csr = self._csr
    values = csr.values if out.requires_grad else csr.values.detach()
    return _CSR(csr.crow, csr.col, values.to(out.dtype))


def _scaled(op):
    def entries(self, out, other):
        if isinstance(other, Tensor) and other.dim() or not isinstance(other, (Tensor, int, float)):
            return None
        csr = self._csr
        return _CSR(csr.crow, csr.col, getattr(csr.values, op)(other).to(out.dtype))
    return entries


for _name, _fn in (("clone", _same), ("detach", _same), ("to", _same), ("float", _same), ("double", _same),
                   ("half", _same), ("mul", _scaled("mul")), ("__mul__", _scaled("mul")),
                   ("__rmul__", _scaled("mul")), ("div", _scaled("div")), ("__truediv__", _scaled("div"))):
    _keeps_csr(_name, _fn)
# ``.data`` of a CSR tensor is a CSR tensor with the same entries, as PyTorch's
_SparseCsrTensor.data = property(lambda self: _mark(Tensor.data.fget(self), _same(self, self.detach())),
                                 Tensor.data.fset)


def _csr_repr(t):
    """A CSR tensor as PyTorch prints it: crow_indices, col_indices and values, then size, nnz, dtype, layout."""
    prefix = "tensor("
    indent = len(prefix)
    csr = t._csr
    parts, suffixes = sparse_parts(t, indent, (("crow_indices", csr.crow), ("col_indices", csr.col),
                                               ("values", csr.values)), csr.col.shape[0])
    if t.grad_fn is not None:
        name = "SparseCompressedTensorBackward0" if csr.built else type(t.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + (",\n" + " " * indent).join(parts), suffixes, indent)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """``torch.sparse.sampled_addmm``: ``alpha * (mat1 @ mat2)`` at the entries of the CSR matrix ``input``, plus
    ``beta * input``: a CSR matrix with input's entries, differentiable in its values, ``mat1`` and ``mat2``. The
    checks and messages are PyTorch's, in its order."""
    if not isinstance(input, _SparseCsrTensor):
        from .sparse import dispatch_error
        raise NotImplementedError(dispatch_error("sparse_sampled_addmm",
                                                 "SparseCPU" if input._coo is not None else "CPU"))
    if out is not None:
        raise NotImplementedError("torchish's sparse.sampled_addmm has no out= (assign its result instead)")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.layout is not _layout.strided:
            raise RuntimeError(f"sampled_addmm: Expected {name} to have strided layout, but got "
                               f"{_layout.cpp_name(m.layout)}")
    for other, name in ((mat2, "mat2"), (input, "self")):
        if mat1.dtype != other.dtype:
            raise RuntimeError(f"sampled_addmm: Expected mat1 and {name} to have the same dtype, but got "
                               f"{_dtype.scalar_type_name(mat1.dtype)} and {_dtype.scalar_type_name(other.dtype)}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() < 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got {m.dim()}-D tensor")
        if m.dim() > 2:
            raise NotImplementedError("torchish's CSR tensors are 2-D: batched sampled_addmm is not supported")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"sparse_sampled_addmm: Expected self to be a floating-point or complex tensor, but got "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if input.shape[0] != mat1.shape[0]:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if input.shape[1] != mat2.shape[1]:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    csr = input._csr
    rows, cols = _rows(csr.crow), csr.col.long()
    if input.requires_grad and not csr.values.requires_grad:  # (a CSR leaf: the gradient goes to it)
        values = input[rows, cols]
    else:
        values = csr.values
    sampled = (mat1[rows] * mat2[:, cols].mT).sum(-1)
    return _from_entries(csr.crow, csr.col, values * beta + sampled * alpha, tuple(input.shape))


def mm_reduce(mat1, mat2, reduce):
    """``torch.sparse.mm(csr, dense, reduce)``: row ``i`` of the result reduces ``values[k] * mat2[col[k]]`` over the
    row's entries by ``reduce`` (sum, mean, amax/max, amin/min; 0 for a row without entries), differentiable in the
    CSR values and in ``mat2`` (PyTorch's SparseMmReduceImplBackward0)."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "prod":
        raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
    if mat1._coo is not None:
        from .sparse import dispatch_error
        raise NotImplementedError(dispatch_error("_sparse_mm_reduce_impl"))
    if not isinstance(mat1, _SparseCsrTensor):
        raise RuntimeError("sparse_mm_reduce: expect self to be SparseCsr, got Strided")
    if mat2.dim() != 2 or mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"Expected a tensor of dimension 2 and tensor.size[0] == {mat1.shape[1]} but got: "
                           f"dimension {mat2.dim()} and tensor.size[0] = {mat2.shape[0]}")
    if mat2.dtype != mat1.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'other' to have scalar type "
                           f"{_dtype.scalar_type_name(mat1.dtype)}; but got torch."
                           f"{_dtype.scalar_type_name(mat2.dtype)}Tensor instead (while checking arguments for "
                           "sparse_mm_reduce)")
    csr = mat1._csr
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    terms = csr.values.unsqueeze(-1) * mat2[csr.col.long()]
    index = _rows(csr.crow).unsqueeze(-1).expand(-1, mat2.shape[1])
    out = _creation.zeros((mat1.shape[0], mat2.shape[1]), dtype=terms.dtype)
    return out.scatter_reduce(0, index, terms, reduce, include_self=False)
