"""Index ops that write: scatter/scatter_add/scatter_reduce, index_add/index_copy/index_fill, masked_fill/
masked_scatter and put, each also an in-place method (``scatter_``, ...)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._global_flags import warn_once
from .. import _dtype
from .._tensor import Tensor
from .gather import (_along, _as_1d, _check_flat_index, _check_index_shape, _concrete_bounds, _dim_size, _grid, _tname,
                     _wrap)
from .elementwise import no_derivative, out_structured, require_tensor
from .index import _INDEX_DTYPES
from . import registry as _registry
from .registry import apply, defop, overload
from .registry import Family as _Family
from . import tracing
from .casting import _C_NAMES, check_scalar_fits, overflows
from .writes import set_at

_public = _Family(globals()).public




# ----------------------------------------------------------------------------------------------------------------
# scatter / scatter_add / scatter_reduce

_REDUCE_NAMES = {"sum": "add", "add": "add", "prod": "multiply", "multiply": "multiply", "amax": "max",
                 "amin": "min", "max": "max", "min": "min", "mean": "mean"}


def _scatter_fwd(x, index, src, *, axis, reduce, include_self):
    if x.dtype == jnp.bool_ and reduce is not None:
        return _scatter_reduce_fwd(x.astype(jnp.int32), index, jnp.asarray(src).astype(jnp.int32), axis=axis,
                                   reduce=reduce, include_self=include_self) != 0
    return _scatter_reduce_fwd(x, index, src, axis=axis, reduce=reduce, include_self=include_self)


def _scatter_reduce_fwd(x, index, src, *, axis, reduce, include_self):
    """The scatter itself; bools reduce as int32 in :func:`_scatter_fwd` (sum/amax are then a logical or,
    prod/amin a logical and, as in PyTorch)."""
    x1 = _as_1d(x)
    idx = _grid(index, axis)
    if not hasattr(src, "shape") or src.ndim == 0:
        src = jnp.broadcast_to(jnp.asarray(src).astype(x.dtype), index.shape)
    else:
        src = _as_1d(src)[tuple(slice(0, s) for s in index.shape)].astype(x.dtype)
    if reduce is None:
        out = set_at(x1, idx, src)
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
# index_reduce is a scatter_reduce (its index spread over source's shape) under PyTorch's own node name
_INDEX_REDUCE = overload(_SCATTER_REDUCE, "IndexReduceBackward0")
# scatter's deprecated ``reduce=`` ("add", "multiply"): PyTorch records a node without a formula, whose error names
# the out-of-place or the in-place op
_SCATTER_REDUCE_LEGACY = defop("scatter_reduce_legacy", _scatter_fwd, vjp=no_derivative("scatter"), linear=True,
                               grad_name="NotImplemented")
_SCATTER_REDUCE_LEGACY_ = overload(_SCATTER_REDUCE_LEGACY, "NotImplemented", vjp=no_derivative("scatter_"))


def _src_grad_refused(op):
    """``op`` for a ``src`` whose shape differs from the index's. PyTorch differentiates ``src`` only when
    index.shape == src.shape (its documented limit): its gradient, ``grad.gather(dim, index)``, has the index's
    shape, which the engine refuses; amax/amin/prod (whose formulas compare src with the gathered result) refuse
    every gradient where the shapes do not broadcast."""
    def vjp(g, x, index, src, *, out, axis, reduce, include_self):
        ishape, sshape = tuple(index.shape), tuple(jnp.shape(src))
        if reduce in ("max", "min", "multiply"):
            k = next(k for k in range(len(sshape) - 1, -1, -1) if 1 not in (sshape[k], ishape[k]) and
                     sshape[k] != ishape[k])
            error = RuntimeError(f"The size of tensor a ({sshape[k]}) must match the size of tensor b ({ishape[k]}) "
                                 f"at non-singleton dimension {k}")
            return _registry.NotDifferentiable(error), None, _registry.NotDifferentiable(error)
        if op.vjp is not None:
            gx = op.vjp(g, x, index, src, out=out, axis=axis, reduce=reduce, include_self=include_self)[0]
        elif reduce is None:  # scatter: the written positions get no gradient
            gx = _scatter_fwd(g, index, jnp.zeros((), g.dtype), axis=axis, reduce=None, include_self=True)
        else:  # scatter_add
            gx = g
        error = RuntimeError(f"Function {op.grad_name} returned an invalid gradient at index 1 - got {list(ishape)} "
                             f"but expected shape compatible with {list(sshape)}")
        return gx, None, _registry.NotDifferentiable(error)
    return overload(op, op.grad_name, vjp=vjp, linear=False, save_out=True)


_SRC_GRAD_REFUSED = {op.name: _src_grad_refused(op) for op in (_SCATTER, _SCATTER_ADD, _SCATTER_REDUCE)}


def _scatter_op(op, index, src, reduce=None):
    """``op``, or its variant refusing gradients when src's shape is not the index's (see _src_grad_refused;
    where they broadcast, PyTorch's amax/amin/prod formulas run, and so do torchish's)."""
    if not isinstance(src, Tensor) or tuple(src.shape) == tuple(index.shape):
        return op
    if reduce in ("max", "min", "multiply") and all(a == b or 1 in (a, b) for a, b in zip(src.shape, index.shape)):
        return op
    return _SRC_GRAD_REFUSED[op.name]


def _check_scatter(name, input, dim, index, src):
    """PyTorch's checks of a scatter -> the wrapped dim, or None for an empty index that the index checks (which
    PyTorch skips for it) would refuse: the scatter is then the identity."""
    require_tensor(index, name, 3, "index")
    d = _wrap(dim, input)
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    try:
        if index._v.dtype not in _INDEX_DTYPES:
            raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
        _check_index_shape(input, d, index, src if isinstance(src, Tensor) else None)
    except RuntimeError:
        if index.numel() == 0:
            return None
        raise
    _concrete_bounds(index, _dim_size(input, d), 0, f"index {{b}} is out of bounds for dimension {d} with size {{size}}",
                     RuntimeError)
    return d


def _unchanged(input):
    from .copying import clone
    return clone(input)


def _scatter(input, dim, index, src, value, reduce, legacy, stacklevel):
    if src is None:
        src = value
    if not isinstance(src, Tensor):
        from .elementwise import scalar_or_tensor
        src = scalar_or_tensor(src)
    d = _check_scatter("scatter", input, dim, index, src)
    if not isinstance(src, Tensor):
        src = check_scalar_fits(src, input.dtype)  # (converted to the input's type, checked)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if d is None:
        return _unchanged(input)
    if reduce is not None:
        if isinstance(src, Tensor):
            warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      stacklevel=stacklevel)
        return apply(legacy, (input, index, src), axis=d, reduce=_REDUCE_NAMES[reduce], include_self=True)
    op = _scatter_op(_SCATTER, index, src) if isinstance(src, Tensor) else _SCATTER_VALUE
    return apply(op, (input, index, src), axis=d, reduce=None, include_self=True)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    return out_structured(_scatter(input, dim, index, src, value, reduce, _SCATTER_REDUCE_LEGACY, 3), out, "scatter")


# scatter_'s out-of-place step (its ``reduce=`` node's error names ``scatter_``; its warning, the caller of
# scatter_)
def _scatter_inplace_body(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter(input, dim, index, src, value, reduce, _SCATTER_REDUCE_LEGACY_, 4)


def scatter_add(input, dim, index, src, *, out=None):
    return out_structured(_scatter_add(input, dim, index, src), out, "scatter_add")


def _scatter_add(input, dim, index, src):
    require_tensor(src, "scatter_add", 4, "src")  # (no Number overload, as scatter has)
    d = _check_scatter("scatter_add", input, dim, index, src)
    if d is None:
        return _unchanged(input)
    return apply(_scatter_op(_SCATTER_ADD, index, src), (input, index, src), axis=d, reduce="add", include_self=True)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    return out_structured(_scatter_reduce(_SCATTER_REDUCE, input, dim, index, src, reduce, include_self), out,
                          "scatter_reduce")


def _scatter_reduce(op, input, dim, index, src, reduce, include_self):
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_scatter("scatter_reduce", input, dim, index, src)
    if reduce == "mean" and input.dtype is _dtype.bool:
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for \'Bool\'')
    if reduce in ("amax", "amin", "max", "min") and input.is_complex() and index.numel():
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_a{_REDUCE_NAMES[reduce]}" not implemented '
                                  f"for '{_tname(input)}'")
    if d is None:
        return _unchanged(input)
    if op is _SCATTER_REDUCE:
        op = _scatter_op(op, index, src, _REDUCE_NAMES[reduce])
    return apply(op, (input, index, src), axis=d, reduce=_REDUCE_NAMES[reduce], include_self=bool(include_self))


# ----------------------------------------------------------------------------------------------------------------
# index_add / index_copy / index_fill


def _index_add_fwd(x, idx, src, alpha, *, axis):
    x1, s1 = _as_1d(_acc(x)), _as_1d(_acc(src))
    out = x1.at[_along(x1, axis) + (_as_1d(idx),)].add((s1 * alpha).astype(x1.dtype)).reshape(x.shape)
    return out.astype(x.dtype) if x.dtype != jnp.bool_ else out != 0


def _acc(v):
    """The dtype an accumulating write adds in: bools add as int32 (then ``!= 0``: a logical or, as in PyTorch)."""
    return v.astype(jnp.int32) if v.dtype == jnp.bool_ else v


def _index_copy_fwd(x, idx, src, *, axis):
    x1, s1 = _as_1d(x), _as_1d(src)
    return set_at(x1, _along(x1, axis) + (_as_1d(idx),), s1.astype(x.dtype)).reshape(x.shape)


def _index_fill_fwd(x, idx, v, *, axis):
    x1 = _as_1d(x)
    return x1.at[_along(x1, axis) + (_as_1d(idx),)].set(jnp.asarray(v).astype(x.dtype)).reshape(x.shape)


_INDEX_ADD = defop("index_add", _index_add_fwd, linear=True, grad_name="IndexAddBackward0")
_INDEX_COPY = defop("index_copy", _index_copy_fwd, linear=True, grad_name="IndexCopyBackward0")
_INDEX_FILL = defop("index_fill", _index_fill_fwd, linear=True, grad_name="IndexFillBackward0")
_INDEX_FILL_T = defop("index_fill_t", _index_fill_fwd, linear=True, grad_name="IndexFillBackward1")


def _index_source(name, index, source):
    require_tensor(index, name, 3, "index")
    require_tensor(source, name, 4, "source")


def _index_vector(name, index):
    """PyTorch's first check of index_add_/index_reduce_ (index_func_meta_impl): a 0-d or 1-d index."""
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_tname(index)} and size: {list(index.shape)}")


