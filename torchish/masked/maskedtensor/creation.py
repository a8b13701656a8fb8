"""``torch.masked.masked_tensor`` (a new leaf, as ``torch.tensor``) and ``torch.masked.as_masked_tensor`` (keeps
the data's autograd history, as ``torch.as_tensor``)."""
from __future__ import annotations

from .core import MaskedTensor, wrap


def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor leaf over a copy of ``data`` with ``mask`` (a boolean Tensor of the same shape).

    Example::

        >>> import torchish as torch
        >>> torch.masked.masked_tensor(torch.tensor([1., 2.]), torch.tensor([True, False])).sum()
        MaskedTensor(  1.0000, True)
    """
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor over ``data`` that stays in ``data``'s autograd graph (gradients reach ``data``)."""
    MaskedTensor(data.detach(), mask)  # (PyTorch's checks and warning, as its Constructor's forward)
    from ..._subclass import DisableTorchFunctionSubclass
    from ...ops.registry import apply
    from ...ops.tensor_api import _ALIAS
    from ..._tensor import Tensor
    from .core import data_of
    with DisableTorchFunctionSubclass():
        out = apply(_ALIAS, (data_of(data),))
        out.__class__ = Tensor
        m = Tensor._make(mask._d)
    return wrap(out, m)
