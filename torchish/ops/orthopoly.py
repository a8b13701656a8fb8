"""The orthogonal polynomials of ``torch.special``: Chebyshev ``T/U/V/W`` (and their shifted forms on ``[0, 1]``),
Hermite ``H``/``He``, Laguerre ``L`` and Legendre ``P``, each ``f(input, n)`` elementwise with broadcasting.

As in PyTorch, ``n`` is truncated to an integer, a negative ``n`` gives 0, the values at ``x = +-1`` are the closed
forms, the Chebyshev polynomials of degree above 6 (T) or 8 (U, V, W) inside ``(-1, 1)`` come from their
trigonometric forms and everything else from the three-term recurrence (run up to the largest degree present, in
float64). PyTorch records no gradient for them, and neither does torchish.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from . import elementwise as _ew
from .registry import ELEMENTWISE, apply, defop


def _recurrence(x, n, p0, p1, step, use):
    """``P_n(x)`` from ``P_0 = p0``, ``P_1 = p1`` and ``P_{k+1} = step(k, P_{k-1}, P_k)``, for the elements where
    ``use`` holds (the loop runs to the largest such ``n``)."""
    top = jnp.max(jnp.where(use, n, 0.0)) if n.size else 0.0
    res = jnp.where(n == 0, p0, p1)

    def body(state):
        k, p, q, res = state
        r = step(k, p, q)
        return k + 1, q, r, jnp.where(n == k + 1, r, res)

    init = (jnp.ones((), x.dtype), jnp.broadcast_to(p0, x.shape), jnp.broadcast_to(p1, x.shape), res)
    return jax.lax.while_loop(lambda s: s[0] < top, body, init)[3]


def _even(n):
    return jnp.fmod(n, 2) == 0


def _cheb_t(x, n):
    loop = _recurrence(x, n, jnp.ones_like(x), x, lambda k, p, q: (x + x) * q - p, ~((n > 6) & (jnp.abs(x) < 1)))
    trig = jnp.cos(n * jnp.arccos(x))
    edge = jnp.where((x > 0) | _even(n), 1.0, -1.0)
    return jnp.where(jnp.abs(x) == 1, edge, jnp.where((n > 6) & (jnp.abs(x) < 1), trig, loop))


def _cheb_u(x, n):
    loop = _recurrence(x, n, jnp.ones_like(x), x + x, lambda k, p, q: (x + x) * q - p, ~((n > 8) & (jnp.abs(x) < 1)))
    t = jnp.arccos(x)
    s = jnp.sin(t)
    trig = jnp.where(s != 0, jnp.sin((n + 1) * t) / jnp.where(s != 0, s, 1.0), (n + 1) * jnp.cos((n + 1) * t) / x)
    edge = jnp.where((x > 0) | _even(n), n + 1, -(n + 1))
    return jnp.where(jnp.abs(x) == 1, edge, jnp.where((n > 8) & (jnp.abs(x) < 1), trig, loop))


def _cheb_v(x, n):
    loop = _recurrence(x, n, jnp.ones_like(x), x + x - 1, lambda k, p, q: (x + x) * q - p,
                       ~((n > 8) & (jnp.abs(x) < 1)))
    t = jnp.arccos(x)
    odd_edge = jnp.where(_even(n), n + n + 1, -(n + n + 1))
    c = jnp.cos(t / 2)
    trig = jnp.where(jnp.sin(t / 2) != 1, jnp.cos((n + 0.5) * t) / jnp.where(c != 0, c, 1.0), odd_edge)
    edge = jnp.where(x > 0, 1.0, odd_edge)
    return jnp.where(jnp.abs(x) == 1, edge, jnp.where((n > 8) & (jnp.abs(x) < 1), trig, loop))


def _cheb_w(x, n):
    loop = _recurrence(x, n, jnp.ones_like(x), x + x + 1, lambda k, p, q: (x + x) * q - p,
                       ~((n > 8) & (jnp.abs(x) < 1)))
    t = jnp.arccos(x)
    edge = jnp.where(x > 0, n + n + 1, jnp.where(_even(n), 1.0, -1.0))
    s = jnp.sin(t / 2)
    trig = jnp.where(jnp.cos(t / 2) != 1, jnp.sin((n + 0.5) * t) / jnp.where(s != 0, s, 1.0), edge)
    return jnp.where(jnp.abs(x) == 1, edge, jnp.where((n > 8) & (jnp.abs(x) < 1), trig, loop))


def _hermite_h(x, n):
    return _recurrence(x, n, jnp.ones_like(x), x + x, lambda k, p, q: (x + x) * q - (k + k) * p, n > 1)


def _hermite_he(x, n):
    return _recurrence(x, n, jnp.ones_like(x), x, lambda k, p, q: x * q - k * p, n > 1)


def _laguerre_l(x, n):
    loop = _recurrence(x, n, jnp.ones_like(x), 1 - x, lambda k, p, q: ((k + k + 1 - x) * q - k * p) / (k + 1),
                       x != 0)
    return jnp.where(x == 0, 1.0, loop)


def _legendre_p(x, n):
    loop = _recurrence(x, n, jnp.ones_like(x), x, lambda k, p, q: ((k + k + 1) * x * q - k * p) / (k + 1),
                       jnp.abs(x) != 1)
    edge = jnp.where((x > 0) | (n == 0) | _even(n), 1.0, -1.0)
    return jnp.where(jnp.abs(x) == 1, edge, loop)


def _shifted(fn):
    return lambda x, n: fn(x + x - 1, n)


def _fwd(fn):
    def fwd(x, n):
        dt = jnp.result_type(x)
        n = jnp.asarray(n, jnp.float64)
        # PyTorch casts n to int64: NaN, infinities and values out of range become INT64_MIN (negative: 0)
        n = jnp.where(jnp.isfinite(n) & (jnp.abs(n) < 2.0 ** 63), jnp.trunc(n), -1.0)
        x, n = jnp.broadcast_arrays(jnp.asarray(x, jnp.float64), n)
        res = fn(x, n)
        return jnp.where(n < 0, 0.0, res).astype(dt)
    return fwd


def _define(name, fn):
    op = defop("special_" + name, _fwd(fn), promote="float", differentiable=False)
    ELEMENTWISE.add(op.name)

    def f(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(n).__name__}), but expected one of:\n"
                            " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                            " * (Number x, Tensor n, *, Tensor out = None)\n"
                            " * (Tensor x, Number n, *, Tensor out = None)\n")
        x, m = _ew.scalar_or_tensor(input), _ew.scalar_or_tensor(n)
        # the kernel's dtype decides, as PyTorch's TensorIterator: a complex number beside a float tensor is
        # complex, and a 0-d bfloat16 beside a float32 tensor of any size (an empty one too) runs in float32
        dt = _ew.common_dtype((x, m))
        if dt.category > _dtype._FLOAT or dt in (_dtype.float16, _dtype.bfloat16):
            raise _ew.not_implemented(f"{name}_cpu", dt)
        return _ew._out(apply(op, (x, m)), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.special.{name}(input, n)``, elementwise (no gradient, as in PyTorch)."
    return f


chebyshev_polynomial_t = _define("chebyshev_polynomial_t", _cheb_t)
chebyshev_polynomial_u = _define("chebyshev_polynomial_u", _cheb_u)
chebyshev_polynomial_v = _define("chebyshev_polynomial_v", _cheb_v)
chebyshev_polynomial_w = _define("chebyshev_polynomial_w", _cheb_w)
shifted_chebyshev_polynomial_t = _define("shifted_chebyshev_polynomial_t", _shifted(_cheb_t))
shifted_chebyshev_polynomial_u = _define("shifted_chebyshev_polynomial_u", _shifted(_cheb_u))
shifted_chebyshev_polynomial_v = _define("shifted_chebyshev_polynomial_v", _shifted(_cheb_v))
shifted_chebyshev_polynomial_w = _define("shifted_chebyshev_polynomial_w", _shifted(_cheb_w))
hermite_polynomial_h = _define("hermite_polynomial_h", _hermite_h)
hermite_polynomial_he = _define("hermite_polynomial_he", _hermite_he)
laguerre_polynomial_l = _define("laguerre_polynomial_l", _laguerre_l)
legendre_polynomial_p = _define("legendre_polynomial_p", _legendre_p)

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]
