"""Shared pieces of the loss functions: PyTorch's reduction arguments (with the legacy ``size_average`` /
``reduce`` flags), the reductions themselves in JAX, and value checks that need concrete data."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype, _precision
from ..._tensor import Tensor
from ...ops import tracing
from ...ops.broadcast import broadcast_error
from ...ops.registry import overload

EPS_BCE = 1e-12


def legacy_reduction(size_average, reduce):
    """PyTorch's ``_Reduction.legacy_get_string``: the old boolean flags as a reduction name (with its warning)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=4)
    return ret


def reduction_arg(size_average, reduce, reduction):
    """The reduction to use ('none', 'mean' or 'sum'), raising PyTorch's ValueError for an unknown name."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=4)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce(loss, reduction):
    """Apply a reduction to an elementwise loss (pure JAX)."""
    if reduction == "mean":
        if jnp.dtype(loss.dtype) in _precision.LOW:  # as PyTorch's mean: the float32 sum of the rounded losses
            # divided, rounded once (the barrier: XLA would fold the losses' rounding into the float32 sum)
            return _precision.mean(jax.lax.optimization_barrier(loss).astype(jnp.float32)).astype(loss.dtype)
        return _precision.mean(loss) if jnp.issubdtype(loss.dtype, jnp.floating) else jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


def unreduce(g, shape, reduction):
    """The cotangent of each element of a loss reduced with ``reduction`` to ``g`` (pure JAX)."""
    if reduction == "none":
        return g
    if reduction == "mean":
        g = g / float(np.prod(shape))
    return jnp.broadcast_to(g, shape)


def concrete(t):
    """The numpy value of a Tensor, or None while it is being traced (value checks are then skipped)."""
    if not isinstance(t, Tensor):
        return None
    d = t._d
    if tracing.active() or isinstance(d, jax.core.Tracer) or t.is_meta:  # (meta tensors have no values)
        return None
    return np.asarray(d)


def not_differentiable(fn, arg, t):
    """PyTorch's refusal to record a kernel for an argument it has no derivative for (class weights...)."""
    from ...autograd.grad_mode import STATE
    if isinstance(t, Tensor) and t._rg and STATE.grad_enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This input "
                           "cannot have requires_grad True.")


def float_kernel_only(x, kernel, half=True):
    """PyTorch's NotImplementedError for kernels that take real floating point inputs only (``half=False``: float
    and double only, checked where the kernel runs: a non-empty input)."""
    if x.dtype.category != _dtype._FLOAT or (not half and x.dtype in (_dtype.float16, _dtype.bfloat16) and x.numel()):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(x.dtype)}\'')


def no_complex_clamp(*tensors):
    """PyTorch's NotImplementedError for losses whose composite clamps a complex value (margin losses)."""
    if any(t.dtype.category == _dtype._COMPLEX for t in tensors):
        raise NotImplementedError("clamp is not supported for complex types")


def check_broadcast(a, b):
    """PyTorch's RuntimeError when two tensors' (or shapes') sizes do not broadcast."""
    sa = tuple(a.shape) if hasattr(a, "shape") else tuple(a)
    sb = tuple(b.shape) if hasattr(b, "shape") else tuple(b)
    nd = max(len(sa), len(sb))
    pa, pb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    if any(x != y and x != 1 and y != 1 for x, y in zip(pa, pb)):
        raise broadcast_error(sa, sb)


def by_reduction(op, none_name):
    """``op`` per reduction, under the node PyTorch's composite loss ends in: its last elementwise op unreduced
    (``none_name``), else the mean or the sum (the name chosen per call: no extra dispatch)."""
    return {"none": overload(op, none_name), "mean": overload(op, "MeanBackward0"), "sum": overload(op, "SumBackward0")}
