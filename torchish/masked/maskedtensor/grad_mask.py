"""The masks of MaskedTensor gradients.

In PyTorch the gradients of MaskedTensors are MaskedTensors, and each backward step computes the gradient's mask
as the forward computed the output's: an elementwise op keeps the mask it is handed, indexing puts the mask back
in place (``select_backward``: masked out elsewhere), ``where`` gives each branch the mask where it was chosen, a
reduction (and ``get_data``) hands back its input's own mask. So ``a[0].sum()`` gives ``a.grad`` with only row 0
valid, and ``torch.where(False, a / 0, c)`` gives ``a`` a fully masked-out gradient.

Here gradients flow as plain tensors, and the masks follow beside them: each op on MaskedTensors that require
grad records its MaskedTensor inputs (:func:`record`), with how an output position maps back to an input position
(``index``: the input's flat positions laid out as the output, made by running a shape op on ``arange``; None for
the same position) and which output positions come from that input (``select``: ``where``'s condition). A hook
on the output, run when backward reaches it (after everything that used it), hands its gradient mask (the one its
users handed it, else its own mask: the root of ``backward()``) to its inputs. A leaf's ``.grad`` and
``torch.autograd.grad`` take the mask collected so (:func:`take`)."""
from __future__ import annotations

import torchish
from ..._subclass import DisableTorchFunctionSubclass
from ..._tensor import Tensor


def take(t, default):
    """The gradient mask collected for ``t`` during backward (consumed), else ``default``."""
    return t.__dict__.pop("_grad_mask", None) if "_grad_mask" in t.__dict__ else default


def _add(t, mask):
    old = t.__dict__.get("_grad_mask")
    t._grad_mask = mask if old is None else old | mask


def flat_index(t, offset=0):
    """``t``'s flat positions (from ``offset``) laid out in its shape: the stand-in a shape op runs on to say where
    each of its output elements comes from."""
    return torchish.arange(offset, offset + t.numel()).reshape(t.shape)


def broadcast_index(t, shape):
    """``t``'s flat positions broadcast to ``shape`` (None when ``t`` has that shape already)."""
    if tuple(t.shape) == tuple(shape):
        return None
    return flat_index(t).expand(shape)


def _contribution(parent, grad_mask, index, offset, select, reset):
    own = parent.__dict__.get("_masked_mask")  # (None for a plain operand)
    shape = tuple(parent.shape)
    if own is None:
        own = torchish.ones(shape, dtype=torchish.bool)
    if reset:
        return own
    chosen = grad_mask if select is None else grad_mask & select
    if index is None:
        return chosen if tuple(chosen.shape) == shape else own
    n = parent.numel()
    inside = chosen & (index >= offset) & (index < offset + n)
    flat = torchish.zeros(n, dtype=torchish.bool)
    flat[index[inside] - offset] = True
    return flat.reshape(shape)


def _masked_leaf_grad(leaf):
    from .core import wrap
    if type(leaf.grad) is Tensor:
        with DisableTorchFunctionSubclass():
            leaf.grad = wrap(Tensor._make(leaf.grad._d), take(leaf, torchish.ones(tuple(leaf.shape),
                                                                                 dtype=torchish.bool)))


def plain_leaf(t):
    """A plain leaf operand of a MaskedTensor op: PyTorch hands it a MaskedTensor gradient, so its ``.grad``
    becomes one (with the collected mask) after accumulation."""
    if t.grad_fn is None and t.requires_grad and not t.__dict__.get("_masked_grad_hook"):
        t._masked_grad_hook = True
        with DisableTorchFunctionSubclass():
            Tensor.register_post_accumulate_grad_hook(t, _masked_leaf_grad)


def record(out, parents):
    """Make ``out`` (a result requiring grad) hand its gradient mask to ``parents`` during backward: a list of
    ``(parent MaskedTensor, index, offset, select, reset)``."""
    parents = [p for p in parents if p[0].requires_grad]
    if not parents or not out.requires_grad:
        return
    own = out.__dict__.get("_masked_mask")

    def hand_on(grad):
        with DisableTorchFunctionSubclass(), torchish.no_grad():
            mask = take(out, own)
            if mask is None:
                mask = torchish.ones(tuple(out.shape), dtype=torchish.bool)
            for parent, index, offset, select, reset in parents:
                _add(parent, _contribution(parent, mask, index, offset, select, reset))

    with DisableTorchFunctionSubclass():
        Tensor.register_hook(out, hand_on)
