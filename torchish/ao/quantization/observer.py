"""The observers ``quantize_dynamic`` uses: :class:`MinMaxObserver` (a running min and max, turned into a scale and
zero point as ``torch.ao.quantization.observer`` computes them) and :class:`PlaceholderObserver` (records nothing:
the dynamic activation's dtype only)."""
from __future__ import annotations

import functools

from ... import _dtype
from ..._quantized import (per_channel_affine_float_qparams, per_channel_symmetric, per_tensor_affine,
                           per_tensor_symmetric, qint8, quint8)
from ...nn.module import Module

__all__ = ["MinMaxObserver", "PlaceholderObserver"]


class _WithArgs:
    @classmethod
    def with_args(cls, **kwargs):
        """A constructor with these arguments bound (``MinMaxObserver.with_args(dtype=torch.qint8)()``)."""
        return functools.partial(cls, **kwargs)


class PlaceholderObserver(_WithArgs, Module):
    """Observes nothing: it carries the dtype (and range) a dynamic activation is quantized to."""

    def __init__(self, dtype=_dtype.float32, custom_op_name="", compute_dtype=None, quant_min=None, quant_max=None,
                 qscheme=None, eps=None, is_dynamic=False):
        super().__init__()
        self.dtype, self.quant_min, self.quant_max, self.is_dynamic = dtype, quant_min, quant_max, is_dynamic
        self.qscheme = per_tensor_affine if qscheme is None else qscheme

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")  # noqa: TRY002


class MinMaxObserver(_WithArgs, Module):
    """The running minimum and maximum of what it sees; :meth:`calculate_qparams` turns them into PyTorch's
    ``(scale, zero_point)`` (one-element float32 and int64 tensors) for ``dtype`` and ``qscheme``."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=1.1920928955078125e-07, is_dynamic=False, **kwargs):
        from ...ops.creation import tensor
        super().__init__()
        if qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise NotImplementedError("MinMaxObserver's qscheme only support torch.per_tensor_symmetric and "
                                      "torch.per_tensor_affine.")
        self.dtype, self.qscheme, self.reduce_range, self.is_dynamic = dtype, qscheme, reduce_range, is_dynamic
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if not self.has_customized_qrange:
            quant_min, quant_max = {qint8: (-128, 127), quint8: (0, 255)}.get(dtype, (0, 255))
            if reduce_range:
                quant_min, quant_max = quant_min // 2, quant_max // 2
        self.quant_min, self.quant_max = quant_min, quant_max
        self.register_buffer("eps", tensor([eps]))
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = x.aminmax()
        self.min_val.copy_(self.min_val.minimum(min_val))
        self.max_val.copy_(self.max_val.maximum(max_val))
        return x_orig

    def calculate_qparams(self):
        from ...ops.creation import ones, tensor, zeros, zeros_like
        min_val, max_val = self.min_val, self.max_val
        if bool(min_val == float("inf")) and bool(max_val == float("-inf")):
            return tensor([1.0]), tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = min_val.minimum(zeros_like(min_val))
        max_val_pos = max_val.maximum(zeros_like(max_val))
        scale = ones(min_val_neg.size())
        zero_point = zeros(min_val_neg.size(), dtype=_dtype.int64)
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            max_val_pos = (-min_val_neg).maximum(max_val_pos)
            scale = (max_val_pos / (float(quant_max - quant_min) / 2)).maximum(self.eps)
            if self.dtype is quint8:
                zero_point = zero_point.new_full(zero_point.size(), (quant_min + quant_max) // 2
                                                 if self.has_customized_qrange else 128)
        elif self.qscheme is per_channel_affine_float_qparams:
            raise NotImplementedError("torchish: per_channel_affine_float_qparams observers are not implemented")
        else:
            scale = ((max_val_pos - min_val_neg) / float(quant_max - quant_min)).maximum(self.eps)
            zero_point = quant_min - (min_val_neg / scale).round().to(_dtype.int32)
            zero_point = zero_point.clamp(quant_min, quant_max)
        if scale.ndim == 0:
            scale = tensor([float(scale)], dtype=scale.dtype)
        if zero_point.ndim == 0:
            zero_point = tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"
