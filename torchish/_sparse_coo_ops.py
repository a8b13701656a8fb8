"""More of what PyTorch runs sparse-to-sparse on COO tensors, and the errors it gives where it has no sparse kernel
for the arguments: dtype casts (``s.bool()``, ``s.long()``, ``s.type(torch.float64)``, ``s.type_as(t)``), the
transposes (``s.T``, ``s.mT``, ``s.H``, ``s.adjoint()``, ``s.movedim(0, 1)``, ``s.t_()`` and ``transpose_`` in
place), ``s.sum(dim)`` (``torch.sparse.sum``'s result), products with a dense tensor or another sparse one
(``s * x``, ``x * s``, ``s * s2``), ``s.add(s2, alpha=)``/``s.sub(s2)``, ``s // 2``, ``s.unbind()``, the empty
tensors ``torch.zeros_like(s)``/``s.new_zeros(...)`` make, ``x.sparse_mask(s)`` and ``to_sparse_coo()``; and
PyTorch's RuntimeErrors for ``s / x`` and ``s // x`` by a tensor that is not a scalar, ``s + 1``/``s.add(x)`` with a
dense ``x``, ``1 - s``, ``s.copy_(x)`` of a dense ``x`` and ``s.type_as(x)``. Before, each returned a dense tensor
(or, for the in-place transposes, a sparse tensor whose entries no longer fit its shape).

As elsewhere in :mod:`torchish.sparse` the result's dense value is the dense op's (so the gradient and
``grad_fn`` are that op's) and the entries are PyTorch's: a product with a dense tensor keeps ``s``'s entries
(uncoalesced ones too) times the other's value there; a product of two sparse tensors is their coalesced
intersection when both are coalesced, else the entries of the uncoalesced one (of the one with fewer entries when
both are) times the other's dense value. Differences: ``s.sum(dim)``'s node is ``torch.sparse.sum``'s
(``SparseSumBackward0``, where PyTorch's is ``SumBackward1``, whose backward of a sparse gradient raises its
"expand is unsupported" error, as here); a product that broadcasts ``s`` to more dims gives a dense tensor.

Example:
    >>> import torchish as torch
    >>> s = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    >>> (s * torch.tensor([10.0, 100.0])).values(), s.sum(0).layout
    (tensor([200.,  30.]), torch.sparse_coo)
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _dtype, _layout
from ._sparse_coo_math import _SUM_ENTRIES, _result, sparse_sparse_mm as _sparse_sparse_mm, sum as _sparse_sum
from ._tensor import Tensor, wrap_dim
from .ops import creation as _creation
from .ops.registry import overload
from .sparse import (_COO, _coalesced_entries, _from_entries, _keeps_sparse, _keeps_sparse_inplace, _merged,
                     _SparseTensor, _same_entries, _t, _transposed, dispatch_error, mark_sparse, sparse_code)

_SPARSE_MASK = overload(_SUM_ENTRIES, "SparseMaskBackward0")


def _sparse_type_name(dtype):
    return "torch.sparse." + _dtype.legacy_type_name(dtype)[len("torch."):]


# dtype casts: the entries' values cast

for _name in ("bool", "long", "int", "short", "char", "byte", "bfloat16", "cfloat", "cdouble"):
    _keeps_sparse(_name, _same_entries)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if self._coo is not None and dtype is None:
        return _sparse_type_name(self.dtype)
    return _sparse_type(self, dtype, non_blocking, **kwargs)


def _type_as(self, other):
    if self._coo is not None and isinstance(other, Tensor) and other.layout is not _layout.sparse_coo:
        raise RuntimeError(f"to(options) doesn't support converting to a different layout, but got self.layout "
                           f"being Sparse and options.layout set as {_layout.cpp_name(other.layout)}")
    return _sparse_type_as(self, other)


_keeps_sparse("type", lambda self, coo, out, *a, **k: _same_entries(self, coo, out) if isinstance(out, Tensor)
              else None)
_keeps_sparse("type_as", _same_entries)
_sparse_type, _sparse_type_as = _SparseTensor.type, _SparseTensor.type_as
_SparseTensor.type, _SparseTensor.type_as = _type, _type_as


# transposes: the index rows swapped (PyTorch's sparse transpose; T of a matrix is its permute)

def _reversed_dims(self):
    return tuple(range(self.dim() - 1, -1, -1))


def _matrix_transpose(self):
    return self.transpose(-2, -1)


for _name, _fn in (("T", lambda self: self.permute(*_reversed_dims(self))), ("mT", _matrix_transpose),
                   ("H", lambda self: self.permute(*_reversed_dims(self)).conj()),
                   ("mH", lambda self: _matrix_transpose(self).conj())):
    def _property(self, _fn=_fn, _dense=getattr(Tensor, _name)):
        return _dense.fget(self) if self._coo is None else _fn(self)
    setattr(_SparseTensor, _name, property(_property, doc=getattr(Tensor, _name).__doc__))


def _moved(self, source, destination):
    """movedim/moveaxis: PyTorch's order of the dims, then the sparse permute."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = self.dim()
    src, dst = [wrap_dim(d, n) for d in src], [wrap_dim(d, n) for d in dst]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return self.permute(*[next(rest) if o is None else o for o in order])


