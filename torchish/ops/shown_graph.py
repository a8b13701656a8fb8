"""The autograd graph PyTorch shows for an op torchish runs as ONE fused node: ``F.linear``, ``matmul`` of a 1-d or
N-d operand, alpha dropout, ``.real``/``.imag`` of a complex tensor, a reshape that copies (``_unsafe_view`` of a
``clone``).

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

import math

import numpy as np

from ..autograd.graph import Node, node_class


class ShownNode(Node):
    """A node of PyTorch's graph that torchish's fused op has no node of its own for: shown, never run."""

    __slots__ = ()

    def __init__(self, edges):
        super().__init__(tuple(edges), (), saves=False)

    def _refuse(self, what):
        raise RuntimeError(f"torchish: {what} on {self.name()}, which torchish computes inside the fused node above "
                           "it (F.linear, a copying reshape and the other ops of ops/shown_graph.py are one node in "
                           "torchish); register the hook on that node or on a tensor instead")

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


# The kinds of linear node (nn._functional.linear._BY_KIND), by at::linear's path: input rank 2 -> "addmm"/"mm"; a
# contiguous 1-d or N-d input with a bias -> "view" (view, addmm, view back); otherwise matmul ("squeeze" for 1-d,
# "unsafe_view"/"unsafe_view_nc" for a reshape of a contiguous/copied N-d input) and an in-place add of the bias
# ("add1", "add_nc"). "alpha" is alpha dropout's ``input * mask_scale + shift``: AddBackward0 over MulBackward0 (the mask and shift: Tensors
# without grad)
_SUMS = ("add1", "add_nc", "alpha")
# Tensor.real / .imag of a complex tensor: PyTorch's view_as_real(z).select(-1, 0 or 1), SelectBackward0 over
# ViewAsRealBackward0
_PARTS = ("real", "imag")


def _matmul_edge(kind, ex, t):
    """The edge of at::matmul(input, weight.t())'s top node, for a bias-less linear of the given input kind."""
    if kind in ("squeeze", "add1"):
        return _shown("SqueezeBackward4", _shown("MmBackward0", _via("UnsqueezeBackward0", ex), t))
    x2 = _via("ViewBackward0", ex) if kind == "unsafe_view" else _via("UnsafeViewBackward0", _via("CloneBackward0", ex))
    return _shown("UnsafeViewBackward0", _shown("MmBackward0", x2, t))


# ---- matmul: torch.matmul views 1-d and N-d operands as matrices (at::matmul's paths) -------------------------

def _matmul_path(node):
    """``(path, inner node name, shape of the inner product)`` of the matmul ``node`` (kind ``("matmul", copies)``),
    or None where PyTorch's path is one :func:`next_functions` leaves to the fused node's own inputs."""
    sa, sb = tuple(node.vals[0].shape), tuple(node.vals[1].shape)
    da, db = len(sa), len(sb)
    name = node.op.grad_name
    if name == "SqueezeBackward4":  # 1-d @ 2-d: unsqueeze, mm, squeeze
        return "squeeze", "MmBackward0", (1, sb[-1])
    if name != "UnsafeViewBackward0" or da == 1:
        return None
    if da >= 3 and db <= 2:  # the batch folded into the rows of one mm (mv)
        return ("fold", "MmBackward0", (math.prod(sa[:-1]), sb[-1])) if db == 2 else \
            ("fold", "MvBackward0", (math.prod(sa[:-1]),))
    if da >= 3 and db == 3 and sb[0] == 1 and node.next_edges[1]:  # a grad-requiring batch-1 ``b``: squeezed, folded
        return "fold_squeezed", "MmBackward0", (math.prod(sa[:-1]), sb[-1])
    if db == 1:
        return None
    folded_a = da == 3 and db == 3 and sa[0] == 1 and sb[0] != 1 and node.next_edges[0]  # (folded, transposed:
    if da >= 3 and db >= 3 and not folded_a or da == 2 and db >= 3 and not node.next_edges[0]:  # not modelled)
        batch = np.broadcast_shapes(sa[:-2], sb[:-2])
        return "bmm", "BmmBackward0", (math.prod(batch), sa[-2], sb[-1])
    return None


