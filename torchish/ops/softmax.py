"""logsumexp and the softmax family (softmax, log_softmax), with PyTorch's implicit-dim warning, ``dtype=`` casting
and gradients from the saved output."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .. import _precision
from .._tensor import Tensor, wrap_dim
from ..autograd.grad_mode import STATE, no_grad
from .elementwise import (_out, need_bool, no_derivative, not_implemented, out_structured, parser_worded,
                          require_tensor, type_name)
from .reduce import dims, numpy_kwargs
from . import parser_errors
from . import registry as _registry
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public
_FLOAT = _dtype._FLOAT


# ----------------------------------------------------------------------------------------------------------------
# logsumexp


def _lse_fwd(x, *, axis, keepdims):
    """PyTorch's composite: ``m = amax(x)`` (0 where infinite), ``log(sum(exp(x - m))) + m``, every op rounded
    to a half input's dtype (the sum accumulates in float32)."""
    if axis == ():
        return x
    if x.dtype not in _HALF:
        return jax.nn.logsumexp(x, axis=axis, keepdims=keepdims)
    wide, r = _precision.stepper(x.dtype)
    xw = wide(x)
    m = jnp.max(xw, axis=axis, keepdims=True, initial=-jnp.inf)  # (an empty reduction: -inf, then 0)
    m = jnp.where(jnp.isinf(m), jnp.zeros((), m.dtype), m)
    e = r(jnp.exp(r(xw - m)))
    total = r(jnp.sum(e, axis=axis, keepdims=keepdims))
    m_out = m if keepdims else jnp.squeeze(m, axis)
    return (r(jnp.log(total)) + m_out).astype(x.dtype)


def _lse_vjp(g, x, out, axis, keepdims):
    """PyTorch's logsumexp_backward: ``grad * (self - result).exp()``, each op rounded to a half dtype."""
    if axis == ():
        return g
    if not keepdims and axis is not None:  # dim=(): the 0-dim grad broadcasts, as PyTorch's (no dims to restore)
        g, out = jnp.expand_dims(g, axis), jnp.expand_dims(out, axis)
    wide, r = _precision.stepper(x.dtype)
    e = r(jnp.exp(r(wide(x) - wide(out))))
    return (wide(g) * (jnp.conj(e) if jnp.iscomplexobj(e) else e)).astype(x.dtype)


_LSE = defop("logsumexp", _lse_fwd, vjp=_lse_vjp, promote="float", grad_name="LogsumexpBackward0")


@numpy_kwargs
def logsumexp(input, dim, keepdim=False, *, out=None):
    require_tensor(input, "logsumexp")
    need_bool("logsumexp", keepdim)
    if dim is None:  # (dims() reads None as every dim; PyTorch's logsumexp requires its dims)
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    ax = dims(dim, input.ndim)
    if ax is None and not keepdim and input.ndim and input.numel():
        # dim=(): PyTorch's composite adds amax(keepdim=True)'s shape, squeezed over no dims, to a 0-dim result
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{', '.join('1' * input.ndim)}]")
    if isinstance(out, Tensor):
        if out.dtype.category < _FLOAT:
            raise RuntimeError(f"logsumexp(): Expected floating point type for result tensor, but got: "
                               f"{_dtype.scalar_type_name(out.dtype)}")
        if out.dtype is not _lse_dtype(input.dtype):
            return _out(_logsumexp_into(input, ax, bool(keepdim), out.dtype), out, "logsumexp")
    return _out(apply(_LSE, (input,), axis=ax, keepdims=bool(keepdim)), out, "logsumexp")


def _lse_dtype(dt):
    return dt if dt.category >= _FLOAT else _dtype.get_default_dtype()


