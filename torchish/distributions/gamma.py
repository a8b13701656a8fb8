"""The gamma family and its relatives: ``Gamma``, ``Exponential``, ``Chi2``, ``StudentT``.

Gamma samples are reparameterised through implicit differentiation of the gamma CDF (see ``_sampling``), so
``Gamma.rsample`` (and ``StudentT.rsample``, through its chi-square) is differentiable in the concentration.
"""
from __future__ import annotations

import math
from numbers import Number

import torchish
from .._tensor import Size
from . import constraints
from ._sampling import standard_gamma
from .distribution import Distribution, ExponentialFamily
from .utils import _standard_normal, broadcast_all

__all__ = ["Gamma", "Exponential", "Chi2", "StudentT"]


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    Example::

        >>> Gamma(torch.tensor([1.0]), torch.tensor([1.0])).rsample()   # differentiable in both parameters
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(Size() if scalar else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # as PyTorch: at least the smallest normal number, clamped in place out of the autograd graph
        value.detach().clamp_(min=torchish.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = torchish.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return torchish.xlogy(c, r) + torchish.xlogy(c - 1, value) - r * value - torchish.lgamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torchish.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - torchish.log(self.rate) + torchish.lgamma(c) + (1.0 - c) * torchish.digamma(c)

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return torchish.lgamma(x + 1) + (x + 1) * torchish.log(-y.reciprocal())


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (mean ``1 / rate``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return torchish.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        noise = torchish.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return noise / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torchish.exp(-self.rate * value)

    def icdf(self, value):
        return -torchish.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - torchish.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torchish.log(-x)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, Number):
            df = torchish.tensor(float(df))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return torchish.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        safe = torchish.where(df > 2, df, 3.0)  # keeps the unused branch finite (and its gradient zero)
        finite = self.scale.pow(2) * safe / (safe - 2)
        return torchish.where(df > 2, finite, torchish.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * torchish.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + torchish.lgamma(0.5 * self.df)
             - torchish.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torchish.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = torchish.lgamma(0.5 * self.df) + math.lgamma(0.5) - torchish.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (torchish.digamma(0.5 * (self.df + 1))
                                                          - torchish.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
