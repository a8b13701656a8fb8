"""torchish.nn.functional: padding, resizing and resampling — ``pad``, ``interpolate`` (and the ``upsample``
aliases) and ``one_hot``; ``grid_sample``/``affine_grid``, ``unfold``/``fold`` and the distance functions live in
``grid.py``, ``fold.py`` and ``distance.py`` and are re-exported here.

``interpolate`` is separable: along each spatial dimension every output element is a weighted sum of a few input
elements ("taps"). The taps are computed with PyTorch's own index/coordinate formulas (in float32 where PyTorch's
kernels use float) from the static shapes while tracing, so they are constants of the cached kernel; the gradient
is the transpose of that gather, as in PyTorch.
"""
from __future__ import annotations

import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype
from ...autograd.grad_mode import STATE
from ...ops.casting import cast, check_scalar_fits
from ...ops.elementwise import require_int
from ...ops.registry import apply, defop
from . import _uint8_resize
from ._antialias import aa_taps
from ._loss_util import concrete
from .distance import normalize, cosine_similarity, pairwise_distance, pdist, cdist
from .fold import unfold, fold
from .grid import grid_sample, affine_grid
from ._pool_windows import pool_node
from .pooling_adaptive import _adaptive_avg
from ._args import need_int_list, need_number, need_tensor

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "one_hot", "grid_sample",
           "affine_grid", "unfold", "fold", "normalize", "cosine_similarity", "pairwise_distance", "pdist", "cdist"]


# ----------------------------------------------------------------------------------------------------------------
# pad


def _pad_index(n, lo, hi, mode):
    """Source index of each output position along one dimension (numpy), for the non-constant modes."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        return np.where(i >= n, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    # circular: negative amounts crop first, then the cropped range wraps around
    a, b = max(-lo, 0), n - max(-hi, 0)
    j = np.arange(max(lo, 0) + (b - a) + max(hi, 0)) - max(lo, 0)
    return a + np.mod(j, b - a)


def _pad_fwd(x, *, pads, mode, value):
    """``pads``: ((lo, hi), ...) for the last len(pads) dimensions, outermost first."""
    lead = x.ndim - len(pads)
    if mode == "constant":
        cfg = [(0, 0, 0)] * lead + [(lo, hi, 0) for lo, hi in pads]
        return jax.lax.pad(x, jnp.asarray(value, x.dtype), cfg)
    for k, (lo, hi) in enumerate(pads):
        axis = lead + k
        x = jnp.take(x, jnp.asarray(_pad_index(x.shape[axis], lo, hi, mode)), axis=axis)
    return x


_PAD = defop("constant_pad_nd", _pad_fwd, grad_name="ConstantPadNdBackward0")
# (PyTorch's circular padding copies the input and its wrapped edges into slices of an empty tensor: CopySlices)
_PAD_GRAD_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0",
                   "circular": "CopySlices"}
_PAD_OPS = {}

_NONCONSTANT_HELP = ("Supported combinations for non-constant padding:\n"
                     "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                     "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                     "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_op(mode, nd):
    if mode == "constant":
        return _PAD
    key = (mode, nd)
    if key not in _PAD_OPS:
        _PAD_OPS[key] = defop(f"{mode}_pad{nd}d", _pad_fwd, grad_name=_PAD_GRAD_NAMES[mode].format(nd))
    return _PAD_OPS[key]


def _too_small_message(mode, sizes, outs):
    """The reflection and replication kernels' refusal of padding that leaves no output, in each one's words."""
    names = ("D", "H", "W")[3 - len(sizes):]
    ins = [f"{a}: {n}" for a, n in zip(names, sizes)]
    shown = ", ".join(ins) if len(sizes) == 2 else " ".join(ins[:-1]) + (", " if len(sizes) == 3 else "") + ins[-1]
    if mode == "replicate" and len(sizes) == 2:
        shown += " "
    return f"input ({shown}) is too small. Calculated output " + " ".join(f"{a}: {o}" for a, o in zip(names, outs))


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions.

    ``pad`` lists (left, right) amounts starting from the LAST dimension, as in PyTorch.
    """
    pads, k = check_pad(input, pad, mode, value)
    # ``value`` is a float (PyTorch's signature), converted to the input's type, checked (-1 into uint8 fails)
    v = 0 if value is None else check_scalar_fits(float(value) if isinstance(value, int) else value, input.dtype)
    if input.dtype in _dtype.FLOAT8:  # (its padding is a fill: 0 does not fit float8_e8m0fnu)
        check_scalar_fits(v, input.dtype, numel=0)
    if input.dtype == _dtype.bool:
        v = bool(v)
    elif input.dtype.category < _dtype._FLOAT:
        with jax.ensure_compile_time_eval():  # (a constant: concrete under torchish.compile's trace too)
            v = int(cast(np.float64(v), input.dtype.np))  # (2 ** 63 into int64: its minimum, as PyTorch's x86 build)
    if mode == "circular" and input.requires_grad and STATE.grad_enabled and input.dtype in (_dtype.float32,
                                                                                             _dtype.float64):
        from .pad_circular import pad_circular_graph  # (ATen's copies into slices: its CopySlices chain)
        return pad_circular_graph(input, tuple(int(p) for p in pad))
    return apply(_pad_op(mode, k), (input,), pads=pads, mode=mode, value=v)


