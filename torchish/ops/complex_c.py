"""Complex arithmetic as PyTorch's CPU kernels compute it, where XLA's formulas give other special values.

PyTorch's complex ``pow`` calls ``std::pow`` (glibc's ``cpow``: ``cexp(y * clog(x))`` with C99 Annex G
multiplication), and its complex division is c10's (NumPy's scaled formula). XLA agrees on ordinary values but
not on zeros, infinities and NaNs: ``0j ** (1+1j)`` is ``-0j`` in PyTorch, NaN in ``jnp.power``, and
``1 / (-inf - inf j)`` is NaN in PyTorch, zero in XLA.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


def _zero_if_nan(v):
    """Annex G's recovery step: a NaN operand part counts as a zero of its sign."""
    return jnp.where(jnp.isnan(v), jnp.copysign(jnp.zeros_like(v), v), v)


def _unit_if_inf(v):
    """Annex G's recovery step: an infinite part becomes +-1, a finite one +-0."""
    return jnp.copysign(jnp.where(jnp.isinf(v), jnp.ones_like(v), jnp.zeros_like(v)), v)


def mul_c99(a, b, c, d):
    """``(a + bi) * (c + di)`` as C's ``__mulsc3``: a NaN product of an infinite operand is recovered as infinite."""
    re, im = a * c - b * d, a * d + b * c
    inf_ab, inf_cd = jnp.isinf(a) | jnp.isinf(b), jnp.isinf(c) | jnp.isinf(d)
    a2, b2 = jnp.where(inf_ab, _unit_if_inf(a), a), jnp.where(inf_ab, _unit_if_inf(b), b)
    c2, d2 = jnp.where(inf_ab, _zero_if_nan(c), c), jnp.where(inf_ab, _zero_if_nan(d), d)
    c2, d2 = jnp.where(inf_cd, _unit_if_inf(c2), c2), jnp.where(inf_cd, _unit_if_inf(d2), d2)
    a2, b2 = jnp.where(inf_cd, _zero_if_nan(a2), a2), jnp.where(inf_cd, _zero_if_nan(b2), b2)
    recover = jnp.isnan(re) & jnp.isnan(im) & (inf_ab | inf_cd)
    return (jnp.where(recover, jnp.inf * (a2 * c2 - b2 * d2), re),
            jnp.where(recover, jnp.inf * (a2 * d2 + b2 * c2), im))


def _exp_c99(x, y):
    """glibc's ``cexp(x + yi)`` with C99 Annex G's special values."""
    nan, zero = jnp.full_like(x, jnp.nan), jnp.zeros_like(x)
    finite_y = jnp.isfinite(y)
    # x finite: exp(x) * (cos y, sin y), y == 0 kept; y infinite or NaN gives NaN
    mag = jnp.exp(jnp.where(jnp.isfinite(x), x, zero))
    re_x = jnp.where(finite_y, jnp.where(y == 0, mag, mag * jnp.cos(y)), nan)
    im_x = jnp.where(finite_y, jnp.where(y == 0, y, mag * jnp.sin(y)), nan)
    # x = +-inf, y finite: exp(x) * (cos y, sin y) without 0 * inf; y == 0 kept
    big = jnp.where(jnp.signbit(x), zero, jnp.full_like(x, jnp.inf))
    re_inf = jnp.where(finite_y, jnp.where(y == 0, big, jnp.copysign(big, jnp.cos(y))), big)
    # x = +inf, y not finite: (inf, nan); x = -inf: (0, +-0) -- a NaN made by 0 * inf has its sign bit set
    im_inf_y = jnp.where(jnp.signbit(x), jnp.where(jnp.isnan(y), -zero, jnp.copysign(zero, y)), nan)
    im_inf = jnp.where(finite_y, jnp.where(y == 0, y, jnp.copysign(big, jnp.sin(y))), im_inf_y)
    # x NaN: (nan, y) for y == 0, else NaN
    re = jnp.where(jnp.isfinite(x), re_x, jnp.where(jnp.isinf(x), re_inf, nan))
    im = jnp.where(jnp.isfinite(x), im_x, jnp.where(jnp.isinf(x), im_inf, jnp.where(y == 0, y, nan)))
    return re, im


def _log_c99(z):
    """glibc's ``clog(z)``: ``log|z| + i * atan2(imag, real)``, an infinite part giving ``log|z| = inf`` even with a
    NaN one, and ``clog(+-0) = -inf + i * (+-0 or +-pi)``."""
    zr, zi = jnp.real(z), jnp.imag(z)
    mag = jnp.where(jnp.isinf(zr) | jnp.isinf(zi), jnp.full_like(zr, jnp.inf), jnp.log(jnp.hypot(zr, zi)))
    return mag, jnp.arctan2(zi, zr)


