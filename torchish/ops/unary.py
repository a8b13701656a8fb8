"""Unary elementwise ops: exp/log, trigonometric and hyperbolic functions, erf/gamma-family special functions,
rounding, sign/abs/neg, and the ones with a static argument (round's decimals, logit's eps, nan_to_num,
polygamma's order, mvlgamma's dimension).

Each op is one call that reads as a table row: name, JAX forward, optional VJP (where PyTorch's formula uses the
result, or differs from JAX's at a boundary), how its input promotes, and which dtypes PyTorch has no kernel for.
The public function, the Tensor method and the in-place ``name_`` method are generated from the row.

Example::

    >>> import torchish as torch
    >>> torch.tensor([1.0, 4.0]).sqrt()
    tensor([1., 2.])
"""
from __future__ import annotations

import builtins
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from .. import _dtype
from . import tracing
from .elementwise import _INT, FLOATS_ONLY, NO_BOOL, _out, not_implemented, require_tensor
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


def _vjp_out(f):
    """VJP written with the op's *output* (PyTorch saves the result for these). For complex values PyTorch's
    formulas read the result's conjugate (``grad * result.conj()`` for exp)."""
    return lambda g, x, out: f(g, jnp.conj(out) if jnp.iscomplexobj(out) else out)


def _in_float32(f):
    """``f`` evaluated in float32 for float16/bfloat16 operands and rounded once, as PyTorch's CPU kernels do."""
    def wrapped(*vals):
        if vals[0].dtype not in (jnp.float16, jnp.bfloat16):
            return f(*vals)
        return f(*(v.astype(jnp.float32) for v in vals)).astype(vals[0].dtype)
    return wrapped


def _unary(name, fwd, vjp=None, *, promote="float", reject=(), kernel=None, bool_error=None, grad_name=None,
           linear=False, complex_error=None):
    """One unary op: defined, exported as ``torchish.name``, ``Tensor.name`` and ``Tensor.name_``."""
    op = defop(name, fwd, vjp=vjp, promote=promote, linear=linear, grad_name=grad_name)
    kname = kernel or f"{name}_cpu"

    def f(input, *, out=None):
        require_tensor(input, name)
        if reject or bool_error or complex_error:
            dt = input.dtype
            if bool_error and dt is _dtype.bool:
                raise RuntimeError(bool_error)
            if complex_error and dt.category == _dtype._COMPLEX:
                raise RuntimeError(complex_error)
            if dt.category in reject:
                raise not_implemented(kname, dt)
        return _out(apply(op, (input,)), out, name)
    return _public(name, f, inplace=True)


def _int_identity(f):
    """floor/ceil/trunc keep integer tensors unchanged (JAX would promote them)."""
    return lambda x: x if not jnp.issubdtype(x.dtype, jnp.inexact) else f(x)


def _sign_fwd(x):
    """PyTorch's CPU sign is ``(0 < x) - (x < 0)``: NaN and -0.0 give +0.0."""
    if x.dtype == jnp.bool_ or not jnp.issubdtype(x.dtype, jnp.floating):
        return x if x.dtype == jnp.bool_ else jnp.sign(x)
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _sgn(x):
    if jnp.iscomplexobj(x):
        a = jnp.abs(x)
        return jnp.where(a == 0, 0, x / jnp.where(a == 0, 1, a))
    return _sign_fwd(x)  # NaN -> 0, as PyTorch's sgn in its backward formulas (abs of NaN gets no gradient)


def _angle_fwd(x):
    if jnp.iscomplexobj(x):
        return jnp.angle(x)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, jnp.asarray(math.pi, x.dtype), jnp.zeros((), x.dtype)))


_LN2 = math.log(2.0)
_ZERO_GRAD = _vjp_out(lambda g, y: jnp.zeros_like(g))


def _sgn_vjp(g, x, out):
    """Zero for real inputs; for complex ``z``, PyTorch's ``(g - sgn(z)^2 * conj(g)) / (2|z|)`` (0 where z = 0)."""
    if not jnp.iscomplexobj(x):
        return jnp.zeros_like(g)
    a = jnp.abs(x)
    return jnp.where(a == 0, jnp.zeros((), g.dtype), (g - out * out * jnp.conj(g)) / (2 * jnp.where(a == 0, 1, a)))

