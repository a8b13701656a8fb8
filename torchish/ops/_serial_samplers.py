"""PyTorch's rejection samplers (gamma, poisson, binomial) on the mt19937 stream, element by element.

PyTorch's CPU kernels (``_s_gamma_cpu``, ``_s_poisson_cpu``, ``_s_binomial_cpu`` in aten/src/ATen/native/
Distributions.cpp, the loops in Distributions.h) draw serially in memory order, each element taking as many
uniforms (``uniform_real_distribution<double>``: a 53-bit value from two words, first one high) and normals
(``normal_distribution<double>``: Box-Muller on two such uniforms, the second value cached in the generator) as its
rejection loop needs. Here a word source walks the 624-word block itself (one word: temper ``mt[pos]``, twisting when
the block is used up), an outer loop runs over the elements and a ``while_loop`` per element repeats the draws, so
the values and the words used are PyTorch's for any data. Each ``f(state, params..., dtype, n)`` returns
``(new state, samples)`` of the flat parameters' length, the first ``n`` of them drawn (``n`` may be traced).

The arithmetic follows the kernels' types: ``double`` accumulators, but the parameters stay ``scalar_t``, so for
float32 some steps (gamma's ``alpha + 1`` and ``alpha - 1/3``, binomial's products of count and probability, its
``sqrt`` and ``log1p``) are float operations, computed here in float32 (or in float64 and rounded once, the
correctly rounded float result). Where PyTorch's loop never ends (a binomial count of NaN) the element is NaN.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _mt19937 as mt

_F64 = jnp.float64


# ---------------------------------------------------------------------------------------------------------------
# the word source: a carry (block, pos, cached normal valid, cached normal value)

def _unpack(state):
    valid, cached = mt.get_dcache(state)
    return state[:mt.N], state[mt.POS].astype(jnp.int32), valid, cached


def _pack(state, carry):
    block, pos, valid, cached = carry
    new = jnp.concatenate([block, pos.astype(jnp.uint32)[None], state[mt.N + 1:]])
    return mt.set_dcache(new, valid, cached)


def _word(carry):
    block, pos, valid, cached = carry
    block, pos = jax.lax.cond(pos >= mt.N, lambda: (mt.twist(block), jnp.int32(0)), lambda: (block, pos))
    return (block, pos + 1, valid, cached), mt.temper(block[pos])


def _two_words(carry):
    """The next two words: read directly when both are in the current block (one branch instead of two)."""
    def fast(c):
        block, pos, valid, cached = c
        return (block, pos + 2, valid, cached), mt.temper(block[pos]), mt.temper(block[pos + 1])

    def slow(c):
        c, hi = _word(c)
        c, lo = _word(c)
        return c, hi, lo

    return jax.lax.cond(carry[1] + 2 <= mt.N, fast, slow, carry)


def _uniform(carry):
    """uniform_real_distribution<double>(0, 1): random64 (first word high), its low 53 bits times 2**-53."""
    carry, hi, lo = _two_words(carry)
    bits = (hi & jnp.uint32(0x1FFFFF)).astype(_F64) * 4294967296.0 + lo.astype(_F64)
    return carry, bits * 2.0 ** -53


def _normal(carry):
    """normal_distribution<double>(0, 1): the cached value if there is one, else r cos(theta) of a fresh pair
    (u1 gives theta, u2 the radius), caching r sin(theta)."""
    def fresh(c):
        c, u1 = _uniform(c)
        c, u2 = _uniform(c)
        r = jnp.sqrt(-2.0 * jnp.log1p(-u2))
        theta = 2.0 * np.pi * u1
        block, pos, _, _ = c
        return (block, pos, jnp.bool_(True), r * jnp.sin(theta)), r * jnp.cos(theta)

    def cached(c):
        block, pos, _, value = c
        return (block, pos, jnp.bool_(False), value), value

    return jax.lax.cond(carry[2], cached, fresh, carry)


def _serial(state, n, params, one, dtype):
    """Runs ``one(carry, *element params) -> (carry, value)`` over the first ``n`` elements in order."""
    size = params[0].shape[0]
    n = size if n is None else n

    def body(i, loop):
        carry, out = loop
        carry, value = one(carry, *(p[i] for p in params))
        return carry, out.at[i].set(value.astype(dtype))

    carry, out = jax.lax.fori_loop(0, n, body, (_unpack(state), jnp.zeros(size, dtype)))
    return _pack(state, carry), out


def _until(carry, step, init):
    """Repeats ``step(carry, value) -> (carry, value, done)`` until done (at least once); returns (carry, value)."""
    def body(loop):
        c, v, _ = loop
        return step(c, v)

    c, v, _ = jax.lax.while_loop(lambda loop: ~loop[2], body, (carry, init, jnp.bool_(False)))
    return c, v


def _f32(x):
    return jnp.asarray(x, _F64).astype(jnp.float32)


# ---------------------------------------------------------------------------------------------------------------
# gamma: Marsaglia and Tsang, alpha < 1 boosted by alpha + 1 and u ** (1 / alpha)

def _gamma_one(carry, alpha):
    narrow = alpha.dtype == jnp.float32
    one = jnp.ones((), alpha.dtype)
    boost, zero = alpha < 1, alpha == 0

    def boosted(c):
        c, u = _uniform(c)
        return c, jnp.power(1 - u, (one / alpha).astype(_F64))

    carry, scale = jax.lax.cond(boost & ~zero, boosted, lambda c: (c, jnp.float64(1.0)), carry)
    alpha = jnp.where(boost, alpha + one, alpha)
    d = (alpha - _f32(1 / 3)).astype(_F64) if narrow else alpha - np.float64(np.float32(1 / 3))
    c_ = 1.0 / jnp.sqrt(9.0 * d)

    def step(c, value):
        c, x = _normal(c)
        y = 1.0 + c_ * x

        def test(c):
            c, u = _uniform(c)
            u = 1 - u
            v = y * y * y
            xx = x * x
            accept = (u < 1.0 - np.float64(np.float32(0.0331)) * xx * xx) | (
                jnp.log(u) < 0.5 * xx + d * (1.0 - v + jnp.log(v)))
            return c, scale * d * v, accept

        return jax.lax.cond(y <= 0, lambda c: (c, value, jnp.bool_(False)), test, c)

    carry, value = jax.lax.cond(zero, lambda c: (c, jnp.float64(0.0)),
                                lambda c: _until(c, step, jnp.float64(0.0)), carry)
    out, tiny = value.astype(alpha.dtype), jnp.finfo(alpha.dtype).tiny
    return carry, jnp.where(tiny < out, out, tiny)  # std::max(tiny, out): NaN gives tiny too


def gamma(state, alpha, dtype, n=None):
    """``torch._standard_gamma`` of the flat ``alpha`` (PyTorch's ``_s_gamma_cpu``; ``_s_dirichlet_cpu`` draws
    with float64 ``alpha``): each sample at least the dtype's smallest normal number."""
    return _serial(state, n, (jnp.asarray(alpha, dtype),), _gamma_one, dtype)