def exp_c99(z):
    """``exp(z)`` as ``std::exp`` (glibc's ``cexp``): ``exp(-inf + nan j)`` is 0 and ``exp(inf + nan j)`` is
    ``inf + nan j``, where XLA's formula gives NaN. Finite values keep XLA's exp, which scales as glibc does where
    ``exp(real)`` alone overflows (``exp(710 - 1j)`` has a finite real part)."""
    x, y = jnp.real(z), jnp.imag(z)
    special = jax.lax.complex(*_exp_c99(x, y)).astype(z.dtype)
    return jnp.where(jnp.isfinite(x) & jnp.isfinite(y), jnp.exp(z), special)


def pow_c99(base, exponent):
    """``base ** exponent`` as glibc's ``cpow``, ``cexp(exponent * clog(base))`` with C99 Annex G's multiplication,
    for the operands whose special values XLA's formula does not give: a zero or non-finite base, a non-finite
    exponent."""
    re, im = _exp_c99(*mul_c99(jnp.real(exponent), jnp.imag(exponent), *_log_c99(base)))
    return jax.lax.complex(re, im).astype(base.dtype)


def div_c10(num, den):
    """``num / den`` by c10's complex division (NumPy's: scale by the larger part of ``den``), so NaN parts stay
    NaN and an infinite pair of parts in ``den`` gives NaN, where XLA's division recovers infinities and zeros
    (C99 Annex G): ``(inf + nan j) / (2 - 1j)`` is NaN in PyTorch, ``inf + inf j`` in XLA. Each branch divides by a
    value that is safe where the branch is not taken, so the derived gradient takes no NaN from it."""
    a, b, c, d = jnp.real(num), jnp.imag(num), jnp.real(den), jnp.imag(den)
    c_big = jnp.abs(c) >= jnp.abs(d)
    both_zero = (c == 0) & (d == 0)
    one = jnp.ones_like(c)
    rat_c = d / jnp.where(c_big, c, one)          # c_big: (a + bi) / (c + di) = ((a + b r) + (b - a r) i) / (c + d r)
    rat_d = c / jnp.where(c_big, one, d)          # else:                        ((a r + b) + (b r - a) i) / (d + c r)
    scl_c = 1 / jnp.where(c_big & ~both_zero, c + d * rat_c, one)
    scl_d = 1 / jnp.where(c_big, one, d + c * rat_d)
    re = jnp.where(c_big, (a + b * rat_c) * scl_c, (a * rat_d + b) * scl_d)
    im = jnp.where(c_big, (b - a * rat_c) * scl_c, (b * rat_d - a) * scl_d)
    abs_c, abs_d = jnp.where(both_zero, jnp.abs(c), one), jnp.where(both_zero, jnp.abs(d), one)
    re, im = jnp.where(both_zero, a / abs_c, re), jnp.where(both_zero, b / abs_d, im)  # a zero divisor: inf or NaN
    dt = jnp.result_type(num, den)
    return jax.lax.complex(re, im).astype(dt)


def reciprocal_c10(den):
    """``1 / den`` by c10's complex division, so an infinite pair of parts gives NaN where XLA's division gives 0."""
    return div_c10(jnp.ones((), den.dtype), den)


def sqrt_c99(z):
    """``csqrt(z)`` with C99 Annex G's values: the imaginary part takes the sign of z's (so ``sqrt(-1 - 0j)`` is
    ``-1j``, where ``jnp.sqrt`` gives ``1j``), and infinite parts give the limits, not NaN."""
    r = jnp.sqrt(z)
    zr, zi = jnp.real(z), jnp.imag(z)
    zero, inf, nan = jnp.zeros_like(zr), jnp.full_like(zr, jnp.inf), jnp.full_like(zr, jnp.nan)
    re, im = jnp.real(r), jnp.copysign(jnp.imag(r), zi)
    # x = +inf: (inf, +-0) for finite y, (inf, nan) for NaN y; x = -inf: (0, +-inf), (nan, +-inf)
    pos, neg, y_nan = jnp.isinf(zr) & (zr > 0), jnp.isinf(zr) & (zr < 0), jnp.isnan(zi)
    re = jnp.where(pos, inf, jnp.where(neg, jnp.where(y_nan, nan, zero), re))
    im = jnp.where(pos, jnp.where(y_nan, nan, jnp.copysign(zero, zi)), jnp.where(neg, jnp.copysign(inf, zi), im))
    re, im = jnp.where(jnp.isinf(zi), inf, re), jnp.where(jnp.isinf(zi), zi, im)   # y = +-inf: (inf, y) for any x
    return jax.lax.complex(re, im).astype(z.dtype)


def abs_c99(z):
    """``|z|`` as C's ``cabs`` (``hypot``): an infinite part gives +inf even where the other is NaN (XLA's complex
    abs gives NaN for ``inf + nan j``). Real inputs: ``jnp.abs``."""
    a = jnp.abs(z)
    if not jnp.iscomplexobj(z):
        return a
    return jnp.where(jnp.isinf(jnp.real(z)) | jnp.isinf(jnp.imag(z)), jnp.array(jnp.inf, a.dtype), a)