def _logsumexp_into(input, ax, keepdim, dtype):
    """PyTorch's logsumexp_out for an ``out`` of another dtype than the result's: ``exp(x - max)`` in the input's
    (floating) dtype, summed into ``dtype`` (a complex sum into a real ``out`` keeps its real part), then ``log`` and
    ``+ max`` there."""
    from . import extrema, reduce as R, unary
    x = input.to(_lse_dtype(input.dtype))
    ax = tuple(range(x.ndim)) if ax is None else ax
    if not x.numel():
        return unary.log(R.sum(unary.exp(x), ax, keepdim, dtype=dtype))
    m = extrema.amax(x.real if x.is_complex() else x, ax, keepdim=True)
    m = m.masked_fill(m.abs() == float("inf"), 0)
    e = unary.exp(x - m)
    total = R.sum(e.real if e.is_complex() and dtype.category == _FLOAT else e, ax, keepdim, dtype=dtype)
    return (unary.log(total) + (m if keepdim else m.squeeze(ax))).to(dtype)


_public("logsumexp", logsumexp)


# ----------------------------------------------------------------------------------------------------------------
# softmax family


def implicit_dim(name, ndim, stacklevel):
    """PyTorch's ``_get_softmax_dim``: warn that ``name`` was called without ``dim`` and pick the legacy one."""
    import warnings
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel + 1)
    return 0 if ndim in (0, 1, 3) else 1


# PyTorch's CPU kernels compute float16/bfloat16 softmaxes and their gradients in float32 and round once; the
# last-dim log_softmax kernel alone keeps the sum of exponentials, and its log, in the half type.
_HALF = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))


def _widen(*vals):
    return [v.astype(np.float32) for v in vals] if vals[0].dtype in _HALF else list(vals)


def _inner(x, axis):
    """A half-precision softmax over a dimension that is not the last: PyTorch's kernel for it accumulates in
    float32 from index 0 and divides (where the last-dim kernel multiplies by the reciprocal)."""
    return x.dtype in _HALF and axis is not None and axis != x.ndim - 1


def _softmax_fwd(x, *, axis, dtype):
    x = x.astype(dtype)
    if _inner(x, axis):
        xw = x.astype(np.float32)
        e = jnp.exp(xw - jnp.max(xw, axis=axis, keepdims=True))
        return _precision.div(e, _precision.seq_sum(e, axis)).astype(x.dtype)
    return jax.nn.softmax(*_widen(x), axis=axis).astype(x.dtype)


def _softmax_vjp(g, x, out, axis, dtype):
    gw, ow = _widen(g, out)
    total = _precision.seq_sum(gw * ow, axis) if _inner(out, axis) else jnp.sum(gw * ow, axis=axis, keepdims=True)
    return (ow * (gw - total)).astype(out.dtype)


def _log_softmax_fwd(x, *, axis, dtype):
    x = x.astype(dtype)
    if x.dtype not in _HALF:
        return jax.nn.log_softmax(x, axis=axis)
    shifted = x.astype(np.float32)
    shifted = shifted - jnp.max(shifted, axis=axis, keepdims=True)
    total = jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True)
    if axis is None or axis == x.ndim - 1:
        r = _precision.stepper(x.dtype)[1]
        return (shifted - r(jnp.log(r(total)))).astype(x.dtype)
    return (shifted - jnp.log(total)).astype(x.dtype)


def _log_softmax_vjp(g, x, out, axis, dtype):
    gw, ow = _widen(g, out)
    return (gw - jnp.exp(ow) * jnp.sum(gw, axis=axis, keepdims=True)).astype(out.dtype)


_SOFTMAX = defop("softmax", _softmax_fwd, vjp=_softmax_vjp, grad_name="SoftmaxBackward0")
_LOG_SOFTMAX = defop("log_softmax", _log_softmax_fwd, vjp=_log_softmax_vjp, grad_name="LogSoftmaxBackward0")


def _softmax_args(name, input, dim, dtype):
    require_tensor(input, name)
    if dim is None:
        dim = implicit_dim(name, input.ndim, 4)
    ax = wrap_dim(dim, input.ndim)  # a 0-dim input accepts dim 0 or -1, as PyTorch
    ax = ax if input.ndim else None
    if dtype is not None:
        from .convert import to_dtype
        input = to_dtype(input, dtype)
    elif _registry.autocast_hook is not None:  # the result dtype follows autocast's cast (an explicit dtype wins)
        input, = _registry.autocast_hook(name, (input,))
    if input.dtype.category != _FLOAT and input.numel():  # an empty input needs no kernel: PyTorch accepts it
        last = ax is None or ax == input.ndim - 1
        raise not_implemented(f"{name}_{'lastdim_' if last else ''}kernel_impl", input.dtype)
    return input, ax