def _source_matches(name, input, d, index, source, err):
    if name == "index_add_" and source.ndim and d >= source.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{source.ndim}")
    n = _dim_size(source, d) if source.ndim else 1
    if index.numel() != n:
        if name == "index_add_":
            raise err(f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                      f"({n}), for dim: {d}")
        raise err(f"{name}(): Number of indices ({index.numel()}) should be equal to source.size(dim) ({n})")


def index_add(input, dim, index, source, *, alpha=1, out=None):
    _index_source("index_add", index, source)
    d = _wrap(dim, input)
    _index_vector("index_add_", index)
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_tname(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_add_(): self ({_tname(input)}) and source ({_tname(source)}) must have the same "
                           f"scalar type")
    _source_matches("index_add_", input, d, index, source, RuntimeError)
    self_sizes, source_sizes = list(input.shape), list(source.shape)
    if input.ndim and source.ndim:
        del self_sizes[d], source_sizes[min(d, source.ndim - 1)]
    if self_sizes != source_sizes:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    # PyTorch's CPU kernel goes through index_put (RuntimeError) for an int64 index along the first or last dim of a
    # tensor of 2+ dims with alpha=1, and raises IndexError everywhere else; an empty tensor of 2+ dims is returned
    # unchecked
    if input.ndim > 1 and input.numel() == 0:
        pass
    elif input.ndim > 1 and d in (0, input.ndim - 1) and index._v.dtype == np.int64 and alpha == 1:
        _concrete_bounds(index, _dim_size(input, d), 0,
                         f"index {{b}} is out of bounds for dimension {d} with size {{size}}", RuntimeError)
    else:
        _concrete_bounds(index, _dim_size(input, d), 0, "index out of range in self", IndexError)
    from .elementwise import _out
    return _out(apply(_INDEX_ADD, (input, index, source, alpha), axis=d), out)


