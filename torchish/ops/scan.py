"""Scans and differences: cumsum/cumprod (with cumsum_/cumprod_), cummax/cummin, logcumsumexp, diff, and the
trapezoidal rule (trapezoid/trapz, cumulative_trapezoid) composed of recorded ops."""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp

from .. import _dtype
from . import scalar_overloads as _scalar_overloads
from ..autograd.grad_mode import STATE
from .._tensor import Tensor, wrap_dim
from .casting import ACC, cast
from .elementwise import (_out, castable_out, not_implemented, out_exact, out_grad_error, parser_worded, require_int,
                          require_tensor, structured_out)
from .inplace import contiguous_strides, layout, make_inplace
from .out_layout import output_strides
from .reduce import (RETURN_TYPES, _acc_dtype, dtype_arg, first_order_formula, numpy_kwargs, one_dim,
                     scatter_add_along, sum)
from . import registry as _registry
from .arith import _plus_scaled
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public
_FLOAT = _dtype._FLOAT


# ----------------------------------------------------------------------------------------------------------------
# scans


def _scan(f):
    """PyTorch's CPU scans carry the running value in the accumulate type and round each output once."""
    def fwd(x, *, axis, dtype):
        x = cast(x, dtype)
        if axis is None:
            return x
        acc = ACC.get(jnp.dtype(dtype), dtype)
        return f(x.astype(acc), axis=axis, dtype=acc).astype(dtype)
    return fwd


_CUMSUM = defop("cumsum", _scan(jnp.cumsum), linear=True, grad_name="CumsumBackward0")


def _acc_cumsum(w, axis, reverse=False):
    """A cumulative sum carried in the accumulate type (PyTorch's CPU cumsum), rounded once."""
    acc = ACC.get(w.dtype, w.dtype)
    return jax.lax.cumsum(w.astype(acc), axis=axis, reverse=reverse).astype(w.dtype)


def _cumprod_grad_exact(g, x, axis):
    """The true VJP of cumprod (JAX's), in PyTorch's conjugate convention: what second derivatives follow."""
    pull = jax.vjp(lambda v: jnp.cumprod(v, axis=axis), x)[1]
    return jnp.conj(pull(jnp.conj(g.astype(x.dtype)))[0])


def _cumprod_formula(g, x, out, axis):
    """PyTorch's O(n) cumprod_backward: ``reversed_cumsum(conj(out) * g) / conj(x)`` before the first zero of each
    slice, the product of the others times the gradients up to the second zero at the first zero, 0 after it. An
    infinite or NaN input therefore gives NaN where the division meets it, as in PyTorch. Its derivative (for
    create_graph=True) is that of the exact formula: this one is not differentiable at the zeros."""
    g = g.astype(x.dtype)
    xc, oc = jnp.conj(x), jnp.conj(out)
    zeros_seen = jnp.cumsum((x == 0).astype(jnp.int32), axis=axis)
    before = zeros_seen == 0
    grad = _acc_cumsum(jnp.where(before, oc * g, 0), axis, reverse=True) / xc
    span = zeros_seen == 1  # [first zero, second zero)
    first = span & (x == 0)
    z1 = jnp.argmax(span, axis=axis, keepdims=True)
    prefix = jnp.where(z1 == 0, jnp.ones((), oc.dtype), jnp.take_along_axis(oc, jnp.maximum(z1 - 1, 0), axis=axis))
    tail = jnp.cumprod(jnp.where(span & ~first, xc, 1), axis=axis) * jnp.where(span, g, 0)
    at_zero = jnp.sum(tail, axis=axis, keepdims=True) * prefix
    return jnp.where(before, grad, jnp.where(first, at_zero, jnp.zeros((), grad.dtype)))


_CUMPROD_GRAD = first_order_formula(_cumprod_formula, _cumprod_grad_exact)


def _cumprod_vjp(g, x, out, *, axis, dtype):
    if axis is None or x.shape[axis] <= 1:
        return g
    return _CUMPROD_GRAD(g, x, out, (axis,))


_CUMPROD = defop("cumprod", _scan(jnp.cumprod), vjp=_cumprod_vjp, grad_name="CumprodBackward0")


