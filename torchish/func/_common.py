"""What the ``torchish.func`` transforms share: pytrees with Tensor leaves, ``argnums``, argument checks with
PyTorch's errors, and splitting ``(output, aux)``.

A transform runs the user's function under the JAX transform with the differentiated (or mapped) Tensors
replaced by Tensors holding the transform's tracers (``ops.tracing.to_tensors``) inside
``ops.tracing.transform_scope``; results come back as Tensors around the transform's arrays.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from ..ops import tracing

transform_scope = tracing.transform_scope  # (for the transforms)


def is_leaf(x) -> bool:
    """Leaves of the pytrees the transforms walk: Tensors, and None (a leaf for PyTorch's pytrees)."""
    return x is None or isinstance(x, Tensor)


class _OrderedDict(dict):
    """A plain dict on its way through JAX. JAX's pytrees flatten a dict in sorted key order and rebuild it sorted;
    PyTorch's keep the insertion order, which users see (``grad(loss)(dict(model.named_parameters()))`` has the
    parameters' order; ``torch.cat(list(grads.values()))`` depends on it). The transforms hand JAX their dicts as
    this type, which JAX flattens in insertion order, and give the user plain dicts back (:func:`plain`)."""


jax.tree_util.register_pytree_node(_OrderedDict, lambda d: (list(d.values()), tuple(d.keys())),
                                   lambda keys, values: _OrderedDict(zip(keys, values)))


def _convert(tree, src, dst):
    """``tree`` with every dict of exactly type ``src`` (nested ones too) rebuilt as ``dst``, keeping its order."""
    def one(x):
        return dst((k, _convert(v, src, dst)) for k, v in x.items()) if type(x) is src else x
    return jax.tree_util.tree_map(one, tree, is_leaf=lambda x: type(x) is src or is_leaf(x))


def ordered(tree):
    """``tree`` as the transforms hand it to JAX: its plain dicts in insertion order (see :class:`_OrderedDict`)."""
    return _convert(tree, dict, _OrderedDict)


def plain(tree):
    """A tree from JAX as the user gets it: plain dicts (in the insertion order :func:`ordered` kept)."""
    return _convert(tree, _OrderedDict, dict)


def flatten(tree):
    """``(leaves, treedef)`` of a user's pytree, dicts in insertion order (as PyTorch's pytrees)."""
    return jax.tree_util.tree_flatten(ordered(tree), is_leaf=is_leaf)


def unflatten(treedef, leaves):
    """The user's pytree from :func:`flatten`'s ``treedef`` and new leaves (plain dicts)."""
    return plain(jax.tree_util.tree_unflatten(treedef, leaves))


def unflatten_values(treedef, leaves):
    """A values pytree for JAX from :func:`flatten`'s ``treedef`` (dicts as JAX flattens them in insertion order)."""
    return jax.tree_util.tree_unflatten(treedef, leaves)


def to_values(tree):
    """A user's pytree of Tensors as the JAX values pytree (Tensors replaced by their values, dicts ordered)."""
    return tracing.to_values(ordered(tree))


def to_tensors(tree):
    """A JAX values pytree as the user's pytree of Tensors (values wrapped, plain dicts)."""
    return plain(tracing.to_tensors(tree))


def structure_str(tree) -> str:
    """A short description of a pytree's structure for error messages (``(*, *)``, ``{'a': *}``)."""
    return str(plain(jax.tree_util.tree_map(lambda _: "*", ordered(tree), is_leaf=is_leaf))).replace("'*'", "*")


def fn_name(func) -> str:
    return getattr(func, "__name__", repr(func))


def normalize_argnums(argnums, nargs):
    """``argnums`` as a tuple of non-negative positions (and whether it was a single int), PyTorch's checks."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    nums = (argnums,) if single else argnums
    if not isinstance(nums, tuple) or not all(isinstance(a, int) and not isinstance(a, bool) for a in nums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return tuple(out), single


def diff_values(tree):
    """The values of a pytree of floating-point Tensors that a transform differentiates (PyTorch's errors)."""
    leaves, treedef = flatten(tree)
    vals = []
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not (x.is_floating_point() or x.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        vals.append(x._d)
    return unflatten_values(treedef, vals)


def with_args(args, nums, trees):
    """``args`` with the pytrees at positions ``nums`` replaced by ``trees`` (values wrapped as Tensors)."""
    new = list(args)
    for i, t in zip(nums, trees):
        new[i] = to_tensors(t)
    return tuple(new)


def split_aux(out, has_aux, api):
    """``(output, aux)`` of the user's function; PyTorch's error when ``has_aux`` and it is not a pair."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


class Static:
    """An ``aux`` pytree split into its Tensors' values (returned through the JAX transform) and its structure.
    Every leaf must be a Tensor, as in PyTorch."""

    def __init__(self, tree, has_aux=True):
        leaves, self.treedef = flatten(tree) if has_aux else ([], None)
        for x in leaves:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        self.values = [x._d for x in leaves]

    def rebuild(self, values):
        return unflatten(self.treedef, [Tensor._make(v) for v in values])


def check_tensor_outputs(out, api):
    """Every leaf of a vjp/jacobian function's output must be a Tensor."""
    for x in flatten(out)[0]:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(x)}")


def grad_value(out):
    """A scalar output's value as ``jax.grad`` needs it: non-float outputs have zero gradient (as PyTorch)."""
    v = out._d
    if not jnp.issubdtype(v.dtype, jnp.inexact):
        v = jax.lax.stop_gradient(v.astype(jnp.float32))
    return v.reshape(())


def conj_complex(tree):
    """PyTorch's complex gradients from JAX's (or JAX's cotangents from PyTorch's gradients): the conjugate of each
    complex leaf. PyTorch propagates conj(dL/dz) where ``jax.grad``/``jax.vjp`` give dL/dz; real
    leaves (and None) are unchanged."""
    return jax.tree_util.tree_map(lambda a: jnp.conj(a) if jnp.iscomplexobj(a) else a, tree)