def _index_copy_checks(input, d, index, source):
    """PyTorch's index_copy meta function, in its order: the index's dims, the source's dims against the index's
    length (a 0-d source) or the destination's dims, the index's dtype, the dtypes, the slice shapes (every dim
    but ``d``), then the index's length against the source's size at ``d``."""
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    n = index.numel()
    if source.ndim == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {n})")
    if source.ndim != input.ndim and source.ndim and input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    if index._v.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_tname(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_tname(input)} and (source) {_tname(source)}")
    self_slice, source_slice = list(input.shape), list(source.shape)
    for sizes in (self_slice, source_slice):
        if sizes:
            del sizes[d]
    if self_slice != source_slice:  # (c10 prints the sizes spaced)
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, self_slice))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, source_slice))} at dimension 0.")
    if source.ndim and n != _dim_size(source, d):
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({_dim_size(source, d)})")


def index_copy(input, dim, index, source, *, out=None):
    if _registry.autocast_hook is not None and out is None:  # autocast promotes before the dtype check
        input, index, source = _registry.autocast_hook("index_copy", (input, index, source))
    _index_source("index_copy", index, source)
    d = _wrap(dim, input)
    _index_copy_checks(input, d, index, source)
    if input.numel() == 0:  # as index_fill: no bounds checked, but no slot to copy into along an empty dim
        rest = int(np.prod([s for k, s in enumerate(input.shape) if k != d]))
        if input.ndim and input.shape[d] == 0 and index.numel() and rest:
            raise RuntimeError(f"index_copy_(): cannot copy into index {int(index.reshape(-1)[0])} of dimension {d}, "
                               f"which has size 0")
    else:
        _concrete_bounds(index, _dim_size(input, d), 0,
                         f"index_copy_(): index {{b}} is out of bounds for dimension {d} with size {{size}}",
                         IndexError)
    from .elementwise import _out
    return _out(apply(_INDEX_COPY, (input, index, source), axis=d), out)


