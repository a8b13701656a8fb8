"""torchish.nn.functional: max, average and LP pooling in 1, 2 and 3 dimensions (adaptive pooling and max-unpooling
live in ``pooling_adaptive.py``, fractional max pooling in ``pooling_fractional.py``; both are re-exported here).

Windows follow PyTorch's geometry exactly: ``ceil_mode`` output sizes, ``count_include_pad`` and
``divisor_override`` divisors, and indices into the flattened spatial dims of each ``(n, c)`` plane. Max pooling
picks the first maximum of a window, so the gradient goes to that one position.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _dtype, _precision
from ..._tensor import Tensor
from ...ops.elementwise import not_implemented, out_structured
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from . import pooling_adaptive as _adaptive
from ._pool_windows import _reduce_max_fwd, _window_max_fwd, out_size, pool_node
from .conv import ntuple
from . import pooling_fractional as _fractional
from .pooling_adaptive import *  # noqa: F401,F403  (one namespace for all pooling functions)
from .pooling_fractional import *  # noqa: F401,F403
from ._args import need_bool, need_int, need_tensor, need_tensor_attr

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d"] + _adaptive.__all__ + _fractional.__all__

_WORDS = {1: "one", 2: "two", 3: "three"}


_MAXPOOL_IDX = {nd: defop(f"max_pool{nd}d_with_indices", _window_max_fwd,
                          grad_name=pool_node(nd, f"MaxPool{nd}DWithIndicesBackward0")) for nd in (1, 2, 3)}
_MAXPOOL = {nd: defop(f"max_pool{nd}d", _reduce_max_fwd, grad_name=pool_node(nd, f"MaxPool{nd}DWithIndicesBackward0"))
            for nd in (1, 2, 3)}


def _check_input(input, nd, name, indices):
    """PyTorch's refusal of an input of the wrong rank, or with an empty non-batch dimension, worded by the kernel
    that meets it: ``max_pool1d`` without indices has its own check; 1-d pooling with indices and average pooling
    run the 2-d kernels on an unsqueezed input; the 3-d kernels name themselves."""
    shape, avg = list(input.shape), name.startswith("avg")
    rank_ok = input.ndim in (nd + 1, nd + 2)
    empty = rank_ok and 0 in shape[-nd - 1:]
    if rank_ok and not empty:
        return
    if name == "max_pool1d" and not indices:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{shape}")
    if nd == 1 and not rank_ok:
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")
    if nd < 3 and (empty or avg):
        shown = shape[:-1] + [1] + shape[-1:] if nd == 1 else shape
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{shown}")
    if empty:
        kernel = "avg_pool3d" if avg else "max_pool3d_with_indices_out_cpu_template"
        raise RuntimeError(f"{kernel}(): Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {shape} and non-batch dimension 0 has length zero!")
    raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")


def _check_avg_rank(nd, input):
    """``avg_pool1d`` and ``avg_pool2d`` (and the LP pooling built on them) refuse a too-low rank first."""
    if nd == 1 and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    if nd == 2 and input.ndim == 0:
        raise IndexError("Dimension specified as -3 but tensor has no dimensions")
    if nd == 2 and input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{input.ndim}, {input.ndim - 1}], "
                         "but got -3)")


def _check_avg_dtype(nd, dt):
    """PyTorch's CPU average-pooling kernels: floats and int64 (3-D: no half floats)."""
    if dt not in (_dtype.float32, _dtype.float64, _dtype.int64) + ((_dtype.float16, _dtype.bfloat16) if nd < 3 else ()):
        raise not_implemented("avg_pool3d_out_frame" if nd == 3 else "avg_pool2d", dt)


def _need_ints(name, **args):
    """PyTorch's argument parser: each window argument (positions 2 on) is an int or a sequence of ints (a bool
    alone or first, or a Tensor of more than one element, is none)."""
    for pos, (arg, v) in enumerate(args.items(), 2):
        for i, e in enumerate(v if isinstance(v, (list, tuple)) else [v]):
            if e is not None and (not hasattr(e, "__index__") or isinstance(e, bool) and i == 0 or
                                  isinstance(e, Tensor) and e.numel() != 1):
                raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, not "
                                f"{type(e).__name__}")


