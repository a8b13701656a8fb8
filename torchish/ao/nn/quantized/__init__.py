"""``torch.ao.nn.quantized``: quantized modules; ``dynamic`` holds the dynamically quantized ones."""
from . import dynamic as dynamic  # noqa: F401

__all__ = ["dynamic"]
