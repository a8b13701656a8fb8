"""ChannelShuffle: interleave the channels of ``groups`` groups (ShuffleNet)."""
from __future__ import annotations

from .._functional.conv import channel_shuffle
from ..module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the channels into ``groups`` and interleave them.

    Example::

        >>> torchish.nn.ChannelShuffle(2)(torchish.arange(4.).reshape(1, 4, 1, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
