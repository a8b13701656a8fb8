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
import numpy as np

from .. import _dtype
from .. import _precision
from . import complex_c
from .elementwise import (_INT, FLOATS_ONLY, NO_BOOL, _out, not_implemented, out_exact, parser_worded, require_int,
                          require_number, require_tensor, type_name)
from .inplace import make_inplace
from .registry import ELEMENTWISE, OPS, NotDifferentiable, apply, defop, overload
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


def _in_float64(f):
    """``f`` for float16/bfloat16 operands evaluated in float64 and rounded to float32, then to the half type:
    PyTorch rounds its float32 libm result once, and XLA's float32 sinh/cosh/atan are off by ulps enough to cross a
    half-type rounding boundary (float16 ``cosh(10.96875)``: 29024 in PyTorch, 29008 through XLA's float32)."""
    def wrapped(*vals):
        if vals[0].dtype not in (jnp.float16, jnp.bfloat16):
            return f(*vals)
        wide = f(*(v.astype(jnp.float64) for v in vals)).astype(jnp.float32)
        return jax.lax.optimization_barrier(wide).astype(vals[0].dtype)
    return wrapped


def _unary(name, fwd, vjp=None, *, promote="float", reject=(), kernel=None, bool_error=None, grad_name=None,
           linear=False, complex_error=None, complex_kernel=None):
    """One unary op: defined, exported as ``torchish.name``, ``Tensor.name`` and ``Tensor.name_``.

    ``complex_error``: PyTorch's RuntimeError for complex inputs; ``complex_kernel``: the kernel PyTorch has no
    complex version of (its NotImplementedError; a message with spaces is raised as it is)."""
    op = defop(name, fwd, vjp=vjp, promote=promote, linear=linear, grad_name=grad_name)
    ELEMENTWISE.add(name)
    kname = kernel or f"{name}_cpu"

    def f(input, *, out=None):
        require_tensor(input, name)
        if reject or bool_error or complex_error or complex_kernel:
            dt = input.dtype
            if bool_error and dt is _dtype.bool:
                raise RuntimeError(bool_error)
            if complex_error and dt.category == _dtype._COMPLEX:
                raise RuntimeError(complex_error)
            if complex_kernel and dt.category == _dtype._COMPLEX:
                raise NotImplementedError(complex_kernel) if " " in complex_kernel else \
                    not_implemented(complex_kernel, dt)
            if dt.category in reject:
                raise not_implemented(kname, dt)
        if promote is None and out is not None:  # a dtype-preserving op: ``out`` must match exactly
            res = apply(op, (input,))
            if res.dtype is not input.dtype:  # complex -> real (abs)
                return _complex_to_real_out(res, input, out, name)
            return out_exact(res, out, name)
        return _out(apply(op, (input,)), out, name)
    return _public(name, f, inplace=True)


def _complex_to_real_out(res, input, out, name):
    """PyTorch's ``out=`` rule for a complex input's real result (abs): a complex ``out`` of the input's dtype gets it
    as complex numbers; a real one any type the real result casts to."""
    if out.is_complex():
        return out_exact(res.to(input.dtype), out, name)
    if not _dtype.can_cast(res.dtype, out.dtype):
        raise RuntimeError(f"result type {_dtype.scalar_type_name(res.dtype)} can't be cast to the desired output "
                           f"type {_dtype.scalar_type_name(out.dtype)}")
    return _out(res, out, name)


def _int_identity(f):
    """floor/ceil/trunc keep integer tensors unchanged (JAX would promote them)."""
    return lambda x: x if not jnp.issubdtype(x.dtype, jnp.inexact) else f(x)


