"""The autograd graph PyTorch shows for an op torchish runs as ONE fused node: ``F.linear``.

PyTorch's ``at::linear`` is several autograd nodes (``addmm(bias, x, weight.t())``, with views of a 1-d or N-d input
and of the result), torchish's is one node that runs a single kernel each way. Code that walks the graph
(``loss.grad_fn.next_functions[0][0]``, torchviz, the 60-minute blitz) and hooks on the node see PyTorch's
structure here:

- ``next_functions`` of the fused node lists PyTorch's nodes below it; those torchish has no node for (the
  ``TBackward0`` of the weight, the ``AddmmBackward0`` under a ``ViewBackward0``, the input's views) are
  :class:`ShownNode` objects: their names, ``next_functions`` and ``metadata`` are PyTorch's, but the engine never
  runs them, so hooks cannot be registered on them (a clear error instead of a hook that would never fire).
- ``grad_fn.register_hook`` on the fused node gets PyTorch's ``grad_inputs`` (``AddmmBackward0``: the bias's, the
  input's and the transposed weight's gradient, in that order; a ``ViewBackward0`` on top: the gradient of the
  matrix product), and a hook's replacement flows on as in PyTorch.
"""
from __future__ import annotations

from ..autograd.graph import Node, node_class


class ShownNode(Node):
    """A node of PyTorch's graph that torchish's fused op has no node of its own for: shown, never run."""

    __slots__ = ()

    def __init__(self, edges):
        super().__init__(tuple(edges), (), saves=False)

    def _refuse(self, what):
        raise RuntimeError(f"torchish: {what} on {self.name()}, which torchish computes inside the fused node above "
                           "it (F.linear is one node in torchish); register the hook on that node or on a tensor "
                           "instead")

    def register_hook(self, fn):
        self._refuse("register_hook")

    def register_prehook(self, fn):
        self._refuse("register_prehook")

    def apply_grads(self, grads, create_graph):
        self._refuse("calling the node")


def _shown(name, *edges):
    """An edge to a :class:`ShownNode` named ``name`` over ``edges``."""
    return node_class(ShownNode, name)(edges), 0


def _via(name, edge):
    """The edge of a view PyTorch takes of an input: None where the input has no gradient (nor has its view)."""
    return None if edge is None else _shown(name, edge)


# the fused node's PyTorch name and structure, by (at::linear's path): input rank 2 -> addmm/mm; a contiguous 1-d
# or N-d input with a bias -> view, addmm, view back; otherwise matmul (squeeze/unsqueeze for 1-d, a reshape of
# the input and _unsafe_view of the result for N-d) and an in-place add of the bias
KINDS = ("addmm", "mm", "view", "squeeze", "unsafe_view", "unsafe_view_nc", "add1", "add_nc")


def _matmul_edge(kind, ex, t):
    """The edge of at::matmul(input, weight.t())'s top node, for a bias-less linear of the given input kind."""
    if kind in ("squeeze", "add1"):
        return _shown("SqueezeBackward4", _shown("MmBackward0", _via("UnsqueezeBackward0", ex), t))
    x2 = _via("ViewBackward0", ex) if kind == "unsafe_view" else _via("UnsafeViewBackward0", _via("CloneBackward0", ex))
    return _shown("UnsafeViewBackward0", _shown("MmBackward0", x2, t))


def next_functions(kind, node):
    """PyTorch's ``next_functions`` for the fused linear ``node`` (inputs x, weight, bias)."""
    ex, ew, eb = (tuple(node.next_edges) + (None, None, None))[:3]
    t = _via("TBackward0", ew)
    if kind == "addmm":
        edges = (eb, ex, t)
    elif kind == "mm":
        edges = (ex, t)
    elif kind == "view":
        edges = (_shown("AddmmBackward0", eb, _via("ViewBackward0", ex), t),)
    elif kind in ("add1", "add_nc"):
        edges = (_matmul_edge(kind, ex, t), eb)
    else:  # the top node of the bias-less matmul is the fused node: its input is the matrix product
        edges = _matmul_edge(kind, ex, t)[0].next_edges
    return tuple((e[0], e[1]) if e is not None else (None, 0) for e in edges)


def _t(g):
    return None if g is None else g.t()


def hook_grads(kind, node, grads_in, grads):
    """The fused node's ``grad_inputs`` as PyTorch's node of that name gives them to a hook."""
    gx, gw, gb = (list(grads_in) + [None, None, None])[:3]
    if kind == "addmm":
        return [gb, gx, _t(gw)]
    if kind == "mm":
        return [gx, _t(gw)]
    if kind in ("add1", "add_nc"):
        return [grads[0], gb]
    g = grads[0]
    if g is None:
        return [None]
    if kind == "squeeze":
        return [g.unsqueeze(0)]
    return [g.reshape(-1, g.shape[-1])]


def unhook_grads(kind, node, shown, grads_in, grads, create_graph):
    """The fused node's input gradients after hooks replaced PyTorch's ``grad_inputs`` with ``shown``."""
    if kind == "addmm":
        return [shown[1], _t(shown[2]), shown[0]]
    if kind == "mm":
        return [shown[0], _t(shown[1]), None]
    g = shown[0]
    if g is None:
        out = [None, None, None]
    else:  # the gradient of the product (or of the sum) changed: the inputs' gradients follow from it
        out = list(node.apply_grads([g.reshape(node.out_meta[0][0])], create_graph))
    if kind in ("add1", "add_nc"):  # (the bias's gradient is the add node's own input)
        out[2] = shown[1]
    return out
