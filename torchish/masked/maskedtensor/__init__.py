"""``torchish.masked.maskedtensor``: the prototype MaskedTensor (``torch.masked.maskedtensor``)."""
from .core import MaskedTensor, is_masked_tensor

__all__ = ["MaskedTensor", "is_masked_tensor"]
