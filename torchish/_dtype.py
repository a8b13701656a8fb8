"""PyTorch's dtypes on top of numpy/JAX dtypes, with PyTorch's type-promotion rules.

A :class:`dtype` wraps a numpy dtype (what the JAX arrays hold). Promotion follows ``torch.result_type``:
operands are ranked as dimensioned tensors, zero-dim tensors and Python scalars, and a lower rank only
matters when it brings a higher category (bool < integer < floating < complex).
"""
from __future__ import annotations

import builtins
import math

import jax.numpy as jnp
import numpy as np

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3
_ABBR = {"bool": "b8", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "int8": "i8", "int16": "i16",
         "int32": "i32", "int64": "i64", "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
         "complex64": "c64", "complex128": "c128"}


class dtype:
    """A tensor element type, printed like PyTorch's (``torch.float32``)."""

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_aliases", "abbr")

    def __init__(self, name, np_dtype, category, aliases=()):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_signed = category != _BOOL and not name.startswith("uint")
        self._aliases = aliases
        self.abbr = _ABBR.get(name, name)

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        return {"complex64": float32, "complex128": float64, "complex32": float16}.get(self.name, self)

    def to_complex(self):
        if self.category < _FLOAT or self in FLOAT8:
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(self)}")
        return {"float64": complex128, "complex128": complex128, "float16": complex32,
                "complex32": complex32}.get(self.name, complex64)

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_lookup, (self.name,))

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__  # identity, like __eq__ (C-level: dtypes key the per-op kernel caches)


bool = dtype("bool", np.bool_, _BOOL)
uint8 = dtype("uint8", np.uint8, _INT)
uint16 = dtype("uint16", np.uint16, _INT)
uint32 = dtype("uint32", np.uint32, _INT)
uint64 = dtype("uint64", np.uint64, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT, ("short",))
int32 = dtype("int32", np.int32, _INT, ("int",))
int64 = dtype("int64", np.int64, _INT, ("long",))
float16 = dtype("float16", np.float16, _FLOAT, ("half",))
bfloat16 = dtype("bfloat16", jnp.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT, ("float",))
float64 = dtype("float64", np.float64, _FLOAT, ("double",))
complex64 = dtype("complex64", np.complex64, _COMPLEX, ("cfloat",))
complex128 = dtype("complex128", np.complex128, _COMPLEX, ("cdouble",))
# PyTorch's float8 types (ml_dtypes' arrays, as JAX holds them): storage, conversions, views, copies, indexing, and
# the few kernels PyTorch's CPU build has for them (ops/float8.py); promotion with any other dtype is an error
float8_e4m3fn = dtype("float8_e4m3fn", jnp.float8_e4m3fn, _FLOAT)
float8_e5m2 = dtype("float8_e5m2", jnp.float8_e5m2, _FLOAT)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", jnp.float8_e4m3fnuz, _FLOAT)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", jnp.float8_e5m2fnuz, _FLOAT)
float8_e8m0fnu = dtype("float8_e8m0fnu", jnp.float8_e8m0fnu, _FLOAT)
float8_e8m0fnu.is_signed = False


class _UnstoredDtype(dtype):
    """A dtype PyTorch has and torchish can name, promote and describe (``finfo``) but not store: its ``np``
    raises. complex32 (``torch.chalf``): JAX has no complex type of float16 parts, and holding complex64 values
    rounded through float16 would need every op to carry the dtype beside the array (a Tensor's dtype is its
    array's); so complex32 tensors are not made (this TypeError) rather than made silently as complex64, and float16
    with a complex operand computes in complex64."""

    __slots__ = ()

    def __init__(self, name, itemsize, category, aliases=()):  # (no numpy dtype: ``np`` is the property below)
        self.name, self.itemsize, self.category, self.is_signed = name, itemsize, category, True
        self._aliases, self.abbr = aliases, name

    @property
    def np(self):  # (the TypeError of Tensor.chalf())
        raise TypeError(f"torchish: {self.name} ({self._aliases[0]}) is not supported: JAX has no complex "
                        "half-precision dtype; use complex64 instead")


