"""``torchish.func.grad``, ``grad_and_value``, ``vjp``, ``jvp`` and ``linearize`` over ``jax.grad`` / ``jax.vjp`` /
``jax.jvp`` / ``jax.linearize``.

Example::

    >>> from torchish.func import grad
    >>> grad(lambda x: (x ** 2).sum())(torchish.tensor([1.0, 2.0]))
    tensor([2., 4.])
"""
from __future__ import annotations

import functools

import jax

from .._tensor import Tensor
from ._common import (Static, check_tensor_outputs, conj_complex, diff_values, flatten, grad_value,
                      normalize_argnums, split_aux, structure_str, to_tensors, to_values, transform_scope,
                      unflatten_values, with_args)
from ._outer_autograd import differentiable_outside


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, returning ``(gradients, value)`` (``(gradients, (value, aux))`` with ``has_aux``).

    Example:
        >>> g, v = grad_and_value(lambda x: (x * x).sum())(torchish.tensor([3.0]))
        >>> g, v
        (tensor([6.]), tensor(9.))
    """
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, single = normalize_argnums(argnums, len(args))
        diff = tuple(diff_values(args[i]) for i in nums)
        box = {}

        def scalar_fn(diff_vals):
            with transform_scope():
                out = func(*with_args(args, nums, diff_vals), **kwargs)
            out, aux = split_aux(out, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.ndim != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with {out.ndim} "
                                   "dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            box["aux"] = Static(aux, has_aux)
            return grad_value(out), (out._d, box["aux"].values)

        grads, (value, aux_vals) = jax.grad(scalar_fn, has_aux=True)(diff)
        grads = to_tensors(conj_complex(grads))
        grads = grads[0] if single else grads
        value = Tensor._make(value)
        if has_aux:
            return grads, (value, box["aux"].rebuild(aux_vals))
        return grads, value

    return differentiable_outside(wrapper, "GradBackward0")


def grad(func, argnums=0, has_aux=False):
    """The gradient of the scalar function ``func`` with respect to the arguments at ``argnums``.

    Args:
        func: a function of Tensors (pytrees of Tensors) returning a 0-dim Tensor (or ``(output, aux)``).
        argnums: the position (or tuple of positions) of the arguments to differentiate.
        has_aux: whether ``func`` returns ``(output, aux)``; aux is returned beside the gradients.

    Returns:
        A function returning gradients shaped like ``args[argnums]`` (a tuple for a tuple of argnums).

    Example:
        >>> from torchish.func import grad
        >>> grad(grad(lambda x: x.sin()))(torchish.tensor(0.5))   # -sin(0.5)
        tensor(-0.4794)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns one gradient per primal (a tuple).

    Example:
        >>> out, vjp_fn = vjp(torchish.sin, torchish.tensor([0.0, 1.0]))
        >>> vjp_fn(torchish.ones(2))
        (tensor([1.0000, 0.5403]),)
    """
    result = differentiable_outside(_vjp, "VjpBackward0")(func, *primals, has_aux=has_aux)
    if not any(isinstance(t, Tensor) and t.requires_grad for t in flatten(result[0])[0]):
        return result  # (nothing recorded outside: its vjp_fn is the pullback itself)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        # recorded too: the gradients depend on the primals (and what func captured) as well as on the cotangents
        def pull(prims, cts):
            return _vjp(func, *prims, has_aux=has_aux)[1](cts)
        return differentiable_outside(pull, "VjpBackward0")(primals, cotangents)

    return (result[0], vjp_fn) + tuple(result[2:])


def _vjp(func, *primals, has_aux):
    api = "vjp(f, *primals)"
    diff = tuple(diff_values(p) for p in primals)
    box = {}

    def fn(*diff_vals):
        with transform_scope():
            out = func(*to_tensors(diff_vals))
        out, aux = split_aux(out, has_aux, api)
        check_tensor_outputs(out, api)
        box["aux"] = Static(aux, has_aux)
        return to_values(out), box["aux"].values

    out_vals, pullback, aux_vals = jax.vjp(fn, *diff, has_aux=True)
    out_leaves, out_tree = jax.tree_util.tree_flatten(out_vals)
    outputs = to_tensors(out_vals)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, ct_tree = flatten(cotangents)
        if ct_tree != out_tree:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {structure_str(cotangents)}, primal output: "
                               f"{structure_str(outputs)}")
        cts = []
        for i, (c, o) in enumerate(zip(ct_leaves, out_leaves)):
            if not isinstance(c, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(c.shape)}) "
                                   f"and output[{i}] has a shape of torch.Size({list(o.shape)}).")
            cts.append(c._d.astype(o.dtype))
        return to_tensors(conj_complex(pullback(conj_complex(unflatten_values(out_tree, cts)))))

    if has_aux:
        return outputs, vjp_fn, box["aux"].rebuild(aux_vals)
    return outputs, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product by forward mode.

    Example:
        >>> jvp(torchish.sin, (torchish.tensor([0.0]),), (torchish.tensor([2.0]),))
        (tensor([0.]), tensor([2.]))
    """
    return differentiable_outside(_jvp, "JvpBackward0")(func, primals, tangents, has_aux=has_aux)


