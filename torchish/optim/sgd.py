"""SGD with momentum, dampening, Nesterov, weight decay and maximize — PyTorch's update, one jitted call per
group."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .optimizer import Optimizer, required


def _check(name, value, cond, msg=None):
    if not cond:
        raise ValueError(msg or f"Invalid {name}: {value}")


class SGD(Optimizer):
    """Stochastic gradient descent (PyTorch's ``torch.optim.SGD``).

    Example::

        opt = torchish.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt.zero_grad(); loss.backward(); opt.step()
    """

    _hyper = ("lr", "momentum", "dampening", "weight_decay")

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and not isinstance(lr, float) and hasattr(lr, "item"):
            lr = lr.item()
        _check("learning rate", lr, lr is required or lr >= 0.0)
        _check("momentum value", momentum, momentum >= 0.0)
        _check("weight_decay value", weight_decay, weight_decay >= 0.0)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _init_state(self, p, group):
        return {"momentum_buffer": None} if group["momentum"] != 0 else {}

    def _step_group(self, group):
        # PyTorch's first step copies the gradient into a new momentum buffer; later steps update it
        self._first = ()
        if group["momentum"] != 0:
            firsts = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                fresh = st.get("momentum_buffer") is None
                if fresh:
                    st["momentum_buffer"] = Tensor._make(jnp.zeros(p._v.shape, p._v.dtype))
                firsts.append(fresh)
            self._first = tuple(firsts)
        super()._step_group(group)

    def _static(self, group):
        return {"nesterov": bool(group["nesterov"]), "maximize": bool(group["maximize"]),
                "momentum": group["momentum"] != 0, "first": self._first}

    @staticmethod
    def _update(params, grads, states, hp, *, nesterov, maximize, momentum, first):
        lr, mom, damp, wd = hp["lr"], hp["momentum"], hp["dampening"], hp["weight_decay"]
        new_p, new_s = [], []
        for i, (p, g, st) in enumerate(zip(params, grads, states)):
            g = -g if maximize else g
            g = g + wd * p
            if momentum:
                buf = g if first[i] else st[0] * mom + (1 - damp) * g
                g = g + mom * buf if nesterov else buf
                new_s.append([buf])
            else:
                new_s.append([])
            new_p.append(p - lr * g)
        return new_p, new_s
