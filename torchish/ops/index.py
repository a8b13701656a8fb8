"""Indexing: ``__getitem__``/``__setitem__`` (basic, advanced and boolean), index_put, nonzero.

A Python index is parsed into a hashable *template* plus the index arrays, so each indexing pattern is one cached
kernel whatever the index values. Template items: ``('i', n)`` select, ``('s', start, stop, step)`` slice,
``('n',)`` new axis, ``('b', flag)`` a boolean scalar, ``('a', k)`` index array ``k``.

PyTorch's semantics (which differ from NumPy's where integers meet index arrays): the basic part (integers,
slices, None) is applied first; the index arrays then index the remaining dims, their result dims replacing the
indexed ones when the arrays are adjacent and going first otherwise. Pure basic indexing is a view (writes reach
the base); advanced indexing copies. Out-of-range indices raise IndexError (JAX would clamp them silently), checked
on concrete values. The second half holds the index ops: index_select, gather/scatter, index_add/copy/fill,
masked_fill/select/scatter, take/put.
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import tracing
from .inplace import layout_rule, write_scope
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public

_INDEX_DTYPES = (np.int64, np.int32)


# ----------------------------------------------------------------------------------------------------------------
# parsing


def _as_index_tensor(v):
    from .creation import tensor
    if isinstance(v, Tensor):
        return v
    try:
        arr = np.asarray(v)
    except ValueError:
        arr = np.asarray(v, dtype=object)
    if arr.dtype == np.object_ or arr.dtype.kind not in "biuf":
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         "indices")
    if arr.size == 0:
        arr = arr.astype(np.int64)
    return tensor(arr)


def check_bounds(idx: Tensor, size: int, dim: int, err=IndexError, fmt=None):
    """Raise PyTorch's error when a concrete index tensor holds an index outside ``[-size, size)``."""
    d = idx._d
    if isinstance(d, jax.core.Tracer) or d.size == 0:
        return
    a = np.asarray(d)
    bad = a[(a >= size) | (a < -size)]
    if bad.size:
        b = int(bad.reshape(-1)[0])
        raise err(fmt.format(b=b, dim=dim, size=size) if fmt else
                  f"index {b} is out of bounds for dimension {dim} with size {size}")


def _seq_as_tuple(index):
    """PyTorch's (deprecated) rule: a list holding sequences, slices, None, Ellipsis or Tensors is a tuple."""
    if isinstance(index, list) and len(index) < 32:
        return any(isinstance(i, (list, tuple, slice, Tensor, np.ndarray)) or i is None or i is Ellipsis
                   for i in index)
    return False


def _is_int(it):
    return isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_))


def _int_scalar_tensor(it):
    return isinstance(it, Tensor) and it.ndim == 0 and it._v.dtype.kind in "iu" and \
        not isinstance(it._d, jax.core.Tracer)


def parse_index(x: Tensor, index, tensor_ints=True):
    """-> (template, arrays). With ``tensor_ints`` a 0-d integer tensor acts as an int (as in ``x[t]``)."""
    if isinstance(index, tuple):
        items = list(index)
    elif _seq_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                      "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                      "tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                      "result", UserWarning, stacklevel=3)
        items = list(index)
    else:
        items = [index]
    for k, it in enumerate(items):
        if isinstance(it, (list, tuple, np.ndarray)):
            items[k] = _as_index_tensor(it)
        elif isinstance(it, str):
            raise TypeError(f"new(): invalid data type '{type(it).__name__}'")
    consumed = 0
    for it in items:
        if isinstance(it, Tensor) and it._v.dtype in (np.bool_, np.uint8):
            consumed += it.ndim
        elif not (it is None or it is Ellipsis or isinstance(it, (bool, np.bool_))):
            consumed += 1
    nd = x.ndim
    if nd == 0 and len(items) == 1:
        it = items[0]
        if _is_int(it):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        if isinstance(it, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    template, arrays = [], []
    dim = 0
    shape = x.shape
    for pos, it in enumerate(items):
        if it is Ellipsis:  # every ellipsis spans the unindexed dims (PyTorch accepts more than one)
            n = min(nd - consumed, nd - dim)
            template.extend(("s", 0, shape[dim + j], 1) for j in range(n))
            dim += n
        elif it is None:
            template.append(("n",))
        elif isinstance(it, (bool, np.bool_)) or (isinstance(it, Tensor) and it.ndim == 0 and
                                                   it._v.dtype == np.bool_):
            template.append(("b", bool(it.item() if isinstance(it, Tensor) else it)))
        elif isinstance(it, slice):
            template.append(_slice_item(it, shape[dim]))
            dim += 1
        elif isinstance(it, Tensor) and it._v.dtype in (np.bool_, np.uint8):
            if it._v.dtype == np.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=3)
            for j in range(it.ndim):
                if it.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(it.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + j}")
            for a in nonzero(it, as_tuple=True):
                arrays.append(a)
                template.append(("a", len(arrays) - 1))
            dim += it.ndim
        elif isinstance(it, Tensor) and not (tensor_ints and _int_scalar_tensor(it)):
            if it._v.dtype not in _INDEX_DTYPES:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            check_bounds(it, shape[dim], len(arrays))
            arrays.append(it)
            template.append(("a", len(arrays) - 1))
            dim += 1
        else:
            try:
                n = _int(it)
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                                 "valid indices (got " + type(it).__name__ + ")") from None
            size = shape[dim]
            if n < -size or n >= size:
                raise IndexError(f"index {n} is out of bounds for dimension {pos} with size {size}")
            template.append(("i", n % size))
            dim += 1
    return tuple(template), arrays