def _jvp(func, primals, tangents, *, has_aux):
    api = "jvp(f, primals, tangents)"
    for name, x in (("primals", primals), ("tangents", tangents)):
        if not isinstance(x, tuple):
            raise RuntimeError(f"{api}: Expected {name} to be a tuple. E.g. it should be valid to call f(*primals).")
    p_leaves, p_tree = flatten(primals)
    t_leaves, t_tree = flatten(tangents)
    if p_tree != t_tree:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, if "
                           "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{structure_str(primals)} and tangents with structure {structure_str(tangents)}")
    diff = diff_values(primals)
    tans = []
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
        tans.append(t._d.astype(p._v.dtype))
    box = {}

    def fn(*diff_vals):
        with transform_scope(forward=True):
            out = func(*to_tensors(diff_vals))
        out, aux = split_aux(out, has_aux, api)
        check_tensor_outputs(out, api)
        box["aux"] = Static(aux, has_aux)
        return to_values(out), box["aux"].values

    out, tangent_out, aux_vals = jax.jvp(fn, diff, tuple(unflatten_values(p_tree, tans)), has_aux=True)
    if has_aux:
        return to_tensors(out), to_tensors(tangent_out), box["aux"].rebuild(aux_vals)
    return to_tensors(out), to_tensors(tangent_out)


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at ``primals``, the
    forward pass traced once and reused for every call.

    Example:
        >>> out, jvp_fn = linearize(torchish.sin, torchish.tensor([0.0, 1.0]))
        >>> jvp_fn(torchish.ones(2))
        tensor([1.0000, 0.5403])
    """
    api = "linearize(f, *primals)"
    p_leaves, p_tree = flatten(primals)
    for p in p_leaves:
        if isinstance(p, Tensor) and not (p.is_floating_point() or p.is_complex()):
            raise ValueError(f"Expected primal to be floating point or complex, but got: {p.dtype}")
    diff = diff_values(primals)

    def fn(*diff_vals):
        with transform_scope(forward=True):
            out = func(*to_tensors(diff_vals))
        check_tensor_outputs(out, api)
        return to_values(out)

    out, lin = jax.linearize(fn, *diff)

    def jvp_fn(*tangents):
        t_leaves, t_tree = flatten(tangents)
        if t_tree != p_tree:
            raise RuntimeError(f"Expected the tangents {structure_str(tangents)} to have the same argspec as the "
                               f"primals {structure_str(primals)}")
        tans = []
        for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"Expected the tangents {structure_str(tangents)} to have the same argspec as the "
                                   f"primals {structure_str(primals)}")
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(f"tangent:{i} with shape torch.Size({list(t.shape)}) in flattened pytree doesn't "
                                   f"match the shape torch.Size({list(p.shape)}) of the corresponding primal.")
            if t.dtype != p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{p.dtype} of the corresponding primal.")
            tans.append(t._d)
        return to_tensors(lin(*unflatten_values(p_tree, tans)))

    return to_tensors(out), jvp_fn
