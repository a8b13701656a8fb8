"""``torchish.special``: PyTorch's special-function namespace (``torch.special``).

Most entries are the elementwise/reduction ops under their ``scipy.special`` names; the functions only PyTorch's
``special`` namespace has (ndtr, entr, xlog1py, i1, zeta...) are registry ops defined here, with PyTorch's dtypes
and gradients.

Example::

    >>> import torchish as torch
    >>> torch.special.expit(torch.tensor([0.0]))
    tensor([0.5000])
    >>> torch.special.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import jax.scipy.special as jss

from .ops import arith as _arith, elementwise as _ew, unary as _unary
from . import _dtype, _precision
from ._tensor import Tensor
from .ops import softmax as _softmax
from .ops.bessel import *  # noqa: F401,F403  (bessel_j0 ... airy_ai)
from .ops.orthopoly import *  # noqa: F401,F403  (chebyshev_polynomial_t ... legendre_polynomial_p)
from .ops import bessel as _bessel, orthopoly as _orthopoly
from .ops.arith import xlogy as xlogy  # noqa
from .ops.unary import (digamma as digamma, erf as erf, erfc as erfc, erfinv as erfinv, exp2 as exp2,  # noqa
                        expm1 as expm1, i0 as i0, log1p as log1p, logit as logit, polygamma as polygamma,
                        sinc as sinc)
from .ops import scalar_overloads as _scalar_overloads
from .ops.registry import ELEMENTWISE, NotDifferentiable, apply, defop, overload

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit",
           "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py",
           "xlogy", "zeta"] + _bessel.__all__ + _orthopoly.__all__

def round(input, *, decimals=0, out=None):  # noqa: A001 - torch's name
    """``torch.special.round``: ``torch.round`` for floating tensors; unlike ``torch.round`` it has no integer
    kernel (PyTorch raises NotImplementedError for integer and bool inputs)."""
    _ew.require_tensor(input, "round")
    if not (input.is_floating_point() or input.is_complex()):
        raise _ew.not_implemented("round_cpu" if decimals else "round_vml_cpu", input.dtype)
    return _unary.round(input, decimals=decimals, out=out)


expit = _unary.sigmoid
gammaln = _unary.lgamma
psi = digamma
gammainc = _arith.igamma
gammaincc = _arith.igammac


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma function (``torch.mvlgamma``)."""
    _ew.require_int(p, "special_multigammaln", 2, "p")
    return _unary.mvlgamma(input, p, out=out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _softmax.logsumexp(input, dim, keepdim, out=out)


def softmax(input, dim, *, dtype=None):
    return _softmax.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _softmax.log_softmax(input, dim, dtype=dtype)


# ----------------------------------------------------------------------------------------------------------------
# functions only torch.special has


_HALF = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))