def _slice_item(sl, n):
    step = 1 if sl.step is None else _int(sl.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(None if sl.start is None else _int(sl.start),
                           None if sl.stop is None else _int(sl.stop), step).indices(n)
    return ("s", start, max(stop, start), step)


def _int(v):
    if isinstance(v, int):
        return v
    if isinstance(v, Tensor):
        if v.numel() != 1 or v._v.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(v.item())
    if isinstance(v, np.integer):
        return int(v)
    try:
        return v.__index__()
    except AttributeError:
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer") from None


def _stages(template, arrays):
    """PyTorch's two-stage indexing: the basic part, then the index arrays over the remaining dims."""
    first, second, advanced = [], [], False
    for t in template:
        kind = t[0]
        if kind == "i":
            first.append(t[1])
            continue
        if kind == "s":
            first.append(slice(t[1], t[2], t[3]))
            second.append(slice(None))
        elif kind == "n":
            first.append(None)
            second.append(slice(None))
        elif kind == "b":
            first.append(None)
            second.append(np.zeros(int(t[1]), np.int32))
            advanced = True
        else:
            first.append(slice(None))
            second.append(arrays[t[1]])
            advanced = True
    return tuple(first), (tuple(second) if advanced else None)


def _getitem_fwd(x, *arrays, template):
    first, second = _stages(template, arrays)
    y = x[first]
    return y[second] if second is not None else y


_BASIC = {name: defop(f"getitem_{name}", _getitem_fwd, view=True, linear=True, grad_name=f"{name}Backward0")
          for name in ("Select", "Slice", "Unsqueeze", "Alias")}
_INDEX = defop("index", _getitem_fwd, linear=True, grad_name="IndexBackward0")


@layout_rule(*(f"getitem_{name}" for name in ("Select", "Slice", "Unsqueeze", "Alias")))
def _getitem_layout(lay, *, template):
    shape, strides, offset = list(lay[0]), list(lay[1]), lay[2]
    d = 0
    for t in template:
        if t[0] == "i":
            offset += t[1] * strides[d]
            del shape[d], strides[d]
        elif t[0] == "s":
            _, start, stop, step = t
            offset += start * strides[d] if stop > start else 0
            shape[d] = len(range(start, stop, step))
            strides[d] *= step
            d += 1
        else:
            st = 1 if d >= len(shape) else shape[d] * strides[d]
            shape.insert(d, 1)
            strides.insert(d, st)
            d += 1
    return tuple(shape), tuple(strides), offset


def _basic_op(template, single, n_dims):
    """The view op whose name PyTorch's ``grad_fn`` shows: the last op applied (full slices are skipped)."""
    last = "Alias"
    for t, full in zip(template, n_dims):
        if t[0] == "i":
            last = "Select"
        elif t[0] == "n":
            last = "Unsqueeze"
        elif t[0] == "s" and (single or not full):
            last = "Slice"
    return _BASIC[last]


def getitem(self, index):
    template, arrays = parse_index(self, index)
    if arrays or any(t[0] == "b" for t in template):
        return apply(_INDEX, (self, *arrays), template=template)
    single = isinstance(index, slice)
    full = _full_flags(self, template)
    return apply(_basic_op(template, single, full), (self,), template=template)


def _full_flags(x, template):
    out, d = [], 0
    for t in template:
        if t[0] == "s":
            out.append(t[1] == 0 and t[2] == x.shape[d] and t[3] == 1)
            d += 1
        else:
            out.append(False)
            d += t[0] == "i"
    return out


# ----------------------------------------------------------------------------------------------------------------
# setitem / index_put


def _index_put_fwd(x, value, *arrays, template, accumulate):
    idx = jnp.arange(x.size, dtype=jnp.int64 if x.size > 2**31 - 1 else jnp.int32).reshape(x.shape)
    sel = _getitem_fwd(idx, *arrays, template=template).reshape(-1)
    value = jnp.asarray(value).astype(x.dtype)
    value = jnp.broadcast_to(value.reshape(value.shape[_lead_ones(value.shape):]) if value.ndim else value,
                             _sel_shape(x.shape, arrays, template)).reshape(-1)
    flat = x.reshape(-1)
    flat = flat.at[sel].add(value) if accumulate else flat.at[sel].set(value)
    return flat.reshape(x.shape)


def _sel_shape(shape, arrays, template):
    return jax.eval_shape(lambda *a: _getitem_fwd(jnp.zeros(shape, jnp.int8), *a, template=template),
                          *[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]).shape


def _lead_ones(shape):
    n = 0
    while n < len(shape) and shape[n] == 1:
        n += 1
    return n


# writes are linear in (self, value): their backward needs no saved values (PyTorch saves only the indices)
_INDEX_PUT = defop("index_put", _index_put_fwd, linear=True, grad_name="IndexPutBackward0")
_MASKED_SET = defop("masked_set", lambda x, mask, value: jnp.where(
    mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim)), jnp.asarray(value).astype(x.dtype), x),
    linear=True, grad_name="IndexPutBackward0")


