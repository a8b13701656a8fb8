"""``torch.*`` spellings of ``nn.functional`` ops, with the argument orders of PyTorch's top-level (aten) functions
where those differ (``torch.embedding(weight, indices)``, ``torch.dropout(input, p, train)``,
``torch.batch_norm(input, weight, bias, running_mean, running_var, ...)``), plus ``torch.unravel_index`` and the
memory-format constants. Exported by ``torchish/__init__.py``."""
from __future__ import annotations

from . import _dtype
from .ops.elementwise import _out, require_tensor
from .nn import functional as F
from .nn._functional.activation import rrelu_with_generator

__all__ = ["conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
           "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "layer_norm",
           "group_norm", "batch_norm", "instance_norm", "dropout", "dropout_", "alpha_dropout", "embedding", "detach",
           "relu_", "sigmoid_", "tanh_", "exp_", "selu", "celu", "prelu", "rrelu", "threshold", "hardshrink",
           "bilinear", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "unravel_index", "memory_format",
           "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]

# same signature as nn.functional
conv1d, conv2d, conv3d, conv_tbc = F.conv1d, F.conv2d, F.conv3d, F.conv_tbc
conv_transpose1d, conv_transpose2d, conv_transpose3d = F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d
selu, celu, prelu, hardshrink, bilinear = F.selu, F.celu, F.prelu, F.hardshrink, F.bilinear
pixel_shuffle, pixel_unshuffle, channel_shuffle = F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle


def threshold(input, threshold, value, *, out=None):
    """``torch.threshold``: ``F.threshold`` with PyTorch's ``out=`` (the result cast into ``out``) in place of
    ``inplace``."""
    return _out(F.threshold(input, threshold, value), out, "threshold")


def _max_pool(f):
    def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return f(input, kernel_size, stride or None, padding, dilation, ceil_mode)
    pool.__name__ = f.__name__
    return pool


max_pool1d, max_pool2d, max_pool3d = _max_pool(F.max_pool1d), _max_pool(F.max_pool2d), _max_pool(F.max_pool3d)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d`` returns the values and their indices."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def dropout(input, p, train):
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return rrelu_with_generator(input, lower, upper, training, generator=generator)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def detach(input):
    require_tensor(input, "detach")
    return input.detach()


def relu_(input):
    return input.relu_()


def sigmoid_(input):
    return input.sigmoid_()


def tanh_(input):
    return input.tanh_()


def exp_(input):
    return input.exp_()


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``: a tuple of int64 tensors, one per dim (floor
    division and modulo, unchecked, as PyTorch's)."""
    if indices.is_floating_point() or indices.is_complex() or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    flat, out = indices.long(), []
    for s in reversed(shape):
        out.append(flat.remainder(s))
        flat = flat.div(s, rounding_mode="floor")
    return tuple(reversed(out))


class memory_format:
    """``torch.memory_format``: accepted where PyTorch takes one (XLA chooses physical layouts itself)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
