"""``GeneralizedPareto``: the generalised Pareto distribution of ``loc``, ``scale`` and ``concentration``
(``torch.distributions.GeneralizedPareto``, after TensorFlow Probability's)."""
from __future__ import annotations

import math
from numbers import Number

import torchish
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """A generalised Pareto distribution; its support is ``[loc, loc - scale / concentration]`` for a negative
    concentration and ``[loc, inf]`` otherwise."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if isinstance(loc, Number) and isinstance(scale, Number) and isinstance(concentration, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = torchish.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        eq_zero = torchish.isclose(self.concentration, torchish.tensor(0.0))
        return eq_zero, torchish.where(eq_zero, torchish.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + torchish.ones_like(z)
        where_nonzero = torchish.where(y == 0, y, y * torchish.log1p(safe_conc * z))
        return -self.scale.log() - torchish.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -torchish.log1p(safe_conc * z) / safe_conc
        return torchish.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return torchish.log1p(-torchish.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torchish.exp(self.log_cdf(value))

    def icdf(self, value):
        loc, scale, concentration = self.loc, self.scale, self.concentration
        eq_zero = torchish.isclose(concentration, torchish.zeros_like(concentration))
        safe_conc = torchish.where(eq_zero, torchish.ones_like(concentration), concentration)
        logu = torchish.log1p(-value)
        where_nonzero = loc + scale / safe_conc * torchish.expm1(-safe_conc * logu)
        where_zero = loc - scale * logu
        return torchish.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = torchish.where(valid, self.concentration, 0.5)
        return torchish.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = torchish.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return torchish.where(valid, result, math.nan)

    def entropy(self):
        ans = torchish.log(self.scale) + self.concentration + 1
        return torchish.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torchish.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
