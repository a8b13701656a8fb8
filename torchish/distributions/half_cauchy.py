"""``HalfCauchy``: ``|X|`` for ``X ~ Cauchy(0, scale)`` (``torch.distributions.HalfCauchy``)."""
from __future__ import annotations

import math

import torchish
from .location_scale import Cauchy
from .normal import Half

__all__ = ["HalfCauchy"]


class HalfCauchy(Half):
    """A half-Cauchy distribution with the given ``scale`` (that of the full Cauchy)."""

    base = Cauchy

    @property
    def mean(self):
        return torchish.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):  # (PyTorch's HalfCauchy, unlike HalfNormal, takes the value in the scale's dtype)
        value = torchish.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        return super().log_prob(value)
