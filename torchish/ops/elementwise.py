"""Elementwise ops: arithmetic, math functions, comparisons, logical and bitwise ops, and the Tensor dunders.

Each op is one table row: name, JAX forward, optional VJP (where PyTorch's formula uses the result, or differs
from JAX's at a boundary), and how its inputs promote. The public function, the Tensor method and the in-place
``name_`` method are generated from the row.
"""
from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .._tensor import Tensor
from .inplace import make_inplace
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public



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


# ----------------------------------------------------------------------------------------------------------------
# unary ops: name -> (jax fn, vjp or None, promote, linear)


def _vjp_out(f):
    """VJP written with the op's *output* (PyTorch saves the result for these)."""
    return lambda g, x, out: f(g, out)


_UNARY = {
    # name: (forward, vjp, promote)
    "exp": (jnp.exp, _vjp_out(lambda g, y: g * y), "float"),
    "exp2": (jnp.exp2, _vjp_out(lambda g, y: g * y * np.log(2.0).astype(y.dtype)), "float"),
    "expm1": (jnp.expm1, _vjp_out(lambda g, y: g * (y + 1)), "float"),
    "log": (jnp.log, None, "float"),
    "log2": (jnp.log2, None, "float"),
    "log10": (jnp.log10, None, "float"),
    "log1p": (jnp.log1p, None, "float"),
    "sqrt": (jnp.sqrt, _vjp_out(lambda g, y: g / (2 * y)), "float"),
    "rsqrt": (jax.lax.rsqrt, _vjp_out(lambda g, y: -0.5 * g * y * y * y), "float"),
    "sin": (jnp.sin, None, "float"),
    "cos": (jnp.cos, None, "float"),
    "tan": (jnp.tan, _vjp_out(lambda g, y: g * (1 + y * y)), "float"),
    "asin": (jnp.arcsin, None, "float"),
    "acos": (jnp.arccos, None, "float"),
    "atan": (jnp.arctan, None, "float"),
    "sinh": (jnp.sinh, None, "float"),
    "cosh": (jnp.cosh, None, "float"),
    "tanh": (jnp.tanh, _vjp_out(lambda g, y: g * (1 - y * y)), "float"),
    "asinh": (jnp.arcsinh, None, "float"),
    "acosh": (jnp.arccosh, None, "float"),
    "atanh": (jnp.arctanh, None, "float"),
    "sigmoid": (jax.nn.sigmoid, _vjp_out(lambda g, y: g * y * (1 - y)), "float"),
    "erf": (jss.erf, None, "float"),
    "erfc": (jss.erfc, None, "float"),
    "erfinv": (jss.erfinv, None, "float"),
    "lgamma": (jss.gammaln, None, "float"),
    "digamma": (jss.digamma, None, "float"),
    "i0": (jnp.i0, None, "float"),
    "sinc": (jnp.sinc, None, "float"),
    "reciprocal": (lambda x: 1 / x, _vjp_out(lambda g, y: -g * y * y), "float"),
    "relu": (lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
             _vjp_out(lambda g, y: jnp.where(y > 0, g, jnp.zeros((), g.dtype))), None),
    "neg": (jnp.negative, None, None),
    "abs": (jnp.abs, None, None),
    "square": (jnp.square, None, None),
    "sign": (jnp.sign, None, None),
    "sgn": (jnp.sign, None, None),
    "floor": (jnp.floor, None, None),
    "ceil": (jnp.ceil, None, None),
    "trunc": (jnp.trunc, None, None),
    "frac": (lambda x: x - jnp.trunc(x), None, None),
    "positive": (lambda x: x, None, None),
    "deg2rad": (jnp.deg2rad, None, "float"),
    "rad2deg": (jnp.rad2deg, None, "float"),
    "angle": (jnp.angle, None, "float"),
    "conj_physical": (jnp.conj, None, None),
}

_UNARY_GRAD_NAMES = {"neg": "NegBackward0", "abs": "AbsBackward0", "relu": "ReluBackward0",
                     "sigmoid": "SigmoidBackward0", "tanh": "TanhBackward0", "sqrt": "SqrtBackward0"}
_LINEAR = {"neg", "positive", "conj_physical", "deg2rad", "rad2deg"}
_ZERO_GRAD = {"sign", "sgn", "floor", "ceil", "trunc"}
_ALIASES = {"absolute": "abs", "negative": "neg", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
            "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fix": "trunc"}


