"""The shape ops and indexing PyTorch runs sparse-to-sparse on COO tensors, and the strided queries it answers
for them: ``unsqueeze``, ``select``, ``permute``, ``narrow_copy``, ``index_select``, ``s[i, :, None, ...]``;
``is_contiguous()`` (False), ``stride()`` (zeros), ``data_ptr()`` (refused: a sparse tensor has no storage).

As elsewhere in :mod:`torchish.sparse`, the result's dense value is the dense op's (its gradient and ``grad_fn``
are that op's: ``SelectBackward0``, ``UnsqueezeBackward0``, ``PermuteBackward0``) and the result keeps the
entries PyTorch's sparse kernel makes: for ``select`` of a sparse dim the entries at that index with the dim's
index row dropped (a dense tensor when it was the only sparse dim, PyTorch's sum of the values there); for a dense
dim the values' slice; for ``unsqueeze`` a row of zeros in the indices (or a unit dim in the values past the sparse
dims); for ``permute`` the index rows and value dims reordered; for ``narrow_copy`` the entries in the range,
shifted; for ``index_select`` each entry once per matching index, in the order of PyTorch's kernel for small
inputs. The coalesced flag is PyTorch's: set when fewer than two entries remain (``select``/``unsqueeze``/
``index_select``), kept by ``permute`` only when its first dim is 0, and by ``narrow_copy``. A sparse gradient
reaching these results (``s.unsqueeze(0).to_dense()``'s backward) raises PyTorch's NotImplementedError (its
backward formulas have no sparse kernels; ``permute``'s has); a dense one (``s.unsqueeze(0).sum()``) passes.

Indexing is PyTorch's walk over the index: an int selects, None unsqueezes, ``...`` and full slices skip dims
(inside a tuple); a partial slice, a lone slice, tensor, list or bool index has no sparse kernel in PyTorch
(NotImplementedError, as there), nor has an index that leaves the tensor as it was (``s[:, :]``).

Example:
    >>> import torchish as torch
    >>> s = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    >>> s[1].indices(), s.unsqueeze(0).shape
    (tensor([[0]]), torch.Size([1, 2, 2]))
"""
from __future__ import annotations

import operator

import numpy as np

from . import _dtype
from ._tensor import Tensor, wrap_dim
from .ops import creation as _creation
from .ops.reorder import _args_or_kw, _size_args
from .sparse import _COO, _keeps_sparse, _refused, _SparseTensor, dispatch_error

# a sparse gradient reaching these ops' results fails in PyTorch's backward (their backward formulas use strided
# kernels): the results keep the error for :func:`torchish.sparse.grad_gate` (a dense gradient passes)
_AS_STRIDED = ("NotImplementedError", dispatch_error("as_strided"))
_SELECT_BACKWARD = ("NotImplementedError", dispatch_error("select_backward"))
_INDEX_ADD = ("NotImplementedError", dispatch_error("index_add_"))


def _unsqueezed(self, coo, out, dim):
    sparse_dim, nnz = coo.indices.shape
    d = wrap_dim(dim, self.dim() + 1)
    if d <= sparse_dim:  # a new sparse dim: index 0 for every entry
        indices = _creation.tensor(np.insert(coo.indices.numpy(), d, 0, axis=0).reshape(sparse_dim + 1, nnz))
        return _COO(indices, coo.values, nnz < 2, refuse=_AS_STRIDED)
    return _COO(coo.indices, coo.values.unsqueeze(d - sparse_dim + 1), nnz < 2, refuse=_AS_STRIDED)


def _selected(self, coo, out, dim, index):
    sparse_dim = coo.indices.shape[0]
    dim = wrap_dim(dim, self.dim())
    index = operator.index(index) % self.shape[dim]  # (the dense select has checked the bounds)
    if dim >= sparse_dim:
        values = coo.values.select(dim - sparse_dim + 1, index)
        return _COO(coo.indices, values, values.shape[0] < 2, refuse=_SELECT_BACKWARD)
    if sparse_dim == 1:  # (PyTorch: the values there summed, a dense tensor: the dense select's result)
        return None
    rows = coo.indices.numpy()
    keep = np.nonzero(rows[dim] == index)[0].astype(np.int64)
    indices = _creation.tensor(np.delete(rows, dim, axis=0)[:, keep].reshape(sparse_dim - 1, len(keep)))
    return _COO(indices, coo.values.index_select(0, _creation.tensor(keep)), len(keep) < 2, refuse=_SELECT_BACKWARD)


