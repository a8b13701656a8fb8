"""Spread and size: var/std (and var_mean/std_mean) with PyTorch's ``correction``/``unbiased`` arguments, and
vector_norm/norm, with PyTorch's gradients (zero where the std or the norm is zero)."""
from __future__ import annotations

import builtins
import functools
import math
import os
import sys
import warnings

import jax
import jax.numpy as jnp

from .. import _dtype
from .. import _precision
from .._tensor import Tensor
from .casting import ACC
from .elementwise import _out, need_bool, out_structured, require_number, require_tensor
from .reduce import dims, dtype_arg, numpy_kwargs
from . import complex_c, parser_errors
from . import registry as _registry
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public
_FLOAT = _dtype._FLOAT
_HALF = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))


# ----------------------------------------------------------------------------------------------------------------
# std / var


def _var_fwd(x, *, axis, keepdims, correction, sqrt):
    """In the accumulate type, as PyTorch's CPU kernel (the std of float32 1e30s is finite), rounded once. A
    complex input's variance is that of its real parts plus that of its imaginary parts, each rounded to the real
    dtype first, the sum then square-rooted there (complex64 parts of 1e30 give an infinite std)."""
    if jnp.iscomplexobj(x):
        kw = dict(axis=axis, keepdims=keepdims, correction=correction, sqrt=False)
        v = _var_fwd(jnp.real(x), **kw) + _var_fwd(jnp.imag(x), **kw)
        return jnp.sqrt(v) if sqrt else v
    if x.dtype in ACC:
        out_dt = jnp.real(jnp.zeros((), x.dtype)).dtype
        return _var_fwd(x.astype(ACC[x.dtype]), axis=axis, keepdims=keepdims, correction=correction,
                        sqrt=sqrt).astype(out_dt)
    n = x.size if axis is None else math.prod(x.shape[a] for a in axis)
    d = x - jnp.mean(x, axis=axis, keepdims=True)
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(d) else d * d
    v = jnp.sum(sq, axis=axis, keepdims=keepdims) / builtins.max(n - correction, 0)
    return jnp.sqrt(v) if sqrt else v


def _var_vjp(g, x, out, axis, keepdims, correction, sqrt):
    """PyTorch's var_backward, ``(2 / (n - correction)) * grad * (self - self.mean(dim))``, and std_backward,
    which first divides ``grad`` by ``2 * result`` (0 where the std is zero): one op at a time, each rounded to
    the input's dtype, as PyTorch's composite formula runs. With no degrees of freedom left, a reduction over
    given dims scales by ``2 / (n - correction)`` (inf at 0, negative below), one over everything gives inf, or
    NaN where the value equals the mean."""
    ax = axis if axis is not None else tuple(range(x.ndim))
    n = math.prod(x.shape[a] for a in ax)
    if not keepdims:
        g, out = jnp.expand_dims(g, ax), jnp.expand_dims(out, ax)
    wide, r = _precision.stepper(x.dtype)
    g, out, xw = wide(g), wide(out), wide(x)
    if sqrt:
        g = jnp.where(out == 0, jnp.zeros((), g.dtype), r(g / jnp.where(out == 0, 1, out * 2)))
    dof = n - correction
    d = r(xw - r(jnp.mean(xw, axis=ax, keepdims=True)))
    if dof <= 0 and (axis is None or x.ndim == 0):  # no dim: inf, NaN where the value is the mean
        return r(g * jnp.where(d == 0, jnp.nan, jnp.inf)).astype(x.dtype)
    return r(r(g * (2.0 / dof if dof else math.inf)) * d).astype(x.dtype)


