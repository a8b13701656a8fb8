"""``torchish.masked``: PyTorch's masked operations (``torch.masked.sum(x, dim, mask=m)``, ``softmax``, ``var``,
...) on strided tensors, and the prototype ``MaskedTensor`` (``torch.masked.masked_tensor(data, mask)``).

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([[1., 2.], [3., 4.]])
    >>> torch.masked.mean(x, 1, mask=torch.tensor([True, False]))
    tensor([1., 3.])
"""
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp, logsumexp, mean, median,
                   norm, normalize, prod, softmax, softmin, std, sum, var)
from .maskedtensor.core import MaskedTensor, is_masked_tensor
from .maskedtensor.creation import as_masked_tensor, masked_tensor

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "masked_tensor", "MaskedTensor", "mean", "median", "norm",
           "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
