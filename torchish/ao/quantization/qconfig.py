"""``QConfig`` (which observers a module's activations and weights get) and the dynamic-quantization defaults."""
from __future__ import annotations

from collections import namedtuple

from ... import _dtype
from ..._quantized import per_tensor_symmetric, qint8, quint8
from .observer import MinMaxObserver, PlaceholderObserver

__all__ = ["QConfig", "QConfigDynamic", "default_dynamic_qconfig", "float16_dynamic_qconfig",
           "per_channel_dynamic_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """``QConfig(activation=..., weight=...)``: each a constructor of an observer (a class, or ``with_args``)."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        from ...nn.module import Module
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


QConfigDynamic = QConfig

default_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=quint8, quant_min=0, quant_max=255, is_dynamic=True),
    weight=MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric))
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=_dtype.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=_dtype.float16))
per_channel_dynamic_qconfig = None  # (per-channel dynamic Linear is not implemented)
