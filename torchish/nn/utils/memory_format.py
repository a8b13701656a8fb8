"""``torch.nn.utils.convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``: store the
weights of a model's convolutions in a memory format (``torch.channels_last``), so that their outputs take it."""
from __future__ import annotations


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        with _no_grad():
            module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def _no_grad():
    from ...autograd.grad_mode import no_grad
    return no_grad()


def convert_conv2d_weight_memory_format(module, memory_format):
    """Convert the weights of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (recursively) to ``memory_format``;
    returns ``module``.

    Example:
        >>> import torchish as torch
        >>> m = torch.nn.utils.convert_conv2d_weight_memory_format(torch.nn.Conv2d(3, 4, 3), torch.channels_last)
        >>> m.weight.stride()
        (27, 1, 9, 3)
    """
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Convert the weights of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (recursively) to ``memory_format``
    (``torch.channels_last_3d``); returns ``module``."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
