"""Indexing: ``__getitem__``/``__setitem__`` (basic, advanced and boolean), gather/scatter, index_select,
masked_fill, nonzero...

A Python index is parsed into a hashable *template* (ints, slices, None, Ellipsis, and placeholders for index
arrays) plus the index arrays themselves, so each indexing pattern is one cached kernel whatever the index values.
Pure basic indexing is a view (writes reach the base); advanced indexing copies, as in PyTorch. Out-of-range
indices raise IndexError (JAX would clamp them silently), checked on concrete values.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from .registry import apply, defop
from . import tracing
from .registry import Family as _Family

_public = _Family(globals()).public



# ----------------------------------------------------------------------------------------------------------------
# parsing


def _as_index_tensor(v):
    from .creation import tensor
    if isinstance(v, Tensor):
        return v
    arr = np.asarray(v)
    if arr.dtype == np.object_:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         "indices")
    if arr.size == 0:
        arr = arr.astype(np.int64)
    return tensor(arr)


def check_bounds(idx: Tensor, size: int, dim: int, err=IndexError):
    """Raise PyTorch's error when a concrete index tensor holds an index outside ``[-size, size)``."""
    d = idx._d
    if isinstance(d, jax.core.Tracer) or d.size == 0:
        return
    a = np.asarray(d)
    lo, hi = a.min(), a.max()
    if hi >= size or lo < -size:
        bad = hi if hi >= size else lo
        raise err(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def parse_index(x: Tensor, index):
    """-> (template, arrays). Template items: ('i', n), ('s', start, stop, step), ('n',), ('a', k)."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for it in index:
        if isinstance(it, (list, np.ndarray)) or (isinstance(it, tuple)):
            it = _as_index_tensor(it)
        items.append(it)
    # how many dims of x the index consumes
    consumed = 0
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, bool):
            continue
        if isinstance(it, Tensor) and it._d.dtype in (np.bool_, np.uint8):
            consumed += max(it.ndim, 1) if it.ndim else 0
        else:
            consumed += 1
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    n_ell = sum(1 for it in items if it is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    template, arrays = [], []
    dim = 0
    shape = x.shape
    for it in items:
        if it is Ellipsis:
            n = x.ndim - consumed
            template.extend([("s", None, None, None)] * n)
            dim += n
        elif it is None:
            template.append(("n",))
        elif isinstance(it, bool) or (isinstance(it, Tensor) and it.ndim == 0 and it._d.dtype == np.bool_):
            if not bool(it.item() if isinstance(it, Tensor) else it):
                raise IndexError("indexing with a False scalar is not supported by torchish")
            template.append(("n",))  # x[True] adds a leading dimension of size 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else _int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            template.append(("s", None if it.start is None else _int(it.start),
                             None if it.stop is None else _int(it.stop), step))
            dim += 1
        elif isinstance(it, Tensor) and it._d.dtype in (np.bool_, np.uint8):
            mask = it
            k = mask.ndim
            for j in range(k):
                if mask.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + j}")
            for a in nonzero(mask, as_tuple=True):
                arrays.append(a)
                template.append(("a", len(arrays) - 1))
            dim += k
        elif isinstance(it, Tensor):
            if it._d.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            check_bounds(it, shape[dim], dim)
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
                raise IndexError(f"index {n} is out of bounds for dimension {dim} with size {size}")
            template.append(("i", n % size))
            dim += 1
    return tuple(template), arrays


def _int(v):
    if isinstance(v, int):
        return v
    if isinstance(v, Tensor):
        if v.numel() != 1 or v._d.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(v.item())
    return v.__index__()


def _build(template, arrays):
    out = []
    for t in template:
        kind = t[0]
        if kind == "i":
            out.append(t[1])
        elif kind == "s":
            out.append(slice(t[1], t[2], t[3]))
        elif kind == "n":
            out.append(None)
        else:
            out.append(arrays[t[1]])
    return tuple(out)


def _getitem_fwd(x, *arrays, template):
    return x[_build(template, arrays)]


_SELECT = defop("getitem_select", _getitem_fwd, view=True, linear=True, grad_name="SelectBackward0")
_SLICE = defop("getitem_slice", _getitem_fwd, view=True, linear=True, grad_name="SliceBackward0")
_INDEX = defop("index", _getitem_fwd, linear=True, grad_name="IndexBackward0")


def getitem(self, index):
    template, arrays = parse_index(self, index)
    if arrays:
        return apply(_INDEX, (self, *arrays), template=template)
    if all(t[0] == "s" and t[1:] == (None, None, None) for t in template) and not template:
        return apply(_SLICE, (self,), template=template)
    op = _SELECT if template and all(t[0] == "i" for t in template) else _SLICE
    return apply(op, (self,), template=template)


def _index_put_fwd(x, value, *arrays, template, accumulate):
    idx = _build(template, arrays)
    ref = x.at[idx]
    value = value.astype(x.dtype) if hasattr(value, "astype") else jnp.asarray(value, x.dtype)
    return ref.add(value) if accumulate else ref.set(value)


_INDEX_PUT = defop("index_put", _index_put_fwd, grad_name="IndexPutBackward0")
_COPY_SLICES = defop("copy_slices", _index_put_fwd, grad_name="CopySlices")
_MASKED_SET = defop("masked_set", lambda x, mask, value: jnp.where(mask, jnp.asarray(value, x.dtype), x),
                    grad_name="IndexPutBackward0")


def setitem(self, index, value):
    from .elementwise import scalar_or_tensor
    value = scalar_or_tensor(value)
    if isinstance(value, Tensor) and value._d.dtype != self._d.dtype:
        from .convert import to_dtype
        value = to_dtype(value, self.dtype)
    self._check_inplace()
    # a lone boolean mask of the tensor's own shape: a `where`, which also works inside torchish.compile
    if isinstance(index, Tensor) and index._d.dtype == np.bool_ and index.shape == self.shape and \
            (not isinstance(value, Tensor) or value.ndim == 0):
        return self._assign(apply(_MASKED_SET, (self, index, value)))
    template, arrays = parse_index(self, index)
    idx_shape = jax.eval_shape(lambda x, *a: x[_build(template, a)], jax.ShapeDtypeStruct(self._d.shape, self._d.dtype),
                               *[jax.ShapeDtypeStruct(a._d.shape, a._d.dtype) for a in arrays]).shape \
        if isinstance(value, Tensor) else None
    if idx_shape is not None:
        try:
            np.broadcast_shapes(tuple(value.shape), tuple(idx_shape))
            ok = tuple(np.broadcast_shapes(tuple(value.shape), tuple(idx_shape))) == tuple(idx_shape)
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                               f"indexing result of shape {list(idx_shape)}")
    op = _INDEX_PUT if arrays else _COPY_SLICES
    r = apply(op, (self, value, *arrays), template=template, accumulate=False)
    self._assign(r)


METHODS["__getitem__"] = getitem
METHODS["__setitem__"] = setitem


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    from .shape import unbind
    return iter(unbind(self, 0))


METHODS["__iter__"] = _iter


def index_put(input, indices, values, accumulate=False):
    from .elementwise import scalar_or_tensor
    template, arrays = parse_index(input, tuple(indices))
    values = scalar_or_tensor(values)
    return apply(_INDEX_PUT, (input, values, *arrays), template=template, accumulate=bool(accumulate))


_public("index_put", index_put)


def _index_put_(self, indices, values, accumulate=False):
    self._check_inplace()
    return self._assign(index_put(self, indices, values, accumulate))


METHODS["index_put_"] = _index_put_


# ----------------------------------------------------------------------------------------------------------------
# nonzero (needs concrete values: the output shape depends on them)


def nonzero(input, *, as_tuple=False):
    d = input._d
    if isinstance(d, jax.core.Tracer):
        raise tracing.concrete_error("nonzero() / boolean-mask indexing (the result's shape depends on the values)")
    from .creation import place
    idx = np.nonzero(np.asarray(d))
    if input.ndim == 0:
        idx = (np.zeros(int(bool(np.asarray(d))), np.int64),)
    dev = input.device
    if as_tuple:
        return tuple(place(i.astype(np.int64), _dtype.int64, dev) for i in idx)
    return place(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64), _dtype.int64, dev)


def argwhere(input):
    return nonzero(input)


_public("nonzero", nonzero)
_public("argwhere", argwhere)


# ----------------------------------------------------------------------------------------------------------------
# index_select / gather / scatter / masked_fill


_INDEX_SELECT = defop("index_select", lambda x, idx, *, axis: jnp.take(x, idx, axis=axis),
                      linear=True, grad_name="IndexSelectBackward0")


def index_select(input, dim, index):
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._d.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32/int64 for index")
    check_bounds(index, input.shape[d] if input.ndim else 1, d)
    if input.ndim == 0:
        from .shape import reshape
        return apply(_INDEX_SELECT, (reshape(input, (1,)), index.reshape(-1)), axis=0).reshape(index.shape)
    return apply(_INDEX_SELECT, (input, index.reshape(-1) if index.ndim == 0 else index), axis=d)


def _grid(index, dim):
    """Full index tuple for a scatter/gather along ``dim`` with ``index``'s shape."""
    idx = list(jnp.meshgrid(*[jnp.arange(s) for s in index.shape], indexing="ij", sparse=True))
    idx[dim] = index
    return tuple(idx)


def _gather_fwd(x, index, *, axis):
    return x[_grid(index, axis)]


_GATHER = defop("gather", _gather_fwd, linear=True, grad_name="GatherBackward0")


def _check_gather(input, dim, index, name):
    if index._d.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor")
    d = wrap_dim(dim, max(input.ndim, 1))
    for k in range(index.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be smaller "
                               f"than self {list(input.shape)} apart from dimension {d}")
    check_bounds(index, input.shape[d] if input.ndim else 1, d, RuntimeError)
    return d


def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = _check_gather(input, dim, index, "gather")
    return apply(_GATHER, (input, index), axis=d)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        from .shape import reshape
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    from .shape import broadcast_shapes, expand
    d = wrap_dim(dim, input.ndim)
    shp_i = list(input.shape)
    shp_x = list(indices.shape)
    shp_i[d] = shp_x[d] = 1
    b = list(broadcast_shapes(tuple(shp_i), tuple(shp_x)))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = input.shape[d], indices.shape[d]
    return gather(expand(input, tuple(bi)), d, expand(indices, tuple(bx)))


def _take_fwd(x, idx):
    return jnp.take(x.reshape(-1), idx)


_TAKE = defop("take", _take_fwd, linear=True, grad_name="TakeBackward0")


def take(input, index):
    check_bounds(index, input.numel(), 0)
    return apply(_TAKE, (input, index))


_REDUCE_NAMES = {"sum": "add", "add": "add", "prod": "multiply", "multiply": "multiply", "amax": "max",
                 "amin": "min", "mean": "mean"}


def _scatter_fwd(x, index, src, *, axis, reduce, include_self):
    idx = _grid(index, axis)
    if not hasattr(src, "shape") or src.ndim == 0:
        src = jnp.broadcast_to(jnp.asarray(src, x.dtype), index.shape)
    else:
        src = src[tuple(slice(0, s) for s in index.shape)].astype(x.dtype)
    if reduce is None:
        return x.at[idx].set(src)
    if reduce == "mean":
        base = x if include_self else x.at[idx].set(0)
        tot = base.at[idx].add(src)
        cnt = jnp.ones_like(x).at[idx].add(1) if include_self else \
            jnp.zeros_like(x).at[idx].set(0).at[idx].add(1)
        cnt = jnp.where(cnt == 0, 1, cnt)
        out = tot / cnt if jnp.issubdtype(x.dtype, jnp.inexact) else tot // cnt
        return jnp.where(jnp.zeros_like(x, bool).at[idx].set(True), out, x)
    ref = (x if include_self else x.at[idx].set(_identity(reduce, x.dtype))).at[idx]
    return getattr(ref, reduce)(src)


def _identity(reduce, dtype):
    if reduce == "add":
        return 0
    if reduce == "multiply":
        return 1
    info = jnp.finfo(dtype) if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype)
    return info.min if reduce == "max" else info.max


