"""Creation functions: tensor/as_tensor/from_numpy, zeros/ones/full/empty(+_like), arange/linspace/logspace, eye,
``new_*`` methods and the legacy ``Tensor(2, 3)`` constructor, with PyTorch's dtype inference (promotion over the
elements: bool < int64 < default float < default complex, numpy scalars and tensors by their own dtype) and
``dtype=``/``device=``/``requires_grad=`` everywhere."""
from __future__ import annotations

import builtins
import math
import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta
from .._global_flags import warn_once
from .._layout import check_memory_format
from .._tensor import Tensor
from . import tracing
from .casting import ACC, cast, check_scalar_fits, warn_discard_imag
from .elementwise import exact_out, factory_out, require_tensor, type_name
from .out_layout import format_name, keep_format, like_format, numpy_layout, set_format
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


def _check_grad_dtype(dt, requires_grad):
    if requires_grad and dt.category < _FLOAT:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def _astype(arr, npdt):
    """A numpy array converted as PyTorch converts into ``npdt``: numpy's cast, except into a float8 type
    (``casting.cast``: PyTorch's rounding, not ml_dtypes')."""
    if npdt in _dtype.FLOAT8_NP:
        return np.asarray(cast(jnp.asarray(arr), npdt))
    return arr.astype(npdt)


def place(array, dtype, device, requires_grad=False):
    """A leaf Tensor from a numpy array (or scalar), cast to ``dtype`` and put on ``device``."""
    # a private copy: on CPU, XLA may adopt an aligned numpy buffer without copying, and the caller could then
    # change the tensor by writing into their array (torch.tensor copies; from_numpy's sharing cannot be mimicked
    # with immutable JAX arrays, so it copies too)
    arr = np.array(array, copy=True) if isinstance(array, np.ndarray) else np.asarray(array)
    if dtype is not None and arr.dtype != dtype.np:
        with np.errstate(over="ignore"):  # (a float beyond a half type's range is its infinity, silently)
            arr = _astype(arr, dtype.np)
    if _meta.is_meta_device(device):
        return _finish(_meta.MetaArray(arr.shape, arr.dtype), requires_grad)
    return _finish(_device.put(arr, _jdev(device)), requires_grad)


# ----------------------------------------------------------------------------------------------------------------
# torch.tensor: nested Python data -> (values, dtype)


def _is_sequence(x):
    return isinstance(x, (list, tuple, builtins.range)) or (isinstance(x, np.ndarray) and x.ndim > 0)


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
    leaves, inferred = [], None
    stack = [(data, 0)]
    while stack:
        x, dim = stack.pop()
        if dim == len(shape):
            if isinstance(x, Tensor):
                if x.numel() != 1:
                    raise ValueError("only one element tensors can be converted to Python scalars")
                dt, x = x.dtype, x.item()
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
            dt = _dtype.from_np(x.dtype)
            inferred = dt if inferred is None else _dtype.promote_types(inferred, dt)
            leaves.extend(x.reshape(-1).tolist())
            continue
        items = list(x)
        for _ in builtins.range(0 if isinstance(x, np.ndarray) else sum(isinstance(y, np.ndarray) for y in items)):
            warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting "
                      "the list to a single numpy.ndarray with numpy.array() before converting to a tensor.",
                      stacklevel=4)
        stack.extend((y, dim + 1) for y in reversed(items))  # popped in order: leaves come out row-major
    return tuple(shape), leaves, inferred