def _sign_fwd(x):
    """PyTorch's CPU sign is ``(0 < x) - (x < 0)``: NaN and -0.0 give +0.0."""
    if x.dtype == jnp.bool_ or not jnp.issubdtype(x.dtype, jnp.floating):
        return x if x.dtype == jnp.bool_ else jnp.sign(x)
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _sgn(x):
    """``z / |z|`` (+0 at 0) for complex ``z``, with the zeros' signs of PyTorch's kernels: complex128 divides each
    part by ``|z|``; complex64 divides by the complex ``|z| + 0j`` (real ``(x|z| + y*0) / |z|^2``, imaginary
    ``(y|z| - x*0) / |z|^2``)."""
    if jnp.iscomplexobj(x):
        a = jnp.abs(x)
        safe = jnp.where(a == 0, 1, a)
        re, im = jnp.real(x) / safe, jnp.imag(x) / safe
        if x.dtype == jnp.complex64:
            re, im = re + jnp.imag(x) * 0, im - jnp.real(x) * 0
        return jnp.where(a == 0, jnp.zeros((), x.dtype), jax.lax.complex(re, im))
    return _sign_fwd(x)  # NaN -> 0, as PyTorch's sgn in its backward formulas (abs of NaN gets no gradient)


def _angle_fwd(x):
    if jnp.iscomplexobj(x):
        return jnp.angle(x)
    # (a NaN from a constant, not from x: the gradient of a real input's angle is zero everywhere, as PyTorch's)
    return jnp.where(jnp.isnan(x), jnp.asarray(jnp.nan, x.dtype),
                     jnp.where(x < 0, jnp.asarray(math.pi, x.dtype), jnp.zeros((), x.dtype)))


def _angle_vjp(g, x, out):
    """PyTorch's angle_backward: zero for real inputs; for complex ``z``, ``g * z / |z|^2 * i``, and 0 at z = 0
    (jax.vjp of jnp.angle gives 0/0 = NaN there: the DC bin of a silent frame's spectrum)."""
    if not jnp.iscomplexobj(x):
        return jnp.zeros_like(g)
    res = g * x / jnp.abs(x) ** 2 * 1j  # (|z|^2 underflowing to 0 for z != 0 gives NaN, as in PyTorch)
    return jnp.where(x == 0, jnp.zeros((), res.dtype), res.astype(x.dtype))


_LN2 = math.log(2.0)
_ZERO_GRAD = _vjp_out(lambda g, y: jnp.zeros_like(g))


def _sgn_vjp(g, x, out):
    """Zero for real inputs; for complex ``z``, PyTorch's ``(g - sgn(z)^2 * conj(g)) / (2|z|)`` (0 where z = 0)."""
    if not jnp.iscomplexobj(x):
        return jnp.zeros_like(g)
    a = jnp.abs(x)
    return jnp.where(a == 0, jnp.zeros((), g.dtype), (g - out * out * jnp.conj(g)) / (2 * jnp.where(a == 0, 1, a)))

def _formula(f):
    """A VJP from PyTorch's derivatives.yaml formula ``f(g, x, result, r)``, written one tensor op at a time: each
    op's result passes through ``r``, which rounds it to a float16/bfloat16 input's dtype as PyTorch's composite
    formula does (ops on Python numbers computed in float32 first), and is the identity for other dtypes."""
    def vjp(g, x, out):
        wide, r = _precision.stepper(x.dtype)
        return f(wide(g), wide(x), wide(out), r).astype(x.dtype)
    return vjp


_SQRT_PI = math.sqrt(math.pi)
_LN10 = math.log(10.0)
_conj = jnp.conj


def exp2_values(x):
    """``2 ** x`` as XLA's ``pow``, within about an ulp (its ``exp2`` is ``exp(x * ln 2)``: 92% of float32 results off,
    up to 68 ulps, and inexact at integers from 13 on). Complex numbers keep ``jnp.exp2``."""
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return jnp.exp2(x)
    return jnp.power(jnp.asarray(2, x.dtype), x)


_unary("exp", lambda x: complex_c.exp_c99(x) if jnp.iscomplexobj(x) else jnp.exp(x),  # (std::exp's special values)
       _vjp_out(lambda g, y: g * y))
