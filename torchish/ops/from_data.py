"""Tensors from data: ``tensor``/``as_tensor``/``asarray``/``from_numpy`` with PyTorch's dtype inference
(promotion over the elements: bool < int64 < default float < default complex, numpy scalars and tensors by their
own dtype), and ``place``, the leaf-tensor maker every creation function ends in."""
from __future__ import annotations

import builtins
import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta, _precision
from .._global_flags import warn_once
from .._tensor import Tensor
from .casting import cast, warn_discard_imag
from .out_layout import keep_format, numpy_layout
from .registry import Family as _Family

_public = _Family(globals()).public
_FLOAT = _dtype._FLOAT


def _jdev(device):
    return _device.to_jax(device if device is not None else _device.get_default_device())


def _finish(value, requires_grad, cls=Tensor):
    t = cls._make(value)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_grad_dtype(dt, requires_grad, name=None):
    """PyTorch's argument checks of a factory's ``requires_grad``: a Python bool (or None), and only for floating
    point or complex dtypes."""
    if (requires_grad is not None or name == "tensor") and type(requires_grad) is not builtins.bool:
        from .elementwise import type_name
        raise TypeError(f"{name + '(): ' if name else ''}argument 'requires_grad' must be bool, not "
                        f"{type_name(requires_grad)}")
    if requires_grad and dt.category < _FLOAT:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def _astype(arr, npdt):
    """A numpy array converted as PyTorch converts into ``npdt``: numpy's cast, except into a float8 type
    (``casting.cast``: PyTorch's rounding, not ml_dtypes')."""
    if npdt in _dtype.FLOAT8_NP:
        return np.asarray(cast(jnp.asarray(arr), npdt))
    if npdt in _precision.LOW and (arr.dtype == np.float64 or arr.dtype.kind in "iu"):
        arr = arr.astype(np.float32)  # (c10::Half and c10::BFloat16 are made from a float: a double rounds twice)
    return arr.astype(npdt)


def place(array, dtype, device, requires_grad=False):
    """A leaf Tensor from a numpy array (or scalar), cast to ``dtype`` and put on ``device``."""
    # a private copy: on CPU, XLA may adopt an aligned numpy buffer without copying, and the caller could then
    # change the tensor by writing into their array (torch.tensor copies; from_numpy's sharing cannot be mimicked
    # with immutable JAX arrays, so it copies too)
    arr = np.array(array, copy=True) if isinstance(array, np.ndarray) else np.asarray(array)
    if dtype is not None and arr.dtype != dtype.np:
        with np.errstate(over="ignore", invalid="ignore"):  # (a float beyond a half type's range is its infinity,
            # NaN or a float beyond an integer type's range a C cast's value: silently, as PyTorch)
            arr = _astype(arr, dtype.np)
    if _meta.is_meta_device(device):
        return _finish(_meta.MetaArray(arr.shape, arr.dtype), requires_grad)
    return _finish(_device.put(arr, _jdev(device)), requires_grad)


# ----------------------------------------------------------------------------------------------------------------
# torch.tensor: nested Python data -> (values, dtype)


def _is_sequence(x):
    if isinstance(x, memoryview) and x.ndim > 1:  # (PyTorch asks len() of each level: only a 1-D view answers)
        raise ValueError("could not determine the shape of object type 'memoryview'")
    return isinstance(x, (list, tuple, builtins.range, bytearray, memoryview)) or \
        (isinstance(x, np.ndarray) and x.ndim > 0)


def _leaf_dtype(x):
    """The dtype one scalar element contributes to inference."""
    if isinstance(x, (bool, np.bool_)):
        return _dtype.bool
    if isinstance(x, np.generic):
        return _dtype.from_np(x.dtype)
    if isinstance(x, numbers.Integral):
        return _dtype.int64
    if isinstance(x, numbers.Real):
        return _dtype.DEFAULTS.float
    if isinstance(x, numbers.Complex):
        return _dtype.DEFAULTS.complex
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _flatten(data):
    """Check ``data`` is a rectangular nest of sequences; return (shape, leaves, dtype PyTorch infers)."""
    shape = []
    x = data
    while _is_sequence(x):
        shape.append(len(x))
        if not len(x):
            break
        x = x[0]
        if isinstance(x, str):
            raise ValueError("too many dimensions 'str'")
        if isinstance(x, np.ndarray) and x.ndim == 0:  # PyTorch takes any array for a sequence and asks its len()
            raise TypeError("len() of unsized object")
    leaves, given, inferred = [], [], None  # (given: each leaf as written, for uint64's stricter unpacking)
    stack = [(data, 0)]
    while stack:
        x, dim = stack.pop()
        if dim == len(shape):
            given.append(x)
            if isinstance(x, Tensor):
                # (a tensor of other than one element takes part in inference by its dtype, as PyTorch's; storing
                # it fails later, by the tensor's dtype: see _refuse_tensor_leaves)
                dt, x = x.dtype, (x.item() if x.numel() == 1 else x)
            elif isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "biufc":  # (after the first: a scalar)
                dt, x = _dtype.from_np(x.dtype.newbyteorder("=")), x.item()
            elif _is_sequence(x):
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            else:
                dt = _leaf_dtype(x)
            inferred = dt if inferred is None else _dtype.promote_types(inferred, dt)
            leaves.append(x)
            continue
        if not _is_sequence(x):
            raise TypeError("not a sequence")
        if len(x) != shape[dim]:
            raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})")
        if isinstance(x, np.ndarray) and x.shape == tuple(shape[dim:]) and x.dtype.kind in "biufc":
            dt = _dtype.from_np(x.dtype.newbyteorder("="))  # (arrays in a list: read by value, any byte order)
            inferred = dt if inferred is None else _dtype.promote_types(inferred, dt)
            leaves.extend(x.reshape(-1).tolist())
            given.extend([x] * x.size)
            continue
        items = list(x)
        for _ in builtins.range(0 if isinstance(x, np.ndarray) else sum(isinstance(y, np.ndarray) for y in items)):
            warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting "
                      "the list to a single numpy.ndarray with numpy.array() before converting to a tensor.",
                      stacklevel=4)
        stack.extend((y, dim + 1) for y in reversed(items))  # popped in order: leaves come out row-major
    return tuple(shape), leaves, given, inferred


