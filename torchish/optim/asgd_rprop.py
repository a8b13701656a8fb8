"""ASGD (averaged SGD) and Rprop (resilient backpropagation) with PyTorch's updates and state layout."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ._arith import coupled_decay, f64, HALF, half_coupled_decay, half_kernels, signed
from .optimizer import Optimizer, check_lr, check_nonneg, scalar_dtype, scalar_tensor, zeros_like_param


class ASGD(Optimizer):
    """Averaged SGD (PyTorch's ``torch.optim.ASGD``). State per parameter: ``step``, ``eta`` (the current step
    size), ``mu`` (the averaging coefficient) — float32 scalars — and ``ax``, the running average of the parameter.

    Example::

        opt = torchish.optim.ASGD(model.parameters(), lr=1e-2, t0=100)
    """

    _hyper = ("lr", "lambd", "alpha", "t0", "weight_decay", "maximize")
    _param_first_on_mismatch = frozenset({True})  # (_multi_tensor_asgd: params - axs)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))
    _scalar_state = ("step", "eta", "mu")
    _capturable_check = (("params, mus, etas, and state_steps", True), ("params, mus, etas, and state_steps", False))

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonneg("weight_decay value", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "eta", "mu", "ax")

    def _loaded_scalar(self, p, key, value, group):
        return scalar_tensor(float(value), beside=p)  # PyTorch puts all three beside the parameter

    def _init_state(self, p, group):
        lr = group["lr"]
        lr = float(lr.item()) if hasattr(lr, "item") else lr
        return {"step": scalar_tensor(0.0), "eta": scalar_tensor(lr), "mu": scalar_tensor(1.0),
                "ax": zeros_like_param(p)}

    def _static(self, group):  # (scalar32: torch.as_tensor makes the new eta and mu default-dtype tensors)
        return {"foreach": bool(group["foreach"]), "scalar32": scalar_dtype() == jnp.float32}

    @staticmethod
    def _update(params, grads, states, hp, *, foreach, scalar32):
        lr, lambd, alpha, t0, wd = hp["lr"], hp["lambd"], hp["alpha"], hp["t0"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, (step, eta, mu, ax) in zip(params, grads, states):
            g = signed(g, hp["maximize"])
            step = step + 1
            if p.dtype not in HALF:
                g = coupled_decay(g, p, wd)
            t = f64(step)
            if foreach and p.dtype in HALF:
                p, ax = _asgd_half_foreach(p, g, eta, mu, ax, lambd, wd)
                new_eta = _foreach_eta(step, lr, lambd, alpha).astype(eta.dtype)
            elif foreach:  # _multi_tensor_asgd: p - (g + lambd p) eta, ax always averaged, and eta = lr / (1 + lambd lr
                p = p - (g + lambd * p) * eta.astype(p.dtype)  # step) ** alpha as tensor ops in the step's dtype
                ax = ax + (p - ax) * mu.astype(p.dtype)
                new_eta = _foreach_eta(step, lr, lambd, alpha).astype(eta.dtype)
            elif p.dtype in HALF:
                p, ax = _asgd_half(p, g, eta, mu, ax, lambd, wd)
                new_eta = _as_tensor(lr / (1 + lambd * lr * t) ** alpha, scalar32).astype(eta.dtype)
            else:
                eta64 = f64(eta)  # PyTorch reads eta with .item(): the decay factor is computed in double
                p = p * (1 - lambd * eta64).astype(p.dtype)
                p = p + (-eta64).astype(p.dtype) * g
                ax = jnp.where(mu != 1, ax + (p - ax) * mu.astype(p.dtype), p)
                new_eta = _as_tensor(lr / (1 + lambd * lr * t) ** alpha, scalar32).astype(eta.dtype)
            new_mu = _as_tensor(1 / jnp.maximum(1.0, t - t0), scalar32).astype(mu.dtype)
            new_p.append(p)
            new_s.append([step, new_eta, new_mu, ax])
        return new_p, new_s


def _asgd_half(p, g, eta, mu, ax, lambd, wd):
    """The single-tensor ASGD update of a float16/bfloat16 parameter, each op rounded once (``half_kernels``):
    add(param, alpha=wd), mul_(1 - lambd eta), add_(grad, alpha=-eta), ax.add_(param.sub(ax).mul_(mu)) or
    ax.copy_(param) while mu is 1."""
    dt, f32 = p.dtype, jnp.float32
    r, s = half_kernels(dt)
    p, g, ax, eta64 = p.astype(f32), g.astype(f32), ax.astype(f32), f64(eta)
    g = half_coupled_decay(g, p, wd, r, s)
    p = r(p * s(1 - lambd * eta64))
    p = r(p + r(s(-eta64)) * g)
    ax = jnp.where(mu != 1, r(ax + r(r(p - ax) * mu)), p)
    return p.astype(dt), ax.astype(dt)


def _asgd_half_foreach(p, g, eta, mu, ax, lambd, wd):
    """_multi_tensor_asgd's update of a float16/bfloat16 parameter, each op rounded once (``half_kernels``):
    add(param, alpha=wd), add_(param, alpha=lambd), addcmul_(param, ., eta, value=-1), ax.addcmul_(param - ax,
    mu); the float32 eta and mu taken in the half type as 0-dim operands of a half op."""
    dt, f32 = p.dtype, jnp.float32
    r, s = half_kernels(dt)
    p, g, ax = p.astype(f32), g.astype(f32), ax.astype(f32)
    g = half_coupled_decay(g, p, wd, r, s)
    g = r(g + r(s(lambd)) * p)
    p = r(p - g * r(eta.astype(f32)))
    ax = r(ax + r(p - ax) * r(mu.astype(f32)))
    return p.astype(dt), ax.astype(dt)


def _foreach_eta(step, lr, lambd, alpha):
    """_multi_tensor_asgd's ``lr / ((1 + lambd * lr * step) ** alpha)`` on the step tensor: ops in its dtype, the
    Python scalars read in that dtype, ``lr / x`` as ``x.reciprocal() * lr``. A float32 step's ops are computed in
    float64, each rounded by ``reduce_precision``, which XLA keeps (float32 ops it would fuse: the multiply-add
    contracted into an FMA, the reciprocal folded into the power; float64 ops cast to float32 between it simplifies
    back to float32 ops)."""
    if step.dtype != jnp.float32:
        x = (step * jnp.asarray(lambd * lr, step.dtype) + 1) ** jnp.asarray(alpha, step.dtype)
        return (1 / x) * jnp.asarray(lr, step.dtype)
    r = _round32
    x = r(f64(step) * r(lambd * lr))
    x = r(r(x + 1) ** r(alpha))
    return r(r(1 / x) * r(lr)).astype(jnp.float32)


def _round32(v):
    """``v`` rounded to float32 precision, kept in float64 (a rounding XLA does not fold away)."""
    return jax.lax.reduce_precision(f64(v), exponent_bits=8, mantissa_bits=23)


def _as_tensor(v, scalar32):
    """A Python float's value as ``torch.as_tensor`` stores it: in the default dtype."""
    return _round32(v) if scalar32 else v


