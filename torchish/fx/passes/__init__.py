"""``torch.fx.passes``: graph passes (``shape_prop.ShapeProp``)."""
from . import shape_prop as shape_prop

__all__ = ["shape_prop"]
