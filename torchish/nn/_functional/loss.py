"""torchish.nn.functional: losses.

Each loss is one registry op whose forward computes the elementwise loss and its reduction in JAX (``reduction``
is a static argument). Gradients are derived by ``jax.vjp`` except where PyTorch's backward uses its own formula:
``nll_loss`` (ignored targets get exactly zero), ``binary_cross_entropy`` (PyTorch's ``1e-12`` guard and its target
gradient). The negative-log-likelihood family (``nll_loss``, ``cross_entropy``) lives in ``_nll.py``, CTC in
``ctc.py``; both are re-exported here.
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype, _precision
from ..._tensor import Tensor
from ...ops import registry as _registry, tracing
from ...ops.registry import apply, defop, overload
from ...ops.arith import _check_sub
from ...ops.unary import _sgn
from ...ops.broadcast import broadcast_error
from ...ops.elementwise import c10_name, common_dtype
from ._loss_util import (concrete, float_kernel_only, reduce, reduction_arg, check_broadcast, EPS_BCE,
                         no_complex_clamp, not_differentiable, unreduce)
from ._nll import nll_loss, cross_entropy
from .ctc import ctc_loss
from ._args import need_bool, need_number, need_tensor

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "nll_loss", "cross_entropy",
    "ctc_loss",
]


_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
             "the `~` or `logical_not()` operator instead.")  # PyTorch's error for -x on a Bool x


def _clamp_min0(v):
    """``clamp_min(v, 0)`` with PyTorch's gradient (passes where ``v >= 0``, so at 0 too)."""
    return jnp.where(v >= 0, v, jnp.zeros((), v.dtype))


