"""Reductions and scans: sum, mean, prod, max/min (with indices), std/var, norm, logsumexp, all/any, cumsum and
friends, diff/trapezoid, softmax/log_softmax... with PyTorch's ``dim``/``keepdim`` conventions (``axis``/``keepdims``
accepted too), result dtypes, errors and gradients (ties split evenly where PyTorch splits them).

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([[1., 5., 5.], [2., 0., 3.]])
    >>> x.max(dim=1)
    torch.return_types.max(
    values=tensor([5., 3.]),
    indices=tensor([1, 2]))
"""
from __future__ import annotations

import builtins
import collections
import functools
import math

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from .elementwise import _out, not_implemented, require_tensor
from .inplace import make_inplace
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public
_INT, _FLOAT = _dtype._INT, _dtype._FLOAT


def _return_type(name, fields=("values", "indices")):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: f"torch.return_types.{name}(\n" + ",\n".join(
        f"{f}={v!r}" for f, v in zip(fields, self)) + ")"
    return cls


RETURN_TYPES = {n: _return_type(n) for n in ("max", "min", "median", "nanmedian", "mode", "kthvalue", "sort",
                                              "topk", "cummax", "cummin")}
RETURN_TYPES["aminmax"] = _return_type("aminmax", ("min", "max"))


def numpy_kwargs(fn):
    """Accept NumPy's spellings ``axis=`` and ``keepdims=``, as PyTorch's argument parser does."""
    @functools.wraps(fn)
    def f(*args, **kw):
        if "axis" in kw:
            kw["dim"] = kw.pop("axis")
        if "keepdims" in kw:
            kw["keepdim"] = kw.pop("keepdims")
        return fn(*args, **kw)
    return f


