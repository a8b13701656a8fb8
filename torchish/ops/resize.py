"""Changing which storage a tensor uses, or its size: ``resize_``, ``resize_as_``, ``resize``/``resize_as`` (the
deprecated autograd copies), ``set_``, ``is_set_to``, ``t.data = new`` (``set_data``), ``share_memory_``/``is_shared``.

``resize_`` to a size needing no more than the storage holds (from the tensor's storage offset) makes the tensor a
contiguous ``as_strided`` view of that storage: it keeps the leading data in order and still shares the storage.
A larger size copies the storage into a longer one (the new trailing elements are zeros; PyTorch leaves them
uninitialised); the views of a contiguous base move to it with the base, as PyTorch grows a storage in place (a
resized view, or a base with other strides, uses the longer storage alone). ``set_(source)`` and ``t.data =
source`` make the tensor use ``source``'s storage with its sizes and strides (``take_storage``).

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

from .. import _dtype
from .._runtime import uninitialized_value
from .._tensor import Tensor
from .._tensor_views import _detached, _written_through
from ..autograd.grad_mode import STATE
from . import inplace as _ip
from .elementwise import require_tensor
from .registry import Family, apply, defop
from .shape import move_storage_address, storage_root
from .strided import _AS_STRIDED, _storage, _storage_geometry, as_strided, storage_order

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
    views = list(t._views) if t._views else ()
    heir = _heir(views)
    if heir is not None:  # an alias of all of t's storage holds it from now on (no tensor is made: none leaks
        heir._view, heir._layout = None, _ip.dense_layout(t)  # from a torchish.compile trace)
        heir.__dict__.pop("_alias", None)
        heir._views = weakref.WeakSet(v for v in views if v is not heir)
        for v in heir._views:
            v._view = (heir,) + v._view[1:]
        move_storage_address(t, heir)
    elif views:
        old = _ip.hidden_storage(Tensor._make(t._d))
        old._vc = t._vc
        old.__dict__["_hidden_base"] = t  # (still the ``_base`` of its views, as PyTorch's autograd keeps it)
        for v in views:
            old._views.add(v)
            v._view = (old,) + v._view[1:]
        move_storage_address(t, old)
    t._views = None


def _heir(views):
    """The view that can hold the storage ``views`` share once their base leaves it: an alias of the whole
    storage (``d.data = t.data``, ``Parameter(t)``), when every view is outside the base's graph and none was
    taken from an alias (their ``_base`` and write paths do not name the base); None otherwise."""
    heir = None
    for v in views:
        base, chain, diff = v._view
        if diff or v._alias_base is not None:
            return None
        if heir is None and not chain and v._alias:
            heir = v
    return heir


def take_storage(t: Tensor, source: Tensor, share_version: bool) -> None:
    """Make ``t`` (which holds no storage: new, or just left its own) use ``source``'s storage with ``source``'s
    sizes and strides, as PyTorch's ``Parameter(source)`` and ``t.data = source`` do; ``t._v`` is set by the caller.

    A plain leaf ``source`` (no view, no views, outside any graph) becomes an alias of ``t``, which holds the
    storage from then on (the usual case, ``Parameter(torch.empty(3))``: the parameter stays no view, and nothing
    in-place checks on ``source`` is lost); any other ``source`` keeps its storage and ``t`` becomes an alias of
    it. ``share_version``: ``t`` takes ``source``'s version counter (``Parameter``) instead of keeping its own."""
    t.__dict__.pop("_alias", None)
    if source._view is None and not source._views and source._gfn is None and not source._rg \
            and source._coo is None:
        t._view, t._layout = None, _ip.dense_layout(source)
        if share_version:
            t._vc = source._vc
        source._view = (t, (), False)
        source._alias = True
        t._views = weakref.WeakSet([source])
        move_storage_address(source, t)
        return
    t._attach_alias(source, share_version)
    # (layout() reads a view's strides from its chain; torchish.compile reads ``_layout`` to give a leaf's new
    # .grad its strides)
    t._layout = _ip.dense_layout(t)