def check_pad(input, pad, mode="constant", value=None):
    """``F.pad``'s refusals, in PyTorch's order and words (the Conv modules' non-zero padding modes pad first too);
    returns the (low, high) pairs, outermost padded dimension first, and their count."""
    need_tensor("pad", input)
    need_int_list("pad", pad, "pad", 2)
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}")
    if value is not None:
        need_number("pad", value, "value", 4, kind="float")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.ndim
    if len(pad) > 2 * nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {nd}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    pads = tuple((pad[2 * (k - 1 - j)], pad[2 * (k - 1 - j) + 1]) for j in range(k))  # outermost first
    shape = list(input.shape)
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if not ((k == 1 and nd in (2, 3)) or (k == 2 and nd in (3, 4)) or (k == 3 and nd in (4, 5))):
            raise NotImplementedError(f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
                                      + _NONCONSTANT_HELP)
        if mode != "circular" and 0 in shape[nd - k - 1 if nd == k + 2 else 0:]:
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                               f"other non-zero dimensions for input, but got: {shape}")
        for j, (lo, hi) in reversed(list(enumerate(pads))):  # (the kernels check the last dimension first)
            d = nd - k + j
            n = shape[d]
            if mode == "reflect" and (lo >= n or hi >= n):  # (its pads are arguments #4, #6, #8 from the last)
                raise RuntimeError(f"Argument #{4 + 2 * (k - 1 - j)}: Padding size should be less than the "
                                   f"corresponding input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                                   f"of input {shape}")
            if mode == "circular" and (lo > n or hi > n):
                raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode in ("reflect", "replicate") and input.dtype is _dtype.bool and input.numel():
            kind = "reflection" if mode == "reflect" else "replication"
            raise NotImplementedError(f'"{kind}_pad{k}d" not implemented for \'Bool\'')
    out_shape = shape[:nd - k] + [shape[nd - k + j] + lo + hi for j, (lo, hi) in enumerate(pads)]
    if mode in ("reflect", "replicate") and all(s < 1 for s in out_shape[nd - k:]):
        raise RuntimeError(_too_small_message(mode, shape[nd - k:], out_shape[nd - k:]))
    if any(s < 0 for s in out_shape):
        if mode == "circular":
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if mode == "constant":
            raise RuntimeError("narrow(): length must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out_shape)}: {out_shape}")
    return pads, k


# ----------------------------------------------------------------------------------------------------------------
# interpolate: taps (index, weight) per output position along one dimension, with PyTorch's formulas


def _scale_value(scale, n_in, n_out, f):
    """compute_scales_value: 1/scale_factor when one was given, else in/out (in the kernel's float type f)."""
    if scale is not None and scale > 0:
        return f(1.0 / scale)
    return f(n_in) / f(n_out)


def _area_scale(n_in, n_out, align_corners, scale, f):
    if align_corners:
        return f(n_in - 1) / f(n_out - 1) if n_out > 1 else f(0)
    return _scale_value(scale, n_in, n_out, f)


def _source_index(ratio, dst, align_corners, cubic, f):
    if align_corners:
        return ratio * dst.astype(f)
    src = ratio * (dst.astype(f) + f(0.5)) - f(0.5)
    return src if cubic else np.where(src < 0, f(0), src).astype(f)


def _cubic_coeffs(t, a=-0.75):
    """PyTorch's cubic convolution coefficients (A = -0.75) for the 4 taps around a fractional offset t."""
    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)]


def _guard(real, n_in, f):
    """guard_index_and_lambda: the lower index (at most n_in - 1) and the clamped fraction."""
    idx = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lam = np.minimum(np.maximum(real - idx.astype(f), f(0)), f(1)).astype(f)
    return idx, lam