_unary("exp", jnp.exp, _vjp_out(lambda g, y: g * y))
_unary("exp2", jnp.exp2, _vjp_out(lambda g, y: g * y * _LN2))
_unary("expm1", jnp.expm1, _vjp_out(lambda g, y: g * (y + 1)))
_unary("log", jnp.log)
_unary("log2", jnp.log2)
_unary("log10", jnp.log10)
_unary("log1p", jnp.log1p)
_unary("sqrt", jnp.sqrt, _vjp_out(lambda g, y: g / (2 * y)))
_unary("rsqrt", jax.lax.rsqrt, _vjp_out(lambda g, y: -0.5 * g * y * y * y))
_unary("sin", jnp.sin)
_unary("cos", jnp.cos)
_unary("tan", jnp.tan, _vjp_out(lambda g, y: g * (1 + y * y)))
_unary("asin", jnp.arcsin)
_unary("acos", jnp.arccos)
_unary("atan", jnp.arctan)
_unary("sinh", jnp.sinh)
_unary("cosh", jnp.cosh)
_unary("tanh", jnp.tanh, _vjp_out(_in_float32(lambda g, y: g * (1 - y * y))))
_unary("asinh", jnp.arcsinh)
_unary("acosh", jnp.arccosh,  # PyTorch: complex rsqrt(x + 1) * rsqrt(x - 1) (its branch), real rsqrt(x * x - 1)
       lambda g, x, out: g * (jnp.conj(jax.lax.rsqrt(x + 1) * jax.lax.rsqrt(x - 1)) if jnp.iscomplexobj(x)
                              else jax.lax.rsqrt(x * x - 1)))
_unary("atanh", jnp.arctanh)


def _sigmoid_grad(g, y):
    return g * (1 - y) * y


# PyTorch's float16 sigmoid_backward rounds at every step; its bfloat16 one computes in float32
_unary("sigmoid", _in_float32(jax.nn.sigmoid),
       _vjp_out(lambda g, y: _sigmoid_grad(g, y) if g.dtype == jnp.float16 else _in_float32(_sigmoid_grad)(g, y)))
_unary("erf", jss.erf)
_unary("erfc", jss.erfc)
_unary("erfinv", jss.erfinv)
_unary("lgamma", jss.gammaln, lambda g, x, out: g * _digamma(x))  # PyTorch's digamma poles: -inf at +0
_unary("digamma", lambda x: _digamma(x), lambda g, x, out: g * jss.polygamma(1, x))  # +-0: trigamma's inf
_unary("i0", jss.i0, lambda g, x, out: g * _in_float32(jss.i1)(x))  # PyTorch: grad * i1(x) (JAX's: 1 at 0)
_unary("sinc", _in_float32(jnp.sinc))
_unary("reciprocal", lambda x: 1 / x, _vjp_out(lambda g, y: -g * (y * y)))  # PyTorch: -grad * (result * result)
_unary("deg2rad", jnp.deg2rad, linear=True, complex_error="deg2rad is not supported for complex tensors.")
_unary("rad2deg", jnp.rad2deg, linear=True, complex_error="rad2deg is not supported for complex tensors.")
_unary("angle", _angle_fwd)
_unary("relu", lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
       _vjp_out(lambda g, y: jnp.where(y > 0, g, jnp.zeros((), g.dtype))), promote=None,
       bool_error="Boolean inputs not supported for relu")
_unary("neg", jnp.negative, promote=None, linear=True,
       bool_error="Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead.")
_unary("abs", jnp.abs, lambda g, x, out: g * _sgn(x), promote=None, reject=NO_BOOL)
_unary("sgn", _sign_fwd, _sgn_vjp, promote=None)
_unary("floor", _int_identity(jnp.floor), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="floor_vml_cpu")
_unary("ceil", _int_identity(jnp.ceil), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="ceil_vml_cpu")
_unary("trunc", _int_identity(jnp.trunc), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="trunc_vml_cpu")
_unary("frac", lambda x: x - jnp.trunc(x), promote=None, reject=FLOATS_ONLY)
_unary("conj_physical", jnp.conj, promote=None, linear=True)


def conj(input):
    """``torch.conj``: the tensor itself for a real dtype (as PyTorch returns it), the conjugate for a complex one
    (computed, where PyTorch returns a lazily conjugated view: the values are the same)."""
    require_tensor(input, "conj")
    return conj_physical(input) if input.is_complex() else input


def is_conj(input):
    return False  # conjugates are computed, never a lazy view


def resolve_conj(input):
    return input


def is_neg(input):
    return False  # negations are computed, never a lazy view


def resolve_neg(input):
    return input


for _fn in (conj, is_conj, resolve_conj, is_neg, resolve_neg):
    _public(_fn.__name__, _fn)
_SIGN = defop("sign", _sign_fwd, vjp=_ZERO_GRAD)


def sign(input, *, out=None):
    require_tensor(input, "sign")
    if input.is_complex():
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    return _out(apply(_SIGN, (input,)), out, "sign")


