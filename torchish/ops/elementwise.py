"""Elementwise ops: arithmetic, math functions, comparisons, logical and bitwise ops, and the Tensor dunders.

Each op is one call that reads as a table row: name, JAX forward, optional VJP (where PyTorch's formula uses the
result, or differs from JAX's at a boundary), how its inputs promote, and which dtypes PyTorch has no kernel for.
The public function, the Tensor method and the in-place ``name_`` method are generated from the row.

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([1, 2, 3])
    >>> (2 ** x, x / 2, x // 2)
    (tensor([2, 4, 8]), tensor([0.5000, 1.0000, 1.5000]), tensor([0, 1, 1]))
"""
from __future__ import annotations

import builtins
import math
import numbers
import warnings

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import tracing
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public

_BOOL, _INT, _FLOAT, _COMPLEX = _dtype._BOOL, _dtype._INT, _dtype._FLOAT, _dtype._COMPLEX
NO_BOOL = frozenset({_BOOL})
FLOATS_ONLY = frozenset({_BOOL, _INT})
INTS_ONLY = frozenset({_FLOAT, _COMPLEX})
INTS_NO_BOOL = frozenset({_BOOL, _FLOAT, _COMPLEX})
_ARRAYS = (Tensor, numbers.Number, np.generic, np.ndarray, jax.Array)


# ----------------------------------------------------------------------------------------------------------------
# helpers shared by the op families


def scalar_or_tensor(x):
    """Python numbers stay Python numbers (PyTorch's "wrapped numbers"); numpy scalars become Python numbers;
    arrays become Tensors."""
    if isinstance(x, (Tensor, bool, int, float, complex)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, numbers.Number):
        return complex(x) if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real) else float(x)
    if isinstance(x, (np.ndarray, jax.Array, list, tuple)):
        from .creation import tensor
        return tensor(x)
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def require_tensor(x, fname, pos=1, arg="input"):
    """PyTorch's TypeError for a non-Tensor where a Tensor argument is required."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _rank_key(a):
    if isinstance(a, Tensor):
        d = a._d
        return (_dtype.from_np(d.dtype), 2 if d.ndim else 1)
    return (_dtype.scalar_dtype(a), 0)


def common_dtype(args):
    """PyTorch's result dtype of Tensors and Python scalars (``None`` entries ignored)."""
    return _dtype.result_type_from_keys(tuple(_rank_key(a) for a in args if a is not None))


def result_type(tensor1, tensor2):
    """``torch.result_type``: the dtype an arithmetic op on the two operands returns."""
    return common_dtype((scalar_or_tensor(tensor1), scalar_or_tensor(tensor2)))


def not_implemented(kernel, dt):
    """PyTorch's error for a kernel that has no version for ``dt`` (builtin NotImplementedError, a RuntimeError)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_type_name(dt)}'")


def _operand_dtype(x):
    return x.dtype if isinstance(x, Tensor) else _dtype.scalar_dtype(x)


def _is_bool(x):
    return x._v.dtype == np.bool_ if isinstance(x, Tensor) else isinstance(x, bool)


def c10_name(dt):
    """The C++ type name PyTorch prints in some dtype errors ('float', 'double', ...)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "bool": "bool"}.get(dt.name, dt.name)


def _out(result, out, name=None):
    """Support PyTorch's ``out=`` keyword: write the result into ``out`` (resizing it as PyTorch does) and return it."""
    if out is None:
        return result
    label = f"{name}(): " if name else ""
    if not isinstance(out, Tensor):
        raise TypeError(f"{label}argument 'out' must be Tensor, not {type(out).__name__}")
    if STATE.grad_enabled and (result._rg or out._rg):
        raise RuntimeError(f"{label}functions with out=... arguments don't support automatic differentiation, but one "
                           "of the arguments requires grad.")
    from .inplace import assign
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          "which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch release "
                          "outputs will not be resized unless they have zero elements. You can explicitly reuse an "
                          "out tensor t by resizing it, inplace, to zero elements with t.resize_(0).", UserWarning,
                          stacklevel=3)
        out._d = jnp.zeros(result._v.shape, out._v.dtype)
    return assign(out, result)


_ANY_ZERO = jax.jit(lambda d: jnp.any(d == 0))


def _check_divisor(b):
    """Integer division by zero raises in PyTorch (JAX would return garbage). Needs concrete values."""
    if isinstance(b, Tensor):
        d = b._d
        if tracing.active() or isinstance(d, jax.core.Tracer) or d.size == 0:
            return
        if bool(_ANY_ZERO(d)):
            raise RuntimeError("ZeroDivisionError")
    elif b == 0:
        raise RuntimeError("ZeroDivisionError")


def _zeros_vjp(g, *inputs, out, **static):
    return tuple(jnp.zeros(jnp.shape(x), g.dtype) for x in inputs)


