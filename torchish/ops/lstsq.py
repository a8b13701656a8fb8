"""Pseudo-inverse, numerical rank and least squares: pinv, matrix_rank and lstsq, each dropping the singular values
(eigenvalue magnitudes when ``hermitian``) at or below ``max(atol, rtol * largest)``."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from ..autograd.graph import node_class
from .._tensor import Tensor
from .decomp import RESULTS, _batch_broadcast, _mH, _mm, autocast_inputs, check_matrix, svdvals
from .elementwise import linalg_castable_out, parser_worded, require_tensor
from .out_layout import column_major
from .registry import apply, defop


# ----------------------------------------------------------------------------------------------------------------
# pinv


def _cut(S, tols, atol, rtol):
    """``max(atol, rtol * largest)`` per matrix, S its singular values (eigenvalue magnitudes): Python floats, or
    (``tols``, PyTorch's Tensor overload) the tolerance arrays, broadcast against the batch as ``tol.unsqueeze(-1)``
    (the result then takes their batch shape too)."""
    if tols:
        atol, rtol = (t[..., None] for t in tols)
    return jnp.maximum(atol, rtol * jnp.max(S, -1, keepdims=True, initial=0.0))


def _pinv_value(A, tols, atol, rtol, hermitian):
    if hermitian:
        w, V = jnp.linalg.eigh(A, symmetrize_input=False)  # (PyTorch reads the lower triangle only)
        cut = _cut(jnp.abs(w), tols, atol, rtol)
        winv = jnp.where(jnp.abs(w) > cut, 1 / jnp.where(w == 0, 1, w), 0).astype(A.dtype)
        return _mm(V * winv[..., None, :], _mH(V))
    U, S, Vh = jnp.linalg.svd(A, full_matrices=False)
    cut = _cut(S, tols, atol, rtol)
    sinv = jnp.where(S > cut, 1 / jnp.where(S == 0, 1, S), 0).astype(A.dtype)
    return _mm(_mH(Vh) * sinv[..., None, :], _mH(U))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3, 4))
def _pinv_core(A, tols, atol, rtol, hermitian):
    return _pinv_value(A, tols, atol, rtol, hermitian)


@_pinv_core.defjvp
def _pinv_jvp(atol, rtol, hermitian, primals, tangents):
    """d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+ (Golub & Pereyra): no derivative of
    the SVD itself, so repeated singular values are fine."""
    (A, tols), (dA, _) = primals, tangents  # (the tolerances are not differentiated)
    P = _pinv_value(A, tols, atol, rtol, hermitian)
    m, n = A.shape[-2:]
    dAh, Ph = _mH(dA), _mH(P)
    t1 = -_mm(_mm(P, dA), P)
    t2 = _mm(_mm(_mm(P, Ph), dAh), jnp.eye(m, dtype=A.dtype) - _mm(A, P))
    t3 = _mm(_mm(jnp.eye(n, dtype=A.dtype) - _mm(P, A), dAh), _mm(Ph, P))
    return P, t1 + t2 + t3


def _pinv_fwd(A, *tols, atol, rtol, hermitian):
    return _pinv_core(A, tols, atol, rtol, hermitian)


_PINV = defop("linalg_pinv", _pinv_fwd, grad_name="LinalgPinvBackward0")


def pinv_tolerances(A, atol, rtol, rcond=None):
    """PyTorch's defaults: rtol = eps * max(m, n) unless only a positive atol is given. ``(atol, rtol, ())`` as
    Python floats, or ``(0.0, 0.0, (atol, rtol))`` as Tensors where either is a Tensor of one or more dimensions
    (PyTorch's Tensor overload, per matrix of the batch; a missing rtol defaults per element of atol)."""
    from .from_data import tensor
    from .ternary import where
    if rcond is not None:
        rtol = rcond
    default = float(np.finfo(A.dtype.to_real().np).eps) * max(A.shape[-2:])  # (rtol's, where it is not given)
    if any(isinstance(t, Tensor) and t.ndim > 0 for t in (atol, rtol)):
        f64 = _dtype.float64
        if rtol is None:
            rtol = where(atol > 0, tensor(0.0, dtype=f64), tensor(default, dtype=f64))
        tols = tuple(t if isinstance(t, Tensor) else tensor(0.0 if t is None else float(t), dtype=f64)
                     for t in (atol, rtol))
        return 0.0, 0.0, tuple(t.detach() for t in tols)
    atol = float(atol.item() if isinstance(atol, Tensor) else atol) if atol is not None else None
    rtol = float(rtol.item() if isinstance(rtol, Tensor) else rtol) if rtol is not None else None
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else default
    return (atol or 0.0), rtol, ()


def _check_tolerance_overload(name, **given):
    """PyTorch's overloads take both tolerances as Tensors or both as floats (a 0-dim Tensor passes as a float), and
    matrix_rank's ``tol`` alone: another combination is its argument parser's TypeError."""
    given = {k: v for k, v in given.items() if v is not None}
    tensors = [isinstance(v, Tensor) and v.ndim > 0 for v in given.values()]
    if ("tol" in given and len(given) > 1) or (any(tensors) and not all(tensors)):
        got = ", ".join(f"{k}={type(v).__name__}" for k, v in given.items())
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {got}), but expected "
                        "one of:\n * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
                        "Tensor out = None)\n * (Tensor input, *, float atol = None, float rtol = None, bool hermitian "
                        "= False, Tensor out = None)")