def _check_uint64_leaves(given):
    """PyTorch unpacks each element for a uint64 tensor as a Python int (``PyLong_AsUnsignedLongLong``): a float,
    a numpy scalar or a tensor is a TypeError, a negative or too large int an OverflowError; the first bad element
    decides."""
    for v in given:
        if not isinstance(v, int):
            raise TypeError("an integer is required")
        if v < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if v >= 2 ** 64:
            raise OverflowError("int too big to convert")


def _refuse_tensor_leaves(leaves, dt):
    """PyTorch infers the dtype first and then stores each element, unpacking a tensor element as a Python number
    of that dtype: ``__index__`` for an integer or bool tensor (TypeError), ``__float__``/``__complex__`` otherwise
    (ValueError), both of which only a one-element tensor answers."""
    if any(isinstance(v, Tensor) for v in leaves):
        if dt.category <= _dtype._INT:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        raise ValueError("only one element tensors can be converted to Python scalars")


def _is_real(v):
    return isinstance(v, (numbers.Real, np.bool_))  # (numpy's bool is not registered as a numbers.Real)


def _leaves_to_array(shape, leaves, dt):
    """numpy values of ``dt`` from Python scalars, with PyTorch's overflow and complex->real checks."""
    if dt is _dtype.bool and any(not _is_real(v) for v in leaves):
        return np.array([builtins.bool(v) for v in leaves], dtype=np.bool_).reshape(shape)  # complex: nonzero
    for v in leaves if dt.category < _dtype._COMPLEX else ():
        # into an integer type PyTorch unpacks each value with __index__, which numpy's bool and complex numbers lack
        if dt.category == _dtype._INT and (isinstance(v, np.bool_) or not _is_real(v)):
            name = f"numpy.{type(v).__name__}" if isinstance(v, np.generic) else type(v).__name__
            raise TypeError(f"'{name}' object cannot be interpreted as an integer")
        if not _is_real(v):
            raise TypeError("must be real number, not complex")
    if dt.category == _dtype._INT:
        hi = 2 ** 64 if dt is _dtype.uint64 else 2 ** 63
        if any(isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < hi for v in leaves):
            raise ValueError("Overflow when unpacking long long")
    elif dt.category >= _FLOAT:  # (a floating or complex element is unpacked as a double: any int that fits one)
        for v in leaves:
            if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:
                builtins.float(v)  # (OverflowError: int too large to convert to float, as PyTorch's)
    if dt.category == _dtype._INT:
        info = np.iinfo(dt.np)
        for v in leaves:
            # as c10::checked_convert: an int into an unsigned type may be as low as -max (it wraps)
            lo = -int(info.max) if info.min == 0 and isinstance(v, int) and dt is not _dtype.uint64 else info.min
            if not isinstance(v, bool) and not (lo <= v <= info.max):  # (NaN fails too)
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    kinds = {type(v) for v in leaves}
    if dt is _dtype.bool:
        base = np.bool_
    elif any(issubclass(k, (builtins.complex, np.complexfloating)) for k in kinds):
        base = np.complex128
    elif any(issubclass(k, (float, np.floating)) for k in kinds) or dt.category >= _FLOAT:
        base = np.float64 if dt.category != _dtype._COMPLEX else np.complex128
    else:
        base = np.uint64 if dt is _dtype.uint64 else np.int64
    with np.errstate(all="ignore"):
        arr = np.array(leaves, dtype=base).reshape(shape)
        if base is np.complex128 and dt.category < _dtype._COMPLEX:
            arr = arr.real
        return _astype(arr, dt.np)


def _numpy_dtype(arr, numpy=True):
    """The dtype of a NumPy array (``numpy``) or of a JAX array given as one: PyTorch reads no ml_dtypes float8
    array (its own float8 tensors do not become NumPy arrays either)."""
    if numpy and not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion between "
                         "byte orders is currently not supported.")
    try:
        if numpy and arr.dtype in _dtype.FLOAT8_NP:
            raise TypeError
        return _dtype.from_np(arr.dtype)
    except TypeError:
        raise TypeError(f"can't convert np.ndarray of type {arr.dtype.type.__module__}.{arr.dtype.type.__name__}. "
                        "The only supported types "
                        "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
                        "uint32, uint16, uint8, and bool.") from None


