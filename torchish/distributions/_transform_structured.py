"""Structured transforms (``torch.distributions.transforms``): ``CatTransform`` and ``StackTransform`` apply a
sequence of transforms to slices of a tensor (as ``torch.cat`` / ``torch.stack`` would join them), and
``CorrCholeskyTransform`` maps an unconstrained vector of length ``D*(D-1)/2`` onto the Cholesky factor of a
``D x D`` correlation matrix.

Example::

    >>> import torchish as torch
    >>> from torchish.distributions.transforms import CorrCholeskyTransform
    >>> t = CorrCholeskyTransform()
    >>> t(torch.zeros(3)).shape
    torch.Size([3, 3])
"""
from __future__ import annotations

import math

import torchish
from . import constraints
from ._transform import Transform
from .utils import _sum_rightmost, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "StackTransform", "CorrCholeskyTransform"]


def _check_dim(dim, t, name, what="tensor"):
    if not (-t.dim() <= dim < t.dim()):
        raise AssertionError(f"dim {dim} out of range for {what} with {t.dim()} dimensions")


def _check_size(dim, t, name, length, label="length"):
    if t.size(dim) != length:
        raise AssertionError(f"{name}.size({dim}) = {t.size(dim)} must equal {label} {length}")


class CatTransform(Transform):
    """Apply ``tseq[i]`` to the i-th slice (of ``lengths[i]`` entries) along ``dim``, like ``torch.cat``.

    Args:
        tseq: the transforms.
        dim: the dimension that is sliced.
        lengths: the slice lengths (default 1 each).
        cache_size: 0 or 1 (passed on to every transform).
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, z, name, inverse):
        _check_dim(self.dim, z, name)
        _check_size(self.dim, z, name, self.length)
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            piece = z.narrow(self.dim, start, length)
            out.append(trans.inv(piece) if inverse else trans(piece))
            start = start + length
        return torchish.cat(out, dim=self.dim)

    def _call(self, x):
        return self._map(x, "x", False)

    def _inverse(self, y):
        return self._map(y, "y", True)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(self.dim, x, "x", "x")
        _check_size(self.dim, x, "x", self.length)
        _check_dim(self.dim, y, "y", "y")
        _check_size(self.dim, y, "y", self.length)
        logdetjacs, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            xslice = x.narrow(self.dim, start, length)
            yslice = y.narrow(self.dim, start, length)
            logdetjac = trans.log_abs_det_jacobian(xslice, yslice)
            if trans.event_dim < self.event_dim:
                logdetjac = _sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
            start = start + length
        # concatenate along dim when it is a batch dim of the log-det, else sum
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return torchish.cat(logdetjacs, dim=dim)
        return sum(logdetjacs)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Apply ``tseq[i]`` to ``x.select(dim, i)``, joining the results like ``torch.stack``.

    Args:
        tseq: the transforms (one per index along ``dim``).
        dim: the dimension that is sliced.
        cache_size: 0 or 1 (passed on to every transform).
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, z, name, what="tensor"):
        _check_dim(self.dim, z, name, what)
        _check_size(self.dim, z, name, len(self.transforms), "len(transforms)")

    def _call(self, x):
        self._check(x, "x")
        return torchish.stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y")
        return torchish.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        return torchish.stack([t.log_abs_det_jacobian(xs, ys)
                               for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


def _pad_left_one(z):
    """``F.pad(z, [1, 0], value=1)``: a column of ones before the last dim."""
    return torchish.nn.functional.pad(z, [1, 0], value=1)


class CorrCholeskyTransform(Transform):
    """Unconstrained vector of length ``D*(D-1)/2`` -> Cholesky factor of a ``D x D`` correlation matrix (lower
    triangular, positive diagonal, unit-norm rows): the row-wise lower triangle goes through ``tanh`` and a signed
    stick-breaking. The log-det is that of ``x`` -> the flattened strict lower triangle of ``y``."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = torchish.tanh(x)
        eps = torchish.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + torchish.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * _pad_left_one(z1m_cumprod_sqrt[..., :-1])

    def _inverse(self, y):
        y_cumsum = 1 - torchish.cumsum(y * y, dim=-1)
        y_cumsum_shifted = _pad_left_one(y_cumsum[..., :-1])
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + torchish.nn.functional.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)
