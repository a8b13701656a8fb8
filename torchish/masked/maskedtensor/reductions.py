"""MaskedTensor's reductions (``sum``, ``mean``, ``amin``, ``amax``, ``argmin``, ``argmax``, ``prod``, ``all``,
``norm``, ``var``, ``std``, as functions and methods): the masked reduction of :mod:`torchish.masked` over the data,
wrapped with the mask "any element was valid" over the reduced dims, as PyTorch's ``maskedtensor/reductions.py``.
Also the step a masked operation takes when handed a MaskedTensor itself (:func:`combine_masked`)."""
from __future__ import annotations

from ..._subclass import DisableTorchFunctionSubclass
from ...ops.registry import apply
from .core import CONSTRUCTOR, data_of, mask_of, wrap
from .grad_mask import record

REDUCTIONS = ("sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var", "std")


def _masked_fn(name):
    from ... import masked
    return getattr(masked, name)


def _all(data, mask, dim=None, keepdim=False):
    filled = data.masked_fill(~mask, True)
    return filled.all() if dim is None else filled.all(dim=dim, keepdim=keepdim)


def _any_over(mask, dim, keepdim):
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


def _reduce_all(name, self):
    data, mask = data_of(self), mask_of(self)
    with DisableTorchFunctionSubclass():
        out = _all(data, mask) if name == "all" else _masked_fn(name)(data, mask=mask)
        any_mask = mask.any()
        out = apply(CONSTRUCTOR, (out,))
    out = wrap(out, any_mask)
    record(out, [(self, None, 0, None, True)])
    return out


def _reduce_dim(name, self, dim, keepdim=False, dtype=None):
    data, mask = data_of(self), mask_of(self)
    with DisableTorchFunctionSubclass():
        if name == "all":
            out = _all(data, mask, dim, keepdim)
        else:
            out = _masked_fn(name)(data, dim=dim, keepdim=keepdim, dtype=dtype, mask=mask)
        out_mask = _any_over(mask, dim, keepdim)
        out = apply(CONSTRUCTOR, (out,))
    out = wrap(out, out_mask)
    record(out, [(self, None, 0, None, True)])
    return out


def reduce(name, args, kwargs):
    """``torch.<name>(mt, ...)`` / ``mt.<name>(...)``: all elements with no other argument, else ``(dim, keepdim,
    dtype)``."""
    if len(args) == 1 and not kwargs:
        return _reduce_all(name, args[0])
    return _reduce_dim(name, *args, **kwargs)  # (torch.norm's p= is no argument here: TypeError, as PyTorch)


def combine_masked(op_name, input, ord=2):
    """A masked operation called on a MaskedTensor: its data with the masked-out elements set to the identity of
    ``op_name`` (a plain Tensor, as PyTorch's ``_combine_input_and_mask``)."""
    import torchish
    from .._mask import identity
    data, mask = data_of(input), mask_of(input)
    with DisableTorchFunctionSubclass():
        out = torchish.where(mask, data, identity(op_name, data, ord))
    record(out, [(input, None, 0, None, True)])
    return out
