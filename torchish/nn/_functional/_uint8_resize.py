"""``interpolate`` of uint8 images in bilinear and bicubic modes, as PyTorch's CPU kernel computes it: separable (the
width first, then the height, through a uint8 image in between), each pass in integer arithmetic with the filter's
weights rounded to int16 at a per-pass precision (Pillow's method; PyTorch's ``_compute_index_ranges_int16_weights``
and ``basic_loop_separable_1d_*<uint8_t>``). Computing in float and rounding once differs by one in a few pixels.

The taps are computed on the host in float64 with PyTorch's formulas, statement by statement (including the float32
``floorf`` of a source index and the clamping of out-of-range cubic taps onto the border pixels), so that the int16
weights are PyTorch's bit for bit."""
from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np

from ...ops.registry import defop


def _filter(kind, antialias):
    if kind == "linear":
        return lambda x: 1.0 - abs(x) if abs(x) < 1.0 else 0.0
    a = -0.5 if antialias else -0.75  # PIL's cubic with antialiasing, OpenCV's without (PyTorch's choice)

    def cubic(x):
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0
    return cubic


def _scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


def _aa_weights(i, n_in, s, support, kmax, filt):
    center = s * (i + 0.5)
    invscale = 1.0 / s if s >= 1.0 else 1.0
    xmin = max(int(center - support + 0.5), 0)
    xsize = min(max(min(int(center + support + 0.5), n_in) - xmin, 0), kmax)
    w = [filt((j + xmin - center + 0.5) * invscale) for j in range(xsize)]
    total = 0.0
    for v in w:
        total += v
    if total == 0.0:
        return xmin, xsize, w, 0.0
    w = [v / total for v in w]
    return xmin, xsize, w, max(w, default=0.0)


def _plain_weights(i, n_in, s, kmax, align_corners, filt):
    """``_compute_indices_min_size_weights``: the taps without antialiasing, out-of-range taps folded onto the
    first and last pixels."""
    if align_corners:
        real = s * i
    else:
        real = s * (i + 0.5) - 0.5
        if kmax <= 2 and real < 0:
            real = 0.0
    index = min(int(math.floor(np.float32(real))), n_in - 1)  # floorf: the index is floored in float32
    lam = min(max(real - index, 0.0), 1.0)
    support = int(kmax * 0.5)
    lo, hi = index - support + 1, index + support + 1
    xmin = max(lo, 0)
    xsize = min(max(min(hi, n_in) - xmin, 0), kmax)
    w = [0.0] * kmax
    w_max = 0.0
    k = 0
    for j in range(kmax):
        w[j] = 0.0
        v = filt(float(j + 1 - support) - lam)
        if lo + j <= 0:
            k = 0
        elif lo + j >= n_in - 1:
            k = xsize - 1
        w[k] += v
        w_max = max(w_max, w[k])
        k += 1
    return xmin, xsize, w[:xsize], w_max


@functools.lru_cache(maxsize=256)
def int16_taps(kind, n_in, n_out, align_corners, scale, antialias):
    """(index (n_out, K) int32, weight (n_out, K) int32, precision) of one pass."""
    interp = 2 if kind == "linear" else 4
    s = _scale(n_in, n_out, align_corners, scale)
    filt = _filter(kind, antialias)
    if antialias:
        support = interp * 0.5 * s if s >= 1.0 else interp * 0.5
        kmax = int(math.ceil(support)) * 2 + 1
        rows = [_aa_weights(i, n_in, s, support, kmax, filt) for i in range(n_out)]
    else:
        kmax = interp
        rows = [_plain_weights(i, n_in, s, kmax, align_corners, filt) for i in range(n_out)]
    w_max = max(r[3] for r in rows)
    precision = 0
    while precision < 22 and int(0.5 + w_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    idx = np.zeros((n_out, kmax), np.int32)
    wts = np.zeros((n_out, kmax), np.int32)
    for i, (xmin, xsize, w, _) in enumerate(rows):
        for j in range(xsize):
            v = w[j] * (1 << precision)
            q = int(-0.5 + v) if v < 0 else int(0.5 + v)
            wts[i, j] = (q + (1 << 15)) % (1 << 16) - (1 << 15)  # stored as int16
            idx[i, j] = xmin + j
        idx[i, xsize:] = min(xmin, n_in - 1)
    return idx, wts, precision


def _pass(x, axis, kind, n_out, align_corners, scale, antialias):
    idx, wts, precision = int16_taps(kind, x.shape[axis], n_out, align_corners, scale, antialias)
    taps = jnp.take(x, jnp.asarray(idx), axis=axis).astype(jnp.int32)  # (..., n_out, K, ...) along `axis`
    w = jnp.asarray(wts).reshape(wts.shape + (1,) * (x.ndim - 1 - axis))
    acc = (taps * w).sum(axis=axis + 1) + (1 << (precision - 1))
    return jnp.clip(acc >> precision, 0, 255).astype(jnp.uint8)


def _resize(x, *, kind, size, align_corners, scales, antialias):
    for axis, n_out, scale in ((3, size[1], scales[1]), (2, size[0], scales[0])):  # the width first
        if x.shape[axis] != n_out:
            x = _pass(x, axis, kind, n_out, align_corners, scale, antialias)
    return x


RESIZE = defop("upsample_uint8", _resize, differentiable=False)
