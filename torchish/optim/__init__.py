"""``torchish.optim``: PyTorch's optimizers (one jitted update per parameter group) and ``lr_scheduler``."""
from __future__ import annotations

from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
from .adam import Adam as Adam, AdamW as AdamW