_VAR = defop("var", _var_fwd, vjp=_var_vjp, grad_name="VarBackward0")
_STD = defop("std", _var_fwd, vjp=_var_vjp, grad_name="StdBackward0")


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel():
    """The ``stacklevel`` that attributes a warning to the first caller outside torchish (as PyTorch's point at
    the user's line), however many torchish frames (method forms, argument adapters) lie between."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    return level


_NO_UNBIASED = object()  # (unbiased not given; None is no bool: PyTorch's TypeError)


def _var_args(name, input, dim, unbiased, keepdim, correction):
    require_tensor(input, name)
    need_bool(name, keepdim)
    if unbiased is not _NO_UNBIASED:
        need_bool(name, unbiased, "unbiased")
    if unbiased is not _NO_UNBIASED and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased and correction")
    if input.dtype.category < _FLOAT:
        what = name if name in ("std_mean", "var_mean") else "std and var"  # (PyTorch's kernels' words)
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    if correction is not None:
        require_number(correction, name, None, "correction", "Number")
    c = float(correction) if correction is not None else (0.0 if unbiased is False else 1.0)
    ax = dims(dim, input.ndim)
    n = math.prod(input.shape) if ax is None else math.prod(input.shape[a] for a in ax)
    if n - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=_user_stacklevel())
    return ax, bool(keepdim), c


def _var(input, dim=None, unbiased=_NO_UNBIASED, keepdim=False, *, correction=None, out=None):
    ax, kd, c = _var_args("var", input, dim, unbiased, keepdim, correction)
    return _out(apply(_VAR, (input,), axis=ax, keepdims=kd, correction=c, sqrt=False), out, "var")


def _std(input, dim=None, unbiased=_NO_UNBIASED, keepdim=False, *, correction=None, out=None):
    ax, kd, c = _var_args("std", input, dim, unbiased, keepdim, correction)
    return _out(apply(_STD, (input,), axis=ax, keepdims=kd, correction=c, sqrt=True), out, "std")


# PyTorch's overloads of var/std (var_mean/std_mean have no out=); a method's drop ``Tensor input`` and out=
_SPREAD_OVERLOADS = ("(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None)",
                     "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, "
                     "Tensor out = None)", "(Tensor input, bool unbiased = True)")


def _spread_overloads(name, fn, method=False):
    """``fn`` (var, std, var_mean, std_mean) behind PyTorch's argument parser: a bool first argument is the
    ``(Tensor input, bool unbiased)`` overload when it comes alone (``x.var(False)``); a bool dim with any other
    argument, or given by keyword (``x.var(dim=True)``), matches no overload (TypeError). torchish took it as
    ``unbiased`` everywhere. Where PyTorch's parser refuses the call its error is the parser's TypeError
    (``parser_errors``, on the error path)."""
    @functools.wraps(fn)
    def f(input, *args, **kwargs):
        try:
            first = args[0] if args else kwargs.get("dim")
            if isinstance(first, bool):
                if len(args) != 1 or kwargs:
                    raise TypeError(_no_spread_overload(name, args, kwargs, method))
                return fn(input, unbiased=first)
            return fn(input, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - re-raised, as the parser's TypeError where it refuses the call
            err = parser_errors.refused(e, name, args if method else (input,) + args, kwargs, method)
            if err is e:
                raise
            raise err from None
    return f


def _no_spread_overload(name, args, kwargs, method):
    """PyTorch's "invalid combination of arguments" message for a call of var/std (positional types, then the
    keywords in the order its parser lists them) without the lines that say why each overload did not match."""
    got = [type(a).__name__ for a in args] if method else ["Tensor"] + [type(a).__name__ for a in args]
    kws = [f"{k}={type(v).__name__}" for k, v in reversed(kwargs.items())]
    got = ", ".join(got + kws) if got else "".join(k + ", " for k in kws)
    lines = []
    for o in _SPREAD_OVERLOADS:
        if name.endswith("_mean"):
            o = o.replace(", *, Tensor out = None)", ")").replace(", Tensor out = None)", ")")
        if method:
            o = o.replace("Tensor input, ", "").replace(", *, Tensor out = None)", ")").replace(
                ", Tensor out = None)", ")")
        lines.append(f" * {o}\n")
    return f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n" + \
        "".join(lines)


var = numpy_kwargs(_spread_overloads("var", _var))
std = numpy_kwargs(_spread_overloads("std", _std))
var.__name__, std.__name__ = "var", "std"


def _welford_mean(x, axis, keepdims):
    """The mean PyTorch's var_mean/std_mean return: its CPU kernel's Welford updates (``mean += (x - mean) / k``,
    in the accumulate type) give the exact mean of finite values, but NaN once an infinity is followed by anything
    (``inf - inf``): the mean is infinite only when the sole infinity comes last in the reduction order. A complex
    input's mean is that of its real and imaginary parts, reduced apart (an infinite real part keeps the imaginary
    mean finite)."""
    if jnp.iscomplexobj(x):
        return jax.lax.complex(_welford_mean(jnp.real(x), axis, keepdims), _welford_mean(jnp.imag(x), axis, keepdims))
    m = jnp.mean(x.astype(ACC.get(x.dtype, x.dtype)), axis=axis, keepdims=keepdims).astype(x.dtype)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.size == 0:
        return m
    ax = tuple(range(x.ndim)) if axis is None else axis
    rest = [a for a in range(x.ndim) if a not in ax]
    flat = jnp.transpose(x, rest + list(ax)).reshape([x.shape[a] for a in rest] + [-1])
    inf = jnp.isinf(flat)
    n_inf = jnp.sum(inf, axis=-1)
    nan = (n_inf > 1) | ((n_inf == 1) & ~inf[..., -1])
    if keepdims:
        nan = jnp.expand_dims(nan, ax)
    return jnp.where(nan, jnp.asarray(-jnp.nan, m.dtype), m)  # (x86's inf - inf: a NaN with its sign bit set)


def _var_mean_fwd(x, *, axis, keepdims, correction, sqrt):
    return (_var_fwd(x, axis=axis, keepdims=keepdims, correction=correction, sqrt=sqrt),
            _welford_mean(x, axis, keepdims))


def _var_mean_vjp(g, x, out, axis, keepdims, correction, sqrt):
    """PyTorch's var_mean_backward / std_mean_backward: the var (std) gradient plus mean_backward's
    ``grad.expand(shape) / n``, added in the input's dtype."""
    g_spread, g_mean = g
    ax = axis if axis is not None else tuple(range(x.ndim))
    n = math.prod(x.shape[a] for a in ax)
    part = _var_vjp(g_spread, x, out[0], axis, keepdims, correction, sqrt)
    if not keepdims:
        g_mean = jnp.expand_dims(g_mean, ax)
    wide, r = _precision.stepper(x.dtype)
    return (r(wide(part) + r(jnp.broadcast_to(wide(g_mean), x.shape) / n)).astype(x.dtype),)


