"""``nll_loss`` and ``cross_entropy`` with PyTorch's exact combinations: class indices with extra dimensions
``(N, C, d1, ...)``, class probabilities, ``weight``, ``ignore_index`` and ``label_smoothing``.

The mean of ``nll_loss`` divides by the summed weights of the targets that are not ignored; its VJP gives ignored
targets exactly zero gradient (even when every target is ignored and the loss is NaN), as PyTorch's kernel does.
"""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp

from ... import _dtype
from ...ops import lazy, softmax as _softmax, tracing
from ...ops import registry as _registry
from ...ops.registry import apply, defop, overload
from ._loss_util import concrete, not_differentiable, reduction_arg
from ._args import need_int, need_number, need_tensor


def _class_axis(x):
    return 0 if x.ndim == 1 else 1


def _pick(x, t, w, ignore_index):
    """Per-target log-probability, weight (0 where ignored) and the ignore mask."""
    ax = _class_axis(x)
    ignored = t == ignore_index
    ts = jnp.where(ignored, 0, t).astype(jnp.int32)
    picked = jnp.squeeze(jnp.take_along_axis(x, jnp.expand_dims(ts, ax), axis=ax), ax)
    wt = jnp.ones(ts.shape, x.dtype) if w is None else w.astype(x.dtype)[ts]
    wt = jnp.where(ignored, jnp.zeros((), x.dtype), wt)
    return picked, wt, ignored, ts


def _nll_fwd(x, t, w, *, ignore_index, reduction):
    picked, wt, ignored, _ = _pick(x, t, w, ignore_index)
    # (a where, not only the zero weight, so that differentiating this through label smoothing gives an ignored
    # target no gradient even when all are ignored, 1 / 0 in the mean: PyTorch's backward skips them)
    loss = jnp.where(ignored, jnp.zeros((), x.dtype), -wt * picked)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return jnp.sum(loss)
    return jnp.sum(loss) / jnp.sum(wt)


def _nll_vjp(g, x, t, w, out, *, ignore_index, reduction):
    _, wt, ignored, ts = _pick(x, t, w, ignore_index)
    if reduction == "mean":
        g = g / jnp.sum(wt)
    gl = jnp.where(ignored, jnp.zeros((), x.dtype), -wt * g)
    ax = _class_axis(x)
    classes = jnp.arange(x.shape[ax]).reshape((-1,) + (1,) * (x.ndim - ax - 1))
    onehot = classes == jnp.expand_dims(ts, ax)
    return jnp.where(onehot, jnp.expand_dims(gl, ax), jnp.zeros((), x.dtype)), None, None


_NLL = defop("nll_loss", _nll_fwd, vjp=_nll_vjp, grad_name="NllLossBackward0")
# PyTorch's nll_loss_nd runs nll_loss2d's kernel for a 4-d input, and for a 3-d or wider one on views of it as
# (N, C, 1, -1): an unreduced loss then comes back through a view. The node is named for that path, per call
_NLL_2D = overload(_NLL, "NllLoss2DBackward0")
_NLL_VIEW = overload(_NLL, "ViewBackward0")


def _nll_op(ndim, reduction):
    if ndim <= 2:
        return _NLL
    return _NLL_VIEW if ndim != 4 and reduction == "none" else _NLL_2D


_CHECKED_SHAPES: set = set()  # (input, target, weight) shapes and dtypes whose structural checks passed
_CHECKED_TARGET = [None, None]  # (weakref to the last target array whose bounds passed, (classes, ignore_index))


def _check_nll(input, target, weight, ignore_index, reduction):
    """PyTorch's argument checks of nll_loss_nd (shapes, dtypes, weight size and target bounds). The structural
    checks run once per signature; the bounds check once per target array (a training loop reusing its batch
    tensors checks each once)."""
    key = (input._v.shape, input._v.dtype, target._v.shape, target._v.dtype,
           None if weight is None else (weight._v.shape, weight._v.dtype), reduction)
    if key not in _CHECKED_SHAPES:
        _check_nll_structure(input, target, weight, reduction)
        _CHECKED_SHAPES.add(key)
    if weight is not None:
        not_differentiable("nll_loss_forward", "weight", weight)
    c = input._v.shape[0 if input._v.ndim == 1 else 1]
    d = target._v if type(target._v) is lazy.ARRAY_TYPE else None
    ref, seen = _CHECKED_TARGET
    if d is not None and ref is not None and ref() is d and seen == (c, ignore_index):
        return
    v = concrete(target)
    if v is None and isinstance(target._d, jax.core.Tracer):  # (checked before torchish.compile's program runs)
        t = target._d
        tracing.defer_check((t != ignore_index) & ((t < 0) | (t >= c)), t, IndexError,
                            lambda b: f"Target {b} is out of bounds.")
    if v is not None:
        bad = v[(v != ignore_index) & ((v < 0) | (v >= c))]
        if bad.size:
            raise IndexError(f"Target {bad.reshape(-1)[0]} is out of bounds.")
        if d is not None:
            try:
                _CHECKED_TARGET[:] = [weakref.ref(d), (c, ignore_index)]
            except TypeError:  # a value that takes no weak reference is checked every time
                pass


