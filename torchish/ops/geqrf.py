"""``torch.geqrf`` and ``torch.ormqr``: QR in LAPACK's compact Householder form, and products with its ``Q``.

``geqrf(A)`` returns ``(a, tau)``: ``R`` on and above the diagonal of ``a``, the Householder vectors below it (an
implicit 1 on the diagonal) and their scalars ``tau`` — LAPACK's ``geqrf`` output, computed here column by
column as LAPACK's unblocked ``geqr2`` does. PyTorch has no derivative for it. ``ormqr(a, tau, C)`` multiplies ``C`` by
the full ``m x m`` ``Q = H_1 ... H_k`` (or its conjugate transpose, from the left or the right); its gradient is
the one JAX derives through the reflector product.

Example:
    >>> import torchish as torch
    >>> A = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> a, tau = torch.geqrf(A)
    >>> torch.allclose(torch.ormqr(a, tau, torch.eye(3))[:, :2] @ a.triu()[:2], A)
    True
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype
from .elementwise import structured_out
from .householder import _householder_fwd
from .reduce import _return_type
from .registry import Family, NotDifferentiable, apply, defop

_fam = Family(globals())
_GEQRF_RESULT = _return_type("geqrf", ("a", "tau"))


def _geqrf_vjp(g, a, *, out):
    return (NotDifferentiable(NotImplementedError("the derivative for 'geqrf' is not implemented.")),)


def _geqrf_fwd(a):
    """LAPACK's ``geqr2``: for each column ``j``, the reflector of ``larfg`` (``beta = -sign(re alpha) * norm``,
    ``tau = (beta - alpha) / beta``, ``v = x / (alpha - beta)``; ``tau = 0`` when there is nothing to reflect)
    applied as ``H^H`` to the columns right of ``j``."""
    m, n = a.shape[-2:]
    rows, cols = jnp.arange(m), jnp.arange(n)
    real = jnp.zeros((), a.dtype).real.dtype

    def step(j, carry):
        a, tau = carry
        col = jax.lax.dynamic_index_in_dim(a, j, axis=-1, keepdims=False)
        alpha = jax.lax.dynamic_index_in_dim(col, j, axis=-1, keepdims=True)
        below = rows > j
        x = jnp.where(below, col, 0)
        xnorm = jnp.sqrt(jnp.sum(jnp.abs(x) ** 2, axis=-1, keepdims=True)).astype(real)
        keep = (xnorm == 0) & (jnp.imag(alpha) == 0)
        norm = jnp.sqrt(jnp.abs(alpha) ** 2 + xnorm ** 2)
        beta = jnp.where(jnp.real(alpha) < 0, norm, -norm)  # (-0.0 counts as positive, as in PyTorch's LAPACK)
        beta = jnp.where(keep, jnp.real(alpha), beta)
        safe = jnp.where(keep, 1, beta)
        t = jnp.where(keep, 0, (beta - alpha) / safe).astype(a.dtype)
        v = jnp.where(below, x * jnp.where(keep, 0, 1 / jnp.where(keep, 1, alpha - beta)), (rows == j).astype(a.dtype))
        w = jnp.einsum("...m,...mn->...n", jnp.conj(v), a)
        a = jnp.where(cols > j, a - (jnp.conj(t) * v)[..., :, None] * w[..., None, :], a)
        newcol = jnp.where(below, v, jnp.where(rows == j, beta.astype(a.dtype), col))
        a = jnp.where(cols == j, newcol[..., :, None], a)
        tau = jnp.where(jnp.arange(tau.shape[-1]) == j, t, tau)
        return a, tau

    tau = jnp.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    if min(m, n) == 0:  # nothing to reflect (the loop's body cannot even be traced on an empty dimension)
        return a, tau
    return jax.lax.fori_loop(0, min(m, n), step, (a, tau))


_GEQRF = defop("geqrf", _geqrf_fwd, vjp=_geqrf_vjp, grad_name="GeqrfBackward0")


def _check_float(t, name):
    if not (t.dtype.is_floating_point or t.dtype.is_complex) or t.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.scalar_type_name(t.dtype)}'")


@structured_out
def geqrf(input):
    """QR of ``input`` (``..., m, n``) in LAPACK's form: ``(a, tau)``."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_float(input, "geqrf")
    a, tau = apply(_GEQRF, (input,))
    return _GEQRF_RESULT(a, tau)


def _full_q(a, tau):
    """The ``m x m`` product of the reflectors stored in ``a`` (``m x n``) and ``tau``."""
    m, n = a.shape[-2:]
    if n < m:
        a = jnp.concatenate([a, jnp.zeros(a.shape[:-1] + (m - n,), a.dtype)], axis=-1)
    return _householder_fwd(a[..., :m], tau)


def _ormqr_fwd(a, tau, c, *, left, transpose):
    q = _full_q(a, tau)
    if transpose:
        q = jnp.conj(jnp.swapaxes(q, -1, -2))
    return q @ c if left else c @ q


_ORMQR = defop("ormqr", _ormqr_fwd, grad_name="OrmqrBackward0")


@structured_out
def ormqr(input, tau, other, left=True, transpose=False):
    """``Q @ other`` (``other @ Q`` with ``left=False``; ``Q^H`` with ``transpose=True``) for the ``Q`` of
    :func:`geqrf`'s ``(input, tau)``."""
    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    if other.ndim != input.ndim:
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {other.ndim} and input.ndim is equal to {input.ndim}")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError("torch.ormqr: tau.dim() must be equal to input.dim() - 1")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])")
    for t, name in ((tau, "tau"), (other, "other")):
        if t.dtype != input.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{_dtype.scalar_type_name(input.dtype)} and {name} has dtype "
                               f"{_dtype.scalar_type_name(t.dtype)}")
    _check_float(input, "ormqr")
    return apply(_ORMQR, (input, tau, other), left=bool(left), transpose=bool(transpose))


_fam.public("geqrf", geqrf)
_fam.public("ormqr", ormqr)
