"""The samplers of PyTorch's CPU kernels, on the mt19937 stream of ``torchish._mt19937``.

``sample(kind, state, size, n, dtype, params, static)`` returns ``(new state, flat samples of length size)`` whose
first ``n`` elements are the draw (``size`` >= ``n`` lets shapes share a compiled kernel; ``n`` may be traced). Each
sampler consumes the words PyTorch's kernel consumes, in its order, and computes the value with its formula and
precision (aten/src/ATen/core/TransformationHelper.h, DistributionsHelper.h, native/cpu/DistributionTemplates.h):

- uniform: float32 (and half) from one word, ``(w & (2**digits - 1)) * 2**-digits``; float64 from two words
  (random64, 53 bits); ``x * (to - from) + from`` fused, which float64 arithmetic reproduces for float32.
- normal: tensors of 16 or more elements draw every uniform first, then turn each block of 16 into 8 Box-Muller
  pairs (float32: with PyTorch's own log/sin/cos polynomials, ``_avx_mathfun``); a last partial block is redrawn
  from 16 fresh uniforms. Smaller tensors draw serially in float64 with the
  generator's cached second value (the cache lives in the state).
- integers: ``word % range + low`` (random64 when the range needs it); randperm: Fisher-Yates with one word a step.
Samplers PyTorch builds from rejection loops (poisson, gamma, binomial) draw element by element with a
data-dependent number of words (``_serial_samplers``).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _mt19937 as mt
from . import _avx_mathfun, _serial_samplers
from ._xp import JNP

FILL_MIN = 16  # PyTorch's normal_fill threshold (contiguous tensors of at least 16 elements)


def _draw_words(state, count, used):
    words, blocks = mt.stream(state, count)
    return words, (lambda: mt.advance(state, blocks, used))


def _wide(dtype):
    return np.dtype(dtype) == np.float64


def unit(words, dtype):
    """PyTorch's uniform_real in [0, 1): 53 bits of two words for float64, else 24 bits of one word (float32; the
    half types draw float's values too). (jax or numpy arrays alike.)"""
    if _wide(dtype):
        return u53(words)
    return (words & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def u53(words):
    return (mt.words64(words) & np.uint64((1 << 53) - 1)).astype(np.float64) * np.float64(2.0 ** -53)


def _per(dtype):
    return 2 if _wide(dtype) else 1


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b, xp=JNP):
    """``a * b`` as an unevaluated float64 sum (Dekker's product: halves of 26 bits multiply exactly). An operand
    over 2**996 (where ``134217729 * v`` overflows) is scaled down by 2**-28 first and both parts back up after:
    powers of two, so exact while the product is finite."""
    def split(v):
        c = 134217729.0 * v  # 2**27 + 1
        hi = c - (c - v)
        return hi, v - hi

    def down(v):
        return xp.where(xp.abs(v) > 2.0 ** 996, 2.0 ** -28, 1.0)
    sa, sb = down(a), down(b)
    a, b = a * sa, b * sb
    p = a * b
    (ah, al), (bh, bl) = split(a), split(b)
    up = 1.0 / (sa * sb)
    return p * up, (((ah * bh - p) + ah * bl + al * bh) + al * bl) * up


def _odd_sum(a, b, xp=JNP):
    """``a + b`` in float64 rounded to odd: an inexact sum whose rounded value is even is nudged one ulp towards the
    exact sum (its error from TwoSum), so that a later rounding to fewer bits rounds as the exact sum would."""
    s, err = _two_sum(a, b)
    even = (xp.bitcast(s, np.int64) & 1) == 0
    return xp.where((err != 0) & even, xp.nextafter(s, xp.where(err > 0, np.inf, -np.inf)), s)


def fma64(a, b, c, xp=JNP):
    """``a * b + c`` in float64 with one rounding, as PyTorch's kernels (built with FMA contraction) compute it.
    XLA contracts ``a * b + c`` itself at its default optimisation level but not at level 0 (the test suite's), so
    the fused value is built exactly: Dekker's product, then the sum of the three parts rounded once (round-to-odd
    on the low part)."""
    a, b, c = (xp.asarray(v, np.float64) for v in (a, b, c))
    hi, lo = _two_prod(a, b, xp)
    th, tl = _two_sum(c, hi)
    return th + _odd_sum(tl, lo, xp)


