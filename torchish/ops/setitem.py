"""Writes through indexing: ``__setitem__`` (basic indices copy the value into the view ``x[index]``; advanced and
boolean ones are an index_put, a boolean mask with a scalar a ``where``) and index_put/index_put_."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .index import (_as_index_tensor, _basic_op, _full_flags, _getitem_fwd, _int_scalar_tensor, _seq_as_tuple,
                    dynamic_template, index_shape, parse_index)
from .casting import cast, check_scalar_fits
from .inplace import check_overlap, overlap_ok, write_scope
from .writes import set_at
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


# ----------------------------------------------------------------------------------------------------------------
# setitem / index_put


def _index_put_fwd(x, value, *arrays, template, accumulate):
    idx = jnp.arange(x.size, dtype=jnp.int64 if x.size > 2**31 - 1 else jnp.int32).reshape(x.shape)
    sel = _getitem_fwd(idx, *arrays, template=template).reshape(-1)
    value = cast(value, x.dtype)
    value = jnp.broadcast_to(value.reshape(value.shape[_lead_ones(value.shape):]) if value.ndim else value,
                             index_shape(x.shape, arrays, template)).reshape(-1)
    flat = x.reshape(-1)
    if accumulate and x.dtype == jnp.bool_:  # bools accumulate as a logical or, as in PyTorch
        return (flat.astype(jnp.int32).at[sel].add(value.astype(jnp.int32)) != 0).reshape(x.shape)
    flat = flat.at[sel].add(value) if accumulate else set_at(flat, sel, value)
    return flat.reshape(x.shape)


def _lead_ones(shape):
    n = 0
    while n < len(shape) and shape[n] == 1:
        n += 1
    return n


# writes are linear in (self, value): their backward needs no saved values (PyTorch saves only the indices)
_INDEX_PUT = defop("index_put", _index_put_fwd, linear=True, grad_name="IndexPutBackward0",
                   dynamic=dynamic_template)
_MASKED_SET = defop("masked_set", lambda x, mask, value: jnp.where(
    mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim)), cast(value, x.dtype), x),
    linear=True, grad_name="IndexPutBackward0")


def _value_tensor(self, value):
    """setitem's value: Tensors stay, numbers stay numbers, sequences are refused as in PyTorch."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (np.ndarray, list, tuple)):
        tname = "numpy.ndarray" if isinstance(value, np.ndarray) else type(value).__name__
        raise TypeError(f"can't assign a {tname} to a {_dtype.legacy_type_name(self.dtype)}")
    if isinstance(value, np.generic):  # (PyTorch takes numpy's integers, float64 and complex128: Python number types)
        if not isinstance(value, (np.integer, np.float64, np.complex128)):
            raise TypeError(f"can't assign a numpy.{type(value).__name__} to a {_dtype.legacy_type_name(self.dtype)}")
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {_dtype.legacy_type_name(self.dtype)}")
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return check_scalar_fits(value, self.dtype, numel=1)  # (PyTorch converts it into a 0-d tensor first)


def _c_name(dt):
    return {"float32": "float", "float64": "double", "float16": "at::Half", "bfloat16": "at::BFloat16"}.get(
        dt.name, dt.name)


