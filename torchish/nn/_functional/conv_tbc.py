"""``conv_tbc``: a 1-D convolution over ``(time, batch, channels)`` inputs (fairseq's layout), as a permuted
:func:`conv1d`."""
from __future__ import annotations

from .conv import conv1d

__all__ = ["conv_tbc"]


def conv_tbc(input, weight, bias, pad=0):
    """Convolve ``input`` ``(T, B, C_in)`` with ``weight`` ``(kernel, C_in, C_out)`` plus ``bias`` ``(C_out,)``,
    padding ``pad`` steps of time on both sides (negative: cropping); returns ``(T + 2 pad - kernel + 1, B, C_out)``.

    Example::

        >>> out = torchish.nn.functional.conv_tbc(torchish.ones(5, 2, 3), torchish.ones(3, 3, 4), torchish.zeros(4), 1)
        >>> out.shape
        torch.Size([5, 2, 4])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.size(2) != weight.size(1):
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.size(0) != weight.size(2):
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    time, batch, _ = input.shape
    out_len = time + 2 * pad - weight.size(0) + 1
    if out_len < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_len}: "
                           f"[{out_len}, {batch}, {weight.size(2)}]")
    if pad < 0:                                   # conv1d pads only: crop the time axis instead
        input = input[-pad:time + pad]
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=max(pad, 0))
    return out.permute(2, 0, 1)