def _before_kernel(name, input, dtype, out):
    """PyTorch's checks before its scan kernel runs: ``out=`` with an input that requires grad, then the kernel's
    lack of a Bool version (empty and 0-d inputs never reach it), both before autograd refuses an integer result."""
    out = out if isinstance(out, Tensor) else None  # (not a Tensor: _out's TypeError)
    if out is not None and input._rg and STATE.grad_enabled:
        raise out_grad_error(name)
    dt = dtype_arg(name, dtype) if dtype is not None else out.dtype if out is not None else None
    if dt is _dtype.bool and input.numel() and input.ndim:
        raise not_implemented(name + "_out_cpu", dt)


@numpy_kwargs
def cumsum(input, dim, *, dtype=None, out=None):
    require_tensor(input, "cumsum")
    if _registry.autocast_hook is not None and dtype is None and out is None:  # the result dtype follows the cast
        input, = _registry.autocast_hook("cumsum", (input,))
    _before_kernel("cumsum", input, dtype, out)
    dt = _acc_dtype(input, dtype, out, "cumsum")
    return _out(apply(_CUMSUM, (input,), axis=one_dim(dim, input.ndim), dtype=dt.np), out, "cumsum")


@numpy_kwargs
def cumprod(input, dim, *, dtype=None, out=None):
    require_tensor(input, "cumprod")
    if _registry.autocast_hook is not None and dtype is None and out is None:
        input, = _registry.autocast_hook("cumprod", (input,))
    _before_kernel("cumprod", input, dtype, out)
    dt = _acc_dtype(input, dtype, out, "cumprod")
    return _out(apply(_CUMPROD, (input,), axis=one_dim(dim, input.ndim), dtype=dt.np), out, "cumprod")


def _cummax_fwd(x, *, axis, largest):
    if axis is None:
        return x, jnp.zeros((), jnp.int64)
    n = x.shape[axis]
    idx = jnp.broadcast_to(jnp.arange(n).reshape((-1,) + (1,) * (x.ndim - axis - 1)), x.shape)

    def comb(a, b):
        va, ia = a
        vb, ib = b
        take_b = (vb >= va) if largest else (vb <= va)
        if jnp.issubdtype(x.dtype, jnp.inexact):  # a NaN, once seen, stays
            take_b = (take_b | jnp.isnan(vb)) & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    _, i = jax.lax.associative_scan(comb, (x, idx), axis=axis)
    # the values are read at the indices: XLA turns ``where(b >= a, b, a)`` into ``max(a, b)``, which may pick the
    # other zero of a tie between -0.0 and +0.0 (PyTorch's running maximum takes the later one, sign included)
    return jnp.take_along_axis(x, i, axis=axis), i.astype(jnp.int64)


def _cummax_vjp(g, x, out, axis, largest):
    if axis is None:
        return g[0]
    return scatter_add_along(x.shape, x.dtype, out[1], g[0], axis)


_CUMMAX = defop("cummax", _cummax_fwd, vjp=_cummax_vjp, grad_name="CummaxBackward0")
_CUMMIN = defop("cummin", _cummax_fwd, vjp=_cummax_vjp, grad_name="CumminBackward0")


def _empty_scan(name, input):
    from .creation import empty
    return RETURN_TYPES[name](input.clone(), empty(tuple(input.shape), dtype=_dtype.int64))


def _scan_dim(name, dim, input):
    """cummax/cummin's axis; a 0-d input takes only -1 or 0, with PyTorch's message for it."""
    if input.ndim == 0 and isinstance(dim, int) and dim not in (-1, 0):
        raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    return one_dim(dim, input.ndim)


def _complex_check(input, name):
    if input.is_complex():  # a 0-d input does not reach PyTorch's kernel, but autograd refuses it
        if input.ndim > 0:
            raise not_implemented(f"{name}_cpu", input.dtype)
        if input._rg and STATE.grad_enabled:
            raise RuntimeError(f"{name} does not support automatic differentiation for outputs with complex dtype.")


