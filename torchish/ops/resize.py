"""Changing which storage a tensor uses, or its size: ``resize_``, ``resize_as_``, ``resize``/``resize_as`` (the
deprecated autograd copies), ``set_``, ``is_set_to``, ``share_memory_``/``is_shared``.

``resize_`` to a size needing no more than the storage holds (from the tensor's storage offset) makes the tensor a
contiguous ``as_strided`` view of that storage: it keeps the leading data in order and still shares the storage.
A larger size copies the storage into a longer one (the new trailing elements are zeros; PyTorch leaves them
uninitialised) that the tensor alone uses from then on. ``set_(source)`` makes the tensor an alias of ``source``
(same storage, sizes, strides and graph).

Example:
    >>> import torchish as torch
    >>> x = torch.arange(6.0)
    >>> x.resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
"""
from __future__ import annotations

import math
import warnings
import weakref

import jax.numpy as jnp

from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import inplace as _ip
from .registry import Family, apply, defop
from .shape import move_storage_address
from .strided import _AS_STRIDED, _storage, as_strided

_fam = Family(globals())


def _sizes(args):
    if len(args) == 1 and not isinstance(args[0], int):
        args = tuple(args[0])
    return tuple(int(s) for s in args)


def _leave_storage(t: Tensor):
    """Detach ``t`` from the storage it shares: its base forgets it, and views of ``t`` itself move to a hidden
    base holding ``t``'s current value (they keep their values)."""
    if STATE.recorder is not None:
        STATE.recorder.wrote(t)
    if t._view is not None:
        base = t._view[0]
        if base._views is not None:  # rebuilt, not discard(): a weakref compares its referents with ==
            base._views = weakref.WeakSet(v for v in list(base._views) if v is not t)
        return
    if t._views:
        old = _ip.hidden_storage(Tensor._make(t._d))
        old._vc = t._vc
        for v in list(t._views):
            old._views.add(v)
            v._view = (old,) + v._view[1:]
        move_storage_address(t, old)
    t._views = None


def _become(t: Tensor, out: Tensor):
    """``t`` takes ``out``'s value, view relation and graph (``out`` is a view of a storage ``t`` now uses)."""
    t._view = out._view
    if out._view is not None:
        out._view[0]._views.add(t)
    t._d = out._d
    t._grad_fn, t._out_nr, t._rg = out._grad_fn, out._out_nr, out._rg
    t._vc.value += 1


def resize_(self, *sizes, size=None, memory_format=None):
    """Resize in place to ``sizes`` (contiguous), keeping the leading elements of the storage in order."""
    from .shape import _args_or_kw, _size_args
    size = _size_args(_args_or_kw(sizes, size, "resize_", "size"), "resize_")
    if self._rg:
        raise RuntimeError("cannot resize variables that require grad")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    self._check_inplace()
    shape, strides, offset = _ip.layout(self)
    if size == tuple(shape) and _ip.is_contiguous(shape, strides):
        return self
    stride = _ip.contiguous_strides(size)
    store, _ = _storage(self)
    have, need = math.prod(store._v.shape), offset + math.prod(size)
    if need <= have:
        return _ip.inplace_view(self, as_strided(self, size, stride, offset))
    flat = store._d.reshape(-1)
    grown = _ip.hidden_storage(Tensor._make(jnp.concatenate([flat, jnp.zeros((need - have,), flat.dtype)])))
    _leave_storage(self)
    _become(self, apply(_AS_STRIDED, (grown,), size=size, stride=stride, offset=offset))
    return self


def resize_as_(self, the_template, *, memory_format=None):
    """``resize_`` to ``the_template``'s size."""
    return resize_(self, tuple(the_template.shape), memory_format=memory_format)


_RESIZE = defop("resize", lambda x, *, size: x.reshape(size), linear=True, grad_name="ResizeBackward")


def _autograd_resize(self, size):
    n, have = math.prod(size), self.numel()
    if n != have:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, size))} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, self.shape))} ({have} elements). autograd's "
                           "resize can only change the shape of a given tensor, while preserving the number of "
                           "elements. ")
    return apply(_RESIZE, (self,), size=size)


def resize(self, *sizes):
    """Deprecated: a copy of ``self`` with shape ``sizes`` (same number of elements)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _autograd_resize(self, _sizes(sizes))


def resize_as(self, tensor):
    """Deprecated: ``resize(tensor.size())``."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _autograd_resize(self, tuple(tensor.shape))


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Make ``self`` use ``source``'s storage: an alias of ``source`` itself, or (with ``storage_offset``,
    ``size`` and optionally ``stride``) the given strided window of its storage. ``set_()`` empties it."""
    self._check_inplace()
    if source is None:
        _leave_storage(self)
        _become(self, Tensor._make(jnp.zeros((0,), self._v.dtype)))
        return self
    if not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor of type {self.dtype}")
    if size is not None:
        source = as_strided(source, size, _ip.contiguous_strides(tuple(size)) if stride is None else stride,
                            0 if storage_offset is None else storage_offset)
    if source is self:
        return self
    _leave_storage(self)
    if source._view is None:
        if source._views is None:
            source._views = weakref.WeakSet()
        self._view = (source, (), True)
        source._views.add(self)
        self._d = source._d
        self._grad_fn, self._out_nr, self._rg = source._grad_fn, source._out_nr, source._rg
    else:
        _become(self, source)
    self._vc = source._vc
    return self


def is_set_to(self, tensor):
    """Whether both tensors use the same storage with the same storage offset, sizes and strides."""
    if _storage(self)[0] is not _storage(tensor)[0] and _root(self) is not _root(tensor):
        return False
    return self.dtype == tensor.dtype and _ip.layout(self) == _ip.layout(tensor)


def _root(t):
    return t._view[0] if t._view is not None else t


def share_memory_(self):
    """Marks the tensor shared (JAX arrays are immutable buffers; nothing moves)."""
    self.__dict__["_shared"] = True
    return self


def is_shared(self):
    """True after ``share_memory_()`` and for accelerator tensors, as in PyTorch."""
    return bool(self.__dict__.get("_shared", False)) or self.device.type != "cpu"


for _n in ("resize_", "resize_as_", "resize", "resize_as", "set_", "is_set_to", "share_memory_", "is_shared"):
    _fam.method(_n, globals()[_n])
del _n