complex32 = _UnstoredDtype("complex32", 4, _COMPLEX, ("chalf",))

_BAREBONES_UNSIGNED = (uint16, uint32, uint64)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
FLOAT8_NP = frozenset(d.np for d in FLOAT8)
ALL = (bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, float32, float64,
       complex64, complex128) + FLOAT8
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({a: d for d in ALL for a in d._aliases})
_BY_NAME.update(complex32=complex32, chalf=complex32)
_FROM_NP = {d.np: d for d in ALL}

# public aliases: torch.half, torch.long, ...
ALIASES = {a: d for d in ALL + (complex32,) for a in d._aliases}


def _lookup(name):
    return _BY_NAME[name]


def from_np(np_dtype) -> dtype:
    """The torchish dtype of a numpy/JAX dtype."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        d = _FROM_NP.get(np.dtype(np_dtype))
        if d is None:
            raise TypeError(f"unsupported dtype {np_dtype}") from None
        return d


# ----------------------------------------------------------------------------------------------------------------
# default dtype

class _Defaults:
    float = float32

    @property
    def complex(self):
        return complex128 if self.float is float64 else complex64


DEFAULTS = _Defaults()


def set_default_dtype(d):
    """Set the dtype that floating-point tensors get when none is given (float32 or float64)."""
    if not isinstance(d, dtype):  # (a name, numpy or Python type: PyTorch's parser refuses it)
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if d.category != _FLOAT:
        raise TypeError("only floating-point types are supported as the default type")
    if d in FLOAT8:  # (PyTorch looks for a legacy storage class, which float8 types have not)
        raise TypeError(f"couldn't find storage object {scalar_type_name(d)}Storage")
    DEFAULTS.float = d
    _RESULT_CACHE.clear()
    for hook in _ON_DEFAULT_CHANGE:
        hook()


def get_default_dtype():
    return DEFAULTS.float


def as_dtype(d) -> dtype:
    """Accept a torchish dtype, a numpy dtype, a name or a Python type (``float``, ``int``, ``bool``)."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        name = d[6:] if d.startswith("torch.") else d
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"invalid dtype {d!r}")
    try:
        return from_np(np.dtype(d))
    except TypeError:
        raise TypeError(f"dtype must be a torchish dtype, got {d!r}") from None


def user_dtype(d, fname):
    """``dtype=`` as PyTorch's functions take it: a dtype or a Python type (``float``...); a name (``"float32"``) or a
    numpy type raises PyTorch's TypeError. Returns ``d`` unchanged."""
    if isinstance(d, str) or (isinstance(d, type) and issubclass(d, np.generic)):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")
    return d


# ----------------------------------------------------------------------------------------------------------------
# promotion


def _dtype_arg(d, fname, arg, pos):
    """PyTorch's parser's TypeError for a ``torch.dtype`` argument that is none."""
    if not isinstance(d, dtype):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be torch.dtype, not {type(d).__name__}")


