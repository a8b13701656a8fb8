"""``torch._C``: the names of PyTorch's C extension that Python code written for PyTorch uses directly (Tensor
subclasses: ``__torch_function__ = torch._C._disabled_torch_function_impl``, ``with
torch._C.DisableTorchFunctionSubclass():``, ``torch._C._LinAlgError``)."""
from ._subclass import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                        _disabled_torch_function_impl, _is_torch_function_enabled)
from .ops.decomp import _LinAlgError  # noqa: F401

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled", "_LinAlgError"]
