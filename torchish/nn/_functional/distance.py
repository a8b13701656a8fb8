"""Distances and similarities: ``normalize``, ``cosine_similarity``, ``pairwise_distance``, ``pdist`` and
``cdist``, each with PyTorch's gradient conventions at zero distances (the gradient there is zero, never NaN).

``pdist``/``cdist`` are one op each with PyTorch's own backward formulas (``_pdist_backward``/``_cdist_backward``);
for Euclidean ``cdist`` on more than 25 rows PyTorch switches to a matrix-product formulation, and so does torchish,
so values and gradients follow the same numerics.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype, _precision
from ..._tensor import wrap_dim
from ...ops.arith import _check_sub
from ...ops.casting import rounded
from ...ops.elementwise import require_number
from ...ops import registry as _registry
from ...ops import stats as _stats
from ...ops.registry import apply, defop
from ._args import need_tensor

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pdist", "cdist"]


def _p_norm(d, p, axis=-1, keepdims=False):
    """The p-norm of differences along ``axis`` (PyTorch's dist kernels: p = 0 counts non-zeros)."""
    a = jnp.abs(d)
    if jnp.iscomplexobj(d):  # a complex difference has a real norm: work on its magnitudes
        d = a
    if p == 0:
        return jnp.sum((a != 0).astype(d.dtype), axis=axis, keepdims=keepdims)
    if p == 1:
        return jnp.sum(a, axis=axis, keepdims=keepdims)
    if p == 2:
        return jnp.sqrt(jnp.sum(d * d, axis=axis, keepdims=keepdims))
    if math.isinf(p):
        return jnp.max(a, axis=axis, keepdims=keepdims)
    return jnp.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _dist_backward(diff, dist, g, p):
    """PyTorch's per-element gradient of a p-distance w.r.t. the difference (dist, g broadcast against diff)."""
    zero = jnp.zeros((), diff.dtype)
    safe = jnp.where(dist == 0, jnp.ones((), dist.dtype), dist)
    if p == 0:
        return jnp.zeros_like(diff)
    if p == 1:
        return jnp.sign(diff) * g
    if p == 2:
        return jnp.where(dist == 0, zero, g * diff / safe)
    if math.isinf(p):
        return jnp.sign(diff) * (jnp.abs(diff) == dist).astype(diff.dtype) * g
    a = jnp.abs(diff)
    if p < 2:
        r = jnp.where(dist == 0, zero, jnp.sign(diff) * a ** (p - 1) * g / safe ** (p - 1))
        return jnp.where((diff == 0) & (p < 1), zero, r)
    return jnp.where(dist == 0, zero, diff * a ** (p - 2) * g / safe ** (p - 1))


def _check_float(x, msg):
    if x.dtype.category != _dtype._FLOAT:
        raise RuntimeError(msg)


# ----------------------------------------------------------------------------------------------------------------
# normalize / cosine_similarity / pairwise_distance


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    from ...ops.arith import div
    from ...ops.ternary import clamp_min
    from ...ops.broadcast import expand_as
    denom = expand_as(clamp_min(_stats.norm(input, p, dim, keepdim=True), eps), input)  # (ClampMinBackward0)
    return div(input, denom, out=out)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _norm2(x, axis):
    return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=True))


@_norm2.defjvp
def _norm2_jvp(axis, primals, tangents):
    (x,), (dx,) = primals, tangents
    n = _norm2(x, axis)
    safe = jnp.where(n == 0, jnp.ones((), n.dtype), n)
    return n, jnp.where(n == 0, jnp.zeros((), n.dtype), jnp.sum(x * dx, axis=axis, keepdims=True) / safe)


def _cos_fwd(x1, x2, *, axis, eps):
    x1, x2 = jnp.broadcast_arrays(x1, x2)
    if x1.ndim == 0:  # two 0-d tensors: one vector of one element each, as in PyTorch
        x1, x2 = x1.reshape(1), x2.reshape(1)
    n1 = _norm2(x1, axis)
    n2 = _norm2(x2, axis)
    # PyTorch clamps the norms in place under no_grad: the clamp is invisible to autograd
    # (selected only below eps: an infinite norm stays infinite and its vector's terms become 0, as in PyTorch)
    n1 = jnp.where(n1 < eps, n1 + jax.lax.stop_gradient(eps - n1), n1)
    n2 = jnp.where(n2 < eps, n2 + jax.lax.stop_gradient(eps - n2), n2)
    return jnp.sum((x1 / n1) * (x2 / n2), axis=axis)


