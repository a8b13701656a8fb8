"""``tensordot`` (and ``inner``, which is a tensordot over the last dims) and ``linalg.multi_dot`` /
``chain_matmul`` where autograd records: ATen's composites op by op, so the graph below ``grad_fn`` is PyTorch's.

tensordot permutes each operand to (free, contracted) / (contracted, free) (``PermuteBackward0``), reshapes them to
matrices for one ``mm`` (``ViewBackward0``, or ``ReshapeAliasBackward0``/``UnsafeViewBackward0`` per reshape), or, where the free
dims hold one element on both sides, flattens them for a ``dot``; the product is reshaped to the result's shape.
multi_dot multiplies with ``mm`` in the cheapest order (three matrices: ATen's two-way cost comparison; more: the
matrix-chain order), a first vector unsqueezed as a row and a last as a column, and views the product to the
result's shape (``ViewBackward0`` on top). The steps are the Tensor methods, so values and gradients are theirs.
"""
from __future__ import annotations

import math

from .. import _dtype
from ..autograd.grad_mode import STATE


def records_graph(tensors):
    """Whether a composite is run op by op (PyTorch's graph): autograd records, the operands are float32 or float64
    alike and none is empty; else it stays one fused kernel (no-grad and eager speed unchanged)."""
    dt = tensors[0].dtype
    return (STATE.grad_enabled and any(t._rg for t in tensors) and dt in (_dtype.float32, _dtype.float64)
            and all(t.dtype is dt and 0 not in t.shape for t in tensors))


def tensordot_graph(a, b, dims_a, dims_b):
    """ATen's tensordot of ``a`` and ``b`` over the (wrapped) dims ``dims_a``/``dims_b`` (sizes matching)."""
    free_a = [i for i in range(a.ndim) if i not in dims_a]
    free_b = [j for j in range(b.ndim) if j not in dims_b]
    size_a = math.prod(a.shape[i] for i in free_a)
    size_b = math.prod(b.shape[j] for j in free_b)
    csize = math.prod(a.shape[i] for i in dims_a)
    shape = [a.shape[i] for i in free_a] + [b.shape[j] for j in free_b]
    ta, tb = a.permute(free_a + list(dims_a)), b.permute(list(dims_b) + free_b)
    if size_a == 1 and size_b == 1:
        return ta.flatten().dot(tb.flatten()).reshape(shape)
    return ta.reshape(size_a, csize).mm(tb.reshape(csize, size_b)).reshape(shape)


def chain_split_points(sizes):
    """The split points of the cheapest multiplication order (Cormen et al., ch. 15): ``split[i][j]``."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot_graph(tensors):
    """ATen's linalg_multi_dot of checked operands (2-d, the first and last may be 1-d)."""
    ts = list(tensors)
    shape = ([ts[0].shape[0]] if ts[0].ndim == 2 else []) + ([ts[-1].shape[1]] if ts[-1].ndim == 2 else [])
    if ts[0].ndim == 1:
        ts[0] = ts[0].unsqueeze(0)
    if ts[-1].ndim == 1:
        ts[-1] = ts[-1].unsqueeze(-1)
    if len(ts) == 2:
        return ts[0].mm(ts[1]).view(shape)
    if len(ts) == 3:
        a, b, c, d = ts[0].shape[0], ts[1].shape[0], ts[2].shape[0], ts[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):
            return ts[0].mm(ts[1].mm(ts[2])).view(shape)
        return ts[0].mm(ts[1]).mm(ts[2]).view(shape)
    split = chain_split_points([t.shape[0] for t in ts] + [ts[-1].shape[1]])
    # (iterative: each pending span is multiplied once both of its halves are)
    done, stack = {}, [(0, len(ts) - 1)]
    while stack:
        i, j = stack[-1]
        if i == j:
            done[i, j] = ts[i]
            stack.pop()
            continue
        k = split[i][j]
        halves = [h for h in ((i, k), (k + 1, j)) if h not in done]
        if halves:
            stack.extend(reversed(halves))
            continue
        done[i, j] = done[i, k].mm(done[k + 1, j])
        stack.pop()
    return done[0, len(ts) - 1].view(shape)