@structured_out
def cummax(input, dim):
    require_tensor(input, "cummax")
    if input.numel() == 0:  # PyTorch returns an empty input at once: no dim or dtype check
        return _empty_scan("cummax", input)
    axis = _scan_dim("cummax", dim, input)  # PyTorch checks the dim before the dtype
    _complex_check(input, "cummax")
    v, i = apply(_CUMMAX, (input,), axis=axis, largest=True)
    return RETURN_TYPES["cummax"](v, i)


@structured_out
def cummin(input, dim):
    require_tensor(input, "cummin")
    if input.numel() == 0:  # PyTorch returns an empty input at once: no dim or dtype check
        return _empty_scan("cummin", input)
    axis = _scan_dim("cummin", dim, input)  # PyTorch checks the dim before the dtype
    _complex_check(input, "cummin")
    v, i = apply(_CUMMIN, (input,), axis=axis, largest=False)
    return RETURN_TYPES["cummin"](v, i)


def _cexp(z):
    """C's complex exp, as PyTorch's CPU kernels: ``exp(-inf + iy)`` is 0 for every y (XLA's is NaN for an
    infinite or NaN y)."""
    return jnp.where(z.real == -jnp.inf, jnp.zeros((), z.dtype), jnp.exp(z))


def _complex_log_add_exp(x, acc):
    """PyTorch's ``_log_add_exp_helper`` for complex numbers: ``log1p(exp(min - max)) + max`` by real part, so the
    result's imaginary part stays within pi/2 of the larger term's (never wrapped into (-pi, pi]); a NaN part
    makes both NaN; equal infinite real parts give ``min`` (-inf) or ``log(exp(min) + exp(max))`` (+inf)."""
    nan_x = jnp.isnan(x.real) | jnp.isnan(x.imag)
    nan_acc = jnp.isnan(acc.real) | jnp.isnan(acc.imag)
    x_smaller = x.real < acc.real
    lo = jnp.where(nan_acc, acc, jnp.where(nan_x | ~x_smaller, jnp.where(nan_x, x, acc), x))
    hi = jnp.where(nan_acc, acc, jnp.where(nan_x | x_smaller, jnp.where(nan_x, x, acc), x))
    same_inf = ~jnp.isfinite(lo.real) & (lo.real == hi.real)
    at_inf = jnp.where(lo.real < 0, lo, jnp.log(jnp.exp(lo) + jnp.exp(hi)))
    r = jnp.where(same_inf, at_inf, jnp.log1p(_cexp(lo - hi)) + hi)
    return jnp.where(jnp.isnan(lo.real) | jnp.isnan(lo.imag), jnp.asarray(complex(jnp.nan, jnp.nan), r.dtype), r)


def _complex_logcumsumexp(x, axis, reverse=False):
    """PyTorch's CPU complex logcumsumexp: a sequential scan from -inf in the accumulate type."""
    acc = ACC.get(x.dtype, x.dtype)
    xs = jnp.moveaxis(x.astype(acc), axis, 0)

    def step(carry, v):
        carry = _complex_log_add_exp(v, carry)
        return carry, carry
    init = jnp.full(xs.shape[1:], -jnp.inf, acc)
    _, out = jax.lax.scan(step, init, xs, reverse=reverse)
    return jnp.moveaxis(out, 0, axis).astype(x.dtype)


def _logcumsumexp_fwd(x, *, axis):
    if axis is None:
        return x
    if jnp.iscomplexobj(x):
        return _complex_logcumsumexp(x, axis)
    return jax.lax.cumlogsumexp(x, axis=axis)


def _alpha_times(alpha, z):
    """``alpha * z`` as PyTorch's complex add/sub form it (``a - b`` is ``a + (-1) * b``, a complex product): an
    infinite part of ``z`` makes the other part NaN."""
    return jax.lax.complex(alpha * z.real - 0.0 * z.imag, alpha * z.imag + 0.0 * z.real)


