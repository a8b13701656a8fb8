"""``torch.linalg.ldl_factor`` / ``ldl_factor_ex`` / ``ldl_solve``: the Bunch-Kaufman factorization
``A = P L D L^T P^T`` of a symmetric (or Hermitian) matrix, in LAPACK's compact ``sytrf`` form (lower storage),
and the solve with it (``sytrs``).

``LD`` holds ``L``'s columns below the diagonal and the 1x1 / 2x2 blocks of ``D`` on and just below it (the upper
triangle is zero, as PyTorch returns it); ``pivots`` are LAPACK's 1-based ``ipiv``: ``pivots[k] = p > 0`` swapped
rows ``k`` and ``p`` before a 1x1 step, a pair ``pivots[k] = pivots[k+1] = -p`` swapped rows ``k+1`` and ``p``
before a 2x2 step. The factorization follows LAPACK's unblocked ``sytf2`` / ``hetf2`` step by step (the same pivot
tests, the same update formulas), so ``LD`` and ``pivots`` agree with PyTorch's. The trailing block is kept as a
full symmetric (Hermitian) matrix, so a pivot interchange is one symmetric permutation of its rows and columns.

PyTorch has no derivative for either op: backward through them raises its error.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from .decomp import RESULTS, check_matrix
from .elementwise import no_derivative, structured_out
from .reduce import _return_type
from .registry import apply, defop

RESULTS.setdefault("linalg_ldl_factor", _return_type("linalg_ldl_factor", ("LD", "pivots")))
RESULTS.setdefault("linalg_ldl_factor_ex", _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info")))

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch-Kaufman's pivot threshold


def _abs1(x):
    """LAPACK's pivot magnitude: ``|x|`` for reals, ``|re| + |im|`` (CABS1) for complex entries."""
    return jnp.abs(jnp.real(x)) + jnp.abs(jnp.imag(x)) if jnp.iscomplexobj(x) else jnp.abs(x)


def _mirror(a, herm):
    """The full matrix from its lower triangle (conjugated above the diagonal when Hermitian)."""
    low = jnp.tril(a, -1)
    up = jnp.conj(low.T) if herm else low.T
    diag = jnp.diagonal(a)
    return low + up + jnp.diag(jnp.real(diag).astype(a.dtype) if herm else diag)


def _ldl_one(a, herm):
    """One matrix through LAPACK's ``sytf2``/``hetf2`` (lower). Returns (LD, pivots, info)."""
    n = a.shape[-1]
    idx = jnp.arange(n)
    real = jnp.real(a).dtype
    a = _mirror(a, herm)

    def diag_abs(x):
        return jnp.abs(jnp.real(x)) if herm else _abs1(x)

    def step(state):
        a, piv, info, k = state
        below = idx > k
        col = a[:, k]
        absakk = diag_abs(a[k, k])
        colabs = jnp.where(below, _abs1(col), jnp.asarray(-1, real))
        imax = jnp.argmax(colabs)
        colmax = jnp.where(k < n - 1, colabs[imax], jnp.zeros((), real))
        row_i = jnp.where((idx >= k) & (idx < imax), _abs1(a[imax, :]),
                          jnp.where(idx > imax, _abs1(a[:, imax]), jnp.asarray(-1, real)))
        rowmax = jnp.max(row_i)
        zero = (jnp.maximum(absakk, colmax) == 0) | jnp.isnan(absakk)
        keep = absakk >= _ALPHA * colmax
        keep2 = absakk >= _ALPHA * colmax * (colmax / rowmax)
        swap1 = diag_abs(a[imax, imax]) >= _ALPHA * rowmax
        one_by_one = zero | keep | keep2 | swap1
        kp = jnp.where(zero | keep | keep2, k, imax)
        kstep = jnp.where(one_by_one, 1, 2)
        kk = k + kstep - 1
        perm = jnp.where(idx == kk, kp, jnp.where(idx == kp, kk, idx))
        trail = (idx >= k)[:, None] & (idx >= k)[None, :]
        a = jnp.where(trail, a[perm][:, perm], a)
        rest1 = (idx > k)[:, None] & (idx > k)[None, :]
        rest2 = (idx > k + 1)[:, None] & (idx > k + 1)[None, :]
        a1 = _update1(a, k, idx, herm, rest1)
        a2 = _update2(a, k, idx, herm, rest2)
        a = _mirror(jnp.where(zero, a, jnp.where(kstep == 1, a1, a2)), herm)  # LAPACK reads the lower triangle
        kp1 = (kp + 1).astype(jnp.int32)
        piv = jnp.where(kstep == 1, jnp.where(idx == k, kp1, piv), jnp.where((idx == k) | (idx == k + 1), -kp1, piv))
        info = jnp.where(zero & (info == 0), (k + 1).astype(jnp.int32), info)
        return a, piv, info, k + kstep

    state = (a, jnp.zeros((n,), jnp.int32), jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))
    a, piv, info, _ = jax.lax.while_loop(lambda s: s[3] < n, step, state)
    return jnp.tril(a), piv, info


