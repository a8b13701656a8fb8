"""``kl_divergence(p, q)`` and ``register_kl``: closed-form KL divergences looked up by the pair of types.

Lookup picks the most specific registered pair by subclass order (PyTorch's rule, warning when the left- and
right-first orders disagree), memoised per pair of types. The registered pairs are PyTorch's, for the
distributions torchish has; an unregistered pair raises PyTorch's NotImplementedError.

Example::

    >>> p, q = Normal(0.0, 1.0), Normal(1.0, 2.0)
    >>> kl_divergence(p, q)
    tensor(0.4431)
"""
from __future__ import annotations

import functools
import math
import warnings

import torchish
from .beta import Beta, Dirichlet
from .categorical import Categorical, OneHotCategorical
from .discrete import Bernoulli, Binomial, Geometric, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma import Exponential, Gamma
from .independent import Independent
from .location_scale import Cauchy, Gumbel, Laplace, Uniform
from .multivariate_normal import (LowRankMultivariateNormal, MultivariateNormal, _batch_mahalanobis,
                                  _lowrank_logdet, _lowrank_mahalanobis)
from .normal import HalfNormal, Normal
from .transformed_distribution import TransformedDistribution
from .utils import _sum_rightmost, euler_constant as _EULER

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> function
_KL_MEMOIZE: dict = {}  # the same, resolved for concrete pairs of types

_INF = math.inf


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of a pair of Distribution subclasses."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # the most specific match may have changed
        return fun
    return decorator


@functools.total_ordering
class _Match:
    """A registered pair ordered by specificity, lexicographically (first type first)."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun, right_fun = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p, q):
    """``KL(p || q)``, batched over the batch shape."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(t):
    return torchish.full_like(t, _INF)


def _x_log_x(t):
    return torchish.special.xlogy(t, t)


def _batch_trace_XXT(bmat):
    """``trace(X X.T)`` (the squared Frobenius norm) over batch dims."""
    return bmat.reshape(bmat.shape[:-2] + (-1,)).pow(2).sum(-1)


def _where_inf(cond, t):
    return torchish.where(cond, _INF, t)


def _softplus(x):
    return torchish.nn.functional.softplus(x)


# ----------------------------------------------------------------------------------------------------------------
# pairs of one family


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = torchish.where(p.probs == 0, 0.0, _where_inf(q.probs == 0, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = torchish.where(p.probs == 1, 0.0, _where_inf(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    log_beta_ratio = (a2.lgamma() + b2.lgamma() + s1.lgamma()) - (a1.lgamma() + b1.lgamma() + s2.lgamma())
    return (log_beta_ratio + (a1 - a2) * torchish.digamma(a1) + (b1 - b2) * torchish.digamma(b1)
            + (s2 - s1) * torchish.digamma(s1))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _where_inf(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _where_inf((q.probs == 0).expand_as(t), t)
    t = torchish.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = sp.lgamma() - sq.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sp.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log-normaliser, for two members of one exponential family."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  "                            be computed using Bregman divergences")
    p_nparams = [t.detach().requires_grad_() for t in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = torchish.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = torchish.lgamma(q.concentration) - torchish.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * torchish.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    return (-ct1.log() - ct2 + ct3 + ct1 * _EULER + torchish.exp(ct2 + (1 + ct1).lgamma() - ct3)
            - (1 + _EULER))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - torchish.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * torchish.exp(-loc_abs_diff / p.scale) - 1


def _check_events(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with                          different event shapes "
                         "cannot be computed")


def _q_woodbury_factor(q):
    """``A`` with ``(W W.T + D)^-1 = D^-1 - A.T A`` for the low-rank ``q``."""
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return torchish.linalg.solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)


def _lowrank_parts(d):
    return d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_events(p, q, "Low Rank Multivariate Normals")
    (pW, pD, pC), (qW, qD, qC) = _lowrank_parts(p), _lowrank_parts(q)
    term1 = _lowrank_logdet(qW, qD, qC) - _lowrank_logdet(pW, pD, pC)
    term3 = _lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    A = _q_woodbury_factor(q)  # trace(q_cov^-1 p_cov), expanded term by term
    term2 = ((pD / qD).sum(-1) + _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2)) - _batch_trace_XXT(A.matmul(pW)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    qW, qD, qC = _lowrank_parts(q)
    pL = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(qW, qD, qC) - 2 * pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    A = _q_woodbury_factor(q)
    term2 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    pW, pD, pC = _lowrank_parts(p)
    qL = q._unbroadcasted_scale_tril
    term1 = 2 * qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_logdet(pW, pD, pC)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    batch = torchish.broadcast_shapes(qL.shape[:-2], pW.shape[:-2])
    n = p.event_shape[0]
    qL = qL.expand(batch + (n, n))
    solve = torchish.linalg.solve_triangular
    term2 = (_batch_trace_XXT(solve(qL, pW.expand(batch + (n, pW.size(-1))), upper=False))
             + _batch_trace_XXT(solve(qL, torchish.diag_embed(pD.sqrt()).expand(batch + (n, n)), upper=False)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    _check_events(p, q, "Multivariate Normals")
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = torchish.broadcast_shapes(qL.shape[:-2], pL.shape[:-2])
    n = p.event_shape[0]
    term2 = _batch_trace_XXT(torchish.linalg.solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)),
                                                              upper=False))
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _where_inf((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


from . import _kl_cross  # noqa: E402,F401  (registers the pairs of different families)
