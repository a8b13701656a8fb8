"""``LKJCholesky``: the LKJ distribution over lower Cholesky factors of correlation matrices
(``torch.distributions.LKJCholesky``), following NumPyro as PyTorch does; samples by the onion method.
"""
from __future__ import annotations

import math

import torchish
from .._tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Lower Cholesky factors ``L`` of ``dim x dim`` correlation matrices ``M = L L^T``, with density
    proportional to ``det(M) ** (concentration - 1)`` (uniform over correlation matrices at 1).

    Example::

        >>> l = LKJCholesky(3, 0.5)
        >>> l.sample()   # l @ l.T is a sample of a correlation 3x3 matrix
        tensor([[ 1.0000,  0.0000,  0.0000],
                [ 0.3516,  0.9361,  0.0000],
                [-0.1899,  0.4748,  0.8593]])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # the onion method's Beta laws, one per row (row 0 is a dummy)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torchish.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = torchish.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with torchish.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = torchish.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype,
                                      device=y.device).tril(-1)
            # row 0 is all zeros (0 / 0 here): it is set to 0, its diagonal entry to 1 below
            first_row = torchish.arange(self.dim, device=y.device).eq(0).unsqueeze(-1)
            u_hypersphere = torchish.where(first_row, 0.0, u_normal / u_normal.norm(dim=-1, keepdim=True))
            w = torchish.sqrt(y) * u_hypersphere
            eps = torchish.finfo(w.dtype).tiny
            diag_elems = torchish.clamp(1 - torchish.sum(w ** 2, dim=-1), min=eps).sqrt()
            return w + torchish.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torchish.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = torchish.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = torchish.lgamma(alpha) * dm1
        numerator = torchish.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
