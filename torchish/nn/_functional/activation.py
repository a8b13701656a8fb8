"""torchish.nn.functional: activations.

Every activation is ONE registry op (a pure JAX forward); a VJP is given where PyTorch's backward formula
differs from what ``jax.vjp`` would derive: at boundaries (``hardtanh`` at its limits, ``hardswish`` at -3 and 3)
and where a ``jnp.where`` branch that is not taken would overflow (``elu``, ``softplus``). The ``inplace=``
variants compute out of place and write the result back, as every torchish in-place op does.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ... import _dtype
from ..._tensor import Tensor, wrap_dim
from ...ops import unary as _unary
from ...ops import softmax as _softmax
from ...ops.inplace import assign, write_scope
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from ._args import need_tensor, need_tensor_attr

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "elu", "elu_", "selu",
    "selu_", "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh", "hardtanh", "hardtanh_", "hardswish",
    "hardsigmoid", "softplus", "softsign", "softshrink", "hardshrink", "tanhshrink", "threshold", "threshold_",
    "glu", "logsigmoid", "softmax", "log_softmax", "softmin", "gumbel_softmax",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _zero(g):
    return jnp.zeros((), g.dtype)


def _opmath(f):
    """``f`` evaluated in float32 for float16/bfloat16 inputs and rounded once, as PyTorch's CPU kernels do."""
    def wrapped(x, *args, **kw):
        if x.dtype not in (jnp.float16, jnp.bfloat16):
            return f(x, *args, **kw)
        args = (None if a is None else a.astype(jnp.float32) for a in args)
        return f(x.astype(jnp.float32), *args, **kw).astype(x.dtype)
    return wrapped


def _float_only(x, kernel):
    """PyTorch's "not implemented" error for activations whose kernels take floating point inputs only."""
    if x.dtype.category < _dtype._FLOAT:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(x.dtype)}\'')


def _result(input, compute, inplace):
    """``compute()``, or (PyTorch's ``inplace=True``) its value written into ``input``, which is returned; the
    in-place op's own record keeps the overwritten input, as every torchish in-place op does."""
    if not inplace:
        return compute()
    input._check_inplace()
    with write_scope(input):
        return assign(input, compute())


# ----------------------------------------------------------------------------------------------------------------
# piecewise-linear activations


def _hardtanh_fwd(x, *, lo, hi):
    return jnp.clip(x, jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype))


def _hardtanh_vjp(g, x, out, lo, hi):
    return jnp.where((x > lo) & (x < hi), g, _zero(g))  # zero at the limits, as PyTorch


