"""Top-level norms and decompositions kept by PyTorch for old code (``torch.frobenius_norm``, ``nuclear_norm``,
``native_norm``, ``norm_except_dim``, ``lu_unpack``, ``lu_solve``, the removed ``matrix_rank``), the randomized
low-rank methods (``svd_lowrank``, ``pca_lowrank``, ``lobpcg``), and ``segment_reduce``, ``histogramdd``,
``binomial`` and the samplers behind the distributions (``_standard_gamma``, ``_sample_dirichlet``).

Example::

    >>> A = torchish.randn(8, 5)
    >>> U, S, V = torchish.svd_lowrank(A, q=3)
    >>> U.shape, S.shape, V.shape
    (torchish.Size([8, 3]), torchish.Size([3]), torchish.Size([5, 3]))
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp

from . import _dtype, _layout, _precision
from ._global_flags import warn_once
from . import linalg as _linalg
from ._device import placement
from ._tensor import Tensor, wrap_dim
from .ops.broadcast import broadcast_error
from .ops.elementwise import no_derivative, out_structured, structured_out
from .ops.reduce import _return_type
from .autograd.grad_mode import STATE
from .ops.registry import apply, defop, overload

_LU_UNPACK_RESULT = _return_type("lu_unpack", ("P", "L", "U"))

__all__ = ["native_norm", "norm_except_dim", "frobenius_norm", "nuclear_norm", "matrix_rank", "lu_unpack",
           "lu_solve", "svd_lowrank", "pca_lowrank", "lobpcg", "segment_reduce", "histogramdd", "binomial",
           "_standard_gamma", "_sample_dirichlet"]


# ----------------------------------------------------------------------------------------------------------------
# norms


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """``torch.native_norm``: the ``p``-norm over ``dim`` (every dim by default)."""
    return _linalg.vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm over every dim except ``dim`` (kept as size 1); ``dim=-1`` is the norm of everything."""
    if dim == -1:
        return _linalg.vector_norm(v, pow)
    # PyTorch reads v.size(dim) (dim 0 of a 0-d tensor is no dimension) or transposes dim to the front
    d = wrap_dim(dim, v.ndim, wrap_scalar=dim != 0)
    dims = tuple(i for i in range(v.ndim) if i != d)
    if not dims:  # (a 1-d v: each element is its own norm; vector_norm over dim=() would reduce everything)
        return v.abs()
    return _linalg.vector_norm(v, pow, dims, keepdim=True)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in "
              "a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    return out_structured(_linalg.vector_norm(input, 2, dim, keepdim), out, "frobenius_norm")


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """``torch.nuclear_norm(input, keepdim=False)`` or ``torch.nuclear_norm(input, dim, keepdim=False)``."""
    warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
              "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dim = (-2, -1) if dim is None else tuple(dim)
    return _linalg.matrix_norm(input, "nuc", dim, keepdim, out=out)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                       "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                       "`torch.linalg.matrix_rank()` to 'hermitian'.")


# ----------------------------------------------------------------------------------------------------------------
# LU


def _permutation_fwd(pivots, *, n, dtype):
    """Row permutation matrices from LAPACK's 1-based sequential pivots (batched)."""
    k = pivots.shape[-1]
    lead = pivots.shape[:-1]
    perm = jnp.broadcast_to(jnp.arange(n), lead + (n,))

    def body(i, p):
        j = pivots[..., i].astype(jnp.int32) - 1
        a = jnp.take_along_axis(p, jnp.full(lead + (1,), i), -1)
        b = jnp.take_along_axis(p, j[..., None], -1)
        p = jnp.put_along_axis(p, jnp.full(lead + (1,), i), b, -1, inplace=False)
        return jnp.put_along_axis(p, j[..., None], a, -1, inplace=False)

    perm = jax.lax.fori_loop(0, k, body, perm)
    # row i of P^T A is row perm[i] of A, so A = P @ L @ U with P[perm[i], i] = 1
    return jnp.swapaxes(jax.nn.one_hot(perm, n, dtype=dtype), -1, -2)


