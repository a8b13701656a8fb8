"""torchish.nn.functional: the piecewise-linear activations (relu and its relatives, thresholds, shrinks,
hard* approximations) and the softmax family.

Every activation is ONE registry op (a pure JAX forward); a VJP is given where PyTorch's backward formula
differs from what ``jax.vjp`` would derive: at boundaries (``hardtanh`` at its limits, ``hardswish`` at -3 and 3).
The ``inplace=`` variants compute out of place and write the result back, as every torchish in-place op does.
The exponential-linear and smooth activations (elu, gelu, silu, softplus, glu, ...) live in
``activation_smooth.py``.
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype
from ... import _precision
from ..._tensor import Tensor, wrap_dim
from ...autograd.grad_mode import STATE
from ...ops import unary as _unary
from ...ops import softmax as _softmax
from ...ops.casting import check_scalar_fits, rounded
from ...ops.elementwise import not_implemented, out_exact
from ...ops.inplace import overlap_ok
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from ._activation_util import _float_only, _opmath, _result, _zero
from ._args import need_number, need_tensor, need_tensor_attr

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "hardtanh", "hardtanh_",
    "hardswish", "hardsigmoid", "softshrink", "hardshrink", "threshold", "threshold_", "softmax", "log_softmax",
    "softmin", "gumbel_softmax",
]


# ----------------------------------------------------------------------------------------------------------------
# piecewise-linear activations


def _hardtanh_fwd(x, *, lo, hi):
    # PyTorch's clamp replaces only what lies outside the limits: -0.0 stays -0.0 against a limit of 0 (relu6)
    if lo != lo or hi != hi:  # a NaN limit makes every output NaN, as PyTorch's vectorised clamp
        return jnp.full_like(x, jnp.nan)
    lo, hi = jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype)
    return jnp.where(x < lo, lo, jnp.where(x > hi, hi, x))


def _hardtanh_vjp(g, x, out, lo, hi):
    return jnp.where((x <= lo) | (x >= hi), _zero(g), g)  # zero at the limits; NaN passes, as PyTorch


_HARDTANH = defop("hardtanh", _hardtanh_fwd, vjp=_hardtanh_vjp, grad_name="HardtanhBackward0")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    need_tensor("hardtanh_" if inplace else "hardtanh", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh(input, min_val, max_val, inplace)


def _hardtanh(input, min_val, max_val, inplace):
    if isinstance(input, Tensor) and input.dtype is _dtype.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if isinstance(input, Tensor) and input.dtype.category == _dtype._COMPLEX:
        raise NotImplementedError("clamp is not supported for complex types")
    if isinstance(input, Tensor) and input.dtype.category <= _dtype._INT:  # PyTorch's limits for integer inputs:
        min_val, max_val = (int(check_scalar_fits(v, _dtype.int64)) for v in (min_val, max_val))  # int64, truncated
    if isinstance(input, Tensor) and input.dtype.name.startswith("uint") and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    for v in (min_val, max_val):  # converted to the input's type, checked
        check_scalar_fits(v, input.dtype)
    return _result(input, lambda: apply(_HARDTANH, (input,), lo=min_val, hi=max_val), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """PyTorch's ``F.hardtanh_`` is its kernel itself: no ``min_val > max_val`` check (every element is then
    ``max_val``)."""
    need_tensor("hardtanh_", input)
    return _hardtanh(input, min(min_val, max_val), max_val, True)


def relu6(input, inplace=False):
    need_tensor("relu6_" if inplace else "relu6", input)
    return hardtanh(input, 0.0, 6.0, inplace)


def relu(input, inplace=False):
    need_tensor("relu_" if inplace else "relu", input)
    return _result(input, lambda: _unary.relu(input), inplace)


def relu_(input):
    return relu(input, inplace=True)


_LEAKY_RELU = defop("leaky_relu", _opmath(lambda x, *, slope: jnp.where(x > 0, x, x * slope)),
                    grad_name="LeakyReluBackward0")
# PyTorch's own in-place kernels (elu_, leaky_relu_, ...) are nodes of their own: "Backward1", reading the result
_LEAKY_RELU_ = defop("leaky_relu_", _LEAKY_RELU.fwd, grad_name="LeakyReluBackward1")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    need_tensor("leaky_relu_" if inplace else "leaky_relu", input)
    need_number("leaky_relu_" if inplace else "leaky_relu", negative_slope, "negative_slope", 2)
    _float_only(input, "leaky_relu_cpu")
    return _result(input, lambda: apply(_LEAKY_RELU_ if inplace else _LEAKY_RELU, (input,),
                                        slope=float(negative_slope)), inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _prelu_fwd(x, w):
    if w.ndim == x.ndim > 1:  # (viewed with the input's dims already: see prelu)
        pass
    elif w.ndim == 1 and w.shape[0] != 1:
        w = w.reshape((-1,) + (1,) * (x.ndim - 2))
    else:
        w = w.reshape(())
    return jnp.where(x > 0, x, w * x)


def _prelu_vjp(g, x, w, out):
    """float16/bfloat16: PyTorch's kernel, ``x > 0 ? grad : weight * grad`` and ``x > 0 ? 0 : x * grad`` element by
    element in the half type, the weight's gradient then summed in float32 (``sum_to_size``); other dtypes: derived."""
    if x.dtype not in _precision.LOW:
        return jax.vjp(_prelu_fwd, x, w)[1](g)
    g32, x32 = g.astype(jnp.float32), x.astype(jnp.float32)
    w32 = jnp.broadcast_to(_prelu_fwd(jnp.full(x.shape, -1.0, jnp.float32), w.astype(jnp.float32)) * -1, x.shape)
    pos = x > 0
    gx = jnp.where(pos, g32, w32 * g32).astype(x.dtype)
    terms = rounded(jnp.where(pos, 0.0, x32 * g32), x.dtype)
    keep = 1 if w.ndim == 1 and w.shape[0] != 1 else None   # the channel dimension, or none (one weight)
    axes = tuple(i for i in range(x.ndim) if i != keep)
    return gx, jnp.sum(terms, axis=axes).reshape(w.shape).astype(w.dtype)


