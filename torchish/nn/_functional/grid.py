"""``grid_sample`` and ``affine_grid``: sampling an image at normalised coordinates, with PyTorch's coordinate
formulas (unnormalisation, border clipping, reflection), its interpolation kernels (bilinear/trilinear, nearest
with round-half-to-even, bicubic with A = -0.75) and its gradients for both the input and the grid (the coordinate
clipping passes no gradient at or beyond the borders, as PyTorch's ``clip_coordinates_set_grad``)."""
from __future__ import annotations

import itertools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype, _precision
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from ...ops.ranges import _linspace_real
from . import grid_half as _grid_half
from ._args import need_bool, need_int_list, need_tensor

__all__ = ["grid_sample", "affine_grid"]


def _unnormalize(c, size, align_corners, vectorized):
    """Grid coordinate in [-1, 1] -> pixel coordinate, rounded as PyTorch's CPU kernels round it: its vectorized
    2-d sampler scales by a halved size, ``(c + 1) * (size / 2) - 0.5`` as one FMA, the 3-d one computes
    ``((c + 1) * size - 1) / 2``. A point on a pixel centre lands on it, or a rounding to either side, and the side
    decides the neighbour that the gradient with respect to the grid looks at."""
    if vectorized:
        return (c + 1) * ((size - 1) / 2) if align_corners else _fma(c + 1, size / 2, -0.5)
    if align_corners:
        return (c + 1) / 2 * (size - 1)
    return (_times(c + 1, size) - 1) / 2


def _times(a, n):
    """``a * n`` (``n`` a Python int below 2**26) rounded on its own, as PyTorch's kernel rounds it before the next
    op: XLA at its default optimisation level contracts a product and the subtraction after it into an FMA (one
    rounding), which moved float64 points on a pixel centre of the 3-d sampler to the other side of it. float32 by
    ``_precision.mul``; float64 as the sum of two exact products, ``a``'s leading 26 bits times ``n`` and the rest
    times ``n`` (split by masking the bits: integer ops, which no contraction touches), so the one rounding is the
    sum's, whatever XLA fuses."""
    if a.dtype == jnp.float32:
        return _precision.mul(a, jnp.float32(n))
    if a.dtype != jnp.float64:
        return a * n
    bits = jax.lax.bitcast_convert_type(a, jnp.int64)
    hi = jax.lax.bitcast_convert_type(bits & jnp.int64(~((1 << 27) - 1)), jnp.float64)
    return hi * n + (a - hi) * n


def _fma(a, b, c):
    """``a * b + c`` rounded once for float32/float64 ``a`` and Python numbers ``b`` (of at most 26 significant
    bits) and ``c``, whatever XLA's optimisation level (float16/bfloat16: rounded per operation). float64 by
    Dekker's exact product (``a`` split in two halves) and Knuth's two-sum; the barriers keep XLA from simplifying
    ``t - (t - a)`` to ``a``; an infinite or NaN product gives ``a * b + c`` as an FMA does."""
    if a.dtype == jnp.float32:
        return _precision.fma(a, jnp.float32(b), jnp.float32(c))
    if a.dtype != jnp.float64:
        return a * b + c
    keep = jax.lax.optimization_barrier
    t = keep(a * 134217729.0)  # 2**27 + 1: Veltkamp's split
    hi = keep(t - keep(t - a))
    p = keep(a * b)
    err = keep(hi * b - p) + (a - hi) * b  # exact: a * b == p + err
    s = keep(p + c)
    bb = keep(s - p)
    exact = s + ((keep(p - keep(s - bb)) + (c - bb)) + err)
    return jnp.where(jnp.isfinite(p), exact, p + c)  # (an infinite product: the split's NaNs, not an FMA's inf)


def _clip(c, size, vectorized=False):
    """Clip to ``[0, size - 1]``, no gradient at or beyond the borders. NaN goes where PyTorch's kernel sends it:
    the vectorized 2-d sampler's ``clamp_max(max, clamp_min(0, in))`` gives 0, the scalar (3-d) sampler's
    ``std::min(size - 1, std::max(in, 0))`` gives ``size - 1``."""
    zero, hi = jnp.zeros((), c.dtype), jnp.asarray(size - 1, c.dtype)
    if vectorized:
        return jnp.where(c > 0, jnp.where(c < hi, c, hi), zero)
    return jnp.where(c <= 0, zero, jnp.where(c < hi, c, hi))


def _reflect_vectorized(c, size, align_corners):
    """The vectorized 2-d sampler's ``reflect_coordinates``: ``extra = |c - low| - trunc(|c - low| / twice_span) *
    twice_span`` (one FMA), then ``min(extra, twice_span - extra) + low``, NaN (from NaN or an infinite ``c``)
    propagated for the clip after it to send to 0; the gradient's sign flips where ``c < low`` and where the second
    reflection is taken, as its ``reflect_coordinates_get_grad``."""
    if align_corners and size <= 1:
        return jnp.zeros_like(c)
    low, twice = (0.0, 2.0 * (size - 1)) if align_corners else (-0.5, 2.0 * size)
    a = c - low if low else c
    a = jnp.where(a < 0, -a, a)
    flips = jax.lax.stop_gradient(jnp.trunc(_precision.div(a, jnp.asarray(twice, a.dtype))))
    extra = _fma(flips, -twice, a)
    reflected = twice - extra
    out = jnp.where(extra > reflected, reflected, extra)
    return out + low if low else out


