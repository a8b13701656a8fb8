"""``torch.ao``: PyTorch's architecture-optimization namespace; here its quantization part (``torch.ao.quantization``,
``torch.ao.nn.quantized.dynamic``)."""
from . import nn as nn  # noqa: F401
from . import quantization as quantization  # noqa: F401

__all__ = ["nn", "quantization"]
