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
from ._antialias import _cubic_aa, _linear_aa, aa_taps


def _filter(kind, antialias):
    """The filter of one tap, in double: PIL's cubic with antialiasing, OpenCV's without (PyTorch's choice)."""
    if kind == "linear":
        return lambda x: float(_linear_aa(np.float64(x), np.float64))
    a = -0.5 if antialias else -0.75
    return lambda x: float(_cubic_aa(np.float64(x), np.float64, a))


def _scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


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


def _plain_taps(kind, n_in, n_out, align_corners, scale):
    """(index, weight, largest weight) of the taps without antialiasing, as float64 matrices (n_out, K)."""
    kmax = 2 if kind == "linear" else 4
    s = _scale(n_in, n_out, align_corners, scale)
    filt = _filter(kind, False)
    idx, wts, w_max = np.zeros((n_out, kmax), np.int64), np.zeros((n_out, kmax)), 0.0
    for i in range(n_out):
        xmin, xsize, w, row_max = _plain_weights(i, n_in, s, kmax, align_corners, filt)
        wts[i, :xsize] = w
        idx[i] = np.where(np.arange(kmax) < xsize, xmin + np.arange(kmax), min(xmin, n_in - 1))
        w_max = max(w_max, row_max)
    return idx, wts, w_max


@functools.lru_cache(maxsize=256)
def int16_taps(kind, n_in, n_out, align_corners, scale, antialias):
    """(index (n_out, K) int32, weight (n_out, K) int32, precision) of one pass."""
    if antialias:  # the float kernel's taps, computed in double (PyTorch's uint8 kernel computes them so)
        idx, w = aa_taps(kind, n_in, n_out, align_corners, scale, np.float64)
        normalised = np.abs(w.sum(1) - 1) < 0.5  # (a row whose weights summed to 0 is left as is, and not counted)
        w_max = float(w[normalised].max(initial=0.0))
    else:
        idx, w, w_max = _plain_taps(kind, n_in, n_out, align_corners, scale)
    precision = 0
    while precision < 22 and int(0.5 + w_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = w * (1 << precision)
    q = np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5)).astype(np.int64)
    wts = (q + (1 << 15)) % (1 << 16) - (1 << 15)  # stored as int16
    return idx.astype(np.int32), wts.astype(np.int32), precision


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
