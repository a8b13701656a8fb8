"""A custom ``autograd.Function`` applied inside a ``torchish.func`` transform (``grad``, ``vjp``, ``jacrev``,
``vmap``, ``jvp``, ``jacfwd``, ``hessian``), as PyTorch's functorch runs it.

The transform differentiates JAX values, so the user's ``backward`` becomes a ``jax.custom_vjp`` rule (its ``jvp`` a
``jax.custom_jvp`` rule in forward mode). PyTorch's requirements hold: the Function must use the
``setup_context`` form, it needs ``generate_vmap_rule = True`` (or its own ``vmap``) to be vmapped, and a ``jvp`` for
forward mode. With ``generate_vmap_rule`` vmapping is left to JAX's batching of the rules; a Function's own
``vmap`` staticmethod is the batching rule of its forward (a ``jax.custom_batching.custom_vmap``).
"""
from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from .._tensor import Tensor
from ..ops.tracing import transform_scope
from .function import Function, FunctionCtx
from .grad_mode import STATE

_ERR_SETUP = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must "
              "override the setup_context staticmethod. For more details, please see "
              "https://pytorch.org/docs/main/notes/extending.func.html")


def _differentiable(v) -> bool:
    return jnp.issubdtype(v.dtype, jnp.inexact)


def _zero_cotangent(v):
    """The cotangent JAX expects for a primal ``v`` that gets no gradient (float0 for integer/bool values)."""
    if _differentiable(v):
        return jnp.zeros(v.shape, v.dtype)
    return np.zeros(v.shape, jax.dtypes.float0)


def _fit(g, v):
    """The user's gradient ``g`` (a Tensor or None) as JAX's cotangent for the primal ``v``: None is zero, a
    broadcast gradient is summed back to ``v``'s shape, the dtype is ``v``'s."""
    if g is None or not _differentiable(v):
        return _zero_cotangent(v)
    if not isinstance(g, Tensor):
        raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
    d = g._d
    if d.shape != v.shape:
        lead = d.ndim - v.ndim
        d = d.sum(axis=tuple(range(lead))) if lead > 0 else d
        d = d.sum(axis=tuple(i for i, n in enumerate(v.shape) if n == 1 and d.shape[i] != 1), keepdims=True)
        d = jnp.broadcast_to(d, v.shape)
    return d.astype(v.dtype)


class _Slot:
    """Where a Tensor output sits among the flat output values."""

    def __init__(self, index):
        self.index = index


class _Call:
    """One ``apply``: the Function, its arguments, and where the Tensors sit among them and among the outputs."""

    def __init__(self, cls, args, kwargs):
        self.cls, self.args, self.kwargs = cls, args, kwargs
        self.tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.out_template = None  # the outputs with Tensors replaced by their flat index (set by the first run)
        vmapped = getattr(STATE, "vmap_level", 0) or getattr(STATE, "tangent_vmap_level", 0)
        self.by_rule = bool(vmapped) and not cls.generate_vmap_rule and cls.vmap is not Function.vmap

    def forward(self, vals):
        """Run the user's forward on Tensors around ``vals``: (arguments, output, flat output values). Under vmap,
        a Function with its own ``vmap`` staticmethod runs as a ``custom_vmap`` whose rule is that staticmethod."""
        if self.by_rule:
            flat = tuple(_vmap_rule(self)(*vals))
            return tuple(self.arguments(vals)), self.rebuild(flat), flat
        return self.run_forward(vals)

    def arguments(self, vals):
        """The call's arguments with Tensors around ``vals`` in the Tensors' places."""
        new = list(self.args)
        for i, v in zip(self.tpos, vals):
            new[i] = Tensor._make(v)
        return new

    def run_forward(self, vals):
        new = self.arguments(vals)
        with transform_scope():
            out = self.cls.forward(*new, **self.kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        flat = [o._d for o in outs if isinstance(o, Tensor)]
        if self.out_template is None:
            k = iter(range(len(flat)))
            self.out_template = (isinstance(out, tuple), [_Slot(next(k)) if isinstance(o, Tensor) else o for o in outs])
        return tuple(new), out, tuple(flat)

    def context(self, new, out):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and _differentiable(a._d) for a in new)
        with transform_scope():
            self.cls.setup_context(ctx, new, out)
        outs = out if isinstance(out, tuple) else (out,)
        self.non_diff = [id(o) in ctx._non_differentiable for o in outs if isinstance(o, Tensor)]
        return ctx

    def per_output(self, flat):
        """One entry per output of the user's forward: ``flat``'s at the Tensors, None elsewhere."""
        return [flat[o.index] if isinstance(o, _Slot) else None for o in self.out_template[1]]

    def tensor_outputs(self):
        """The positions of the Tensor outputs among the user's forward's outputs."""
        return [i for i, o in enumerate(self.out_template[1]) if isinstance(o, _Slot)]

    def rebuild(self, flat):
        """The outputs as the user's forward returned them, with Tensors around ``flat``."""
        is_tuple, template = self.out_template
        outs = [Tensor._make(flat[o.index]) if isinstance(o, _Slot) else o for o in template]
        return tuple(outs) if is_tuple else outs[0]


