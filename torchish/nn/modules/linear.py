"""Linear layers: Identity, Linear, Bilinear, LazyLinear — PyTorch's parameters, initialisation and repr."""
from __future__ import annotations

import math

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from .. import init
from .._functional.linear import bilinear, linear
from ..module import Module
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored).

    Example::

        >>> m = torchish.nn.Identity(54, unused="x")
        >>> m(torchish.ones(2)).shape
        torch.Size([2])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised as PyTorch does: ``weight`` and ``bias`` uniform in ``±1/sqrt(in_features)``.

    Example::

        >>> m = torchish.nn.Linear(3, 4)
        >>> m(torchish.ones(2, 3)).shape
        torch.Size([2, 4])
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name (``torch.nn.modules.linear``) for the output projection of :class:`MultiheadAttention`: a
    plain :class:`Linear`."""


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``weight`` of shape ``(out_features, in1_features, in2_features)``.

    Example::

        >>> m = torchish.nn.Bilinear(2, 3, 4)
        >>> m(torchish.ones(5, 2), torchish.ones(5, 3)).shape
        torch.Size([5, 4])
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is inferred from ``input.shape[-1]`` at the first call, when it
    becomes a regular :class:`Linear` (see :class:`~torchish.nn.modules.lazy.LazyModuleMixin`).

    Example::

        >>> m = torchish.nn.LazyLinear(4)
        >>> m(torchish.ones(2, 3)).shape, type(m).__name__
        (torch.Size([2, 4]), 'Linear')
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)          # no bias: it would be replaced at once
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:             # initialized by load_state_dict: take in_features from the weight
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]