def _int_identity(name, f):
    """floor/ceil/trunc/round keep integer tensors unchanged (JAX would promote them)."""
    return lambda x: x if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_ else f(x)


def _make_unary(name, fwd, vjp, promote):
    if name in ("floor", "ceil", "trunc", "frac"):
        fwd = _int_identity(name, fwd)
    if name in _ZERO_GRAD:
        vjp = lambda g, x, out: jnp.zeros_like(g)  # noqa: E731
    op = defop(name, fwd, vjp=vjp, promote=promote, linear=name in _LINEAR,
               grad_name=_UNARY_GRAD_NAMES.get(name))

    def f(input, *, out=None):
        return _out(apply(op, (input,)), out)
    return f


def _out(result, out):
    """Support PyTorch's ``out=`` keyword: write the result into ``out`` and return it."""
    if out is None:
        return result
    from .inplace import assign
    if tuple(out.shape) != tuple(result.shape):
        out._d = jnp.zeros(result._d.shape, out._d.dtype)
    out._check_inplace()
    return assign(out, result)


for _n, (_f, _v, _p) in _UNARY.items():
    _public(_n, _make_unary(_n, _f, _v, _p), inplace=True)
for _a, _n in _ALIASES.items():
    _public(_a, globals()[_n], inplace=True)


# round(decimals=), logit(eps=), nan_to_num(...) take static arguments

def _round_fwd(x, *, decimals):
    if jnp.issubdtype(x.dtype, jnp.integer):
        return x
    if decimals == 0:
        return jnp.round(x)
    s = 10.0 ** decimals
    return jnp.round(x * s) / s


_ROUND = defop("round", _round_fwd, vjp=lambda g, x, out, decimals: jnp.zeros_like(g))


def _round(input, *, decimals=0, out=None):
    return _out(apply(_ROUND, (input,), decimals=int(decimals)), out)


_public("round", _round, inplace=True)


def _logit_fwd(x, *, eps):
    if eps is not None:
        x = jnp.clip(x, eps, 1 - eps)
    return jnp.log(x / (1 - x))


_LOGIT = defop("logit", _logit_fwd, promote="float")
_public("logit", lambda input, eps=None, *, out=None: _out(apply(_LOGIT, (input,), eps=eps), out), inplace=True)


def _nan_to_num_fwd(x, *, nan, posinf, neginf):
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_NAN_TO_NUM = defop("nan_to_num", _nan_to_num_fwd)
_public("nan_to_num", lambda input, nan=0.0, posinf=None, neginf=None, *, out=None:
        _out(apply(_NAN_TO_NUM, (input,), nan=nan, posinf=posinf, neginf=neginf), out), inplace=True)


# ----------------------------------------------------------------------------------------------------------------
# predicates (never differentiable)

_PREDICATES = {
    "isnan": jnp.isnan, "isinf": jnp.isinf, "isfinite": jnp.isfinite, "isposinf": jnp.isposinf,
    "isneginf": jnp.isneginf, "isreal": jnp.isreal, "signbit": jnp.signbit,
    "logical_not": jnp.logical_not, "bitwise_not": jnp.invert,
}
for _n, _f in _PREDICATES.items():
    _op = defop(_n, _f, differentiable=False)
    _public(_n, (lambda op: lambda input, *, out=None: _out(apply(op, (input,)), out))(_op),
            inplace=_n in ("logical_not", "bitwise_not"))


# ----------------------------------------------------------------------------------------------------------------
# binary ops


def _div_fwd(a, b, *, rounding_mode):
    if rounding_mode is None:
        return jnp.true_divide(a, b)
    if rounding_mode == "trunc":
        if jnp.issubdtype(a.dtype, jnp.integer):
            q = jnp.abs(a) // jnp.abs(b)
            return jnp.where((a < 0) != (b < 0), -q, q)
        return jnp.trunc(a / b)
    return jnp.floor_divide(a, b) if jnp.issubdtype(a.dtype, jnp.integer) else jnp.floor(a / b)


def _maxmin_vjp(pick):
    def vjp(g, a, b, out):
        ma = pick(a, b)
        tie = a == b
        half = g * 0.5
        ga = jnp.where(tie, half, jnp.where(ma, g, jnp.zeros((), g.dtype)))
        gb = jnp.where(tie, half, jnp.where(ma, jnp.zeros((), g.dtype), g))
        return ga, gb
    return vjp


