"""``torch.sparse``'s ``mm``, ``addmm``, ``sum``, ``softmax`` and ``log_softmax``, with PyTorch's gradients.

PyTorch's backward of these ops hands a sparse input a sparse gradient: the gradient at its entries only. Here the
gradient reaches the sparse tensor's dense value, so each op reads that value only where the entries are:
``mm``/``addmm`` multiply it masked to the entries (``SparseAddmmBackward0``), ``sum`` over every sparse dim sums
it masked (``SumBackward0``, ``SparseSumBackward0``), and the ops with a sparse result (``sum`` over some sparse
dims, ``softmax``) read the coalesced entries' values out of it and build the result's dense value from the
values they compute (``SparseSumBackward0``, ``SparseSoftmaxBackward0``, ``SparseLogSoftmaxBackward0``). A
tensor whose making op has no sparse backward in PyTorch (``s.unsqueeze(0)``) is read through
:func:`torchish.sparse.grad_gate`, so the backward raises PyTorch's error there.

Example:
    >>> import torchish as torch
    >>> x = torch.tensor([[0., 1.], [2., 0.]], requires_grad=True)
    >>> torch.sparse.mm(x.to_sparse(), torch.ones(2, 1)).sum().backward()
    >>> x.grad
    tensor([[0., 1.],
            [1., 0.]])
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from . import _dtype, _layout
from ._tensor import Tensor, wrap_dim
from .ops import creation as _creation, reduce as _reduce
from .ops.registry import apply, defop, overload
from .sparse import _COO, _from_entries, dense_of, dispatch_error, entries_mask, grad_gate, mark_sparse, sparse_code
from ._sparse_coo_grad import hands_sparse_grad


def _addmm_fwd(mat, mat1, mask, mat2, *, beta, alpha):
    prod = jnp.matmul(jnp.where(mask, mat1, jnp.zeros((), mat1.dtype)), mat2)
    if alpha != 1:
        prod = prod * jnp.asarray(alpha, prod.dtype)
    if mat is None or beta == 0:  # (beta=0: ``mat`` is not read, its NaNs stay out, as PyTorch's addmm)
        return prod
    return (mat if beta == 1 else mat * jnp.asarray(beta, mat.dtype)) + prod


# ``mat1`` (sparse, given as its dense value and the mask of its entries) times ``mat2``: the gradient of mat1 is
# the product's masked to the entries, as PyTorch's sparse one
_SPARSE_ADDMM = defop("sparse_coo_addmm", _addmm_fwd, grad_name="SparseAddmmBackward0")


def _check_addmm(mat, mat1, mat2):
    """PyTorch's checks of a COO ``mat1`` times a dense ``mat2`` (plus ``mat``, expanded to the product's size)."""
    if mat is not None:
        mat = mat.expand(mat1.size(0), mat2.size(1))
    sparse_dim, dense_dim = mat1._coo.indices.shape[0], mat1._coo.values.dim() - 1
    if sparse_dim != 2:
        raise RuntimeError(f"addmm: matrices expected, got {sparse_dim}D tensor")
    if dense_dim:
        raise RuntimeError(f"addmm: scalar values expected, got {dense_dim}D values")
    if mat2.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {mat2.dim()}D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}")
    for t in (mat2, mat):
        if t is not None and t.dtype != mat1.dtype:
            raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(mat1.dtype)} but found "
                               f"{_dtype.scalar_type_name(t.dtype)}")
    return mat


def _coo_addmm(mat, mat1, mat2, beta, alpha):
    mat = _check_addmm(mat, mat1, mat2)
    mask = entries_mask(mat1._coo.indices, tuple(mat1.shape), mat1.device)
    out = apply(_SPARSE_ADDMM, (mat, grad_gate(mat1), mask, mat2), beta=beta, alpha=alpha)
    if out._rg:  # (mat1's gradient is sparse, as PyTorch's)
        hands_sparse_grad(out, 1, coalesced_indices(mat1._coo, tuple(mat1.shape)))
    return out


def _spsp_fwd(a, a_mask, b, b_mask):
    zero = jnp.zeros((), a.dtype)
    return jnp.matmul(jnp.where(a_mask, a, zero), jnp.where(b_mask, b, zero))


# the product of two COO matrices (torch.sparse.mm's node: each gradient masked to its input's entries; ``@`` and
# torch.mm's: MmBackward0, unmasked)
_SPARSE_SPARSE_MM = defop("sparse_sparse_mm", _spsp_fwd, grad_name="SparseSparseMatmulBackward0")
_SPARSE_SPARSE_MM_PLAIN = overload(_SPARSE_SPARSE_MM, "MmBackward0")


def _pattern(indices, shape):
    """The 0/1 matrix of ``shape`` with ones at ``indices`` (2 x nnz)."""
    out = np.zeros(shape, np.int64)
    idx = indices.numpy()
    if idx.shape[1]:
        out[tuple(idx)] = 1
    return out


def _nonzero_indices(matrix):
    return _creation.tensor(np.stack(np.nonzero(matrix)).astype(np.int64).reshape(2, -1))


def sparse_sparse_mm(mat1, mat2, masked):
    """The COO product of two COO matrices, as PyTorch's sparse-sparse matmul makes it: coalesced, an entry
    wherever an entry of ``mat1``'s row meets one of ``mat2``'s column (its value may be zero). A sparse gradient
    reaching it gives each input a sparse gradient whose entries are the pattern of the gradient's product with
    the other (``masked``: torch.sparse.mm's, whose values off the input's entries are zero)."""
    for t in (mat1, mat2):
        sparse_dim, dense_dim = t._coo.indices.shape[0], t._coo.values.dim() - 1
        if dense_dim:
            raise RuntimeError(f"sparse_sparse_matmul_cpu: scalar values expected, got {dense_dim}D values")
        if sparse_dim != 2:
            raise RuntimeError(f"sparse_sparse_matmul_cpu: matrices expected, got {sparse_dim}D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"mat1 dtype {_dtype.scalar_type_name(mat1.dtype)} does not match mat2 dtype "
                           f"{_dtype.scalar_type_name(mat2.dtype)}")
    if not (mat1.is_floating_point() or mat1.is_complex()):
        raise NotImplementedError(f'"sparse_matmul" not implemented for \'{_dtype.scalar_type_name(mat1.dtype)}\'')
    a, b = _pattern(mat1._coo.indices, tuple(mat1.shape)), _pattern(mat2._coo.indices, tuple(mat2.shape))
    product = a @ b
    if masked:
        masks = (entries_mask(mat1._coo.indices, tuple(mat1.shape)), entries_mask(mat2._coo.indices,
                                                                                  tuple(mat2.shape)))
    else:
        masks = (_creation.ones(tuple(mat1.shape), dtype=_dtype.bool), _creation.ones(tuple(mat2.shape),
                                                                                      dtype=_dtype.bool))
    node = _SPARSE_SPARSE_MM if masked else _SPARSE_SPARSE_MM_PLAIN
    out = apply(node, (grad_gate(mat1), masks[0], grad_gate(mat2), masks[1]))
    indices = _nonzero_indices(product)
    if out._rg:
        result = (product > 0).astype(np.int64)
        hands_sparse_grad(out, 0, _nonzero_indices(result @ b.T))
        hands_sparse_grad(out, 2, _nonzero_indices(a.T @ result))
    values = Tensor.__getitem__(out, tuple(indices.unbind(0)))
    return mark_sparse(out, _COO(indices, values, True))


@sparse_code
def mm(mat1, mat2, reduce=None):
    """``mat1 @ mat2`` where either may be sparse; the product is dense except for two COO matrices
    (:func:`sparse_sparse_mm`). With ``reduce`` (a CSR ``mat1``), each row reduces its entries' products by sum,
    mean, amax or amin (:func:`torchish._sparse_csr.mm_reduce`). A COO ``mat1`` times a dense ``mat2`` gets the
    gradient at its entries only (``SparseAddmmBackward0``)."""
    if reduce is not None:
        from ._sparse_csr import mm_reduce
        return mm_reduce(mat1, mat2, reduce)
    if mat2.dim() == 1:  # (``@`` would take a vector: PyTorch's sparse.mm does not)
        if mat1.layout is _layout.sparse_csr:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{1 if mat1._coo is not None else -2})")
    if mat1._coo is not None and mat2._coo is None:
        return _coo_addmm(None, mat1, mat2, 1, 1)
    if mat1._coo is not None and mat2._coo is not None and mat2.dim() == 2:
        return sparse_sparse_mm(mat1, mat2, masked=True)
    return mat1 @ mat2


@sparse_code
def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` (its gradient at its entries only)."""
    if isinstance(mat1, Tensor) and mat1._coo is not None and isinstance(mat2, Tensor) and mat2._coo is None:
        return _coo_addmm(mat, mat1, mat2, beta, alpha)
    return mat * beta + (mat1 @ mat2) * alpha


