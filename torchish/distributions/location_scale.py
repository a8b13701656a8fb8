"""Univariate location/scale families with closed-form CDFs: ``Uniform``, ``Laplace``, ``Cauchy``, ``Gumbel``."""
from __future__ import annotations

import math
from numbers import Number

import torchish
from .._tensor import Size
from . import constraints
from ._transform_maps import AffineTransform, ExpTransform
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .utils import broadcast_all, euler_constant

__all__ = ["Uniform", "Laplace", "Cauchy", "Gumbel"]


class _LocScale(Distribution):
    """Shared constructor and ``expand`` of two-parameter families (parameter names in ``_params``)."""

    _params = ("loc", "scale")

    def __init__(self, a, b, validate_args=None):
        first, second = broadcast_all(a, b)
        setattr(self, self._params[0], first)
        setattr(self, self._params[1], second)
        # PyTorch's rule: a scalar batch when both parameters were given as Python numbers
        batch_shape = Size() if isinstance(a, Number) and isinstance(b, Number) else first.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def _expand(self, cls, batch_shape, _instance):
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in self._params:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _noise(self, sample_shape):
        """An uninitialised tensor of the sample's shape, dtype and device, to fill with a sampler."""
        ref = getattr(self, self._params[0])
        return torchish.empty(tuple(self._extended_shape(sample_shape)), dtype=ref.dtype, device=ref.device)


class Uniform(_LocScale):
    """Uniform on the half-open interval ``[low, high)``.

    Example::

        >>> Uniform(torch.tensor([0.0]), torch.tensor([5.0])).sample()   # in [0, 5)
    """

    has_rsample = True
    _params = ("low", "high")

    @property
    def arg_constraints(self):  # as PyTorch: low < high, checked when validate_args is on
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        super().__init__(low, high, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand(Uniform, batch_shape, _instance)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=Size()):
        rand = self._noise(sample_shape).uniform_()
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return torchish.log(lb.mul(ub)) - torchish.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return torchish.log(self.high - self.low)


class Laplace(_LocScale):
    """The Laplace (double exponential) distribution."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand(Laplace, batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=Size()):
        u = self._noise(sample_shape).uniform_(torchish.finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * torchish.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torchish.log(2 * self.scale) - torchish.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * torchish.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torchish.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torchish.log(2 * self.scale)


class Cauchy(_LocScale):
    """The Cauchy (Lorentz) distribution: no mean or variance (NaN and inf)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand(Cauchy, batch_shape, _instance)

    @property
    def mean(self):
        return torchish.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return torchish.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        eps = self._noise(sample_shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torchish.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torchish.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution: ``loc - scale * log(-log U)`` for uniform ``U``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = torchish.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(torchish.full_like(self.loc, finfo.tiny), torchish.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-torchish.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
