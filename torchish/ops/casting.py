"""Float-to-integer conversion as PyTorch's CPU kernels do it.

A C cast from a float that does not fit the integer type is undefined; PyTorch's x86 build truncates toward zero
through int64 (for int64 and uint8) or int32 (for int32, int16, int8, uint16): NaN, infinities and values outside
that intermediate type become its minimum, and the narrower types keep the low bits. uint32 and uint64 are converted
with a bias of 2^31 / 2^63 for the upper half (NaN -> 2^31 / 2^63). (PyTorch's vectorised uint32 loop does that; its
scalar loop, which takes the last numel % 4 elements of a contiguous tensor, truncates through int64 instead, so there
NaN gives 0 and 5e9 gives 5e9 mod 2^32: element-position-dependent, not mimicked.) XLA saturates instead, so every
value-level cast goes through ``cast`` here.

>>> cast(jnp.array([jnp.inf, 300.7, -3.5]), jnp.uint8)   # [0, 44, 253]

Conversions into and out of the float8 types follow PyTorch's ``c10::Float8_*`` conversions (``_to_float8``),
not ml_dtypes' (which make e4m3fn's overflow and e8m0fnu's 0 NaN).
"""
from __future__ import annotations


import jax
import jax.numpy as jnp

from .._dtype import FLOAT8, FLOAT8_NP, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu
from .. import _precision
from .._global_flags import warn_once

_NAN_INT_ZERO = (float8_e4m3fnuz.np, float8_e5m2fnuz.np, float8_e8m0fnu.np)  # (their NaN into an int is 0)
_VIA_INT64 = (jnp.dtype(jnp.int64), jnp.dtype(jnp.uint8))
_VIA_INT32 = (jnp.dtype(jnp.int32), jnp.dtype(jnp.int16), jnp.dtype(jnp.int8), jnp.dtype(jnp.uint16))
# uint32 and uint64 as x86 converts without an unsigned instruction: values from 2^(bits-1) up have that bias taken
# off before the signed conversion and its top bit set after (so NaN and -inf give 2^(bits-1), +inf and overflow 0)
_BIASED = {jnp.dtype(jnp.uint32): (jnp.int32, 31), jnp.dtype(jnp.uint64): (jnp.int64, 63)}


def cast(x, dtype):
    """``x.astype(dtype)`` with PyTorch's conversion of out-of-range floats to integers."""
    dtype = jnp.dtype(dtype)
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating) and not jnp.issubdtype(dtype, jnp.complexfloating):
        x = x.real  # (explicitly: jax deprecates the implicit complex-to-real astype)
    if x.dtype in FLOAT8_NP and dtype != x.dtype:
        if x.dtype in _NAN_INT_ZERO and jnp.issubdtype(dtype, jnp.integer):
            x = jnp.where(jnp.isnan(x), jnp.zeros((), jnp.float32), x.astype(jnp.float32))  # (PyTorch: NaN -> 0)
        else:
            x = _from_float8(x, dtype)
    if dtype in FLOAT8_NP and dtype != x.dtype:
        return _to_float8(x, dtype)
    if x.dtype == jnp.bool_ and jnp.issubdtype(dtype, jnp.inexact):
        # fenced: XLA turns a product with a converted bool into a select, whose zeros lose PyTorch's 0 * inf = nan
        return jax.lax.optimization_barrier(x.astype(dtype))
    if dtype in _precision.LOW and (x.dtype == jnp.float64 or jnp.issubdtype(x.dtype, jnp.integer)):
        x = x.astype(jnp.float32)  # (c10::Half and c10::BFloat16 are made from a float: a double rounds twice)
    if not jnp.issubdtype(x.dtype, jnp.inexact) or dtype not in _VIA_INT64 + _VIA_INT32 + tuple(_BIASED):
        return x.astype(dtype)
    t = jnp.trunc(x.astype(jnp.float64) if x.dtype != jnp.float64 else x)
    if dtype in _BIASED and not (dtype == jnp.uint32 and x.dtype == jnp.float16):
        # (float16 into uint32 is PyTorch's scalar loop: through int64, as below)
        mid, bits = _BIASED[dtype]
        high = t >= 2.0 ** bits  # (False for NaN)
        low = _truncated(jnp.where(high, t - 2.0 ** bits, t), mid, bits).astype(dtype)
        return jnp.where(high, low ^ jnp.asarray(2 ** bits, dtype), low)
    mid, bits = (jnp.int32, 31) if dtype in _VIA_INT32 else (jnp.int64, 63)
    return _truncated(t, mid, bits).astype(dtype)


def _truncated(t, mid, bits):
    """Whole-valued float64 ``t`` as the signed type ``mid`` (of ``bits`` + 1 bits) converts it on x86: NaN and values
    outside its range become its minimum."""
    bad = ~((t >= -(2.0 ** bits)) & (t < 2.0 ** bits))  # NaN fails both tests
    return jnp.where(bad, jnp.iinfo(mid).min, jnp.where(bad, 0, t).astype(mid))


def rounded(v, dtype):
    """float32 ``v`` rounded to float16/bfloat16 and kept float32, a rounding XLA:CPU cannot drop. Inside a fused
    loop or reduction its CPU backend folds a float32 -> half -> float32 round trip away even behind an
    ``optimization_barrier`` and with ``xla_allow_excess_precision`` off (``jnp.sum(barrier((g * 0.3).astype(
    bfloat16)))`` sums the unrounded products); ``reduce_precision`` survives. Its float16 form mishandles
    subnormals, which are rounded on their own grid (multiples of 2^-24, exact in float32)."""
    if jnp.dtype(dtype) == jnp.bfloat16:
        return jax.lax.reduce_precision(v, exponent_bits=8, mantissa_bits=7)
    tiny = jnp.round(v * 2.0 ** 24) * 2.0 ** -24
    return jnp.where(jnp.abs(v) < 2.0 ** -14, tiny, jax.lax.reduce_precision(v, exponent_bits=5, mantissa_bits=10))


