"""Tensors of one value or a fixed pattern: zeros/ones/full/empty, their ``*_like`` and ``new_*`` forms,
scalar_tensor, empty_strided, eye, tril/triu_indices, and the legacy ``Tensor(2, 3)`` constructor."""
from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta
from .._layout import check_memory_format
from .._runtime import uninitialized_value
from .._tensor import Tensor
from . import tracing
from .casting import cast, check_scalar_fits
from .elementwise import factory_out, parser_worded, require_int, require_tensor, type_name
from .from_data import _check_grad_dtype, _finish, _is_sequence, _jdev, _scalar, _tensor, _warn_copy_construct, \
    place, tensor
from .out_layout import format_name, like_format, set_format
from .registry import Family as _Family

_public = _Family(globals()).public


def _shape_args(size, name):
    from .shape import _size_args
    if len(size) == 1 and not isinstance(size[0], (tuple, list)) and not hasattr(size[0], "__index__"):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    shape = _size_args(size, name)
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _size_or_kw(size, kw_size, name):
    if kw_size is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kw_size,)
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _shape_args(size, name)


# Below this many elements a filled host buffer moved to the device beats compiling a fill kernel per
# (shape, dtype) (~20-90 ms each); larger tensors are filled on the device.
_HOST_FILL_LIMIT = 1 << 16


def _host_full(shape, value, dt):
    """A numpy array of ``shape`` holding the number ``value`` as ``dt`` (cast like a C cast, as PyTorch's fill:
    2.7 -> 2, -1 -> 255 for uint8)."""
    with np.errstate(all="ignore"):
        return np.full(shape, np.asarray(value).astype(dt.np), dtype=dt.np)


def host_filled(shape, value, dt, where):
    """``shape`` filled with the Python number ``value`` as ``dt``, placed ``where`` (a sharding; None: uncommitted on
    the default device, as an array made beside an uncommitted one), from a host buffer: no fill kernel compiles
    for the shape (optimizer state, ``zero_()``/``fill_()`` of parameters, buffers and gradients). None where that
    does not apply (large, float8, a complex number, inside a trace): the caller runs its kernel."""
    if (math.prod(shape) > _HOST_FILL_LIMIT or dt in _dtype.FLOAT8 or tracing.active()
            or type(value) not in (int, float, bool)):
        return None
    return jax.device_put(_host_full(shape, value, dt), where)


# the value of ``empty`` and its relatives: 0, or what PyTorch's deterministic mode fills (_runtime.uninitialized_value)
UNINITIALIZED = object()


def _fill(shape, value, dtype, device, requires_grad, name=None):
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    if value is UNINITIALIZED:
        value = uninitialized_value(dt)
    _check_grad_dtype(dt, requires_grad, name)
    if _meta.is_meta_device(device):
        return _finish(_meta.MetaArray(shape, dt.np), requires_grad)
    if math.prod(shape) <= _HOST_FILL_LIMIT and not tracing.active():
        if dt in _dtype.FLOAT8:  # (PyTorch's rounding: e4m3fn saturates, 0 is 2^-127 in e8m0fnu)
            fill = np.asarray(cast(jnp.asarray(value, jnp.float64), dt.np))
            val = _device.put(np.full(shape, fill, dtype=dt.np), _jdev(device))
        else:
            val = _device.put(_host_full(shape, value, dt), _jdev(device))
    elif dt in _dtype.FLOAT8:
        val = jnp.full(shape, cast(jnp.asarray(value, jnp.float64), dt.np), device=_jdev(device))
    else:
        val = jnp.full(shape, value, dtype=dt.np, device=_jdev(device))
    return _finish(val, requires_grad)


def _filled(name, value, size, kw, dtype, device, requires_grad, memory_format=None):
    """zeros/ones/empty and their ``new_*`` methods: ``size`` parsed once (given by keyword: in ``kw``, where any
    other keyword is refused as PyTorch's parser refuses it, ``zeros(3, dtpye=...)``), every error naming ``name``."""
    kw_size = kw.pop("size", None)
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    shape = _size_or_kw(size, kw_size, name)
    check_memory_format(memory_format, len(shape))
    out = _fill(shape, value, _dtype.user_dtype(dtype, name), device, requires_grad, name)
    if memory_format is not None:
        set_format(out, format_name(memory_format))
    return out


@factory_out
def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    return _filled("zeros", 0, size, kw, dtype, device, requires_grad)


@factory_out
def ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    return _filled("ones", 1, size, kw, dtype, device, requires_grad)


@factory_out
def empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """Like PyTorch's, but the contents are zeros (JAX has no uninitialised memory; under deterministic algorithms,
    PyTorch's fill: see ``_runtime.uninitialized_value``)."""
    return _filled("empty", UNINITIALIZED, size, kw, dtype, device, requires_grad, memory_format)


def _full(name, size, fill_value, dtype, device, requires_grad):
    """full and ``new_full``, errors naming ``name``."""
    _dtype.user_dtype(dtype, name)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    _check_fill_value(fill_value, name)
    fill_value = _scalar(fill_value)
    shape = _shape_args((tuple(size),), name)
    if dtype is None:  # (the number's default dtype: full((2,), 1e40) overflows float32 too)
        dtype = _dtype.scalar_dtype(fill_value)
    # PyTorch's checked conversion of the number into the dtype (fill_'s: none for one half element)
    fill_value = check_scalar_fits(fill_value, _dtype.as_dtype(dtype), numel=math.prod(shape))
    return _fill(shape, fill_value, dtype, device, requires_grad, name)


@factory_out
def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _full("full", size, fill_value, dtype, device, requires_grad)


