"""``torchish.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp.

Without ``create_graph`` the user's function is traced into a pure JAX function and differentiated with JAX's own
transforms (``jax.vjp``/``jax.jvp``/``jax.jacrev``), so a Jacobian costs one vectorised program instead of one
backward per output element. With ``create_graph=True`` the results must stay connected to the caller's graph, so
they are computed with the torchish engine (``autograd.grad`` with ``create_graph=True``), as PyTorch does.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from . import engine
from .grad_mode import no_grad, enable_grad


def _tuple(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True)


def _check_tensors(xs, what):
    for i, x in enumerate(xs):
        if not isinstance(x, Tensor):
            raise TypeError(f"The {what} given to the function must be either a Tensor or a tuple of Tensors but "
                            f"the value at index {i} has type {type(x).__name__}.")


def pure(func, n_in):
    """``func`` over Tensors as a pure function over JAX arrays (run on tracers, recording off)."""
    from ..ops.tracing import tracing_scope

    def f(*arrays):
        with tracing_scope(), no_grad():
            out = func(*[Tensor._make(a) for a in arrays])
        if isinstance(out, Tensor):
            return out._d
        if isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                if not isinstance(o, Tensor):
                    raise TypeError(f"The outputs of the user-provided function given to jacobian must be either a "
                                    f"Tensor or a tuple of Tensors but the value at index {i} has type "
                                    f"{type(o).__name__}.")
            return tuple(o._d for o in out)
        raise TypeError(f"The outputs of the user-provided function must be either a Tensor or a tuple of Tensors "
                        f"but the given outputs of the user-provided function has type {type(out).__name__}.")
    return f


def _wrap(tree):
    return jax.tree_util.tree_map(Tensor._make, tree)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    inputs, single_in = _tuple(inputs)
    _check_tensors(inputs, "inputs")
    if create_graph:
        return _engine_vjp(func, inputs, v, single_in)
    out, pull = jax.vjp(pure(func, len(inputs)), *[x._d for x in inputs])
    if v is None:
        if not isinstance(out, tuple) and out.size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        ct = jnp.ones_like(out) if not isinstance(out, tuple) else tuple(jnp.ones_like(o) for o in out)
    else:
        ct = v._d if isinstance(v, Tensor) else tuple(t._d for t in v)
        shapes = (out.shape,) if not isinstance(out, tuple) else tuple(o.shape for o in out)
        vshapes = (ct.shape,) if not isinstance(ct, tuple) else tuple(c.shape for c in ct)
        if shapes != vshapes:
            raise RuntimeError(f"Mismatch in shape: v has shape {list(vshapes[0])} but the output of the function "
                               f"has shape {list(shapes[0])}")
    grads = pull(ct)
    res = tuple(Tensor._make(g) for g in grads)
    return _wrap(out), res[0] if single_in else res


def _engine_vjp(func, inputs, v, single_in):
    with enable_grad():
        xs = tuple(x.detach().requires_grad_(True) if not x._rg else x for x in inputs)
        out = func(*xs)
        outs = out if isinstance(out, tuple) else (out,)
        vs = (v,) if isinstance(v, Tensor) or v is None else tuple(v)
        g = engine.grad(outs, xs, vs if v is not None else None, create_graph=True, allow_unused=True)
    g = tuple(gi if gi is not None else Tensor._make(jnp.zeros(x._d.shape, x._d.dtype)) for gi, x in zip(g, xs))
    return out, g[0] if single_in else g


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    inputs, single_in = _tuple(inputs)
    _check_tensors(inputs, "inputs")
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        tang = (jnp.ones_like(inputs[0]._d),)
    else:
        tang = (v._d,) if isinstance(v, Tensor) else tuple(t._d for t in v)
    out, t_out = jax.jvp(pure(func, len(inputs)), tuple(x._d for x in inputs), tang)
    return _wrap(out), _wrap(t_out)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs, single_in = _tuple(inputs)
    _check_tensors(inputs, "inputs")
    if create_graph:
        return _engine_jacobian(func, inputs, single_in)
    transform = jax.jacfwd if strategy == "forward-mode" else jax.jacrev
    f = pure(func, len(inputs))
    jac = transform(f, argnums=tuple(range(len(inputs))))(*[x._d for x in inputs])
    out_single = not isinstance(jax.eval_shape(f, *[x._d for x in inputs]), tuple)
    if out_single:
        res = tuple(Tensor._make(j) for j in jac)
        return res[0] if single_in else res
    res = tuple(tuple(Tensor._make(j) for j in row) for row in jac)
    return tuple(r[0] for r in res) if single_in else res


def _engine_jacobian(func, inputs, single_in):
    from ..ops.shape import stack, reshape
    with enable_grad():
        xs = tuple(x if x._rg else x.detach().requires_grad_(True) for x in inputs)
        out = func(*xs)
    outs, out_single = _tuple(out)
    rows_per_out = []
    for o in outs:
        flat = reshape(o, (-1,))
        per_in = [[] for _ in xs]
        for k in range(flat.shape[0]):
            g = engine.grad(flat[k], xs, retain_graph=True, create_graph=True, allow_unused=True)
            for i, (gi, x) in enumerate(zip(g, xs)):
                per_in[i].append(gi if gi is not None else Tensor._make(jnp.zeros(x._d.shape, x._d.dtype)))
        rows_per_out.append(tuple(reshape(stack(p), tuple(o.shape) + tuple(x.shape)) if p else
                                  Tensor._make(jnp.zeros(tuple(o.shape) + tuple(x.shape), x._d.dtype))
                                  for p, x in zip(per_in, xs)))
    if out_single:
        r = rows_per_out[0]
        return r[0] if single_in else r
    return tuple(r[0] for r in rows_per_out) if single_in else tuple(rows_per_out)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    inputs, single_in = _tuple(inputs)
    _check_tensors(inputs, "inputs")
    f = pure(func, len(inputs))
    out = jax.eval_shape(f, *[x._d for x in inputs])
    if isinstance(out, tuple) or out.size != 1:
        raise RuntimeError("The function given to hessian should return a single Tensor with a single element")

    def scalar(*a):
        return f(*a).reshape(())
    h = jax.hessian(scalar, argnums=tuple(range(len(inputs))))(*[x._d for x in inputs])
    res = tuple(tuple(Tensor._make(hij) for hij in row) for row in h)
    return res[0][0] if single_in else res


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    inputs, single_in = _tuple(inputs)
    _check_tensors(inputs, "inputs")
    f = pure(func, len(inputs))

    def scalar(*a):
        return f(*a).reshape(())
    tang = tuple(t._d for t in ((v,) if isinstance(v, Tensor) else v))
    out = scalar(*[x._d for x in inputs])
    _, hv = jax.jvp(jax.grad(scalar, argnums=tuple(range(len(inputs)))), tuple(x._d for x in inputs), tang)
    res = tuple(Tensor._make(t) for t in hv)
    return Tensor._make(out), res[0] if single_in else res


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    inputs, single_in = _tuple(inputs)
    _check_tensors(inputs, "inputs")
    f = pure(func, len(inputs))

    def scalar(*a):
        return f(*a).reshape(())
    g = jax.grad(scalar, argnums=tuple(range(len(inputs))))
    prim = tuple(x._d for x in inputs)
    _, pull = jax.vjp(g, *prim)
    vt = tuple(t._d for t in ((v,) if isinstance(v, Tensor) else v))
    res = tuple(Tensor._make(t) for t in pull(vt))
    return Tensor._make(scalar(*prim)), res[0] if single_in else res