def setitem(self, index, value):
    value = _value_tensor(self, value)
    if index is False:  # PyTorch writes nothing and checks nothing more
        return
    _check_setitem(self, index)
    if index is True:  # a copy into ``self.unsqueeze(0)``: broadcast and cast like a basic index
        return _set_basic(self, (("n",),), value)
    # a boolean mask over the leading dims with a scalar value: a `where`, which also works inside torchish.compile
    if isinstance(index, Tensor) and index._v.dtype == np.bool_ and index.ndim >= 1 and \
            tuple(index.shape) == tuple(self.shape[:index.ndim]) and \
            (not isinstance(value, Tensor) or (value.ndim == 0 and value.dtype == self.dtype)):
        with write_scope(self), overlap_ok(self):  # (PyTorch's index_put_, which writes an expanded tensor)
            self._assign(apply(_MASKED_SET, (self, index, value)))
        return
    if not isinstance(value, Tensor) or value.numel() == 1:
        _check_masked_fill(index)
    if _whole(self, index):
        return _set_whole(self, value)
    bounds = []
    template, arrays = parse_index(self, index, deferred=bounds)
    if not arrays and not any(t[0] == "b" for t in template):
        return _set_basic(self, template, value)
    try:
        shape = tuple(index_shape(tuple(self.shape), [a._v for a in arrays], template))
    except Exception:  # noqa: BLE001  (an index into an empty dim: PyTorch's IndexError first)
        for check in bounds:
            check()
        raise
    if isinstance(value, Tensor):
        vshape = tuple(value.shape)
        # PyTorch writes a one-element value through a lone boolean mask with masked_fill, which casts it
        castable = value.numel() == 1 and _lone_mask(index) is not None
        if castable and value.is_complex() and not self.is_complex():
            raise RuntimeError(f"value cannot be converted to type {_c_name(self.dtype)} without overflow")
        if value.dtype != self.dtype and not castable:
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
    for check in bounds:
        check()
    with write_scope(self), overlap_ok(self):
        self._assign(apply(_INDEX_PUT, (self, value, *arrays), template=template, accumulate=False))


def _check_masked_fill(index):
    """PyTorch writes a one-element value through a lone mask with ``masked_fill_``, which takes no uint8 mask."""
    mask = _lone_mask(index)
    if mask is not None and mask._v.dtype == np.uint8:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")


def _lone_mask(index):
    """The only advanced index in ``index`` when it is one boolean (or uint8) mask of at least one dimension, else
    None."""
    if isinstance(index, tuple) or _seq_as_tuple(index):
        items = list(index)
    else:
        items = [index]
    advanced = []
    for it in items:
        if isinstance(it, (list, tuple, np.ndarray)):
            it = _as_index_tensor(it)
        if isinstance(it, (bool, np.bool_)) or isinstance(it, Tensor) and it.ndim == 0 and \
                it._v.dtype in (np.bool_, np.uint8):
            return None  # PyTorch indexes a boolean scalar with a long tensor (of 0 or 1 elements)
        if isinstance(it, Tensor) and not _int_scalar_tensor(it):
            advanced.append(it)
    return advanced[0] if len(advanced) == 1 and advanced[0]._v.dtype in (np.bool_, np.uint8) else None


def _whole(self, index):
    """Whether ``index`` is only slices ``0:n`` (``n`` at least the dim's size, step 1; None counts as such) and
    ellipses: PyTorch's applySlice then returns ``self`` itself, not a view, so ``x[:] = v`` writes ``x`` directly
    (``fill_``/``copy_``, no CopySlices). A literal start other than 0 (``x[-n:]``) keeps the view."""
    items = index if isinstance(index, tuple) else (index,)
    slices = [it for it in items if it is not Ellipsis]
    if len(slices) > self.ndim or len(items) - len(slices) > 1:
        return False
    d = 0
    for it in items:
        if it is Ellipsis:
            d += self.ndim - len(slices)
            continue
        if not isinstance(it, slice):
            return False
        start, stop, step = it.start, it.stop, it.step
        if any(v is not None and (type(v) is not int) for v in (start, stop, step)):
            return False
        if start not in (None, 0) or step not in (None, 1) or stop is not None and stop < self.shape[d]:
            return False
        d += 1
    return True


def _set_whole(self, value):
    """``x[:] = v`` as PyTorch's copy_to writes ``x`` itself: a value of x's shape is copied, a 0-d one (a number
    becomes one of x's dtype) filled in (FillBackward3), any other broadcast and copied."""
    if not isinstance(value, Tensor):
        value = Tensor._make(_scalar_value(value, self._v.dtype))
    if tuple(value.shape) == tuple(self.shape):
        return self.copy_(value)
    if value.ndim == 0:
        return self.fill_(value)
    vshape = tuple(value.shape)
    stripped = vshape[_lead_ones(vshape):]  # (PyTorch's slicePrefix1sSize: leading ones dropped)
    from .broadcast import expand_shape
    expand_shape(stripped, tuple(self.shape), value.dtype)  # (PyTorch's expand_inplace errors)
    if stripped != vshape:
        from .shape import reshape
        value = reshape(value, stripped)
    return self.copy_(value)


