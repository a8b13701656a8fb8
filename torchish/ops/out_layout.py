"""The strides of an elementwise op's output, as PyTorch's TensorIterator allocates it.

PyTorch's elementwise kernels do not return contiguous tensors: the output follows its inputs' memory layout, so
``(x.t() * 2).stride()`` is ``x.t()``'s ``(1, 3)``, ``is_contiguous()`` is False and ``view(-1)`` raises. torchish's
values are plain arrays in logical order; an output whose PyTorch layout is not contiguous records it in
``Tensor._layout`` (read by ``ops.inplace.layout``: ``stride()``, ``is_contiguous()``, ``view()``, ``data_ptr``-free
address arithmetic). Only inputs that are views or carry such a layout cost anything: a contiguous input never
reaches this module.

The rule (TensorIterator's ``compute_fast_setup_type`` then ``reorder_dimensions``): operands of the output's shape
that are all non-overlapping and dense with equal strides give those strides; otherwise the dimensions are ordered
by the operands' strides (the first operand whose strides differ for two dimensions decides, broadcast dimensions
are skipped, equal strides put the smaller size first) and the output is contiguous in that order.
"""
from __future__ import annotations

from .inplace import _dense, contiguous_strides, is_contiguous, layout
from .registry import ELEMENTWISE

ELEMENTWISE.update((
    "add", "sub", "rsub", "rsub_scalar", "mul", "div", "div_mode", "floor_divide", "remainder", "pow", "pow_tensor",
    "pow_scalar_base", "ldexp", "heaviside", "clamp", "clamp_tensor", "clamp_min", "clamp_max", "where", "lerp",
    "lerp_tensor", "addcmul", "addcdiv", "isclose", "bitwise_not", "logical_not", "logical_and",
    "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
    # nn.functional's pointwise activations and dropout (log_sigmoid's output is allocated contiguous in PyTorch)
    "hardtanh", "leaky_relu", "prelu", "threshold", "softshrink", "hardshrink", "hardswish", "hardsigmoid", "elu",
    "celu", "gelu", "silu", "mish", "softsign", "tanhshrink", "softplus", "rrelu_with_noise_eval", "dropout",
    "alpha_dropout"))


def output_strides(operands, shape):
    """The strides PyTorch gives the output of ``shape`` computed from ``operands`` (each ``(shape, strides)`` or
    None for a Python number), or None where they are contiguous."""
    shape = tuple(shape)
    nd = len(shape)
    if nd < 2:
        return None
    same = all(op is not None and tuple(op[0]) == shape for op in operands)
    if same:
        if all(is_contiguous(*op) for op in operands):
            return None
        if all(_dense(*op) for op in operands) and len({tuple(op[1]) for op in operands}) == 1:
            return tuple(operands[0][1])
    # broadcast strides: 0 where an operand is broadcast (or a number)
    per_op = []
    for op in operands:
        if op is None:
            continue
        s, st = tuple(op[0]), tuple(op[1])
        lead = nd - len(s)
        per_op.append(tuple(0 if d < lead or (s[d - lead] == 1 and shape[d] != 1) else st[d - lead]
                            for d in range(nd)))

    def should_swap(d0, d1):
        for st in per_op:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(range(nd - 1, -1, -1))  # fastest-moving dimension first
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(nd - 1, -1, -1)):
        return None
    strides = [0] * nd
    step = 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    strides = tuple(strides)
    return None if strides == contiguous_strides(shape) else strides


def keep_format(out, input, memory_format=None):
    """``out`` (a new tensor of ``input``'s shape: a clone, a cast, a ``*_like`` factory) with PyTorch's
    ``memory_format``: ``preserve_format`` (the default) keeps a non-overlapping and dense input's strides, and a
    contiguous layout otherwise; ``contiguous_format`` is contiguous."""
    name = getattr(memory_format, "_name", None)
    out._layout = None
    if name not in (None, "preserve_format") or (input._view is None and input._layout is None):
        return out
    shape, strides, _ = layout(input)
    if len(shape) > 1 and not is_contiguous(shape, strides) and _dense(shape, strides):
        out._layout = (tuple(shape), tuple(strides), 0)
    return out


def set_output_layout(out, args):
    """Give ``out`` (a Tensor just made by an elementwise op on ``args``) PyTorch's output strides."""
    from .._tensor import Tensor
    operands = [layout(a)[:2] if isinstance(a, Tensor) else None for a in args if a is not None]
    strides = output_strides(operands, out._v.shape)
    if strides is not None:
        out._layout = (tuple(out._v.shape), strides, 0)
