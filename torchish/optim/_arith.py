"""The arithmetic the optimizers' update rules share: PyTorch's rounding of ``lerp_`` and ``addcmul_``, the double
precision of its bias corrections, ``maximize``, complex parameters stepped as their real views, and the rounding of
float16/bfloat16 parameters' steps (``half_kernels``: PyTorch's single-tensor kernels compute each in-place op in
float32 and round its result once)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp


def signed(g, maximize):
    """``-g`` when maximizing (``maximize`` may be a traced bool: negation is exact either way)."""
    if maximize is True:
        return -g
    if maximize is False or maximize is None:
        return g
    return jnp.where(maximize, -g, g)


def lerp(start, end, weight):
    """``start.lerp_(end, weight)`` with PyTorch's rounding (it picks the formula by ``weight < 0.5``)."""
    return jnp.where(jnp.abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight))


def ema_sq(avg, g, beta):
    """``avg.mul_(beta).addcmul_(g, g, value=1 - beta)`` in PyTorch's order of operations."""
    return avg * beta + (1 - beta) * g * g


def f64(x):
    """A step count or Python-side scalar as float64: PyTorch computes bias corrections in double precision."""
    return jnp.asarray(x).astype(jnp.float64)


HALF = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))


def half_kernels(dt):
    """``(r, s)`` for writing a float16/bfloat16 parameter's step as PyTorch's single-tensor kernels round it: each
    in-place op computes in float32 and rounds its result to ``dt`` once (``r``: round, widen again for the next
    op); a Python scalar enters a kernel computed in double, used in float32 (``s``). Written in the half type
    instead, every product rounds (and 0.999 as a bfloat16 weight is 1.0)."""
    def r(x):
        return x.astype(dt).astype(jnp.float32)

    def s(x):
        return f64(x).astype(jnp.float32)
    return r, s


def coupled_decay(g, p, wd):
    """``grad.add(param, alpha=weight_decay)``, skipped at 0 as PyTorch's optimizers skip it (``0 * p`` would turn
    an inf or NaN parameter's gradient into NaN); ``wd`` is a number or a program's value (a select then)."""
    if isinstance(wd, (int, float)):
        return g + wd * p if wd else g
    return jnp.where(wd != 0, g + wd * p, g)


def half_coupled_decay(g, p, wd, r, s):
    """``grad.add(param, alpha=wd)`` of a half parameter (float32 values of ``half_kernels``): the alpha rounded
    to the half type; skipped at 0 as PyTorch does (an inf parameter stays out of the gradient)."""
    return jnp.where(s(wd) != 0, r(g + r(s(wd)) * p), g)


@functools.cache
def as_real(update):
    """``update`` stepping a complex parameter as PyTorch's optimizers do: as its ``view_as_real`` (the real and
    imaginary parts two independent real entries), its gradient and its complex state likewise, so that Adam's
    second moment is ``re(g)**2, im(g)**2`` and not ``|g|**2``. One wrapper per update function (kernels are cached
    by it); parameters that are all real pass through unchanged."""
    def run(params, grads, states, hp, **static):
        if not any(jnp.iscomplexobj(p) for p in params):
            return update(params, grads, states, hp, **static)
        new_p, new_s = update([real_view(p) for p in params], [real_view(g) for g in grads],
                              [[real_view(s) for s in row] for row in states], hp, **static)
        return ([complex_back(n, p) for n, p in zip(new_p, params)],
                [[complex_back(n, s) for n, s in zip(new_row, row)] for new_row, row in zip(new_s, states)])
    return run


@functools.cache
def in_place(update):
    """``update`` (through :func:`as_real`) with PyTorch's in-place writes: each new parameter and state value has
    the dtype its old value had (``param.add_``, ``buf.mul_(momentum).add_(grad)`` cast to the written tensor), so
    a state made before ``model.double()`` stays float32 and a parameter keeps its dtype; a no-op (no convert in
    the program) where the dtypes agree. One wrapper per update function (kernels are cached by it)."""
    update = as_real(update)

    def run(params, grads, states, hp, **static):
        new_p, new_s = update(params, grads, states, hp, **static)
        return ([_as_dtype(n, p) for n, p in zip(new_p, params)],
                [[_as_dtype(n, s) for n, s in zip(new_row, row)] for new_row, row in zip(new_s, states)])
    return run


def _as_dtype(new, old):
    return new.astype(old.dtype) if hasattr(old, "dtype") and new.dtype != old.dtype else new


def real_view(v):
    """``torch.view_as_real`` of a complex array (a trailing axis of 2: real, imaginary); a real one as it is."""
    return jnp.stack([jnp.real(v), jnp.imag(v)], -1) if jnp.iscomplexobj(v) else v


def complex_back(v, like):
    """The inverse of :func:`real_view` when ``like`` is complex (back to its dtype); ``v`` as it is otherwise."""
    return jax.lax.complex(v[..., 0], v[..., 1]).astype(like.dtype) if jnp.iscomplexobj(like) else v


def half_moments(p, g, m, v, lr, b1, b2, wd, decoupled):
    """The prologue of Adam's, NAdam's and RAdam's half-parameter steps, in float32 values rounded as
    ``half_kernels`` rounds them: the weight decay (``mul_(1 - lr wd)`` when decoupled, else ``add(param,
    alpha=wd)``), ``exp_avg.lerp_(grad, 1 - beta1)`` and ``exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 -
    beta2)``. Returns ``(p, g, m, v, r, s)``."""
    f32 = jnp.float32
    r, s = half_kernels(p.dtype)
    p, g = p.astype(f32), g.astype(f32)
    if decoupled:
        p = r(p * s(1 - f64(lr) * f64(wd)))
    else:
        g = half_coupled_decay(g, p, wd, r, s)
    m = r(lerp(m.astype(f32), g, s(1 - f64(b1))))
    v = r(r(v.astype(f32) * s(b2)) + s(1 - f64(b2)) * g * g)
    return p, g, m, v, r, s
