"""torchish.nn.functional: the margin, ranking and triplet losses (cosine_embedding, margin_ranking,
hinge_embedding, soft_margin, multilabel_soft_margin, multilabel_margin, multi_margin, triplet_margin and
triplet_margin_with_distance).

Each is one registry op whose forward computes the elementwise loss and its reduction in JAX, except the triplet
losses, which are compositions of ops as in PyTorch. Where PyTorch's loss is itself a composite, the op's node is
named after the composite's last op for each reduction (``by_reduction``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import _dtype
from ..._tensor import Tensor
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from ...ops.arith import _check_sub
from ...ops.elementwise import common_dtype
from ._loss_util import (by_reduction, concrete, float_kernel_only, reduce, reduction_arg, check_broadcast,
                         no_complex_clamp, not_differentiable)
from ._args import need_bool, need_number, need_tensor

__all__ = [
    "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
             "the `~` or `logical_not()` operator instead.")  # PyTorch's error for -x on a Bool x


def _clamp_min0(v):
    """``clamp_min(v, 0)`` with PyTorch's gradient (passes where ``v >= 0``, so at 0 too)."""
    return jnp.where(v >= 0, v, jnp.zeros((), v.dtype))


# ----------------------------------------------------------------------------------------------------------------
# margin losses


def _cos_emb_fwd(x1, x2, y, *, margin, reduction, int_to):
    axis = y.ndim
    # (PyTorch's composite: the sums in the inputs' type; + EPSILON gives integral ones the default float type)
    f = x1.dtype if jnp.issubdtype(x1.dtype, jnp.inexact) else int_to
    prod = jnp.sum(x1 * x2, axis=axis).astype(f)
    m1 = jnp.sum(x1 * x1, axis=axis).astype(f) + 1e-12
    m2 = jnp.sum(x2 * x2, axis=axis).astype(f) + 1e-12
    cos = prod / jnp.sqrt(m1 * m2)
    zero = jnp.zeros((), cos.dtype)
    l = jnp.where(y == 1, 1 - cos, zero) + jnp.where(y == -1, _clamp_min0(cos - margin), zero)
    return reduce(l, reduction)


