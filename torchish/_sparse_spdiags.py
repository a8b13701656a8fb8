"""``torch.sparse.spdiags``: a sparse matrix from diagonals, as finite-difference and banded-matrix scripts build
their operators (``spdiags(stack([ones, -2 * ones, ones]), tensor([-1, 0, 1]), (n, n))``).

Row ``k`` of ``diagonals`` fills diagonal ``offsets[k]`` (above the main one for a positive offset): entry
``(j - offsets[k], j)`` takes ``diagonals[k, j]``, for the columns ``j`` where the entry lies inside ``shape`` and
``diagonals`` has that column (SciPy's ``spdiags`` convention). The entries come diagonal by diagonal in the order
of ``offsets``, columns ascending, in an uncoalesced COO tensor, as PyTorch's kernel lists them; ``layout=
torch.sparse_csr`` converts that. PyTorch records no derivative for it: the result requires grad when
``diagonals`` does, and its backward raises PyTorch's RuntimeError.

Differences: only entries inside ``shape`` are listed. PyTorch 2.13 lists entries past the last column for a
diagonal on or below the main one when ``diagonals`` has more columns than ``shape`` (``spdiags(ones(1, 3),
tensor([0]), (3, 2))`` has an entry at ``(2, 2)``), and writes past its buffers for an offset whose whole diagonal
lies outside ``shape``. ``layout=torch.sparse_csc`` raises NotImplementedError (torchish has no CSC tensors).

Example:
    >>> import torchish as torch
    >>> n = 3
    >>> D = torch.sparse.spdiags(torch.tensor([[1.] * n, [-2.] * n, [1.] * n]), torch.tensor([-1, 0, 1]), (n, n))
    >>> D.to_dense()
    tensor([[-2.,  1.,  0.],
            [ 1., -2.,  1.],
            [ 0.,  1., -2.]])
"""
from __future__ import annotations

import numpy as np

from . import _dtype, _layout
from .ops import creation as _creation
from .ops.elementwise import require_tensor, type_name
from .sparse import _COO, _from_entries, mark_sparse, refusing, sparse_code

_NO_DERIVATIVE = ("RuntimeError", "derivative for aten::_spdiags is not implemented")


def _check(diagonals, offsets, shape, layout):
    """PyTorch's argument errors, in its order; ``(diagonals, offsets)`` as a matrix and a vector."""
    require_tensor(diagonals, "_spdiags", 1, "diagonals")
    require_tensor(offsets, "_spdiags", 2, "offsets")
    if not isinstance(shape, (tuple, list)) or not all(isinstance(s, int) for s in shape):
        raise TypeError(f"_spdiags(): argument 'shape' (position 3) must be tuple of ints, not {type_name(shape)}")
    if layout is not None and not isinstance(layout, _layout.layout):
        raise TypeError(f"_spdiags(): argument 'layout' (position 4) must be torch.layout, not {type_name(layout)}")
    diagonals = diagonals.unsqueeze(0) if diagonals.dim() == 1 else diagonals
    if diagonals.dim() != 2:
        raise RuntimeError("Diagonals must be vector or matrix")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    offsets = offsets.unsqueeze(0) if offsets.dim() == 0 else offsets
    if offsets.dim() != 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if diagonals.shape[0] != offsets.shape[0]:
        raise RuntimeError(f"Number of diagonals ({diagonals.shape[0]}) does not match the number of offsets "
                           f"({offsets.shape[0]})")
    if layout not in (None, _layout.sparse_coo, _layout.sparse_csr, _layout.sparse_csc):
        raise RuntimeError(f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got "
                           f"{_layout_name(layout)}")
    if offsets.dtype != _dtype.int64:
        raise RuntimeError(f"Offset Tensor must have dtype Long but got {_dtype.scalar_type_name(offsets.dtype)}")
    offs = [int(k) for k in offsets.tolist()]
    if len(set(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    if layout is _layout.sparse_csc:
        raise NotImplementedError("torch.sparse.spdiags: torchish has no sparse_csc tensors; use the default "
                                  "(sparse_coo) or layout=torch.sparse_csr")
    return diagonals, offs


def _layout_name(layout):
    return {_layout.strided: "Strided"}.get(layout, str(layout))


def _entries(offsets, n_rows, n_cols, length):
    """``(rows, cols, which diagonal)`` of every entry, diagonal by diagonal, columns ascending."""
    rows, cols, diag = [], [], []
    for k, off in enumerate(offsets):
        j = np.arange(max(0, off), max(0, min(n_rows + off, n_cols, length)), dtype=np.int64)
        rows.append(j - off)
        cols.append(j)
        diag.append(np.full(j.shape, k, dtype=np.int64))
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(diag)


@sparse_code
def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of ``shape`` whose diagonal ``offsets[k]`` holds ``diagonals[k]`` (PyTorch's
    ``torch.sparse.spdiags``; see the module docstring)."""
    diagonals, offs = _check(diagonals, offsets, shape, layout)
    n_rows, n_cols = (int(s) for s in shape)
    rows, cols, which = _entries(offs, n_rows, n_cols, diagonals.shape[1])
    values = diagonals[_creation.tensor(which), _creation.tensor(cols)]
    indices = _creation.tensor(np.stack([rows, cols]), dtype=_dtype.int64)
    coalesced = rows.size < 2
    out = _from_entries(indices, values, (n_rows, n_cols), coalesced)
    if out.requires_grad:  # (PyTorch's node: NotImplemented, whose backward raises)
        out = mark_sparse(refusing(out, _NO_DERIVATIVE), _COO(indices, values.detach(), coalesced))
    else:
        out._coo = _COO(indices, values.detach(), coalesced)
    if layout is _layout.sparse_csr:
        out = out.to_sparse_csr()
    return out