def positive(input):
    """Returns ``input`` itself (no copy, no graph node), as PyTorch does."""
    require_tensor(input, "positive")
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


_public("sign", sign, inplace=True)
_public("positive", positive)
_ALIASES = {"absolute": "abs", "negative": "neg", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
            "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fix": "trunc"}
for _a, _n in _ALIASES.items():
    _public(_a, globals()[_n], inplace=True)


# round(decimals=), logit(eps=), nan_to_num(...) take static arguments

def _round_fwd(x, *, decimals):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    if decimals == 0:
        return jnp.round(x)
    p = jnp.asarray(10.0 ** builtins.abs(decimals), x.dtype)
    return jnp.round(x / p) * p if decimals < 0 else jnp.round(x * p) / p


_ROUND = defop("round", _round_fwd, vjp=lambda g, x, out, decimals: jnp.zeros_like(g))


def round(input, *, decimals=0, out=None):
    require_tensor(input, "round")
    dt = input.dtype
    if dt is _dtype.bool:
        raise not_implemented("round_vml_cpu", dt)
    if decimals and dt.category == _INT:
        raise not_implemented("round_cpu", dt)
    return _out(apply(_ROUND, (input,), decimals=int(decimals)), out, "round")


_public("round", round, inplace=True)


def _logit_fwd(x, *, eps):
    if eps is not None:
        x = jnp.clip(x, eps, 1 - eps)
    return jnp.log(x / (1 - x))


def _logit_vjp(g, x, out, eps):
    """PyTorch: zero outside [eps, 1 - eps] when eps is given, NaN outside [0, 1] otherwise."""
    d = g / (x * (1 - x))
    if eps is None:
        return jnp.where((x < 0) | (x > 1), jnp.asarray(jnp.nan, d.dtype), d)
    return jnp.where((x < eps) | (x > 1 - eps), jnp.zeros((), d.dtype), d)


_LOGIT = defop("logit", _logit_fwd, vjp=_logit_vjp, promote="float")


def logit(input, eps=None, *, out=None):
    require_tensor(input, "logit")
    return _out(apply(_LOGIT, (input,), eps=None if eps is None else float(eps)), out, "logit")


_public("logit", logit, inplace=True)


def _nan_to_num_fwd(x, *, nan, posinf, neginf):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_NAN_TO_NUM = defop("nan_to_num", _nan_to_num_fwd)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    require_tensor(input, "nan_to_num")
    return _out(apply(_NAN_TO_NUM, (input,), nan=nan, posinf=posinf, neginf=neginf), out, "nan_to_num")


_public("nan_to_num", nan_to_num, inplace=True)


# special functions with an order argument: polygamma(n, x), mvlgamma(x, p)

def _digamma(x):
    """digamma with PyTorch's poles: -inf at +0, +inf at -0."""
    return jnp.where(x == 0, jnp.copysign(jnp.asarray(jnp.inf, x.dtype), -x), jss.digamma(x))


def _polygamma_fwd(x, *, n):
    return _digamma(x) if n == 0 else jss.polygamma(n, x)


_POLYGAMMA = defop("polygamma", _polygamma_fwd, promote="float",
                   vjp=lambda g, x, out, n: g * jss.polygamma(n + 1, x))


def polygamma(n, input, *, out=None):
    """The n-th derivative of the digamma function."""
    require_tensor(input, "polygamma", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _out(apply(_POLYGAMMA, (input,), n=int(n)), out, "polygamma")


def _mvlgamma_fwd(x, *, p):
    j = jnp.arange(p, dtype=x.dtype) / 2
    return jnp.sum(jss.gammaln(x[..., None] - j), axis=-1) + jnp.asarray(p * (p - 1) / 4 * math.log(math.pi),
                                                                           x.dtype)


_MVLGAMMA = defop("mvlgamma", _mvlgamma_fwd, promote="float")
_ALL_GREATER = jax.jit(lambda x, v: jnp.all(x > v))


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``."""
    require_tensor(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    d = input._d
    if not tracing.active() and not isinstance(d, jax.core.Tracer) and d.size and not bool(
            _ALL_GREATER(d, (p - 1) / 2)):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    return _out(apply(_MVLGAMMA, (input,), p=int(p)), out, "mvlgamma")


_public("polygamma", polygamma, method=False)
_public("mvlgamma", mvlgamma, inplace=True)
METHODS["polygamma"] = lambda self, n: polygamma(n, self)


def _polygamma_(self, n):
    from .inplace import assign
    self._check_inplace()
    return assign(self, polygamma(n, self))


METHODS["polygamma_"] = _polygamma_
