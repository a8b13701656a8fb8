"""Float-to-integer conversion as PyTorch's CPU kernels do it.

A C cast from a float that does not fit the integer type is undefined; PyTorch's x86 build truncates toward zero
through int64 (for int64 and uint8) or int32 (for int32, int16, int8): NaN, infinities and values outside that
intermediate type become its minimum, and the narrower types keep the low bits. XLA saturates instead, so every
value-level cast goes through ``cast`` here.

>>> cast(jnp.array([jnp.inf, 300.7, -3.5]), jnp.uint8)   # [0, 44, 253]
"""
from __future__ import annotations

import jax.numpy as jnp

_VIA_INT64 = (jnp.dtype(jnp.int64), jnp.dtype(jnp.uint8))
_VIA_INT32 = (jnp.dtype(jnp.int32), jnp.dtype(jnp.int16), jnp.dtype(jnp.int8))


def cast(x, dtype):
    """``x.astype(dtype)`` with PyTorch's conversion of out-of-range floats to integers."""
    dtype = jnp.dtype(dtype)
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact) or dtype not in _VIA_INT64 + _VIA_INT32:
        return x.astype(dtype)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        x = x.real
    mid, bits = (jnp.int64, 63) if dtype in _VIA_INT64 else (jnp.int32, 31)
    t = jnp.trunc(x.astype(jnp.float64) if x.dtype != jnp.float64 else x)
    bad = ~((t >= -(2.0 ** bits)) & (t < 2.0 ** bits))  # NaN fails both tests
    as_mid = jnp.where(bad, jnp.iinfo(mid).min, jnp.where(bad, 0, t).astype(mid))
    return as_mid.astype(dtype)


# the accumulate type of PyTorch's CPU kernels (``at::acc_type<T, false>``) for scans and var/std: a running value
# kept in the result type drifts by ulps along a scan, and a float32 sum of squares overflows where PyTorch's does not
ACC = {jnp.dtype(jnp.float16): jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16): jnp.dtype(jnp.float32),
       jnp.dtype(jnp.float32): jnp.dtype(jnp.float64), jnp.dtype(jnp.complex64): jnp.dtype(jnp.complex128)}


_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "bool": "bool"}


def check_scalar_fits(value, dtype):
    """PyTorch's checked conversion (``c10::checked_convert``) of a Python number written into a tensor (setitem,
    fill_, masked_fill): a complex number with an imaginary part into a real tensor, NaN or a number outside an
    integer type's range is a RuntimeError. An int into an unsigned type may be as low as -max (it wraps); a float
    may not be negative. (PyTorch also refuses finite floats beyond float32's range; that is left out.)
    Returns the value to write: a complex number without an imaginary part becomes its real part for a real type."""
    np_dt = jnp.dtype(dtype.np if hasattr(dtype, "np") else dtype)
    if isinstance(value, complex) and not jnp.issubdtype(np_dt, jnp.complexfloating) and np_dt != jnp.bool_:
        if value.imag != 0:  # a complex number with no imaginary part converts as its real part
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(np_dt.name, np_dt.name)} without "
                               "overflow")
        value = value.real
    if isinstance(value, bool) or not isinstance(value, (int, float)) or np_dt.name not in _C_NAMES \
            or not jnp.issubdtype(np_dt, jnp.integer):
        return value
    info = jnp.iinfo(np_dt)
    if isinstance(value, int):
        bad = value > info.max or value < (-int(info.max) if info.min == 0 else int(info.min))
    else:
        bad = value != value or value < int(info.min) or value > int(info.max)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[np_dt.name]} without overflow")
    return value