def _check_nll_structure(input, target, weight, reduction):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and (target.ndim == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 1}).")
    xs, ts = list(input.shape), list(target.shape)
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1 and target.ndim == 1 and ts != [1]:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {ts[0]}")
    elif input.ndim == 4 and target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.ndim}")
    elif ts[1:] != xs[2:]:
        if input.ndim == 4:
            raise RuntimeError(f"size mismatch (got input: {xs} , target: {ts}")
        raise RuntimeError(f"Expected target size {[xs[0]] + xs[2:]}, got {ts}")
    c = input.shape[_class_axis(input)]
    if weight is not None and input.ndim >= 3 and weight.numel() != c:  # (nll_loss2d's check: the count only)
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if weight is not None and input.ndim < 3 and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got weight "
                           f"tensor of shape: {list(weight.shape)}")
    if target.dtype not in (_dtype.int64, _dtype.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype.scalar_type_name(target.dtype)}")
    spatial = input.ndim >= 3  # nll_loss_nd runs nll_loss2d's kernel, which reads the target as int64
    if input.dtype.category != _dtype._FLOAT:
        raise NotImplementedError(f'"nll_loss{"2d_forward" if spatial else ""}_out_frame" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    if weight is not None and weight.dtype != input.dtype:  # class weights from numpy (float64): no promotion
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    if spatial and target.dtype is _dtype.uint8 and (reduction == "none" or input.numel()):
        raise RuntimeError("expected scalar type Long but found Byte")  # (an empty reduction returns first)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    need_tensor("nll_loss_nd", input)
    need_tensor("nll_loss_nd", target, "target", 2)
    need_tensor("nll_loss_nd", weight, "weight", 3, optional=True)
    red = reduction_arg(size_average, reduce, reduction)
    need_int("nll_loss_nd", ignore_index, "ignore_index", 5)
    _check_nll(input, target, weight, ignore_index, red)
    if input.ndim == 1 and target.ndim == 1:
        target = target.reshape(())
    if weight is not None and weight.ndim != 1:  # (nll_loss2d, for 3-D and wider inputs, reads any C weights)
        weight = weight.reshape(-1)
    return apply(_nll_op(input.ndim, red), (input, target, weight), ignore_index=int(ignore_index), reduction=red)


# ----------------------------------------------------------------------------------------------------------------
# cross entropy


def _weight_view(w, x, ax):
    return w.astype(x.dtype).reshape((-1,) + (1,) * (x.ndim - ax - 1))


def _ce_smooth_fwd(x, t, w, *, ignore_index, reduction, smoothing):
    """Class indices with label smoothing: PyTorch's cross_entropy_loss_label_smoothing."""
    ax = _class_axis(x)
    c = x.shape[ax]
    logp = jax.nn.log_softmax(x, axis=ax)
    nll = _nll_fwd(logp, t, w, ignore_index=ignore_index, reduction=reduction)
    ignored = t == ignore_index
    smooth = -jnp.sum(logp if w is None else logp * _weight_view(w, x, ax), axis=ax)
    smooth = jnp.where(ignored, jnp.zeros((), smooth.dtype), smooth)
    if reduction == "mean":
        if w is None:
            ret = jnp.sum(smooth) / jnp.sum(~ignored)
        else:
            _, wt, _, _ = _pick(x, t, w, ignore_index)
            ret = jnp.sum(smooth) / jnp.sum(wt)
    elif reduction == "sum":
        ret = jnp.sum(smooth)
    else:
        ret = smooth
    return (1 - smoothing) * nll + ret * (smoothing / c)


def _ce_prob_fwd(x, t, w, *, reduction, smoothing):
    """Class probabilities: PyTorch's cross_entropy_loss_prob_target."""
    ax = _class_axis(x)
    c = x.shape[ax]
    logp = jax.nn.log_softmax(x, axis=ax)
    if smoothing > 0:
        t = t * (1 - smoothing) + smoothing / c
    prod = logp * t if w is None else logp * t * _weight_view(w, x, ax)
    if reduction == "none":
        return -jnp.sum(prod, axis=ax)
    if reduction == "sum":
        return -jnp.sum(prod)
    return -jnp.sum(prod) / (x.size / c) if x.size else jnp.full((), jnp.nan, x.dtype)


_CE_SMOOTH = defop("cross_entropy_label_smoothing", _ce_smooth_fwd, grad_name="AddBackward0")
# label smoothing mixes the target into a new tensor before PyTorch's product: a node of its own
# PyTorch's cross_entropy_loss_prob_target ends in ``-(...).sum(...)``, divided by the number of samples for the
# mean: the node is NegBackward0, or DivBackward1 for the mean (named per call)
_CE_PROB = {smooth: defop("cross_entropy_prob_target_smoothed" if smooth else "cross_entropy_prob_target",
                          _ce_prob_fwd, promote="same", promote_args=(0, 1, 2), grad_name="NegBackward0")
            for smooth in (False, True)}
_CE_PROB_MEAN = {smooth: overload(op, "DivBackward1") for smooth, op in _CE_PROB.items()}


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    need_tensor("cross_entropy_loss", input)
    need_tensor("cross_entropy_loss", target, "target", 2)
    need_tensor("cross_entropy_loss", weight, "weight", 3, optional=True)
    red = reduction_arg(size_average, reduce, reduction)
    need_int("cross_entropy_loss", ignore_index, "ignore_index", 5)
    need_number("cross_entropy_loss", label_smoothing, "label_smoothing", 6, kind="float")
    if _registry.autocast_hook is not None:  # one op in PyTorch (cross_entropy_loss), with its own policy
        input, target, weight = _registry.autocast_hook("cross_entropy_loss", (input, target, weight))
    probs = tuple(input.shape) == tuple(target.shape)
    # PyTorch checks a class-probability target first, then log_softmax's kernel refuses a non-float input
    if probs and target.dtype.category != _dtype._FLOAT:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_dtype.scalar_type_name(target.dtype)}")
    if input.dtype.category != _dtype._FLOAT:
        raise NotImplementedError(f'"log_softmax_lastdim_kernel_impl" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    ls = float(label_smoothing)
    if probs:
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        c = input.shape[_class_axis(input)] if input.ndim else 1
        if weight is not None and (weight.ndim != 1 or weight.numel() != c):
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} classes or no "
                               f"classes but got weight tensor of shape: {list(weight.shape)}")
        if ls > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls:g}")
        if weight is None and input.ndim >= 2 and input.numel() and target.dtype is input.dtype:
            return _ce_prob_composite(input, target, red, ls)
        ops = _CE_PROB_MEAN if red == "mean" else _CE_PROB
        return apply(ops[ls > 0], (input, target, weight), reduction=red, smoothing=ls)
    if ls > 0.0:
        if ls > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls:g}")
        _check_nll(input, target, weight, ignore_index, red)
        if weight is None and input.ndim >= 2:
            return _ce_smooth_composite(input, target, int(ignore_index), red, ls)
        if input.ndim == 1 and target.ndim == 1:
            target = target.reshape(())
        return apply(_CE_SMOOTH, (input, target, weight), ignore_index=int(ignore_index), reduction=red,
                     smoothing=ls)
    logp = _softmax.log_softmax(input, _class_axis(input) if input.ndim else 0)
    return nll_loss(logp, target, weight, None, ignore_index, None, red)


