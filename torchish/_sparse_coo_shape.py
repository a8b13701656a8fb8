"""The shape ops and indexing PyTorch runs sparse-to-sparse on COO tensors, and the strided queries it answers
for them: ``unsqueeze``, ``select``, ``permute``, ``s[i, :, None, ...]``; ``is_contiguous()`` (False),
``stride()`` (zeros), ``data_ptr()`` (refused: a sparse tensor has no storage).

As elsewhere in :mod:`torchish.sparse`, the result's dense value is the dense op's (its gradient and ``grad_fn``
are that op's: ``SelectBackward0``, ``UnsqueezeBackward0``, ``PermuteBackward0``) and the result keeps the
entries PyTorch's sparse kernel makes: for ``select`` of a sparse dim the entries at that index with the dim's
index row dropped (a dense tensor when it was the only sparse dim, PyTorch's sum of the values there); for a dense
dim the values' slice; for ``unsqueeze`` a row of zeros in the indices (or a unit dim in the values past the sparse
dims); for ``permute`` the index rows and value dims reordered. The coalesced flag is PyTorch's: set when fewer
than two entries remain (``select``/``unsqueeze``), kept by ``permute`` only when its first dim is 0.

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
from .sparse import _COO, _keeps_sparse, _refused, _SparseTensor


def _unsqueezed(self, coo, out, dim):
    sparse_dim, nnz = coo.indices.shape
    d = wrap_dim(dim, self.dim() + 1)
    if d <= sparse_dim:  # a new sparse dim: index 0 for every entry
        indices = _creation.tensor(np.insert(coo.indices.numpy(), d, 0, axis=0).reshape(sparse_dim + 1, nnz))
        return _COO(indices, coo.values, nnz < 2)
    return _COO(coo.indices, coo.values.unsqueeze(d - sparse_dim + 1), nnz < 2)


def _selected(self, coo, out, dim, index):
    sparse_dim = coo.indices.shape[0]
    dim = wrap_dim(dim, self.dim())
    index = operator.index(index) % self.shape[dim]  # (the dense select has checked the bounds)
    if dim >= sparse_dim:
        values = coo.values.select(dim - sparse_dim + 1, index)
        return _COO(coo.indices, values, values.shape[0] < 2)
    if sparse_dim == 1:  # (PyTorch: the values there summed, a dense tensor: the dense select's result)
        return None
    rows = coo.indices.numpy()
    keep = np.nonzero(rows[dim] == index)[0].astype(np.int64)
    indices = _creation.tensor(np.delete(rows, dim, axis=0)[:, keep].reshape(sparse_dim - 1, len(keep)))
    return _COO(indices, coo.values.index_select(0, _creation.tensor(keep)), len(keep) < 2)


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


for _name, _fn in (("unsqueeze", _unsqueezed), ("select", _selected), ("permute", _permuted)):
    _keeps_sparse(_name, _fn)


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
