"""``register_vmap``: a custom operator's own batching rule under ``torchish.func.vmap``.

PyTorch calls ``vmap_fn(info, in_dims, *args, **kwargs)`` with the batched arguments and their batch dimensions
(None for an unbatched one) and takes back ``(output, out_dims)``. Here the op's call becomes a
``jax.custom_batching.custom_vmap`` function: unbatched it runs the op as usual, and when JAX batches it the rule
hands the batched values (batch dimension 0) to the user's function and moves the output batch dimensions to 0.
"""
from __future__ import annotations

from dataclasses import dataclass

from jax.custom_batching import custom_vmap
from jax.tree_util import tree_flatten, tree_unflatten


@dataclass
class VmapInfo:
    """``info`` for a vmap rule: the batch size and the vmap's ``randomness`` setting."""
    batch_size: int
    randomness: str


def _randomness():
    from ..func import _rng
    levels = getattr(_rng, "_LEVELS", None)
    return levels[-1][2] if levels else "error"


def call_with_rule(e, pos, kw, run):
    """``run(e, pos, kw)`` (the op's dispatch below vmap) as a custom_vmap function whose rule is ``e.vmap_fn``."""
    from .._tensor import Tensor, wrap
    leaves, spec = tree_flatten((list(pos), kw))
    idx = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
    consts = [None if isinstance(v, Tensor) else v for v in leaves]
    out_info = {}

    def rebuild(vals):
        vs = list(consts)
        for i, v in zip(idx, vals):
            vs[i] = wrap(v)
        return tree_unflatten(spec, vs)

    def split(out):
        out_leaves, out_spec = tree_flatten(out)
        out_info["spec"] = out_spec
        out_info["consts"] = [None if isinstance(v, Tensor) else v for v in out_leaves]
        return [v for v in out_leaves if isinstance(v, Tensor)]

    @custom_vmap
    def op(*vals):
        p, k = rebuild(vals)
        return [t._d for t in split(run(e, p, k))]

    @op.def_vmap
    def rule(axis_size, in_batched, *vals):
        p, k = rebuild(vals)
        batched = dict(zip(idx, in_batched))
        dims, n = [], 0
        for v in p:  # (one batch dimension per positional argument: 0 where any of its tensors is batched)
            count = len(tree_flatten(v)[0]) if isinstance(v, (list, tuple)) else int(isinstance(v, Tensor))
            flags = [batched.get(i, False) for i in idx[n:n + count]]
            dims.append(0 if any(flags) else None)
            n += count
        out, out_dims = e.vmap_fn(VmapInfo(axis_size, _randomness()), tuple(dims), *p, **k)
        outs = split(out)
        if not isinstance(out_dims, (tuple, list)):
            out_dims = [out_dims] * len(outs)
        else:
            out_dims = tree_flatten(list(out_dims), is_leaf=lambda d: d is None)[0]
        vals_out = [t._d if d is None else t.movedim(d, 0)._d for t, d in zip(outs, out_dims)]
        return vals_out, [d is not None for d in out_dims]

    results = op(*[leaves[i]._d for i in idx])
    outs = list(out_info["consts"])
    tensor_pos = [i for i, v in enumerate(outs) if v is None]
    for i, v in zip(tensor_pos, results):
        outs[i] = wrap(v)
    return tree_unflatten(out_info["spec"], outs)