def _entries_fwd(values, *rows, shape):
    return jnp.zeros(shape, values.dtype).at[rows].add(values)


# the dense value of a sparse result from its (coalesced) entries, under the node of the op that made them
_SUM_ENTRIES = defop("sparse_coo_from_entries", _entries_fwd, linear=True, grad_name="SparseSumBackward0")
_SOFTMAX_ENTRIES = overload(_SUM_ENTRIES, "SparseSoftmaxBackward0")
_LOG_SOFTMAX_ENTRIES = overload(_SUM_ENTRIES, "SparseLogSoftmaxBackward0")
_SUM_DENSE = overload(_reduce._SUM, "SparseSumBackward0")  # (every sparse dim summed: a dense result)


def _result(node, indices, values, shape):
    """The coalesced sparse tensor of ``shape`` with these entries, its dense value made by ``node``."""
    if not indices.shape[0]:
        return _from_entries(indices, values, shape, True)
    out = apply(node, (values, *indices.unbind(0)), shape=tuple(shape))
    return mark_sparse(out, _COO(indices, values, True))


def coalesced_indices(coo, shape):
    """The indices of ``coo``'s coalesced entries (sorted, unique)."""
    if coo.coalesced:
        return coo.indices
    sparse_shape = tuple(shape[:coo.indices.shape[0]])
    keys = np.unique(np.ravel_multi_index(tuple(coo.indices.numpy()), sparse_shape))
    return _creation.tensor(np.stack(np.unravel_index(keys, sparse_shape)).astype(np.int64).reshape(-1, len(keys)))


