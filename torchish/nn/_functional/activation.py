"""torchish.nn.functional: activations.

Every activation is ONE registry op (a pure JAX forward); a VJP is given where PyTorch's backward formula
differs from what ``jax.vjp`` would derive: at boundaries (``hardtanh`` at its limits, ``hardswish`` at -3 and 3)
and where a ``jnp.where`` branch that is not taken would overflow (``elu``, ``softplus``). The ``inplace=``
variants compute out of place and write the result back, as every torchish in-place op does.
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from ... import _dtype
from ... import _precision
from ..._tensor import Tensor, wrap_dim
from ...ops import unary as _unary
from ...ops import softmax as _softmax
from ...ops.casting import check_scalar_fits, rounded
from ...ops.elementwise import not_implemented, out_exact
from ...ops.inplace import assign, overlap_ok, write_scope
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from ._args import need_number, need_tensor, need_tensor_attr

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


def _half(v, like):
    """``v`` stored in ``like``'s float16/bfloat16 dtype and widened back: a value PyTorch's kernel keeps in the
    half type between two steps (a saved buffer, an intermediate tensor of a composite)."""
    return _precision.stepper(like.dtype)[1](v)


def _opmath(f):
    """``f`` evaluated in float32 for float16/bfloat16 inputs and rounded once, as PyTorch's CPU kernels do."""
    def wrapped(x, *args, **kw):
        if x.dtype not in (jnp.float16, jnp.bfloat16):
            return f(x, *args, **kw)
        args = (None if a is None else a.astype(jnp.float32) for a in args)
        prev, _HALF_INPUT[0] = _HALF_INPUT[0], True  # (read while tracing: see _tanh)
        try:
            return f(x.astype(jnp.float32), *args, **kw).astype(x.dtype)
        finally:
            _HALF_INPUT[0] = prev
    return wrapped


_HALF_INPUT = [False]  # whether the function being traced computes a float16/bfloat16 op in float32


def _float_only(x, kernel, complex_ok=False):
    """PyTorch's "not implemented" error for activations whose kernels take real floating point inputs only
    (``complex_ok``: complex ones too)."""
    if x.dtype.category < _dtype._FLOAT or (x.dtype.category == _dtype._COMPLEX and not complex_ok):
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
    if w.ndim == 1 and w.shape[0] != 1:
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
    need_number("elu_" if inplace else "elu", alpha, "alpha", 2)
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
    need_number("celu_" if inplace else "celu", alpha, "alpha", 2)
    _float_only(input, "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _result(input, lambda: apply(_CELU_ if inplace else _CELU, (input,), alpha=float(alpha), scale=1.0,
                                        input_scale=1.0 / float(alpha)), inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


