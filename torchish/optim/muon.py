"""Muon (PyTorch's ``torch.optim.Muon``): momentum SGD whose update is orthogonalised by a quintic Newton-Schulz
iteration run in bfloat16, for 2-D parameters. The iteration follows PyTorch's ops: bfloat16 products accumulated
in float32 and rounded once per ``addmm``."""
from __future__ import annotations

import math

import jax.numpy as jnp

from ._arith import lerp
from .optimizer import Optimizer, zeros_like_param

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _addmm(m, a, b, beta=1.0, alpha=1.0):
    """``torch.addmm`` on bfloat16: ``beta * m + alpha * (a @ b)`` in float32, rounded once."""
    prod = jnp.matmul(a, b, preferred_element_type=jnp.float32)
    return (beta * m.astype(jnp.float32) + alpha * prod).astype(m.dtype)


def _newton_schulz(grad, coefficients, steps, eps):
    a, b, c = coefficients
    x = grad.astype(jnp.bfloat16)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = jnp.sqrt(jnp.sum(jnp.square(x.astype(jnp.float32)))).astype(jnp.bfloat16)
    x = (x.astype(jnp.float32) / jnp.maximum(norm, jnp.asarray(eps, jnp.bfloat16)).astype(jnp.float32)) \
        .astype(jnp.bfloat16)
    for _ in range(steps):
        gram = jnp.matmul(x, x.T, preferred_element_type=jnp.float32).astype(jnp.bfloat16)
        gram_update = _addmm(gram, gram, gram, beta=b, alpha=c)
        x = _addmm(x, gram_update, x, beta=a)
    return x.T if tall else x


def _adjusted_ratio(adjust_lr_fn, shape):
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, A / B))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(A, B))
    return 1.0


class Muon(Optimizer):
    """Muon for 2-D parameters (hidden layers' weights; optimise biases and embeddings with e.g. AdamW).

    State per parameter: ``momentum_buffer``.

    Example::

        opt = torchish.optim.Muon([model.hidden.weight], lr=1e-3, momentum=0.95)
    """

    _hyper = ("lr", "weight_decay", "momentum", "ns_coefficients", "eps")

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        from .._tensor import Tensor
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _step_group(self, group, params=None):
        params = [p for p in (group["params"] if params is None else params) if p.grad is not None]
        for p in params:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if p.grad.is_sparse:
                self._check_sparse_grad(group)
        if params and int(group["ns_steps"]) >= 100:
            raise ValueError("Number of steps must be less than 100 for computational efficiency")
        if params and len(group["ns_coefficients"]) != 3:
            raise ValueError("Coefficients must be a tuple of exactly 3 values")
        # one update per distinct shape: the learning-rate adjustment depends on it
        for shape in dict.fromkeys(tuple(p.shape) for p in params):
            self._shape = shape
            super()._step_group(group, [p for p in params if tuple(p.shape) == shape])

    def _state_keys(self, group):
        return ("momentum_buffer",)

    def _init_state(self, p, group):
        return {"momentum_buffer": zeros_like_param(p)}

    def _static(self, group):
        return {"nesterov": bool(group["nesterov"]), "ns_steps": int(group["ns_steps"]),
                "ratio": _adjusted_ratio(group["adjust_lr_fn"], self._shape)}

    @staticmethod
    def _update(params, grads, states, hp, *, nesterov, ns_steps, ratio):
        lr, wd, mom, eps = hp["lr"], hp["weight_decay"], hp["momentum"], hp["eps"]
        new_p, new_s = [], []
        for p, g, (buf,) in zip(params, grads, states):
            dt = p.dtype
            buf = lerp(buf, g, jnp.asarray(1 - mom, dt))
            update = lerp(g, buf, jnp.asarray(mom, dt)) if nesterov else buf
            update = _newton_schulz(update, hp["ns_coefficients"], ns_steps, eps)
            p = p * jnp.asarray(1 - lr * wd, dt)
            new_p.append(p + jnp.asarray(-(lr * ratio), dt) * update.astype(dt))
            new_s.append([buf])
        return new_p, new_s
