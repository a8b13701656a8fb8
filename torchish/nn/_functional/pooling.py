"""torchish.nn.functional: max/avg/adaptive/LP pooling and max-unpooling in 1, 2 and 3 dimensions.

Windows follow PyTorch's geometry exactly: ``ceil_mode`` output sizes (the last window must start inside the input
or its left padding), ``count_include_pad`` and ``divisor_override`` divisors, the adaptive ``[floor(i*in/out),
ceil((i+1)*in/out))`` windows, and indices into the flattened spatial dims of each ``(n, c)`` plane. Max pooling
picks the first maximum of a window (a NaN wins, the last one), so the gradient goes to that one position.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _dtype
from ...ops.registry import apply, defop
from .conv import ntuple

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d"]

_WORDS = {1: "one", 2: "two", 3: "three"}


# ----------------------------------------------------------------------------------------------------------------
# geometry (static: plain Python ints)


def out_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length along one dim."""
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_positions(n, k, s, p, d, out):
    """Input positions ``(out, k)`` covered by each window along one dim, and whether each is inside the input."""
    pos = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d
    return pos, (pos >= 0) & (pos < n)


def _adaptive_bounds(n, out):
    i = np.arange(out)
    return (i * n) // out, -((-(i + 1) * n) // out)


def _adaptive_positions(n, out):
    start, end = _adaptive_bounds(n, out)
    kmax = int((end - start).max()) if out else 1
    pos = start[:, None] + np.arange(kmax)[None, :]
    return np.minimum(pos, n - 1), pos < end[:, None]


def _window_table(per_dim, in_sizes):
    """Flat input indices ``(O, K)`` of every window element (the sentinel ``prod(in)`` where outside), the
    validity mask ``(O, K)`` and the output sizes."""
    nd = len(per_dim)
    outs = tuple(pos.shape[0] for pos, _ in per_dim)
    ks = tuple(pos.shape[1] for pos, _ in per_dim)
    flat = np.zeros(outs + ks, np.int64)
    valid = np.ones(outs + ks, bool)
    for d, (pos, ok) in enumerate(per_dim):
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = pos.shape
        flat = flat + pos.reshape(shape) * int(np.prod(in_sizes[d + 1:], dtype=np.int64))
        valid = valid & ok.reshape(shape)
    o, k = int(np.prod(outs, dtype=np.int64)), int(np.prod(ks, dtype=np.int64))
    sentinel = int(np.prod(in_sizes, dtype=np.int64))
    return np.where(valid, flat, sentinel).reshape(o, k), valid.reshape(o, k), outs


def _lowest(dtype):
    return -jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


# ----------------------------------------------------------------------------------------------------------------
# max over windows (with indices)


def _window_max_fwd(x, *, nd, geometry, adaptive):
    in_sizes = x.shape[-nd:]
    if adaptive:
        per_dim = [_adaptive_positions(n, o) for n, o in zip(in_sizes, geometry)]
    else:
        per_dim = [_pool_positions(n, *g) for n, g in zip(in_sizes, geometry)]
    table, valid, outs = _window_table(per_dim, in_sizes)
    lead = x.shape[:-nd]
    xf = x.reshape(lead + (-1,))
    xf = jnp.concatenate([xf, jnp.full(lead + (1,), _lowest(x.dtype), x.dtype)], axis=-1)
    win = xf[..., table]                                             # (*lead, O, K)
    masked = jnp.where(valid, win, _lowest(x.dtype))
    best = jnp.max(masked, axis=-1, keepdims=True)
    k = jnp.argmax(valid & (masked == best), axis=-1)                # first maximum among valid positions
    if jnp.issubdtype(x.dtype, jnp.floating):                        # a NaN wins: the last one, as PyTorch scans
        isn = valid & jnp.isnan(win)
        last_nan = isn.shape[-1] - 1 - jnp.argmax(isn[..., ::-1], axis=-1)
        k = jnp.where(jnp.any(isn, axis=-1), last_nan, k)
    val = jnp.take_along_axis(win, k[..., None], axis=-1)[..., 0]
    idx = jnp.asarray(table)[jnp.arange(table.shape[0]), k]
    return val.reshape(lead + outs), idx.reshape(lead + outs).astype(jnp.int64)


def _reduce_max_fwd(x, *, nd, kernel, stride, pads):
    cfg = [(0, 0, 0)] * (x.ndim - nd) + [(lo, hi, 0) for lo, hi in pads]
    init = np.array(_lowest(x.dtype), x.dtype)                       # a constant: JAX then knows this is a max-pool
    xp = lax.pad(x, init, cfg)
    lead = (1,) * (x.ndim - nd)
    return lax.reduce_window(xp, init, lax.max, lead + kernel, lead + stride,
                             "VALID")


