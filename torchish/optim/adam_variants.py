"""Adamax, NAdam, RAdam and SparseAdam with PyTorch's numerics (the Python-float parts of PyTorch's default path —
bias corrections, NAdam's momentum schedule, RAdam's rectification — are computed in float64, then cast)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import optax

from ..ops import tracing
from .adam import check_adam_args, decay
from ._arith import coupled_decay, f64, HALF, half_coupled_decay, half_kernels, half_moments, lerp, signed
from .optimizer import Optimizer, check_betas, check_lr, check_nonneg, scalar_tensor, zeros_like_param

_m1 = optax.tree_utils.tree_update_moment               # m <- b * m + (1 - b) * g   (PyTorch: m.lerp_(g, 1 - b))
_m2 = optax.tree_utils.tree_update_moment_per_elem_norm  # v <- b * v + (1 - b) * g^2 (PyTorch: mul_ + addcmul_)


class Adamax(Optimizer):
    """Adamax (PyTorch's ``torch.optim.Adamax``): Adam with the infinity norm, ``u = max(b2 * u, |g| + eps)``.

    Example::

        opt = torchish.optim.Adamax(model.parameters(), lr=2e-3)
    """

    _hyper = ("lr", "betas", "eps", "weight_decay", "maximize")
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))
    _scalar_state = ("step",)
    _lerp_state = ("exp_avg",)  # (updated with exp_avg.lerp_(grad, ...): see Optimizer._lerp_state)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "exp_avg", "exp_inf")

    def _init_state(self, p, group):
        return {"step": scalar_tensor(0.0), "exp_avg": zeros_like_param(p), "exp_inf": zeros_like_param(p)}

    @staticmethod
    def _update(params, grads, states, hp, **static):
        lr, (b1, b2), eps, wd = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, (step, m, u) in zip(params, grads, states):
            g = signed(g, hp["maximize"])
            step = step + 1
            if p.dtype in HALF:  # PyTorch's single-tensor ops, each rounded once: add(param, alpha=wd), lerp_,
                dt, f32 = p.dtype, jnp.float32  # mul_, abs().add_(eps), maximum, addcdiv_
                r, s = half_kernels(dt)
                p, g = p.astype(f32), g.astype(f32)
                g = half_coupled_decay(g, p, wd, r, s)
                m = r(lerp(m.astype(f32), g, s(1 - f64(b1))))
                u = jnp.maximum(r(u.astype(f32) * s(b2)), r(jnp.abs(g) + r(s(eps))))
                clr = f64(lr) / (1 - f64(b1) ** f64(step))
                new_p.append((p + s(-clr) * m / u).astype(dt))
                new_s.append([step, m.astype(dt), u.astype(dt)])
                continue
            g = coupled_decay(g, p, wd)
            m = _m1(g, m, b1, 1)
            u = optax.tree_utils.tree_update_infinity_moment(g, u, b2, eps)
            clr = (lr / (1 - f64(b1) ** f64(step))).astype(p.dtype)
            new_p.append(p - clr * m / u)
            new_s.append([step, m, u])
        return new_p, new_s


def _nadam_half(p, g, m, v, mu_prod, mu, mu_next, bc2, lr, b1, b2, eps, wd, decoupled):
    """One NAdam step of a float16/bfloat16 parameter in PyTorch's single-tensor order, each op rounded once
    (``half_kernels``): mul_(1 - lr wd) or add(param, alpha=wd), lerp_, mul_ + addcmul_, div(bc2), sqrt, add_(eps)
    and the two addcdiv_ (their values computed in double from the float32 mu_product)."""
    dt = p.dtype
    p, g, m, v, r, s = half_moments(p, g, m, v, lr, b1, b2, wd, decoupled)
    denom = r(r(jnp.sqrt(r(v / s(bc2)))) + r(s(eps)))
    mp = f64(mu_prod)
    p = r(p + s(-f64(lr) * (1.0 - mu) / (1.0 - mp)) * g / denom)
    p = p + s(-f64(lr) * mu_next / (1.0 - mp * mu_next)) * m / denom
    return p.astype(dt), m.astype(dt), v.astype(dt)


class NAdam(Optimizer):
    """NAdam (PyTorch's ``torch.optim.NAdam``): Nesterov momentum with the ``momentum_decay`` schedule; the running
    product of the momentum coefficients is kept in ``state['mu_product']`` (a float32 scalar, as in PyTorch).

    Example::

        opt = torchish.optim.NAdam(model.parameters(), lr=2e-3, momentum_decay=4e-3)
    """

    _hyper = ("lr", "betas", "eps", "weight_decay", "momentum_decay", "maximize")
    _group_defaults = (("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False),
                       ("decoupled_weight_decay", False))
    _scalar_state = ("step", "mu_product")
    _capturable_check = (("params, mu_products and state_steps", True), ("params, mu_products, and state_steps", False))
    _lerp_state = ("exp_avg",)  # (updated with exp_avg.lerp_(grad, ...): see Optimizer._lerp_state)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        check_nonneg("momentum_decay value", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def _init_state(self, p, group):
        return {"step": scalar_tensor(0.0), "mu_product": scalar_tensor(1.0), "exp_avg": zeros_like_param(p),
                "exp_avg_sq": zeros_like_param(p)}

    def _static(self, group):
        return {"decoupled": bool(group["decoupled_weight_decay"])}

    def _counted_before_lerp(self, group, p):
        new = super()._counted_before_lerp(group, p)
        if not group.get("foreach"):  # (the single-tensor loop has multiplied mu_product by this step's mu too)
            t = float(new["step"])
            mu = group["betas"][0] * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))
            new["mu_product"] = self.state[p]["mu_product"]._d * jnp.float32(mu)
        return new

    @staticmethod
    def _update(params, grads, states, hp, *, decoupled):
        lr, (b1, b2), eps, wd, md = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"], hp["momentum_decay"]
        new_p, new_s = [], []
        for p, g, (step, mu_prod, m, v) in zip(params, grads, states):
            g = signed(g, hp["maximize"])
            step = step + 1
            t = f64(step)
            bc2 = 1 - f64(b2) ** t
            if p.dtype not in HALF:
                p, g = decay(p, g, lr, wd, decoupled)
            mu = b1 * (1.0 - 0.5 * 0.96 ** (t * md))
            mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * md))
            mu_prod = mu_prod * mu.astype(mu_prod.dtype)  # PyTorch: a float32 scalar Tensor *= a Python float
            if p.dtype in HALF:
                p, m, v = _nadam_half(p, g, m, v, mu_prod, mu, mu_next, bc2, lr, b1, b2, eps, wd, decoupled)
                new_p.append(p)
                new_s.append([step, mu_prod, m, v])
                continue
            m = _m1(g, m, b1, 1)
            v = _m2(g, v, b2, 2)
            denom = jnp.sqrt(v / bc2.astype(p.dtype)) + eps
            mp = f64(mu_prod)
            c_grad = (-lr * (1.0 - mu) / (1.0 - mp)).astype(p.dtype)
            c_avg = (-lr * mu_next / (1.0 - mp * mu_next)).astype(p.dtype)
            p = p + c_grad * g / denom
            new_p.append(p + c_avg * m / denom)
            new_s.append([step, mu_prod, m, v])
        return new_p, new_s


def _radam_rect(t, b2):
    """RAdam's ``rho_t`` and rectification term, in double from the step count (PyTorch's Python floats)."""
    bc2 = 1 - f64(b2) ** t
    rho_inf = 2 / (1 - f64(b2)) - 1
    rho_t = rho_inf - 2 * t * (f64(b2) ** t) / bc2
    return rho_t, jnp.sqrt(jnp.abs((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)))


def _radam_half(p, g, m, v, t, lr, b1, b2, eps, wd, decoupled):
    """One RAdam step of a float16/bfloat16 parameter in PyTorch's single-tensor order, each op rounded once
    (``half_kernels``): the decay, lerp_, mul_ + addcmul_, exp_avg / bc1, then ``* lr`` and, when rectified,
    ``* (bc2 ** 0.5 / (sqrt + eps))`` (a reciprocal times the scalar) and ``* rect``, and param.add_(alpha=-1)."""
    dt = p.dtype
    p, g, m, v, r, s = half_moments(p, g, m, v, lr, b1, b2, wd, decoupled)
    rho_t, rect = _radam_rect(t, b2)
    step = r(r(m / s(1 - f64(b1) ** t)) * s(lr))
    adaptive = r(r(1 / r(r(jnp.sqrt(v)) + r(s(eps)))) * s(jnp.sqrt(1 - f64(b2) ** t)))
    step = jnp.where(rho_t > 5.0, r(r(step * adaptive) * s(rect)), step)
    return (p - step).astype(dt), m.astype(dt), v.astype(dt)


class RAdam(Optimizer):
    """RAdam (PyTorch's ``torch.optim.RAdam``): Adam whose adaptive step is switched on, with the rectification
    term, once the variance estimate is tractable (``rho_t > 5``); before that it is SGD with momentum.

    Example::

        opt = torchish.optim.RAdam(model.parameters(), lr=1e-3, decoupled_weight_decay=True, weight_decay=1e-2)
    """

    _hyper = ("lr", "betas", "eps", "weight_decay", "maximize")
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("decoupled_weight_decay", False), ("capturable", False))
    _scalar_state = ("step",)
    _lerp_state = ("exp_avg",)  # (updated with exp_avg.lerp_(grad, ...): see Optimizer._lerp_state)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "exp_avg", "exp_avg_sq")

    def _init_state(self, p, group):
        return {"step": scalar_tensor(0.0), "exp_avg": zeros_like_param(p), "exp_avg_sq": zeros_like_param(p)}

    def _static(self, group):
        return {"decoupled": bool(group["decoupled_weight_decay"])}

    @staticmethod
    def _update(params, grads, states, hp, *, decoupled):
        lr, (b1, b2), eps, wd = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, (step, m, v) in zip(params, grads, states):
            g = signed(g, hp["maximize"])
            step = step + 1
            t = f64(step)
            if p.dtype in HALF:
                p, m, v = _radam_half(p, g, m, v, t, lr, b1, b2, eps, wd, decoupled)
                new_p.append(p)
                new_s.append([step, m, v])
                continue
            p, g = decay(p, g, lr, wd, decoupled)
            m = _m1(g, m, b1, 1)
            v = _m2(g, v, b2, 2)
            bc1, bc2 = 1 - f64(b1) ** t, 1 - f64(b2) ** t
            corrected = m / bc1.astype(p.dtype)
            rho_t, rect = _radam_rect(t, b2)
            adaptive = jnp.sqrt(bc2).astype(p.dtype) / (jnp.sqrt(v) + eps)
            rectified = corrected * lr * adaptive * rect.astype(p.dtype)
            new_p.append(p - jnp.where(rho_t > 5.0, rectified, corrected * lr))
            new_s.append([step, m, v])
        return new_p, new_s


def _touched(grad):
    """The elements a sparse gradient's entries cover (PyTorch's SparseAdam updates those, moments and
    parameter), as a boolean array of the parameter's shape."""
    idx = np.asarray(grad._coo.indices._d)
    sparse_dim = idx.shape[0]
    rows = np.zeros(tuple(grad.shape[:sparse_dim]), bool)
    rows[tuple(idx)] = True
    rows = rows.reshape(rows.shape + (1,) * (grad.dim() - sparse_dim))
    return jnp.asarray(np.broadcast_to(rows, tuple(grad.shape)))


class SparseAdam(Optimizer):
    """SparseAdam (PyTorch's ``torch.optim.SparseAdam``): Adam that updates only the coordinates a gradient
    touches, moments and parameters alike.

    The coordinates touched are those the sparse gradient's entries index (``Embedding(sparse=True)``: the rows
    looked up, whatever their values; ``grad.to_sparse()``: its nonzero elements). As in PyTorch, a dense gradient
    raises RuntimeError at ``step()``.
    ``state['step']`` is a Python int, as in PyTorch; because Python advances it, a step inside
    ``torchish.compile`` needs concrete values (it runs eagerly: a graph break).

    Example::

        opt = torchish.optim.SparseAdam(embedding.parameters(), lr=1e-3)
    """

    _hyper = ("lr", "betas", "eps")
    _tensor_step = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, (int, float)) and not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        check_lr(lr)
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        for i, group in enumerate(self.param_groups):
            bad = [[i, j] for j, p in enumerate(group["params"]) if p.is_complex()]
            if bad:
                raise ValueError(f"Complex params at indices {bad}: SparseAdam does not support complex parameters")

    def _state_keys(self, group):
        return ("step", "exp_avg", "exp_avg_sq")

    def _init_state(self, p, group):
        return {"step": 0, "exp_avg": zeros_like_param(p), "exp_avg_sq": zeros_like_param(p)}

    def _hyper_values(self, group, params):
        hp = super()._hyper_values(group, params)
        hp["maximize"] = group.get("maximize", False)  # PyTorch's SparseAdam.step reads it with a default
        hp["touched"] = tuple(_touched(p.grad) for p in params)
        return hp

    def _check_sparse_grad(self, group):
        pass  # it takes sparse gradients only (_prepare_state refuses the others)

    def _prepare_state(self, p, group):
        if not p.grad.is_sparse:
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        if tracing.active():
            raise tracing.concrete_error("SparseAdam's Python step counter")
        super()._prepare_state(p, group)
        self.state[p]["step"] += 1

    @staticmethod
    def _update(params, grads, states, hp, **static):
        lr, (b1, b2), eps = hp["lr"], hp["betas"], hp["eps"]
        new_p, new_s = [], []
        for p, g, (step, m, v), touched in zip(params, grads, states, hp["touched"]):
            g = signed(g, hp["maximize"])
            m_new = m + (g - m) * (1 - b1)
            v_new = v + (g * g - v) * (1 - b2)
            t = f64(step)
            step_size = (lr * jnp.sqrt(1 - f64(b2) ** t) / (1 - f64(b1) ** t)).astype(p.dtype)
            p_new = p + (-step_size) * (m_new / (jnp.sqrt(v_new) + eps))
            new_p.append(jnp.where(touched, p_new, p))
            new_s.append([step, jnp.where(touched, m_new, m), jnp.where(touched, v_new, v)])
        return new_p, new_s
