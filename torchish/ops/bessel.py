"""The Bessel-type functions of ``torch.special``: ``bessel_j0/j1``, ``bessel_y0/y1``, ``modified_bessel_i0/i1/k0/k1``,
``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0`` and ``airy_ai``.

Every function evaluates in float64 (float32 inputs are widened, the result narrowed), each by the method that is
accurate on its range:

- ``J``: the trapezoidal rule on Bessel's integral (periodic, so exact to rounding) for ``|x| < 25``, Hankel's
  asymptotic expansion beyond.
- ``Y``: the power series with its logarithmic terms for ``x < 15``, where its cancellation costs at most ~1e-11;
  Hankel's expansion beyond, whose smallest term there is below 1e-13.
- ``K``: the power series for ``x <= 1``; above, the trapezoidal rule on ``e^x K_v(x) = int_0^inf
  exp(-x (cosh t - 1)) cosh(v t) dt``, which converges exponentially for this analytic, doubly-exponentially
  decaying integrand (64 nodes over a range chosen from ``x``).
- ``airy_ai``: its Maclaurin series on ``[-7, 1]``, ``sqrt(x / 3) K_{1/3}(2/3 x^{3/2}) / pi`` above, the
  oscillatory asymptotic expansion below.

PyTorch records no gradient for any of them (its outputs do not require grad), and neither does torchish.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .. import _dtype
from . import elementwise as _ew
from .registry import ELEMENTWISE, apply, defop

_EULER = 0.57721566490153286061
_SERIES_TERMS = 60
_J_CUT = 15.0


def _k(n):
    return np.arange(n, dtype=np.float64)


# ----------------------------------------------------------------------------------------------------------------
# J0, J1, Y0, Y1


def _j_series(x, nu):
    """``J_nu(x)`` for nu in (0, 1) by its power series, and the series part of ``Y_nu``."""
    k = _k(_SERIES_TERMS)
    q = (x[..., None] / 2) ** 2
    logfact = jss.gammaln(k + 1) + jss.gammaln(k + 1 + nu)
    sign = np.where(k % 2 == 0, 1.0, -1.0)
    terms = sign * jnp.exp(k * jnp.log(jnp.where(q > 0, q, 1.0)) - logfact)
    terms = jnp.where(q > 0, terms, jnp.where(k == 0, 1.0 / math.gamma(1 + nu), 0.0))
    j = jnp.sum(terms, -1) * (x / 2) ** nu
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, _SERIES_TERMS))])  # H_k
    if nu == 0:
        y_part = -jnp.sum(terms * harmonic, -1)  # sum (-1)^(k+1) H_k q^k / (k!)^2
    else:
        psi_sum = 2 * harmonic - 2 * _EULER + 1.0 / (k + 1)  # psi(k+1) + psi(k+2)
        y_part = jnp.sum(terms * psi_sum, -1) * (x / 2)
    return j, y_part


def _asymptotic_pq(x, nu, terms=24):
    mu = 4.0 * nu * nu
    p = jnp.zeros_like(x)
    q = jnp.zeros_like(x)
    a = jnp.ones_like(x)
    for k in range(terms):
        if k:
            a = a * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2 == 0:
            p = p + sign * a
        else:
            q = q + sign * a
    return p, q


def _hankel(x, nu):
    """(J_nu, Y_nu) for large positive x."""
    p, q = _asymptotic_pq(x, nu)
    chi = x - (nu / 2 + 0.25) * math.pi
    amp = jnp.sqrt(2.0 / (math.pi * x))
    c, s = jnp.cos(chi), jnp.sin(chi)
    return amp * (p * c - q * s), amp * (p * s + q * c)


_J_NODES = 80
_J_INTEGRAL_CUT = 25.0


def _j_integral(x, nu):
    """``J_nu(x) = (1 / 2 pi) int_0^2pi cos(nu t - x sin t) dt`` by the trapezoidal rule, exact to rounding for a
    periodic integrand once the node count exceeds ``|x|`` by a margin (the aliasing error is ``~J_80(x)``)."""
    t = 2 * np.pi * _k(_J_NODES) / _J_NODES
    return jnp.mean(jnp.cos(nu * t - x[..., None] * np.sin(t)), -1)


def _bessel_j(x, nu):
    ax = jnp.abs(x)
    small = ax < _J_INTEGRAL_CUT
    j_small = _j_integral(jnp.where(small, ax, 1.0), nu)
    j_large, _ = _hankel(jnp.where(small, _J_INTEGRAL_CUT, ax), nu)
    j = jnp.where(small, j_small, j_large)
    return jnp.where(x < 0, -j, j) if nu == 1 else j


def _bessel_y(x, nu):
    small = x < _J_CUT
    xs = jnp.where(small & (x > 0), x, 1.0)
    j, part = _j_series(xs, nu)
    if nu == 0:
        y_small = (2 / math.pi) * ((jnp.log(xs / 2) + _EULER) * j + part)
    else:
        y_small = -2 / (math.pi * xs) + (2 / math.pi) * jnp.log(xs / 2) * j - part / math.pi
    _, y_large = _hankel(jnp.where(small, _J_CUT, x), nu)
    y = jnp.where(small, y_small, y_large)
    y = jnp.where(x == 0, -jnp.inf, y)
    return jnp.where(x < 0, jnp.nan, y)


# ----------------------------------------------------------------------------------------------------------------
# K0, K1 (and their scaled forms), I0, I1


_K_NODES = 64


def _scaled_k_integral(x, nu):
    """``e^x K_nu(x)`` for ``x > 0`` (any real order) by the trapezoidal rule in ``t``."""
    top = jnp.arccosh(1.0 + 45.0 / x)  # where exp(-x (cosh t - 1)) < e^-45
    h = top / _K_NODES
    t = h[..., None] * _k(_K_NODES + 1)
    f = jnp.exp(-x[..., None] * (jnp.cosh(t) - 1.0)) * jnp.cosh(nu * t)
    w = np.where(_k(_K_NODES + 1) == 0, 0.5, 1.0)
    return h * jnp.sum(w * f, -1)


def _k_series(x, nu):
    """``K_nu(x)`` for nu in (0, 1) and ``0 < x <= 1``."""
    k = _k(_SERIES_TERMS // 2)
    q = (x[..., None] / 2) ** 2
    logfact = jss.gammaln(k + 1) + jss.gammaln(k + 1 + nu)
    terms = jnp.exp(k * jnp.log(q) - logfact)
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, _SERIES_TERMS // 2))])
    if nu == 0:
        return -(jnp.log(x / 2) + _EULER) * jss.i0(x) + jnp.sum(terms * harmonic, -1)
    psi_sum = 2 * harmonic - 2 * _EULER + 1.0 / (k + 1)
    return 1.0 / x + jnp.log(x / 2) * jss.i1(x) - (x / 4) * jnp.sum(terms * psi_sum, -1)


def _scaled_k(x, nu):
    small = x <= 1.0
    xs = jnp.where(small & (x > 0), x, 1.0)
    xl = jnp.where(small, 2.0, x)
    ke = jnp.where(small, _k_series(xs, nu) * jnp.exp(xs), _scaled_k_integral(xl, nu))
    ke = jnp.where(x == 0, jnp.inf, ke)
    ke = jnp.where(x == jnp.inf, 0.0, ke)
    return jnp.where(x < 0, jnp.nan, ke)


# ----------------------------------------------------------------------------------------------------------------
# airy_ai

_AI0 = 0.355028053887817239260  # Ai(0)
_AIP0 = 0.258819403792806798405  # -Ai'(0)


def _airy_series(x):
    f = jnp.ones_like(x)
    g = x
    a, b = f, g
    x3 = x * x * x
    for k in range(1, 40):
        a = a * x3 / ((3 * k - 1) * (3 * k))
        b = b * x3 / ((3 * k) * (3 * k + 1))
        f, g = f + a, g + b
    return _AI0 * f - _AIP0 * g


def _airy_negative(x):
    """Ai(x) for x << 0 by the oscillatory asymptotic expansion."""
    z = -x
    zeta = 2.0 / 3.0 * z * jnp.sqrt(z)
    even = jnp.zeros_like(x)
    odd = jnp.zeros_like(x)
    u = 1.0
    term = jnp.ones_like(x)
    for k in range(26):
        if k:
            u = u * (6 * k - 1) * (6 * k - 3) * (6 * k - 5) / (216.0 * k * (2 * k - 1))
            term = term / zeta
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2 == 0:
            even = even + sign * u * term
        else:
            odd = odd + sign * u * term
    phase = zeta + math.pi / 4
    return (jnp.sin(phase) * even - jnp.cos(phase) * odd) / (math.sqrt(math.pi) * jnp.sqrt(jnp.sqrt(z)))


def _airy_ai(x):
    series = (x >= -7.0) & (x <= 1.0)
    neg = x < -7.0
    xp = jnp.where(x > 1.0, x, 2.0)
    zeta = 2.0 / 3.0 * xp * jnp.sqrt(xp)
    pos = jnp.sqrt(xp / 3.0) / math.pi * jnp.exp(-zeta) * _scaled_k_integral(zeta, 1.0 / 3.0)
    res = jnp.where(series, _airy_series(jnp.where(series, x, 0.0)),
                    jnp.where(neg, _airy_negative(jnp.where(neg, x, -8.0)), pos))
    return jnp.where(jnp.isinf(x) | jnp.isnan(x), jnp.nan, res)


def _spherical_j0(x):
    small = jnp.abs(x) < 1e-4
    xs = jnp.where(small, 1.0, x)
    res = jnp.where(small, 1.0 - x * x / 6.0, jnp.sin(xs) / xs)
    return jnp.where(jnp.isinf(x), 0.0, res)


# ----------------------------------------------------------------------------------------------------------------
# the public functions


def _in_float64(fn):
    def fwd(x):
        return fn(x.astype(jnp.float64)).astype(x.dtype)
    return fwd


def _define(name, fn):
    op = defop("special_" + name, _in_float64(fn), promote="float", differentiable=False)
    ELEMENTWISE.add(op.name)

    def f(input, *, out=None):
        _ew.require_tensor(input, "special_" + name)
        if input.dtype.category > _dtype._FLOAT or input.dtype in (_dtype.float16, _dtype.bfloat16):
            raise _ew.not_implemented(f"{name}_cpu", input.dtype)
        return _ew._out(apply(op, (input,)), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.special.{name}``, elementwise (no gradient, as in PyTorch)."
    return f


bessel_j0 = _define("bessel_j0", lambda x: _bessel_j(x, 0))
bessel_j1 = _define("bessel_j1", lambda x: _bessel_j(x, 1))
bessel_y0 = _define("bessel_y0", lambda x: _bessel_y(x, 0))
bessel_y1 = _define("bessel_y1", lambda x: _bessel_y(x, 1))
modified_bessel_i0 = _define("modified_bessel_i0", jss.i0)
modified_bessel_i1 = _define("modified_bessel_i1", jss.i1)
modified_bessel_k0 = _define("modified_bessel_k0", lambda x: _scaled_k(x, 0) * jnp.exp(-x))
modified_bessel_k1 = _define("modified_bessel_k1", lambda x: _scaled_k(x, 1) * jnp.exp(-x))
scaled_modified_bessel_k0 = _define("scaled_modified_bessel_k0", lambda x: _scaled_k(x, 0))
scaled_modified_bessel_k1 = _define("scaled_modified_bessel_k1", lambda x: _scaled_k(x, 1))
spherical_bessel_j0 = _define("spherical_bessel_j0", _spherical_j0)
airy_ai = _define("airy_ai", _airy_ai)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0"]