_BINARY = {
    # name: (forward, promote, vjp, grad_name, linear)
    "add": (jnp.add, "same", None, "AddBackward0", True),
    "sub": (jnp.subtract, "same", None, "SubBackward0", True),
    "mul": (jnp.multiply, "same", None, "MulBackward0", False),
    "atan2": (jnp.arctan2, "float", None, "Atan2Backward0", False),
    "hypot": (jnp.hypot, "same", None, "HypotBackward0", False),
    "maximum": (jnp.maximum, "same", _maxmin_vjp(lambda a, b: a > b), "MaximumBackward0", False),
    "minimum": (jnp.minimum, "same", _maxmin_vjp(lambda a, b: a < b), "MinimumBackward0", False),
    "fmax": (jnp.fmax, "same", None, "FmaxBackward0", False),
    "fmin": (jnp.fmin, "same", None, "FminBackward0", False),
    "remainder": (jnp.remainder, "same", None, "RemainderBackward0", False),
    "fmod": (jnp.fmod, "same", None, "FmodBackward0", False),
    "copysign": (jnp.copysign, "float", None, "CopysignBackward0", False),
    "logaddexp": (jnp.logaddexp, "float", None, "LogaddexpBackward0", False),
    "logaddexp2": (jnp.logaddexp2, "float", None, "Logaddexp2Backward0", False),
    "xlogy": (jss.xlogy, "float", None, "XlogyBackward0", False),
    "float_power": (lambda a, b: jnp.power(a, b), None, None, "PowBackward0", False),
    "heaviside": (jnp.heaviside, "same", None, "HeavisideBackward0", False),
    "nextafter": (jnp.nextafter, "same", None, "NextafterBackward0", False),
}
_BINARY_ALIASES = {"subtract": "sub", "multiply": "mul"}

OPS = {}
for _n, (_f, _p, _v, _g, _lin) in _BINARY.items():
    OPS[_n] = defop(_n, _f, promote=_p, vjp=_v, grad_name=_g, linear=_lin,
                    save_out=False if _v is None else True)


def _binary(name):
    op = OPS[name]

    def f(input, other, *, out=None):
        return _out(apply(op, (scalar_or_tensor(input), scalar_or_tensor(other))), out)
    return f


for _n in _BINARY:
    if _n not in ("add", "sub", "float_power"):
        _public(_n, _binary(_n), inplace=True)


def add(input, other, *, alpha=1, out=None):
    other = scalar_or_tensor(other)
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return _out(apply(OPS["add"], (scalar_or_tensor(input), other)), out)


def sub(input, other, *, alpha=1, out=None):
    other = scalar_or_tensor(other)
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return _out(apply(OPS["sub"], (scalar_or_tensor(input), other)), out)


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


_public("add", add, inplace=True)
_public("sub", sub, inplace=True)
_public("rsub", rsub, method=False)
for _a, _n in _BINARY_ALIASES.items():
    _public(_a, globals()[_n], inplace=True)

_DIV = defop("div", _div_fwd, promote="same", grad_name="DivBackward0")


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    a, b = scalar_or_tensor(input), scalar_or_tensor(other)
    if rounding_mode is None:
        # true division promotes integers to the default float
        from .registry import compute_dtype
        from .. import _dtype
        dt = compute_dtype(_DIV, (a, b))
        if dt is not None and dt.category < _dtype._FLOAT:
            from .convert import to_dtype
            fdt = _dtype.DEFAULTS.float
            a = to_dtype(a, fdt) if isinstance(a, Tensor) else float(a)
            b = to_dtype(b, fdt) if isinstance(b, Tensor) else float(b)
    return _out(apply(_DIV, (a, b), rounding_mode=rounding_mode), out)


_public("div", div, inplace=True)
_public("divide", div, inplace=True)
_public("true_divide", lambda input, other, *, out=None: div(input, other, out=out), inplace=True)
_public("floor_divide", lambda input, other, *, out=None: div(input, other, rounding_mode="floor", out=out),
        inplace=True)


def _pow_fwd(a, b):
    return jnp.power(a, b)


_POW = defop("pow", _pow_fwd, promote="same", grad_name="PowBackward0")


def pow(input, exponent, *, out=None):
    a, b = scalar_or_tensor(input), scalar_or_tensor(exponent)
    if (isinstance(b, int) and not isinstance(b, bool) and b < 0 and isinstance(a, Tensor)
            and a._d.dtype.kind in "iu"):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _out(apply(_POW, (a, b)), out)


_public("pow", pow, inplace=True)


