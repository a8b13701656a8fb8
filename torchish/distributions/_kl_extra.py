"""The KL divergences PyTorch registers for Pareto and ContinuousBernoulli (same family and across families)."""
from __future__ import annotations

import math

import torchish
from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .gamma import Exponential, Gamma
from .kl import _infinite_like, _where_inf, _x_log_x, register_kl
from .location_scale import Gumbel, Laplace, Uniform
from .normal import Normal
from .pareto import Pareto


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + torchish.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - torchish.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _where_inf(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - torchish.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - torchish.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + torchish.square(q.loc / q.scale)) + torchish.log(q.scale)
    t3 = (p.variance + torchish.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * torchish.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = torchish.max(torchish.ge(q.low, p.support.lower_bound), torchish.le(q.high, p.support.upper_bound))
    return torchish.where(outside, torchish.ones_like(result) * math.inf, result)


@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Pareto)
def _kl_gumbel_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Pareto)
def _kl_laplace_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Pareto)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _where_inf(p.alpha <= 1, t1 - t2 + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _where_inf(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _where_inf(p.alpha <= 2, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - torchish.log1p(-q.probs) - q._cont_bern_log_norm()
    outside = torchish.max(torchish.ge(p.high, q.support.upper_bound), torchish.le(p.low, q.support.lower_bound))
    return torchish.where(outside, torchish.ones_like(result) * math.inf, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return _where_inf(p.low < q.support.lower_bound, t2 * (q.alpha + 1) - t1)
