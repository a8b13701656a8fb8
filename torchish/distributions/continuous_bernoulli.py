"""``ContinuousBernoulli``: the continuous Bernoulli on ``[0, 1]`` (Loaiza-Ganem & Cunningham, 2019;
``torch.distributions.ContinuousBernoulli``), with PyTorch's Taylor expansions near ``probs = 1/2``."""
from __future__ import annotations

import math
from numbers import Number

import torchish
from .._tensor import Size
from . import constraints
from .discrete import _one_of, _ProbsOrLogits
from .distribution import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_ProbsOrLogits, ExponentialFamily):
    """A continuous Bernoulli distribution given ``probs`` in (0, 1) or real ``logits`` (exactly one)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        self._expand_param(new, batch_shape)
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return torchish.max(torchish.le(self.probs, self._lims[0]), torchish.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return torchish.where(self._outside_unstable_region(), self.probs,
                              self._lims[0] * torchish.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalising constant as a function of ``probs``."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = torchish.where(torchish.le(cut_probs, 0.5), cut_probs, torchish.zeros_like(cut_probs))
        cut_probs_above_half = torchish.where(torchish.ge(cut_probs, 0.5), cut_probs, torchish.ones_like(cut_probs))
        log_norm = torchish.log(torchish.abs(torchish.log1p(-cut_probs) - torchish.log(cut_probs))) - torchish.where(
            torchish.le(cut_probs, 0.5), torchish.log1p(-2.0 * cut_probs_below_half),
            torchish.log(2.0 * cut_probs_above_half - 1.0))
        x = torchish.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torchish.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (torchish.log1p(-cut_probs) - torchish.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torchish.pow(x, 2)) * x
        return torchish.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return torchish.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / torchish.pow(1.0 - 2.0 * cut_probs, 2) + 1.0 / torchish.pow(
            torchish.log1p(-cut_probs) - torchish.log(cut_probs), 2)
        x = torchish.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torchish.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def probs(self):  # (clamped, unlike the other probs-or-logits distributions')
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = torchish.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with torchish.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = torchish.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = torchish.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (torchish.pow(cut_probs, value) * torchish.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0) / (
            2.0 * cut_probs - 1.0)
        unbounded_cdfs = torchish.where(self._outside_unstable_region(), cdfs, value)
        return torchish.where(torchish.le(value, 0.0), torchish.zeros_like(value),
                              torchish.where(torchish.ge(value, 1.0), torchish.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return torchish.where(
            self._outside_unstable_region(),
            (torchish.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - torchish.log1p(-cut_probs))
            / (torchish.log(cut_probs) - torchish.log1p(-cut_probs)),
            value)

    def entropy(self):
        log_probs0 = torchish.log1p(-self.probs)
        log_probs1 = torchish.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalising constant as a function of the natural parameter."""
        out_unst_reg = torchish.max(torchish.le(x, self._lims[0] - 0.5), torchish.gt(x, self._lims[1] - 0.5))
        cut_nat_params = torchish.where(out_unst_reg, x, (self._lims[0] - 0.5) * torchish.ones_like(x))
        log_norm = torchish.log(torchish.abs(torchish.special.expm1(cut_nat_params))) - torchish.log(
            torchish.abs(cut_nat_params))
        taylor = 0.5 * x + torchish.pow(x, 2) / 24.0 - torchish.pow(x, 4) / 2880.0
        return torchish.where(out_unst_reg, log_norm, taylor)

