"""``torch.ao.nn.quantized.dynamic.Linear``: a Linear layer with a qint8 weight, run as PyTorch's x86 (fbgemm)
``quantized::linear_dynamic`` runs it.

Per call: the input's range (its min and max over all elements) gives quint8 parameters (ATen's
``ChooseQuantizationParams``, the range halved to [0, 127] with ``reduce_range``: fbgemm's 8-bit products would
overflow its 16-bit accumulation otherwise); the input is quantized with fbgemm's fused multiply-add
(``nearbyint(fma(x, 1/scale, zero_point))``), multiplied with the weight's integers in int32, and the int32 result
``r`` becomes ``fma(float(r), x_scale * w_scale, bias)`` in float32. Every step is exact or rounded once as fbgemm
rounds it, so the outputs equal PyTorch's bit for bit.

Example:
    >>> import torchish as torch
    >>> qm = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(4, 2)), {torch.nn.Linear})
    >>> qm
    Sequential(
      (0): DynamicQuantizedLinear(in_features=4, out_features=2, dtype=torch.qint8, qscheme=torch.per_tensor_affine)
    )
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..... import _dtype
from ....._quantized import QuantizedTensor, per_tensor_affine, qint8, quantize_per_tensor
from ....._tensor import Tensor, wrap
from .....nn.module import Module

__all__ = ["Linear", "LinearPackedParams"]

_SMALL_SCALE = np.float32(6.1e-5)  # (ATen's SMALL_SCALE_THRESHOLD)


def _choose_qparams(x_min, x_max, qmin, qmax):
    """ATen's ``ChooseQuantizationParams`` traced (``qmin``/``qmax`` already reduced): ``(scale as float64,
    zero_point as int32)``."""
    f32, f64 = jnp.float32, jnp.float64
    x_min, x_max = jnp.minimum(x_min, f32(0)), jnp.maximum(x_max, f32(0))
    span = qmax - qmin
    scale = (x_max.astype(f64) - x_min.astype(f64)) / span
    s32 = scale.astype(f32)
    scale = jnp.where((s32 == 0) | jnp.isinf(f32(1) / s32), f64(0.1), scale)
    small = scale < f64(_SMALL_SCALE)
    amp = _SMALL_SCALE / scale.astype(f32)
    new_min = jnp.where(x_min == 0, x_min, jnp.where(x_max == 0, -_SMALL_SCALE * f32(span), x_min * amp))
    new_max = jnp.where(x_min == 0, _SMALL_SCALE * f32(span), jnp.where(x_max == 0, x_max, x_max * amp))
    x_min, x_max = jnp.where(small, new_min, x_min), jnp.where(small, new_max, x_max)
    scale = jnp.where(small, f64(_SMALL_SCALE), scale)
    lo, hi = x_min.astype(f64) / scale, x_max.astype(f64) / scale
    from_min, from_max = qmin - lo, qmax - hi
    initial = jnp.where(abs(qmin) - jnp.abs(lo) < abs(qmax) - jnp.abs(hi), from_min, from_max)
    zp = jnp.where(initial < qmin, qmin, jnp.where(initial > qmax, qmax, jnp.round(initial)))
    return scale, zp.astype(jnp.int32)


@functools.partial(jax.jit, static_argnames=("reduce_range",))
def _linear_dynamic(x, wq, w_scale, bias, reduce_range):
    f32, f64 = jnp.float32, jnp.float64
    x2 = x.reshape(-1, x.shape[-1])
    scale, zp = _choose_qparams(jnp.min(x2), jnp.max(x2), 0, 127 if reduce_range else 255)
    inv = (f32(1) / scale.astype(f32)).astype(f64)
    t = (x2.astype(f64) * inv + zp.astype(f64)).astype(f32)  # (one rounding: fbgemm's fused multiply-add)
    xq = jnp.clip(jnp.round(t), 0, 255).astype(jnp.int32)
    raw = jax.lax.dot_general(xq - zp, wq.astype(jnp.int32), (((1,), (1,)), ((), ())),
                              preferred_element_type=jnp.int32)
    mult = scale.astype(f32) * w_scale
    if bias is None:
        y = raw.astype(f32) * mult
    else:
        y = (raw.astype(f32).astype(f64) * mult.astype(f64) + bias.astype(f64)).astype(f32)
    return y.reshape(x.shape[:-1] + (wq.shape[0],))


@jax.jit
def _linear_fp16(x, w, bias):
    y = jnp.matmul(x, w.T, precision=jax.lax.Precision.HIGHEST)
    return y if bias is None else y + bias


class LinearPackedParams(Module):
    """The (weight, bias) pair of a quantized Linear (PyTorch's packed parameters): saved in a state dict as
    ``<prefix>dtype`` and ``<prefix>_packed_params`` (the tuple), as PyTorch saves it."""

    _version = 3

    def __init__(self, dtype=qint8):
        super().__init__()
        self.dtype = dtype
        self.__dict__["_packed_params"] = None

    def set_weight_bias(self, weight, bias):
        if self.dtype is _dtype.float16:  # (fbgemm's fp16 packing: saturated to float16's range, then rounded)
            weight = wrap(jnp.clip(weight.detach()._d.astype(jnp.float32), -65504, 65504)
                          .astype(jnp.float16).astype(jnp.float32))
        elif not isinstance(weight, QuantizedTensor) or weight.dtype is not qint8 or \
                weight.qscheme() is not per_tensor_affine:
            raise RuntimeError("torchish: dynamically quantized Linear takes a qint8 per-tensor affine weight")
        self.__dict__["_packed_params"] = (weight, bias)  # (a plain attribute: no Parameters, as PyTorch's)

    def _weight_bias(self):
        return self._packed_params

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.dtype = state_dict.pop(prefix + "dtype")
        self.set_weight_bias(*state_dict.pop(prefix + "_packed_params"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())


class Linear(Module):
    """A dynamically quantized Linear layer: ``weight()`` is a qint8 per-tensor quantized tensor, ``bias()`` a
    float one; the forward quantizes its input per call (see the module docstring). With ``dtype=torch.float16``
    the weight is rounded to float16 and the products are float32 (to float32 rounding of PyTorch's, not bit for
    bit: fbgemm's fp16 GEMM sums in its own order)."""

    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        if dtype not in (qint8, _dtype.float16):
            raise RuntimeError(f"Unsupported dtype specified for dynamic quantized Linear! {dtype}")
        self.in_features, self.out_features = in_features, out_features
        self.scale, self.zero_point = 1.0, 0
        self.dtype = dtype
        from .....ops.creation import zeros
        self._packed_params = LinearPackedParams(dtype)
        weight = zeros((out_features, in_features))
        self.set_weight_bias(quantize_per_tensor(weight, 1.0, 0, qint8) if dtype is qint8 else weight,
                             zeros(out_features) if bias_ else None)
        self.reduce_range = True

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def __repr__(self):  # (PyTorch hides the packed parameters' child)
        return f"{self._get_name()}({self.extra_repr()})"

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        from .....ops.creation import tensor
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = tensor(self.scale)
        destination[prefix + "zero_point"] = tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, dtype={self.dtype}"
                + (f", qscheme={self.weight().qscheme()}" if self.dtype is qint8 else ""))

    def weight(self):
        return self._packed_params._packed_params[0]

    def bias(self):
        return self._packed_params._packed_params[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def forward(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"linear_dynamic(): argument 'X' (position 1) must be Tensor, not {type(x).__name__}")
        if x.ndim < 2:
            raise RuntimeError("The dimension of input tensor should be larger than or equal to 2")
        if x.dtype is not _dtype.float32:
            raise RuntimeError(f"expected scalar type Float but found {_dtype.scalar_type_name(x.dtype)}")
        if x.shape[-1] != self.in_features:
            raise RuntimeError(f"The number of rows in the packB should be equal to K: {x.shape[-1]}")
        w, b = self._packed_params._packed_params
        if x.numel() == 0:
            from .....ops.creation import zeros
            return zeros(tuple(x.shape[:-1]) + (self.out_features,))
        bias = None if b is None else b.detach()._d
        if self.dtype is _dtype.float16:  # float32 products of the float16-rounded weight (fbgemm's fp16 GEMM)
            return wrap(_linear_fp16(x._d, w._d, bias))
        if w.q_zero_point() != 0:
            raise RuntimeError("torchish: dynamically quantized Linear needs a symmetric weight (zero_point 0)")
        return wrap(_linear_dynamic(x._d, w._d, np.float32(w.q_scale()), bias, reduce_range=self.reduce_range))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamic Linear of a float ``nn.Linear``: its weight observed by ``mod.qconfig.weight()`` (default:
        MinMaxObserver, qint8, per_tensor_symmetric) and quantized with the observer's parameters."""
        from .....nn.modules.linear import Linear as FloatLinear
        from ....quantization.qconfig import default_dynamic_qconfig
        if not isinstance(mod, FloatLinear):
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for nn.Linear")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        observer = qconfig.weight()
        observer(mod.weight)
        dtype = observer.dtype
        if dtype is _dtype.float16:
            qweight = mod.weight.detach().float()
        elif dtype is qint8:
            scale, zero_point = observer.calculate_qparams()
            qweight = quantize_per_tensor(mod.weight.detach().float(), float(scale), int(zero_point), qint8)
        else:
            raise RuntimeError(f"Unsupported dtype specified for dynamic quantized Linear! {dtype}")
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        return qlinear
