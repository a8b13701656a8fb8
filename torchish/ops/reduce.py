"""Reductions and scans: sum, mean, prod, max/min (with indices), std/var, norm, logsumexp, cumsum, all/any,
softmax/log_softmax... with PyTorch's ``dim``/``keepdim`` conventions, result dtypes and gradients."""
from __future__ import annotations

import collections
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from .elementwise import _out
from .inplace import make_inplace
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public



def _return_type(name, fields=("values", "indices")):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: f"torch.return_types.{name}(" + ",\n".join(
        f"{f}={v!r}" for f, v in zip(fields, self)) + ")"
    return cls


RETURN_TYPES = {n: _return_type(n) for n in ("max", "min", "median", "nanmedian", "mode", "kthvalue", "sort",
                                              "topk", "cummax", "cummin", "aminmax")}
RETURN_TYPES["aminmax"] = _return_type("aminmax", ("min", "max"))


def dims(dim, ndim):
    """``dim`` (int, sequence or None) as a sorted tuple of non-negative axes, or None for all."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        out = tuple(sorted(wrap_dim(d, ndim) for d in dim))
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return out
    return (wrap_dim(dim, ndim),)


def _acc_dtype(x, dtype):
    """Result dtype of sum/prod/cumsum: integers and bools accumulate in int64 unless dtype= says otherwise."""
    if dtype is not None:
        return _dtype.as_dtype(dtype)
    d = x.dtype
    return _dtype.int64 if d.category <= _dtype._INT else d


# ----------------------------------------------------------------------------------------------------------------
# sum / mean / prod

def _sum_fwd(x, *, axis, keepdims, dtype):
    return jnp.sum(x.astype(dtype), axis=axis, keepdims=keepdims)


_SUM = defop("sum", _sum_fwd, linear=True, grad_name="SumBackward1")
_SUM_ALL = defop("sum_all", _sum_fwd, linear=True, grad_name="SumBackward0")


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dt = _acc_dtype(input, dtype)
    ax = dims(dim, input.ndim)
    op = _SUM_ALL if ax is None else _SUM
    return _out(apply(op, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out)


def _mean_fwd(x, *, axis, keepdims, dtype):
    return jnp.mean(x.astype(dtype), axis=axis, keepdims=keepdims)


_MEAN = defop("mean", _mean_fwd, linear=True, grad_name="MeanBackward1")
_MEAN_ALL = defop("mean_all", _mean_fwd, linear=True, grad_name="MeanBackward0")


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dt = _dtype.as_dtype(dtype) if dtype is not None else input.dtype
    if dt.category < _dtype._FLOAT:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.scalar_type_name(dt)}")
    ax = dims(dim, input.ndim)
    op = _MEAN_ALL if ax is None else _MEAN
    return _out(apply(op, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    from .elementwise import where, isnan
    return sum(where(isnan(input), 0, input), dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    from .elementwise import isnan, logical_not
    n = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / n


_PROD = defop("prod", lambda x, *, axis, keepdims, dtype: jnp.prod(x.astype(dtype), axis=axis, keepdims=keepdims),
              grad_name="ProdBackward1")


def prod(input, dim=None, keepdim=False, *, dtype=None):
    dt = _acc_dtype(input, dtype)
    ax = None if dim is None else (wrap_dim(dim, input.ndim),)
    return apply(_PROD, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np)


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size`` (the inverse of broadcasting)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    lead = input.ndim - len(shape)
    ax = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and input.shape[i + lead] != 1)
    out = input
    if ax:
        out = sum(out, ax, keepdim=True)
    if lead:
        from .shape import reshape
        out = reshape(out, shape)
    return out


for _n in ("sum", "mean", "nansum", "nanmean", "prod", "sum_to_size"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# max / min / argmax / amax / median / mode


def _max_dim_fwd(x, *, axis, keepdims, largest):
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    idx = jnp.argmax(x, axis=axis, keepdims=True) if largest else jnp.argmin(x, axis=axis, keepdims=True)
    if jnp.issubdtype(x.dtype, jnp.floating):  # NaN propagates and wins, as in PyTorch
        nan_idx = jnp.argmax(jnp.isnan(x), axis=axis, keepdims=True)
        has_nan = jnp.any(jnp.isnan(x), axis=axis, keepdims=True)
        idx = jnp.where(has_nan, nan_idx, idx)
    val = jnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        val, idx = jnp.squeeze(val, axis), jnp.squeeze(idx, axis)
    return val, idx.astype(jnp.int64)


_MAX_DIM = defop("max_dim", _max_dim_fwd, grad_name="MaxBackward0")
_MIN_DIM = defop("min_dim", _max_dim_fwd, grad_name="MinBackward0")


def _amax_fwd(x, *, axis, keepdims, largest):
    f = jnp.max if largest else jnp.min
    return f(x, axis=axis, keepdims=keepdims)


def _amax_vjp(g, x, out, axis, keepdims, largest):
    """Evenly distributed over ties, as PyTorch's amax/amin and full max()/min()."""
    ax = axis if axis is not None else tuple(range(x.ndim))
    if not keepdims:
        g, out = jnp.expand_dims(g, ax), jnp.expand_dims(out, ax)
    mask = (x == out).astype(g.dtype)
    return g * mask / jnp.sum(mask, axis=ax, keepdims=True)


