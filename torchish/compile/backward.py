"""The grad_fn of a compiled forward's outputs (a compiled function called with inputs that require grad and
differentiated outside it): the compiled pullback as one autograd node; and that of outputs whose graph the
function used up itself (the loss of a training step that ran ``backward()``)."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from ..autograd.graph import _ERR_FREED, Node, node_class


class CompiledBackward(Node):
    """grad_fn of the outputs of a compiled forward: runs the compiled pullback. Subclasses change ``_pull``
    (how the saved pullback is called) and the create_graph refusal."""

    __slots__ = ()
    _create_graph_error = ("torchish.compile: create_graph=True through a compiled forward is not supported; "
                           "call backward(create_graph=True) inside the compiled function instead")

    def release_saved(self):
        self.pull = None

    def _pull(self, gs):
        return self.pullback(self.pull, gs)

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        if create_graph:
            raise RuntimeError(self._create_graph_error)
        gs = [g._d if g is not None else jnp.zeros(shape, dt) for g, (shape, dt) in zip(grads, self.out_meta)]
        da, ds = self._pull(gs)
        return [Tensor._make(g) for g in list(da) + list(ds)]


_COMPILED_NODE = node_class(CompiledBackward, "CompiledFunctionBackward")


def reached_inputs(out_leaves, state, saved, arg_tensors, first_seq):
    """Which arguments and state tensors the traced outputs' graph reaches (``(arg indices, state indices)``): only
    those get a gradient from a compiled forward's backward, as PyTorch's engine leaves the ``.grad`` of an input
    that requires grad but feeds no output through a differentiable path (a float mask, a detached input) None.
    ``saved``: each state tensor's ``(value, grad, grad_fn, ...)`` before the call; nodes older than ``first_seq``
    were made before the trace (the boundary: not walked through)."""
    boundary = {}
    for i, (t, before) in enumerate(zip(state, saved)):
        if t._rg or before[4]:
            node = before[2]
            if node is None:
                acc = t._acc() if t._acc is not None else None
                node = acc
            if node is not None:
                boundary[id(node)] = ("S", i)
    for k, tt in enumerate(arg_tensors):
        acc = tt._acc() if tt._acc is not None else None
        if acc is not None:
            boundary[id(acc)] = ("A", k)
    hit, seen = set(), set()
    stack = [x._grad_fn for x in out_leaves if isinstance(x, Tensor) and x._rg and x._grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        where = boundary.get(id(node))
        if where is not None:
            hit.add(where)
            continue
        if getattr(node, "seq", first_seq) < first_seq:
            continue
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return sorted(k for kind, k in hit if kind == "A"), sorted(i for kind, i in hit if kind == "S")


def _link_outputs(entry, pull, arg_tensors, tensors_out):
    d_arg, d_state, out_rg = entry.diff
    inputs = [arg_tensors[k] for k in d_arg] + [entry.state[i] for i in d_state]
    outs = [tensors_out[j] for j in out_rg]
    node = _COMPILED_NODE(tuple(t._edge() for t in inputs), tuple((o._v.shape, o._v.dtype) for o in outs))
    node.pull = pull
    node.pullback = entry.pullback
    for i, o in enumerate(outs):
        o._rg, o._grad_fn, o._out_nr = True, node, i


class SpentBackward(Node):
    """grad_fn of an output whose graph the compiled function differentiated itself (the loss a training step
    returns after ``loss.backward()``): it requires grad and has a ``grad_fn`` of its op's name, as in PyTorch,
    whose graph has freed its saved values by then, so a backward through it raises PyTorch's error."""

    __slots__ = ()

    def apply_grads(self, grads, create_graph):
        raise RuntimeError(_ERR_FREED)


def _spent_outputs(out_spec, tensors_out):
    """Give the outputs that had a graph in the trace, and are not linked to the compiled pullback, a spent one."""
    names = [rg for kind, rg in out_spec if kind == "T"]
    for name, o in zip(names, tensors_out):
        if name and o._grad_fn is None:
            o._rg, o._grad_fn = True, node_class(SpentBackward, name)((), ((o._v.shape, o._v.dtype),))