_PRELU = defop("prelu", _prelu_fwd, vjp=_prelu_vjp, grad_name="PreluKernelBackward0")


def prelu(input, weight):
    need_tensor("prelu", input)
    need_tensor("prelu", weight, "weight", 2)
    if _registry.autocast_hook is not None:  # autocast casts before the dtype checks
        input, weight = _registry.autocast_hook("prelu", (input, weight))
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dtype.scalar_type_name(input.dtype)} and "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    if input.dtype.category != _dtype._FLOAT:  # PyTorch's CPU kernel is for floating point only
        raise not_implemented("prelu_cpu", input.dtype)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                               f"and channel size = {channels}.")
    if weight.ndim != input.ndim and weight.requires_grad and STATE.grad_enabled and input.dtype in (
            _dtype.float32, _dtype.float64):
        # ATen's prelu views the weight with the input's dims, (1, C, 1, ...): its ViewBackward0 under the kernel's
        weight = weight.reshape([1, n] + [1] * (input.ndim - 2) if input.ndim > 1 else [1] * input.ndim)
    return apply(_PRELU, (input, weight))


def _threshold_fwd(x, *, th, value):
    # a float16/bfloat16 input is compared with the threshold as float32 (PyTorch's kernel: float(x) <= threshold),
    # not with the threshold rounded to the half type
    low = x.dtype in _precision.LOW
    return jnp.where((x.astype(jnp.float32) if low else x) <= (np.float32(th) if low else th),
                     jnp.asarray(value).astype(x.dtype), x)


_THRESHOLD = defop("threshold", _threshold_fwd, grad_name="ThresholdBackward0")
_THRESHOLD_ = defop("threshold_", _THRESHOLD.fwd, grad_name="ThresholdBackward1")


def threshold(input, threshold, value, inplace=False):
    need_tensor("threshold_" if inplace else "threshold", input)
    need_number("threshold_" if inplace else "threshold", threshold, "threshold", 2)
    need_number("threshold_" if inplace else "threshold", value, "value", 3)
    if input.dtype.category in (_dtype._BOOL, _dtype._COMPLEX):
        raise not_implemented("threshold_cpu", input.dtype)
    check_scalar_fits(threshold, input.dtype, opmath=True)  # converted to the computation type, checked
    check_scalar_fits(value, input.dtype)  # to the input's type, checked
    with overlap_ok(input):  # (PyTorch's threshold_ writes an expanded tensor)
        return _result(input, lambda: apply(_THRESHOLD_ if inplace else _THRESHOLD, (input,), th=threshold,
                                            value=value), inplace)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def _rrelu_fwd(x, noise):
    # (training: ``noise`` holds the slopes in the computation type, float32 for the half types, as PyTorch
    # multiplies before rounding; the eval overloads reuse leaky_relu's forward)
    return (x.astype(noise.dtype) * jnp.where(x <= 0, noise, jnp.ones((), noise.dtype))).astype(x.dtype)