def _update1(a, k, idx, herm, rest):
    """A 1x1 pivot: the rank-1 update of the trailing block, then column ``k`` scaled (``syr`` + ``scal``)."""
    akk = jnp.real(a[k, k]).astype(a.dtype) if herm else a[k, k]
    d11 = 1 / akk
    x = jnp.where(idx > k, a[:, k], jnp.zeros((), a.dtype))
    xt = jnp.conj(x) if herm else x
    a = jnp.where(rest, a + x[:, None] * (-d11 * xt)[None, :], a)
    scaled = jnp.where(idx > k, a[:, k] * d11, a[:, k])
    a = a.at[:, k].set(scaled)
    if herm:
        a = a.at[k, k].set(akk)
    return a


def _update2(a, k, idx, herm, rest):
    """A 2x2 pivot: ``W = X D^{-1}`` for the two columns ``X`` below the block, the trailing block minus
    ``X W^T`` (``X W^H``), and the columns replaced by ``W`` (LAPACK's formulas)."""
    k1 = jnp.minimum(k + 1, a.shape[-1] - 1)
    xk = jnp.where(idx > k + 1, a[:, k], jnp.zeros((), a.dtype))
    xk1 = jnp.where(idx > k + 1, a[:, k1], jnp.zeros((), a.dtype))
    if herm:
        d = jnp.abs(a[k1, k])
        d11 = jnp.real(a[k1, k1]) / d
        d22 = jnp.real(a[k, k]) / d
        tt = 1 / (d11 * d22 - 1)
        d21 = a[k1, k] / d
        d = tt / d
        wk = d * (d11 * xk - d21 * xk1)
        wk1 = d * (d22 * xk1 - jnp.conj(d21) * xk)
        upd = xk[:, None] * jnp.conj(wk)[None, :] + xk1[:, None] * jnp.conj(wk1)[None, :]
    else:
        d21 = a[k1, k]
        d11 = a[k1, k1] / d21
        d22 = a[k, k] / d21
        t = 1 / (d11 * d22 - 1)
        d21 = t / d21
        wk = d21 * (d11 * xk - xk1)
        wk1 = d21 * (d22 * xk1 - xk)
        upd = xk[:, None] * wk[None, :] + xk1[:, None] * wk1[None, :]
    a = jnp.where(rest, a - upd, a)
    a = a.at[:, k].set(jnp.where(idx > k + 1, wk, a[:, k]))
    a = a.at[:, k1].set(jnp.where(idx > k + 1, wk1, a[:, k1]))
    if herm:
        a = a.at[k, k].set(jnp.real(a[k, k]).astype(a.dtype)).at[k1, k1].set(jnp.real(a[k1, k1]).astype(a.dtype))
    return a


def _batched(fn, x, core):
    """``fn`` mapped over the batch dims of ``x`` (its last ``core`` dims are one problem)."""
    batch = x.shape[:x.ndim - core]
    flat = x.reshape((-1,) + x.shape[x.ndim - core:])
    out = jax.vmap(fn)(flat)
    return jax.tree.map(lambda o: o.reshape(batch + o.shape[1:]), out)


def _ldl_factor_fwd(a, *, hermitian):
    herm = hermitian and jnp.iscomplexobj(a)
    return _batched(lambda m: _ldl_one(m, herm), a, 2)


_LDL_FACTOR = defop("linalg_ldl_factor_ex", _ldl_factor_fwd, vjp=no_derivative("linalg_ldl_factor_ex"),
                    grad_name="NotImplemented")


def _raise_info(info, fname):
    d = info._d
    from . import tracing
    if tracing.active() or isinstance(d, jax.core.Tracer):
        return
    import numpy as np
    arr = np.asarray(d).reshape(-1)
    if arr.any():
        raise RuntimeError(f"{fname}: Unknown error code: {int(arr[np.flatnonzero(arr)[0]])}.")