def _vjp_out(f):
    """VJP written with the op's *output* (PyTorch saves the result for these)."""
    return lambda g, x, out: f(g, out)


# ----------------------------------------------------------------------------------------------------------------
# unary ops


def _unary(name, fwd, vjp=None, *, promote="float", reject=(), kernel=None, bool_error=None, grad_name=None,
           linear=False):
    """One unary op: defined, exported as ``torchish.name``, ``Tensor.name`` and ``Tensor.name_``."""
    op = defop(name, fwd, vjp=vjp, promote=promote, linear=linear, grad_name=grad_name)
    kname = kernel or f"{name}_cpu"

    def f(input, *, out=None):
        require_tensor(input, name)
        if reject or bool_error:
            dt = input.dtype
            if bool_error and dt is _dtype.bool:
                raise RuntimeError(bool_error)
            if dt.category in reject:
                raise not_implemented(kname, dt)
        return _out(apply(op, (input,)), out, name)
    return _public(name, f, inplace=True)


def _int_identity(f):
    """floor/ceil/trunc keep integer tensors unchanged (JAX would promote them)."""
    return lambda x: x if not jnp.issubdtype(x.dtype, jnp.inexact) else f(x)


def _sign_fwd(x):
    return x if x.dtype == jnp.bool_ else jnp.sign(x)


def _sgn(x):
    if jnp.iscomplexobj(x):
        a = jnp.abs(x)
        return jnp.where(a == 0, 0, x / jnp.where(a == 0, 1, a))
    return jnp.sign(x)


def _angle_fwd(x):
    if jnp.iscomplexobj(x):
        return jnp.angle(x)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, jnp.asarray(math.pi, x.dtype), jnp.zeros((), x.dtype)))


_LN2 = math.log(2.0)
_ZERO_GRAD = _vjp_out(lambda g, y: jnp.zeros_like(g))

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
_unary("tanh", jnp.tanh, _vjp_out(lambda g, y: g * (1 - y * y)))
_unary("asinh", jnp.arcsinh)
_unary("acosh", jnp.arccosh)
_unary("atanh", jnp.arctanh)
_unary("sigmoid", jax.nn.sigmoid, _vjp_out(lambda g, y: g * y * (1 - y)))
_unary("erf", jss.erf)
_unary("erfc", jss.erfc)
_unary("erfinv", jss.erfinv)
_unary("lgamma", jss.gammaln)
_unary("digamma", lambda x: _digamma(x))
_unary("i0", jss.i0)
_unary("sinc", jnp.sinc)
_unary("reciprocal", lambda x: 1 / x, _vjp_out(lambda g, y: -g * y * y))
_unary("deg2rad", jnp.deg2rad, linear=True)
_unary("rad2deg", jnp.rad2deg, linear=True)
_unary("angle", _angle_fwd)
_unary("relu", lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
       _vjp_out(lambda g, y: jnp.where(y > 0, g, jnp.zeros((), g.dtype))), promote=None,
       bool_error="Boolean inputs not supported for relu")
_unary("neg", jnp.negative, promote=None, linear=True,
       bool_error="Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead.")
_unary("abs", jnp.abs, lambda g, x, out: g * _sgn(x), promote=None, reject=NO_BOOL)
_unary("sgn", _sign_fwd, _ZERO_GRAD, promote=None)
_unary("floor", _int_identity(jnp.floor), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="floor_vml_cpu")
_unary("ceil", _int_identity(jnp.ceil), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="ceil_vml_cpu")
_unary("trunc", _int_identity(jnp.trunc), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="trunc_vml_cpu")
_unary("frac", lambda x: x - jnp.trunc(x), promote=None, reject=FLOATS_ONLY)
_unary("conj_physical", jnp.conj, promote=None, linear=True)
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


def square(input, *, out=None):
    """``input ** 2`` (bool squares to int64, as PyTorch's pow does)."""
    require_tensor(input, "square")
    return pow(input, 2, out=out)


_public("sign", sign, inplace=True)
_public("positive", positive)
_public("square", square, inplace=True)
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


# ----------------------------------------------------------------------------------------------------------------
# predicates (never differentiable)

_PREDICATES = {
    "isnan": jnp.isnan, "isinf": jnp.isinf, "isfinite": jnp.isfinite, "isposinf": jnp.isposinf,
    "isneginf": jnp.isneginf, "isreal": jnp.isreal, "signbit": jnp.signbit, "logical_not": jnp.logical_not,
}
_NO_OUT = ("isnan", "isinf", "isfinite", "isreal")


def _predicate(op):
    if op.name in _NO_OUT:
        return lambda input: apply(op, (input,))
    return lambda input, *, out=None: _out(apply(op, (input,)), out, op.name)


for _n, _f in _PREDICATES.items():
    _public(_n, _predicate(defop(_n, _f, differentiable=False)), inplace=_n == "logical_not")

_BITWISE_NOT = defop("bitwise_not", jnp.invert, differentiable=False)


