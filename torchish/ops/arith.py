"""Binary arithmetic: add/sub/rsub (with ``alpha``), mul, div (with ``rounding_mode``), floor_divide, remainder,
fmod, and the two-operand math functions (atan2, hypot, maximum/minimum, fmax/fmin, copysign, logaddexp, xlogy,
nextafter, ldexp, gcd/lcm, igamma/igammac, heaviside). The powers (pow, float_power, square) are in ``power.py``.

Most ops are one :func:`~torchish.ops.elementwise.binary_op` row: name, JAX forward, optional VJP (where PyTorch's
gradient differs from JAX's: ties, boundaries, masked points), how the inputs promote, and which dtypes PyTorch has
no kernel for. The public function, the Tensor method and the in-place ``name_`` method are generated from the row.

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([1, 2, 3])
    >>> (2 ** x, x / 2, x // 2)
    (tensor([2, 4, 8]), tensor([0.5000, 1.0000, 1.5000]), tensor([0, 1, 1]))
"""
from __future__ import annotations

import numbers
import warnings
from functools import partial

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .. import _dtype, _precision
from .._tensor import Tensor
from . import complex_c
from .casting import check_scalar_fits
from .elementwise import (_BOOL, _COMPLEX, _FLOAT, _INT, FLOATS_ONLY, INTS_NO_BOOL, NO_BOOL, OPS, _check_divisor, _out,
                          binary_op, common_dtype, no_derivative, not_implemented, require_tensor, scalar_or_tensor,
                          type_name)
from .registry import NotDifferentiable, OpDef, apply, defop, overload
from .unary import _in_float32
from .unary import exp2_values as _exp2
from .registry import Family as _Family

_public = _Family(globals()).public
_binary = partial(binary_op, _public)


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
    """PyTorch's ``grad * (result / self)`` (0 where self == 0): the ratio first, an exact +-1."""
    zero = jnp.zeros((), g.dtype)
    return jnp.where(a == 0, zero, g * (out / jnp.where(a == 0, 1, a))), jnp.zeros(jnp.shape(b), g.dtype)


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
_binary("atan2", jnp.arctan2, promote="float", numbers="none", vjp=_atan2_vjp, reject=frozenset({_COMPLEX}))
_binary("hypot", _in_float32(jnp.hypot), reject=FLOATS_ONLY | {_COMPLEX}, numbers="none",
        vjp=lambda g, a, b, out: (g * a / out, g * b / out))
_binary("maximum", jnp.maximum, vjp=_maxmin_vjp(lambda a, b: a < b), numbers="none", no_complex=True)
_binary("minimum", jnp.minimum, vjp=_maxmin_vjp(lambda a, b: a > b), numbers="none", no_complex=True)
_binary("fmax", jnp.fmax, vjp=_fmaxmin_vjp(lambda a, b: a >= b), numbers="none", no_complex=True)
_binary("fmin", jnp.fmin, vjp=_fmaxmin_vjp(lambda a, b: a <= b), numbers="none", no_complex=True)
_binary("fmod", jnp.fmod, reject=NO_BOOL | {_COMPLEX}, int_div=True,
        vjp=lambda g, a, b, out: (g, -g * jnp.trunc(a / b)), grad_name="FmodBackward1",
        overloads={"scalar": "FmodBackward0"})
_binary("copysign", jnp.copysign, promote="float", vjp=_copysign_vjp, reject=frozenset({_COMPLEX}),
        overloads={"scalar": "CopysignBackward1"})
# PyTorch: grad / (1 + exp(other - self)) and its mirror: an infinite operand gives the other 0, two equal
# infinities NaN (JAX's derivative gives 1 there)
_binary("logaddexp", _in_float32(jnp.logaddexp), reject=FLOATS_ONLY, numbers="none",
        vjp=lambda g, a, b, out: (g / (1 + jnp.exp(b - a)), g / (1 + jnp.exp(a - b))))
