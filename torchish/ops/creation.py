"""Creation functions: tensor/as_tensor/from_numpy, zeros/ones/full/empty(+_like), arange/linspace/logspace, eye,
with PyTorch's dtype inference (float32 for floats, int64 for ints, bool) and ``dtype=``/``device=``/
``requires_grad=`` everywhere."""
from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype
from .._tensor import Tensor
from .registry import Family as _Family

_public = _Family(globals()).public



def _jdev(device):
    return _device.to_jax(device if device is not None else _device.get_default_device())


def _finish(value, requires_grad, cls=Tensor):
    t = cls._make(value)
    if requires_grad:
        t.requires_grad_(True)
    return t


def place(array, dtype, device, requires_grad=False):
    """A leaf Tensor from a numpy array (or scalar), cast to ``dtype`` and put on ``device``."""
    arr = np.asarray(array, dtype=dtype.np) if dtype is not None else np.asarray(array)
    return _finish(jax.device_put(arr, _jdev(device)), requires_grad)


def _infer_dtype(data):
    """PyTorch's dtype for nested Python data: bool < int64 < default float < default complex."""
    kind = 0
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            return None  # decided by numpy conversion of the tensor values below
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, bool):
            kind = max(kind, 0)
        elif isinstance(x, numbers.Integral):
            kind = max(kind, 1)
        elif isinstance(x, numbers.Real):
            kind = max(kind, 2)
        elif isinstance(x, numbers.Complex):
            kind = max(kind, 3)
        elif isinstance(x, np.ndarray):
            return None
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    return (_dtype.bool, _dtype.int64, _dtype.DEFAULTS.float, _dtype.DEFAULTS.complex)[kind]