def _ce_prob_composite(input, target, red, ls):
    """ATen's cross_entropy_loss_prob_target (no weight) op by op: log_softmax over the classes, the target smoothed
    (``target * (1 - ls) + ls / C``), then ``-(logp * target).sum() / (numel / C)`` (DivBackward1 over NegBackward0),
    ``-(...).sum()`` or ``-(...).sum(class_dim)``."""
    from ...ops.scalar_overloads import add_scalar, div_scalar, mul_scalar
    dim = _class_axis(input)
    c = input.shape[dim]
    logp = _softmax.log_softmax(input, dim)
    if ls > 0:
        target = add_scalar(mul_scalar(target, 1 - ls), ls / c)
    prod = logp * target
    if red == "mean":
        return div_scalar(-prod.sum(), input.numel() // c)
    return -prod.sum() if red == "sum" else -prod.sum(dim)


def _ce_smooth_composite(input, target, ignore_index, red, ls):
    """ATen's cross_entropy_loss_label_smoothing (no weight) op by op: the nll_loss of log_softmax, the smoothing
    term ``-logp.sum(class_dim)`` with ignored targets filled with 0 (reduced: its sum, divided by the number of
    targets kept for the mean), then ``(1 - ls) * nll + smooth * (ls / C)`` (MulBackward1s under AddBackward0)."""
    from ...ops.scalar_overloads import mul_scalar
    dim = _class_axis(input)
    c = input.shape[dim]
    logp = _softmax.log_softmax(input, dim)
    nll = nll_loss(logp, target, None, None, ignore_index, None, red)
    ignore = target == ignore_index
    smooth = -logp.sum(dim)
    smooth.masked_fill_(ignore, 0.0)
    if red == "mean":
        smooth = smooth.sum() / (~ignore).sum()
    elif red == "sum":
        smooth = smooth.sum()
    return mul_scalar(nll, 1 - ls) + mul_scalar(smooth, ls / c)