def _logcumsumexp_vjp(g, x, out, *, axis):
    """PyTorch's logcumsumexp_backward: the positive and negative parts of the gradient, each a reversed
    logcumsumexp in log space (an infinite input gives NaN there, as in PyTorch)."""
    if axis is None or g.size == 0:
        return g
    if jnp.iscomplexobj(g):  # no split by sign: one reversed logcumsumexp of log(conj(g)) - out
        part = _complex_logcumsumexp(jnp.log(jnp.conj(g)) + _alpha_times(-1.0, out), axis, reverse=True)
        return jnp.conj(_cexp(part + _alpha_times(1.0, x)))
    lowest = jnp.asarray(jnp.finfo(g.dtype).min, g.dtype)
    log_abs = jnp.log(jnp.abs(g))
    parts = [jnp.where(sel, log_abs, lowest) for sel in (g > 0, g < 0)]
    pos, neg = (jnp.exp(jax.lax.cumlogsumexp(p - out, axis=axis, reverse=True) + x) for p in parts)
    return pos - neg


_LOGCUMSUMEXP = defop("logcumsumexp", _logcumsumexp_fwd, vjp=_logcumsumexp_vjp, grad_name="LogcumsumexpBackward0")


@parser_worded
def logcumsumexp(input, dim, *, out=None):
    require_tensor(input, "logcumsumexp")
    d = one_dim(dim, input.ndim)
    if input.dtype.category < _FLOAT:
        raise not_implemented("logcumsumexp_out_cpu", input.dtype)
    return out_exact(apply(_LOGCUMSUMEXP, (input,), axis=d), out, "logcumsumexp", "expected scalar_type {expected} but "
                     "found {out}")


for _n in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
    _public(_n, globals()[_n])
def _scan_inplace(fn, name):
    """``cumsum_``/``cumprod_``: PyTorch scans in the tensor's own dtype (its out is the tensor itself: a bool one
    has no kernel), and a ``dtype`` other than the tensor's is a bad in-place call."""
    inplace = make_inplace(fn, name)

    def method(self, dim, *, dtype=None):
        if dtype is not None and _dtype.as_dtype(dtype) is not self.dtype:
            from .elementwise import c10_name
            raise RuntimeError(f"Bad in-place call: input tensor dtype {c10_name(self.dtype)} and output tensor dtype "
                               f"{c10_name(_dtype.as_dtype(dtype))} should match")
        return inplace(self, dim, dtype=self.dtype)
    method.__name__ = method.__qualname__ = name
    return method


METHODS["cumsum_"] = _scan_inplace(cumsum, "cumsum_")
METHODS["cumprod_"] = _scan_inplace(cumprod, "cumprod_")


# ----------------------------------------------------------------------------------------------------------------
# diff / trapezoid (composed of recorded ops, so their gradients are those of the parts)


def _diff(x, *, n, axis):
    """``n`` forward differences; a complex one is PyTorch's ``hi - lo``, its add kernel with alpha -1 multiplied
    out in full (``arith._plus_scaled``), so an infinite ``lo`` gives a NaN part as ``torch.sub`` does."""
    if not jnp.iscomplexobj(x):
        return jnp.diff(x, n=n, axis=axis)
    for _ in range(n):
        m = x.shape[axis]
        if m == 0:
            break
        lo, hi = jax.lax.slice_in_dim(x, 0, m - 1, axis=axis), jax.lax.slice_in_dim(x, 1, m, axis=axis)
        x = _plus_scaled(hi, lo, None, negate=True)
    return x


_DIFF = defop("diff", _diff, linear=True, grad_name="SubBackward0")