class Rprop(Optimizer):
    """Rprop (PyTorch's ``torch.optim.Rprop``): per-coordinate step sizes grown by ``etas[1]`` while the gradient
    keeps its sign and shrunk by ``etas[0]`` when it flips (that step is then skipped), clamped to ``step_sizes``.

    Example::

        opt = torchish.optim.Rprop(model.parameters(), lr=1e-2, etas=(0.5, 1.2))
    """

    _hyper = ("etas", "step_sizes", "maximize")
    _param_first_on_mismatch = frozenset({False, True})  # (grad.mul(prev))
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))
    _scalar_state = ("step",)
    _capturable_check = (("params and state_steps", True),) * 2

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "prev", "step_size")

    def _init_state(self, p, group):
        lr = group["lr"]
        lr = float(lr.item()) if hasattr(lr, "item") else lr
        # a complex parameter steps as its view_as_real: both parts start at lr (PyTorch's complex(lr, lr))
        size = complex(lr, lr) if p.is_complex() else lr
        return {"step": scalar_tensor(0.0), "prev": zeros_like_param(p), "step_size": zeros_like_param(p, size)}

    @staticmethod
    def _update(params, grads, states, hp, **static):
        (eta_minus, eta_plus), (size_min, size_max) = hp["etas"], hp["step_sizes"]
        new_p, new_s = [], []
        for p, g, (step, prev, size) in zip(params, grads, states):
            g = signed(g, hp["maximize"])
            s = jnp.sign(g * prev)
            factor = jnp.where(s > 0, jnp.asarray(eta_plus, p.dtype),
                               jnp.where(s < 0, jnp.asarray(eta_minus, p.dtype), jnp.ones((), p.dtype)))
            size = jnp.clip(size * factor, size_min, size_max)
            g = jnp.where(s < 0, jnp.zeros((), g.dtype), g)  # a sign flip skips this step
            new_p.append(p - jnp.sign(g) * size)
            new_s.append([step + 1, g, size])
        return new_p, new_s