def _leaves_to_array(shape, leaves, dt):
    """numpy values of ``dt`` from Python scalars, with PyTorch's overflow and complex->real checks."""
    if dt is _dtype.bool and any(not isinstance(v, numbers.Real) for v in leaves):
        return np.array([builtins.bool(v) for v in leaves], dtype=np.bool_).reshape(shape)  # complex: nonzero
    if dt.category < _dtype._COMPLEX and any(not isinstance(v, numbers.Real) for v in leaves):
        raise TypeError("must be real number, not complex")
    hi = 2 ** 64 if dt is _dtype.uint64 else 2 ** 63
    if any(isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < hi for v in leaves):
        raise ValueError("Overflow when unpacking long long")
    if dt.category == _dtype._INT:
        info = np.iinfo(dt.np)
        for v in leaves:
            # as c10::checked_convert: an int into an unsigned type may be as low as -max (it wraps)
            lo = -int(info.max) if info.min == 0 and isinstance(v, int) and dt is not _dtype.uint64 else info.min
            if not isinstance(v, bool) and not (lo <= v <= info.max) and not math.isnan(v):
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
        _check_grad_dtype(dt, requires_grad)
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
        shape, leaves, inferred = _flatten(data)
        dt = dt or inferred or _dtype.DEFAULTS.float
        arr = _leaves_to_array(shape, leaves, dt)
    _check_grad_dtype(dt, requires_grad)
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


# ----------------------------------------------------------------------------------------------------------------
# filled tensors


def _shape_args(size, name):
    from .shape import _size_args
    if len(size) > 1 and isinstance(size[0], (tuple, list)):
        raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
    if len(size) == 1 and not isinstance(size[0], (tuple, list)) and not hasattr(size[0], "__index__"):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    shape = _size_args(size)
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


def _fill(shape, value, dtype, device, requires_grad):
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    _check_grad_dtype(dt, requires_grad)
    if _meta.is_meta_device(device):
        return _finish(_meta.MetaArray(shape, dt.np), requires_grad)
    if math.prod(shape) <= _HOST_FILL_LIMIT and not tracing.active():
        if dt in _dtype.FLOAT8:  # (PyTorch's rounding: e4m3fn saturates, 0 is 2^-127 in e8m0fnu)
            fill = np.asarray(cast(jnp.asarray(value, jnp.float64), dt.np))
        else:
            with np.errstate(all="ignore"):
                fill = np.asarray(value).astype(dt.np)  # casts like a C cast: 2.7 -> 2, -1 -> 255 for uint8
        val = _device.put(np.full(shape, fill, dtype=dt.np), _jdev(device))
    elif dt in _dtype.FLOAT8:
        val = jnp.full(shape, cast(jnp.asarray(value, jnp.float64), dt.np), device=_jdev(device))
    else:
        val = jnp.full(shape, value, dtype=dt.np, device=_jdev(device))
    return _finish(val, requires_grad)


@factory_out
def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    return _fill(_size_or_kw(size, kw.pop("size", None), "zeros"), 0, _dtype.user_dtype(dtype, "zeros"), device,
                 requires_grad)


@factory_out
def ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    return _fill(_size_or_kw(size, kw.pop("size", None), "ones"), 1, _dtype.user_dtype(dtype, "ones"), device,
                 requires_grad)


@factory_out
def empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """Like PyTorch's, but the contents are zeros (JAX has no uninitialised memory)."""
    shape = _size_or_kw(size, kw.pop("size", None), "empty")
    check_memory_format(memory_format, len(shape))
    out = _fill(shape, 0, _dtype.user_dtype(dtype, "empty"), device, requires_grad)
    if memory_format is not None:
        set_format(out, format_name(memory_format))
    return out


def _scalar(x):
    """A Python number from a number, numpy scalar or one-element tensor."""
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return _dtype.numpy_scalar(x)
    return x


@factory_out
def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False):
    _dtype.user_dtype(dtype, "full")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    _check_fill_value(fill_value, "full")
    fill_value = _scalar(fill_value)
    shape = _shape_args((tuple(size),), "full")
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    else:  # PyTorch's checked conversion of the number into the given dtype (fill_'s: none for one half element)
        fill_value = check_scalar_fits(fill_value, _dtype.as_dtype(dtype), numel=math.prod(shape))
    return _fill(shape, fill_value, dtype, device, requires_grad)


def _check_fill_value(x, fname):
    if not (isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, Tensor) and x.ndim == 0)):
        raise TypeError(f"{fname}(): argument 'fill_value' (position 2) must be Number, not {type_name(x)}")