def _rrelu_vjp(g, x, noise, out):
    # PyTorch's backward multiplies by the saved noise, which it stored in the input's dtype
    return g * jnp.where(x <= 0, noise.astype(x.dtype), jnp.ones((), x.dtype)), None


_RRELU = defop("rrelu_with_noise", _rrelu_fwd, vjp=_rrelu_vjp, grad_name="RreluWithNoiseBackward0")
_RRELU_EVAL = defop("rrelu_with_noise_eval", _LEAKY_RELU.fwd, grad_name="RreluWithNoiseBackward0")
_RRELU_ = defop("rrelu_with_noise_", _rrelu_fwd, vjp=_rrelu_vjp, grad_name="RreluWithNoiseBackward1")
_RRELU_EVAL_ = defop("rrelu_with_noise_eval_", _LEAKY_RELU.fwd, grad_name="RreluWithNoiseBackward1")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (see :func:`rrelu_with_generator`)."""
    return rrelu_with_generator(input, lower, upper, training, inplace)


def rrelu_with_generator(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, generator=None):
    """Randomized leaky ReLU: in training, each non-positive element is scaled by a slope drawn uniformly from
    ``[lower, upper]``; in evaluation, by ``(lower + upper) / 2``.

    The slopes are PyTorch's: its CPU kernel walks the elements in order and draws one float64 uniform (two words
    of the stream) for each element ``<= 0`` only, between the bounds rounded to the computation type, and
    multiplies in that type (float32 for float16/bfloat16/float32). ``generator`` (``torch.rrelu``'s argument)
    is the stream the slopes come from, the default generator when None."""
    need_tensor("rrelu_" if inplace else "rrelu", input)
    need_number("rrelu_" if inplace else "rrelu", lower, "lower", 2)
    need_number("rrelu_" if inplace else "rrelu", upper, "upper", 3)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _float_only(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    if not training:  # the mean slope: leaky_relu's values, recorded as PyTorch's rrelu_with_noise
        return _result(input, lambda: apply(_RRELU_EVAL_ if inplace else _RRELU_EVAL, (input,),
                                            slope=(lower + upper) / 2), inplace)
    from ...ops.random_layout import uniform_where
    if input.dtype == _dtype.float16:  # (PyTorch's CPU training kernel has no Half instance)
        raise NotImplementedError('"rrelu_with_noise_out_cpu" not implemented for \'Half\'')
    opmath = np.float64 if input.dtype == _dtype.float64 else np.float32
    lo, hi = (float(opmath(v)) for v in (lower, upper))  # PyTorch's Scalar.to<opmath_t>()
    negative = input.detach() <= 0
    noise = Tensor._make(uniform_where(negative, lo, hi, opmath, generator))
    return _result(input, lambda: apply(_RRELU_ if inplace else _RRELU, (input, noise)), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu_with_generator(input, lower, upper, training, inplace=True)


def _shrink_fwd(x, *, lambd, soft):
    inside = (x >= -lambd) & (x <= lambd)
    if soft:
        # inside the band PyTorch returns x * 0: -0.0 for negative x, NaN for NaN
        return jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, x * 0))
    return jnp.where(inside, jnp.zeros((), x.dtype), x)


_SOFTSHRINK = defop("softshrink", _shrink_fwd, grad_name="SoftshrinkBackward0")
_HARDSHRINK = defop("hardshrink", _shrink_fwd, grad_name="HardshrinkBackward0")


def softshrink(input, lambd=0.5, *, out=None):
    need_tensor("softshrink", input)
    need_number("softshrink", lambd, "lambd", 2)
    _float_only(input, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{_dtype.scalar_type_name(input.dtype)}, but found {lambd:g}")
    return out_exact(apply(_SOFTSHRINK, (input,), lambd=float(lambd), soft=True), out, "softshrink")


def hardshrink(input, lambd=0.5, *, out=None):
    need_tensor("hardshrink", input)
    need_number("hardshrink", lambd, "lambd", 2)
    _float_only(input, "hardshrink_cpu")
    return out_exact(apply(_HARDSHRINK, (input,), lambd=float(lambd), soft=False), out, "hardshrink")


# PyTorch divides by 3 and 6 (``_precision.div``: XLA would multiply by the rounded reciprocal)
@_opmath
def _hardswish_fwd(x):
    return _precision.div(x * jnp.clip(x + 3, 0, 6), 6)


@_opmath
def _hardswish_vjp(g, x, out):
    return jnp.where(x <= -3, _zero(g), jnp.where(x < 3, g * (_precision.div(x, 3) + 0.5), g))


@_opmath
def _hardsigmoid_vjp(g, x, out):
    return jnp.where((x > -3) & (x < 3), g * jnp.asarray(1 / 6, g.dtype), _zero(g))  # PyTorch: grad * (1/6)


_HARDSWISH = defop("hardswish", _hardswish_fwd, vjp=_hardswish_vjp, grad_name="HardswishBackward0")
_HARDSIGMOID = defop("hardsigmoid", _opmath(lambda x: _precision.div(jnp.clip(x + 3, 0, 6), 6)),
                     vjp=_hardsigmoid_vjp, grad_name="HardsigmoidBackward0")


def hardswish(input, inplace=False):
    need_tensor("hardswish_" if inplace else "hardswish", input)
    _float_only(input, "hardswish_cpu")
    return _result(input, lambda: apply(_HARDSWISH, (input,)), inplace)


def hardsigmoid(input, inplace=False):
    need_tensor("hardsigmoid_" if inplace else "hardsigmoid", input)
    _float_only(input, "hardsigmoid_cpu")
    return _result(input, lambda: apply(_HARDSIGMOID, (input,)), inplace)


# ----------------------------------------------------------------------------------------------------------------
# softmax family


def _softmax_method(name, method, input, dim, stacklevel, dtype):
    """PyTorch's ``F.softmax``/``log_softmax``/``softmin``: pick the legacy dim (with a warning) where none is given,
    then call the Tensor method with the dim by position and ``dtype`` by keyword, so a bad argument is refused in
    the method's words (``softmax(): argument 'dim' (position 1) ...``); ``_stacklevel`` only places the warning
    (counted as PyTorch counts it from ``F.softmax``; torchish has this helper in between, and ``implicit_dim``
    counts its own frame on top)."""
    if dim is None:
        dim = _softmax.implicit_dim(name, input.ndim, stacklevel)
    return method(input, dim) if dtype is None else method(input, dim, dtype=dtype)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    need_tensor_attr(input, "dim" if dim is None else "softmax")
    return _softmax_method("softmax", Tensor.softmax, input, dim, _stacklevel, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    need_tensor_attr(input, "dim" if dim is None else "log_softmax")
    return _softmax_method("log_softmax", Tensor.log_softmax, input, dim, _stacklevel, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:  # (PyTorch picks the dim from ``input.dim()`` before it negates the input)
        need_tensor_attr(input, "dim")
        dim = _softmax.implicit_dim("softmin", input.ndim, _stacklevel - 1)  # (implicit_dim counts its own frame)
    neg = -input
    need_tensor_attr(neg, "softmax")  # (PyTorch's wrapper calls (-input).softmax(dim))
    return _softmax_method("softmin", Tensor.softmax, neg, dim, _stacklevel, dtype)


def _gumbel_softmax_fwd(logits, gumbels, *, tau, axis, hard):
    y = jax.nn.softmax((logits + gumbels) / tau, axis=axis)
    if not hard:
        return y
    idx = jnp.argmax(y, axis=axis, keepdims=True)
    one_hot = (jnp.arange(y.shape[axis]).reshape((-1,) + (1,) * (y.ndim - axis - 1)) == idx).astype(y.dtype)
    return one_hot - jax.lax.stop_gradient(y) + y  # straight-through: the value is one-hot, the gradient soft


_GUMBEL_SOFTMAX = defop("gumbel_softmax", _gumbel_softmax_fwd, grad_name="SoftmaxBackward0")


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution; the Gumbel noise comes from torchish's generator."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    need_tensor("empty_like", logits)
    from ...ops.draw import draw
    if logits.dtype.category != _dtype._FLOAT:  # (PyTorch draws the noise first: empty_like(logits).exponential_())
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_dtype.scalar_type_name(logits.dtype)}")
    e = draw("exponential", tuple(logits.shape), logits.dtype, (1.0,), device=logits)
    gumbels = Tensor._make(-jnp.log(e))
    axis = wrap_dim(dim, logits.ndim) if logits.ndim else 0
    return apply(_GUMBEL_SOFTMAX, (logits, gumbels), tau=float(tau), axis=axis, hard=bool(hard))
