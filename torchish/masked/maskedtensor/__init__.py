"""``torchish.masked.maskedtensor``: the prototype MaskedTensor."""
from .core import MaskedTensor, is_masked_tensor
from .creation import as_masked_tensor, masked_tensor

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]