def _size_warning(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _weighted_mean(l, w, reduction, by_weight):
    if w is None:
        return reduce(l, reduction)
    l = l * w
    if reduction == "mean" and by_weight:
        return jnp.sum(l) / jnp.sum(jnp.broadcast_to(w, l.shape))
    return reduce(l, reduction)


# ----------------------------------------------------------------------------------------------------------------
# regression losses


@jax.custom_jvp
def _abs(d):
    """``|d|`` whose derivative is PyTorch's abs backward, ``sgn(d)``: 0 where ``d`` is 0 or NaN (JAX's is 1 at 0)."""
    return jnp.abs(d)


@_abs.defjvp
def _abs_jvp(primals, tangents):
    (d,), (t,) = primals, tangents
    return jnp.abs(d), _sgn(d) * t


def _regression_fwd(x, y, w, *, kind, reduction, beta):
    d = x - y
    if kind == "mse":
        l = d * d
    elif kind == "l1":
        l = jnp.abs(d) if jnp.iscomplexobj(d) else _abs(d)
    else:
        z = jnp.abs(d)
        if kind == "smooth_l1":
            l = jnp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
        else:  # huber
            l = jnp.where(z < beta, 0.5 * z * z, beta * (z - 0.5 * beta))
    if reduction == "sum" and jnp.issubdtype(l.dtype, jnp.integer):  # PyTorch sums integers as int64
        l = l.astype(jnp.int64)
    return _weighted_mean(l, w, reduction, by_weight=kind in ("mse", "l1"))


def _node_names(kind, weighted):
    """The grad_fn PyTorch shows per reduction: the loss's own node, except where its loss is a composition whose
    last step is a plain op: l1_loss is ``(input - target).abs()`` then reduced, a weighted loss is ``weight *
    loss(reduction="none")`` then reduced (mse's and l1's mean: divided by the weights' sum)."""
    if weighted:
        return {"none": "MulBackward0", "mean": "DivBackward0" if kind in ("mse", "l1") else "MeanBackward0",
                "sum": "SumBackward0"}
    if kind == "l1":
        return {"none": "AbsBackward0", "mean": "MeanBackward0", "sum": "SumBackward0"}
    own = {"mse": "MseLossBackward0", "smooth_l1": "SmoothL1LossBackward0", "huber": "HuberLossBackward0"}[kind]
    return dict.fromkeys(("none", "mean", "sum"), own)


def _regression_ops(kind, weighted):
    """One op (a weighted loss: one of its own, what it saves differs), with an entry per reduction's node name."""
    names = _node_names(kind, weighted)
    op = defop(kind + "_loss" + ("_weighted" if weighted else ""), _regression_fwd, promote="same",
               grad_name=names["mean"])
    return {red: op if name == op.grad_name else overload(op, name) for red, name in names.items()}


_REGRESSION = {(k, w, red): op for k in ("mse", "l1", "smooth_l1", "huber") for w in (False, True)
               for red, op in _regression_ops(k, w).items()}


def _by_reduction(op, none_name):
    """``op`` per reduction, under the node PyTorch's composite loss ends in: its last elementwise op unreduced
    (``none_name``), else the mean or the sum (the name chosen per call: no extra dispatch)."""
    return {"none": overload(op, none_name), "mean": overload(op, "MeanBackward0"), "sum": overload(op, "SumBackward0")}


def _regression(kind, input, target, reduction, weight, beta=0.0):
    _size_warning(input, target)
    if _registry.autocast_hook is not None:  # (the casts come first: huber's result takes the cast input's dtype)
        input, target, weight = _registry.autocast_hook(kind + "_loss", (input, target, weight))
    check_broadcast(input, target)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
    dt = _dtype.promote_types(input.dtype, target.dtype)
    if kind == "l1":  # PyTorch's l1_loss is (input - target).abs()
        _check_sub(input, target)
    if kind == "huber" and dt.category > input.dtype.category:  # PyTorch's kernel writes into a tensor like input
        raise RuntimeError(f"result type {_dtype.scalar_type_name(dt)} can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    if dt.category < _dtype._FLOAT:
        if kind == "l1" and reduction == "mean":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {_dtype.scalar_type_name(dt)}")
        if kind != "l1":
            raise NotImplementedError(f'"{kind}_cpu" not implemented for \'{_dtype.scalar_type_name(dt)}\'')
    if dt.category == _dtype._COMPLEX and kind != "l1":
        raise NotImplementedError(f'"{kind}_cpu" not implemented for \'{_dtype.scalar_type_name(dt)}\'')
    op = _REGRESSION[kind, weight is not None, reduction]
    out = apply(op, (input, target, weight), kind=kind, reduction=reduction, beta=float(beta))
    if kind == "huber":  # PyTorch's huber_loss writes into a tensor like the input (then scales it by the weight)
        dt = input.dtype if weight is None else _dtype.promote_types(input.dtype, weight.dtype)
        out = out if out.dtype == dt else out.to(dt)
    return out


def _weighted_reduction(size_average, reduce_, reduction, weight):
    if weight is not None and size_average is None and reduce_ is None and reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return reduction_arg(size_average, reduce_, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _regression("mse", input, target, _weighted_reduction(size_average, reduce, reduction, weight), weight)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _regression("l1", input, target, _weighted_reduction(size_average, reduce, reduction, weight), weight)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    red = reduction_arg(size_average, reduce, reduction)
    need_number("smooth_l1_loss", beta, "beta", 4, kind="float")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _regression("l1", input, target, red, None)
    return _regression("smooth_l1", input, target, red, None, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    red = _weighted_reduction(None, None, reduction, weight)
    need_number("huber_loss", delta, "delta", 4, kind="float")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _regression("huber", input, target, red, weight, delta)


# ----------------------------------------------------------------------------------------------------------------
# binary cross entropy


def _bce_fwd(x, t, w, *, reduction):
    l = (t - 1) * jnp.maximum(jnp.log1p(-x), -100) - t * jnp.maximum(jnp.log(x), -100)
    return reduce(l if w is None else l * w, reduction)


def _bce_vjp(g, x, t, w, out, *, reduction):
    gg = unreduce(g, x.shape, reduction)
    if w is not None:
        gg = gg * w
    gx = gg * (x - t) / jnp.maximum((1 - x) * x, EPS_BCE)
    gt = -gg * jnp.log(x / (1 - x))
    return gx, gt, None


_BCE = defop("binary_cross_entropy", _bce_fwd, vjp=_bce_vjp, grad_name="BinaryCrossEntropyBackward0")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    red = reduction_arg(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    if _registry.autocast_hook is not None:  # float32 under CPU autocast, an error under CUDA autocast
        input, target, weight = _registry.autocast_hook("binary_cross_entropy", (input, target, weight))
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_type_name(target.dtype)} but expected "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    float_kernel_only(input, "binary_cross_entropy")
    if weight is not None:
        from ...ops.broadcast import broadcast_shapes, expand
        not_differentiable("binary_cross_entropy", "weight", weight)
        weight = expand(weight, broadcast_shapes(target.shape, weight.shape))
        weight = weight.to(input.dtype)  # PyTorch's kernel scales the loss in place: a float64 weight keeps float32
    # PyTorch's kernel checks every input element, then every target element (NaN fails both checks)
    for name, arg in (("input", input), ("target", target)):
        v = concrete(arg)
        if v is None and isinstance(arg._d, jax.core.Tracer):  # (checked before torchish.compile's program runs,
            d = arg._d                                         # unless computed from the state the step writes)
            tracing.defer_check(~((d >= 0) & (d <= 1)), d, RuntimeError,
                                lambda b, name=name: f"all elements of {name} should be between 0 and 1")
        if v is not None and not ((v >= 0) & (v <= 1)).all():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    if weight is not None:  # (the kernel scales its loss, of the input's shape, by the weight in place)
        _inplace_product(tuple(input.shape), tuple(weight.shape))
    return apply(_BCE, (input, target, weight), reduction=red)


def _bce_logits_fwd(x, t, w, pw, *, reduction):
    ls = jax.nn.log_sigmoid(x)
    if pw is not None:
        ls = ls * ((pw - 1) * t + 1)
    l = (1 - t) * x - ls
    return reduce(l if w is None else l * w, reduction)


def _bce_logits_vjp(g, x, t, w, pw, out, reduction):
    """PyTorch's binary_cross_entropy_with_logits_backward for the input, one tensor op at a time (each rounded
    to a float16/bfloat16 input's dtype): ``(sigmoid(x) - t) * grad``, with pos_weight
    ``((pw * t + 1 - t) * sigmoid(x) - pw * t) * grad``, then ``* weight`` and ``/ numel`` for the mean; JAX's
    derivative of the forward (log_sigmoid's) rounded differently in 79% of float32 gradients. The target's
    gradient is JAX's derivative of the forward."""
    gt = jax.vjp(lambda tt: _bce_logits_fwd(x, tt, w, pw, reduction=reduction), t)[1](g)[0]
    wide, r = _precision.stepper(x.dtype)
    xw, tw, gw = wide(x), wide(t), jnp.broadcast_to(wide(g), x.shape)
    sig = r(jax.nn.sigmoid(xw))
    if pw is None:
        gx = r(r(sig - tw) * gw)
    else:
        # (XLA:CPU at its default optimisation level contracts pw * t + 1 into an FMA: 25% of float32 gradients
        # still differ there; float16/bfloat16 and the suite's optimisation level match)
        pt = r(wide(pw) * tw)
        gx = r(r(r(r(r(pt + 1) - tw) * sig) - pt) * gw)
    if w is not None:
        gx = r(gx * wide(w))
    if reduction == "mean":
        gx = r(gx / x.size)
    return gx.astype(x.dtype), gt, None, None


_BCE_LOGITS = defop("binary_cross_entropy_with_logits", _bce_logits_fwd, vjp=_bce_logits_vjp, promote="same",
                    grad_name="BinaryCrossEntropyWithLogitsBackward0")


def _inplace_product(shape, other):
    """The shape check of PyTorch's ``t.mul_(other)`` on a tensor of ``shape``."""
    try:
        full = np.broadcast_shapes(shape, other)
    except ValueError:
        raise broadcast_error(shape, other) from None
    if tuple(full) != tuple(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(full)}")


def _bce_logits_shapes(input, target, weight, pos_weight):
    """PyTorch's kernel multiplies log_sigmoid(input) in place by ``(pos_weight - 1) * target + 1``, then the loss in
    place by ``weight``: pos_weight meets the target first, and neither may grow the loss beyond the input's shape."""
    shape = tuple(input.shape)
    if pos_weight is not None:
        pw, t = tuple(pos_weight.shape), tuple(target.shape)
        try:
            log_weight = tuple(np.broadcast_shapes(pw, t))
        except ValueError:
            raise broadcast_error(pw, t) from None
        _inplace_product(shape, log_weight)
    if weight is not None:
        _inplace_product(shape, tuple(weight.shape))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    red = reduction_arg(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    float_kernel_only(input, "log_sigmoid_cpu")  # (PyTorch's kernel starts with log_sigmoid(input))
    if target.dtype.category < _dtype._FLOAT:
        raise RuntimeError(f"result type {_dtype.scalar_type_name(input.dtype)} can't be cast to the desired output "
                           f"type {_dtype.scalar_type_name(target.dtype)}")
    not_differentiable("binary_cross_entropy_with_logits", "weight", weight)
    not_differentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    _bce_logits_shapes(input, target, weight, pos_weight)
    out = apply(_BCE_LOGITS, (input, target, weight, pos_weight), reduction=red)
    if target._view is not None or target._layout is not None:
        from ...ops.out_layout import set_output_layout
        set_output_layout(out, (target,))
    # PyTorch builds the loss from (1 - target) and updates it in place: it has the target's dtype (a float32
    # target with float64 logits, weight or pos_weight gives float32) and strides
    return out if out.dtype == target.dtype else out.to(target.dtype)


# ----------------------------------------------------------------------------------------------------------------
# divergences and likelihoods


def _kl_fwd(x, t, *, reduction, log_target):
    l = jnp.exp(t) * (t - x) if log_target else jax.scipy.special.xlogy(t, t) - t * x
    if reduction == "batchmean":
        return jnp.sum(l) / x.shape[0] if x.ndim else jnp.sum(l)
    return reduce(l, reduction)


# log_target picks another formula of PyTorch's (exp(target) * (target - input)), which saves other tensors
_KL_BASE = {log: defop("kl_div_log_target" if log else "kl_div", _kl_fwd, promote="same", grad_name="SubBackward0")
            for log in (False, True)}
# PyTorch's kl_div is a composite whose top node is its last op: the formula's sub (mul with log_target) unreduced,
# else its mean or sum, and F.kl_div divides a batchmean sum by the batch size (not for a 0-d input): the node is
# named per call from these (one op each, no extra dispatch)
_KL_TOP = {"mean": "MeanBackward0", "sum": "SumBackward0", "batchmean": "DivBackward0"}
_KL_DIV = {(log, name): overload(op, name) for log, op in _KL_BASE.items()
           for name in {"MulBackward0" if log else "SubBackward0", *_KL_TOP.values()}}


def _kl_op(reduction, log_target, ndim):
    if reduction == "none":
        name = "MulBackward0" if log_target else "SubBackward0"
    else:
        name = _KL_TOP["sum" if reduction == "batchmean" and not ndim else reduction]
    return _KL_DIV[log_target, name]


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    need_tensor("kl_div", input)
    need_tensor("kl_div", target, "target", 2)
    if size_average is not None or reduce is not None:
        red = reduction_arg(size_average, reduce, reduction)
    elif reduction == "batchmean":
        red = "batchmean"
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = reduction_arg(None, None, reduction)
    need_bool("kl_div", log_target, "log_target")
    if input.dtype.category < _dtype._FLOAT or target.dtype.category < _dtype._FLOAT:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if input.dtype.category == _dtype._COMPLEX or target.dtype.category == _dtype._COMPLEX:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    check_broadcast(target, input)  # (the formula starts from target)
    return apply(_kl_op(red, bool(log_target), input.ndim), (input, target), reduction=red,
                 log_target=bool(log_target))


def _poisson_fwd(x, t, *, log_input, full, eps, reduction):
    l = jnp.exp(x) - t * x if log_input else x - t * jnp.log(x + eps)
    if full:
        stirling = t * jnp.log(t) - t + 0.5 * jnp.log(2 * math.pi * t)
        l = l + jnp.where(t <= 1, jnp.zeros((), l.dtype), stirling)
    return reduce(l, reduction)


# log_input picks PyTorch's formula (exp(input) - target * input, or input - target * log(input + eps))
_POISSON = {log: defop("poisson_nll_loss_log_input" if log else "poisson_nll_loss", _poisson_fwd, promote="float",
                       grad_name="MeanBackward0") for log in (False, True)}
# unreduced, PyTorch's last op is the formula's sub, or the add of the Stirling term (full)
_POISSON_BY = {(log, full): _by_reduction(op, "AddBackward0" if full else "SubBackward0")
               for log, op in _POISSON.items() for full in (False, True)}


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    need_tensor("poisson_nll_loss", input)
    need_tensor("poisson_nll_loss", target, "target", 2)
    red = reduction_arg(size_average, reduce, reduction)
    need_number("poisson_nll_loss", eps, "eps", 5, kind="float")
    check_broadcast(target, input)  # (the formula starts from target)
    # PyTorch's composite: exp(input) - target * input (a Bool product when both are Bool), or input - (a float)
    if input.dtype is _dtype.bool and (not log_input or target.dtype is _dtype.bool):
        _check_sub(0.0, input)
    return apply(_POISSON_BY[bool(log_input), bool(full)][red], (input, target), log_input=bool(log_input),
                 full=bool(full), eps=float(eps), reduction=red)


def _gaussian_fwd(x, t, v, *, full, eps, reduction):
    v = v + jax.lax.stop_gradient(jnp.maximum(v, eps) - v)  # clamped without recording, as PyTorch's no_grad clamp_
    l = 0.5 * (jnp.log(v) + (x - t) ** 2 / v)
    if full:
        l = l + 0.5 * math.log(2 * math.pi)
    return reduce(l, reduction)


_GAUSSIAN = defop("gaussian_nll_loss", _gaussian_fwd, promote="same", grad_name="MeanBackward0")
# unreduced, PyTorch's last op is ``0.5 * (...)``, or the add of the constant (full)
_GAUSSIAN_BY = {full: _by_reduction(_GAUSSIAN, "AddBackward0" if full else "MulBackward0") for full in (False, True)}


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    from ...ops.shape import unsqueeze
    from ...ops.arith import mul
    from ...ops.creation import ones_like
    int_var = isinstance(var, Tensor) and var.dtype.category == _dtype._INT
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = mul(ones_like(input), float(var))  # (PyTorch's: an integer input gives a default-float var)
    else:
        if var.dtype.category == _dtype._COMPLEX:  # PyTorch's composite compares var with 0
            raise NotImplementedError(f'"lt_cpu" not implemented for \'{_dtype.scalar_type_name(var.dtype)}\'')
        v = concrete(var)
        if v is not None and (v < 0).any():
            raise ValueError("var has negative entry/entries")
    vs, xs = tuple(var.shape), tuple(input.shape)
    if vs != xs:
        if xs[:-1] == vs:
            var = unsqueeze(var, -1)
        elif not (len(xs) == len(vs) and sum(b for a, b in zip(xs, vs) if a != b) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if int_var:  # PyTorch's composite clamps (a copy of) var in place to the float eps
        raise RuntimeError(f"result type Float can't be cast to the desired output type {c10_name(var.dtype)}")
    return apply(_GAUSSIAN_BY[bool(full)][reduction], (input, target, var), full=bool(full), eps=float(eps),
                 reduction=reduction)


# ----------------------------------------------------------------------------------------------------------------
# margin losses


def _cos_emb_fwd(x1, x2, y, *, margin, reduction):
    axis = y.ndim
    prod = jnp.sum(x1 * x2, axis=axis)
    m1 = jnp.sum(x1 * x1, axis=axis) + 1e-12
    m2 = jnp.sum(x2 * x2, axis=axis) + 1e-12
    cos = prod / jnp.sqrt(m1 * m2)
    zero = jnp.zeros((), cos.dtype)
    l = jnp.where(y == 1, 1 - cos, zero) + jnp.where(y == -1, _clamp_min0(cos - margin), zero)
    return reduce(l, reduction)


_COS_EMB = _by_reduction(defop("cosine_embedding_loss", _cos_emb_fwd, promote="same", promote_args=(0, 1),
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
    # PyTorch's composite reads target only through comparisons (where(target == 1, ...)): it gets no gradient
    return apply(_COS_EMB[red], (input1, input2, target.detach() if target.requires_grad else target),
                 margin=float(margin), reduction=red)


def _margin_ranking_fwd(x1, x2, y, *, margin, reduction, dtype):
    # PyTorch's composite: -target * (input1 - input2) in the inputs' type, then + margin (a double: integer
    # inputs give the default float dtype)
    return reduce(_clamp_min0((-y * (x1 - x2)).astype(dtype) + margin), reduction)


_MARGIN_RANKING = _by_reduction(defop("margin_ranking_loss", _margin_ranking_fwd, promote="same",
                                      grad_name="MeanBackward0"), "ClampMinBackward0")  # (unreduced: clamp_min)


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
    return apply(_MARGIN_RANKING[red], (input1, input2, target), margin=float(margin), reduction=red, dtype=dt.np)


def _hinge_fwd(x, y, *, margin, reduction):
    zero = jnp.zeros((), x.dtype)
    l = jnp.where(y != 1, _clamp_min0(margin - x), zero) + jnp.where(y != -1, x, zero)
    return reduce(l, reduction)


_HINGE = _by_reduction(defop("hinge_embedding_loss", _hinge_fwd, promote="float", promote_args=(0,),
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


_MLSM = _by_reduction(defop("multilabel_soft_margin_loss", _mlsm_fwd, promote="same", grad_name="MeanBackward0"),
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
    check_broadcast(target, input)  # (the formula starts from target)
    if target.dtype is _dtype.bool:  # PyTorch's composite computes 1 - target
        _check_sub(1.0, target)
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


def _triplet(anchor, positive, negative, dist, margin, swap, reduction):
    from ...ops.arith import minimum
    from ...ops.ternary import clamp_min
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, dist(positive, negative))
    loss = clamp_min(margin + d_pos - d_neg, 0)  # (PyTorch's ClampMinBackward0)
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
    return _triplet(anchor, positive, negative, lambda a, b: pairwise_distance(a, b, p, eps), margin, swap, red)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    from .sampling import pairwise_distance
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance, margin, swap, reduction)
