"""``torch.nn.utils.skip_init``: build a module whose parameter values are left unspecified."""
from __future__ import annotations

import inspect

from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with parameter and buffer values unspecified, as PyTorch's (which builds on
    the meta device and allocates empty storage).

    As PyTorch's: the module is built on the meta device (no initialisation runs) and then given storage on its
    device with ``to_empty`` (zeros: JAX has no uninitialised memory). ``module_cls`` must be a Module class
    taking a ``device`` argument.

    Example::

        >>> m = torchish.nn.utils.skip_init(torchish.nn.Linear, 5, 1)
        >>> m.weight.shape
        torch.Size([1, 5])
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final)
