"""torchish.nn.functional: batch, layer, group, instance and RMS normalisation (local-response norm: its own
file, re-exported here).

Each normalisation is ONE registry op (statistics, normalisation and the affine transform in one kernel; gradients
derived by JAX). Running statistics are updated IN PLACE on the caller's buffer Tensors (``copy_`` under
``no_grad``), as PyTorch does, so ``torchish.compile`` sees them as state: the update is a separate small op, so the
saved inputs of the normalisation are never the buffers that are overwritten.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _dtype
from ... import _precision
from ..._global_flags import warn_once
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE, no_grad
from ...ops.casting import ACC
from ...ops.registry import apply, defop
from ...ops.unary import rsqrt_values
from ._args import need_bool, need_int, need_int_list, need_number, need_tensor, need_tensor_attr

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm"]


def _acc(x):
    """Statistics of half-precision inputs are computed in float32, as PyTorch's CPU and CUDA kernels do."""
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x


def _affine(y, w, b, shape):
    """``y * w + b``, the multiply-add rounded once (:func:`_precision.fma`) as PyTorch's CPU kernels do."""
    if w is not None and b is not None:
        return _precision.fma(y, w.reshape(shape), b.reshape(shape))
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def _rstd(var, eps):
    """``1 / sqrt(var + eps)``: PyTorch's kernels divide (two roundings; XLA's rsqrt rounds once)."""
    return _precision.div(1, jnp.sqrt(var + eps))


# ----------------------------------------------------------------------------------------------------------------
# running statistics


def _ema_fwd(rm, rv, mean, var, momentum):
    """PyTorch's update: ``(1 - momentum) * running + momentum * batch`` (``var`` is the unbiased batch variance)."""
    return ((1 - momentum) * rm + momentum * mean.astype(rm.dtype),
            (1 - momentum) * rv + momentum * var.astype(rv.dtype))


_EMA = defop("running_stats_update", _ema_fwd, differentiable=False)


def _update_running(running_mean, running_var, mean, var, momentum):
    """Write the new running statistics into the buffers, in place and outside the graph."""
    with no_grad():
        m = momentum if not isinstance(momentum, Tensor) else momentum.detach()
        rm = running_mean if running_mean is not None else Tensor._make(jnp.zeros(mean.shape, mean._v.dtype))
        rv = running_var if running_var is not None else Tensor._make(jnp.ones(var.shape, var._v.dtype))
        new_rm, new_rv = apply(_EMA, (rm, rv, mean.detach(), var.detach(), m))
        if running_mean is not None:
            running_mean.copy_(new_rm)
        if running_var is not None:
            running_var.copy_(new_rv)


# ----------------------------------------------------------------------------------------------------------------
# batch norm


def _bn_stats(x, axes, eps, mixed=False):
    """Batch statistics as PyTorch's CPU batch_norm saves them: ``mean`` and ``invstd = 1 / sqrt(var + eps)``; also
    the widened input and the biased variance (unrounded, for the running statistics).

    The sums are accumulated as PyTorch's (:func:`_bn_sum`): a float32 mean an ulp off, times the batch size, is
    all the backward of a loss that does not depend on the batch's mean (the sum of a BN output) leaves, and XLA's
    float32 sum is that far off. The statistics are stored in the parameters' type (``param_t``): a float16/bfloat16
    input's in its own dtype, or float32 in the ``mixed`` kernel (float32 weights or running statistics with a half
    input, as under autocast); invstd is computed in the input's accumulate type (double for float32) from the
    variance, which a bfloat16 kernel rounds (the sum of squares, then its quotient by the count in bfloat16)."""
    wide, r = _precision.stepper(x.dtype)
    rp = (lambda v: v) if mixed else r
    xw = wide(x)
    n = math.prod(x.shape[a] for a in axes)
    acc = ACC.get(x.dtype, x.dtype)
    mean = (jnp.sum(xw.astype(acc), axis=axes, keepdims=True) / n).astype(xw.dtype)
    var_sum = _bn_sum(jnp.square(xw - mean), axes, acc)
    if x.dtype == jnp.bfloat16 and not mixed:  # (PyTorch's float16 kernel keeps the variance in float32)
        var = r(_precision.div(r(var_sum), float(np.asarray(n, x.dtype))))
    else:
        var = _precision.div(var_sum, n)
    invstd = rp(_precision.div(1.0, jnp.sqrt(var.astype(acc) + eps)).astype(xw.dtype))
    return xw, rp(mean), invstd, mean, var_sum / n


