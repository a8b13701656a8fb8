"""Powers: ``pow`` (Tensor ** Python number, Tensor ** Tensor, number ** Tensor), ``float_power`` and ``square``.

Integer powers follow PyTorch (negative exponents give 0 unless the base is +-1, and overflow wraps); float16 and
bfloat16 powers round as PyTorch's kernels; complex powers of zero or non-finite operands follow glibc's ``cpow``.
Gradients are masked where PyTorch masks them (exponent 0; base 0 with a non-negative exponent).

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([1, 2, 3])
    >>> (x ** 2, 2 ** x, torch.float_power(x, -1))
    (tensor([1, 4, 9]), tensor([2, 4, 8]), tensor([1.0000, 0.5000, 0.3333], dtype=torch.float64))
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from .. import _dtype, _precision
from .._tensor import Tensor
from . import complex_c
from .casting import check_scalar_fits
from .elementwise import _INT, _out, not_implemented, require_tensor, scalar_or_tensor
from .registry import Family as _Family
from .registry import apply, defop
from .unary import rsqrt_values as _rsqrt

_family = _Family(globals())
_public = _family.public


def _int_pow(a, e):
    """``a ** e`` (e >= 0) by squaring over every bit of the exponent, wrapping on overflow as PyTorch's integer
    kernels do (``jnp.power`` reads only the exponent's low 6 bits: 3 ** 64 would give 1)."""
    e = jnp.broadcast_to(jnp.asarray(e, a.dtype), jnp.broadcast_shapes(jnp.shape(a), jnp.shape(e)))
    a = jnp.broadcast_to(a, e.shape)

    def step(_, carry):
        r, base, e = carry
        return jnp.where(e & 1 == 1, r * base, r), base * base, e >> 1
    return jax.lax.fori_loop(0, jnp.iinfo(a.dtype).bits, step, (jnp.ones_like(a), a, e))[0]


def _half_pow(a, b, dtype, scalar):
    """``a ** b`` of float32 values widened from ``dtype`` (float16/bfloat16), rounded as PyTorch's kernel: once,
    except for the exponents its bfloat16 kernel computes as compositions (:func:`_pow_special`)."""
    r = _precision.stepper(dtype)[1]
    if scalar and jnp.dtype(dtype) == jnp.bfloat16:
        return _pow_special(a, b, r)
    return r(jnp.power(a, b))


_SPECIAL_EXPONENTS = (2, 3, -2, 0.5, -0.5, -1)


def _pow_special(a, b, r):
    """PyTorch's CPU kernel for a Python-number exponent of a float32/float64/bfloat16 tensor: ``b`` of 2, 3 and -2
    as ``a * a``, ``(a * a) * a`` and ``1 / (a * a)``, 0.5, -0.5 and -1 as its sqrt, rsqrt (``1 / sqrt(a)``) and
    reciprocal kernels, each op stored by ``r`` (the half type's rounding); the general power otherwise. (XLA's
    power moved 26% of float32 ``a ** 3`` and 27% of ``a ** -2`` by an ulp; sqrt gives -0 for -0 and NaN for
    -inf, as PyTorch's.) One branch runs (``lax.switch`` on the 0-d exponent), so a double backward does not meet
    the NaN derivatives of the others (sqrt of a negative base, 1 / 0)."""
    branches = (lambda a: r(jnp.power(a, b)), lambda a: r(a * a), lambda a: r(r(a * a) * a),
                lambda a: r(_precision.div(1, r(a * a))), lambda a: r(jnp.sqrt(a)), lambda a: r(_rsqrt(a)),
                lambda a: r(_precision.div(1, a)))
    index = sum(jnp.where(b == e, i + 1, 0) for i, e in enumerate(_SPECIAL_EXPONENTS))
    return jax.lax.switch(index, branches, a)


def _pow_fwd(a, b, scalar=False, exp_min=None):
    """``scalar``: the exponent is a Python number (PyTorch's ``pow(Tensor, Scalar)`` kernel); ``exp_min`` is
    read by the VJP only."""
    if a.dtype == jnp.bool_:  # bool tensor ** Python bool
        return a | ~b
    if jnp.issubdtype(a.dtype, jnp.integer):
        r = _int_pow(a, jnp.maximum(b, 0))
        one = jnp.ones((), a.dtype)
        neg = jnp.where(a == 1, one, jnp.where(a == -1, jnp.where(b % 2 == 0, one, -one), jnp.zeros((), a.dtype)))
        return jnp.where(b < 0, neg, r)
    if a.dtype in _precision.LOW:
        return _half_pow(a.astype(jnp.float32), jnp.asarray(b).astype(jnp.float32), a.dtype, scalar).astype(a.dtype)
    if jnp.iscomplexobj(a):
        # a zero or non-finite operand: glibc's cpow, as PyTorch's kernel (0j ** (1+1j) is 0, 0j ** -1 is inf+nanj);
        # only a Python-number exponent of 0 gives 1 (PyTorch fills ones), a tensor one gives NaN
        b = jnp.asarray(b, a.dtype)
        c99 = (a == 0) | ~jnp.isfinite(a) | ~jnp.isfinite(b)
        if not scalar:
            return jnp.where(c99, complex_c.pow_c99(a, b), jnp.power(a, b))
        # PyTorch's Python-number exponents 1, 2, 3, 0.5, -1, -2 and -0.5 run as a copy, products, csqrt and c10's
        # division
        sq, root, inv = a * a, complex_c.sqrt_c99(a), complex_c.reciprocal_c10
        special = ((1, a), (2, sq), (3, sq * a), (0.5, root), (-1, inv(a)), (-2, inv(sq)), (-0.5, inv(root)))
        general = jnp.where(c99 & (b != 0), complex_c.pow_c99(a, b), jnp.power(a, b))
        return jnp.select([b == e for e, _ in special], [v for _, v in special], general)
    return _pow_special(a, b, lambda v: v) if scalar else jnp.power(a, b)


def _pow_vjp(g, a, b, out, scalar=False, exp_min=None):
    # PyTorch's ``exponent - 1`` is taken in a signed integer exponent's own type (``exp_min``, its minimum, wraps
    # to the maximum: an int8 exponent of -128 differentiates as -128 * x ** 127)
    bm1 = b - 1 if exp_min is None else jnp.where(b == exp_min, -exp_min - 1, b - 1).astype(b.dtype)
    if jnp.iscomplexobj(out):  # PyTorch's formulas read the conjugated derivatives, masked as its real ones
        zero = jnp.zeros((), g.dtype)
        ga = jnp.where(b == 0, zero, g * jnp.conj(b * _pow_fwd(a, bm1, scalar)))
        b_real_nonneg = (jnp.imag(b) == 0) & (jnp.real(b) >= 0)
        return ga, jnp.where((a == 0) & b_real_nonneg, zero, g * jnp.conj(out * jnp.log(a)))
    if g.dtype in _precision.LOW:  # PyTorch's formulas one op at a time, each result stored in the half type
        wide, r = _precision.stepper(g.dtype)
        aw, bw, gw = wide(a), wide(jnp.asarray(b)), wide(g)
        # (a tensor exponent's ``exponent - 1`` is a tensor of the half type too)
        ga = r(gw * r(bw * _half_pow(aw, bw - 1 if scalar else r(wide(bm1)), g.dtype, scalar))).astype(g.dtype)
        gb = r(gw * r(wide(out) * r(jnp.log(aw)))).astype(g.dtype)  # grad * (result * self.log())
    else:
        # grad * (exponent * self.pow(exponent - 1)): a Python-number exponent's pow is its kernel's (above)
        ga, gb = g * (b * _pow_fwd(a, bm1, scalar)), g * out * jnp.log(a)
    zero = jnp.zeros((), g.dtype)
    ga = jnp.where(b == 0, zero, ga)
    gb = jnp.where((a == 0) & (b >= 0), zero, gb)
    return ga, gb


_POW_SCALAR = defop("pow", partial(_pow_fwd, scalar=True), vjp=partial(_pow_vjp, scalar=True), promote="same",
                    grad_name="PowBackward0")
_POW_TENSOR = defop("pow_tensor", _pow_fwd, vjp=_pow_vjp, promote="same", grad_name="PowBackward1")
_POW_BASE = defop("pow_scalar_base", _pow_fwd, vjp=_pow_vjp, promote="same", grad_name="PowBackward2")


def pow(input, exponent, *, out=None):
    a, b = scalar_or_tensor(input, "pow", 1, "input"), scalar_or_tensor(exponent, "pow", 2, "exponent")
    if not isinstance(b, Tensor):
        if type(b) is int and isinstance(a, Tensor) and a.dtype.category <= _INT:
            # an integer tensor's kernel reads the exponent as int64_t, then in the tensor's own type, both checked
            check_scalar_fits(b, _dtype.int64)
            if b < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            if a.dtype is not _dtype.bool:
                check_scalar_fits(b, a.dtype)
        op = _POW_SCALAR
    else:
        op = _POW_TENSOR if isinstance(a, Tensor) else _POW_BASE
    if op is _POW_TENSOR and a.dtype is _dtype.bool and b.dtype is _dtype.bool:
        raise not_implemented("pow", a.dtype)
    if op is _POW_TENSOR and b.dtype.category == _INT and b.dtype.is_signed and a.dtype.category > _INT:
        return _out(apply(op, (a, b), exp_min=int(jnp.iinfo(b.dtype.np).min)), out, "pow")
    return _out(apply(op, (a, b)), out, "pow")


def float_power(input, exponent, *, out=None):
    """``pow`` computed in double precision (complex128 when either operand is complex)."""
    from .convert import to_dtype
    a = scalar_or_tensor(input, "float_power", 1, "input")
    b = scalar_or_tensor(exponent, "float_power", 2, "exponent")
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
_family.methods["float_power_"] = _float_power_


def square(input, *, out=None):
    """``input ** 2`` (bool squares to int64, as PyTorch's pow does)."""
    require_tensor(input, "square")
    return pow(input, 2, out=out)


_public("square", square, inplace=True)