def _value_tensor(self, value):
    """setitem's value: Tensors stay, numbers stay numbers, sequences are refused as in PyTorch."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (np.ndarray, list, tuple)):
        tname = "numpy.ndarray" if isinstance(value, np.ndarray) else type(value).__name__
        raise TypeError(f"can't assign a {tname} to a {_dtype.legacy_type_name(self.dtype)}")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, complex) and not self.is_complex():
        raise RuntimeError(f"value cannot be converted to type {_c_name(self.dtype)} without overflow")
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {_dtype.legacy_type_name(self.dtype)}")
    return value


def _c_name(dt):
    return {"float32": "float", "float64": "double", "float16": "at::Half", "bfloat16": "at::BFloat16"}.get(
        dt.name, dt.name)


def setitem(self, index, value):
    value = _value_tensor(self, value)
    _check_setitem(self, index)
    # a boolean mask over the leading dims with a scalar value: a `where`, which also works inside torchish.compile
    if isinstance(index, Tensor) and index._v.dtype == np.bool_ and index.ndim >= 1 and \
            tuple(index.shape) == tuple(self.shape[:index.ndim]) and \
            (not isinstance(value, Tensor) or (value.ndim == 0 and value.dtype == self.dtype)):
        with write_scope(self):
            self._assign(apply(_MASKED_SET, (self, index, value)))
        return
    template, arrays = parse_index(self, index)
    if not arrays and not any(t[0] == "b" for t in template):
        return _set_basic(self, template, value)
    shape = tuple(_sel_shape(tuple(self.shape), [a._v for a in arrays], template))
    if isinstance(value, Tensor):
        vshape = tuple(value.shape)
        if value.dtype != self.dtype and value.ndim:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{_dtype.scalar_type_name(self.dtype)} for the destination and "
                               f"{_dtype.scalar_type_name(value.dtype)} for the source.")
        try:
            ok = tuple(np.broadcast_shapes(vshape[_lead_ones(vshape):], shape)) == shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to "
                               f"indexing result of shape {list(shape)}")
        if value.dtype != self.dtype:
            from .convert import to_dtype
            value = to_dtype(value, self.dtype)
    with write_scope(self):
        self._assign(apply(_INDEX_PUT, (self, value, *arrays), template=template, accumulate=False))


def _set_basic(self, template, value):
    """Basic indexing: PyTorch copies the value into the view ``self[index]`` (CopySlices on the base)."""
    view = apply(_basic_op(template, False, _full_flags(self, template)), (self,), template=template)
    _forget_view(view)  # a transient target: nothing to refresh after the write
    if isinstance(value, Tensor):
        vshape = tuple(value.shape)
        stripped = vshape[_lead_ones(vshape):]
        from .shape import expand_shape, reshape
        expand_shape(stripped, tuple(view.shape), value.dtype)
        if value.dtype != self.dtype:
            _warn_complex(value, self)
            from .convert import to_dtype
            value = to_dtype(value, self.dtype)
        r = reshape(value, stripped) if stripped != vshape else value
    else:
        r = Tensor._make(jnp.asarray(value).astype(self._v.dtype))
    view._assign(r)  # view_write broadcasts r over the view


def _forget_view(view):
    refs = view._view[0]._views.data  # the WeakSet's references (discard(view) would compare tensors with ==)
    for r in [r for r in refs if r() is view]:
        refs.discard(r)


def _check_setitem(self, index):
    """``x[i] = v`` writes into the view ``x[i]`` when the index is basic: PyTorch then names the view."""
    from ..autograd.grad_mode import STATE
    if STATE.grad_enabled and self._view is None and self._grad_fn is None and self._rg:
        items = index if isinstance(index, tuple) else (index,)
        basic = all(it is None or it is Ellipsis or isinstance(it, (int, np.integer, slice)) and
                    not isinstance(it, bool) for it in items)
        if basic and any(it is not Ellipsis for it in items):
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    self._check_inplace()


def _warn_complex(value, self):
    if value.is_complex() and not self.is_complex():
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)


def index_put(input, indices, values, accumulate=False, *, _name="index_put"):
    if not isinstance(values, Tensor):
        raise TypeError(f"{_name}(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    indices = tuple(indices)
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    template, arrays = parse_index(input, indices, tensor_ints=False)
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_dtype.scalar_type_name(input.dtype)} for the destination and "
                           f"{_dtype.scalar_type_name(values.dtype)} for the source.")
    shape = tuple(_sel_shape(tuple(input.shape), [a._v for a in arrays], template))
    vshape = tuple(values.shape)
    try:
        ok = tuple(np.broadcast_shapes(vshape[_lead_ones(vshape):], shape)) == shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing "
                           f"result of shape {list(shape)}")
    return apply(_INDEX_PUT, (input, values, *arrays), template=template, accumulate=bool(accumulate))


def _index_put_(self, indices, values, accumulate=False):
    self._check_inplace()
    with write_scope(self):
        return self._assign(index_put(self, indices, values, accumulate, _name="index_put_"))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    from .shape import unbind
    return iter(unbind(self, 0))


METHODS["__getitem__"] = getitem
METHODS["__setitem__"] = setitem
METHODS["__iter__"] = _iter
_public("index_put", index_put)
METHODS["index_put_"] = _index_put_


# ----------------------------------------------------------------------------------------------------------------
# nonzero (needs concrete values: the output shape depends on them)


def nonzero(input, *, as_tuple=False, out=None):
    d = input._d
    if isinstance(d, jax.core.Tracer):
        raise tracing.concrete_error("nonzero() / boolean-mask indexing (the result's shape depends on the values)")
    from .creation import place
    a = np.asarray(d)
    dev = input.device
    if input.ndim == 0:
        n = int(bool(a))
        if as_tuple:
            return (place(np.zeros(n, np.int64), _dtype.int64, dev),)
        return place(np.zeros((n, 0), np.int64), _dtype.int64, dev)
    idx = np.nonzero(a)
    if as_tuple:
        return tuple(place(i.astype(np.int64), _dtype.int64, dev) for i in idx)
    res = place(np.stack(idx, axis=1).astype(np.int64), _dtype.int64, dev)
    if out is not None:
        from .elementwise import _out
        return _out(res, out)
    return res


def argwhere(input):
    return nonzero(input)


_public("nonzero", nonzero)
_public("argwhere", argwhere)
# ----------------------------------------------------------------------------------------------------------------
# index ops: shared checks

_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
               "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
               "uint8": "unsigned char", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _tname(t):
    return _dtype.scalar_type_name(t.dtype)


def _wrap(dim, x):
    from .._tensor import wrap_dim
    return wrap_dim(dim, max(x.ndim, 1))


def _concrete_bounds(index, size, lo, fmt, err):
    """Raise ``err(fmt)`` for the first index outside ``[lo, size)`` (concrete values only)."""
    d = index._d
    if isinstance(d, jax.core.Tracer) or d.size == 0:
        return
    a = np.asarray(d).reshape(-1)
    bad = a[(a >= size) | (a < lo)]
    if bad.size:
        raise err(fmt.format(b=int(bad[0]), size=size))


def _dim_size(x, d):
    return x.shape[d] if x.ndim else 1


def _along(x, d):
    """``(slice(None),) * d`` for a positional index along dim ``d`` (0-d tensors index as 1-d)."""
    return (slice(None),) * d


def _as_1d(x):
    return x.reshape(1) if x.ndim == 0 else x


# ----------------------------------------------------------------------------------------------------------------
# index_select / gather / take / take_along_dim


def _index_select_fwd(x, idx, *, axis):
    y = jnp.take(_as_1d(x), _as_1d(idx), axis=axis)
    return y.reshape(()) if x.ndim == 0 else y


_INDEX_SELECT = defop("index_select", _index_select_fwd, linear=True, grad_name="IndexSelectBackward0")


def index_select(input, dim, index, *, out=None):
    d = _wrap(dim, input)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    _concrete_bounds(index, _dim_size(input, d), 0,
                     "INDICES element is out of DATA bounds, id={b} axis_dim={size}", RuntimeError)
    from .elementwise import _out
    return _out(apply(_INDEX_SELECT, (input, index), axis=d), out)


def _grid(index, dim):
    """Full index tuple for a scatter/gather along ``dim`` with ``index``'s shape."""
    idx = list(jnp.meshgrid(*[jnp.arange(s) for s in index.shape], indexing="ij", sparse=True))
    idx[dim] = index
    return tuple(idx)