def affine(x, scale, shift, dtype, xp=JNP):
    """``fma(x, scale, shift)`` rounded once to ``dtype`` (PyTorch's kernels are built with FMA contraction). For
    float32 values the product is exact in float64 and the float64 sum is rounded to odd, so rounding it to float32
    is correct."""
    if _wide(dtype):
        return fma64(x, scale, shift, xp)
    return _odd_sum(x.astype(np.float64) * scale, shift, xp).astype(np.float32).astype(dtype)


def cast(v, dtype, xp=JNP):
    """PyTorch's ``static_cast<scalar_t>(from)`` of a double argument: rounded to the dtype, kept as float64."""
    return xp.asarray(v, np.float64).astype(dtype).astype(np.float64)


def uniform_values(u, dtype, lo, hi, xp=JNP):
    """``uniform_(lo, hi)``'s values from the unit uniforms ``u`` (:func:`unit`)."""
    wide = _wide(dtype)
    lo, hi = cast(lo, np.float64 if wide else np.float32, xp), cast(hi, np.float64 if wide else np.float32, xp)
    scale = hi - lo if wide else (hi - lo).astype(np.float32).astype(np.float64)  # (to - from) in float
    v = affine(u, scale, lo, dtype, xp)
    return xp.where(v == hi.astype(dtype), lo.astype(dtype), v)  # [from, to): a rounded-up `to` is `from`


def _uniform(state, size, n, dtype, lo, hi):
    per = _per(dtype)
    words, after = _draw_words(state, size * per, n * per)
    return after(), uniform_values(unit(words, dtype), dtype, lo, hi)


def _box_muller_16(d, dtype):
    """normal_fill_16 on every block of 16 uniforms (length a multiple of 16): u1 = 1 - d[j], u2 = d[j + 8]."""
    b = d.reshape(-1, 2, 8)
    u1, u2 = 1 - b[:, 0], b[:, 1]
    radius = jnp.sqrt(-2 * jnp.log(u1))
    theta = (2 * np.pi) * u2 if d.dtype == jnp.float64 else jnp.float32(2 * np.pi) * u2
    return jnp.stack([radius * jnp.cos(theta), radius * jnp.sin(theta)], axis=1).reshape(-1)


_HALVES = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))


def _normal_fill(state, size, n, dtype, mean, std):
    """The uniforms of the whole blocks, Box-Muller on each block of 16, and a last partial block redrawn from 16
    fresh uniforms (over the last 16 values). float32 and float64 draw uniforms for every value first (the partial
    block's included, then drawn again); PyTorch's float16/bfloat16 kernel draws only the whole blocks' first."""
    per = _per(dtype)
    n = jnp.asarray(n, jnp.int32)
    partial = n % FILL_MIN != 0
    tail_at = n - n % FILL_MIN if np.dtype(dtype) in _HALVES else n  # (the words the last block is drawn from)
    words, after = _draw_words(state, (size + FILL_MIN) * per, (tail_at + jnp.where(partial, FILL_MIN, 0)) * per)
    u = unit(words, dtype)
    if np.dtype(dtype) == np.float32:  # PyTorch's AVX2 kernel (its float path on x86), bit for bit
        fill16 = _avx_mathfun.box_muller_16
    else:
        def fill16(d):
            return _box_muller_16(d, u.dtype)
    body = fill16(jnp.pad(u[:size], (0, -size % FILL_MIN)))[:size]
    tail = fill16(jax.lax.dynamic_slice(u, (tail_at,), (FILL_MIN,)))
    body = jnp.where(partial, jax.lax.dynamic_update_slice(body, tail, (jnp.maximum(n - FILL_MIN, 0),)), body)
    pdt = jnp.float32 if np.dtype(dtype) in _HALVES else dtype  # (the reduced-precision kernel scales in float)
    return after(), affine(body, cast(std, pdt), cast(mean, pdt), dtype)


