"""MaskedTensor's shape and indexing operations (PyTorch's ``maskedtensor/passthrough.py``: the op runs on the data
and on the mask alike) and its other single operations: ``where``, ``softmax``, ``clone``/``detach``, dtype and
device conversions, ``ones_like``, ``contiguous``, ``to_dense``, ``item``, ``copy_``."""
from __future__ import annotations

import torchish
from ..._subclass import DisableTorchFunctionSubclass
from ..._tensor import Tensor
from .core import data_of, is_masked_tensor, mask_of, wrap
from .grad_mask import broadcast_index, flat_index, record

PASSTHROUGH = ("select", "transpose", "swapaxes", "swapdims", "split", "t", "__getitem__", "narrow", "expand",
               "expand_as", "view", "view_as", "reshape", "reshape_as", "flatten", "cat", "concat", "concatenate",
               "unsqueeze", "unfold", "stack")


def _map(args, kwargs, fn):
    def one(a):
        if is_masked_tensor(a):
            return fn(a)
        if type(a) in (list, tuple):
            return type(a)(one(x) for x in a)
        return a
    return [one(a) for a in args], {k: one(v) for k, v in kwargs.items()}


def _call(name, args, kwargs):
    owner = torchish if not hasattr(Tensor, name) or isinstance(args[0], (list, tuple)) else Tensor
    return getattr(owner, name)(*args, **kwargs)


def _index_maps(name, args, kwargs):
    """Where each output element of the shape op comes from: the op run on the flat positions of its MaskedTensor
    inputs (each from its own offset), and the ``(input, offset)`` pairs."""
    sources = []

    def positions(t):
        offset = sum(s.numel() for s, _ in sources)
        sources.append((t, offset))
        return flat_index(t, offset)
    with DisableTorchFunctionSubclass(), torchish.no_grad():
        index_args, index_kwargs = _map(args, kwargs, positions)
        return _call(name, index_args, index_kwargs), sources


def passthrough(name, args, kwargs):
    data_args, data_kwargs = _map(args, kwargs, data_of)
    mask_args, mask_kwargs = _map(args, kwargs, mask_of)
    with DisableTorchFunctionSubclass():
        out = _call(name, data_args, data_kwargs)
        out_mask = _call(name, mask_args, mask_kwargs)
    out = wrap(out, out_mask)
    if torchish.is_grad_enabled() and any(isinstance(o, Tensor) and o.requires_grad
                                          for o in (out if isinstance(out, (tuple, list)) else (out,))):
        index, sources = _index_maps(name, args, kwargs)
        for o, i in zip(*((out, index) if isinstance(out, (tuple, list)) else ((out,), (index,)))):
            record(o, [(t, i, offset, None, False) for t, offset in sources])
    return out


def where(args, kwargs):
    """``torch.where(cond, mx, my)``: the data and the masks each chosen by ``cond`` (a plain operand counts as all
    valid)."""
    if len(args) != 3 or kwargs:
        raise ValueError(f"__torch_function__, torch.where: len(args) must be 3 but got {len(args)}")
    cond, x, y = args
    with DisableTorchFunctionSubclass():
        mx = mask_of(x) if is_masked_tensor(x) else torchish.ones_like(x, dtype=torchish.bool)
        my = mask_of(y) if is_masked_tensor(y) else torchish.ones_like(y, dtype=torchish.bool)
        out = torchish.where(cond, data_of(x), data_of(y))
        out_mask = torchish.where(cond, mx, my)
        chosen = cond.expand(out.shape)
        parents = [(a, broadcast_index(a, out.shape), 0, c, False)
                   for a, c in ((x, chosen), (y, ~chosen)) if is_masked_tensor(a) and a.requires_grad]
    out = wrap(out, out_mask)
    record(out, parents)
    return out


def softmax(args, kwargs):
    """Softmax over the valid elements (masked-out ones 0, as PyTorch's ``_masked_softmax``); the mask stays."""
    self = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    data, mask = data_of(self), mask_of(self)
    with DisableTorchFunctionSubclass():
        out = torchish.masked.softmax(data, dim, mask=mask)
        out = torchish.where(mask, out, torchish.zeros((), dtype=out.dtype))
    out = wrap(out, mask)
    record(out, [(self, None, 0, None, False)])
    return out


def on_data(name, args, kwargs):
    """``clone``/``detach``/``contiguous``/``ones_like``: the op on the data, the same mask."""
    with DisableTorchFunctionSubclass():
        out = getattr(torchish if name == "ones_like" else Tensor, name)(data_of(args[0]), *args[1:], **kwargs)
    out = wrap(out, mask_of(args[0]))
    record(out, [(args[0], None, 0, None, False)])
    return out


def convert(name, args, kwargs):
    """dtype/device conversions (``to``, ``float``, ``double``, ``type(dtype)``...): the data converted, the mask
    kept boolean."""
    self = args[0]
    with DisableTorchFunctionSubclass():
        if name == "type" and len(args) == 1 and not kwargs:
            return Tensor.type(self)
        out = getattr(Tensor, name)(data_of(self), *args[1:], **kwargs)
        mask = mask_of(self).to(device=out.device)
    out = wrap(out, mask)
    record(out, [(self, None, 0, None, False)])
    return out


def to_dense(args, kwargs):
    return args[0]


def item(args, kwargs):
    """A valid element's Python number; a masked-out one raises."""
    with DisableTorchFunctionSubclass():
        if not mask_of(args[0]).item():
            raise ValueError("__torch_dispatch__, aten._local_scalar_dense: expected a mask tensor")
        return Tensor.item(data_of(args[0]))


def copy_(args, kwargs):
    from .elementwise import masks_match
    self, src = args[0], args[1]
    if not masks_match(self, src):
        raise ValueError("args[0] mask and args[1] mask must match but do not")
    with DisableTorchFunctionSubclass():
        Tensor.copy_(self, data_of(src))
    return self


def data_property(self):
    """``mt.data``: the MaskedTensor detached."""
    with DisableTorchFunctionSubclass():
        out = Tensor.detach(data_of(self))
    return wrap(out, mask_of(self))