# ---------------------------------------------------------------------------------------------------------------
# poisson: Hoermann's transformed rejection (PTRS) from rate 10, else multiplication of uniforms

_INT64_MIN = np.int64(np.iinfo(np.int64).min)


def _to_int64(x):
    """``(int64_t) x`` as x86 converts: NaN and out-of-range values give INT64_MIN."""
    ok = (x >= -2.0 ** 63) & (x < 2.0 ** 63)
    return jnp.where(ok, jnp.where(ok, x, 0.0).astype(jnp.int64), _INT64_MIN)


def _ptrs(carry, lam):
    slam, loglam = jnp.sqrt(lam), jnp.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)

    def step(c, k):
        c, u = _uniform(c)
        c, v = _uniform(c)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        k = _to_int64(jnp.floor((2 * a / us + b) * u + lam + 0.43))
        quick = (us >= 0.07) & (v <= vr)
        skip = (k < 0) | ((us < 0.013) & (v > us))

        def ratio():  # the transformed-reject test (only computed where the box test did not decide)
            kf = k.astype(_F64)
            return jnp.log(v) + jnp.log(invalpha) - jnp.log(a / (us * us) + b) <= \
                -lam + kf * loglam - jax.lax.lgamma(kf + 1)

        return c, k, quick | jax.lax.cond(~quick & ~skip, ratio, lambda: jnp.bool_(False))

    return _until(carry, step, jnp.int64(0))


def _knuth(carry, lam):
    enlam = jnp.exp(-lam)

    def body(loop):
        c, x, prod, _ = loop
        c, u = _uniform(c)
        prod = prod * u
        more = prod > enlam
        return c, x + more.astype(jnp.int64), prod, ~more

    c, x, _, _ = jax.lax.while_loop(lambda loop: ~loop[3], body, (carry, jnp.int64(0), jnp.float64(1.0),
                                                                     jnp.bool_(False)))
    return c, x


def _poisson_one(carry, rate):
    lam = rate.astype(_F64)
    branch = jnp.where(lam >= 10, 0, jnp.where(lam == 0, 1, 2))
    carry, k = jax.lax.switch(branch, [lambda c: _ptrs(c, lam), lambda c: (c, jnp.int64(0)),
                                       lambda c: _knuth(c, lam)], carry)
    return carry, k.astype(rate.dtype)