# float16/bfloat16 forwards in float32, rounded once (PyTorch's kernels; XLA's half-precision ones round more)
_unary("exp2", _in_float32(exp2_values), _formula(lambda g, x, y, r: r(r(g * _conj(y)) * _LN2)))
_unary("expm1", _in_float32(jnp.expm1), _formula(lambda g, x, y, r: r(g * r(_conj(y) + 1))))
_unary("log", jnp.log)
_unary("log2", _in_float32(jnp.log2), _formula(lambda g, x, y, r: r(g / r(_conj(x) * _LN2))))
_unary("log10", _in_float32(jnp.log10), _formula(lambda g, x, y, r: r(g / r(_conj(x) * _LN10))))
_unary("log1p", jnp.log1p)


def _sqrt(x):
    """A complex one is C's csqrt: sqrt(-1 - 0j) is -1j (jnp.sqrt gives 1j), infinite parts give its limits."""
    return complex_c.sqrt_c99(x) if jnp.iscomplexobj(x) else jnp.sqrt(x)


def rsqrt_values(x):
    """``1 / sqrt(x)`` as PyTorch's CPU kernels compute it (scalar and vectorized paths alike): a square root, then one
    true division, two roundings; float16/bfloat16 in float32, rounded once to the half type. XLA's ``rsqrt`` rounds
    once, which moved 35% of float32 results by 1-2 ulps. A complex one is PyTorch's 1 / sqrt(x), by c10's
    division."""
    if jnp.iscomplexobj(x):
        return complex_c.reciprocal_c10(complex_c.sqrt_c99(x))
    if x.dtype in _precision.LOW:
        return _precision.div(1, jnp.sqrt(x.astype(jnp.float32))).astype(x.dtype)
    return _precision.div(1, jnp.sqrt(x))


_unary("sqrt", _sqrt, _vjp_out(lambda g, y: g / (2 * y)))


def _rsqrt_vjp(g, x, out):
    """``-0.5 * grad * result.pow(3)``; PyTorch's bfloat16 ``pow(3)`` rounds the square first, its float16 one
    does not."""
    wide, r = _precision.stepper(x.dtype)
    y = wide(out)
    cube = r(r(y * y) * y) if x.dtype == jnp.bfloat16 else r(y * y * y)
    return r(r(wide(g) * -0.5) * _conj(cube)).astype(x.dtype)


_unary("rsqrt", rsqrt_values, _rsqrt_vjp)
_unary("sin", jnp.sin)
_unary("cos", jnp.cos)
_unary("tan", jnp.tan, _formula(lambda g, x, y, r: r(g * _conj(r(1 + r(y * y))))))
_unary("asin", _in_float32(jnp.arcsin),
       _formula(lambda g, x, y, r: r(g * _conj(r(rsqrt_values(r(r(_precision.mul(-x, x)) + 1)))))))
_unary("acos", _in_float32(jnp.arccos),
       _formula(lambda g, x, y, r: r(g * -_conj(r(rsqrt_values(r(r(_precision.mul(-x, x)) + 1)))))))
_unary("atan", _in_float64(jnp.arctan), _formula(lambda g, x, y, r: r(g / _conj(r(r(x * x) + 1)))))
_unary("sinh", _in_float64(jnp.sinh), _formula(lambda g, x, y, r: r(g * _conj(r(jnp.cosh(x))))))
_unary("cosh", _in_float64(jnp.cosh), _formula(lambda g, x, y, r: r(g * _conj(r(jnp.sinh(x))))))
_unary("tanh", jnp.tanh, _vjp_out(_in_float32(lambda g, y: g * (1 - y * y))))
_unary("asinh", _in_float32(jnp.arcsinh),
       _formula(lambda g, x, y, r: r(g * _conj(r(rsqrt_values(r(r(_precision.mul(x, x)) + 1)))))))
# acosh's gradient, PyTorch's: complex rsqrt(x + 1) * rsqrt(x - 1) (its branch), real rsqrt(x * x - 1)
_unary("acosh", _in_float32(jnp.arccosh),
       lambda g, x, out: g * (jnp.conj(rsqrt_values(x + 1) * rsqrt_values(x - 1)) if jnp.iscomplexobj(x)
                              else rsqrt_values(_precision.mul(x, x) - 1)))
_unary("atanh", _in_float32(jnp.arctanh), _formula(lambda g, x, y, r: r(g / _conj(r(1 - r(x * x))))))