_COS = defop("cosine_similarity", _cos_fwd, promote="same", grad_name="SumBackward1")


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    need_tensor("cosine_similarity", x1, "x1", 1)
    need_tensor("cosine_similarity", x2, "x2", 2)
    from ...ops.broadcast import broadcast_shapes
    from ._loss_util import check_broadcast
    dt = _dtype.promote_types(x1.dtype, x2.dtype)  # (PyTorch: the dtype, then eps, then the shapes)
    if dt.category != _dtype._FLOAT:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.scalar_type_name(dt)}")
    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {float(eps):g}")
    check_broadcast(x1, x2)
    ndim = len(broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    if x1.dtype is dt and x2.dtype is dt:  # ATen's composite, op by op
        return _cos_composite(x1, x2, wrap_dim(dim, ndim), float(eps))
    return apply(_COS, (x1, x2), axis=wrap_dim(dim, ndim), eps=float(eps))


def _cos_composite(x1, x2, dim, eps):
    """ATen's cosine_similarity: each operand (both expanded to the common shape where theirs differ) divided by a clone of its 2-norm
    (LinalgVectorNormBackward0 under CloneBackward0), clamped to ``eps`` in place without recording, then the
    products summed over ``dim``."""
    from ...autograd.grad_mode import no_grad
    from ...linalg import vector_norm
    from ...ops.broadcast import broadcast_shapes
    if tuple(x1.shape) != tuple(x2.shape):  # (expand_outplace: both expanded unless their shapes are equal)
        shape = tuple(broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
        x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    n2 = vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _norm_backward(d, n, g, p):
    """PyTorch's norm_backward (linalg.vector_norm): like the dist formulas, but ties of the inf-norm share."""
    if math.isinf(p):
        mask = (jnp.abs(d) == n) | jnp.isnan(d)
        return jnp.sign(d) * (g / jnp.sum(mask, axis=-1, keepdims=True)) * mask
    if 0 < p < 1:
        scaled = jnp.where(d == 0, jnp.zeros((), d.dtype), jnp.sign(d) * jnp.abs(d) ** (p - 1))
        return scaled * g * n ** (1 - p)
    return _dist_backward(d, n, g, p)


def _last_norm_fwd(d, *, p, keepdim):
    if d.ndim == 0:  # (a 0-d difference is reduced over "dim -1" to a 0-d result)
        return _p_norm(d.reshape(1), p)
    return _p_norm(d, p, axis=-1, keepdims=keepdim)


def _last_norm_vjp(g, d, out, *, p, keepdim):
    if not keepdim or d.ndim == 0:
        g, out = g[..., None], out[..., None]
    return (_norm_backward(d.reshape(d.shape or (1,)), out, g, p).reshape(d.shape),)


# ATen's at::norm(t, p, dim=-1, keepdim) (norm.ScalarOpt_dim: NormBackward1), the last step of pairwise_distance
_LAST_NORM = defop("pairwise_distance_norm", _last_norm_fwd, vjp=_last_norm_vjp, promote="float",
                   grad_name="NormBackward1")


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    need_tensor("pairwise_distance", x1, "x1", 1)
    need_tensor("pairwise_distance", x2, "x2", 2)
    from ._loss_util import check_broadcast
    check_broadcast(x1, x2)
    _check_sub(x1, x2)  # PyTorch's composite subtracts first: Bool inputs fail there
    # PyTorch's composite: at::norm(x1 - x2 + eps, p, -1, keepdim), each step a node (SubBackward0, AddBackward1)
    from ...ops.scalar_overloads import add_scalar
    return apply(_LAST_NORM, (add_scalar(x1 - x2, float(eps)),), p=float(p), keepdim=bool(keepdim))


# ----------------------------------------------------------------------------------------------------------------
# pdist / cdist


def _pdist_pairs(n):
    i, j = np.triu_indices(n, 1)
    return jnp.asarray(i), jnp.asarray(j)


def _pdist_fwd(x, *, p):
    i, j = _pdist_pairs(x.shape[0])
    return _p_norm(x[i] - x[j], p)


def _pdist_vjp(g, x, out, *, p):
    i, j = _pdist_pairs(x.shape[0])
    gd = _dist_backward(x[i] - x[j], out[:, None], g[:, None], p)
    return jnp.zeros_like(x).at[i].add(gd).at[j].add(-gd)


_PDIST = defop("pdist", _pdist_fwd, vjp=_pdist_vjp, grad_name="PdistBackward0")


def pdist(input, p=2):
    """Distances between all pairs of rows of a 2-D tensor (upper triangle, row-major)."""
    need_tensor("pdist", input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    _check_float(input, "pdist only supports floating-point dtypes")
    if input.dtype in (_dtype.float16, _dtype.bfloat16):  # PyTorch's CPU kernel has float and double only
        raise NotImplementedError(f'"pdist" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(_PDIST, (input,), p=float(p))


def _cdist_fwd(x1, x2, *, p):
    return _p_norm(x1[..., :, None, :] - x2[..., None, :, :], p)


def _cdist_vjp(g, x1, x2, out, *, p):
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    gd = _dist_backward(diff, out[..., None], g[..., None], p)
    return jnp.sum(gd, axis=-2), -jnp.sum(gd, axis=-3)


def _cdist_mm_fwd(x1, x2, *, p):
    """PyTorch's _euclidean_dist: ||a||^2 - 2 a.b + ||b||^2 as one matrix product, clamped at 0, square root."""
    if x1.dtype in _precision.LOW:  # its ops one at a time: squares, float32 sums, product, sqrt, each rounded
        dt, w = x1.dtype, jnp.float32
        n1, n2 = (jnp.sum(rounded(t.astype(w) * t.astype(w), dt), axis=-1, keepdims=True).astype(dt) for t in (x1, x2))
        a = jnp.concatenate([-2 * x1, n1, jnp.ones_like(n1)], axis=-1)
        b = jnp.concatenate([x2, jnp.ones_like(n2), n2], axis=-1)
        r = rounded(jnp.matmul(a, jnp.swapaxes(b, -1, -2), precision=_precision.matmul(), preferred_element_type=w), dt)
        return jnp.sqrt(jnp.maximum(r, 0.0)).astype(dt)
    n1 = jnp.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = jnp.sum(x2 * x2, axis=-1, keepdims=True)
    a = jnp.concatenate([-2 * x1, n1, jnp.ones_like(n1)], axis=-1)
    b = jnp.concatenate([x2, jnp.ones_like(n2), n2], axis=-1)
    r = jnp.matmul(a, jnp.swapaxes(b, -1, -2), precision=_precision.matmul())
    return jnp.sqrt(jnp.where(r >= 0, r, jnp.zeros((), r.dtype)))


_CDIST = defop("cdist", _cdist_fwd, vjp=_cdist_vjp, promote="same", grad_name="CdistBackward0")
def _cdist_mm_vjp(g, x1, x2, out, *, p):
    """PyTorch's _euclidean_dist_backward: the subgradient 0 where a distance is 0 (a row against itself), where
    differentiating the square root would give NaN."""
    ratio = jnp.where(out == 0, jnp.zeros((), g.dtype), g / jnp.where(out == 0, jnp.ones((), out.dtype), out))
    prec = _precision.matmul()
    g1 = x1 * jnp.sum(ratio, axis=-1, keepdims=True) - jnp.matmul(ratio, x2, precision=prec)
    g2 = x2 * jnp.sum(ratio, axis=-2)[..., None] - jnp.matmul(jnp.swapaxes(ratio, -1, -2), x1, precision=prec)
    return g1, g2


_CDIST_MM = defop("cdist_mm", _cdist_mm_fwd, vjp=_cdist_mm_vjp, promote="same", grad_name="EuclideanDistBackward0")
_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M)."""
    need_tensor("cdist", x1, "x1", 1)
    need_tensor("cdist", x2, "x2", 2)
    if _registry.autocast_hook is not None:  # (CPU autocast runs cdist in float32: before the dtype checks)
        x1, x2 = _registry.autocast_hook("cdist", (x1, x2))
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    require_number(p, "cdist", 3, "p")
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    _check_float(x1, f"cdist only supports floating-point dtypes, X1 got: {_dtype.scalar_type_name(x1.dtype)}")
    _check_float(x2, f"cdist only supports floating-point dtypes, X2 got: {_dtype.scalar_type_name(x2.dtype)}")
    mode = _COMPUTE_MODES.index(compute_mode)
    use_mm = p == 2 and (mode == 1 or (mode == 0 and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    if x1.dtype in (_dtype.float16, _dtype.bfloat16) and not use_mm:  # PyTorch's CPU kernel has float and double
        # only; its matrix-product path (_euclidean_dist) is composite and runs in any floating type
        raise NotImplementedError(f'"cdist" not implemented for \'{_dtype.scalar_type_name(x1.dtype)}\'')
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    from ._loss_util import check_broadcast
    check_broadcast(x1.shape[:-2], x2.shape[:-2])
    if x1.dtype != x2.dtype:  # no promotion, as PyTorch's kernels (the matrix product's check on that path)
        n1, n2 = _dtype.scalar_type_name(x1.dtype), _dtype.scalar_type_name(x2.dtype)
        if use_mm:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {n1.lower()} != {n2.lower()}")
        raise RuntimeError(f"expected scalar type {n1} but found {n2}")
    return apply(_CDIST_MM if use_mm else _CDIST, (x1, x2), p=float(p))
