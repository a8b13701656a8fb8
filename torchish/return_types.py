"""``torch.return_types``: the named-tuple classes torchish's functions return (``max``, ``sort``, ``topk``,
``linalg_qr``, ``geqrf``...), so ``isinstance(torch.max(x, 0), torch.return_types.max)`` holds.

Example:
    >>> import torchish as torch
    >>> isinstance(torch.sort(torch.tensor([2.0, 1.0])), torch.return_types.sort)
    True
"""
from __future__ import annotations

from .ops.reduce import ALL_RETURN_TYPES as _ALL


def __getattr__(name):
    if name == "all_return_types":
        return list(_ALL.values())
    try:
        return _ALL[name]
    except KeyError:
        raise AttributeError(f"module 'torch.return_types' has no attribute '{name}'") from None


def __dir__():
    return sorted(_ALL) + ["all_return_types"]
