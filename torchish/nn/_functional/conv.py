"""torchish.nn.functional: ``conv1d/2d/3d`` and ``conv_transpose1d/2d/3d`` on ``jax.lax.conv_general_dilated``.

Layouts are PyTorch's: inputs ``(N, C, *spatial)`` (or unbatched ``(C, *spatial)``), weights ``(O, I/groups, *k)``
for convolutions and ``(I, O/groups, *k)`` for transposed ones. A convolution with its padding (any mode) and bias
is ONE registry op; its gradients are derived by JAX.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ... import _dtype, _precision
from ..._global_flags import warn_once
from ...ops import registry as _registry
from ...ops.elementwise import not_implemented
from ...ops.registry import apply, defop, overload
from ._args import need_int, need_tensor

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]

_JNP_PAD_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}
_SPEC = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"), 3: ("NCDHW", "OIDHW", "NCDHW")}


def ntuple(value, n):
    """``value`` (int or sequence) as a tuple of ``n`` ints; a sequence of another length is left for the caller."""
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


def same_padding(kernel, dilation):
    """PyTorch's ``padding='same'`` split: ``(left, right)`` per dim, the odd element on the right."""
    out = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        out.append((total // 2, total - total // 2))
    return tuple(out)


def _conv3d_as_2d(x, w, stride, pads, dilation, groups, acc=None):
    """A 3-D convolution as ONE 2-D convolution over ``N * D_out`` frames whose channels are the depth taps.

    XLA:CPU has no fast 3-D convolution (it runs tens of times slower than a 2-D one of equal FLOPs); the same sums
    done as a 2-D convolution use its fast path, and JAX derives equally fast gradients.
    """
    x = jnp.pad(x, ((0, 0), (0, 0), pads[0], (0, 0), (0, 0)))
    n, c, d = x.shape[:3]
    o, c_g, kd = w.shape[:3]
    sd, dd = stride[0], dilation[0]
    d_out = (d - dd * (kd - 1) - 1) // sd + 1
    taps = [x[:, :, k * dd: k * dd + (d_out - 1) * sd + 1: sd] for k in range(kd)]   # kd x (n, c, d_out, h, w)
    frames = jnp.stack(taps, axis=2).transpose(0, 3, 1, 2, 4, 5)                      # (n, d_out, c, kd, h, w)
    frames = frames.reshape((n * d_out, c * kd) + x.shape[3:])                       # channel index c * kd + k
    y = lax.conv_general_dilated(frames, w.reshape((o, c_g * kd) + w.shape[3:]), window_strides=stride[1:],
                                 padding=pads[1:], rhs_dilation=dilation[1:], feature_group_count=groups,
                                 dimension_numbers=_SPEC[2], precision=_precision.conv(), preferred_element_type=acc)
    return y.reshape((n, d_out) + y.shape[1:]).transpose(0, 2, 1, 3, 4)


def _conv_fwd(x, w, b, *, stride, pads, dilation, groups, pad_mode, batched, transposed, lhs_dilation):
    nd = w.ndim - 2
    if not batched:
        x = x[None]
    if pad_mode != "zeros":
        x = jnp.pad(x, ((0, 0), (0, 0)) + pads, mode=_JNP_PAD_MODE[pad_mode])
        pads = ((0, 0),) * nd
    if transposed:
        cin, cout_g = w.shape[0], w.shape[1]
        w = w.reshape((groups, cin // groups, cout_g) + w.shape[2:])
        w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + w.shape[3:])
        w = jnp.flip(w, axis=tuple(range(2, 2 + nd)))
    acc = jnp.float32 if x.dtype in _precision.LOW else None  # float32 sums, bias included, rounded once
    if nd == 3 and lhs_dilation == (1, 1, 1) and min(pads[0]) >= 0 and jax.default_backend() == "cpu":
        y = _conv3d_as_2d(x, w, stride, pads, dilation, groups, acc)
    else:
        y = lax.conv_general_dilated(x, w, window_strides=stride, padding=pads, lhs_dilation=lhs_dilation,
                                     rhs_dilation=dilation, feature_group_count=groups, dimension_numbers=_SPEC[nd],
                                     precision=_precision.conv(), preferred_element_type=acc)
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nd).astype(y.dtype)
    y = y if acc is None else y.astype(x.dtype)
    return y if batched else y[0]


_CONV = defop("convolution", _conv_fwd, grad_name="ConvolutionBackward0")
# an unbatched input: PyTorch convolves it unsqueezed, and squeezes the result (its node)
_CONV_UNBATCHED = overload(_CONV, "SqueezeBackward1")


def _seq_arg(value, nd, name, fname):
    """A window argument as a tuple of ``nd`` ints; PyTorch's argument parser refuses a str, a float or any other
    element that is not an integer with TypeError."""
    for e in (value if isinstance(value, (list, tuple)) else [value]):
        if isinstance(e, bool) or not hasattr(e, "__index__"):
            raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {type(e).__name__}")
    t = ntuple(value, nd)
    if len(t) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {name}={list(t)}")
    return t


def _check_common(fname, input, weight, bias, nd, stride, dilation, groups, transposed=False, bias_checked=True):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got input "
                           f"of size: {list(input.shape)}")
    if weight.ndim != nd + 2:
        # PyTorch takes the number of spatial dims from the weight: a stride of another length is refused first;
        # a single value (conv1d's) expands, and then the input is found to have the wrong number of dims
        if weight.ndim < 3:
            raise RuntimeError("weight should have at least three dimensions")
        wd = weight.ndim - 2
        given = list(stride) if isinstance(stride, (list, tuple)) else list(ntuple(stride, nd))
        if len(given) not in (1, wd):
            raise RuntimeError(f"expected stride to be a single integer value or a list of {wd} values to match "
                               f"the convolution dimensions, but got stride={given}")
        size = list(input.shape) if input.ndim == nd + 2 else [1, *input.shape]
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {len(size)}-dimensional input of size {size} instead")
    # PyTorch compares the bias with the input (transposed convolutions, and the padding='same'/'valid' path, add
    # any bias in the output's dtype), and the weight only in the kernel, which an empty input never reaches: its
    # result is then of the input's dtype. The kernel's dtype dispatch comes before its weight check.
    if bias_checked and not transposed and bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_c_type(input.dtype)}) and bias type ({_c_type(bias.dtype)}) should be "
                           "the same")
    if input.numel() and not _kernel_has_dtype(input.dtype, dilation, transposed):
        raise not_implemented(_conv_kernel(nd, dilation, transposed), input.dtype)
    if input.dtype != weight.dtype and input.numel():
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _kernel_has_dtype(dt, dilation, transposed):
    """Whether PyTorch's CPU kernel has a version for ``dt``: none has Bool; the dilated and transposed kernels
    only floats and int64."""
    if dt is _dtype.bool:
        return False
    if transposed or any(d > 1 for d in dilation):
        return dt.category != _dtype._INT or dt is _dtype.int64
    return True