def float_power(input, exponent, *, out=None):
    from .convert import to_dtype
    from .. import _dtype
    a, b = scalar_or_tensor(input), scalar_or_tensor(exponent)
    cplx = any(isinstance(x, complex) or (isinstance(x, Tensor) and x.is_complex()) for x in (a, b))
    dt = _dtype.complex128 if cplx else _dtype.float64
    a = to_dtype(a, dt) if isinstance(a, Tensor) else a
    b = to_dtype(b, dt) if isinstance(b, Tensor) else b
    return _out(apply(OPS["float_power"], (a, b)), out)


_public("float_power", float_power, inplace=True)


# ----------------------------------------------------------------------------------------------------------------
# comparisons, logical and bitwise binary ops (not differentiable)

_COMPARE = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less, "le": jnp.less_equal, "gt": jnp.greater,
            "ge": jnp.greater_equal}
_LOGICAL = {"logical_and": jnp.logical_and, "logical_or": jnp.logical_or, "logical_xor": jnp.logical_xor}
_BITWISE = {"bitwise_and": jnp.bitwise_and, "bitwise_or": jnp.bitwise_or, "bitwise_xor": jnp.bitwise_xor,
            "bitwise_left_shift": jnp.left_shift, "bitwise_right_shift": jnp.right_shift}


def _bitwise_fwd(f):
    def fwd(a, b):
        if jnp.issubdtype(a.dtype, jnp.inexact):
            raise TypeError(f"\"{f.__name__}_cpu\" not implemented for '{a.dtype}'")
        return f(a, b)
    return fwd


for _n, _f in _COMPARE.items():
    OPS[_n] = defop(_n, _f, promote="same", differentiable=False)
for _n, _f in _LOGICAL.items():
    OPS[_n] = defop(_n, _f, differentiable=False)
for _n, _f in _BITWISE.items():
    OPS[_n] = defop(_n, _bitwise_fwd(_f), promote="same", differentiable=False)


def _compare(name):
    op = OPS[name]

    def f(input, other, *, out=None):
        return _out(apply(op, (scalar_or_tensor(input), scalar_or_tensor(other))), out)
    return f


for _n in list(_COMPARE) + list(_LOGICAL) + list(_BITWISE):
    _public(_n, _compare(_n), inplace=True)
for _a, _n in {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}.items():
    _public(_a, globals()[_n], inplace=True)


def equal(input, other) -> bool:
    """True if both have the same shape and all elements are equal."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(jnp.all(input._d == other._d))


_public("equal", equal)


# ----------------------------------------------------------------------------------------------------------------
# ternary and friends


def _clamp_fwd(x, lo, hi):
    if lo is not None:
        x = jnp.maximum(x, lo)
    if hi is not None:
        x = jnp.minimum(x, hi)
    return x


def _clamp_vjp(g, x, lo, hi, out):
    """PyTorch passes the gradient where min <= x <= max (boundaries included); JAX's max/min would halve it."""
    zero = jnp.zeros((), g.dtype)
    keep = jnp.ones(x.shape, bool)
    if lo is not None:
        keep = keep & (x >= lo)
    if hi is not None:
        keep = keep & (x <= hi)
    glo = None if lo is None else jnp.where(x < lo, g, zero)
    ghi = None if hi is None else jnp.where(x > hi, g, zero)
    return jnp.where(keep, g, zero), glo, ghi


_CLAMP = defop("clamp", _clamp_fwd, promote="same", vjp=_clamp_vjp, grad_name="ClampBackward1")


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _out(apply(_CLAMP, (input, scalar_or_tensor(min) if min is not None else None,
                               scalar_or_tensor(max) if max is not None else None)), out)


_public("clamp", clamp, inplace=True)
_public("clip", clamp, inplace=True)
_public("clamp_min", lambda input, min, *, out=None: clamp(input, min=min, out=out), inplace=True)
_public("clamp_max", lambda input, max, *, out=None: clamp(input, max=max, out=out), inplace=True)

_WHERE = defop("where", lambda c, a, b: jnp.where(c, a, b), promote="same", promote_args=(1, 2),
               grad_name="WhereBackward0")


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        condition = scalar_or_tensor(condition)
    if isinstance(condition, Tensor) and condition._d.dtype != jnp.bool_:
        if condition._d.dtype == jnp.uint8:
            from .convert import to_dtype
            from .. import _dtype
            condition = to_dtype(condition, _dtype.bool)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{condition.dtype.name.capitalize()}")
    return _out(apply(_WHERE, (condition, scalar_or_tensor(input), scalar_or_tensor(other))), out)