def poisson(state, rate, dtype, n=None):
    """``torch.poisson`` of the flat non-negative ``rate`` (PyTorch's ``_s_poisson_cpu``)."""
    return _serial(state, n, (jnp.asarray(rate, dtype),), _poisson_one, dtype)


# ---------------------------------------------------------------------------------------------------------------
# binomial: BTRS from count * p >= 10, else inversion (sums of geometric draws), on the smaller of p and 1 - p

_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287])


def _stirling_tail(k):
    kp1sq = (k + 1) * (k + 1)
    far = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return jnp.where(k < 10, jnp.asarray(_TAIL)[jnp.clip(k, 0, 9).astype(jnp.int32)], far)


def _btrs(carry, count, prob):
    """Transformed rejection; ``count``, ``prob`` and the candidate ``k`` are scalar_t, the rest double."""
    T = count.dtype
    one = jnp.ones((), T)
    stddev = jnp.sqrt((count * prob * (one - prob)).astype(_F64)).astype(T).astype(_F64)  # std::sqrt of scalar_t
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob.astype(_F64)
    c_ = (count * prob).astype(_F64) + 0.5
    v_r = 0.92 - 4.2 / b
    r = (prob / (one - prob)).astype(_F64)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + one) * prob).astype(_F64)
    n64 = count.astype(_F64)

    def step(c, k):
        c, u = _uniform(c)
        c, v = _uniform(c)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + c_).astype(T)
        sane = ~((k < 0) | (k > count))
        quick = (us >= 0.07) & (v <= v_r)

        def ratio():  # outside the box: the transformed-reject test (only computed there)
            kf = k.astype(_F64)
            rest = (count - k + one).astype(_F64)
            bound = ((m + 0.5) * jnp.log((m + 1) / (r * (n64 - m + 1)))
                     + (count + one).astype(_F64) * jnp.log((n64 - m + 1) / rest)
                     + (kf + 0.5) * jnp.log(r * rest / (k + one).astype(_F64))
                     + _stirling_tail(m) + _stirling_tail(n64 - m) - _stirling_tail(kf)
                     - _stirling_tail((count - k).astype(_F64)))
            return jnp.log(v * alpha / (a / (us * us) + b)) <= bound

        return c, k, sane & (quick | jax.lax.cond(sane & ~quick, ratio, lambda: jnp.bool_(False)))

    return _until(carry, step, jnp.zeros((), T))


def _inversion(carry, count, prob):
    T = count.dtype
    logprob = jnp.log1p(-prob.astype(_F64)).astype(T).astype(_F64)  # std::log1p of scalar_t, correctly rounded
    limit = count.astype(_F64)

    def body(loop):
        c, num, total, _ = loop
        c, u = _uniform(c)
        total = total + jnp.ceil(jnp.log(u) / logprob)
        stop = total > limit
        return c, jnp.where(stop, num, num + jnp.ones((), T)), total, stop

    c, num, _, _ = jax.lax.while_loop(lambda loop: ~loop[3], body, (carry, jnp.zeros((), T), jnp.float64(0.0),
                                                                       jnp.bool_(False)))
    return c, num


def _binomial_one(carry, count, prob):
    T = count.dtype
    low = prob <= 0.5
    q = jnp.where(low, prob, (1.0 - prob.astype(_F64)).astype(T))
    # 0: zero, 1: count, 2: NaN, 3: BTRS, 4: inversion (count - either where p > 1/2)
    branch = jnp.where((count <= 0) | (prob <= 0), 0, jnp.where(prob >= 1, 1, jnp.where(
        ~(prob <= 0.5) & ~(prob > 0.5), 2, jnp.where(count * q >= 10, 3, 4))))
    branch = jnp.where(jnp.isnan(count) & (branch == 4), 2, branch)  # PyTorch's inversion never ends for NaN
    nan = jnp.asarray(np.nan, T)
    carry, k = jax.lax.switch(branch, [lambda c: (c, jnp.zeros((), T)), lambda c: (c, count), lambda c: (c, nan),
                                       lambda c: _btrs(c, count, q), lambda c: _inversion(c, count, q)], carry)
    flip = (branch >= 3) & ~low
    return carry, jnp.where(flip, count - k, k)


def binomial(state, count, prob, dtype, n=None):
    """``torch.binomial`` of the flat ``count`` and ``prob`` (PyTorch's ``_s_binomial_cpu``)."""
    return _serial(state, n, (jnp.asarray(count, dtype), jnp.asarray(prob, dtype)), _binomial_one, dtype)