def _bn_sum(v, axes, acc):
    """The sum over ``axes`` (kept) accumulated in ``acc`` as PyTorch's CPU batch norm does (``acc_type``: double for
    a float32 input, float32 for a half one), stored in ``v``'s dtype."""
    return jnp.sum(v.astype(acc), axis=axes, keepdims=True).astype(v.dtype)


def _bn_weight_grad(centered, g, invstd, axes, acc):
    """``dot(x - mean, dy) * invstd``: PyTorch multiplies the accumulator (double for a float32 input) by invstd
    before storing, one rounding."""
    return (jnp.sum((centered * g).astype(acc), axis=axes, keepdims=True) * invstd.astype(acc)).astype(g.dtype)


def _bn_normalize(x, w, b, axes, eps, mixed=False):
    """PyTorch's batch_norm transform from the saved statistics: ``x * alpha + beta`` with ``alpha = invstd * w``,
    ``beta = b - mean * alpha`` (float32 for half inputs, rounded once)."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    wide = _precision.stepper(x.dtype)[0]
    xw, mean, invstd, mean_exact, var = _bn_stats(x, axes, eps, mixed)
    alpha = invstd if w is None else invstd * wide(w).reshape(shape)
    beta = -mean * alpha if b is None else _precision.fma(-mean, alpha, wide(b).reshape(shape))
    return _precision.fma(xw, alpha, beta).astype(x.dtype), mean_exact, var


def _bn_grad(g, x, w, axes, eps, mixed=False):
    """PyTorch's batch_norm backward (training) from the saved statistics:
    ``dx = (dy - sum(dy) / n - (x - mean) * k) * invstd * w`` with ``k = dot(x - mean, dy) * invstd^2 / n``;
    ``dw = dot(x - mean, dy) * invstd``, ``db = sum(dy)``."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    wide = _precision.stepper(x.dtype)[0]
    xw, mean, invstd, _, _ = _bn_stats(x, axes, eps, mixed)
    gw = wide(g)
    n = math.prod(x.shape[a] for a in axes)
    centered = xw - mean
    acc = ACC.get(x.dtype, x.dtype)
    dotp = _bn_sum(centered * gw, axes, acc)
    total = _bn_sum(gw, axes, acc)
    k = _precision.div(dotp * invstd * invstd, n)
    grad_mean = _precision.div(total, n)
    dx = (gw - grad_mean - centered * k) * invstd
    if w is not None:
        dx = dx * wide(w).reshape(shape)
    return dx.astype(x.dtype), _bn_weight_grad(centered, gw, invstd, axes, acc), total


def _bn_train_fwd(x, w, b, *, eps, mixed=False):
    axes = (0,) + tuple(range(2, x.ndim))
    y, mean, var = _bn_normalize(x, w, b, axes, eps, mixed)
    n = x.size // max(x.shape[1], 1)                                 # > 1: checked by the caller
    unbiased = var * (n / max(n - 1, 1))
    return y, mean.reshape(-1), unbiased.reshape(-1)


def _bn_train_vjp(g, x, w, b, out, eps, mixed=False):
    axes = (0,) + tuple(range(2, x.ndim))
    dx, dw, db = _bn_grad(g[0], x, w, axes, eps, mixed)
    return (dx, None if w is None else dw.reshape(-1).astype(w.dtype),
            None if b is None else db.reshape(-1).astype(b.dtype))


