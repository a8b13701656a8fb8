"""In-place ops and writes through views.

An in-place op computes its result out of place (recording the graph as usual) and then rebinds the target
(:meth:`Tensor._assign`). Writing into a view writes a new value into its *base* with ``view_write`` — a scatter of
the view's elements into the base (PyTorch's ``CopySlices``) — and every live view of that base is refreshed by
replaying its chain of view ops.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor, _VIEW_WRITE, wrap
from ..autograd.grad_mode import STATE
from . import registry, tracing
from .registry import apply, defop


def _chain_apply(x, chain):
    """Apply a chain of view ops (pure JAX) to ``x``."""
    for op, st in chain:
        kw = dict(st)
        i = kw.pop("_out", None)
        x = op.fwd(x, **kw)
        if i is not None:
            x = x[i]
    return x


def _view_write_fwd(base, new, *, chain):
    idx = jnp.arange(base.size, dtype=jnp.int64 if base.size > 2**31 - 1 else jnp.int32).reshape(base.shape)
    sel = _chain_apply(idx, chain)
    new = jnp.broadcast_to(jnp.asarray(new, base.dtype), sel.shape)
    return base.reshape(-1).at[sel.reshape(-1)].set(new.reshape(-1)).reshape(base.shape)


VIEW_WRITE = defop("view_write", _view_write_fwd, grad_name="CopySlices")


def _write(view, base, chain, diff, r):
    """``view`` (of ``base`` via ``chain``) takes the value of ``r``: write it into the base."""
    if diff:
        new_base = apply(VIEW_WRITE, (base, r), chain=chain)
    else:
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            new_base = apply(VIEW_WRITE, (base, r), chain=chain) if chain else wrap(r._d)
        finally:
            STATE.grad_enabled = prev
    base._rebind(new_base, view._vc)  # a `.data` alias bumps a counter of its own


def _refresh(view, base, chain, diff):
    """Replay the view's chain on the (changed) base, recording the graph when the base requires grad."""
    record = diff and base._rg and STATE.grad_enabled
    if not record:
        view._d = _replay_value(base._d, chain)
        return
    t = base
    for op, st in chain:
        kw = dict(st)
        i = kw.pop("_out", None)
        st2 = tuple(kw.items())
        out = registry.run_forward(op, [t._d], st2, None)
        outs = tuple(wrap(o) for o in out) if isinstance(out, (tuple, list)) else (wrap(out),)
        registry._record(op, (t,), [t._d], st2, None, outs)
        t = outs[i if i is not None else 0]
    view._d = t._d
    view._grad_fn = t._grad_fn
    view._out_nr = t._out_nr
    view._rg = True


@functools.lru_cache(maxsize=512)
def _chain_kernel(chain):
    return jax.jit(lambda x: _chain_apply(x, chain))


def _replay_value(x, chain):
    if tracing.active():
        return _chain_apply(x, chain)
    return _chain_kernel(chain)(x)


_VIEW_WRITE.write = _write
_VIEW_WRITE.refresh = _refresh


# ----------------------------------------------------------------------------------------------------------------
# in-place ops


def assign(self: Tensor, r) -> Tensor:
    """Write result ``r`` into ``self`` with PyTorch's checks: the dtype must be castable and the shape must be
    self's (a broadcastable result is expanded)."""
    from . import convert, shape as _shape
    if not isinstance(r, Tensor):
        r = Tensor._make(jnp.asarray(r, self._d.dtype))
    if r._d.dtype != self._d.dtype:
        rd, sd = r.dtype, self.dtype
        if not _dtype.can_cast(rd, sd):
            raise RuntimeError(f"result type {_dtype.scalar_type_name(rd)} can't be cast to the desired output type "
                               f"{_dtype.scalar_type_name(sd)}")
        r = convert.to_dtype(r, sd)
    if r._d.shape != self._d.shape:
        try:
            import numpy as np
            full = np.broadcast_shapes(r._d.shape, self._d.shape)
        except ValueError:
            full = None
        if full is None or tuple(full) != self._d.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(full) if full is not None else list(r.shape)}")
        r = _shape.expand(r, self._d.shape)
    return self._assign(r)


def make_inplace(fn, name=None):
    """``fn_`` from an out-of-place ``fn(self, ...)``: checks, computes out of place, writes back."""
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        self._check_inplace()
        return assign(self, fn(self, *args, **kwargs))
    method.__name__ = name or (fn.__name__ + "_")
    method.__qualname__ = "Tensor." + method.__name__
    return method
