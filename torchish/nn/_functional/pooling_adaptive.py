"""torchish.nn.functional: adaptive average/max pooling and max-unpooling in 1, 2 and 3 dimensions."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _dtype
from ..._tensor import Tensor
from ...ops.elementwise import not_implemented
from ...ops.registry import apply, defop
from ._pool_windows import _adaptive_bounds, _window_max_fwd, pool_node
from .conv import ntuple
from ._args import int_list_element_error, need_tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]

_ADAPTIVE_MAX = {nd: defop(f"adaptive_max_pool{nd}d", _window_max_fwd,
                           grad_name=pool_node(nd, f"AdaptiveMaxPool{nd}DBackward0")) for nd in (1, 2, 3)}


# ----------------------------------------------------------------------------------------------------------------
# adaptive pooling


def _adaptive_avg_fwd(x, *, nd, outs):
    if x.dtype in (jnp.float16, jnp.bfloat16):  # PyTorch's CPU kernels sum and divide them in float32
        return _adaptive_avg_fwd(x.astype(jnp.float32), nd=nd, outs=outs).astype(x.dtype)
    for i, (n, o) in enumerate(zip(x.shape[-nd:], outs)):
        start, end = _adaptive_bounds(n, o)
        j = np.arange(n)[None, :]
        m = ((j >= start[:, None]) & (j < end[:, None])) / np.maximum(end - start, 1)[:, None]
        axis = x.ndim - nd + i
        x = jnp.moveaxis(jnp.tensordot(x, jnp.asarray(m.T, x.dtype), axes=([axis], [0]),
                                       precision=lax.Precision.HIGHEST), -1, axis)
    return x


_ADAPTIVE_AVG = {nd: defop(f"adaptive_avg_pool{nd}d", _adaptive_avg_fwd, linear=True,
                           grad_name=pool_node(nd, f"AdaptiveAvgPool{nd}DBackward0")) for nd in (1, 2, 3)}
# an output of size 1 is PyTorch's mean over the pooled dims: a node that saves nothing
_GLOBAL_AVG = {nd: defop(f"adaptive_avg_pool{nd}d_global", _adaptive_avg_fwd, linear=True,
                         grad_name="SqueezeBackward1" if nd == 1 else "MeanBackward1") for nd in (1, 2, 3)}


def _need_output_ints(name, nd, output_size, input_ndim):
    """PyTorch's argument parser: ``output_size`` is an int or ints; None entries (the input's size) only past
    the 2-D and 3-D wrappers, which take ``len(output_size)`` (so None itself is a TypeError there too) and
    want an input with more dimensions than a sequence ``output_size`` has entries (ValueError)."""
    if output_size is None and nd > 1:
        raise TypeError("object of type 'NoneType' has no len()")
    seq = isinstance(output_size, (list, tuple))
    if seq and nd > 1 and input_ndim <= len(output_size):  # (the wrappers' _list_with_default)
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if not seq:
        if isinstance(output_size, Tensor):  # (one integer element: the 1-d ops' ``int[1]``)
            if output_size.numel() == 1 and output_size.dtype.category == _dtype._INT:
                return
        elif hasattr(output_size, "__index__") and not isinstance(output_size, bool):
            return
        elif nd > 1 and not isinstance(output_size, int) and not hasattr(output_size, "__len__"):
            raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")  # (_list_with_default)
        raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, not "
                        f"{type(output_size).__name__}")
    for pos, e in enumerate(output_size):  # (an item: an int, a bool after the first, a one-element integer Tensor)
        if isinstance(e, Tensor):
            ok = e.numel() == 1 and e.dtype.category == _dtype._INT
        else:
            ok = (e is None and nd > 1) or (hasattr(e, "__index__") and not (pos == 0 and isinstance(e, bool)))
        if not ok:
            raise int_list_element_error(name, "output_size", 2, pos, e)


def _wrapper_sizes(nd, output_size):
    """``output_size`` as PyTorch's 2-d and 3-d Python wrappers pass it on: their ``_list_with_default`` reads a
    Tensor as a sequence of its items (``tensor([2, 2])``: two 0-d tensors, which the op takes as ints; a 0-d
    Tensor has no len())."""
    if nd == 1 or not isinstance(output_size, Tensor):
        return output_size
    if output_size.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return list(output_size)


def _adaptive_sizes(input, nd, output_size, name, avg):
    _need_output_ints(name, nd, output_size, input.ndim)
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
    shape, kname = list(input.shape), name
    if nd == 1 and avg:  # PyTorch's adaptive_avg_pool1d runs the 2-d op on input.unsqueeze(-2)
        shape, kname = shape[:-1] + [1] + shape[-1:], "adaptive_avg_pool2d"
    negative = [o for o in sizes if o < 0]
    if avg and negative:
        shown = [1, *sizes] if nd == 1 else list(sizes)
        listed = f"{shown[0]}, {shown[1]},{shown[2]}" if nd == 3 else ", ".join(map(str, shown))  # (PyTorch's 3-d)
        raise RuntimeError(f"{kname}: elements of output_size must be greater than or equal to 0 but received "
                           "{" + listed + "}")
    # PyTorch's avg2d kernel (the 1-d op's too, on the unsqueezed input) checks the two trailing dims; the max
    # kernels and avg3d every dim after the first (the channels too, unless the input is unbatched)
    checked = 2 if avg and nd < 3 else len(shape) - 1
    for d in range(len(shape) - checked, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"{kname}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {shape} with dimension {d} being empty")
    if negative:  # max pooling allocates its outputs (the 1-d op: on input.unsqueeze(-2)) before any size check
        out = list(input.shape[:-nd]) + ([1] if nd == 1 else []) + list(sizes)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {out}")
    return sizes


def _all_ones(nd, input, output_size):
    """Whether every output size is 1, as the 2-d/3-d wrappers pass it on (None entries are the input's sizes)."""
    _need_output_ints(f"adaptive_avg_pool{nd}d", nd, output_size, input.ndim)
    if not isinstance(output_size, (list, tuple)):
        return int(output_size) == 1
    if len(output_size) != nd:
        return False
    return all((input.shape[input.ndim - nd + i] if o is None else int(o)) == 1 for i, o in enumerate(output_size))


_FLOATS = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


def _adaptive_avg(nd, input, output_size):
    output_size = _wrapper_sizes(nd, output_size)
    if nd > 1 and _all_ones(nd, input, output_size):
        # PyTorch's 2-d and 3-d kernels start with this shortcut, before any check of the input's dimensions or
        # sizes: the mean over the last nd dims (any number of leading dims; empty ones give NaN)
        lead = input.ndim - nd
        if input.ndim not in (nd + 1, nd + 2) or 0 in tuple(input.shape[lead:]):
            return input.mean(tuple(range(-1, -nd - 1, -1)), keepdim=True)
    outs = _adaptive_sizes(input, nd, output_size, f"adaptive_avg_pool{nd}d", True)
    dt = input.dtype
    if all(o == 1 for o in outs):  # PyTorch takes the mean: integral inputs have no mean dtype
        if dt.category < _dtype._FLOAT:
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {_dtype.scalar_type_name(dt)}")
        return apply(_GLOBAL_AVG[nd], (input,), nd=nd, outs=outs)
    if dt not in _FLOATS:
        shape = tuple(input.shape[:-nd]) + tuple(outs)
        if nd < 3 and 0 in shape:  # PyTorch's 2-d kernel returns an empty output before its dtype dispatch
            return input.new_zeros(shape)
        raise not_implemented("adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d", dt)
    return apply(_ADAPTIVE_AVG[nd], (input,), nd=nd, outs=outs)


def _adaptive_max(nd, input, output_size, return_indices):
    output_size = _wrapper_sizes(nd, output_size)
    outs = _adaptive_sizes(input, nd, output_size, f"adaptive_max_pool{nd}d", False)
    if input.dtype not in _FLOATS:
        raise not_implemented("adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d", input.dtype)
    val, idx = apply(_ADAPTIVE_MAX[nd], (input,), nd=nd, geometry=outs, adaptive=True)
    return (val, idx) if return_indices else val


def adaptive_avg_pool1d(input, output_size):
    """Average over ``output_size`` windows ``[floor(i*L/out), ceil((i+1)*L/out))``."""
    need_tensor("adaptive_avg_pool1d", input)
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
    need_tensor("adaptive_max_pool1d", input)
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
    rows = math.prod(lead)                                           # (not -1: a zero-size batch is allowed)
    xf, jf = x.reshape((rows, math.prod(x.shape[-nd:]))), idx.reshape((rows, math.prod(x.shape[-nd:])))
    out = jnp.zeros((xf.shape[0], math.prod(outs)), x.dtype)
    out = out.at[jnp.arange(xf.shape[0])[:, None], jf].set(xf, mode="drop")
    return out.reshape(lead + outs)


def _unpool_vjp(g, x, idx, *, out, nd, outs):
    """Each input element receives the gradient at its index, also when indices repeat (overlapping windows)."""
    rows = math.prod(x.shape[:-nd])
    gf = g.reshape((rows, math.prod(outs)))
    jf = idx.reshape((rows, math.prod(x.shape[-nd:])))
    return jnp.take_along_axis(gf, jf, axis=1).reshape(x.shape), None


_UNPOOL = {nd: defop(f"max_unpool{nd}d", _unpool_fwd, vjp=_unpool_vjp,
                     grad_name=pool_node(nd, f"MaxUnpool{nd}DBackward0")) for nd in (1, 2, 3)}


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    if input.ndim not in (nd + 1, nd + 2):  # (1-d: PyTorch's wrapper unsqueezes into the 2-d kernel)
        k, n = (2, input.ndim + 1) if nd == 1 else (nd, input.ndim)
        raise RuntimeError(f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d Tensor, but got a tensor "
                           f"with {n} dimensions.")
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
    for d in range(nd):
        if outs[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={outs[d]}")
    if input.dtype.category < _dtype._FLOAT:  # (PyTorch's CPU kernels: floating types only)
        raise not_implemented("max_unpool3d" if nd == 3 else "max_unpool2d", input.dtype)
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
