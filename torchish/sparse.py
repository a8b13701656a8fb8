"""``torch.sparse_coo_tensor`` and the ``torch.sparse`` namespace: COO sparse tensors, held densely.

A sparse COO tensor here is a Tensor whose value is the dense array its entries make (duplicates summed), with its
indices and values kept beside it (``Tensor._coo``). Dense arithmetic on it (``A @ x``, ``torch.sparse.mm``,
``torch.spmm``, ``A.to_dense()``) is ordinary ops on that value, so gradients reach ``values`` and the dense operand
as in PyTorch; the COO methods (``indices``, ``values``, ``coalesce``, ``_nnz``, ...) read the kept entries, and
``is_sparse``, ``layout``, printing and ``numpy()`` answer as for PyTorch's sparse tensors.

The ops PyTorch runs sparse-to-sparse that scripts use on adjacency matrices keep the result sparse, with
PyTorch's entries: ``t``/``transpose``, ``clone``, dtype casts, negation, ``*``/``/`` by a scalar, ``+``/``-`` of
two sparse tensors (PyTorch's merge of the two entry lists); the shape ops and indexing of
:mod:`torchish._sparse_coo_shape` (``unsqueeze``, ``select``, ``permute``, ``narrow_copy``, ``index_select``,
``A[i]``), the elementwise ops of :mod:`torchish._sparse_coo_unary` (``abs``, ``sqrt``, ``sin``, ``relu``, ``pow``,
``isnan``...), ``torch.sparse.mm``/``addmm``/``sum``/``softmax``/``log_softmax`` (:mod:`torchish._sparse_coo_math`),
and :mod:`torchish._sparse_coo_ops` (``A.T``, ``A.sum(1)``, ``A * x``, ``A.bool()``, ``zeros_like``,
``sparse_mask``...) and :mod:`torchish._sparse_coo_join` (``cat``/``stack``); ``A @ B`` of two COO matrices
is COO (:func:`torchish._sparse_coo_math.sparse_sparse_mm`); ``pickle`` and ``torch.save`` keep the entries
(PyTorch's ``_rebuild_sparse_tensor`` record: :func:`sparse_reduction`, :func:`rebuild_sparse`); ``sparse_resize_`` is in
:mod:`torchish._sparse_coo_resize`. Their function forms (``torch.abs(A)``, ``F.relu(A)``) do the same
(:mod:`torchish._sparse_coo_functions`). The ops PyTorch has no
sparse kernel for (``A.exp()``, ``A.mean()``, ``A == 0``...) raise its errors (:mod:`torchish._sparse_coo_refused`).

Gradients are PyTorch's: ``A.to_dense()``, ``torch.sparse.mm(A, B)`` and the others whose backward hands ``A`` a
sparse gradient mask it to A's entries, and make it a sparse tensor (so a sparse leaf's ``.grad`` has PyTorch's
layout: :mod:`torchish._sparse_coo_grad`); where PyTorch's backward has no sparse kernel (a sparse gradient
reaching ``A.unsqueeze(0)``, any gradient reaching ``A.sqrt()``) the backward raises PyTorch's error
(:func:`grad_gate`).

Differences: the dense value is materialised (memory grows with the full size, not the number of entries); an
``einsum`` that multiplies a sparse operand elementwise (``'ij,ij->ij'``) returns a dense tensor with the same values
(one that sums over a label of two operands raises PyTorch's error); an index outside the size is refused even with
invariant checks off (:mod:`torchish._sparse_invariants`), where PyTorch builds a tensor its later ops cannot use.

Example:
    >>> import torchish as torch
    >>> A = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> torch.sparse.mm(A, torch.ones(3, 1)).flatten()
    tensor([3., 9.])
"""
from __future__ import annotations

import threading

import jax.numpy as jnp
import numpy as np

from . import _dtype, _layout
from ._subclass import _disabled_torch_function_impl
from ._tensor import Tensor, wrap_dim
from .ops import copying as _copying, creation as _creation
from .autograd.grad_mode import is_grad_enabled
from .ops.registry import NotDifferentiable, apply, defop, overload
from ._sparse_invariants import check_sparse_tensor_invariants, checking

__all__ = ["mm", "addmm", "sampled_addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants", "FloatTensor", "DoubleTensor", "HalfTensor",
           "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor"]


