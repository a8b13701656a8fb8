"""``torchish.nn``: modules, parameters, containers, initialisers, functional ops and utilities.

The core (:class:`Module`, :class:`Parameter`, :class:`Buffer`, the containers) is always available; each layer
family is one line below, imported so that a family that is missing or broken does not break ``import torchish``.
"""
from __future__ import annotations

import importlib as _importlib
import warnings as _warnings

from .parameter import (Parameter as Parameter, Buffer as Buffer,  # noqa: F401
                        UninitializedParameter as UninitializedParameter, UninitializedBuffer as UninitializedBuffer)
from .module import Module as Module  # noqa: F401
from .container import (Sequential as Sequential, ModuleList as ModuleList, ModuleDict as ModuleDict,  # noqa: F401
                        ParameterList as ParameterList, ParameterDict as ParameterDict)
from . import modules as modules  # noqa: F401  (torchish.nn.modules.module.register_module_forward_hook, ...)
from ._factory import factory_kwargs as factory_kwargs  # noqa: F401


def _optional(name, star=True):
    """Import ``torchish.nn.<name>`` (and re-export its ``__all__`` when ``star``); a failure is a warning."""
    try:
        mod = _importlib.import_module("." + name, __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            _warnings.warn(f"torchish.nn.{name} could not be imported: {e}", ImportWarning, stacklevel=2)
        return None
    except Exception as e:  # a layer family with a bug must not break `import torchish`
        _warnings.warn(f"torchish.nn.{name} could not be imported: {e!r}", ImportWarning, stacklevel=2)
        return None
    if "." not in name:  # `torchish.nn.init`; a dotted family stays reachable at its own path
        globals()[name] = mod
    if star:   # torch.nn.Linear, and torch.nn.modules.Linear for the layer families
        targets = (globals(), vars(modules)) if name.startswith("modules.") else (globals(),)
        for n in getattr(mod, "__all__", ()):
            for namespace in targets:
                namespace[n] = getattr(mod, n)
    return mod


_optional("init", star=False)
_optional("functional", star=False)
_optional("utils", star=False)
_optional("grad", star=False)  # torchish.nn.grad.conv2d_input, ...
_optional("attention", star=False)  # torchish.nn.attention.sdpa_kernel, SDPBackend
# layer families (one line each):
_optional("modules.rnn")
_optional("modules.lazy", star=False)  # torchish.nn.modules.lazy.LazyModuleMixin
_optional("modules.linear")
_optional("modules.conv")
_optional("modules.pooling")
_optional("modules.batchnorm")
_optional("modules.instancenorm")
_optional("modules.normalization")
_optional("modules.dropout")
_optional("modules.sparse")
_optional("modules.flatten")
_optional("modules.pixelshuffle")
_optional("modules.channelshuffle")
_optional("modules.activation")
_optional("modules.loss")
_optional("modules.linear_cross_entropy")
_optional("modules.padding")
_optional("modules.upsampling")
_optional("modules.distance")
_optional("modules.fold")
_optional("modules.activation_mha")
_optional("modules.transformer")
_optional("modules.adaptive")
_optional("modules.syncbatchnorm")
_optional("modules.crossmaplrn")
_optional("modules.container")  # the deprecated Container; torchish.nn.modules.container.Sequential, ...
_optional("modules.utils", star=False)  # torchish.nn.modules.utils._pair, ...
if _optional("parallel", star=False) is not None:  # torchish.nn.parallel.DistributedDataParallel, DataParallel
    DataParallel = parallel.DataParallel  # noqa: F821  (torchish.nn.DataParallel, as in PyTorch)