_binary("logaddexp2", _in_float32(jnp.logaddexp2), reject=FLOATS_ONLY | {_COMPLEX}, numbers="none",  # (logaddexp has complex)
        vjp=lambda g, a, b, out: (g / (1 + _exp2(b - a)), g / (1 + _exp2(a - b))))  # (XLA's exp2 is exp(x ln 2))
_binary("xlogy", jss.xlogy, promote="float", vjp=_xlogy_vjp, numbers="both", reject=frozenset({_COMPLEX}),
        overloads={"scalar_self": "XlogyBackward1", "scalar": "XlogyBackward2"})
_binary("nextafter", jnp.nextafter, reject=FLOATS_ONLY | {_COMPLEX}, numbers="none",
        vjp=lambda g, a, b, out: (jnp.where(a == b, jnp.zeros((), g.dtype), g),  # PyTorch: no grad where a == b
                                  jnp.zeros(jnp.shape(b), g.dtype)))


def _pow2_int(b):
    """``2 ** b`` in ``b``'s integer dtype as PyTorch computes it: 0 for negative exponents, wrapping on overflow."""
    bits = jnp.iinfo(b.dtype).bits
    shifted = jnp.left_shift(jnp.ones_like(b), jnp.clip(b, 0, bits - 1))
    return jnp.where((b >= 0) & (b < bits), shifted, jnp.zeros_like(b))


# ldexp(input, Tensor[int] other): the exponent takes no part in promotion (the kernel casts the input only) and
# PyTorch's gradient, grad * 2^other, computes 2^other in the exponent's integer dtype (0 for negative exponents)
def _ldexp_int(a, b):
    """PyTorch's kernel: ``std::ldexp(double(a), b)`` rounded to ``a``'s dtype, exact (XLA's ``exp2`` is not: in
    bfloat16 ``exp2(5)`` is 31.625). The exponent is clipped where every result is already 0 or infinite."""
    if jnp.issubdtype(a.dtype, jnp.complexfloating):
        return a * _exp2(b.astype(jnp.finfo(a.dtype).dtype))
    if a.dtype == jnp.float64:
        return jnp.ldexp(a, b.astype(jnp.int32))
    n = jnp.clip(b.astype(jnp.int32), -400, 400)
    return (a.astype(jnp.float64) * jnp.ldexp(jnp.ones_like(n, jnp.float64), n)).astype(a.dtype)


_LDEXP_INT = OpDef("ldexp", _ldexp_int, promote="float", promote_args=(0,),
                   vjp=lambda g, a, b, out: (g * _pow2_int(b).astype(g.dtype), None), grad_name="LdexpBackward0")


def _promote_dims(a, b):
    """PyTorch's result type of two arrays as tensors: within one category a 0-d operand yields to a dimensioned one."""
    same_cat = jnp.issubdtype(a.dtype, jnp.complexfloating) == jnp.issubdtype(b.dtype, jnp.complexfloating) and \
        jnp.issubdtype(a.dtype, jnp.inexact) and jnp.issubdtype(b.dtype, jnp.inexact)
    if same_cat and (a.ndim == 0) != (b.ndim == 0):
        return a.dtype if b.ndim == 0 else b.dtype
    if jnp.issubdtype(a.dtype, jnp.complexfloating) and not jnp.issubdtype(b.dtype, jnp.complexfloating) and \
            a.ndim == 0 and b.ndim:  # a 0-d complex with a dimensioned float: the complex type of the float's size
        return jnp.promote_types(b.dtype, jnp.complex64)
    return jnp.promote_types(a.dtype, b.dtype)


def _rounded(dt, f, *xs):
    """``f`` of ``xs`` computed in ``dt``'s opmath type (float32 for the half types) and stored in ``dt``, as one
    PyTorch kernel. The rounding is fenced (as ``_precision.stepper``'s): XLA would otherwise fold the round trip
    of a half result that the next op widens again."""
    wide = jnp.promote_types(dt, jnp.float32)
    return jax.lax.optimization_barrier(f(*(x.astype(wide) for x in xs)).astype(dt))