def _bn_eval_terms(x, w, rm, rv, eps):
    """PyTorch's batch_norm from the running statistics: ``invstd = 1 / sqrt(running_var + eps)`` (float32 for a
    half input), ``alpha = invstd * w``; with the widened input, mean and the broadcast shape."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    wide = _precision.stepper(x.dtype)[0]
    invstd = _rstd(wide(rv).reshape(shape), eps)
    alpha = invstd if w is None else invstd * wide(w).reshape(shape)
    return wide(x), wide(rm).reshape(shape), invstd, alpha, shape


def _bn_eval_fwd(x, w, b, rm, rv, *, eps):
    """``x * alpha + beta`` with ``beta = b - mean * alpha``, each multiply-add rounded once (PyTorch's
    batch_norm_cpu_collect_linear_and_constant_terms and its transform)."""
    xw, mean, _, alpha, shape = _bn_eval_terms(x, w, rm, rv, eps)
    wide = _precision.stepper(x.dtype)[0]
    beta = -mean * alpha if b is None else _precision.fma(-mean, alpha, wide(b).reshape(shape))
    return _precision.fma(xw, alpha, beta).astype(x.dtype)


def _bn_eval_vjp(g, x, w, b, rm, rv, out, eps):
    """PyTorch's batch_norm backward in evaluation mode: ``dx = dy * invstd * w``, ``dw = dot(x - mean, dy) *
    invstd``, ``db = sum(dy)`` (the sums accumulated as the training kernel's); none for the running statistics."""
    xw, mean, invstd, _, shape = _bn_eval_terms(x, w, rm, rv, eps)
    if x.dtype == jnp.float32:  # (its float32 backward adds the double eps: invstd in double, rounded to float)
        invstd = _rstd(rv.astype(jnp.float64).reshape(shape), eps).astype(jnp.float32)
    gw = _precision.stepper(x.dtype)[0](g)
    axes = (0,) + tuple(range(2, x.ndim))
    acc = ACC.get(x.dtype, x.dtype)
    dx = gw * invstd if w is None else gw * invstd * _precision.stepper(x.dtype)[0](w).reshape(shape)
    dw = None if w is None else _bn_weight_grad(xw - mean, gw, invstd, axes, acc).reshape(-1).astype(w.dtype)
    db = None if b is None else _bn_sum(gw, axes, acc).reshape(-1).astype(b.dtype)
    return dx.astype(x.dtype), dw, db, None, None


_BN_TRAIN = defop("batch_norm", _bn_train_fwd, vjp=_bn_train_vjp, grad_name="NativeBatchNormBackward0")
_BN_EVAL = defop("batch_norm_eval", _bn_eval_fwd, vjp=_bn_eval_vjp, grad_name="NativeBatchNormBackward0")
# instance_norm with the running statistics: PyTorch's batch_norm of repeated weight and statistics (temporaries)
# (PyTorch's instance_norm is batch_norm of the input viewed as one sample, viewed back: its output's node is a view)
_IN_EVAL = defop("instance_norm_eval", _bn_eval_fwd, vjp=_bn_eval_vjp, grad_name="ViewBackward0")


def _check_vec(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _check_dtypes(kernel, input, *params, kernel_first=False, complex_ok=False):
    """PyTorch's CPU norm kernels: parameters of the input's dtype (float32 ones may go with a float16/bfloat16
    input), and a real floating point input (``complex_ok``: or complex; checked first by batch_norm's kernel,
    last by the others)."""
    ok = (_dtype._FLOAT, _dtype._COMPLEX) if complex_ok else (_dtype._FLOAT,)
    if kernel_first and input.dtype.category not in ok:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    mixed_ok = input.dtype in (_dtype.float16, _dtype.bfloat16)
    for p in params:
        if p is not None and p.dtype != input.dtype and not (mixed_ok and p.dtype is _dtype.float32):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if input.dtype.category not in ok:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')


def _need_norm_tensors(fname, input, weight, bias, running_mean, running_var):
    """PyTorch's TypeError for a non-Tensor argument of the batch/instance norm kernels (aten's positions)."""
    need_tensor(fname, input)
    for pos, (arg, t) in enumerate((("weight", weight), ("bias", bias), ("running_mean", running_mean),
                                    ("running_var", running_var)), start=2):
        need_tensor(fname, t, arg, pos, optional=True)


def _check_running_no_grad(running_mean, running_var):
    """PyTorch's autograd wrapper of ``native_batch_norm`` (also under instance_norm): the running statistics are
    not differentiable, so one that requires grad is an error while grad mode is on, before the kernel's checks."""
    if not STATE.grad_enabled:
        return
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.requires_grad:
            raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")


def _batch_norm_of_nothing(input, weight, bias):
    """PyTorch's batch_norm of an input without elements (an empty batch or spatial dim), in either mode and before
    its other checks: a copy of the input times ``weight[0]`` plus ``bias[0]``; no statistics, so the running ones
    are left as they are (and the weight and bias gradients are zeros)."""
    out = input.clone()
    if weight is not None:
        out = out * weight.select(0, 0)
    if bias is not None:
        out = out + bias.select(0, 0)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) over the batch and spatial dims.

    In training the batch statistics are used and, when given, ``running_mean``/``running_var`` are updated in
    place: ``running = (1 - momentum) * running + momentum * batch`` (the unbiased variance). In evaluation the
    running statistics are used.

    Example::

        >>> rm, rv = torchish.zeros(3), torchish.ones(3)
        >>> y = F.batch_norm(torchish.randn(4, 3), rm, rv, training=True)   # rm, rv updated in place
    """
    if training:  # PyTorch's wrapper reads input.size() first
        need_tensor_attr(input, "size")
    _need_norm_tensors("batch_norm", input, weight, bias, running_mean, running_var)
    if training:  # (the wrapper's _verify_batch_size: size[0] times the spatial sizes; a 0-d input has no size[0])
        if input.ndim == 0:
            raise IndexError("tuple index out of range")
        if input.shape[0] * math.prod(input.shape[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    # PyTorch's wrapper checks eps, then its op's parser the flags and floats, then the kernel the rest
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    need_bool("batch_norm", training, "training", 6)
    need_number("batch_norm", momentum, "momentum", 7, kind="float")
    need_number("batch_norm", eps, "eps", 8, kind="float")
    if input.numel() == 0:  # (before any other check, whatever the rank)
        return _batch_norm_of_nothing(input, weight, bias)
    _check_running_no_grad(running_mean, running_var)
    c = input.shape[1] if input.ndim >= 2 else 0  # (PyTorch's kernel finds no channels in a 0-d or 1-d input)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is None and not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")
        _check_vec(name, t, c)
    if input.ndim == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if input.ndim == 0:  # (PyTorch's kernel fails reading the missing channel dimension)
        raise RuntimeError("batch_norm: expected an input of at least 2 dimensions (batch, channels), but got a "
                           "0-dim tensor")
    _check_dtypes("batch_norm", input, weight, bias, running_mean, running_var, kernel_first=True)
    if not training:
        return apply(_BN_EVAL, (input, weight, bias, running_mean, running_var), eps=float(eps))
    if running_mean is not None or running_var is not None:
        _check_vmapped_running(input, running_mean, running_var)
    # PyTorch's mixed-type kernel (a half input with float32 parameters or running statistics, as under autocast)
    mixed = input.dtype in (_dtype.float16, _dtype.bfloat16) and any(
        t is not None and t.dtype is _dtype.float32 for t in (weight, bias, running_mean, running_var))
    y, mean, var = apply(_BN_TRAIN, (input, weight, bias), eps=float(eps), mixed=mixed)
    if running_mean is not None or running_var is not None:
        _update_running(running_mean, running_var, mean, var, momentum)
    return y


def _check_vmapped_running(input, running_mean, running_var):
    """Under ``torchish.func.vmap`` a batched input cannot update running statistics that are not batched (one
    buffer for every sample): PyTorch's error. Batched values are the vmap's tracers; closed-over buffers are not."""
    from jax.core import Tracer
    from ...autograd.grad_mode import STATE
    if not getattr(STATE, "vmap_level", 0) or not isinstance(input._d, Tracer):
        return
    if any(t is not None and not isinstance(t._d, Tracer) for t in (running_mean, running_var)):
        raise RuntimeError(
            "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in "
            "place, were not batched.\nIf you are using a module and do not need eval mode, please set "
            "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please "
            "see the functorch website for resources on how to patch your module to work with vmap")


# ----------------------------------------------------------------------------------------------------------------
# instance norm


def _in_fwd(x, w, b, *, eps):
    """PyTorch's instance_norm: batch_norm of the input seen as one sample of ``N * C`` channels."""
    axes = tuple(range(2, x.ndim))
    y, mean, var = _bn_normalize(x, w, b, axes, eps)
    n = math.prod(x.shape[2:])
    unbiased = var * (n / max(n - 1, 1))
    return y, jnp.mean(mean.reshape(x.shape[:2]), axis=0), jnp.mean(unbiased.reshape(x.shape[:2]), axis=0)


def _in_vjp(g, x, w, b, out, eps):
    """Each instance's weight and bias gradients are rounded to the input's dtype (batch_norm's outputs), then
    summed over the batch (the backward of PyTorch's ``weight.repeat(N)``)."""
    dx, dw, db = _bn_grad(g[0], x, w, tuple(range(2, x.ndim)), eps)
    r = _precision.stepper(x.dtype)[1]
    return (dx, None if w is None else jnp.sum(r(dw).reshape(x.shape[:2]), axis=0).astype(w.dtype),
            None if b is None else jnp.sum(r(db).reshape(x.shape[:2]), axis=0).astype(b.dtype))


_IN = defop("instance_norm", _in_fwd, vjp=_in_vjp, grad_name="ViewBackward0")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise each ``(sample, channel)`` over its spatial dims; with ``use_input_stats=False`` the running
    statistics are used instead. Running statistics, when given, are updated with the batch average of the
    per-instance statistics."""
    if use_input_stats:  # PyTorch's wrapper reads input.size() first
        need_tensor_attr(input, "size")
    _need_norm_tensors("instance_norm", input, weight, bias, running_mean, running_var)
    if input.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    c = input.shape[1]
    if use_input_stats and math.prod(input.shape[2:]) == 1:  # (PyTorch's check: no spatial element passes)
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    need_bool("instance_norm", use_input_stats, "use_input_stats", 6)
    need_number("instance_norm", momentum, "momentum", 7, kind="float")
    need_number("instance_norm", eps, "eps", 8, kind="float")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if input.numel() == 0:  # PyTorch's batch_norm of the input as one sample, affine and statistics repeated
        b = input.shape[0]  # per sample: an empty batch has no weight[0], and averages no running statistics
        if use_input_stats and b == 0:
            with no_grad():
                for t in (running_mean, running_var):
                    if t is not None:
                        t.fill_(float("nan"))
        rep = [None if t is None else t.repeat(b) for t in (weight, bias)]
        return _batch_norm_of_nothing(input, *rep).view(input.shape)  # (PyTorch's view back from one sample)
    _check_running_no_grad(running_mean, running_var)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):  # (batch_norm sees them repeated once per sample: its counts)
        if t is not None and t.numel() != c:
            b = input.shape[0]
            raise RuntimeError(f"{name} should contain {c * b} elements not {t.numel() * b}")
    # the running statistics may have another dtype: PyTorch's instance_norm hands batch_norm repeated copies
    # of them, and copies the batch-averaged update back
    _check_dtypes("batch_norm", input, weight, bias, kernel_first=True)
    if not use_input_stats:
        from ...ops.convert import to_dtype
        stats = tuple(to_dtype(t, input.dtype) for t in (running_mean, running_var))
        return apply(_IN_EVAL, (input, weight, bias, *stats), eps=float(eps))
    if running_mean is None and running_var is None:
        # ATen's instance_norm: batch_norm of the input viewed as one sample of b * c channels (affine parameters
        # repeated per sample), viewed back: ViewBackward0 over NativeBatchNormBackward0 over ViewBackward0
        b = input.shape[0]
        x = input.contiguous().view(1, b * c, *input.shape[2:])
        rep = [None if t is None else t.repeat(b) for t in (weight, bias)]
        return batch_norm(x, None, None, *rep, training=True, momentum=momentum, eps=eps).view(input.shape)
    y, mean, var = apply(_IN, (input, weight, bias), eps=float(eps))
    if running_mean is not None or running_var is not None:
        _update_running(running_mean, running_var, mean, var, momentum)
    return y


# ----------------------------------------------------------------------------------------------------------------
# layer norm / RMS norm / group norm


def _normalized_shape(input, normalized_shape, name):
    need_int_list(name, normalized_shape, "normalized_shape", 2)  # (a lone int too: PyTorch's ``int[]``)
    ns = tuple(int(s) for s in normalized_shape)
    k = len(ns)
    if k == 0 and name == "layer_norm":  # (_check_layer_norm_inputs' first check)
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != ns:
        star = "*, " if name == "layer_norm" else "*"
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [{star}"
                           f"{', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    return ns


def _ln_fwd(x, w, b, *, k, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    xa = _acc(x)
    mean = jnp.mean(xa, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(xa - mean), axis=axes, keepdims=True)
    rstd = _rstd(var, eps)
    # PyTorch's kernels: (x - mean) * rstd; its float16/bfloat16 one x * rstd + (-rstd * mean) in float32, one rounding
    y = _precision.fma(xa, rstd, -rstd * mean) if x.dtype in _precision.LOW else (xa - mean) * rstd
    return _affine(y, w, b, x.shape[x.ndim - k:]).astype(x.dtype)


def _ln_vjp(g, x, w, b, out, k, eps):
    """PyTorch's layer_norm backward kernel: in float32, from the statistics its forward saved in the input's
    dtype (a float16/bfloat16 input's mean and rstd are rounded to it; float32 in the mixed-type kernel, a
    float16/bfloat16 input with float32 weight/bias, as under autocast),
    ``dx = rstd * dy * w + b' * x + c'`` with ``b' = (db * mean - ds) * rstd^3 / N``, ``c' = -b' * mean - db * rstd / N``
    (``ds = sum(dy * w * x)``, ``db = sum(dy * w)``)."""
    axes = tuple(range(x.ndim - k, x.ndim))
    wide, r = _precision.stepper(x.dtype)
    mixed = x.dtype in _precision.LOW and any(p is not None and p.dtype == jnp.float32 for p in (w, b))
    r_stat = (lambda v: v) if mixed else r
    xw, gw = wide(x), wide(g)
    mean = jnp.mean(xw, axis=axes, keepdims=True)
    rstd = r_stat(_rstd(jnp.mean(jnp.square(xw - mean), axis=axes, keepdims=True), eps))
    mean = r_stat(mean)
    scale = 1.0 / max(math.prod(x.shape[x.ndim - k:]), 1)  # (normalized_shape with a 0: every gradient is empty)
    dyw = gw if w is None else gw * wide(w)
    ds = jnp.sum(dyw * xw, axis=axes, keepdims=True)
    db = jnp.sum(dyw, axis=axes, keepdims=True)
    bb = (db * mean - ds) * rstd * rstd * rstd * scale
    c = -bb * mean - db * rstd * scale
    dx = ((rstd * gw if w is None else rstd * gw * wide(w)) + bb * xw + c).astype(x.dtype)
    # the weight and bias gradients accumulate row after row in buffers of the input's dtype
    ns = x.shape[x.ndim - k:]
    half = x.dtype in _precision.LOW
    # the mixed-type kernel adds dy * (rstd * x - rstd * mean) to its buffer, the other dy * (x - mean) * rstd
    xhat = rstd * xw + (-rstd * mean) if mixed else (xw - mean) * rstd
    rows = (math.prod(x.shape[:x.ndim - k]),) + ns  # (not -1: normalized_shape may hold a 0)
    dw = None if w is None else _row_sum((gw * xhat).reshape(rows), r, half).astype(w.dtype)
    dbias = None if b is None else _row_sum(gw.reshape(rows), r, half).astype(b.dtype)
    return dx, dw, dbias


def _row_sum(rows, r, half):
    """``sum(rows, axis=0)``. For a float16/bfloat16 input, added one row at a time with each partial sum stored
    by ``r`` (PyTorch's buffers of the input's dtype). A float32/float64 sum is one reduction: a row-by-row scan
    is a sequential loop (1024 iterations per layer norm in benchmark (d)), and the order moves float32 results
    only in the last bits."""
    if not half:
        return jnp.sum(rows, axis=0)
    total, _ = lax.scan(lambda acc, row: (r(acc + row), None), jnp.zeros_like(rows[0]), rows)
    return total


_LN = defop("layer_norm", _ln_fwd, vjp=_ln_vjp, grad_name="NativeLayerNormBackward0")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias`` (elementwise)."""
    need_tensor("layer_norm", input)
    need_tensor("layer_norm", weight, "weight", 3, optional=True)
    need_tensor("layer_norm", bias, "bias", 4, optional=True)
    need_number("layer_norm", eps, "eps", 5, kind="float")
    ns = _normalized_shape(input, normalized_shape, "layer_norm")
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {nm} to be of same shape as normalized_shape, but got {nm} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(ns)}")
    _check_dtypes("LayerNormKernelImpl", input, weight, bias)
    return apply(_LN, (input, weight, bias), k=len(ns), eps=float(eps))