_MAXPOOL_IDX = {nd: defop(f"max_pool{nd}d_with_indices", _window_max_fwd,
                          grad_name=f"MaxPool{nd}DWithIndicesBackward0") for nd in (1, 2, 3)}
_MAXPOOL = {nd: defop(f"max_pool{nd}d", _reduce_max_fwd, grad_name=f"MaxPool{nd}DWithIndicesBackward0")
            for nd in (1, 2, 3)}
_ADAPTIVE_MAX = {nd: defop(f"adaptive_max_pool{nd}d", _window_max_fwd, grad_name=f"AdaptiveMaxPool{nd}DBackward0")
                 for nd in (1, 2, 3)}


def _dims_msg(nd, name):
    if nd == 1:
        return (f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                "{shape}")
    return f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"


def _check_input(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2) or (nd > 1 and any(s == 0 for s in input.shape[-nd - 1:])):
        raise RuntimeError(_dims_msg(nd, name).format(shape=list(input.shape)))


def _pool_geometry(input, nd, name, kernel_size, stride, padding, dilation, ceil_mode):
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
    axes = ("T", "H", "W")[3 - nd:]
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{a}: {k}" for a, k in zip(axes, kernel)))
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{a}: {d}" for a, d in zip(axes, dilation)))
    _check_input(input, nd, name)
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k}"
                               f" and dilation={d}")
    sp = tuple(input.shape[-nd:])
    outs = tuple(out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in zip(sp, kernel, stride, padding, dilation))
    if any(o < 1 for o in outs):
        c = input.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + sp))}). Calculated output size: "
                           f"({'x'.join(map(str, (c,) + outs))}). Output size is too small")
    return kernel, stride, padding, dilation, sp, outs


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    name = f"max_pool{nd}d"
    kernel, stride, padding, dilation, sp, outs = _pool_geometry(input, nd, name, kernel_size, stride, padding,
                                                                 dilation, bool(ceil_mode))
    if not return_indices and all(d == 1 for d in dilation):
        pads = _ceil_pads(sp, kernel, stride, padding, outs)
        return apply(_MAXPOOL[nd], (input,), nd=nd, kernel=kernel, stride=stride, pads=pads)
    geometry = tuple(zip(kernel, stride, padding, dilation, outs))
    val, idx = apply(_MAXPOOL_IDX[nd], (input,), nd=nd, geometry=geometry, adaptive=False)
    return (val, idx) if return_indices else val


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
    return s / d.astype(x.dtype)


def _ceil_pads(sp, kernel, stride, padding, outs):
    """(low, high) padding per dim so that VALID windows give exactly ``outs`` (high may be negative: cropped)."""
    return tuple((p, (o - 1) * s + k - n - p) for n, k, s, p, o in zip(sp, kernel, stride, padding, outs))