_AMAX = defop("amax", _amax_fwd, vjp=_amax_vjp, grad_name="AmaxBackward0")
_AMIN = defop("amin", _amax_fwd, vjp=_amax_vjp, grad_name="AminBackward0")
_MAX_ALL = defop("max_all", _amax_fwd, vjp=_amax_vjp, grad_name="MaxBackward1")
_MIN_ALL = defop("min_all", _amax_fwd, vjp=_amax_vjp, grad_name="MinBackward1")


def _check_nonempty(input, name, dim=None):
    if input.numel() == 0:
        if dim is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _maxmin(largest):
    name = "max" if largest else "min"

    def f(input, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, Tensor) or (dim is not None and not isinstance(dim, int) and not hasattr(dim, "__index__")):
            from .elementwise import maximum, minimum
            return (maximum if largest else minimum)(input, dim)
        if dim is None:
            _check_nonempty(input, name)
            return apply(_MAX_ALL if largest else _MIN_ALL, (input,), axis=None, keepdims=False, largest=largest)
        d = wrap_dim(dim, input.ndim)
        if input.ndim and input.shape[d] == 0:
            _check_nonempty(input, name, d)
        op = _MAX_DIM if largest else _MIN_DIM
        v, i = apply(op, (input,), axis=d if input.ndim else None, keepdims=bool(keepdim), largest=largest)
        return RETURN_TYPES[name](v, i)
    return f


max = _maxmin(True)
min = _maxmin(False)


def amax(input, dim=(), keepdim=False):
    ax = dims(dim, input.ndim)
    return apply(_AMAX, (input,), axis=ax, keepdims=bool(keepdim), largest=True)


def amin(input, dim=(), keepdim=False):
    ax = dims(dim, input.ndim)
    return apply(_AMIN, (input,), axis=ax, keepdims=bool(keepdim), largest=False)


def aminmax(input, *, dim=None, keepdim=False):
    return RETURN_TYPES["aminmax"](amin(input, dim if dim is not None else (), keepdim),
                                   amax(input, dim if dim is not None else (), keepdim))


def _arg_fwd(x, *, axis, keepdims, largest):
    f = jnp.argmax if largest else jnp.argmin
    if axis is None:
        r = f(x.reshape(-1))
        return (r.reshape((1,) * x.ndim) if keepdims else r).astype(jnp.int64)
    return f(x, axis=axis, keepdims=keepdims).astype(jnp.int64)


_ARGMAX = defop("argmax", _arg_fwd, differentiable=False)


def argmax(input, dim=None, keepdim=False):
    ax = None if dim is None else wrap_dim(dim, input.ndim)
    _check_nonempty(input, "argmax", ax)
    return apply(_ARGMAX, (input,), axis=ax, keepdims=bool(keepdim), largest=True)


def argmin(input, dim=None, keepdim=False):
    ax = None if dim is None else wrap_dim(dim, input.ndim)
    _check_nonempty(input, "argmin", ax)
    return apply(_ARGMAX, (input,), axis=ax, keepdims=bool(keepdim), largest=False)


