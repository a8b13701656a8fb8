"""The sparse weight gradient of ``embedding`` / ``embedding_bag`` looked up with ``sparse=True``.

PyTorch's ``embedding_sparse_backward`` gives the weight a sparse COO gradient: one entry per looked-up index, in
input order, its value that position's output gradient (for a bag: the bag's gradient, divided by its size in
``mode='mean'``, times the position's ``per_sample_weights``); positions holding ``padding_idx`` are left out. The
tensor is uncoalesced (duplicates stay separate entries) unless it has fewer than two entries.

Here the lookup's node is an ordinary registry node whose backward also returns those entries: its dense gradient
(the same scatter-add as ``sparse=False``) becomes a sparse tensor's value (``torchish.sparse``) and the entries
are made beside it from the saved indices. The engine then accumulates sparse gradients as PyTorch does
(``autograd/engine.py``). The entries need the indices' values, so a backward traced by ``torchish.compile`` that
reaches such a node runs eagerly instead (a graph break), and the lowered backward leaves these graphs node by node.

PyTorch's sparse add merges the two entry lists when both values tensors are contiguous and concatenates them
otherwise. Its values are a non-contiguous view when the lookup's output gradient is the expand of a ``sum``'s
backward that ``reshape(-1, dim)`` keeps as a view (``emb(x).sum()``, ``emb(idx).sum(0)``): the engine tells this
node which node produced its gradient (``Node.sees_producers``) and the entries carry that layout
(``_COO.contiguous``). Difference: other broadcast gradients (a ``sum``'s passed on unchanged by ``+``, a
user-given expanded ``gradient=``) count as contiguous here (merged, where PyTorch concatenates: more entries,
another order, the same ``coalesce()`` and ``to_dense()``). ``create_graph=True`` gives a sparse gradient with a
graph, as PyTorch's, whose ``grad_fn`` is named ``EmbeddingBackwardBackward0`` (PyTorch's:
``SparseCooTensorWithDimsAndTensorsBackward0``).
"""
from __future__ import annotations

import numpy as np

from ... import _meta
from ...ops import creation, lazy, tracing
from ...ops.inplace import contiguous_strides, is_contiguous, view_strides
from ...ops.opnode import OpNode, _rebuild
from ...ops.registry import overload
from ...autograd.graph import node_class
from ...sparse import _COO, mark_sparse

__all__ = ["sparse_variant"]


class _SparseWeightGrad(OpNode):
    """An embedding lookup's grad_fn whose weight gradient is sparse (``sparse=True``)."""

    __slots__ = ()
    sees_producers = True

    def apply_grads(self, grads, create_graph):
        producers = self.__dict__.pop("producers", None)
        res = super().apply_grads(grads, create_graph)
        g_out = grads[0]
        if res[0] is None or g_out is None:
            return res
        if tracing.active():
            raise tracing.concrete_error("a sparse embedding gradient (its indices)")
        vals, _ = self.saved_values()
        vals = tuple(lazy.concrete_all(vals))
        if _meta.has_meta(vals):  # (meta tensors: no indices to make entries of; the gradient stays dense)
            return res
        static = dict(self.static)
        contiguous = True
        if self.op.name == "embedding":
            indices, values = _lookup_entries(g_out, np.asarray(vals[1]), static["padding_idx"])
            contiguous = static["padding_idx"] is not None or not _broadcast_rows(producers, tuple(g_out.shape))
        else:
            psw = None if vals[3] is None else _rebuild(vals[3], self.next_edges[3] if create_graph else None)
            indices, values = _bag_entries(g_out, np.asarray(vals[1]), np.asarray(vals[2]), psw, static)
        idx = creation.tensor(indices.reshape(1, -1).astype(np.int64))
        res[0] = mark_sparse(res[0], _COO(idx, values, len(indices) < 2, contiguous))
        return res


def _broadcast_rows(producers, shape):
    """Whether PyTorch's values of a lookup's sparse gradient (its output gradient ``.reshape(-1, dim)``) are a
    non-contiguous view: the output gradient came from ``sum`` alone (the expand of its backward) and that reshape
    keeps the expanded strides (``emb(x).sum()``, ``emb(idx).sum(0)``; ``emb(x).sum(1)`` of a 2-d ``x`` copies)."""
    if producers is None or len(producers) != 1:
        return False
    p = producers[0]
    if not isinstance(p, OpNode) or p.op.name not in ("sum", "sum_all") or 0 in shape:
        return False
    static = dict(p.static)
    axes = range(len(shape)) if static["axis"] is None else [a % len(shape) for a in static["axis"]]
    kept = [1 if d in axes else n for d, n in enumerate(shape)] if static["keepdims"] else \
        [n for d, n in enumerate(shape) if d not in axes]
    strides = list(contiguous_strides(kept))
    if not static["keepdims"]:  # (PyTorch's unsqueeze: the new dim's stride is size * stride of the next one)
        for d in sorted(axes):
            strides.insert(d, strides[d] * kept[d] if d < len(kept) else 1)
            kept.insert(d, 1)
    strides = [0 if kept[d] == 1 and n != 1 else st for d, (n, st) in enumerate(zip(shape, strides))]
    new = view_strides(shape, strides, (int(np.prod(shape[:-1])), shape[-1]))
    return new is not None and not is_contiguous((int(np.prod(shape[:-1])), shape[-1]), new)


def _rows(g_out, positions):
    """The rows of ``g_out`` (as ``(n, dim)``) at ``positions`` (all of them when None)."""
    flat = g_out.reshape(-1, g_out.shape[-1])
    if positions is None:
        return flat
    return flat.index_select(0, creation.tensor(positions.astype(np.int64)))


def _lookup_entries(g_out, idx, padding_idx):
    """``embedding``'s entries: every position of ``idx`` but those holding ``padding_idx``."""
    idx = idx.reshape(-1)
    if padding_idx is None:
        return idx, _rows(g_out, None)
    keep = np.nonzero(idx != padding_idx)[0]
    return idx[keep], _rows(g_out, None if len(keep) == len(idx) else keep)


def _bag_entries(g_out, idx, offsets, psw, static):
    """``embedding_bag``'s entries (PyTorch's ``_embedding_bag_sparse_backward``): each position's bag gradient,
    divided by the bag's size (positions not holding ``padding_idx``) in mean mode, times its per-sample weight."""
    n, num_bags, padding_idx = idx.shape[0], static["num_bags"], static["padding_idx"]
    seg = np.searchsorted(offsets, np.arange(n), side="right") - 1
    keep = seg < num_bags  # (positions past the last bag belong to none)
    if padding_idx is not None:
        keep &= idx != padding_idx
    pos = np.nonzero(keep)[0]
    values = _rows(g_out, seg[pos])
    if static["mode"] == "mean":
        size = np.bincount(seg[pos], minlength=num_bags)
        values = values / creation.tensor(size[seg[pos]][:, None], dtype=values.dtype)
    if psw is not None:
        values = values * psw.index_select(0, creation.tensor(pos.astype(np.int64)))[:, None]
    return idx[pos], values


_VARIANTS: dict = {}


def sparse_variant(op):
    """``op`` (the ``embedding`` or ``embedding_bag`` registry entry) whose node gives the weight a sparse
    gradient: the same forward and dense VJP, PyTorch's node name."""
    v = _VARIANTS.get(op)
    if v is None:
        v = _VARIANTS[op] = overload(op, op.grad_name)
        v.node_cls = node_class(_SparseWeightGrad, op.grad_name)
    return v