def _taps(mode, n_in, n_out, align_corners, scale, f):
    """(index (n_out, K), weight (n_out, K) or None) along one dimension."""
    dst = np.arange(n_out)
    if mode.startswith("aa_"):
        return aa_taps(mode[3:], n_in, n_out, align_corners, scale, f)
    if mode in ("nearest", "nearest-exact"):
        s = _scale_value(scale, n_in, n_out, np.float32)
        if mode == "nearest":
            if n_out == n_in:
                idx = dst
            elif n_out == 2 * n_in:
                idx = dst >> 1
            else:
                idx = np.minimum(np.floor(dst.astype(np.float32) * s).astype(np.int64), n_in - 1)
        else:
            real = ((dst + 0.5) * np.float64(s)).astype(np.float32)
            idx = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
        return idx[:, None], None
    if mode == "area":  # adaptive average pooling windows
        start = np.floor((dst * n_in).astype(np.float32) / np.float32(n_out)).astype(np.int64)
        end = np.ceil(((dst + 1) * n_in).astype(np.float32) / np.float32(n_out)).astype(np.int64)
        k = int((end - start).max())
        offs = np.arange(k)[None, :]
        inside = offs < (end - start)[:, None]
        idx = np.where(inside, start[:, None] + offs, start[:, None])
        w = np.where(inside, f(1) / (end - start)[:, None].astype(f), f(0)).astype(f)
        return idx, w
    ratio = _area_scale(n_in, n_out, align_corners, scale, f)
    if mode == "linear":
        if n_out == n_in:
            return np.stack([dst, dst], 1), np.stack([np.ones(n_out, f), np.zeros(n_out, f)], 1)
        i0, l1 = _guard(_source_index(ratio, dst, align_corners, False, f), n_in, f)
        i1 = i0 + (i0 < n_in - 1)
        return np.stack([i0, i1], 1), np.stack([f(1) - l1, l1], 1).astype(f)
    # cubic
    i0, t = _guard(_source_index(ratio, dst, align_corners, True, f), n_in, f)
    idx = np.stack([np.clip(i0 - 1 + j, 0, n_in - 1) for j in range(4)], 1)
    return idx, np.stack(_cubic_coeffs(t), 1).astype(f)


@jax.custom_vjp
def _first_row_everywhere(x):
    return jnp.broadcast_to(x[:, :, :1], x.shape)


# the gradient stays the true adjoint of the resize: PyTorch's backward kernel has no such quirk
_first_row_everywhere.defvjp(lambda x: (_first_row_everywhere(x), None), lambda _, g: (g,))


def _nearest_plain(n_in, n_out, scale):
    """PyTorch's 1-d and 3-d nearest forward kernels: ``floor(dst * (1 / scale))`` for every size, without
    ``nearest_idx``'s exact shortcuts for an unchanged or doubled size (its 2-d kernel and every backward take them)."""
    s = _scale_value(scale, n_in, n_out, np.float32)
    return np.minimum(np.floor(np.arange(n_out).astype(np.float32) * s).astype(np.int64), n_in - 1)


def _take_with_other_adjoint(x, axis, fwd_idx, bwd_idx):
    """``take(x, fwd_idx, axis)`` whose gradient scatters to ``bwd_idx`` instead: PyTorch's 1-d/3-d nearest
    resizes with a scale factor read their input at :func:`_nearest_plain` but send the gradient back through
    ``nearest_idx``, and torchish gives both of PyTorch's numbers."""
    fwd, bwd = jnp.asarray(fwd_idx), jnp.asarray(bwd_idx)

    @jax.custom_vjp
    def take(v):
        return jnp.take(v, fwd, axis=axis)

    def take_bwd(_, g):
        where = (slice(None),) * axis + (bwd,)
        return (jnp.zeros(x.shape, g.dtype).at[where].add(g),)
    take.defvjp(lambda v: (take(v), None), take_bwd)
    return take(x)


def _interp_fwd(x, *, mode, size, align_corners, scales, antialias, first_row=False):
    f = np.float64 if x.dtype == jnp.float64 else np.float32
    orig = x.dtype
    if orig in (jnp.float16, jnp.bfloat16):
        x = x.astype(jnp.float32)
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    if antialias:
        kind = "aa_" + kind
    for d, n_out in enumerate(size):
        axis = 2 + d
        n_in = x.shape[axis]
        if antialias and n_in == n_out:  # PyTorch's separable anti-aliasing kernel skips unchanged dimensions
            continue
        scale = None if scales is None else scales[d]
        idx, w = _taps(kind, n_in, n_out, align_corners, scale, f)
        if kind == "nearest" and len(size) != 2 and scale is not None:
            plain = _nearest_plain(n_in, n_out, scale)
            if not np.array_equal(plain, idx[:, 0]):
                x = _take_with_other_adjoint(x, axis, plain, idx[:, 0])
                continue
        g = jnp.take(x, jnp.asarray(idx.reshape(-1)), axis=axis)
        g = g.reshape(x.shape[:axis] + idx.shape + x.shape[axis + 1:])
        if w is None:
            x = jnp.squeeze(g, axis + 1)
        else:
            wj = jnp.asarray(w, x.dtype).reshape(w.shape + (1,) * (x.ndim - axis - 1))
            x = jnp.sum(g * wj, axis=axis + 1)
    if first_row:
        x = _first_row_everywhere(x)
    return x.astype(orig)