class _COO:
    """The entries of a sparse tensor: ``indices`` (int64, sparse_dim x nnz), ``values`` (nnz x dense dims).
    ``contiguous``: whether PyTorch's values tensor would be contiguous (False for a sparse embedding gradient
    whose output gradient was a broadcast): its sparse add concatenates the entry lists instead of merging them.
    ``refuse``: None, or ``(exception name, message)``: what PyTorch's backward raises when a sparse gradient
    reaches the tensor (the op that made it, ``unsqueeze``/``select``..., has no sparse kernel for its backward);
    see :func:`grad_gate`."""

    __slots__ = ("indices", "values", "coalesced", "contiguous", "refuse")

    def __init__(self, indices, values, coalesced, contiguous=True, refuse=None):
        self.indices, self.values, self.coalesced, self.contiguous = indices, values, coalesced, contiguous
        self.refuse = refuse

    def detach(self):
        return _COO(self.indices, self.values.detach(), self.coalesced, self.contiguous)


class _SparseTensor(Tensor):
    """A sparse tensor's class: a Tensor (its dense value) whose ops PyTorch runs sparse-to-sparse keep their
    entries (the methods installed below). Ordinary tensors pay nothing for them."""
    __slots__ = ()
    __torch_function__ = _disabled_torch_function_impl  # (torchish's own: results keep the classes ops give)

    def __reduce_ex__(self, protocol):  # (pickled as PyTorch pickles it: its entries, not its dense value)
        if self._coo is None:
            return Tensor.__reduce_ex__(self, protocol)
        return rebuild_sparse, sparse_reduction(self)


_CODE = threading.local()  # depth: >0 while torchish's sparse code runs (torchish._sparse_coo_functions)


def sparse_code(fn):
    """``fn`` (torchish's code for COO tensors) run with :data:`_CODE` marked: the dense functions it calls on
    the way (``Tensor.t``, ``torch.cat``, ``Tensor.__getitem__`` of a COO tensor) run their own code, not the
    sparse form that their function makes of a call from a program."""
    def marked(*args, **kwargs):
        if getattr(_CODE, "depth", 0):
            return fn(*args, **kwargs)
        _CODE.depth = 1
        try:
            return fn(*args, **kwargs)
        finally:
            _CODE.depth = 0
    marked.__name__, marked.__qualname__, marked.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    marked.__module__, marked.__wrapped__ = fn.__module__, fn
    return marked


def mark_sparse(t, coo):
    """Make ``t`` a sparse tensor with entries ``coo``."""
    t._coo = coo
    if type(t) is Tensor:
        t.__class__ = _SparseTensor
        if not _functions_active[0]:  # (the first COO tensor: torch.abs(s), F.relu(s)... become sparse-aware)
            from ._sparse_coo_functions import activate
            activate()
    return t


def _as_tensor(x, dtype=None):
    return x if isinstance(x, Tensor) else _creation.tensor(x, dtype=dtype)


def sparse_reduction(t):
    """``(layout, data)`` that :func:`rebuild_sparse` makes ``t`` again from, as PyTorch pickles a sparse tensor
    (``pickle``, ``torch.save``): a COO tensor's raw ``(indices, values, size, is_coalesced)``, a CSR tensor's
    ``(crow_indices, col_indices, values, size)``; None for any other tensor."""
    from ._tensor import Size
    if t._coo is not None:
        coo = t._coo
        return _layout.sparse_coo, (coo.indices, coo.values.detach(), Size(t.shape), bool(coo.coalesced))
    csr = getattr(t, "_csr", None)
    if csr is None or t.layout is not _layout.sparse_csr:
        return None
    values = csr.values.detach()  # (PyTorch saves values(), which requires grad with the CSR tensor)
    return _layout.sparse_csr, (csr.crow, csr.col, values.requires_grad_(t.requires_grad), Size(t.shape))


def rebuild_sparse(layout, data):
    """PyTorch's ``torch._utils._rebuild_sparse_tensor``: the sparse tensor of ``layout`` from what
    :func:`sparse_reduction` gives (a COO tensor's ``data`` may also be PyTorch's older ``(indices, values, size)``);
    its entries are checked, as ``torch.load`` validates the sparse tensors it loaded."""
    if layout is _layout.sparse_coo:
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) > 3 else None
        return sparse_coo_tensor(indices, values, size, check_invariants=True, is_coalesced=coalesced)
    if layout is _layout.sparse_csr:
        from ._sparse_csr import sparse_csr_tensor
        crow, col, values, size = data
        return sparse_csr_tensor(crow, col, values, size, check_invariants=True)
    raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")


