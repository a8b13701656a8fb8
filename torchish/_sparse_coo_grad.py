"""The sparse gradients PyTorch gives COO tensors: ``s.grad`` of a sparse leaf is a sparse tensor when the
gradient reached it through an op whose backward runs on sparse tensors, and dense otherwise, as PyTorch's.

PyTorch's backward of ``to_dense``, ``torch.sparse.sum``/``mm``/``addmm``/``softmax``/``log_softmax``, ``values()``,
``x.sparse_mask(s)`` and of the elementwise ops with sparse kernels that read their input (``abs``, ``relu``,
``pow``...) hands the sparse input a sparse gradient: entries at the input's coalesced indices. A sparse gradient
stays sparse back through the sparse-to-sparse ops (``s * 2``, ``-s``, ``s.double()``, ``s.coalesce()``,
``s.t()``, ``s.permute(...)``, ``s + s2``: their formulas are sparse ops), so ``(s * 2).to_dense().sum()`` gives
``s.grad`` sparse; a dense gradient stays dense (``s.sum()``, ``s @ x``, ``(s * 2).sum()``: ``s.grad`` is strided,
as in PyTorch).

Here every gradient is computed on dense values (torchish's sparse tensors hold their dense value), and those ops
already mask it to the entries. Their nodes then also make it a sparse tensor: the op's node is given a class
whose backward attaches the entries (:func:`hands_sparse_grad` for the ops that make a sparse gradient,
:func:`passes_sparse_grad` for those that keep one sparse), with PyTorch's coalesced flag (set, except after a
transpose; the leaf's ``AccumulateGrad`` then clears it as PyTorch's does, unless the values were a strided view
there: ``torch.sparse.sum(s)``, ``values()``). Such a graph runs node by node (the lowered backward computes dense
gradients only). Difference: ``to_dense(masked_grad=False)`` hands a dense gradient inside ``torchish.compile``
(its entries are the gradient's nonzeros, a value).

Example:
    >>> import torchish as torch
    >>> s = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse().requires_grad_()
    >>> torch.sparse.sum(s * 2).backward()
    >>> s.grad.layout, s.grad.coalesce().values()
    (torch.sparse_coo, tensor([2., 2.]))
"""
from __future__ import annotations

import numpy as np

from ._tensor import Tensor
from .autograd.graph import node_class
from .ops import creation as _creation, tracing
from .ops.opnode import OpNode
from .sparse import _COO, mark_sparse

_NONZERO = "nonzero"  # (the entries of ``to_dense(masked_grad=False)``'s gradient: its nonzeros)


def _as_sparse(g, indices, coalesced, contiguous=True):
    """The dense gradient ``g`` (a fresh tensor, zero off the entries) as a sparse one with entries at
    ``indices``."""
    if isinstance(indices, str):  # (_NONZERO)
        if tracing.active():
            return g
        nonzero = np.asarray(g._concrete()) != 0
        indices = _creation.tensor(np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(g.dim(), -1))
    values = Tensor.unsqueeze(g, 0) if not indices.shape[0] else Tensor.__getitem__(g, tuple(indices.unbind(0)))
    return mark_sparse(g, _COO(indices, values, coalesced, contiguous))


def _fresh(res, grads, create_graph):
    """``res`` (a node's input gradient) as a tensor of its own: a backward that passes its incoming gradient on
    unchanged returns that very tensor, which must not take the entries (a recorded copy with ``create_graph``)."""
    if not any(res is g for g in grads):
        return res
    return Tensor.clone(res) if create_graph else Tensor._make(res._d)


class _MakesSparseGrad(OpNode):
    """The node of an op whose backward hands a sparse input a sparse gradient (``__dict__["sparse_grads"]``:
    input position -> (indices, coalesced, contiguous))."""

    __slots__ = ()

    def apply_grads(self, grads, create_graph):
        res = super().apply_grads(grads, create_graph)
        incoming_sparse = bool(grads) and grads[0] is not None and grads[0]._coo is not None
        for pos, (indices, coalesced, contiguous, when_sparse) in self.__dict__["sparse_grads"].items():
            if when_sparse and not incoming_sparse:
                continue
            if res[pos] is not None and res[pos]._coo is None:
                res[pos] = _as_sparse(_fresh(res[pos], grads, create_graph), indices, coalesced, contiguous)
        return res