_HARDTANH = defop("hardtanh", _hardtanh_fwd, vjp=_hardtanh_vjp, grad_name="HardtanhBackward0")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    need_tensor("hardtanh_" if inplace else "hardtanh", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if isinstance(input, Tensor) and input.dtype is _dtype.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return _result(input, lambda: apply(_HARDTANH, (input,), lo=min_val, hi=max_val), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


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
    _float_only(input, "leaky_relu_cpu")
    return _result(input, lambda: apply(_LEAKY_RELU_ if inplace else _LEAKY_RELU, (input,),
                                        slope=float(negative_slope)), inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _prelu_fwd(x, w):
    if w.ndim == 1 and w.shape[0] != 1:
        w = w.reshape((-1,) + (1,) * (x.ndim - 2))
    else:
        w = w.reshape(())
    return jnp.where(x > 0, x, w * x)


_PRELU = defop("prelu", _prelu_fwd, grad_name="PreluKernelBackward0")


def prelu(input, weight):
    need_tensor("prelu", input)
    need_tensor("prelu", weight, "weight", 2)
    if _registry.autocast_hook is not None:  # autocast casts before the dtype checks
        input, weight = _registry.autocast_hook("prelu", (input, weight))
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dtype.scalar_type_name(input.dtype)} and "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                               f"and channel size = {channels}.")
    return apply(_PRELU, (input, weight))


_THRESHOLD = defop("threshold", lambda x, *, th, value: jnp.where(x <= th, jnp.asarray(value, x.dtype), x),
                   grad_name="ThresholdBackward0")
_THRESHOLD_ = defop("threshold_", _THRESHOLD.fwd, grad_name="ThresholdBackward1")


def threshold(input, threshold, value, inplace=False):
    need_tensor("threshold_" if inplace else "threshold", input)
    return _result(input, lambda: apply(_THRESHOLD_ if inplace else _THRESHOLD, (input,), th=threshold, value=value),
                   inplace)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def _rrelu_fwd(x, noise):
    return x * jnp.where(x <= 0, noise, jnp.ones((), x.dtype))


def _rrelu_vjp(g, x, noise, out):
    return g * jnp.where(x <= 0, noise, jnp.ones((), x.dtype)), None


_RRELU = defop("rrelu_with_noise", _rrelu_fwd, vjp=_rrelu_vjp, grad_name="RreluWithNoiseBackward0")
_RRELU_EVAL = defop("rrelu_with_noise_eval", _LEAKY_RELU.fwd, grad_name="RreluWithNoiseBackward0")
_RRELU_ = defop("rrelu_with_noise_", _rrelu_fwd, vjp=_rrelu_vjp, grad_name="RreluWithNoiseBackward1")
_RRELU_EVAL_ = defop("rrelu_with_noise_eval_", _LEAKY_RELU.fwd, grad_name="RreluWithNoiseBackward1")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training, each non-positive element is scaled by a slope drawn uniformly from
    ``[lower, upper]`` with torchish's generator; in evaluation, by ``(lower + upper) / 2``."""
    need_tensor("rrelu_" if inplace else "rrelu", input)
    _float_only(input, "leaky_relu_cpu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:  # the mean slope: leaky_relu's values, recorded as PyTorch's rrelu_with_noise
        return _result(input, lambda: apply(_RRELU_EVAL_ if inplace else _RRELU_EVAL, (input,),
                                            slope=(lower + upper) / 2), inplace)
    from ...ops.random import draw
    noise = Tensor._make(draw("uniform", tuple(input.shape), input.dtype, (float(lower), float(upper)), device=input))
    return _result(input, lambda: apply(_RRELU_ if inplace else _RRELU, (input, noise)), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _shrink_fwd(x, *, lambd, soft):
    inside = (x >= -lambd) & (x <= lambd)
    if soft:
        # inside the band PyTorch returns x * 0: -0.0 for negative x, NaN for NaN
        return jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, x * 0))
    return jnp.where(inside, jnp.zeros((), x.dtype), x)


_SOFTSHRINK = defop("softshrink", _shrink_fwd, grad_name="SoftshrinkBackward0")
_HARDSHRINK = defop("hardshrink", _shrink_fwd, grad_name="HardshrinkBackward0")


def softshrink(input, lambd=0.5):
    need_tensor("softshrink", input)
    _float_only(input, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{_dtype.scalar_type_name(input.dtype)}, but found {lambd:g}")
    return apply(_SOFTSHRINK, (input,), lambd=float(lambd), soft=True)


def hardshrink(input, lambd=0.5):
    need_tensor("hardshrink", input)
    _float_only(input, "hardshrink_cpu")
    return apply(_HARDSHRINK, (input,), lambd=float(lambd), soft=False)


@_opmath
def _hardswish_fwd(x):
    return x * jnp.clip(x + 3, 0, 6) / 6


@_opmath
def _hardswish_vjp(g, x, out):
    return jnp.where(x <= -3, _zero(g), jnp.where(x < 3, g * (x / 3 + 0.5), g))


@_opmath
def _hardsigmoid_vjp(g, x, out):
    return jnp.where((x > -3) & (x < 3), g / 6, _zero(g))


_HARDSWISH = defop("hardswish", _hardswish_fwd, vjp=_hardswish_vjp, grad_name="HardswishBackward0")
_HARDSIGMOID = defop("hardsigmoid", _opmath(lambda x: jnp.clip(x + 3, 0, 6) / 6), vjp=_hardsigmoid_vjp,
                     grad_name="HardsigmoidBackward0")


def hardswish(input, inplace=False):
    need_tensor("hardswish_" if inplace else "hardswish", input)
    _float_only(input, "hardswish_cpu")
    return _result(input, lambda: apply(_HARDSWISH, (input,)), inplace)


def hardsigmoid(input, inplace=False):
    need_tensor("hardsigmoid_" if inplace else "hardsigmoid", input)
    _float_only(input, "hardsigmoid_cpu")
    return _result(input, lambda: apply(_HARDSIGMOID, (input,)), inplace)


# ----------------------------------------------------------------------------------------------------------------
# exponential-linear and smooth activations


@_opmath
def _elu_fwd(x, *, alpha, scale, input_scale):
    return jnp.where(x > 0, x * scale, jnp.expm1(x * input_scale) * (alpha * scale))


@_opmath
def _elu_vjp(g, x, out, alpha, scale, input_scale):
    # PyTorch's elu_backward; the exponential branch is never evaluated into the positive side (no inf * 0)
    neg = g * (input_scale * alpha * scale) * jnp.exp(jnp.minimum(x, 0) * input_scale)
    return jnp.where(x <= 0, neg, g * scale)


_ELU = defop("elu", _elu_fwd, vjp=_elu_vjp, grad_name="EluBackward0")
_CELU = defop("celu", _elu_fwd, vjp=_elu_vjp, grad_name="CeluBackward0")
_ELU_ = defop("elu_", _elu_fwd, vjp=_elu_vjp, grad_name="EluBackward1")
_CELU_ = defop("celu_", _elu_fwd, vjp=_elu_vjp, grad_name="CeluBackward1")


def elu(input, alpha=1.0, inplace=False):
    need_tensor("elu_" if inplace else "elu", input)
    _float_only(input, "elu_cpu")
    return _result(input, lambda: apply(_ELU_ if inplace else _ELU, (input,), alpha=float(alpha), scale=1.0,
                                        input_scale=1.0), inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    need_tensor("selu_" if inplace else "selu", input)
    _float_only(input, "elu_cpu")
    return _result(input, lambda: apply(_ELU_ if inplace else _ELU, (input,), alpha=_SELU_ALPHA, scale=_SELU_SCALE,
                                        input_scale=1.0), inplace)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    need_tensor("celu_" if inplace else "celu", input)
    _float_only(input, "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _result(input, lambda: apply(_CELU_ if inplace else _CELU, (input,), alpha=float(alpha), scale=1.0,
                                        input_scale=1.0 / float(alpha)), inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


@_opmath
def _gelu_fwd(x, *, approximate):
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + jnp.tanh(inner))
    return 0.5 * x * (1 + jss.erf(x * (1 / math.sqrt(2))))


_GELU = defop("gelu", _gelu_fwd, grad_name="GeluBackward0")


def gelu(input, approximate="none"):
    need_tensor("gelu", input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return apply(_GELU, (input,), approximate=approximate)


_SILU = defop("silu", _opmath(jax.nn.silu), grad_name="SiluBackward0")
_MISH = defop("mish", _opmath(lambda x: x * jnp.tanh(jax.nn.softplus(x))), grad_name="MishBackward0")
_LOGSIGMOID = defop("log_sigmoid", _opmath(jax.nn.log_sigmoid), grad_name="LogSigmoidBackward0")
_SOFTSIGN = defop("softsign", lambda x: x / (1 + jnp.abs(x)), promote="float", grad_name="DivBackward0")
_TANHSHRINK = defop("tanhshrink", lambda x: x - jnp.tanh(x), promote="float", grad_name="SubBackward0")


def silu(input, inplace=False):
    need_tensor("silu_" if inplace else "silu", input)
    _float_only(input, "silu_cpu")
    return _result(input, lambda: apply(_SILU, (input,)), inplace)


def mish(input, inplace=False):
    need_tensor("mish_" if inplace else "mish", input)
    _float_only(input, "mish_cpu")
    return _result(input, lambda: apply(_MISH, (input,)), inplace)


def logsigmoid(input):
    need_tensor("log_sigmoid", input)
    _float_only(input, "log_sigmoid_cpu")
    return apply(_LOGSIGMOID, (input,))


def softsign(input):
    need_tensor_attr(input, "abs")
    return apply(_SOFTSIGN, (input,))


def tanhshrink(input):
    need_tensor_attr(input, "tanh")
    if isinstance(input, Tensor) and input.dtype is _dtype.bool:  # PyTorch computes input - tanh(input)
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return apply(_TANHSHRINK, (input,))


def sigmoid(input):
    need_tensor_attr(input, "sigmoid")
    return _unary.sigmoid(input)


def tanh(input):
    need_tensor_attr(input, "tanh")
    return _unary.tanh(input)


@_opmath
def _softplus_fwd(x, *, beta, threshold):
    xb = x * beta
    return jnp.where(xb > threshold, x, jnp.log1p(jnp.exp(xb)) / beta)


def _softplus_vjp(g, x, out, beta, threshold):
    return _softplus_grad(x, g, beta=beta, threshold=threshold)


@_opmath
def _softplus_grad(x, g, *, beta, threshold):
    z = jnp.exp(jnp.minimum(x * beta, threshold))
    return jnp.where(x * beta > threshold, g, g * z / (z + 1))


_SOFTPLUS = defop("softplus", _softplus_fwd, vjp=_softplus_vjp, grad_name="SoftplusBackward0")


def softplus(input, beta=1.0, threshold=20.0):
    need_tensor("softplus", input)
    _float_only(input, "softplus_cpu")
    return apply(_SOFTPLUS, (input,), beta=float(beta), threshold=float(threshold))


@_opmath
def _glu_fwd(x, *, axis):
    a, b = jnp.split(x, 2, axis=axis)
    return a * jax.nn.sigmoid(b)


_GLU = defop("glu", _glu_fwd, grad_name="GluBackward0")


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return apply(_GLU, (input,), axis=d)


# ----------------------------------------------------------------------------------------------------------------
# softmax family


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    need_tensor_attr(input, "dim" if dim is None else "softmax")
    return _softmax.implicit_softmax(input, dim, _stacklevel, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    need_tensor_attr(input, "dim" if dim is None else "log_softmax")
    return _softmax.implicit_log_softmax(input, dim, _stacklevel, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax.implicit_softmax(_unary.neg(input), dim, _stacklevel, dtype)


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
    need_tensor("empty_like", logits)
    from ...ops.random import draw
    _float_only(logits, "softmax_lastdim_kernel_impl")
    e = draw("exponential", tuple(logits.shape), logits.dtype, (1.0,), device=logits)
    gumbels = Tensor._make(-jnp.log(e))
    axis = wrap_dim(dim, logits.ndim) if logits.ndim else 0
    return apply(_GUMBEL_SOFTMAX, (logits, gumbels), tau=float(tau), axis=axis, hard=bool(hard))
