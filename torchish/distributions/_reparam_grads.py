"""PyTorch's reparameterised gradient of Dirichlet samples (``torch._dirichlet_grad``, ``dirichlet_grad_one`` in
aten/src/ATen/native/Distributions.h).

For a sample ``x`` of ``Dirichlet(alpha)`` PyTorch differentiates each coordinate as a ``Beta(alpha_i, total -
alpha_i)`` sample with its CDF held fixed, ``-(d/dalpha cdf(x)) / pdf(x) / (1 - x)``, approximated piecewise: Taylor
series near 0 and near 1, a saddle-point expansion when both Beta parameters exceed 6, else a rational correction
of an analytic approximation. This pathwise gradient differs from the one through normalised gamma draws (both are
valid reparameterisations), so it is computed here with PyTorch's approximations, in float64, the branch chosen in
the sample's dtype as PyTorch does.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

_F64 = jnp.float64


def _nan_to_zero(v):
    return jnp.where(jnp.isnan(v), jnp.zeros((), v.dtype), v)


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)


def digamma(x):
    """PyTorch's ``digamma_one<scalar_t, double>`` for ``x`` >= 0 of dtype scalar_t: steps of ``1 / x`` and
    ``x + 1`` in scalar_t up to 10, summed in float64, then the asymptotic series; rounded to scalar_t."""
    T = x.dtype
    result = jnp.zeros(x.shape, _F64)
    for _ in range(10):
        below = x < 10
        result = result - jnp.where(below, (1 / x).astype(_F64), 0.0)
        x = jnp.where(below, x + 1, x)
    z = 1.0 / (x * x).astype(_F64)
    poly = jnp.zeros_like(z)
    for coef in _DIGAMMA_A:
        poly = poly * z + coef
    y = jnp.where(x < 1e17, z * poly, 0.0)
    far = result + _in(T, jnp.log, x).astype(_F64) - (0.5 / x).astype(_F64) - y
    out = jnp.where(x == 10, result + _PSI_10, far)
    return jnp.where(x == 0, jnp.inf, out).astype(T)


def _in(dtype, fn, *args):
    """``fn`` of float64 copies of ``args``, rounded to ``dtype`` (libm's float functions, correctly rounded)."""
    return fn(*(jnp.asarray(a, _F64) for a in args)).astype(dtype)


def _alpha_small(x, alpha, beta):
    """Near x = 0: Taylor series in x, in the sample's dtype (PyTorch's scalar_t)."""
    T = x.dtype
    factor = digamma(alpha) - digamma(alpha + beta) - _in(T, jnp.log, x)
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    return _nan_to_zero(x * _in(T, jnp.power, 1 - x, -beta) * series)


def _beta_small(x, alpha, beta):
    """d/dbeta near x = 0 (used at 1 - x for samples near 1), in the sample's dtype."""
    T = x.dtype
    factor = digamma(alpha + beta) - digamma(beta)
    numer, betas, dbetas = jnp.ones_like(x), jnp.ones_like(x), jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    return _nan_to_zero(-_in(T, jnp.power, 1 - x, 1 - beta) * series)


def _alpha_mid(x, alpha, beta):
    """Both parameters large: Rice saddle-point expansion (a polynomial next to the mean)."""
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den

    prefactor = -x / jnp.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * b2
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (jnp.sqrt(2 * alpha / beta) * jnp.power(total, 1.5) * axbx * axbx)
    term2 = 0.5 * jnp.log(alpha / (total * x))
    term3 = jnp.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = jnp.power(beta * jnp.log(beta / (total * (1 - x))) + alpha * jnp.log(alpha / (total * x)), -1.5)
    far = stirling * prefactor * (term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4)))
    return jnp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


# c[k][i][j][l]: numerator (k = 0) and denominator (k = 1) coefficients of u**i a**j b**l
_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


def _rational(x, alpha, total, dtype):
    u = jnp.log(x)
    a = jnp.log(alpha) - u
    b = jnp.log(total) - a
    pq = []
    for k in range(2):
        acc = jnp.zeros_like(x)
        for i in range(3):
            for j in range(3):
                c = _C[k, i, j]
                acc = acc + u ** i * a ** j * (c[0] + b * (c[1] + b * (c[2] + b * c[3])))
        pq.append(acc)
    approx = x * (digamma(total.astype(dtype)).astype(_F64) - digamma(alpha.astype(dtype)).astype(_F64)) / (
        total - alpha)
    return pq[0] / pq[1] * approx


def dirichlet_grad(x, alpha, total):
    """``torch._dirichlet_grad(x, alpha, total)``: d x / d alpha of each coordinate, in ``x``'s dtype."""
    dtype = x.dtype
    beta_s = total - alpha
    boundary = total * x * (1 - x)
    x64, alpha64, total64 = (jnp.asarray(v, _F64) for v in (x, alpha, total))
    beta64 = total64 - alpha64
    out = jnp.where((x <= 0.5) & (boundary < 2.5), _alpha_small(x, alpha, beta_s).astype(_F64),
                    jnp.where((x >= 0.5) & (boundary < 0.75), -_beta_small(1 - x, beta_s, alpha).astype(_F64),
                              jnp.where((alpha > 6) & (beta_s > 6), _alpha_mid(x64, alpha64, beta64),
                                        _rational(x64, alpha64, total64, dtype))))
    return out.astype(dtype)


# ---------------------------------------------------------------------------------------------------------------
# gamma: -(d/dalpha cdf(x; alpha)) / pdf(x; alpha), PyTorch's standard_gamma_grad_one

_GAMMA_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


def _gamma_small_x(x, alpha):
    """Taylor series of the CDF for x < 0.8."""
    numer, denom = jnp.ones_like(x), alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = jnp.power(x, alpha)
    pdf = jnp.power(x, alpha - 1) * jnp.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (jnp.log(x) - digamma(alpha)) * cdf - pow_x_alpha * series2
    return _nan_to_zero(-cdf_alpha / pdf)


def _gamma_large_alpha(x, alpha):
    """Rice saddle-point expansion for alpha > 8 (a polynomial within 10% of alpha)."""
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    near = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = jnp.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = jnp.power(x - alpha - alpha * jnp.log(x / alpha), -1.5)
    term23 = jnp.where(x < alpha, term2 - term3, term2 + term3)
    term1 = jnp.log(x / alpha) * term23 - jnp.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * (x * term1) / denom
    close = (np.float64(np.float32(0.9)) * alpha <= x) & (x <= np.float64(np.float32(1.1)) * alpha)
    return jnp.where(close, near, far)


def _gamma_rational(x, alpha):
    """Bivariate rational approximation in log(x / alpha) and log(alpha)."""
    u, v = jnp.log(x / alpha), jnp.log(alpha)
    cv = [_GAMMA_UV[0, i] + u * (_GAMMA_UV[1, i] + u * _GAMMA_UV[2, i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return jnp.exp(p / q)


def standard_gamma_grad(alpha, x):
    """``torch._standard_gamma_grad(alpha, x)``: d x / d alpha of ``Gamma(alpha, 1)`` samples, in float64 as
    PyTorch computes it, rounded to ``x``'s dtype."""
    dtype = x.dtype
    x64, alpha64 = jnp.asarray(x, _F64), jnp.asarray(alpha, _F64)
    out = jnp.where(x64 < np.float64(np.float32(0.8)), _gamma_small_x(x64, alpha64),
                    jnp.where(alpha64 > 8, _gamma_large_alpha(x64, alpha64), _gamma_rational(x64, alpha64)))
    return out.astype(dtype)