def _sigmoid_grad(g, y):
    return g * (1 - y) * y


def _sigmoid(x):
    """A complex one is PyTorch's 1 / (1 + exp(-x)) by c10's division: NaN once exp(-x) overflows both parts."""
    if jnp.iscomplexobj(x):
        return complex_c.reciprocal_c10(1 + complex_c.exp_c99(-x))
    return jax.nn.sigmoid(x)


# PyTorch's float16 sigmoid_backward rounds at every step; its bfloat16 one computes in float32
_unary("sigmoid", _in_float32(_sigmoid),
       _vjp_out(lambda g, y: _sigmoid_grad(g, y) if g.dtype == jnp.float16 else _in_float32(_sigmoid_grad)(g, y)))
_unary("erf", jss.erf, _formula(lambda g, x, y, r: r(r(r(jnp.exp(-r(x * x))) * (2 / _SQRT_PI)) * g)),
       complex_kernel="erf_vml_cpu")
_unary("erfc", jss.erfc, _formula(lambda g, x, y, r: r(r(r(jnp.exp(-r(x * x))) * (-2 / _SQRT_PI)) * g)),
       complex_kernel="erfc_vml_cpu")
_unary("erfinv", jss.erfinv, _formula(lambda g, x, y, r: r(r(r(jnp.exp(r(y * y))) * (0.5 * _SQRT_PI)) * g)),
       complex_kernel="erfinv_vml_cpu")
_unary("lgamma", lambda x: _lgamma(x), lambda g, x, out: g * _digamma(x),  # PyTorch's digamma poles: -inf at +0
       complex_kernel="lgamma_vml_cpu")
_unary("digamma", lambda x: _digamma(x), lambda g, x, out: g * _trigamma(x), complex_kernel="digamma")
_unary("i0", _in_float32(jss.i0), lambda g, x, out: g * _in_float32(jss.i1)(x),  # PyTorch: grad * i1(x) (JAX's: 1 at 0)
       complex_kernel="i0_vml_cpu")
def _sinc_vjp(g, x, out):
    """PyTorch's sinc_backward, one op at a time (each rounded to a half input's dtype):
    ``grad * ((pi x cos(pi x) - sin(pi x)) / (pi x^2)).conj()``, 0 where ``pi x^2`` is 0."""
    wide, r = _precision.stepper(x.dtype)
    xw, gw = wide(x), wide(g)
    self_pi = r(xw * math.pi)
    self_squared_pi = r(r(xw * xw) * math.pi)
    num = r(r(self_pi * r(jnp.cos(self_pi))) - r(jnp.sin(self_pi)))
    res = r(gw * _conj(r(num / self_squared_pi)))
    return jnp.where(self_squared_pi == 0, jnp.zeros((), res.dtype), res).astype(x.dtype)


_unary("sinc", _in_float32(jnp.sinc), _sinc_vjp)
def _reciprocal(x):
    """A complex one by c10's division, as PyTorch: 1 / (inf + inf j) is NaN (XLA's division gives 0)."""
    return complex_c.reciprocal_c10(x) if jnp.iscomplexobj(x) else 1 / x


_unary("reciprocal", _reciprocal, _vjp_out(lambda g, y: -g * (y * y)))  # PyTorch: -grad * (result * result)
# PyTorch multiplies by the double constant as a float32 scalar (its opmath) for float16/bfloat16 inputs
_unary("deg2rad", _in_float32(jnp.deg2rad), linear=True, complex_error="deg2rad is not supported for complex tensors.")
_unary("rad2deg", _in_float32(jnp.rad2deg), linear=True, complex_error="rad2deg is not supported for complex tensors.")
_unary("angle", _angle_fwd, _angle_vjp)
_unary("relu", lambda x: jnp.where(x < 0, jnp.zeros((), x.dtype), x),  # PyTorch keeps -0.0 (and NaN)
       # PyTorch's threshold_backward(grad, result, 0): ``result <= 0 ? 0 : grad``, so a NaN passes the gradient
       # (nn fuzzer seed 9100293: lp_pool3d of a negative input, NaN through sign(out) * relu(abs(out)))
       _vjp_out(lambda g, y: jnp.where(y <= 0, jnp.zeros((), g.dtype), g)), promote=None,
       bool_error="Boolean inputs not supported for relu", complex_kernel="clamp is not supported for complex types")
