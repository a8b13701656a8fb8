"""torchish.nn.functional.local_response_norm: one fused op where nothing records a graph, PyTorch's Python
composite op by op (pad, avg_pool2d/avg_pool3d, pow, div) where autograd records, so the graph is PyTorch's."""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _dtype
from ...ops import registry as _registry
from ...ops.elementwise import not_implemented
from ...ops.registry import apply, defop
from ._args import need_int_list

__all__ = ["local_response_norm"]


def _lrn_fwd(x, *, size, alpha, beta, k, fdt=None):
    sq = jnp.square(x)
    cfg = [(0, 0, 0)] * x.ndim
    cfg[1] = (size // 2, (size - 1) // 2, 0)
    zero = np.array(0, x.dtype)
    window = (1, size) + (1,) * (x.ndim - 2)
    s = lax.reduce_window(lax.pad(sq, zero, cfg), zero, lax.add, window, (1,) * x.ndim, "VALID")
    if fdt is not None:  # integer input (PyTorch's composite): an integer average pool, then the default float dtype
        return x.astype(fdt) / ((s // size).astype(fdt) * alpha + k) ** beta
    return x / (s / size * alpha + k) ** beta


_LRN = defop("local_response_norm", _lrn_fwd, grad_name="DivBackward0")


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each element by ``(k + alpha * mean of squares over `size` neighbouring channels) ** beta``."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    # (PyTorch's composite pads the squares by (size // 2, (size - 1) // 2) on the channel dim: a float size fails
    # there, the pad's first non-zero entry being the third of four or the fifth of six)
    need_int_list("pad", (0, 0) * (1 if input.ndim == 3 else 2) + (size // 2, (size - 1) // 2), "pad", 2)
    if size <= 0:  # (avg_pool2d's check for a 3-d input, avg_pool3d's for wider ones)
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + (f"kH: {size} kW: 1" if input.ndim == 3 else f"kT: {size} kH: 1 kW: 1"))
    dt = input.dtype
    if dt.category == _dtype._COMPLEX or (dt.category < _dtype._FLOAT and dt is not _dtype.int64):
        # (PyTorch's composite reaches avg_pool, whose one integer kernel is int64's)
        raise not_implemented("avg_pool2d" if input.ndim == 3 else "avg_pool3d_out_frame", input.dtype)
    if input.ndim > 3:
        _check_lrn_view(input)
        if dt in (_dtype.float16, _dtype.bfloat16):  # PyTorch's composite pools the squares with avg_pool3d, which
            if _registry.autocast_hook is None:    # has no half kernel; CPU autocast runs it in float32, and the
                raise not_implemented("avg_pool3d_out_frame", dt)  # division by it promotes the result
            input, = _registry.autocast_hook("avg_pool3d", (input,))
            dt = input.dtype
            if dt in (_dtype.float16, _dtype.bfloat16):  # (autocast on another device type only)
                raise not_implemented("avg_pool3d_out_frame", dt)
    if dt in (_dtype.float32, _dtype.float64) and input.requires_grad:
        return _lrn_composite(input, int(size), alpha, beta, k)
    fdt = _dtype.DEFAULTS.float.np if dt.category < _dtype._FLOAT else None
    return apply(_LRN, (input,), size=int(size), alpha=float(alpha), beta=float(beta), k=float(k), fdt=fdt)


def _lrn_composite(input, size, alpha, beta, k):
    """F.local_response_norm's Python op by op (where it records a graph): the squares padded on the channel dim
    and averaged by avg_pool2d (3-d input) or avg_pool3d over a view, then ``input / (div * alpha + k) ** beta``."""
    from .pooling import avg_pool2d, avg_pool3d
    from .sampling import pad
    div = input.mul(input)
    if input.ndim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def _check_lrn_view(input):
    """PyTorch's composite views ``input * input`` (laid out as the input) as ``(N, 1, C, D, -1)``: an input whose
    trailing dims do not merge (a transposed 5-d input) raises its view error."""
    from ...ops import inplace as _ip
    from ...ops.out_layout import output_strides
    shape, strides, _ = _ip.layout(input)
    sq = output_strides([(shape, strides)], shape) or _ip.contiguous_strides(shape)
    if _ip.view_strides(shape, sq, shape[:1] + (1,) + shape[1:3] + (math.prod(shape[3:]),)) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
