"""Functions and products of matrices: matrix_exp, matrix_norm, cross and multi_dot."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _precision
from .._tensor import Tensor
from .decomp import check_matrix, svdvals
from .contraction_graph import multi_dot_graph, records_graph
from .elementwise import exact_out, out_structured, structured_out, type_name
from . import registry as _registry
from .registry import apply, defop

_FLOAT = _dtype._FLOAT


# ----------------------------------------------------------------------------------------------------------------
# matrix_exp, cross, multi_dot


def _expm(A):
    """exp(A); float16/bfloat16 (which JAX's expm refuses) in float32, rounded back as PyTorch's half kernel."""
    if A.dtype in (jnp.float16, jnp.bfloat16):
        return jax.scipy.linalg.expm(A.astype(jnp.float32)).astype(A.dtype)
    return jax.scipy.linalg.expm(A)


_EXPM = defop("linalg_matrix_exp", _expm, grad_name="LinalgMatrixExpBackward0")


def matrix_exp(A):
    """The matrix exponential of each square matrix."""
    check_matrix(A, "linalg.matrix_exp", half=True)
    _check_batches_view(A)
    return apply(_EXPM, (A,))


def _check_batches_view(A):
    """PyTorch's CPU matrix exponential of matrices of size 2 or more views its input as one batch dim
    (``a.view({-1, n, n})``): batch dims whose strides do not merge (permuted, sliced, expanded) raise view's error
    (math fuzzer seed 9100488)."""
    from . import inplace as _ip
    n = A.shape[-1]
    if A.ndim <= 3 or n < 2:
        return
    shape, strides, _ = _ip.layout(A)
    if _ip.view_strides(shape, strides, (int(np.prod(shape[:-2])), n, n)) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")


_CROSS = defop("linalg_cross", lambda a, b, *, dim: jnp.cross(*jnp.broadcast_arrays(a, b), axis=dim),
               grad_name="LinalgCrossBackward0")


@structured_out
def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (shapes broadcast, dims must agree in number)."""
    from .._tensor import wrap_dim
    from .elementwise import require_tensor
    require_tensor(input, "linalg_cross")
    require_tensor(other, "linalg_cross", 2, "other")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim, wrap_scalar=False)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(other.dtype)}")
    if input.dtype is _dtype.bool:
        from .elementwise import not_implemented
        raise not_implemented("cross", input.dtype)
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        from .broadcast import broadcast_error
        raise broadcast_error(tuple(input.shape), tuple(other.shape)) from None
    return apply(_CROSS, (input, other), dim=d)


def _multi_dot_fwd(*xs):
    return jnp.linalg.multi_dot(xs, precision=_precision.matmul())


_MULTI_DOT = defop("linalg_multi_dot", _multi_dot_fwd, grad_name="ViewBackward0")


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (first/last may be vectors), multiplied in the cheapest order. ``out``
    must have the inputs' dtype (PyTorch's own check, worded as multi_dot's)."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(f"linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type_name(tensors)}")
    ts = list(tensors)
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
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
    if isinstance(out, Tensor) and out.dtype is not ts[0].dtype:
        from .elementwise import c10_name
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype {c10_name(ts[0].dtype)} but got "
                           f"{c10_name(out.dtype)}")
    if out is None and records_graph(ts):
        return multi_dot_graph(ts)
    return out_structured(apply(_MULTI_DOT, tuple(ts)), out, "multi_dot")


# ----------------------------------------------------------------------------------------------------------------
# matrix norms


@exact_out("linalg.matrix_norm expected out tensor dtype {expected} but got: {out}")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """``'fro'``, ``'nuc'``, and the induced norms ``1, -1, 2, -2, inf, -inf`` over the two dims ``dim``."""
    from . import convert, extrema, reduce as R, reorder, shape as S, stats, unary
    from .._tensor import wrap_dim
    if dtype is None and _registry.autocast_hook is not None:  # one op in PyTorch, with its own autocast policy
        A, = _registry.autocast_hook("linalg_matrix_norm", (A,))
    if not isinstance(dim, (tuple, list)):
        raise TypeError(f"linalg_matrix_norm() received an invalid combination of arguments - got (Tensor, "
                        f"dim={type(dim).__name__}), but expected one of:\n"
                        " * (Tensor input, Number ord, tuple of ints dim = {-2,-1}, bool keepdim = False, *, "
                        "torch.dtype dtype = None, Tensor out = None)\n"
                        " * (Tensor input, str ord = \"fro\", tuple of ints dim = {-2,-1}, bool keepdim = False, *, "
                        "torch.dtype dtype = None, Tensor out = None)\n")
    if ord not in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # PyTorch checks the input before dtype= converts it; the SVD-based norms have no half-precision kernel
    check_matrix(A, "linalg.matrix_norm", square=False, half=ord not in ("nuc", 2, -2))
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if dtype is not None:
        dtype = R.dtype_arg("linalg_matrix_norm", dtype)
        stats.check_norm_dtype(A.dtype, dtype, "linalg.matrix_norm")
        A = convert.to_dtype(A, dtype)
    if ord == "fro":
        return stats.vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        # PyTorch's graph: the two dims permuted to the end, reduced (kept as one), put back by the inverse permutation
        perm = tuple(d for d in range(A.ndim) if d not in (d0, d1)) + (d0, d1)
        sv = svdvals(reorder.permute(A, perm))
        if ord == "nuc":
            res = R.sum(sv, -1, keepdim)
        elif ord == 2 and sv.shape[-1] == 0:  # PyTorch: the 2-norm of an empty matrix is a constant 0 (-2 raises)
            from .creation import zeros
            res = zeros(tuple(sv.shape[:-1]) + (1,) * keepdim, dtype=sv.dtype)
        else:
            res = (extrema.amax if ord == 2 else extrema.amin)(sv, -1, keepdim)
        if keepdim:
            res = reorder.permute(S.unsqueeze(res, -1), tuple(perm.index(d) for d in range(A.ndim)))
        return res
    if ord in (1, -1, float("inf"), float("-inf")):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        summed = R.sum(unary.abs(A), sum_dim, keepdim)
        red = red_dim if keepdim or red_dim < sum_dim else red_dim - 1
        if ord > 0 and summed.shape[red] == 0:  # PyTorch: a constant 0 (the max over nothing; -1/-inf raise)
            from .creation import zeros
            shape = list(summed.shape)
            if keepdim:
                shape[red] = 1
            else:
                del shape[red]
            return zeros(tuple(shape), dtype=summed.dtype)
    return (extrema.amax if ord > 0 else extrema.amin)(summed, red, keepdim)