_PINV_DTYPES = (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128)


@linalg_castable_out("linalg.pinv")
@functools.partial(parser_worded, name="linalg_pinv")  # (a tolerance of another type: the parser's TypeError)
def pinv(A, *args, atol=None, rtol=None, hermitian=False, rcond=None):
    """The Moore-Penrose pseudo-inverse; singular values at or below ``max(atol, rtol * max(S))`` are dropped.
    PyTorch's older overload ``pinv(A, rcond, hermitian=False)`` takes ``rcond`` (the rtol) positionally."""
    if args:
        if len(args) > 2 or atol is not None or rtol is not None or rcond is not None:
            raise TypeError(f"linalg_pinv() received an invalid combination of arguments - got (Tensor, "
                            f"{', '.join(type(a).__name__ for a in args)}, ...), but expected one of: (Tensor input, "
                            "*, Tensor atol, Tensor rtol, bool hermitian), (Tensor input, float rcond, bool "
                            "hermitian), (Tensor input, Tensor rcond, bool hermitian)")
        rcond = args[0]
        if len(args) == 2:
            hermitian = args[1]
    _check_tolerance_overload("linalg_pinv", atol=atol, rtol=rtol)
    A, = autocast_inputs("linalg_pinv", A)
    if isinstance(A, Tensor) and (A.dim() < 2 or A.dtype not in _PINV_DTYPES):  # (PyTorch's dispatch check)
        raise RuntimeError(f"linalg.pinv({_dtype.scalar_type_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble types")
    check_matrix(A, "linalg.pinv", square=bool(hermitian))
    atol, rtol, tols = pinv_tolerances(A, atol, rtol, rcond)
    return apply(_PINV, (A, *tols), atol=atol, rtol=rtol, hermitian=bool(hermitian))


# ----------------------------------------------------------------------------------------------------------------
# rank and least squares


def _rank_fwd(A, *tols, atol, rtol, hermitian):
    S = jnp.abs(jnp.linalg.eigvalsh(A, symmetrize_input=False)) if hermitian else jnp.linalg.svd(A, compute_uv=False)
    cut = _cut(S, tols, atol, rtol)
    return jnp.sum(S > cut, -1).astype(jnp.int64)


_RANK = defop("linalg_matrix_rank", _rank_fwd, differentiable=False)


