"""The arithmetic of quantized tensors (:mod:`torchish._quantized`), as PyTorch's x86 (fbgemm) kernels compute it:
quantizing (``nearbyint(zero_point + x * (1.0f / scale))`` in float32, clamped; the sub-byte types round before
adding the zero point), packing the sub-byte types, dequantizing (float32 per tensor, float64 rounded once per
channel), and ATen's ``ChooseQuantizationParams``. Cached jitted kernels: scales and zero points are operands."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["quantize_values", "quantize_sub_byte", "pack_sub_byte", "dequantize_values", "choose_qparams"]


@functools.partial(jax.jit, static_argnums=(3, 4, 5))
def quantize_values(x, scale, zero_point, lo, hi, storage):
    """``clamp(nearbyint(zero_point + x * (1.0f / scale)), lo, hi)`` in float32 (scale/zero_point broadcast)."""
    inv = jnp.float32(1.0) / jnp.asarray(scale, jnp.float32)
    r = jnp.round(jnp.asarray(zero_point, jnp.float32) + x.astype(jnp.float32) * inv)
    return jnp.clip(jnp.clip(r, -2.0 ** 40, 2.0 ** 40).astype(jnp.int64), lo, hi).astype(storage)


@functools.partial(jax.jit, static_argnums=1)
def pack_sub_byte(v, bits):
    """The sub-byte types' storage: the flattened values packed into bytes, the first in the lowest bits."""
    per = 8 // bits
    v = v.reshape(-1).astype(jnp.uint8)
    v = jnp.pad(v, (0, -v.shape[0] % per)).reshape(-1, per)
    shifts = jnp.arange(per, dtype=jnp.uint8) * bits
    return jnp.bitwise_or.reduce(v << shifts, axis=1).astype(jnp.uint8)


@functools.partial(jax.jit, static_argnums=(3, 4))
def quantize_sub_byte(x, scale, zero_point, hi, storage):
    """The sub-byte types' kernel rounds before adding the zero point."""
    r = jnp.round(x * (jnp.float32(1.0) / scale)) + zero_point
    return jnp.clip(jnp.clip(r, -2.0 ** 40, 2.0 ** 40).astype(jnp.int64), 0, hi).astype(storage)


@jax.jit
def _dequantize_per_tensor(v, zero_point, scale):
    return (v.astype(jnp.float32) - zero_point) * scale


@functools.partial(jax.jit, static_argnums=3)
def _dequantize_per_channel(v, scale, zero_point, axis):
    shape = [1] * v.ndim
    shape[axis] = -1
    scale = scale.reshape(shape)  # (per channel: computed in float64, rounded once to float32)
    zp = zero_point.astype(jnp.float64).reshape(shape)
    return ((v.astype(jnp.float64) - zp) * scale).astype(jnp.float32)


def dequantize_values(v, qp):
    if not qp.per_channel:
        return _dequantize_per_tensor(v, np.float32(qp.zero_point), np.float32(qp.scale))
    return _dequantize_per_channel(v, qp.scale._d, qp.zero_point._d, qp.axis)


def choose_qparams(x_min, x_max, qmin, qmax, reduce_range=False):
    """ATen's ``ChooseQuantizationParams`` (fbgemm's): ``(scale, zero_point)`` mapping ``[x_min, x_max]``
    (widened to hold 0) onto ``[qmin, qmax]`` (halved when ``reduce_range``)."""
    x_min, x_max = float(np.float32(x_min)), float(np.float32(x_max))
    if not x_min <= x_max:
        raise RuntimeError("In ChooseQuantizationParams, min should be less than or equal to max")
    if reduce_range:
        qmin, qmax = int(qmin / 2), int(qmax / 2)  # (C's truncating division)
    x_min, x_max = min(x_min, 0.0), max(x_max, 0.0)
    scale = (x_max - x_min) / (qmax - qmin)
    f = np.float32(scale)
    with np.errstate(divide="ignore", over="ignore"):
        if f == 0 or np.isinf(np.float32(1) / f):
            scale = 0.1
    small = float(np.float32(6.1e-5))
    if scale < small:
        org = float(np.float32(scale))
        scale = small
        if x_min == 0:
            x_max = float(np.float32(small * (qmax - qmin)))
        elif x_max == 0:
            x_min = float(np.float32(-small * (qmax - qmin)))
        else:
            amp = float(np.float32(small / org))
            x_min, x_max = float(np.float32(x_min * amp)), float(np.float32(x_max * amp))
    from_min, from_max = qmin - x_min / scale, qmax - x_max / scale
    err_min, err_max = abs(qmin) - abs(x_min / scale), abs(qmax) - abs(x_max / scale)
    initial = from_min if err_min < err_max else from_max
    zp = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return float(scale), zp
