"""``torch.linalg.householder_product`` (and its older name ``torch.orgqr``): the first ``n`` columns of the product
``H_1 H_2 ... H_k`` of Householder reflectors ``H_i = I - tau_i v_i v_i^H``, where ``v_i`` is column ``i`` of
``input`` below the diagonal with an implicit 1 on it (LAPACK's ``orgqr``/``ungqr`` representation, as
``torch.geqrf`` returns it).

The forward applies the reflectors right to left to the identity in one ``fori_loop``; its gradient is the one
``jax.vjp`` derives through that loop (PyTorch's ``householder_product_backward`` is the same derivative).

Example:
    >>> import torchish as torch
    >>> A = torch.tensor([[1.0, 0.0], [0.5, 1.0], [0.25, 0.5]])
    >>> torch.linalg.householder_product(A, torch.tensor([1.0, 0.0])).shape
    torch.Size([3, 2])
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from .elementwise import linalg_castable_out
from .registry import apply, defop

_FLOAT = _dtype._FLOAT


def _householder_fwd(a, tau):
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    rows = jnp.arange(m)
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), a.shape)

    def reflect(j, q):
        i = k - 1 - j  # right to left: Q = H_1 (H_2 (... (H_k I)))
        col = jax.lax.dynamic_index_in_dim(a, i, axis=-1, keepdims=False)
        v = jnp.where(rows > i, col, jnp.where(rows == i, jnp.ones((), a.dtype), jnp.zeros((), a.dtype)))
        t = jax.lax.dynamic_index_in_dim(tau, i, axis=-1, keepdims=True)
        w = jnp.einsum("...m,...mn->...n", jnp.conj(v), q)  # v^H Q
        return q - (t * v)[..., :, None] * w[..., None, :]

    return jax.lax.fori_loop(0, k, reflect, q) if k else q


_HOUSEHOLDER = defop("linalg_householder_product", _householder_fwd, grad_name="LinalgHouseholderProductBackward0")


@linalg_castable_out("torch.linalg.householder_product")
def householder_product(A, tau):
    """The first ``n`` columns of ``H_1 ... H_k`` for the reflectors stored in ``A`` (m x n) and ``tau`` (k)."""
    name = "torch.linalg.householder_product"
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_householder_product(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if not isinstance(tau, Tensor):
        raise TypeError(f"linalg_householder_product(): argument 'tau' (position 2) must be Tensor, not "
                        f"{type(tau).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {_dtype.scalar_type_name(tau.dtype)} does not match input dtype "
                           f"{_dtype.scalar_type_name(A.dtype)}")
    if A.dtype.category < _FLOAT or A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{_dtype.scalar_type_name(A.dtype)}'")
    return apply(_HOUSEHOLDER, (A, tau))


def orgqr(input, tau, *, out=None):
    """``torch.orgqr``: :func:`householder_product` under LAPACK's name."""
    return householder_product(input, tau, out=out)
