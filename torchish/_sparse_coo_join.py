"""``torch.cat`` and ``torch.stack`` of COO tensors: a COO tensor with the entries of all of them, as PyTorch's
sparse cat makes it (each tensor's entries in turn, uncoalesced ones too, their index along a sparse ``dim``
shifted by the sizes before it; along a dense dim the values padded with zeros to the joined size; never
flagged coalesced). ``stack`` is the cat of the tensors unsqueezed at ``dim``. A dense tensor among them is
PyTorch's RuntimeError. Before, torchish joined the dense values into a dense tensor.

The dense value is the dense op's (``CatBackward0``/``StackBackward0``). A sparse gradient reaching a cat's result
fails as PyTorch's backward does (its narrow of a sparse gradient); one reaching a stack's result reaches each
input sparse, at its entries (PyTorch's select of it; before, torchish's were dense). A dense gradient stays dense.

Example:
    >>> import torchish as torch
    >>> s = torch.tensor([[0.0, 2.0]]).to_sparse()
    >>> torch.cat([s, s])._indices()
    tensor([[0, 1],
            [1, 1]])
"""
from __future__ import annotations

from ._tensor import Tensor, wrap_dim
from .ops import creation as _creation, join as _join
from .sparse import _COO, coalesced_indices, dispatch_error, mark_sparse
from ._sparse_coo_grad import hands_sparse_grad

_AS_STRIDED = ("NotImplementedError", dispatch_error("as_strided"))


def cat_sparse(tensors, dim, stacked):
    """The COO tensor joining the COO ``tensors`` along ``dim`` (a new dim when ``stacked``)."""
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or t._coo is None:
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at position {i}.")
    inputs = tensors
    if stacked:
        dim = wrap_dim(dim, tensors[0].dim() + 1)
        tensors = [t.unsqueeze(dim) for t in tensors]
        dense = _join.stack(inputs, dim)  # (the dense value, with the dense op's checks and dtype)
        if dense._rg:  # (a sparse gradient reaches each input sparse: PyTorch's select of it, never coalesced)
            for i, t in enumerate(inputs):
                hands_sparse_grad(dense, i, coalesced_indices(t._coo, tuple(t.shape)), coalesced=False,
                                  when_sparse=True)
    else:
        dense = _join.cat(tensors, dim)
    dim = wrap_dim(dim, dense.dim())
    sparse_dim = tensors[0]._coo.indices.shape[0]
    for i, t in enumerate(tensors):
        if t._coo.indices.shape[0] != sparse_dim:
            raise RuntimeError(f"All tensors must have the same sparse_dim {sparse_dim}, but tensor at position {i} "
                               f"has {t._coo.indices.shape[0]}")
    indices, values, offset = [], [], 0
    for t in tensors:
        coo = t._coo
        rows, vals = coo.indices, coo.values.to(dense.dtype)
        if dim < sparse_dim:
            if offset:
                shift = _creation.zeros((sparse_dim, 1), dtype=rows.dtype)
                shift[dim, 0] = offset
                rows = rows + shift
        else:
            vals = _padded(vals, dim - sparse_dim + 1, offset, dense.shape[dim])
        indices.append(rows)
        values.append(vals)
        offset += t.shape[dim]
    coo = _COO(_join.cat(indices, 1), _join.cat(values), False)
    if not stacked:
        coo.refuse = _AS_STRIDED
    return mark_sparse(dense, coo)


def _padded(values, axis, offset, total):
    """``values`` placed at ``offset`` along ``axis`` in zeros of size ``total`` there."""
    size = values.shape[axis]
    parts = []
    if offset:
        parts.append(_creation.zeros((*values.shape[:axis], offset, *values.shape[axis + 1:]), dtype=values.dtype))
    parts.append(values)
    if total - offset - size:
        parts.append(_creation.zeros((*values.shape[:axis], total - offset - size, *values.shape[axis + 1:]),
                                     dtype=values.dtype))
    return _join.cat(parts, axis) if len(parts) > 1 else values
