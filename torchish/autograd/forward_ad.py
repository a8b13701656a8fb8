"""``torchish.autograd.forward_ad``: forward-mode automatic differentiation with dual tensors.

Inside a :class:`dual_level`, :func:`make_dual` attaches a *tangent* to a tensor. Every registry op that sees an
input with a tangent computes its output's tangent with ``jax.jvp`` of the op's own forward (one cached jitted
kernel per op and static arguments), so forward mode works through every op without per-op rules. The tangent
computation is itself an op, recorded by autograd like any other: tangents can be differentiated in reverse mode.
Leaving the level drops every tangent created inside it.

Example::

    >>> import torchish.autograd.forward_ad as fwAD
    >>> x, v = torchish.tensor([1.0, 2.0]), torchish.tensor([1.0, 0.0])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, v).sin()
    ...     jvp = fwAD.unpack_dual(y).tangent      # cos(x) * v
"""
from __future__ import annotations

import weakref
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .grad_mode import _DecoratorContextManager

_ATTR = "_fw_grad"  # where a dual tensor keeps its tangent (the Tensor's instance dict)


class _Levels:
    """The one forward-AD level PyTorch supports, and the tensors that carry a tangent at it."""

    def __init__(self):
        self.current = -1  # -1: no level
        self.duals: list = []  # weakrefs to tensors given a tangent at the current level
        self.suspended = 0  # > 0 while tangents themselves are being computed


_LEVELS = _Levels()


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: ``primal`` (the value, without tangent) and ``tangent`` (or None)."""

    primal: Tensor
    tangent: Optional[Tensor]


def enter_dual_level() -> int:
    """Open a new forward-AD level and return its index (nesting is not supported, as in PyTorch)."""
    if _LEVELS.current >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVELS.current = 0
    _LEVELS.duals = []
    _install_hook(True)
    return _LEVELS.current


def exit_dual_level(*, level=None) -> None:
    """Close the level: every tangent created in it is dropped."""
    if level is None:
        level = _LEVELS.current
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _LEVELS.current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    for ref in _LEVELS.duals:
        t = ref()
        if t is not None:
            t.__dict__.pop(_ATTR, None)
    _LEVELS.duals = []
    _LEVELS.current = -1
    _install_hook(False)


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) for one forward-AD level: ``with dual_level(): ...``."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _check_level(level, what):
    if level is None:
        level = _LEVELS.current
    if level < 0 or level != _LEVELS.current:
        raise RuntimeError(f"Trying to {what} for forward AD but no level exists, make sure to enter_dual_level() "
                           "first.")
    return level


def make_dual(tensor, tangent, *, level=None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` (its directional derivative) at the current level."""
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected tensor and tangent to be Tensors, got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if level is None and _LEVELS.current < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_level(level, "create a dual Tensor")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    with suspended():
        out = tensor.view_as(tensor)
    set_tangent(out, tangent)
    return out


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the primal is a view without tangent; the tangent is None when the
    tensor is not dual at this level."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual(): expected a Tensor, got {type(tensor).__name__}")
    tangent = get_tangent(tensor) if level is None or level == _LEVELS.current else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def get_tangent(t) -> Optional[Tensor]:
    """The tangent ``t`` carries at the current level, or None.

    A tensor rebuilt from its node (the saved inputs and outputs a ``create_graph=True`` backward works on, or a
    tensor rebound by an in-place op) finds the tangent its node's output got, so forward-over-reverse works.
    """
    if _LEVELS.current < 0 or not isinstance(t, Tensor):
        return None
    tangent = t.__dict__.get(_ATTR)
    if tangent is None and t._gfn is not None:
        per_output = t._gfn.__dict__.get(_ATTR)
        if per_output:
            tangent = per_output.get(t._out_nr)
    return tangent


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    """Attach ``tangent`` to the op output ``t`` (and to its node's output slot) at the current level."""
    t.__dict__[_ATTR] = tangent
    _LEVELS.duals.append(weakref.ref(t))
    node = t._gfn
    if node is not None:
        per_output = node.__dict__.get(_ATTR)
        if per_output is None:
            per_output = node.__dict__[_ATTR] = {}
            _LEVELS.duals.append(weakref.ref(node))
        per_output[t._out_nr] = tangent


def is_active() -> bool:
    """Whether a dual level is open (tangents propagate through ops)."""
    return _LEVELS.current >= 0 and not _LEVELS.suspended


class suspended:
    """Inside, ops do not propagate tangents (used while tangents themselves are computed)."""

    def __enter__(self):
        _LEVELS.suspended += 1

    def __exit__(self, *exc):
        _LEVELS.suspended -= 1
        return False


# ----------------------------------------------------------------------------------------------------------------
# propagation through registry ops


def _install_hook(on):
    from ..ops import registry
    registry.forward_hook = _propagate if on else None


_JVP_OPS: dict = {}


def _inexact(v):
    return hasattr(v, "dtype") and jnp.issubdtype(v.dtype, jnp.inexact)


def jvp_op(op, static, cdt, mask):
    """The tangent of ``op``'s outputs as an op of its own: ``(*inputs, *tangents of masked inputs) ->
    output tangents``. Its forward is ``jax.jvp`` of ``op``'s forward, so it is jitted once and cached, and it is
    recorded by autograd (its VJP derived by JAX) when the primals or tangents require grad."""
    key = (op, static, cdt, mask)
    jop = _JVP_OPS.get(key)
    if jop is not None:
        return jop
    from ..ops import kernels, registry
    fn = kernels._cast_fn(op, cdt)
    kw = dict(static)
    idx = tuple(i for i, m in enumerate(mask) if m)
    n_in = len(mask)

    def fwd(*flat):
        vals, tans = flat[:n_in], flat[n_in:]

        def f(*dv):
            full = list(vals)
            for i, v in zip(idx, dv):
                full[i] = v
            return fn(*full, **kw)

        prim = tuple(vals[i] for i in idx)
        tang = tuple(jnp.asarray(t, p.dtype) for t, p in zip(tans, prim))
        out, tout = jax.jvp(f, prim, tang)
        if isinstance(out, (tuple, list)):
            return tuple(t if _inexact(o) else jnp.zeros(o.shape, jnp.float32) for o, t in zip(out, tout))
        return tout

    jop = registry.OpDef(op.name + "_jvp", fwd, grad_name=op.grad_name)
    _JVP_OPS[key] = jop
    return jop


def _propagate(op, args, st, cdt, res):
    """Registry hook: give ``res`` (op's outputs, a Tensor or a tuple) the tangents implied by the tangents of
    ``args``. Python scalars and tensors without a tangent are constants of the tangent computation."""
    if _LEVELS.suspended or not op.differentiable:
        return
    tans = [get_tangent(a) if isinstance(a, Tensor) else None for a in args]
    mask = tuple(t is not None and _inexact(a._d) for a, t in zip(args, tans))
    if not any(mask):
        return
    jop = jvp_op(op, st, cdt, mask)
    from ..ops.opnode import drop_unused
    from ..ops.registry import apply
    with suspended():
        touts = apply(jop, drop_unused(jop, tuple(args) + tuple(t for t, m in zip(tans, mask) if m)))
    outs = res if isinstance(res, tuple) else (res,)
    touts = touts if isinstance(touts, tuple) else (touts,)
    for o, t in zip(outs, touts):
        if _inexact(o._d):
            set_tangent(o, t)