def _padding_error(name, kernel, padding, dilation, indices):
    """PyTorch's message for a padding that is negative or more than half the kernel. A padding more than half the
    dilated kernel fails a first check; one within that but more than half the kernel itself fails the check of the
    kernel that runs, each worded its own way (``max_pool1d`` without indices, the 2-d kernel that 1-d pooling
    with indices runs on, the 3-d one)."""
    if name == "max_pool1d" and not indices:
        return (f"max_pool1d() padding must be non-negative, but got {padding[0]}" if padding[0] < 0 else
                f"max_pool1d() padding should be at most half of kernel size, but got padding={padding[0]} and "
                f"kernel_size={kernel[0]}")
    if min(padding) < 0:
        return f"pad must be non-negative, but got pad: {min(padding)}"
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            return (f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and "
                    f"dilation={d}")
    if len(kernel) == 3:
        return ("pad should be smaller than or equal to half of kernel size, but got "
                f"kT: {kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {padding[0]} padW: {padding[2]} "
                f"padH: {padding[1]}")
    (kh, kw), (ph, pw) = ((1,) + kernel, (0,) + padding) if len(kernel) == 1 else (kernel, padding)
    return (f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, padH = {ph}, "
            f"kW = {kw}, kH = {kh}")


def _check_window(name, indices, kernel, stride, dilation):
    """PyTorch's checks of the window sizes. ``max_pool1d`` without indices has its own; the others run a 2-d kernel
    (1-d pooling on an unsqueezed input, so with a height of 1) or a 3-d one, which divides by the stride first."""
    if name == "max_pool1d" and not indices:
        for what, v in (("kernel_size", kernel[0]), ("stride", stride[0]), ("dilation", dilation[0])):
            if v <= 0:
                raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
        return
    if len(kernel) == 1:
        kernel, stride, dilation = (1,) + kernel, (1,) + stride, (1,) + dilation
    axes = ("T", "H", "W")[3 - len(kernel):]
    if 0 in stride:
        raise RuntimeError("stride should not be zero")
    for what, prefix, t in (("kernel size", "k", kernel), ("stride", "d", stride), ("dilation", "dilation", dilation)):
        if any(v <= 0 for v in t):
            raise RuntimeError(f"{what} should be greater than zero, but got " +
                               " ".join(f"{prefix}{a}: {v}" for a, v in zip(axes, t)))


def _pool_geometry(input, nd, name, kernel_size, stride, padding, dilation, ceil_mode, indices=False):
    _need_ints(name, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    if name == "avg_pool1d":  # (its parser takes one-int lists)
        for arg, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
            if isinstance(v, (list, tuple)) and len(v) != 1 and not (arg == "stride" and len(v) == 0):
                raise RuntimeError(f"avg_pool1d() argument '{arg}' should contain one int (got {len(v)})")
    kernel = ntuple(kernel_size, nd)
    if len(kernel) == 1 and nd > 1:
        kernel = kernel * nd
    if len(kernel) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single int, or a tuple of {_WORDS[nd]} ints")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else ntuple(stride, nd)
    stride, padding, dilation = [t * nd if len(t) == 1 else t for t in
                                 (stride, ntuple(padding, nd), ntuple(dilation, nd))]
    for nm, t in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        if len(t) != nd:
            raise RuntimeError(f"{name}: {nm} must either be omitted, a single int, or a tuple of {_WORDS[nd]} ints")
    _check_window(name, indices, kernel, stride, dilation)
    _check_input(input, nd, name, indices)
    sp = tuple(input.shape[-nd:])
    if name == "avg_pool3d" and any(n < k for n, k in zip(sp, kernel)):
        raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than kernel size "
                           f"(kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if any(p < 0 or p > k // 2 for k, p in zip(kernel, padding)):  # the kernel's size, not its dilated extent
        raise RuntimeError(_padding_error(name, kernel, padding, dilation, indices))
    outs = tuple(out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in zip(sp, kernel, stride, padding, dilation))
    if any(o < 1 for o in outs):
        if name == "max_pool1d" and not indices:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {outs[0]}")
        c, shown_sp, shown_outs = input.shape[-nd - 1], sp, outs
        if nd == 1:  # the 2-d kernel these run on shows the unsqueezed height
            shown_sp, shown_outs = (1,) + sp, (1,) + outs
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + shown_sp))}). Calculated output size: "
                           f"({'x'.join(map(str, (c,) + shown_outs))}). Output size is too small")
    return kernel, stride, padding, dilation, sp, outs


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    if nd == 3 and return_indices:  # PyTorch's wrapper reads input.is_cuda first
        need_tensor_attr(input, "is_cuda")
    need_tensor(f"max_pool{nd}d" + ("_with_indices" if return_indices else ""), input)
    need_bool(f"max_pool{nd}d" + ("_with_indices" if return_indices else ""), ceil_mode, "ceil_mode", 6)
    name = f"max_pool{nd}d"
    kernel, stride, padding, dilation, sp, outs = _pool_geometry(input, nd, name, kernel_size, stride, padding,
                                                                 dilation, bool(ceil_mode), return_indices)
    _check_max_pool_dtype(nd, input, return_indices)
    if not return_indices and all(d == 1 for d in dilation):
        pads = _ceil_pads(sp, kernel, stride, padding, outs)
        return apply(_MAXPOOL[nd], (input,), nd=nd, kernel=kernel, stride=stride, pads=pads)
    geometry = tuple(zip(kernel, stride, padding, dilation, outs))
    val, idx = apply(_MAXPOOL_IDX[nd], (input,), nd=nd, geometry=geometry, adaptive=False)
    return (val, idx) if return_indices else val