def bitwise_not(input, *, out=None):
    require_tensor(input, "bitwise_not")
    if input.dtype.category in INTS_ONLY:
        raise not_implemented("bitwise_not_cpu", input.dtype)
    return _out(apply(_BITWISE_NOT, (input,)), out, "bitwise_not")


_public("bitwise_not", bitwise_not, inplace=True)


# ----------------------------------------------------------------------------------------------------------------
# binary ops

OPS = {}


def no_derivative(name):
    """The VJP of an op PyTorch records but cannot differentiate: backward through it raises PyTorch's error."""
    def vjp(g, *inputs, out, **static):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return vjp


def _check_operands(name, a, b, numbers):
    """PyTorch's overloads: ``numbers`` says which operands may be Python numbers ("both", "other" or "none")."""
    if numbers == "both":
        return
    if not isinstance(a, Tensor):
        if numbers == "other":
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(a).__name__}, "
                            f"{type(b).__name__}), but expected (Tensor input, Tensor other) or (Tensor input, "
                            "Number other)")
        require_tensor(a, name)
    if numbers == "none":
        require_tensor(b, name, 2, "other")


def _binary(name, fwd, *, promote="same", vjp=None, grad_name=None, linear=False, reject=(), kernel=None,
            int_div=False, differentiable=True, numbers="other"):
    """One binary op: defined in :data:`OPS`, exported as function, method and in-place method."""
    op = OPS[name] = defop(name, fwd, promote=promote, vjp=vjp, grad_name=grad_name, linear=linear,
                           differentiable=differentiable, save_out=False if vjp is None else None)
    kname = kernel or f"{name}_cpu"

    checked = numbers != "both"
    by_dtype = bool(reject or int_div)

    def f(input, other, *, out=None):
        a = input if isinstance(input, Tensor) else scalar_or_tensor(input)
        b = other if isinstance(other, Tensor) else scalar_or_tensor(other)
        if checked and not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            _check_operands(name, a, b, numbers)
        if by_dtype:
            dt = common_dtype((a, b))
            if dt.category in reject:
                raise not_implemented(kname, dt)
            if int_div and dt.category <= _INT:
                _check_divisor(b)
        res = apply(op, (a, b))
        return res if out is None else _out(res, out, name)
    return _public(name, f, inplace=True)


def _maxmin_vjp(loses):
    """PyTorch splits the gradient evenly between tied inputs of maximum/minimum; an input gets none only where it
    compares as the loser (so both get all of it next to a NaN)."""
    def vjp(g, a, b, out):
        zero = jnp.zeros((), g.dtype)
        share = jnp.where(a == b, g / 2, g)
        return jnp.where(loses(a, b), zero, share), jnp.where(loses(b, a), zero, share)
    return vjp


def _fmaxmin_vjp(cmp):
    """fmax/fmin: the whole gradient goes to the chosen input (``a`` on ties), NaN inputs are skipped."""
    def vjp(g, a, b, out):
        zero = jnp.zeros((), g.dtype)
        take_a = cmp(a, b) | jnp.isnan(b)
        return jnp.where(take_a, g, zero), jnp.where(take_a, zero, g)
    return vjp


def _floor_div_float(a, b):
    """PyTorch's (= Python's) floor division of floats: exact quotient correction, IEEE result for b == 0."""
    mod = jnp.fmod(a, b)
    div = (a - mod) / b
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    fl = jnp.floor(div)
    fl = jnp.where(div - fl > 0.5, fl + 1, fl)
    fl = jnp.where(div == 0, jnp.copysign(jnp.zeros_like(div), a / b), fl)
    return jnp.where(b == 0, a / b, fl)


def _remainder_fwd(a, b):
    if jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.remainder(a, b)
    mod = jnp.fmod(a, b)
    return jnp.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _copysign_vjp(g, a, b, out):
    zero = jnp.zeros((), g.dtype)
    return jnp.where(a == 0, zero, g * out / jnp.where(a == 0, 1, a)), jnp.zeros(jnp.shape(b), g.dtype)


def _xlogy_vjp(g, a, b, out):
    """PyTorch: ``xlogy(grad, other)`` masked to 0 where self == 0 and other <= 0; ``grad * self / other``."""
    zero = jnp.zeros((), g.dtype)
    return jnp.where((a == 0) & (b <= 0), zero, jss.xlogy(g, b)), g * a / b


def _atan2_vjp(g, a, b, out):
    """PyTorch masks the 1 / (a^2 + b^2) factor to 0 where it is infinite (at the origin)."""
    r = 1 / (a * a + b * b)
    r = jnp.where(jnp.isinf(r), jnp.zeros((), r.dtype), r)
    return g * b * r, -g * a * r


_binary("mul", jnp.multiply, grad_name="MulBackward0", numbers="both")
_binary("atan2", jnp.arctan2, promote="float", numbers="none", vjp=_atan2_vjp)
_binary("hypot", jnp.hypot, reject=FLOATS_ONLY, numbers="none",
        vjp=lambda g, a, b, out: (g * a / out, g * b / out))
