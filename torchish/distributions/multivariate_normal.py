"""Gaussian vectors: ``MultivariateNormal`` (by covariance, precision or lower Cholesky factor) and
``LowRankMultivariateNormal`` (covariance ``W @ W.T + diag(D)``, scored through the capacitance matrix
``I + W.T D^-1 W`` so that the cost is linear in the event size).
"""
from __future__ import annotations

import math

import torchish
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal"]

_LOG_2PI = math.log(2 * math.pi)


def _batch_mv(bmat, bvec):
    """Matrix-vector products broadcast over batch dims."""
    return torchish.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x.T (L L.T)^-1 x`` for lower-triangular ``L``, broadcast over batch dims: ``|L^-1 x|^2``."""
    batch = torchish.broadcast_shapes(bL.shape[:-2], bx.shape[:-1])
    n = bx.shape[-1]
    solved = torchish.linalg.solve_triangular(bL.expand(batch + (n, n)), bx.expand(batch + (n,)).unsqueeze(-1),
                                              upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _tril_inverse(L):
    """``L^-1`` of lower-triangular ``L``."""
    eye = torchish.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return torchish.linalg.solve_triangular(L, eye.expand(L.shape), upper=False)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^-1``, without inverting ``P``: factor ``P`` with its rows and columns
    reversed, so that the reversed factor's transpose inverse is lower triangular."""
    Lf = torchish.linalg.cholesky(torchish.flip(P, (-2, -1)))
    L_inv = torchish.transpose(torchish.flip(Lf, (-2, -1)), -2, -1)
    return _tril_inverse(L_inv)


class MultivariateNormal(Distribution):
    """A Gaussian vector with mean ``loc`` and exactly one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril`` (its lower Cholesky factor).

    Example::

        >>> m = MultivariateNormal(torch.zeros(2), torch.eye(2))
        >>> m.sample().shape
        torch.Size([2])
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        for name, m in (("scale_tril matrix", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is not None:
                if m.dim() < 2:
                    raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch "
                                     "dimensions")
                batch_shape = Size(torchish.broadcast_shapes(m.shape[:-2], loc.shape[:-1]))
                setattr(self, name.split()[0], m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torchish.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return torchish.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return torchish.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + _LOG_2PI) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)


def _capacitance_tril(W, D):
    """The Cholesky factor of ``I + W.T D^-1 W``."""
    m = W.size(-1)
    K = torchish.matmul(W.mT / D.unsqueeze(-2), W)
    return torchish.linalg.cholesky(K + torchish.eye(m, dtype=K.dtype, device=K.device))


def _lowrank_logdet(W, D, capacitance_tril):
    """``log det(W W.T + D)`` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x.T (W W.T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(Wt_Dinv, x))


class LowRankMultivariateNormal(Distribution):
    """A Gaussian vector with mean ``loc`` and covariance ``cov_factor @ cov_factor.T + diag(cov_diag)``."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = torchish.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                          cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(self._batch_shape + self._event_shape)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        # L = D^1/2 chol(I + D^-1/2 W W.T D^-1/2): a Cholesky factor of an identity-plus-PSD matrix stays stable
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self._event_shape[0]
        sqrt_d = D.sqrt().unsqueeze(-1)
        Dinvsqrt_W = W / sqrt_d
        K = torchish.matmul(Dinvsqrt_W, Dinvsqrt_W.mT) + torchish.eye(n, dtype=W.dtype, device=W.device)
        return (sqrt_d * torchish.linalg.cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (torchish.matmul(W, W.mT) + torchish.diag_embed(D)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W.T + D)^-1 = D^-1 - D^-1 W (I + W.T D^-1 W)^-1 W.T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = torchish.linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return (torchish.diag_embed(D.reciprocal()) - torchish.matmul(A.mT, A)).expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        W = self._unbroadcasted_cov_factor
        eps_W = _standard_normal(shape[:-1] + W.shape[-1:], dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(W, eps_W) + self._unbroadcasted_cov_diag.sqrt() * eps_D

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + log_det + M)

    def entropy(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + _LOG_2PI) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
