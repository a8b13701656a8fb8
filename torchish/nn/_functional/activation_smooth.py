"""torchish.nn.functional: the exponential-linear and smooth activations (elu, selu, celu, gelu, silu, mish,
logsigmoid, softsign, tanhshrink, sigmoid, tanh, softplus) and the gated linear unit.

Each is ONE registry op; a VJP is given where PyTorch's backward formula differs from what ``jax.vjp`` would
derive: where a ``jnp.where`` branch that is not taken would overflow (``elu``, ``softplus``), and where PyTorch's
kernel rounds its steps differently (gelu, silu, log_sigmoid, glu, the composites softsign and tanhshrink).
float16/bfloat16 inputs are computed in float32 and rounded once, as PyTorch's CPU kernels do (``_opmath``).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ... import _dtype
from ... import _precision
from ..._tensor import Tensor, wrap_dim
from ...ops.elementwise import not_implemented, out_exact
from ...ops.registry import apply, defop
from ._activation_util import _HALF_INPUT, _float_only, _opmath, _result
from ._args import need_number, need_tensor, need_tensor_attr

__all__ = [
    "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh", "softplus",
    "softsign", "tanhshrink", "glu", "logsigmoid",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


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
    return input / (input.abs() + 1)  # PyTorch's composite: DivBackward0 over AddBackward0 over AbsBackward0


def tanhshrink(input):
    need_tensor_attr(input, "tanh")
    if isinstance(input, Tensor) and input.dtype is _dtype.bool:  # PyTorch computes input - tanh(input)
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return input - input.tanh()  # PyTorch's composite: SubBackward0 over TanhBackward0


def sigmoid(input):
    """PyTorch's Python ``F.sigmoid``: ``input.sigmoid()`` (so a Tensor subclass, a mode or an fx Proxy sees the
    method call; anything else raises Python's AttributeError)."""
    return input.sigmoid()


def tanh(input):
    """PyTorch's Python ``F.tanh``: ``input.tanh()``."""
    return input.tanh()


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
