"""Conversions: dtype casts and device moves (``to``, ``float()``, ``cuda()``, ``type()``...), differentiable."""
from __future__ import annotations

import jax
import numpy as np

from .. import _device, _dtype, _meta
from .._layout import check_memory_format
from .._tensor import Tensor, wrap
from ..autograd.graph import Node, node_class
from ..autograd.grad_mode import STATE
from . import lazy
from .casting import cast, warn_discard_imag
from .elementwise import need_bool, require_tensor, type_name
from .registry import apply, defop

TO_DTYPE = defop("to_copy", lambda x, *, dtype: cast(x, dtype), grad_name="ToCopyBackward0", linear=True)


def to_dtype(x: Tensor, dtype, memory_format=None) -> Tensor:
    dtype = _dtype.as_dtype(dtype)
    if x._v.dtype == dtype.np:
        return x
    warn_discard_imag(x.dtype, dtype)
    from .out_layout import like_format  # (PyTorch's copy keeps a dense input's strides)
    return like_format(apply(TO_DTYPE, (x,), dtype=dtype.np), x, memory_format)


class _DeviceCopy(Node):
    __slots__ = ("src",)

    def apply_grads(self, grads, create_graph):
        g = grads[0]
        return [move(g, self.src) if g is not None else None]


_DEVICE_NODE = node_class(_DeviceCopy, "ToCopyBackward0")


def move(x: Tensor, dev) -> Tensor:
    """``x`` on device ``dev`` (a jax.Device); recorded for autograd."""
    d = lazy.concrete(x._d)
    if isinstance(d, jax.core.Tracer):
        return x
    if d.devices() == {dev}:
        return x
    src = next(iter(d.devices()))
    out = wrap(jax.device_put(d, dev))
    if x._rg and STATE.grad_enabled:
        node = _DEVICE_NODE((x._edge(),), ((d.shape, d.dtype),), saves=False)
        node.src = src
        out._rg, out._gfn, out._out_nr = True, node, 0
    return out


def _to_meta(x: Tensor) -> Tensor:
    """``x.to("meta")``: shape and dtype kept, data dropped (a node that passes gradients back as meta too)."""
    if type(x._v) is _meta.MetaArray:
        return x
    out = wrap(_meta.MetaArray(x._v.shape, x._v.dtype))
    if x._rg and STATE.grad_enabled:
        node = _DEVICE_NODE((x._edge(),), ((x._v.shape, x._v.dtype),), saves=False)
        node.src = None
        out._rg, out._gfn, out._out_nr = True, node, 0
    return out


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = "
    "None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n")


def _to_type_name(v):
    if isinstance(v, _dtype.dtype):
        return "torch.dtype"
    if isinstance(v, _device.device):
        return "torch.device"
    return "Tensor" if isinstance(v, Tensor) else type_name(v)


def _is_device(v):
    return isinstance(v, (str, _device.device)) or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))


# what PyTorch's parser takes as ``to``'s ``Tensor tensor``: a Tensor or a number (a 0-d tensor: its dtype is the
# target; an int only where the device overload, tried first, does not take the call)
_AS_TENSOR = (Tensor, int, float, complex, np.number, np.bool_)


def _is_dtype(v):
    """A dtype as PyTorch's parser takes one: a torch dtype or the Python type ``float``, ``int``, ``bool`` or
    ``complex`` (``x.to(float)`` is ``x.to(torch.float64)``)."""
    return isinstance(v, _dtype.dtype) or any(v is t for t in (float, int, bool, complex))


_TO_OVERLOADS = (("device", "dtype", "non_blocking", "copy"), ("dtype", "non_blocking", "copy"),
                 ("tensor", "non_blocking", "copy"))


def _to_fits(key, v):
    if key == "device":
        return v is None or _is_device(v)
    if key == "dtype":
        return v is None or _is_dtype(v)
    if key == "tensor":
        return isinstance(v, _AS_TENSOR)
    return isinstance(v, bool)


def _bind_to(args, kwargs):
    """The arguments bound to the first of PyTorch's overloads of ``Tensor.to`` that takes them, in its parser's
    order: ``(device=None, dtype=None, non_blocking=False, copy=False)``, ``(dtype, non_blocking=False,
    copy=False)``, ``(tensor, non_blocking=False, copy=False)`` (``x.to(0, True)``: a device and no dtype, so the
    number 0 as a tensor), or None."""
    if len(args) == 1 and not kwargs:  # (the common ``x.to(dtype)`` / ``x.to(device)``, decided at once)
        first = args[0]
        key = "device" if first is None or _is_device(first) else "dtype" if _is_dtype(first) else \
            "tensor" if isinstance(first, _AS_TENSOR) else None
        return None if key is None else {key: first}
    for names in _TO_OVERLOADS:
        if len(args) > len(names):
            continue
        bound = dict(zip(names, args))
        if bound.keys() & kwargs.keys() or not kwargs.keys() <= set(names) - {"tensor"}:
            continue
        bound.update(kwargs)
        if names[0] != "device" and bound.get(names[0]) is None:  # (required there, and not nullable)
            continue
        if all(_to_fits(k, v) for k, v in bound.items()):
            return bound
    return None