_unary("neg", jnp.negative, promote=None, linear=True,
       bool_error="Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead.")
_unary("abs", complex_c.abs_c99, lambda g, x, out: g * _sgn(x), promote=None, reject=NO_BOOL)
_unary("sgn", _sgn, _sgn_vjp, promote=None)
_unary("floor", _int_identity(jnp.floor), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="floor_vml_cpu",
       complex_kernel="floor is not supported for complex inputs")
_unary("ceil", _int_identity(jnp.ceil), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="ceil_vml_cpu",
       complex_kernel="ceil is not supported for complex inputs")
_unary("trunc", _int_identity(jnp.trunc), _ZERO_GRAD, promote=None, reject=NO_BOOL, kernel="trunc_vml_cpu",
       complex_kernel="trunc is not supported for complex inputs")
_unary("frac", lambda x: x - jnp.trunc(x), promote=None, reject=FLOATS_ONLY, complex_kernel="frac_cpu")
_conj_physical_any = _unary("conj_physical", jnp.conj, promote=None, linear=True)


def conj_physical(input, *, out=None):
    """``torch.conj_physical``: the tensor itself for a real dtype (as PyTorch returns it: no copy, no node), the
    conjugate as a new tensor for a complex one."""
    require_tensor(input, "conj_physical")
    if out is None and not input.is_complex():
        return input
    return _conj_physical_any(input, out=out)


_public("conj_physical", conj_physical)  # (conj_physical_ stays the op's, in place)


def conj(input):
    """``torch.conj``: the tensor itself for a real dtype (as PyTorch returns it); for a complex one a view holding
    the conjugate (PyTorch's lazily conjugated view: writes reach the input, the input's writes show through)."""
    require_tensor(input, "conj")
    if not input.is_complex():
        return input
    from .shape import CONJ_VIEW
    return apply(CONJ_VIEW, (input,))


def is_conj(input):
    """Whether ``input`` is a conjugate view (an odd number of ``conj`` steps from its base)."""
    view = input._view
    return view is not None and input.is_complex() and sum(op.name == "conj" for op, _ in view[1]) % 2 == 1


def resolve_conj(input):
    """A conjugate view's values materialised (no longer a view); any other tensor itself."""
    return input.clone() if is_conj(input) else input  # (a clone is never a view here)


def is_neg(input):
    """Whether ``input`` is PyTorch's lazily negated view: the imaginary part of a conjugate view."""
    view = input._view
    if view is None:
        return False
    names = [op.name for op, _ in view[1]]
    return "imag" in names and names[:names.index("imag")].count("conj") % 2 == 1


def resolve_neg(input):
    """A negated view's values materialised (no longer a view); any other tensor itself."""
    return input.clone() if is_neg(input) else input


for _fn in (conj, is_conj, resolve_conj, is_neg, resolve_neg):
    _public(_fn.__name__, _fn)
_SIGN = defop("sign", _sign_fwd, vjp=_ZERO_GRAD)


def sign(input, *, out=None):
    require_tensor(input, "sign")
    if input.is_complex():
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    return out_exact(apply(_SIGN, (input,)), out, "sign")


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


def _real_abs_(inplace):
    """``abs_``/``absolute_``: PyTorch refuses them on a complex tensor (the result would be real)."""
    def f(self):
        if self.is_complex():
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return inplace(self)
    return f


for _n in ("abs_", "absolute_"):
    METHODS[_n] = _real_abs_(METHODS[_n])


# round(decimals=), logit(eps=), nan_to_num(...) take static arguments

