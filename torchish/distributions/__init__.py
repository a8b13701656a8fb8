"""``torchish.distributions``: PyTorch's probability distributions (``torch.distributions``) on torchish ops.

Everything is written with torchish's public ops, so ``log_prob``, ``entropy``, KL divergences and reparameterised
samples (``rsample``) are differentiable, and work under ``torchish.compile`` and the lazy mode. Samples come from
torchish's global generator (the numbers differ from PyTorch's; shapes, dtypes and supports do not).

Example::

    >>> import torchish as torch
    >>> import torchish.distributions as D
    >>> mu = torch.zeros(2, requires_grad=True)
    >>> d = D.Normal(mu, torch.ones(2))
    >>> d.log_prob(torch.tensor([0.5, -1.0])).sum().backward()
    >>> mu.grad
    tensor([ 0.5000, -1.0000])
"""
from . import constraints as constraints, transforms as transforms, utils as utils  # noqa: F401
from .beta import Beta as Beta, Dirichlet as Dirichlet
from .categorical import (Categorical as Categorical, OneHotCategorical as OneHotCategorical,
                          OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough)
from .constraint_registry import biject_to as biject_to, transform_to as transform_to
from .continuous_bernoulli import ContinuousBernoulli as ContinuousBernoulli
from .discrete import Bernoulli as Bernoulli, Binomial as Binomial, Geometric as Geometric, Poisson as Poisson
from .distribution import Distribution as Distribution, ExponentialFamily as ExponentialFamily
from .fishersnedecor import FisherSnedecor as FisherSnedecor
from .gamma import Chi2 as Chi2, Exponential as Exponential, Gamma as Gamma, StudentT as StudentT
from .generalized_pareto import GeneralizedPareto as GeneralizedPareto
from .half_cauchy import HalfCauchy as HalfCauchy
from .independent import Independent as Independent
from .inverse_gamma import InverseGamma as InverseGamma
from .kl import kl_divergence as kl_divergence, register_kl as register_kl
from .kumaraswamy import Kumaraswamy as Kumaraswamy
from .lkj_cholesky import LKJCholesky as LKJCholesky
from .logistic_normal import LogisticNormal as LogisticNormal
from .location_scale import Cauchy as Cauchy, Gumbel as Gumbel, Laplace as Laplace, Uniform as Uniform
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import (LowRankMultivariateNormal as LowRankMultivariateNormal,
                                  MultivariateNormal as MultivariateNormal)
from .negative_binomial import NegativeBinomial as NegativeBinomial
from .normal import HalfNormal as HalfNormal, LogNormal as LogNormal, Normal as Normal
from .pareto import Pareto as Pareto
from .relaxed import (ExpRelaxedCategorical as ExpRelaxedCategorical,  # noqa: F401
                      LogitRelaxedBernoulli as LogitRelaxedBernoulli, RelaxedBernoulli as RelaxedBernoulli,
                      RelaxedOneHotCategorical as RelaxedOneHotCategorical)
from .transformed_distribution import TransformedDistribution as TransformedDistribution
from .transforms import (AbsTransform as AbsTransform, AffineTransform as AffineTransform,  # noqa: F401
                         ComposeTransform as ComposeTransform,
                         CumulativeDistributionTransform as CumulativeDistributionTransform,
                         ExpTransform as ExpTransform, IndependentTransform as IndependentTransform,
                         LowerCholeskyTransform as LowerCholeskyTransform,
                         PositiveDefiniteTransform as PositiveDefiniteTransform, PowerTransform as PowerTransform,
                         ReshapeTransform as ReshapeTransform, SigmoidTransform as SigmoidTransform,
                         SoftmaxTransform as SoftmaxTransform, SoftplusTransform as SoftplusTransform,
                         StickBreakingTransform as StickBreakingTransform, TanhTransform as TanhTransform,
                         Transform as Transform, identity_transform as identity_transform,
                         CatTransform as CatTransform, CorrCholeskyTransform as CorrCholeskyTransform,
                         StackTransform as StackTransform)
from .von_mises import VonMises as VonMises
from .weibull import Weibull as Weibull
from .wishart import Wishart as Wishart
from . import _kl_extra  # noqa: E402,F401  (registers the KL pairs of Pareto and ContinuousBernoulli)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfNormal", "Independent",
           "Laplace", "LogNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "MultivariateNormal", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "StudentT", "Poisson", "Uniform", "TransformedDistribution", "biject_to", "kl_divergence", "register_kl",
           "transform_to", "AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform",
           "ExpTransform", "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
           "SoftmaxTransform", "StickBreakingTransform", "Transform", "identity_transform", "CatTransform",
           "CorrCholeskyTransform", "StackTransform", "LKJCholesky",
           "Multinomial", "VonMises", "Wishart", "ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto",
           "HalfCauchy", "InverseGamma", "Kumaraswamy", "LogisticNormal", "NegativeBinomial", "Pareto", "Weibull"]


def _install_module_aliases():
    """PyTorch's per-class module paths (``from torch.distributions.uniform import Uniform``) for the classes this
    package groups by family."""
    import sys
    from . import (beta, categorical, discrete, distribution, gamma, location_scale, multivariate_normal, normal,
                   relaxed)
    aliases = {"bernoulli": discrete, "binomial": discrete, "geometric": discrete, "poisson": discrete,
               "dirichlet": beta, "exponential": gamma, "chi2": gamma, "studentT": gamma, "uniform": location_scale,
               "laplace": location_scale, "cauchy": location_scale, "gumbel": location_scale, "log_normal": normal,
               "half_normal": normal, "one_hot_categorical": categorical, "exp_family": distribution,
               "lowrank_multivariate_normal": multivariate_normal, "relaxed_bernoulli": relaxed,
               "relaxed_categorical": relaxed}
    for name, module in aliases.items():
        sys.modules[f"{__name__}.{name}"] = module
        globals()[name] = module


_install_module_aliases()