def _to_float8(x, dtype):
    """``x`` into a float8 type (:func:`_float8_bits`); differentiable from a floating ``x`` as PyTorch's
    ToCopyBackward0: the cotangent converted back to ``x``'s type (the bit operations would give zero)."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return _float8_bits(x, dtype)
    return _to_float8_vjp(x, dtype)


def _float8_bits(x, dtype):
    """``x`` (any real type) as PyTorch's ``c10::Float8_*(float)`` converts it: through float32, rounding to nearest
    even; float8_e4m3fn saturates finite overflow and infinities to +-448 and float8_e5m2 overflows to infinity (its
    NaN is 0x7F with the input's sign: XLA's select would canonicalise it, so that is chosen among the bits); the fnuz
    types make overflow NaN (ml_dtypes' conversion); float8_e8m0fnu takes the float32 exponent, rounded by the guard,
    round and sticky bits and ignoring the sign (0 becomes 2^-127, the smallest value)."""
    f = x.astype(jnp.float32)
    bits = jax.lax.bitcast_convert_type(f, jnp.uint32)
    if dtype == float8_e8m0fnu.np:
        e = (bits >> 23) & 0xFF
        up = ((bits & 0x400000) != 0) & (((bits & 0x3FFFFF) != 0) | (e > 0)) & (e != 0xFF)
        return jax.lax.bitcast_convert_type((e + up.astype(jnp.uint32)).astype(jnp.uint8), dtype)
    if dtype == float8_e4m3fn.np:
        f = jnp.clip(f, -448.0, 448.0)  # (NaN passes through)
    out = f.astype(dtype)
    if dtype in (float8_e4m3fn.np, float8_e5m2.np):
        nan = ((bits >> 24) & 0x80).astype(jnp.uint8) | 0x7F
        out = jax.lax.bitcast_convert_type(
            jnp.where(jnp.isnan(f), nan, jax.lax.bitcast_convert_type(out, jnp.uint8)), dtype)
    return out


def _widened(x, dtype):
    """A float8 array widened as PyTorch converts it, through float32; float8_e8m0fnu into float64 (or complex128,
    or bool) is computed from its exponent bits, as XLA would flush its smallest value, the float32 subnormal
    2^-127, to zero on the way."""
    if x.dtype == float8_e8m0fnu.np and dtype in (jnp.dtype(jnp.float64), jnp.dtype(jnp.complex128),
                                                 jnp.dtype(jnp.bool_)):
        e = jax.lax.bitcast_convert_type(x, jnp.uint8).astype(jnp.uint64)
        f = jax.lax.bitcast_convert_type((e + (1023 - 127)) << 52, jnp.float64)  # 2 ** (e - 127), exactly
        return jnp.where(e == 255, jnp.nan, f)
    return x.astype(jnp.float32)


def _conversion(forward, backward):
    """``forward(x, dtype)`` differentiable as PyTorch's ToCopyBackward0: the cotangent converted back to ``x``'s type
    by ``backward(g, x's dtype)``. The float8 conversions are bit operations, whose own derivative would be zero."""
    f = jax.custom_vjp(forward, nondiff_argnums=(1,))
    f.defvjp(lambda x, dtype: (forward(x, dtype), jnp.zeros((0,), x.dtype)),
             lambda dtype, like, g: (backward(g, like.dtype),))
    return f


# into float8 from a floating type: the cotangent comes back through ``cast``; out of float8: through PyTorch's
# float8 conversion (e4m3fn saturating), as ToCopyBackward0's ``grad.to(float8)``, not XLA's
_to_float8_vjp = _conversion(_float8_bits, cast)
_from_float8 = _conversion(_widened, _float8_bits)


def warn_discard_imag(src, dst):
    """PyTorch's copy warns, once per process, when a complex tensor is copied into a real one (``z.to(float)``,
    ``x.copy_(z)``, ``x[i] = z``); ``src`` and ``dst`` are torchish dtypes."""
    if src.is_complex and not dst.is_complex:
        warn_once("Casting complex values to real discards the imaginary part", stacklevel=4)


# the accumulate type of PyTorch's CPU kernels (``at::acc_type<T, false>``) for scans and var/std: a running value
# kept in the result type drifts by ulps along a scan, and a float32 sum of squares overflows where PyTorch's does not
ACC = {jnp.dtype(jnp.float16): jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16): jnp.dtype(jnp.float32),
       jnp.dtype(jnp.float32): jnp.dtype(jnp.float64), jnp.dtype(jnp.complex64): jnp.dtype(jnp.complex128)}


_C_NAMES = {"uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "int8": "int8_t",
            "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
            **{d.name: "c10::" + d.name.capitalize() for d in FLOAT8}}
# a float8 type's checked range (its lowest and largest values) and whether an infinity fits (float8_e5m2's)
_F8_RANGE = {d.name: (float(jnp.finfo(d.np).min) if d is not float8_e8m0fnu else 2.0 ** -127,
                      float(jnp.finfo(d.np).max), d is float8_e5m2) for d in FLOAT8}
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
    if name in _F8_RANGE:  # checked where a fill writes more than one element (numel): full, fill_, pad
        lo, hi, inf_ok = _F8_RANGE[name]  # (elsewhere PyTorch's missing float8 kernel raises first)
        v = float(value.real if isinstance(value, complex) else value)
        if numel not in (None, 1) and v == v and (not inf_ok if v - v != 0 else not lo <= v <= hi):
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[name]} without overflow")
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
