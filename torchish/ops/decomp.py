"""Matrix decompositions and solvers behind ``torchish.linalg``: inv, solve, det/slogdet/logdet, svd/svdvals, qr,
cholesky, eigh/eig, lu/lu_factor/lu_solve, solve_triangular, pinv, matrix_exp, cross, multi_dot, matrix_norm.

Each is one registry op. Where PyTorch's backward differs from what ``jax.vjp`` would derive (eigh's and eig's gauge
handling, det at singular matrices, cholesky's symmetric gradient, the narrowed full-matrices SVD) the VJP is
PyTorch's formula. Those formulas are written in PyTorch's (conjugate Wirtinger) convention and converted to the
registry's convention (JAX's: ``conj`` in, ``conj`` out) by :func:`_torch_vjp`; for real dtypes that is a no-op.

Failures PyTorch reports from LAPACK's ``info`` (a singular matrix in ``inv``/``solve``, a matrix that is not
positive-definite in ``cholesky``) are computed in the same kernel and raised as :class:`LinAlgError` with PyTorch's
message once the value is concrete (never inside a trace, like PyTorch's ``*_ex`` variants).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import tracing
from .reduce import _return_type
from .registry import apply, defop

_HI = jax.lax.Precision.HIGHEST
_FLOAT = _dtype._FLOAT


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a linear-algebra routine failed on its input (singular, not positive-definite).
    A ``RuntimeError``, as in PyTorch."""


