"""``torch.ao.quantization`` (also ``torch.quantization``): dynamic quantization (``quantize_dynamic``) of Linear
layers, the observers and ``QConfig`` it uses, and ``QuantStub``/``DeQuantStub``.

Example:
    >>> import torchish as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    >>> qmodel = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    >>> qmodel(torch.randn(2, 8)).shape
    torch.Size([2, 4])
"""
import sys

from .observer import MinMaxObserver as MinMaxObserver, PlaceholderObserver as PlaceholderObserver  # noqa: F401
from .qconfig import QConfig as QConfig, QConfigDynamic as QConfigDynamic  # noqa: F401
from .qconfig import default_dynamic_qconfig as default_dynamic_qconfig  # noqa: F401
from .quantize import get_default_dynamic_quant_module_mappings as get_default_dynamic_quant_module_mappings  # noqa
from .quantize import quantize_dynamic as quantize_dynamic  # noqa: F401
from .stubs import DeQuantStub as DeQuantStub, QuantStub as QuantStub  # noqa: F401

__all__ = ["MinMaxObserver", "PlaceholderObserver", "QConfig", "QConfigDynamic", "default_dynamic_qconfig",
           "get_default_dynamic_quant_module_mappings", "quantize_dynamic", "DeQuantStub", "QuantStub"]

# ``torch.quantization`` is the same namespace (``from torch.quantization import quantize_dynamic``)
sys.modules.setdefault(__name__.replace(".ao.quantization", ".quantization"), sys.modules[__name__])
