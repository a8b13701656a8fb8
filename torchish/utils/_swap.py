"""``torch.utils.swap_tensors``: two Tensor objects exchange their contents (value, dtype, autograd state, class,
attributes) while each keeps its identity, so that references held elsewhere (an optimizer's parameter list) see the
new contents. ``nn.Module``'s conversions use it under ``torch.__future__.set_swap_module_params_on_conversion(True)``,
and ``load_state_dict`` then swaps each parameter with what ``Tensor.module_load`` returns.

Example:
    >>> a, b = torchish.ones(2), torchish.zeros(3)
    >>> torchish.utils.swap_tensors(a, b)
    >>> a
    tensor([0., 0., 0.])
"""
from __future__ import annotations

import copyreg
import weakref

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try to "
             "run backward on a tensor that was swapped. For a module m with "
             "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or dtype "
             "of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve this, "
             "please only change the device/dtype before running forward (or after both forward and backward).")


def _poisoned(grad_outputs):
    raise RuntimeError(_POISONED)


def _user_slots(cls):
    """The slots a Tensor subclass adds (PyTorch compares these; the Tensor's own state is swapped as a whole)."""
    from .._tensor import Tensor
    return set(copyreg._slotnames(cls)) - set(copyreg._slotnames(Tensor))


def _user_weakrefs(t):
    """Weak references to ``t`` other than the one in its base's list of views (torchish's aliases)."""
    refs = weakref.getweakrefs(t)
    if refs and t._view is not None and t._view[0]._views is not None:
        internal = {id(r) for r in t._view[0]._views.data}
        refs = [r for r in refs if id(r) not in internal]
    return refs


def swap_tensors(t1, t2):
    """Swap the contents of Tensors ``t1`` and ``t2``: afterwards ``t1`` has ``t2``'s and ``t2`` has ``t1``'s.

    Raises:
        RuntimeError: either has a weak reference, or their classes add different ``__slots__`` (as PyTorch).
    """
    from .._tensor import Tensor
    if not isinstance(t1, Tensor) or not isinstance(t2, Tensor):
        raise TypeError("swap_tensors: expected two Tensors")
    if _user_weakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if _user_weakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    if _user_slots(type(t1)) != _user_slots(type(t2)):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):  # a backward through a graph recorded before the swap would reach the wrong tensor
        acc = t._acc() if t._acc is not None else None
        if acc is not None:
            acc.register_prehook(_poisoned)
            t._acc = None
    for t in (t1, t2):  # an alias (detach(), .data) is listed, weakly, in its base's views: list the other object
        if t._view is not None and t._view[0]._views is not None:
            refs = t._view[0]._views.data
            for r in [r for r in refs if r() is t]:  # (by identity: a Tensor's == is elementwise)
                refs.discard(r)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for name in sorted(set(copyreg._slotnames(type(t1))) - {"__dict__", "__weakref__"}):
        has1, has2 = hasattr(t1, name), hasattr(t2, name)
        v1, v2 = getattr(t1, name, None), getattr(t2, name, None)
        if has2:
            setattr(t1, name, v2)
        elif has1:
            delattr(t1, name)
        if has1:
            setattr(t2, name, v1)
        elif has2:
            delattr(t2, name)
    for t in (t1, t2):
        if t._view is not None and t._view[0]._views is not None:
            t._view[0]._views.add(t)
        for v in list(t._views or ()):  # views of the storage this object now holds name it as their base
            if v._view is not None and v._view[0] is not t:
                v._view = (t,) + tuple(v._view[1:])