_PERMUTATION = defop("lu_unpack_pivots", _permutation_fwd, differentiable=False)


@structured_out
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from ``torch.linalg.lu_factor``'s compact ``(LU, pivots)``; empty tensors for parts not
    unpacked."""
    if LU_pivots.dtype is not _dtype.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m = LU_data.shape[-2]
    L, U = apply(_LU_UNPACK, (LU_data,), unpack_data=bool(unpack_data))
    if unpack_pivots:
        P = apply(_PERMUTATION, (LU_pivots,), n=int(m), dtype=LU_data.dtype.np)
    else:
        P = Tensor._make(jnp.zeros((0,), LU_data.dtype.np, device=placement(LU_data._v)))
    return _LU_UNPACK_RESULT(P, L, U)


def _lu_unpack_fwd(lu, *, unpack_data):
    """``L`` (unit lower triangle, ``m x k``) and ``U`` (upper triangle, ``k x n``) of a compact LU; two empty
    tensors when not ``unpack_data``."""
    if not unpack_data:
        return jnp.zeros((0,), lu.dtype), jnp.zeros((0,), lu.dtype)
    m, n = lu.shape[-2:]
    k = min(m, n)
    return jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype), jnp.triu(lu[..., :k, :])


# L and U are the outputs of one node, as PyTorch's (its empty ones too), which saves no tensor
_LU_UNPACK = defop("lu_unpack", _lu_unpack_fwd, linear=True, grad_name="LuUnpackBackward0")


@structured_out
def lu_solve(b, LU_data, LU_pivots):
    """``torch.lu_solve(b, LU, pivots)``: ``torch.linalg.lu_solve(LU, pivots, b)``."""
    from .ops.tensor_api import warn_lu_solve_deprecated
    warn_lu_solve_deprecated(4)
    return _linalg.lu_solve(LU_data, LU_pivots, b)


# ----------------------------------------------------------------------------------------------------------------
# segment_reduce


_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "max": -jnp.inf, "min": jnp.inf, "mean": jnp.nan}


def _segment_ids(lengths, n):
    ends = jnp.cumsum(lengths)
    return jnp.searchsorted(ends, jnp.arange(n), side="right")


def _segment_fwd(data, lengths, *, reduce, axis, initial):
    x = jnp.moveaxis(data, axis, 0)
    num = lengths.shape[0]
    seg = _segment_ids(lengths, x.shape[0])
    count = jax.ops.segment_sum(jnp.ones_like(seg), seg, num)
    count = count.reshape((num,) + (1,) * (x.ndim - 1))
    if reduce in ("sum", "mean"):
        out = jax.ops.segment_sum(x, seg, num)
    elif reduce == "prod":
        out = jax.ops.segment_prod(x, seg, num)
    else:
        out = (jax.ops.segment_max if reduce == "max" else jax.ops.segment_min)(x, seg, num)
    if initial is not None:
        init = jnp.asarray(initial, x.dtype)
        out = {"sum": out + init, "mean": out + init, "prod": out * init,
               "max": jnp.maximum(out, init), "min": jnp.minimum(out, init)}[reduce]
        empty = init
    else:
        empty = jnp.asarray(_SEGMENT_EMPTY[reduce], x.dtype)
    if reduce == "mean":
        out = out / jnp.maximum(count, 1).astype(x.dtype)
    out = jnp.where(count == 0, empty, out)
    return jnp.moveaxis(out, 0, axis)


def _segment_vjp(g, data, lengths, *, reduce, axis, initial, out):
    """PyTorch's CPU gradients: tied maxima/minima each get the gradient, divided among the ties only where it is
    positive (as PyTorch's kernel does); a product's zero entries get the product of the others."""
    x = jnp.moveaxis(data, axis, 0)
    go, o = jnp.moveaxis(g, axis, 0), jnp.moveaxis(out, axis, 0)
    num = lengths.shape[0]
    seg = _segment_ids(lengths, x.shape[0])
    segc = jnp.clip(seg, 0, max(num - 1, 0))
    valid = (seg < num).reshape((-1,) + (1,) * (x.ndim - 1))
    gs, os_ = go[segc], o[segc]
    if reduce == "sum":
        gx = gs
    elif reduce == "mean":
        count = jax.ops.segment_sum(jnp.ones_like(seg), seg, num).reshape((num,) + (1,) * (x.ndim - 1))
        gx = gs / jnp.maximum(count, 1)[segc].astype(x.dtype)
    elif reduce == "prod":
        zero = x == 0
        nz = jax.ops.segment_prod(jnp.where(zero, jnp.ones_like(x), x), seg, num)
        if initial is not None:
            nz = nz * jnp.asarray(initial, x.dtype)
        zeros = jax.ops.segment_sum(zero.astype(jnp.int32), seg, num)
        gx = gs * jnp.where(zero, jnp.where(zeros[segc] == 1, nz[segc], 0), os_ / jnp.where(zero, 1, x))
    else:
        hit = (x == os_).astype(x.dtype)
        ties = jax.ops.segment_sum(hit, seg, num)
        gx = gs * hit
        gx = jnp.where(gx > 0, gx / jnp.maximum(ties, 1)[segc], gx)  # PyTorch's kernel splits positive ones only
    gx = jnp.where(valid, gx, 0)
    return jnp.moveaxis(gx, 0, axis).astype(data.dtype), None


_SEGMENT_REDUCE = defop("segment_reduce", _segment_fwd, vjp=_segment_vjp, grad_name="SegmentReduceBackward0")


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduce consecutive segments of ``data`` along ``axis`` (``reduce``: sum, mean, prod, max, min), given the
    segments' ``lengths`` or their ``offsets``; an empty segment gives ``initial`` (or the reduction's identity,
    NaN for a mean)."""
    if reduce not in _SEGMENT_EMPTY:
        raise RuntimeError(f"reduce argument must be either sum, prod, max, min or mean, got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is None:
        lengths = offsets[1:] - offsets[:-1]
    if lengths.ndim != 1:
        raise RuntimeError("segment_reduce(): only 1-D lengths are supported here")
    axis = axis + data.ndim if axis < 0 else axis
    if axis != lengths.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"{'lengths' if offsets is None else 'offsets'} but got {axis}.")
    if not unsafe:
        from .ops.tracing import active
        if not active() and not isinstance(lengths._d, jax.core.Tracer):
            lv = jax.device_get(lengths._d)
            if (lv < 0).any():
                raise RuntimeError("lengths contains negative value!")
            if int(lv.sum()) != data.shape[axis]:
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                                   "data.size(lengths.dim()-1) when !unsafe.")
    return apply(_SEGMENT_REDUCE, (data, lengths), reduce=reduce, axis=int(axis),
                 initial=None if initial is None else float(initial))


