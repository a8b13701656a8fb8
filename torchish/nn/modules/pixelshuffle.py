"""PixelShuffle and PixelUnshuffle: trade channels for spatial resolution and back."""
from __future__ import annotations

from .._functional.conv import pixel_shuffle, pixel_unshuffle
from ..module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)`` (sub-pixel convolution's rearrangement).

    Example::

        >>> torchish.nn.PixelShuffle(2)(torchish.ones(1, 8, 3, 3)).shape
        torch.Size([1, 2, 6, 6])
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``, the inverse of :class:`PixelShuffle`."""

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