RESULTS = {name: _return_type(name, fields) for name, fields in (
    ("linalg_inv_ex", ("inverse", "info")), ("linalg_solve_ex", ("result", "info")),
    ("linalg_slogdet", ("sign", "logabsdet")), ("slogdet", ("sign", "logabsdet")),
    ("linalg_svd", ("U", "S", "Vh")), ("svd", ("U", "S", "V")), ("linalg_qr", ("Q", "R")), ("qr", ("Q", "R")),
    ("linalg_cholesky_ex", ("L", "info")), ("linalg_eigh", ("eigenvalues", "eigenvectors")),
    ("linalg_eig", ("eigenvalues", "eigenvectors")), ("linalg_lu_factor", ("LU", "pivots")),
    ("linalg_lu_factor_ex", ("LU", "pivots", "info")), ("linalg_lu", ("P", "L", "U")),
    ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values")))}


# ----------------------------------------------------------------------------------------------------------------
# helpers


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _mH(x):
    return jnp.conj(_mT(x))


def _mm(a, b):
    return jnp.matmul(a, b, precision=_HI)


def _diag_embed(d):
    return d[..., :, None] * jnp.eye(d.shape[-1], dtype=d.dtype)


def _torch_vjp(formula):
    """A VJP given as PyTorch's formula, called in the registry's convention (conj in, conj out)."""
    def vjp(g, *args, out, **static):
        g = jax.tree.map(jnp.conj, g)
        res = formula(g, *args, out=out, **static)
        if isinstance(res, tuple):
            return tuple(None if r is None else jnp.conj(r) for r in res)
        return jnp.conj(res)
    return vjp


def check_matrix(A, fname, square=True, arg="A"):
    """PyTorch's argument checks shared by the linalg functions."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {arg} must have at least 2 dimensions.")
    if A.dtype.category < _FLOAT:
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A.dtype)}")
    if A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {_dtype.scalar_type_name(A.dtype)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: {arg} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def raise_info(info, fname, message):
    """Raise LinAlgError for the first nonzero entry of a concrete ``info`` (one per batch element)."""
    d = info._d if isinstance(info, Tensor) else info
    if tracing.active() or isinstance(d, jax.core.Tracer):
        return
    arr = np.asarray(d)
    if not arr.any():
        return
    flat = arr.reshape(-1)
    k = int(np.flatnonzero(flat)[0])
    prefix = f"(Batch element {k}): " if arr.ndim else ""
    raise LinAlgError(f"{fname}: {prefix}{message(int(flat[k]))}")


def _lu_info(lu):
    """LAPACK's getrf info: 1-based index of the first zero on U's diagonal, 0 when there is none."""
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
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


def _batch_broadcast(a, b, a_core=2, b_core=2):
    batch = jnp.broadcast_shapes(a.shape[:a.ndim - a_core], b.shape[:b.ndim - b_core])
    return (jnp.broadcast_to(a, batch + a.shape[a.ndim - a_core:]),
            jnp.broadcast_to(b, batch + b.shape[b.ndim - b_core:]))


# ----------------------------------------------------------------------------------------------------------------
# inv / solve


def _inv_fwd(A):
    lu, _, perm = jax.lax.linalg.lu(A)
    eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    return _lu_solve(lu, perm, eye), _lu_info(lu)


@_torch_vjp
def _inv_vjp(g, A, out):
    xh = _mH(out[0])
    return -_mm(_mm(xh, g[0]), xh)


_INV = defop("linalg_inv_ex", _inv_fwd, vjp=_inv_vjp, grad_name="LinalgInvExBackward0")


def _singular_inv(i):
    return f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular."


def inv_ex(A, *, check_errors=False, out=None):
    check_matrix(A, "linalg.inv_ex")
    inv, info = apply(_INV, (A,))
    if check_errors:
        raise_info(info, "linalg.inv_ex", _singular_inv)
    return RESULTS["linalg_inv_ex"](inv, info)


def inv(A, *, out=None):
    """The inverse of each square matrix; :class:`LinAlgError` when one is singular."""
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
    check_matrix(A, fname)
    if not isinstance(B, Tensor):
        raise TypeError(f"{fname}(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{fname}: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.scalar_type_name(A.dtype)} and B of type {_dtype.scalar_type_name(B.dtype)} "
                           "instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    rows = B.shape[-1] if vector else (B.shape[-2] if left else B.shape[-1])
    if rows != n:
        shape = f"{B.shape[-1]}x1" if vector else f"{B.shape[-2]}x{B.shape[-1]}"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({A.shape[-2]}x{n} and {shape})")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:B.ndim - (1 if vector else 2)]))
    except ValueError:
        from .linalg import broadcast_error
        raise broadcast_error(tuple(A.shape[:-2]), tuple(B.shape[:B.ndim - (1 if vector else 2)])) from None
    return vector


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    vector = _solve_args(A, B, "linalg.solve_ex", left)
    X, info = apply(_SOLVE, (A, B), vector=vector, left=bool(left))
    if check_errors:
        raise_info(info, "torch.linalg.solve_ex", lambda i: "The solver failed because the input matrix is singular.")
    return RESULTS["linalg_solve_ex"](X, info)


def solve(A, B, *, left=True, out=None):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``); ``B`` may be a (batch of) vector(s)."""
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


@_torch_vjp
def _det_vjp(g, A, out):
    return g[..., None, None] * _mH(_adjugate(A, out))


_DET = defop("linalg_det", jnp.linalg.det, vjp=_det_vjp, grad_name="LinalgDetBackward0")


def det(A, *, out=None):
    """The determinant of each square matrix (its gradient is finite at singular matrices too)."""
    check_matrix(A, "linalg.det")
    return apply(_DET, (A,))


_SLOGDET = defop("linalg_slogdet", lambda A: tuple(jnp.linalg.slogdet(A)), grad_name="LinalgSlogdetBackward0")


def slogdet(A, *, out=None):
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
    return apply(_LOGDET_C if input.is_complex() else _LOGDET, (input,))


# ----------------------------------------------------------------------------------------------------------------
# svd / svdvals


def _svd_fwd(A, *, full):
    return tuple(jnp.linalg.svd(A, full_matrices=full))


def _svd_vjp(g, A, out, full):
    """JAX's reduced-SVD VJP; with ``full_matrices`` the extra singular vectors take no gradient (PyTorch narrows
    them away). When only S carries gradient the vector terms are dropped, so repeated singular values stay
    finite."""
    gU, gS, gVh = g
    k = min(A.shape[-2:])
    if full:
        gU, gVh = gU[..., :k], gVh[..., :k, :]
    U, S, Vh = out
    U, Vh = U[..., :k], Vh[..., :k, :]
    only_s = _mm(_mm(U, _diag_embed(gS.astype(U.dtype))), Vh)
    _, pull = jax.vjp(lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), A)
    (full_g,) = pull((gU, gS, gVh))
    no_vectors = jnp.logical_and(jnp.all(gU == 0), jnp.all(gVh == 0))
    return jnp.where(no_vectors, only_s, full_g)


_SVD = defop("linalg_svd", _svd_fwd, vjp=_svd_vjp, grad_name="LinalgSvdBackward0")
_SVDVALS = defop("linalg_svdvals", lambda A: jnp.linalg.svd(A, compute_uv=False), grad_name="LinalgSvdBackward0")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """``U, S, Vh`` with ``A = U diag(S) Vh``, singular values in descending order."""
    check_matrix(A, "linalg.svd", square=False)
    return RESULTS["linalg_svd"](*apply(_SVD, (A,), full=bool(full_matrices)))


def svdvals(A, *, driver=None, out=None):
    check_matrix(A, "linalg.svdvals", square=False)
    return apply(_SVDVALS, (A,))


# ----------------------------------------------------------------------------------------------------------------
# qr


def _qr_reduced(A):
    """Reduced QR; a wide matrix is factored as its leading square block (Q from it, the rest of R as Q^H A)."""
    m, n = A.shape[-2:]
    if m >= n:
        q, r = jnp.linalg.qr(A)
        return q, r
    q, rx = jnp.linalg.qr(A[..., :m])
    return q, jnp.concatenate([rx, _mm(_mH(q), A[..., m:])], -1)


def _qr_fwd(A, *, mode):
    if mode == "r":
        return jnp.zeros((0,), A.dtype), jnp.linalg.qr(A, mode="r")
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        q, r = jnp.linalg.qr(A, mode="complete")
        return q, r
    return _qr_reduced(A)


def _qr_vjp(g, A, out, mode):
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    _, pull = jax.vjp(_qr_reduced, A)
    return pull(tuple(g))


_QR = defop("linalg_qr", _qr_fwd, vjp=_qr_vjp, grad_name="LinalgQrBackward0")


def qr(A, mode="reduced", *, out=None):
    """``Q, R`` with ``A = Q R``; ``mode`` is ``'reduced'``, ``'complete'`` or ``'r'`` (Q left empty)."""
    check_matrix(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    return RESULTS["linalg_qr"](*apply(_QR, (A,), mode=mode))


# ----------------------------------------------------------------------------------------------------------------
# cholesky


def _chol_fwd(A, *, upper):
    src = _mH(A) if upper else A  # the triangle PyTorch reads: lower, or upper (as the lower of A^H)
    L = jax.lax.linalg.cholesky(src, symmetrize_input=False)
    failed = jnp.isnan(jnp.diagonal(L, axis1=-2, axis2=-1)).any(-1)
    return (_mH(L) if upper else L), jnp.where(failed, -1, 0).astype(jnp.int32)


@_torch_vjp
def _chol_vjp(g, A, out, upper):
    L, gL = out[0], g[0]
    if upper:
        L, gL = _mH(L), _mH(gL)
    gA = jnp.tril(_mm(_mH(L), gL))
    gA = 0.5 * (gA + _mH(jnp.tril(gA, -1)))
    tri = jax.lax.linalg.triangular_solve
    gA = tri(_mH(L), gA, left_side=True, lower=False)
    return tri(L, gA, left_side=False, lower=True)


_CHOL = defop("linalg_cholesky_ex", _chol_fwd, vjp=_chol_vjp, grad_name="LinalgCholeskyExBackward0")
_CHOL_LEGACY = defop("cholesky", _chol_fwd, vjp=_chol_vjp, grad_name="CholeskyBackward0")


def _failed_minor(A, upper):
    """The order of the first leading minor that is not positive-definite (numpy, on the error path only)."""
    a = np.asarray(A)
    a = np.conj(np.swapaxes(a, -1, -2)) if upper else a
    low = np.tril(a)
    herm = low + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))
    for k in range(1, herm.shape[-1] + 1):
        try:
            np.linalg.cholesky(herm[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return herm.shape[-1]


def _chol_info(A, info, upper):
    """Replace the in-kernel failure flags with LAPACK's info (the failing minor's order) when concrete."""
    d = info._d
    if tracing.active() or isinstance(d, jax.core.Tracer) or not np.asarray(d).any():
        return info
    flags = np.asarray(d)
    mats = np.asarray(A._d).reshape((-1,) + tuple(A.shape[-2:]))
    exact = np.array([_failed_minor(m, upper) if f else 0 for m, f in zip(mats, flags.reshape(-1))], np.int32)
    return Tensor._make(jnp.asarray(exact.reshape(flags.shape)))


def _not_pd(i):
    return (f"The factorization could not be completed because the input is not positive-definite (the leading minor "
            f"of order {i} is not positive-definite).")


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    check_matrix(A, "linalg.cholesky_ex")
    L, info = apply(_CHOL, (A,), upper=bool(upper))
    info = _chol_info(A, info, upper)
    if check_errors:
        raise_info(info, "linalg.cholesky_ex", _not_pd)
    return RESULTS["linalg_cholesky_ex"](L, info)


def cholesky(A, *, upper=False, out=None, _legacy=False):
    """The Cholesky factor ``L`` (``A = L L^H``), or ``U = L^H`` with ``upper=True``."""
    fname = "cholesky" if _legacy else "linalg.cholesky"
    check_matrix(A, fname)
    L, info = apply(_CHOL_LEGACY if _legacy else _CHOL, (A,), upper=bool(upper))
    raise_info(_chol_info(A, info, upper), fname, _not_pd)
    return L


# ----------------------------------------------------------------------------------------------------------------
# eigh / eig


def _eigh_fwd(A, *, lower):
    w, v = jnp.linalg.eigh(A, UPLO="L" if lower else "U", symmetrize_input=False)
    return w, v


def _divide_gaps(x, L):
    """``x_ij / (L_j - L_i)`` off the diagonal (0 on it, and where ``x`` is 0, as when no vector gradient)."""
    E = L[..., None, :] - L[..., :, None]
    eye = jnp.eye(L.shape[-1], dtype=bool)
    return jnp.where(eye | (x == 0), 0, x / jnp.where(eye, 1, E))


@_torch_vjp
def _eigh_vjp(g, A, out, lower):
    gL, gV = g
    L, V = out
    VhgV = _mm(_mH(V), gV)
    VhgV = 0.5 * (VhgV - _mH(VhgV))
    mid = _divide_gaps(VhgV, L.astype(V.dtype)) + _diag_embed(gL.astype(V.dtype))
    return _mm(_mm(V, mid), _mH(V))


_EIGH = defop("linalg_eigh", _eigh_fwd, vjp=_eigh_vjp, grad_name="LinalgEighBackward0")


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of Hermitian matrices, read from one triangle."""
    check_matrix(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return RESULTS["linalg_eigh"](*apply(_EIGH, (A,), lower=UPLO == "L"))


def eigvalsh(A, UPLO="L", *, out=None):
    return eigh(A, UPLO)[0]


def _eig_fwd(A):
    w, v = jnp.linalg.eig(A)
    return w, v


@_torch_vjp
def _eig_vjp(g, A, out):
    gL, gV = g
    L, V = out
    Vh = _mH(V)
    VhgV = _mm(Vh, gV)
    VhgV = VhgV - _mm(Vh, V * jnp.real(jnp.diagonal(VhgV, axis1=-2, axis2=-1))[..., None, :])
    mid = _divide_gaps(VhgV, jnp.conj(L)) + _diag_embed(gL)
    gA = jnp.linalg.solve(Vh, _mm(mid, Vh))
    return gA if jnp.iscomplexobj(A) else jnp.real(gA)


_EIG = defop("linalg_eig", _eig_fwd, vjp=_eig_vjp, grad_name="LinalgEigBackward0")


def eig(A, *, out=None):
    """Complex eigenvalues and unit-norm eigenvectors of general square matrices (computed on the CPU)."""
    check_matrix(A, "linalg.eig")
    dev = A.device
    if dev.type != "cpu":  # LAPACK's geev: run on the host, as XLA offers it there
        from .convert import move
        from .. import _device
        w, v = apply(_EIG, (move(A, _device.to_jax("cpu")),))
        back = _device.to_jax(dev)
        return RESULTS["linalg_eig"](move(w, back), move(v, back))
    return RESULTS["linalg_eig"](*apply(_EIG, (A,)))


def eigvals(A, *, out=None):
    return eig(A)[0]


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


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    check_matrix(A, "torch.linalg.lu_factor_ex", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = apply(_LU_FACTOR, (A,))
    if check_errors:
        raise_info(info, "torch.linalg.lu_factor_ex", lambda i: f"U[{i},{i}] is zero and using it on lu_solve would "
                   "result in a division by zero. If you still want to perform the factorization, consider calling "
                   "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return RESULTS["linalg_lu_factor_ex"](LU, piv, info)


def lu_factor(A, *, pivot=True, out=None):
    """``LU, pivots`` of ``A = P L U`` packed as LAPACK does (pivots 1-based, int32)."""
    check_matrix(A, "torch.linalg.lu_factor", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = apply(_LU_FACTOR, (A,))
    d = info._d
    if not (tracing.active() or isinstance(d, jax.core.Tracer)) and np.asarray(d).any():
        i = int(np.asarray(d).reshape(-1)[np.flatnonzero(np.asarray(d).reshape(-1))[0]])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on lu_solve would result in a "
                           "division by zero. If you still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return RESULTS["linalg_lu_factor"](LU, piv)


def lu(A, *, pivot=True, out=None):
    """``P, L, U`` with ``A = P L U`` (L unit lower triangular)."""
    check_matrix(A, "linalg.lu", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
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


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve with the factorization of :func:`lu_factor`."""
    check_matrix(LU, "linalg.lu_solve", arg="LU")
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


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``) reading only one triangle of ``A``."""
    check_matrix(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.scalar_type_name(A.dtype)} and B of type {_dtype.scalar_type_name(B.dtype)} "
                           "instead")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return apply(_TRI_SOLVE, (A, B), upper=bool(upper), left=bool(left), unit=bool(unitriangular))


# ----------------------------------------------------------------------------------------------------------------
# pinv, matrix_exp, cross, multi_dot


def _pinv_value(A, atol, rtol, hermitian):
    if hermitian:
        w, V = jnp.linalg.eigh(A)
        cut = jnp.maximum(atol, rtol * jnp.max(jnp.abs(w), -1, keepdims=True, initial=0.0))
        winv = jnp.where(jnp.abs(w) > cut, 1 / jnp.where(w == 0, 1, w), 0).astype(A.dtype)
        return _mm(V * winv[..., None, :], _mH(V))
    U, S, Vh = jnp.linalg.svd(A, full_matrices=False)
    cut = jnp.maximum(atol, rtol * jnp.max(S, -1, keepdims=True, initial=0.0))
    sinv = jnp.where(S > cut, 1 / jnp.where(S == 0, 1, S), 0).astype(A.dtype)
    return _mm(_mH(Vh) * sinv[..., None, :], _mH(U))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _pinv_core(A, atol, rtol, hermitian):
    return _pinv_value(A, atol, rtol, hermitian)


@_pinv_core.defjvp
def _pinv_jvp(atol, rtol, hermitian, primals, tangents):
    """d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+ (Golub & Pereyra): no derivative of
    the SVD itself, so repeated singular values are fine."""
    (A,), (dA,) = primals, tangents
    P = _pinv_value(A, atol, rtol, hermitian)
    m, n = A.shape[-2:]
    dAh, Ph = _mH(dA), _mH(P)
    t1 = -_mm(_mm(P, dA), P)
    t2 = _mm(_mm(_mm(P, Ph), dAh), jnp.eye(m, dtype=A.dtype) - _mm(A, P))
    t3 = _mm(_mm(jnp.eye(n, dtype=A.dtype) - _mm(P, A), dAh), _mm(Ph, P))
    return P, t1 + t2 + t3


def _pinv_fwd(A, *, atol, rtol, hermitian):
    return _pinv_core(A, atol, rtol, hermitian)


_PINV = defop("linalg_pinv", _pinv_fwd, grad_name="LinalgPinvBackward0")


def pinv_tolerances(A, atol, rtol, rcond=None):
    """PyTorch's defaults: rtol = eps * max(m, n) unless only a positive atol is given."""
    if rcond is not None:
        rtol = rcond
    atol = float(atol.item() if isinstance(atol, Tensor) else atol) if atol is not None else None
    rtol = float(rtol.item() if isinstance(rtol, Tensor) else rtol) if rtol is not None else None
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(np.finfo(A.dtype.to_real().np).eps) * max(
            A.shape[-2:])
    return (atol or 0.0), rtol


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None, out=None):
    """The Moore-Penrose pseudo-inverse; singular values at or below ``max(atol, rtol * max(S))`` are dropped."""
    check_matrix(A, "linalg.pinv", square=bool(hermitian))
    atol, rtol = pinv_tolerances(A, atol, rtol, rcond)
    return apply(_PINV, (A,), atol=atol, rtol=rtol, hermitian=bool(hermitian))