def _sparse_or_dense(name, sparse):
    dense = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        return dense(self, *args, **kwargs) if self._coo is None else sparse(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense.__doc__
    setattr(_SparseTensor, name, method)


_sparse_or_dense("adjoint", lambda self: _matrix_transpose(self).conj())
_sparse_or_dense("movedim", _moved)
_sparse_or_dense("moveaxis", _moved)
for _name in ("transpose_", "swapaxes_", "swapdims_"):
    _keeps_sparse_inplace(_name, lambda self, coo, dim0, dim1: _transposed(self, coo, None, dim0, dim1))
_keeps_sparse_inplace("t_", lambda self, coo: _t(self, coo, None))


# sums over dims: torch.sparse.sum's result (kept sparse while a sparse dim remains), keepdim as unsqueezes

_EXPAND = ("RuntimeError", "expand is unsupported for Sparse tensors")


def _sum(self, dim=None, keepdim=False, *, dtype=None):
    dense_sum = Tensor.sum
    if self._coo is None or dim is None or isinstance(dim, (tuple, list)) and not dim:
        return dense_sum(self, dim, keepdim, dtype=dtype) if dim is not None else dense_sum(self, dtype=dtype)
    dims = sorted({wrap_dim(d, self.dim()) for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dim = self._coo.indices.shape[0]
    if all(d in dims for d in range(sparse_dim)):  # (a dense result: the dense sum, its gradient dense)
        return dense_sum(self, dim, keepdim, dtype=dtype)
    out = _sparse_sum(self, dims, dtype)
    for d in dims if keepdim else ():
        out = out.unsqueeze(d)
    out._coo.refuse = _EXPAND  # (PyTorch's SumBackward1 expands the gradient: a sparse one fails there)
    return out


_SparseTensor.sum = _sum


# products, quotients, sums with another tensor

def _dense_at(t, indices, shape):
    """The dense tensor ``t`` broadcast to ``shape``, read at ``indices`` (one row per sparse dim)."""
    full = Tensor.expand(t, shape) if tuple(t.shape) != tuple(shape) else t
    if not indices.shape[0]:
        return Tensor.unsqueeze(full, 0)
    return Tensor.__getitem__(full, tuple(indices.unbind(0)))


def _product(self, coo, out, other):
    """The entries of ``self * other``: for a number or 0-d tensor the values scaled; for a dense tensor that
    broadcasts to ``self`` (not beyond) the values times it at the entries; for a sparse tensor PyTorch's choice of
    entries (see the module's docstring)."""
    if not isinstance(other, Tensor):
        if not isinstance(other, numbers.Number):
            return None
        return _COO(coo.indices, coo.values.mul(other).to(out.dtype), coo.coalesced)
    if tuple(out.shape) != tuple(self.shape):
        return None
    theirs = other._coo
    if theirs is None:
        if not other.dim():
            return _COO(coo.indices, coo.values.mul(other).to(out.dtype), coo.coalesced)
        return _COO(coo.indices, (coo.values * _dense_at(other, coo.indices, self.shape)).to(out.dtype),
                    coo.coalesced)
    if coo.coalesced and theirs.coalesced:
        mine, keys = _keys(coo, self.shape), _keys(theirs, self.shape)
        common, pos_a, pos_b = np.intersect1d(mine, keys, assume_unique=True, return_indices=True)
        pos_a, pos_b = (_creation.tensor(p.astype(np.int64)) for p in (pos_a, pos_b))
        values = coo.values.index_select(0, pos_a) * theirs.values.index_select(0, pos_b)
        return _COO(coo.indices.index_select(1, pos_a), values.to(out.dtype), True)
    if theirs.coalesced or not coo.coalesced and coo.indices.shape[1] <= theirs.indices.shape[1]:
        mask, dense = coo, other
    else:
        mask, dense = theirs, self
    values = mask.values * _dense_at(dense, mask.indices, self.shape)
    return _COO(mask.indices, values.to(out.dtype), False)


def _matrix_product(name):
    """``s @ s2``, ``s.mm(s2)``, ``s.matmul(s2)`` of two COO matrices: PyTorch's COO product (MmBackward0); any
    other operand the dense method's."""
    dense = getattr(Tensor, name)

    def method(self, other, *args, **kwargs):
        if self._coo is not None and isinstance(other, Tensor) and other._coo is not None and self.dim() == 2 \
                and other.dim() == 2 and not args and not kwargs:
            return _sparse_sparse_mm(self, other, masked=False)
        return dense(self, other, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense.__doc__
    setattr(_SparseTensor, name, method)


for _name in ("mm", "matmul", "__matmul__"):
    _matrix_product(_name)


def _keys(coo, shape):
    return np.ravel_multi_index(tuple(coo.indices.numpy()), tuple(shape[:coo.indices.shape[0]]))


def _divisor_error(floor):
    def check(self, other, *args, **kwargs):
        if self._coo is not None and isinstance(other, Tensor) and (other.dim() or other._coo is not None):
            kind = "floor division" if floor or kwargs.get("rounding_mode") == "floor" else "division"
            raise RuntimeError(f"Sparse {kind} requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(other.shape)} for divisor)")
    return check


def _checked(name, check):
    sparse = getattr(_SparseTensor, name)

    def method(self, *args, **kwargs):
        check(self, *args, **kwargs)
        return sparse(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = sparse.__doc__
    setattr(_SparseTensor, name, method)


def _floor_quotient(self, coo, out, other):
    coo = coo if coo.coalesced else _coalesced_entries(coo, tuple(self.shape))
    return _COO(coo.indices, coo.values.floor_divide(other).to(out.dtype), True)


for _name in ("mul", "__mul__", "__rmul__", "multiply"):
    _keeps_sparse(_name, _product)
for _name in ("floor_divide", "__floordiv__"):
    _keeps_sparse(_name, _floor_quotient)
for _name in ("floor_divide_", "__ifloordiv__"):
    _keeps_sparse_inplace(_name, lambda self, coo, other: _floor_quotient(self, coo, self, other))
for _name in ("div", "__truediv__", "divide", "true_divide", "__div__", "div_", "__itruediv__", "__idiv__"):
    if hasattr(_SparseTensor, _name):
        _checked(_name, _divisor_error(False))
for _name in ("floor_divide", "__floordiv__", "floor_divide_", "__ifloordiv__"):
    _checked(_name, _divisor_error(True))


def _rfloordiv(self, other):
    if self._coo is None:
        return Tensor.__rfloordiv__(self, other)
    raise RuntimeError(f"Sparse floor division requires a scalar or zero-dim dense tensor divisor (got shape "
                       f"{list(self.shape)} for divisor)")


def _rsub(self, other):
    if self._coo is None or isinstance(other, Tensor):
        return Tensor.__rsub__(self, other)
    raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size [] while other has "
                       f"size {list(self.shape)} (FYI: dense-sparse addition does not currently support "
                       "broadcasting)")


def _radd(self, other):
    """``x + s``: Python asks the subclass first; a dense ``x`` adds ``s`` densely (PyTorch's add(dense, sparse)),
    a number is PyTorch's error."""
    if self._coo is None or isinstance(other, Tensor):
        return Tensor.__radd__(self, other)
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _rtruediv(self, other):
    if self._coo is None:
        return Tensor.__rtruediv__(self, other)
    if isinstance(other, Tensor):  # (``x / s``: the divisor is sparse)
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                           f"{list(self.shape)} for divisor)")
    raise NotImplementedError(dispatch_error("reciprocal"))


_SparseTensor.__rfloordiv__, _SparseTensor.__rsub__, _SparseTensor.__radd__ = _rfloordiv, _rsub, _radd
_SparseTensor.__rtruediv__ = _SparseTensor.__rdiv__ = _rtruediv
_SparseTensor.__pow__ = _SparseTensor.pow  # (the sparse pow of the entries; a tensor exponent its error)


def _adder(name, sign):
    """``s.add(s2, alpha=)`` / ``s.sub(s2)``: PyTorch's merge of the entry lists; a dense or number ``other`` is
    its RuntimeError. (The deprecated ``add(alpha, other)`` form runs the dense method.)"""
    dense = getattr(Tensor, name)

    def method(self, other, *args, alpha=1, **kwargs):
        if self._coo is None or args and isinstance(other, numbers.Number):
            return dense(self, other, *args, alpha=alpha, **kwargs)
        if not isinstance(other, Tensor) or other._coo is None:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        out = dense(self, other, *args, alpha=alpha, **kwargs)
        theirs = other._coo
        scale = sign * alpha
        values = theirs.values * scale if scale != 1 else theirs.values
        coo = _merged(self._coo, _COO(theirs.indices, values, theirs.coalesced, theirs.contiguous), out.dtype,
                      tuple(out.shape))
        coo.refuse = self._coo.refuse or theirs.refuse
        return mark_sparse(out, coo)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense.__doc__
    setattr(_SparseTensor, name, method)


for _name, _sign in (("add", 1), ("sub", -1), ("subtract", -1)):
    _adder(_name, _sign)
_SparseTensor.subtract_ = _SparseTensor.sub_


def _float_power(self, exponent):
    """``float_power``: the sparse pow of the entries in double precision (complex128 for complex ones)."""
    wide = _dtype.complex128 if self.is_complex() or isinstance(exponent, complex) else _dtype.float64
    return self.to(wide).pow(exponent)


_sparse_or_dense("float_power", _float_power)


def _copy_error(self, src):
    def name(t):
        return _sparse_type_name(t.dtype) if t._coo is not None else _dtype.legacy_type_name(t.dtype)
    src = src if isinstance(src, Tensor) else _creation.tensor(src)
    return RuntimeError(f"copy_() between dense and sparse Tensors is not implemented! Found self type = "
                        f"{name(self)} and src type = {name(src)}")


def _copy_(self, src, non_blocking=False):
    if self._coo is not None and (not isinstance(src, Tensor) or src._coo is None):
        raise _copy_error(self, src)
    return _sparse_copy(self, src, non_blocking)


_sparse_copy = _SparseTensor.copy_
_SparseTensor.copy_ = _copy_


# unbind, the empty sparse tensors of the like-constructors, sparse_mask, to_sparse_coo

def _unbind(self, dim=0):
    dim = wrap_dim(dim, self.dim())
    return tuple(self.select(dim, i) for i in range(self.shape[dim]))


_sparse_or_dense("unbind", _unbind)


def empty_sparse(shape, sparse_dim, dtype, device=None):
    """A coalesced sparse tensor of ``shape`` with no entries (its first ``sparse_dim`` dims sparse)."""
    shape = tuple(int(n) for n in shape)
    indices = _creation.zeros((sparse_dim, 0), dtype=_dtype.int64)
    values = _creation.zeros((0, *shape[sparse_dim:]), dtype=dtype)
    return _from_entries(indices, values, shape, True, device=device)


def _new_empty_sparse(name):
    dense = getattr(Tensor, name)

    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None, **kwargs):
        if self._coo is None or layout not in (None, _layout.sparse_coo):
            return dense(self, *size, dtype=dtype, device=device, requires_grad=requires_grad, layout=layout,
                         **kwargs)
        size = size or (kwargs.get("size", ()),)
        shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], numbers.Integral) else size
        out = empty_sparse(shape, len(shape), dtype or self.dtype, device)
        return out.requires_grad_(True) if requires_grad else out
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense.__doc__
    setattr(_SparseTensor, name, method)