_AVGPOOL = {nd: defop(f"avg_pool{nd}d", _avg_fwd, linear=True, grad_name=f"AvgPool{nd}DBackward0")
            for nd in (1, 2, 3)}


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    name = f"avg_pool{nd}d"
    if nd == 1 and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    if nd == 2 and input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{input.ndim}, {input.ndim - 1}], "
                         "but got -3)")
    kernel, stride, padding, _, sp, outs = _pool_geometry(input, nd, name, kernel_size, stride, padding, 1,
                                                          bool(ceil_mode))
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    return apply(_AVGPOOL[nd], (input,), nd=nd, kernel=kernel, stride=stride, padding=padding, outs=outs,
                 count_include_pad=bool(count_include_pad),
                 divisor_override=None if divisor_override is None else int(divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``(N, C, L)``."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over ``(N, C, H, W)``; ``divisor_override`` replaces the window size as divisor."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over ``(N, C, D, H, W)``."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# ----------------------------------------------------------------------------------------------------------------
# adaptive pooling


def _adaptive_avg_fwd(x, *, nd, outs):
    for i, (n, o) in enumerate(zip(x.shape[-nd:], outs)):
        start, end = _adaptive_bounds(n, o)
        j = np.arange(n)[None, :]
        m = ((j >= start[:, None]) & (j < end[:, None])) / np.maximum(end - start, 1)[:, None]
        axis = x.ndim - nd + i
        x = jnp.moveaxis(jnp.tensordot(x, jnp.asarray(m.T, x.dtype), axes=([axis], [0]),
                                       precision=lax.Precision.HIGHEST), -1, axis)
    return x


_ADAPTIVE_AVG = {nd: defop(f"adaptive_avg_pool{nd}d", _adaptive_avg_fwd, linear=True,
                           grad_name=f"AdaptiveAvgPool{nd}DBackward0") for nd in (1, 2, 3)}


def _adaptive_sizes(input, nd, output_size, name, avg):
    if nd == 1 and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{'' if avg else ':'} "
                           f"{list(input.shape)}")
    sizes = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size] * nd
    if len(sizes) != nd:
        if nd == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(sizes)})")
        if avg:
            raise RuntimeError(f"{name}: output_size must be {nd}")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    sp = tuple(input.shape[-nd:])
    sizes = tuple(n if o is None else int(o) for o, n in zip(sizes, sp))
    if any(o < 0 for o in sizes):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           "{" + ", ".join(map(str, sizes)) + "}")
    for d in range(input.ndim - nd, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {d} being empty")
    return sizes


def _adaptive_avg(nd, input, output_size):
    outs = _adaptive_sizes(input, nd, output_size, f"adaptive_avg_pool{nd}d", True)
    return apply(_ADAPTIVE_AVG[nd], (input,), nd=nd, outs=outs)


def _adaptive_max(nd, input, output_size, return_indices):
    outs = _adaptive_sizes(input, nd, output_size, f"adaptive_max_pool{nd}d", False)
    val, idx = apply(_ADAPTIVE_MAX[nd], (input,), nd=nd, geometry=outs, adaptive=True)
    return (val, idx) if return_indices else val


def adaptive_avg_pool1d(input, output_size):
    """Average over ``output_size`` windows ``[floor(i*L/out), ceil((i+1)*L/out))``."""
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling; ``output_size`` an int or a pair (None keeps that input size).

    Example::

        >>> F.adaptive_avg_pool2d(torchish.ones(1, 3, 7, 5), 1).shape
        torch.Size([1, 3, 1, 1])
    """
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling."""
    return _adaptive_avg(3, input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling (indices into ``L``)."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling (indices ``h * W + w``)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling."""
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return _adaptive_max(1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return _adaptive_max(2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return _adaptive_max(3, input, output_size, True)


# ----------------------------------------------------------------------------------------------------------------
# max-unpooling


def _unpool_fwd(x, idx, *, nd, outs):
    lead = x.shape[:-nd]
    xf, jf = x.reshape((-1, math.prod(x.shape[-nd:]))), idx.reshape((-1, math.prod(x.shape[-nd:])))
    out = jnp.zeros((xf.shape[0], math.prod(outs)), x.dtype)
    out = out.at[jnp.arange(xf.shape[0])[:, None], jf].set(xf, mode="drop")
    return out.reshape(lead + outs)


_UNPOOL = {nd: defop(f"max_unpool{nd}d", _unpool_fwd, grad_name=f"MaxUnpool{nd}DBackward0") for nd in (1, 2, 3)}


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {input.ndim} dimensions.")
    if indices.dtype != _dtype.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_dtype.scalar_type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    kernel = ntuple(kernel_size, nd)
    kernel = kernel * nd if len(kernel) == 1 else kernel
    stride = kernel if stride is None else ntuple(stride, nd)
    stride = stride * nd if len(stride) == 1 else stride
    padding = ntuple(padding, nd)
    padding = padding * nd if len(padding) == 1 else padding
    sp = tuple(input.shape[-nd:])
    default = [(n - 1) * s + k - 2 * p for n, k, s, p in zip(sp, kernel, stride, padding)]
    if output_size is None:
        outs = tuple(default)
    else:
        req = tuple(int(v) for v in output_size)
        if len(req) == nd + 2:
            req = req[2:]
        if len(req) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(req)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < req[d] < hi:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})')
        outs = req
    if not isinstance(indices._d, jax.core.Tracer) and indices.numel():
        a = np.asarray(indices._d)
        total = math.prod(outs)
        if a.max() >= total or a.min() < 0:
            bad = a.max() if a.max() >= total else a.min()
            size = "x".join(map(str, outs)) if nd > 1 else f"{outs[0]}x1"
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size {size})")
    return apply(_UNPOOL[nd], (input, indices), nd=nd, outs=tuple(outs))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool1d`: values scattered to their indices, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool2d`."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool3d`."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ----------------------------------------------------------------------------------------------------------------
# power-average (LP) pooling


def _lp_fwd(x, *, p, nd, kernel, stride, outs):
    avg = _avg_fwd(x ** p, nd=nd, kernel=kernel, stride=stride, padding=(0,) * nd, outs=outs,
                   count_include_pad=True, divisor_override=None)
    return (jnp.sign(avg) * jnp.abs(avg) * math.prod(kernel)) ** (1.0 / p)


_LPPOOL = {nd: defop(f"lp_pool{nd}d", _lp_fwd, grad_name="PowBackward0") for nd in (1, 2, 3)}


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    kernel, stride, _, _, _, outs = _pool_geometry(input, nd, f"avg_pool{nd}d", kernel_size, stride, 0, 1,
                                                   bool(ceil_mode))
    return apply(_LPPOOL[nd], (input,), p=norm_type, nd=nd, kernel=kernel, stride=stride, outs=outs)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over the window of x**p) ** (1/p)`` (PyTorch's formula: average times window size)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
