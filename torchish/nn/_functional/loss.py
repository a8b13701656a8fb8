"""torchish.nn.functional: losses.

Each loss is one registry op whose forward computes the elementwise loss and its reduction in JAX (``reduction``
is a static argument). Gradients are derived by ``jax.vjp`` except where PyTorch's backward uses its own formula:
``nll_loss`` (ignored targets get exactly zero), ``binary_cross_entropy`` (PyTorch's ``1e-12`` guard and its target
gradient). The negative-log-likelihood family (``nll_loss``, ``cross_entropy``) lives in ``_nll.py``, CTC in
``ctc.py``; both are re-exported here. The margin, ranking and triplet losses live in ``loss_margin.py``.
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
from ...ops.broadcast import broadcast_error
from ...ops.elementwise import c10_name
from ._loss_util import (by_reduction, concrete, float_kernel_only, reduce, reduction_arg, check_broadcast, EPS_BCE,
                         not_differentiable, unreduce)
from ._nll import nll_loss, cross_entropy
from .ctc import ctc_loss
from ._args import need_bool, need_number, need_tensor

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "nll_loss", "cross_entropy", "ctc_loss",
]


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


def _regression_fwd(x, y, w, *, kind, reduction, beta):
    d = x - y
    if kind == "mse":
        l = d * d
    else:
        z = jnp.abs(d)
        if kind == "smooth_l1":
            l = jnp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
        else:  # huber
            l = jnp.where(z < beta, 0.5 * z * z, beta * (z - 0.5 * beta))
    if reduction == "sum" and jnp.issubdtype(l.dtype, jnp.integer):  # PyTorch sums integers as int64
        l = l.astype(jnp.int64)
    return _weighted_mean(l, w, reduction, by_weight=kind == "mse")


def _node_names(kind, weighted):
    """The grad_fn PyTorch shows per reduction: the loss's own node, except for a weighted loss, ``weight *
    loss(reduction="none")`` then reduced (mse's mean: divided by the weights' sum). (l1_loss is a composite of
    ops: :func:`_l1_composite`.)"""
    if weighted:
        return {"none": "MulBackward0", "mean": "DivBackward0" if kind == "mse" else "MeanBackward0",
                "sum": "SumBackward0"}
    own = {"mse": "MseLossBackward0", "smooth_l1": "SmoothL1LossBackward0", "huber": "HuberLossBackward0"}[kind]
    return dict.fromkeys(("none", "mean", "sum"), own)


def _regression_ops(kind, weighted):
    """One op (a weighted loss: one of its own, what it saves differs), with an entry per reduction's node name."""
    names = _node_names(kind, weighted)
    op = defop(kind + "_loss" + ("_weighted" if weighted else ""), _regression_fwd, promote="same",
               grad_name=names["mean"])
    return {red: op if name == op.grad_name else overload(op, name) for red, name in names.items()}


_REGRESSION = {(k, w, red): op for k in ("mse", "smooth_l1", "huber") for w in (False, True)
               for red, op in _regression_ops(k, w).items()}


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
    if kind == "l1":
        return _l1_composite(input, target, reduction, weight)
    op = _REGRESSION[kind, weight is not None, reduction]
    out = apply(op, (input, target, weight), kind=kind, reduction=reduction, beta=float(beta))
    if kind == "huber":  # PyTorch's huber_loss writes into a tensor like the input (then scales it by the weight)
        dt = input.dtype if weight is None else _dtype.promote_types(input.dtype, weight.dtype)
        out = out if out.dtype == dt else out.to(dt)
    return out


def _expanded(t, shape):
    """``t`` as ``torch.broadcast_tensors`` gives it: itself where it has the shape, else its expand (a view)."""
    return t if tuple(t.shape) == shape else t.expand(shape)


def _l1_composite(input, target, reduction, weight):
    """PyTorch's l1_loss, op by op: ``(input - target).abs()`` of the broadcast operands (``at::l1_loss``), reduced
    by ``mean()``/``sum()``; weighted (F.l1_loss's Python): ``* weight``, its mean ``sum() / weight.sum()``. The
    graph (MeanBackward0 over AbsBackward0 over SubBackward0) and the rounding are PyTorch's."""
    from ...ops.broadcast import broadcast_shapes
    shape = tuple(broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    l = (_expanded(input, shape) - _expanded(target, shape)).abs()
    if weight is not None:
        l = l * weight
        if reduction == "mean":
            return l.sum() / weight.sum()
    return l if reduction == "none" else l.mean() if reduction == "mean" else l.sum()


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
    need_tensor("binary_cross_entropy_with_logits", weight, "weight", 3, optional=True)  # (its op's parser)
    need_tensor("binary_cross_entropy_with_logits", pos_weight, "pos_weight", 4, optional=True)
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
    if input.dtype is target.dtype:  # ATen's composite and F.kl_div's batchmean division, op by op
        from ...ops.unary import exp
        from ...special import xlogy
        l = exp(target) * (target - input) if log_target else xlogy(target, target) - target * input
        if red == "batchmean":
            l = l.sum()
            return l / input.shape[0] if input.ndim else l
        return l.mean() if red == "mean" else l.sum() if red == "sum" else l
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
_POISSON_BY = {(log, full): by_reduction(op, "AddBackward0" if full else "SubBackward0")
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
    if input.dtype.category == _dtype._FLOAT and target.dtype is input.dtype:  # ATen's composite, op by op
        from ...ops.scalar_overloads import add_scalar
        loss = input.exp() - target * input if log_input else input - target * add_scalar(input, float(eps)).log()
        if full:
            stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
            loss += stirling.masked_fill(target <= 1, 0)
        return loss.mean() if red == "mean" else loss.sum() if red == "sum" else loss
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
_GAUSSIAN_BY = {full: by_reduction(_GAUSSIAN, "AddBackward0" if full else "MulBackward0") for full in (False, True)}


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
    if input.dtype.category == _dtype._FLOAT and target.dtype is input.dtype and var.dtype is input.dtype:
        from ...autograd.grad_mode import no_grad
        var = var.clone()  # F.gaussian_nll_loss, op by op: var clamped in place without recording
        with no_grad():
            var.clamp_(min=eps)
        loss = 0.5 * (var.log() + (input - target) ** 2 / var)
        if full:
            loss += 0.5 * math.log(2 * math.pi)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    return apply(_GAUSSIAN_BY[bool(full)][reduction], (input, target, var), full=bool(full), eps=float(eps),
                 reduction=reduction)