def _to_numpy(data):
    if isinstance(data, Tensor):
        return np.asarray(data._concrete())
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        return np.stack([_to_numpy(x) for x in data]) if data else np.zeros((0,))
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], (list, tuple)):
        lens = {len(x) if isinstance(x, (list, tuple)) else -1 for x in data}
        if len(lens) > 1:
            raise ValueError(f"expected sequence of length {len(data[0])} at dim 1 (got "
                             f"{[l for l in lens if l != len(data[0])][0]})")
    return np.asarray(data)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays, tensors)."""
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    dt = _dtype.as_dtype(dtype) if dtype is not None else None
    if isinstance(data, jax.core.Tracer):
        v = data if dt is None else data.astype(dt.np)
        return _finish(v, requires_grad)
    if isinstance(data, (Tensor, jax.Array, np.ndarray, np.generic)):
        arr = _to_numpy(data) if isinstance(data, Tensor) else np.asarray(data)
        inferred = None
    else:
        inferred = _infer_dtype(data)
        arr = _to_numpy(data)
    if arr.dtype == np.object_:
        raise TypeError("Could not infer dtype of object")
    if dt is None:
        dt = inferred if inferred is not None else _dtype.from_np(arr.dtype)
    if requires_grad and dt.category < _dtype._FLOAT:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return place(arr, dt, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        out = data
        if device is not None:
            from .convert import move
            out = move(out, _device.to_jax(device))
        if dtype is not None:
            from .convert import to_dtype
            out = to_dtype(out, dtype)
        return out
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(ndarray):
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return place(ndarray, _dtype.from_np(ndarray.dtype), None)


def from_jax(array):
    """Wrap a JAX array as a torchish Tensor (no copy)."""
    return Tensor._make(array)


def _shape_args(size, name):
    from .shape import _size_args
    shape = _size_args(size)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _fill(shape, value, dtype, device, requires_grad):
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    if requires_grad and dt.category < _dtype._FLOAT:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    val = jnp.full(shape, value, dtype=dt.np, device=_jdev(device))
    return _finish(val, requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _fill(_shape_args(size, "zeros"), 0, dtype, device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _fill(_shape_args(size, "ones"), 1, dtype, device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    return _fill(_shape_args(size, "empty"), 0, dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    return _fill(_shape_args((size,) if isinstance(size, int) else (tuple(size),), "full"), fill_value, dtype,
                 device, requires_grad)


def _like(fn):
    def like(input, *args, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, **kw):
        return fn(tuple(input.shape), *args, dtype=dtype if dtype is not None else input.dtype,
                  device=device if device is not None else input.device, requires_grad=requires_grad, **kw)
    return like


zeros_like = _like(lambda s, **kw: zeros(s, **kw))
ones_like = _like(lambda s, **kw: ones(s, **kw))
empty_like = _like(lambda s, **kw: empty(s, **kw))


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return full(tuple(input.shape), fill_value, dtype=dtype if dtype is not None else input.dtype,
                device=device if device is not None else input.device, requires_grad=requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=dtype or _dtype.DEFAULTS.float, device=device, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kw):
    return empty(tuple(size), dtype=dtype, device=device, requires_grad=requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(v, int) for v in (start, end, step)) else _dtype.DEFAULTS.float
    dt = _dtype.as_dtype(dtype)
    n = max(int(math.ceil((end - start) / step)), 0)
    if dt.category <= _dtype._INT and all(isinstance(v, int) for v in (start, end, step)):
        vals = start + step * np.arange(n, dtype=np.int64)
    else:
        vals = start + step * np.arange(n, dtype=np.float64)
    return place(vals, dt, device, requires_grad)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated ``torch.range``: includes ``end``."""
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    return place(start + step * np.arange(n, dtype=np.float64), dt, device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    if steps == 1:
        vals = np.array([start], dtype=np.float64)
    else:
        step = (end - start) / (steps - 1)
        idx = np.arange(steps, dtype=np.float64)
        half = steps // 2
        vals = np.where(idx < half, start + step * idx, end - step * (steps - idx - 1))
    if dt.category <= _dtype._INT:
        vals = np.trunc(vals)
    return place(vals, dt, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    exps = np.asarray(linspace(start, end, steps, dtype=_dtype.float64)._d)
    return place(np.power(float(base), exps), dt, device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    return _finish(jnp.eye(n, m, dtype=dt.np, device=_jdev(device)), requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    r, c = np.tril_indices(row, offset, col)
    return place(np.stack([r, c]), _dtype.as_dtype(dtype) if dtype else _dtype.int64, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    r, c = np.triu_indices(row, offset, col)
    return place(np.stack([r, c]), _dtype.as_dtype(dtype) if dtype else _dtype.int64, device)


def complex(real, imag):
    from .registry import apply, defop
    global _COMPLEX
    if "_COMPLEX" not in globals():
        _COMPLEX = defop("complex", lambda a, b: jax.lax.complex(a, b), grad_name="ComplexBackward0")
    return apply(_COMPLEX, (real, imag))


def polar(abs, angle):
    from . import elementwise as E
    return complex(E.mul(abs, E.cos(angle)), E.mul(abs, E.sin(angle)))


for _n in ("tensor", "as_tensor", "asarray", "from_numpy", "from_jax", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "scalar_tensor", "empty_strided", "arange", "linspace", "logspace",
           "eye", "tril_indices", "triu_indices", "complex", "polar"):
    _public(_n, globals()[_n], method=False)
globals()["range"] = range_
__all__.append("range")


def _legacy_new(*args, dtype=None, device=None, requires_grad=False):
    """``torch.Tensor(2, 3)`` (uninitialised float tensor of that shape) or ``torch.Tensor([1, 2])`` (float data)."""
    if not args:
        return zeros(0, dtype=dtype, device=device)
    if all(isinstance(a, int) for a in args) or (len(args) == 1 and isinstance(args[0], tuple)
                                                  and all(isinstance(a, int) for a in args[0])
                                                  and type(args[0]).__name__ == "Size"):
        return zeros(*args, dtype=dtype, device=device)
    data = args[0]
    if isinstance(data, Tensor):
        return data
    return tensor(data, dtype=dtype or _dtype.DEFAULTS.float, device=device)


Tensor._legacy_new = staticmethod(_legacy_new)


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return fn(*size, dtype=dtype if dtype is not None else self.dtype,
                  device=device if device is not None else self.device, requires_grad=requires_grad, **kw)
    return method


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype if dtype is not None else self.dtype,
                  device=device if device is not None else self.device, requires_grad=requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(tuple(size), fill_value, dtype=dtype if dtype is not None else self.dtype,
                device=device if device is not None else self.device, requires_grad=requires_grad)


METHODS = {"new_zeros": _new_factory(zeros), "new_ones": _new_factory(ones), "new_empty": _new_factory(empty),
           "new_tensor": _new_tensor, "new_full": _new_full}
