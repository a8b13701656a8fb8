"""``nn.Parameter`` and ``nn.Buffer``: tensors that a :class:`~torchish.nn.Module` registers when assigned.

A Parameter is a Tensor subclass (``isinstance(p, torchish.Tensor)`` holds) that requires grad by default, even
under ``no_grad``. Like PyTorch's ``_make_subclass`` it shares the data of the tensor it was built from: JAX values
never change, so when the source is a plain leaf the source becomes an alias of the Parameter, otherwise (a view, a
tensor with views or in a graph) the Parameter is an alias of the source's storage: in-place writes to either are
seen by the other, as with PyTorch's shared storage. Ops on a Parameter return plain Tensors.

Example:
    >>> import torchish as torch
    >>> p = torch.nn.Parameter(torch.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
"""
from __future__ import annotations

import contextlib

from .._subclass import _disabled_torch_function_impl
from .._tensor import Tensor
from ..ops.inplace import dense_layout
from ..ops.resize import take_storage


# how a tensor uses its storage (kept in ``__dict__``): a deep copy has its own
_STORAGE_FIELDS = ("_alias", "_alias_base", "_layout")


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    Args:
        data: the parameter's value (shared, not copied). Defaults to an empty tensor.
        requires_grad: whether the parameter requires gradient (default True, also under ``no_grad``).

    Example:
        >>> import torchish as torch
        >>> w = torch.nn.Parameter(torch.zeros(3, 2))
        >>> w.requires_grad, isinstance(w, torch.Tensor)
        (True, True)
    """

    __torch_function__ = _disabled_torch_function_impl  # (as PyTorch's: operations on parameters give Tensors)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):  # PyTorch's Parameter.__new__ calls data.detach()
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        if type(requires_grad) is not bool:  # (PyTorch's Tensor._make_subclass takes a bool only)
            from ..ops.elementwise import type_name
            raise TypeError(f"_make_subclass(): argument 'require_grad' (position 3) must be bool, not "
                            f"{type_name(requires_grad)}")
        p = cls._make(data._d)
        if requires_grad:
            p._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
        take_storage(p, data, share_version=True)  # (PyTorch's parameter is the data itself: its storage, strides)
        return p

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        data = Tensor._make(self._d)
        data._layout = dense_layout(self)  # (PyTorch copies with preserve_format)
        result = type(self)(data, self._rg)
        result.__dict__.update((k, v) for k, v in self.__dict__.items() if k not in _STORAGE_FIELDS)
        memo[id(self)] = result
        return result

    def __repr__(self, *, tensor_contents=None):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor._make(self._concrete()), self._rg))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is True for tensors that were marked as buffers (``Buffer(t)`` returns a plain
    Tensor carrying the mark, as in PyTorch)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Mark a tensor as a module buffer: assigning ``nn.Buffer(t)`` to a Module attribute registers it.

    Args:
        data: the buffer's value (shared with the returned tensor; detached).
        persistent: whether the buffer is part of the module's ``state_dict``.

    Example:
        >>> import torchish as torch
        >>> m = torch.nn.Module()
        >>> m.running = torch.nn.Buffer(torch.zeros(2))
        >>> list(dict(m.named_buffers()))
        ['running']
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not {type(data).__name__}")
        t = data.detach()
        if data._rg:
            t.requires_grad_(True)
        t._is_buffer = True
        t.persistent = persistent
        return t


# ---------------------------------------------------------------------------------------------------------------
# uninitialized (lazy) parameters and buffers

_RAW = Tensor._v   # the slot itself: the value behind the guard of UninitializedTensorMixin._v

_USE_ERROR = ("Attempted to use an uninitialized parameter in {what}. This error happens when you are using a "
              "`LazyModule` or explicitly manipulating `torch.nn.parameter.{cls}` objects. When using LazyModules "
              "Call `forward` with a dummy batch to initialize the parameters before calling torch functions")

_SHAPE_ERROR = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                "`forward` to initialize the parameters before accessing their attributes.")


@contextlib.contextmanager
def _opened(*tensors):
    """Let the allowed methods of uninitialized tensors read their (empty) value for the duration of a call."""
    lazy = [t for t in tensors if isinstance(t, UninitializedTensorMixin)]
    for t in lazy:
        t.__dict__["_open"] = t.__dict__.get("_open", 0) + 1
    try:
        yield
    finally:
        for t in lazy:
            n = t.__dict__["_open"] - 1
            if n:
                t.__dict__["_open"] = n
            else:
                del t.__dict__["_open"]


def _allowed_method(name):
    """A Tensor method that PyTorch lets run on an uninitialized tensor (conversions, ``size``, ``copy_``)."""
    def call(self, *args, **kwargs):
        with _opened(self, *args):
            out = getattr(Tensor, name)(self, *args, **kwargs)
        return self._converted(out)
    call.__name__ = call.__qualname__ = name
    return call


def _allowed_property(name):
    """A Tensor attribute (``dtype``, ``device``, ``data``, ...): PyTorch lets every attribute read through."""
    def fget(self):
        with _opened(self):
            return self._converted(getattr(Tensor, name).fget(self))

    def fset(self, value):
        with _opened(self):
            getattr(Tensor, name).fset(self, value)
    return property(fget, fset)


_ALLOWED_METHODS = ("size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char", "short",
                    "int", "long", "cuda", "cpu", "to", "get_device")
_ALLOWED_PROPERTIES = ("dtype", "device", "is_cuda", "is_cpu", "ndim", "itemsize", "nbytes", "requires_grad", "data",
                       "real", "imag", "T", "mT", "H", "mH")


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: an empty value that only conversions (dtype, device), ``size``
    and ``copy_`` may use until :meth:`materialize` gives it a shape; any other use raises ValueError and ``.shape``
    raises RuntimeError, as in PyTorch."""

    __slots__ = ()
    cls_to_become = None

    def _guarded_value(self):
        if self.__dict__.get("_open"):
            return _RAW.__get__(self)
        raise ValueError(_USE_ERROR.format(what="a torch function", cls=type(self).__name__))

    def _set_raw(self, value):
        _RAW.__set__(self, value)

    _v = property(_guarded_value, _set_raw)

    def _converted(self, out):
        return out

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor ``shape`` (new uninitialised memory; the current device and dtype unless given) and turn
        it into its regular class (:class:`Parameter`, or a plain Tensor for a buffer)."""
        from ..ops.creation import empty
        with _opened(self):
            device = self.device if device is None else device
            dtype = self.dtype if dtype is None else dtype
            self.data = empty(tuple(shape), device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        if not self.__dict__.get("_open"):     # (the allowed methods themselves may read it)
            raise RuntimeError(_SHAPE_ERROR)
        return Tensor.shape.fget(self)

    def _closed(self, what):
        """Raise PyTorch's use error unless an allowed method is running (for the uses that do not read the value
        first: ``requires_grad_``, in-place checks, indexing reads the shape)."""
        if not self.__dict__.get("_open"):
            raise ValueError(_USE_ERROR.format(what=what, cls=type(self).__name__))

    def requires_grad_(self, requires_grad=True):
        self._closed("requires_grad_")
        return Tensor.requires_grad_(self, requires_grad)

    def _check_inplace(self):
        self._closed("an in-place operation")
        return Tensor._check_inplace(self)

    def __getitem__(self, index):
        self._closed("__getitem__")
        return Tensor.__getitem__(self, index)

    def __setitem__(self, index, value):
        self._closed("__setitem__")
        return Tensor.__setitem__(self, index, value)

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self, *, tensor_contents=None):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))


for _name in _ALLOWED_METHODS:
    setattr(UninitializedTensorMixin, _name, _allowed_method(_name))
for _name in _ALLOWED_PROPERTIES:
    setattr(UninitializedTensorMixin, _name, _allowed_property(_name))
del _name


def _uninitialized(cls, requires_grad, device, dtype):
    from ..ops.creation import empty
    t = cls._make(empty(0, device=device, dtype=dtype)._d)
    if requires_grad:
        with _opened(t):
            Tensor.requires_grad_(t, True)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet: what lazy modules hold until their first forward.

    Only its dtype and device may change (``module.to``); :meth:`materialize` turns it into a :class:`Parameter`.

    Example:
        >>> import torchish as torch
        >>> p = torch.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, tuple(p.shape)
        ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _uninitialized(cls, requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy normalisation layers' running statistics); :meth:`materialize`
    turns it into a plain Tensor. Conversions return new UninitializedBuffers, as in PyTorch.

    Example:
        >>> import torchish as torch
        >>> b = torch.nn.UninitializedBuffer()
        >>> b.materialize((4,))
        >>> type(b).__name__
        'Tensor'
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _uninitialized(cls, requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def _converted(self, out):
        if isinstance(out, Tensor) and out is not self and type(out) is Tensor:
            out.__class__ = type(self)
        return out


def is_lazy(param) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` or :class:`UninitializedBuffer`."""
    return isinstance(param, UninitializedTensorMixin)


__all__ = ["Parameter", "Buffer", "UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]
