"""``torchish.random``: PyTorch's ``torch.random`` namespace (seeding, generator state, ``fork_rng``).

Example:
    >>> import torchish as torch
    >>> with torch.random.fork_rng():
    ...     noise = torch.rand(3)   # the default stream afterwards is as if this never ran
"""
from __future__ import annotations

from ._random import (Generator, default_generator, fork_rng, get_rng_state, initial_seed, manual_seed, seed,
                      set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]