_GELU_BETA = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5  # PyTorch's kGeluBeta, sqrt(2 / pi)
_GELU_KAPPA = 0.044715
_SQRT1_2 = math.sqrt(0.5)
_PDF_BETA = (2 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5  # 1 / sqrt(2 pi)


_TANH_ONE = 8.664339742  # from here on PyTorch's vectorized float32 tanh (SLEEF's tanhf) is exactly +-1


def _tanh(z):
    """float32 tanh (of a half input's widened values) as PyTorch's vectorized kernels compute it: to float32's precision up to |z| = 8.66, +-1 from
    there. XLA's float32 tanh is already +-1 from |z| ~ 7.9, which zeroes ``1 + tanh`` in the negative tail of the
    tanh-approximated gelu where PyTorch's is not zero."""
    if z.dtype != jnp.float32 or not _HALF_INPUT[0]:
        # a float32 op: XLA's tanh is within float32's tolerance (the tail differs by ~1e-8) and fuses; the
        # emulation below is fenced off from fusion and costs ~10% of a gelu-tanh layer
        return jnp.tanh(z)
    a = jnp.abs(z)
    big = 1 - _precision.div(2.0, jnp.exp(2 * a) + 1)
    e = jnp.expm1(2 * a)
    t = jnp.where(a > _TANH_ONE, 1.0, jnp.where(a > 0.5, big, e / (e + 2)))
    return jax.lax.optimization_barrier(jnp.copysign(t, z))  # rounded here: XLA would fold 1 + tanh


def _gelu_inner(x):
    return _GELU_BETA * (x + _GELU_KAPPA * (x * x * x))


def _vec_erf(z):
    """The erf of PyTorch's vectorized float32 kernels (``Vectorized<float>::erf``): Abramowitz & Stegun 7.1.26,
    ``1 - t (p1 + t (p2 + ...)) exp(-z^2)`` with ``t = 1 / (1 + p |z|)``, absolute error up to 1.5e-7."""
    t = 1 / (0.3275911 * jnp.abs(z) + 1)
    r = (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592
    return jnp.copysign(1 - jnp.exp(-(z * z)) * t * r, z)


def _gelu_erf(dtype):
    """PyTorch's float16 gelu runs its own vectorized kernel, whose erf is the approximation above; float32 and
    bfloat16 go to oneDNN where it is available, whose erf is not (the exact one is closer)."""
    return _vec_erf if dtype == jnp.float16 else jss.erf


def _gelu_fwd(x, *, approximate):
    """PyTorch's GeluKernel, step for step (float32 for half inputs, rounded once)."""
    erf = _gelu_erf(x.dtype)

    @_opmath
    def f(x):
        if approximate == "tanh":
            return 0.5 * x * (1 + _tanh(_gelu_inner(x)))
        return x * 0.5 * (1 + erf(x * _SQRT1_2))
    return f(x)


def _gelu_vjp(g, x, out, approximate):
    """PyTorch's GeluBackwardKernel: ``dy * (cdf + x * pdf)``; its tanh form's zero terms keep ``dy``'s sign."""
    erf = _gelu_erf(x.dtype)

    @_opmath
    def f(g, x):
        if approximate == "tanh":
            t = _tanh(_gelu_inner(x))
            inner_derivative = _GELU_BETA * (1 + 3 * _GELU_KAPPA * (x * x))
            right_derivative = 0.5 * x * (1 - t * t) * inner_derivative
            return g * (0.5 * (1 + t) + right_derivative)
        cdf = 0.5 * (1 + erf(x * _SQRT1_2))
        pdf = _PDF_BETA * jnp.exp(x * x * -0.5)
        return g * (cdf + x * pdf)
    return f(g, x)


_GELU = defop("gelu", _gelu_fwd, vjp=_gelu_vjp, grad_name="GeluBackward0")


def gelu(input, approximate="none", *, out=None):
    need_tensor("gelu", input)
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not {type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return out_exact(apply(_GELU, (input,), approximate=approximate), out, "gelu")


def _silu_fwd(x):
    """PyTorch's CPU kernel: ``x / (1 + exp(-x))`` (JAX's ``x * sigmoid(x)`` rounds differently: 24% of float32
    results one ulp or more off)."""
    return x / (1 + jnp.exp(-x))


def _silu_vjp(g, x, out):
    """PyTorch's silu_backward kernel: ``dy * s * (1 + x * (1 - s))`` with ``s = 1 / (1 + exp(-x))``, the inner
    multiply-add fused as its compiled kernel computes it (JAX's derivative: half the float32 gradients off,
    up to hundreds of ulps near the derivative's zero)."""
    s = 1 / (1 + jnp.exp(-x))
    if jnp.iscomplexobj(x):
        return g * jnp.conj(s * (1 + x * (1 - s)))
    return g * s * _precision.fma(x, 1 - s, jnp.ones((), x.dtype))


_SILU = defop("silu", _opmath(_silu_fwd), vjp=_opmath(_silu_vjp), grad_name="SiluBackward0")
_MISH = defop("mish", _opmath(lambda x: x * jnp.tanh(jax.nn.softplus(x))), grad_name="MishBackward0")


def _log_sigmoid_vjp(g, x, out):
    """PyTorch's log_sigmoid_backward: from the forward's buffer ``exp(-|x|)``, stored in the input's dtype, then
    ``(max_deriv - sign * b / (1 + b)) * grad`` in float32."""
    wide, r = _precision.stepper(x.dtype)
    xw = wide(x)
    b = r(jnp.exp(-jnp.abs(xw)))
    neg = xw < 0
    max_deriv = jnp.where(neg, 1.0, 0.0).astype(xw.dtype)
    sign = jnp.where(neg, 1.0, -1.0).astype(xw.dtype)
    return ((max_deriv - sign * (b / (1 + b))) * wide(g)).astype(x.dtype)


def _log_sigmoid_values(x):
    """PyTorch's ``min(0, x) - log1p(exp(-|x|))``: +0.0 for large x (``jax.nn.log_sigmoid`` negates a softplus: -0.0)."""
    return jnp.minimum(jnp.zeros((), x.dtype), x) - jnp.log1p(jnp.exp(-jnp.abs(x)))


_LOGSIGMOID = defop("log_sigmoid", _opmath(_log_sigmoid_values), vjp=_log_sigmoid_vjp,
                    grad_name="LogSigmoidBackward0")


# softsign and tanhshrink are compositions in PyTorch (``x / (x.abs() + 1)``, ``x - x.tanh()``): every step is an
# op of its own, rounded to a half input's dtype, and so is every step of their backward


def _softsign_fwd(x):
    return _opmath(lambda v: v / _half(jnp.abs(v) + 1, x))(x)


def _softsign_vjp(g, x, out):
    wide, r = _precision.stepper(x.dtype)
    gw, xw = wide(g), wide(x)
    d = r(jnp.abs(xw) + 1)
    g_num = r(gw / d)
    # DivBackward0: -grad * ((self / other) / other) (fenced: XLA rewrites (x / d) / d into x / (d * d))
    g_den = r(-gw * r(jax.lax.optimization_barrier(r(xw / d)) / d))
    return r(g_num + g_den * jnp.sign(xw)).astype(x.dtype)  # AbsBackward0: grad * sgn(self)


def _tanhshrink_fwd(x):
    return _opmath(lambda v: v - _half(jnp.tanh(v), x))(x)


def _tanhshrink_vjp(g, x, out):
    wide, r = _precision.stepper(x.dtype)
    t = r(jnp.tanh(wide(x)))
    gw = wide(g)
    return r(gw + r(-gw * (1 - t * t))).astype(x.dtype)  # SubBackward0 + TanhBackward0


_SOFTSIGN = defop("softsign", _softsign_fwd, vjp=_softsign_vjp, promote="float",
                  grad_name="DivBackward0")
_TANHSHRINK = defop("tanhshrink", _tanhshrink_fwd, vjp=_tanhshrink_vjp, promote="float",
                    grad_name="SubBackward0")


def silu(input, inplace=False):
    need_tensor("silu_" if inplace else "silu", input)
    _float_only(input, "silu_cpu", complex_ok=True)
    return _result(input, lambda: apply(_SILU, (input,)), inplace)


def mish(input, inplace=False):
    need_tensor("mish_" if inplace else "mish", input)
    _float_only(input, "mish_cpu")
    return _result(input, lambda: apply(_MISH, (input,)), inplace)


def logsigmoid(input, *, out=None):
    need_tensor("log_sigmoid", input)
    _float_only(input, "log_sigmoid_cpu")
    return out_exact(apply(_LOGSIGMOID, (input,)), out, "log_sigmoid", "expected scalar type {expected} but found {out}")


def softsign(input):
    need_tensor_attr(input, "abs")
    if input.dtype is _dtype.bool:
        raise not_implemented("abs_cpu", input.dtype)
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
    return jnp.where(xb > threshold, x, _precision.div(jnp.log1p(jnp.exp(xb)), beta))


def _softplus_vjp(g, x, out, beta, threshold):
    return _softplus_grad(x, g, beta=beta, threshold=threshold)


@_opmath
def _softplus_grad(x, g, *, beta, threshold):
    z = jnp.exp(jnp.minimum(x * beta, threshold))
    return jnp.where(x * beta > threshold, g, g * z / (z + 1))


_SOFTPLUS = defop("softplus", _softplus_fwd, vjp=_softplus_vjp, grad_name="SoftplusBackward0")


def softplus(input, beta=1.0, threshold=20.0, *, out=None):
    need_tensor("softplus", input)
    need_number("softplus", beta, "beta", 2)
    need_number("softplus", threshold, "threshold", 3)
    _float_only(input, "softplus_cpu")
    return out_exact(apply(_SOFTPLUS, (input,), beta=float(beta), threshold=float(threshold)), out, "softplus")


@_opmath
def _glu_fwd(x, *, axis):
    a, b = jnp.split(x, 2, axis=axis)
    return a * jax.nn.sigmoid(b)


def _glu_vjp(g, x, out, axis):
    """PyTorch's glu_backward: ``s = sigmoid(b)`` stored in the input's dtype, then ``grad * s`` and
    ``(1 - s) * s * a * grad`` each computed in float32 and rounded once."""
    wide, r = _precision.stepper(x.dtype)
    a, b = (wide(v) for v in jnp.split(x, 2, axis=axis))
    s, gw = r(jax.nn.sigmoid(b)), wide(g)
    return jnp.concatenate([r(s * gw), r((1 - s) * s * a * gw)], axis=axis).astype(x.dtype)


_GLU = defop("glu", _glu_fwd, vjp=_glu_vjp, grad_name="GluBackward0")


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    if input.dtype.category != _dtype._FLOAT:
        raise not_implemented("glu_cpu", input.dtype)
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
    if dim is None:
        dim = _softmax.implicit_dim("softmin", input.ndim, 2)
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
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    need_tensor("empty_like", logits)
    from ...ops.draw import draw
    _float_only(logits, "softmax_lastdim_kernel_impl")
    e = draw("exponential", tuple(logits.shape), logits.dtype, (1.0,), device=logits)
    gumbels = Tensor._make(-jnp.log(e))
    axis = wrap_dim(dim, logits.ndim) if logits.ndim else 0
    return apply(_GUMBEL_SOFTMAX, (logits, gumbels), tau=float(tau), axis=axis, hard=bool(hard))