def _ldexp_pow2(a, b):
    """PyTorch's composite for a floating exponent, ``mul(input, _pow2(input, other))``: ``2 ** other`` is
    ``pow(2.0, other)`` (the exponent's dtype) for an integer or float32 input, else ``full((), 2.0, input's
    dtype).pow(other)``; the power is rounded to its dtype before the product."""
    if a.dtype == jnp.float32 or not jnp.issubdtype(a.dtype, jnp.inexact):
        e_dt = b.dtype
    else:
        e_dt = _promote_dims(jnp.zeros((), a.dtype), b)
    e = _rounded(e_dt, _exp2, b)
    return _rounded(_promote_dims(a, e), jnp.multiply, a, e)


_LN2 = float(np.log(2.0))


def _ldexp_pow2_vjp(g, a, b, out):
    """LdexpBackward0 as PyTorch's derivative formulas compute it: ``grad * other.exp2()`` for the input and
    ``grad * result * M_LN2`` for the exponent, each op rounded to its result dtype; each gradient is then summed
    to its operand's shape in that dtype and cast to the operand's (:func:`opnode._fit`, PyTorch's
    validate_outputs): a float32 exponent of a half input gets a half-rounded gradient."""
    p = _rounded(b.dtype, _exp2, b)
    grad_a = _rounded(_promote_dims(g, p), jnp.multiply, g, p)
    grad_b = _rounded(out.dtype, lambda x: x * _LN2, _rounded(out.dtype, jnp.multiply, g, out))
    return grad_a, grad_b


_LDEXP_POW2 = OpDef("ldexp", _ldexp_pow2, vjp=_ldexp_pow2_vjp, vjp_uncast=True, grad_name="LdexpBackward0")


# an integer or bool input with an integer exponent: PyTorch's composite, ``mul(input, pow(2.0, other))``, the
# power in the default float dtype (the input promoted to it here): 2 ** huge is inf (0 * inf is nan), no int cast
_LDEXP_INT_INPUT = OpDef("ldexp", lambda a, b: a * _exp2(b.astype(a.dtype)), promote="float", promote_args=(0,),
                         grad_name="LdexpBackward0")


def _ldexp_choose(op, a, b):
    if isinstance(b, Tensor) and b.dtype.category <= _INT:
        if b.dtype.category == _BOOL and a.dtype.category >= _FLOAT:  # (PyTorch's kernel for a float input)
            raise not_implemented("ldexp_cpu_exp", b.dtype)
        return _LDEXP_INT if a.dtype.category >= _FLOAT else _LDEXP_INT_INPUT
    if isinstance(b, Tensor) and b.dtype.category == _FLOAT:
        return _LDEXP_POW2
    return op


_binary("ldexp", lambda a, b: a * _exp2(b), promote="float", numbers="none", choose=_ldexp_choose)


def _gcd(a, b):
    """PyTorch's calc_gcd: Euclid's algorithm from ``abs`` of both, with C's truncated remainder. ``abs`` of the
    type's minimum wraps to itself (gcd(int32 -2**31, 2**31 - 1) is -1); jnp.gcd looped forever on it."""
    a, b = jnp.broadcast_arrays(jnp.abs(a), jnp.abs(b))

    def step(ab):
        a, b = ab
        nz = a != 0
        return jnp.where(nz, jax.lax.rem(b, jnp.where(nz, a, 1)), a), jnp.where(nz, a, b)
    return jax.lax.while_loop(lambda ab: jnp.any(ab[0] != 0), step, (a, b))[1]