def _third(name, third, dtype):
    """``torch.softmax(x, dim, dtype)`` and ``F.softmax(x, dim, _stacklevel, dtype)`` share the third position."""
    if third is None or (type(third) is int):
        return dtype
    if not isinstance(third, _dtype.dtype):
        raise TypeError(f"{name}(): argument 'dtype' (position 3) must be torch.dtype, not {type(third).__name__}")
    return third


# the out= kernels: no derivative (backward through their result raises PyTorch's error)
_OUT_OPS = {op: defop(f"{op.name}_out", op.fwd, vjp=no_derivative(op.name), grad_name="NotImplemented")
            for op in (_SOFTMAX, _LOG_SOFTMAX)}


def _apply_softmax(op, name, input, dim, third, dtype, out_kernel=False):
    input, ax = _softmax_args(name, input, dim, _third(name, third, dtype))
    if input.dtype.category != _FLOAT:
        return input.clone()  # empty (checked above)
    return apply(_OUT_OPS[op] if out_kernel else op, (input,), axis=ax, dtype=input._v.dtype)


@numpy_kwargs
def implicit_softmax(input, dim=None, _stacklevel=None, dtype=None):
    """``F.softmax``: without ``dim`` it warns and picks one, as PyTorch's does."""
    return _apply_softmax(_SOFTMAX, "softmax", input, dim, _stacklevel, dtype)


@numpy_kwargs
def implicit_log_softmax(input, dim=None, _stacklevel=None, dtype=None):
    """``F.log_softmax``: without ``dim`` it warns and picks one, as PyTorch's does."""
    return _apply_softmax(_LOG_SOFTMAX, "log_softmax", input, dim, _stacklevel, dtype)


def _need_dim(name, dim):
    if dim is None:
        raise TypeError(f"{name}() missing 1 required positional arguments: \"dim\"")


def softmax(input, dim=None, dtype=None):
    """``torch.softmax`` and ``Tensor.softmax``: ``dim`` is required (TypeError without it); the third argument
    is ``dtype`` (``F.softmax``'s ``_stacklevel`` is not PyTorch's here)."""
    _need_dim("softmax", dim)
    return implicit_softmax(input, dim, None, _dtype_only("softmax", dtype))


def log_softmax(input, dim=None, dtype=None):
    """``torch.log_softmax`` and ``Tensor.log_softmax``: ``dim`` is required (TypeError without it)."""
    _need_dim("log_softmax", dim)
    return implicit_log_softmax(input, dim, None, _dtype_only("log_softmax", dtype))


def _dtype_only(name, dtype):
    if dtype is not None and not parser_errors.is_dtype(dtype):
        raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {type_name(dtype)}")
    return dtype


def _with_out(fn, op):
    """``torch.softmax``/``log_softmax`` taking ``out=`` as PyTorch's: their out kernels have no derivative, so an
    input that requires grad makes ``out`` a ``NotImplemented`` node (backward through it raises), and an ``out``
    that requires grad raises. Its TypeErrors are worded as PyTorch's parser words them (``parser_worded``)."""
    name = fn.__name__

    def f(input, dim=None, dtype=None, *, out=None, axis=None):
        if axis is not None:  # (NumPy's spelling, as PyTorch's argument parser takes it)
            dim = axis
        if out is None or not STATE.grad_enabled:
            return out_structured(fn(input, dim, dtype), out, name)
        if isinstance(out, Tensor) and out._rg:
            raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        _need_dim(name, dim)
        result = _apply_softmax(op, name, input, dim, None, _dtype_only(name, dtype), out_kernel=True)
        if not result._rg:
            return out_structured(result, out, name)
        with no_grad():
            out_structured(result, out, name)  # PyTorch's checks; writes the value (a new version)
        out._gfn, out._out_nr, out._rg = result._gfn, result._out_nr, True
        return out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = fn.__doc__
    return parser_worded(f)


_public("softmax", _with_out(softmax, _SOFTMAX))
_public("log_softmax", _with_out(log_softmax, _LOG_SOFTMAX))