def _special_unary(name, fwd, vjp=None, grad_name=None, half=True, widen=True, complex_kernel=None):
    """One ``torch.special`` function. ``half=False``: PyTorch's CPU kernel has no float16/bfloat16 version
    (NotImplementedError ``"NAME_cpu" not implemented for 'Half'``); ``widen=False``: ``fwd`` handles half
    precision itself. Complex inputs raise PyTorch's NotImplementedError for ``complex_kernel`` (``NAME_cpu``)."""
    # half precision computed in float32, rounded once (PyTorch's kernels; JAX's scipy functions refuse it)
    op = defop("special_" + name, _unary._in_float32(fwd) if widen else fwd, vjp=vjp, promote="float",
               grad_name=grad_name)
    ELEMENTWISE.add(op.name)

    def f(input, *, out=None):
        _ew.require_tensor(input, name)
        if not half and jnp.dtype(input.dtype.np) in _HALF:
            raise _ew.not_implemented(name + "_cpu", input.dtype)
        if input.dtype.category == _dtype._COMPLEX:
            raise _ew.not_implemented(complex_kernel or name + "_cpu", input.dtype)
        return _ew._out(apply(op, (input,)), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.special.{name}``, elementwise."
    return f


def _bessel_i1_vjp(scaled):
    """PyTorch's i1_backward / i1e_backward: ``i0(x) - i1(x) / x`` (``i0e(x) - i1e(x) * (sgn(x) + 1 / x)``), 0.5
    where ``|x| <= eps``; float and double only (NotImplementedError for half precision, at backward time)."""
    kernel = "i1e_backward" if scaled else "i1_backward"

    def vjp(g, x, out):
        if jnp.dtype(x.dtype) in _HALF:
            from . import _dtype
            return NotDifferentiable(_ew.not_implemented(kernel, _dtype.from_np(x.dtype))),
        eps = jnp.finfo(x.dtype).eps
        not_tiny = jnp.abs(x) > eps
        safe = jnp.where(not_tiny, x, jnp.asarray(eps, x.dtype))
        if scaled:
            gradx = jss.i0e(safe) - out * (jnp.sign(safe) + 1 / safe)
        else:
            gradx = jss.i0(safe) - out / safe
        return g * jnp.where(not_tiny, gradx, jnp.asarray(0.5, x.dtype))
    return vjp


def _entr_fwd(x):
    neg_inf = jnp.asarray(-jnp.inf, x.dtype)
    wide, r = _precision.stepper(x.dtype)  # PyTorch's half kernel stores log(x) in the half type first
    xw = wide(x)
    log = r(jnp.log(jnp.where(xw > 0, xw, 1)))
    return jnp.where(jnp.isnan(x), x, jnp.where(x > 0, (-xw * log).astype(x.dtype),
                                                jnp.where(x == 0, jnp.zeros((), x.dtype), neg_inf)))


def ndtr(input, *, out=None):
    """``torch.special.ndtr``, PyTorch's composite ``(1 + erf(x * sqrt(1/2))) * 0.5``: each op rounded to the
    input's dtype (a float16/bfloat16 one too) and differentiated op by op. One kernel of scipy's ndtr moved 48% of
    float16 results (up to 2035 ulps, in the negative tail where PyTorch's ``1 + erf`` cancels)."""
    _ew.require_tensor(input, "ndtr")
    scaled = apply(_MUL_SCALAR, (input, _SQRT1_2))
    return _ew._out(apply(_MUL_SCALAR, (apply(_ADD_SCALAR, (_unary.erf(scaled), 1, None)), 0.5)), out, "ndtr")


_SQRT1_2 = math.sqrt(0.5)
# (a C++ composite's ``tensor * number`` is PyTorch's mul.Scalar / add.Scalar overload: MulBackward1, AddBackward1)
# (their nodes list the tensor only: ops.scalar_overloads)
_MUL_SCALAR, _ADD_SCALAR = _scalar_overloads._MUL, _scalar_overloads._ADD
# PyTorch's backward formulas, read off the result: ndtri's ``sqrt(2 pi) exp(result^2 / 2)`` (inf at 0 and 1),
# erfcx's ``2 x result - 2 / sqrt(pi)``
ndtri = _special_unary("ndtri", jss.ndtri, half=False, grad_name="SpecialNdtriBackward0",
                       vjp=lambda g, x, out: g * (math.sqrt(2 * math.pi) * jnp.exp(out * out / 2)))
log_ndtr = _special_unary("log_ndtr", jss.log_ndtr, half=False)
i0e = _special_unary("i0e", jss.i0e)
def _i1_fwd(x):
    return jnp.where(x == 0, jnp.zeros((), x.dtype), jss.i1(x))  # PyTorch's i1(-0.0) is +0.0


i1 = _special_unary("i1", _i1_fwd, vjp=_bessel_i1_vjp(False), grad_name="SpecialI1Backward0")
i1e = _special_unary("i1e", jss.i1e, vjp=_bessel_i1_vjp(True), grad_name="SpecialI1EBackward0")
def _erfcx_fwd(x):
    """float32 in float64, rounded once: XLA's float32 erfcx is off by ulps for large x, where PyTorch's
    gradient formula ``2 x erfcx(x) - 2 / sqrt(pi)`` cancels."""
    if x.dtype == jnp.float32:
        return jss.erfcx(x.astype(jnp.float64)).astype(x.dtype)
    return jss.erfcx(x)


erfcx = _special_unary("erfcx", _erfcx_fwd, half=False, grad_name="SpecialErfcxBackward0",
                       vjp=lambda g, x, out: (2.0 * x * out - 2.0 / math.sqrt(math.pi)) * g)
entr = _special_unary("entr", _entr_fwd, widen=False, vjp=lambda g, x, out: -g * (1 + jnp.log(x)), grad_name="SpecialEntrBackward0")


def _xlog1py_vjp(g, a, b, out):
    """PyTorch: ``xlog1py(grad, other)`` masked to 0 where self == 0 and other <= -1; ``grad * self / (other + 1)``."""
    zero = jnp.zeros((), g.dtype)
    return jnp.where((a == 0) & (b <= -1), zero, jss.xlog1py(g, b)), g * a / (b + 1)


_XLOG1PY = defop("special_xlog1py", jss.xlog1py, vjp=_xlog1py_vjp, promote="float",
                 grad_name="SpecialXlog1PyBackward0")


def _number_overloads(op, name):
    """PyTorch's ``.self_scalar`` and ``.other_scalar`` overloads of ``op``, whose nodes are ``{name}Backward1``
    and ``{name}Backward2``."""
    return overload(op, f"{name}Backward1"), overload(op, f"{name}Backward2")


def _by_operands(op, overloads, a, b):
    """``op``, or the overload PyTorch picks when one operand is a Python number."""
    if not isinstance(a, Tensor):
        return overloads[0]
    return overloads[1] if not isinstance(b, Tensor) else op


_XLOG1PY_NUMBER = _number_overloads(_XLOG1PY, "SpecialXlog1Py")


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, zero where ``input`` is zero (unless ``other`` is NaN)."""
    a, b = _ew.scalar_or_tensor(input), _ew.scalar_or_tensor(other)
    dt = _ew.common_dtype((a, b))
    if dt.category == _dtype._COMPLEX:
        raise _ew.not_implemented("xlog1py_cpu", dt)
    return _ew._out(apply(_by_operands(_XLOG1PY, _XLOG1PY_NUMBER, a, b), (a, b)), out, "xlog1py")


def _jax_zeta(x, q):
    """JAX's Hurwitz zeta, computed in double for float32 operands as PyTorch's CPU kernel accumulates them
    (``acc_type<float>``): in float32 the Euler-Maclaurin terms overflow for a large ``x`` (zeta(32766, 1) was NaN,
    PyTorch's 1; math fuzzer seed 9100544)."""
    if x.dtype == jnp.float32:
        return jss.zeta(x.astype(jnp.float64), q.astype(jnp.float64)).astype(jnp.float32)
    return jss.zeta(x, q)


def _zeta_vjp(g, x, q, out):
    """PyTorch differentiates the Hurwitz zeta function in ``q`` only: asking for ``x``'s gradient raises its
    NotImplementedError."""
    return (NotDifferentiable(NotImplementedError("the derivative for 'zeta' is not implemented.")),
            -g * x * _jax_zeta(x + 1, q))


def _zeta_fwd(x, q):
    """JAX's Hurwitz zeta with the special values of PyTorch's (cephes'): +inf at ``x == 1``, NaN for ``x < 1``,
    +inf at the poles ``q = 0, -1, -2, ...`` (JAX gives NaN at some poles and +inf for some ``x < 1``)."""
    pole = (q <= 0) & (q == jnp.floor(q))
    return jnp.where(x == 1, jnp.inf, jnp.where(x < 1, jnp.nan, jnp.where(pole, jnp.inf, _jax_zeta(x, q))))


_ZETA = defop("special_zeta", _zeta_fwd, vjp=_zeta_vjp, promote="float", grad_name="SpecialZetaBackward0")
_ZETA_NUMBER = _number_overloads(_ZETA, "SpecialZeta")


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``sum_k (k + other) ** -input``."""
    a, b = _ew.scalar_or_tensor(input), _ew.scalar_or_tensor(other)
    dt = _ew.common_dtype((a, b))
    if dt.category == _dtype._COMPLEX or dt.name in ("float16", "bfloat16"):  # (PyTorch's CPU kernel has neither)
        raise _ew.not_implemented("zeta_cpu", dt)
    return _ew._out(apply(_by_operands(_ZETA, _ZETA_NUMBER, a, b), (a, b)), out, "zeta")
