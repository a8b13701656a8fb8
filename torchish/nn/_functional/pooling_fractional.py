"""torchish.nn.functional: fractional max pooling in 2 and 3 dimensions (Graham, "Fractional Max-Pooling").

Each ``(n, c)`` plane pools ``kernel_size`` windows whose starts are pseudo-random: one sample ``u`` in [0, 1) per
plane and spatial dim gives, with ``alpha = (in - k) / (out - 1)``, the starts ``int((i + u) * alpha) -
int(u * alpha)`` for ``i < out - 1`` and ``in - k`` for the last window — PyTorch's intervals, computed in the
input's dtype as its kernel does. Samples come from ``_random_samples`` (``(N, C, nd)``, the input's dtype) or are
drawn with ``torchish.rand``; in 2-D, sample 0 drives the width and sample 1 the height, in 3-D samples 0, 1, 2 drive
time, height and width. The maximum is the first one of its window (the last NaN wins); the gradient goes to it.
"""
from __future__ import annotations

import math
import operator

import jax.numpy as jnp

from ... import _dtype
from ...ops.registry import apply, defop
from ._pool_windows import window_max

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]

_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}        # which sample drives each spatial dim (PyTorch's kernels)


def _starts(u, n, out, k):
    """Window starts ``(*u.shape, out)`` along a dim of size ``n`` from the per-plane samples ``u``."""
    last = jnp.full(u.shape + (1,), n - k, jnp.int64)
    if out <= 1:
        return last[..., :out]
    alpha = jnp.asarray(n - k, u.dtype) / jnp.asarray(out - 1, u.dtype)
    i = jnp.arange(out - 1, dtype=u.dtype)
    starts = jnp.trunc((i + u[..., None]) * alpha) - jnp.trunc(u * alpha)[..., None]
    return jnp.concatenate([starts.astype(jnp.int64), last], axis=-1)


def _fractional_fwd(x, samples, *, kernel, outs, batched):
    nd = len(kernel)
    lead = x.shape[:-nd]
    sizes = x.shape[-nd:]
    u = samples[:x.shape[0]] if batched else samples[0]               # (*lead, nd)
    ks = tuple(max(k, 0) for k in kernel)
    flat = jnp.zeros(lead + (1,) * (2 * nd), jnp.int64)
    corner = jnp.zeros(lead + (1,) * nd, jnp.int64)
    for d in range(nd):
        stride = math.prod(sizes[d + 1:])
        start = _starts(u[..., _SAMPLE_OF_DIM[nd][d]], sizes[d], outs[d], kernel[d])   # (*lead, out_d)
        shape = [1] * (2 * nd)
        shape[d] = outs[d]
        pos = start.reshape(lead + tuple(shape)) + jnp.arange(ks[d]).reshape((1,) * d + (ks[d],) + (1,) * (nd - d - 1))
        flat = flat + pos * stride
        corner = corner + start.reshape(lead + tuple(shape[:nd])) * stride
    o, kk = math.prod(outs), math.prod(ks)
    if kk == 0:          # an empty window: -inf at the window's corner, as PyTorch's kernel starts its scan
        val = jnp.full(lead + outs, -jnp.inf, x.dtype)
        return val, jnp.broadcast_to(corner, lead + outs)
    table = jnp.broadcast_to(flat, lead + outs + ks).reshape(lead + (o * kk,))
    win = jnp.take_along_axis(x.reshape(lead + (math.prod(sizes),)), table, axis=-1).reshape(lead + (o, kk))
    val, pick = window_max(win)
    idx = jnp.take_along_axis(table.reshape(lead + (o, kk)), pick[..., None], axis=-1)[..., 0]
    return val.reshape(lead + outs), idx.reshape(lead + outs)


_FRACTIONAL = {nd: defop(f"fractional_max_pool{nd}d", _fractional_fwd, grad_name=f"FractionalMaxPool{nd}DBackward0")
               for nd in (2, 3)}


def _int_tuple(value, arg, position, name):
    """PyTorch's argument parser for an int list (a single int is kept as a 1-tuple for the caller to repeat)."""
    def as_int(v):
        if isinstance(v, (bool, float)):
            raise TypeError
        return operator.index(v)

    if isinstance(value, (list, tuple)):
        out = []
        for i, v in enumerate(value):
            try:
                out.append(as_int(v))
            except TypeError:
                raise TypeError(f"{name}(): argument '{arg}' ({position}) must be tuple of ints, but found element "
                                f"of type {type(v).__name__} at pos {i}") from None
        return tuple(out)
    try:
        return (as_int(value),)
    except TypeError:
        raise TypeError(f"{name}(): argument '{arg}' ({position}) must be tuple of ints, not "
                        f"{type(value).__name__}") from None


def _check(nd, input, kernel, outs, samples):
    """PyTorch's argument checks, in its order and words."""
    name = f"fractional_max_pool{nd}d"
    three = "" if nd == 2 else "three "
    if len(kernel) not in (1, nd):
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of {three}Ints")
    if len(outs) not in (1, nd):
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of {three}Ints")
    kernel, outs = kernel * (nd if len(kernel) == 1 else 1), outs * (nd if len(outs) == 1 else 1)
    where = f"{name}()" if nd == 2 else f"{name}_out()"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d} being empty.")
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    for d in range(nd):
        size = input.shape[input.dim() - nd + d]
        if (outs[d] + kernel[d] - 1 > size) if nd == 2 else (outs[d] + kernel[d] - 1 >= size):
            raise RuntimeError(f"{where}: pool {names[d]} {kernel[d]} too large relative to input {names[d]} {size}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch = input.shape[0] if input.dim() == nd + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}_out_frame" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    return kernel, outs


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * nd
        ratio = ratio * nd if len(ratio) == 1 else ratio
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    if _random_samples is None:
        from ...ops.random import rand
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = rand(batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    kernel = _int_tuple(kernel_size, "kernel_size", "position 2", name)
    outs = _int_tuple(output_size, "output_size", "position 3", name)
    kernel, outs = _check(nd, input, kernel, outs, _random_samples)
    return apply(_FRACTIONAL[nd], (input, _random_samples.detach()), kernel=kernel, outs=outs,
                 batched=input.dim() == nd + 2)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """:func:`fractional_max_pool2d` returning ``(output, indices)`` (indices ``h * W + w`` into each plane)."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """:func:`fractional_max_pool3d` returning ``(output, indices)`` (indices ``(t * H + h) * W + w``)."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-D fractional max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` inputs.

    Args:
        kernel_size: the window, an int or ``(kH, kW)``.
        output_size: ``(oH, oW)`` (or an int); or give ``output_ratio`` (a pair of ratios of the input size).
        return_indices: also return the flat index of each maximum in its plane.
        _random_samples: ``(N, C, 2)`` samples in [0, 1) of the input's dtype (drawn when None).

    Example::

        >>> x = torchish.arange(36.).reshape(1, 1, 6, 6)
        >>> F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=torchish.full((1, 1, 2), 0.5)).shape
        torch.Size([1, 1, 3, 3])
    """
    out, idx = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D fractional max pooling over ``(N, C, T, H, W)`` or ``(C, T, H, W)`` inputs (samples ``(N, C, 3)``);
    see :func:`fractional_max_pool2d`."""
    out, idx = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, idx) if return_indices else out