def _index(c):
    """Integer coordinates as the vectorized sampler converts them (``cvtt``): NaN, infinities and values outside
    int32 become INT_MIN, outside every image."""
    if float(jnp.finfo(c.dtype).max) >= 2.0 ** 31:
        ok = (c >= -2.0 ** 31) & (c < 2.0 ** 31)
    else:  # (float16: every finite value fits)
        ok = jnp.isfinite(c)
    return jnp.where(ok, c.astype(jnp.int32), jnp.int32(np.iinfo(np.int32).min))


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(c)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = c - lo
    c = jnp.where(c < 0, -c, c)
    extra = jnp.fmod(c, span)
    flips = jnp.floor(_precision.div(c, span))  # (one division: XLA's reciprocal made float16 11 / 11 < 1)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _pad_coords(c, size, padding_mode, align_corners, vectorized=False):
    """compute_coordinates: apply the padding mode to (unnormalised) coordinates. The scalar sampler (3-d) then
    sends non-finite and out-of-int-range coordinates to -100 (``safe_downgrade_to_int_range``); the vectorized
    2-d sampler keeps them (NaN weights make NaN outputs with zeros padding; :func:`_index` converts them)."""
    if vectorized:
        if padding_mode == "border":
            return _clip(c, size, True)
        if padding_mode == "reflection":
            return _clip(_reflect_vectorized(c, size, align_corners), size, True)
        return c
    if padding_mode == "border":
        c = _clip(c, size)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = _clip(c, size)
    big = min(float(np.iinfo(np.int32).max), float(jnp.finfo(c.dtype).max))  # (float16: a bound it can hold)
    return jnp.where(jnp.isfinite(c) & (c <= big - 1) & (c >= -big), c, jnp.asarray(-100.0, c.dtype))


def _gather(x, idx, sizes):
    """Values of x (N, C, *S) at integer coordinates ``idx`` (one (N, *O, T) array per spatial dim, T taps per
    output point), 0 outside the image: (N, C, *O, T). One gather for all taps keeps the program small."""
    n, c = x.shape[:2]
    valid = jnp.ones(idx[0].shape, bool)
    lin = jnp.zeros(idx[0].shape, jnp.int32)
    for i, s in zip(idx, sizes):
        valid = valid & (i >= 0) & (i < s)
        lin = lin * s + jnp.clip(i, 0, s - 1)
    vals = jax.vmap(lambda f, l: f[:, l.reshape(-1)])(x.reshape(n, c, -1), lin)        # (N, C, P)
    vals = vals.reshape((n, c) + idx[0].shape[1:])
    return jnp.where(valid[:, None], vals, jnp.zeros((), x.dtype))


