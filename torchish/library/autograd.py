"""The autograd kernel of a custom operator: a generated :class:`torchish.autograd.Function`.

As PyTorch's ``torch._library.autograd``: the forward runs the op's backend kernel below autograd and calls the
registered ``setup_context(ctx, inputs, output)`` (with ``keyword_only_inputs`` when the schema has keyword-only
arguments); the backward calls the registered ``backward(ctx, *grads)``, which returns one gradient per input
(a list of them for a ``Tensor[]`` input, None where there is none). Without a registered formula the backward
raises PyTorch's error. Tensor lists in and out are flattened for the Function and rebuilt around the user's code.
"""
from __future__ import annotations

from jax.tree_util import tree_flatten, tree_unflatten

from ..autograd.function import Function


class _CallInfo:
    """What one call passes from ``run`` through the Function to its backward. It holds no output Tensor: the
    graph keeps it alive, and torchish.compile takes tensors stored on long-lived objects for Python side effects."""

    def __init__(self, in_spec, n_args, kw):
        self.in_spec = in_spec
        self.n_args = n_args
        self.kw = kw
        self.out_spec = None
        self.out_leaves = None
        self.out_tensor_idx = None
        self.in_counts = None  # per positional argument: how many leaves it flattens to
        self.in_is_list = None


def make_function(e):
    from .._tensor import Tensor
    from .dispatch import backend
    has_kwonly = any(a.kwarg_only for a in e.schema.arguments)

    def forward(ctx, *args):
        info = args[-1]
        pos = tree_unflatten(info.in_spec, list(args[:-1]))
        out = backend(e, pos, info.kw)
        if e.setup_context is not None:
            if has_kwonly:
                e.setup_context(ctx=ctx, inputs=tuple(pos), keyword_only_inputs=info.kw, output=out)
            else:
                e.setup_context(ctx=ctx, inputs=tuple(pos), output=out)
        leaves, info.out_spec = tree_flatten(out)
        info.out_tensor_idx = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
        info.out_leaves = [None if isinstance(v, Tensor) else v for v in leaves]  # (no tensors kept: see _CallInfo)
        ctx._pt_metadata = info
        return tuple(leaves[i] for i in info.out_tensor_idx)

    def backward(ctx, *grads):
        if e.backward is None:
            raise RuntimeError(f"Trying to backward through {e.dotted} but no autograd formula was registered. "
                               "Please use register_autograd to add one.")
        info = ctx._pt_metadata
        leaves = [None] * len(info.out_leaves)
        for i, g in zip(info.out_tensor_idx, grads):
            leaves[i] = g
        out_grads = tree_unflatten(info.out_spec, leaves)
        prev = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(tree_unflatten(info.in_spec, list(prev[:-1])))
        try:
            result = e.backward(ctx, *out_grads) if e.schema.returns_tuple else e.backward(ctx, out_grads)
        finally:
            ctx.needs_input_grad = prev
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) > info.n_args and all(g is None for g in result[info.n_args:]):
            result = result[:info.n_args]  # (extra Nones are allowed, as for any autograd.Function)
        if len(result) != info.n_args:  # (PyTorch's counts include the Function's hidden metadata argument)
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {info.n_args + 1}, got {len(result) + 1})")
        return _align(info, result) + (None,)

    cls = type(f"GeneratedBackwardFor_{e.namespace}_{e.opname}_{e.overload_name}", (Function,),
               {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    cls.run = classmethod(_run)
    return cls


def _align(info, result):
    """The user's per-input gradients as one gradient per flattened Function input."""
    flat = []
    for n, is_list, g in zip(info.in_counts, info.in_is_list, result):
        if is_list:
            flat.extend(list(g) if g is not None else [None] * n)
        elif n:
            flat.append(g)
    return tuple(flat)


def _run(cls, pos, kw):
    leaves, spec = tree_flatten(list(pos))
    info = _CallInfo(spec, len(pos), kw)
    info.in_counts = [len(tree_flatten(v)[0]) for v in pos]
    info.in_is_list = [isinstance(v, (list, tuple)) for v in pos]
    outs = cls.apply(*leaves, info)
    if not isinstance(outs, tuple):
        outs = (outs,)
    result = list(info.out_leaves)
    for i, t in zip(info.out_tensor_idx, outs):
        result[i] = t
    return tree_unflatten(info.out_spec, result)
