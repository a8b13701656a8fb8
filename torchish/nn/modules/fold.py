"""``Fold`` (col2im) and ``Unfold`` (im2col) modules.

Example:
    >>> import torchish as torch
    >>> torch.nn.Unfold(kernel_size=2)(torch.ones(1, 1, 3, 3)).shape
    torchish.Size([1, 4, 4])
"""
from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combines an array of sliding local blocks into a (N, C, H, W) tensor, summing overlaps."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding local blocks of a (N, C, H, W) tensor as columns."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
