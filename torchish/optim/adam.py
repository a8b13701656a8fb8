"""Adam and AdamW (amsgrad, weight decay coupled or decoupled, maximize) with PyTorch's numerics: bias
corrections computed in double precision from the step count, as PyTorch does on its default path."""
from __future__ import annotations

import jax.numpy as jnp
import optax

from .._tensor import Tensor
from ._arith import coupled_decay, f64, HALF, half_moments, signed
from .optimizer import Optimizer, check_betas, check_fused, check_lr, check_nonneg, scalar_tensor, zeros_like_param


def check_adam_args(lr, betas, eps, weight_decay):
    check_lr(lr)
    check_nonneg("epsilon value", eps)
    check_betas(betas)
    check_nonneg("weight_decay value", weight_decay)


def check_tensor_betas(betas, foreach, capturable):
    """Adam's checks of its betas' types: both floats (an int is refused) or both 1-element Tensors (not with
    foreach unless capturable); Tensors come back 0-d, as PyTorch's ``_to_scalar`` makes them."""
    if not (all(isinstance(b, float) for b in betas[:2]) or all(isinstance(b, Tensor) for b in betas[:2])):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas[:2]):
        if isinstance(b, Tensor):
            if foreach and not capturable:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
            if b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(b.reshape(()) if isinstance(b, Tensor) and b.dim() else b for b in betas)


def decay(p, g, lr, wd, decoupled):
    """Weight decay after ``maximize``: decoupled shrinks the parameter (AdamW), coupled adds ``wd * p`` to the
    gradient (PyTorch's order)."""
    if decoupled:
        return p * (1 - lr * wd), g
    return p, coupled_decay(g, p, wd)


def _half_step(p, g, m, v, vmax, step, lr, b1, b2, eps, wd, decoupled):
    """One Adam step of a float16/bfloat16 parameter as PyTorch's single-tensor kernels round it: each in-place op
    (mul_, lerp_, mul_, addcmul_, sqrt, the division by the bias correction, add_(eps), addcdiv_) computes in
    float32 with its Python scalars at float32 precision and rounds its result to the half type once. Written with
    the optax moments in the half type, the update rounded other intermediates (and 0.999 as a bfloat16 weight is
    1.0): a bfloat16 AdamW step moved 7 of 64 parameters an ulp off PyTorch's."""
    dt = p.dtype
    p, g, m, v, r, s = half_moments(p, g, m, v, lr, b1, b2, wd, decoupled)
    t = f64(step)
    step_size = s(f64(lr) / (1 - f64(b1) ** t))
    bc2_sqrt = s(jnp.sqrt(1 - f64(b2) ** t))
    if vmax is not None:
        vmax = jnp.maximum(vmax.astype(jnp.float32), v)
    denom = r(r(r(jnp.sqrt(v if vmax is None else vmax)) / bc2_sqrt) + r(s(eps)))  # (add_: eps rounded too)
    p = (p + (-step_size) * m / denom).astype(dt)
    return p, m.astype(dt), v.astype(dt), None if vmax is None else vmax.astype(dt)


class Adam(Optimizer):
    """Adam (PyTorch's ``torch.optim.Adam``); ``decoupled_weight_decay=True`` is AdamW.

    State per parameter: ``step`` (a float32 scalar Tensor), ``exp_avg``, ``exp_avg_sq`` and, with ``amsgrad``,
    ``max_exp_avg_sq``.

    Example::

        opt = torchish.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))
    """

    _hyper = ("lr", "betas", "eps", "weight_decay", "maximize")
    _group_defaults = (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                       ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None))
    _scalar_state = ("step",)
    _lerp_state = ("exp_avg",)  # (updated with exp_avg.lerp_(grad, ...): see Optimizer._lerp_state)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        check_adam_args(lr, betas, eps, weight_decay)
        betas = check_tensor_betas(betas, foreach, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _state_keys(self, group):
        return ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _check_sparse_grad(self, group):
        raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")  # AdamW too

    def _init_state(self, p, group):
        st = {"step": scalar_tensor(0.0), "exp_avg": zeros_like_param(p), "exp_avg_sq": zeros_like_param(p)}
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = zeros_like_param(p)
        return st

    def _static(self, group):
        return {"amsgrad": bool(group["amsgrad"]), "decoupled": bool(group["decoupled_weight_decay"])}

    @staticmethod
    def _update(params, grads, states, hp, *, amsgrad, decoupled):
        lr, (b1, b2), eps, wd = hp["lr"], hp["betas"], hp["eps"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, st in zip(params, grads, states):
            step, m, v = st[0] + 1, st[1], st[2]
            g = signed(g, hp["maximize"])
            if p.dtype in HALF:
                p, m, v, vmax = _half_step(p, g, m, v, st[3] if amsgrad else None, step, lr, b1, b2, eps, wd,
                                           decoupled)
                new_p.append(p)
                new_s.append([step, m, v] + ([vmax] if amsgrad else []))
                continue
            p, g = decay(p, g, lr, wd, decoupled)
            # optax's moment updates are PyTorch's (lerp / mul + addcmul) in exact arithmetic
            m = optax.tree_utils.tree_update_moment(g, m, b1, 1)
            v = optax.tree_utils.tree_update_moment_per_elem_norm(g, v, b2, 2)
            t = f64(step)
            step_size = (lr / (1 - f64(b1) ** t)).astype(p.dtype)
            bc2_sqrt = jnp.sqrt(1 - f64(b2) ** t).astype(p.dtype)
            vmax = jnp.maximum(st[3], v) if amsgrad else v
            denom = jnp.sqrt(vmax) / bc2_sqrt + eps
            new_p.append(p + (-step_size) * m / denom)  # addcdiv's order: (value * m) / denom
            new_s.append([step, m, v] + ([vmax] if amsgrad else []))
        return new_p, new_s


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay (PyTorch's ``torch.optim.AdamW``, default weight_decay=1e-2).

    Example::

        opt = torchish.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def _fill_groups(self):
        super()._fill_groups()
        for group in self.param_groups:  # PyTorch's AdamW.__setstate__ overrides a loaded value too
            group["decoupled_weight_decay"] = True
