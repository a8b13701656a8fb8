"""Matrix decompositions behind ``torchish.linalg`` (svd/svdvals, qr, cholesky, eigh/eig) and what the other
linear-algebra op modules share: :class:`LinAlgError`, the ``torch.return_types`` results, the argument checks and
the conventions below. The rest of the family: ``solve`` (inv, solve, det, lu, solve_triangular), ``lstsq`` (pinv,
matrix_rank, lstsq), ``matfuncs`` (matrix_exp, matrix_norm, cross, multi_dot).

Each is one registry op. Where PyTorch's backward differs from what ``jax.vjp`` would derive (eigh's and eig's gauge
handling, det at singular matrices, cholesky's symmetric gradient, the narrowed full-matrices SVD) the VJP is
PyTorch's formula, in PyTorch's (conjugate Wirtinger) convention for complex inputs, which is the registry's: a custom
VJP receives and returns PyTorch's gradients (``opnode`` conjugates JAX's cotangents around it inside a trace).

Failures PyTorch reports from LAPACK's ``info`` (a singular matrix in ``inv``/``solve``, a matrix that is not
positive-definite in ``cholesky``) are computed in the same kernel and raised as :class:`LinAlgError` with PyTorch's
message once the value is concrete (never inside a trace, like PyTorch's ``*_ex`` variants).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _precision
from .._tensor import Tensor
from . import elementwise as _elementwise
from .elementwise import need_bool, require_str, structured_out
from . import tracing
from .reduce import _return_type
from . import registry as _registry
from .registry import apply, defop

_FLOAT = _dtype._FLOAT


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a linear-algebra routine failed on its input (singular, not positive-definite).
    A ``RuntimeError``, as in PyTorch, where the class is ``torch._C._LinAlgError``: its name (``type(e).__name__``,
    ``repr(e)``) is ``_LinAlgError`` there and here."""


_LinAlgError.__module__ = "torchish._C"  # where pickle finds it (torch._C in PyTorch)
LinAlgError = _LinAlgError


RESULTS = {name: _return_type(name, fields) for name, fields in (
    ("linalg_inv_ex", ("inverse", "info")), ("linalg_solve_ex", ("result", "info")),
    ("linalg_slogdet", ("sign", "logabsdet")), ("slogdet", ("sign", "logabsdet")),
    ("linalg_svd", ("U", "S", "Vh")), ("svd", ("U", "S", "V")), ("linalg_qr", ("Q", "R")), ("qr", ("Q", "R")),
    ("linalg_cholesky_ex", ("L", "info")), ("linalg_eigh", ("eigenvalues", "eigenvectors")),
    ("linalg_eig", ("eigenvalues", "eigenvectors")), ("linalg_lu_factor", ("LU", "pivots")),
    ("linalg_lu_factor_ex", ("LU", "pivots", "info")), ("_lu_with_info", ("LU", "pivots", "info")),
    ("linalg_lu", ("P", "L", "U")),
    ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values")),
    ("triangular_solve", ("solution", "cloned_coefficient")))}


# ----------------------------------------------------------------------------------------------------------------
# helpers


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _mH(x):
    return jnp.conj(_mT(x))


_mm = _precision.mm


def _diag_embed(d):
    return d[..., :, None] * jnp.eye(d.shape[-1], dtype=d.dtype)


def _conj_pull(pull, g):
    """A ``jax.vjp`` pullback called with and returning PyTorch's complex gradients (the conjugates of JAX's
    cotangents); for real dtypes the conjugates are no-ops."""
    return jax.tree.map(jnp.conj, pull(jax.tree.map(jnp.conj, g)))


def autocast_inputs(name, *tensors):
    """``tensors`` as autocast casts them for the op ``name`` (PyTorch runs most decompositions in float32 under
    CPU autocast); unchanged when autocast is off. Front-ends call it before their dtype checks."""
    hook = _registry.autocast_hook
    return tensors if hook is None else hook(name, tensors)