def _check_fill_value(x, fname):
    if not (isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, Tensor) and x.ndim == 0)):
        raise TypeError(f"{fname}(): argument 'fill_value' (position 2) must be Number, not {type_name(x)}")


def _like(fill, name):
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
        require_tensor(input, name)
        _dtype.user_dtype(dtype, name)
        check_memory_format(memory_format, input.ndim)
        out = _fill(tuple(input.shape), fill, dtype if dtype is not None else input.dtype,
                    device if device is not None else input.device, requires_grad, name)
        return like_format(out, input, memory_format)
    return like


zeros_like = _like(0, "zeros_like")
ones_like = _like(1, "ones_like")
empty_like = _like(UNINITIALIZED, "empty_like")


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    require_tensor(input, "full_like")
    check_memory_format(memory_format, input.ndim)
    _check_fill_value(fill_value, "full_like")
    out = full(tuple(input.shape), fill_value, dtype=dtype if dtype is not None else input.dtype,
               device=device if device is not None else input.device, requires_grad=requires_grad)
    return like_format(out, input, memory_format)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return full((), _scalar(s), dtype=dtype or _dtype.DEFAULTS.float, device=device, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kw):
    from .strided import _strided_empty
    from .shape import int_list_arg
    size, stride = int_list_arg(size, "empty_strided", "size", 1), int_list_arg(stride, "empty_strided", "stride", 2)
    size = _shape_args((size,), "empty_strided")  # (its checks of the sizes' values)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    return _strided_empty(size, stride, _dtype.user_dtype(dtype, "empty_strided"), device, requires_grad)


_NO_M = object()  # (``eye(n)``: PyTorch has no None overload, ``eye(2, None)`` is its TypeError)


@factory_out
def eye(n, m=_NO_M, *, dtype=None, layout=None, device=None, requires_grad=False):
    _dtype.user_dtype(dtype, "eye")
    for v in (n,) if m is _NO_M else (n, m):
        if v is None:  # (factory_out words it from parser_errors' table)
            raise TypeError("eye() takes no None")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not _NO_M and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    m = n if m is _NO_M else m
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    _check_grad_dtype(dt, requires_grad, "eye")
    if n * m <= _HOST_FILL_LIMIT and not tracing.active():
        return place(np.eye(n, m, dtype=dt.np), dt, device, requires_grad)
    return _finish(jnp.eye(n, m, dtype=dt.np, device=_jdev(device)), requires_grad)


def _triangle_indices(name, pick, row, col, offset, dtype, device):
    """``tril_indices`` / ``triu_indices``: PyTorch checks the sizes, and has kernels for int32 and int64 only."""
    for pos, (arg, v) in enumerate((("row", row), ("col", col), ("offset", offset)), 1):
        require_int(v, name, pos, arg)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    if dt not in (_dtype.int32, _dtype.int64):
        raise NotImplementedError(f'"{name}" not implemented for \'{_dtype.scalar_type_name(dt)}\'')
    r, c = pick(row, offset, col)
    return place(np.stack([r, c]), dt, device)


@parser_worded
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


@parser_worded
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)

for _n in ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "scalar_tensor",
           "empty_strided", "eye", "tril_indices", "triu_indices"):
    _public(_n, globals()[_n], method=False)


# ----------------------------------------------------------------------------------------------------------------
# torch.Tensor(...) and Tensor.new_*


def _legacy_new(*args, dtype=None, device=None):
    """``torch.Tensor(2, 3)`` (a default-float tensor of that shape, filled as ``empty``), ``torch.Tensor(torch.Size)``,
    ``torch.Tensor([1, 2])`` / ``Tensor((1, 2))`` / ``Tensor(ndarray)`` (the data as default float), or
    ``torch.Tensor(t)`` (a new tensor object over ``t``'s data)."""
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    if not args:
        return zeros(0, dtype=dt, device=device)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):  # (Tensor(np.int64(2)))
        return empty(*(int(a) for a in args), dtype=dt, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            return data.detach()  # a new tensor object over the same data, as torch.Tensor(t)
        if type(data).__name__ == "Size":
            return empty(tuple(data), dtype=dt, device=device)
        if _is_sequence(data) or isinstance(data, np.ndarray):
            return tensor(data, dtype=dt, device=device)
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    raise TypeError("new() received an invalid combination of arguments")


Tensor._legacy_new = staticmethod(_legacy_new)


def _new_filled(name, value):
    """``Tensor.new_zeros``/``new_ones``/``new_empty``: ``self``'s dtype and device unless given."""
    def method(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
        return _filled(name, value, size, kw, dtype if dtype is not None else self.dtype,
                       device if device is not None else self.device, requires_grad)
    method.__name__ = method.__qualname__ = name
    return method


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    if isinstance(data, Tensor):
        _warn_copy_construct("tensor.new_tensor(sourceTensor)")
    return _tensor(data, dtype if dtype is not None else self.dtype, device if device is not None else self.device,
                   requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False):
    return _full("new_full", size, fill_value, dtype if dtype is not None else self.dtype,
                 device if device is not None else self.device, requires_grad)


def _new(self, *args, device=None):
    """The legacy ``x.new(...)``: ``torch.Tensor(...)`` with ``x``'s dtype and device (``x.new(2, 3)``,
    ``x.new([1, 2])``, ``x.new()``)."""
    return _legacy_new(*args, dtype=self.dtype, device=device if device is not None else self.device)


METHODS = {"new_zeros": _new_filled("new_zeros", 0), "new_ones": _new_filled("new_ones", 1),
           "new_empty": _new_filled("new_empty", UNINITIALIZED),
           "new_tensor": _new_tensor, "new_full": _new_full, "new": _new}