def dims(dim, ndim):
    """``dim`` (int, sequence or None) as a sorted tuple of non-negative axes, or None for all; () for a 0-dim
    input (whose only valid dims are 0 and -1)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        out = [wrap_dim(d, ndim) for d in dim]
        seen = set()
        for d in out:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
        return tuple(sorted(out)) if ndim else ()
    d = wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def one_dim(dim, ndim):
    """A single reduction dim, or None for a 0-dim input."""
    d = wrap_dim(dim, ndim)
    return d if ndim else None


def _acc_dtype(x, dtype, out=None):
    """Result dtype of sum/prod/cumsum: integers and bools accumulate in int64 unless dtype= (or the dtype of an
    ``out=`` tensor) says otherwise."""
    if dtype is not None:
        return _dtype.as_dtype(dtype)
    if out is not None:
        return out.dtype
    d = x.dtype
    return _dtype.int64 if d.category <= _INT else d


def scatter_add_along(shape, dtype, idx, g, axis):
    """Zeros of ``shape`` with ``g`` added at positions ``idx`` along ``axis`` (the backward of selecting values
    by index: max/min with dim, sort, topk, kthvalue, median, mode, cummax)."""
    grids = list(jnp.indices(idx.shape, sparse=True))
    grids[axis] = idx
    return jnp.zeros(shape, dtype).at[tuple(grids)].add(g.astype(dtype))


def _check_nonempty(input, name, dim=None):
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
    elif input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


# ----------------------------------------------------------------------------------------------------------------
# sum / mean / prod


def _sum_fwd(x, *, axis, keepdims, dtype):
    return jnp.sum(x.astype(dtype), axis=axis, keepdims=keepdims, dtype=dtype)


_SUM = defop("sum", _sum_fwd, linear=True, grad_name="SumBackward1")
_SUM_ALL = defop("sum_all", _sum_fwd, linear=True, grad_name="SumBackward0")
_NANSUM = defop("nansum", lambda x, *, axis, keepdims, dtype: jnp.nansum(x.astype(dtype), axis=axis,
                                                                           keepdims=keepdims, dtype=dtype),
                grad_name="NansumBackward0")


@numpy_kwargs
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "sum")
    if out is not None and dim is None:
        raise TypeError("sum() received an invalid combination of arguments - got (Tensor, out=Tensor), but expected "
                        "(Tensor input, *, torch.dtype dtype = None) or (Tensor input, tuple of ints dim, bool "
                        "keepdim = False, *, torch.dtype dtype = None, Tensor out = None)")
    dt = _acc_dtype(input, dtype, out)
    ax = dims(dim, input.ndim)
    op = _SUM_ALL if ax is None else _SUM
    return _out(apply(op, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out, "sum")


@numpy_kwargs
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "nansum")
    dt = _acc_dtype(input, dtype, out)
    if dt.category <= _INT and input.dtype.category >= _FLOAT:
        raise not_implemented("nansum_cpu", dt)
    return _out(apply(_NANSUM, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim), dtype=dt.np), out,
                "nansum")


def _mean_fwd(x, *, axis, keepdims, dtype):
    return jnp.mean(x.astype(dtype), axis=axis, keepdims=keepdims)


_MEAN = defop("mean", _mean_fwd, linear=True, grad_name="MeanBackward1")
_MEAN_ALL = defop("mean_all", _mean_fwd, linear=True, grad_name="MeanBackward0")


@numpy_kwargs
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "mean")
    if out is not None and dtype is None:
        if out.dtype.category < _FLOAT:
            raise RuntimeError("mean.dtype_out(): input types can't be cast to the desired output type "
                               f"{_dtype.scalar_type_name(out.dtype)}")
        dtype = out.dtype
    if dtype is not None:
        dt = _dtype.as_dtype(dtype)
        if dt.category < _FLOAT:
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating point "
                               f"or complex dtype. Got: {_dtype.scalar_type_name(dt)}")
    else:
        dt = input.dtype
        if dt.category < _FLOAT:
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {_dtype.scalar_type_name(dt)}")
    ax = dims(dim, input.ndim)
    op = _MEAN_ALL if ax is None else _MEAN
    return _out(apply(op, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out, "mean")


@numpy_kwargs
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "nanmean")
    if input.dtype.category < _FLOAT:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    from .elementwise import isnan, logical_not
    n = sum(logical_not(isnan(input)), dim, keepdim)
    return _out(nansum(input, dim, keepdim, dtype=dtype) / n, out, "nanmean")


def _prod_fwd(x, *, axis, keepdims, dtype):
    return jnp.prod(x.astype(dtype), axis=axis, keepdims=keepdims, dtype=dtype)


_PROD = defop("prod", _prod_fwd, grad_name="ProdBackward1")
_PROD_ALL = defop("prod_all", _prod_fwd, grad_name="ProdBackward0")


@numpy_kwargs
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "prod")
    if dim is not None and not isinstance(dim, int) and not hasattr(dim, "__index__"):
        raise TypeError(f"prod() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of: (Tensor input, *, torch.dtype dtype = None) or "
                        "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None)")
    dt = _acc_dtype(input, dtype, out)
    if dim is None:
        return _out(apply(_PROD_ALL, (input,), axis=None, keepdims=False, dtype=dt.np), out, "prod")
    ax = dims(dim, input.ndim)
    return _out(apply(_PROD, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out, "prod")


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
# max / min / argmax / amax


def _max_dim_fwd(x, *, axis, keepdims, largest):
    if axis is None:  # 0-dim input
        return x, jnp.zeros((), jnp.int64)
    f = jnp.argmax if largest else jnp.argmin
    idx = f(x, axis=axis, keepdims=True)
    if jnp.issubdtype(x.dtype, jnp.inexact):  # NaN propagates and wins, as in PyTorch
        nan = jnp.isnan(x)
        idx = jnp.where(jnp.any(nan, axis=axis, keepdims=True), jnp.argmax(nan, axis=axis, keepdims=True), idx)
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
    """amax/amin: the gradient is split evenly over the tied maxima (NaN results give NaN gradients)."""
    ax = axis if axis is not None else tuple(range(x.ndim))
    if not keepdims:
        g, out = jnp.expand_dims(g, ax), jnp.expand_dims(out, ax)
    mask = (x == out).astype(g.dtype)
    return g * mask / jnp.sum(mask, axis=ax, keepdims=True)


def _max_all_vjp(g, x, out, axis, keepdims, largest):
    """max()/min() over everything (PyTorch's evenly_distribute_backward): a NaN result goes to the NaNs."""
    mask = jnp.where(jnp.isnan(out), jnp.isnan(x), x == out).astype(g.dtype)
    return g * mask / jnp.sum(mask)


_AMAX = defop("amax", _amax_fwd, vjp=_amax_vjp, grad_name="AmaxBackward0")
_AMIN = defop("amin", _amax_fwd, vjp=_amax_vjp, grad_name="AminBackward0")
_MAX_ALL = defop("max_all", _amax_fwd, vjp=_max_all_vjp, grad_name="MaxBackward1")
_MIN_ALL = defop("min_all", _amax_fwd, vjp=_max_all_vjp, grad_name="MinBackward1")


def _maxmin(largest):
    name = "max" if largest else "min"

    @numpy_kwargs
    def f(input, dim=None, keepdim=False, *, out=None):
        require_tensor(input, name)
        if isinstance(dim, Tensor):
            from .elementwise import maximum, minimum
            return (maximum if largest else minimum)(input, dim, out=out)
        if dim is None:
            _check_nonempty(input, name)
            return _out(apply(_MAX_ALL if largest else _MIN_ALL, (input,), axis=None, keepdims=False,
                              largest=largest), out, name)
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"{name}() received an invalid combination of arguments - got (dim={type(dim).__name__}"
                            "), but expected one of: (), (Tensor other), (int dim, bool keepdim = False)")
        d = wrap_dim(dim, input.ndim)
        _check_nonempty(input, name, d)
        v, i = apply(_MAX_DIM if largest else _MIN_DIM, (input,), axis=d if input.ndim else None,
                     keepdims=bool(keepdim), largest=largest)
        if out is not None:
            v, i = _out(v, out[0], name), _out(i, out[1], name)
        return RETURN_TYPES[name](v, i)
    f.__name__ = f.__qualname__ = name
    return f