def check_matrix(A, fname, square=True, arg="A", *, kernel=None, int_kernel=False, half=False):
    """PyTorch's argument checks shared by the linalg functions.

    ``kernel``: the LAPACK kernel PyTorch dispatches to without checking the dtype first, so that float16/bfloat16
    (and, with ``int_kernel``, integer and bool) inputs raise its NotImplementedError (``"lu_cpu" not implemented
    for 'Half'``) rather than the front end's RuntimeError (even for an empty input, which PyTorch's kernel returns
    without computing: a known gap); ``half``: float16/bfloat16 are supported."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {arg} must have at least 2 dimensions.")
    if A.dtype.category < _FLOAT:
        if int_kernel:
            raise _elementwise.not_implemented(kernel, A.dtype)
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A.dtype)}")
    if A.dtype in (_dtype.float16, _dtype.bfloat16) and not half:
        if kernel is not None:
            raise _elementwise.not_implemented(kernel, A.dtype)
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {_dtype.scalar_type_name(A.dtype)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: {arg} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def raise_info(info, fname, message):
    """Raise LinAlgError for the first nonzero entry of a concrete ``info`` (one per batch element); a traced one is
    checked before each run of torchish.compile's program (``tracing.defer_check``: the batch element and its info
    ride as one number, ``k << 31 | info``)."""
    d = info._d if isinstance(info, Tensor) else info
    if tracing.active() or isinstance(d, jax.core.Tracer):
        flat = jnp.ravel(d).astype(jnp.int64)
        if jnp.ndim(d):
            tracing.defer_check(flat != 0, (jnp.arange(flat.size, dtype=jnp.int64) << 31) | flat, LinAlgError,
                                lambda b: f"{fname}: (Batch element {b >> 31}): {message(b & 0x7FFFFFFF)}")
        else:
            tracing.defer_check(flat != 0, flat, LinAlgError, lambda b: f"{fname}: {message(b)}")
        return
    arr = np.asarray(d)
    if not arr.any():
        return
    flat = arr.reshape(-1)
    k = int(np.flatnonzero(flat)[0])
    prefix = f"(Batch element {k}): " if arr.ndim else ""
    raise LinAlgError(f"{fname}: {prefix}{message(int(flat[k]))}")


def _batch_broadcast(a, b, a_core=2, b_core=2):
    batch = jnp.broadcast_shapes(a.shape[:a.ndim - a_core], b.shape[:b.ndim - b_core])
    return (jnp.broadcast_to(a, batch + a.shape[a.ndim - a_core:]),
            jnp.broadcast_to(b, batch + b.shape[b.ndim - b_core:]))


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
    (full_g,) = _conj_pull(pull, (gU, gS, gVh))
    no_vectors = jnp.logical_and(jnp.all(gU == 0), jnp.all(gVh == 0))
    return jnp.where(no_vectors, only_s, full_g)


_SVD = defop("linalg_svd", _svd_fwd, vjp=_svd_vjp, grad_name="LinalgSvdBackward0")
_SVDVALS = defop("linalg_svdvals", lambda A: jnp.linalg.svd(A, compute_uv=False), grad_name="LinalgSvdBackward0")


def _driver_type(driver, name):
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"{name}(): argument 'driver' must be str, not {type(driver).__name__}")


def _driver_device(driver, A):
    """PyTorch takes ``driver=`` only for CUDA inputs (cuSOLVER's gesvd/gesvdj/gesvda; XLA picks its own algorithm
    there): a CPU input refuses it."""
    if driver is not None and A.device.type != "cuda":
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


@structured_out
def svd(A, full_matrices=True, *, driver=None):
    """``U, S, Vh`` with ``A = U diag(S) Vh``, singular values in descending order."""
    need_bool("linalg_svd", full_matrices, "full_matrices", 2)
    _driver_type(driver, "linalg_svd")
    A, = autocast_inputs("linalg_svd", A)
    check_matrix(A, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    _driver_device(driver, A)
    return RESULTS["linalg_svd"](*apply(_SVD, (A,), full=bool(full_matrices)))


@structured_out
def svdvals(A, *, driver=None):
    _driver_type(driver, "linalg_svdvals")
    A, = autocast_inputs("linalg_svdvals", A)
    check_matrix(A, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    _driver_device(driver, A)
    return apply(_SVDVALS, (A,))


# ----------------------------------------------------------------------------------------------------------------
# qr


@jax.custom_jvp
def unsigned_zeros(A):
    """``A`` with its negative zeros (each part of a complex value) made positive, for a LAPACK Householder QR.
    ``larfg`` takes the reflector's sign from ``alpha``; PyTorch's LAPACK (MKL) reads -0.0 as positive (R's first
    diagonal element of ``[[-0., -1.25], [-2.5, -3.]]`` is -2.8), jaxlib's as negative (+2.8, every sign of that Q
    column and R row flipped). The derivative is the identity."""
    if jnp.iscomplexobj(A):
        re, im = jnp.real(A), jnp.imag(A)
        return jax.lax.complex(jnp.where(re == 0, jnp.zeros_like(re), re), jnp.where(im == 0, jnp.zeros_like(im), im))
    return jnp.where(A == 0, jnp.zeros_like(A), A)


unsigned_zeros.defjvp(lambda primals, tangents: (unsigned_zeros(primals[0]), tangents[0]))


def _qr_reduced(A):
    """Reduced QR; a wide matrix is factored as its leading square block (Q from it, the rest of R as Q^H A)."""
    A = unsigned_zeros(A)
    m, n = A.shape[-2:]
    if m >= n:
        q, r = jnp.linalg.qr(A)
        return q, r
    q, rx = jnp.linalg.qr(A[..., :m])
    return q, jnp.concatenate([rx, _mm(_mH(q), A[..., m:])], -1)


def _qr_fwd(A, *, mode):
    A = unsigned_zeros(A)
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
    return _conj_pull(pull, tuple(g))


_QR = defop("linalg_qr", _qr_fwd, vjp=_qr_vjp, grad_name="LinalgQrBackward0")


@structured_out
def qr(A, mode="reduced"):
    """``Q, R`` with ``A = Q R``; ``mode`` is ``'reduced'``, ``'complete'`` or ``'r'`` (Q left empty)."""
    require_str(mode, "linalg_qr", "mode", 2)
    A, = autocast_inputs("linalg_qr", A)
    check_matrix(A, "linalg.qr", square=False, kernel="geqrf_cpu")
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
    info = jax.lax.cond(failed.any(), _failed_order, lambda a: jnp.zeros(a.shape[:-2], jnp.int32), src)
    return (_mH(L) if upper else L), jnp.where(failed, info, 0).astype(jnp.int32)


def _failed_order(a):
    """LAPACK's info in the kernel (a traced program cannot ask numpy): the order of the first pivot, the diagonal
    of the Schur complement left by eliminating the columns before it, that is not positive (or is NaN). Called
    only where the factorization failed: when this elimination's rounding finds every pivot positive (a pivot at
    the rounding level, which LAPACK's order of operations made non-positive), the order of the smallest pivot,
    never 0 (PyTorch never reports success for a failed factor)."""
    n = a.shape[-1]
    if n == 0:  # fori_loop traces its body even for no iterations, and an empty matrix has no S[j, j]
        return jnp.zeros(a.shape[:-2], jnp.int32)
    low = jnp.tril(a)
    herm = low + _mH(jnp.tril(a, -1))
    batch = a.shape[:-2]

    def body(j, carry):
        S, info, smallest, at = carry
        d = jnp.real(S[..., j, j])
        bad = ~(d > 0)
        info = jnp.where((info == 0) & bad, j + 1, info)
        at = jnp.where(d < smallest, j + 1, at)
        smallest = jnp.minimum(smallest, d)
        col = S[..., :, j] / jnp.sqrt(jnp.where(bad, 1, d)).astype(S.dtype)[..., None]
        col = jnp.where(jnp.arange(n) > j, col, 0)
        return S - col[..., :, None] * jnp.conj(col[..., None, :]), info, smallest, at
    smallest = jnp.full(batch, jnp.inf, jnp.real(herm).dtype)
    init = (herm, jnp.zeros(batch, jnp.int32), smallest, jnp.full(batch, n, jnp.int32))
    _, info, _, at = jax.lax.fori_loop(0, n, body, init)
    return jnp.where(info > 0, info, at)


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
    """The order of the first leading minor that is not positive-definite (numpy, on the error path only); 0 when
    numpy (which factors float32 in float64) finds none."""
    a = np.asarray(A)
    a = np.conj(np.swapaxes(a, -1, -2)) if upper else a
    low = np.tril(a)
    herm = low + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))
    for k in range(1, herm.shape[-1] + 1):
        try:
            np.linalg.cholesky(herm[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _chol_info(A, info, upper):
    """Replace the in-kernel failure flags with LAPACK's info (the failing minor's order) when concrete."""
    d = info._d
    if tracing.active() or isinstance(d, jax.core.Tracer) or not np.asarray(d).any():
        return info
    flags = np.asarray(d)
    mats = np.asarray(A._d).reshape((-1,) + tuple(A.shape[-2:]))
    exact = np.array([(_failed_minor(m, upper) or f) if f else 0 for m, f in zip(mats, flags.reshape(-1))], np.int32)
    return Tensor._make(jnp.asarray(exact.reshape(flags.shape)))


def _not_pd(i):
    return (f"The factorization could not be completed because the input is not positive-definite (the leading minor "
            f"of order {i} is not positive-definite).")


@structured_out
def cholesky_ex(A, *, upper=False, check_errors=False):
    A, = autocast_inputs("linalg_cholesky_ex", A)
    check_matrix(A, "linalg.cholesky", kernel="cholesky_cpu")
    L, info = apply(_CHOL, (A,), upper=bool(upper))
    info = _chol_info(A, info, upper)
    if check_errors:
        raise_info(info, "linalg.cholesky_ex", _not_pd)
    return RESULTS["linalg_cholesky_ex"](L, info)


@structured_out
def cholesky(A, *, upper=False, _legacy=False):
    """The Cholesky factor ``L`` (``A = L L^H``), or ``U = L^H`` with ``upper=True``."""
    fname = "cholesky" if _legacy else "linalg.cholesky"
    A, = autocast_inputs("linalg_cholesky_ex", A)
    check_matrix(A, fname, kernel="cholesky_cpu")
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


def _eigh_vjp(g, A, out, lower):
    gL, gV = g
    L, V = out
    VhgV = _mm(_mH(V), gV)
    VhgV = 0.5 * (VhgV - _mH(VhgV))
    mid = _divide_gaps(VhgV, L.astype(V.dtype)) + _diag_embed(gL.astype(V.dtype))
    return _mm(_mm(V, mid), _mH(V))


_EIGH = defop("linalg_eigh", _eigh_fwd, vjp=_eigh_vjp, grad_name="LinalgEighBackward0")


@structured_out
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of Hermitian matrices, read from one triangle."""
    require_str(UPLO, "linalg_eigh", "UPLO", 2)
    A, = autocast_inputs("linalg_eigh", A)
    check_matrix(A, "linalg.eigh", kernel="linalg_eigh_cpu", int_kernel=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return RESULTS["linalg_eigh"](*apply(_EIGH, (A,), lower=UPLO == "L"))


@structured_out
def eigvalsh(A, UPLO="L"):
    return eigh(A, UPLO)[0]


def _eig_fwd(A):
    w, v = jnp.linalg.eig(A)
    return w, v


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


@structured_out
def eig(A):
    """Complex eigenvalues and unit-norm eigenvectors of general square matrices (computed on the CPU)."""
    A, = autocast_inputs("linalg_eig", A)
    check_matrix(A, "linalg.eig", kernel="linalg_eig_out_cpu")
    dev = A.device
    if dev.type != "cpu":  # LAPACK's geev: run on the host, as XLA offers it there
        from .convert import move
        from .. import _device
        w, v = apply(_EIG, (move(A, _device.to_jax("cpu")),))
        back = _device.to_jax(dev)
        vb = move(v, back)
        vb._layout = v._layout  # (LAPACK's column-major vectors)
        return RESULTS["linalg_eig"](move(w, back), vb)
    return RESULTS["linalg_eig"](*apply(_EIG, (A,)))


@structured_out
def eigvals(A):
    return eig(A)[0]