def _from_entries(indices, values, size, coalesced, *, device=None, requires_grad=False):
    """The sparse tensor of ``size`` with these entries: its value sums them into zeros (an accumulating
    index_put, so the gradient of each value is the dense gradient at its index)."""
    sparse_dim = indices.shape[0]
    dense = _creation.zeros(size, dtype=values.dtype, device=device)
    if requires_grad:
        values = values.detach()
    if sparse_dim == 0:
        dense = dense + values.sum(0)
    elif indices.shape[1]:
        dense = dense.index_put(tuple(indices.unbind(0)), values, accumulate=True)
    if requires_grad:
        dense.requires_grad_(True)
    return mark_sparse(dense, _COO(indices, values, coalesced))


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with entries ``values[k]`` at ``indices[:, k]`` (PyTorch's ``torch.sparse_coo_tensor``).
    Indices of any real dtype are read as int64. ``check_invariants`` (default: the state of
    :class:`check_sparse_tensor_invariants`) checks the indices against ``size``; torchish, which places each entry
    in a dense value, refuses an index it cannot place with the same error either way."""
    check = checking(check_invariants)
    indices = _as_tensor(indices)
    values = _as_tensor(values, dtype)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if indices.dim() != 2:
        if not check and indices.dim() == 1 and size is not None and \
                len(size) != indices.shape[0] + max(values.dim() - 1, 0):  # (PyTorch's unchecked path reads it so)
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {indices.shape[0]}, dense_dim = {max(values.dim() - 1, 0)}")
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        values = values.reshape(1)
    if indices.dtype.is_complex:
        raise RuntimeError(f"indices must be an int64 tensor, got {indices.dtype}")
    indices = indices.long()  # (PyTorch converts any real indices: 1.7 -> 1, True -> 1)
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values.shape[0]}")
    dense_shape = tuple(values.shape[1:])
    idx = indices.numpy()
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sparse_dim
        size = size + dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {len(dense_shape)}")
    if size[sparse_dim:] != dense_shape:
        raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[sparse_dim:]]}, got "
                           f"{list(values.shape)}")
    for d in range(sparse_dim if nnz else 0):
        lo, hi = int(idx[d].min()), int(idx[d].max())
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{hi}")
    coalesced = nnz < 2 if is_coalesced is None else bool(is_coalesced)
    return _from_entries(indices, values, size, coalesced, device=device, requires_grad=requires_grad)


def _require(self, what, kind="sparse coordinate tensor"):
    if self._coo is None:
        raise RuntimeError(f"{what} expected {kind} layout but got Strided")
    return self._coo


def _coalesced_entries(coo, size):
    """``coo``'s entries coalesced: indices sorted and unique, the values of duplicates summed."""
    sparse_size = tuple(size[:coo.indices.shape[0]])
    keys = np.ravel_multi_index(tuple(coo.indices.numpy()), sparse_size)
    uniq, inverse = np.unique(keys, return_inverse=True)
    indices = _creation.tensor(np.stack(np.unravel_index(uniq, sparse_size)).astype(np.int64).reshape(-1, len(uniq)))
    values = _creation.zeros((len(uniq), *coo.values.shape[1:]), dtype=coo.values.dtype)
    values = values.index_add(0, _creation.tensor(inverse.reshape(-1).astype(np.int64)), coo.values)
    return _COO(indices, values, True)


# the sparse results that are a copy of their input's dense value, under the node PyTorch names: to_sparse()
# / to_sparse(layout=...) ToSparseBackward1, to_sparse(sparse_dim) ToSparseBackward0, coalesce CoalesceBackward0
_TO_SPARSE = overload(_copying._CLONE, "ToSparseBackward1")
_TO_SPARSE_DIM = overload(_copying._CLONE, "ToSparseBackward0")
_COALESCE = overload(_copying._CLONE, "CoalesceBackward0")


def _coalesce(self):
    coo = _require(self, "coalesce")
    if coo.coalesced:
        return self
    out = _coalesced_entries(coo, tuple(self.shape))
    out.refuse = coo.refuse
    return passes_sparse_grad(mark_sparse(apply(_COALESCE, (self,)), out), (self,))


def _is_coalesced(self):
    return _require(self, "is_coalesced").coalesced


def _indices(self):
    coo = _require(self, "indices")
    if not coo.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return coo.indices


# ``values()`` of a coalesced tensor that requires grad: its dense value read at the entries (ValuesBackward0; the
# gradient reaches the tensor sparse, as PyTorch's)
_VALUES = defop("sparse_coo_values", lambda x, *rows: x[rows], linear=True, grad_name="ValuesBackward0")


def _values(self):
    coo = _require(self, "values", "sparse tensor")
    if not coo.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    if not self._rg or not coo.indices.shape[0] or not is_grad_enabled():
        return coo.values
    out = apply(_VALUES, (grad_gate(self), *coo.indices.unbind(0)))
    return hands_sparse_grad(out, 0, coo.indices, contiguous=False)


def _raw(what, field):
    def get(self):
        if self._coo is None:
            raise NotImplementedError(f"Could not run 'aten::{what}' with arguments from the 'CPU' backend.")
        return getattr(self._coo, field)
    return get


def _nnz(self):
    if self._coo is None:
        raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend.")
    return self._coo.indices.shape[1]


def _sparse_dim(self):
    return 0 if self._coo is None else self._coo.indices.shape[0]


def _dense_dim(self):
    return self.dim() if self._coo is None else self._coo.values.dim() - 1


# to_dense of a sparse tensor (ToDenseBackward0): its gradient is masked to the tensor's entries, as PyTorch's
# ``grad.sparse_mask(self)`` (the default ``masked_grad=True``), or passed whole with ``masked_grad=False``
_TO_DENSE = defop("sparse_to_dense", lambda x, mask: jnp.where(mask, x, jnp.zeros((), x.dtype)), linear=True,
                  grad_name="ToDenseBackward0")
_TO_DENSE_UNMASKED = overload(_copying._CLONE, "ToDenseBackward0")


def entries_mask(indices, shape, device=None):
    """The bool tensor of ``shape`` that is True at the entries ``indices`` (sparse_dim x nnz) name (all their
    dense dims)."""
    idx = np.asarray(indices.detach()._concrete())
    sparse_dim, nnz = idx.shape
    mask = np.zeros(tuple(shape[:sparse_dim]), dtype=bool)
    if nnz:
        mask[tuple(idx)] = True
    mask = np.broadcast_to(mask.reshape(mask.shape + (1,) * (len(shape) - sparse_dim)), tuple(shape))
    return _creation.tensor(np.ascontiguousarray(mask), device=device)


def dispatch_error(aten_name, backend="SparseCPU"):
    """PyTorch's NotImplementedError for an op without a kernel for ``backend`` (sparse COO tensors by default; a
    CSR tensor's is "SparseCsrCPU", a strided one's "CPU"): its first sentences."""
    return (f"Could not run 'aten::{aten_name}' with arguments from the '{backend}' backend. This could be because "
            "the operator doesn't exist for this backend, or was omitted during the selective/custom build process "
            "(if using custom build).")


_ERRORS = {"NotImplementedError": NotImplementedError, "RuntimeError": RuntimeError}
# an identity whose backward raises (a sparse gradient that PyTorch's backward of the op before has no kernel for)
_REFUSED = defop("sparse_grad_refused", lambda x, *, error: x, linear=True, grad_name="NotImplemented",
                 vjp=lambda g, x, out, error: NotDifferentiable(_ERRORS[error[0]](error[1])))


def refusing(t, error):
    """``t`` behind a node whose backward raises ``error`` (``(exception name, message)``)."""
    return apply(_REFUSED, (t,), error=error)


def grad_gate(t):
    """``t`` as an op that hands ``t`` a sparse gradient in PyTorch should read it: behind a node raising PyTorch's
    error where the op that made ``t`` cannot take a sparse gradient (``t._coo.refuse``: ``s.unsqueeze(0)
    .to_dense()``'s backward fails at the unsqueeze), else ``t`` itself. Ops whose backward gives a dense gradient
    (``s.unsqueeze(0).sum()``, ``torch.mm``) read ``t`` directly, as PyTorch's backward works there."""
    coo = t._coo
    if coo is None or coo.refuse is None or not t.requires_grad:
        return t
    return refusing(t, coo.refuse)


def dense_of(self, indices, masked_grad, strided_values=False):
    """``to_dense()`` of the sparse tensor ``self`` whose entries are at ``indices``. Its backward hands a COO
    ``self`` a sparse gradient at its coalesced entries (``strided_values``: PyTorch's values of it are a strided
    view, so the leaf's ``.grad`` keeps its coalesced flag; see :mod:`torchish._sparse_coo_grad`)."""
    coo = self._coo
    self = grad_gate(self)
    if masked_grad is False:
        out = apply(_TO_DENSE_UNMASKED, (self,))
        return hands_sparse_grad(out, 0, _NONZERO) if coo is not None and out._rg else out
    out = apply(_TO_DENSE, (self, entries_mask(indices, tuple(self.shape), self.device)))
    if coo is not None and out._rg:
        hands_sparse_grad(out, 0, coalesced_indices(coo, tuple(self.shape)), contiguous=not strided_values)
    return out


def _to_dense(self, dtype=None, *, masked_grad=None):
    if self._coo is None:
        return self if dtype is None else self.to(dtype)
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    return dense_of(self, self._coo.indices, masked_grad)


def _to_sparse(self, *args, sparse_dim=None, layout=None, blocksize=None, dense_dim=None):
    """``x.to_sparse()`` / ``x.to_sparse(sparse_dim)``: the COO tensor of the nonzero entries (for a sparse_dim below
    ``x.dim()``, of the index prefixes whose trailing slice has a nonzero)."""
    if len(args) > 1:
        raise TypeError(f"to_sparse() takes at most 1 positional argument ({len(args)} given)")
    if args and sparse_dim is not None:
        raise TypeError("to_sparse() got multiple values for argument 'sparse_dim'")
    sparse_dim = args[0] if args else sparse_dim
    node = _TO_SPARSE if sparse_dim is None else _TO_SPARSE_DIM
    if layout is _layout.sparse_csr and sparse_dim is None and blocksize is None:
        from ._sparse_csr import to_sparse_csr
        return to_sparse_csr(self, dense_dim, _node=_TO_SPARSE)
    if layout not in (None, _layout.sparse_coo) or blocksize is not None or dense_dim is not None:
        raise NotImplementedError(f"to_sparse: only the sparse_coo layout is supported, got {layout}")
    if self._coo is not None:
        return self
    sparse_dim = self.dim() if sparse_dim is None else int(sparse_dim)
    if not 0 < sparse_dim <= self.dim():
        raise RuntimeError(f"sparse_dim argument must be in [0, {self.dim()}] range, but {sparse_dim} is given")
    nonzero = np.asarray(self.detach()._concrete()) != 0
    if sparse_dim < self.dim():
        nonzero = nonzero.reshape(*nonzero.shape[:sparse_dim], -1).any(-1)
    idx = np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(sparse_dim, -1)
    indices = _creation.tensor(idx)
    values = self[tuple(indices.unbind(0))]
    return mark_sparse(apply(node, (self,)), _COO(indices, values, True))  # (the gradient to this tensor)


for _name, _fn in (("coalesce", _coalesce), ("is_coalesced", _is_coalesced), ("indices", _indices),
                   ("values", _values), ("_indices", _raw("_indices", "indices")),
                   ("_values", _raw("_values", "values")), ("_nnz", _nnz), ("sparse_dim", _sparse_dim),
                   ("dense_dim", _dense_dim), ("to_dense", _to_dense), ("to_sparse", _to_sparse)):
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(Tensor, _name, sparse_code(_fn))


# ops PyTorch runs sparse-to-sparse: the dense result (which carries the gradient) also keeps the result's entries

def _transposed(self, coo, out, dim0=0, dim1=1):
    sparse_dim = coo.indices.shape[0]
    dim0, dim1 = wrap_dim(dim0, self.dim()), wrap_dim(dim1, self.dim())
    if dim0 == dim1 and dim0 >= sparse_dim:
        return _COO(coo.indices, coo.values, coo.coalesced)
    if dim0 >= sparse_dim or dim1 >= sparse_dim:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sparse_dim}, "
                           f"d0: {dim0}, d1: {dim1}")
    rows = list(range(sparse_dim))
    rows[dim0], rows[dim1] = dim1, dim0
    return _COO(coo.indices[rows], coo.values, coo.coalesced and dim0 == dim1)


