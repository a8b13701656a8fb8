"""Bicubic ``grid_sample`` of float16/bfloat16 images, rounded as PyTorch's CPU kernel rounds them.

PyTorch's vectorized 2-d sampler rounds every operation to the half type (the unnormalised coordinate, each cubic
coefficient and coefficient derivative, each product and each running sum; measured against PyTorch 2.13, whose
results this reproduces bit for bit). Its backward accumulates the gradient with respect to the grid over the
channels and the 4 x 4 taps in the half type too (``gx = gx - val * gOut * coeff_x_grad[i] * coeff_y[j]``), and
adds each tap's contribution into the half-precision gradient of the input one by one, in its loop order (vectors
of :data:`LANES` grid points, then the x and y tap offsets, then the lanes). XLA kept float32 between the operations
of the half-precision formulas: outputs were an ulp or two off, the gradient with respect to the grid 2-5% and
with respect to ``theta`` through ``affine_grid`` 3-8%. Here each operation is rounded (:func:`_rounding`), in
PyTorch's order.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

A = -0.75
# grid points per vector in PyTorch's AVX-512 build (which torchish follows; its AVX2 build has 8): the order in
# which contributions meet in the input's gradient (measured against PyTorch 2.13: 8, 32 or 64 differ)
LANES = 16


def _rounding(dtype):
    """float32 -> the half type's nearest value, kept in float32 (``reduce_precision``: XLA neither folds it away, as
    it folds a float32 -> bfloat16 -> float32 round trip, nor contracts a product and a sum across it). It flushes
    float16's subnormals to zero, which PyTorch keeps: those are rounded to a multiple of 2**-24 (exact scalings)."""
    info = jnp.finfo(dtype)
    tiny = float(info.smallest_normal)
    step = float(info.smallest_subnormal)

    def r(v):
        normal = jax.lax.reduce_precision(v, exponent_bits=info.nexp, mantissa_bits=info.nmant)
        if dtype == jnp.bfloat16:  # (its subnormals are float32's)
            return normal
        return jnp.where(jnp.abs(v) < tiny, jnp.round(v * (1 / step)) * step, normal)
    return r


def _coefficients(t, r):
    """get_cubic_coefficients of fractions ``t``: (..., 4), one rounding per operation. The outer taps (``t + 1``
    and ``2 - t``) and the inner ones (``t`` and ``1 - t``) are computed side by side: a smaller program."""
    far = jnp.stack([r(t + 1), r(2 - t)], -1)
    far = r(r(r(r(r(r(A * far) - 5 * A) * far) + 8 * A) * far) - 4 * A)
    near = jnp.stack([t, r(1 - t)], -1)
    near = r(r(r(r(r((A + 2) * near) - (A + 3)) * near) * near) + 1)
    return jnp.stack([far[..., 0], near[..., 0], near[..., 1], far[..., 1]], -1)


def _coefficient_grads(t, r):
    """get_cubic_coefficients_grad (the coefficients' derivatives) of fractions ``t``: (..., 4), rounded as above;
    the outer taps' formulas differ by the signs of two exact constants, the inner ones' by one."""
    far = jnp.stack([r(-1 - t), r(2 - t)], -1)
    sign = jnp.asarray([-1.0, 1.0], jnp.float32)
    far = r(r(r(r(sign * (3 * A) * far) - 10 * A) * far) + sign * (8 * A))
    near = jnp.stack([r(0 - t), r(1 - t)], -1)
    near = r(r(r(sign * (3 * (A + 2)) * near) - 2 * (A + 3)) * near)
    return jnp.stack([far[..., 0], near[..., 0], near[..., 1], far[..., 1]], -1)


def _locate(c, size, align_corners, r, dtype):
    """The unnormalised coordinate ``(c + 1) * scale [- 0.5]`` and its scale, in the half type."""
    scale = float(np.asarray(np.asarray(size - 1 if align_corners else size, dtype) / 2, dtype))
    u = r(r(c + 1) * scale)
    return (u if align_corners else r(u - 0.5)), scale


def _taps(x0, size, padding_mode, align_corners):
    """The 4 tap positions ``x0 - 1 .. x0 + 2`` after the padding mode, as int32, and whether each is inside."""
    from .grid import _pad_coords
    t = _pad_coords(x0[..., None] + jnp.arange(-1, 3, dtype=x0.dtype), size, padding_mode, align_corners)
    inside = (t >= 0) & (t <= size - 1)
    return jnp.clip(t, 0, size - 1).astype(jnp.int32), inside


def _geometry(x, grid, padding_mode, align_corners, r):
    """Per grid point (N, P): the cubic coefficients along x and y (N, P, 4), their scales, and the taps' values
    (N, C, P, 4 y, 4 x; zero outside), cells (N, P, 4 y, 4 x) and insideness."""
    n, c, h, w = x.shape
    g = grid.astype(jnp.float32).reshape(n, -1, 2)                                       # (N, P, 2)
    ux, sx = _locate(g[..., 0], w, align_corners, r, grid.dtype)
    uy, sy = _locate(g[..., 1], h, align_corners, r, grid.dtype)
    x0, y0 = jnp.floor(ux), jnp.floor(uy)
    t = jnp.stack([r(ux - x0), r(uy - y0)])                                              # (2, N, P)
    (xs, xin), (ys, yin) = _taps(x0, w, padding_mode, align_corners), _taps(y0, h, padding_mode, align_corners)
    cell = ys[..., :, None] * w + xs[..., None, :]
    inside = yin[..., :, None] & xin[..., None, :]
    flat = x.astype(jnp.float32).reshape(n, c, -1)
    vals = jax.vmap(lambda f, i: f[:, i.reshape(-1)])(flat, cell).reshape((n, c) + cell.shape[1:])
    return dict(t=t, sx=sx, sy=sy, cell=cell, inside=inside, vals=jnp.where(inside[:, None], vals, 0.0))