def _permuted(self, coo, out, *args, dims=None):
    dims = _size_args(_args_or_kw(args, dims, "permute", "dims"), "permute", "dims")
    order = [wrap_dim(d, self.dim()) for d in dims]
    sparse_dim = coo.indices.shape[0]
    if any(d >= sparse_dim for d in order[:sparse_dim]):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense dimensions are not "
                           "allowed.Only transpositions within sparse and dense dimensions are supported.")
    indices = coo.indices[order[:sparse_dim]] if sparse_dim else coo.indices
    values = coo.values.permute(0, *(d - sparse_dim + 1 for d in order[sparse_dim:]))
    # (PyTorch keeps the flag when the first dim given is literally 0, as written: -ndim does not count)
    return _COO(indices, values, coo.coalesced and (not dims or dims[0] == 0))


def _narrowed(self, coo, out, dim, start, length):
    """narrow_copy: the entries whose index along a sparse ``dim`` lies in the range, shifted to it (for a dense
    dim the values narrowed); coalesced as the input. (The dense op has checked the arguments.)"""
    sparse_dim = coo.indices.shape[0]
    start, length = operator.index(start), operator.index(length)
    if dim >= sparse_dim:
        return _COO(coo.indices, coo.values.narrow_copy(dim - sparse_dim + 1, start, length), coo.coalesced,
                    refuse=_AS_STRIDED)
    rows = coo.indices.numpy()
    keep = np.nonzero((rows[dim] >= start) & (rows[dim] < start + length))[0].astype(np.int64)
    rows = rows[:, keep]
    rows[dim] -= start
    return _COO(_creation.tensor(rows.reshape(sparse_dim, len(keep))),
                coo.values.index_select(0, _creation.tensor(keep)), coo.coalesced, refuse=_AS_STRIDED)


def _narrow_copy(self, dim, start, length):
    """``narrow_copy`` of a COO tensor, with the checks of PyTorch's sparse kernel (no negative dim or start)."""
    if self._coo is None:
        return Tensor.narrow_copy(self, dim, start, length)
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not 0 <= dim < self.dim():
        raise RuntimeError(f"Dimension {dim} out of range. Expecting 0 <= dim < {self.dim()}.")
    if start < 0 or start + length > self.shape[dim]:
        raise RuntimeError(f"Invalid range to narrow. range(start, start+length) must be a subset of range(0, "
                           f"{self.shape[dim]}).")
    return _narrow_sparse(self, dim, start, length)


def _index_selected(self, coo, out, dim, index):
    """index_select: along a sparse dim, each entry whose index there is in ``index``, once per match, at the
    match's position; in the order of PyTorch's kernel for small inputs (index-major when there are at least as
    many entries as indices, entry-major otherwise); coalesced when fewer than two entries result. Along a dense
    dim the values' index_select."""
    sparse_dim = coo.indices.shape[0]
    if dim >= sparse_dim:
        values = coo.values.index_select(dim - sparse_dim + 1, index)
        return _COO(coo.indices, values, values.shape[0] < 2, refuse=_INDEX_ADD)
    rows = coo.indices.numpy()
    wanted = np.asarray(index.detach()._concrete())
    match = rows[dim][None, :] == wanted[:, None]  # (index position, entry)
    if rows.shape[1] >= len(wanted):
        position, entry = np.nonzero(match)
    else:
        entry, position = np.nonzero(match.T)
    out_rows = rows[:, entry]
    out_rows[dim] = position
    return _COO(_creation.tensor(out_rows.astype(np.int64).reshape(sparse_dim, len(entry))),
                coo.values.index_select(0, _creation.tensor(entry.astype(np.int64))), len(entry) < 2,
                refuse=_INDEX_ADD)


def _index_select(self, dim, index):
    """``index_select`` of a COO tensor, with the checks of PyTorch's sparse kernel."""
    if self._coo is None:
        return Tensor.index_select(self, dim, index)
    if not self.dim():
        raise IndexError("index_select() cannot be applied to a 0-dim tensor.")
    if not isinstance(index, Tensor) or index.dim() != 1 or index.dtype != _dtype.int64 or index._coo is not None:
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) long-tensor.")
    dim = wrap_dim(dim, self.dim())
    size, sparse_dim = self.shape[dim], self._coo.indices.shape[0]
    wanted = index.tolist()
    if dim >= sparse_dim:  # (the values' index_select: PyTorch's gather of them)
        bad = [i for i in wanted if not 0 <= i < size]
        if bad:
            raise RuntimeError(f"index {bad[0]} is out of bounds for dimension {dim - sparse_dim + 1} with size {size}")
    else:
        bad = [i for i in wanted if not -size <= i < size]
        if bad:
            raise IndexError(f"index_select(): index contains {bad[0]} that is out of range for tensor of size "
                             f"{list(self.shape)} at dimension {dim}")
        if any(i < 0 for i in wanted):
            index = _creation.tensor([i % size for i in wanted], dtype=_dtype.int64)
    return _index_select_sparse(self, dim, index)