_public("where", where, method=False)
METHODS["where"] = lambda self, condition, other: where(condition, self, other)

_LERP = defop("lerp", lambda a, b, w: a + w * (b - a), promote="same", grad_name="LerpBackward0")
_public("lerp", lambda input, end, weight, *, out=None:
        _out(apply(_LERP, (input, end, scalar_or_tensor(weight))), out), inplace=True)

_ADDCMUL = defop("addcmul", lambda x, a, b, v: x + v * a * b, promote="same", grad_name="AddcmulBackward0")
_ADDCDIV = defop("addcdiv", lambda x, a, b, v: x + v * a / b, promote="same", grad_name="AddcdivBackward0")
_public("addcmul", lambda input, tensor1, tensor2, *, value=1, out=None:
        _out(apply(_ADDCMUL, (input, tensor1, tensor2, value)), out), inplace=True)
_public("addcdiv", lambda input, tensor1, tensor2, *, value=1, out=None:
        _out(apply(_ADDCDIV, (input, tensor1, tensor2, value)), out), inplace=True)

_CLONE = defop("clone", lambda x: x + jnp.zeros((), x.dtype) if x.dtype != jnp.bool_ else x, linear=True,
               grad_name="CloneBackward0")


def clone(input, *, memory_format=None):
    return apply(_CLONE, (input,))


_public("clone", clone)


# ----------------------------------------------------------------------------------------------------------------
# dunders


def _swap(f):
    return lambda self, other: f(other, self)


def _dunder(f):
    def d(self, other):
        if not isinstance(other, (Tensor, numbers.Number, np.generic, np.ndarray)):
            return NotImplemented
        return f(self, other)
    return d


def _inplace_dunder(name):
    def d(self, other):
        if not isinstance(other, (Tensor, numbers.Number, np.generic, np.ndarray)):
            return NotImplemented
        return METHODS[name](self, other)
    return d


METHODS.update({
    "__add__": _dunder(add), "__radd__": _dunder(_swap(add)), "__iadd__": _inplace_dunder("add_"),
    "__sub__": _dunder(sub), "__rsub__": _dunder(_swap(sub)), "__isub__": _inplace_dunder("sub_"),
    "__mul__": _dunder(mul), "__rmul__": _dunder(_swap(mul)), "__imul__": _inplace_dunder("mul_"),
    "__truediv__": _dunder(div), "__rtruediv__": _dunder(_swap(div)), "__itruediv__": _inplace_dunder("div_"),
    "__floordiv__": _dunder(globals()["floor_divide"]), "__rfloordiv__": _dunder(_swap(globals()["floor_divide"])),
    "__ifloordiv__": _inplace_dunder("floor_divide_"),
    "__mod__": _dunder(globals()["remainder"]), "__rmod__": _dunder(_swap(globals()["remainder"])),
    "__imod__": _inplace_dunder("remainder_"),
    "__pow__": _dunder(pow), "__rpow__": _dunder(_swap(pow)), "__ipow__": _inplace_dunder("pow_"),
    "__eq__": _dunder(globals()["eq"]), "__ne__": _dunder(globals()["ne"]), "__lt__": _dunder(globals()["lt"]),
    "__le__": _dunder(globals()["le"]), "__gt__": _dunder(globals()["gt"]), "__ge__": _dunder(globals()["ge"]),
    "__neg__": globals()["neg"], "__pos__": globals()["positive"], "__abs__": globals()["abs"],
    "__and__": _dunder(globals()["bitwise_and"]), "__rand__": _dunder(_swap(globals()["bitwise_and"])),
    "__iand__": _inplace_dunder("bitwise_and_"),
    "__or__": _dunder(globals()["bitwise_or"]), "__ror__": _dunder(_swap(globals()["bitwise_or"])),
    "__ior__": _inplace_dunder("bitwise_or_"),
    "__xor__": _dunder(globals()["bitwise_xor"]), "__rxor__": _dunder(_swap(globals()["bitwise_xor"])),
    "__ixor__": _inplace_dunder("bitwise_xor_"),
    "__lshift__": _dunder(globals()["bitwise_left_shift"]), "__rshift__": _dunder(globals()["bitwise_right_shift"]),
    "__ilshift__": _inplace_dunder("bitwise_left_shift_"), "__irshift__": _inplace_dunder("bitwise_right_shift_"),
    "__invert__": globals()["bitwise_not"],
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
        np.broadcast_shapes(tuple(src.shape), tuple(self.shape))
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