def _gather_fwd(x, index, *, axis):
    if x.ndim == 0:
        return jnp.broadcast_to(x, index.shape)
    return x[_grid(index, axis)]


_GATHER = defop("gather", _gather_fwd, linear=True, grad_name="GatherBackward0")


def _check_index_shape(input, dim, index, src=None):
    if input.ndim != index.ndim and not (input.ndim <= 1 and index.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if src is not None and src.ndim != index.ndim and not (src.ndim <= 1 and index.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for k in range(index.ndim):
        if k == dim:
            continue
        big_self = index.shape[k] > _dim_size(input, k)
        big_src = src is not None and index.shape[k] > _dim_size(src, k)
        if big_self or big_src:
            if src is None:
                raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be no "
                                   f"larger than self {list(input.shape)} apart from dimension {dim}")
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} "
                               f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}")
    if src is not None and src.ndim:
        for k in range(index.ndim):
            if k == dim and index.shape[k] > src.shape[k]:
                raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                                   f"{list(input.shape)} apart from dimension {dim} and to be no larger size than src "
                                   f"{list(src.shape)}")


def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = _wrap(dim, input)
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    _check_index_shape(input, d, index)
    _concrete_bounds(index, _dim_size(input, d), 0, f"index {{b}} is out of bounds for dimension {d} with size {{size}}",
                     RuntimeError)
    from .elementwise import _out
    return _out(apply(_GATHER, (input, index), axis=d), out)