def _lcm(a, b):
    """PyTorch's calc_lcm: ``abs(a / g * b)`` (0 where the gcd is 0), computed in C's int for 8- and 16-bit types
    (C promotes them) and wrapped back to the type."""
    a, b = jnp.broadcast_arrays(a, b)  # (lax.div takes operands of one shape)
    g = _gcd(a, b)
    wide = jnp.int32 if a.dtype.itemsize < 4 else a.dtype
    q = jax.lax.div(a.astype(wide), jnp.where(g == 0, 1, g).astype(wide)) * b.astype(wide)
    return jnp.where(g == 0, 0, jnp.abs(q)).astype(a.dtype)


_binary("gcd", _gcd, reject=INTS_NO_BOOL, differentiable=False, numbers="none")
_binary("lcm", _lcm, reject=INTS_NO_BOOL, differentiable=False, numbers="none")


def _igamma_vjp(name, sign):
    """PyTorch differentiates the regularized incomplete gamma functions in ``x`` only: asking for ``a``'s gradient
    raises its NotImplementedError."""
    def vjp(g, a, x, out):
        d = jnp.exp((a - 1) * jnp.log(x) - x - jss.gammaln(a))
        return (NotDifferentiable(NotImplementedError(f"the derivative for '{name}: input' is not implemented.")),
                sign * g * d)
    return vjp


_binary("igamma", jss.gammainc, reject=FLOATS_ONLY | {_COMPLEX}, numbers="none", vjp=_igamma_vjp("igamma", 1))
_binary("igammac", jss.gammaincc, reject=FLOATS_ONLY | {_COMPLEX}, numbers="none", vjp=_igamma_vjp("igammac", -1))
_public("multiply", globals()["mul"], inplace=True)
_public("arctan2", globals()["atan2"], inplace=True)

_REMAINDER = OPS["remainder"] = defop("remainder", _remainder_fwd, promote="same", grad_name="RemainderBackward1",
                                      vjp=lambda g, a, b, out: (g, -g * _floor_div_float(a, b)))
_REMAINDER_SCALAR = overload(_REMAINDER, "RemainderBackward0")
# remainder.Scalar_Tensor (a number first) has no derivative formula: PyTorch records a NotImplemented node
_REMAINDER_S = overload(_REMAINDER, "NotImplemented", vjp=no_derivative("remainder"))


def _division_operands(input, other, kernel, name):
    """The operands of an integer-capable division (remainder, floor_divide): PyTorch's errors for bool and
    complex, and for an integer divisor holding a zero."""
    a, b = scalar_or_tensor(input, name, 1, "input"), scalar_or_tensor(other, name)
    dt = common_dtype((a, b))
    if dt is _dtype.bool or dt.category == _dtype._COMPLEX:
        raise not_implemented(kernel, dt)
    if dt.category == _INT:
        _check_divisor(b)
    return a, b


def remainder(input, other, *, out=None):
    """Python's modulus: the result has the sign of ``other``."""
    a, b = _division_operands(input, other, "remainder_cpu", "remainder")
    op = _REMAINDER_S if not isinstance(a, Tensor) else _REMAINDER if isinstance(b, Tensor) else _REMAINDER_SCALAR
    return _out(apply(op, (a, b)), out, "remainder")


_public("remainder", remainder, inplace=True)

def _heaviside_fwd(x, values):
    """PyTorch's ``x == 0 ? values : x > 0`` in ``x``'s dtype (``jnp.heaviside`` would turn ints into floats)."""
    return jnp.where(x == 0, values, (x > 0).astype(x.dtype))


_HEAVISIDE = defop("heaviside", _heaviside_fwd, vjp=no_derivative("heaviside"), grad_name="NotImplemented")


def heaviside(input, values, *, out=None):
    require_tensor(input, "heaviside")
    require_tensor(values, "heaviside", 2, "values")
    if input.dtype is not values.dtype or isinstance(out, Tensor) and out.dtype is not input.dtype:
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