_binary("maximum", jnp.maximum, vjp=_maxmin_vjp(lambda a, b: a < b), numbers="none")
_binary("minimum", jnp.minimum, vjp=_maxmin_vjp(lambda a, b: a > b), numbers="none")
_binary("fmax", jnp.fmax, vjp=_fmaxmin_vjp(lambda a, b: a >= b), numbers="none")
_binary("fmin", jnp.fmin, vjp=_fmaxmin_vjp(lambda a, b: a <= b), numbers="none")
_binary("fmod", jnp.fmod, reject=NO_BOOL, int_div=True, vjp=lambda g, a, b, out: (g, -g * jnp.trunc(a / b)))
_binary("copysign", jnp.copysign, promote="float", vjp=_copysign_vjp)
_binary("logaddexp", jnp.logaddexp, reject=FLOATS_ONLY, numbers="none")
_binary("logaddexp2", jnp.logaddexp2, reject=FLOATS_ONLY, numbers="none")
_binary("xlogy", jss.xlogy, promote="float", vjp=_xlogy_vjp, numbers="both")
_binary("nextafter", jnp.nextafter, reject=FLOATS_ONLY, numbers="none",
        vjp=lambda g, a, b, out: (g, jnp.zeros(jnp.shape(b), g.dtype)))
_binary("ldexp", lambda a, b: a * jnp.exp2(b), promote="float", grad_name="MulBackward0", numbers="none")
_binary("gcd", jnp.gcd, reject=INTS_NO_BOOL, differentiable=False, numbers="none")
_binary("lcm", jnp.lcm, reject=INTS_NO_BOOL, differentiable=False, numbers="none")


def _igamma_vjp(sign):
    """PyTorch differentiates the regularized incomplete gamma functions in ``x`` only (``a`` gets zeros)."""
    def vjp(g, a, x, out):
        d = jnp.exp((a - 1) * jnp.log(x) - x - jss.gammaln(a))
        return jnp.zeros(jnp.shape(a), g.dtype), sign * g * d
    return vjp


_binary("igamma", jss.gammainc, reject=FLOATS_ONLY, numbers="none", vjp=_igamma_vjp(1))
_binary("igammac", jss.gammaincc, reject=FLOATS_ONLY, numbers="none", vjp=_igamma_vjp(-1))
_public("multiply", globals()["mul"], inplace=True)

_REMAINDER = OPS["remainder"] = defop("remainder", _remainder_fwd, promote="same",
                                      vjp=lambda g, a, b, out: (g, -g * _floor_div_float(a, b)))
_REMAINDER_S = defop("remainder_scalar_self", _remainder_fwd, promote="same", vjp=no_derivative("remainder"),
                     grad_name="RemainderBackward1")


def remainder(input, other, *, out=None):
    """Python's modulus: the result has the sign of ``other``."""
    a, b = scalar_or_tensor(input), scalar_or_tensor(other)
    dt = common_dtype((a, b))
    if dt is _dtype.bool:
        raise not_implemented("remainder_cpu", dt)
    if dt.category == _INT:
        _check_divisor(b)
    return _out(apply(_REMAINDER if isinstance(a, Tensor) else _REMAINDER_S, (a, b)), out, "remainder")


_public("remainder", remainder, inplace=True)

_HEAVISIDE = defop("heaviside", jnp.heaviside, vjp=no_derivative("heaviside"))


def heaviside(input, values, *, out=None):
    require_tensor(input, "heaviside")
    require_tensor(values, "heaviside", 2, "values")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return _out(apply(_HEAVISIDE, (input, values)), out, "heaviside")


_public("heaviside", heaviside, inplace=True)


# add / sub / rsub: alpha travels as a traced scalar (changing it, e.g. a learning rate, never recompiles)

def _check_alpha(dt, alpha):
    if isinstance(alpha, bool):
        if dt is not _dtype.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and dt.category <= _INT:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    elif isinstance(alpha, complex) and dt.category < _COMPLEX:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _alpha(a, b, alpha):
    """``None`` for the common alpha == 1, else the validated Python number."""
    if type(alpha) is int and alpha == 1:
        return None
    alpha = scalar_or_tensor(alpha)
    dt = common_dtype((a, b))
    _check_alpha(dt, alpha)
    return bool(alpha) if dt is _dtype.bool else alpha


def _scaled(b, alpha):
    return b if alpha is None else b * alpha


def _check_sub(a, b):
    da, db = _operand_dtype(a), _operand_dtype(b)
    if da is _dtype.bool and db is _dtype.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if da is _dtype.bool or db is _dtype.bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


_ADD = OPS["add"] = defop("add", lambda a, b, alpha: a + _scaled(b, alpha), promote="same", promote_args=(0, 1),
                          linear=True, grad_name="AddBackward0")
