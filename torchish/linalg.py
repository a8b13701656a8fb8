"""``torchish.linalg``: PyTorch's ``torch.linalg`` namespace, plus the older top-level spellings (``torch.det``,
``torch.svd`` returning ``V``, ``torch.cholesky(upper=)``...) and their Tensor methods.

The decompositions and solvers are registry ops (``torchish.ops.decomp``, ``solve``, ``lstsq``, ``matfuncs``); the
functions here compose them.

Example:
    >>> import torchish as torch
    >>> A = torch.tensor([[4., 1.], [1., 3.]])
    >>> torch.linalg.solve(A, torch.tensor([1., 2.]))
    tensor([0.0909, 0.6364])
"""
from __future__ import annotations

import math
import numbers

from ._global_flags import warn_once
from . import _dtype
from ._tensor import Tensor
from .autograd.grad_mode import STATE
from .ops import arith as _A, broadcast as _B, copying as _C, diag as _D, reduce as _R, reorder as _O, shape as _S
from .ops import slicing as _SL, stats as _ST, unary as _U
from .ops.elementwise import (_out, exact_out, linalg_castable_out, linalg_out, out_structured, require_tensor,
                              structured_out)
from .ops.decomp import (LinAlgError, RESULTS as _RESULTS, check_matrix as _check_matrix, cholesky_ex, eig, eigh,
                         eigvals, eigvalsh, qr, svd, svdvals)
from .ops.decomp import autocast_inputs as _autocast_inputs, cholesky as _cholesky
from .ops.householder import householder_product, orgqr as _orgqr
from .ops.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.lstsq import lstsq, matrix_rank, pinv
from .ops.matfuncs import cross, matrix_exp, matrix_norm, multi_dot
from .ops.solve import (det, inv, inv_ex, lu, lu_factor, lu_factor_ex, lu_solve, slogdet, solve, solve_ex,
                        solve_triangular)
from .ops.solve import logdet as _logdet
from .ops.linalg import matmul
from .ops import registry as _registry
from ._aliases import contiguous_format as _contiguous_format
from .ops import as_method
from .ops.registry import apply, defop

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
           "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


@structured_out
def cholesky(A, *, upper=False):
    """The Cholesky factor ``L`` of Hermitian positive-definite matrices (``A = L L^H``); ``upper=True`` gives
    ``L^H`` computed from the upper triangle."""
    return _cholesky(A, upper=upper)


@structured_out
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements by default); ``inf``/``-inf``: max/min of ``|x|``."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    return _ST.vector_norm(x, ord, dim, keepdim, dtype=dtype)