def _parse_to(args, kwargs):
    """PyTorch's three overloads of ``Tensor.to`` (:func:`_bind_to`), with keyword-only ``memory_format``. Returns
    ``(dtype, device, copy)``."""
    kwargs.pop("memory_format", None)
    bound = _bind_to(args, kwargs)
    if bound is None:
        got = ", ".join([_to_type_name(a) for a in args] + [f"{k}={_to_type_name(v)}" for k, v in kwargs.items()])
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}{', ' if kwargs and not args else ''}), "
                        f"but expected one of:\n{_TO_SIGNATURES}")
    copy = bound.get("copy", False)
    if "tensor" in bound:
        other = bound["tensor"]
        if not isinstance(other, Tensor):  # a number: PyTorch's 0-d tensor of it, on the CPU (numpy's non-integer
            if isinstance(other, bool):  # scalars other than complex128 as a double)
                return _dtype.bool, None, copy
            if isinstance(other, (int, np.integer)):
                return _dtype.int64, None, copy
            return (_dtype.complex128 if isinstance(other, complex) else _dtype.float64), None, copy
        return other.dtype, other.device, copy
    dt, dev = bound.get("dtype"), bound.get("device")
    if isinstance(dev, np.integer):  # (a device index)
        dev = int(dev)
    return (None if dt is None else _dtype.as_dtype(dt)), dev, copy


def to(self, *args, **kwargs):
    """``x.to(dtype)``, ``x.to(device)``, ``x.to(device, dtype)``, ``x.to(other)``; returns self when nothing
    changes (unless ``copy=True``)."""
    dtype, device, copy = _parse_to(args, dict(kwargs))
    check_memory_format(kwargs.get("memory_format"), self.ndim)
    out = self
    if device is not None:
        if _meta.is_meta_device(device):
            out = _to_meta(out)
        elif type(out._v) is _meta.MetaArray:
            raise NotImplementedError(_meta.NO_DATA)
        else:
            out = move(out, _device.to_jax(device))
    if dtype is not None:
        out = to_dtype(out, dtype)
    memory_format = kwargs.get("memory_format")
    if copy and out is self:
        out = _same_dtype_copy(self, memory_format)
    elif memory_format is not None:
        from .out_layout import format_name, keep_format, suggest_format
        name = format_name(memory_format)
        if out is not self:
            keep_format(out, self, memory_format)
        elif name not in ("preserve_format", suggest_format(self)):  # (PyTorch's to_will_alias)
            out = _same_dtype_copy(self, memory_format)
    return out


def _same_dtype_copy(x, memory_format):
    """The copy ``to`` makes when it must not alias (``copy=True``, another memory format): PyTorch's _to_copy,
    a ToCopyBackward0 node (not clone's CloneBackward0)."""
    from .out_layout import like_format
    return like_format(apply(TO_DTYPE, (x,), dtype=x._v.dtype), x, memory_format)


def _caster(dt, name):
    def cast(self, *args, memory_format=None):
        if args:  # (PyTorch's casts take ``memory_format`` by keyword only)
            raise TypeError(f"{name}() takes 0 positional arguments but {len(args)} "
                            f"{'was' if len(args) == 1 else 'were'} given")
        if memory_format is not None:  # (x.float(memory_format=...) is x.to(float32, memory_format=...))
            return to(self, dt, memory_format=memory_format)
        return to_dtype(self, dt)
    cast.__name__ = dt.name
    return cast


def cpu(self, memory_format=None):
    return to(self, "cpu")


def cuda(self, device=None, non_blocking=False, memory_format=None):
    if isinstance(device, int) and not isinstance(device, bool):
        return to(self, _device.device(device))  # an index: an accelerator ordinal, as torch's x.cuda(1)
    return to(self, _device.device("cuda") if device is None else device)


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()`` returns 'torch.FloatTensor'; ``x.type(torch.float64)`` converts."""
    if kwargs:  # (PyTorch's parser takes no other keyword)
        raise TypeError(f"type() got an unexpected keyword argument '{next(iter(kwargs))}'")
    need_bool("type", non_blocking, "non_blocking", 2)
    if dtype is None:
        name = _dtype.legacy_type_name(self.dtype)
        return name.replace("torch.", "torch.cuda.", 1) if self.device.type == "cuda" else name
    from .._legacy_types import as_dtype
    return to_dtype(self, as_dtype(dtype))


def type_as(self, other):
    require_tensor(other, "type_as", 1, "other")
    return to_dtype(self, other.dtype)


def pin_memory(self, device=None):
    """A copy meant for fast transfers to the accelerator (``is_pinned()`` is True): JAX stages host-to-device
    copies itself, so this is a plain copy; as in PyTorch it needs an accelerator and a CPU tensor."""
    if not _device.accelerators():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{type_(self)}' only dense CPU tensors can be pinned")
    out = self.clone()
    out._pinned = True
    return out


def is_pinned(self, device=None):
    return getattr(self, "_pinned", False)


METHODS = {
    "to": to, "cpu": cpu, "cuda": cuda, "type": type_, "type_as": type_as, "pin_memory": pin_memory,
    "is_pinned": is_pinned,
    **{name: _caster(dt, name) for name, dt in (
        ("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16), ("bfloat16", _dtype.bfloat16),
        ("int", _dtype.int32), ("long", _dtype.int64), ("short", _dtype.int16), ("char", _dtype.int8),
        ("byte", _dtype.uint8), ("bool", _dtype.bool), ("cfloat", _dtype.complex64), ("cdouble", _dtype.complex128))},
}
