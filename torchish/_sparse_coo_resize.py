"""``s.sparse_resize_(size, sparse_dim, dense_dim)`` and ``s.sparse_resize_and_clear_(size, sparse_dim,
dense_dim)`` of COO tensors, as PyTorch's: the first keeps the entries and may only grow the sizes of a tensor
that has entries (changing the number of sparse or dense dims, or shrinking one, is its RuntimeError); the second
drops the entries and takes any size. Both return the tensor itself. Before, torchish had neither.

Difference: growing a dense dim of a hybrid tensor with entries pads its values with zeros (PyTorch's resized
values tensor holds whatever its storage held there).

Example:
    >>> import torchish as torch
    >>> s = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    >>> s.sparse_resize_((3, 4), 2, 0).shape
    torch.Size([3, 4])
"""
from __future__ import annotations

from . import _dtype
from ._tensor import Tensor
from .ops import creation as _creation, join as _join
from .sparse import _from_entries, _SparseTensor, dispatch_error

_HINT = ("on a non-empty sparse tensor is not supported.\nYou could try the following options:\n1. If you need an "
         "empty sparse tensor of this size, call `x = torch.sparse_coo_tensor(size)`.\n2. If you need to resize "
         "this tensor, you have the following options:\n    1. For both sparse and dense dimensions, keep the "
         "number of them constant and the size of them non-shrinking, and then try the same call again.\n    2. Or, "
         "create a new sparse tensor with the correct indices and values from this sparse tensor.")


def _checked_size(self, name, size, sparse_dim, dense_dim):
    if self._coo is None:
        raise NotImplementedError(dispatch_error(name).replace("'SparseCPU'", "'CPU'"))
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    return size


def _check_growing(self, size, sparse_dim, dense_dim):
    """PyTorch's refusals for a tensor with entries: another number of sparse or dense dims, a smaller size."""
    coo = self._coo
    old_sparse, old_dense, old = coo.indices.shape[0], coo.values.dim() - 1, tuple(self.shape)
    for kind, was, now in (("sparse", old_sparse, sparse_dim), ("dense", old_dense, dense_dim)):
        if was != now:
            raise RuntimeError(f"changing the number of {kind} dimensions (from {was} to {now}) {_HINT}")
    for kind, lo, hi in (("sparse", 0, sparse_dim), ("dense", sparse_dim, len(size))):
        if any(n < o for n, o in zip(size[lo:hi], old[lo:hi])):
            raise RuntimeError(f"shrinking the size of {kind} dimensions (from {list(old[lo:hi])} to "
                               f"{list(size[lo:hi])}) {_HINT}")


def _padded(values, shape):
    """``values`` (nnz x dense sizes) with zeros appended along each dense dim up to ``shape``."""
    for axis, n in enumerate(shape, start=1):
        extra = n - values.shape[axis]
        if extra:
            pad = _creation.zeros((*values.shape[:axis], extra, *values.shape[axis + 1:]), dtype=values.dtype)
            values = _join.cat([values, pad], axis)
    return values


def _rebuilt(self, indices, values, size, coalesced):
    """Make ``self`` the COO tensor of ``size`` with these entries, in place (a new value, the version bumped)."""
    self._check_inplace()
    new = _from_entries(indices, values, size, coalesced, device=self.device)
    self._rebind(new)
    self._coo = new._coo
    return self


def sparse_resize_(self, size, sparse_dim, dense_dim):
    """``s.sparse_resize_(size, sparse_dim, dense_dim)``: ``s`` of ``size``, its entries kept."""
    size = _checked_size(self, "sparse_resize_", size, sparse_dim, dense_dim)
    coo = self._coo
    if coo.indices.shape[1]:
        _check_growing(self, size, sparse_dim, dense_dim)
        return _rebuilt(self, coo.indices, _padded(coo.values.detach(), size[sparse_dim:]), size, coo.coalesced)
    return _rebuilt(self, _creation.zeros((sparse_dim, 0), dtype=_dtype.int64),
                    _creation.zeros((0, *size[sparse_dim:]), dtype=self.dtype), size, coo.coalesced)


def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    """``s.sparse_resize_and_clear_(size, sparse_dim, dense_dim)``: ``s`` of ``size`` with no entries."""
    size = _checked_size(self, "sparse_resize_and_clear_", size, sparse_dim, dense_dim)
    return _rebuilt(self, _creation.zeros((sparse_dim, 0), dtype=_dtype.int64),
                    _creation.zeros((0, *size[sparse_dim:]), dtype=self.dtype), size, True)


def _strided(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(dispatch_error(name).replace("'SparseCPU'", "'CPU'"))
    method.__name__ = method.__qualname__ = name
    return method


for _name, _fn in (("sparse_resize_", sparse_resize_), ("sparse_resize_and_clear_", sparse_resize_and_clear_)):
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(_SparseTensor, _name, _fn)
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _strided(_name))
