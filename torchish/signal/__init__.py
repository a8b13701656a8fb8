"""``torch.signal``: window functions for spectral analysis and filter design (``torchish.signal.windows``)."""
from . import windows as windows

__all__ = ["windows"]
