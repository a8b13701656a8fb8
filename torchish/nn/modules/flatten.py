"""Flatten and Unflatten: reshape a range of dims into one, and one dim into several."""
from __future__ import annotations

from ..module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one (by default all but the batch dim).

    Example::

        >>> torchish.nn.Flatten()(torchish.ones(2, 3, 4)).shape
        torch.Size([2, 12])
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size`` (one entry may be -1).

    Example::

        >>> torchish.nn.Unflatten(1, (2, 3))(torchish.ones(4, 6)).shape
        torch.Size([4, 2, 3])
    """

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        _require_tuple_int(unflattened_size)  # (PyTorch checks no dim here: a name fails in forward)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _require_tuple_int(size):
    if isinstance(size, (tuple, list)):
        for i, elem in enumerate(size):
            if not isinstance(elem, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(elem).__name__} at pos {i}")
        return
    raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(size).__name__}")