def _scaled(op):
    def entries(self, coo, out, other, **kwargs):
        if isinstance(other, Tensor) and other.dim() or not isinstance(other, (Tensor, int, float)):
            return None
        if kwargs.get("rounding_mode") is not None:  # (a rounded quotient of duplicates' sum: coalesced first)
            coo = coo if coo.coalesced else _coalesced_entries(coo, tuple(self.shape))
        return _COO(coo.indices, getattr(coo.values, op)(other, **kwargs).to(out.dtype), coo.coalesced)
    return entries


def _merge(a, b):
    """PyTorch's CPU sparse add: one pass over both index lists as if each were sorted, an entry of ``a`` and one of
    ``b`` at the same index making one output entry. Returns the output indices and each input entry's position."""
    na, nb = a.shape[1], b.shape[1]
    pos_a, pos_b, rows = np.empty(na, np.int64), np.empty(nb, np.int64), []
    i = j = 0
    ka, kb = a.T.tolist(), b.T.tolist()
    while i < na or j < nb:
        cmp = -1 if i >= na else 1 if j >= nb else (ka[i] < kb[j]) - (ka[i] > kb[j])
        pos = len(rows)
        rows.append(ka[i] if cmp >= 0 else kb[j])
        if cmp >= 0:
            pos_a[i], i = pos, i + 1
        if cmp <= 0:
            pos_b[j], j = pos, j + 1
    return np.array(rows, np.int64).T.reshape(a.shape[0], -1), pos_a, pos_b