_SUB = OPS["sub"] = defop("sub", lambda a, b, alpha: a - _scaled(b, alpha), promote="same", promote_args=(0, 1),
                          linear=True, grad_name="SubBackward0")
_RSUB_T = defop("rsub", lambda a, b, alpha: b - _scaled(a, alpha), promote="same", promote_args=(0, 1),
                linear=True, grad_name="RsubBackward0")
_RSUB_S = defop("rsub_scalar", lambda a, b, alpha: b - _scaled(a, alpha), promote="same", promote_args=(0, 1),
                linear=True, grad_name="RsubBackward1")


def add(input, other, *, alpha=1, out=None):
    a = input if isinstance(input, Tensor) else scalar_or_tensor(input)
    b = other if isinstance(other, Tensor) else scalar_or_tensor(other)
    return _out(apply(_ADD, (a, b, _alpha(a, b, alpha))), out, "add")


def sub(input, other, *, alpha=1, out=None):
    a = input if isinstance(input, Tensor) else scalar_or_tensor(input)
    b = other if isinstance(other, Tensor) else scalar_or_tensor(other)
    if _is_bool(a) or _is_bool(b):
        _check_sub(a, b)
    return _out(apply(_SUB, (a, b, _alpha(a, b, alpha))), out, "sub")


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    a, b = scalar_or_tensor(input), scalar_or_tensor(other)
    if _is_bool(a) or _is_bool(b):
        _check_sub(a, b)
    op = _RSUB_T if isinstance(b, Tensor) else _RSUB_S
    return apply(op, (a, b, _alpha(a, b, alpha)))


_public("add", add, inplace=True)
_public("sub", sub, inplace=True)
_public("subtract", sub, inplace=True)
_public("rsub", rsub, method=False)


# division

def _div_mode_fwd(a, b, *, rounding_mode):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return jax.lax.div(a, b) if rounding_mode == "trunc" else jnp.floor_divide(a, b)
    if rounding_mode == "trunc":
        return jnp.trunc(a / b)
    return _floor_div_float(a, b)


_DIV = defop("div", jnp.true_divide, promote="float", grad_name="DivBackward0")
_DIV_MODE = defop("div_mode", _div_mode_fwd, promote="same", vjp=_zeros_vjp,
                  grad_name="DivBackward2")


def div(input, other, *, rounding_mode=None, out=None):
    a, b = scalar_or_tensor(input), scalar_or_tensor(other)
    if rounding_mode is None:
        return _out(apply(_DIV, (a, b)), out, "div")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    dt = common_dtype((a, b))
    if dt.category == _BOOL:
        raise not_implemented("div_floor_cpu" if rounding_mode == "floor" else "div_trunc_cpu", dt)
    if dt.category == _INT:
        _check_divisor(b)
    return _out(apply(_DIV_MODE, (a, b), rounding_mode=rounding_mode), out, "div")


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


_FLOOR_DIVIDE = defop("floor_divide", _div_mode_fwd, promote="same", vjp=no_derivative("floor_divide"))


def floor_divide(input, other, *, out=None):
    a, b = scalar_or_tensor(input), scalar_or_tensor(other)
    dt = common_dtype((a, b))
    if dt is _dtype.bool:
        raise not_implemented("div_floor_cpu", dt)
    if dt.category == _INT:
        _check_divisor(b)
    return _out(apply(_FLOOR_DIVIDE, (a, b), rounding_mode="floor"), out, "floor_divide")


for _n in ("div", "divide", "true_divide", "floor_divide"):
    _public(_n, globals()["div" if _n == "divide" else _n], inplace=True)


# pow: integer powers follow PyTorch (negative exponents give 0 unless the base is +-1), gradients are masked
# where PyTorch masks them (exponent 0; base 0 with a non-negative exponent)

def _pow_fwd(a, b):
    if a.dtype == jnp.bool_:  # bool tensor ** Python bool
        return a | ~b
    if jnp.issubdtype(a.dtype, jnp.integer):
        r = jnp.power(a, jnp.maximum(b, 0))
        one = jnp.ones((), a.dtype)
        neg = jnp.where(a == 1, one, jnp.where(a == -1, jnp.where(b % 2 == 0, one, -one), jnp.zeros((), a.dtype)))
        return jnp.where(b < 0, neg, r)
    return jnp.power(a, b)


def _pow_vjp(g, a, b, out):
    if jnp.iscomplexobj(out):
        return g * b * jnp.power(a, b - 1), g * out * jnp.log(a)
    zero = jnp.zeros((), g.dtype)
    ga = jnp.where(b == 0, zero, g * b * jnp.power(a, b - 1))
    gb = jnp.where((a == 0) & (b >= 0), zero, g * out * jnp.log(a))
    return ga, gb


