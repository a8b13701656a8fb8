"""RMSprop, Adagrad and Adadelta: per-coordinate step sizes from running sums of squared gradients, with
PyTorch's formulas (eps outside the square root for RMSprop/Adagrad, inside for Adadelta; coupled weight decay
after ``maximize``)."""
from __future__ import annotations

import jax.numpy as jnp

from ._arith import coupled_decay, ema_sq, f64, HALF, half_coupled_decay, half_kernels, lerp, signed
from .optimizer import Optimizer, check_lr, check_nonneg, scalar_tensor, zeros_like_param


def _rmsprop_half(p, g, sq, buf, ga, lr, alpha, eps, wd, mom, foreach):
    """One RMSprop step of a float16/bfloat16 parameter in PyTorch's single-tensor order, each op rounded once
    (``half_kernels``): add(param, alpha=wd), mul_ + addcmul_, lerp_, addcmul(value=-1) + sqrt_, add_(eps),
    mul_ + addcdiv_ and add_(buf, alpha=-lr) (the alpha rounded to the half type), or addcdiv_(value=-lr).
    ``foreach``: the same ops as _foreach ops, whose mul_ by a Python scalar rounds the scalar to the half type."""
    dt, f32 = p.dtype, jnp.float32
    r, s = half_kernels(dt)
    ms = (lambda x: r(s(x))) if foreach else s  # a mul_'s scalar
    p, g, sq = p.astype(f32), g.astype(f32), sq.astype(f32)
    g = half_coupled_decay(g, p, wd, r, s)
    sq = r(r(sq * ms(alpha)) + s(1 - f64(alpha)) * g * g)
    if ga is not None:
        ga = r(lerp(ga.astype(f32), g, s(1 - f64(alpha))))
        avg = r(jnp.sqrt(r(sq + s(-1.0) * ga * ga)))
    else:
        avg = r(jnp.sqrt(sq))
    avg = r(avg + r(s(eps)))
    if buf is not None:
        buf = r(r(buf.astype(f32) * ms(mom)) + g / avg)
        p = p + r(s(-f64(lr))) * buf
    else:
        p = p + s(-f64(lr)) * g / avg
    return [x if x is None else x.astype(dt) for x in (p, sq, buf, ga)]


