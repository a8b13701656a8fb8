"""Where a function called on a MaskedTensor goes (its ``__torch_function__``): the elementwise, reduction and
shape tables, the single operations, Tensor's metadata (run as for a Tensor), and for anything else PyTorch's
warning and its ``TypeError`` (every handler declined)."""
from __future__ import annotations

import warnings

from ..._subclass import DisableTorchFunctionSubclass, nowrap
from ..._tensor import Tensor
from . import elementwise, passthrough, reductions
from .core import MaskedTensor

# Tensor's metadata and autograd plumbing: run as for a plain Tensor, results as they are
METADATA = frozenset((
    "size", "dim", "ndimension", "numel", "nelement", "is_floating_point", "is_complex", "is_signed",
    "element_size", "stride", "requires_grad_", "retain_grad", "register_hook", "register_post_accumulate_grad_hook",
    "backward", "is_contiguous", "__len__", "__format__", "get_device", "is_same_size", "_is_view", "data_ptr",
    "__hash__", "__reduce_ex__", "__deepcopy__", "__setstate__", "_make_subclass"))

SINGLE = {
    "where": passthrough.where, "softmax": passthrough.softmax, "to_dense": passthrough.to_dense,
    "item": passthrough.item, "__bool__": passthrough.item, "copy_": passthrough.copy_,
    "__lt__": elementwise.less_than, "lt": elementwise.less_than, "less": elementwise.less_than,
    "__rtruediv__": elementwise.reverse_divide, "__rdiv__": elementwise.reverse_divide,
}
ON_DATA = ("clone", "detach", "contiguous", "ones_like")
CONVERSIONS = ("to", "float", "double", "half", "long", "int", "short", "char", "byte", "bool", "cpu", "cuda",
               "type", "type_as")

UNSUPPORTED_MESSAGE = (
    "{} is not implemented in __torch_dispatch__ for MaskedTensor.\n"
    "If you would like this operator to be supported, please file an issue for a feature request at "
    "https://github.com/pytorch/maskedtensor/issues with a minimal reproducible code snippet.\n"
    "In the case that the semantics for the operator are not trivial, it would be appreciated "
    "to also include a proposal for the semantics.")

_PROPERTY_NAMES = {}


def _property_name(func):
    """The name of the Tensor property whose getter/setter ``func`` is (None when it is not one)."""
    prop = getattr(func, "__self__", None)
    if not isinstance(prop, property):
        return None
    key = id(prop)
    if key not in _PROPERTY_NAMES:
        for klass in (MaskedTensor, *MaskedTensor.__mro__):
            for name, value in vars(klass).items():
                if value is prop:
                    _PROPERTY_NAMES[key] = name
        _PROPERTY_NAMES.setdefault(key, "")
    return _PROPERTY_NAMES[key]


def _default(func, args, kwargs):
    with DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


def _autograd_grad(func, args, kwargs):
    """``torch.autograd.grad``: the gradients of MaskedTensor inputs as MaskedTensors with their masks."""
    from .core import mask_of, wrap
    from .grad_mask import take
    inputs = kwargs["inputs"] if "inputs" in kwargs else args[1]
    single = isinstance(inputs, Tensor)
    grads = _default(func, args, kwargs)
    listed = (inputs,) if single else tuple(inputs)
    return tuple(wrap(g, take(i, mask_of(i))) if type(g) is Tensor and (isinstance(i, MaskedTensor)
                                                                          or "_grad_mask" in i.__dict__) else g
                 for g, i in zip(grads, listed))


def handle(func, types, args, kwargs):
    """MaskedTensor's ``__torch_function__``: the rule for ``func``, else PyTorch's warning and NotImplemented (the
    caller raises PyTorch's TypeError)."""
    if not all(issubclass(MaskedTensor, t) for t in types):
        return NotImplemented
    prop = _property_name(func)
    if prop is not None:
        if func.__name__ == "__get__" and prop == "mT":
            return passthrough.passthrough("transpose", (args[0], -2, -1), {})
        if func.__name__ == "__get__" and prop in ("T", "H", "mH"):  # (permute, conj: no MaskedTensor rule)
            warnings.warn(UNSUPPORTED_MESSAGE.format(prop), stacklevel=3)
            return NotImplemented
        if func.__name__ == "__get__" and prop == "data":
            return passthrough.data_property(args[0])
        return _default(func, args, kwargs)
    name = getattr(func, "__name__", "")
    if name == "grad" and "autograd" in str(getattr(func, "__module__", "")):
        return _autograd_grad(func, args, kwargs)
    if name in METADATA or nowrap(func):
        return _default(func, args, kwargs)
    if name in elementwise.OPERATORS:
        name, swap = elementwise.OPERATORS[name]
        if swap:
            args = (args[1], args[0], *args[2:])
    if name in SINGLE:
        return SINGLE[name](args, kwargs)
    if name in elementwise.UNARY or name in elementwise.INPLACE_UNARY:
        return elementwise.unary(name, args, kwargs)
    if name in elementwise.BINARY or name in elementwise.INPLACE_BINARY:
        return elementwise.binary(name, args, kwargs)
    if name in reductions.REDUCTIONS:
        return reductions.reduce(name, args, kwargs)
    if name in passthrough.PASSTHROUGH:
        return passthrough.passthrough(name, args, kwargs)
    if name in ON_DATA:
        return passthrough.on_data(name, args, kwargs)
    if name in CONVERSIONS:
        return passthrough.convert(name, args, kwargs)
    warnings.warn(UNSUPPORTED_MESSAGE.format(name), stacklevel=3)
    return NotImplemented
