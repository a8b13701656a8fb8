"""``torchish.nn.modules.module``: the Module class and the global module hooks, at PyTorch's path."""
from __future__ import annotations

from ..module import Module as Module, _addindent as _addindent  # noqa: F401
from .._module_state import _IncompatibleKeys as _IncompatibleKeys  # noqa: F401
from .._hooks import (register_module_forward_pre_hook as register_module_forward_pre_hook,  # noqa: F401
                      register_module_forward_hook as register_module_forward_hook,
                      register_module_backward_hook as register_module_backward_hook,
                      register_module_full_backward_pre_hook as register_module_full_backward_pre_hook,
                      register_module_full_backward_hook as register_module_full_backward_hook,
                      register_module_buffer_registration_hook as register_module_buffer_registration_hook,
                      register_module_module_registration_hook as register_module_module_registration_hook,
                      register_module_parameter_registration_hook as register_module_parameter_registration_hook)