_COS_EMB = by_reduction(defop("cosine_embedding_loss", _cos_emb_fwd, promote="same", promote_args=(0, 1),
                               grad_name="MeanBackward0"), "AddBackward0")  # (unreduced: pos + neg)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    need_tensor("cosine_embedding_loss", input1, "input1", 1)
    need_tensor("cosine_embedding_loss", input2, "input2", 2)
    need_tensor("cosine_embedding_loss", target, "target", 3)
    red = reduction_arg(size_average, reduce, reduction)
    need_number("cosine_embedding_loss", margin, "margin", 4, kind="float")
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if td == 1 else 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(f"{td}D target tensor expects {want}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    check_broadcast(input1, input2)
    if td == 1:  # (PyTorch's where(target == 1, 1 - cos, zeros): the target is the first operand)
        check_broadcast(target, input1.shape[:1])
    no_complex_clamp(input1, input2)
    if input1.dtype.category == _dtype._FLOAT and input2.dtype is input1.dtype:
        return _reduced(_cos_emb_composite(input1, input2, target, float(margin)), red)
    # PyTorch's composite reads target only through comparisons (where(target == 1, ...)): it gets no gradient
    return apply(_COS_EMB[red], (input1, input2, target.detach() if target.requires_grad else target),
                 margin=float(margin), reduction=red, int_to=_dtype.get_default_dtype().np)


def _margin_ranking_fwd(x1, x2, y, *, margin, reduction, dtype):
    # PyTorch's composite: -target * (input1 - input2) in the inputs' type, then + margin (a double: integer
    # inputs give the default float dtype)
    return reduce(_clamp_min0((-y * (x1 - x2)).astype(dtype) + margin), reduction)


_MARGIN_RANKING = by_reduction(defop("margin_ranking_loss", _margin_ranking_fwd, promote="same",
                                      grad_name="MeanBackward0"), "ClampMinBackward0")  # (unreduced: clamp_min)


def _cos_emb_composite(input1, input2, target, margin):
    """ATen's cosine_embedding_loss op by op (unreduced): the cosine from sums of products (+ 1e-12, sqrt_), then
    where(target == 1, 1 - cos, 0) + where(target == -1, (cos - margin).clamp_min_(0), 0)."""
    from ...ops.creation import tensor, zeros_like
    from ...ops.ternary import where
    from ...ops.scalar_overloads import add_scalar, sub_scalar
    d = target.ndim
    prod_sum = (input1 * input2).sum(d)
    mag1 = add_scalar((input1 * input1).sum(d), 1e-12)
    mag2 = add_scalar((input2 * input2).sum(d), 1e-12)
    cos = prod_sum / (mag1 * mag2).sqrt_()
    zeros = zeros_like(cos)
    pos = tensor(1.0, dtype=cos.dtype) - cos
    neg = sub_scalar(cos, margin).clamp_min_(0)
    t = target.detach() if target.requires_grad else target
    return where(t == 1, pos, zeros) + where(t == -1, neg, zeros)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    red = reduction_arg(size_average, reduce, reduction)
    need_number("margin_ranking_loss", margin, "margin", 4, kind="float")
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    if input1.dtype is _dtype.bool or input2.dtype is _dtype.bool:  # PyTorch: -target * (input1 - input2) ...
        _check_sub(input1, input2)
    if target.dtype is _dtype.bool:
        raise RuntimeError(_NEG_BOOL)
    no_complex_clamp(input1, input2, target)  # ... clamped at 0
    dt = common_dtype((input1, input2, target, float(margin)))
    if dt.category == _dtype._FLOAT and input1.dtype is dt and input2.dtype is dt and target.dtype is dt:
        # ATen's composite, op by op: (-target * (input1 - input2) + margin).clamp_min_(0), then mean()/sum()
        from ...ops.scalar_overloads import add_scalar
        return _reduced(add_scalar(-target * (input1 - input2), float(margin)).clamp_min_(0), red)
    return apply(_MARGIN_RANKING[red], (input1, input2, target), margin=float(margin), reduction=red, dtype=dt.np)


def _reduced(loss, reduction):
    """ATen's apply_loss_reduction: ``mean()`` (MeanBackward0), ``sum()`` (SumBackward0) or the loss itself."""
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _hinge_fwd(x, y, *, margin, reduction):
    zero = jnp.zeros((), x.dtype)
    l = jnp.where(y != 1, _clamp_min0(margin - x), zero) + jnp.where(y != -1, x, zero)
    return reduce(l, reduction)


_HINGE = by_reduction(defop("hinge_embedding_loss", _hinge_fwd, promote="float", promote_args=(0,),
                             grad_name="MeanBackward0"), "AddBackward0")  # (unreduced: the two where()s added)
# an integer input stays integer, the margin truncated to an integer (PyTorch's composite: ``margin - self``)
_HINGE_INT = defop("hinge_embedding_loss_int", _hinge_fwd, differentiable=False)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    need_tensor("hinge_embedding_loss", input)
    need_tensor("hinge_embedding_loss", target, "target", 2)
    red = reduction_arg(size_average, reduce, reduction)
    need_number("hinge_embedding_loss", margin, "margin", 3, kind="float")
    check_broadcast(target, input)  # (the formula starts from target)
    if input.dtype is _dtype.bool:  # PyTorch's composite computes margin - input, then clamps it
        _check_sub(input, input)
    no_complex_clamp(input)
    if input.dtype.category < _dtype._FLOAT and red == "mean":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.scalar_type_name(input.dtype)}")
    if input.dtype.category == _dtype._INT:
        return apply(_HINGE_INT, (input, target), margin=int(margin), reduction=red)
    if input.dtype.category == _dtype._FLOAT:  # ATen's composite, op by op (the target only compared)
        from ...ops.creation import zeros_like, tensor
        from ...ops.ternary import where
        zeros = zeros_like(input)
        margin_clamp = (tensor(float(margin), dtype=input.dtype) - input).clamp_min_(0)
        return _reduced(where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros), red)
    # PyTorch's composite reads target only through comparisons (where(target != 1, ...)): it gets no gradient
    return apply(_HINGE[red], (input, target.detach() if target.requires_grad else target), margin=float(margin),
                 reduction=red)


