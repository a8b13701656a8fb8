"""``torchish.func.vmap``: the function mapped over a dimension of its inputs by ``jax.vmap``.

``in_dims``/``out_dims`` follow PyTorch: an int (or None) for every Tensor, or a (nested) tuple matching the
arguments' (outputs') structure. Keyword arguments are passed through unmapped. Inside the function each Tensor
holds a batched tracer whose shape is one element's. ``chunk_size`` maps the batch in pieces of that many
elements and concatenates the results. ``randomness`` says what random ops do (see ``_rng``).

Example::

    >>> from torchish.func import vmap
    >>> vmap(torchish.dot)(torchish.ones(4, 3), torchish.ones(4, 3))
    tensor([3., 3., 3., 3.])
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from ._common import fn_name, flatten, ordered, structure_str, transform_scope, unflatten
from ._outer_autograd import differentiable_outside
from ._rng import axis_name, check_randomness, vmap_level

_OUT_DIMS_MSG = ("`out_dims` must be an int, None or a python collection of ints representing where in the outputs "
                 "the vmapped dimension should appear.")


def _broadcast(dims, tree, what, where):
    """Per-leaf dims: ``dims`` (a prefix of ``tree``: ints/None broadcast over subtrees) flattened against ``tree``."""
    out = []

    def per_subtree(d, sub):
        out.extend([d] * len(flatten(sub)[0]))

    try:
        jax.tree_util.tree_map(per_subtree, ordered(dims), ordered(tree), is_leaf=lambda x: x is None)
    except ValueError:
        raise ValueError(f"{where}: {what} is not compatible with the structure of `{what[:-5]}puts`. {what} has "
                         f"structure {structure_str(dims)} but {what[:-5]}puts has structure "
                         f"{structure_str(tree)}.") from None
    return out


def _in_dims(in_dims, args, where):
    """Flat (leaves, treedef, per-leaf in_dim, batch size) with PyTorch's checks and errors."""
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{structure_str(in_dims)} but inputs has structure {structure_str(args)}.")
    leaves, treedef = flatten(args)
    dims = _broadcast(in_dims, args, "in_dims", where)
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{x.ndim} so expected in_dim to satisfy -{x.ndim} <= in_dim < {x.ndim}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return leaves, treedef, dims, sizes[0]


def _check_out_dims(out_dims, where):
    leaves = jax.tree_util.tree_leaves(out_dims, is_leaf=lambda x: x is None)
    if not isinstance(out_dims, (int, tuple, type(None))) or not all(
            d is None or (isinstance(d, int) and not isinstance(d, bool)) for d in leaves):
        raise ValueError(f"{where}: {_OUT_DIMS_MSG}")


class _OutPlan:
    """Filled while tracing: the output's structure and where each leaf goes (mapped, or unmapped for None)."""

    def __init__(self, out_dims, name, where):
        self.out_dims, self.name, self.where = out_dims, name, where
        self.treedef = self.dims = None
        self.written = []

    def split(self, out):
        """The output's values as (mapped leaves, unmapped leaves), remembering the layout."""
        leaves, self.treedef = flatten(out)
        for x in leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({self.name}, ...): `{self.name}` must only return Tensors, got type "
                                 f"{type(x)}. Did you mean to set out_dims= to None for output?")
        dims = self.out_dims
        if isinstance(dims, tuple) and len(dims) == 1 and isinstance(out, Tensor):
            dims = dims[0]
        self.dims = _broadcast(dims, out, "out_dims", self.where)
        mapped = [x._d for x, d in zip(leaves, self.dims) if d is not None]
        unmapped = [x._d for x, d in zip(leaves, self.dims) if d is None]
        return mapped, unmapped

    def join(self, mapped, unmapped):
        """The user's output structure, with the mapped dimension moved from 0 to its out_dim."""
        mapped, unmapped = iter(mapped), iter(unmapped)
        leaves = []
        for d in self.dims:
            if d is None:
                leaves.append(Tensor._make(next(unmapped)))
                continue
            v = next(mapped)
            if not -v.ndim <= d < v.ndim:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-v.ndim}, {v.ndim - 1}], but "
                                 f"got {d})")
            leaves.append(Tensor._make(jnp.moveaxis(v, 0, d)))
        return unflatten(self.treedef, leaves)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map ``func`` over dimension ``in_dims`` of its inputs, stacking the results at ``out_dims``.

    Args:
        func: a function of Tensors (pytrees of Tensors) returning Tensors.
        in_dims: the mapped dimension of every input: an int, or a (nested) tuple of ints/None matching ``args``.
        out_dims: where the mapped dimension goes in each output (None: an output that does not depend on it).
        randomness: ``'error'`` (random ops raise), ``'same'`` (one draw shared by the batch) or ``'different'``.
        chunk_size: map this many elements at a time (None: all at once).

    Example:
        >>> x = torchish.arange(6.0).reshape(2, 3)
        >>> vmap(lambda row: row.sum(), in_dims=1)(x)
        tensor([3., 5., 7.])
    """
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = fn_name(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is unsupported.")
        _check_out_dims(out_dims, f"vmap({name}, ..., out_dims={out_dims})")
        leaves, treedef, dims, size = _in_dims(in_dims, args, where)
        mapped_at = [i for i, d in enumerate(dims) if d is not None]
        axes = tuple(dims[i] for i in mapped_at)
        plan = _OutPlan(out_dims, name, f"vmap({name}, ..., out_dims={out_dims})(<inputs>)")

        def one(mapped_vals, axis, size):
            new = list(leaves)
            for i, v in zip(mapped_at, mapped_vals):
                new[i] = Tensor._make(v)
            with vmap_level(axis, size, randomness), transform_scope(batched=True):
                out = func(*unflatten(treedef, new), **kwargs)
            # mapped inputs the function modified in place: written back to the caller's Tensors, as PyTorch
            plan.written = [k for k, (i, v) in enumerate(zip(mapped_at, mapped_vals)) if new[i]._v is not v]
            return plan.split(out) + ([new[mapped_at[k]]._d for k in plan.written],)

        values = tuple(leaves[i]._d for i in mapped_at)
        step = size if chunk_size is None else min(chunk_size, size)
        pieces = []
        for start in range(0, max(size, 1), max(step, 1)):
            vals, stop = values, min(start + step, size)
            if step < size:
                vals = tuple(jax.lax.slice_in_dim(v, start, stop, axis=a) for v, a in zip(values, axes))
            axis = axis_name()
            try:
                pieces.append(jax.vmap(functools.partial(one, axis=axis, size=stop - start), in_axes=(axes,),
                                       out_axes=(0, None, 0), axis_name=axis)(vals))
            except ValueError as e:
                if "out_axes" not in str(e):
                    raise
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                                 "None") from None
        mapped, written = ([jnp.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
                            for parts in zip(*(p[j] for p in pieces))] for j in (0, 2))
        for k, value in zip(plan.written, written):
            leaves[mapped_at[k]]._set_value(jnp.moveaxis(value, 0, axes[k]))
        return plan.join(mapped, pieces[0][1])

    return differentiable_outside(wrapper, "VmapBackward0")
