"""Autograd through a ``torchish.func`` transform from outside it, as PyTorch's: ``vmap(f)(w, x)`` with ``w``
requiring grad gives a result whose ``backward()`` reaches ``w.grad`` (training a model ensemble made by
``stack_module_state``, for one).

A transform computes its outputs as a pure JAX function of its input Tensors' values. :func:`recorded` runs that
function under ``jax.vjp`` when grad mode is on and a floating-point input requires grad, and gives the outputs one
backward node whose rule is the pullback (complex gradients conjugated as PyTorch's). With ``create_graph`` the node
recomputes the pullback through :func:`recorded` again, so that gradients of gradients are recorded too.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import Tensor, transform_scope_start
from ..ops import registry
from ..autograd.grad_mode import STATE
from ..autograd.graph import Node, node_class
from ._common import conj_complex, flatten, unflatten


def _inexact(value) -> bool:
    return jnp.issubdtype(value.dtype, jnp.inexact)


def _split(fn, vals, diff):
    """``fn`` as a function of the differentiated values only, returning (inexact outputs, (all outputs, aux))."""
    def of_diff(*dv):
        full = list(vals)
        for i, v in zip(diff, dv):
            full[i] = v
        outs, aux = fn(*full)
        return [o for o in outs if _inexact(o)], (outs, aux)
    return of_diff


class _TransformBackward(Node):
    __slots__ = ("fn", "inputs", "diff", "pullback")

    def release_saved(self):
        self.fn = self.inputs = self.pullback = None

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        cots = [g if g is not None else Tensor._make(jnp.zeros(shape, dtype))
                for g, (shape, dtype) in zip(grads, self.out_meta)]
        if not create_graph:
            got = self.pullback(conj_complex([c._d for c in cots]))
            return [Tensor._make(g) for g in conj_complex(list(got))]
        fn, inputs, diff = self.fn, self.inputs, self.diff
        n = len(inputs)

        def backward(*vals):
            _, pull, _ = jax.vjp(_split(fn, vals[:n], diff), *[vals[i] for i in diff], has_aux=True)
            return conj_complex(list(pull(conj_complex(list(vals[n:]))))), None
        return recorded(backward, list(inputs) + cots, type(self).__name__)[0]


def recorded(fn, tensors, name):
    """``fn(*values) -> (list of arrays, aux)`` run on the values of ``tensors``: ``(list of Tensors, aux)``, the
    Tensors recorded for autograd (one node named ``name``) when grad mode is on and an inexact input requires
    grad. Inputs that do not are passed as their own values (the same objects), so ``fn`` may tell them apart."""
    vals = [t._d for t in tensors]
    diff = [i for i, t in enumerate(tensors) if t._rg and _inexact(vals[i])]
    if not (STATE.grad_enabled and diff):
        outs, aux = fn(*vals)
        return [Tensor._make(o) for o in outs], aux
    _, pullback, (outs, aux) = jax.vjp(_split(fn, vals, diff), *[vals[i] for i in diff], has_aux=True)
    float_outs = [o for o in outs if _inexact(o)]
    node = node_class(_TransformBackward, name)(tuple(tensors[i]._edge() for i in diff),
                                                tuple((o.shape, o.dtype) for o in float_outs))
    node.fn, node.inputs, node.diff, node.pullback = fn, list(tensors), diff, pullback
    result, k = [], 0
    for o in outs:
        if _inexact(o):
            result.append(Tensor._make(o, requires_grad=True, grad_fn=node, out_nr=k))
            k += 1
        else:
            result.append(Tensor._make(o))
    return result, aux


class _captured_reads:
    """Collects the Tensors requiring grad that ops read while the block runs and that were made before it began
    (``ops.registry.read_hook``): what a transform's function captured from outside (a module's parameters, a
    closed-over tensor) besides its arguments."""

    def __init__(self):
        self.start = transform_scope_start()
        self.seen = {}

    def read(self, args):
        for a in args:
            if isinstance(a, Tensor) and a._rg and a._sn < self.start:
                self.seen.setdefault(id(a), a)

    def __enter__(self):
        self.prev, registry.read_hook = registry.read_hook, self.read
        return self

    def __exit__(self, *exc):
        registry.read_hook = self.prev
        return False

    def outside(self, explicit):
        """The Tensors read that are not among ``explicit`` (the transform's arguments), in reading order."""
        ids = {id(t) for t in explicit}
        return [t for k, t in self.seen.items() if k not in ids and _inexact(t._v)]


def differentiable_outside(transformed, name):
    """``transformed(*args, **kwargs)`` (a transform's wrapper, returning a pytree of Tensors) made differentiable
    with respect to the Tensors it depends on from outside, as PyTorch's transforms are: its Tensor arguments and the
    Tensors its function captured (a module's parameters in ``vmap(model)(x)``, a closed-over tensor). When one of
    them requires grad (and grad mode is on) it runs under :func:`recorded` with those Tensors holding the traced
    values, and its outputs share one backward node named ``name``. Captured Tensors are found by running it (the
    default generator's state is put back before a run that repeats it). Otherwise it runs as it is."""

    @functools.wraps(transformed)
    def wrapper(*args, **kwargs):
        if not STATE.grad_enabled or registry.read_hook is not None:  # (inside another one's run: it records)
            return transformed(*args, **kwargs)
        leaves, treedef = flatten((args, kwargs))
        explicit = [x for x in leaves if isinstance(x, Tensor)]
        rng = _random.default_generator._state._v
        captured = []
        if not any(t._rg for t in explicit):
            with _captured_reads() as reads:
                result = transformed(*args, **kwargs)
            captured = reads.outside(explicit)
            if not captured:
                return result
            _random.default_generator._set_state(rng)
        with _captured_reads() as reads:
            result = _run_recorded(transformed, args, kwargs, captured, name)
        more = [t for t in reads.outside(explicit) if all(t is not c for c in captured)]
        if not more:
            return result
        _random.default_generator._set_state(rng)
        with _captured_reads():  # (to keep nested transforms from recording on their own)
            return _run_recorded(transformed, args, kwargs, captured + more, name)

    return wrapper


def _run_recorded(transformed, args, kwargs, captured, name):
    leaves, treedef = flatten((args, kwargs))
    tensor_at = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    originals = [leaves[i]._d for i in tensor_at] + [t._d for t in captured]
    box = {}

    def compute(*tvals):
        new = list(leaves)
        for i, v, orig in zip(tensor_at, tvals, originals):
            if v is not orig:  # (differentiated: a Tensor around the traced value)
                new[i] = Tensor._make(v)
        swapped = [(t, orig, v) for t, v, orig in zip(captured, tvals[len(tensor_at):], originals[len(tensor_at):])
                   if v is not orig]
        for t, _, v in swapped:  # captured Tensors hold the traced values while the function runs
            t._v = v
        try:
            a, kw = unflatten(treedef, new)
            out_leaves, box["tree"] = flatten(transformed(*a, **kw))
        finally:
            for t, orig, _ in swapped:
                t._v = orig
        box["is_tensor"] = [isinstance(o, Tensor) for o in out_leaves]
        return [o._d for o in out_leaves if isinstance(o, Tensor)], [o for o in out_leaves if not isinstance(o, Tensor)]

    outs, others = recorded(compute, [leaves[i] for i in tensor_at] + list(captured), name)
    outs, others = iter(outs), iter(others)
    return unflatten(box["tree"], [next(outs) if t else next(others) for t in box["is_tensor"]])
