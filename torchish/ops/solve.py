"""LU-based linear algebra: inv/inv_ex, solve/solve_ex, det/slogdet/logdet, lu_factor/lu_factor_ex/lu/lu_solve,
and solve_triangular (the shared checks and VJP conventions are in ``decomp.py``)."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import tracing
from .decomp import RESULTS, _batch_broadcast, _mH, _mm, _mT, autocast_inputs, check_matrix, raise_info
from .elementwise import require_tensor, structured_out
from .registry import apply, defop


# ----------------------------------------------------------------------------------------------------------------
# helpers: LAPACK's info, solving from an LU factorization


def _lu_info(lu):
    """LAPACK's getrf info: 1-based index of the first zero on U's diagonal, 0 when there is none."""
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    if d.shape[-1] == 0:  # empty matrices: no pivot is zero (argmax of nothing is undefined)
        return jnp.zeros(d.shape[:-1], jnp.int32)
    zero = d == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _lu_solve(lu, perm, b, adjoint=False):
    """Solve ``A x = b`` (or ``A^H x = b``) from ``A[perm] = L U``; lu, perm and b share batch dims."""
    tri = jax.lax.linalg.triangular_solve
    if not adjoint:
        bp = jnp.take_along_axis(b, jnp.broadcast_to(perm[..., :, None], b.shape), axis=-2)
        y = tri(lu, bp, left_side=True, lower=True, unit_diagonal=True)
        return tri(lu, y, left_side=True, lower=False)
    y = tri(lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    x = tri(lu, y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=True)
    inv_perm = jnp.argsort(perm, axis=-1)
    return jnp.take_along_axis(x, jnp.broadcast_to(inv_perm[..., :, None], x.shape), axis=-2)


# ----------------------------------------------------------------------------------------------------------------
# inv / solve


def _inv_fwd(A):
    lu, _, perm = jax.lax.linalg.lu(A)
    eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    return _lu_solve(lu, perm, eye), _lu_info(lu)


def _inv_vjp(g, A, out):
    xh = _mH(out[0])
    return -_mm(_mm(xh, g[0]), xh)


_INV = defop("linalg_inv_ex", _inv_fwd, vjp=_inv_vjp, grad_name="LinalgInvExBackward0")


def _singular_inv(i):
    return f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular."


@structured_out
def inv_ex(A, *, check_errors=False):
    A, = autocast_inputs("linalg_inv_ex", A)
    check_matrix(A, "linalg.inv")
    inv, info = apply(_INV, (A,))
    if check_errors:
        raise_info(info, "linalg.inv_ex", _singular_inv)
    return RESULTS["linalg_inv_ex"](inv, info)


@structured_out
def inv(A):
    """The inverse of each square matrix; :class:`LinAlgError` when one is singular."""
    A, = autocast_inputs("linalg_inv_ex", A)
    check_matrix(A, "linalg.inv")
    res, info = apply(_INV, (A,))
    raise_info(info, "linalg.inv", _singular_inv)
    return res


def _solve_fwd(A, B, *, vector, left):
    if not left:
        A = _mT(A)
        B = B if vector else _mT(B)
    if vector:
        B = B[..., None]
    A, B = _batch_broadcast(A, B)
    lu, _, perm = jax.lax.linalg.lu(A)
    X = _lu_solve(lu, perm, B)
    X = X[..., 0] if vector else (X if left else _mT(X))
    return X, _lu_info(lu)


_SOLVE = defop("linalg_solve_ex", _solve_fwd, grad_name="LinalgSolveExBackward0")


def _solve_args(A, B, fname, left):
    check_matrix(A, fname, kernel="lu_cpu")
    if not isinstance(B, Tensor):
        raise TypeError(f"{fname}(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{fname}: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.scalar_type_name(A.dtype)} and B of type {_dtype.scalar_type_name(B.dtype)} "
                           "instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    # a vector B is solved as the column B.unsqueeze(-1), whose width is 1: XA = B needs n == 1
    rows = (B.shape[-1] if left else 1) if vector else (B.shape[-2] if left else B.shape[-1])
    if rows != n:
        shape = f"{B.shape[-1]}x1" if vector else f"{B.shape[-2]}x{B.shape[-1]}"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({A.shape[-2]}x{n} and {shape})")
    if vector and not left:
        raise RuntimeError(f"{fname}: Vector broadcasting of the left hand side is not supported for left=False. In "
                           "this case linalg.solve is equivalent to B / A.squeeze(-1)")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:B.ndim - (1 if vector else 2)]))
    except ValueError:
        from .broadcast import broadcast_error
        raise broadcast_error(tuple(A.shape[:-2]), tuple(B.shape[:B.ndim - (1 if vector else 2)])) from None
    return vector


@structured_out
def solve_ex(A, B, *, left=True, check_errors=False):
    A, B = autocast_inputs("linalg_solve_ex", A, B)
    vector = _solve_args(A, B, "linalg.solve_ex", left)
    X, info = apply(_SOLVE, (A, B), vector=vector, left=bool(left))
    if check_errors:
        raise_info(info, "torch.linalg.solve_ex", lambda i: "The solver failed because the input matrix is singular.")
    return RESULTS["linalg_solve_ex"](X, info)


@structured_out
def solve(A, B, *, left=True):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``); ``B`` may be a (batch of) vector(s)."""
    require_tensor(A, "linalg_solve", 1, "A")
    require_tensor(B, "linalg_solve", 2, "B")
    A, B = autocast_inputs("linalg_solve_ex", A, B)
    vector = _solve_args(A, B, "linalg.solve", left)
    X, info = apply(_SOLVE, (A, B), vector=vector, left=bool(left))
    raise_info(info, "torch.linalg.solve", lambda i: "The solver failed because the input matrix is singular.")
    return X


