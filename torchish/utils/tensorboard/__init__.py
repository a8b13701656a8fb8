"""``torchish.utils.tensorboard``: PyTorch's ``SummaryWriter`` on top of ``tensorboardX`` (an optional dependency:
``pip install torchish[tensorboard]``; constructing a writer without it raises ImportError saying so).

Example:
    >>> from torchish.utils.tensorboard import SummaryWriter
    >>> writer = SummaryWriter("runs/exp")        # doctest: +SKIP
    >>> writer.add_scalar("loss", 0.25, 10)       # doctest: +SKIP
    >>> writer.close()                            # doctest: +SKIP
"""
from __future__ import annotations

from .writer import SummaryWriter as SummaryWriter

__all__ = ["SummaryWriter"]