def _sum_in_order(terms, r):
    """``terms[..., 0] + terms[..., 1] + terms[..., 2] + terms[..., 3]``, left to right, each sum rounded."""
    acc = terms[..., 0]
    for k in range(1, terms.shape[-1]):
        acc = r(acc + terms[..., k])
    return acc


def _forward(x, grid, padding_mode, align_corners):
    r = _rounding(x.dtype)
    geo = _geometry(x, grid, padding_mode, align_corners, r)
    coef = _coefficients(geo["t"], r)                                                    # (2, N, P, 4)
    rows = _sum_in_order(r(geo["vals"] * coef[0][:, None, :, None, :]), r)               # along x: (N, C, P, 4 y)
    out = _sum_in_order(r(rows * coef[1][:, None]), r)                                   # then along y
    return out.reshape(x.shape[:2] + grid.shape[1:3]).astype(x.dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def bicubic(x, grid, padding_mode, align_corners):
    """Bicubic 2-d ``grid_sample`` of a float16/bfloat16 ``x`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2)."""
    return _forward(x, grid, padding_mode, align_corners)


def _bicubic_fwd(x, grid, padding_mode, align_corners):
    return _forward(x, grid, padding_mode, align_corners), (x, grid)


def _grid_grad(geo, go, coef, grads, r):
    """gx = gx - val * gOut * coeff_x_grad[i] * coeff_y[j] (gy alike) over the channels, then i, then j."""
    n, c, p = go.shape
    vg = r(geo["vals"] * go[..., None, None])                                            # (N, C, P, 4 j, 4 i)
    cx, cy = coef[0][:, None, :, None, :], coef[1][:, None, :, :, None]
    gcx, gcy = grads[0][:, None, :, None, :], grads[1][:, None, :, :, None]
    terms = jnp.stack([r(r(vg * gcx) * cy), r(r(vg * gcy) * cx)])                       # (2, N, C, P, j, i)
    terms = jnp.transpose(terms, (2, 5, 4, 0, 1, 3)).reshape(c * 16, 2, n, p)            # (c, i, j) order

    def step(acc, term):
        return r(acc - term), None
    acc, _ = jax.lax.scan(step, jnp.zeros((2, n, p), jnp.float32), terms)
    return jnp.stack([r(acc[0] * geo["sx"]), r(acc[1] * geo["sy"])], -1)                 # (N, P, 2)


def _input_grad(geo, go, coef, shape, r):
    """Each contribution ``gOut * coeff_x[i] * coeff_y[j]`` added into its cell, rounded, in the kernel's order:
    vectors of LANES grid points, then i, then j, then the lanes (the channels are apart)."""
    n, c, h, w = shape
    p = go.shape[-1]
    chunks = -(-p // LANES)

    def ordered(a):  # (N, P, i, j, ...) -> (N, chunks * 16 * LANES, ...) in the kernel's order
        a = jnp.pad(a, [(0, 0), (0, chunks * LANES - p)] + [(0, 0)] * (a.ndim - 2))
        a = a.reshape((n, chunks, LANES) + a.shape[2:])
        return jnp.moveaxis(a, 2, 4).reshape((n, -1) + a.shape[5:])
    contrib = r(r(go[..., None, None] * coef[0][:, None, :, :, None]) * coef[1][:, None, :, None, :])
    contrib = ordered(jnp.moveaxis(contrib, 1, -1))                                      # (N, T, C)
    cell = ordered(jnp.swapaxes(geo["cell"], -1, -2))                                    # (N, T)
    inside = ordered(jnp.swapaxes(geo["inside"], -1, -2) & (jnp.arange(p) < p)[:, None, None])
    rows, chans = jnp.arange(n)[:, None], jnp.arange(c)[None, :]

    def add(gin, step):
        cv, idx, ok = step                                                               # (N, C), (N,), (N,)
        old = gin[rows, chans, idx[:, None]]
        return gin.at[rows, chans, idx[:, None]].set(jnp.where(ok[:, None], r(old + cv), old)), None
    gin, _ = jax.lax.scan(add, jnp.zeros((n, c, h * w), jnp.float32),
                          (jnp.moveaxis(contrib, 1, 0), jnp.moveaxis(cell, 1, 0), jnp.moveaxis(inside, 1, 0)))
    return gin.reshape(shape)


def _bicubic_bwd(padding_mode, align_corners, res, g):
    x, grid = res
    r = _rounding(x.dtype)
    geo = _geometry(x, grid, padding_mode, align_corners, r)
    go = g.astype(jnp.float32).reshape(x.shape[:2] + (-1,))                              # (N, C, P)
    coef, grads = _coefficients(geo["t"], r), _coefficient_grads(geo["t"], r)
    ggrid = _grid_grad(geo, go, coef, grads, r).reshape(grid.shape).astype(grid.dtype)
    gin = _input_grad(geo, go, coef, x.shape, r).astype(x.dtype)
    return gin, ggrid


bicubic.defvjp(_bicubic_fwd, _bicubic_bwd)