def _permuted_rows(self, *args, dims=None):
    """The input dim of each index row of ``permute``'s result (its sparse dims reordered)."""
    dims = _size_args(_args_or_kw(args, dims, "permute", "dims"), "permute", "dims")
    return tuple(wrap_dim(d, self.dim()) for d in dims[:self._coo.indices.shape[0]])


for _name, _fn in (("unsqueeze", _unsqueezed), ("select", _selected), ("narrow_copy", _narrowed),
                   ("index_select", _index_selected)):
    _keeps_sparse(_name, _fn)
_keeps_sparse("permute", _permuted, _permuted_rows)
_narrow_sparse, _index_select_sparse = _SparseTensor.narrow_copy, _SparseTensor.index_select
_SparseTensor.narrow_copy, _SparseTensor.index_select = _narrow_copy, _index_select


# indexing: PyTorch's applySlicing, one select / unsqueeze per index item

def _no_storage():
    return NotImplementedError("Cannot access storage of SparseTensorImpl")


def _full_slice(item, size):
    """Whether the slice ``item`` inside a tuple index is one PyTorch skips (start 0, step 1, stop past the end)."""
    return item.start in (None, 0) and item.step in (None, 1) and (item.stop is None or item.stop >= size)


def _is_bool(item):
    """A bool index (True/False, or a 0-d bool tensor): PyTorch makes an index tensor of it, filled for True (the
    fill_ a sparse tensor lacks), empty for False (then the index.Tensor it lacks)."""
    return isinstance(item, bool) or isinstance(item, Tensor) and item.dim() == 0 and item.dtype == _dtype.bool


def _as_int(item):
    """An integer index (a Python or numpy int, or a 0-d integer tensor) as an int; None for anything else."""
    if isinstance(item, Tensor):
        integral = not (item.dtype.is_floating_point or item.dtype.is_complex or item.dtype == _dtype.bool)
        return int(item) if item.dim() == 0 and integral else None
    try:
        return operator.index(item)
    except TypeError:
        return None


def _getitem(self, index):
    if self._coo is None:
        return Tensor.__getitem__(self, index)
    if isinstance(index, slice):  # (a lone slice is never skipped: PyTorch's kernel is as_strided)
        _refused("as_strided")(self)
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_bool(i) and bool(i) for i in items):
        _refused("fill_.Scalar")(self)
    kinds = []
    for item in items:
        if item is None or item is Ellipsis:
            kinds.append(item)
        elif isinstance(item, slice):
            kinds.append(slice)
        else:
            value = None if _is_bool(item) else _as_int(item)
            if value is None:
                _refused("index.Tensor")(self)
            kinds.append(value)
    consumed = sum(k is not None and k is not Ellipsis for k in kinds)
    if consumed > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    out, dim, real_dim, changed = self, 0, 0, False
    for item, kind in zip(items, kinds):
        if kind is None:
            out, dim, changed = out.unsqueeze(dim), dim + 1, True
        elif kind is Ellipsis:
            skip = self.dim() - consumed
            dim, real_dim, consumed = dim + skip, real_dim + skip, self.dim()  # (a second ``...`` skips nothing)
        elif kind is slice:
            if not _full_slice(item, self.shape[real_dim]):
                _refused("as_strided")(self)
            dim, real_dim = dim + 1, real_dim + 1
        else:
            size = self.shape[real_dim]
            if not -size <= kind < size:
                raise IndexError(f"index {kind} is out of bounds for dimension {real_dim} with size {size}")
            out, real_dim, changed = out.select(dim, kind), real_dim + 1, True
    if not changed:  # (PyTorch returns an alias of the tensor, which a sparse tensor cannot make)
        raise _no_storage()
    return out


_SparseTensor.__getitem__ = _getitem


# the strided queries: a COO tensor has no strides (PyTorch reports zeros), is not contiguous and has no storage

def _stride(self, dim=None):
    if self._coo is None:
        return Tensor.stride(self) if dim is None else Tensor.stride(self, dim)
    if dim is None:
        return (0,) * self.dim()
    wrap_dim(dim, self.dim())
    return 0


def _is_contiguous(self, memory_format=None):
    return False if self._coo is not None else Tensor.is_contiguous(self, **(
        {} if memory_format is None else {"memory_format": memory_format}))


def _data_ptr(self):
    if self._coo is None:
        return Tensor.data_ptr(self)
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def _untyped_storage(self):
    if self._coo is None:
        return Tensor.untyped_storage(self)
    raise _no_storage()


_SparseTensor.stride = _stride
_SparseTensor.is_contiguous = _is_contiguous
_SparseTensor.data_ptr = _data_ptr
_SparseTensor.untyped_storage = _untyped_storage