_EXPM = defop("linalg_matrix_exp", lambda A: jax.scipy.linalg.expm(A), grad_name="LinalgMatrixExpBackward0")


def matrix_exp(A):
    """The matrix exponential of each square matrix."""
    check_matrix(A, "linalg.matrix_exp")
    return apply(_EXPM, (A,))


_CROSS = defop("linalg_cross", lambda a, b, *, dim: jnp.cross(*jnp.broadcast_arrays(a, b), axis=dim),
               grad_name="LinalgCrossBackward0")


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (shapes broadcast, dims must agree in number)."""
    from .._tensor import wrap_dim
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(other.dtype)}")
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        from .linalg import broadcast_error
        raise broadcast_error(tuple(input.shape), tuple(other.shape)) from None
    return apply(_CROSS, (input, other), dim=d)


def _multi_dot_fwd(*xs):
    return jnp.linalg.multi_dot(xs, precision=_HI)


_MULTI_DOT = defop("linalg_multi_dot", _multi_dot_fwd, grad_name="ViewBackward0")


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (first/last may be vectors), multiplied in the cheapest order."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        where = "first" if i == 0 else "last" if i == len(ts) - 1 else None
        if where and t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.ndim}D")
        if not where and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype is not ts[0].dtype:
            from .elementwise import c10_name
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{c10_name(ts[0].dtype)} and tensor {i} {c10_name(t.dtype)}")
    for i in range(len(ts) - 1):
        a, b = ts[i], ts[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                               f"{list(b.shape)} cannot be multiplied")
    return apply(_MULTI_DOT, tuple(ts))


# ----------------------------------------------------------------------------------------------------------------
# matrix norms


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """``'fro'``, ``'nuc'``, and the induced norms ``1, -1, 2, -2, inf, -inf`` over the two dims ``dim``."""
    from . import convert, elementwise as E, reduce as R, shape as S
    from .._tensor import wrap_dim
    if dtype is not None:
        A = convert.to_dtype(A, dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if A.dtype.category < _FLOAT:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A.dtype)}")
    if not isinstance(dim, (tuple, list)):
        raise TypeError(f"linalg_matrix_norm() received an invalid combination of arguments - got (Tensor, "
                        f"dim={type(dim).__name__}), but expected one of:\n"
                        " * (Tensor input, Number ord, tuple of ints dim = {-2,-1}, bool keepdim = False, *, "
                        "torch.dtype dtype = None, Tensor out = None)\n"
                        " * (Tensor input, str ord = \"fro\", tuple of ints dim = {-2,-1}, bool keepdim = False, *, "
                        "torch.dtype dtype = None, Tensor out = None)\n")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return R.vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        sv = svdvals(S.movedim(A, (d0, d1), (-2, -1)))
        if ord == "nuc":
            res = R.sum(sv, -1)
        else:
            res = (R.amax if ord == 2 else R.amin)(sv, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                res = S.unsqueeze(res, d)
        return res
    if ord in (1, -1, float("inf"), float("-inf")):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        summed = R.sum(E.abs(A), sum_dim, keepdim)
        red = red_dim if keepdim or red_dim < sum_dim else red_dim - 1
        return (R.amax if ord > 0 else R.amin)(summed, red, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


# ----------------------------------------------------------------------------------------------------------------
# rank and least squares


def _rank_fwd(A, *, atol, rtol, hermitian):
    S = jnp.abs(jnp.linalg.eigvalsh(A)) if hermitian else jnp.linalg.svd(A, compute_uv=False)
    cut = jnp.maximum(atol, rtol * jnp.max(S, -1, keepdims=True, initial=0.0))
    return jnp.sum(S > cut, -1).astype(jnp.int64)


_RANK = defop("linalg_matrix_rank", _rank_fwd, differentiable=False)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (eigenvalue magnitudes when ``hermitian``) above
    ``max(atol, rtol * largest)``; ``tol`` is the old name of ``atol`` (with ``rtol = 0``)."""
    check_matrix(A, "linalg.matrix_rank", square=bool(hermitian))
    if tol is not None:
        atol, rtol = tol, (0.0 if rtol is None else rtol)
    atol, rtol = pinv_tolerances(A, atol, rtol)
    return apply(_RANK, (A,), atol=atol, rtol=rtol, hermitian=bool(hermitian))


