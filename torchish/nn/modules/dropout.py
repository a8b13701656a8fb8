"""Dropout layers: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout and FeatureAlphaDropout.

Each is the identity in eval mode; in training the masks come from torchish's generator.
"""
from __future__ import annotations

from .._functional import dropout as D
from ..module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training and scale the rest by ``1 / (1 - p)``.

    Example::

        >>> drop = torchish.nn.Dropout(0.5)
        >>> drop.eval()(torchish.ones(3))        # the identity in eval mode
        tensor([1., 1., 1.])
    """

    def forward(self, input):
        return D.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs."""

    def forward(self, input):
        return D.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` inputs."""

    def forward(self, input):
        return D.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    def forward(self, input):
        return D.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: keeps zero mean and unit variance."""

    def forward(self, input):
        return D.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        return D.feature_alpha_dropout(input, self.p, self.training)