def take_along_dim(input, indices, dim=None, *, out=None):
    if indices._v.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {_tname(indices)}")
    from .shape import broadcast_shapes, expand, reshape
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)), out=out)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = _wrap(dim, input)
    shp_i, shp_x = list(input.shape), list(indices.shape)
    shp_i[d] = shp_x[d] = 1
    b = list(broadcast_shapes(tuple(shp_i), tuple(shp_x)))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = input.shape[d], indices.shape[d]
    return gather(expand(input, tuple(bi)), d, expand(indices, tuple(bx)), out=out)


_TAKE = defop("take", lambda x, idx: jnp.take(x.reshape(-1), idx), linear=True, grad_name="TakeBackward0")


def _check_flat_index(input, index, name):
    if index._v.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_tname(index)}")
    n = input.numel()
    _concrete_bounds(index, n, -n, f"out of range: tried to access index {{b}} on a tensor of {n} elements.",
                     IndexError)


def take(input, index, *, out=None):
    _check_flat_index(input, index, "take")
    from .elementwise import _out
    return _out(apply(_TAKE, (input, index)), out)


# ----------------------------------------------------------------------------------------------------------------
# scatter / scatter_add / scatter_reduce

_REDUCE_NAMES = {"sum": "add", "add": "add", "prod": "multiply", "multiply": "multiply", "amax": "max",
                 "amin": "min", "max": "max", "min": "min", "mean": "mean"}


def _scatter_fwd(x, index, src, *, axis, reduce, include_self):
    x1 = _as_1d(x)
    idx = _grid(index, axis)
    if not hasattr(src, "shape") or src.ndim == 0:
        src = jnp.broadcast_to(jnp.asarray(src).astype(x.dtype), index.shape)
    else:
        src = _as_1d(src)[tuple(slice(0, s) for s in index.shape)].astype(x.dtype)
    if reduce is None:
        out = x1.at[idx].set(src)
    elif reduce == "mean":
        hit = jnp.zeros(x1.shape, bool).at[idx].set(True)
        base = x1 if include_self else jnp.where(hit, jnp.zeros_like(x1), x1)
        tot = base.at[idx].add(src)
        cnt = jnp.zeros(x1.shape, x1.dtype).at[idx].add(jnp.ones_like(src)) + (1 if include_self else 0)
        cnt = jnp.where(cnt == 0, jnp.ones_like(cnt), cnt)
        mean = tot / cnt if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.floor_divide(tot, cnt)
        out = jnp.where(hit, mean, x1)
    else:
        hit = jnp.zeros(x1.shape, bool).at[idx].set(True)
        base = x1 if include_self else jnp.where(hit, _identity(reduce, x.dtype), x1)
        out = getattr(base.at[idx], reduce)(src)
    return out.reshape(x.shape)


