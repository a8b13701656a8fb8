"""``torch._C``: the names of PyTorch's C extension that Python code written for PyTorch uses directly (Tensor
subclasses: ``__torch_function__ = torch._C._disabled_torch_function_impl``, ``with
torch._C.DisableTorchFunctionSubclass():``, ``torch._C._LinAlgError``)."""
from ._subclass import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                        _disabled_torch_function_impl, _is_torch_function_enabled,
                        _is_torch_function_all_disabled)
from .ops.decomp import _LinAlgError  # noqa: F401


def _get_tracing_state():
    """None: torchish has no TorchScript tracer running (model code tests this to skip checks while traced)."""
    return None


def _log_api_usage_once(event):
    """Library code logs its first use of an API here; torchish keeps no usage log."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")  # (PyTorch's pybind11 wording)



def _len_torch_function_stack() -> int:
    from ._subclass import mode_stack
    return len(mode_stack())


def _push_on_torch_function_stack(mode) -> None:
    from ._subclass import push_mode
    push_mode(mode)


def _pop_torch_function_stack():
    from ._subclass import pop_mode
    return pop_mode()


def _get_function_stack_at(i):
    from ._subclass import mode_stack
    return mode_stack()[i]


def _is_torch_function_mode_enabled() -> bool:
    from ._subclass import mode_dispatch_on
    return mode_dispatch_on()


__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled", "_is_torch_function_all_disabled", "_LinAlgError",
           "_get_tracing_state", "_log_api_usage_once", "_len_torch_function_stack",
           "_push_on_torch_function_stack", "_pop_torch_function_stack", "_get_function_stack_at",
           "_is_torch_function_mode_enabled"]