def _like(fill, name):
    def like(input, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
        require_tensor(input, name)
        check_memory_format(memory_format, input.ndim)
        out = _fill(tuple(input.shape), fill, dtype if dtype is not None else input.dtype,
                    device if device is not None else input.device, requires_grad)
        return like_format(out, input, memory_format)
    return like


zeros_like = _like(0, "zeros_like")
ones_like = _like(1, "ones_like")
empty_like = _like(0, "empty_like")


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
    return empty(tuple(size), dtype=dtype, device=device, requires_grad=requires_grad)


# ----------------------------------------------------------------------------------------------------------------
# ranges


def _range_dtype(dtype, *values):
    if dtype is not None:
        return _dtype.as_dtype(dtype)
    if any(isinstance(v, builtins.complex) for v in values):
        return _dtype.DEFAULTS.complex
    if all(isinstance(v, int) for v in values):
        return _dtype.int64
    return _dtype.DEFAULTS.float


@factory_out
def arange(start=0, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False):
    """Values ``start, start + step, ...`` below ``end``; int64 when all bounds are ints, else the default float.

    The length is ``ceil((end - start) / step)`` and each value ``start + i * step`` is computed in float64 and
    then cast, as PyTorch does on CPU.
    """
    _dtype.user_dtype(dtype, "arange")
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if end is None:
        start, end = 0, start
    dt = _range_dtype(dtype, start, end, step)
    if dt in _dtype.FLOAT8:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.scalar_type_name(dt)}'")
    if step == 0 or step != step:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    acc = ACC.get(jnp.dtype(dt.np), jnp.dtype(jnp.int64) if dt.category <= _dtype._INT else dt)
    for v in (start, step) + ((end,) if dt is _dtype.int64 else ()):  # converted to the kernel's accumulate type,
        check_scalar_fits(v, acc)  # checked (``end`` too only where int64 sizes the range from it)
    if dt.category <= _dtype._INT:
        istart, istep = int(start), int(step)
        if dt is _dtype.int64:  # PyTorch sizes int64 ranges from the truncated bounds
            if istep == 0:
                raise ValueError("step must be nonzero")
            n = math.ceil((int(end) - istart) / istep)
        else:
            n = math.ceil((end - start) / step)
        vals = istart + istep * np.arange(max(n, 0), dtype=np.int64)
    else:
        n = math.ceil((end - start) / step)
        vals = start + step * np.arange(max(n, 0), dtype=np.float64)
    _check_grad_dtype(dt, requires_grad)
    return place(vals, dt, device, requires_grad)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated ``torch.range``: includes ``end``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    return place(start + step * np.arange(n, dtype=np.float64), dt, device, requires_grad)


