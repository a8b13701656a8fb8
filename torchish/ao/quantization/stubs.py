"""``QuantStub`` / ``DeQuantStub``: where eager-mode static quantization would quantize and dequantize; before a
model is converted they pass their input through, as PyTorch's do."""
from __future__ import annotations

from ...nn.module import Module

__all__ = ["QuantStub", "DeQuantStub"]


class QuantStub(Module):
    """Passes its input through until ``convert`` (static quantization, not implemented in torchish) replaces it."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(QuantStub):
    """Passes its input through until ``convert`` replaces it."""
