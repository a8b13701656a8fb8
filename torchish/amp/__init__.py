"""``torchish.amp``: automatic mixed precision — :class:`autocast` regions and :class:`GradScaler`.

The autocast state and its cast hook (``_state``, ``_casting``) sit at the level of the op registry: ``apply``
calls the hook, and ``torchish.compile`` keys its programs on the state. The casting policy per op and device type
is the table in :mod:`torchish.amp.policy`.

Example::

    >>> scaler = torchish.amp.GradScaler("cpu")
    >>> with torchish.autocast("cpu"):
    ...     loss = loss_fn(model(x), y)
    >>> scaler.scale(loss).backward()
    >>> scaler.step(optimizer)
    >>> scaler.update()
"""
from __future__ import annotations

from .autocast_mode import (autocast as autocast, custom_bwd as custom_bwd, custom_fwd as custom_fwd,
                            is_autocast_available as is_autocast_available)
from .grad_scaler import GradScaler as GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
