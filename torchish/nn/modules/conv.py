"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d with PyTorch's parameters, initialisation and repr,
and their lazy forms (``in_channels`` inferred at the first call).

A convolution, its padding (``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``) and its bias run as one
registry op (see ``torchish/nn/_functional/conv.py``).
"""
from __future__ import annotations

import math

from ... import _subclass
from ...overrides import has_torch_function as _has_torch_function
from ...ops.creation import empty
from .. import functional as F
from .. import init
from .._functional.conv import convolution, same_padding
from .._functional.sampling import check_pad
from ..module import Module
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _tuple(value, n):
    """PyTorch's ``_ntuple``: the values kept as given (a str or float stride reaches the functional call, whose
    argument parser refuses it)."""
    t = tuple(value) if isinstance(value, (list, tuple, str)) else (value,) * n
    return t * n if len(t) == 1 and n > 1 else t


class _ConvNd(Module):
    """What Conv and ConvTranspose layers share: argument checks, parameters, initialisation and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _nd = 0
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        # a kernel_size sequence is kept as given (PyTorch's _ntuple: Conv2d(1, 1, (2,)) has a 3-d weight, which its
        # call refuses); strides and dilations of one value apply to every dim in the op either way
        kernel_size = tuple(kernel_size) if isinstance(kernel_size, (list, tuple)) else _tuple(kernel_size, nd)
        stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
        if isinstance(padding, str):
            valid_padding_strings = {"same", "valid"}  # (a set, printed in this process's hash order as PyTorch's)
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, nd)
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}  # (a set, as PyTorch's message prints)
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _tuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        if padding == "same":
            pairs = same_padding(kernel_size, dilation)
        elif padding == "valid":
            pairs = ((0, 0),) * nd
        else:
            pairs = tuple((p, p) for p in padding)
        rev = [v for lo_hi in reversed(pairs) for v in lo_hi]  # (PyTorch's: a list for 'same'/'valid', else a tuple)
        self._reversed_padding_repeated_twice = rev if isinstance(padding, str) else tuple(rev)
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        # (a subclass, fx Proxy or mode among the arguments: PyTorch's calls, which it sees: F.pad, then F.conv{n}d;
        # the cheap global check first, so plain programs pay one flag read)
        if (_subclass._ACTIVE[0] or _subclass.mode_dispatch_on()) and _has_torch_function((input, weight, bias)):
            conv = getattr(F, f"conv{self._nd}d")
            if self.padding_mode != "zeros":
                return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight,
                            bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
            return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)
        if self.padding_mode != "zeros":  # (PyTorch pads with F.pad first: its refusals come first)
            check_pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
        return convolution(f"conv{self._nd}d", input, weight, bias, self.stride, self.padding, self.dilation,
                           self.groups, self._nd, pad_mode=self.padding_mode)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)`` inputs; ``weight`` is ``(C_out, C_in/groups, k)``.

    Example::

        >>> torchish.nn.Conv1d(2, 4, 3, padding="same")(torchish.ones(1, 2, 5)).shape
        torch.Size([1, 4, 5])
    """

    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)`` inputs; ``weight`` is ``(C_out, C_in/groups, kH, kW)``.

    Example::

        >>> torchish.nn.Conv2d(3, 8, 3, stride=2, padding=1)(torchish.ones(1, 3, 8, 8)).shape
        torch.Size([1, 8, 4, 4])
    """

    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)`` inputs."""

    _nd = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output padding that makes the output ``output_size`` (PyTorch's rule and errors)."""
        if output_size is None:
            return self.output_padding
        nd = num_spatial_dims
        has_batch = input.dim() == nd + 2
        lead = 2 if has_batch else 1
        if len(output_size) == nd + lead:
            output_size = output_size[lead:]
        size = output_size  # (compared as given, as PyTorch does: a Tensor row's truth value is ambiguous)
        if len(size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                             f"{nd + lead} elements (got {len(output_size)})")
        mins, maxs = [], []
        for d in range(nd):
            dil = dilation[d] if dilation is not None else 1
            lo = (input.size(d + lead) - 1) * stride[d] - 2 * padding[d] + dil * (kernel_size[d] - 1) + 1
            mins.append(lo)
            maxs.append(lo + stride[d] - 1)
        for d in range(nd):
            if size[d] < mins[d] or size[d] > maxs[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {mins} to "
                                 f"{maxs} (for an input of {input.size()[lead:]})")
        return tuple(int(size[d]) - mins[d] for d in range(nd))

    def forward(self, input, output_size=None):
        nd = self._nd
        if isinstance(self.padding, str):  # (PyTorch's module keeps the string and its op's parser refuses it)
            raise TypeError(f"conv_transpose{nd}d(): argument 'padding' (position 5) must be tuple of ints, but found "
                            "element of type str at pos 0")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, nd,
                                              self.dilation)
        return getattr(F, f"conv_transpose{nd}d")(input, self.weight, self.bias, self.stride, self.padding,
                                                  output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution; ``weight`` is ``(C_in, C_out/groups, k)``.

    Example::

        >>> torchish.nn.ConvTranspose1d(2, 4, 3, stride=2)(torchish.ones(1, 2, 5)).shape
        torch.Size([1, 4, 11])
    """

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution; ``forward(input, output_size=None)`` picks the output padding for a size."""

    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution."""

    _nd = 3


class _LazyConvMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is inferred from the first input (``input.size(1)``, or ``size(0)``
    unbatched); the weight and bias are materialised then (see :class:`~torchish.nn.modules.lazy.LazyModuleMixin`).
    """

    def _make_lazy(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._get_num_spatial_dims() + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def _get_num_spatial_dims(self):
        return self._nd


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A :class:`Conv1d` with ``in_channels`` inferred at the first call, when it becomes a :class:`Conv1d`.

    Example::

        >>> m = torchish.nn.LazyConv1d(4, 3)
        >>> m(torchish.ones(1, 2, 5)).shape, m.in_channels
        (torch.Size([1, 4, 3]), 2)
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A :class:`Conv2d` with ``in_channels`` inferred at the first call (see :class:`LazyConv1d`)."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A :class:`Conv3d` with ``in_channels`` inferred at the first call (see :class:`LazyConv1d`)."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A :class:`ConvTranspose1d` with ``in_channels`` inferred at the first call (see :class:`LazyConv1d`)."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A :class:`ConvTranspose2d` with ``in_channels`` inferred at the first call (see :class:`LazyConv1d`)."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A :class:`ConvTranspose3d` with ``in_channels`` inferred at the first call (see :class:`LazyConv1d`)."""

    cls_to_become = ConvTranspose3d