def _warn_not_writable(arr):
    """PyTorch shares a numpy array's memory (``from_numpy``, ``as_tensor``) and warns, once, when it is read-only."""
    if isinstance(arr, np.ndarray) and not arr.flags.writeable:
        warn_once("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This "
                  "means writing to this tensor will result in undefined behavior. You may want to copy the array to "
                  "protect its data or make it writable before converting it to a tensor. This type of warning will "
                  "be suppressed for the rest of this program.", stacklevel=3)


def _check_strides(arr):
    """PyTorch builds its tensor on a numpy array's memory, and refuses negative strides (``img[:, ::-1]``)."""
    if isinstance(arr, np.ndarray) and any(s < 0 for s in arr.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative strides "
                         "are not currently supported. (You can probably work around this by making a copy of your "
                         "array  with array.copy().) ")


def _warn_copy_construct(spelling):
    warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                  f"sourceTensor.detach().clone().requires_grad_(True), rather than {spelling}.", UserWarning,
                  stacklevel=3)


def _real_part(arr, src, dt):
    """``arr`` (of dtype ``src``) for a tensor of dtype ``dt``: its real part, with PyTorch's warning, when ``dt``
    is real and ``src`` complex."""
    if src.is_complex and not dt.is_complex:
        warn_discard_imag(src, dt)
        return arr.real
    return arr


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays, tensors).

    Example:
        >>> torchish.tensor([[1, 2], [3, 4.5]])
        tensor([[1.0000, 2.0000],
                [3.0000, 4.5000]])
    """
    if isinstance(data, Tensor):
        _warn_copy_construct("torch.tensor(sourceTensor)")
    return _tensor(data, dtype, device, requires_grad)


def _tensor(data, dtype, device, requires_grad):
    dt = _dtype.as_dtype(_dtype.user_dtype(dtype, "tensor")) if dtype is not None else None
    if isinstance(data, jax.core.Tracer):
        v = data if dt is None else data.astype(dt.np)
        return _finish(v, requires_grad)
    if isinstance(data, Tensor):
        dt = dt or data.dtype
        arr = _real_part(np.asarray(data._concrete()), data.dtype, dt)
        _check_grad_dtype(dt, requires_grad, "tensor")
        return keep_format(  # (a copy in the source's dense stride order, as PyTorch's)
            place(arr, dt, device, requires_grad), data)
    elif isinstance(data, (jax.Array, np.ndarray, np.generic)):
        _check_strides(data)
        arr = np.asarray(data)
        src = _numpy_dtype(arr, not isinstance(data, jax.Array))
        dt = dt or src
        arr = _real_part(arr, src, dt)
    elif _is_typed_storage(data):  # (its elements, of the dtype asked)
        dt = dt or _dtype.DEFAULTS.float
        if data.dtype is not dt:
            raise RuntimeError(f"Expected a Storage of type {_dtype.scalar_type_name(dt)} or an UntypedStorage, but "
                               f"got {_dtype.scalar_type_name(data.dtype)}")
        arr = data._values()
    elif _is_untyped_storage(data):  # (its bytes as elements of the dtype asked, whole ones; PyTorch infers int64)
        dt = dt or _dtype.int64
        raw = data._values()
        arr = raw[:raw.size // dt.itemsize * dt.itemsize].view(dt.np)
    else:
        shape, leaves, given, inferred = _flatten(data)
        dt = dt or inferred or _dtype.DEFAULTS.float
        if dt is _dtype.uint64:
            _check_uint64_leaves(given)
        _refuse_tensor_leaves(leaves, dt)
        arr = _leaves_to_array(shape, leaves, dt)
    _check_grad_dtype(dt, requires_grad, "tensor")
    return numpy_layout(place(arr, dt, device, requires_grad), arr)


def _is_typed_storage(data):
    from .storage import TypedStorage
    return isinstance(data, TypedStorage)


def _is_untyped_storage(data):
    from .storage import UntypedStorage
    return isinstance(data, UntypedStorage)


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor: a tensor itself when it already has the dtype and device asked for."""
    if isinstance(data, Tensor):
        out = data
        if device is not None:
            from .convert import move
            out = move(out, _device.to_jax(device))
        if dtype is not None:
            from .convert import to_dtype
            out = to_dtype(out, dtype)
        return out
    _warn_not_writable(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(ndarray):
    """A tensor with the values and dtype of a numpy array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_strides(ndarray)
    _warn_not_writable(ndarray)
    return numpy_layout(place(ndarray, _numpy_dtype(ndarray), None), ndarray)



def _scalar(x):
    """A Python number from a number, numpy scalar or one-element tensor."""
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return _dtype.numpy_scalar(x)
    return x


for _n in ("tensor", "as_tensor", "asarray", "from_numpy"):
    _public(_n, globals()[_n], method=False)
