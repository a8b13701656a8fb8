"""``quantize_dynamic``: a model's Linear and LSTM layers replaced by dynamically quantized ones
(``torch.ao.nn.quantized.dynamic.Linear`` / ``LSTM``), as ``torch.ao.quantization.quantize_dynamic`` does with its
defaults."""
from __future__ import annotations

import copy
import warnings

from ..._quantized import qint8, quint4x2, quint8
from ... import _dtype
from ...nn.modules.linear import Linear as FloatLinear
from ..nn.quantized.dynamic import LSTM as DynamicLSTM, Linear as DynamicLinear
from .qconfig import default_dynamic_qconfig, float16_dynamic_qconfig

__all__ = ["quantize_dynamic", "get_default_dynamic_quant_module_mappings"]


def get_default_dynamic_quant_module_mappings():
    """Float module type -> dynamically quantized module type (the ones torchish has)."""
    from ...nn.modules.rnn import LSTM as FloatLSTM
    return {FloatLinear: DynamicLinear, FloatLSTM: DynamicLSTM}


def _recurrent_types():
    from ...nn.modules import rnn
    return tuple(getattr(rnn, n) for n in ("LSTM", "GRU", "LSTMCell", "RNNCell", "GRUCell") if hasattr(rnn, n))


def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, mapping=None, inplace=False):
    """Converts a float model to a dynamically (weights-only) quantized one: each ``nn.Linear`` that
    ``qconfig_spec`` names (by type, exactly, or by qualified name; all of them by default) becomes a
    ``DynamicQuantizedLinear``, each such ``nn.LSTM`` a ``DynamicQuantizedLSTM``. GRU and the recurrent cells, which
    PyTorch also converts by default, are left in float with a warning (not implemented)."""
    if qconfig_spec is None:
        if dtype is qint8:
            qconfig_spec = dict.fromkeys((FloatLinear,) + _recurrent_types(), default_dynamic_qconfig)
        elif dtype is _dtype.float16:
            qconfig_spec = dict.fromkeys((FloatLinear,) + _recurrent_types(), float16_dynamic_qconfig)
        elif dtype in (quint8, quint4x2):
            raise NotImplementedError(f"torchish: quantize_dynamic with dtype={dtype} is not implemented (only "
                                      "torch.qint8 and torch.float16)")
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig "
                             "please")
    elif isinstance(qconfig_spec, set):
        if dtype not in (qint8, _dtype.float16):
            if dtype in (quint8, quint4x2):
                raise NotImplementedError(f"torchish: quantize_dynamic with dtype={dtype} is not implemented (only "
                                          "torch.qint8 and torch.float16)")
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict.fromkeys(qconfig_spec, default_dynamic_qconfig if dtype is qint8 else
                                     float16_dynamic_qconfig)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    _convert(model, "", qconfig_spec.get("", None), qconfig_spec, mapping, _recurrent_types())
    return model


def _convert(module, prefix, parent_qconfig, spec, mapping, recurrent):
    """Replaces, depth first, each child whose qconfig (its exact type's or qualified name's entry in ``spec``, else
    its parent's) is set and whose type ``mapping`` converts."""
    for name, child in list(module.named_children()):
        qualified = prefix + name
        qconfig = spec.get(qualified, spec.get(type(child), parent_qconfig))
        target = mapping.get(type(child))
        if qconfig is not None and target is not None:
            child.qconfig = qconfig
            try:
                setattr(module, name, target.from_float(child))
                continue
            except NotImplementedError as e:  # (float16 LSTM)
                warnings.warn(f"{e}; '{qualified}' stays in float", stacklevel=3)
        if qconfig is not None and isinstance(child, recurrent) and type(child) not in mapping:
            warnings.warn(f"torchish: dynamic quantization of {type(child).__name__} is not implemented; "
                          f"'{qualified}' stays in float", stacklevel=3)
        _convert(child, qualified + ".", qconfig, spec, mapping, recurrent)
