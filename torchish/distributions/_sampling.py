"""Samplers the distributions need beyond ``torchish.rand/randn/...``: standard gamma draws that are
differentiable in their concentration (implicit reparameterisation), Dirichlet, binomial and Poisson draws.

The draws are PyTorch's CPU kernels (``torchish.ops._serial_samplers``, through the same ``draw`` machinery as
every torchish sampler, so ``torchish.compile`` threads the generator's state). A gamma sample then passes through
the op ``standard_gamma``: identity forward, backward ``g * dx/dalpha`` with PyTorch's ``_standard_gamma_grad``;
a Dirichlet sample through ``dirichlet``, whose backward is PyTorch's ``_Dirichlet.backward``
(``_reparam_grads``).

The samplers run on flat blocks of a power-of-two size, so that every shape up to a bucket shares one compiled
sampler: parameters are flattened and padded, and the result cut back to shape. The padding values (a
concentration, rate or count of 0) are those PyTorch's element-by-element samplers answer without drawing, so the
padding takes no words of the stream.
"""
from __future__ import annotations

import math

import jax.numpy as jnp

import torchish
from .._tensor import Tensor
from ._reparam_grads import dirichlet_grad, standard_gamma_grad
from .. import _dtype
from ..ops.elementwise import not_implemented
from ..ops.draw import draw
from ..ops.registry import apply, defop

_MIN_BUCKET, _MAX_BUCKET = 64, 1 << 22


def _gamma_reparam_vjp(g, alpha, x, out):
    return g * standard_gamma_grad(alpha, x), None


_STANDARD_GAMMA = defop("standard_gamma", lambda alpha, x: x, vjp=_gamma_reparam_vjp, promote=None,
                        grad_name="StandardGammaBackward0", saved=("0o", ""))


def _dirichlet_vjp(g, concentration, x, out):
    """PyTorch's ``_Dirichlet.backward``: ``_dirichlet_grad`` of each coordinate, projected onto the simplex."""
    total = jnp.broadcast_to(concentration.sum(-1, keepdims=True), concentration.shape)
    return dirichlet_grad(x, concentration, total) * (g - (x * g).sum(-1, keepdims=True)), None


_DIRICHLET = defop("dirichlet", lambda concentration, x: x, vjp=_dirichlet_vjp, promote=None,
                   grad_name="_DirichletBackward", saved=("0o", ""))


def _bucket(n):
    """The flat size to compute ``n`` elements on (None: exactly ``n``, for very large draws)."""
    return max(_MIN_BUCKET, 1 << max(n - 1, 0).bit_length()) if n <= _MAX_BUCKET else None


def _flat_padded(t, size, fill):
    """``t`` flattened and padded with ``fill`` to ``size`` elements (differentiable in ``t``)."""
    flat = t.reshape(-1)
    n = flat.shape[0]
    if size == n:
        return flat
    return torchish.cat([flat, torchish.full((size - n,), fill, dtype=t.dtype, device=t.device)])


def _unflatten(flat, shape):
    n = math.prod(shape)
    return (flat if flat.shape[0] == n else flat[:n]).reshape(shape)


def _draw(kind, params, fills, dtype, like, generator=None):
    """``kind`` samples of ``params``' common shape, drawn on a bucketed flat block; no gradient."""
    shape = tuple(params[0].shape)
    size = _bucket(math.prod(shape)) or math.prod(shape)
    with torchish.no_grad():
        flat = [_flat_padded(p.detach(), size, f) for p, f in zip(params, fills)]
    out = draw(kind, (size,), dtype, tuple(p._d for p in flat), generator, device=like)
    return _unflatten(Tensor._make(out), shape)


def _float_kernel(t, kernel):
    """PyTorch's gamma, Dirichlet and binomial CPU kernels take float32 and float64 only."""
    if t.dtype not in (_dtype.float32, _dtype.float64):
        raise not_implemented(kernel, t.dtype)


def standard_gamma(alpha, generator=None):
    """Samples of ``Gamma(alpha, 1)`` of ``alpha``'s shape and dtype, at least the dtype's smallest normal
    number, differentiable in ``alpha`` (a ``StandardGammaBackward0`` node, as ``torch._standard_gamma``)."""
    _float_kernel(alpha, "gamma_cpu")
    with torchish.no_grad():
        x = _draw("gamma", (alpha,), (0.0,), alpha.dtype, alpha, generator)
        x = x.clamp(min=torchish.finfo(alpha.dtype).tiny)
    return apply(_STANDARD_GAMMA, (alpha, x))


def dirichlet(concentration, generator=None):
    """Samples of ``Dirichlet(concentration)`` as PyTorch's ``_sample_dirichlet`` draws them (gamma draws of the
    concentration in float64, normalised in float64, then cast and kept within the dtype's ``[tiny, 1)``),
    differentiable in the concentration with PyTorch's ``_dirichlet_grad``."""
    _float_kernel(concentration, "dirichlet")
    with torchish.no_grad():
        g = standard_gamma(concentration.detach().to(torchish.float64), generator)
        x = (g / g.sum(-1, keepdim=True)).to(concentration.dtype)
        info = torchish.finfo(concentration.dtype)
        x = x.clamp(min=info.tiny, max=1 - info.eps / 2)
    return apply(_DIRICHLET, (concentration, x))


def binomial(count, prob, generator=None):
    """Binomial draws with ``count`` trials of success probability ``prob`` (same shapes), of ``prob``'s dtype,
    without gradient (as ``torch.binomial``)."""
    _float_kernel(count, "binomial_cpu")
    return _draw("binomial", (count, prob), (0.0, 0.5), prob.dtype, prob, generator)


def poisson(rate, generator=None):
    """Poisson draws of ``rate``'s shape and dtype, without gradient (as ``torch.poisson``)."""
    return _draw("poisson", (rate,), (0.0,), rate.dtype, rate, generator)
