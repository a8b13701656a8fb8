"""Index ops that read: index_select, gather, take_along_dim, take and masked_select, and the index checks they
share with the ones that write (``scatter.py``): PyTorch's errors for out-of-range indices, raised on concrete
values."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import tracing
from .elementwise import require_tensor
from .index import _INDEX_DTYPES, nonzero
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


# ----------------------------------------------------------------------------------------------------------------
# index ops: shared checks


def _tname(t):
    return _dtype.scalar_type_name(t.dtype)


def _wrap(dim, x):
    from .._tensor import wrap_dim
    return wrap_dim(dim, max(x.ndim, 1))


def _concrete_bounds(index, size, lo, fmt, err):
    """Raise ``err(fmt)`` for the first index outside ``[lo, size)`` (a traced index: before each run of
    torchish.compile's program, see ``tracing.defer_check``)."""
    d = index._d
    if isinstance(d, jax.core.Tracer):
        tracing.defer_check((d >= size) | (d < lo), d, err, lambda b: fmt.format(b=b, size=size))
        return
    if d.size == 0:
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
    require_tensor(index, "index_select", 3, "index")
    d = _wrap(dim, input)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    if input.ndim > 1 and input.shape[d] == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if input.ndim > 1 and d == 1:  # PyTorch's CPU kernel for dim 1 is the one that raises RuntimeError
        _concrete_bounds(index, _dim_size(input, d), 0,
                         "INDICES element is out of DATA bounds, id={b} axis_dim={size}", RuntimeError)
    else:
        _concrete_bounds(index, _dim_size(input, d), 0, "index out of range in self", IndexError)
    from .elementwise import out_exact
    return out_exact(apply(_INDEX_SELECT, (input, index), axis=d), out, "index_select",
                     "index_select(): self and result must have the same scalar type")


def _grid(index, dim):
    """Full index tuple for a scatter/gather along ``dim`` with ``index``'s shape (a 0-d index acts as 1-d)."""
    if index.ndim == 0:
        return (index.reshape(1),)
    idx = list(jnp.meshgrid(*[jnp.arange(s) for s in index.shape], indexing="ij", sparse=True))
    idx[dim] = index
    return tuple(idx)


def _gather_fwd(x, index, *, axis):
    if x.ndim == 0:
        return jnp.broadcast_to(x, index.shape)
    return x[_grid(index, axis)].reshape(index.shape)


_GATHER = defop("gather", _gather_fwd, linear=True, grad_name="GatherBackward0")
# an empty index PyTorch does not check (any dtype, any number of dims): an empty result of its shape, a new tensor
# whose node is still GatherBackward0 (a zero gradient)
_GATHER_EMPTY = defop("gather_empty", lambda x, *, shape: jnp.zeros(shape, x.dtype), linear=True,
                      grad_name="GatherBackward0")


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
    require_tensor(index, "gather", 3, "index")
    d = _wrap(dim, input)
    from .elementwise import out_structured
    if index.numel() == 0 and (index._v.dtype not in _INDEX_DTYPES or index.ndim != input.ndim):
        # PyTorch checks no empty index: the result is empty, of the index's shape
        return out_structured(apply(_GATHER_EMPTY, (input,), shape=tuple(index.shape)), out, "gather")
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if index.numel():
        _check_index_shape(input, d, index)
    _concrete_bounds(index, _dim_size(input, d), 0, f"index {{b}} is out of bounds for dimension {d} with size {{size}}",
                     RuntimeError)
    return out_structured(apply(_GATHER, (input, index), axis=d), out, "gather")


def take_along_dim(input, indices, dim=None, *, out=None):
    require_tensor(indices, "take_along_dim", 2, "indices")
    from .broadcast import broadcast_shapes, expand
    from .shape import view
    if dim is None:  # a flat gather (any index dtype gather takes) of views: PyTorch refuses non-viewable operands
        return gather(view(input, -1), 0, view(indices, -1), out=out)
    if indices._v.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {_tname(indices)}")
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = _wrap(dim, input)
    shp_i, shp_x = list(input.shape), list(indices.shape)
    shp_i[d] = shp_x[d] = 1
    b = list(broadcast_shapes(tuple(shp_i), tuple(shp_x)))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = input.shape[d], indices.shape[d]
    # PyTorch wraps the indices modulo the dim's size (any integer indexes), then gathers with that new tensor: its
    # node saves the wrapped copy, not ``indices``
    n = input.shape[d]
    idx = expand(indices, tuple(bx))
    if n == 0:
        if idx.numel():
            raise RuntimeError("ZeroDivisionError")
        from .copying import clone
        idx = clone(idx)
    else:
        idx = idx % n
    return gather(expand(input, tuple(bi)), d, idx, out=out)


# indexing, not jnp.take: that drops the index's shape when the source is empty (take of an empty tensor with an
# index of shape (0, 3) has shape (0, 3) in PyTorch)
_TAKE = defop("take", lambda x, idx: x.reshape(-1)[idx], linear=True, grad_name="TakeBackward0")


def _check_flat_index(input, index, name):
    require_tensor(index, name, 2, "index")
    if index._v.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_tname(index)}")
    n = input.numel()
    if n == 0 and index.numel():  # (a shape check: raised in a traced program too, where the bounds are deferred)
        raise IndexError("take(): tried to take from an empty tensor" if name == "take" else
                         f"{name}(): Tried to put elements into an empty tensor")
    _concrete_bounds(index, n, -n, f"out of range: tried to access index {{b}} on a tensor of {n} elements.",
                     IndexError)


def take(input, index, *, out=None):
    _check_flat_index(input, index, "take")
    from .elementwise import out_exact
    return out_exact(apply(_TAKE, (input, index)), out, "take", "take(): self and out expected to have the same dtype, "
                     "but got self.dtype = {expected} and out.dtype = {out}")


# ----------------------------------------------------------------------------------------------------------------
# masked_select


def masked_select(input, mask, *, out=None):
    require_tensor(mask, "masked_select", 2, "mask")
    if not isinstance(mask, Tensor) or mask._v.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    from .broadcast import broadcast_tensors
    m, x = broadcast_tensors(mask, input)
    from .elementwise import out_exact
    return out_exact(apply(_MASKED_SELECT, (x, m, *nonzero(m, as_tuple=True))), out, "masked_select",
                     "masked_select(): self and result must have the same scalar type")


# (input, mask, *mask.nonzero()): the mask itself rides along, as PyTorch's node saves it
# (a 0-d mask's nonzero is one index array of zeros, as in PyTorch: it indexes the value as a 1-element vector)
_MASKED_SELECT = defop("masked_select", lambda x, m, *idx: x[idx] if x.ndim else x.reshape(1)[idx[0]], linear=True,
                       grad_name="MaskedSelectBackward0")


for _n in ("index_select", "gather", "take_along_dim", "take", "masked_select"):
    _public(_n, globals()[_n])