def _check_max_pool_dtype(nd, input, return_indices):
    """PyTorch's CPU max pooling kernels: no Bool or complex version; 1-D pooling without indices runs its own
    kernel, which takes floating point inputs only (even empty ones)."""
    cat = input.dtype.category
    if nd == 1 and not return_indices and cat != _dtype._FLOAT:
        raise not_implemented("max_pool1d_impl", input.dtype)
    if cat in (_dtype._BOOL, _dtype._COMPLEX):
        raise not_implemented(f"max_pool{3 if nd == 3 else 2}d", input.dtype)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over ``(N, C, L)``; ``return_indices`` also gives flat indices into ``L``."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over ``(N, C, H, W)``; indices are ``h * W + w`` into each input plane.

    Example::

        >>> F.max_pool2d(torchish.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over ``(N, C, D, H, W)``."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


# ----------------------------------------------------------------------------------------------------------------
# average pooling


def _avg_divisor(sp, kernel, stride, padding, outs, count_include_pad):
    """The per-window divisor (numpy, shape ``outs``): window size clipped to the padded input, or its count of
    input elements."""
    div = np.ones((), np.int64)
    for n, k, s, p, o in zip(sp, kernel, stride, padding, outs):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        div = div[..., None] * size
    return div


def _avg_fwd(x, *, nd, kernel, stride, padding, outs, count_include_pad, divisor_override):
    if x.dtype in _precision.LOW:  # PyTorch's CPU kernel sums and divides float16/bfloat16 in float32, rounds once
        return _avg_fwd(x.astype(jnp.float32), nd=nd, kernel=kernel, stride=stride, padding=padding, outs=outs,
                        count_include_pad=count_include_pad, divisor_override=divisor_override).astype(x.dtype)
    sp = x.shape[-nd:]
    pads = _ceil_pads(sp, kernel, stride, padding, outs)
    cfg = [(0, 0, 0)] * (x.ndim - nd) + [(lo, hi, 0) for lo, hi in pads]
    zero = np.array(0, x.dtype)
    xp = lax.pad(x, zero, cfg)
    lead = (1,) * (x.ndim - nd)
    s = lax.reduce_window(xp, zero, lax.add, lead + kernel, lead + stride, "VALID")
    if divisor_override is not None:
        d = np.asarray(divisor_override)
    else:
        d = _avg_divisor(sp, kernel, stride, padding, outs, count_include_pad)
    if jnp.issubdtype(x.dtype, jnp.integer):                         # integer division truncates toward zero
        q = jnp.abs(s) // d.astype(x.dtype)
        return jnp.where(s < 0, -q, q)
    if x.dtype in (jnp.float32, jnp.float64):  # one true division, as PyTorch's kernel (XLA would multiply by the
        return _precision.div(s, d.astype(x.dtype))  # rounded reciprocals of the constant divisors)
    return s / d.astype(x.dtype)


def _ceil_pads(sp, kernel, stride, padding, outs):
    """(low, high) padding per dim so that VALID windows give exactly ``outs`` (high may be negative: cropped)."""
    return tuple((p, (o - 1) * s + k - n - p) for n, k, s, p, o in zip(sp, kernel, stride, padding, outs))


_AVGPOOL = {nd: defop(f"avg_pool{nd}d", _avg_fwd, linear=True, grad_name=pool_node(nd, f"AvgPool{nd}DBackward0"))
            for nd in (1, 2, 3)}


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    need_tensor(f"avg_pool{nd}d", input)
    name = f"avg_pool{nd}d"
    # (direct bindings in PyTorch: these flags are usually passed by keyword, shown without a position)
    need_bool(name, ceil_mode, "ceil_mode")
    need_bool(name, count_include_pad, "count_include_pad")
    if divisor_override is not None:
        need_int(name, divisor_override, "divisor_override", None)
    _check_avg_rank(nd, input)
    if _registry.autocast_hook is not None:  # (CPU autocast runs avg_pool3d in float32: before the dtype check)
        input, = _registry.autocast_hook(name, (input,))
    kernel, stride, padding, _, sp, outs = _pool_geometry(input, nd, name, kernel_size, stride, padding, 1,
                                                          bool(ceil_mode))
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    _check_avg_dtype(nd, input.dtype)
    return apply(_AVGPOOL[nd], (input,), nd=nd, kernel=kernel, stride=stride, padding=padding, outs=outs,
                 count_include_pad=bool(count_include_pad),
                 divisor_override=None if divisor_override is None else int(divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``(N, C, L)``."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None, *, out=None):
    """2-D average pooling over ``(N, C, H, W)``; ``divisor_override`` replaces the window size as divisor."""
    return out_structured(_avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override), out, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None, *, out=None):
    """3-D average pooling over ``(N, C, D, H, W)``."""
    return out_structured(_avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override), out, "avg_pool3d")


# ----------------------------------------------------------------------------------------------------------------
# power-average (LP) pooling


def _lp_fwd(x, *, p, nd, kernel, stride, outs, pow_dtype, out_dtype):
    # x.pow(p) in PyTorch's dtype (an integral input with an int p stays integral: the average truncates)
    avg = _avg_fwd(x.astype(pow_dtype) ** p, nd=nd, kernel=kernel, stride=stride, padding=(0,) * nd, outs=outs,
                   count_include_pad=True, divisor_override=None)
    # PyTorch's (sign(avg) * relu(abs(avg))).mul(kernel).pow(1 / p): relu's backward (0 where avg is 0) also stops
    # pow's infinite derivative at 0, so an all-zero window gets a zero gradient, not NaN; its ``result <= 0 ? 0 :
    # grad`` passes a NaN window's gradient (jax.nn.relu's does not: nn fuzzer seed 9100293)
    mag = jnp.abs(avg)
    relu = jnp.where(mag <= 0, jnp.zeros((), mag.dtype), mag)
    return ((jnp.sign(avg) * relu * math.prod(kernel)).astype(out_dtype)) ** (1.0 / p)


_LPPOOL = {nd: defop(f"lp_pool{nd}d", _lp_fwd, grad_name="PowBackward0") for nd in (1, 2, 3)}


def _lp_infinite(nd, input, norm_type, kernel_size, stride, ceil_mode):
    """PyTorch's wrapper: an infinite ``norm_type`` is the max (or, -inf, minus the max of minus) of ``|input|``
    over each window; None for a finite one."""
    if isinstance(norm_type, (int, float)) and norm_type in (math.inf, -math.inf):
        pool = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        if norm_type > 0:
            return pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    return None


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    need_tensor_attr(input, "pow")  # (PyTorch's composite starts with input.pow(norm_type))
    _check_avg_rank(nd, input)
    kernel, stride, _, _, _, outs = _pool_geometry(input, nd, f"avg_pool{nd}d", kernel_size, stride, 0, 1,
                                                   bool(ceil_mode))
    # PyTorch's composite: avg_pool of input.pow(norm_type) (its dtype checked by the avg_pool kernel), then
    # .pow(1 / norm_type), which turns an integral result into the default float dtype
    pow_dtype = _dtype.result_type(input, norm_type)
    _check_avg_dtype(nd, pow_dtype)
    out_dtype = pow_dtype if pow_dtype.category >= _dtype._FLOAT else _dtype.get_default_dtype()
    return apply(_LPPOOL[nd], (input,), p=norm_type, nd=nd, kernel=kernel, stride=stride, outs=outs,
                 pow_dtype=pow_dtype.np, out_dtype=out_dtype.np)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over the window of x**p) ** (1/p)`` (PyTorch's formula: average times window size)."""
    out = _lp_infinite(1, input, norm_type, kernel_size, stride, ceil_mode)
    if out is not None:
        return out
    out = _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)
    if isinstance(kernel_size, (list, tuple)):  # PyTorch's wrapper multiplies by kernel_size itself
        raise TypeError(f"mul(): argument 'other' (position 1) must be Tensor, not {type(kernel_size).__name__}")
    return out


def _unpack_kernel(kernel_size, nd):
    """PyTorch's wrapper unpacks ``_pair``/``_triple(kernel_size)`` first: a sequence of another length is a
    ValueError."""
    if isinstance(kernel_size, (list, tuple)) and len(kernel_size) != nd:
        more = len(kernel_size) > nd
        raise ValueError(f"too many values to unpack (expected {nd})" if more else
                         f"not enough values to unpack (expected {nd}, got {len(kernel_size)})")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling."""
    _unpack_kernel(kernel_size, 2)
    out = _lp_infinite(2, input, norm_type, kernel_size, stride, ceil_mode)
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode) if out is None else out


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling."""
    _unpack_kernel(kernel_size, 3)
    out = _lp_infinite(3, input, norm_type, kernel_size, stride, ceil_mode)
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode) if out is None else out
