"""``LazyModuleMixin``: modules whose parameter shapes are inferred from their first input.

Until its first call a lazy module holds :class:`~torchish.nn.UninitializedParameter` s (and buffers). A forward
pre-hook runs :meth:`LazyModuleMixin.initialize_parameters` with the first input, which materialises them and runs
``reset_parameters``; the hooks are then removed and the module becomes its regular class (``LazyLinear`` becomes
``Linear``). Loading a state dict with initialized tensors materialises the lazy ones first, so a lazy module can
load a checkpoint of a regular one. As in PyTorch, convert the module's dtype and device before the first call.

Example:
    >>> import torchish as torch
    >>> m = torch.nn.LazyLinear(4)
    >>> m
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> _ = m(torch.ones(2, 3))
    >>> m
    Linear(in_features=3, out_features=4, bias=True)
"""
from __future__ import annotations

import itertools

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mix in before a module class to infer its parameters at the first forward (see the module docstring).

    Subclasses define ``initialize_parameters(*args, **kwargs)``, which receives the forward's arguments, and
    ``cls_to_become``, the class the module turns into once every parameter is initialized.
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Uninitialized entries are saved as they are (they cannot be detached)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if (is_lazy(param) or keep_vars) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if (is_lazy(buf) or keep_vars) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        """Before loading: an uninitialized entry that the state dict has initialized takes that entry's shape."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(value.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Materialise the parameters from the first forward's arguments (defined by each lazy module)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether any of this module's own parameters or buffers is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize, then drop the hooks and become ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