def _merged(coo, other, dtype, size=None):
    """The entries of the sum of two sparse tensors' entries ``coo`` and ``other`` (PyTorch's CPU sparse add: a
    merge, or where a values tensor is not contiguous the concatenation, coalesced once it has more entries than
    the tensor of ``size`` has elements)."""
    mine, theirs = coo.values.to(dtype), other.values.to(dtype)
    if not other.indices.shape[1]:
        return _COO(coo.indices, mine, coo.coalesced)
    if not coo.indices.shape[1]:
        return _COO(other.indices, theirs, other.coalesced)
    if not (coo.contiguous and other.contiguous):
        from .ops import join as _join
        out = _COO(_join.cat([coo.indices, other.indices], 1), _join.cat([mine, theirs]), False)
        if size is None or out.indices.shape[1] <= np.prod(size):
            return out
        out = _coalesced_entries(out, size)
        out.coalesced = False  # (PyTorch aliases the coalesced entries into the result: its flag stays unset)
        return out
    rows, pos_a, pos_b = _merge(coo.indices.numpy(), other.indices.numpy())
    values = _creation.zeros((rows.shape[1], *mine.shape[1:]), dtype=dtype)
    values = values.index_add(0, _creation.tensor(pos_a), mine).index_add(0, _creation.tensor(pos_b), theirs)
    return _COO(_creation.tensor(rows), values, coo.coalesced and other.coalesced)