_VAR_MEAN = defop("var_mean", _var_mean_fwd, vjp=_var_mean_vjp, grad_name="VarMeanBackward0")
_STD_MEAN = defop("std_mean", _var_mean_fwd, vjp=_var_mean_vjp, grad_name="StdMeanBackward0")


def _var_mean(input, dim=None, unbiased=_NO_UNBIASED, keepdim=False, *, correction=None):
    ax, kd, c = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return apply(_VAR_MEAN, (input,), axis=ax, keepdims=kd, correction=c, sqrt=False)


def _std_mean(input, dim=None, unbiased=_NO_UNBIASED, keepdim=False, *, correction=None):
    ax, kd, c = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return apply(_STD_MEAN, (input,), axis=ax, keepdims=kd, correction=c, sqrt=True)


var_mean = _spread_overloads("var_mean", _var_mean)
std_mean = _spread_overloads("std_mean", _std_mean)
for _n, _f in (("var", _var), ("std", _std)):
    _public(_n, globals()[_n])
    METHODS[_n] = numpy_kwargs(_spread_overloads(_n, _f, method=True))  # noqa: F821 (the Family's table)
for _n in ("var_mean", "std_mean"):
    _public(_n, globals()[_n], method=False)


# ----------------------------------------------------------------------------------------------------------------
# norms


