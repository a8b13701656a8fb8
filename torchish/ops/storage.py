"""Storages: ``Tensor.untyped_storage()`` (bytes) and the deprecated ``Tensor.storage()`` (elements of the tensor's
dtype), read-only windows onto the buffer a tensor's storage root holds (its base for a view).

What scripts use them for works as in PyTorch: sharing checks (``a.untyped_storage().data_ptr() ==
b.untyped_storage().data_ptr()`` for a view and its base, tied weights), the storage's size in bytes or elements
next to ``storage_offset()``, and reading its values. Writing through a storage is not supported (JAX buffers are
immutable; write through a tensor view instead).

Example:
    >>> import torchish as torch
    >>> x = torch.arange(6.0)
    >>> x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), x.untyped_storage().nbytes()
    (True, 24)
"""
from __future__ import annotations


import numpy as np

from .._global_flags import warn_once
from .. import _dtype
from .._tensor import Tensor
from .registry import Family
from .shape import storage_address, storage_root
from .strided import _storage_geometry, storage_order

_fam = Family(globals())


class _Storage:
    """The storage of ``root`` (a tensor holding one contiguous buffer), seen as elements of ``self.dtype``."""

    __slots__ = ("_root", "_dtype")

    def _setup(self, root, dtype):
        self._root = root
        self._dtype = dtype
        return self

    def data_ptr(self):
        return storage_address(self._root)

    def nbytes(self):  # (a permuted root's storage spans its layout; one with a storage offset, more)
        return _storage_geometry(self._root)[0] * self._root.element_size()

    def element_size(self):
        return self._dtype.itemsize

    def size(self):
        return self.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    @property
    def device(self):
        return self._root.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def is_shared(self):
        return self._root.is_shared()

    def is_pinned(self, device="cuda"):
        return False

    def _values(self):
        """The storage's elements as a flat numpy array of ``self.dtype``."""
        flat = storage_order(self._root, np.ascontiguousarray(np.asarray(self._root._concrete())).reshape(-1))
        return np.ascontiguousarray(flat).view(self._dtype.np)

    def tolist(self):
        return self._values().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, idx):
        if not isinstance(idx, int):
            raise RuntimeError(f"slices are only supported in UntypedStorage.__getitem__, got {type(idx).__name__}")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._values()[idx].item()

    def _repr_head(self):
        raise NotImplementedError

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[{self._repr_head()} of size {self.size()}]" if body else f"[{self._repr_head()} of size 0]"


class UntypedStorage(_Storage):
    """A storage as bytes. ``UntypedStorage(n)`` makes a new zero-filled one of ``n`` bytes."""

    __slots__ = ()

    def __init__(self, size=0, *, device=None):
        from .creation import zeros
        self._setup(zeros(int(size), dtype=_dtype.uint8, device=device), _dtype.uint8)

    @classmethod
    def _of(cls, tensor):
        out = object.__new__(cls)
        return out._setup(storage_root(tensor), _dtype.uint8)

    def untyped(self):
        return self

    def type(self):
        return "torch.storage.UntypedStorage"

    def cpu(self):
        return self if self.device.type == "cpu" else UntypedStorage._of(self._root.cpu())

    def _repr_head(self):
        return f"torch.storage.UntypedStorage(device={self.device})"


class TypedStorage(_Storage):
    """A storage as elements of one dtype (PyTorch's deprecated ``Tensor.storage()``)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        raise TypeError("torchish.TypedStorage is made by Tensor.storage(); use torchish.UntypedStorage(nbytes) or a "
                        "tensor for new memory")

    @classmethod
    def _of(cls, tensor):
        out = object.__new__(cls)
        return out._setup(storage_root(tensor), tensor.dtype)

    @property
    def dtype(self):
        return self._dtype

    @property
    def _untyped_storage(self):
        return self.untyped()

    def untyped(self):
        return object.__new__(UntypedStorage)._setup(self._root, _dtype.uint8)

    def type(self):
        return _dtype.legacy_type_name(self._dtype).replace("Tensor", "Storage")

    def cpu(self):
        return self if self.device.type == "cpu" else object.__new__(TypedStorage)._setup(self._root.cpu(), self._dtype)

    def _repr_head(self):
        return f"torch.storage.TypedStorage(dtype=torch.{self._dtype.name}, device={self.device})"


_TYPED_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                     "only storage class. This should only matter to you if you are using storages directly.  To "
                     "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):  # (the legacy classes make TypedStorages of their dtype)
        return isinstance(instance, TypedStorage) and instance.dtype is cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """PyTorch's legacy typed storage classes (``torch.FloatStorage(2)``, ``torch.LongStorage([1, 2])``): new
    memory of ``size`` elements of the class's dtype, or holding ``data``; the result is a :class:`TypedStorage`."""

    __slots__ = ()
    dtype = None

    def __new__(cls, *args, wrap_storage=None, **kwargs):
        from .creation import tensor, zeros
        warn_once(_TYPED_DEPRECATED, stacklevel=2)
        if kwargs:
            raise TypeError(f"TypedStorage.__new__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if wrap_storage is not None or len(args) > 1:
            raise RuntimeError(cls._signature_error("Too many positional arguments" if len(args) > 1 else
                                                    "No positional arguments should be given when using "
                                                    "'wrap_storage'"))
        if not args:
            data = zeros(0, dtype=cls.dtype)
        elif isinstance(args[0], (int, np.integer)) and not isinstance(args[0], (bool, np.bool_)):
            n = int(args[0])
            if n < 0:
                raise RuntimeError(f"[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. alloc_cpu() seems to "
                                   f"have been called with negative number: {2 ** 64 + n * cls.dtype.itemsize}")
            data = zeros(n, dtype=cls.dtype)  # (PyTorch's memory is uninitialized)
        elif isinstance(args[0], (list, tuple, str, range)):
            data = tensor(args[0], dtype=cls.dtype)
        else:
            raise TypeError(cls._signature_error(f"Argument type not recognized: {type(args[0])}"))
        return object.__new__(TypedStorage)._setup(data, cls.dtype)

    @classmethod
    def _signature_error(cls, why):
        return (f"<class 'torch.{cls.__name__}'>.__new__ received an invalid combination of arguments. Expected one "
                f"of:\n * no arguments\n * (int size)\n * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n"
                f"{why}")


_LEGACY = {name + "Storage": type(name + "Storage", (_LegacyStorage,), {"__slots__": (), "dtype": dt,
                                                                        "__module__": "torch"})
           for name, dt in (("Float", _dtype.float32), ("Double", _dtype.float64), ("Half", _dtype.float16),
                            ("BFloat16", _dtype.bfloat16), ("Long", _dtype.int64), ("Int", _dtype.int32),
                            ("Short", _dtype.int16), ("Char", _dtype.int8), ("Byte", _dtype.uint8),
                            ("Bool", _dtype.bool), ("ComplexFloat", _dtype.complex64),
                            ("ComplexDouble", _dtype.complex128))}
globals().update(_LEGACY)


def untyped_storage(self):
    """The storage of this tensor (its base's for a view), as bytes."""
    return UntypedStorage._of(self)


def storage(self):
    """The storage of this tensor as elements of its dtype (deprecated in PyTorch, with its warning)."""
    warn_once(_TYPED_DEPRECATED, stacklevel=2)
    return TypedStorage._of(self)


_fam.method("untyped_storage", untyped_storage)
_fam.method("storage", storage)
__all__ = ["UntypedStorage", "TypedStorage", *_LEGACY]