def _sparse_other(other):
    if not isinstance(other, Tensor) or other._coo is None:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    return other._coo


def _summed(sign):
    def entries(self, coo, out, other):
        theirs = _sparse_other(other)
        return _merged(coo, _COO(theirs.indices, theirs.values * sign, theirs.coalesced, theirs.contiguous),
                       out.dtype, tuple(out.shape))
    return entries


def _same_entries(self, coo, out, *args, **kwargs):
    return _COO(coo.indices, coo.values.to(out.dtype), coo.coalesced)


def _negated(self, coo, out):
    return _COO(coo.indices, coo.values.neg(), coo.coalesced)


def _keeps_sparse(name, entries, rows=None):
    """``Tensor.<name>`` for sparse tensors: its dense result also keeps the entries ``entries(self,
    coo, out, *args, **kwargs)`` makes (None: the result is dense, where torchish does not follow PyTorch). A
    sparse gradient passes back through it sparse to its sparse inputs; ``rows(self, *args, **kwargs)``: the input
    dim of each index row of the result, where the op reorders them."""
    dense_method = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        out = dense_method(self, *args, **kwargs)
        if self._coo is not None and out is not self:
            coo = entries(self, self._coo, out, *args, **kwargs)
            if coo is not None:
                if coo.refuse is None:  # (these ops pass a sparse gradient on: a refusal before them still holds)
                    coo.refuse = self._coo.refuse
                mark_sparse(out, coo)
                if out._rg:
                    sources = [self, *(a for a in args if isinstance(a, Tensor) and a._coo is not None)]
                    passes_sparse_grad(out, sources, None if rows is None else rows(self, *args, **kwargs))
        return out
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense_method.__doc__
    setattr(_SparseTensor, name, method)


