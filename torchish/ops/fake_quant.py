"""Fake quantization for quantization-aware training: ``torch.fake_quantize_per_tensor_affine`` and
``torch.fake_quantize_per_channel_affine``.

Each element is quantized to an integer ``q = clamp(round(x / scale) + zero_point, quant_min, quant_max)`` (round
half to even, as ``std::nearbyint``) and mapped back, ``(q - zero_point) * scale``, in the input's dtype. The
gradient is the straight-through estimator PyTorch's ``*_cachemask`` kernels give: the output gradient where the
unclamped ``q`` lies in ``[quant_min, quant_max]``, zero elsewhere (the mask, PyTorch's saved temporary: writing the
input in place leaves the backward valid, a second backward fails). ``scale`` and ``zero_point`` take no gradient.

The arithmetic follows PyTorch's CPU kernels: ``1 / scale`` in float32, the product with the input in float32
(float64 for a float64 input), a NaN quantized to ``quant_min``; the per-tensor result ``(q - zero_point) * scale``
is a float32 product, the per-channel one a float64 product (both then rounded to the input's dtype).

Example:
    >>> import torchish as torch
    >>> torch.fake_quantize_per_tensor_affine(torch.tensor([0.26, -0.04, 9.0]), 0.1, 0, -128, 127)
    tensor([ 0.3000, -0.0000,  9.0000])
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from .elementwise import not_implemented, type_name
from .registry import Family, apply, defop

_fam = Family(globals())


def _quantize(x, inv, zp, qmin, qmax, *, per_channel=False):
    """``(q, mask)``: the clamped quantized values (float) and where the unclamped ones lie in range. The
    per-channel kernel converts to int64 before clamping: NaN, +-inf and values past int64's range become int64's
    minimum (x86's conversion), so ``quant_min``; with a float zero point it rounds ``zero_point + x * inv`` (through
    float32, ``lrintf``). The per-tensor one clamps the float (``fmin(fmax(.))``: NaN -> ``quant_min``)."""
    t = x.astype(jnp.float64 if x.dtype == jnp.float64 else jnp.float32) * inv.astype(
        jnp.float64 if x.dtype == jnp.float64 else jnp.float32)
    if per_channel and jnp.issubdtype(zp.dtype, jnp.floating):
        qf = jnp.round((zp + t).astype(jnp.float32))
    else:
        qf = zp + jnp.round(t)
    mask = (qf >= qmin) & (qf <= qmax)
    low = (qf < qmin) | jnp.isnan(qf)
    if per_channel:
        low = low | ~(jnp.abs(qf) < 2.0 ** 63)
    q = jnp.where(low, qmin, jnp.where(qf > qmax, qmax, qf))
    return q, mask


def _per_tensor_fwd(x, scale, zero_point, *, quant_min, quant_max):
    sc = jnp.asarray(scale, jnp.float32)
    zp = jnp.trunc(jnp.asarray(zero_point)).astype(jnp.int64)  # (a Tensor zero point: item().toInt())
    q, _ = _quantize(x, jnp.float32(1) / sc, zp, quant_min, quant_max)
    return ((q - zp).astype(jnp.float32) * sc).astype(x.dtype)


def _per_tensor_vjp(g, x, scale, zero_point, *, out, quant_min, quant_max):
    sc = jnp.asarray(scale, jnp.float32)
    zp = jnp.trunc(jnp.asarray(zero_point)).astype(jnp.int64)
    _, mask = _quantize(x, jnp.float32(1) / sc, zp, quant_min, quant_max)
    return g * mask.astype(g.dtype), None, None


def _per_channel_fwd(x, scale, zero_point, *, quant_min, quant_max):
    sc = scale.astype(jnp.float32)
    q, _ = _quantize(x, jnp.float32(1) / sc, zero_point, quant_min, quant_max, per_channel=True)
    return ((q.astype(jnp.float64) - zero_point.astype(jnp.float64)) * sc.astype(jnp.float64)).astype(x.dtype)


def _per_channel_vjp(g, x, scale, zero_point, *, out, quant_min, quant_max):
    _, mask = _quantize(x, jnp.float32(1) / scale.astype(jnp.float32), zero_point, quant_min, quant_max,
                        per_channel=True)
    return g * mask.astype(g.dtype), None, None


_SAVES_MASK = ("t", "", "")  # PyTorch saves the mask only (a temporary of the forward)
_PER_TENSOR = defop("fake_quantize_per_tensor_affine", _per_tensor_fwd, vjp=_per_tensor_vjp, saved=_SAVES_MASK,
                    grad_name="FakeQuantizePerTensorAffineCachemaskBackward0")
_PER_TENSOR_T = defop("fake_quantize_per_tensor_affine_tensor_qparams", _per_tensor_fwd, vjp=_per_tensor_vjp,
                      saved=_SAVES_MASK, grad_name="FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0")
_PER_CHANNEL = defop("fake_quantize_per_channel_affine", _per_channel_fwd, vjp=_per_channel_vjp, saved=_SAVES_MASK,
                     grad_name="FakeQuantizePerChannelAffineCachemaskBackward0")


def _check_range(quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _check_input(input, kernel):
    if not isinstance(input, Tensor):
        raise TypeError(f"{kernel.split('_kernel')[0]}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")
    if input.dtype.category != _dtype._FLOAT:
        raise not_implemented(kernel, input.dtype)


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Fake-quantizes ``input`` with one ``scale`` and ``zero_point`` (Python numbers, or one-element Tensors)."""
    from ..nn._functional._loss_util import not_differentiable  # (nn imports ops)
    both = isinstance(scale, Tensor) and isinstance(zero_point, Tensor)
    sc = scale if both or not isinstance(scale, Tensor) or scale.numel() != 1 else float(scale)
    zp = zero_point if both or not isinstance(zero_point, Tensor) or zero_point.dtype.is_floating_point \
        else int(zero_point)
    if not both and not (isinstance(sc, (float, int, np.floating, np.integer)) and not isinstance(sc, bool)
                         and _is_int(zp) and _is_int(quant_min) and _is_int(quant_max)):
        got = ", ".join(type_name(a) for a in (input, scale, zero_point, quant_min, quant_max))
        raise TypeError(f"fake_quantize_per_tensor_affine() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n * (Tensor input, Tensor scale, Tensor zero_point, int "
                        "quant_min, int quant_max)\n * (Tensor input, float scale, int zero_point, int quant_min, int "
                        "quant_max)\n")
    _check_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    _check_range(quant_min, quant_max)
    if both:
        not_differentiable("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", "scale", scale)
        not_differentiable("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", "zero_point", zero_point)
        for t in (scale, zero_point):
            if t.numel() != 1:
                raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")
        return apply(_PER_TENSOR_T, (input, scale.reshape(()), zero_point.reshape(())), quant_min=int(quant_min),
                     quant_max=int(quant_max))
    if not quant_min <= zp <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return apply(_PER_TENSOR, (input, float(sc), int(zp)), quant_min=int(quant_min), quant_max=int(quant_max))


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Fake-quantizes ``input`` with one ``scale[i]`` and ``zero_point[i]`` per index ``i`` of dimension ``axis``
    (``scale`` float32, ``zero_point`` int32, float32 or float16; 1-D Tensors)."""
    from ..nn._functional._loss_util import concrete, not_differentiable  # (nn imports ops)
    fn = "fake_quantize_per_channel_affine_cachemask"
    if scale.dtype not in (_dtype.float32, _dtype.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_dtype.scalar_type_name(scale.dtype)}")
    if zero_point.dtype not in (_dtype.int32, _dtype.float32, _dtype.float16):
        raise RuntimeError("Zero-point must be Int32, Float or Half, found "
                           f"{_dtype.scalar_type_name(zero_point.dtype)}")
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.shape[wrap_dim(axis, input.ndim)]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    _check_range(quant_min, quant_max)
    if not zero_point.dtype.is_floating_point:
        zp = concrete(zero_point)
        if zp is not None and zp.size and (zp.min() < quant_min or zp.max() > quant_max):
            raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    if not 0 <= axis <= input.ndim:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    _check_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    if scale.dtype == _dtype.bfloat16:  # PyTorch's CPU kernel reads the scale as float: its dtype check fails
        raise RuntimeError("!needs_dynamic_casting<func_t>::check(iter) INTERNAL ASSERT FAILED: a bfloat16 scale is "
                           "not supported by the CPU kernel")
    not_differentiable(fn, "scale", scale)
    not_differentiable(fn, "zero_point", zero_point)
    shape = [1] * input.ndim
    shape[axis] = input.shape[axis]
    return apply(_PER_CHANNEL, (input, scale.view(shape), zero_point.view(shape)), quant_min=int(quant_min),
                 quant_max=int(quant_max))


_fam.public("fake_quantize_per_tensor_affine", fake_quantize_per_tensor_affine, method=False)
_fam.public("fake_quantize_per_channel_affine", fake_quantize_per_channel_affine, method=False)
