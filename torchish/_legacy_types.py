"""The legacy typed-tensor classes: ``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``,
``x.type(torch.DoubleTensor)``, ``isinstance(x, torch.FloatTensor)`` (a float32 CPU tensor) and their
``torch.cuda.*Tensor`` twins. They are constructors and type tests over :class:`Tensor`, not subclasses of it,
as in PyTorch."""
from __future__ import annotations

from . import _dtype
from ._tensor import Tensor


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == cls.device_type

    def __call__(cls, *args, device=None):
        if device is None and cls.device_type == "cuda":
            device = "cuda"
        return Tensor._legacy_new(*args, dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _types(device_type, module):
    out = {}
    for name, cls_name in _dtype._LEGACY.items():
        out[cls_name] = _LegacyTensorType(cls_name, (), {"dtype": getattr(_dtype, name), "device_type": device_type,
                                                        "is_cuda": device_type == "cuda", "__module__": module})
    return out


CPU_TYPES = _types("cpu", "torch")
CUDA_TYPES = _types("cuda", "torch.cuda")


def as_dtype(t):
    """The dtype a ``Tensor.type(...)`` argument names: a legacy class, its name, or a dtype."""
    if isinstance(t, _LegacyTensorType):
        return t.dtype
    if isinstance(t, str):  # 'torch.FloatTensor' or 'torch.cuda.FloatTensor'; PyTorch takes no other string
        cls = CPU_TYPES.get(t.split(".")[-1]) if t.endswith("Tensor") else None
        if cls is None:
            raise ValueError(f"invalid type: '{t}'")
        return cls.dtype
    if isinstance(t, _dtype.dtype):
        return t
    if not isinstance(t, type):
        raise TypeError("dtype must be a type, str, or dtype object")
    if t is Tensor:  # the default tensor type ('torch.FloatTensor')
        return _dtype.get_default_dtype()
    raise ValueError(f"invalid type: '{_type_name(t)}'")  # (float, int, np.float64, Parameter: no tensor types)


def _type_name(cls):
    """A class's name as CPython's ``tp_name`` spells it, which PyTorch's error shows: qualified by its module for
    a static (C) type outside builtins (``numpy.float64``), bare for builtins and for classes defined in Python."""
    if cls.__module__ == "builtins" or cls.__flags__ & _HEAPTYPE:
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


_HEAPTYPE = 1 << 9  # (Py_TPFLAGS_HEAPTYPE: a class created by a class statement)
