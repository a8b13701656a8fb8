"""torchish.nn.functional: dropout, channel-wise dropout (1d/2d/3d) and alpha dropout.

Masks are drawn from torchish's generator (``ops.draw.draw``), so ``torchish.manual_seed`` makes them
reproducible and ``torchish.compile`` sees the generator as state. Applying a mask is one registry op.
"""
from __future__ import annotations

import math
import warnings

import jax.numpy as jnp

from ... import _dtype
from ..._tensor import Tensor
from ...ops.inplace import assign
from ...ops.draw import _target, draw
from ...ops.elementwise import require_number
from ...ops.random_layout import draw_like
from ...ops.opnode import SHOWN_KIND
from ...ops.registry import apply, defop
from ._args import need_bool, need_tensor

def inverted_dropout_mask(p, shape, dtype, like):
    """An inverted-dropout mask of ``shape`` (ones scaled by 1/(1-p), or zeros) drawn from torchish's generator on
    ``like``'s device; multiplied into activations inside fused kernels (attention, stacked RNN layers)."""
    if p >= 1:
        return Tensor._make(jnp.zeros(shape, dtype.np, device=_target(like)))
    keep = draw("bernoulli", shape, dtype, (1.0 - p,), device=like)
    return Tensor._make(keep / jnp.asarray(1.0 - p, dtype.np))


__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766  # -SELU's negative saturation value (scale * alpha)


def _dropout_fwd(x, mask, scale):
    return x * (mask.astype(x.dtype) * jnp.asarray(scale, x.dtype))


def _alpha_fwd(x, mask, a, b):
    m = mask.astype(x.dtype)
    return x * (m * jnp.asarray(a, x.dtype)) + (m - 1) * jnp.asarray(_ALPHA * a, x.dtype) + jnp.asarray(b, x.dtype)


_DROPOUT = defop("dropout", _dropout_fwd, grad_name="MulBackward0")
_ALPHA_DROPOUT = defop("alpha_dropout", _alpha_fwd, grad_name="AddBackward0")
SHOWN_KIND[_ALPHA_DROPOUT] = "alpha"  # (PyTorch's nodes: see ops.shown_graph)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise_shape(input, feature):
    if not feature:
        return tuple(input.shape)
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def _apply(input, p, training, inplace, feature, alpha):
    """The shared body: draw a keep-mask with probability ``1 - p`` (per element or per channel) and apply it."""
    _check_p(p)
    p = float(p)  # a double, as PyTorch parses it (np.float32(0.1) drew the float32 bernoulli's mask)
    if p == 0 or not training or input.numel() == 0:
        return input
    if input.is_complex():  # (PyTorch draws the mask with bernoulli_ in the input's dtype: no complex kernel)
        if p < 1:
            raise NotImplementedError(f'"bernoulli_scalar_cpu_" not implemented for '
                                      f"'{_dtype.scalar_type_name(input.dtype)}'")
    elif not input.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    shape = _noise_shape(input, feature)
    if p == 1:
        mask = Tensor._make(jnp.zeros(shape, bool, device=_target(input)))
    else:
        # (PyTorch fills ``empty_like(input)`` in memory order: a transposed input's mask is drawn transposed;
        # a channel mask is a fresh contiguous tensor)
        mask = Tensor._make(draw("bernoulli", shape, _dtype.bool, (1.0 - p,), device=input) if feature else
                            draw_like("bernoulli", input, shape, _dtype.bool, (1.0 - p,)))
    if alpha:
        a = 0.0 if p == 1 else 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        out = apply(_ALPHA_DROPOUT, (input, mask, a, _ALPHA * a * p)) if p < 1 else \
            apply(_DROPOUT, (input, mask, 0.0))
    else:
        out = apply(_DROPOUT, (input, mask, 0.0 if p == 1 else 1.0 / (1.0 - p)))
    if inplace:
        input._check_inplace()
        return assign(input, out)
    return out


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``; identity when not training.

    Example::

        >>> torchish.manual_seed(0)
        >>> y = F.dropout(torchish.ones(8), 0.5)      # zeros and 2.0s
    """
    need_tensor("dropout_" if inplace else "dropout", input)
    _check_p(p)  # (PyTorch's wrapper checks p, then its op's parser p and the flag)
    require_number(p, "dropout_" if inplace else "dropout", 2, "p")
    need_bool("dropout_" if inplace else "dropout", training, "train", 3)
    return _apply(input, p, training, inplace, feature=False, alpha=False)


def _channelwise(input, p, training, inplace, batched):
    """Channel dropout; an input without a batch dim is given one for the mask, as PyTorch does."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if batched:
        return _apply(input, p, True, inplace, feature=True, alpha=False)
    out = _apply(input.unsqueeze(0), p, True, False, feature=True, alpha=False).squeeze(0)
    if inplace:
        input._check_inplace()
        return assign(input, out)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) inputs with probability ``p``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channelwise(input, p, training, inplace, input.ndim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, H, W)`` inputs with probability ``p`` (a 3-D input is taken as
    ``(N, C, L)``, as PyTorch does today)."""
    _check_p(p)
    nd = input.ndim
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
                      stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _apply(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs with probability ``p``."""
    _check_p(p)
    nd = input.ndim
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
                      stacklevel=2)
    return _channelwise(input, p, training, inplace, nd == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance: dropped elements take SELU's saturation value,
    then an affine map restores the statistics."""
    need_tensor("alpha_dropout_" if inplace else "alpha_dropout", input)
    return _apply(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    need_tensor("feature_alpha_dropout_" if inplace else "feature_alpha_dropout", input)
    return _apply(input, p, training, inplace, feature=True, alpha=True)