def promote_types(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype both can be converted to."""
    _dtype_arg(a, "promote_types", "type1", 1)
    _dtype_arg(b, "promote_types", "type2", 2)
    if a is b:
        return a
    if a in FLOAT8 or b in FLOAT8:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{scalar_type_name(a)} and {scalar_type_name(b)}")
    if complex32 in (a, b) and a.category >= _FLOAT and b.category >= _FLOAT:
        other = b if a is complex32 else a  # (complex32 with float16 stays complex32; wider parts widen it)
        return complex32 if other is float16 else other.to_complex() if other is not bfloat16 else complex64
    if a in _BAREBONES_UNSIGNED or b in _BAREBONES_UNSIGNED:
        # PyTorch only promotes uint16/uint32/uint64 with floating types
        for d in (a, b):
            if d.category == _FLOAT:
                return d
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{scalar_type_name(a)} and {scalar_type_name(b)}")
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo.category == _FLOAT and lo is float64:
            return complex128
        return hi
    cat = a.category
    if cat == _INT:
        if a.is_signed == b.is_signed:
            return a if a.itemsize >= b.itemsize else b
        u, s = (a, b) if not a.is_signed else (b, a)
        if s.itemsize > u.itemsize:
            return s
        return {1: int16, 2: int32}.get(u.itemsize, int64)
    if cat == _FLOAT:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    return a if a.itemsize >= b.itemsize else b


def _combine(higher, lower):
    """PyTorch's combine_categories (c10): how a lower-priority operand class can still lift the result."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:  # (float16 with complex: complex64, as torchish stores no complex32)
        return (complex64 if higher is float16 else higher.to_complex()) if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return promote_types(higher, lower)
    return higher


def numpy_scalar(x):
    """The Python number a NumPy scalar argument is, read as PyTorch's argument parser reads it: by its value, except
    that ``np.bool_`` is no Python bool and ``np.complex64`` no Python complex, so both are read as a double
    (``int_t * np.bool_(True)`` is float; ``t * np.complex64(1j)`` multiplies by 0.0, the real part)."""
    if isinstance(x, np.bool_):
        return builtins.float(x)
    if isinstance(x, np.complex64):
        return builtins.float(x.real)
    return x.item()


def scalar_dtype(x):
    """The dtype a Python scalar contributes when it takes part in promotion (a "wrapped number")."""
    if isinstance(x, builtins.bool):
        return bool
    if isinstance(x, builtins.int):
        return int64
    if isinstance(x, builtins.float):
        return DEFAULTS.float
    if isinstance(x, builtins.complex):
        return DEFAULTS.complex
    raise TypeError(f"unsupported scalar type {type(x).__name__}")


_RESULT_CACHE: dict = {}
_ON_DEFAULT_CHANGE: list = []  # caches above this layer that depend on the default dtype register a reset here


def result_type_from_keys(keys) -> dtype:
    """Result dtype of operands described as (dtype, rank) pairs; rank 2 dim tensor, 1 zero-dim, 0 scalar."""
    try:
        return _RESULT_CACHE[keys]
    except KeyError:
        pass
    best = [None, None, None]
    for d, rank in keys:
        cur = best[rank]
        best[rank] = d if cur is None else promote_types(cur, d)
    out = _combine(best[2], _combine(best[1], best[0]))
    _RESULT_CACHE[keys] = out
    return out


def _operand_key(x):
    """(dtype, rank) of a Tensor or Python number taking part in ``result_type``."""
    if hasattr(x, "_d") and hasattr(x, "dtype"):
        return (x.dtype, 2 if x.ndim else 1)
    if isinstance(x, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return (scalar_dtype(x), 0)
    return None


def result_type(tensor, other) -> dtype:
    """``torch.result_type``: the dtype an arithmetic op on ``tensor`` and ``other`` (Tensors or Python numbers)
    computes in.

    Example:
        >>> torchish.result_type(torchish.tensor([1, 2], dtype=torchish.uint8), 1.0)
        torch.float32
    """
    keys = (_operand_key(tensor), _operand_key(other))
    if None in keys:
        got = ", ".join("Tensor" if hasattr(x, "_d") else type(x).__name__ for x in (tensor, other))
        raise TypeError(f"result_type() received an invalid combination of arguments - got ({got}), but expected "
                        "one of:\n * (Tensor tensor, Tensor other)\n * (Number scalar, Tensor tensor)\n"
                        " * (Tensor tensor, Number other)\n * (Number scalar1, Number scalar2)\n")
    return result_type_from_keys(keys)


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """``torch.can_cast``: whether an in-place op may write a ``from_`` result into a ``to`` tensor."""
    _dtype_arg(from_, "can_cast", "from_", 1)
    _dtype_arg(to, "can_cast", "to", 2)
    if from_.category == _COMPLEX and to.category != _COMPLEX:
        return False
    if from_.category == _FLOAT and to.category < _FLOAT:
        return False
    if from_.category != _BOOL and to.category == _BOOL:
        return False
    return True


_LEGACY = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
           "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
           "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
           "complex128": "ComplexDoubleTensor", "complex32": "ComplexHalfTensor",
           **{d.name: d.name.capitalize() + "Tensor" for d in FLOAT8}}


def legacy_type_name(d: dtype) -> str:
    """'torch.FloatTensor' and friends, as PyTorch's ``Tensor.type()`` and error messages print them."""
    return "torch." + _LEGACY.get(d.name, d.name)


def cpp_tensor_type_name(d: dtype) -> str:
    """A tensor's type as PyTorch's C++ checks print it (``checkScalarTypes``, ``checkSameType``, a hook's type
    change): the legacy name for the eight types the old TH library had (``torch.FloatTensor``), else
    ``CPUBFloat16Type``, ``CPUBoolType``, ``CPUComplexFloatType``..."""
    if d.name in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8"):
        return legacy_type_name(d)
    return f"CPU{scalar_type_name(d)}Type"


def cpp_type_name(d: dtype) -> str:
    """'float', 'double', 'long int', 'c10::Half', ...: the C++ type names (caffe2's TypeMeta) PyTorch prints in
    some dtype errors."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
            "complex32": "c10::complex<c10::Half>", **{f.name: "c10::" + f.name.capitalize() for f in FLOAT8}}.get(d.name, d.name)


def scalar_type_name(d: dtype) -> str:
    """'Float', 'Long', ... as PyTorch names scalar types in error messages."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
            "uint64": "UInt64", "complex32": "ComplexHalf", **{f.name: f.name.capitalize() for f in FLOAT8}}.get(d.name, d.name)


