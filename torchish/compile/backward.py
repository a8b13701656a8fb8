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