_POW_SCALAR = defop("pow", _pow_fwd, vjp=_pow_vjp, promote="same", grad_name="PowBackward0")
_POW_TENSOR = defop("pow_tensor", _pow_fwd, vjp=_pow_vjp, promote="same", grad_name="PowBackward1")
_POW_BASE = defop("pow_scalar_base", _pow_fwd, vjp=_pow_vjp, promote="same", grad_name="PowBackward2")


def pow(input, exponent, *, out=None):
    a, b = scalar_or_tensor(input), scalar_or_tensor(exponent)
    if not isinstance(b, Tensor):
        if type(b) is int and b < 0 and isinstance(a, Tensor) and a.dtype.category <= _INT:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        op = _POW_SCALAR
    else:
        op = _POW_TENSOR if isinstance(a, Tensor) else _POW_BASE
    if op is _POW_TENSOR and a.dtype is _dtype.bool and b.dtype is _dtype.bool:
        raise not_implemented("pow", a.dtype)
    return _out(apply(op, (a, b)), out, "pow")


def float_power(input, exponent, *, out=None):
    """``pow`` computed in double precision (complex128 when either operand is complex)."""
    from .convert import to_dtype
    a, b = scalar_or_tensor(input), scalar_or_tensor(exponent)
    cplx = any(isinstance(x, complex) or (isinstance(x, Tensor) and x.is_complex()) for x in (a, b))
    dt = _dtype.complex128 if cplx else _dtype.float64
    a = to_dtype(a, dt) if isinstance(a, Tensor) else a
    b = to_dtype(b, dt) if isinstance(b, Tensor) else b
    return _out(pow(a, b), out, "float_power")


def _float_power_(self, exponent):
    cplx = self.is_complex() or isinstance(exponent, complex) or (isinstance(exponent, Tensor) and
                                                                  exponent.is_complex())
    want = _dtype.complex128 if cplx else _dtype.float64
    if self.dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.scalar_type_name(self.dtype)} but the "
                           f"operation's result requires dtype {_dtype.scalar_type_name(want)}")
    from .inplace import assign
    self._check_inplace()
    return assign(self, float_power(self, exponent))


_public("pow", pow, inplace=True)
_public("float_power", float_power)
METHODS["float_power_"] = _float_power_


# ----------------------------------------------------------------------------------------------------------------
# comparisons, logical and bitwise binary ops (not differentiable)

for _n, _f in {"eq": jnp.equal, "ne": jnp.not_equal}.items():
    _binary(_n, _f, differentiable=False)