_NO_TYPE = object()  # (finfo() with no argument: the default dtype's)


class _Limits:
    """The read-only fields of ``torch.finfo``/``torch.iinfo`` (PyTorch's are C attributes: assigning one is an
    AttributeError, as is setting a new one; the objects cannot be pickled or copied)."""

    __slots__ = ()

    def _set(self, **fields):
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def _refuse(self, name):
        kind = f"torch.{type(self).__name__}"
        if name in type(self).__slots__:
            raise AttributeError(f"attribute '{name}' of '{kind}' objects is not writable")
        raise AttributeError(f"'{kind}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        self._refuse(name)

    def __delattr__(self, name):
        self._refuse(name)

    def __reduce_ex__(self, protocol):  # (copy.copy too, as PyTorch's)
        raise TypeError(f"cannot pickle 'torch.{type(self).__name__}' object")


class finfo(_Limits):
    """``torch.finfo``: machine limits of a floating-point dtype (of the real part, for complex dtypes).

    Example:
        >>> torchish.finfo(torchish.float16).eps
        0.0009765625
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=_NO_TYPE):
        if type is _NO_TYPE:
            d = DEFAULTS.float
        else:
            _dtype_arg(type, "finfo", "type", 1)  # (PyTorch takes a torch.dtype only: no None, name or numpy type)
            d = type
        if d.category < _FLOAT:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        d = d.to_real()
        info = jnp.finfo(d.np)
        # (float8_e5m2fnuz: PyTorch's numeric_limits<Float8_e5m2fnuz>::epsilon() is 0.125, ml_dtypes' 0.25)
        eps = 0.125 if d is float8_e5m2fnuz else builtins.float(info.eps)
        tiny = builtins.float(info.tiny)
        # PyTorch: resolution = 10 ** -precision, precision = floor(-log10(eps))
        self._set(dtype=d.name, bits=builtins.int(info.bits), eps=eps, max=builtins.float(info.max),
                  min=builtins.float(info.min), tiny=tiny, smallest_normal=tiny,
                  resolution=10.0 ** -builtins.int(math.floor(-math.log10(eps))))

    def __eq__(self, other):
        """PyTorch compares two finfo/iinfo objects by their dtype (``finfo(complex64) == finfo(float32)``); the
        objects are unhashable, as PyTorch's."""
        return self.dtype == other.dtype if isinstance(other, (finfo, iinfo)) else NotImplemented

    __hash__ = None

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_Limits):
    """``torch.iinfo``: limits of an integer dtype.

    Example:
        >>> torchish.iinfo(torchish.int8).max
        127
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        _dtype_arg(type, "iinfo", "type", 1)
        d = type
        if d is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.category != _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self._set(dtype=d.name, bits=d.itemsize * 8, max=builtins.int(info.max), min=builtins.int(info.min))

    __eq__ = finfo.__eq__
    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"