_SOFT_MARGIN = defop("soft_margin_loss", lambda x, y, *, reduction: reduce(jnp.log1p(jnp.exp(-y * x)), reduction),
                     promote="float", grad_name="SoftMarginLossBackward0")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    need_tensor("soft_margin_loss", input)
    need_tensor("soft_margin_loss", target, "target", 2)
    red = reduction_arg(size_average, reduce, reduction)
    check_broadcast(input, target)
    full = jnp.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    if full != tuple(input.shape):  # PyTorch's kernel writes the loss into a tensor shaped like the input
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(full)}")
    not_differentiable("soft_margin_loss", "target", target)
    if _registry.autocast_hook is not None:  # (the casts come first: the result takes the cast input's dtype)
        input, target = _registry.autocast_hook("soft_margin_loss", (input, target))
    if input.dtype is _dtype.bool:  # PyTorch's kernel starts with -input
        raise RuntimeError(_NEG_BOOL)
    res = _dtype.promote_types(input.dtype, target.dtype)
    res = res if res.category >= _dtype._FLOAT else _dtype.float32
    if res.category > input.dtype.category:  # ... and writes its float loss into a tensor like the input
        raise RuntimeError(f"result type {_dtype.scalar_type_name(res)} can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    out = apply(_SOFT_MARGIN, (input, target), reduction=red)
    # PyTorch's kernel writes -input into a tensor like the input and scales it by the target in place
    return out if out.dtype == input.dtype else out.to(input.dtype)


def _mlsm_fwd(x, y, w, *, reduction):
    l = -(y * jax.nn.log_sigmoid(x) + (1 - y) * jax.nn.log_sigmoid(-x))
    if w is not None:
        l = l * w
    l = jnp.sum(l, axis=x.ndim - 1) / x.shape[-1]
    return reduce(l, reduction)


_MLSM = by_reduction(defop("multilabel_soft_margin_loss", _mlsm_fwd, promote="same", grad_name="MeanBackward0"),
                      "DivBackward0")  # (unreduced: the sum over classes divided by their number)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    need_tensor("log_sigmoid", input)
    float_kernel_only(input, "log_sigmoid_cpu")
    if size_average is not None or reduce is not None:
        reduction = reduction_arg(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if isinstance(target, (int, float)) and not isinstance(target, Tensor):  # (PyTorch's composite multiplies
        target = Tensor._make(jnp.asarray(float(target), input.dtype.np))   # by it: a number works, as a scalar)
    if isinstance(target, (list, tuple)):  # (PyTorch's composite starts with target * logsigmoid(input))
        raise TypeError("only integer tensors of a single element can be converted to an index")
    check_broadcast(target, input)  # (the formula starts from target)
    if target.dtype is _dtype.bool:  # PyTorch's composite computes 1 - target
        _check_sub(1.0, target)
    if input.ndim == 0:  # (then sums over input.size(-1))
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.dtype.category == _dtype._FLOAT and target.dtype is input.dtype and (weight is None or
                                                                                  weight.dtype is input.dtype):
        # F.multilabel_soft_margin_loss's Python, op by op
        from .activation_smooth import logsigmoid
        loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
        if weight is not None:
            loss = loss * weight
        return _reduced(loss.sum(dim=input.ndim - 1) / input.shape[-1], reduction)
    return apply(_MLSM[reduction], (input, target, weight), reduction=reduction)


def _multilabel_margin_fwd(x, t, *, reduction):
    if x.ndim <= 1:  # (a 0-d input is one class; a vector's target may be 0-d where it has one element)
        x, t = x.reshape(-1), t.reshape(-1)
    c = x.shape[-1]
    valid = jnp.cumprod((t >= 0).astype(jnp.int32), axis=-1).astype(bool)       # targets before the first -1
    ts = jnp.where(valid, t, 0)
    is_target = jnp.any((ts[..., :, None] == jnp.arange(c)) & valid[..., :, None], axis=-2)
    xt = jnp.take_along_axis(x, ts, axis=-1)                                      # input at each target
    z = 1 - xt[..., :, None] + x[..., None, :]
    z = jnp.where(z > 0, z, jnp.zeros((), z.dtype))                               # gradient only where z > 0
    z = jnp.where(valid[..., :, None] & ~is_target[..., None, :], z, jnp.zeros((), z.dtype))
    return reduce(jnp.sum(z, axis=(-2, -1)) / c, reduction)


_MULTILABEL_MARGIN = defop("multilabel_margin_loss", _multilabel_margin_fwd, grad_name="MultilabelMarginLossBackward0")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    need_tensor("multilabel_margin_loss", input)
    need_tensor("multilabel_margin_loss", target, "target", 2)
    red = reduction_arg(size_average, reduce, reduction)
    # PyTorch's order: the shapes (multilabel_margin_loss_shape_check), the input's kernel, the target's dtype
    if not (input.ndim == 0 or input.ndim <= 2 and input.shape[-1] != 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    dim = input.shape[-1] if input.ndim else 1
    if not (tuple(target.shape) == tuple(input.shape) if input.ndim == 2 else
            target.ndim <= 1 and target.numel() == dim):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    if _registry.autocast_hook is not None:  # (on autocast's float32 list: cast before the kernel's dtype check)
        input, = _registry.autocast_hook("multilabel_margin_loss", (input,))
    float_kernel_only(input, "multilabel_margin_loss_forward_out_frame", half=False)
    if target.dtype != _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype.scalar_type_name(target.dtype)}")
    v = concrete(target)
    if v is not None and v.size and (v.min() < -1 or v.max() >= (input.shape[-1] if input.ndim else 1)):
        raise RuntimeError("argument #2 'target' is out of range")
    return apply(_MULTILABEL_MARGIN, (input, target), reduction=red)


def _multi_margin_fwd(x, t, w, *, p, margin, reduction):
    c = x.shape[-1]
    xt = jnp.take_along_axis(x, t[..., None], axis=-1)
    z = margin - xt + x
    h = jnp.where(z > 0, z if p == 1 else z * z, jnp.zeros((), z.dtype))
    h = jnp.where(jnp.arange(c) == t[..., None], jnp.zeros((), h.dtype), h)
    if w is not None:
        h = h * w[t][..., None]
    return reduce(jnp.sum(h, axis=-1) / c, reduction)


_MULTI_MARGIN = defop("multi_margin_loss", _multi_margin_fwd, grad_name="MultiMarginLossBackward0")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    need_tensor("multi_margin_loss", input)
    need_tensor("multi_margin_loss", target, "target", 2)
    red = reduction_arg(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    need_number("multi_margin_loss", margin, "margin", 4)
    if _registry.autocast_hook is not None:  # (on autocast's float32 list: cast before the kernel's dtype check)
        input, target, weight = _registry.autocast_hook("multi_margin_loss", (input, target, weight))
    float_kernel_only(input, "multi_margin_loss_cpu_kernel", half=False)
    if input.ndim > 2 or input.ndim and input.shape[-1] == 0:  # (an empty batch is allowed)
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    c = input.shape[-1] if input.ndim else 1
    n = input.shape[0] if input.ndim == 2 else 1
    if target.dtype != _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype.scalar_type_name(target.dtype)}")
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    not_differentiable("multi_margin_loss", "weight", weight)
    v = concrete(target)
    if v is not None and v.size and (v.min() < 0 or v.max() >= c):
        raise RuntimeError("target out of range")
    from ...ops.shape import reshape
    x = reshape(input, (n, c)) if input.ndim < 2 else input
    out = apply(_MULTI_MARGIN, (x, reshape(target, (n,)), weight), p=int(p), margin=float(margin), reduction=red)
    return reshape(out, ()) if red == "none" and input.ndim < 2 else out


# ----------------------------------------------------------------------------------------------------------------
# triplet losses (composites, as in PyTorch)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def _triplet(anchor, positive, negative, dist, margin, swap, reduction, aten=False):
    """``aten``: ATen's triplet_margin_loss, whose ``margin + dist_pos`` is add.Scalar (AddBackward1); F.triplet_
    margin_with_distance_loss's is Python's (AddBackward0 with the wrapped number's None edge)."""
    from ...ops.arith import minimum
    from ...ops.ternary import clamp_min
    from ...ops.scalar_overloads import add_scalar
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, dist(positive, negative))
    loss = clamp_min((add_scalar(d_pos, margin) if aten else margin + d_pos) - d_neg, 0)  # (ClampMinBackward0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    need_tensor("triplet_margin_loss", anchor, "anchor", 1)
    need_tensor("triplet_margin_loss", positive, "positive", 2)
    need_tensor("triplet_margin_loss", negative, "negative", 3)
    from .sampling import pairwise_distance
    red = reduction_arg(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    need_number("triplet_margin_loss", margin, "margin", 4, kind="float")
    need_number("triplet_margin_loss", p, "p", 5, kind="float")
    need_number("triplet_margin_loss", eps, "eps", 6, kind="float")
    need_bool("triplet_margin_loss", swap, "swap", 7)
    if _registry.autocast_hook is not None:  # one op in PyTorch, with its own autocast policy
        anchor, positive, negative = _registry.autocast_hook("triplet_margin_loss", (anchor, positive, negative))
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative, lambda a, b: pairwise_distance(a, b, p, eps), margin, swap, red,
                    aten=True)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    from .sampling import pairwise_distance
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance, margin, swap, reduction)
