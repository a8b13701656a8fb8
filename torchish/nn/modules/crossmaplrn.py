"""``CrossMapLRN2d``: the legacy (Lua torch) cross-channel local response normalisation, with its own backward.

PyTorch keeps this layer's original autograd function (``torch.nn.modules._functions.CrossMapLRN2d``), whose
running-sum loops fix two quirks that this file reproduces as constant 0/1 channel-mixing matrices:

* forward: ``scale[c] = k + alpha / size * sum(x[j] ** 2 for j in window(c))``, where the running sum adds the
  channel entering the window but never removes channel 0 (the removal starts at ``c > pre_pad``), so every
  window past the first ``pre_pad`` channels keeps ``x[0]``;
* backward: the hand-written gradient sums ``g * out / scale`` over a window shifted by one channel from the
  forward's, so it is not the exact derivative of the forward. PyTorch's gradients are what this op returns.
"""
from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from ...ops.registry import apply, defop
from ..module import Module

__all__ = ["CrossMapLRN2d"]


@functools.lru_cache(maxsize=None)
def _forward_window(channels, size):
    """``W[c, j] = 1`` when channel ``j``'s square is in ``scale[c]`` (PyTorch's running-sum loop, replayed)."""
    pre_pad = int((size - 1) / 2 + 1)
    w = np.zeros((channels, channels), np.int8)
    w[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        w[c] = w[c - 1]
        if c < channels - pre_pad + 1:
            w[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            w[c, c - pre_pad] -= 1
    return w


@functools.lru_cache(maxsize=None)
def _backward_window(channels, size):
    """``B[c, j] = 1`` when ``j``'s ratio ``g * out / scale`` enters channel ``c``'s input gradient."""
    inverse_pre_pad = int(size - (size - 1) / 2)
    b = np.zeros((channels, channels), np.int8)
    for c in range(channels):
        lo, hi = max(c - inverse_pre_pad, 0), min(c + size - 1 - inverse_pre_pad, channels - 1)
        b[c, lo:hi + 1] = 1
    return b


def _mix(window, v):
    """``out[n, c] = sum_j window[c, j] * v[n, j]`` over the channel axis of an ``(N, C, H, W)`` array."""
    return jnp.einsum("cj,njhw->nchw", jnp.asarray(window, v.dtype), v, precision="highest")


def _scale(x, size, alpha, k):
    return _mix(_forward_window(x.shape[1], size), x * x) * (alpha / size) + k


def _lrn_fwd(x, *, size, alpha, beta, k):
    return x * _scale(x, size, alpha, k) ** -beta


def _lrn_vjp(g, x, out, *, size, alpha, beta, k):
    scale = _scale(x, size, alpha, k)
    ratio = _mix(_backward_window(x.shape[1], size), g * out / scale)
    return (scale ** -beta * g - (2 * alpha * beta / size) * x * ratio,)


_CROSS_MAP_LRN = defop("cross_map_lrn2d", _lrn_fwd, vjp=_lrn_vjp, grad_name="CrossMapLRN2dBackward")


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    """The legacy cross-channel LRN of a 4-D ``(N, C, H, W)`` float input (see the module docstring)."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_type_name(input.dtype)}")
    return apply(_CROSS_MAP_LRN, (input,), size=int(size), alpha=float(alpha), beta=float(beta), k=float(k))


def _type_name(dtype):
    """PyTorch's ScalarType name (``Long``, ``Int``, ...) of a dtype in error messages."""
    names = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(str(dtype).replace("torch.", ""), str(dtype))


class CrossMapLRN2d(Module):
    """Legacy cross-channel local response normalisation of ``(N, C, H, W)`` inputs (see the module docstring).

    Args:
        size: number of neighbouring channels in each window.
        alpha: multiplicative factor.
        beta: exponent.
        k: additive factor.

    Example::

        >>> lrn = torchish.nn.CrossMapLRN2d(3)
        >>> lrn(torchish.ones(1, 4, 2, 2)).shape
        torch.Size([1, 4, 2, 2])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
