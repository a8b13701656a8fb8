"""MaskedTensor's elementwise operations (PyTorch's ``maskedtensor/unary.py`` and ``binary.py`` lists): a unary
op runs on the data and keeps the mask; a binary op needs the masks of its two MaskedTensor operands to be equal
and gives the result that mask (broadcast to the result's shape). In-place forms change the data in place."""
from __future__ import annotations

import torchish
from ..._subclass import DisableTorchFunctionSubclass
from ..._tensor import Tensor
from .core import data_of, is_masked_tensor, mask_of, masked_grad, wrap
from .grad_mask import broadcast_index, plain_leaf, record

UNARY = ("abs", "absolute", "acos", "arccos", "acosh", "arccosh", "angle", "asin", "arcsin", "asinh", "arcsinh",
         "atan", "arctan", "atanh", "arctanh", "bitwise_not", "ceil", "clamp", "clip", "conj_physical", "cos", "cosh",
         "deg2rad", "digamma", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "fix", "floor", "frac", "lgamma",
         "log", "log10", "log1p", "log2", "logit", "i0", "isnan", "nan_to_num", "neg", "negative", "positive", "pow",
         "rad2deg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sgn", "signbit", "sin", "sinc", "sinh",
         "sqrt", "square", "tan", "tanh", "trunc")
INPLACE_UNARY = tuple(n + "_" for n in UNARY if n not in ("angle", "positive", "signbit", "isnan"))

BINARY = ("add", "atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
          "bitwise_right_shift", "div", "divide", "floor_divide", "fmod", "logaddexp", "logaddexp2", "mul",
          "multiply", "nextafter", "remainder", "sub", "subtract", "true_divide", "eq", "ne", "le", "ge", "greater",
          "greater_equal", "gt", "less_equal", "lt", "less", "maximum", "minimum", "fmax", "fmin", "not_equal")
INPLACE_BINARY = tuple(n + "_" for n in BINARY
                       if n not in ("logaddexp", "logaddexp2", "fmin", "minimum", "maximum", "fmax"))

# Python's operators -> (the op they are, whether the operands swap)
OPERATORS = {
    "__neg__": ("neg", False), "__abs__": ("abs", False), "__invert__": ("bitwise_not", False),
    "__pos__": ("positive", False), "__pow__": ("pow", False),
    "__add__": ("add", False), "__radd__": ("add", True), "__sub__": ("sub", False),
    "__mul__": ("mul", False), "__rmul__": ("mul", True), "__truediv__": ("div", False), "__div__": ("div", False),
    "__floordiv__": ("floor_divide", False), "__mod__": ("remainder", False),
    "__eq__": ("eq", False), "__ne__": ("ne", False), "__le__": ("le", False), "__ge__": ("ge", False),
    "__gt__": ("gt", False), "__and__": ("bitwise_and", False), "__rand__": ("bitwise_and", True),
    "__or__": ("bitwise_or", False), "__ror__": ("bitwise_or", True), "__xor__": ("bitwise_xor", False),
    "__rxor__": ("bitwise_xor", True), "__lshift__": ("bitwise_left_shift", False),
    "__rshift__": ("bitwise_right_shift", False),
    "__iadd__": ("add_", False), "__isub__": ("sub_", False), "__imul__": ("mul_", False),
    "__itruediv__": ("div_", False), "__idiv__": ("div_", False), "__ifloordiv__": ("floor_divide_", False),
    "__imod__": ("remainder_", False), "__iand__": ("bitwise_and_", False), "__ior__": ("bitwise_or_", False),
    "__ixor__": ("bitwise_xor_", False), "__ipow__": ("pow_", False),
}


def _plain(name):
    """Tensor's own method ``name`` (run with the subclass out of the protocol)."""
    return getattr(Tensor, name)


def unary(name, args, kwargs):
    for a in args[1:]:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")
    self = args[0]
    if name.endswith("_"):
        with DisableTorchFunctionSubclass():
            _plain(name)(self, *args[1:], **kwargs)
        return self
    with DisableTorchFunctionSubclass():
        out = _plain(name)(data_of(self), *args[1:], **kwargs)
    out = wrap(out, mask_of(self))
    record(out, [(self, None, 0, None, False)])
    return out


def masks_match(a, b):
    """PyTorch's ``_masks_match``: True unless both are MaskedTensors with different masks."""
    if not (is_masked_tensor(a) and is_masked_tensor(b)):
        return True
    ma, mb = mask_of(a), mask_of(b)
    with DisableTorchFunctionSubclass():
        return ma.dim() == mb.dim() and tuple(ma.shape) == tuple(mb.shape) and bool(ma.eq(mb).all().item())


def binary(name, args, kwargs):
    if kwargs:
        raise ValueError("len(kwargs) must equal 0")
    for a in args[2:]:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside from the lhs and rhs")
    if not masks_match(*args[:2]):
        raise ValueError("Input masks must match. If you need support for this, please open an issue on Github.")
    if name.endswith("_"):
        with DisableTorchFunctionSubclass():
            _plain(name)(args[0], *(data_of(a) for a in args[1:]))
        return args[0]
    lhs, rhs = args[0], args[1]
    operands = [a for a in (lhs, rhs) if isinstance(a, Tensor) and a.requires_grad]
    with DisableTorchFunctionSubclass():
        mask = mask_of(lhs) if is_masked_tensor(lhs) else mask_of(rhs)
        shapes = [tuple(a.shape) for a in (lhs, rhs) if isinstance(a, Tensor)]
        mask = mask.expand(torchish.broadcast_shapes(*shapes))
        lhs, rhs = (data_of(a) if is_masked_tensor(a) else masked_grad(a, mask) for a in (lhs, rhs))
        fn = getattr(Tensor, name, None)
        if isinstance(lhs, Tensor) and fn is not None:
            out = fn(lhs, rhs, *args[2:])
        else:
            out = getattr(torchish, name)(lhs, rhs, *args[2:])
        mask = mask.expand_as(out)
        parents = [(a, broadcast_index(a, out.shape), 0, None, False) for a in operands]
    for a in operands:
        if not is_masked_tensor(a):
            plain_leaf(a)
    out = wrap(out, mask)
    record(out, parents)
    return out


def less_than(args, kwargs):
    """PyTorch's ``MaskedTensor.__lt__``: the data compared, the left operand's mask (no mask check)."""
    self, other = args[0], args[1]
    with DisableTorchFunctionSubclass():
        out = data_of(self) < data_of(other)
    return wrap(out, mask_of(self))  # (bool: no gradient)


def reverse_divide(args, kwargs):
    """``scalar / mt``: PyTorch's ``Tensor.__rdiv__``, ``self.reciprocal() * other``."""
    return binary("mul", (unary("reciprocal", (args[0],), {}), args[1]), {})
