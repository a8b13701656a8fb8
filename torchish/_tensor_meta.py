"""What a Tensor says about itself without reading its values: ``torch.Size``, dims (``wrap_dim``), and the
metadata half of :class:`torchish._tensor.Tensor` (:class:`TensorMetadata`: shape, dtype, device, sizes in
elements and bytes, the ``is_*`` predicates, layout)."""
from __future__ import annotations

import operator

import jax
import numpy as np

from . import _dtype, _device, _layout
from ._meta import MetaArray


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``. Made from any iterable of ints
    (bools, numpy integers and one-element integer tensors count, through ``__index__``); anything else is
    PyTorch's TypeError."""
    __slots__ = ()

    def __new__(cls, sizes=()):
        if type(sizes) is tuple:  # (the common case, torchish's own shapes: no conversion)
            for s in sizes:
                if type(s) is not int:
                    break
            else:
                return tuple.__new__(cls, sizes)
        items = list(sizes)
        for i, s in enumerate(items):
            if type(s) is not int:
                try:
                    items[i] = operator.index(s)
                except (TypeError, RuntimeError):
                    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                    f"'{type(s).__name__}')") from None
        return tuple.__new__(cls, items)

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = super().__getitem__(item)
        return _new_size(Size, out) if isinstance(item, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):  # (``(4,) + shape``: Python asks the subclass first)
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(other + tuple(self))

    def __mul__(self, n):
        return _new_size(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__


_new_size = tuple.__new__  # (``_new_size(Size, ints)``: a Size of ints already checked, without ``Size.__new__``)


def wrap_dim(dim, ndim, wrap_scalar=True):
    """Normalise a possibly negative dim, raising PyTorch's IndexError when it is out of range (TypeError for a
    bool, or a Tensor with dims). A 0-d tensor takes dims -1 and 0 unless ``wrap_scalar`` is false (``size(dim)``): then it has none."""
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if isinstance(dim, bool):  # (not an int to PyTorch's argument parser, which names the op too)
        raise TypeError("argument 'dim' must be int, not bool")
    if not isinstance(dim, int):
        # (PyTorch's parser takes a Tensor for an int only with no dims: ``tensor([0])`` has an __index__ but is
        # refused)
        if isinstance(dim, TensorMetadata) and dim.ndim:
            raise TypeError("dim must be an int, got Tensor")
        try:
            dim = dim.__index__()
        except AttributeError:
            raise TypeError(f"dim must be an int, got {type(dim).__name__}") from None
    if ndim == 0 and not wrap_scalar:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim > 0 else 0


def wrap_item_dim(dim, ndim):
    """:func:`wrap_dim` for an item of a list of dims, or the lone dim a list of dims takes (``sum(x, d)``):
    PyTorch's parser unpacks those with ``__index__``, so a Tensor of one integer element is taken there."""
    if isinstance(dim, TensorMetadata):
        dim = dim.__index__()
    return wrap_dim(dim, ndim)


class TensorMetadata:
    """Shape, dtype, device and the other metadata of a Tensor (a base of :class:`torchish._tensor.Tensor`)."""

    __slots__ = ()

    @property
    def shape(self) -> Size:
        return _new_size(Size, self._v.shape)

    def size(self, dim=None):
        if dim is None:
            return _new_size(Size, self._v.shape)
        if type(dim) is not int and isinstance(dim, TensorMetadata) and dim.ndim:  # (named as PyTorch names it)
            raise TypeError("size(): argument 'dim' (position 1) must be int, not Tensor")
        return self._v.shape[wrap_dim(dim, len(self._v.shape), False)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_np(self._v.dtype)

    @property
    def device(self) -> _device.device:
        d = self._v
        if type(d) is MetaArray:
            return _device.device("meta")
        if isinstance(d, jax.core.Tracer):
            return _device.get_default_device()
        try:
            devs = d.devices()
        except AttributeError:
            return _device.get_default_device()
        return _device.from_jax(next(iter(devs))) if len(devs) == 1 else _device.get_default_device()

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self) -> int:
        """The device index; -1 on the CPU (PyTorch's convention)."""
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def ndim(self) -> int:
        return self._v.ndim

    def dim(self) -> int:
        return self._v.ndim

    def ndimension(self) -> int:
        return self._v.ndim

    def numel(self) -> int:
        return int(np.prod(self._v.shape, dtype=np.int64))

    nelement = numel

    def element_size(self) -> int:
        return self._v.dtype.itemsize

    @property
    def itemsize(self):
        return self._v.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self._v.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_contiguous(self, memory_format=None) -> bool:
        return True

    def is_signed(self):
        return self.dtype.is_signed

    @property
    def is_sparse(self):
        return self._coo is not None

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        return type(self._v) is MetaArray

    @property
    def layout(self):
        return _layout.strided if self._coo is None else _layout.sparse_coo

    def _wrap_dim(self, dim, ndim=None):
        ndim = self._v.ndim if ndim is None else ndim
        return wrap_dim(dim, ndim)

    def jax(self) -> jax.Array:
        """The ``jax.Array`` behind this tensor, without a copy (a pending lazy value is computed first).

        A JAX array carries no autograd graph, so the result is detached even when this tensor requires grad.
        """
        return self._d