max = _maxmin(True)
min = _maxmin(False)


def _amaxmin(largest):
    name = "amax" if largest else "amin"

    @numpy_kwargs
    def f(input, dim=(), keepdim=False, *, out=None):
        require_tensor(input, name)
        if out is not None and out.dtype is not input.dtype:
            raise RuntimeError(f"Expected the dtype for input and out to match, but got "
                               f"{_dtype.scalar_type_name(input.dtype)} for input's dtype and "
                               f"{_dtype.scalar_type_name(out.dtype)} for out's dtype.")
        ax = dims(dim, input.ndim)
        if ax is None:
            _check_nonempty(input, name)
        else:
            for d in ax:
                _check_nonempty(input, name, d)
        return _out(apply(_AMAX if largest else _AMIN, (input,), axis=ax, keepdims=bool(keepdim), largest=largest),
                    out, name)
    f.__name__ = f.__qualname__ = name
    return f


amax = _amaxmin(True)
amin = _amaxmin(False)


def aminmax(input, *, dim=None, keepdim=False):
    """``(amin, amax)`` as a ``torch.return_types.aminmax``."""
    require_tensor(input, "aminmax")
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is not None:
        _check_nonempty(input, "aminmax", wrap_dim(dim, input.ndim))
    d = () if dim is None else dim
    return RETURN_TYPES["aminmax"](amin(input, d, keepdim), amax(input, d, keepdim))


def _arg_fwd(x, *, axis, keepdims, largest):
    f = jnp.argmax if largest else jnp.argmin
    if jnp.issubdtype(x.dtype, jnp.inexact):  # the first NaN wins
        nan = jnp.isnan(x if axis is not None else x.reshape(-1))
        r = f(x if axis is not None else x.reshape(-1), axis=axis, keepdims=keepdims and axis is not None)
        ax = axis if axis is not None else 0
        first = jnp.argmax(nan, axis=ax, keepdims=keepdims and axis is not None)
        r = jnp.where(jnp.any(nan, axis=ax, keepdims=keepdims and axis is not None), first, r)
    else:
        r = f(x if axis is not None else x.reshape(-1), axis=axis, keepdims=keepdims and axis is not None)
    if axis is None and keepdims:
        r = r.reshape((1,) * x.ndim)
    return r.astype(jnp.int64)


_ARGMAX = defop("argmax", _arg_fwd, differentiable=False)


def _argmaxmin(largest):
    name = "argmax" if largest else "argmin"

    @numpy_kwargs
    def f(input, dim=None, keepdim=False, *, out=None):
        require_tensor(input, name)
        if input.dtype is _dtype.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if input.numel() == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            ax = None
        else:
            ax = one_dim(dim, input.ndim)
            _check_nonempty(input, name, ax)
        return _out(apply(_ARGMAX, (input,), axis=ax, keepdims=bool(keepdim), largest=largest), out, name)
    f.__name__ = f.__qualname__ = name
    return f


argmax = _argmaxmin(True)
argmin = _argmaxmin(False)