def coalesced_values(input):
    """``input``'s coalesced entries: their indices, and their values read from its dense value (the duplicates'
    sum), so that the gradient reaches it at the entries only."""
    indices = coalesced_indices(input._coo, tuple(input.shape))
    source = grad_gate(input)
    if not indices.shape[0]:
        values = Tensor.unsqueeze(source, 0)
    else:
        values = Tensor.__getitem__(source, tuple(indices.unbind(0)))
    if values._rg:  # (the input's gradient is sparse, as PyTorch's)
        hands_sparse_grad(values, 0, indices)
    return indices, values


@sparse_code
def sum(input, dim=None, dtype=None):  # noqa: A001 - torch.sparse.sum
    """The sum of a sparse tensor over ``dim``: a dense tensor when every sparse dimension is reduced (or ``dim`` is
    None), else a coalesced sparse tensor over the remaining index prefixes."""
    coo = input._coo
    if coo is None:  # (a strided or CSR tensor: PyTorch's errors, by whether ``dim`` is given)
        if dim is None:
            raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got "
                               f"{_layout.cpp_name(input.layout)}")
        raise NotImplementedError(f"Could not run 'aten::_indices' with arguments from the "
                                  f"'{'SparseCsrCPU' if input.layout is _layout.sparse_csr else 'CPU'}' backend.")
    if dim is None:
        return dense_of(input, coo.indices, None, strided_values=True).sum(dtype=dtype)
    dims = sorted({wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dim = coo.indices.shape[0]
    if all(d in dims for d in range(sparse_dim)):
        dense = dense_of(input, coo.indices, None, strided_values=True)
        dt = _reduce._acc_dtype(dense, dtype, None, "sum")
        return apply(_SUM_DENSE, (dense,), axis=tuple(dims), keepdims=False, dtype=dt.np)
    indices, values = coalesced_values(input)
    keep = [d for d in range(sparse_dim) if d not in dims]
    value_dims = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if value_dims:
        values = values.sum(dim=value_dims)
    if dtype is not None:
        values = values.to(dtype)
    uniq, inverse = np.unique(indices.numpy()[keep], axis=1, return_inverse=True)
    summed = _creation.zeros((uniq.shape[1], *values.shape[1:]), dtype=values.dtype)
    summed = summed.index_add(0, _creation.tensor(inverse.reshape(-1).astype(np.int64)), values)
    size = [input.shape[d] for d in keep] + [input.shape[d] for d in range(sparse_dim, input.dim()) if d not in dims]
    return _result(_SUM_ENTRIES, _creation.tensor(uniq.astype(np.int64)), summed, size)


def _softmax(input, dim, dtype, log):
    """Softmax over ``dim`` among the entries present (an absent entry counts as -inf); sparse, coalesced."""
    if input._coo is None:  # (a strided or CSR tensor: no kernel)
        raise NotImplementedError(dispatch_error(f"_sparse_{'log_' if log else ''}softmax",
                                                 "SparseCsrCPU" if input.layout is _layout.sparse_csr else "CPU"))
    indices, values = coalesced_values(input)
    node = _LOG_SOFTMAX_ENTRIES if log else _SOFTMAX_ENTRIES
    dim = wrap_dim(dim, input.dim())
    if dtype is not None:
        values = values.to(dtype)
    if not values.is_floating_point():
        name = "log_softmax" if log else "softmax"
        raise NotImplementedError(f'"{name}" not implemented for \'{_dtype.scalar_type_name(values.dtype)}\'')
    sparse_dim = indices.shape[0]
    if dim >= sparse_dim:
        fn = values.log_softmax if log else values.softmax
        return _result(node, indices, fn(dim - sparse_dim + 1), tuple(input.shape))
    rows = indices.numpy()
    others = np.delete(rows, dim, axis=0)
    _, group = np.unique(others, axis=1, return_inverse=True) if others.shape[0] else (None, np.zeros(rows.shape[1]))
    group = _creation.tensor(group.reshape(-1).astype(np.int64))
    n_groups = int(group.max()) + 1 if group.numel() else 0
    shape = (n_groups, *values.shape[1:])
    index = group.view(-1, *([1] * (values.dim() - 1))).expand_as(values)
    peak = _creation.zeros(shape, dtype=values.dtype).scatter_reduce(0, index, values.detach(), "amax",
                                                                     include_self=False)
    shifted = values - peak[group]
    total = _creation.zeros(shape, dtype=values.dtype).index_add(0, group, shifted.exp())
    out = shifted - total.log()[group] if log else shifted.exp() / total[group]
    return _result(node, indices, out, tuple(input.shape))


@sparse_code
def softmax(input, dim, *, dtype=None):
    """``torch.sparse.softmax``: softmax over ``dim`` among the entries present (absent ones count as -inf)."""
    return _softmax(input, dim, dtype, log=False)


@sparse_code
def log_softmax(input, dim, *, dtype=None):
    """``torch.sparse.log_softmax``: log-softmax over ``dim`` among the entries present."""
    return _softmax(input, dim, dtype, log=True)
