"""PyTorch's float32 Box-Muller on x86 (``normal_fill_16_AVX2``), bit for bit.

For a contiguous float32 tensor of 16 or more elements PyTorch's CPU ``normal_`` turns each block of 16 uniforms
into normals with ``log256_ps`` and ``sincos256_ps`` of ``ATen/native/cpu/avx_mathfun.h``: Cephes' single-precision
polynomials (not libm), compiled by GCC with FMA contraction, so some of their multiply-adds round once and the
others twice. The functions below evaluate the same polynomials with the same roundings: a multiply-add that GCC
fuses is ``_fma`` (computed in float64, rounded once to float32), every other product is ``_mul`` (float64, rounded
to float32: XLA cannot contract it into the add that follows, as it would a float32 multiply). Checked against
torch 2.13's ``randn`` on 16 million values (tests/test_random_streams.py); it also runs faster than XLA's float32
``cos``/``sin``. (The float64 sum of ``_fma`` is exact whenever its operands' exponents are within a few bits, and
could otherwise round twice; no such case was met in the check.)
"""
from __future__ import annotations

import numpy as np

from ._xp import JNP

_F32, _F64, _I32 = np.float32, np.float64, np.int32


def _c(v):
    return np.float32(v)


def _mul(a, b, xp):
    """``a * b`` rounded to float32, not contractible with a following add."""
    return (xp.asarray(a, _F64) * xp.asarray(b, _F64)).astype(_F32)


def _fma(a, b, c, xp):
    """``a * b + c`` with one rounding to float32 (the product is exact in float64)."""
    return (xp.asarray(a, _F64) * xp.asarray(b, _F64) + xp.asarray(c, _F64)).astype(_F32)


def _bits(x, xp):
    return xp.bitcast(x, _I32)


def _float(i, xp):
    return xp.bitcast(i, _F32)


_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
          -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)


def log256_ps(x, xp=JNP):
    """Natural log (Cephes logf): exponent and mantissa in [sqrt(1/2), sqrt(2)), a degree-9 polynomial."""
    invalid = x <= 0
    x = xp.maximum(x, _c(1.17549435e-38))  # (denormals cut off)
    exponent = xp.shift_right_logical(_bits(x, xp), _I32(23))
    x = _float((_bits(x, xp) & _I32(~0x7F800000)) | _I32(0x3F000000), xp)  # mantissa in [0.5, 1)
    e = (exponent - _I32(0x7F)).astype(_F32) + _c(1.0)
    small = x < _c(0.707106781186547524)
    tmp = xp.where(small, x, _c(0.0))
    x = x - _c(1.0)
    e = e - xp.where(small, _c(1.0), _c(0.0))
    x = x + tmp
    z = _mul(x, x, xp)
    y = _c(_LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma(y, x, _c(p), xp)
    y = _mul(y, x, xp)
    y = _fma(y, z, _mul(e, _c(-2.12194440e-4), xp), xp)
    y = _fma(-z, _c(0.5), y, xp)
    x = x + y
    x = _fma(e, _c(0.693359375), x, xp)
    return xp.where(invalid, _c(np.nan), x)


def sincos256_ps(x, xp=JNP):
    """``(sin x, cos x)`` (Cephes sinf/cosf): reduction by pi/4 in three parts, then one of two polynomials."""
    sign_sin = _bits(x, xp) & _I32(-0x80000000)
    x = xp.abs(x)
    j = _mul(x, _c(1.27323954473516), xp).astype(_I32)  # x * 4/pi, truncated
    j = (j + _I32(1)) & _I32(~1)
    y = j.astype(_F32)
    swap_sign = (j & _I32(4)) << _I32(29)
    poly = (j & _I32(2)) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma(y, _c(dp), x, xp)
    sign_cos = (~(j - _I32(2)) & _I32(4)) << _I32(29)
    sign_sin = sign_sin ^ swap_sign
    z = _mul(x, x, xp)
    yc = _fma(_c(2.443315711809948e-5), z, _c(-1.388731625493765e-3), xp)
    yc = _fma(yc, z, _c(4.166664568298827e-2), xp)
    yc = _fma(_mul(yc, z, xp), z, -_mul(z, _c(0.5), xp), xp) + _c(1.0)
    ys = _fma(_c(-1.9515295891e-4), z, _c(8.3321608736e-3), xp)
    ys = _fma(ys, z, _c(-1.6666654611e-1), xp)
    ys = _fma(_mul(ys, z, xp), x, x, xp)
    sin_part, cos_part = xp.where(poly, ys, _c(0.0)), xp.where(poly, _c(0.0), yc)  # (the kernel's mask arithmetic)
    sin = cos_part + sin_part
    cos = (yc - cos_part) + (ys - sin_part)
    return _float(_bits(sin, xp) ^ sign_sin, xp), _float(_bits(cos, xp) ^ sign_cos, xp)


def box_muller_16(d, xp=JNP):
    """``normal_fill_16_AVX2`` on every block of 16 float32 uniforms (length a multiple of 16): u1 = 1 - d[j],
    u2 = d[j + 8] give ``r cos`` at j and ``r sin`` at j + 8 (unscaled)."""
    b = d.reshape(-1, 2, 8)
    radius = xp.sqrt(_mul(_c(-2.0), log256_ps(_c(1.0) - b[:, 0], xp), xp))
    sin, cos = sincos256_ps(_mul(_c(2 * np.pi), b[:, 1], xp), xp)
    return xp.stack([_mul(radius, cos, xp), _mul(radius, sin, xp)], axis=1).reshape(-1)