class _KeepsSparseGrad(OpNode):
    """The node of a sparse-to-sparse op: a sparse incoming gradient gives the inputs at ``__dict__
    ["sparse_inputs"]`` (position -> the permutation of the index rows, or None) a sparse gradient with its entries
    (PyTorch's formulas for these ops are sparse ops on the gradient)."""

    __slots__ = ()

    def apply_grads(self, grads, create_graph):
        res = super().apply_grads(grads, create_graph)
        g = grads[0] if grads else None
        if g is None or g._coo is None:
            return res
        same = type(self).__name__ in _PASSED_AS_IS
        for pos, rows in self.__dict__["sparse_inputs"].items():
            if res[pos] is not None and res[pos]._coo is None and tuple(res[pos].shape) == _shape_back(g, rows):
                indices = g._coo.indices if rows is None else g._coo.indices[list(rows)]
                res[pos] = _as_sparse(_fresh(res[pos], grads, create_graph), indices,
                                      g._coo.coalesced and not rows, g._coo.contiguous or not same)
        return res


# the nodes whose backward returns the incoming gradient itself (its values' layout with it)
_PASSED_AS_IS = frozenset({"CoalesceBackward0", "CloneBackward0"})


def _shape_back(g, rows):
    """The shape of the gradient of the input of a sparse-to-sparse op whose output gradient is ``g``; ``rows``:
    the output dim each input dim's index row came from."""
    if rows is None:
        return tuple(g.shape)
    shape = list(g.shape)
    for in_dim, out_dim in enumerate(rows):
        shape[in_dim] = g.shape[out_dim]
    return tuple(shape)


def _swap_class(node, base):
    """Give ``node`` (a plain registry node) the class of ``base`` with its name; False where it is not one."""
    if not isinstance(node, OpNode) or type(node).apply_grads is not OpNode.apply_grads:
        return isinstance(node, base)
    node.__class__ = node_class(base, type(node).__name__)
    return True


def hands_sparse_grad(out, pos, indices, coalesced=True, contiguous=True, when_sparse=False):
    """Make the node of ``out`` hand its input at ``pos`` a sparse gradient with entries at ``indices`` (the
    coalesced indices of that sparse input; :data:`_NONZERO` for the gradient's nonzeros); ``when_sparse``: only
    when the gradient reaching ``out`` is sparse (a stack's)."""
    node = out._gfn
    if node is not None and _swap_class(node, _MakesSparseGrad):
        node.__dict__.setdefault("sparse_grads", {})[pos] = (indices, coalesced, contiguous, when_sparse)
    return out


def passes_sparse_grad(out, sources, rows=None):
    """Make the node of ``out`` (a sparse result) pass a sparse gradient on sparse to its inputs that are the
    sparse tensors ``sources``; ``rows``: the input dim of each output index row (a permute's dims)."""
    node = out._gfn
    if node is None or not any(t._rg for t in sources) or not _swap_class(node, _KeepsSparseGrad):
        return out
    edges = [t._edge() for t in sources if t._rg]
    inverse = _inverse(rows)
    node.__dict__["sparse_inputs"] = {
        pos: inverse for pos, e in enumerate(node.next_edges)
        if e is not None and any(e[0] is s[0] and e[1] == s[1] for s in edges if s is not None)}
    return out


def _inverse(rows):
    """For each input dim, the output dim its index row went to (None: the identity)."""
    if rows is None or list(rows) == sorted(rows):
        return None
    inverse = [0] * len(rows)
    for out_dim, in_dim in enumerate(rows):
        inverse[in_dim] = out_dim
    return tuple(inverse)