for _n, _f in {"lt": jnp.less, "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal}.items():
    _binary(_n, _f, differentiable=False, reject=frozenset({_COMPLEX}))  # complex numbers have no order
for _n, _f in {"logical_and": jnp.logical_and, "logical_or": jnp.logical_or,
               "logical_xor": jnp.logical_xor}.items():
    _binary(_n, _f, promote=None, differentiable=False, numbers="none")
for _n, _f in {"bitwise_and": jnp.bitwise_and, "bitwise_or": jnp.bitwise_or, "bitwise_xor": jnp.bitwise_xor}.items():
    _binary(_n, _f, reject=INTS_ONLY, differentiable=False, numbers="both")
_binary("bitwise_left_shift", jnp.left_shift, reject=INTS_NO_BOOL, kernel="lshift_cpu", differentiable=False,
        numbers="both")
_binary("bitwise_right_shift", jnp.right_shift, reject=INTS_NO_BOOL, kernel="rshift_cpu", differentiable=False,
        numbers="both")
for _a, _n in {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}.items():
    _public(_a, globals()[_n], inplace=True)


def equal(input, other) -> bool:
    """True if both have the same shape and all elements are equal."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(jnp.all(input._concrete() == other._concrete()))


def _isclose_fwd(a, b, rtol, atol, *, equal_nan, exact, fdt):
    close = a == b
    if equal_nan and jnp.issubdtype(a.dtype, jnp.inexact):
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if exact:
        return close
    if a.dtype == jnp.bool_:
        a, b = a.astype(fdt), b.astype(fdt)
    allowed = atol + jnp.abs(rtol * b.astype(fdt) if not jnp.issubdtype(b.dtype, jnp.inexact) else rtol * b)
    actual = jnp.abs(a - b)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


_ISCLOSE = defop("isclose", _isclose_fwd, differentiable=False)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities are close; NaNs when equal_nan)."""
    require_tensor(input, "isclose")
    require_tensor(other, "isclose", 2, "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_dtype.scalar_type_name(input.dtype)} did not match "
                           f"{_dtype.scalar_type_name(other.dtype)}")
    if input.is_complex() and equal_nan:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return apply(_ISCLOSE, (input, other, float(rtol), float(atol)), equal_nan=bool(equal_nan),
                 exact=rtol == 0 and atol == 0, fdt=_dtype.DEFAULTS.float.np)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    r = isclose(input, other, rtol, atol, equal_nan)
    return bool(jnp.all(r._concrete()))


_public("equal", equal)
_public("isclose", isclose)
_public("allclose", allclose)


# ----------------------------------------------------------------------------------------------------------------
# clamp, where, lerp, addcmul/addcdiv


def _clamp_fwd(x, lo, hi):
    if lo is not None:
        x = jnp.maximum(x, lo)
    if hi is not None:
        x = jnp.minimum(x, hi)
    return x


def _clamp_vjp(g, x, lo, hi, out):
    """PyTorch passes the gradient where min <= x <= max (boundaries included; JAX's max/min would halve it).
    A bound gets it where it was chosen: x < min (when min < max), x > max (or everywhere when max < min)."""
    zero = jnp.zeros((), g.dtype)
    keep = jnp.ones(x.shape, bool)
    glo = ghi = None
    if lo is not None:
        keep = keep & (x >= lo)
        below = x < lo
        glo = jnp.where(below & (lo < hi) if hi is not None else below, g, zero)
    if hi is not None:
        keep = keep & (x <= hi)
        above = x > hi
        ghi = jnp.where(above | (hi < lo) if lo is not None else above, g, zero)
    return jnp.where(keep, g, zero), glo, ghi


_CLAMP = defop("clamp", _clamp_fwd, promote="same", vjp=_clamp_vjp, grad_name="ClampBackward1")
_CLAMP_T = defop("clamp_tensor", _clamp_fwd, promote="same", vjp=_clamp_vjp,
                 grad_name="ClampBackward0")
_CLAMP_MIN = defop("clamp_min", _clamp_fwd, promote="same", vjp=_clamp_vjp,
                   grad_name="ClampMinBackward0")
_CLAMP_MAX = defop("clamp_max", _clamp_fwd, promote="same", vjp=_clamp_vjp,
                   grad_name="ClampMaxBackward0")


def _clamp(op, input, lo, hi, out):
    require_tensor(input, "clamp")
    lo = scalar_or_tensor(lo) if lo is not None else None
    hi = scalar_or_tensor(hi) if hi is not None else None
    kinds = [isinstance(v, Tensor) and v.ndim > 0 for v in (lo, hi) if v is not None]
    if any(kinds) and (len(kinds) == 2 and not all(isinstance(v, Tensor) for v in (lo, hi))):
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, {type(lo).__name__}, "
                        f"{type(hi).__name__}), but expected (Tensor input, Tensor min, Tensor max) or (Tensor "
                        "input, Number min, Number max)")
    dt = common_dtype((input, lo, hi))
    if dt.category == _COMPLEX:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _dtype.bool:
        raise not_implemented("clamp_min_scalar_cpu" if hi is None else "clamp_scalar_cpu", dt)
    if op is _CLAMP and (isinstance(lo, Tensor) or isinstance(hi, Tensor)):
        op = _CLAMP_T
    return _out(apply(op, (input, lo, hi)), out, "clamp")


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _clamp(_CLAMP, input, min, max, out)


def clamp_min(input, min, *, out=None):
    return _clamp(_CLAMP_MIN, input, min, None, out)


def clamp_max(input, max, *, out=None):
    return _clamp(_CLAMP_MAX, input, None, max, out)


for _n in ("clamp", "clamp_min", "clamp_max"):
    _public(_n, globals()[_n], inplace=True)
_public("clip", clamp, inplace=True)

_WHERE = defop("where", lambda c, a, b: jnp.where(c, a, b), promote="same", promote_args=(1, 2),
               grad_name="WhereBackward0")


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        condition = scalar_or_tensor(condition)
    if isinstance(condition, Tensor) and condition._v.dtype != jnp.bool_:
        if condition._v.dtype == jnp.uint8:
            from .convert import to_dtype
            condition = to_dtype(condition, _dtype.bool)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_dtype.scalar_type_name(condition.dtype)}")
    return _out(apply(_WHERE, (condition, scalar_or_tensor(input), scalar_or_tensor(other))), out, "where")


_public("where", where, method=False)
METHODS["where"] = lambda self, condition, other: where(condition, self, other)