def _identity(reduce, dtype):
    if reduce == "add":
        return jnp.zeros((), dtype)
    if reduce == "multiply":
        return jnp.ones((), dtype)
    info = jnp.finfo(dtype) if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype)
    big = jnp.asarray(jnp.inf if jnp.issubdtype(dtype, jnp.inexact) else info.max, dtype)
    return -big if reduce == "max" and jnp.issubdtype(dtype, jnp.inexact) else \
        jnp.asarray(info.min, dtype) if reduce == "max" else big


def _scatter_reduce_vjp(g, x, index, src, *, out, axis, reduce, include_self):
    """PyTorch's gradients for scatter_reduce: prod without dividing by zero, amax/amin shared among ties."""
    x1, o1, g1 = _as_1d(x), _as_1d(out), _as_1d(g)
    idx = _grid(index, axis)
    s = _as_1d(src)[tuple(slice(0, n) for n in index.shape)]
    hit = jnp.zeros(x1.shape, bool).at[idx].set(True)
    if reduce == "add":
        gx = g1 if include_self else jnp.where(hit, 0, g1)
        gs = g1[idx]
    elif reduce == "mean":
        cnt = jnp.zeros(x1.shape, x1.dtype).at[idx].add(1) + (1 if include_self else 0)
        cnt = jnp.where(cnt == 0, 1, cnt)
        gx = jnp.where(hit, g1 / cnt if include_self else 0, g1)
        gs = (g1 / cnt)[idx]
    elif reduce == "multiply":
        # the product of everything except the element itself, computed without division
        zero_s = (s == 0)
        nz_s = jnp.where(zero_s, 1, s)
        base = x1 if include_self else jnp.ones_like(x1)
        zeros = jnp.zeros(x1.shape, jnp.int32).at[idx].add(zero_s.astype(jnp.int32)) + \
            ((x1 == 0) & include_self).astype(jnp.int32)
        prod_nz = jnp.where((x1 == 0) & include_self, 1, base).at[idx].multiply(nz_s)
        gx_val = jnp.where(zeros == 0, prod_nz / jnp.where(x1 == 0, 1, x1),
                           jnp.where((zeros == 1) & (x1 == 0), prod_nz, 0))
        gx = jnp.where(hit, g1 * gx_val if include_self else 0, g1)
        own_zero = zero_s
        z_at = zeros[idx]
        gs_val = jnp.where(z_at == 0, prod_nz[idx] / nz_s,
                           jnp.where((z_at == 1) & own_zero, prod_nz[idx], 0))
        gs = g1[idx] * gs_val
    else:  # max / min: the gradient is shared evenly among the elements equal to the result (self counts even
        # when include_self=False, as in PyTorch)
        eq_x = (x1 == o1) & hit
        eq_s = s == o1[idx]
        n = jnp.zeros(x1.shape, x1.dtype).at[idx].add(eq_s.astype(x1.dtype)) + eq_x.astype(x1.dtype)
        n = jnp.where(n == 0, 1, n)
        gx = jnp.where(hit, jnp.where(eq_x & include_self, g1 / n, 0), g1)
        gs = jnp.where(eq_s, (g1 / n)[idx], 0)
    gsrc = jnp.zeros(_as_1d(src).shape, gs.dtype).at[tuple(slice(0, n) for n in index.shape)].set(gs)
    return gx.reshape(x.shape), None, gsrc.reshape(jnp.shape(src))


_SCATTER = defop("scatter", _scatter_fwd, linear=True, grad_name="ScatterBackward0")
_SCATTER_VALUE = defop("scatter_value", _scatter_fwd, linear=True, grad_name="ScatterBackward1")
_SCATTER_ADD = defop("scatter_add", _scatter_fwd, linear=True, grad_name="ScatterAddBackward0")
_SCATTER_REDUCE = defop("scatter_reduce", _scatter_fwd, vjp=_scatter_reduce_vjp, save_out=True,
                        grad_name="ScatterReduceBackward0")