_INTERP_NAMES = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
                 "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
                 "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
                 "area": "AdaptiveAvgPool{}DBackward0"}
_INTERP_OPS = {}


def _interp_op(mode, nd, antialias):
    key = (mode, nd, antialias)
    if key not in _INTERP_OPS:
        aa = "_aa" if antialias else ""
        name = _INTERP_NAMES[mode].format(nd).replace("Backward0", "AaBackward0" if antialias else "Backward0")
        if mode == "area":  # (adaptive average pooling: a 1-d input pooled by the 2-d kernel, then squeezed)
            name = pool_node(nd, name)
        _INTERP_OPS[key] = defop(f"upsample_{mode}{nd}d{aa}", _interp_fwd, grad_name=name)
    return _INTERP_OPS[key]


_MODE_DIMS = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
# the name in PyTorch's CPU kernel's dtype error, by mode and input rank (the 2-d nearest and bilinear kernels
# dispatch under their channels-last names, the others in the shared index/weight helpers)
_KERNEL_NAMES = {"nearest": {4: "upsample_nearest2d_channels_last"},
                 "nearest-exact": {4: "upsample_nearest2d_channels_last"}, "linear": {}, "bilinear": {4: "upsample_bilinear2d_channels_last"}, "trilinear": {}, "bicubic": {},
                 "area": {5: "adaptive_avg_pool3d_cpu"}}
_HELPER_NAMES = {"nearest": "compute_indices_weights_nearest", "nearest-exact": "compute_indices_weights_nearest",
                 "linear": "compute_indices_weights_linear", "bilinear": "compute_indices_weights_linear",
                 "trilinear": "compute_indices_weights_linear", "bicubic": "compute_indices_weights_cubic",
                 "area": "adaptive_avg_pool2d"}


def _is_int(v):
    return isinstance(v, numbers.Integral) or (hasattr(v, "__index__") and not isinstance(v, float))