def _cubic_coeffs(t, a=-0.75):
    """PyTorch's cubic convolution coefficients of the 4 taps around fraction t, stacked on a last axis."""
    def conv1(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def conv2(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return jnp.stack([conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)], axis=-1)


def _linear_taps(coords):
    """Corner indices (per dim, (N, *O, 2**k)) and their (multi)linear weights (N, *O, 2**k)."""
    k = len(coords)
    bits = np.array(list(itertools.product((0, 1), repeat=k)), np.int32)                # (T, k)
    idx, w = [], 1
    for d, c in enumerate(coords):
        lo = jnp.floor(c)[..., None]
        b = jnp.asarray(bits[:, d])
        idx.append(_index(lo) + b)
        w = w * jnp.where(b == 1, c[..., None] - lo, lo + 1 - c[..., None])
    return idx, w


def _bicubic_taps(iy, ix, sizes, padding_mode, align_corners):
    """The 4 x 4 taps of bicubic sampling; each tap coordinate gets the padding mode on its own, as PyTorch."""
    offs = jnp.arange(-1, 3, dtype=iy.dtype)
    y0, x0 = jnp.floor(iy), jnp.floor(ix)
    ty = _index(_pad_coords(y0[..., None] + offs, sizes[0], padding_mode, align_corners, True))
    tx = _index(_pad_coords(x0[..., None] + offs, sizes[1], padding_mode, align_corners, True))
    shape = iy.shape + (16,)
    idx = [jnp.broadcast_to(ty[..., :, None], iy.shape + (4, 4)).reshape(shape),
           jnp.broadcast_to(tx[..., None, :], iy.shape + (4, 4)).reshape(shape)]
    w = (_cubic_coeffs(iy - y0)[..., :, None] * _cubic_coeffs(ix - x0)[..., None, :]).reshape(shape)
    return idx, w


def _grid_sample_fwd(x, grid, *, mode, padding_mode, align_corners):
    sizes = x.shape[2:]
    k = len(sizes)
    # grid's last dim is (x, y[, z]): reversed relative to the spatial dims (..., H, W)
    raw = [grid[..., k - 1 - d] for d in range(k)]
    if mode == "bicubic" and x.dtype in _precision.LOW:  # (rounded per operation, as PyTorch's half kernel)
        return _grid_half.bicubic(x, grid, padding_mode, align_corners)
    if mode == "bicubic":
        iy, ix = (_unnormalize(c, s, align_corners, True) for c, s in zip(raw, sizes))
        idx, w = _bicubic_taps(iy, ix, sizes, padding_mode, align_corners)
    else:
        coords = [_pad_coords(_unnormalize(c, s, align_corners, k == 2), s, padding_mode, align_corners, k == 2)
                  for c, s in zip(raw, sizes)]
        if mode == "nearest":
            return _gather(x, [_index(jnp.round(c))[..., None] for c in coords], sizes)[..., 0]
        idx, w = _linear_taps(coords)
    return jnp.sum(_gather(x, idx, sizes) * w[:, None], axis=-1)


_GRID_SAMPLE = {k: defop(f"grid_sampler_{k}d", _grid_sample_fwd, grad_name=f"GridSampler{k}DBackward0")
                for k in (2, 3)}
_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) / (N, C, D, H, W) at the normalised coordinates of ``grid`` (N, ..., 2|3)."""
    need_tensor("grid_sampler", input)
    need_tensor("grid_sampler", grid, "grid", 2)
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    need_bool("grid_sampler", align_corners, "align_corners", 5)
    if _registry.autocast_hook is not None:  # autocast casts before the dtype check
        input, grid = _registry.autocast_hook(f"grid_sampler_{3 if input.ndim == 5 else 2}d", (input, grid))
    xs, gs = list(input.shape), list(grid.shape)
    # PyTorch's order: the checks every sampler shares (batch, grid's last size, empty spatial dims), then the 2-d
    # sampler's (4-D input, grid of as many dims) or, for any other input, the 3-d sampler's
    if xs[:1] != gs[:1]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {xs} and grid with sizes {gs}")
    if gs[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {gs}")
    if any(n == 0 for n in xs[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                           f"sizes {xs} with dimension {2 + [n == 0 for n in xs[2:]].index(True)} being empty")
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        nd = 4 if input.ndim == 4 else 5
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number of dimensions, but got "
                           f"input with sizes {xs} and grid with sizes {gs}")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype.category != _dtype._FLOAT:
        kname = "grid_sampler_2d_cpu_kernel_impl" if input.ndim == 4 else "grid_sampler3d_cpu"  # (PyTorch's names)
        raise NotImplementedError(f'"{kname}" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    if input.dtype != grid.dtype:  # (PyTorch's kernel reads the grid as the input's dtype)
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(grid.dtype)}")
    return apply(_GRID_SAMPLE[input.ndim - 2], (input, grid), mode=mode, padding_mode=padding_mode,
                 align_corners=bool(align_corners))


# ----------------------------------------------------------------------------------------------------------------
# affine_grid


def _linspace(n, align_corners, dt):
    """PyTorch's ``linspace_from_neg_one``: its CPU linspace from -1 to 1 in the grid's dtype, then (without
    align_corners) ``range * (n - 1) / n``, each rounded to that dtype (float16/bfloat16 computed in float32), so
    that the grid's points are PyTorch's to the bit: a point a rounding below a pixel centre instead of on it
    floors to the pixel before, and grid_sample's gradient then looks at the other neighbour."""
    if n <= 1:
        return np.zeros(1, dt.np)
    r = _linspace_real(-1.0, 1.0, n, dt)
    if not align_corners:
        wide = r.dtype.type if dt in (_dtype.float32, _dtype.float64) else np.float32
        r = (r.astype(wide) * wide(n - 1)).astype(dt.np)
        r = (r.astype(wide) / wide(n)).astype(dt.np)
    return r


def _affine_grid_fwd(theta, *, size, align_corners):
    dt = _dtype.from_np(theta.dtype)
    spatial = size[2:]
    axes = [_linspace(s, align_corners, dt) for s in spatial]            # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack(list(reversed(mesh)) + [np.ones_like(mesh[0])], axis=-1)  # (..., k + 1) as (x, y[, z], 1)
    base = jnp.asarray(base.reshape(-1, base.shape[-1]), theta.dtype)
    out = jnp.einsum("pk,nck->npc", base, theta, precision=_precision.matmul())
    return out.reshape((theta.shape[0],) + tuple(spatial) + (len(spatial),))


_AFFINE_GRID = defop("affine_grid_generator", _affine_grid_fwd, grad_name="AffineGridGeneratorBackward0")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) / (N, D, H, W, 3) of a batch of affine matrices ``theta``."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    need_int_list("affine_grid_generator", size, "size", 2)
    given, size = size, tuple(int(s) for s in size)  # (the messages show the size as given: tuple, list or Size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, "
                           f"{theta.shape[2]}] but got: [{theta.shape[0]}, {theta.shape[2]}].")
    return apply(_AFFINE_GRID, (theta,), size=size, align_corners=bool(align_corners))
