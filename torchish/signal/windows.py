"""``torch.signal.windows``: the scipy-style window functions (``sym=True`` for filter design, ``sym=False`` for a
periodic window), each built from ``linspace`` in the requested dtype as PyTorch builds it, so the values round the
same way and ``requires_grad=True`` gives a window with a ``grad_fn``.

Example::

    >>> import torchish as torch
    >>> torch.signal.windows.hann(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import torchish

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """PyTorch's argument checks (ValueError), in its order; returns the dtype to use."""
    dtype = torchish.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not torchish.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (torchish.float32, torchish.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad):
    """The window of length 0 (empty) or 1 (a one), or None."""
    if M == 0:
        return torchish.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return torchish.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _span(M, sym):
    """The denominator of a window's spacing: ``M - 1`` points apart when symmetric, ``M`` when periodic."""
    return M - 1 if sym else M


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=torchish.strided, device=None,
                requires_grad=False):
    """``exp(-|n - center| / tau)``; ``center`` defaults to the middle (only periodic windows may move it)."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    rate = 1 / tau
    k = torchish.linspace(-center * rate, (-center + (M - 1)) * rate, M, dtype=dtype, device=device,
                          requires_grad=requires_grad)
    return torchish.exp(-torchish.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """The sine (cosine) window ``sin(pi (n + 1/2) / M)``."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    k = torchish.linspace(0.5 * step, (M - 0.5) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return torchish.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """``exp(-(n - center)^2 / (2 std^2))``."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    first = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = torchish.linspace(first * scale, (first + M - 1) * scale, M, dtype=dtype, device=device,
                          requires_grad=requires_grad)
    return torchish.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``, computed in the window's dtype."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    b = torchish.tensor(beta, dtype=dtype, device=device)  # (beta in the window's dtype: no NaN from rounding)
    step = 2.0 * b / _span(M, sym)
    k = torchish.linspace(-b, torchish.minimum(b, -b + (M - 1) * step), M, dtype=dtype, device=device,
                          requires_grad=requires_grad)
    return torchish.i0(torchish.sqrt(b * b - torchish.pow(k, 2))) / torchish.i0(b)


def bartlett(M, *, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """The triangular window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    k = torchish.linspace(-1, -1 + (M - 1) * (2 / _span(M, sym)), M, dtype=dtype, device=device,
                          requires_grad=requires_grad)
    return 1 - torchish.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``: hann, hamming, blackman and nuttall are its special cases."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = torchish.linspace(0, (M - 1) * (2 * math.pi / _span(M, sym)), M, dtype=dtype, device=device,
                          requires_grad=requires_grad)
    coeffs = torchish.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                             requires_grad=requires_grad)
    i = torchish.arange(coeffs.shape[0], dtype=coeffs.dtype, device=coeffs.device,
                        requires_grad=coeffs.requires_grad)
    return (coeffs.unsqueeze(-1) * torchish.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=torchish.strided, device=None,
                    requires_grad=False):
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """The Blackman window (``general_cosine`` with a = [0.42, 0.5, 0.08])."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=torchish.strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
