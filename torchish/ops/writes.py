"""``x.at[idx].set(src)`` with PyTorch's gradient for repeated indices.

PyTorch differentiates an indexed write (index_put, scatter, index_copy, put) as ``grad_src = grad[idx]`` and
``grad_x = grad`` zeroed at ``idx``: every source element written to a position gets that position's gradient, also
when several are written to the same one. JAX's own rule gives it only to the write that lands. The tangent rule
below transposes to PyTorch's formula (its forward tangent for repeated indices sums the colliding sources, where
PyTorch's keeps one; both are defined for distinct indices only).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp


def set_at(x, idx, src):
    """``x.at[idx].set(src)``; ``idx`` is any index ``.at`` takes (an array, or a tuple of arrays and slices)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    # the static parts (slices, None, Ellipsis) go into the cached function; the arrays are its arguments
    layout = tuple(("s", p.start, p.stop, p.step) if isinstance(p, slice) else ("c", p) if p is None or p is Ellipsis
                   else None for p in parts)
    arrays = tuple(p for p, k in zip(parts, layout) if k is None)
    return _setter(layout, isinstance(idx, tuple))(x, arrays, src)


@functools.lru_cache(maxsize=None)
def _setter(layout, as_tuple):
    def index(arrays):
        it = iter(arrays)
        parts = tuple(next(it) if k is None else slice(*k[1:]) if k[0] == "s" else k[1] for k in layout)
        return parts if as_tuple else parts[0]

    @jax.custom_jvp
    def f(x, arrays, src):
        return x.at[index(arrays)].set(src)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, arrays, src = primals
        tx, _, tsrc = tangents
        idx = index(arrays)
        if jnp.ndim(tsrc) == 0:
            tsrc = jnp.broadcast_to(tsrc, jnp.shape(x.at[idx].get()))
        keep = jnp.ones(jnp.shape(x), jnp.bool_).at[idx].set(False)  # a mask, not a scatter: transposable as is
        return f(x, arrays, src), jnp.where(keep, tx, jnp.zeros_like(tx)) + jnp.zeros_like(tx).at[idx].add(tsrc)
    return f
