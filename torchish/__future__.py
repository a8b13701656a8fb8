"""``torch.__future__``: switches for behaviour PyTorch plans to make the default. Both concern how ``nn.Module``'s
conversions (``to``, ``half``, ``cuda``, ``_apply``...) treat parameters: by default each Parameter object keeps its
identity and takes the converted value (``param.data = ...``). With ``set_overwrite_module_params_on_conversion(True)``
new Parameter objects replace them; with ``set_swap_module_params_on_conversion(True)`` the Parameter objects keep
their identity through ``torch.utils.swap_tensors`` (which also makes ``load_state_dict`` swap in what
``Tensor.module_load`` returns)."""
from __future__ import annotations

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether conversions of a Module assign new Parameter objects instead of changing the existing ones."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether conversions of a Module (and ``load_state_dict``) swap the parameters' contents with
    ``torch.utils.swap_tensors``; takes precedence over the overwrite switch."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    return _swap_module_params_on_conversion