def _vmap_rule(call):
    """The forward as a ``jax.custom_batching.custom_vmap`` function: unbatched it runs the user's forward; when
    JAX batches it, the Function's ``vmap(info, in_dims, *args)`` gets the batched arguments (batch dimension 0,
    None for the unbatched ones and the non-Tensors) and gives ``(output, out_dims)``, as PyTorch's functorch."""
    from ..library.vmap import VmapInfo, _randomness

    @custom_vmap
    def op(*vals):
        return list(call.run_forward(vals)[2])

    @op.def_vmap
    def rule(axis_size, in_batched, *vals):
        if not any(in_batched):  # (nothing batched at this level: functorch runs the Function as it is)
            flat = call.run_forward(vals)[2]
            return list(flat), [False] * len(flat)
        args, dims = call.arguments(vals), [None] * len(call.args)
        for i, b in zip(call.tpos, in_batched):
            dims[i] = 0 if b else None
        out, out_dims = call.cls.vmap(VmapInfo(axis_size, _randomness()), tuple(dims), *args, **call.kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        out_dims = tuple(out_dims) if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(outs)
        if len(out_dims) != len(outs):
            raise ValueError(f"vmap({call.cls.__name__}): out_dims has {len(out_dims)} entries for {len(outs)} "
                             "outputs")
        picked = [(o, d) for o, d in zip(outs, out_dims) if isinstance(o, Tensor)]
        return [o._d if d is None else o.movedim(d, 0)._d for o, d in picked], [d is not None for _, d in picked]

    return op


def _reverse(call):
    """``jax.custom_vjp`` whose rule is the user's ``backward`` (saved tensors travel as residuals)."""
    box = {}

    @jax.custom_vjp
    def prim(*vals):
        return call.forward(vals)[2]

    def fwd(*vals):
        new, out, flat = call.forward(vals)
        ctx = call.context(new, out)
        # outputs marked non-differentiable are constants to an outer transform too (PyTorch detaches them)
        saved = tuple(None if t is None else jax.lax.stop_gradient(t._d) if id(t) in ctx._non_differentiable
                      else t._d for t in (ctx._saved or ()))
        flat = tuple(jax.lax.stop_gradient(v) if nd else v for v, nd in zip(flat, call.non_diff))
        attrs = {k: v._d for k, v in vars(ctx).items() if isinstance(v, Tensor)}
        box["ctx"], box["vals"], box["out_meta"] = ctx, vals, [(v.shape, v.dtype) for v in flat]
        return flat, (saved, attrs)

    def bwd(res, cts):
        saved, attrs = res
        ctx = box["ctx"]
        with transform_scope():  # the Tensors made here are the backward's own: it may write them in place
            if ctx._saved is not None:
                ctx._saved = tuple(Tensor._make(v) if v is not None else None for v in saved)
                ctx._snapshot_versions()
            for k, v in attrs.items():
                setattr(ctx, k, Tensor._make(v))
            grads = []
            for c, nd, (shape, dtype) in zip(cts, call.non_diff, box["out_meta"]):
                if nd or not jnp.issubdtype(dtype, jnp.inexact):
                    grads.append(Tensor._make(jnp.zeros(shape, dtype)) if ctx.materialize_grads else None)
                else:
                    grads.append(Tensor._make(c))
            res = call.cls._user_backward()(ctx, *call.per_output(grads))
        res = res if isinstance(res, tuple) else (res,)
        n = len(call.args)
        if len(res) < n or any(r is not None for r in res[n:]):
            raise RuntimeError(f"function {call.cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {n}, got {len(res)})")
        return tuple(_fit(res[i], v) for i, v in zip(call.tpos, box["vals"]))

    prim.defvjp(fwd, bwd)
    return lambda vals: prim(*vals)


def _forward(call):
    """``jax.custom_jvp`` whose rule is the user's ``jvp``."""

    @jax.custom_jvp
    def prim(*vals):
        return call.forward(vals)[2]

    @prim.defjvp
    def prim_jvp(vals, tans):
        new, out, flat = call.forward(vals)
        ctx = call.context(new, out)
        ctx._in_jvp = True
        with transform_scope(forward=True):
            tangents = [None] * len(call.args)
            for i, v, t in zip(call.tpos, vals, tans):
                tangents[i] = Tensor._make(t if _differentiable(v) else jnp.zeros(v.shape, v.dtype))
            res = call.cls.jvp(ctx, *tangents)
        res = res if isinstance(res, tuple) else (res,)
        res = [res[i] if i < len(res) else None for i in call.tensor_outputs()]
        out_tans = tuple(_zero_cotangent(v) if nd else _fit(t, v) for t, v, nd in zip(res, flat, call.non_diff))
        return flat, out_tans

    return lambda vals: prim(*vals)


def apply_in_transform(cls, args, kwargs):
    """``cls.apply(*args, **kwargs)`` inside a ``torchish.func`` transform."""
    if not cls._uses_setup_context():
        raise RuntimeError(_ERR_SETUP)
    vmapped = getattr(STATE, "vmap_level", 0) or getattr(STATE, "tangent_vmap_level", 0)
    if vmapped and not cls.generate_vmap_rule and cls.vmap is Function.vmap:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                           "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    forward = getattr(STATE, "forward_mode", 0) > 0
    if forward and cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")
    call = _Call(cls, args, kwargs)
    vals = tuple(args[i]._d for i in call.tpos)
    flat = (_forward(call) if forward else _reverse(call))(vals)
    return call.rebuild(flat)


def route_traced_outputs(ctx, cls, args, outs):
    """Inside ``torchish.compile``'s trace (the function's outputs differentiated outside it by the program's
    ``jax.vjp``): pass the values of the Function's outputs through a ``jax.custom_vjp`` whose rule is the user's
    ``backward``, run on the saved tensors' values, so the compiled pullback gives the gradients PyTorch's engine
    gives. The forward ran under ``no_grad`` (its ops are cut from the trace's differentiation); the node recorded
    for the trace's own ``backward()`` is unchanged. Tensor attributes of ``ctx`` travel as residuals too."""
    tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    opos = [j for j, o in enumerate(outs) if isinstance(o, Tensor) and o._gfn is ctx]
    if not opos:
        return
    ctx._routed = True
    names = [k for k, v in vars(ctx).items() if isinstance(v, Tensor)]
    saved = tuple(None if t is None else t._d for t in (ctx._saved or ()))
    in_vals = tuple(args[i]._d for i in tpos)
    attr_vals = tuple(getattr(ctx, k)._d for k in names)
    out_meta = [(o._v.shape, o._v.dtype) if isinstance(o, Tensor) else None for o in outs]
    had_saved = ctx._saved is not None
    ctx = copy.copy(ctx)  # (the program keeps the rule: it must hold no Tensor of the trace)
    ctx.next_edges = ()
    for k in names:
        setattr(ctx, k, None)
    ctx._saved = None

    @jax.custom_vjp
    def rule(ins, out_vals, res):
        return out_vals

    def fwd(ins, out_vals, res):
        return out_vals, (ins, res)

    def bwd(r, cts):
        ins, (saved_vals, attr_vals) = r
        try:
            with transform_scope():
                if had_saved:
                    ctx._saved = tuple(None if v is None else Tensor._make(v) for v in saved_vals)
                    ctx._snapshot_versions()
                for k, v in zip(names, attr_vals):
                    setattr(ctx, k, Tensor._make(v))
                grads = [None] * len(out_meta)
                for j, c in zip(opos, cts):
                    grads[j] = Tensor._make(c)
                if ctx.materialize_grads:
                    grads = [g if g is not None or m is None else Tensor._make(jnp.zeros(m[0], m[1]))
                             for g, m in zip(grads, out_meta)]
                res = cls._user_backward()(ctx, *grads)
        finally:
            ctx._saved = None
            for k in names:
                setattr(ctx, k, None)
        res = res if isinstance(res, tuple) else (res,)
        d_ins = tuple(_fit(res[i] if i < len(res) else None, v) for i, v in zip(tpos, ins))
        zeros = jax.tree_util.tree_map(_zero_cotangent, (cts, (saved_vals, attr_vals)))
        return (d_ins,) + zeros

    rule.defvjp(fwd, bwd)
    new = rule(in_vals, tuple(outs[j]._d for j in opos), (saved, attr_vals))
    for j, v in zip(opos, new):
        outs[j]._d = v