def _linspace_values(start, end, steps, dt):
    """PyTorch's CPU linspace: the first half counts up from ``start``, the second half down from ``end``."""
    if dt.category <= _dtype._INT:
        start, end = int(start.real), int(end.real)
    base = np.complex128 if isinstance(start, builtins.complex) or isinstance(end, builtins.complex) else np.float64
    if steps == 1:
        return np.array([start], dtype=base)
    step = (end - start) / (steps - 1)
    idx = np.arange(steps, dtype=np.float64)
    return np.where(idx < steps // 2, start + step * idx, end - step * (steps - idx - 1)).astype(base)


def _linspace_real(start, end, steps, dt):
    """A real linspace as PyTorch's CPU kernel computes it, ``step = (end - start) / (steps - 1)``, the first half
    ``start + step * i``, the second ``end - step * (steps - 1 - i)``: float32/float64 in the dtype itself with ONE
    rounding per value (the compiler fuses the multiply-add, so ``linspace(-2, 2, 7)[3]`` is -5.96e-08 in float32,
    not 0); integers with a float64 step, fused, truncated; float16/bfloat16 rounding after every operation."""
    idx = np.arange(steps, dtype=np.float64)
    first = idx < steps // 2
    k = np.where(first, idx, steps - 1 - idx)
    with np.errstate(all="ignore"):
        if dt.category <= _dtype._INT:  # checked as c10 converts; a negative int wraps into an unsigned type
            start, end = (float(np.array(int(check_scalar_fits(v, dt))).astype(dt.np)) for v in (start, end))
            step = (end - start) / (steps - 1)
            return _fma64(np.where(first, step, -step), k, np.where(first, start, end))
        h = dt.np.type
        s, e = h(start), h(end)
        step = h((e - s) / h(steps - 1))
        add = np.where(first, np.float64(s), np.float64(e))
        if dt == _dtype.float64:
            return _fma64(np.where(first, step, -step), k, add)
        if dt == _dtype.float32:  # a float32 product is exact in float64, and so (almost always) is the sum
            return (np.where(first, step, -step) * k + add).astype(np.float32)
        prod = (np.float32(step) * k.astype(dt.np).astype(np.float32)).astype(dt.np).astype(np.float64)
        return (add + np.where(first, prod, -prod)).astype(dt.np)


def _fma64(a, b, c):
    """``a * b + c`` rounded once, for float64 arrays (Dekker's exact product and Knuth's two-sum)."""
    p = a * b
    ah, bh = _split(a), _split(b)
    al, bl = a - ah, b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    out = s + (t + err)
    return np.where(np.isfinite(out), out, p + c)


def _split(x):
    t = 134217729.0 * x  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    return t - (t - x)


def _check_steps(steps, name):
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments - got steps of type "
                        f"{type(steps).__name__}, but expected int steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


@factory_out
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False):
    _dtype.user_dtype(dtype, "linspace")
    start, end = _scalar(start), _scalar(end)
    _check_steps(steps, "linspace")
    dt = _dtype.as_dtype(dtype) if dtype is not None else (
        _dtype.DEFAULTS.complex if isinstance(start, builtins.complex) or isinstance(end, builtins.complex) else _dtype.DEFAULTS.float)
    if (dt is _dtype.bool and steps > 1) or dt in _dtype.FLOAT8:
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{_dtype.scalar_type_name(dt)}'")
    complex_ = isinstance(start, builtins.complex) or isinstance(end, builtins.complex) or dt.category > _FLOAT
    vals = _linspace_values(start, end, steps, dt) if complex_ or steps <= 1 else _linspace_real(start, end, steps, dt)
    _check_grad_dtype(dt, requires_grad)
    return place(np.trunc(vals) if dt.category <= _dtype._INT else vals, dt, device, requires_grad)


@factory_out
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    start, end = _scalar(start), _scalar(end)
    _check_steps(steps, "logspace")
    if dtype is not None and ((_dtype.as_dtype(dtype) is _dtype.bool and steps > 1) or dtype in _dtype.FLOAT8):
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{_dtype.scalar_type_name(dtype)}'")
    dt = _dtype.as_dtype(dtype) if dtype is not None else (
        _dtype.DEFAULTS.complex if isinstance(start, builtins.complex) or isinstance(end, builtins.complex) else _dtype.DEFAULTS.float)
    exps = _linspace_values(start, end, steps, _dtype.float64 if dt.category <= _FLOAT else dt)
    with np.errstate(all="ignore"):
        vals = np.power(builtins.complex(base) if exps.dtype.kind == "c" else float(base), exps)
    _check_grad_dtype(dt, requires_grad)
    return place(vals, dt, device, requires_grad)


@factory_out
def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False):
    _dtype.user_dtype(dtype, "eye")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    m = n if m is None else m
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    _check_grad_dtype(dt, requires_grad)
    if n * m <= _HOST_FILL_LIMIT and not tracing.active():
        return place(np.eye(n, m, dtype=dt.np), dt, device, requires_grad)
    return _finish(jnp.eye(n, m, dtype=dt.np, device=_jdev(device)), requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    r, c = np.tril_indices(row, offset, col)
    return place(np.stack([r, c]), _dtype.as_dtype(dtype) if dtype else _dtype.int64, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    r, c = np.triu_indices(row, offset, col)
    return place(np.stack([r, c]), _dtype.as_dtype(dtype) if dtype else _dtype.int64, device)


def _check_parts(a, b):
    """PyTorch's checks of complex()/polar() operands: two floating tensors of one dtype."""
    for t, arg in ((a, "real"), (b, "imag")):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    names = [_dtype.scalar_type_name(t.dtype) for t in (a, b)]
    if not all(t.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) for t in (a, b)):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {names[0]} and "
                           f"{names[1]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {names[0]} but got scalar type {names[1]} for second "
                           "argument")


