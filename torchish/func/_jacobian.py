"""``torchish.func.jacrev``, ``jacfwd`` and ``hessian``.

``jacrev`` is ``jax.jacrev`` of the function; ``jacfwd`` pushes the standard basis through ``jax.jvp`` under
``jax.vmap`` (as JAX's own ``jacfwd``), written out here so that random ops follow its ``randomness`` argument.
Jacobians are nested as PyTorch nests them: the output's structure outside, the inputs' structure inside.

Example::

    >>> from torchish.func import jacrev
    >>> jacrev(torchish.sin)(torchish.tensor([0.0, 1.0]))
    tensor([[1.0000, 0.0000],
            [0.0000, 0.5403]])
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._common import (Static, check_tensor_outputs, diff_values, normalize_argnums, split_aux, to_tensors, to_values,
                      transform_scope, with_args)
from ._outer_autograd import differentiable_outside
from ._rng import batch_keys, check_randomness, key_source, source_for


def _check_chunk_size(chunk_size, api):
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def _value_fn(func, args, kwargs, nums, has_aux, api, box):
    """``func`` as a pure function of the differentiated arguments' values, returning (outputs, aux arrays)."""

    def fn(*diff_vals):
        with transform_scope(forward=api == "jacfwd", batched_tangents=api == "jacfwd"):
            out = func(*with_args(args, nums, diff_vals), **kwargs)
        out, aux = split_aux(out, has_aux, api)
        check_tensor_outputs(out, "vjp(f, *primals)" if api == "jacrev" else "jvp(f, primals, tangents)")
        _require_real(to_values(out), api, "outputs")
        box["aux"] = Static(aux, has_aux)
        return to_values(out), box["aux"].values

    _require_real(tuple(diff_values(args[i]) for i in nums), api, "inputs")
    return fn


def _require_real(values, api, what):
    """PyTorch's jacrev/jacfwd refuse complex inputs and outputs (its message says 'input idx' for both)."""
    for i, v in enumerate(jax.tree_util.tree_leaves(values)):
        if jnp.iscomplexobj(v):
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {i}")


def _finish(jac, box, has_aux, aux_vals):
    jac = to_tensors(jac)
    return (jac, box["aux"].rebuild(aux_vals)) if has_aux else jac


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by reverse mode.

    Args:
        func: a function of Tensors (pytrees of Tensors) returning Tensors (or ``(output, aux)``).
        argnums: the position (or tuple of positions) of the arguments to differentiate.
        has_aux: whether ``func`` returns ``(output, aux)``.
        chunk_size: accepted for PyTorch compatibility (a memory knob there); the Jacobian is computed at once.

    Example:
        >>> jacrev(lambda x, y: x * y, argnums=(0, 1))(torchish.ones(2), torchish.ones(2))[1]
        tensor([[1., 0.],
                [0., 1.]])
    """
    _check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, single = normalize_argnums(argnums, len(args))
        diff = tuple(diff_values(args[i]) for i in nums)
        box = {}
        fn = _value_fn(func, args, kwargs, nums, has_aux, "jacrev", box)
        positions = 0 if single else tuple(range(len(nums)))
        jac, aux_vals = jax.jacrev(fn, argnums=positions, has_aux=True)(*diff)
        return _finish(jac, box, has_aux, aux_vals)

    return differentiable_outside(wrapper, "JacrevBackward0")


def _basis(leaves):
    """The standard basis of the flattened inputs: per input leaf, ``n`` rows shaped (and typed) like it."""
    n = sum(int(np.prod(x.shape)) for x in leaves)
    eye = jnp.eye(n)
    out, start = [], 0
    for x in leaves:
        size = int(np.prod(x.shape))
        out.append(eye[:, start:start + size].reshape((n,) + tuple(x.shape)).astype(x.dtype))
        start += size
    return out, n


def _split_columns(t, leaves, in_tree, single):
    """An output tangent ``out_shape + (n,)`` as the inputs' tree of ``out_shape + in_shape`` Jacobian blocks."""
    blocks, start = [], 0
    for x in leaves:
        size = int(np.prod(x.shape))
        blocks.append(t[..., start:start + size].reshape(t.shape[:-1] + tuple(x.shape)))
        start += size
    tree = jax.tree_util.tree_unflatten(in_tree, blocks)
    return tree[0] if single else tree


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by forward mode.

    ``randomness`` is :func:`vmap`'s: random ops inside ``func`` raise (``'error'``), draw once for every basis
    vector (``'same'``) or independently per basis vector (``'different'``).

    Example:
        >>> jacfwd(lambda x: x ** 2)(torchish.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, single = normalize_argnums(argnums, len(args))
        diff = tuple(diff_values(args[i]) for i in nums)
        box = {}
        fn = _value_fn(func, args, kwargs, nums, has_aux, "jacfwd", box)
        leaves, in_tree = jax.tree_util.tree_flatten(diff)
        basis, n = _basis(leaves)
        keys = batch_keys(randomness, n)

        def push(basis_leaves, key_data):
            tangents = jax.tree_util.tree_unflatten(in_tree, basis_leaves)
            with key_source(source_for(randomness, key_data)):
                out, tangent_out, aux_vals = jax.jvp(fn, diff, tangents, has_aux=True)
            return tangent_out, (out, aux_vals)

        # tangents out along the last axis; outputs and aux do not depend on the basis row: take row 0
        t_out, (out, aux_vals) = jax.vmap(push, in_axes=(0, None if keys is None else 0), out_axes=(-1, 0))(
            basis, keys)
        aux_vals = [a[0] for a in aux_vals]
        del out
        jac = jax.tree_util.tree_map(lambda t: _split_columns(t, leaves, in_tree, single), t_out)
        return _finish(jac, box, has_aux, aux_vals)

    return differentiable_outside(wrapper, "JacfwdBackward0")


def hessian(func, argnums=0):
    """The Hessian of the scalar function ``func``: ``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch.

    Example:
        >>> hessian(lambda x: (x ** 3).sum())(torchish.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
