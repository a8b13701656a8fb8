"""``conv_tbc``: a 1-D convolution over ``(time, batch, channels)`` inputs (fairseq's layout), as a permuted
:func:`conv1d`."""
from __future__ import annotations

from ... import _dtype
from ...ops import registry as _registry
from ...ops.registry import apply, defop
from .conv import _conv_fwd


def _conv_tbc_fwd(x, w, b, *, pad):
    y = _conv_fwd(x.transpose(1, 2, 0), w.transpose(2, 1, 0), b, stride=(1,), pads=((pad, pad),), dilation=(1,),
                  groups=1, pad_mode="zeros", batched=True, transposed=False, lhs_dilation=(1,))
    return y.transpose(2, 0, 1)  # (a negative pad crops the time axis)


_CONV_TBC = defop("conv_tbc", _conv_tbc_fwd, grad_name="ConvTbcBackward0")

__all__ = ["conv_tbc"]


def conv_tbc(input, weight, bias, pad=0):
    """Convolve ``input`` ``(T, B, C_in)`` with ``weight`` ``(kernel, C_in, C_out)`` plus ``bias`` ``(C_out,)``,
    padding ``pad`` steps of time on both sides (negative: cropping); returns ``(T + 2 pad - kernel + 1, B, C_out)``.

    Example::

        >>> out = torchish.nn.functional.conv_tbc(torchish.ones(5, 2, 3), torchish.ones(3, 3, 4), torchish.zeros(4), 1)
        >>> out.shape
        torch.Size([5, 2, 4])
    """
    if isinstance(pad, bool) or not hasattr(pad, "__index__"):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not {type(pad).__name__}")
    pad = int(pad)
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
    if _registry.autocast_hook is not None:  # (PyTorch casts before its checks)
        input, weight, bias = _registry.autocast_hook("conv_tbc", (input, weight, bias))
    if input.dtype != weight.dtype:  # (PyTorch multiplies each kernel tap as a matrix product)
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dtype.scalar_type_name(input.dtype)} "
                           f"and {_dtype.scalar_type_name(weight.dtype)}")
    return apply(_CONV_TBC, (input, weight, bias), pad=pad)