def _size_type_error(mode, dim, size):
    """PyTorch's wrapper passes a single non-integer ``size`` on as a list, which the kernel's argument parser
    refuses (area mode: adaptive average pooling's parser)."""
    if mode == "area":
        return TypeError(f"adaptive_avg_pool{dim}d(): argument 'output_size' (position 2) must be tuple of ints, but "
                         f"found element of type {type(size).__name__} at pos 0")
    kernel = f"_upsample_nearest_exact{dim}d" if mode == "nearest-exact" else f"upsample_{mode}{dim}d"
    got = "Tensor, list, NoneType" if mode.startswith("nearest") else "Tensor, list, bool, NoneType"
    return TypeError(f"{kernel}() received an invalid combination of arguments - got ({got}), but expected one of:")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize the spatial dimensions of (N, C, d1, ...) ``input`` with PyTorch's index formulas."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {spatial} and output size of {size}. Please provide input "
                                 "tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_int(v) for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(v) for v in size]}")
            out_size = [int(v) for v in size]
        else:
            out_size = [int(size)] * dim
    elif scale_factor is not None:
        out_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {spatial} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scales = list(scale_factor)
        else:
            scales = [scale_factor] * dim
        for s in scales:  # (PyTorch's upsampling op's parser: a tuple of floats, no Tensor)
            if not isinstance(s, (numbers.Real, np.floating, np.integer)):
                raise TypeError(f"interpolate(): scale_factor must be a float or a tuple of floats, but got an "
                                f"element of type {type(s).__name__}")
        scales = [float(s) for s in scales]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out_size = [int(n * s) for n, s in zip(spatial, scales)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    need = _MODE_DIMS.get(mode)
    if mode not in _KERNEL_NAMES or input.ndim not in (3, 4, 5) or (need is not None and input.ndim != need):
        if need is not None and mode != "bicubic" and input.ndim in (3, 4, 5):
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need}D input")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if size is not None and not isinstance(size, (list, tuple)) and not _is_int(size):
        raise _size_type_error(mode, dim, size)
    if out_size is None:
        out_size = [int(n * s) for n, s in zip(spatial, scales)]
    if any(s <= 0 for s in out_size) or any(s <= 0 for s in spatial):
        if mode == "area":  # PyTorch's adaptive average pooling: an empty output, or its errors
            return _adaptive_avg(dim, input, out_size)
        names = "DHW"[3 - dim:]
        src = ", ".join(f"{c}: {n}" for c, n in zip(names, spatial))
        dst = ", ".join(f"{c}: {n}" for c, n in zip(names, out_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({src}) "
                           f"{'and ' if dim == 1 else ''}output ({dst})")
    if input.numel() == 0:
        if mode == "area":  # (its kernel's checks of the dims after the batch)
            return _adaptive_avg(dim, input, out_size)
        if 0 in input.shape[1:]:  # PyTorch's upsample kernels allow an empty batch only
            raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                               f"{list(input.shape)}")
    if input.dtype == _dtype.uint8 and (mode in ("nearest", "nearest-exact") or (mode in _UINT8_MODES and dim == 2)):
        return _interpolate_uint8(input, out_size, scales, mode, align_corners, antialias)
    if input.dtype.category != _dtype._FLOAT:
        kname = _KERNEL_NAMES[mode].get(input.ndim, _HELPER_NAMES[mode])
        raise NotImplementedError(f'"{kname}" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    if antialias and input.dtype in (_dtype.float16, _dtype.bfloat16) and list(out_size) != list(spatial):
        # (PyTorch's CPU anti-aliasing weights have no half version; an unchanged size never computes them)
        raise NotImplementedError(f'"compute_index_ranges_weights" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    # PyTorch's CPU anti-aliasing kernel, resizing the height of a (contiguous) one-pixel-wide image, gives every
    # output row the first row's taps: each row comes out equal to the first
    quirk = bool(antialias) and out_size[1] == 1 and out_size[0] != spatial[0]
    return _resample(input, mode, out_size, align_corners, scales, antialias, first_row=quirk)


def _resample(input, mode, out_size, align_corners, scales, antialias, first_row=False):
    return apply(_interp_op(mode, input.ndim - 2, bool(antialias)), (input,), mode=mode, size=tuple(out_size),
                 align_corners=bool(align_corners) if align_corners is not None else False,
                 scales=None if scales is None else tuple(scales), antialias=bool(antialias), first_row=first_row)


_UINT8_MODES = ("bilinear", "bicubic")


def _interpolate_uint8(input, out_size, scales, mode, align_corners, antialias):
    """uint8 images, as PyTorch's CPU kernels take them: nearest modes pick pixels; bilinear and bicubic resize in
    integer arithmetic (:mod:`._uint8_resize`)."""
    if mode in ("nearest", "nearest-exact"):
        size = out_size if scales is None else None
        return interpolate(input.float(), size, scales, mode).to(_dtype.uint8)
    return apply(_uint8_resize.RESIZE, (input,), kind="linear" if mode == "bilinear" else "cubic",
                 size=tuple(out_size), align_corners=bool(align_corners),
                 scales=(None, None) if scales is None else tuple(scales), antialias=bool(antialias))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----------------------------------------------------------------------------------------------------------------
# one_hot


_ONE_HOT = defop("one_hot", lambda t, *, n: (t[..., None] == jnp.arange(n)).astype(jnp.int64), differentiable=False)


def one_hot(input, num_classes=-1):
    """Long tensor of shape ``input.shape + (num_classes,)``; ``num_classes=-1`` infers ``max + 1``.
    (PyTorch's documentation names the argument ``tensor``; its parser takes ``input=``.)"""
    tensor = input
    need_tensor("one_hot", tensor)
    require_int(num_classes, "one_hot", 2, "num_classes")
    if tensor.dtype != _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    v = concrete(tensor)
    if v is None and num_classes == -1:
        from ...ops.tracing import concrete_error
        raise concrete_error("one_hot with num_classes=-1")
    if v is None and isinstance(tensor._d, jax.core.Tracer):  # (checked before torchish.compile's program runs)
        from ...ops.tracing import defer_check
        d = tensor._d
        defer_check(d < 0, d, RuntimeError, lambda b: "Class values must be non-negative.")
        defer_check(d >= num_classes, d, RuntimeError, lambda b: "Class values must be smaller than num_classes.")
    if v is not None and v.size == 0 and num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if v is not None and v.size:
        if v.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(v.max()) + 1
        elif v.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return apply(_ONE_HOT, (tensor,), n=int(num_classes))

