"""SGD with momentum, dampening, Nesterov, weight decay and maximize — PyTorch's update, one jitted call per
group."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ._arith import coupled_decay, HALF, half_coupled_decay, half_kernels, signed
from .optimizer import Optimizer, check_fused, required, zeros_like_param
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..compile.recorder import creating_state, scalar, static as static_flag
from ..ops import tracing


class SGD(Optimizer):
    """Stochastic gradient descent (PyTorch's ``torch.optim.SGD``).

    The first step with momentum starts the buffer at the (decayed) gradient itself, as PyTorch does; the state
    holds ``'momentum_buffer'`` only when ``momentum != 0``.

    Example::

        opt = torchish.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt.zero_grad(); loss.backward(); opt.step()
    """

    _hyper = ("lr", "momentum", "dampening", "weight_decay", "maximize")
    _group_defaults = (("nesterov", False), ("maximize", False), ("foreach", None), ("differentiable", False),
                       ("fused", False))
    _fused_check_first = True
    _fused_kernel = "fused_sgd_kernel"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr is not required and lr < 0.0:  # (PyTorch's SGD compares `lr < 0.0`, the others `0.0 <= lr`)
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _state_keys(self, group):
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _prepare_state(self, p, group):
        # PyTorch touches the state only with momentum, and its first step copies the gradient into a new buffer
        if group["momentum"] != 0:
            st = self.state[p]
            if st.get("momentum_buffer") is None:
                creating_state()
                st["momentum_buffer"] = zeros_like_param(p)
                self._fresh.add(id(p))

    def _check_sparse_grad(self, group):
        if group["weight_decay"] != 0:  # PyTorch's decay adds the dense parameter to the sparse gradient
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    def _step_group(self, group):
        self._fresh = set()
        try:
            super()._step_group(group)
            if group["momentum"] != 0:
                self._sparse_buffers(group)
        finally:
            self._fresh = set()
        if group["foreach"] and group["nesterov"] and group["momentum"] != 0 and not static_flag(group, "maximize") \
                and static_flag(group, "weight_decay") == 0:
            # PyTorch's foreach implementation adds the momentum term into the gradients in place here (its
            # `_foreach_add_(device_grads, bufs, alpha=momentum)`, when no maximize or weight decay made a copy of
            # them first): p.grad after step() is the Nesterov direction
            m = scalar(group, "momentum")  # (a traced value under torchish.compile: a scheduler may cycle it)
            with no_grad():
                for p in group["params"]:
                    if p.grad is not None:
                        buf = self.state[p]["momentum_buffer"]
                        p.grad.add_(buf * Tensor._make(jnp.asarray(m, buf._v.dtype)))

    def _sparse_buffers(self, group):
        """Give the momentum buffers of sparse gradients PyTorch's entries (its buffer is then sparse too): a
        clone of the gradient's the first time, then ``buf.mul_(momentum).add_(grad, alpha=1 - dampening)``'s
        merge. The values were updated densely (the same numbers); a buffer made dense stays dense."""
        if tracing.active():
            return
        from ..sparse import _COO, _merged, mark_sparse
        mom, damp = group["momentum"], group["dampening"]
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            buf = self.state[p]["momentum_buffer"]
            if g._coo is None:
                if buf._coo is not None:  # (PyTorch refuses a dense gradient into a sparse buffer; here it is
                    buf._coo = None       # dense from now on)
                continue
            coo = g._coo
            values = -coo.values if group["maximize"] else coo.values
            if id(p) in self._fresh:
                mark_sparse(buf, _COO(coo.indices, values.to(buf.dtype), coo.coalesced))
            elif buf._coo is not None:
                old = buf._coo
                mark_sparse(buf, _merged(_COO(old.indices, old.values * mom, old.coalesced),
                                         _COO(coo.indices, values * (1 - damp), coo.coalesced, coo.contiguous),
                                         buf.dtype, tuple(buf.shape)))

    def _hyper_values(self, group, params):
        hp = super()._hyper_values(group, params)
        hp["first"] = tuple(id(p) in self._fresh for p in params if p.grad is not None)
        return hp

    def _static(self, group):
        return {"nesterov": bool(group["nesterov"]), "momentum": group["momentum"] != 0}

    @staticmethod
    def _update(params, grads, states, hp, *, nesterov, momentum):
        lr, mom, damp, wd = hp["lr"], hp["momentum"], hp["dampening"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, st, first in zip(params, grads, states, hp["first"]):
            g = signed(g, hp["maximize"])
            if p.dtype in HALF:
                new_p.append(_half_step(p, g, st, first, new_s, lr, mom, damp, wd, nesterov, momentum))
                continue
            g = coupled_decay(g, p, wd)
            if momentum:
                # (the first buffer is a detached copy of the gradient: differentiable=True takes no graph through it)
                buf = jnp.where(first, jax.lax.stop_gradient(g), st[0] * mom + (1 - damp) * g)
                buf = buf.astype(st[0].dtype)  # (written in place: a float32 buffer of a model.double()'d param)
                g = g + mom * buf if nesterov else buf
                new_s.append([buf])
            else:
                new_s.append([])
            new_p.append(p - lr * g)
        return new_p, new_s


def _half_step(p, g, st, first, new_s, lr, mom, damp, wd, nesterov, momentum):
    """One SGD step of a float16/bfloat16 parameter in PyTorch's single-tensor order, each op rounded once
    (``half_kernels``; the alphas of add rounded to the half type): add(param, alpha=wd), buf.mul_(momentum)
    .add_(grad, alpha=1 - dampening) (a clone of the gradient the first time), add(buf, alpha=momentum) for
    Nesterov, param.add_(grad, alpha=-lr)."""
    dt, f32 = p.dtype, jnp.float32
    r, s = half_kernels(dt)
    p, g = p.astype(f32), g.astype(f32)
    g = half_coupled_decay(g, p, wd, r, s)
    if momentum:
        buf = jnp.where(first, jax.lax.stop_gradient(g), r(r(st[0].astype(f32) * s(mom)) + r(s(1 - damp)) * g))
        g = r(g + r(s(mom)) * buf) if nesterov else buf
        new_s.append([buf.astype(dt)])
    else:
        new_s.append([])
    return (p + r(s(-lr)) * g).astype(dt)