for _n in ("max", "min", "amax", "amin", "aminmax", "argmax", "argmin"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# std / var


def _var_fwd(x, *, axis, keepdims, correction, sqrt):
    n = x.size if axis is None else math.prod(x.shape[a] for a in axis)
    d = x - jnp.mean(x, axis=axis, keepdims=True)
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(d) else d * d
    v = jnp.sum(sq, axis=axis, keepdims=keepdims) / builtins.max(n - correction, 0)
    return jnp.sqrt(v) if sqrt else v


def _var_vjp(g, x, out, axis, keepdims, correction, sqrt):
    """PyTorch's var_backward / std_backward (the std gradient is zero where the std is zero)."""
    ax = axis if axis is not None else tuple(range(x.ndim))
    n = math.prod(x.shape[a] for a in ax)
    if not keepdims:
        g, out = jnp.expand_dims(g, ax), jnp.expand_dims(out, ax)
    d = x - jnp.mean(x, axis=ax, keepdims=True)
    if sqrt:
        scale = jnp.where(out == 0, jnp.zeros((), out.dtype), g / jnp.where(out == 0, 1, out))
    else:
        scale = 2 * g
    return scale * d / (n - correction)


_VAR = defop("var", _var_fwd, vjp=_var_vjp, grad_name="VarBackward0")
_STD = defop("std", _var_fwd, vjp=_var_vjp, grad_name="StdBackward0")


def _var_args(name, input, dim, unbiased, keepdim, correction):
    require_tensor(input, name)
    if isinstance(dim, bool):  # var(input, unbiased)
        unbiased, dim = dim, None
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased and correction")
    if input.dtype.category < _FLOAT:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    c = float(correction) if correction is not None else (0.0 if unbiased is False else 1.0)
    return dims(dim, input.ndim), bool(keepdim), c


@numpy_kwargs
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    ax, kd, c = _var_args("var", input, dim, unbiased, keepdim, correction)
    return _out(apply(_VAR, (input,), axis=ax, keepdims=kd, correction=c, sqrt=False), out, "var")


@numpy_kwargs
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    ax, kd, c = _var_args("std", input, dim, unbiased, keepdim, correction)
    return _out(apply(_STD, (input,), axis=ax, keepdims=kd, correction=c, sqrt=True), out, "std")


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
    if x.dtype.category < _FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(x.dtype)}")
    ax = dims(dim, x.ndim)
    return apply(_VECTOR_NORM, (x,), ord=float(ord), axis=ax, keepdims=bool(keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm``: vector norms (p a number), Frobenius (``'fro'``) and nuclear (``'nuc'``) norms."""
    if p == "fro" and (dim is None or isinstance(dim, int) or len(dims(dim, input.ndim) or ()) <= 2):
        p = 2
    if p == "nuc":
        from .linalg import matrix_norm
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"norm(): unsupported p={p!r}")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def _lse_fwd(x, *, axis, keepdims):
    if axis == ():
        return x
    return jax.nn.logsumexp(x, axis=axis, keepdims=keepdims)


_LSE = defop("logsumexp", _lse_fwd, promote="float", grad_name="LogsumexpBackward0")


@numpy_kwargs
def logsumexp(input, dim, keepdim=False, *, out=None):
    require_tensor(input, "logsumexp")
    ax = dims(dim, input.ndim)
    return _out(apply(_LSE, (input,), axis=ax, keepdims=bool(keepdim)), out, "logsumexp")


_public("norm", norm)
_public("logsumexp", logsumexp)


# ----------------------------------------------------------------------------------------------------------------
# all / any / count_nonzero


def _bool_reduce(f):
    def fwd(x, *, axis, keepdims):
        r = f(x, axis=axis, keepdims=keepdims)
        return r.astype(jnp.uint8) if x.dtype == jnp.uint8 else r  # PyTorch keeps uint8 for uint8 inputs
    return fwd


_ALL = defop("all", _bool_reduce(jnp.all), differentiable=False)
_ANY = defop("any", _bool_reduce(jnp.any), differentiable=False)


@numpy_kwargs
def _check_bool_out(name, input, out):
    want = _dtype.uint8 if input.dtype is _dtype.uint8 else _dtype.bool
    if out is not None and out.dtype is not want:
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {_dtype.scalar_type_name(out.dtype)}")


def all(input, dim=None, keepdim=False, *, out=None):
    require_tensor(input, "all")
    _check_bool_out("all", input, out)
    return _out(apply(_ALL, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim)), out, "all")


@numpy_kwargs
def any(input, dim=None, keepdim=False, *, out=None):
    require_tensor(input, "any")
    _check_bool_out("any", input, out)
    return _out(apply(_ANY, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim)), out, "any")


_COUNT_NZ = defop("count_nonzero", lambda x, *, axis: jnp.count_nonzero(x, axis=axis).astype(jnp.int64),
                  differentiable=False)


def count_nonzero(input, dim=None):
    require_tensor(input, "count_nonzero")
    return apply(_COUNT_NZ, (input,), axis=dims(dim, input.ndim))


for _n in ("all", "any", "count_nonzero"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# scans


def _scan(f):
    def fwd(x, *, axis, dtype):
        x = x.astype(dtype)
        return x if axis is None else f(x, axis=axis, dtype=dtype)
    return fwd


_CUMSUM = defop("cumsum", _scan(jnp.cumsum), linear=True, grad_name="CumsumBackward0")
_CUMPROD = defop("cumprod", _scan(jnp.cumprod), grad_name="CumprodBackward0")


@numpy_kwargs
def cumsum(input, dim, *, dtype=None, out=None):
    require_tensor(input, "cumsum")
    dt = _acc_dtype(input, dtype, out)
    return _out(apply(_CUMSUM, (input,), axis=one_dim(dim, input.ndim), dtype=dt.np), out, "cumsum")


@numpy_kwargs
def cumprod(input, dim, *, dtype=None, out=None):
    require_tensor(input, "cumprod")
    dt = _acc_dtype(input, dtype, out)
    return _out(apply(_CUMPROD, (input,), axis=one_dim(dim, input.ndim), dtype=dt.np), out, "cumprod")


def _cummax_fwd(x, *, axis, largest):
    if axis is None:
        return x, jnp.zeros((), jnp.int64)
    n = x.shape[axis]
    idx = jnp.broadcast_to(jnp.arange(n).reshape((-1,) + (1,) * (x.ndim - axis - 1)), x.shape)

    def comb(a, b):
        va, ia = a
        vb, ib = b
        take_b = (vb >= va) if largest else (vb <= va)
        if jnp.issubdtype(x.dtype, jnp.inexact):  # a NaN, once seen, stays
            take_b = (take_b | jnp.isnan(vb)) & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    v, i = jax.lax.associative_scan(comb, (x, idx), axis=axis)
    return v, i.astype(jnp.int64)


def _cummax_vjp(g, x, out, axis, largest):
    if axis is None:
        return g[0]
    return scatter_add_along(x.shape, x.dtype, out[1], g[0], axis)


_CUMMAX = defop("cummax", _cummax_fwd, vjp=_cummax_vjp, grad_name="CummaxBackward0")
_CUMMIN = defop("cummin", _cummax_fwd, vjp=_cummax_vjp, grad_name="CumminBackward0")


def cummax(input, dim):
    require_tensor(input, "cummax")
    v, i = apply(_CUMMAX, (input,), axis=one_dim(dim, input.ndim), largest=True)
    return RETURN_TYPES["cummax"](v, i)


def cummin(input, dim):
    require_tensor(input, "cummin")
    v, i = apply(_CUMMIN, (input,), axis=one_dim(dim, input.ndim), largest=False)
    return RETURN_TYPES["cummin"](v, i)


_LOGCUMSUMEXP = defop("logcumsumexp", lambda x, *, axis: x if axis is None else jax.lax.cumlogsumexp(x, axis=axis))


def logcumsumexp(input, dim, *, out=None):
    require_tensor(input, "logcumsumexp")
    d = one_dim(dim, input.ndim)
    if input.dtype.category < _FLOAT:
        raise not_implemented("logcumsumexp_out_cpu", input.dtype)
    return _out(apply(_LOGCUMSUMEXP, (input,), axis=d), out, "logcumsumexp")


for _n in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
    _public(_n, globals()[_n])
METHODS["cumsum_"] = make_inplace(cumsum, "cumsum_")
METHODS["cumprod_"] = make_inplace(cumprod, "cumprod_")


# ----------------------------------------------------------------------------------------------------------------
# diff / trapezoid (composed of recorded ops, so their gradients are those of the parts)


_DIFF = defop("diff", lambda x, *, n, axis: jnp.diff(x, n=n, axis=axis), linear=True, grad_name="SubBackward0")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (``prepend``/``append`` are concatenated first)."""
    require_tensor(input, "diff")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    parts = []
    for arg, t in (("prepend", prepend), ("append", append)):
        if t is not None:
            require_tensor(t, "diff", arg=arg, pos=4 if arg == "prepend" else 5)
            if t.ndim != input.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None or append is not None:
        from .shape import cat
        parts = [t for t in (prepend, input, append) if t is not None]
        input = cat(parts, d)
    if n == 0:
        return input
    return apply(_DIFF, (input,), n=int(builtins.min(n, input.shape[d])) if input.shape[d] else int(n), axis=d)


def _trapezoid_parts(y, x, dx, dim):
    from .shape import narrow
    d = wrap_dim(dim, y.ndim)
    m = y.shape[d]
    lo, hi = narrow(y, d, 0, m - 1), narrow(y, d, 1, m - 1)
    if x is None:
        return d, lo + hi, 1 if dx is None else dx
    require_tensor(x, "trapezoid", 2, "x")
    if x.ndim == 1:
        if x.shape[0] != m:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        from .shape import reshape
        shape = [1] * y.ndim
        shape[d] = m - 1
        return d, lo + hi, reshape(diff(x), shape)
    return d, lo + hi, diff(x, dim=d)


def _check_not_bool(y, name):
    if y.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``, with sample points ``x`` or a constant spacing ``dx`` (default 1)."""
    require_tensor(y, "trapezoid", 1, "y")
    _check_not_bool(y, "trapezoid")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        from .creation import zeros
        return zeros(tuple(s for i, s in enumerate(y.shape) if i != d), dtype=y.dtype)
    d, pair_sum, spacing = _trapezoid_parts(y, x, dx, dim)
    if isinstance(spacing, Tensor):
        return sum(spacing * pair_sum, d) / 2.0
    from .shape import select
    return (sum(y, d) - (select(y, d, 0) + select(y, d, -1)) * 0.5) * spacing


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoidal integrals along ``dim`` (one element shorter than ``y`` there)."""
    require_tensor(y, "cumulative_trapezoid", 1, "y")
    _check_not_bool(y, "cumulative_trapezoid")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return y
    d, pair_sum, spacing = _trapezoid_parts(y, x, dx, dim)
    if isinstance(spacing, Tensor):
        return cumsum(spacing * pair_sum / 2.0, d)
    return cumsum(spacing / 2.0 * pair_sum, d)


_public("diff", diff)
for _n in ("trapezoid", "trapz", "cumulative_trapezoid"):
    _public(_n, globals()[_n], method=False)


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


def _softmax_args(name, input, dim, dtype):
    require_tensor(input, name)
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                      "as an argument.", stacklevel=4)
        dim = _softmax_dim(input.ndim)
    ax = wrap_dim(dim, input.ndim)  # a 0-dim input accepts dim 0 or -1, as PyTorch
    ax = ax if input.ndim else None
    if dtype is not None:
        from .convert import to_dtype
        input = to_dtype(input, dtype)
    if input.dtype.category < _FLOAT:
        last = ax is None or ax == input.ndim - 1
        raise not_implemented(f"{name}_{'lastdim_' if last else ''}kernel_impl", input.dtype)
    return input, ax


def _third(name, third, dtype):
    """``torch.softmax(x, dim, dtype)`` and ``F.softmax(x, dim, _stacklevel, dtype)`` share the third position."""
    if third is None or (type(third) is int):
        return dtype
    if not isinstance(third, _dtype.dtype):
        raise TypeError(f"{name}(): argument 'dtype' (position 3) must be torch.dtype, not {type(third).__name__}")
    return third


@numpy_kwargs
def softmax(input, dim=None, _stacklevel=None, dtype=None):
    input, ax = _softmax_args("softmax", input, dim, _third("softmax", _stacklevel, dtype))
    return apply(_SOFTMAX, (input,), axis=ax, dtype=input._v.dtype)


@numpy_kwargs
def log_softmax(input, dim=None, _stacklevel=None, dtype=None):
    input, ax = _softmax_args("log_softmax", input, dim, _third("log_softmax", _stacklevel, dtype))
    return apply(_LOG_SOFTMAX, (input,), axis=ax, dtype=input._v.dtype)


_public("softmax", softmax)
_public("log_softmax", log_softmax)
