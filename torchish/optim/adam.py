"""Adam and AdamW (amsgrad, weight decay coupled or decoupled, maximize) with PyTorch's numerics: bias
corrections computed in double precision from the step count, as PyTorch does on its default path."""
from __future__ import annotations

import jax.numpy as jnp
import optax

from .._tensor import Tensor
from .optimizer import Optimizer


def check_adam_args(lr, betas, eps, weight_decay):
    if isinstance(lr, float) or isinstance(lr, int):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Adam (PyTorch's ``torch.optim.Adam``); ``decoupled_weight_decay=True`` is AdamW.

    Example::

        opt = torchish.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))
    """

    _hyper = ("lr", "betas", "eps", "weight_decay")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if hasattr(lr, "item") and not isinstance(lr, (int, float)):
            lr = lr.item()
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _init_state(self, p, group):
        st = {"step": Tensor._make(jnp.zeros((), jnp.float32)),
              "exp_avg": Tensor._make(jnp.zeros(p._v.shape, p._v.dtype)),
              "exp_avg_sq": Tensor._make(jnp.zeros(p._v.shape, p._v.dtype))}
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = Tensor._make(jnp.zeros(p._v.shape, p._v.dtype))
        return st

    def _static(self, group):
        return {"amsgrad": bool(group["amsgrad"]), "maximize": bool(group["maximize"]),
                "decoupled": bool(group["decoupled_weight_decay"])}

    @staticmethod
    def _update(params, grads, states, hp, *, amsgrad, maximize, decoupled):
        lr, (b1, b2), eps, wd = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, st in zip(params, grads, states):
            step, m, v = st[0], st[1], st[2]
            step = step + 1
            g = -g if maximize else g
            if decoupled:
                p = p * (1 - lr * wd)
            else:
                g = g + wd * p
            # optax's moment update is PyTorch's (lerp / mul-add) in exact arithmetic
            m = optax.tree_utils.tree_update_moment(g, m, b1, 1)
            v = optax.tree_utils.tree_update_moment_per_elem_norm(g, v, b2, 2)
            t = step.astype(jnp.float64)
            bc1 = 1 - jnp.asarray(b1, jnp.float64) ** t
            bc2_sqrt = jnp.sqrt(1 - jnp.asarray(b2, jnp.float64) ** t)
            step_size = (lr / bc1).astype(p.dtype)
            vmax = jnp.maximum(st[3], v) if amsgrad else v
            denom = jnp.sqrt(vmax) / bc2_sqrt.astype(p.dtype) + eps
            new_p.append(p - step_size * (m / denom))
            new_s.append([step, m, v] + ([vmax] if amsgrad else []))
        return new_p, new_s


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay (PyTorch's ``torch.optim.AdamW``, default weight_decay=1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