_SCATTER = defop("scatter", _scatter_fwd, grad_name="ScatterBackward0")
_SCATTER_ADD = defop("scatter_add", _scatter_fwd, grad_name="ScatterAddBackward0")
_SCATTER_REDUCE = defop("scatter_reduce", _scatter_fwd, grad_name="ScatterReduceBackward0")


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    d = _check_gather(input, dim, index, "scatter")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        return apply(_SCATTER_REDUCE, (input, index, src), axis=d, reduce=_REDUCE_NAMES[reduce], include_self=True)
    return apply(_SCATTER, (input, index, src), axis=d, reduce=None, include_self=True)


def scatter_add(input, dim, index, src):
    d = _check_gather(input, dim, index, "scatter_add")
    return apply(_SCATTER_ADD, (input, index, src), axis=d, reduce="add", include_self=True)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_gather(input, dim, index, "scatter_reduce")
    return apply(_SCATTER_REDUCE, (input, index, src), axis=d, reduce=_REDUCE_NAMES[reduce],
                 include_self=bool(include_self))


_MASKED_FILL = defop("masked_fill", lambda x, m, v: jnp.where(m, jnp.asarray(v, x.dtype), x),
                     grad_name="MaskedFillBackward0")


def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask._d.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    from .elementwise import scalar_or_tensor
    return apply(_MASKED_FILL, (input, mask, scalar_or_tensor(value)))