@exact_out("linalg.norm expected out tensor dtype {expected} but got: {out}")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (1 dim, or a flattened tensor) or a matrix norm (2 dims, or a 2-D tensor with ``ord``)."""
    require_tensor(A, "linalg_norm")
    if isinstance(ord, str):  # 'fro' / 'nuc': always a matrix norm, over dim (default the first two dims)
        if dim is not None:
            dims = (dim,) if isinstance(dim, int) else tuple(dim)
            if len(dims) not in (1, 2):
                raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
        elif A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.ndim}D.")
        return matrix_norm(A, ord, (0, 1) if dim is None else dims, keepdim, dtype=dtype)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.")


@structured_out
def cond(A, p=None):
    """The condition number ``norm(A, p) * norm(inv(A), p)``; for ``p`` in (None, 2, -2) the ratio of extreme
    singular values. Singular matrices give ``inf``, empty ones 0."""
    require_tensor(A, "linalg_cond")
    if _registry.autocast_hook is not None:  # (on CPU autocast's float32 list, cast before the dtype checks)
        A, = _registry.autocast_hook("linalg_cond", (A,))
    if isinstance(p, str):  # PyTorch checks the shape first, then the order
        _check_matrix(A, f"linalg.cond(ord={p})")
    elif isinstance(A, Tensor) and A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.numel() == 0:  # (NumPy defines no condition number for empty matrices: PyTorch's is 0)
        from .ops.creation import zeros
        return zeros(tuple(A.shape[:-2]), dtype=A.dtype.to_real(), device=A.device)
    if p in (None, 2, -2):  # PyTorch's graph: the extreme singular values narrowed, divided, squeezed
        _check_matrix(A, "linalg.svd", square=False)  # (the dtype check of PyTorch's svdvals)
        s = svdvals(A)
        hi, lo = _SL.narrow(s, -1, 0, 1), _SL.narrow(s, -1, -1, 1)
        return _S.squeeze(_A.div(lo, hi) if p == -2 else _A.div(hi, lo), -1)
    _check_matrix(A, f"linalg.cond(ord={p})")
    if p == "nuc":  # PyTorch's: the definition, sum(s) * sum(1 / s) (its nuclear norm refuses infinities)
        s = svdvals(A)
        return _A.mul(_R.sum(s, -1), _R.sum(_U.reciprocal(s), -1))
    # PyTorch's: a singular matrix's inverse filled with inf, and 0 * inf (a zero norm) read as inf. (Its fill is in
    # place, on the inverse inv_ex saved for its backward: PyTorch's backward raises, as torchish's does.)
    inverse, info = inv_ex(A)
    inverse.masked_fill_(_S.unsqueeze(_S.unsqueeze(info, -1), -1) > 0, math.inf)
    return _U.nan_to_num(_A.mul(matrix_norm(A, p), matrix_norm(inverse, p)), math.inf, math.inf, -math.inf)


_COND_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


_EYE_LIKE = defop("matrix_power_zero", lambda a: _eye_like(a), grad_name="CopyBackwards")


def _eye_like(a):
    import jax.numpy as jnp
    return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)


def matrix_power(A, n, *, out=None):
    """``A`` multiplied by itself ``n`` times (``n = 0``: identity; ``n < 0``: powers of the inverse), by repeated
    squaring as PyTorch does. ``out=`` takes any dtype the result safely casts to for ``n`` = 0 or 1 (PyTorch copies
    the identity or ``A``), the result's own dtype otherwise (its last product is a matmul into ``out``)."""
    res = _matrix_power(A, n)
    if out is None or n in (0, 1) or isinstance(out, Tensor) and not _dtype.can_cast(res.dtype, out.dtype):
        return linalg_out(res, out, "matrix_power")  # (raises for an out the result does not safely cast to)
    return out_structured(res, out, "matrix_power")


def _matrix_power(A, n):
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):  # (numpy integers are ints to PyTorch's parser)
        name = type(n).__name__ if type(n).__module__ == "builtins" else f"{type(n).__module__}.{type(n).__name__}"
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {name}")
    n = int(n)
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {A.shape[-2]} "
                           f"by {A.shape[-1]} matrices")
    if n == 0:
        if A.requires_grad and STATE.grad_enabled:  # ATen: A.clone(contiguous).copy_(eye): CopyBackwards over CloneBackward0
            return _C.clone(A, memory_format=_contiguous_format).copy_(apply(_EYE_LIKE, (A.detach(),)))
        return apply(_EYE_LIKE, (A,))
    if n == -1:  # PyTorch returns the inverse itself (its node saves it), not a copy
        return inv(A)
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return _C.clone(A, memory_format=_contiguous_format)
    if n == 3:  # (ATen's shortcut: (A @ A) @ A)
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n & 1, n >> 1
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@structured_out
def vecdot(x, y, *, dim=-1):
    """``sum(conj(x) * y, dim)`` with broadcasting."""
    require_tensor(x, "linalg_vecdot", 1, "x")
    require_tensor(y, "linalg_vecdot", 2, "y")
    if _registry.autocast_hook is not None:  # autocast casts before the dtype checks
        x, y = _registry.autocast_hook("linalg_vecdot", (x, y))
    for name, t in (("x", x), ("y", y)):
        if t.dtype.category < _dtype._FLOAT:
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                               f"{_dtype.scalar_type_name(t.dtype)}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_dtype.scalar_type_name(x.dtype)} and y of type {_dtype.scalar_type_name(y.dtype)} "
                           "instead")
    if x.ndim == 1 and y.ndim == 1 and x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to have "
                           f"the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements respectively")
    if x.ndim == 1 and y.ndim == 1:  # PyTorch's vecdot of two vectors is vdot (VdotBackward0), whatever dim says
        from .ops.linalg import vdot
        return vdot(x, y)
    if x.is_complex():
        x = _U.conj_physical(x)
    return _R.sum(_A.mul(x, y), dim)


