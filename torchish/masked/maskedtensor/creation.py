"""``torch.masked.masked_tensor`` (a new leaf, as ``torch.tensor``) and ``torch.masked.as_masked_tensor`` (keeps
the data's autograd history, as ``torch.as_tensor``)."""
from __future__ import annotations

from ..._subclass import DisableTorchFunctionSubclass
from .core import CONSTRUCTOR, MaskedTensor, wrap


def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor leaf over a copy of ``data`` with ``mask`` (a boolean Tensor of the same shape).

    Example::

        >>> import torchish as torch
        >>> torch.masked.masked_tensor(torch.tensor([1., 2.]), torch.tensor([True, False])).sum()
        MaskedTensor(  1.0000, True)
    """
    return MaskedTensor(data, mask, requires_grad)


def _mask_leaf_grads(data, mask):
    """PyTorch's gradient of ``as_masked_tensor(data, mask)`` is a MaskedTensor all the way back, so a plain leaf
    of ``data``'s graph gets a MaskedTensor ``.grad`` (``--`` where, e.g., ``x / 0`` made it nan). Here the leaves
    of the graph with ``data``'s shape get their ``.grad`` made a MaskedTensor with ``mask`` after accumulation."""
    from ..._tensor import Tensor
    from .core import is_masked_tensor
    seen, stack, leaves = set(), [data.grad_fn], [data] if data.grad_fn is None else []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)
        if isinstance(leaf, Tensor) and not is_masked_tensor(leaf) and tuple(leaf.shape) == tuple(mask.shape):
            leaves.append(leaf)
        stack.extend(fn for fn, _ in node.next_functions)

    def masked_grad(leaf):
        if type(leaf.grad) is Tensor:
            with DisableTorchFunctionSubclass():
                leaf.grad = wrap(Tensor._make(leaf.grad._d), mask)

    for leaf in leaves:
        leaf.register_post_accumulate_grad_hook(masked_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor over ``data`` that stays in ``data``'s autograd graph (gradients reach ``data``; a plain leaf
    with ``data``'s shape gets a MaskedTensor ``.grad``, as in PyTorch)."""
    MaskedTensor(data.detach(), mask)  # (PyTorch's checks and warning, as its Constructor's forward)
    from ...ops.registry import apply
    from ..._tensor import Tensor
    from .core import data_of
    with DisableTorchFunctionSubclass():
        out = apply(CONSTRUCTOR, (data_of(data),))
        out.__class__ = Tensor
        m = Tensor._make(mask._d)
    if data.requires_grad:
        _mask_leaf_grads(data, m)
    return wrap(out, m)
