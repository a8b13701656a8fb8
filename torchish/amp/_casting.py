"""The autocast hook: the casts autocast puts in front of an op, from the policy of its name on its device type.

Installed as ``registry.autocast_hook`` while autocast is on in some thread (see ``_state``); ``apply`` calls it
with the op's name and arguments and runs the op on what it returns. A cast is the differentiable ``to_copy`` op,
so gradients flow back to the inputs in their own dtypes, and under ``torchish.compile`` the casts are traced into
the program like any other op.

Only floating Tensors other than float64 are cast (PyTorch's ``is_eligible``). As in PyTorch, the lower-precision
casts of float32 leaf Tensors that require grad (the weights) are cached until the outermost autocast region exits,
so a weight used by many ops is cast once per forward.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _device, _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..ops.convert import to_dtype
from . import _state
from .policy import BANNED_MESSAGE, FP32, LOWER, POLICY, PROMOTE

_F32 = _dtype.float32
_F32_NP = jnp.dtype(jnp.float32)
_ELIGIBLE = frozenset(jnp.dtype(d.np) for d in (_dtype.float16, _dtype.bfloat16, _dtype.float32))


def cast_args(name, args):
    """``args`` with their floating Tensors cast as autocast's policy for op ``name`` says (``args`` itself when
    nothing changes). Raises PyTorch's error for an op autocast bans."""
    modes = _state.LOCAL.modes
    if not modes or STATE.autocast_off:  # autocast is on in another thread only, or an in-place/out= op runs
        return args
    dev = _op_device(args, modes) if _device.accelerators() else "cpu"
    low = modes.get(dev)
    if low is None:
        return args
    policy = POLICY.get(dev, {}).get(name)
    if policy is None:
        return args
    if policy == LOWER:
        target = low
    elif policy == FP32:
        target = _F32
    elif policy == PROMOTE:
        target = _promote_type(args, low)
    else:
        raise RuntimeError(BANNED_MESSAGE)
    out = None
    for i, a in enumerate(args):
        c = _cast(a, target, low)
        if c is not a:
            if out is None:
                out = list(args)
            out[i] = c
    return args if out is None else tuple(out)


def _op_device(args, modes):
    """The device type of the op's first Tensor argument; for a traced value (no device), the enabled device type
    when there is one, else ``cuda``."""
    for a in args:
        if isinstance(a, (list, tuple)) and a:
            a = a[0]
        if isinstance(a, Tensor):
            v = a._v
            if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer):
                return _device.from_jax(next(iter(v.devices()))).type
            break
    return next(iter(modes)) if len(modes) == 1 else "cuda"


def _promote_type(args, low):
    """PyTorch's ``promote_type``: float32 if a float32 Tensor comes before any other dtype than ``low``."""
    current = low
    for t in _tensors(args):
        dt = t._v.dtype
        if dt not in _ELIGIBLE:  # float64 and non-floating Tensors do not take part
            continue
        if current is _F32 or dt == _F32_NP:
            current = _F32
        elif dt != low.np:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _tensors(args):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))


def _cast(a, target, low):
    if isinstance(a, Tensor):
        dt = a._v.dtype
        if dt not in _ELIGIBLE or dt == target.np:
            return a
        if target is low and dt == _F32_NP and a._rg and a._gfn is None and a._view is None \
                and _state.LOCAL.cache_enabled:
            return _cached_cast(a, target)
        return to_dtype(a, target)
    if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a):
        return type(a)(_cast(t, target, low) for t in a)
    return a


def _cached_cast(weight, target):
    """The cast of a weight, made once per autocast region (and per value and grad mode: an optimizer step or a
    ``no_grad`` block in between makes a fresh one)."""
    cache = _state.LOCAL.cache
    hit = cache.get(id(weight))
    if hit is not None and hit[1] is weight._v and hit[2] == STATE.grad_enabled and hit[3].dtype is target:
        return hit[3]
    out = to_dtype(weight, target)
    cache[id(weight)] = (weight, weight._v, STATE.grad_enabled, out)
    return out


_state.HOOK = cast_args