def _same_storage_and_geometry(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` already use one storage with the same view of it (``t.data = t.data``)."""
    return storage_root(a) is storage_root(b) and (a._view[1] if a._view else ()) == (b._view[1] if b._view else ())


def set_data(self: Tensor, new) -> None:
    """``t.data = new`` (PyTorch's ``set_data``): ``self`` takes ``new``'s storage, sizes, strides and dtype, and
    keeps its identity, version counter and autograd record (requires_grad, ``.grad``, hooks, grad_fn). Its own
    views keep the storage it had; later in-place writes to either tensor show in the other."""
    if not isinstance(new, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
    csr = hasattr(self, "_csr")  # (a CSR tensor: torchish._sparse_csr)
    if (self._coo is None) != (new._coo is None) or csr != hasattr(new, "_csr"):
        raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
                           "incompatible tensor type.")
    if csr:  # (PyTorch's CSR tensor keeps its entries: only its sizes and dtype become new's, contradicting them)
        return
    if self._rg and new.dtype.category < _dtype._FLOAT:
        raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
    if new._v.dtype == self._v.dtype and _same_storage_and_geometry(self, new):
        return
    if new._v.dtype != self._v.dtype or new._v.shape != self._v.shape or new.device != self.device:
        self._acc = None  # (PyTorch drops the gradient accumulator of another type; its shapes are the old ones)
    _leave_storage(self)
    value = _written_through(self._v, _detached(new._v)) if STATE.tracing and self._rg else new._v
    take_storage(self, new, share_version=False)
    self._v = value
    if new._coo is not None:  # a sparse tensor takes the new entries with the new value
        self._coo = new._coo.detach()


def _become(t: Tensor, out: Tensor):
    """``t`` takes ``out``'s value, view relation and graph (``out`` is a view of a storage ``t`` now uses)."""
    t._view = out._view
    if out._view is not None:
        out._view[0]._views.add(t)
    t._d = out._d
    t._gfn, t._out_nr, t._rg = out._gfn, out._out_nr, out._rg
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
    have, need = _storage_geometry(store)[0], offset + math.prod(size)
    if need <= have:
        return _ip.inplace_view(self, as_strided(self, size, stride, offset))
    flat = storage_order(store, store._d.reshape(-1))
    # (the new elements: uninitialised memory in PyTorch, its deterministic fill under use_deterministic_algorithms)
    fresh = jnp.full((need - have,), uninitialized_value(self.dtype), flat.dtype)
    grown = _ip.hidden_storage(Tensor._make(jnp.concatenate([flat, fresh])))
    if store is self and self._views and tuple(strides) == _ip.contiguous_strides(shape):
        _move_views(self, grown, tuple(shape))
    else:
        _leave_storage(self)
    _become(self, apply(_AS_STRIDED, (grown,), size=size, stride=stride, offset=offset))
    return self


def _move_views(t: Tensor, grown: Tensor, shape):
    """PyTorch grows a storage in place: the views of ``t`` (a contiguous base of ``shape``) move to ``grown``,
    whose leading elements are ``t``'s, and keep sharing it with ``t`` (still their ``_base``)."""
    if STATE.recorder is not None:
        STATE.recorder.wrote(t)
    step = ((_AS_STRIDED, (("size", shape), ("stride", _ip.contiguous_strides(shape)), ("offset", 0))),)
    grown.__dict__["_hidden_base"] = t
    for v in list(t._views):
        base, chain, diff = v._view
        v._view = (grown, step + chain, diff)
        grown._views.add(v)
    move_storage_address(t, grown)
    t._views = None


def resize_as_(self, the_template, *, memory_format=None):
    """``resize_`` to ``the_template``'s size."""
    require_tensor(the_template, "resize_as_", 1, "the_template")
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


_SET_OVERLOADS = ("()", "(torch.Storage source)", "(torch.Storage source, int storage_offset, tuple of ints size, "
                  "tuple of ints stride = None)", "(Tensor source)", "(Tensor source, int storage_offset, tuple of "
                  "ints size, tuple of ints stride = None)")


def _set_error(*args):
    from .elementwise import type_name
    from .parser_errors import listing
    got = ", ".join("torch.storage.UntypedStorage" if type(a).__name__ == "UntypedStorage" else
                    "Tensor" if isinstance(a, Tensor) else type_name(a) for a in args)
    return TypeError(listing("set_", _SET_OVERLOADS, args, got=f"({got})"))


def _set_source(self, source, storage_offset, size, stride):
    """The tensor ``self`` becomes: ``source`` itself, all of a storage, or a strided window of either's storage
    (a tensor's storage offset counts from its own, as PyTorch's)."""
    from .storage import TypedStorage, UntypedStorage
    given = (source,) + tuple(a for a in (storage_offset, size, stride) if a is not None)
    if (storage_offset is None) != (size is None) or stride is not None and size is None:
        raise _set_error(*given)
    if isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage) and source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {_dtype.scalar_type_name(self.dtype).lower()} or an "
                               f"UntypedStorage, but got type {_dtype.scalar_type_name(source.dtype)} for argument 1 "
                               "'storage'")
        flat = source._root.reshape(-1)
        if flat.dtype != self.dtype:
            flat = flat[:flat.numel() * flat.itemsize // self.itemsize * self.itemsize // flat.itemsize].view(self.dtype)
        if size is None:
            return flat
        offset = 0
    elif not isinstance(source, Tensor):
        raise _set_error(*given)
    else:
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor of type {self.dtype}")
        if size is None:
            return source
        if not source.is_contiguous():
            raise RuntimeError("passed in tensor to be used as storage must be contiguous")
        flat, offset = source, source.storage_offset()
    size = tuple(size)
    return as_strided(flat, size, _ip.contiguous_strides(size) if stride is None else stride,
                      offset + storage_offset)


def _set_fwd(x, source):
    return source


def _set_vjp(g, x, source, *, out):
    raise RuntimeError("derivative for set_ is not implemented")


_SET = defop("set_", _set_fwd, vjp=_set_vjp, grad_name="NotImplemented", linear=True)


_NO_SOURCE = object()  # (``set_()``: an explicit None is no source but the parser's TypeError)


def set_(self, source=_NO_SOURCE, storage_offset=None, size=None, stride=None):
    """Make ``self`` use ``source``'s storage (a tensor's or a storage): with ``source``'s sizes and strides, or
    (with ``storage_offset``, ``size`` and optionally ``stride``) the given strided window of that storage.
    ``set_()`` empties it. An in-place op: ``self`` keeps its identity and version counter (bumped); as in
    PyTorch it is not differentiable (a backward through it raises)."""
    if source is None:
        raise _set_error(source, *(a for a in (storage_offset, size, stride) if a is not None))
    self._check_inplace()
    if source is _NO_SOURCE:
        if storage_offset is not None or size is not None or stride is not None:
            raise _set_error(*(a for a in (storage_offset, size, stride) if a is not None))
        _leave_storage(self)
        _become(self, Tensor._make(jnp.zeros((0,), self._v.dtype)))
        return self
    source = _set_source(self, source, storage_offset, size, stride)
    node = apply(_SET, (self, source)) if STATE.grad_enabled and (self._rg or source._rg) else None
    if not _same_storage_and_geometry(self, source):
        if STATE.recorder is not None:
            STATE.recorder.wrote(self)
        _leave_storage(self)
        take_storage(self, source, share_version=False)
        self._v = source._v
    if node is not None:
        self._gfn, self._out_nr, self._rg = node._gfn, 0, True
    self._vc.value += 1
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
