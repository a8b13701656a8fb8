"""``torchish.nn.modules``: PyTorch's module path (``torchish.nn.modules.module.register_module_forward_hook``)."""
from __future__ import annotations

from ..module import Module as Module  # noqa: F401
from ..container import (Sequential as Sequential, ModuleList as ModuleList, ModuleDict as ModuleDict,  # noqa: F401
                         ParameterList as ParameterList, ParameterDict as ParameterDict)
from . import module as module  # noqa: F401