def _vector_norm_fwd(x, *, ord, axis, keepdims):
    if x.dtype in _HALF:  # accumulated in float32 and rounded once, as PyTorch's CPU norm kernel
        return _vector_norm_fwd(x.astype(jnp.float32), ord=ord, axis=axis, keepdims=keepdims).astype(x.dtype)
    a = complex_c.abs_c99(x)  # (|inf + nan j| is inf, as PyTorch's)
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
    """PyTorch's norm_backward, one rounded op at a time: the gradient at a zero norm is zero (not NaN)."""
    if not keepdims and axis is not None:
        g, out = jnp.expand_dims(g, axis), jnp.expand_dims(out, axis)
    elif not keepdims:
        g, out = g.reshape((1,) * x.ndim), out.reshape((1,) * x.ndim)
    dt = x.dtype
    wide, r = _precision.stepper(dt)
    return r(_norm_grad(wide(g), wide(x), wide(out), ord, axis, r)).astype(dt)


def _norm_grad(g, x, out, ord, axis, r):
    """norm_backward's formula on widened values, ``r`` storing each op's result as PyTorch does."""
    zero = jnp.zeros((), x.dtype)
    sgn = ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype) if not jnp.iscomplexobj(x)  # PyTorch: sgn(NaN) = 0
           else x / jnp.where(x == 0, 1, jnp.abs(x)))
    if ord == 0:
        return jnp.zeros_like(x)
    if ord == 1:
        return sgn * g
    if ord == 2:  # grad * (self / norm).masked_fill_(norm == 0, 0)
        return g * jnp.where(out == 0, zero, r(x / jnp.where(out == 0, 1, out)))
    if ord in (math.inf, -math.inf):
        mask = ((jnp.abs(x) == out) | jnp.isnan(x)).astype(x.dtype)  # PyTorch: a NaN is an argmax too
        # fenced: XLA turns a product with a converted mask into a select, whose zeros lose grad's sign
        mask = jax.lax.optimization_barrier(mask)
        return sgn * r(r(g / jnp.sum(mask, axis=axis, keepdims=True)) * mask)
    a = jnp.abs(x)
    if ord < 1:  # self.sgn() * self.abs().pow_(p - 1).masked_fill_(self == 0, 0) * grad * norm.pow(1 - p)
        scaled = r(sgn * jnp.where(x == 0, zero, r(a ** (ord - 1))))
        return r(scaled * g) * r(out ** (1 - ord))
    scaled = r(sgn * r(a ** (ord - 1))) if ord < 2 else r(x * r(a ** (ord - 2)))
    return scaled * jnp.where(out == 0, zero, r(g / r(out ** (ord - 1))))


_VECTOR_NORM = defop("linalg_vector_norm", _vector_norm_fwd, vjp=_vector_norm_vjp,
                     grad_name="LinalgVectorNormBackward0")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    require_tensor(x, "linalg_vector_norm")
    need_bool("linalg_vector_norm", keepdim)
    if x.dtype.category < _FLOAT:  # checked before ``dtype`` converts anything, as in PyTorch
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(x.dtype)}")
    if dtype is not None:
        from .convert import to_dtype
        dtype = dtype_arg("linalg_vector_norm", dtype)
        check_norm_dtype(x.dtype, dtype, "linalg.vector_norm")
        x = to_dtype(x, dtype)
    elif _registry.autocast_hook is not None:
        x, = _registry.autocast_hook("linalg_vector_norm", (x,))
    ax = dims(dim, x.ndim)
    _check_identity(x, ord, dim)
    return apply(_VECTOR_NORM, (x,), ord=float(ord), axis=ax, keepdims=bool(keepdim))


def _check_identity(x, ord, dim):
    """PyTorch refuses an empty reduction of a norm with no identity (``ord < 0`` or ``inf``): of the whole empty
    tensor (``dim`` None or ``()``), or over an empty dim, named as the caller wrote it."""
    if not (ord < 0 or ord == math.inf) or 0 not in tuple(x.shape):
        return
    what = f"linalg.vector_norm cannot compute the {ord if isinstance(ord, int) else format(ord, 'g')} norm on "
    user = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if not user:
        raise RuntimeError(what + "an empty tensor because the operation does not have an identity")
    for d in user:
        if x.shape[d] == 0:
            raise RuntimeError(what + f"the dimension {d}because this dimension is empty and the operation does not "
                                      "have an identity")