class RMSprop(Optimizer):
    """RMSprop (PyTorch's ``torch.optim.RMSprop``): ``alpha`` smoothing, ``centered`` (divide by the estimated
    variance), optional momentum buffer.

    Example::

        opt = torchish.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.99, momentum=0.9, centered=True)
    """

    _hyper = ("lr", "alpha", "eps", "weight_decay", "momentum", "maximize")
    _group_defaults = (("momentum", 0), ("centered", False), ("foreach", None), ("maximize", False),
                       ("differentiable", False), ("capturable", False))
    _scalar_state = ("step",)
    _capturable_check = (("params and state_steps", True),) * 2
    _lerp_state = ("grad_avg",)  # (centered: grad_avg.lerp_(grad, 1 - alpha))

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        check_nonneg("epsilon value", eps)
        check_nonneg("momentum value", momentum)
        check_nonneg("weight_decay value", weight_decay)
        check_nonneg("alpha value", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return (("step", "square_avg") + (("momentum_buffer",) if group["momentum"] > 0 else ())
                + (("grad_avg",) if group["centered"] else ()))

    def _init_state(self, p, group):
        st = {"step": scalar_tensor(0.0), "square_avg": zeros_like_param(p)}
        if group["momentum"] > 0:
            st["momentum_buffer"] = zeros_like_param(p)
        if group["centered"]:
            st["grad_avg"] = zeros_like_param(p)
        return st

    def _static(self, group):
        return {"momentum": group["momentum"] > 0, "centered": bool(group["centered"]),
                "foreach": bool(group["foreach"])}

    def _counted_before_lerp(self, group, p):
        new = super()._counted_before_lerp(group, p)  # (and square_avg, updated before grad_avg's lerp_)
        sq, g, wd = self.state[p]["square_avg"], p.grad._d, group["weight_decay"]
        if wd:
            g = g + wd * p._d
        new["square_avg"] = ema_sq(sq._d, g, group["alpha"]).astype(sq._d.dtype)
        return new

    @staticmethod
    def _update(params, grads, states, hp, *, momentum, centered, foreach):
        lr, alpha, eps, wd, mom = hp["lr"], hp["alpha"], hp["eps"], hp["weight_decay"], hp["momentum"]
        new_p, new_s = [], []
        for p, g, st in zip(params, grads, states):
            step, sq = st[0] + 1, st[1]
            g = signed(g, hp["maximize"])
            if p.dtype in HALF:
                p, sq, buf, ga = _rmsprop_half(p, g, sq, st[2] if momentum else None, st[-1] if centered else None,
                                               lr, alpha, eps, wd, mom, foreach)
                new_p.append(p)
                new_s.append([step, sq] + ([buf] if momentum else []) + ([ga] if centered else []))
                continue
            g = coupled_decay(g, p, wd)
            sq = ema_sq(sq, g, alpha).astype(sq.dtype)  # (in-place writes keep the state's dtype: model.double()
            row = [step, sq]                               # after the state was made leaves it float32)
            if centered:
                ga = lerp(st[-1], g, 1 - alpha)
                avg = jnp.sqrt(sq - ga * ga) + eps
            else:
                avg = jnp.sqrt(sq) + eps
            if momentum:
                buf = (st[2] * mom + g / avg).astype(st[2].dtype)
                row.append(buf)
                p = p - lr * buf
            else:
                p = p - lr * g / avg
            if centered:
                row.append(ga)
            new_p.append(p)
            new_s.append(row)
        return new_p, new_s


class Adagrad(Optimizer):
    """Adagrad (PyTorch's ``torch.optim.Adagrad``): ``lr / (1 + (step - 1) * lr_decay)`` over the root of the
    running sum of squared gradients. As in PyTorch, the state (``step``, ``sum``) of every parameter is created
    when the optimizer is constructed, filled with ``initial_accumulator_value``.

    Example::

        opt = torchish.optim.Adagrad(model.parameters(), lr=1e-2, lr_decay=1e-3)
    """

    _hyper = ("lr", "lr_decay", "eps", "weight_decay", "maximize")
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False), ("fused", None))
    _scalar_state = ("step",)
    _fused_check_first = True

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        check_nonneg("lr_decay value", lr_decay)
        check_nonneg("weight_decay value", weight_decay)
        check_nonneg("initial_accumulator_value value", initial_accumulator_value)
        check_nonneg("epsilon value", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(p, group))

    def _state_keys(self, group):
        return ("step", "sum")

    def _check_sparse_grad(self, group):
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")

    def _init_state(self, p, group):
        # PyTorch fills from the constructor's value, also for groups added later; a complex parameter's sum
        # starts at complex(value, value) (its real and imaginary parts are two entries)
        value = self.defaults["initial_accumulator_value"]
        return {"step": scalar_tensor(0.0),
                "sum": zeros_like_param(p, complex(value, value) if p.is_complex() else value)}

    def _static(self, group):
        return {"foreach": bool(group["foreach"])}

    @staticmethod
    def _update(params, grads, states, hp, *, foreach):
        lr, lr_decay, eps, wd = hp["lr"], hp["lr_decay"], hp["eps"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, (step, acc) in zip(params, grads, states):
            step = step + 1
            g = signed(g, hp["maximize"])
            clr = lr / (1 + (f64(step) - 1) * lr_decay)
            if p.dtype in HALF:  # add(param, alpha=wd), addcmul_, sqrt, add_(eps), addcdiv_: each rounded once
                dt, f32 = p.dtype, jnp.float32
                r, s = half_kernels(dt)
                p, g = p.astype(f32), g.astype(f32)
                g = half_coupled_decay(g, p, wd, r, s)
                acc = r(acc.astype(f32) + g * g)
                std = r(r(jnp.sqrt(acc)) + r(s(eps)))
                if foreach:  # numerator = grads * minus_clr, addcdiv_: in place (_foreach_mul_, after a weight decay
                    mx = hp["maximize"]  # or maximize made a copy of the gradients) the scalar rounds to the half type
                    inplace = jnp.logical_or(f64(wd) != 0, bool(mx) if mx is None or isinstance(mx, bool) else mx)
                    new_p.append((p + r(g * jnp.where(inplace, r(s(-clr)), s(-clr))) / std).astype(dt))
                else:
                    new_p.append((p + s(-clr) * g / std).astype(dt))
                new_s.append([step, acc.astype(dt)])
                continue
            g = coupled_decay(g, p, wd)
            clr = clr.astype(p.dtype)
            acc = (acc + g * g).astype(acc.dtype)  # (in place: the state's dtype, as sq in RMSprop)
            new_p.append(p - clr * g / (jnp.sqrt(acc) + eps))
            new_s.append([step, acc])
        return new_p, new_s


class Adadelta(Optimizer):
    """Adadelta (PyTorch's ``torch.optim.Adadelta``): the step is ``sqrt(acc_delta + eps) / sqrt(square_avg +
    eps) * grad``, scaled by ``lr``.

    Example::

        opt = torchish.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9)
    """

    _hyper = ("lr", "rho", "eps", "weight_decay", "maximize")
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))
    _scalar_state = ("step",)
    _capturable_check = (("params and state_steps", False),) * 2

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonneg("epsilon value", eps)
        check_nonneg("weight_decay value", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_keys(self, group):
        return ("step", "square_avg", "acc_delta")

    def _init_state(self, p, group):
        return {"step": scalar_tensor(0.0), "square_avg": zeros_like_param(p), "acc_delta": zeros_like_param(p)}

    @staticmethod
    def _update(params, grads, states, hp, **static):
        lr, rho, eps, wd = hp["lr"], hp["rho"], hp["eps"], hp["weight_decay"]
        new_p, new_s = [], []
        for p, g, (step, sq, acc) in zip(params, grads, states):
            g = signed(g, hp["maximize"])
            if p.dtype in HALF:  # add(param, alpha=wd), mul_ + addcmul_, add(eps).sqrt_() twice, div_, mul_,
                dt, f32 = p.dtype, jnp.float32  # mul_ + addcmul_, add_(delta, alpha=-lr): each rounded once
                r, s = half_kernels(dt)
                p, g, sq, acc = p.astype(f32), g.astype(f32), sq.astype(f32), acc.astype(f32)
                g = half_coupled_decay(g, p, wd, r, s)
                sq = r(r(sq * s(rho)) + s(1 - f64(rho)) * g * g)
                e = r(s(eps))
                delta = r(r(r(jnp.sqrt(r(acc + e))) / r(jnp.sqrt(r(sq + e)))) * g)
                acc = r(r(acc * s(rho)) + s(1 - f64(rho)) * delta * delta)
                new_p.append((p + r(s(-f64(lr))) * delta).astype(dt))
                new_s.append([step + 1, sq.astype(dt), acc.astype(dt)])
                continue
            g = coupled_decay(g, p, wd)
            sq = ema_sq(sq, g, rho).astype(sq.dtype)  # (in place: the state's dtypes, as in RMSprop; delta is
            delta = (jnp.sqrt(acc + eps) / jnp.sqrt(sq + eps) * g).astype(acc.dtype)  # made from acc_delta)
            acc = ema_sq(acc, delta, rho).astype(acc.dtype)
            new_p.append(p - lr * delta)
            new_s.append([step + 1, sq, acc])
        return new_p, new_s