@linalg_castable_out("torch.linalg.matrix_rank")
@functools.partial(parser_worded, name="linalg_matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (eigenvalue magnitudes when ``hermitian``) above
    ``max(atol, rtol * largest)``; ``tol`` is the old name of ``atol`` (with ``rtol = 0``)."""
    _check_tolerance_overload("linalg_matrix_rank", tol=tol, atol=atol, rtol=rtol)
    A, = autocast_inputs("linalg_matrix_rank", A)
    check_matrix(A, "linalg.matrix_rank", square=bool(hermitian))
    if tol is not None:
        atol, rtol = tol, (0.0 if rtol is None else rtol)
    atol, rtol, tols = pinv_tolerances(A, atol, rtol)
    return apply(_RANK, (A, *tols), atol=atol, rtol=rtol, hermitian=bool(hermitian))


def _lstsq_fwd(A, B, *, vector, rtol):
    if vector:
        B = B[..., None]
    A, B = _batch_broadcast(A, B)
    X = _mm(_pinv_core(A, (), 0.0, rtol, False), B)
    return X[..., 0] if vector else X


_LSTSQ = defop("linalg_lstsq", _lstsq_fwd, grad_name="LinalgLstsqBackward0")


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solutions of ``A X = B`` (minimum norm), with PyTorch's per-driver extra outputs: ``rank``
    (not for 'gels'), ``singular_values`` ('gelsd'/'gelss') and ``residuals`` (tall full-rank systems, not
    'gelsy')."""
    from . import arith, reduce as R, shape as S, slicing, unary
    from .creation import zeros
    require_tensor(A, "linalg_lstsq")
    require_tensor(B, "linalg_lstsq", 2, "b")
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    A, B = autocast_inputs("linalg_lstsq", A, B)
    check_matrix(A, "torch.linalg.lstsq", square=False, arg="input")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {_dtype.scalar_type_name(A.dtype)} and other's dtype "
                           f"{_dtype.scalar_type_name(B.dtype)}")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if not 0 <= A.ndim - B.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                           "other.dim()) <= 1")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})")
    m, n = A.shape[-2:]
    rtol = float(rcond) if rcond is not None else float(np.finfo(A.dtype.to_real().np).eps) * max(m, n)
    X = apply(_LSTSQ, (A, B), vector=vector, rtol=rtol)
    column_major(X, rows=max(m, n), vector=vector)  # (LAPACK solves in place in B's buffer of max(m, n) rows)
    real = A.dtype.to_real()
    empty = zeros(0, dtype=real, device=A.device)
    rank = zeros(0, dtype=_dtype.int64, device=A.device) if driver == "gels" else \
        apply(_RANK, (A,), atol=0.0, rtol=rtol, hermitian=False)
    sv = svdvals(A.detach()) if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if X.requires_grad:  # torch's empty residuals still hang off the solution's backward node
        residuals = slicing.narrow(S.flatten(unary.abs(X) if X.dtype.is_complex else X), 0, 0, 0)
    if m > n and driver != "gelsy" and (driver == "gels" or bool((np.asarray(rank._d) == n).all())):
        from .linalg import matmul
        r = arith.sub(matmul(A, S.unsqueeze(X, -1) if vector else X), S.unsqueeze(B, -1) if vector else B)
        residuals = R.sum(arith.mul(unary.abs(r), unary.abs(r)), -2)  # (a vector's too: one column of them)
    return RESULTS["linalg_lstsq"](X, _shown_as_lstsq(residuals), rank, sv)


def _shown_as_lstsq(residuals):
    """The residuals are an output of PyTorch's LinalgLstsqBackward0 node: the top node of torchish's composite
    (the residuals computed from the solution) is shown under that name; its gradients are the composite's."""
    node = residuals._gfn
    if node is not None:
        node.__class__ = node_class(type(node).__base__, "LinalgLstsqBackward0")
    return residuals