def _alpha(a, b, alpha, name):
    """``None`` for the common alpha == 1, else the validated Python number."""
    if type(alpha) is int and alpha == 1:
        return None
    if not isinstance(alpha, (Tensor, numbers.Number, np.bool_)) or isinstance(alpha, Tensor) and (
            alpha.ndim or alpha.requires_grad):  # (np.bool_ is no numbers.Number; PyTorch takes it; a Tensor: no dims)
        raise TypeError(f"{name}(): argument 'alpha' must be Number, not {type_name(alpha)}")
    alpha = scalar_or_tensor(alpha)
    dt = common_dtype((a, b))
    _check_alpha(dt, alpha)
    if not isinstance(alpha, Tensor):  # converted to the result type, checked; sub and rsub add -alpha
        check_scalar_fits(-alpha if name in ("sub", "rsub") and not isinstance(alpha, bool) else alpha, dt)
    return bool(alpha) if dt is _dtype.bool else alpha


_NO_OTHER = object()  # ``other`` not given by keyword


def _positional_alpha(name, args, other, alpha, deprecated=True):
    """``(other, alpha)`` from the arguments after ``input`` (``args`` positional, ``other`` by keyword or
    ``_NO_OTHER``) of the overloads that take alpha positionally: ``add(input, Number other, Number alpha)`` and the
    deprecated ``add(input, Number alpha, Tensor other)`` (``deprecated``: add and sub only) that old optimizer code
    uses (``p.data.add_(-lr, grad)``, or ``p.data.add_(-lr, other=grad)`` where the Number binds to alpha)."""
    if other is not _NO_OTHER:
        if not args:
            return other, alpha
        if (len(args) == 1 and deprecated and isinstance(args[0], numbers.Number) and type(alpha) is int
                and alpha == 1 and isinstance(other, (Tensor, numbers.Number))):
            _warn_deprecated_alpha(name)
            return other, args[0]
        got = ", ".join(type_name(v) for v in args)
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}, other=Tensor), but "
                        f"expected (Tensor other, *, Number alpha) or (Number alpha, Tensor other)")
    if not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "other"')
    other, rest = args[0], args[1:]
    if not rest:
        return other, alpha
    if len(rest) == 1 and isinstance(other, numbers.Number) and type(alpha) is int and alpha == 1:
        if isinstance(rest[0], numbers.Number):
            return other, rest[0]
        if isinstance(rest[0], Tensor) and deprecated:
            _warn_deprecated_alpha(name)
            return rest[0], other
    got = ", ".join(type_name(v) for v in (other, *rest))
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                    f"(Tensor other, *, Number alpha) or (Number other, Number alpha)")


def _warn_deprecated_alpha(name):
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor other)\nConsider using one "
                  f"of the following signatures instead:\n\t{name}(Tensor other, *, Number alpha = 1)", UserWarning,
                  stacklevel=4)


def _scaled(b, alpha):
    return b if alpha is None else b * alpha


def _plus_scaled(a, b, alpha, negate=False):
    """PyTorch's add kernel, ``a + alpha * b`` (sub and rsub add ``-alpha``). For complex results alpha is a complex
    number multiplied out in full, ``(ar*br - ai*bi) + (ar*bi + ai*br)j``, so a real infinity in ``b`` meets alpha's
    zero imaginary part: ``tensor([1+2j]) + inf`` is ``inf+nanj``, as in PyTorch."""
    if not jnp.iscomplexobj(b):
        if alpha is not None and jnp.result_type(a, b) in _precision.LOW:  # float16/bfloat16: a +- alpha * b in
            # float32 (alpha a float), rounded once, as PyTorch's kernel; not alpha rounded to the half type first
            dt = jnp.result_type(a, b)
            w = jnp.float32
            return _plus_scaled(jnp.asarray(a).astype(w), jnp.asarray(b).astype(w), jnp.asarray(alpha, w), negate).astype(dt)
        return a - _scaled(b, alpha) if negate else a + _scaled(b, alpha)
    alpha = 1 if alpha is None else alpha
    alpha = jnp.asarray(-alpha if negate else alpha, b.dtype)
    ar, ai, br, bi = jnp.real(alpha), jnp.imag(alpha), jnp.real(b), jnp.imag(b)
    return a + jax.lax.complex(ar * br - ai * bi, ar * bi + ai * br)