_PARTS_OUT = exact_out("Expected object of scalar type {expected} but got scalar type {out} for argument 'out'")


@_PARTS_OUT
def complex(real, imag):
    from .registry import apply, defop
    _check_parts(real, imag)
    global _COMPLEX
    if "_COMPLEX" not in globals():
        _COMPLEX = defop("complex", lambda a, b: jax.lax.complex(*jnp.broadcast_arrays(a, b)),
                         grad_name="ComplexBackward0")
    return apply(_COMPLEX, (real, imag))


def _polar_vjp(g, r, theta, out):
    """PyTorch's polar_backward: ``real(conj(g) * sgn(out))`` for abs (so a negative abs flips its gradient's
    sign) and ``real(conj(g) * out * 1j)`` for angle."""
    mag = jnp.abs(out)
    sgn = jnp.where(mag == 0, jnp.zeros((), out.dtype), out / jnp.where(mag == 0, 1, mag))
    gc = jnp.conj(g)
    return jnp.real(gc * sgn), jnp.real(gc * out * 1j)


@_PARTS_OUT
def polar(abs, angle):
    from .registry import apply, defop
    _check_parts(abs, angle)
    if abs.dtype is _dtype.float16:
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    global _POLAR
    if "_POLAR" not in globals():
        _POLAR = defop("polar", lambda r, t: jax.lax.complex(*jnp.broadcast_arrays(r * jnp.cos(t), r * jnp.sin(t))),
                       vjp=_polar_vjp, grad_name="PolarBackward0")
    return apply(_POLAR, (abs, angle))


for _n in ("tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "scalar_tensor", "empty_strided", "arange", "linspace", "logspace",
           "eye", "tril_indices", "triu_indices", "complex", "polar"):
    _public(_n, globals()[_n], method=False)
globals()["range"] = range_
__all__.append("range")


# ----------------------------------------------------------------------------------------------------------------
# torch.Tensor(...) and Tensor.new_*


def _legacy_new(*args, dtype=None, device=None):
    """``torch.Tensor(2, 3)`` (a default-float tensor of that shape, zero-filled), ``torch.Tensor(torch.Size)``,
    ``torch.Tensor([1, 2])`` / ``Tensor((1, 2))`` / ``Tensor(ndarray)`` (the data as default float), or
    ``torch.Tensor(t)`` (a new tensor object over ``t``'s data)."""
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    if not args:
        return zeros(0, dtype=dt, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return zeros(*args, dtype=dt, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            return data.detach()  # a new tensor object over the same data, as torch.Tensor(t)
        if type(data).__name__ == "Size":
            return zeros(tuple(data), dtype=dt, device=device)
        if _is_sequence(data) or isinstance(data, np.ndarray):
            return tensor(data, dtype=dt, device=device)
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    raise TypeError("new() received an invalid combination of arguments")


Tensor._legacy_new = staticmethod(_legacy_new)


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return fn(*size, dtype=dtype if dtype is not None else self.dtype,
                  device=device if device is not None else self.device, requires_grad=requires_grad, **kw)
    return method


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    if isinstance(data, Tensor):
        _warn_copy_construct("tensor.new_tensor(sourceTensor)")
    return _tensor(data, dtype if dtype is not None else self.dtype, device if device is not None else self.device,
                   requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(tuple(size), fill_value, dtype=dtype if dtype is not None else self.dtype,
                device=device if device is not None else self.device, requires_grad=requires_grad)


def _new(self, *args, device=None):
    """The legacy ``x.new(...)``: ``torch.Tensor(...)`` with ``x``'s dtype and device (``x.new(2, 3)``,
    ``x.new([1, 2])``, ``x.new()``)."""
    return _legacy_new(*args, dtype=self.dtype, device=device if device is not None else self.device)


METHODS = {"new_zeros": _new_factory(zeros), "new_ones": _new_factory(ones), "new_empty": _new_factory(empty),
           "new_tensor": _new_tensor, "new_full": _new_full, "new": _new}
