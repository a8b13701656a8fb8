"""The traced path of ``torchish.utils.checkpoint``: inside ``torchish.compile`` (or any JAX trace) the checkpointed
function is traced to a pure JAX function of its tensor inputs and of the traced values it reads (parameters, the
RNG key), wrapped in ``jax.checkpoint`` and differentiated with ``jax.vjp``, so XLA rematerialises it in the
backward pass. Values the function writes (RNG key, buffers) come out as extra outputs and are written back.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import _SERIAL, Tensor
from ..autograd.grad_mode import STATE, no_grad, unusual
from ..compile.backward import CompiledBackward


def _is_tensor(x):
    return isinstance(x, Tensor)


class _ReadLog:
    """Stands in for ``STATE.recorder`` while the function is traced: notes the pre-existing tensors it reads or
    writes (with their value when first seen), and passes every event on to torchish.compile's recorder."""

    def __init__(self, prev, start):
        self.prev = prev
        self.start = start
        self.seen = {}

    def _note(self, t, value):
        if t._sn < self.start and id(t) not in self.seen:
            self.seen[id(t)] = (t, value)

    def read(self, args):
        for a in args:
            if _is_tensor(a):
                self._note(a, a._v)
        if self.prev is not None:
            self.prev.read(args)

    def wrote(self, t):
        self._note(t, None)
        if self.prev is not None:
            self.prev.wrote(t)

    def created(self, t):
        if self.prev is not None:
            self.prev.created(t)

    def scalar(self, container, key, value):
        return self.prev.scalar(container, key, value) if self.prev is not None else value

    def module(self, m):
        if self.prev is not None:
            self.prev.module(m)

    @property
    def backward_ran(self):
        return getattr(self.prev, "backward_ran", False)

    @backward_ran.setter
    def backward_ran(self, value):
        if self.prev is not None:
            self.prev.backward_ran = value


class JaxCheckpointBackward(CompiledBackward):
    """grad_fn of a traced checkpoint's outputs: the pullback of the ``jax.checkpoint``-wrapped function."""

    __slots__ = ()
    _create_graph_error = ("torchish.utils.checkpoint: create_graph=True through a checkpoint traced inside "
                           "torchish.compile is not supported; use it in eager mode")

    def _pull(self, gs):
        return self.pull(gs)


def _inexact(t):
    return jnp.issubdtype(t._v.dtype, jnp.inexact)


def checkpoint_traced(function, args, kwargs, policy):
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
    pos = [i for i, x in enumerate(leaves) if _is_tensor(x)]
    in_vals = [leaves[i]._d for i in pos]
    gen = _random.default_generator
    # jax.closure_convert caches the function it converts: reach the user's objects through a box emptied after
    box = {"leaves": leaves, "function": function}

    def pure(*vals):
        start = next(_SERIAL)
        leaves, function = box["leaves"], box["function"]
        new = list(leaves)
        for i, v in zip(pos, vals):
            new[i] = Tensor._make(v)
        a, kw = jax.tree_util.tree_unflatten(tree, new)
        log = _ReadLog(STATE.recorder, start)
        key = gen._state._v
        prev, STATE.recorder = STATE.recorder, log
        unusual(1)
        STATE.jax_diff += 1  # (JAX differentiates the block: torchish records nothing, the user's no_grad still cuts)
        try:
            with no_grad():
                STATE.user_grad = True
                out = function(*a, **kw)
        finally:
            STATE.recorder = prev
            unusual(-1)
            STATE.jax_diff -= 1
        out_leaves, out_tree = jax.tree_util.tree_flatten(out, is_leaf=_is_tensor)
        written = [t for t, v in log.seen.values() if t._v is not v]
        if gen._state._v is not key and all(t is not gen._state for t in written):
            written.append(gen._state)
        box["info"] = dict(out_tree=out_tree, written=written, reads=log.seen,
                           spec=[("T", None) if _is_tensor(x) else ("C", x) for x in out_leaves])
        return [x._d for x in out_leaves if _is_tensor(x)], [t._d for t in written]

    try:
        conv, consts = jax.closure_convert(pure, *in_vals)
        info = box["info"]
    finally:
        box.clear()
    by_value = {}
    for t, v in info["reads"].values():
        if v is not None and (id(v) not in by_value or t._rg):
            by_value[id(v)] = t
    d_in = [k for k, i in enumerate(pos) if leaves[i]._rg and _inexact(leaves[i])]
    const_t = [by_value.get(id(c)) for c in consts]
    d_c = [j for j, t in enumerate(const_t) if t is not None and t._rg and _inexact(t)]
    differentiable = STATE.grad_enabled and bool(d_in or d_c)

    def f(dx, dc):
        vals, cs = list(in_vals), list(consts)
        for k, v in zip(d_in, dx):
            vals[k] = v
        for j, v in zip(d_c, dc):
            cs[j] = v
        outs, written = conv(*vals, *cs)
        diff = [o for o in outs if jnp.issubdtype(o.dtype, jnp.inexact)]
        return diff, (outs, written)

    ck = jax.checkpoint(f, policy=policy)
    primal = ([in_vals[k] for k in d_in], [consts[j] for j in d_c])
    if differentiable:
        _, pull, (outs, written) = jax.vjp(ck, *primal, has_aux=True)
    else:
        _, (outs, written) = ck(*primal)
    for t, v in zip(info["written"], written):
        if t is gen._state:
            gen._set_state(v)
        else:
            t._set_value(v)
    res = [Tensor._make(o) for o in outs]
    diff_outs = [t for t in res if _inexact(t)]
    if differentiable and diff_outs:
        edges = [leaves[pos[k]]._edge() for k in d_in] + [const_t[j]._edge() for j in d_c]
        node = JaxCheckpointBackward(tuple(edges), tuple((o._v.shape, o._v.dtype) for o in diff_outs))
        node.pull = pull
        for k, o in enumerate(diff_outs):
            o._rg, o._gfn, o._out_nr = True, node, k
    it = iter(res)
    out = [next(it) if kind == "T" else x for kind, x in info["spec"]]
    return jax.tree_util.tree_unflatten(info["out_tree"], out)