def _serial_normals(state, size, n):
    """``(new state, z)``: at::normal_distribution<double> (unscaled), one value at a time: a fresh pair gives
    r cos(theta) and caches r sin(theta) in the generator for the next value (``n`` <= ``size`` may be traced)."""
    if size == 0:
        return state, jnp.zeros(0, jnp.float64)
    pairs = (size + 1) // 2
    valid, cached = mt.get_dcache(state)
    fresh = n - valid.astype(jnp.int32)
    words, after = _draw_words(state, 4 * pairs, 4 * ((fresh + 1) // 2))
    u = unit(words, jnp.float64).reshape(pairs, 2)
    r = jnp.sqrt(-2.0 * jnp.log1p(-u[:, 1]))
    theta = 2.0 * np.pi * u[:, 0]
    vals = jnp.stack([r * jnp.cos(theta), r * jnp.sin(theta)], axis=1).reshape(-1)  # cos, sin of pair 0, ...
    padded = jnp.concatenate([vals, vals[-1:]])
    out = jnp.where(valid, jnp.concatenate([cached[None], vals])[:size], vals[:size])
    return mt.set_dcache(after(), fresh % 2 == 1, padded[fresh]), out


def _double_out(v, dtype):
    """A float64 value cast to ``dtype`` as PyTorch's ``static_cast`` (half types through float)."""
    return v.astype(dtype) if _wide(dtype) or np.dtype(dtype) == np.float32 else v.astype(jnp.float32).astype(dtype)


def _normal(state, size, n, dtype, mean, std, serial=False):
    """PyTorch's normal kernel: normal_fill for a contiguous tensor of 16 or more elements, else serial."""
    if serial or size < FILL_MIN:  # (small draws are never bucketed: size is n)
        new, z = _serial_normals(state, size, n)
        return new, _double_out(fma64(z, std, mean), dtype)
    return _normal_fill(state, size, n, dtype, mean, std)


def _log_normal(state, size, n, dtype, mean, std):
    new, z = _serial_normals(state, size, n)
    return new, _double_out(jnp.exp(fma64(z, std, mean)), dtype)


def _from_u53(fn):
    """A sampler computing ``fn(u, *params)`` in float64 from one 53-bit uniform (two words) per element."""
    def sampler(state, size, n, dtype, *params):
        words, after = _draw_words(state, 2 * size, 2 * n)
        return after(), _double_out(fn(u53(words), *(jnp.asarray(p, jnp.float64) for p in params)), dtype)
    return sampler


_exponential = _from_u53(lambda u, lam: (-1.0 / lam) * jnp.log1p(-u))
_cauchy = _from_u53(lambda u, median, sigma: fma64(sigma, jnp.tan(np.pi * (u - 0.5)), median))
_geometric = _from_u53(lambda u, p: jnp.ceil(jnp.log(u) / jnp.log(1.0 - p)))


def _bernoulli(state, size, n, dtype, p, narrow):
    """``u < p``: a 53-bit uniform (two words) for a number or a float64 probability tensor, a float one (one
    word) for float32 probabilities."""
    if narrow:
        words, after = _draw_words(state, size, n)
        return after(), (unit(words, jnp.float32) < jnp.asarray(p).astype(jnp.float32)).astype(dtype)
    words, after = _draw_words(state, 2 * size, 2 * n)
    return after(), (u53(words) < jnp.asarray(p, jnp.float64)).astype(dtype)


def _multinomial(state, shape, probs, mode):
    """PyTorch's multinomial: without replacement (or one sample), the top-k of ``probs / q`` for exponential
    draws ``q`` (``mode`` "keys" returns those keys, for a top-k in PyTorch's tie order); with replacement,
    inverse-CDF search of a 53-bit uniform per sample in each row's normalised running sum (accumulated in order,
    in the probabilities' dtype)."""
    rows = probs.reshape(-1, probs.shape[-1])
    k = shape[-1]
    if mode is not True or k == 1:
        state, q = _exponential(state, rows.size, rows.size, rows.dtype, 1.0)
        q = rows / q.reshape(rows.shape)
        if mode == "keys":
            return state, q.reshape(probs.shape)
        idx = jnp.argmax(q, axis=-1)[:, None] if k == 1 else jax.lax.top_k(q, k)[1]
    else:
        _, cum = jax.lax.scan(lambda c, x: (c + x,) * 2, jnp.zeros(rows.shape[0], rows.dtype), rows.T)
        cum = (cum / cum[-1]).T.at[:, -1].set(1)
        words, after = _draw_words(state, 2 * rows.shape[0] * k, 2 * rows.shape[0] * k)
        u = u53(words).reshape(rows.shape[0], k)
        idx = jax.vmap(lambda c, v: jnp.searchsorted(c, v, side="left"))(cum.astype(jnp.float64), u)
        state = after()
    return state, idx.reshape(shape).astype(jnp.int64)


def _complex(fn, state, size, n, dtype, params, **options):
    """PyTorch samples a complex tensor as its real view: twice as many real values, interleaved."""
    real = jnp.finfo(dtype).dtype
    new, flat = fn(state, 2 * size, 2 * n, real, *params, **options)
    return new, jax.lax.complex(flat[0::2], flat[1::2]).astype(dtype)


def _randint(state, size, n, dtype, lo, hi, wide):
    per = 2 if wide else 1
    words, after = _draw_words(state, size * per, n * per)
    val = mt.words64(words) if wide else words.astype(jnp.uint64)
    span = (jnp.asarray(hi, jnp.int64) - jnp.asarray(lo, jnp.int64)).astype(jnp.uint64)
    return after(), ((val % span).astype(jnp.int64) + jnp.asarray(lo, jnp.int64)).astype(dtype)


def _full64(state, size, n, dtype, signed=False):
    """random_() of int64: random64 % 2**63; ``signed``: random_(-2**63, None), random64 read as an int64."""
    words, after = _draw_words(state, 2 * size, 2 * n)
    val = mt.words64(words)
    if signed:
        return after(), jax.lax.bitcast_convert_type(val, jnp.int64).astype(dtype)
    return after(), (val & jnp.uint64((1 << 63) - 1)).astype(jnp.int64).astype(dtype)


def _randperm(state, n, dtype):
    if n < 2:
        return state, jnp.arange(n, dtype=dtype)
    words, after = _draw_words(state, n - 1, n - 1)

    def step(i, perm):
        z = i + (words[i] % (n - i).astype(jnp.uint32)).astype(jnp.int32)
        # one scatter of the swapped pair: XLA updates the carried permutation in place (two chained .at[].set
        # copied it every step: 1.6 s for 60000 elements, against 8 ms)
        return perm.at[jnp.stack([i, z])].set(jnp.stack([perm[z], perm[i]]))

    perm = jax.lax.fori_loop(0, n - 1, step, jnp.arange(n, dtype=jnp.int64))
    return after(), perm.astype(dtype)


def _key(state):
    """A threefry key from two words, for the samplers torchish does not reproduce bit for bit."""
    words, after = _draw_words(state, 2, 2)
    return after(), jax.random.wrap_key_data(words, impl="threefry2x32")


def sample(kind, state, size, n, dtype, params, static):
    complex_ = jnp.issubdtype(dtype, jnp.complexfloating)
    if kind == "uniform":
        return _complex(_uniform, state, size, n, dtype, params) if complex_ else _uniform(state, size, n, dtype,
                                                                                           *params)
    if kind == "normal":
        if complex_:  # each part of variance 1/2: std / sqrt(2) on the real view
            mean, std = params
            return _complex(_normal, state, size, n, dtype, (mean, std / math.sqrt(2)), serial=static == "serial")
        return _normal(state, size, n, dtype, *params, serial=static == "serial")
    if kind == "randint":
        if static in ("full64", "full64signed"):
            return _full64(state, size, n, dtype, signed=static == "full64signed")
        return _randint(state, size, n, dtype, *params, wide=static == "wide")
    if kind == "randperm":
        return _randperm(state, size, dtype)
    if kind == "bernoulli":
        return _bernoulli(state, size, n, dtype, *params, narrow=static == "narrow")
    if kind in _FROM_U53:
        return _FROM_U53[kind](state, size, n, dtype, *params)
    if kind == "multinomial":
        return _multinomial(state, size, *params, mode=static)
    if kind in _SERIAL:
        return _SERIAL[kind](state, *params, dtype, n)
    new, key = _key(state)
    return new, keyed(kind, key, (size,), dtype, params, static)


_FROM_U53 = {"exponential": _exponential, "cauchy": _cauchy, "geometric": _geometric, "log_normal": _log_normal}
_SERIAL = {"gamma": _serial_samplers.gamma, "poisson": _serial_samplers.poisson,
           "binomial": _serial_samplers.binomial}


def _real_sample(fn, key, shape, dtype):
    """``fn(key, shape, dtype)`` for a real float dtype, sampled in float32 for half precisions."""
    if dtype in (jnp.float16, jnp.bfloat16):
        return fn(key, shape, jnp.float32).astype(dtype)
    return fn(key, shape, dtype)


def keyed(kind, key, shape, dtype, params, static):
    """Samplers drawn from a threefry key (one key per draw): those PyTorch builds from rejection loops, and every
    sampler inside ``torchish.func``'s transforms (whose keys come from the transform)."""
    complex_ = jnp.issubdtype(dtype, jnp.complexfloating)
    rd = jnp.finfo(dtype).dtype if complex_ else dtype
    if kind == "uniform":
        lo, hi = params
        if complex_:
            k1, k2 = jax.random.split(key)
            return (jax.random.uniform(k1, shape, rd) + 1j * jax.random.uniform(k2, shape, rd)).astype(dtype)
        return _real_sample(lambda k, s, d: jax.random.uniform(k, s, d, lo, hi), key, shape, dtype)
    if kind == "normal":
        mean, std = params
        if complex_:
            k1, k2 = jax.random.split(key)
            z = (jax.random.normal(k1, shape, rd) + 1j * jax.random.normal(k2, shape, rd)) / jnp.sqrt(2.0)
            return (mean + std * z).astype(dtype)
        return (mean + std * _real_sample(jax.random.normal, key, shape, dtype)).astype(dtype)
    if kind == "randint":
        lo, hi = params
        if static == "full64":
            return (jax.random.bits(key, shape, jnp.uint64) >> 1).astype(dtype)
        if static == "full64signed":
            return jax.lax.bitcast_convert_type(jax.random.bits(key, shape, jnp.uint64), jnp.int64).astype(dtype)
        return jax.random.randint(key, shape, lo, hi, jnp.int64).astype(dtype)
    if kind == "randperm":
        return jax.random.permutation(key, shape[0]).astype(dtype)
    if kind == "bernoulli":
        (p,) = params
        return (jax.random.uniform(key, shape, jnp.float64 if dtype == jnp.float64 else jnp.float32) < p
                ).astype(dtype)
    if kind == "exponential":
        (lam,) = params
        return (_real_sample(jax.random.exponential, key, shape, dtype) / lam).astype(dtype)
    if kind == "cauchy":
        median, sigma = params
        return (median + sigma * _real_sample(jax.random.cauchy, key, shape, dtype)).astype(dtype)
    if kind == "log_normal":
        mean, std = params
        return jnp.exp(mean + std * _real_sample(jax.random.normal, key, shape, dtype)).astype(dtype)
    if kind == "geometric":
        (p,) = params
        u = jax.random.uniform(key, shape, jnp.float64, minval=jnp.finfo(jnp.float64).tiny)
        return jnp.ceil(jnp.log(u) / jnp.log1p(-p)).astype(dtype)
    if kind == "poisson":
        (rate,) = params
        return jax.random.poisson(key, rate, shape).astype(dtype)
    if kind == "gamma":  # standard gamma with concentration alpha (torch._standard_gamma)
        (alpha,) = params
        return _real_sample(lambda k, s, d: jax.random.gamma(k, alpha.astype(d), s, d), key, shape, dtype)
    if kind == "binomial":
        count, p = params
        return jax.random.binomial(key, count, p, shape, jnp.float64 if dtype == jnp.float64 else jnp.float32
                                   ).astype(dtype)
    if kind == "multinomial":
        (probs,) = params
        logits = jnp.log(probs)
        n = shape[-1]
        if static is True:  # with replacement: independent categorical draws
            draws = jax.random.categorical(key, logits, axis=-1, shape=(n,) + probs.shape[:-1])
            return jnp.moveaxis(draws, 0, -1).astype(dtype)
        g = jax.random.gumbel(key, probs.shape, probs.dtype)  # Gumbel top-k: sampling without replacement
        if static == "keys":  # the keys whose top-k is the sample (multinomial takes it with torchish.topk)
            return logits + g
        return jnp.argsort(-(logits + g), axis=-1)[..., :n].astype(dtype)
    raise ValueError(f"unknown sampler {kind!r}")