_SCATTER_REDUCE_LEGACY = defop("scatter_reduce_legacy", _scatter_fwd, grad_name="ScatterReduceBackward0")


def _check_scatter(name, input, dim, index, src):
    d = _wrap(dim, input)
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_index_shape(input, d, index, src if isinstance(src, Tensor) else None)
    _concrete_bounds(index, _dim_size(input, d), 0, f"index {{b}} is out of bounds for dimension {d} with size {{size}}",
                     RuntimeError)
    return d


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    if not isinstance(src, Tensor):
        from .elementwise import scalar_or_tensor
        src = scalar_or_tensor(src)
    d = _check_scatter("scatter", input, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                          "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=2)
        return apply(_SCATTER_REDUCE_LEGACY, (input, index, src), axis=d, reduce=_REDUCE_NAMES[reduce],
                     include_self=True)
    op = _SCATTER if isinstance(src, Tensor) else _SCATTER_VALUE
    return apply(op, (input, index, src), axis=d, reduce=None, include_self=True)


def scatter_add(input, dim, index, src):
    d = _check_scatter("scatter_add", input, dim, index, src)
    return apply(_SCATTER_ADD, (input, index, src), axis=d, reduce="add", include_self=True)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_scatter("scatter_reduce", input, dim, index, src)
    return apply(_SCATTER_REDUCE, (input, index, src), axis=d, reduce=_REDUCE_NAMES[reduce],
                 include_self=bool(include_self))


# ----------------------------------------------------------------------------------------------------------------
# index_add / index_copy / index_fill


def _index_add_fwd(x, idx, src, alpha, *, axis):
    x1, s1 = _as_1d(x), _as_1d(src)
    return x1.at[_along(x1, axis) + (_as_1d(idx),)].add((s1 * alpha).astype(x.dtype)).reshape(x.shape)


def _index_copy_fwd(x, idx, src, *, axis):
    x1, s1 = _as_1d(x), _as_1d(src)
    return x1.at[_along(x1, axis) + (_as_1d(idx),)].set(s1.astype(x.dtype)).reshape(x.shape)


def _index_fill_fwd(x, idx, v, *, axis):
    x1 = _as_1d(x)
    return x1.at[_along(x1, axis) + (_as_1d(idx),)].set(jnp.asarray(v).astype(x.dtype)).reshape(x.shape)


_INDEX_ADD = defop("index_add", _index_add_fwd, linear=True, grad_name="IndexAddBackward0")
_INDEX_COPY = defop("index_copy", _index_copy_fwd, linear=True, grad_name="IndexCopyBackward0")
_INDEX_FILL = defop("index_fill", _index_fill_fwd, linear=True, grad_name="IndexFillBackward0")
_INDEX_FILL_T = defop("index_fill_t", _index_fill_fwd, linear=True, grad_name="IndexFillBackward1")


def _source_matches(name, input, d, index, source, err):
    n = _dim_size(source, d) if source.ndim else 1
    if index.numel() != n:
        if name == "index_add_":
            raise err(f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                      f"({n}), for dim: {d}")
        raise err(f"{name}(): Number of indices ({index.numel()}) should be equal to source.size(dim) ({n})")


def index_add(input, dim, index, source, *, alpha=1, out=None):
    d = _wrap(dim, input)
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_tname(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_add_(): self ({_tname(input)}) and source ({_tname(source)}) must have the same "
                           f"scalar type")
    _source_matches("index_add_", input, d, index, source, RuntimeError)
    _concrete_bounds(index, _dim_size(input, d), 0, f"index {{b}} is out of bounds for dimension {d} with size {{size}}",
                     RuntimeError)
    from .elementwise import _out
    return _out(apply(_INDEX_ADD, (input, index, source, alpha), axis=d), out)


def index_copy(input, dim, index, source, *, out=None):
    d = _wrap(dim, input)
    if index._v.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_tname(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_tname(input)} and (source) {_tname(source)}")
    _source_matches("index_copy_", input, d, index, source, IndexError)
    _concrete_bounds(index, _dim_size(input, d), 0,
                     f"index_copy_(): index {{b}} is out of bounds for dimension {d} with size {{size}}", IndexError)
    from .elementwise import _out
    return _out(apply(_INDEX_COPY, (input, index, source), axis=d), out)


def index_fill(input, dim, index, value):
    d = _wrap(dim, input)
    if index._v.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    n = _dim_size(input, d)
    _concrete_bounds(index, n, -n, f"index {{b}} is out of bounds for dimension {d} with size {{size}}", IndexError)
    from .elementwise import scalar_or_tensor
    op = _INDEX_FILL_T if isinstance(value, Tensor) else _INDEX_FILL
    return apply(op, (input, index, scalar_or_tensor(value)), axis=d)


# ----------------------------------------------------------------------------------------------------------------
# masked_fill / masked_select / masked_scatter


def _masked_fill_fwd(x, m, v):
    return jnp.where(m, jnp.asarray(v).astype(x.dtype), x)


_MASKED_FILL = defop("masked_fill", _masked_fill_fwd, linear=True, grad_name="MaskedFillBackward0")
_MASKED_FILL_T = defop("masked_fill_t", _masked_fill_fwd, linear=True, grad_name="MaskedFillBackward1")


def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask._v.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_TYPE_NAMES.get(mask.dtype.name, mask.dtype.name) if isinstance(mask, Tensor) else '?'}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    from .elementwise import scalar_or_tensor
    value = scalar_or_tensor(value)
    if isinstance(value, complex) and not input.is_complex():
        raise RuntimeError(f"value cannot be converted to type {_c_name(input.dtype)} without overflow")
    from .shape import broadcast_tensors
    if tuple(mask.shape) != tuple(input.shape):
        broadcast_tensors(mask, input)  # PyTorch's error for shapes that do not broadcast
    op = _MASKED_FILL_T if isinstance(value, Tensor) else _MASKED_FILL
    return apply(op, (input, mask, value))