def check_norm_dtype(src, dtype, fname):
    """PyTorch's rules for a norm's ``dtype=`` (``check_linalg_norm_dtype``): floating point or complex, complex for
    complex inputs and real for real ones, no narrowing."""
    name = _dtype.scalar_type_name
    if dtype.category < _FLOAT:
        raise RuntimeError(f"{fname}: dtype should be floating point or complex, but got {name(dtype)}")
    cplx = src.category == _dtype._COMPLEX
    if cplx != (dtype.category == _dtype._COMPLEX):
        raise RuntimeError(f"{fname}: dtype should be {'complex' if cplx else 'real'} for "
                           f"{'complex' if cplx else 'real'} inputs, but got {name(dtype)}")
    if _dtype.promote_types(src, dtype) is not dtype:
        raise RuntimeError(f"{fname}: the dtype of the input ({name(src)}) should be convertible without "
                           f"narrowing to the specified dtype ({name(dtype)})")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm``: vector norms (p a number), Frobenius (``'fro'``) and nuclear (``'nuc'``) norms. (``out`` is
    positional in PyTorch's function, not in its method, whose fifth argument is ``dtype``.) ``p=None`` is 2.
    As PyTorch's (a Python function), it calls ``linalg_vector_norm(input, p, dim, keepdim, dtype=dtype)`` or, for
    any other string ``p`` (a Frobenius norm over more than two dims too), ``linalg_matrix_norm`` over ``dim`` or
    every dim: a bad argument is refused by their argument parser, in its words."""
    if not isinstance(input, Tensor):  # (PyTorch's Python norm reads ``input.layout`` first)
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'layout'")
    listed = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str) and not (p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
        name, args = "linalg_matrix_norm", (input, p, list(range(input.ndim)) if dim is None else listed, keepdim)
    else:
        name, args = "linalg_vector_norm", (input, 2 if p is None or isinstance(p, str) else p, listed, keepdim)
    try:
        if name == "linalg_vector_norm":
            if isinstance(args[1], Tensor) and args[1].ndim:  # (an order is a number: a 0-dim tensor at most)
                raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not Tensor")
            return out_structured(vector_norm(*args, dtype=dtype), out, name)
        from .linalg import matrix_norm
        return out_structured(matrix_norm(*args, dtype=dtype), out, "norm")
    except Exception as e:  # noqa: BLE001 - re-raised, as the parser's TypeError where it refuses the call
        err = parser_errors.refused(e, name, args, {"dtype": dtype} if out is None else {"dtype": dtype, "out": out})
        if err is e:
            raise
        raise err from None


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


_norm_method.__name__, _norm_method.__qualname__ = "norm", "Tensor.norm"


_public("norm", norm, method=False)
METHODS["norm"] = _norm_method  # noqa: F821 (the Family's table)


def _dist_fwd(a, b, *, ord):
    return _vector_norm_fwd(a - b, ord=ord, axis=None, keepdims=False)


def _dist_vjp(g, a, b, out, ord):
    """PyTorch: ``norm_backward(grad, self - other, p, result)`` for ``self``, its negation for ``other`` (for
    ``p=0`` norm_backward gives an undefined tensor, which dist's backward then refuses)."""
    if ord == 0:
        err = _registry.NotDifferentiable(RuntimeError(
            "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'"))
        return err, err
    grad = _vector_norm_vjp(g, a - b, out, ord, None, False)
    return grad, -grad


_DIST = defop("dist", _dist_fwd, vjp=_dist_vjp, promote="same")


def dist(input, other, p=2):
    """``torch.dist``: the ``p``-norm of ``input - other`` (broadcast), as a 0-dim tensor."""
    require_tensor(input, "dist")
    require_tensor(other, "dist", 2, "other")
    dt = _dtype.promote_types(input.dtype, other.dtype)
    if dt.category < _FLOAT:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype.scalar_type_name(dt)} instead.")
    return apply(_DIST, (input, other), ord=float(p))


_public("dist", dist)
