"""``Wishart``: distribution of positive-definite matrices (``torch.distributions.Wishart``).

Parameterised like ``MultivariateNormal`` (exactly one of ``covariance_matrix``, ``precision_matrix``,
``scale_tril``) plus degrees of freedom ``df > p - 1``. Every computation runs on the lower Cholesky factor of the
scale. Samples use the Bartlett decomposition (chi-squared diagonal, standard normal below it), reparameterised.
"""
from __future__ import annotations

import math
import warnings
from numbers import Number

import torchish
from .._tensor import Size
from . import constraints
from .distribution import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function ``sum_{i<p} digamma(x - i/2)``."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = torchish.arange(p, dtype=x.dtype, device=x.device).div(2)
    return torchish.digamma(x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=torchish.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Symmetric positive-definite ``p x p`` matrices with ``df`` degrees of freedom and scale
    ``covariance_matrix`` (or its inverse ``precision_matrix``, or its lower Cholesky factor ``scale_tril``).

    Example::

        >>> m = Wishart(torch.tensor([2.0]), covariance_matrix=torch.eye(2))
        >>> m.sample()   # mean df * I, variance of x_ij df for i != j and 2 df for i == j
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = torchish.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(torchish.broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = Size(param.shape[-2:])
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")

        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)

        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torchish.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        """Chi-squared laws of the Bartlett factor's squared diagonal: ``df - i`` degrees for row ``i``."""
        L = self._unbroadcasted_scale_tril
        offsets = torchish.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = torchish.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return torchish.cholesky_solve(identity, L).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, df):
        return df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torchish.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + torchish.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        below = torchish.randn(tuple(Size(sample_shape) + self._batch_shape) + (p * (p - 1) // 2,),
                               dtype=diag.dtype, device=diag.device)
        chol = self._unbroadcasted_scale_tril @ (diag + vec_to_tril_matrix(below, diag=-1))
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett samples, redrawn as PyTorch 2.13 redraws them, so that a seeded program gets torch's values and
        leaves the generator where torch leaves it. PyTorch's first check tests the support the wrong way round:
        every sample that IS positive definite counts as "singular" (hence its "Singular sample detected." warning
        on nearly every call) and is replaced by one fresh draw, while a truly singular first sample is kept; the
        retry loop's later checks are the right way round (up to ``max_try_correction``, 10, rounds)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(Size(sample_shape))
        redraw = self._per_sample(self.support.check(sample))  # (sic: PyTorch's first test, not negated)
        if bool(redraw.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(Size((int(redraw.sum()),)))
                sample[redraw] = fresh
                redraw[redraw.clone()] = self._per_sample(~self.support.check(fresh))
                if not bool(redraw.any()):
                    break
        return sample

    def _per_sample(self, flags):
        """Per sample (over every batch member): whether any matrix is flagged."""
        return flags.amax(self._batch_dims) if self._batch_shape else flags

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        log_det_scale = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = torchish.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _log_2 / 2 + log_det_scale) - torchish.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torchish.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        log_det_scale = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _log_2 / 2 + log_det_scale) + torchish.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu, p = self.df, self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-torchish.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + torchish.mvlgamma(y + (p + 1) / 2, p=p))