# in-place ops PyTorch runs on sparse tensors (a gradient scaled or summed by hand, clip_grads_with_norm_): the
# entries are computed from the entries before the dense op rebinds the value, then set (idempotent, so a dense
# method that calls another of these wrappers on the way changes nothing twice)

def _inplace_scaled(op):
    def entries(self, coo, other):
        if isinstance(other, Tensor) and other.dim() > coo.values.dim() - 1 or \
                not isinstance(other, (Tensor, int, float)):
            return None  # (other's dims reach the sparse dims: the result keeps no entries here)
        return _COO(coo.indices, getattr(coo.values, op)(other).to(self.dtype), coo.coalesced)
    return entries


def _inplace_summed(sign):
    def entries(self, coo, other, alpha=1):
        theirs = _sparse_other(other)
        values = theirs.values * (sign * alpha) if sign * alpha != 1 else theirs.values
        return _merged(coo, _COO(theirs.indices, values, theirs.coalesced, theirs.contiguous), self.dtype,
                       tuple(self.shape))
    return entries


def _refused(aten_name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(dispatch_error(aten_name))
    return method


def _inplace_negated(self, coo):
    return _COO(coo.indices, coo.values.neg(), coo.coalesced)


def _inplace_copied(self, coo, src, non_blocking=False):
    if not isinstance(src, Tensor) or src._coo is None:
        return None
    return _COO(src._coo.indices, src._coo.values.to(self.dtype), src._coo.coalesced)


def _keeps_sparse_inplace(name, entries):
    dense_method = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        coo = self._coo
        new = None if coo is None else entries(self, coo, *args, **kwargs)
        out = dense_method(self, *args, **kwargs)
        if coo is not None:
            if new is not None and new.refuse is None:
                new.refuse = coo.refuse
            self._coo = new  # (None: the value stays, now dense)
        return out
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense_method.__doc__
    setattr(_SparseTensor, name, method)


for _name, _fn in (("mul_", _inplace_scaled("mul")), ("__imul__", _inplace_scaled("mul")),
                   ("div_", _inplace_scaled("div")), ("__itruediv__", _inplace_scaled("div")),
                   ("neg_", _inplace_negated), ("add_", _inplace_summed(1)), ("__iadd__", _inplace_summed(1)),
                   ("sub_", _inplace_summed(-1)), ("__isub__", _inplace_summed(-1)), ("copy_", _inplace_copied)):
    _keeps_sparse_inplace(_name, _fn)
for _name in ("clamp_", "fill_"):  # (PyTorch's sparse tensors refuse them: a clamped gradient kept stale entries)
    setattr(_SparseTensor, _name, _refused(_name if _name != "fill_" else "fill_.Scalar"))


def _unsupported(message):
    def method(self, *args, **kwargs):
        raise RuntimeError(message)
    return method


# The strided views PyTorch's sparse tensors have no kernel for (parameters_to_vector of a sparse gradient fails
# at its view(-1)); torchish viewed the dense value
for _name, _aten in (("view", "view"), ("view_as", "view"), ("narrow", "as_strided"), ("squeeze", "as_strided"),
                     ("as_strided", "as_strided")):
    setattr(_SparseTensor, _name, _refused(_aten))
for _name, _message in (("reshape", "reshape is not implemented for sparse tensors"),
                        ("flatten", "reshape is not implemented for sparse tensors"),
                        ("expand", "expand is unsupported for Sparse tensors"),
                        ("contiguous", "unsupported memory format option Contiguous")):
    setattr(_SparseTensor, _name, _unsupported(_message))


def _zero_(self):
    """``zero_()`` of a sparse tensor: no entries left (PyTorch's ``sparse_resize_and_clear_``; coalesced)."""
    Tensor.zero_(self)
    coo = self._coo
    indices = _creation.zeros((coo.indices.shape[0], 0), dtype=_dtype.int64)
    values = _creation.zeros((0, *coo.values.shape[1:]), dtype=self.dtype)
    self._coo = _COO(indices, values, True)
    return self


_SparseTensor.zero_ = _zero_


def _t(self, coo, out):
    sparse_dim, dense_dim = coo.indices.shape[0], coo.values.dim() - 1
    if sparse_dim > 2 or dense_dim:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {sparse_dim} "
                           f"sparse and {dense_dim} dense dimensions")
    return _transposed(self, coo, out, 0, 1 if self.dim() > 1 else 0)