def vander(x, *, N=None):
    """The Vandermonde matrix of the last dimension: ``x ** 0, x ** 1, ..., x ** (N - 1)`` stacked on a new last
    dim (increasing powers, unlike ``torch.vander``); integer inputs give int64 results, as ``cumprod`` does."""
    if x.dtype in (_dtype.bool, _dtype.float16, _dtype.bfloat16):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_dtype.scalar_type_name(x.dtype)}")
    if x.ndim == 0:  # (a 0-d input is one point)
        x = x.unsqueeze(-1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from .ops.join import cat
    # PyTorch's graph: the powers 1..N-1 as a cumprod of copies of x, a column of ones put before them
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat([powers.new_ones(tuple(x.shape) + (1,)), powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of each matrix (a view)."""
    return _D.diagonal(A, offset, dim1, dim2)


@structured_out
def tensorinv(A, ind=2):
    """The inverse of ``A`` seen as a linear map from its first ``ind`` dims to the rest (shape reversed)."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    p, q = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {q} != {p}")
    return _S.reshape(inv(_S.reshape(A, (p, q))), tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


@structured_out
def tensorsolve(A, B, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B``; ``dims`` of ``A`` are first moved to the end."""
    require_tensor(A, "linalg_tensorsolve")
    require_tensor(B, "linalg_tensorsolve", 2, "other")
    if dims is not None:
        dims = tuple(dims)
        A = _O.movedim(A, dims, tuple(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    p, q = math.prod(A.shape[:B.ndim]), math.prod(rest)
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {q} != {p}")
    return _S.reshape(solve(_S.reshape(A, (p, q)), _S.reshape(B, (p,))), rest)


# ----------------------------------------------------------------------------------------------------------------
# the older top-level spellings: torchish.det, torchish.svd (returns V), torchish.cholesky(upper=), ...


@structured_out
def _inverse(input):
    return inv(input)


@structured_out
def _top_svd(input, some=True, compute_uv=True):
    """``torch.svd``: ``U, S, V`` (not ``Vh``); ``compute_uv=False`` gives zero-filled ``U`` and ``V``."""
    from .ops.creation import zeros
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _RESULTS["svd"](zeros(batch + (m, m), dtype=input.dtype, device=input.device), svdvals(input),
                               zeros(batch + (n, n), dtype=input.dtype, device=input.device).mH)  # (Vh.mH)
    U, S, Vh = svd(input, full_matrices=not some)
    return _RESULTS["svd"](U, S, Vh.mH)


@structured_out
def _top_qr(input, some=True):
    warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
              "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, "
              "some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
              stacklevel=2)
    return _RESULTS["qr"](*qr(input, "reduced" if some else "complete"))


@structured_out
def _top_cholesky(input, upper=False):
    warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
              "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
              "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
              "transform will produce equivalent results for all valid (symmetric positive definite) inputs.",
              stacklevel=2)
    return _cholesky(input, upper=upper, _legacy=True)


def _pinverse(input, rcond=1e-15):
    # (CPU autocast casts pinverse to float32; linalg.pinv itself is not cast, and refuses bfloat16 there)
    input, = _autocast_inputs("pinverse", input)
    return pinv(input, rtol=rcond)


def _top_slogdet(input):
    return _RESULTS["slogdet"](*slogdet(input))


@structured_out
def _top_cross(input, other, dim=None):
    require_tensor(input, "cross")
    require_tensor(other, "cross", 2, "other")
    if dim is None:
        warn_once("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                  "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                  "that of linalg.cross in a future release.")
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)  # input's own sizes, as PyTorch's
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim)


def _lower(l, upper):
    """The lower factor: ``l`` itself, or the conjugate transpose of an upper one."""
    import jax.numpy as jnp
    return jnp.conj(jnp.swapaxes(l, -1, -2)) if upper else l


def _cholesky_solve_fwd(b, l, *, upper):
    import jax
    lo = _lower(l, upper)
    y = jax.lax.linalg.triangular_solve(lo, b, left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(lo, y, left_side=True, lower=True, conjugate_a=True, transpose_a=True)


def _factor_grad(common, l, upper):
    """PyTorch's gradient of a Cholesky factor read as a full matrix: ``-common @ L`` (``-U @ common``)."""
    return -(l @ common) if upper else -(common @ l)


def _mH(x):
    import jax.numpy as jnp
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _cholesky_solve_vjp(g, b, l, out, upper):
    """PyTorch's ``cholesky_solve_backward``: the factor's gradient is a full matrix (JAX's would be triangular)."""
    gb = _cholesky_solve_fwd(g, l, upper=upper)
    common = gb @ _mH(out)
    return gb, _factor_grad(common + _mH(common), l, upper)


def _cholesky_inverse_fwd(l, *, upper):
    import jax.numpy as jnp
    eye = jnp.broadcast_to(jnp.eye(l.shape[-1], dtype=l.dtype), l.shape)
    return _cholesky_solve_fwd(eye, l, upper=upper)


def _cholesky_inverse_vjp(g, l, out, upper):
    """PyTorch's ``cholesky_inverse_backward``: ``-(P (G + G^H) P) L``."""
    return (_factor_grad(out @ (g + _mH(g)) @ out, l, upper),)


def _triangular_solve_fwd(b, a, *, upper, transpose, unit):
    """The solution and a copy of ``a`` (LAPACK's working copy, PyTorch's ``cloned_coefficient``)."""
    import jax
    x = jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=not upper, transpose_a=transpose,
                                        unit_diagonal=unit)
    return x, _C._CLONE.fwd(a)


# one node each, with PyTorch's gradients and saves (the inputs and the result)
_CHOLESKY_SOLVE = defop("cholesky_solve", _cholesky_solve_fwd, vjp=_cholesky_solve_vjp, promote="same",
                        grad_name="CholeskySolveBackward0", saved=("01o", "01o"))
_CHOLESKY_INVERSE = defop("cholesky_inverse", _cholesky_inverse_fwd, vjp=_cholesky_inverse_vjp,
                          grad_name="CholeskyInverseBackward0", saved=("0o",))
_TRIANGULAR_SOLVE = defop("triangular_solve", _triangular_solve_fwd, promote="same",
                          grad_name="TriangularSolveBackward0", saved=("01o0", "01o0"))


def _legacy_operands(b, A, name, kernel):
    """PyTorch's checks of cholesky_solve's and triangular_solve's operands; ``kernel``: the CPU kernel, which has
    no integer, bool or half-precision version (its NotImplementedError)."""
    if b.ndim < 2:
        raise RuntimeError(f"{name}: Expected b to have at least 2 dimensions, but it has {b.ndim} dimensions instead")
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype.scalar_type_name(b.dtype)} and A of type {_dtype.scalar_type_name(A.dtype)} "
                           "instead.")
    _check_matrix(A, name, kernel=kernel, int_kernel=True)
    if b.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def _expand_batches(b, A):
    """``b`` and ``A`` expanded to their common batch dims (the solvers' nodes see the broadcast operands)."""
    lead = tuple(_B.broadcast_shapes(b.shape[:-2], A.shape[:-2]))
    return tuple(t if tuple(t.shape[:-2]) == lead else t.expand(lead + tuple(t.shape[-2:])) for t in (b, A))


@linalg_castable_out("cholesky_solve")
def _cholesky_solve(B, L, upper=False):
    """``torch.cholesky_solve``: ``X`` with ``A X = B`` for ``A = L L^H`` (``U^H U`` with ``upper=True``)."""
    if _registry.autocast_hook is not None:  # (on CPU autocast's float32 list, cast before the dtype checks)
        B, L = _registry.autocast_hook("cholesky_solve", (B, L))
    _legacy_operands(B, L, "cholesky_solve", "cholesky_solve_cpu")
    B, L = _expand_batches(B, L)
    return apply(_CHOLESKY_SOLVE, (B, L), upper=bool(upper))


@linalg_castable_out("cholesky_inverse")
def _cholesky_inverse(L, upper=False):
    """``torch.cholesky_inverse``: ``A^{-1}`` from the Cholesky factor of ``A``."""
    _check_matrix(L, "cholesky_inverse", kernel="cholesky_inverse_out_cpu", int_kernel=True)
    return apply(_CHOLESKY_INVERSE, (L,), upper=bool(upper))


@structured_out
def _triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``torch.triangular_solve`` (deprecated): ``(solution, cloned_coefficient)`` of ``op(A) X = b``."""
    warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed "
              "in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not "
              "return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced "
              "with\nX = torch.linalg.solve_triangular(A, B).", stacklevel=2)
    if _registry.autocast_hook is not None:  # (on CPU autocast's float32 list, cast before the dtype checks)
        b, A = _registry.autocast_hook("triangular_solve", (b, A))
    _legacy_operands(b, A, "torch.triangular_solve", "triangular_solve_cpu")
    b, A = _expand_batches(b, A)
    X, A_copy = apply(_TRIANGULAR_SOLVE, (b, A), upper=bool(upper), transpose=bool(transpose),
                      unit=bool(unitriangular))
    return _RESULTS["triangular_solve"](X, A_copy)


@structured_out
def _top_lu(A, pivot=True, get_infos=False):
    """``torch.lu`` (deprecated): ``(LU, pivots)`` or ``(LU, pivots, infos)``."""
    warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
              "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
              "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
              "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
              "torch.linalg.lu_factor_ex(A, compute_pivots)", stacklevel=2)
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)  # (a singular matrix is no error: PyTorch's _lu_with_info
    if get_infos:                                    # checks its arguments only)
        return _RESULTS["_lu_with_info"](LU, pivots, info)
    return LU, pivots


def _chain_matmul(*matrices, out=None):
    """``torch.chain_matmul`` (deprecated): ``multi_dot`` of 2-D matrices; one matrix is copied (into ``out`` with a
    cast, as PyTorch's ``copy_``)."""
    warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
              "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
              "parameters.", stacklevel=2)
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone() if out is None else _out(matrices[0].to(out.dtype, copy=True), out, "chain_matmul")
    return multi_dot(list(matrices), out=out)


TOP_LEVEL = {"det": det, "inverse": _inverse, "logdet": _logdet, "slogdet": _top_slogdet, "svd": _top_svd,
             "qr": _top_qr, "cholesky": _top_cholesky, "pinverse": _pinverse, "matrix_power": matrix_power,
             "matrix_exp": matrix_exp, "cross": _top_cross, "cholesky_solve": _cholesky_solve,
             "cholesky_inverse": _cholesky_inverse, "triangular_solve": _triangular_solve, "lu": _top_lu,
             "orgqr": _orgqr}
FUNCTIONS = {"chain_matmul": _chain_matmul}  # top-level functions that are not Tensor methods
for _name, _fn in TOP_LEVEL.items():
    setattr(Tensor, _name, as_method(_name, _fn))
del _name, _fn


def _tensor_lu(self, pivot=True, get_infos=False):
    """``Tensor.lu``: a plain tuple, as PyTorch's (``torch.lu(A, get_infos=True)`` is its ``_lu_with_info``)."""
    return tuple(_top_lu(self, pivot, get_infos))


Tensor.lu = _tensor_lu
