"""``torchish.cpu.amp``: PyTorch's deprecated CPU spellings of ``torchish.amp``.

Each warns with PyTorch's ``FutureWarning`` when used, then behaves as the ``torchish.amp`` form with ``'cpu'``.
"""
from __future__ import annotations

from .. import _dtype
from ..amp.cuda_amp import device_spellings

__all__ = ["autocast", "GradScaler"]


autocast, GradScaler, _ = device_spellings("cpu", _dtype.bfloat16, __name__)
