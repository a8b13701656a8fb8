"""Distance modules: ``PairwiseDistance`` and ``CosineSimilarity``.

Example:
    >>> import torchish as torch
    >>> torch.nn.CosineSimilarity(dim=0)(torch.tensor([1.0, 0.0]), torch.tensor([1.0, 1.0]))
    tensor(0.7071)
"""
from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """p-norm distance between the last dimensions of two inputs (``eps`` added to the difference)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim`` (norms clamped at ``eps``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
