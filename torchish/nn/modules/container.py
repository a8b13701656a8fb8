"""``torchish.nn.modules.container``: PyTorch's module path for the containers, plus the deprecated
:class:`Container` (a :class:`Module` whose constructor adds its keyword arguments as submodules)."""
from __future__ import annotations

import warnings

from ..container import (ModuleDict as ModuleDict, ModuleList as ModuleList,  # noqa: F401
                         ParameterDict as ParameterDict, ParameterList as ParameterList, Sequential as Sequential)
from ..module import Module

__all__ = ["Container"]

_DEPRECATED = ("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
               "Subclass that instead.")


class Container(Module):
    """Deprecated: subclass :class:`Module` instead. ``Container(a=m1, b=m2)`` registers ``m1`` and ``m2``.

    Example::

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     c = torchish.nn.Container(fc=torchish.nn.Linear(2, 2))
        >>> list(c.state_dict())
        ['fc.weight', 'fc.bias']
    """

    def __init__(self, **kwargs):
        warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