# ----------------------------------------------------------------------------------------------------------------
# det / slogdet / logdet


def _exclusive_prod(s):
    """``prod_{j != i} s_j`` without dividing (zero singular values allowed)."""
    one = jnp.ones_like(s[..., :1])
    left = jnp.cumprod(jnp.concatenate([one, s[..., :-1]], -1), -1)
    right = jnp.flip(jnp.cumprod(jnp.concatenate([one, jnp.flip(s, -1)[..., :-1]], -1), -1), -1)
    return left * right


def _adjugate(A, det):
    """adj(A) = det(A) A^{-1}; through an SVD where A is singular (both sides kept finite for double backward)."""
    n = A.shape[-1]
    singular = (det == 0)[..., None, None]
    eye = jnp.eye(n, dtype=A.dtype)
    regular = det[..., None, None] * jnp.linalg.inv(jnp.where(singular, eye, A))
    safe = jnp.where(singular, A, jnp.diag(jnp.arange(1, n + 1, dtype=A.dtype)))
    U, S, Vh = jnp.linalg.svd(safe)
    scale = jnp.linalg.det(U) * jnp.linalg.det(Vh)
    via_svd = scale[..., None, None] * _mm(_mH(Vh) * _exclusive_prod(S).astype(A.dtype)[..., None, :], _mH(U))
    return jnp.where(singular, via_svd, regular)


def _det_vjp(g, A, out):
    return g[..., None, None] * _mH(_adjugate(A, out))


_DET = defop("linalg_det", jnp.linalg.det, vjp=_det_vjp, grad_name="LinalgDetBackward0")


@structured_out
def det(A):
    """The determinant of each square matrix (its gradient is finite at singular matrices too)."""
    check_matrix(A, "linalg.det", kernel="lu_cpu")
    return apply(_DET, (A,))


_SLOGDET = defop("linalg_slogdet", lambda A: tuple(jnp.linalg.slogdet(A)), grad_name="LinalgSlogdetBackward0")


@structured_out
def slogdet(A):
    """``(sign, log|det|)`` of each square matrix."""
    check_matrix(A, "linalg.slogdet")
    return RESULTS["linalg_slogdet"](*apply(_SLOGDET, (A,)))


def _logdet_fwd(A):
    sign, lad = jnp.linalg.slogdet(A)
    if jnp.iscomplexobj(A):
        return jnp.log(sign) + lad
    return jnp.where(sign < 0, jnp.nan, lad)


_LOGDET = defop("logdet", _logdet_fwd, grad_name="WhereBackward0")
_LOGDET_C = defop("logdet_complex", _logdet_fwd, grad_name="AddBackward0")


def logdet(input):
    """``log(det(input))``: NaN for a negative determinant, ``-inf`` for a singular matrix."""
    check_matrix(input, "logdet", arg="A")
    if input.dtype in (_dtype.float32, _dtype.float64) and input.requires_grad and STATE.grad_enabled:
        # ATen's composite: where(sign == -1, nan, logabsdet) over linalg_slogdet (WhereBackward0, a None edge)
        from .ternary import where
        sign, logabsdet = slogdet(input)
        return where(sign == -1.0, math.nan, logabsdet)
    return apply(_LOGDET_C if input.is_complex() else _LOGDET, (input,))


# ----------------------------------------------------------------------------------------------------------------
# lu / lu_factor / lu_solve / solve_triangular


def _lu_factor_fwd(A):
    lu, piv, _ = jax.lax.linalg.lu(A)
    return lu, (piv + 1).astype(jnp.int32), _lu_info(lu)