def _set_basic(self, template, value):
    """Basic indexing: PyTorch copies the value into the view ``self[index]`` (CopySlices on the base)."""
    view = apply(_basic_op(template, False, _full_flags(self, template)), (self,), template=template)
    _forget_view(view)  # a transient target: nothing to refresh after the write
    if isinstance(value, Tensor):
        check_overlap(view, value)
        vshape = tuple(value.shape)
        stripped = vshape[_lead_ones(vshape):]
        from .broadcast import expand_shape
        from .shape import reshape
        expand_shape(stripped, tuple(view.shape), value.dtype)
        if value.dtype != self.dtype:
            from .convert import to_dtype  # (warns when it discards an imaginary part)
            value = to_dtype(value, self.dtype)
        r = reshape(value, stripped) if stripped != vshape else value
    else:
        r = Tensor._make(_scalar_value(value, self._v.dtype))
    view._assign(r)  # view_write broadcasts r over the view


_VALUES: dict = {}


def _scalar_value(value, npdt):
    """A Python number as a 0-d array of ``npdt`` (cached: converting it eagerly costs more than the write)."""
    t = type(value)
    key = (t, float.hex(value) if t is float else (float.hex(value.real), float.hex(value.imag)) if t is complex
           else value, npdt)
    v = _VALUES.get(key)
    if v is None:
        if len(_VALUES) >= 4096:
            _VALUES.clear()
        v = jnp.asarray(value)  # (into a float8 type: PyTorch's rounding, e4m3fn saturating)
        v = _VALUES[key] = cast(v, npdt) if npdt in _dtype.FLOAT8_NP else v.astype(npdt)
    return v


def _forget_view(view):
    refs = view._view[0]._views.data  # the WeakSet's references (discard(view) would compare tensors with ==)
    for r in [r for r in refs if r() is view]:
        refs.discard(r)


def _check_setitem(self, index):
    """``x[i] = v`` writes into the view ``x[i]`` when the index is basic: PyTorch then names the view."""
    from ..autograd.grad_mode import STATE
    if STATE.grad_enabled and self._view is None and self._gfn is None and self._rg:
        items = index if isinstance(index, tuple) else (index,)
        basic = all(it is None or it is Ellipsis or isinstance(it, (int, np.integer, slice)) and
                    not isinstance(it, bool) for it in items)
        if basic and any(it is not Ellipsis for it in items) and not _whole(self, index):
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    self._check_inplace()


def index_put(input, indices, values, accumulate=False, *, _name="index_put"):
    if not isinstance(values, Tensor):
        raise TypeError(f"{_name}(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    indices = tuple(indices)
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if not accumulate and values.numel() == 1:
        _check_masked_fill(indices)
    template, arrays = parse_index(input, indices, tensor_ints=False)
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_dtype.scalar_type_name(input.dtype)} for the destination and "
                           f"{_dtype.scalar_type_name(values.dtype)} for the source.")
    shape = tuple(index_shape(tuple(input.shape), [a._v for a in arrays], template))
    vshape = tuple(values.shape)
    try:
        ok = tuple(np.broadcast_shapes(vshape[_lead_ones(vshape):], shape)) == shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing "
                           f"result of shape {list(shape)}")
    from .out_layout import like_format  # (PyTorch writes into a clone: it keeps a dense input's strides)
    return like_format(apply(_INDEX_PUT, (input, values, *arrays), template=template, accumulate=bool(accumulate)),
                       input)


def _index_put_(self, indices, values, accumulate=False):
    self._check_inplace()
    check_overlap(self, values, full=True)
    with write_scope(self), overlap_ok(self):
        return self._assign(index_put(self, indices, values, accumulate, _name="index_put_"))


METHODS["__setitem__"] = setitem
_public("index_put", index_put)
METHODS["index_put_"] = _index_put_