for _n in ("max", "min", "amax", "amin", "aminmax", "argmax", "argmin"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# std / var


def _var_fwd(x, *, axis, keepdims, correction, sqrt):
    n = x.size if axis is None else math.prod(x.shape[a] for a in axis)
    m = jnp.mean(x, axis=axis, keepdims=True)
    d = x - m
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(d) else d * d
    v = jnp.sum(sq, axis=axis, keepdims=keepdims) / jnp.maximum(n - correction, 0)
    return jnp.sqrt(v) if sqrt else v


_VAR = defop("var", _var_fwd, grad_name="VarBackward0")
_STD = defop("std", _var_fwd, grad_name="StdBackward0")


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def _var_args(input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        unbiased, dim = dim, None
    if input.dtype.category < _dtype._FLOAT:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return dims(dim, input.ndim), bool(keepdim), _correction(unbiased, correction)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    ax, kd, c = _var_args(input, dim, unbiased, keepdim, correction)
    return apply(_VAR, (input,), axis=ax, keepdims=kd, correction=c, sqrt=False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    ax, kd, c = _var_args(input, dim, unbiased, keepdim, correction)
    return apply(_STD, (input,), axis=ax, keepdims=kd, correction=c, sqrt=True)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


for _n in ("var", "std"):
    _public(_n, globals()[_n])
for _n in ("var_mean", "std_mean"):
    _public(_n, globals()[_n], method=False)


# ----------------------------------------------------------------------------------------------------------------
# norms, logsumexp


def _vector_norm_fwd(x, *, ord, axis, keepdims):
    a = jnp.abs(x)
    if ord == math.inf:
        return jnp.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return jnp.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return jnp.sum((a != 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return jnp.sqrt(jnp.sum(a * a, axis=axis, keepdims=keepdims))
    return jnp.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _vector_norm_vjp(g, x, out, ord, axis, keepdims):
    """PyTorch's norm_backward: the gradient at a zero norm is zero (not NaN)."""
    if not keepdims and axis is not None:
        g, out = jnp.expand_dims(g, axis), jnp.expand_dims(out, axis)
    elif not keepdims:
        g, out = g.reshape((1,) * x.ndim), out.reshape((1,) * x.ndim)
    zero = jnp.zeros((), x.dtype)
    sgn = jnp.sign(x) if not jnp.iscomplexobj(x) else x / jnp.where(x == 0, 1, jnp.abs(x))
    if ord == 0:
        return jnp.zeros_like(x)
    if ord == 1:
        return g * sgn
    if ord == 2:
        return jnp.where(out == 0, zero, g * x / jnp.where(out == 0, 1, out))
    if ord in (math.inf, -math.inf):
        mask = (jnp.abs(x) == out).astype(x.dtype)
        return g * sgn * mask / jnp.sum(mask, axis=axis, keepdims=True)
    a = jnp.abs(x)
    scale = a ** (ord - 1) / jnp.where(out == 0, 1, out) ** (ord - 1)
    return jnp.where(out == 0, zero, g * sgn * scale)


_VECTOR_NORM = defop("linalg_vector_norm", _vector_norm_fwd, vjp=_vector_norm_vjp,
                     grad_name="LinalgVectorNormBackward0")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        from .convert import to_dtype
        x = to_dtype(x, dtype)
    if x.dtype.category < _dtype._FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(x.dtype)}")
    ax = dims(dim, x.ndim)
    return apply(_VECTOR_NORM, (x,), ord=float(ord), axis=ax, keepdims=bool(keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm``: vector norms (p a number), Frobenius (``'fro'``) and nuclear (``'nuc'``) norms."""
    if p == "fro" and (dim is None or isinstance(dim, int) or len(dims(dim, input.ndim)) <= 2):
        p = 2
    if p == "nuc":
        from .linalg import matrix_norm
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"norm(): unsupported p={p!r}")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def _lse_fwd(x, *, axis, keepdims):
    return jax.nn.logsumexp(x, axis=axis, keepdims=keepdims)


_LSE = defop("logsumexp", _lse_fwd, promote="float", grad_name="LogsumexpBackward0")


def logsumexp(input, dim, keepdim=False):
    return apply(_LSE, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim))


_public("norm", norm)
_public("logsumexp", logsumexp)


# ----------------------------------------------------------------------------------------------------------------
# all / any / count_nonzero


_ALL = defop("all", lambda x, *, axis, keepdims: jnp.all(x, axis=axis, keepdims=keepdims), differentiable=False)
_ANY = defop("any", lambda x, *, axis, keepdims: jnp.any(x, axis=axis, keepdims=keepdims), differentiable=False)


def all(input, dim=None, keepdim=False):
    return apply(_ALL, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim))


def any(input, dim=None, keepdim=False):
    return apply(_ANY, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim))


_COUNT_NZ = defop("count_nonzero", lambda x, *, axis: jnp.count_nonzero(x, axis=axis).astype(jnp.int64),
                  differentiable=False)


def count_nonzero(input, dim=None):
    return apply(_COUNT_NZ, (input,), axis=dims(dim, input.ndim))


for _n in ("all", "any", "count_nonzero"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# scans


def _cumsum_fwd(x, *, axis, dtype):
    return jnp.cumsum(x.astype(dtype), axis=axis)


def _cumprod_fwd(x, *, axis, dtype):
    return jnp.cumprod(x.astype(dtype), axis=axis)


_CUMSUM = defop("cumsum", _cumsum_fwd, linear=True, grad_name="CumsumBackward0")
_CUMPROD = defop("cumprod", _cumprod_fwd, grad_name="CumprodBackward0")


def cumsum(input, dim, *, dtype=None, out=None):
    dt = _acc_dtype(input, dtype)
    d = wrap_dim(dim, input.ndim)
    return _out(apply(_CUMSUM, (input,), axis=d if input.ndim else None, dtype=dt.np), out)


def cumprod(input, dim, *, dtype=None, out=None):
    dt = _acc_dtype(input, dtype)
    d = wrap_dim(dim, input.ndim)
    return _out(apply(_CUMPROD, (input,), axis=d if input.ndim else None, dtype=dt.np), out)


def _cummax_fwd(x, *, axis, largest):
    n = x.shape[axis]
    idx = jnp.broadcast_to(jnp.arange(n).reshape((-1,) + (1,) * (x.ndim - axis - 1)), x.shape)

    def comb(a, b):
        va, ia = a
        vb, ib = b
        take_b = (vb >= va) if largest else (vb <= va)
        if jnp.issubdtype(x.dtype, jnp.floating):
            take_b = take_b | jnp.isnan(vb)
            take_b = take_b & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    v, i = jax.lax.associative_scan(comb, (x, idx), axis=axis)
    return v, i.astype(jnp.int64)


_CUMMAX = defop("cummax", _cummax_fwd, grad_name="CummaxBackward0")
_CUMMIN = defop("cummin", _cummax_fwd, grad_name="CumminBackward0")


def cummax(input, dim):
    v, i = apply(_CUMMAX, (input,), axis=wrap_dim(dim, input.ndim), largest=True)
    return RETURN_TYPES["cummax"](v, i)


def cummin(input, dim):
    v, i = apply(_CUMMIN, (input,), axis=wrap_dim(dim, input.ndim), largest=False)
    return RETURN_TYPES["cummin"](v, i)


_LOGCUMSUMEXP = defop("logcumsumexp", lambda x, *, axis: jax.lax.cumlogsumexp(x, axis=axis), promote="float")


def logcumsumexp(input, dim):
    return apply(_LOGCUMSUMEXP, (input,), axis=wrap_dim(dim, input.ndim))


for _n in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
    _public(_n, globals()[_n])
METHODS["cumsum_"] = make_inplace(cumsum, "cumsum_")
METHODS["cumprod_"] = make_inplace(cumprod, "cumprod_")


# ----------------------------------------------------------------------------------------------------------------
# softmax family


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_fwd(x, *, axis, dtype):
    return jax.nn.softmax(x.astype(dtype), axis=axis)


def _softmax_vjp(g, x, out, axis, dtype):
    return out * (g - jnp.sum(g * out, axis=axis, keepdims=True))


def _log_softmax_fwd(x, *, axis, dtype):
    return jax.nn.log_softmax(x.astype(dtype), axis=axis)


def _log_softmax_vjp(g, x, out, axis, dtype):
    return g - jnp.exp(out) * jnp.sum(g, axis=axis, keepdims=True)


_SOFTMAX = defop("softmax", _softmax_fwd, vjp=_softmax_vjp, grad_name="SoftmaxBackward0")
_LOG_SOFTMAX = defop("log_softmax", _log_softmax_fwd, vjp=_log_softmax_vjp, grad_name="LogSoftmaxBackward0")


def _softmax_args(input, dim, dtype):
    if dim is None:
        import warnings
        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                      "as an argument.", stacklevel=3)
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        from .convert import to_dtype
        input = to_dtype(input, dtype)
    if input.dtype.category < _dtype._FLOAT:
        raise RuntimeError(f"\"softmax_lastdim_kernel_impl\" not implemented for "
                           f"'{_dtype.scalar_type_name(input.dtype)}'")
    return input, (wrap_dim(dim, input.ndim) if input.ndim else None)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, ax = _softmax_args(input, dim, dtype)
    return apply(_SOFTMAX, (input,), axis=ax, dtype=input._d.dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, ax = _softmax_args(input, dim, dtype)
    return apply(_LOG_SOFTMAX, (input,), axis=ax, dtype=input._d.dtype)


_public("softmax", softmax)
_public("log_softmax", log_softmax)