def _fill_value(value, dtype):
    """The value index_fill/masked_fill write into a ``dtype`` tensor, checked as PyTorch converts it: a number with
    :func:`check_scalar_fits`; a 0-d tensor through its ``item()``; a traced one (torchish.compile) has its imaginary
    part and range checked before the program runs (deferred checks)."""
    from .elementwise import scalar_or_tensor
    value = scalar_or_tensor(value)
    if not isinstance(value, Tensor):
        return check_scalar_fits(value, dtype)
    d = value._d
    if isinstance(d, jax.core.Tracer):
        name = _C_NAMES.get(dtype.name, dtype.name)
        if value.is_complex() and dtype.category != _dtype._COMPLEX and dtype is not _dtype.bool:
            tracing.defer_check(jnp.imag(d) != 0, jnp.imag(d), RuntimeError,
                                lambda _: f"value cannot be converted to type {name} without overflow")
        tracing.defer_check(overflows(d, dtype), d, RuntimeError,
                            lambda _: f"value cannot be converted to type {name} without overflow")
    elif not value.is_meta:
        check_scalar_fits(value.item(), dtype)  # PyTorch fills with ``value.item()``, checked
    return value


def index_fill(input, dim, index, value):
    require_tensor(index, "index_fill", 3, "index")
    d = _wrap(dim, input)
    if index._v.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if (value.is_complex() if isinstance(value, Tensor) else isinstance(value, complex)) and not input.is_complex():
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    n = _dim_size(input, d)
    if input.numel() == 0:  # PyTorch checks no bounds on an empty tensor, but fails to fill along an empty dim
        rest = int(np.prod([s for k, s in enumerate(input.shape) if k != d]))  # (when the other dims hold any)
        if n == 0 and index.numel() and rest:
            raise RuntimeError(f"index_fill_(): cannot fill index {int(index.reshape(-1)[0])} of dimension {d}, "
                               f"which has size 0")
    else:
        _concrete_bounds(index, n, -n, f"index {{b}} is out of bounds for dimension {d} with size {{size}}",
                         IndexError)
    value = _fill_value(value, input.dtype)
    op = _INDEX_FILL_T if isinstance(value, Tensor) else _INDEX_FILL
    from .out_layout import like_format  # (PyTorch fills a clone: it keeps a dense input's strides)
    return like_format(apply(op, (input, index, value), axis=d), input)


# ----------------------------------------------------------------------------------------------------------------
# masked_fill / masked_scatter


def _masked_fill_fwd(x, m, v):
    return jnp.where(m, jnp.asarray(v).astype(x.dtype), x)


_MASKED_FILL = defop("masked_fill", _masked_fill_fwd, linear=True, grad_name="MaskedFillBackward0")
_MASKED_FILL_T = defop("masked_fill_t", _masked_fill_fwd, linear=True, grad_name="MaskedFillBackward1")


def masked_fill(input, mask, value):
    require_tensor(mask, "masked_fill", 2, "mask")
    if mask._v.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.cpp_type_name(mask.dtype)}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    value = _fill_value(value, input.dtype)
    from .broadcast import broadcast_tensors
    if tuple(mask.shape) != tuple(input.shape):
        broadcast_tensors(mask, input)  # PyTorch's error for shapes that do not broadcast
    op = _MASKED_FILL_T if isinstance(value, Tensor) else _MASKED_FILL
    return apply(op, (input, mask, value))


