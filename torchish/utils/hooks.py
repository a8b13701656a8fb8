"""``torchish.utils.hooks``: the handle every ``register_*hook`` returns (``RemovableHandle``), and PyTorch's
``unserializable_hook`` / ``warn_if_has_hooks`` helpers."""
from __future__ import annotations

import warnings

from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark a hook as one that is not saved with the tensor it is registered on (no warning on pickling)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn, as PyTorch does when pickling, for each backward hook of ``tensor`` not marked unserializable."""
    hooks = getattr(tensor, "_backward_hooks", None)
    for k in hooks or ():
        hook = hooks[k]
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {repr(hook)} on tensor will not be serialized.  If this is expected, you "
                          "can decorate the function with @torch.utils.hooks.unserializable_hook to suppress this "
                          "warning")