def _conv_kernel(nd, dilation, transposed):
    """The name of the CPU kernel PyTorch's convolution reaches (shown in its dtype errors)."""
    if transposed:
        return f"slow_conv_transpose{3 if nd == 3 else 2}d_out_cpu"
    if nd == 3:
        return "compute_columns3d"
    return "slow_conv_dilated<>" if any(d > 1 for d in dilation) else "slow_conv2d_cpu"


def _c_type(dtype):
    return _dtype.cpp_type_name(_dtype.as_dtype(dtype))


def _as_input_dtype(input, weight, bias):
    """The weight and bias in the input's dtype (only reached past the checks for an empty input, and a
    transposed convolution's bias)."""
    weight = weight if weight.dtype == input.dtype else weight.to(input.dtype)
    bias = bias if bias is None or bias.dtype == input.dtype else bias.to(input.dtype)
    return weight, bias


def _spatial(input, nd):
    return tuple(input.shape[-nd:])


def _batched_shape(input, nd):
    return list(input.shape) if input.ndim == nd + 2 else [1] + list(input.shape)


def convolution(fname, input, weight, bias, stride, padding, dilation, groups, nd, pad_mode="zeros"):
    """Shared body of ``conv{1,2,3}d`` and of the Conv modules (which add non-zero ``pad_mode``)."""
    need_tensor(fname, input)
    need_tensor(fname, weight, "weight", 2)
    need_tensor(fname, bias, "bias", 3, optional=True)
    if _registry.autocast_hook is not None:  # autocast casts before the dtype checks
        input, weight, bias = _registry.autocast_hook("convolution", (input, weight, bias))
    stride = _seq_arg(stride, nd, "stride", fname)
    dilation = _seq_arg(dilation, nd, "dilation", fname)
    groups = int(groups)
    _check_common(fname, input, weight, bias, nd, stride, dilation, groups, bias_checked=not isinstance(padding, str))
    weight, bias = _as_input_dtype(input, weight, bias)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = same_padding(kernel, dilation)
            if any(lo != hi for lo, hi in pads):
                warn_once("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                          "copy of the input be created")
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        p = _seq_arg(padding, nd, "padding", fname)
        if any(v < 0 for v in p):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((v, v) for v in p)
    cout = weight.shape[0]
    if cout < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if cout % groups != 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    cin = input.shape[-nd - 1]
    if cin != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{_batched_shape(input, nd)} to have {weight.shape[1] * groups} channels, but got {cin} "
                           "channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with {cout} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    sp = _spatial(input, nd)
    if pad_mode != "zeros":
        _check_mode_padding(pad_mode, pads, input, nd)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(sp, pads))
    eff = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    if 0 in kernel:
        raise RuntimeError(_empty_kernel_message(kernel, nd, dilation))
    batched = input.ndim == nd + 2
    return apply(_CONV if batched else _CONV_UNBATCHED, (input, weight, bias), stride=stride, pads=pads,
                 dilation=dilation, groups=groups, pad_mode=pad_mode, batched=batched, transposed=False,
                 lhs_dilation=(1,) * nd)


