"""Layer, group, RMS and local-response normalisation layers with PyTorch's parameters and repr."""
from __future__ import annotations

import numbers

from ...ops.creation import empty
from .. import init
from .._functional.normalization import group_norm, layer_norm, local_response_norm, rms_norm
from ..module import Module
from ..parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):  # (kept as given: empty((True,)) refuses a bool, as PyTorch's)
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with an elementwise ``weight`` and ``bias``.

    Example::

        >>> ln = torchish.nn.LayerNorm(4)
        >>> ln(torchish.randn(2, 3, 4)).shape
        torch.Size([2, 3, 4])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each sample over groups of ``num_channels / num_groups`` channels, with per-channel affine.

    Example::

        >>> torchish.nn.GroupNorm(2, 4)(torchish.randn(3, 4, 5)).shape
        torch.Size([3, 4, 5])
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing dims (``eps=None``: the epsilon of the type it computes in, float32 for float16/bfloat16 inputs).

    Example::

        >>> torchish.nn.RMSNorm(4)(torchish.randn(2, 4)).shape
        torch.Size([2, 4])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Normalise each element by the energy of ``size`` neighbouring channels (AlexNet's LRN)."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


from .crossmaplrn import CrossMapLRN2d  # noqa: E402,F401  (torch.nn.modules.normalization.CrossMapLRN2d)
