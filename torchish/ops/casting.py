"""Float-to-integer conversion as PyTorch's CPU kernels do it.

A C cast from a float that does not fit the integer type is undefined; PyTorch's x86 build truncates toward zero
through int64 (for int64 and uint8) or int32 (for int32, int16, int8): NaN, infinities and values outside that
intermediate type become its minimum, and the narrower types keep the low bits. XLA saturates instead, so every
value-level cast goes through ``cast`` here.

>>> cast(jnp.array([jnp.inf, 300.7, -3.5]), jnp.uint8)   # [0, 44, 253]
"""
from __future__ import annotations

import jax.numpy as jnp

from .._global_flags import warn_once

_VIA_INT64 = (jnp.dtype(jnp.int64), jnp.dtype(jnp.uint8))
_VIA_INT32 = (jnp.dtype(jnp.int32), jnp.dtype(jnp.int16), jnp.dtype(jnp.int8))


def cast(x, dtype):
    """``x.astype(dtype)`` with PyTorch's conversion of out-of-range floats to integers."""
    dtype = jnp.dtype(dtype)
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating) and not jnp.issubdtype(dtype, jnp.complexfloating):
        x = x.real  # (explicitly: jax deprecates the implicit complex-to-real astype)
    if not jnp.issubdtype(x.dtype, jnp.inexact) or dtype not in _VIA_INT64 + _VIA_INT32:
        return x.astype(dtype)
    mid, bits = (jnp.int64, 63) if dtype in _VIA_INT64 else (jnp.int32, 31)
    t = jnp.trunc(x.astype(jnp.float64) if x.dtype != jnp.float64 else x)
    bad = ~((t >= -(2.0 ** bits)) & (t < 2.0 ** bits))  # NaN fails both tests
    as_mid = jnp.where(bad, jnp.iinfo(mid).min, jnp.where(bad, 0, t).astype(mid))
    return as_mid.astype(dtype)


def warn_discard_imag(src, dst):
    """PyTorch's copy warns, once per process, when a complex tensor is copied into a real one (``z.to(float)``,
    ``x.copy_(z)``, ``x[i] = z``); ``src`` and ``dst`` are torchish dtypes."""
    if src.is_complex and not dst.is_complex:
        warn_once("Casting complex values to real discards the imaginary part", stacklevel=4)


# the accumulate type of PyTorch's CPU kernels (``at::acc_type<T, false>``) for scans and var/std: a running value
# kept in the result type drifts by ulps along a scan, and a float32 sum of squares overflows where PyTorch's does not
ACC = {jnp.dtype(jnp.float16): jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16): jnp.dtype(jnp.float32),
       jnp.dtype(jnp.float32): jnp.dtype(jnp.float64), jnp.dtype(jnp.complex64): jnp.dtype(jnp.complex128)}


_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_REDUCED = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))
# the largest finite value of each checked floating type (a complex type: of its parts)
_FMAX = {n: float(jnp.finfo(t).max) for n, t in (("float16", jnp.float16), ("bfloat16", jnp.bfloat16),
                                              ("float32", jnp.float32), ("complex64", jnp.float32))}


