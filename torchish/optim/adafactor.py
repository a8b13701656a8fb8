"""Adafactor (PyTorch's ``torch.optim.Adafactor``): second moments kept factored (a row and a column average of
the squared gradient over the last two dims) for matrices, in full for vectors; relative step sizes and update
clipping as PyTorch computes them (the scalar factors in double precision from ``.item()`` values)."""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ._arith import f64, lerp, signed
from .optimizer import Optimizer, scalar_tensor, zeros_like_param


class Adafactor(Optimizer):
    """Adafactor with PyTorch's defaults (``lr=1e-2``, ``beta2_decay=-0.8``, ``eps=(None, 1e-3)``, ``d=1``).

    State per parameter: ``step`` (a float32 scalar Tensor), then ``row_var`` and ``col_var`` (the gradient's
    shape with the last, respectively second-to-last, dim 1) for parameters of 2 dims or more, or ``variance``
    for vectors and scalars.

    Example::

        opt = torchish.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    _hyper = ("lr", "beta2_decay", "eps", "d", "weight_decay", "maximize")
    _group_defaults = (("foreach", None), ("maximize", False))
    _scalar_state = ("step",)
    _param_shaped_state = False

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        from .._tensor import Tensor
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        self._factored = False
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _step_group(self, group, params=None):
        """Matrices (factored moments) and vectors (full moments) are two updates of different state."""
        params = [p for p in (group["params"] if params is None else params) if p.grad is not None]
        for p in params:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if p.grad.is_sparse:
                self._check_sparse_grad(group)
            if p.numel() == 0:  # (PyTorch divides by the parameter's RMS over sqrt(numel) in Python)
                raise ZeroDivisionError("float division by zero")
        for factored in (True, False):
            self._factored = factored
            part = [p for p in params if (p.grad.dim() > 1) == factored]
            if part:
                super()._step_group(group, part)

    def _state_keys(self, group):
        return ("step", "row_var", "col_var") if self._factored else ("step", "variance")

    def _init_state(self, p, group):
        st = {"step": scalar_tensor(0.0)}
        if p.grad.dim() > 1:
            row, col = list(p.grad.shape), list(p.grad.shape)
            row[-1] = 1
            col[-2] = 1
            st["row_var"] = p.grad.new_zeros(row)
            st["col_var"] = p.grad.new_zeros(col)
        else:
            st["variance"] = zeros_like_param(p)
        return st

    def _static(self, group):
        return {"factored": self._factored}

    @staticmethod
    def _update(params, grads, states, hp, *, factored):
        lr, beta2_decay, (eps1, eps2), d, wd = hp["lr"], hp["beta2_decay"], hp["eps"], hp["d"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, st in zip(params, grads, states):
            dt = p.dtype
            e1 = jnp.finfo(dt).eps if eps1 is None else eps1
            g = signed(g, hp["maximize"])
            step = st[0] + 1
            t = f64(step)
            one_minus_beta2_t = (t ** f64(beta2_decay)).astype(dt)
            rho_t = jnp.minimum(f64(lr), 1 / jnp.sqrt(t))
            rms_p = f64(jnp.sqrt(jnp.sum(p * p))) / f64(p.size) ** 0.5
            alpha = jnp.maximum(f64(eps2), rms_p) * rho_t
            p = p * (1 - f64(lr) * f64(wd)).astype(dt)
            if factored:
                row_mean = jnp.square(jnp.sqrt(jnp.sum(g * g, axis=-1, keepdims=True))) / g.shape[-1]
                col_mean = jnp.square(jnp.sqrt(jnp.sum(g * g, axis=-2, keepdims=True))) / g.shape[-2]
                row_var = lerp(st[1], row_mean, one_minus_beta2_t)
                col_var = lerp(st[2], col_mean, one_minus_beta2_t)
                var_est = jnp.matmul(row_var, col_var)
                var_est = var_est / jnp.maximum(jnp.mean(row_var, axis=-2, keepdims=True), jnp.asarray(e1, dt))
                state = [step, row_var, col_var]
            else:
                variance = lerp(st[1], g * g, one_minus_beta2_t)
                var_est = variance
                state = [step, variance]
            update = lax.rsqrt(jnp.maximum(var_est, jnp.asarray(e1 * e1, dt))) * g
            rms_u = f64(jnp.sqrt(jnp.sum(update * update))) / (f64(update.size) ** 0.5 * f64(d))
            denom = jnp.maximum(1.0, rms_u)
            new_p.append(p + (-alpha / denom).astype(dt) * update)
            new_s.append(state)
        return new_p, new_s