def _matmul_next(kind, node):
    path = _matmul_path(node)
    if path is None:
        return None
    ea, eb = node.next_edges[:2]
    copies = kind[1]
    if path[0] == "squeeze":
        return (_shown("MmBackward0", _via("UnsqueezeBackward0", ea), eb),)
    if path[0] in ("fold", "fold_squeezed"):
        a = _via("UnsafeViewBackward0", _via("CloneBackward0", ea)) if "0" in copies else _via("ViewBackward0", ea)
        return (_shown(path[1], a, eb if path[0] == "fold" else _via("SqueezeBackward1", eb)),)

    alias = node.__dict__.get("reshape_alias", (False, False))

    def flat(e, copied, i):  # expanded to the common batch, then flattened to (batch, rows, cols): a copy, or a
        e = _via("ExpandBackward0", e)  # view of a contiguous (ViewBackward0) or other (ReshapeAliasBackward0) one
        if copied:
            return _via("UnsafeViewBackward0", _via("CloneBackward0", e))
        return _via("ReshapeAliasBackward0" if alias[i] else "ViewBackward0", e)
    return (_shown("BmmBackward0", flat(ea, "0" in copies, 0), flat(eb, "1" in copies, 1)),)


def next_functions(kind, node):
    """PyTorch's ``next_functions`` for the fused ``node`` (linear: inputs x, weight, bias)."""
    return tuple((e[0], e[1]) if e is not None else (None, 0) for e in _edges(kind, node))


def _edges(kind, node):
    """The edges of PyTorch's node (None where an input has no gradient)."""
    if type(kind) is tuple:
        edges = _matmul_next(kind, node)
        return node.next_edges[:2] if edges is None else edges  # (a path not modelled: the node's own inputs)
    ex, ew, eb = (tuple(node.next_edges) + (None, None, None))[:3]
    if kind == "clone":
        return (_via("CloneBackward0", ex),)
    if kind in _PARTS:
        return (_via("ViewAsRealBackward0", ex),)
    if kind == "alpha":
        return _shown("MulBackward0", ex, None), None
    t = _via("TBackward0", ew)
    if kind == "addmm":
        return eb, ex, t
    if kind == "mm":
        return ex, t
    if kind == "view":
        return (_shown("AddmmBackward0", eb, _via("ViewBackward0", ex), t),)
    if kind in ("add1", "add_nc"):
        return _matmul_edge(kind, ex, t), eb
    return _matmul_edge(kind, ex, t)[0].next_edges  # (the fused node is the bias-less matmul's top node)


def _t(g):
    return None if g is None else g.t()


def hook_grads(kind, node, grads_in, grads):
    """The fused node's ``grad_inputs`` as PyTorch's node of that name gives them to a hook."""
    if kind == "clone":  # (UnsafeViewBackward0's: the clone's gradient, which is the input's)
        return list(grads_in[:1])
    if kind in _PARTS:  # SelectBackward0's: the gradient of view_as_real's (..., 2) output
        g = grads[0]
        if g is None:
            return [None]
        from .join import stack
        zero = g.new_zeros(g.shape)
        return [stack((g, zero) if kind == "real" else (zero, g), -1)]
    if type(kind) is tuple:
        path = _matmul_path(node)
        if path is None:
            return list(grads_in[:2])
        g = grads[0]
        return [None if g is None else g.reshape(path[2])]
    gx, gw, gb = (list(grads_in) + [None, None, None])[:3]
    if kind == "addmm":
        return [gb, gx, _t(gw)]
    if kind == "mm":
        return [gx, _t(gw)]
    if kind in _SUMS:
        return [grads[0], gb if kind != "alpha" else None]
    g = grads[0]
    if g is None:
        return [None]
    if kind == "squeeze":
        return [g.unsqueeze(0)]
    return [g.reshape(-1, g.shape[-1])]


def unhook_grads(kind, node, shown, grads_in, grads, create_graph):
    """The fused node's input gradients after hooks replaced PyTorch's ``grad_inputs`` with ``shown``."""
    if kind == "clone":
        return list(shown)
    if kind in _PARTS:  # (view_as_real's backward: the pairs as complex numbers)
        from .shape import view_as_complex
        return [None if shown[0] is None else view_as_complex(shown[0].contiguous())]
    if type(kind) is tuple and _matmul_path(node) is None:
        return list(shown)
    if kind == "addmm":
        return [shown[1], _t(shown[2]), shown[0]]
    if kind == "mm":
        return [shown[0], _t(shown[1]), None]
    g = shown[0]
    if g is None:
        out = [None] * len(node.next_edges)
    else:  # the gradient of the product (or of the sum) changed: the inputs' gradients follow from it
        out = list(node.apply_grads([g.reshape(node.out_meta[0][0])], create_graph))
    if kind in ("add1", "add_nc"):  # (the bias's gradient is the add node's own input)
        out[2] = shown[1]
    return out