# ----------------------------------------------------------------------------------------------------------------
# histogramdd


def _histdd_fwd(x, weight, *edges, density):
    d = len(edges)
    pts = x.reshape(-1, d)
    flat = jnp.zeros(pts.shape[0], jnp.int64)
    inside = jnp.ones(pts.shape[0], bool)
    sizes = [e.shape[0] - 1 for e in edges]
    for i, e in enumerate(edges):
        c = pts[:, i]
        pos = jnp.searchsorted(e, c, side="right") - 1
        pos = jnp.where(c == e[-1], sizes[i] - 1, pos)
        inside = inside & (c >= e[0]) & (c <= e[-1])
        flat = flat * sizes[i] + jnp.clip(pos, 0, sizes[i] - 1)
    total = 1
    for s in sizes:
        total *= s
    w = jnp.ones(pts.shape[0], x.dtype) if weight is None else weight.reshape(-1)
    hist = jnp.zeros(total, x.dtype).at[jnp.where(inside, flat, total)].add(w, mode="drop").reshape(sizes)
    if density:
        # one IEEE division each, in PyTorch's order (the barriers keep XLA from merging them into h / (s * w))
        hist = jax.lax.optimization_barrier(_precision.div(hist, hist.sum()))
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            hist = jax.lax.optimization_barrier(_precision.div(hist, jnp.diff(e).reshape(shape)))
    return hist