def _round_fwd(x, *, decimals):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    if decimals == 0:
        return jnp.round(x)
    # PyTorch's round_decimals kernel scales, rounds and unscales in the opmath type (float32 for the half types),
    # rounding to the input's dtype once at the end; its divisions are true ones (_precision.div: XLA would multiply
    # by the rounded reciprocal of the constant, an ulp off)
    w = x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x
    p = jnp.asarray(10.0 ** builtins.abs(decimals), w.dtype)
    out = jnp.round(_precision.div(w, p)) * p if decimals < 0 else _precision.div(jnp.round(w * p), p)
    return out.astype(x.dtype)


_ROUND = defop("round", _round_fwd, vjp=lambda g, x, out, decimals: jnp.zeros_like(g))
_ROUND_DECIMALS = overload(_ROUND, "RoundBackward1")  # (PyTorch's round.decimals overload)


_NO_DECIMALS = type("_NoDecimals", (), {"__repr__": lambda self: "None"})()  # (None is refused: an int is required)


@parser_worded
def round(input, *, decimals=_NO_DECIMALS, out=None):
    """``decimals`` given (even 0) selects PyTorch's ``round.decimals`` kernel, which takes no integers."""
    require_tensor(input, "round")
    if decimals is _NO_DECIMALS:
        decimals = None
    else:
        require_int(decimals, "round", None, "decimals")
    dt = input.dtype
    if dt is _dtype.bool or (dt.category == _dtype._COMPLEX and not decimals) or (
            decimals == 0 and dt.category == _INT):
        raise not_implemented("round_vml_cpu", dt)
    if decimals and dt.category in (_INT, _dtype._COMPLEX):
        raise not_implemented("round_cpu", dt)
    op = _ROUND if decimals is None else _ROUND_DECIMALS
    return out_exact(apply(op, (input,), decimals=int(decimals or 0)), out, "round")


_public("round", round, inplace=True)


def _logit_fwd(x, *, eps):
    if eps is not None:
        x = jnp.clip(x, eps, 1 - eps)
    return jnp.log(x / (1 - x))


def _logit_vjp(g, x, out, eps):
    """PyTorch: zero outside [eps, 1 - eps] when eps is given, NaN outside [0, 1] otherwise; ``grad * inf`` at
    exactly 0 and 1 (whatever the sign of the zero)."""
    d = jnp.where((x == 0) | (x == 1), g * jnp.asarray(jnp.inf, g.dtype), g / (x * (1 - x)))
    if eps is None:
        return jnp.where((x < 0) | (x > 1), jnp.asarray(jnp.nan, d.dtype), d)
    return jnp.where((x < eps) | (x > 1 - eps), jnp.zeros((), d.dtype), d)


_LOGIT = defop("logit", _logit_fwd, vjp=_logit_vjp, promote="float")


@parser_worded
def logit(input, eps=None, *, out=None):
    require_tensor(input, "logit")
    if eps is not None:
        require_number(eps, "logit", 2, "eps")
    if input.dtype.category == _dtype._COMPLEX:
        raise not_implemented("logit_cpu", input.dtype)
    return _out(apply(_LOGIT, (input,), eps=None if eps is None else float(eps)), out, "logit")


_public("logit", logit, inplace=True)


def _nan_to_num_fwd(x, *, nan, posinf, neginf):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_NAN_TO_NUM = defop("nan_to_num", _nan_to_num_fwd)


def _float_arg(value, arg):
    """nan_to_num's optional ``float`` arguments as PyTorch's parser takes them: None, Python and numpy numbers
    (a complex one as its real part), a 0-d Tensor that does not require grad; anything else is its TypeError."""
    if value is None:
        return None
    from .._tensor import Tensor
    if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
        value = value.item()
        if isinstance(value, complex) and value.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
    elif not isinstance(value, (bool, int, float, np.bool_, np.number)):
        raise TypeError(f"nan_to_num(): argument '{arg}' must be float, not {type_name(value)}")
    return float(np.real(value))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    require_tensor(input, "nan_to_num")
    nan, posinf, neginf = (_float_arg(v, a) for v, a in ((nan, "nan"), (posinf, "posinf"), (neginf, "neginf")))
    nan = 0.0 if nan is None else nan  # (PyTorch's optional nan: None means the default)
    return out_exact(apply(_NAN_TO_NUM, (input,), nan=nan, posinf=posinf, neginf=neginf), out, "nan_to_num",
                     "nan_to_num: dtype of out: {out} should be same as input: {expected}")