def _operand_dtype(x):
    return x.dtype if isinstance(x, Tensor) else _dtype.scalar_dtype(x)


def _is_bool(x):
    return x._v.dtype == np.bool_ if isinstance(x, Tensor) else isinstance(x, bool)


def _check_sub(a, b):
    da, db = _operand_dtype(a), _operand_dtype(b)
    if da is _dtype.bool and db is _dtype.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if da is _dtype.bool or db is _dtype.bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


_ADD = OPS["add"] = defop("add", lambda a, b, alpha: _plus_scaled(a, b, alpha), promote="same", promote_args=(0, 1),
                          linear=True, grad_name="AddBackward0")
_SUB = OPS["sub"] = defop("sub", lambda a, b, alpha: _plus_scaled(a, b, alpha, negate=True), promote="same", promote_args=(0, 1),
                          linear=True, grad_name="SubBackward0")
_RSUB_T = defop("rsub", lambda a, b, alpha: _plus_scaled(b, a, alpha, negate=True), promote="same", promote_args=(0, 1),
                linear=True, grad_name="RsubBackward0")
_RSUB_S = defop("rsub_scalar", lambda a, b, alpha: _plus_scaled(b, a, alpha, negate=True), promote="same", promote_args=(0, 1),
                linear=True, grad_name="RsubBackward1")


def add(input, *args, other=_NO_OTHER, alpha=1, out=None):
    other, alpha = _positional_alpha("add", args, other, alpha)
    a = input if isinstance(input, Tensor) else scalar_or_tensor(input, "add", 1, "input")
    b = other if isinstance(other, Tensor) else scalar_or_tensor(other, "add")
    return _out(apply(_ADD, (a, b, _alpha(a, b, alpha, "add"))), out, "add")


add.fast = (_ADD, (None,))  # its operator's arguments with a Tensor or Python int/float operand (alpha=1: None)


def sub(input, *args, other=_NO_OTHER, alpha=1, out=None):
    other, alpha = _positional_alpha("sub", args, other, alpha)
    a = input if isinstance(input, Tensor) else scalar_or_tensor(input, "sub", 1, "input")
    b = other if isinstance(other, Tensor) else scalar_or_tensor(other, "sub")
    if _is_bool(a) or _is_bool(b):
        _check_sub(a, b)
    return _out(apply(_SUB, (a, b, _alpha(a, b, alpha, "sub"))), out, "sub")


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    a, b = scalar_or_tensor(input, "rsub", 1, "input"), scalar_or_tensor(other, "rsub")
    if _is_bool(a) or _is_bool(b):
        _check_sub(a, b)
    op = _RSUB_T if isinstance(b, Tensor) else _RSUB_S
    return apply(op, (a, b, _alpha(a, b, alpha, "rsub")))


_public("add", add, inplace=True)
_public("sub", sub, inplace=True)


def subtract(input, *args, other=_NO_OTHER, alpha=1, out=None):
    other, alpha = _positional_alpha("subtract", args, other, alpha, deprecated=False)
    return sub(input, other, alpha=alpha, out=out)


_public("subtract", subtract, inplace=True)
_public("rsub", rsub, method=False)


# division

def _zeros_vjp(g, *inputs, out, **static):
    return tuple(jnp.zeros(jnp.shape(x), g.dtype) for x in inputs)