def _lstsq_fwd(A, B, *, vector, rtol):
    if vector:
        B = B[..., None]
    A, B = _batch_broadcast(A, B)
    X = _mm(_pinv_core(A, 0.0, rtol, False), B)
    return X[..., 0] if vector else X


_LSTSQ = defop("linalg_lstsq", _lstsq_fwd, grad_name="LinalgLstsqBackward0")


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solutions of ``A X = B`` (minimum norm), with PyTorch's per-driver extra outputs: ``rank``
    (not for 'gels'), ``singular_values`` ('gelsd'/'gelss') and ``residuals`` (tall full-rank systems, not
    'gelsy')."""
    from . import elementwise as E, reduce as R, shape as S
    from .creation import zeros
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    check_matrix(A, "torch.linalg.lstsq", square=False, arg="input")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {_dtype.scalar_type_name(A.dtype)} and other's dtype "
                           f"{_dtype.scalar_type_name(B.dtype)}")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    rtol = float(rcond) if rcond is not None else float(np.finfo(A.dtype.to_real().np).eps) * max(m, n)
    X = apply(_LSTSQ, (A, B), vector=vector, rtol=rtol)
    real = A.dtype.to_real()
    empty = zeros(0, dtype=real, device=A.device)
    rank = zeros(0, dtype=_dtype.int64, device=A.device) if driver == "gels" else \
        apply(_RANK, (A,), atol=0.0, rtol=rtol, hermitian=False)
    sv = svdvals(A.detach()) if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if X.requires_grad:  # torch's empty residuals still hang off the solution's backward node
        residuals = S.narrow(S.flatten(E.abs(X) if X.dtype.is_complex else X), 0, 0, 0)
    if m > n and driver != "gelsy" and (driver == "gels" or bool((np.asarray(rank._d) == n).all())):
        from .linalg import matmul
        r = E.sub(matmul(A, S.unsqueeze(X, -1) if vector else X), S.unsqueeze(B, -1) if vector else B)
        residuals = R.sum(E.mul(E.abs(r), E.abs(r)), -2)
        residuals = S.squeeze(residuals, -1) if vector else residuals
    return RESULTS["linalg_lstsq"](X, residuals, rank, sv)