def check_scalar_fits(value, dtype, *, numel=None, opmath=False):
    """PyTorch's checked conversion (``c10::checked_convert``) of a Python number written into a tensor (setitem,
    fill_, masked_fill, a clamp bound, alpha...): a complex number with an imaginary part into a real tensor, NaN or a
    number outside an integer type's range, or a FINITE number beyond a floating type's largest value (``v > max``
    exactly: 65504.5 into float16 fails though it rounds to 65504; infinities and NaN pass) is a RuntimeError. An int
    into an unsigned type may be as low as -max (it wraps); a float may not be negative. An int outside
    [-2 ** 63, 2 ** 64) is the OverflowError of PyTorch's argument parser.

    ``numel``: the elements a fill writes. PyTorch fills ONE float16/bfloat16 element (``fill_``/``full`` of one
    element, setitem, which writes through a 0-d tensor) by a path that converts unchecked (1e5 gives inf).
    ``opmath``: the kernel converts the number to its computation type, float32 for float16/bfloat16 (lerp's weight,
    addcmul/addcdiv's value): 1e5 passes for float16, 1e39 fails as ``float``.
    Returns the value to write: a complex number without an imaginary part becomes its real part for a real type."""
    if type(value) is int and not -2 ** 63 <= value < 2 ** 64:  # what PyTorch's argument parser takes
        raise OverflowError("can't convert negative int to unsigned" if value < 0 else "int too big to convert")
    name, cplx, boolean, ints, top, reduced = _target(dtype, opmath)
    if isinstance(value, complex) and not cplx and not boolean:
        if value.imag != 0:  # a complex number with no imaginary part converts as its real part
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(name, name)} without overflow")
        value = value.real
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)) or name not in _C_NAMES:
        return value
    if ints is None:
        if top is None or (numel == 1 and reduced):
            return value
        parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
        if any(abs(p) > top and p - p == 0 for p in parts):  # (p - p is NaN for an infinity or NaN)
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[name]} without overflow")
        return value
    if isinstance(value, complex):
        return value
    lo, hi = ints
    if isinstance(value, int):
        bad = value > hi or value < (-hi if lo == 0 else lo)
    else:
        bad = value != value or value < float(lo) or value > float(hi)  # in double: 2.0 ** 63 passes
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[name]} without overflow")
    return value


def overflows(value, dtype):
    """The traced twin of :func:`check_scalar_fits` for a traced value (torchish.compile) that ``item()`` would give
    it: a boolean array, True where it does not fit ``dtype`` (an integer type's range, -max allowed for an unsigned
    one; NaN into an integer type; a finite number, or part, beyond a checked floating type's max). A nonzero
    imaginary part into a real type is the caller's to check."""
    name, cplx, boolean, ints, top, _ = _target(dtype, False)
    v = jnp.real(value)
    if boolean or v.dtype == jnp.bool_ or name not in _C_NAMES or (ints is None and top is None):
        return jnp.zeros(v.shape, bool)
    if ints is None:  # (into complex64, both parts are checked as float32's)
        bad = (jnp.abs(v) > top) & jnp.isfinite(v)
        if cplx and jnp.iscomplexobj(value):
            bad = bad | (jnp.abs(jnp.imag(value)) > top) & jnp.isfinite(jnp.imag(value))
        return bad
    lo, hi = ints
    if jnp.issubdtype(v.dtype, jnp.integer):
        v = v.astype(jnp.int64)
        return (v > min(hi, 2 ** 63 - 1)) | (v < max(-hi if lo == 0 else lo, -2 ** 63))
    v = v.astype(jnp.float64)  # (in double, as item() gives it: 2.0 ** 63 passes for int64)
    return ~((v >= float(lo)) & (v <= float(hi)))


_TARGETS: dict = {}


def _target(dtype, opmath):
    """What :func:`check_scalar_fits` needs of a dtype, cached: (name, complex, bool, (min, max) of an integer type
    or None, a checked floating type's max or None, float16/bfloat16)."""
    key = (dtype, opmath)
    t = _TARGETS.get(key)
    if t is None:
        np_dt = jnp.dtype(dtype.np if hasattr(dtype, "np") else dtype)
        if opmath and np_dt in _REDUCED:
            np_dt = jnp.dtype(jnp.float32)
        ints = None
        if jnp.issubdtype(np_dt, jnp.integer):
            info = jnp.iinfo(np_dt)
            ints = (int(info.min), int(info.max))
        t = _TARGETS[key] = (np_dt.name, bool(jnp.issubdtype(np_dt, jnp.complexfloating)), np_dt == jnp.bool_, ints,
                             _FMAX.get(np_dt.name), np_dt in _REDUCED)
    return t