def _empty_kernel_message(kernel, nd, dilation, transposed=False):
    """PyTorch's refusal of a kernel with a zero-sized spatial dimension, in the words of the CPU kernel that
    meets it (slow_conv2d / slow_conv_transpose2d see a 1-d kernel as 1 x width; the dilated kernels print the
    sizes as a list)."""
    kernel = (1,) + tuple(kernel) if nd == 1 else tuple(kernel)
    if not transposed and any(d > 1 for d in dilation):
        return f"kernel size should be greater than zero, but got {list(kernel)}"
    if nd == 3:
        return f"kernel size should be greater than zero, but got: {' x '.join(map(str, kernel))} (TxHxW)"
    kh, kw = kernel
    return f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}"


def _check_mode_padding(mode, pads, input, nd):
    sp = _spatial(input, nd)
    for i in reversed(range(nd)):
        (lo, hi), s = pads[i], sp[i]
        dim = input.ndim - nd + i
        if mode == "reflect" and (lo >= s or hi >= s):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (lo > s or hi > s):
            raise RuntimeError("Padding value causes wrapping around more than once.")


def conv_transposed(fname, input, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    """Shared body of ``conv_transpose{1,2,3}d``: a convolution of the stride-dilated input with the flipped,
    regrouped kernel."""
    need_tensor(fname, input)
    need_tensor(fname, weight, "weight", 2)
    need_tensor(fname, bias, "bias", 3, optional=True)
    if _registry.autocast_hook is not None:  # conv_transpose{1,2,3}d are on autocast's lower-precision list too
        input, weight, bias = _registry.autocast_hook("convolution", (input, weight, bias))
    stride = _seq_arg(stride, nd, "stride", fname)
    dilation = _seq_arg(dilation, nd, "dilation", fname)
    if isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    padding = _seq_arg(padding, nd, "padding", fname)
    output_padding = _seq_arg(output_padding, nd, "output_padding", fname)
    groups = int(groups)
    _check_common(fname, input, weight, bias, nd, stride, dilation, groups, transposed=True)
    weight, bias = _as_input_dtype(input, weight, bias)
    if any(v < 0 for v in padding):
        raise RuntimeError("negative padding is not supported")
    if any(v < 0 for v in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")[3 - nd:] if nd > 1 else ("width",)
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))
    cin = input.shape[-nd - 1]
    if weight.numel() == 0 and nd == 3:
        raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                           f"kernel_width) tensor expected for weight, but got: {list(weight.shape)}")
    if 0 in weight.shape[2:]:
        raise RuntimeError(_empty_kernel_message(tuple(weight.shape[2:]), nd, dilation, transposed=True))
    if weight.numel() == 0:
        shape = list(weight.shape[:2]) + [1] * (nd == 1) + list(weight.shape[2:])
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {shape}")
    if weight.shape[0] % groups != 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    if weight.shape[0] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{_batched_shape(input, nd)} to have {weight.shape[0]} channels, but got {cin} channels "
                           "instead")
    cout = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {cout} elements, but got bias of size {list(bias.shape)} instead")
    kernel = tuple(weight.shape[2:])
    sp = _spatial(input, nd)
    out = [(s - 1) * st - 2 * p + d * (k - 1) + op + 1
           for s, st, p, d, k, op in zip(sp, stride, padding, dilation, kernel, output_padding)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sp))}). Calculated output size per "
                           f"channel: ({' x '.join(map(str, out))}). Output size is too small")
    pads = tuple((d * (k - 1) - p, d * (k - 1) - p + op)
                 for k, d, p, op in zip(kernel, dilation, padding, output_padding))
    batched = input.ndim == nd + 2
    return apply(_CONV if batched else _CONV_UNBATCHED, (input, weight, bias), stride=(1,) * nd, pads=pads,
                 dilation=dilation, groups=groups, pad_mode="zeros", batched=batched, transposed=True,
                 lhs_dilation=stride)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over ``(N, C, L)``; ``padding`` is an int, a tuple, ``'valid'`` or ``'same'``."""
    return convolution("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``(N, C, H, W)``.

    Example::

        >>> F.conv2d(torchish.ones(1, 2, 5, 5), torchish.ones(3, 2, 3, 3), padding="same").shape
        torch.Size([1, 3, 5, 5])
    """
    return convolution("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over ``(N, C, D, H, W)``."""
    return convolution("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution; ``weight`` is ``(in, out/groups, k)``."""
    return conv_transposed("conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution; ``weight`` is ``(in, out/groups, kH, kW)``."""
    return conv_transposed("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution; ``weight`` is ``(in, out/groups, kD, kH, kW)``."""
    return conv_transposed("conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


# ----------------------------------------------------------------------------------------------------------------
# channel rearrangements: pixel_shuffle / pixel_unshuffle / channel_shuffle


def _pixel_shuffle_fwd(x, *, r, inverse):
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    if not inverse:
        y = x.reshape(lead + (c // (r * r), r, r, h, w))
        n = len(lead)
        y = jnp.transpose(y, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
        return y.reshape(lead + (c // (r * r), h * r, w * r))
    y = x.reshape(lead + (c, h // r, r, w // r, r))
    n = len(lead)
    y = jnp.transpose(y, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return y.reshape(lead + (c * r * r, h // r, w // r))


_PIXEL_SHUFFLE = defop("pixel_shuffle", _pixel_shuffle_fwd, linear=True, grad_name="PixelShuffleBackward0")
_PIXEL_UNSHUFFLE = defop("pixel_unshuffle", _pixel_shuffle_fwd, linear=True, grad_name="PixelUnshuffleBackward0")


def pixel_shuffle(input, upscale_factor):
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)``."""
    need_tensor("pixel_shuffle", input)
    need_int("pixel_shuffle", upscale_factor, "upscale_factor", 2)
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return apply(_PIXEL_SHUFFLE, (input,), r=r, inverse=False)


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``."""
    need_tensor("pixel_unshuffle", input)
    need_int("pixel_unshuffle", downscale_factor, "downscale_factor", 2)
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = input.shape[-2], input.shape[-1]
    if h % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{h} is not divisible by {r}")
    if w % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{w} is not divisible by {r}")
    if input.numel() == 0:  # (PyTorch's CPU kernel returns a copy of an empty input, its shape unchanged)
        return input.clone()
    return apply(_PIXEL_UNSHUFFLE, (input,), r=r, inverse=True)


def _channel_shuffle_fwd(x, *, groups):
    n, c = x.shape[0], x.shape[1]
    y = x.reshape((n, groups, c // groups) + x.shape[2:])
    return jnp.swapaxes(y, 1, 2).reshape(x.shape)


_CHANNEL_SHUFFLE = defop("channel_shuffle", _channel_shuffle_fwd, linear=True, grad_name="ChannelShuffleBackward0")


def channel_shuffle(input, groups):
    """Split the channels into ``groups`` and interleave them: ``(N, g*k, *) -> (N, k*g, *)``."""
    need_tensor("channel_shuffle", input)
    need_int("channel_shuffle", groups, "groups", 2)
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    c = input.shape[1]
    if c % g != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    return apply(_CHANNEL_SHUFFLE, (input,), groups=g)


native_channel_shuffle = channel_shuffle