_HISTOGRAMDD = defop("histogramdd", _histdd_fwd, differentiable=False)
# an input, weight or edges tensor that requires grad: PyTorch records nodes without a formula, for the histogram
# (from bin counts or from bin tensors) and for the edges it computes from bin counts (from the input and weight)
_HISTOGRAMDD_FROM_CTS, _HISTOGRAMDD_FROM_TENSORS = (
    overload(_HISTOGRAMDD, "NotImplemented", differentiable=True, save_out=True, vjp=no_derivative(kernel))
    for kernel in ("_histogramdd_from_bin_cts", "_histogramdd_from_bin_tensors"))
_BIN_EDGES = defop("histogramdd_bin_edges", lambda x, w, e: e, grad_name="NotImplemented", save_out=True,
                   vjp=no_derivative("_histogramdd_bin_edges"))
_HISTOGRAMDD_RESULT = _return_type("histogramdd", ("hist", "bin_edges"))


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)`` of the points in the innermost dim of ``input``: ``bins`` an int, one int per dim, or
    one edges tensor per dim; ``range`` ``[lo0, hi0, lo1, hi1, ...]``."""
    from .ops.creation import linspace
    if input.ndim == 0:  # (PyTorch reads input.size(-1) first)
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    edges_given = isinstance(bins, (list, tuple)) and all(isinstance(b, Tensor) for b in bins)
    if input.dtype.category != _dtype._FLOAT or (input.dtype in (_dtype.float16, _dtype.bfloat16) and not edges_given):
        raise NotImplementedError(f'"histogramdd" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    d = input.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each of the {d} dimensions "
                           f"of the input, but got {len(bins)}")
    pts = input.reshape(-1, d).detach()
    edges = []
    for i, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(b.to(input.dtype))
            continue
        if b <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for dimension {i}")
        if range is not None:
            lo, hi = float(range[2 * i]), float(range[2 * i + 1])
        elif pts.shape[0]:
            lo, hi = float(pts[:, i].min()), float(pts[:, i].max())
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               f"dimension {i}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(linspace(lo, hi, int(b) + 1, dtype=input.dtype))
    op = _HISTOGRAMDD
    if STATE.grad_enabled and any(t is not None and t.requires_grad for t in (input, weight, *edges)):
        from_cts = not isinstance(bins[0], Tensor)
        op = _HISTOGRAMDD_FROM_CTS if from_cts else _HISTOGRAMDD_FROM_TENSORS
        if from_cts and (input.requires_grad or weight is not None and weight.requires_grad):
            edges = [apply(_BIN_EDGES, (input, weight, e)) for e in edges]
    hist = apply(op, (input, weight) + tuple(edges), density=bool(density))
    return _HISTOGRAMDD_RESULT(hist, tuple(edges))


# ----------------------------------------------------------------------------------------------------------------
# binomial sampling


def binomial(count, prob, generator=None):
    """Binomial draws with ``count`` trials of success probability ``prob`` (float tensors of one dtype)."""
    from .distributions._sampling import binomial as _binomial
    if count.dtype.category != _dtype._FLOAT:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_dtype.scalar_type_name(count.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_type_name(prob.dtype)} but expected "
                           f"{_dtype.scalar_type_name(count.dtype)}")
    try:
        shape = tuple(jnp.broadcast_shapes(tuple(count.shape), tuple(prob.shape)))
    except ValueError:
        raise broadcast_error(tuple(count.shape), tuple(prob.shape)) from None
    if shape != tuple(count.shape) and count.numel():  # PyTorch's output (count's shape) is resized to it
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(count.shape)}, "
                      f"which does not match the required output shape {list(shape)}. This behavior is deprecated, "
                      "and in a future PyTorch release outputs will not be resized unless they have zero elements. "
                      "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                      "t.resize_(0).", UserWarning, stacklevel=2)
    return _binomial(count.detach().expand(shape), prob.detach().expand(shape), generator)


def _standard_gamma(input, generator=None):
    """Samples of ``Gamma(input, 1)`` (at least the dtype's smallest normal number), differentiable in ``input``
    by implicit reparameterisation, as ``torch._standard_gamma``."""
    from .distributions._sampling import standard_gamma
    return standard_gamma(input, generator)


# the samples ride along as a second operand: PyTorch records a node it cannot differentiate
_SAMPLE_DIRICHLET = defop("_sample_dirichlet", lambda input, samples: samples, promote="same", promote_args=(0,),
                          vjp=no_derivative("_sample_dirichlet"), grad_name="NotImplemented")


def _sample_dirichlet(input, generator=None):
    """Samples of ``Dirichlet(input)`` along the last dimension, as ``torch._sample_dirichlet`` (float64 gamma
    draws normalised, then cast)."""
    from .autograd.grad_mode import no_grad
    from .distributions._sampling import dirichlet
    with no_grad():
        samples = dirichlet(input.detach(), generator)
    return apply(_SAMPLE_DIRICHLET, (input, samples)) if input.requires_grad else samples


# ----------------------------------------------------------------------------------------------------------------
# randomized low rank and LOBPCG


def _approximate_basis(A, q, niter, M):
    """Halko et al.'s randomized range finder (Algorithm 4.4): an orthonormal ``(m, q)`` basis for ``A``'s range."""
    from .ops.random import randn
    dt = A.dtype if A.is_complex() or A.is_floating_point() else _dtype.get_default_dtype()
    R = randn(A.shape[-1], q, dtype=dt)
    X = A @ R if M is None else A @ R - M @ R
    Q = _linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q
        Q = _linalg.qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = _linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate rank-``q`` SVD ``(U, S, V)`` of ``A - M`` by randomized subspace iteration (``niter`` power
    iterations)."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)
    transposed = m < n
    if transposed:
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, 2 if niter is None else niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = _linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if transposed:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of ``A``'s rows: :func:`svd_lowrank` of ``A`` minus its column means."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    if A.layout is _layout.sparse_coo:  # (PyTorch's: the column means from torch.sparse.sum, as a dense M beside A)
        if A.dim() != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        from .sparse import sum as sparse_sum
        means = sparse_sum(A, dim=(-2,)).to_dense() / m
        return svd_lowrank(A, q, niter=niter, M=means.unsqueeze(0).expand(m, n))
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter=niter)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None,
           ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The ``k`` largest (``largest=False``: smallest) eigenpairs ``(E, X)`` of the symmetric (generalized, with
    ``B``) eigenproblem ``A X = B X diag(E)``.

    PyTorch iterates LOBPCG to its tolerance; here the pairs are computed to full precision by a dense
    (Cholesky-reduced) symmetric eigendecomposition, which is what the iteration converges to. Eigenvalues come
    sorted (descending for the largest), eigenvectors B-orthonormal.
    """
    if A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must be square but got shape {tuple(A.shape)}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise ValueError(f"A and B must have the same shapes but got {tuple(A.shape)} and {tuple(B.shape)}")
    m = A.shape[-1]
    if X is None:
        k = (1 if n is None else n) if k is None else k
        n = k if n is None else n
    else:
        k = X.shape[-1] if k is None else k
        n = X.shape[-1] if n is None else n
    if m < 3 * n:
        raise ValueError(f"LPBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    largest = True if largest is None else largest
    # (a sparse A or B, which PyTorch's iteration multiplies by: its dense value)
    A = A if A.layout is _layout.strided else A.to_dense()
    B = B if B is None or B.layout is _layout.strided else B.to_dense()
    if B is None:
        E, V = _linalg.eigh(A)
    else:
        L = _linalg.cholesky(B)
        from .ops.creation import eye
        Li = _linalg.solve_triangular(L, eye(m, dtype=A.dtype), upper=False)
        E, W = _linalg.eigh(Li @ A @ Li.mT)
        V = Li.mT @ W
    if largest:
        E, V = E.flip(-1), V.flip(-1)
    return E[..., :k], V[..., :k]
