"""Tensors a traced call stores outside itself (``seen.append(x)`` in a hook, ``cache["h"] = h``): finding them
after a trace, returning their values from the program, and storing them again after a compiled call."""
from __future__ import annotations

import types

import jax
from jax.core import eval_jaxpr

from .errors import GraphBreakError


def _leaked(rec):
    """Tensors the trace created that are still alive after it, holding traced values: the function stored them
    outside itself (a Python side effect)."""
    def alive():
        out = []
        for r in rec._created:
            t = r()
            if t is not None and isinstance(t._v, jax.core.Tracer):
                out.append(t)
        return out
    if not alive():
        return []
    import gc
    gc.collect()  # the trace's autograd graph holds cycles of tensors and nodes
    return alive()


def _kept_alive(refs, rec):
    """Whether a tensor of the trace behind one of the weak references ``refs`` (an argument's stand-in) is still
    held after it by something other than the trace's autograd graph (a node kept by a cache) and the recorder
    ``rec`` (which notes the arguments written in place): the function stored it outside itself
    (``buffer.append(x)``, ``cache["x"] = x``, ``self.last = x``, ``p.data = x[:4]``)."""
    if all(r() is None for r in refs):
        return False
    import gc
    import types
    from ..autograd.graph import Node
    gc.collect()  # the trace's autograd graph holds cycles of tensors and nodes
    owned = {id(v) for v in vars(rec).values()}
    owned.update(map(id, rec.originals.values()))
    for r in refs:
        t = r()
        if t is not None and any(not isinstance(h, (Node, types.FrameType)) and id(h) not in owned
                                 for h in gc.get_referrers(t)):
            return True
    return False


def _store(tensors, values):
    """Give the tensors a traced call stored away their values (as tensors without history: their graph was the
    trace's)."""
    for t, v in zip(tensors, values):
        t._v = v
        t._vc.value += 1
        if t._gfn is not None:
            t._gfn, t._rg = None, False
        t._view = None


def module_slots(modules):
    """``{(id(holder), key): tensor}`` of the modules' buffers before a trace, for :func:`_replayable` (with the
    slots of ``pystate.PyState.slots``: the tensors the function's globals, closure variables and watched attributes
    held before it)."""
    return {(id(d), k): t for d in (m.__dict__.get("_buffers") for m in modules) if type(d) is dict
            for k, t in d.items()}


def _replayable(leaked, state, buffers, written):
    """The ``(holder, key, j)`` slots of stored tensors a compiled call can store again: each is kept only by one
    dict entry or closure variable, as a forward pre-hook's ``setattr(module, "weight", w)`` (legacy weight/spectral
    norm), ``cache["h"] = h`` or ``nonlocal h; h = ...`` keep it, and is either a computed tensor (with history, so
    the function cannot have read it back as state: ``j`` None) or a tensor the function rebinds where it read the
    state tensor ``j`` before (a module buffer: ``self.queue = torch.cat(...)`` under no_grad; a running loss in a
    global dict or a closure variable: ``G["ema"] = G["ema"] * 0.9 + loss.detach()``; ``buffers``: those slots
    before the trace, see :func:`module_slots`), so that the next call reads the stored tensor in its place. None
    when some stored tensor is kept otherwise (appended to a list) or the state holds computed tensors."""
    import gc
    if any(t._gfn is not None for t in state):
        return None
    index = {id(t): j for j, t in enumerate(state)}
    views = []  # the alias records of the stored tensors (``self.h = h.detach()`` keeps h alive through one)
    for u in leaked:
        if u._view is not None:
            views.append(u._view)
    slots = []
    for t in leaked:
        rebound = t._gfn is None
        # (plain loops: a comprehension closing over t would make a cell referring to it)
        refs = gc.get_referrers(t)
        holders = []
        for r in refs:
            if r is not leaked and r is not refs and r is not views:
                holders.append(r)
        base_only = bool(holders)
        for r in holders:
            if not any(r is v for v in views):
                base_only = False
        if base_only:  # only the base of stored aliases, which are stored again without it: nothing to store
            slots.append((None, None, None))
            continue
        if len(holders) != 1 or type(holders[0]) not in (dict, types.CellType):
            return None
        keys = [None]  # (a closure variable: ``nonlocal running; running = ...``)
        if type(holders[0]) is dict:
            keys = []
            for k, v in holders[0].items():
                if v is t:
                    keys.append(k)
        if len(keys) != 1:
            return None
        j = None
        if rebound:
            j = index.get(id(buffers.get((id(holders[0]), keys[0]))))
            if j is None or j in written:
                return None
        slots.append((holders[0], keys[0], j))
    return slots


def _with_leaks(traced, leaked, uniq, info):
    """A pure function like the trace's that replays its jaxpr (the user's Python is not run again) and also
    returns the values of the ``leaked`` tensors; and the executable-side record of those tensors."""
    closed = traced.jaxpr
    jaxpr = closed.jaxpr
    known = {id(v) for v in list(jaxpr.invars) + list(jaxpr.constvars)}
    known.update(id(v) for e in jaxpr.eqns for v in e.outvars)
    extra = [getattr(t._v, "val", None) for t in leaked]
    if any(id(v) not in known for v in extra):  # a value of an inner trace (a checkpointed block, a VJP)
        raise GraphBreakError(f"torchish.compile: the function stores tensors computed inside an inner transform "
                              f"outside itself ({len(leaked)} tensor(s)); such Python side effects cannot be traced")
    jaxpr = jaxpr.replace(outvars=list(jaxpr.outvars) + extra)
    out_tree, n = traced.out_tree, len(closed.jaxpr.outvars)

    def pure(arg_vals, state_vals, scalar_vals):
        unique = [state_vals[i] for i in uniq]
        out = eval_jaxpr(jaxpr, closed.consts, *jax.tree.leaves((arg_vals, unique, scalar_vals)))
        return tuple(jax.tree.unflatten(out_tree, out[:n])) + (out[n:],)
    return pure, leaked


_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_backward_hooks", "_backward_pre_hooks")


class ModuleHooks:
    """The hooks of the modules a call runs, and the global module hooks, before a trace of it. A hook the trace
    registers and leaves registered (``m.register_forward_hook(f)`` at every call, without ``remove()``) is a
    Python side effect: eager calls add one each (PyTorch's graph break runs each registration), a program would
    have added one for good, and a trace run twice (state that settles late) two. :meth:`added` says whether the
    trace left such a change, :meth:`restore` takes it back (the eager call that replaces the trace adds its own)."""

    def __init__(self, modules):
        from ..nn._hooks import GLOBAL
        dicts = [d for d in vars(GLOBAL).values() if isinstance(d, dict)]
        for m in modules:
            md = m.__dict__
            dicts.extend(md[name] for name in _HOOK_DICTS if isinstance(md.get(name), dict))
        self.before = [(d, list(d.items())) for d in dicts]

    def added(self):
        return any(len(d) != len(items) or any(k not in d or d[k] is not v for k, v in items)
                   for d, items in self.before)

    def restore(self):
        for d, items in self.before:
            d.clear()
            d.update(items)