@structured_out
def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)`` of the Bunch-Kaufman factorization; ``info > 0``: a zero pivot at that (1-based)
    step (the factorization is then singular; PyTorch raises only with ``check_errors``)."""
    _check_ldl_input(A, "torch.linalg.ldl_factor_ex")
    LD, piv, info = apply(_LDL_FACTOR, (A,), hermitian=bool(hermitian))
    if check_errors:
        _raise_info(info, "torch.linalg.ldl_factor_ex")
    return RESULTS["linalg_ldl_factor_ex"](LD, piv, info)


@structured_out
def ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)``: :func:`ldl_factor_ex` that raises on a zero pivot."""
    _check_ldl_input(A, "torch.linalg.ldl_factor_ex")
    LD, piv, info = apply(_LDL_FACTOR, (A,), hermitian=bool(hermitian))
    _raise_info(info, "torch.linalg.ldl_factor")
    return RESULTS["linalg_ldl_factor"](LD, piv)


def _check_ldl_input(A, fname):
    if isinstance(A, Tensor) and A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(A.dtype)}'")
    check_matrix(A, fname)


# ----------------------------------------------------------------------------------------------------------------
# ldl_solve (LAPACK's sytrs / hetrs, lower)


def _ldl_solve_one(ld, piv, b, herm):
    n = ld.shape[-1]
    idx = jnp.arange(n)
    zero = jnp.zeros((), b.dtype)

    def cj(x):
        return jnp.conj(x) if herm else x

    def swap(b, i, j):
        perm = jnp.where(idx == i, j, jnp.where(idx == j, i, idx))
        return b[perm]

    def forward(state):  # L D X = B, first to last block
        b, k = state
        p = piv[k]
        two = p < 0
        k1 = jnp.minimum(k + 1, n - 1)
        kp = jnp.abs(p) - 1
        b = swap(b, jnp.where(two, k1, k), kp)
        below = jnp.where(two, idx > k + 1, idx > k)[:, None]
        b = b - jnp.where(below, ld[:, k][:, None] * b[k][None, :], zero)
        b = b - jnp.where(below & two, ld[:, k1][:, None] * b[k1][None, :], zero)
        akk = jnp.real(ld[k, k]).astype(b.dtype) if herm else ld[k, k]
        one = b.at[k].set(b[k] / akk)
        akm1k = ld[k1, k]
        akm1 = ld[k, k] / cj(akm1k)
        ak = ld[k1, k1] / akm1k
        denom = akm1 * ak - 1
        bkm1 = b[k] / cj(akm1k)
        bk = b[k1] / akm1k
        pair = b.at[k].set((ak * bkm1 - bk) / denom).at[k1].set((akm1 * bk - bkm1) / denom)
        return jnp.where(two, pair, one), k + jnp.where(two, 2, 1)

    def backward(state):  # L^T X = B (L^H when Hermitian), last to first block
        b, k = state
        p = piv[k]
        two = p < 0
        km1 = jnp.maximum(k - 1, 0)
        below = (idx > k)[:, None]
        b = b.at[k].add(-jnp.sum(jnp.where(below, cj(ld[:, k])[:, None] * b, zero), 0))
        b = jnp.where(two, b.at[km1].add(-jnp.sum(jnp.where(below, cj(ld[:, km1])[:, None] * b, zero), 0)), b)
        b = swap(b, k, jnp.abs(p) - 1)
        return b, k - jnp.where(two, 2, 1)

    b, _ = jax.lax.while_loop(lambda s: s[1] < n, forward, (b, jnp.zeros((), jnp.int32)))
    b, _ = jax.lax.while_loop(lambda s: s[1] >= 0, backward, (b, jnp.asarray(n - 1, jnp.int32)))
    return b


def _ldl_solve_fwd(ld, piv, b, *, hermitian):
    herm = hermitian and jnp.iscomplexobj(ld)
    batch = jnp.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    ld = jnp.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1,) + ld.shape[-2:])
    piv = jnp.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1,) + piv.shape[-1:])
    out = jnp.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = jax.vmap(lambda l, p, x: _ldl_solve_one(l, p, x, herm))(ld, piv, out)
    return out.reshape(batch + b.shape[-2:])


_LDL_SOLVE = defop("linalg_ldl_solve", _ldl_solve_fwd, vjp=no_derivative("linalg_ldl_solve"),
                   grad_name="NotImplemented")


@structured_out
def ldl_solve(LD, pivots, B, *, hermitian=False):
    """``X`` with ``A X = B`` from :func:`ldl_factor`'s ``LD`` and ``pivots``."""
    check_matrix(LD, "torch.linalg.ldl_solve", arg="LD")
    if B.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if pivots.dtype.category >= _dtype._FLOAT or pivots.dtype is _dtype.bool:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{_dtype.scalar_type_name(pivots.dtype)}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError("torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pivots.shape)} instead")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {LD.shape[-1]} by "
                           f"{LD.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype.scalar_type_name(B.dtype)} and A of type {_dtype.scalar_type_name(LD.dtype)} "
                           "instead.")
    return apply(_LDL_SOLVE, (LD, pivots, B), hermitian=bool(hermitian))