def _rms_fwd(x, w, *, k, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    xa = _acc(x)
    y = xa * rsqrt_values(jnp.mean(jnp.square(xa), axis=axes, keepdims=True) + eps)
    return (y if w is None else y * w).astype(x.dtype)


def _rms_vjp(g, x, w, out, *, k, eps):
    """The backward of PyTorch's composite (``x * rsqrt(pow(x, 2).mean(dims, keepdim) + eps)``, then ``* w``, in
    float32 for float16/bfloat16) node by node: ``MulBackward0``s give ``g * w`` and ``sum(g * y0)`` for the weight,
    ``g1 * r`` and ``sum(g1 * x)`` for ``r``; ``RsqrtBackward0`` ``(grad * -0.5) * r ** 3``; ``MeanBackward1`` a
    division by N; ``PowBackward0`` ``grad * (2 * x)``. A complex input keeps JAX's derivative (conjugated in and
    out: PyTorch's complex gradients are the conjugates of JAX's cotangents)."""
    if jnp.iscomplexobj(x):
        pull = jax.vjp(lambda a, b: _rms_fwd(a, b, k=k, eps=eps), x, w)[1]
        return tuple(None if v is None else jnp.conj(v) for v in pull(jnp.conj(g)))
    axes = tuple(range(x.ndim - k, x.ndim))
    xa, ga = _acc(x), _acc(g)
    r = rsqrt_values(jnp.mean(xa * xa, axis=axes, keepdims=True) + eps)
    g1 = ga if w is None else ga * _acc(w)
    gr = jnp.sum(_precision.mul(g1, xa), axis=axes, keepdims=True)
    gsq = _precision.div((gr * -0.5) * (r * r * r), math.prod(x.shape[x.ndim - k:]))
    gx = (_precision.mul(g1, r) + _precision.mul(gsq, 2 * xa)).astype(x.dtype)
    gw = None if w is None else jnp.sum(ga * (xa * r), axis=tuple(range(x.ndim - k))).astype(w.dtype)
    return gx, gw


_RMS = defop("rms_norm", _rms_fwd, vjp=_rms_vjp, grad_name="MulBackward0")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing dims; ``eps=None`` is ``finfo(dtype).eps`` of
    the computation's dtype (float32 for a float16/bfloat16 input)."""
    need_tensor("rms_norm", input)
    # (PyTorch 2.13's F.rms_norm calls its builtin, whose ``int[] normalized_shape`` takes no lone int or Tensor,
    # and names the position even when the caller gave it by keyword)
    need_int_list("rms_norm", normalized_shape, "normalized_shape", 2)
    need_tensor("rms_norm", weight, "weight", 3, optional=True)
    if eps is not None:
        need_number("rms_norm", eps, "eps", 4, kind="float")
    # PyTorch's _check_rms_norm_inputs: the weight against normalized_shape, then the input's rank, then its shape
    ns = tuple(int(s) for s in normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(ns)}")
    if input.ndim < len(ns):
        raise ValueError(f"Input tensor must have at least {len(ns)} dimensions, but got {input.ndim}")
    ns = _normalized_shape(input, ns, "rms_norm")
    _check_dtypes("rms_norm", input, complex_ok=True)
    if weight is not None and weight.dtype != input.dtype:
        warn_once(f"Mismatch dtype between input and weight: input dtype = {_dtype.cpp_type_name(input.dtype)}, "
                  f"weight dtype = {_dtype.cpp_type_name(weight.dtype)}, Cannot dispatch to fused implementation.",
                  key="rms_norm dtype mismatch")
    if eps is None:  # PyTorch's default: the epsilon of the type it computes in (float32 for float16/bfloat16)
        eps = _dtype.finfo(_dtype.float32 if input.dtype in (_dtype.float16, _dtype.bfloat16) else input.dtype).eps
    if input.dtype in (_dtype.float32, _dtype.float64) and (weight is None or weight.dtype is input.dtype):
        # ATen's composite, op by op: input * rsqrt(input.pow(2).mean(dims, keepdim=True).add_(eps)), then
        # * weight (MulBackward0 over RsqrtBackward0, AddBackward1, MeanBackward1, PowBackward0)
        from ...ops.scalar_overloads import add_scalar
        dims = tuple(range(input.ndim - len(ns), input.ndim))
        out = input * add_scalar(input.pow(2).mean(dims, keepdim=True), float(eps)).rsqrt()
        return out if weight is None else out * weight
    return apply(_RMS, (input, weight), k=len(ns), eps=float(eps))


def _group_size(x, groups):
    """The elements of one group (spelled out: a ``-1`` in a reshape is ambiguous for an empty batch)."""
    return x.shape[1] // groups * math.prod(x.shape[2:])


def _gn_fwd(x, w, b, *, groups, eps):
    n, c = x.shape[0], x.shape[1]
    xa = _acc(x).reshape((n, groups, _group_size(x, groups)))
    mean = jnp.mean(xa, axis=2, keepdims=True)
    var = jnp.mean(jnp.square(xa - mean), axis=2, keepdims=True)
    rstd = _rstd(var, eps)
    if w is None and b is None:
        return ((xa - mean) * rstd).reshape(x.shape).astype(x.dtype)
    # PyTorch's kernel: per channel scale = rstd * w, bias = -scale * mean + b, then scale * x + bias (each
    # multiply-add rounded once)
    per_c, hw = c // groups, math.prod(x.shape[2:])
    wide = _precision.stepper(x.dtype)[0]
    scale = jnp.repeat(rstd, per_c, axis=1)  # (n, c, 1)
    mean_c = jnp.repeat(mean, per_c, axis=1)
    if w is not None:
        scale = scale * wide(w).reshape((1, c, 1))
    bias = -scale * mean_c if b is None else _precision.fma(-scale, mean_c, wide(b).reshape((1, c, 1)))
    y = _precision.fma(scale, xa.reshape((n, c, hw)), bias)
    return y.reshape(x.shape).astype(x.dtype)


def _gn_vjp(g, x, w, b, out, groups, eps):
    """PyTorch's group_norm backward kernel, in float32 from the statistics its forward saved in the input's
    dtype: per (sample, channel) ``ds = sum(dy * x)``, ``db = sum(dy)`` over the spatial dims, per group
    ``ds_g = sum(ds * w)``, ``db_g = sum(db * w)``, then
    ``dx = rstd * w * dy + b' * x + c'`` with ``b' = (db_g * mean - ds_g) * rstd^3 / D``,
    ``c' = -b' * mean - db_g * rstd / D`` (D: the elements of a group)."""
    n, c = x.shape[0], x.shape[1]
    wide, r = _precision.stepper(x.dtype)
    hw = math.prod(x.shape[2:])
    xw, gw = wide(x).reshape((n, c, hw)), wide(g).reshape((n, c, hw))
    xg = xw.reshape((n, groups, _group_size(x, groups)))
    mean = jnp.mean(xg, axis=2, keepdims=True)
    rstd = r(_rstd(jnp.mean(jnp.square(xg - mean), axis=2, keepdims=True), eps))  # (n, groups, 1)
    mean = r(mean)
    gamma = jnp.ones((c,), xw.dtype) if w is None else wide(w)
    ds = jnp.sum(gw * xw, axis=2)  # (n, c)
    db = jnp.sum(gw, axis=2)
    ds_g = jnp.sum((ds * gamma).reshape((n, groups, c // groups)), axis=2, keepdims=True)
    db_g = jnp.sum((db * gamma).reshape((n, groups, c // groups)), axis=2, keepdims=True)
    scale = 1.0 / max(xg.shape[2], 1)  # (empty groups: every gradient is empty)
    bb = (db_g * mean - ds_g) * rstd * rstd * rstd * scale
    cc = -bb * mean - db_g * rstd * scale
    per_c = c // groups
    a = (jnp.repeat(rstd, per_c, axis=1) * gamma.reshape((1, c, 1)))  # (n, c, 1)
    dx = a * gw + jnp.repeat(bb, per_c, axis=1) * xw + jnp.repeat(cc, per_c, axis=1)
    dw = None
    if w is not None:  # sum over samples of (ds - db * mean) * rstd
        m_c, r_c = jnp.repeat(mean, per_c, axis=1)[..., 0], jnp.repeat(rstd, per_c, axis=1)[..., 0]
        dw = jnp.sum((ds - db * m_c) * r_c, axis=0).astype(w.dtype)
    dbias = None if b is None else jnp.sum(db, axis=0).astype(b.dtype)
    return dx.reshape(x.shape).astype(x.dtype), dw, dbias


_GN = defop("group_norm", _gn_fwd, vjp=_gn_vjp, grad_name="NativeGroupNormBackward0")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over groups of ``C / num_groups`` channels (and the spatial dims)."""
    need_tensor_attr(input, "dim")
    need_tensor("group_norm", weight, "weight", 3, optional=True)
    need_tensor("group_norm", bias, "bias", 4, optional=True)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    c = input.shape[1]
    per_group = [input.shape[0] * c // num_groups, num_groups] + list(input.shape[2:])  # PyTorch's wrapper's check
    if math.prod(per_group[:1] + per_group[2:]) == 1:  # (in every mode, and ``//`` by 0 raises ZeroDivisionError)
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {per_group}")
    need_int("group_norm", num_groups, "num_groups", 2)
    need_number("group_norm", eps, "eps", 5, kind="float")
    if num_groups <= 0 or c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {nm} to be a vector of size equal to the number of channels in input, but "
                               f"got {nm} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    _check_dtypes("GroupNormKernelImpl", input, weight, bias)
    return apply(_GN, (input, weight, bias), groups=int(num_groups), eps=float(eps))


from .local_response_norm import local_response_norm  # noqa: E402  (its own file)