def masked_select(input, mask, *, out=None):
    if not isinstance(mask, Tensor) or mask._v.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    from .shape import broadcast_tensors
    m, x = broadcast_tensors(mask, input)
    from .elementwise import _out
    return _out(apply(_MASKED_SELECT, (x, *nonzero(m, as_tuple=True))), out)


_MASKED_SELECT = defop("masked_select", lambda x, *idx: x[idx], linear=True, grad_name="MaskedSelectBackward0")


def _masked_scatter_fwd(x, m, src):
    x, m = jnp.broadcast_arrays(x, m)
    flat = m.reshape(-1)
    pos = jnp.cumsum(flat.astype(jnp.int32)) - 1
    s = src.reshape(-1)
    vals = s[jnp.clip(pos, 0, max(s.size - 1, 0))] if s.size else jnp.zeros(pos.shape, x.dtype)
    return jnp.where(flat, vals.astype(x.dtype), x.reshape(-1)).reshape(x.shape)


_MASKED_SCATTER = defop("masked_scatter", _masked_scatter_fwd, linear=True, grad_name="MaskedScatterBackward0")


def masked_scatter(input, mask, source):
    if not isinstance(mask, Tensor) or mask._v.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_tname(mask) if isinstance(mask, Tensor) else type(mask).__name__}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got{_tname(input)} and "
                           f"{_tname(source)}")
    from .shape import broadcast_tensors
    m, x = broadcast_tensors(mask, input)
    md = m._d
    if not isinstance(md, jax.core.Tracer) and int(np.count_nonzero(np.asarray(md))) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(_MASKED_SCATTER, (input, mask, source))


# ----------------------------------------------------------------------------------------------------------------
# put


def _put_fwd(x, idx, src, *, accumulate):
    flat = x.reshape(-1)
    i, s = idx.reshape(-1), src.reshape(-1).astype(x.dtype)
    return (flat.at[i].add(s) if accumulate else flat.at[i].set(s)).reshape(x.shape)


_PUT = defop("put", _put_fwd, linear=True, grad_name="PutBackward0")


def put(input, index, source, accumulate=False):
    if not isinstance(source, Tensor):
        raise TypeError(f"put(): argument 'source' (position 2) must be Tensor, not {type(source).__name__}")
    _check_flat_index(input, index, "put_")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_tname(input)} and source.dtype = {_tname(source)}")
    return apply(_PUT, (input, index, source), accumulate=bool(accumulate))


for _n in ("index_select", "gather", "take_along_dim", "take", "scatter", "scatter_add", "scatter_reduce",
           "masked_fill", "masked_select", "masked_scatter", "index_add", "index_copy", "index_fill", "put"):
    _public(_n, globals()[_n])


def _inplace(fn):
    from .inplace import make_inplace
    return make_inplace(fn, fn.__name__ + "_")


for _n in ("scatter", "scatter_add", "scatter_reduce", "masked_fill", "masked_scatter", "index_add", "index_copy",
           "index_fill", "put"):
    METHODS[_n + "_"] = _inplace(globals()[_n])
