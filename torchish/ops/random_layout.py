"""Random draws laid out as PyTorch's CPU kernels fill a tensor: in memory order, and only where a mask says.

PyTorch draws into a buffer element by element in memory order. A buffer made by ``empty_like(x)`` keeps ``x``'s
layout (its dims ordered by ``x``'s strides), so the noise of ``dropout(x.transpose(0, 1))`` is drawn along the
transposed memory: ``draw_like`` draws in that order and returns the samples in logical order.
``uniform_where`` is the serial kernels' pattern of drawing only for some elements (RReLU's slopes, one per
non-positive input): the stream advances by the number of elements drawn for, which may be a traced value.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _meta
from .. import _random as _generators
from .._random import generator_or_default
from .._tensor import Tensor
from . import _samplers
from .inplace import layout
from .out_layout import output_strides
from .draw import _target, draw, pow2_size


def fill_order(t: Tensor):
    """The dims of ``empty_like(t)`` from the outermost in memory to the innermost (PyTorch keeps a dense
    tensor's strides and orders other layouts by their strides), or None where that is ``t``'s logical order."""
    if t._view is None and t._layout is None:
        return None
    shape, strides, _ = layout(t)
    dense = output_strides([(shape, strides)], shape)
    if dense is None:
        return None
    order = sorted(range(len(shape)), key=lambda d: -dense[d])
    moved = [d for d in order if shape[d] != 1]
    return None if moved == sorted(moved) else tuple(order)


def draw_like(kind, t, shape, dtype, params=(), generator=None, static=None):
    """``draw(kind, shape, ...)`` beside ``t`` (of ``shape``), the samples filling ``t``'s memory order as
    PyTorch fills ``empty_like(t)``; returned in logical order (a raw array, as ``draw``)."""
    order = fill_order(t) if type(t._v) is not _meta.MetaArray else None
    if order is None:
        return draw(kind, shape, dtype, params, generator, static, device=t)
    # parameter tensors (bernoulli_'s probabilities, multinomial's) are laid out in the same order as the draw
    params = tuple(jnp.transpose(jnp.broadcast_to(p, shape), order) if getattr(p, "ndim", 0) else p for p in params)
    out = draw(kind, tuple(shape[d] for d in order), dtype, params, generator, static, device=t)
    return jnp.transpose(out, tuple(int(i) for i in np.argsort(order)))


def _between(mask, u, lo, hi):
    """``u * (hi - lo) + lo`` where ``mask``, 1 elsewhere, with the product rounded on its own: PyTorch's serial
    kernels (RReLU's) are built without FMA, unlike its vectorised uniform_. XLA would contract the multiply-add
    into one fused rounding (1 ulp off in ~20% of float64 values); a select between the two stops it (one on
    ``u`` being NaN, which a uniform in [0, 1) never is: selects XLA or LLVM can see through are folded away)."""
    product = jnp.where(jnp.isnan(u), 0.0, u * (hi - lo))
    return jnp.where(mask, product + lo, 1.0)


@functools.lru_cache(maxsize=256)
def _where_kernel(size, dtype):
    def k(state, mask, lo, hi):
        flat = mask.reshape(-1)
        count = jnp.sum(flat, dtype=jnp.int32)
        new, u = _samplers.sample("uniform", state, size, count, jnp.float64, (0.0, 1.0), None)
        slot = jnp.cumsum(flat, dtype=jnp.int32) - 1  # the i-th element drawn for takes the i-th uniform
        vals = _between(flat, u[jnp.clip(slot, 0, size - 1)], lo, hi)
        return new, vals.reshape(mask.shape).astype(dtype)
    return jax.jit(k)


def uniform_where(mask: Tensor, lo: float, hi: float, dtype, generator=None):
    """A raw array of ``dtype``: ``uniform_real_distribution<double>(lo, hi)`` draws (53 bits, two words each) for
    the True elements of ``mask`` in logical order, one after another as PyTorch's serial loops draw them, rounded
    to ``dtype``; 1 elsewhere. The stream advances by the number of True elements only."""
    m = mask._d
    if type(m) is _meta.MetaArray:
        return _meta.MetaArray(tuple(mask.shape), np.dtype(dtype))
    lo, hi = np.float64(lo), np.float64(hi)
    gen = generator_or_default(generator)
    state = gen._read()
    if _generators.key_source is not None or (isinstance(m, jax.core.Tracer) and type(m) is not type(state)):
        # inside torchish.func's transforms (a vmapped or differentiated mask, or keys of the transform's): a draw
        # for every element, so the generator's state never depends on the transformed values
        u = draw("uniform", tuple(mask.shape), np.float64, (0.0, 1.0), generator, device=mask)
        return _between(m, u, lo, hi).astype(dtype)
    size = pow2_size(m.size)  # shapes up to a power of two share one kernel
    target = _target(mask)
    if target is not None and isinstance(state, jax.Array) and state.devices() != {target}:
        state = jax.device_put(state, target)
    new, vals = _where_kernel(size, np.dtype(dtype))(state, m, lo, hi)
    gen._set_state(new)
    return vals