_LU_FACTOR = defop("linalg_lu_factor_ex", _lu_factor_fwd, grad_name="LinalgLuFactorExBackward0")


def _lu_fwd(A):
    lu, _, perm = jax.lax.linalg.lu(A)
    m, n = A.shape[-2:]
    k = min(m, n)
    L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=A.dtype)
    U = jnp.triu(lu[..., :k, :])
    return L, U


def _lu_perm_fwd(A):
    perm = jax.lax.linalg.lu(A)[2]
    return _mT(jax.nn.one_hot(perm, A.shape[-2], dtype=A.dtype))  # A = P L U


_LU = defop("linalg_lu", _lu_fwd, grad_name="LinalgLuBackward0")
_LU_P = defop("linalg_lu_p", _lu_perm_fwd, differentiable=False)


@structured_out
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    check_matrix(A, "torch.linalg.lu_factor_ex", square=False, kernel="lu_cpu", int_kernel=True)
    if not pivot and A.numel():  # an empty A never reaches the (pivoting-only) CPU kernel
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = apply(_LU_FACTOR, (A,))
    if check_errors:
        raise_info(info, "torch.linalg.lu_factor_ex", lambda i: f"U[{i},{i}] is zero and using it on lu_solve would "
                   "result in a division by zero. If you still want to perform the factorization, consider calling "
                   "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return RESULTS["linalg_lu_factor_ex"](LU, piv, info)


@structured_out
def lu_factor(A, *, pivot=True):
    """``LU, pivots`` of ``A = P L U`` packed as LAPACK does (pivots 1-based, int32)."""
    check_matrix(A, "torch.linalg.lu_factor", square=False, kernel="lu_cpu", int_kernel=True)
    if not pivot and A.numel():  # an empty A never reaches the (pivoting-only) CPU kernel
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = apply(_LU_FACTOR, (A,))
    d = info._d
    if not (tracing.active() or isinstance(d, jax.core.Tracer)) and np.asarray(d).any():
        i = int(np.asarray(d).reshape(-1)[np.flatnonzero(np.asarray(d).reshape(-1))[0]])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on lu_solve would result in a "
                           "division by zero. If you still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return RESULTS["linalg_lu_factor"](LU, piv)


@structured_out
def lu(A, *, pivot=True):
    """``P, L, U`` with ``A = P L U`` (L unit lower triangular)."""
    check_matrix(A, "linalg.lu", square=False, kernel="lu_cpu", int_kernel=True)
    if not pivot:
        if A.numel():
            raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
        from .creation import empty
        return RESULTS["linalg_lu"](empty(0, dtype=A.dtype), *apply(_LU, (A,)))  # no P without pivoting
    return RESULTS["linalg_lu"](apply(_LU_P, (A,)), *apply(_LU, (A,)))


def _lu_solve_fwd(LU, pivots, B, *, left, adjoint):
    n = LU.shape[-1]
    perm = jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, n)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        B, adjoint = _mH(B), not adjoint
    LU, B = _batch_broadcast(LU, B)
    perm = jnp.broadcast_to(perm, LU.shape[:-1])
    X = _lu_solve(LU, perm, B, adjoint=adjoint)
    return X if left else _mH(X)


_LU_SOLVE = defop("linalg_lu_solve", _lu_solve_fwd, grad_name="LinalgLuSolveBackward0")


@structured_out
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """Solve with the factorization of :func:`lu_factor`."""
    check_matrix(LU, "linalg.lu_solve", arg="LU")
    if B.dtype != LU.dtype:  # (CPU autocast leaves linalg_lu_solve as it is: a bfloat16 B meets this check)
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_dtype.scalar_type_name(LU.dtype)} and B of type {_dtype.scalar_type_name(B.dtype)} "
                           "instead")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return apply(_LU_SOLVE, (LU, pivots, B), left=bool(left), adjoint=bool(adjoint))


def _tri_solve_fwd(A, B, *, upper, left, unit):
    A, B = _batch_broadcast(A, B)
    return jax.lax.linalg.triangular_solve(A, B, left_side=left, lower=not upper, unit_diagonal=unit)


_TRI_SOLVE = defop("linalg_solve_triangular", _tri_solve_fwd, grad_name="LinalgSolveTriangularBackward0")


@structured_out
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``) reading only one triangle of ``A``."""
    check_matrix(A, "linalg.solve_triangular", kernel="triangular_solve_cpu", int_kernel=True)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:  # no dtype check: PyTorch copies B into a result like A and solves there
        B = B.to(A.dtype)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return apply(_TRI_SOLVE, (A, B), upper=bool(upper), left=bool(left), unit=bool(unitriangular))
