"""Taps of ``interpolate(..., antialias=True)`` for bilinear and bicubic modes: PyTorch's separable anti-aliasing
filters (PIL's: a triangle, or a cubic with a = -0.5), whose support widens by the downscaling factor. The index
arithmetic follows PyTorch's float kernel step by step (float32 where it rounds to float32), so the window bounds
match exactly."""
from __future__ import annotations

import numpy as np


def _cubic_aa(x, f, a=-0.5):
    """The cubic convolution filter with coefficient ``a`` (PIL's -0.5 when antialiasing)."""
    a = f(a)
    x = np.abs(x)
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, c1, np.where(x < 2, c2, f(0))).astype(f)


def _linear_aa(x, f):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, f(0)).astype(f)


def aa_taps(kind, n_in, n_out, align_corners, scale, f):
    """(index (n_out, K), weight (n_out, K)) of the anti-aliased filter along one dimension."""
    if align_corners:
        s = f(n_in - 1) / f(n_out - 1) if n_out > 1 else f(0)
    elif scale is not None and scale > 0:
        s = f(1.0 / scale)
    else:
        s = f(n_in) / f(n_out)
    interp = 2 if kind == "linear" else 4
    filt = _linear_aa if kind == "linear" else _cubic_aa
    support = f(interp * 0.5 * np.float64(s)) if s >= 1 else f(interp * 0.5)
    k = int(np.ceil(support)) * 2 + 1
    invscale = f(1.0 / np.float64(s)) if s >= 1 else f(1)
    i = np.arange(n_out)
    center = ((i + 0.5) * np.float64(s)).astype(f)
    xmin = np.maximum(np.trunc(center.astype(np.float64) - np.float64(support) + 0.5).astype(np.int64), 0)
    xend = np.minimum(np.trunc(center.astype(np.float64) + np.float64(support) + 0.5).astype(np.int64), n_in)
    xsize = np.clip(xend - xmin, 0, k)
    j = np.arange(k)[None, :]
    arg = ((j + xmin[:, None] - center[:, None].astype(np.float64) + 0.5) * np.float64(invscale)).astype(f)
    inside = j < xsize[:, None]
    w = np.where(inside, filt(arg, f), f(0)).astype(f)
    total = np.zeros(n_out, f)
    for c in range(k):  # sequential float sum, as the kernel accumulates
        total = (total + w[:, c]).astype(f)
    w = np.where(total[:, None] != 0, w / np.where(total == 0, f(1), total)[:, None], w).astype(f)
    idx = np.where(inside, xmin[:, None] + j, np.minimum(xmin, n_in - 1)[:, None])
    return idx, w