for _name in ("new_zeros", "new_empty"):
    _new_empty_sparse(_name)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               **kwargs):
    """``torch.zeros_like``/``empty_like`` of a COO tensor: one with no entries, its sparse dims the input's."""
    out = empty_sparse(input.shape, input._coo.indices.shape[0], dtype or input.dtype, device)
    return out.requires_grad_(True) if requires_grad else out


def _sparse_mask(self, mask):
    """``x.sparse_mask(mask)``: the sparse tensor with ``mask``'s entries, their values ``x``'s there (a sparse
    ``x`` read densely: duplicates summed)."""
    if not isinstance(mask, Tensor) or mask._coo is None:
        raise NotImplementedError(dispatch_error("_nnz").replace("'SparseCPU'", "'CPU'"))
    if tuple(mask.shape) != tuple(self.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} but "
                           f"mask has size {list(mask.shape)}")
    if mask is self:  # (PyTorch's shortcut: the tensor's own entries)
        return self.clone()
    coo = mask._coo
    out = _result(_SPARSE_MASK, coo.indices, _dense_at(self, coo.indices, self.shape), tuple(self.shape))
    out._coo.coalesced = coo.coalesced
    return out


def _to_sparse_coo(self):
    return self if self._coo is not None else self.to_sparse()


def _compressed_query(name, kind):
    """``crow_indices()``/``col_indices()``/``ccol_indices()``/``row_indices()`` of a tensor without that layout:
    PyTorch's RuntimeError (a CSR tensor answers the first two itself)."""
    def query(self):
        layout = _layout.cpp_name(self.layout)
        raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {layout}")
    query.__name__ = query.__qualname__ = name
    return query


Tensor.sparse_mask = sparse_code(_sparse_mask)
Tensor.to_sparse_coo = sparse_code(_to_sparse_coo)
for _name, _kind in (("crow_indices", "row"), ("col_indices", "row"), ("ccol_indices", "column"),
                     ("row_indices", "column")):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _compressed_query(_name, _kind))