def _masked_scatter_fwd(x, m, src):
    x, m = jnp.broadcast_arrays(x, m)
    flat = m.reshape(-1)
    pos = jnp.cumsum(flat.astype(jnp.int32)) - 1
    s = src.reshape(-1)
    vals = s[jnp.clip(pos, 0, max(s.size - 1, 0))] if s.size else jnp.zeros(pos.shape, x.dtype)
    return jnp.where(flat, vals.astype(x.dtype), x.reshape(-1)).reshape(x.shape)


_MASKED_SCATTER = defop("masked_scatter", _masked_scatter_fwd, linear=True, grad_name="MaskedScatterBackward0")


def masked_scatter(input, mask, source):
    require_tensor(mask, "masked_scatter", 2, "mask")
    require_tensor(source, "masked_scatter", 3, "source")
    if mask._v.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_tname(mask)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got{_tname(input)} and "
                           f"{_tname(source)}")
    from .broadcast import broadcast_tensors
    m, x = broadcast_tensors(mask, input)
    md = m._d
    if isinstance(md, jax.core.Tracer):  # (torchish.compile: checked before each run of the program)
        ones = jnp.count_nonzero(md)
        tracing.defer_check(ones > source.numel(), ones, RuntimeError,
                            lambda _: "Number of elements of source < number of ones in mask")
    elif int(np.count_nonzero(np.asarray(md))) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(_MASKED_SCATTER, (input, mask, source))


# ----------------------------------------------------------------------------------------------------------------
# put


def _put_fwd(x, idx, src, *, accumulate):
    if accumulate:
        flat, s = _acc(x).reshape(-1), _acc(src).reshape(-1)
        out = flat.at[idx.reshape(-1)].add(s.astype(flat.dtype)).reshape(x.shape)
        return out != 0 if x.dtype == jnp.bool_ else out
    return set_at(x.reshape(-1), idx.reshape(-1), src.reshape(-1).astype(x.dtype)).reshape(x.shape)


_PUT = defop("put", _put_fwd, linear=True, grad_name="PutBackward0")


def put(input, index, source, accumulate=False):
    if not isinstance(source, Tensor):
        raise TypeError(f"put(): argument 'source' (position 3) must be Tensor, not {type(source).__name__}")
    require_tensor(index, "put_", 2, "index")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_tname(input)} and source.dtype = {_tname(source)}")
    _check_flat_index(input, index, "put_")  # the index's dtype, then its bounds
    from .out_layout import like_format  # (PyTorch writes into a clone: it keeps a dense input's strides)
    return like_format(apply(_PUT, (input, index, source), accumulate=bool(accumulate)), input)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """``torch.index_reduce``: reduce (``prod``, ``mean``, ``amax``, ``amin``) slice ``i`` of ``source`` along
    ``dim`` into slice ``index[i]`` of ``input`` — a ``scatter_reduce`` with ``index`` spread over source's shape."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    _index_source("index_reduce", index, source)
    d = _wrap(dim, input)
    _index_vector("index_reduce_", index)
    if index._v.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_tname(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_tname(input)}) and source ({_tname(source)}) must have the "
                           "same scalar type")
    _source_matches("index_reduce_", input, d, index, source, RuntimeError)
    _concrete_bounds(index, _dim_size(input, d), 0, "index out of range in self", IndexError)
    from .elementwise import _out
    if source.ndim == 0:
        source = source.reshape(1)
    view = [1] * source.ndim
    view[d] = index.numel()
    spread = index.to(_dtype.int64).reshape(view).expand(*source.shape)
    return _out(_scatter_reduce(_INDEX_REDUCE, input, d, spread, source, reduce, include_self), out)


for _n in ("scatter", "scatter_add", "scatter_reduce", "masked_fill", "masked_scatter", "index_add", "index_copy",
           "index_fill", "put", "index_reduce"):
    _public(_n, globals()[_n])


def _inplace(fn, name):
    from .inplace import make_inplace
    return make_inplace(fn, name + "_")


for _n in ("scatter", "scatter_add", "scatter_reduce", "masked_fill", "masked_scatter", "index_add", "index_copy",
           "index_fill", "put", "index_reduce"):
    METHODS[_n + "_"] = _inplace(_scatter_inplace_body if _n == "scatter" else globals()[_n], _n)
