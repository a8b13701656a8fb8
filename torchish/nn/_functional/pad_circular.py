"""``F.pad(mode="circular")`` where autograd records: ATen's ``_pad_circular`` op by op, so its graph is PyTorch's.

ATen allocates the padded tensor empty, copies the input (cropped where a pad is negative) into the slice of it the
pads leave, then, dim by dim from the last, copies the wrapped edges from the tensor itself: the left pad from the
right end of the copied range, the right pad from its left end. Each copy into a slice is a ``CopySlices`` node, the
sources ``SliceBackward0`` views (of the input, or of the padded tensor as it was after the previous copy).
"""
from __future__ import annotations


def pad_circular_graph(x, pad):
    """``F.pad(x, pad, mode="circular")`` as ATen's steps (``pad``: F.pad's pairs, the last dim first; checked)."""
    k, nd = len(pad) // 2, x.ndim
    ins, outs = list(x.shape), list(x.shape)
    for i in range(k):
        outs[nd - 1 - i] += pad[2 * i] + pad[2 * i + 1]
    out = x.new_empty(outs)
    dst, src = out, x
    for i in range(k):
        d, lo, hi = nd - 1 - i, pad[2 * i], pad[2 * i + 1]
        dst = dst.narrow(d, max(lo, 0), outs[d] - max(hi, 0) - max(lo, 0))
        src = src.narrow(d, max(-lo, 0), ins[d] - max(-hi, 0) - max(-lo, 0))
    dst.copy_(src)
    for i in range(k):
        d, lo, hi = nd - 1 - i, pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, outs[d] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, outs[d] - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out
