"""The float32 precision of matrix products and convolutions, from PyTorch's own switches.

PyTorch's defaults on a GPU: matrix products (``matmul``, ``nn.Linear``, attention, RNN cells, ``einsum``...) at
full float32 — ``torch.get_float32_matmul_precision() == 'highest'``, ``torch.backends.cuda.matmul.allow_tf32 ==
False`` — and convolutions allowed to use TF32 (``torch.backends.cudnn.allow_tf32 == True``). torchish asks XLA for
the same: ``Precision.HIGHEST`` where PyTorch computes full float32, ``Precision.DEFAULT`` (one TF32/bf16 pass on
GPUs and TPUs) where PyTorch allows TF32. XLA's CPU kernels compute float32 in full under either.

Kernels read these when they are traced, so a change clears JAX's compiled kernels (``jax.clear_caches``) and bumps
:data:`EPOCH`, which ``torchish.compile`` keys its programs by.

Also here: the rounding PyTorch's kernels do that XLA would otherwise optimise away — one true division
(:func:`div`), a mean that divides its sum by the count (:func:`mean`), a fused multiply-add (:func:`fma`), a
product that no FMA absorbs (:func:`mul`), sums in index order (:func:`seq_sum`), and the half-precision rounding
after each op of a composite formula (:func:`stepper`).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _executables

HIGHEST = jax.lax.Precision.HIGHEST
DEFAULT = jax.lax.Precision.DEFAULT

_STATE = {"matmul": HIGHEST, "conv": DEFAULT}

# float16 and bfloat16: products of these accumulate in float32 (``preferred_element_type``) and are rounded once at
# the end, bias included, as PyTorch's CPU and GPU kernels do (what autocast's lower-precision ops run on)
LOW = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))
EPOCH = [0]


def matmul():
    """The precision of matrix products (PyTorch: ``set_float32_matmul_precision``, ``cuda.matmul.allow_tf32``)."""
    return _STATE["matmul"]


def mm(a, b):
    """``a @ b`` at the precision of matrix products."""
    return jnp.matmul(a, b, precision=_STATE["matmul"])


def conv():
    """The precision of convolutions (PyTorch: ``torch.backends.cudnn.allow_tf32``)."""
    return _STATE["conv"]


def set_precision(kind, precision):
    if _STATE[kind] is precision:
        return
    _STATE[kind] = precision
    EPOCH[0] += 1
    _executables.drop_caches()  # every jitted kernel traced under the old setting


def div(a, b):
    """``a / b`` rounded as one IEEE division, as PyTorch's kernels divide.

    XLA rewrites a division by a constant or by a broadcast value into a multiplication by its reciprocal (two
    roundings), which moves float32 results by an ulp and, once rounded to float16/bfloat16, half-precision ones
    too; the divisor is broadcast first and hidden behind an optimization barrier so that the division stays one.
    """
    if isinstance(a, (int, float)):  # a Python number takes the divisor's dtype
        a = jnp.asarray(a, jnp.result_type(b))
    a = jnp.asarray(a)
    b = jnp.broadcast_to(jnp.asarray(b, a.dtype), jnp.broadcast_shapes(a.shape, jnp.shape(b)))
    return a / jax.lax.optimization_barrier(b)


def mean(x, axis=None, keepdims=False):
    """``x.sum(axis) / n`` with one true division, as PyTorch's CPU ``mean`` (``sum_out(...).div_(n)``):
    ``jnp.mean`` divides by the count, a constant, which XLA turns into a multiplication by its rounded reciprocal
    (an ulp off in about half of the float32 means). For float32/float64 ``x`` (a half-precision sum has its own
    rounding: see ``ops.reduce``)."""
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    n = 1
    for a in axes:
        n *= x.shape[a]
    return div(jnp.sum(x, axis=axis, keepdims=keepdims), n)


def fma(a, b, c):
    """``a * b + c`` rounded once, as PyTorch's CPU kernels compute the ``x * scale + bias`` of their normalisations
    (compiled with FMA contraction). XLA:CPU contracts a float32 multiply-add into an FMA only at its default
    optimisation level, so float32 is computed in float64 (the product exact, one rounding of the sum to float64
    then float32: a double rounding that differs from an FMA only where the float64 sum lands on a float32 tie);
    float64 is left to XLA."""
    dt = jnp.result_type(a, b, c)
    if dt != jnp.float32:
        return a * b + c
    w = jnp.float64
    return (jnp.asarray(a, w) * jnp.asarray(b, w) + jnp.asarray(c, w)).astype(dt)


def mul(a, b):
    """``a * b`` rounded as a kernel of its own: XLA:CPU at its default optimisation level contracts a float32
    product into the add or the reduction that reads it (an FMA), where PyTorch rounds the product first. float32
    is multiplied in float64 (exact) and rounded to float32 by ``reduce_precision``, which no contraction crosses;
    float64 is left to XLA."""
    dt = jnp.result_type(a, b)
    if dt != jnp.float32:
        return a * b
    w = jnp.float64
    return jax.lax.reduce_precision(jnp.asarray(a, w) * jnp.asarray(b, w), exponent_bits=8,
                                    mantissa_bits=23).astype(dt)


def seq_sum(x, axis):
    """The sum of ``x`` along ``axis`` (kept as size 1), accumulated in order from index 0, as PyTorch's CPU
    softmax kernels accumulate across a dimension that is not the last; XLA's reductions add in another order."""
    moved = jnp.moveaxis(x, axis, 0)
    total, _ = jax.lax.scan(lambda acc, row: (acc + row, None), jnp.zeros_like(moved[0]), moved)
    return jnp.expand_dims(total, axis)


def stepper(dtype):
    """``(wide, r)`` for emulating a PyTorch composite on tensors of ``dtype`` one op at a time: compute each op
    on ``wide(v)`` values and pass its result through ``r``, which stores it in ``dtype`` as PyTorch's op does
    (float16/bfloat16: computed in float32, rounded once) and hands it back widened. The rounding is fenced with
    an optimization barrier: XLA otherwise folds the float32 -> bfloat16 -> float32 round trip away."""
    if jnp.dtype(dtype) not in LOW:
        return (lambda v: v), (lambda v: v)

    def r(v):
        return jax.lax.optimization_barrier(v.astype(dtype)).astype(jnp.float32)
    return (lambda v: v.astype(jnp.float32)), r
