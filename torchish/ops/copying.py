"""Whole-tensor copies: clone (a new tensor with the same values, differentiable) and the in-place writes
fill_/zero_/copy_ (``copy_`` broadcasts ``src`` and moves it to the destination's device)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._dtype import FLOAT8_NP
from .._layout import check_memory_format
from .._tensor import Tensor
from .casting import cast, check_scalar_fits, warn_discard_imag
from .elementwise import need_bool, require_tensor, scalar_or_tensor
from .registry import apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public

# (a float8 copy keeps its bits: -0.0 + 0 would be +0.0)
_CLONE = defop("clone", lambda x: x if x.dtype == jnp.bool_ or x.dtype in FLOAT8_NP else x + jnp.zeros((), x.dtype),
               linear=True, grad_name="CloneBackward0")


def clone(input, *, memory_format=None):
    require_tensor(input, "clone")
    check_memory_format(memory_format, input.ndim)
    from .out_layout import like_format  # (a copy keeps a dense input's strides)
    return like_format(apply(_CLONE, (input,)), input, memory_format)


_public("clone", clone)


# fill_ / zero_ / copy_

def _fill_fwd(x, v):
    if x.dtype in FLOAT8_NP:  # (PyTorch's rounding: e4m3fn saturates, 0 is 2^-127 in e8m0fnu)
        return jnp.broadcast_to(cast(jnp.asarray(v), x.dtype), x.shape)
    return jnp.broadcast_to(jnp.asarray(v, x.dtype), x.shape)


# PyTorch names the node by overload: fill_(Scalar) FillBackward2, fill_(Tensor) FillBackward3, zero_ ZeroBackward0;
# the out-of-place torch.fill(Scalar) FillBackward0, fill(Tensor) FillBackward1
_FILL = defop("fill", _fill_fwd, grad_name="FillBackward2", linear=True)
_FILL_T = defop("fill_tensor", _fill_fwd, grad_name="FillBackward3", linear=True)
_FILL_NEW = overload(_FILL, "FillBackward0")
_FILL_NEW_T = overload(_FILL_T, "FillBackward1")
_ZERO = defop("zero", _fill_fwd, grad_name="ZeroBackward0", linear=True)
_COPY = defop("copy", lambda x, src: jnp.broadcast_to(cast(src, x.dtype), x.shape), grad_name="CopyBackwards",
              linear=True)


def _host_fill(self, value):
    """``self`` filled with the number ``value`` from a host buffer, where no autograd, trace, lazy capture or
    forward-mode AD sees the write and ``self`` is no view (``zero_grad(set_to_none=False)``, ``nn.init``,
    ``reset_running_stats``): its value is replaced as the fill kernel's result would replace it, without compiling
    that kernel for each new shape. None otherwise."""
    from .. import _device
    from .._config import config
    from ..autograd.grad_mode import STATE
    from . import registry
    from .filled import host_filled
    if (self._view is not None or (self._rg and STATE.grad_enabled) or STATE.recorder is not None or config.lazy
            or registry.forward_hook is not None or not _concrete(self._v)):
        return None
    v = host_filled(self._v.shape, value, self.dtype, _device.placement(self._v))
    return None if v is None else self._assign(Tensor._make(v))


def _concrete(v):
    """Whether ``v`` is a concrete jax array (not a lazy value, a meta array or a tracer)."""
    return isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer)


def _fill_value(self, value, name):
    """``value`` as fill_/fill take it: a 0-d Tensor, or a number that fits ``self``'s dtype."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    if name == "fill" and not isinstance(value, (Tensor, bool, int, float, complex)):
        got = type(value).__name__
        raise TypeError(f"fill() received an invalid combination of arguments - got (Tensor, {got}), but expected one "
                        f"of:\n * (Tensor input, Tensor value)\n      didn't match because some of the arguments have "
                        f"invalid types: (Tensor, !{got}!)\n * (Tensor input, Number value)\n      didn't match "
                        f"because some of the arguments have invalid types: (Tensor, !{got}!)\n")
    value = scalar_or_tensor(value, name, 1, "value")
    if not isinstance(value, Tensor):
        value = check_scalar_fits(value, self.dtype, numel=self.numel())
    return value


def fill(input, value):
    """``torch.fill``: a new tensor of ``input``'s shape and dtype filled with ``value`` (differentiable: a zero
    gradient to ``input``, the sum of the gradient to a Tensor ``value``)."""
    require_tensor(input, "fill")
    value = _fill_value(input, value, "fill")
    return apply(_FILL_NEW_T if isinstance(value, Tensor) else _FILL_NEW, (input, value))


def _fill_(self, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    self._check_inplace()
    value = _fill_value(self, value, "fill_")
    if isinstance(value, Tensor):
        return self._assign(apply(_FILL_T, (self, value)))
    done = _host_fill(self, value)
    if done is not None:
        return done
    from .inplace import overlap_ok
    with overlap_ok(self):  # (PyTorch's fill_ of a number writes an expanded tensor; of a tensor it refuses)
        return self._assign(apply(_FILL, (self, value)))


def _zero_(self):
    self._check_inplace()
    done = _host_fill(self, 0)
    if done is not None:
        return done
    from .inplace import overlap_ok
    with overlap_ok(self):
        return self._assign(apply(_ZERO, (self, 0)))


def _copy_(self, src, non_blocking=False):
    if type(non_blocking) is not bool:
        need_bool("copy_", non_blocking, "non_blocking", 2)
    if not isinstance(src, Tensor):
        src = scalar_or_tensor(src, "copy_", 1, "other")
        if not isinstance(src, Tensor):
            return _fill_(self, src)
    try:
        full = np.broadcast_shapes(tuple(src.shape), tuple(self.shape))
    except ValueError:
        from .broadcast import broadcast_error  # (broadcast -> shape -> copying at import)
        raise broadcast_error(tuple(self.shape), tuple(src.shape)) from None
    if tuple(full) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(full)}")
    self._check_inplace()
    from .inplace import check_overlap
    check_overlap(self, src)
    warn_discard_imag(src.dtype, self.dtype)
    if src.device != self.device:
        from .convert import _to_meta, move
        if self.is_meta:  # (PyTorch: a copy into a meta tensor checks shapes and writes nothing)
            src = _to_meta(src)
        elif src.is_meta:
            from .. import _meta
            raise NotImplementedError(_meta.NO_DATA)
        else:
            src = move(src, next(iter(self._d.devices())))
    return self._assign(apply(_COPY, (self, src)))


METHODS.update({"fill_": _fill_, "zero_": _zero_, "copy_": _copy_})
