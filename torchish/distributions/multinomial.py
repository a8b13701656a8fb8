"""``Multinomial``: counts of ``total_count`` draws from ``K`` categories (``torch.distributions.Multinomial``).

Probabilities and logits are stored normalised by an inner ``Categorical``, exactly as PyTorch stores them;
samples are that Categorical's draws, counted per category.
"""
from __future__ import annotations

import math

import torchish
from .._tensor import Size
from . import constraints
from .categorical import Categorical
from .discrete import Binomial
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of ``total_count`` independent draws with category probabilities ``probs`` (or unnormalised
    log-probabilities ``logits``) on the last dim. ``total_count`` is one int shared by every batch member (it
    need not be given to only call ``log_prob``, which takes the count from the value).

    Example::

        >>> m = Multinomial(100, torch.tensor([1.0, 1.0, 1.0, 1.0]))
        >>> m.sample()   # equal probability of 0, 1, 2, 3
        tensor([21., 24., 30., 25.])
        >>> Multinomial(probs=torch.tensor([1.0, 1.0, 1.0, 1.0])).log_prob(torch.tensor([1.0, 0.0, 2.0, 1.0]))
        tensor(-3.1322)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs, validate_args=False)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with torchish.no_grad():
            # (total_count,) + sample_shape + batch_shape category indices, counted per category
            indices = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            one_hot = torchish.nn.functional.one_hot(indices, self._categorical._num_events)
            counts = one_hot.sum(0) if self.total_count else one_hot.new_zeros(self._extended_shape(sample_shape))
            return counts.reshape(tuple(self._extended_shape(sample_shape))).to(self.probs.dtype)

    def entropy(self):
        # PyTorch's formula: n H(Categorical) - log n! + sum_i E[log x_i!], x_i ~ Binomial(n, p_i)
        n = torchish.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - torchish.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = torchish.exp(self._binomial.log_prob(support))
        weights = torchish.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = torchish.lgamma(value.sum(-1) + 1)
        log_factorial_xs = torchish.lgamma(value + 1).sum(-1)
        # 0 * log(0) is 0: a category of probability zero that is never drawn costs nothing
        logits = torchish.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