def _lerp_fwd(a, b, w):
    """PyTorch's formula (exact at both ends): ``a + w (b - a)`` for w < 0.5, else ``b - (b - a)(1 - w)``."""
    d = b - a
    return jnp.where(jnp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


_LERP = defop("lerp", _lerp_fwd, promote="same", promote_args=(0, 1), grad_name="LerpBackward0")
_LERP_T = defop("lerp_tensor", _lerp_fwd, grad_name="LerpBackward1")


def lerp(input, end, weight, *, out=None):
    require_tensor(input, "lerp")
    require_tensor(end, "lerp", 2, "end")
    w = scalar_or_tensor(weight)
    tensor_w = isinstance(w, Tensor)
    if input.dtype.category in FLOATS_ONLY:
        raise not_implemented("lerp_kernel_tensor" if tensor_w else "lerp_kernel_scalar", input.dtype)
    for arg, t in (("end", end), ("weight", w)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype and (arg == "end" or t.ndim):
            raise RuntimeError(f"expected dtype {c10_name(input.dtype)} for `{arg}` but got dtype {c10_name(t.dtype)}")
    if tensor_w and w.dtype is not input.dtype:
        from .convert import to_dtype
        w = to_dtype(w, input.dtype)
    return _out(apply(_LERP_T if tensor_w else _LERP, (input, end, w)), out, "lerp")


_public("lerp", lerp, inplace=True)

_ADDCMUL = defop("addcmul", lambda x, a, b, v: x + jnp.asarray(v, x.dtype) * a * b, promote="same",
                 promote_args=(0, 1, 2), grad_name="AddcmulBackward0")
_ADDCDIV = defop("addcdiv", lambda x, a, b, v: x + jnp.asarray(v, x.dtype) * a / b, promote="same",
                 promote_args=(0, 1, 2), grad_name="AddcdivBackward0")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    return _out(apply(_ADDCMUL, (input, tensor1, tensor2, scalar_or_tensor(value))), out, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (floating point only)."""
    if tensor1.dtype.category <= _INT and tensor2.dtype.category <= _INT:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _out(apply(_ADDCDIV, (input, tensor1, tensor2, scalar_or_tensor(value))), out, "addcdiv")


_public("addcmul", addcmul, inplace=True)
_public("addcdiv", addcdiv, inplace=True)

_CLONE = defop("clone", lambda x: x + jnp.zeros((), x.dtype) if x.dtype != jnp.bool_ else x, linear=True,
               grad_name="CloneBackward0")


def clone(input, *, memory_format=None):
    return apply(_CLONE, (input,))


_public("clone", clone)


# ----------------------------------------------------------------------------------------------------------------
# dunders


def _dunder(f, reflected=False):
    def d(self, other):
        if not isinstance(other, _ARRAYS):
            return NotImplemented
        return f(other, self) if reflected else f(self, other)
    return d


def _inplace_dunder(name):
    def d(self, other):
        if not isinstance(other, _ARRAYS):
            return NotImplemented
        return METHODS[name](self, other)
    return d


def _invert(self):
    if self.dtype.category in INTS_ONLY:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def _binary_dunders(py, fn, inplace):
    METHODS[f"__{py}__"] = _dunder(fn)
    METHODS[f"__r{py}__"] = _dunder(fn, reflected=True)
    METHODS[f"__i{py}__"] = _inplace_dunder(inplace)


for _py, _fn, _ip in (("add", add, "add_"), ("mul", mul, "mul_"), ("truediv", div, "div_"),
                      ("floordiv", floor_divide, "floor_divide_"), ("mod", remainder, "remainder_"),
                      ("pow", pow, "pow_"), ("and", bitwise_and, "bitwise_and_"), ("or", bitwise_or, "bitwise_or_"),
                      ("xor", bitwise_xor, "bitwise_xor_"), ("lshift", bitwise_left_shift, "bitwise_left_shift_"),
                      ("rshift", bitwise_right_shift, "bitwise_right_shift_")):
    _binary_dunders(_py, _fn, _ip)

METHODS.update({
    "__sub__": _dunder(sub), "__rsub__": _dunder(rsub), "__isub__": _inplace_dunder("sub_"),
    "__eq__": _dunder(eq), "__ne__": _dunder(ne), "__lt__": _dunder(lt), "__le__": _dunder(le),
    "__gt__": _dunder(gt), "__ge__": _dunder(ge),
    "__neg__": neg, "__pos__": positive, "__abs__": abs, "__invert__": _invert,
})


# ----------------------------------------------------------------------------------------------------------------
# fill_ / zero_ / copy_

_FILL = defop("fill", lambda x, v: jnp.broadcast_to(jnp.asarray(v, x.dtype), x.shape), grad_name="FillBackward0",
              linear=True)
_COPY = defop("copy", lambda x, src: jnp.broadcast_to(src.astype(x.dtype), x.shape), grad_name="CopyBackwards",
              linear=True)


def _fill_(self, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    self._check_inplace()
    return self._assign(apply(_FILL, (self, scalar_or_tensor(value))))


def _zero_(self):
    return _fill_(self, 0)


def _copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        src = scalar_or_tensor(src)
        if not isinstance(src, Tensor):
            return _fill_(self, src)
    try:
        ok = np.broadcast_shapes(tuple(src.shape), tuple(self.shape)) == tuple(self.shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) must match the size of "
                           f"tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton dimension "
                           f"{max(self.ndim - 1, 0)}")
    self._check_inplace()
    if src.device != self.device:
        from .convert import move
        src = move(src, next(iter(self._d.devices())))
    return self._assign(apply(_COPY, (self, src)))


METHODS.update({"fill_": _fill_, "zero_": _zero_, "copy_": _copy_})
