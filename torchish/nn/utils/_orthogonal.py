"""The ``orthogonal`` parametrization: a weight (or batch of matrices) kept orthogonal through the matrix
exponential, the Cayley map or a product of Householder reflectors of an unconstrained ``original``.

With ``use_trivialization=True`` (the default) the parametrization holds a buffer ``base`` (the orthogonal matrix
registered or last assigned) and reads ``base @ map(original)``; ``original`` starts at ``-I`` so the first read
gives ``base`` back.
"""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..module import Module

_MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(A):
    """The Q of A's QR decomposition, with signs chosen so that R has a non-negative diagonal."""
    from ...linalg import qr
    q, r = qr(A)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    from ...ops.creation import eye
    from ...ops.compare import allclose
    from ..._dtype import finfo
    n, k = Q.shape[-2], Q.shape[-1]
    return allclose(Q.mH @ Q, eye(k, dtype=Q.dtype), atol=10.0 * n * finfo(Q.dtype).eps)


def _geqrf(A):
    """``torch.geqrf``: LAPACK's compact QR (reflectors below the diagonal, R on and above it) and ``tau``."""
    import jax.numpy as jnp
    h, tau = jnp.linalg.qr(A.detach()._d, mode="raw")  # numpy's raw mode: the compact matrix transposed
    return Tensor._make(jnp.swapaxes(h, -1, -2)), Tensor._make(tau)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                from ...ops.join import cat
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = A.matrix_exp()
            else:
                from ...linalg import solve
                from ...ops.creation import eye
                eye_n = eye(n, dtype=A.dtype)
                Q = solve(eye_n - 0.5 * A, eye_n + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            from ...ops.householder import householder_product
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)  # (LAPACK's orgqr: NotImplementedError for the half types, as PyTorch)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                                 f"Got a tensor of shape {tuple(Q.shape)}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q)
                diag = A.diagonal(dim1=-2, dim2=-1)
                sign = diag.sign() * (1 - 2 * (tau == 0).to(diag.dtype))
                A.diagonal(dim1=-2, dim2=-1).copy_(sign)
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                from ...ops.join import cat
                from ...ops.random import randn
                N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            neg_eye = Q_init.new_zeros(Q_init.shape)
            neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (unitary); returns module.

    ``orthogonal_map`` is ``"matrix_exp"`` (the default for square or complex weights), ``"cayley"`` or
    ``"householder"`` (the default otherwise).
    """
    from . import parametrize
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