def _true_divide(a, b):
    """One IEEE division per element, as PyTorch divides, also by a broadcast divisor (``x / 3.0``, ``x / 0-d``,
    ``x / x.sum(1, keepdim=True)``), which XLA would turn into a multiplication by its reciprocal
    (:func:`._precision.div`): an ulp off in about a third of the elements, which ``trunc``, ``floor`` or ``long()``
    afterwards turn into whole units."""
    if jnp.iscomplexobj(a) or jnp.iscomplexobj(b):  # c10's division: NaN parts stay NaN (XLA recovers infinities)
        return complex_c.div_c10(a, b)
    return _precision.div(a, b)  # (also a divisor of a's shape: in a compiled program it may be an expanded value,
    # such as F.normalize's expand_as(norm), which XLA would divide by through its reciprocal all the same)


def _div_mode_fwd(a, b, *, rounding_mode):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        a, b = jnp.broadcast_arrays(a, jnp.asarray(b, a.dtype))  # lax.div takes neither ranks nor dtypes apart
        return jax.lax.div(a, b) if rounding_mode == "trunc" else jnp.floor_divide(a, b)
    if rounding_mode == "trunc":
        return jnp.trunc(_true_divide(a, b))
    return _floor_div_float(a, b)


def _div_vjp(g, a, b, out):
    """PyTorch's DivBackward0: ``grad / other`` and ``-grad * ((self / other) / other)``, each a true division
    (JAX's ``-grad * self * other**-2`` rounded differently in half of the float32 gradients, up to 4 ulps)."""
    conj = jnp.conj if jnp.iscomplexobj(g) else (lambda v: v)
    quotient = jax.lax.optimization_barrier(_true_divide(a, b))  # (XLA rewrites (a / b) / b into a / (b * b))
    ga, gb = _true_divide(g, conj(b)), -g * conj(_true_divide(quotient, b))
    real = lambda grad, x: grad.real if jnp.iscomplexobj(grad) and not jnp.iscomplexobj(x) else grad  # noqa: E731
    return real(ga, a), real(gb, b)


_DIV = defop("div", _true_divide, vjp=_div_vjp, promote="float", grad_name="DivBackward0")
_DIV_MODE = defop("div_mode", _div_mode_fwd, promote="same", vjp=_zeros_vjp,
                  grad_name="DivBackward2")


def div(input, other, *, rounding_mode=None, out=None):
    a, b = scalar_or_tensor(input, "div", 1, "input"), scalar_or_tensor(other, "div")
    if isinstance(a, Tensor) and a.dtype is _dtype.bool:
        # a float result: cast in a kernel of its own, as fused XLA rewrites convert(bool) / c as a select (0 / 0
        # would give 0, not NaN)
        dt = common_dtype((a, b))
        dt = dt if dt.category >= _dtype._FLOAT else _dtype.get_default_dtype() if rounding_mode is None else None
        if dt is not None:
            from .convert import to_dtype
            a = to_dtype(a, dt)
    if rounding_mode is None:
        return _out(apply(_DIV, (a, b)), out, "div")
    if not isinstance(rounding_mode, str):  # (no overload of PyTorch's parser takes it: ``str? rounding_mode``)
        raise TypeError(f"div(): argument 'rounding_mode' must be str, not {type_name(rounding_mode)}")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    dt = common_dtype((a, b))
    if dt.category in (_BOOL, _dtype._COMPLEX):  # PyTorch has no rounding division of bools or complex numbers
        raise not_implemented("div_floor_cpu" if rounding_mode == "floor" else "div_trunc_cpu", dt)
    if dt.category == _INT:
        _check_divisor(b)
    return _out(apply(_DIV_MODE, (a, b), rounding_mode=rounding_mode), out, "div")


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


_FLOOR_DIVIDE = defop("floor_divide", _div_mode_fwd, promote="same", vjp=no_derivative("floor_divide"),
                      grad_name="NotImplemented")


def floor_divide(input, other, *, out=None):
    a, b = _division_operands(input, other, "div_floor_cpu", "floor_divide")
    return _out(apply(_FLOOR_DIVIDE, (a, b), rounding_mode="floor"), out, "floor_divide")


for _n in ("div", "divide", "true_divide", "floor_divide"):
    _public(_n, globals()["div" if _n == "divide" else _n], inplace=True)
