"""``torchish.types``: the type aliases PyTorch's ``torch.types`` gives annotations (``Number`` for a Python
scalar, which custom operators' schemas read as ``Scalar``)."""
from __future__ import annotations

from ._device import device as _device
from ._dtype import dtype as _dtype  # noqa: F401

Number = int | float | bool
Device = _device | str | int | None
_int = int
_float = float
_bool = bool
