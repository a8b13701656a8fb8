"""``torch.ao.nn``: quantized module namespaces."""
from . import quantized as quantized  # noqa: F401

__all__ = ["quantized"]