def masked_select(input, mask):
    from .shape import broadcast_tensors
    x, m = broadcast_tensors(input, mask)
    return getitem(x, m)


_INDEX_ADD = defop("index_add", lambda x, idx, src, alpha, *, axis:
                   x.at[(slice(None),) * axis + (idx,)].add((src * alpha).astype(x.dtype)),
                   grad_name="IndexAddBackward0")


def index_add(input, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    check_bounds(index, input.shape[d] if input.ndim else 1, d)
    return apply(_INDEX_ADD, (input, index, source, alpha), axis=d)


_INDEX_COPY = defop("index_copy", lambda x, idx, src, *, axis:
                    x.at[(slice(None),) * axis + (idx,)].set(src.astype(x.dtype)), grad_name="IndexCopyBackward0")


def index_copy(input, dim, index, source):
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    check_bounds(index, input.shape[d] if input.ndim else 1, d)
    return apply(_INDEX_COPY, (input, index, source), axis=d)


_INDEX_FILL = defop("index_fill", lambda x, idx, v, *, axis:
                    x.at[(slice(None),) * axis + (idx,)].set(jnp.asarray(v, x.dtype)), grad_name="IndexFillBackward0")


def index_fill(input, dim, index, value):
    d = wrap_dim(dim, input.ndim) if input.ndim else 0
    check_bounds(index, input.shape[d] if input.ndim else 1, d)
    from .elementwise import scalar_or_tensor
    return apply(_INDEX_FILL, (input, index, scalar_or_tensor(value)), axis=d)


for _n in ("index_select", "gather", "take_along_dim", "take", "scatter", "scatter_add", "scatter_reduce",
           "masked_fill", "masked_select", "index_add", "index_copy", "index_fill"):
    _public(_n, globals()[_n])


def _inplace(fn):
    from .inplace import make_inplace
    return make_inplace(fn, fn.__name__ + "_")


for _n in ("scatter", "scatter_add", "scatter_reduce", "masked_fill", "index_add", "index_copy", "index_fill"):
    METHODS[_n + "_"] = _inplace(globals()[_n])