_public("nan_to_num", nan_to_num, inplace=True)


# special functions with an order argument: polygamma(n, x), mvlgamma(x, p)

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)


@_in_float32
def _digamma(x):
    """PyTorch's calc_digamma, in the input's precision: +-inf at -+0, NaN at the negative integers, the
    reflection ``digamma(1 - x) - pi / tan(pi frac(x))`` below 0 (in double), the recurrence up to 10, then the
    asymptotic series."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.float32)
    neg = x < 0
    frac = (x - jnp.trunc(x)).astype(jnp.float64)
    reflection = (math.pi / jnp.tan(math.pi * frac)).astype(x.dtype)
    y = jnp.where(neg, 1 - x, x)
    result = jnp.zeros_like(y)
    for _ in range(10):  # y > 0 here: ten steps reach 10
        low = y < 10
        result = jnp.where(low, result - 1 / y, result)
        y = jnp.where(low, y + 1, y)
    z = 1 / (y * y)
    poly = jnp.asarray(_DIGAMMA_A[0], x.dtype)
    for a in _DIGAMMA_A[1:]:
        poly = poly * z + a
    series = jnp.where(y < 1e17, z * poly, jnp.zeros((), x.dtype))
    res = jnp.where(y == 10, result + jnp.asarray(_PSI_10, x.dtype), result + jnp.log(y) - 0.5 / y - series)
    res = jnp.where(neg, res - reflection, res)
    res = jnp.where(neg & (x == jnp.trunc(x)), jnp.asarray(jnp.nan, x.dtype), res)
    return jnp.where(x == 0, jnp.copysign(jnp.asarray(jnp.inf, x.dtype), -x), res)


def _lgamma(x):
    """log|gamma(x)|; float32 (and half) in float64, rounded once: XLA's float32 lgamma is off by ulps where
    PyTorch's (the C library's) is correctly rounded; exactly 0 at 1 and 2, where XLA's is not even in float64."""
    if x.dtype in (jnp.float32, jnp.float16, jnp.bfloat16):  # half: PyTorch's float32 value, rounded again
        y = jss.gammaln(x.astype(jnp.float64)).astype(jnp.float32).astype(x.dtype)
    else:
        y = jss.gammaln(x)
    return jnp.where((x == 1) | (x == 2), jnp.zeros((), y.dtype), y)