def _swapped_rows(self, dim0=0, dim1=1):
    """The index rows of a transpose of ``self``: sparse dims ``dim0`` and ``dim1`` swapped (None otherwise)."""
    sparse_dim = self._coo.indices.shape[0]
    dim0, dim1 = wrap_dim(dim0, self.dim()), wrap_dim(dim1, self.dim())
    if dim0 == dim1 or dim0 >= sparse_dim or dim1 >= sparse_dim:
        return None
    rows = list(range(sparse_dim))
    rows[dim0], rows[dim1] = dim1, dim0
    return tuple(rows)


_keeps_sparse("t", _t, lambda self: _swapped_rows(self, 0, 1 if self.dim() > 1 else 0))
_keeps_sparse("transpose", _transposed, _swapped_rows)
for _name, _fn in (("clone", _same_entries), ("to", _same_entries), ("float", _same_entries),
                   ("double", _same_entries), ("half", _same_entries), ("neg", _negated), ("__neg__", _negated),
                   ("mul", _scaled("mul")), ("__mul__", _scaled("mul")), ("__rmul__", _scaled("mul")),
                   ("div", _scaled("div")), ("__truediv__", _scaled("div")),
                   ("__add__", _summed(1)), ("__sub__", _summed(-1))):
    _keeps_sparse(_name, _fn)  # (the add/sub methods: torchish._sparse_coo_ops)


# the torch.sparse namespace (mm, addmm, sum, softmax and log_softmax: torchish._sparse_coo_math)

@sparse_code
def spmm(input, mat2, *, out=None):
    """``torch.spmm``: ``input @ mat2`` for a sparse ``input`` (a top-level function in PyTorch)."""
    from .ops.linalg import mm as _mm
    return _mm(input, mat2, out=out)


def _legacy_type(name, dt):
    """``torch.sparse.FloatTensor(indices, values, size)`` and ``torch.sparse.FloatTensor(*size)`` (empty)."""
    def __new__(cls, *args, **kwargs):
        if len(args) >= 2 and isinstance(args[0], Tensor):
            return sparse_coo_tensor(args[0], args[1].to(dt), *args[2:3], **kwargs)
        size = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else tuple(args)
        return sparse_coo_tensor(_creation.zeros((len(size), 0), dtype=_dtype.int64),
                                 _creation.zeros((0,), dtype=dt), size)
    return type(name, (), {"__new__": __new__, "__module__": __name__})


FloatTensor = _legacy_type("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_type("HalfTensor", _dtype.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _dtype.bfloat16)
LongTensor = _legacy_type("LongTensor", _dtype.int64)
IntTensor = _legacy_type("IntTensor", _dtype.int32)
ShortTensor = _legacy_type("ShortTensor", _dtype.int16)
CharTensor = _legacy_type("CharTensor", _dtype.int8)
ByteTensor = _legacy_type("ByteTensor", _dtype.uint8)


from ._sparse_coo_grad import _NONZERO, hands_sparse_grad, passes_sparse_grad  # noqa: E402  (sparse .grad)
from . import _sparse_coo_shape  # noqa: E402,F401  (unsqueeze, select, permute, indexing, strides of COO tensors)
from . import _sparse_coo_unary  # noqa: E402,F401  (abs, sqrt, sin, pow, ... of the entries; their in-place forms)
from ._sparse_coo_math import mm, addmm, sum, softmax, log_softmax, coalesced_indices  # noqa: E402,F401,A004
from . import _sparse_coo_refused  # noqa: E402,F401  (s.exp(), s.mean(), s == 0 ...: PyTorch's errors)
from . import _sparse_coo_ops  # noqa: E402,F401  (casts, s.T, s.sum(dim), s * x, unbind, zeros_like, sparse_mask...)
from . import _sparse_coo_resize  # noqa: E402,F401  (sparse_resize_, sparse_resize_and_clear_)
from ._sparse_spdiags import spdiags  # noqa: E402,F401  (torch.sparse.spdiags: a banded matrix from diagonals)
from ._sparse_csr import sampled_addmm  # noqa: E402,F401  (torch.sparse.sampled_addmm of a CSR matrix)
from ._sparse_coo_functions import _ACTIVE as _functions_active  # noqa: E402  (torch.abs(s), F.relu(s)...)