@castable_out
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (``prepend``/``append`` are concatenated first)."""
    require_tensor(input, "diff")
    require_int(n, "diff", 2, "n")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    parts = []
    for arg, t in (("prepend", prepend), ("append", append)):
        if t is not None:
            require_tensor(t, "diff", arg=arg, pos=4 if arg == "prepend" else 5)
            if t.ndim != input.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
            for i in range(input.ndim):  # (ATen's diff_check, also for n = 0)
                if i != d and t.shape[i] != input.shape[i]:
                    raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of "
                                       f"input except along the differencing dimension; input.size({i}) = "
                                       f"{input.shape[i]}, but got tensor.size({i}) = {t.shape[i]}")
    if n == 0:  # PyTorch: a copy of the input (CopyBackwards), prepend/append unused
        from .copying import _COPY
        return apply(_COPY, (input.detach(), input))
    if prepend is not None or append is not None:
        from .join import cat
        parts = [t for t in (prepend, input, append) if t is not None]
        input = cat(parts, d)
    if input.dtype.category >= _dtype._FLOAT and input.shape[d]:
        # ATen's diff_helper, op by op: narrow(1) - narrow(0), n times (SubBackward0 over two SliceBackward0s)
        out, length = input, input.shape[d] - 1
        for _ in range(builtins.min(n, input.shape[d])):
            out = out.narrow(d, 1, length) - out.narrow(d, 0, length)
            length -= 1
        return out
    out = apply(_DIFF, (input,), n=int(builtins.min(n, input.shape[d])) if input.shape[d] else int(n), axis=d)
    if input._view is not None or input._layout is not None:
        # PyTorch subtracts two narrowed views of the input n times: each result is laid out in their strides'
        # order (TensorIterator), as is the next step's
        shape, strides, _ = layout(input)
        shape = list(shape)
        for _ in range(builtins.min(n, shape[d])):
            shape[d] -= 1
            strides = output_strides([(shape, strides)] * 2, shape) or contiguous_strides(shape)
        if tuple(strides) != contiguous_strides(shape):
            out._layout = (tuple(shape), tuple(strides), 0)
    return out


# PyTorch's trapezoid rules are C++ composites: their ``tensor * number`` and ``tensor / number`` are the Scalar
# overloads of mul and div (MulBackward1, DivBackward1), which Python's operators never reach
# (their nodes list the tensor only: ops.scalar_overloads)
_MUL_SCALAR, _DIV_SCALAR = _scalar_overloads._MUL, _scalar_overloads._DIV


def _trapezoid_parts(y, x, dx, dim):
    from .slicing import narrow
    d = wrap_dim(dim, y.ndim)
    m = y.shape[d]
    lo, hi = narrow(y, d, 0, m - 1), narrow(y, d, 1, m - 1)
    if x is None:
        return d, lo + hi, 1 if dx is None else dx
    require_tensor(x, "trapezoid", 2, "x")
    if x.ndim == 1:
        if x.shape[0] != m:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        from .shape import reshape
        shape = [1] * y.ndim
        shape[d] = m - 1
        return d, lo + hi, reshape(diff(x), shape)
    return d, lo + hi, diff(x, dim=d)


def _check_not_bool(y, name):
    if y.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``, with sample points ``x`` or a constant spacing ``dx`` (default 1)."""
    require_tensor(y, "trapezoid", 1, "y")
    _check_not_bool(y, "trapezoid")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    if y.ndim == 0:  # (PyTorch reads the size of the integration dim: of x when x is a 0-d tensor too)
        which = 0 if isinstance(x, Tensor) and x.ndim == 0 else dim
        raise IndexError(f"Dimension specified as {which} but tensor has no dimensions")
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        from .creation import zeros
        return zeros(tuple(s for i, s in enumerate(y.shape) if i != d), dtype=y.dtype)
    d, pair_sum, spacing = _trapezoid_parts(y, x, dx, dim)
    if isinstance(spacing, Tensor):  # PyTorch's ((left + right) * dx).sum(dim) / 2.
        return apply(_DIV_SCALAR, (sum(pair_sum * spacing, d), 2.0))
    from .slicing import select  # a constant spacing: (y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx
    ends = apply(_MUL_SCALAR, (select(y, d, 0) + select(y, d, -1), 0.5))
    return apply(_MUL_SCALAR, (sum(y, d) - ends, spacing))


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoidal integrals along ``dim`` (one element shorter than ``y`` there)."""
    require_tensor(y, "cumulative_trapezoid", 1, "y")
    _check_not_bool(y, "cumulative_trapezoid")
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return y
    d, pair_sum, spacing = _trapezoid_parts(y, x, dx, dim)
    if isinstance(spacing, Tensor):  # PyTorch's (dx * (left + right)).cumsum(dim) / 2.
        return apply(_DIV_SCALAR, (cumsum(spacing * pair_sum, d), 2.0))
    return cumsum(apply(_MUL_SCALAR, (pair_sum, spacing / 2.0)), d)  # (dx / 2. * (left + right)).cumsum(dim)


_public("diff", diff)
for _n in ("trapezoid", "trapz", "cumulative_trapezoid"):
    _public(_n, globals()[_n], method=False)