@_in_float32
def _trigamma(x):
    """PyTorch's calc_trigamma, in the input's precision: the reflection ``-pi^2 / sin(pi x)^2`` below 0.5 (so
    +inf at 0, and at the negative integers the huge finite value that ``sin`` of a rounded ``pi x`` gives),
    six steps of the recurrence, then the asymptotic series (in double, as PyTorch's constants are), 0 at +inf."""
    pi = jnp.asarray(math.pi, x.dtype)
    reflect = x < 0.5
    s = jnp.sin((pi * x).astype(jnp.float64)).astype(x.dtype)  # the sine of the rounded product, rounded once
    result = jnp.where(reflect, -(pi * pi) / (s * s), jnp.zeros((), x.dtype))
    y = jnp.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    y64 = y.astype(jnp.float64)
    ixx = 1 / (y64 * y64)
    tail = (1 + 1 / (2 * y64) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / y64
    result = (result.astype(jnp.float64) + tail).astype(x.dtype)
    return jnp.where(reflect, -result, result)


def _polygamma_n(x, n):
    """polygamma of order ``n``: digamma and trigamma as PyTorch computes them; from order 2 on
    ``(-1)^(n+1) n! zeta(n + 1, x)``, whose Hurwitz zeta is +inf at the non-positive integers (and -inf)."""
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    pole = (x <= 0) & (x == jnp.floor(x))
    inf = jnp.asarray(jnp.inf if n % 2 else -jnp.inf, x.dtype)
    wide = jnp.float64 if x.dtype in (jnp.float32, jnp.float16, jnp.bfloat16) else x.dtype  # JAX's float32 zeta
    return jnp.where(pole, inf, jss.polygamma(n, x.astype(wide)).astype(x.dtype))       # is poor below 0


def _polygamma_fwd(x, *, n):
    return _polygamma_n(x, n)


_POLYGAMMA = defop("polygamma", _polygamma_fwd, promote="float",
                   vjp=lambda g, x, out, n: g * _polygamma_n(x, n + 1))


_POLYGAMMA_INPLACE = overload(_POLYGAMMA, "PolygammaBackward1")  # (PyTorch numbers polygamma_ after polygamma)


def polygamma(n, input, *, out=None, _op=_POLYGAMMA):
    """The n-th derivative of the digamma function."""
    require_tensor(input, "polygamma", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if input.is_complex():  # (PyTorch's kernels for orders 0 and 1 are digamma's and trigamma's)
        raise not_implemented({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), input.dtype)
    return _out(apply(_op, (input,), n=int(n)), out, "polygamma")


def _mvlgamma_fwd(x, *, p):
    j = jnp.arange(p, dtype=x.dtype) / 2
    return jnp.sum(jss.gammaln(x[..., None] - j), axis=-1) + jnp.asarray(p * (p - 1) / 4 * math.log(math.pi),
                                                                           x.dtype)


def _mvlgamma_vjp(g, x, out, p):
    """PyTorch's mvlgamma_backward: ``grad * digamma(x + arange(-(p - 1) / 2, 0.5, 0.5)).sum(-1)``, the offsets in
    the input's dtype, each op rounded to it (a pole at 0 is -inf; JAX's derivative of gammaln gave NaN)."""
    wide, r = _precision.stepper(x.dtype)
    offsets = jnp.asarray([(i - (p - 1)) * 0.5 for i in range(p)], wide(x).dtype)
    d = r(_digamma(r(wide(x)[..., None] + offsets)))
    return r(wide(g) * r(jnp.sum(d, axis=-1))).astype(x.dtype)


_MVLGAMMA = defop("mvlgamma", _mvlgamma_fwd, promote="float", vjp=_mvlgamma_vjp)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``. As in PyTorch (since it dropped its domain check),
    elements at or below ``(p - 1) / 2`` give ``log|Gamma|`` sums (inf at the poles) rather than an error."""
    require_tensor(input, "mvlgamma")
    require_int(p, "mvlgamma", 2, "p")
    if input.dtype.category == _dtype._BOOL:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.is_complex():  # (PyTorch builds its offsets with arange in the input's dtype)
        raise not_implemented("arange_cpu", input.dtype)
    return _out(apply(_MVLGAMMA, (input,), p=int(p)), out, "mvlgamma")


_public("polygamma", polygamma, method=False)
_public("mvlgamma", mvlgamma, inplace=True)
METHODS["polygamma"] = lambda self, n: polygamma(n, self)


def _polygamma_(self, n):
    return polygamma(n, self, _op=_POLYGAMMA_INPLACE)


METHODS["polygamma_"] = make_inplace(_polygamma_, "polygamma_")  # (the overwritten input is what backward reads)


def _underivable_inplace(name):
    """``asinh_``/``acosh_``/``atanh_``: PyTorch has no derivative for these in-place versions (derivatives.yaml's
    ``not_implemented("inplace version of asinh")``). The write records ``AsinhBackward1``, whose backward raises
    PyTorch's NotImplementedError; without grad they are the out-of-place op written back."""
    error = f"the derivative for 'inplace version of {name}' is not implemented."
    op = overload(OPS[name], name.capitalize() + "Backward1",
                  vjp=lambda g, x, out: NotDifferentiable(NotImplementedError(error)))

    def method(self):
        require_tensor(self, name)
        return apply(op, (self,))
    return make_inplace(method, name + "_")


for _n in ("asinh", "acosh", "atanh"):
    METHODS[_n + "_"] = METHODS["arc" + _n[1:] + "_"] = _underivable_inplace(_n)
