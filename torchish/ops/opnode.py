"""The backward of registry ops: :class:`OpNode` (the ``grad_fn`` of an op applied through
:func:`torchish.ops.registry.apply`), its VJP as a cached jitted kernel (:func:`backward_kernel`), the backward as
a differentiable op of its own for ``create_graph=True`` (:func:`backward_op`), and what a released node keeps
(shapes and dtypes: :class:`ZerosLike`, :class:`Released`)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _meta
from .._tensor import Tensor, wrap
from ..autograd.graph import Node, live_tensor, saved_origin
from ..autograd.grad_mode import STATE
from . import dynamic as _dynamic, lazy, shown_graph, tracing
from . import kernels as _kernels, registry as _registry
from .casting import rounded


class ZerosLike:
    """A value a released node keeps only as shape and dtype: the node saved nothing (PyTorch's node for it reads
    no value, e.g. ``add``, views, ``sum``), so a later backward through it may evaluate the op's VJP at zeros.
    Dropping the value frees it as PyTorch does, and keeps lazy capture from returning it from its program."""

    __slots__ = ("shape", "dtype")

    def __init__(self, v):
        self.shape = tuple(v.shape)
        self.dtype = v.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def zeros(self):
        return jnp.zeros(self.shape, self.dtype)


class Released(tuple):
    """The values of a node released after a backward (some of them :class:`ZerosLike`)."""

    __slots__ = ()


def _released_meta(v):
    """What a released node keeps of a value it saved: a JAX array's abstract value (its shape and dtype; cached on
    the array, so cheaper than a :class:`ZerosLike`), numbers and None as they are."""
    if type(v) is lazy.ARRAY_TYPE:
        return v.aval
    return ZerosLike(v) if _is_array(v) else v


def live_values(vals):
    """``vals`` with any :class:`ZerosLike` replaced by zeros (a VJP's arguments)."""
    if type(vals) is not Released:
        return vals
    return tuple(v.zeros() if type(v) is ZerosLike else v for v in vals)


def _droppable(v):
    t = type(v)
    if t is lazy.ARRAY_TYPE:
        a = v.aval
        return not a.weak_type and _registry._inexact(a)
    return t is lazy.LazyValue and not v.weak_type and _registry._inexact(v)


# Positions PyTorch's node lists in ``next_functions`` even when they hold no array: the Python-number operands it
# wraps into tensors (``x * 2`` is ``mul.Tensor``) and the optional Tensors (``Tensor?``: norm weights, conv bias,
# clamp bounds) left as None; both show as ``(None, 0)``. Elsewhere Python numbers and Nones are Scalar or static
# arguments PyTorch's node omits.
_LISTED = {"add": (0, 1), "sub": (0, 1), "mul": (0, 1), "div": (0, 1), "where": (1, 2), "clamp_tensor": (1, 2),
           "layer_norm": (1, 2), "batch_norm": (1, 2), "group_norm": (1, 2), "native_group_norm": (1, 2),
           "convolution": (2,), "batch_norm_eval": (1, 2),
           "dropout": (1,), "ldexp": (0, 1), "embedding_bag": (0, 3)}  # (dropout: input * mask, the mask a Tensor without grad; ldexp's
# LdexpBackward0 lists its integer exponent, as a None edge; EmbeddingBagBackward0 its weight and per_sample_weights,
# given or not)
# the Scalar overloads of add/sub/mul/div (ops.scalar_overloads): the number is no input of their nodes
SCALAR_OVERLOADS: set = set()
# Float Tensors PyTorch's node does not list: the arguments its derivative formula does not differentiate (the
# running statistics of an evaluating batch norm, soft_margin_loss's target, nll_loss's class weights)
_UNLISTED = {"batch_norm_eval": (3, 4), "soft_margin_loss": (1,), "nll_loss": (2,), "binary_cross_entropy": (2,),
             "binary_cross_entropy_with_logits": (2, 3)}  # (the BCE losses' weight and pos_weight)
# the same by the node's name, where only some nodes of an op leave an argument out (the CPU flash attention
# kernel's attn_mask, which its formula does not differentiate; the math path adds it into the scores)
_UNLISTED_NODES = {"ScaledDotProductFlashAttentionForCpuBackward0": (3,)}
# reflected operators (``2 * x``) call ``x.mul(2)`` in PyTorch: the tensor comes first
_COMMUTATIVE = ("add", "mul")
# ops whose PyTorch node takes the operands in another order: linear(x, w, b) is addmm(b, x, w.t()). The engine
# runs the leaves' AccumulateGrad nodes in that order (``torch_input_order``); next_functions shows it (SHOWN_KIND)
_TORCH_ORDER = {"linear": (2, 0, 1)}
# fused ops whose node shows PyTorch's several nodes (torchish.ops.shown_graph): op -> the kind of graph
SHOWN_KIND: dict = {}


def _is_array(v):
    return hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, np.generic)


def shown_inputs(op, vals, mask):
    """The input positions PyTorch's node lists in ``next_functions`` (and returns gradients for when called), in
    its order: the Tensor operands the op differentiates. Python numbers and Nones are absent unless :data:`_LISTED`
    names their place; Tensors outside the promoted operands (``where``'s condition) or, for ops
    that do not promote, of integer or bool dtype (indices, masks) have no derivative formula (absent)."""
    listed = _LISTED.get(op.name, ()) if op not in SCALAR_OVERLOADS else ()
    unlisted = _UNLISTED.get(op.name, ()) or _UNLISTED_NODES.get(op.grad_name, ())
    operands = range(len(vals)) if op.promote is None or op.promote_args is None else op.promote_args
    used = _USED.get(op)  # a backward op: the values its formula does not read are no inputs of PyTorch's node
    used = used[0] if used is not None else None
    pos = []
    for i, v in enumerate(vals):
        if used is not None and not used[i] or i in unlisted:
            continue
        if mask[i] or i in listed:
            pos.append(i)
        elif _is_array(v) and (i in operands if op.promote is not None else _registry._inexact(v)):
            pos.append(i)
    first_grad = _GRADS_AT.get(op)
    if first_grad is not None:  # a backward op: PyTorch's formulas take the incoming gradient first
        pos = [i for i in pos if i >= first_grad] + [i for i in pos if i < first_grad]
    if op.name in _COMMUTATIVE and len(pos) == 2 and not _is_array(vals[pos[0]]) and _is_array(vals[pos[1]]):
        pos.reverse()
    return tuple(pos)


class OpNode(Node):
    """The grad_fn of a registry op: its backward is the op's VJP as a cached jitted kernel."""

    __slots__ = ("op", "static", "cdt", "mask", "vals", "versions", "outs", "packed")

    def _shown_inputs(self):
        return shown_inputs(self.op, self.vals, self.mask)

    @property
    def next_functions(self):
        kind = SHOWN_KIND.get(self.op)
        if kind is not None:  # a fused op that is several nodes in PyTorch (F.linear): PyTorch's nodes, made once
            fns = self.__dict__.get("_shown_fns")
            if fns is None:
                fns = self.__dict__["_shown_fns"] = shown_graph.next_functions(kind, self)
            return fns
        edges = self.next_edges
        shown = tuple((edges[i][0], edges[i][1]) if edges[i] is not None else (None, 0) for i in self._shown_inputs())
        inplace = self.__dict__.get("inplace_fn")
        if inplace is not None:  # CopySlices of an op applied in place to a view: PyTorch's node wraps that op
            return shown[:1] + inplace.next_functions[1:]  # and shows the base's edge, then the op's other inputs
        return shown

    def torch_input_order(self):
        """The input positions in the order PyTorch's node takes them (the engine runs the leaves it feeds in
        that order): ``next_functions``' order, with the operands of :data:`_TORCH_ORDER`'s ops permuted."""
        pos = self._shown_inputs()
        order = _TORCH_ORDER.get(self.op.name)
        return order if order is not None and len(pos) == len(order) else pos

    def hook_grads(self, grads_in, grads):
        """``grads_in`` (one per input of torchish's op) as PyTorch's node gives its ``grad_inputs`` to a hook or
        returns them when called: the inputs it lists (``next_functions``), in its order."""
        kind = SHOWN_KIND.get(self.op)
        if kind is not None:
            return shown_graph.hook_grads(kind, self, grads_in, grads)
        return [grads_in[i] for i in self._shown_inputs()]

    def unhook_grads(self, shown, grads_in, grads, create_graph):
        """The inverse of :meth:`hook_grads`: ``grads_in`` with the hooks' replacements ``shown`` in place."""
        kind = SHOWN_KIND.get(self.op)
        if kind is not None:
            return shown_graph.unhook_grads(kind, self, shown, grads_in, grads, create_graph)
        out = list(grads_in)
        for i, g in zip(self._shown_inputs(), shown):
            out[i] = g
        return out

    def __call__(self, *grads):
        grads = list(grads)
        out = self.hook_grads(self.apply_grads(grads, STATE.grad_enabled), grads)
        return out[0] if len(out) == 1 else tuple(out)

    def release(self):
        if self._saves:
            self._released = True
            self.release_saved()
        elif self.vals is not None and type(self.vals) is not Released:
            self.vals = Released([ZerosLike(v) if _droppable(v) else v for v in self.vals])
            if self.outs is not None:
                self.outs = Released([ZerosLike(v) if _droppable(v) else v for v in self.outs])

    def release_saved(self):
        # Linear ops keep their values: nothing was "saved" for them in PyTorch's sense; others drop them (the
        # version records hold the saved values too: a released graph keeps no array alive). Shapes and Python
        # numbers stay: grad_fn._saved_self_sym_sizes, _saved_exponent... are still readable, as in PyTorch
        if self.vals is not None:  # (shape and dtype are what next_functions' shown_inputs reads)
            self.vals = Released(map(_released_meta, self.vals))
        self.outs = None
        self.versions = ()
        self.packed = None

    def saved_values(self):
        """``(inputs, outputs)`` for the VJP: the forward's values, those given to a pack hook unpacked."""
        vals = live_values(self.vals)
        outs = live_values(self.outs) if self.outs is not None else None
        if self.packed is None:
            return vals, outs
        vals = list(vals)
        outs = list(outs) if outs is not None else None
        for kind, j, p in self.packed:
            v = p.unpack()._d
            if kind == "i":
                vals[j] = v
            elif outs is not None:
                outs[j] = v
        return tuple(vals), (tuple(outs) if outs is not None else None)

    def __getattr__(self, name):
        # grad_fn._saved_self, _raw_saved_other, _saved_self_sym_sizes...: PyTorch's generated node attributes
        if name.startswith(("_saved_", "_raw_saved_")):
            from ..autograd import saved_attrs
            return saved_attrs.get(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        from ..autograd import saved_attrs
        return sorted(set(super().__dir__()) | set(saved_attrs.names(self)))

    def _check_versions(self):
        for vc, v, val, who, nonleaf in self.versions:
            if nonleaf and vc.detached == v and who >= 0:  # a saved non-leaf detach_()ed since (not written before)
                t = live_tensor(who, vc)
                if t is not None and t._gfn is None:
                    raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with "
                                       ".detach_().This is not supported, please use out-of-place `.detach()` "
                                       "instead")
            if vc.value != v:
                what = f"{_dtype.legacy_type_name(_dtype.from_np(val.dtype))} {list(val.shape)}"
                if isinstance(who, int) and who < 0:  # a saved output of this node: PyTorch names this node
                    origin = saved_origin(self, -1 - who)
                else:  # a saved input (``who``: its id): PyTorch shows the tensor as it is now (``t_()`` changed
                    t = live_tensor(who, vc)  # its shape) and the grad_fn it has now, none for a leaf
                    if t is not None:
                        what, origin = f"{t.type()} {list(t.shape)}", saved_origin(t._gfn, t._out_nr)
                    else:  # gone (a view of it was written)
                        origin = f", which is an input or output of {self.name()},"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{what}]{origin} is "
                    f"at version {vc.value}; expected version {v} instead. Hint: enable anomaly detection to find "
                    "the operation that failed to compute its gradient, with "
                    "torchish.autograd.set_detect_anomaly(True, check_nan=False).")

    def apply_grads(self, grads, create_graph, need=None):
        """The gradients for the inputs (None where an input has none). ``need``: per input, whether the running
        backward wants its gradient (``autograd.grad``/``backward(inputs=...)`` reach only some inputs); as
        PyTorch's ``should_compute_output``, the others are not computed, so an op that cannot differentiate such
        an input (``igamma``'s ``input``, ``zeta``'s ``x``) does not raise."""
        self.check_alive()
        self._check_versions()
        op = self.op
        mask = self.mask
        if need is not None and any(m and not n for m, n in zip(mask, need)):
            mask = tuple(m and n for m, n in zip(mask, need))
        if not create_graph:
            gvals = tuple(g._d if g is not None else None for g in grads)
            vals, outs = self.saved_values()
            if tracing.active():  # (traced: the static arguments stay static)
                res = _bwd_fn(op, self.static, self.cdt, mask)(vals, outs, gvals)
            else:
                k = backward_kernel(op, self.static, self.cdt, mask)
                vals = tuple(lazy.concrete_all(vals))
                outs = tuple(lazy.concrete_all(outs)) if outs is not None else None
                gvals = tuple(lazy.concrete_all(gvals))
                if _meta.has_meta(gvals) or _meta.has_meta(vals):  # meta tensors: the gradients' shapes only
                    res = _meta.eval_meta(k, (vals, outs, gvals))
                else:
                    res = k(vals, outs, gvals)
            return _per_input(res, mask, live_inputs(op, grads), wrap)
        bop = backward_op(op, self.static, self.cdt, mask, len(self.out_meta))
        vals, outs = self.saved_values()
        edges = self.__dict__.get("saved_edges", self.next_edges)  # (see inplace._bypass_old_view)
        prim = [_rebuild(v, e) for v, e in zip(vals, edges)]
        outs = [Tensor._make(o, True, self, i) for i, o in enumerate(outs)] if outs is not None else []
        n = len(self.out_meta)
        gs = [grads[i] if i < len(grads) else None for i in range(n)]
        args = drop_unused(bop, tuple(prim) + tuple(outs) + tuple(gs))
        res = _registry.apply(bop, args)
        res = detach_independent(bop, args, res if isinstance(res, tuple) else (res,))
        return _per_input(res, mask, live_inputs(op, grads), lambda g: g)


def _per_input(res, mask, live, wrap):
    """The gradient results of the masked inputs spread over all inputs (None elsewhere and where ``live``, when
    given, excludes the input)."""
    it = iter(res)
    out = []
    for i, m in enumerate(mask):
        g = next(it) if m else None
        out.append(wrap(g) if m and (live is None or i in live) else None)
    return out


def _rebuild(val, edge):
    """A Tensor standing for a saved input, linked into the graph, for a backward that is itself recorded."""
    if edge is None:
        return val if not hasattr(val, "dtype") else Tensor._make(val)
    node, nr = edge
    var = getattr(node, "variable", None)
    if var is not None:
        return var
    return Tensor._make(val, True, node, nr)


def _bwd_fn(op, static, cdt, mask):
    """Pure function ``(vals, outs, gs) -> grads of the masked inputs``."""
    fn = _kernels._cast_fn(op, cdt)
    kw = dict(static)
    idx = [i for i, m in enumerate(mask) if m]

    if op.vjp is not None:
        def bwd(vals, outs, gs):
            res = _custom_vjp_all(op, cdt, kw, vals, outs, gs)
            for i in idx:
                if isinstance(res[i], NotDifferentiable):
                    raise res[i].error
            return tuple(_fit(res[i], vals[i]) for i in idx)
        return bwd

    def bwd(vals, outs, gs):
        def f(*dv):
            full = list(vals)
            for i, v in zip(idx, dv):
                full[i] = v
            o = fn(*full, **kw)
            if isinstance(o, (tuple, list)):  # integer outputs (indices) take no cotangent
                return tuple(x if jnp.issubdtype(x.dtype, jnp.inexact) else None for x in o)
            return o
        spread = _spread(op, [vals[i] for i in idx], gs)
        primal_out, pull = jax.vjp(f, *spread)
        if isinstance(primal_out, tuple):
            ct = tuple(None if po is None else _ct(gs[i] if i < len(gs) else None, po)
                       for i, po in enumerate(primal_out))
        else:
            ct = _ct(gs[0], primal_out)
        grads = tuple(map(_conj, pull(jax.tree_util.tree_map(_conj, ct))))
        return tuple(g if s is vals[i] else _fit(_rounded(g), vals[i]) for g, s, i in zip(grads, spread, idx))
    return bwd


_HALF = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))
_EXPANDS = frozenset({"expand", "expand_copy"})


def _spread(op, args, gs):
    """The differentiated inputs of a derived VJP, a float16/bfloat16 operand of an elementwise op that broadcasts
    into its result spread to the result's shape: the gradient is then summed over the broadcast dimensions by
    :func:`_fit` (``jnp.sum``: float32 accumulation, one rounding, as PyTorch's ``sum_to_size``) rather than by the
    transpose of JAX's broadcast, which XLA:CPU accumulates in the half type (the bias gradient of ``x + b`` over
    300 rows was off by 2%). Other inputs, dtypes and ops are passed as they are."""
    first = next((g for g in gs if g is not None), None)  # (the output gradient: the result's shape)
    if first is None or not (op.name in _EXPANDS or op.name in _registry.ELEMENTWISE and op.promote is not None):
        return args  # (promoted: operands that broadcast together; prelu's weight, glu's halves... do not)
    shape = jnp.shape(first)
    return [jnp.broadcast_to(a, shape) if getattr(a, "dtype", None) in _HALF and jnp.shape(a) != shape
            and _broadcasts(jnp.shape(a), shape) else a for a in args]


def _rounded(g):
    """A half-precision gradient's rounding made to stick (XLA:CPU folds a plain one into the sum that follows)."""
    if g is None or not jnp.issubdtype(g.dtype, jnp.floating):
        return g
    return rounded(g.astype(jnp.float32), g.dtype).astype(g.dtype)


def _broadcasts(src, dst):
    return len(src) <= len(dst) and all(s in (1, d) for s, d in zip(src[::-1], dst[::-1]))


def _conj(a):
    """PyTorch's complex gradients are the conjugates of JAX's cotangents (PyTorch propagates conj(dL/dz); JAX's
    VJP of a holomorphic ``f`` multiplies by ``f'(z)`` where PyTorch multiplies by its conjugate): JAX-derived VJPs
    are conjugated on the way in and out. A no-op for real values."""
    return jnp.conj(a) if a is not None and jnp.iscomplexobj(a) else a


class NotDifferentiable:
    """A custom VJP's entry for an input PyTorch does not differentiate: asking for that gradient raises ``error``
    (inside a traced program, where JAX asks for every input's cotangent, the entry is a zero)."""

    def __init__(self, error):
        self.error = error


def _custom_vjp_all(op, cdt, kw, vals, outs, gs):
    """Call ``op.vjp`` (PyTorch's formula) with the inputs cast as in the forward; one entry per input."""
    cvals = list(vals)
    if cdt is not None and not op.vjp_uncast:
        for i in (range(len(vals)) if op.promote_args is None else op.promote_args):
            if vals[i] is not None:
                cvals[i] = jnp.asarray(vals[i], cdt.np)
    g = tuple(gz if gz is not None and gz.dtype != jax.dtypes.float0 else jnp.zeros(o.shape, o.dtype)
              for gz, o in zip(gs, outs))
    multi = len(outs) > 1
    res = op.vjp(g if multi else g[0], *cvals, out=outs if multi else outs[0], **kw)
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    return res + (None,) * (len(vals) - len(res))


def traced_fn(op, static, cdt):
    """The op as a function for use inside a JAX trace. Ops with a PyTorch-specific VJP become
    ``jax.custom_vjp`` functions, so JAX's own transforms (``jax.vjp`` of a compiled step, ``torchish.func``)
    differentiate them with PyTorch's formula, not JAX's (ties, boundaries, zero norms). Under a forward-mode
    transform (``torchish.func.jvp``/``jacfwd``: ``tracing.forward_mode()``) the plain forward is used instead:
    JAX cannot push tangents through a ``custom_vjp``."""
    plain = tracing.forward_mode()
    key = ("traced_plain" if plain else "traced", static, cdt)
    f = op.kernels.get(key)
    if f is not None:
        return f
    fn = _kernels._cast_fn(op, cdt)
    kw = dict(static)
    if op.vjp is None or plain:
        def f(*vals):
            return fn(*vals, **kw)
    else:
        @jax.custom_vjp
        def f(*vals):
            return fn(*vals, **kw)

        def f_fwd(*vals):
            out = fn(*vals, **kw)
            return out, (vals, out)

        def f_bwd(res, g):
            vals, out = res
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            gs = tuple(g) if isinstance(g, (tuple, list)) else (g,)
            # PyTorch's formula takes and gives PyTorch's complex gradients: JAX's cotangents conjugated (_conj)
            grads = _custom_vjp_all(op, cdt, kw, vals, outs, tuple(map(_conj, gs)))
            return tuple(None if (r is None or isinstance(r, NotDifferentiable) or not hasattr(v, "dtype")
                                  or not jnp.issubdtype(v.dtype, jnp.inexact))
                         else _conj(_fit(r, v)) for r, v in zip(grads, vals))
        f.defvjp(f_fwd, f_bwd)
    op.kernels[key] = f
    return f


def _ct(g, primal):
    return g.astype(primal.dtype) if g is not None else jnp.zeros(primal.shape, primal.dtype)


def _fit(g, v):
    """Reduce a gradient to the shape and dtype of the input it belongs to (undo broadcasting)."""
    g = jnp.asarray(g)
    shape = jnp.shape(v)
    if g.shape != shape:
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1)
        g = jnp.sum(g, axis=axes, keepdims=False) if axes else g
        g = g.reshape(shape)
    dt = getattr(v, "dtype", None)
    if dt is not None and g.dtype != dt:
        g = g.astype(dt)
    return g


def backward_kernel(op, static, cdt, mask):
    """The cached jitted ``(vals, outs, gs) -> grads of the masked inputs``; one per op signature whatever the
    values of the op's dynamic integers (``ops/dynamic.py``), which it takes as values."""
    kst, dv = _dynamic.split_values(op, static)
    key = (kst, cdt, mask)
    k = op.bwd_kernels.get(key)
    if k is None:
        k = jax.jit(dynamic_bwd_fn(op, kst, cdt, mask) if dv else _bwd_fn(op, kst, cdt, mask))
        if op.bucket is not None:
            k = functools.partial(op.bucket.backward, k, mask)
        op.bwd_kernels[key] = k
    return _Bound(k, dv) if dv else k


def dynamic_bwd_fn(op, kst, cdt, mask):
    """``(vals, outs, gs, ints) -> grads``: :func:`_bwd_fn` for the static arguments ``kst`` with its Slots
    filled by ``ints``."""
    def bwd(vals, outs, gs, ints):
        return _bwd_fn(op, _dynamic.fill(kst, ints), cdt, mask)(vals, outs, gs)
    return bwd


class _Bound:
    """A backward kernel with the values of its dynamic integers bound: called as the kernels of other ops are."""

    __slots__ = ("k", "ints")

    def __init__(self, k, ints):
        self.k, self.ints = k, ints

    def __call__(self, vals, outs, gs):
        return self.k(vals, outs, gs, self.ints)


_BACKWARD_OPS: dict = {}
_GRADS_AT: dict = {}  # backward op -> the position of its first incoming-gradient argument
_BACKWARD_OF: dict = {}  # backward op -> (its forward op, its mask of differentiated inputs)

# The grad_fn PyTorch gives a gradient computed with create_graph=True, where it is not ``<Op>BackwardBackward0``:
# the last operation of the op's derivative formula (``sin``: ``grad * cos(self)``), or the backward function of
# its own it calls (``relu``: ``threshold_backward``).
_BACKWARD_GRAD_NAMES = {
    **{n: "MulBackward0" for n in ("sin", "cos", "tan", "exp", "expm1", "rsqrt", "abs", "reciprocal", "asin", "acos",
                                   "sinh", "cosh", "asinh", "erf", "erfc", "erfinv", "lgamma", "digamma", "pow", "mul",
                                   "silu", "prod_all")},
    **{n: "DivBackward0" for n in ("log", "log2", "log10", "log1p", "sqrt", "atan", "atanh")},
    **{n: "WhereBackward0" for n in ("logit", "sinc")},
    "exp2": "MulBackward1", "view": "ViewBackward0", "relu": "ThresholdBackwardBackward0",
    # (a view's derivative is the inverse view: its own node)
    "t": "TBackward0", "transpose": "TransposeBackward0", "permute": "PermuteBackward0", "unsqueeze": "SqueezeBackward1",
    "softmax": "SoftmaxBackwardDataBackward0", "log_softmax": "LogSoftmaxBackwardDataBackward0",
}


_USED: dict = {}


def _analyse(op, args):
    """Which of ``args`` ``op``'s forward reads at all, and which each of its outputs depends on (from its jaxpr,
    once per op): ``(used, deps)``."""
    closed = jax.make_jaxpr(lambda *a: op.fwd(*a))(*[_stand_in(a._d) if isinstance(a, Tensor) else a for a in args])
    jaxpr = closed.jaxpr
    leaves = [jax.tree_util.tree_leaves(a._d if isinstance(a, Tensor) else a) for a in args]
    owner, k = {}, 0
    for i, lv in enumerate(leaves):
        for j in range(len(lv)):
            owner[id(jaxpr.invars[k + j])] = i
        k += len(lv)
    deps = tuple(_flow(jaxpr, [frozenset((owner[id(v)],)) for v in jaxpr.invars],
                       op.name.removesuffix("_backward") in _READS_INPUT))
    read = {id(v) for v in jaxpr.outvars}
    for e in reversed(jaxpr.eqns):  # dead-code elimination: only what the outputs need
        if e.effects or any(id(v) in read for v in e.outvars):
            read |= {id(v) for v in e.invars}
    used = tuple(any(owner.get(id(v)) == i for v in jaxpr.invars if id(v) in read) for i in range(len(args)))
    return used, deps


# primitives whose one sub-program runs once on their operands (their outputs' dependencies are the sub-program's;
# loops are not: a carry feeds itself)
_CALLS = frozenset(("pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                    "custom_vjp_call_jaxpr", "checkpoint", "remat"))
_NONE = frozenset()


# Ops whose gradient PyTorch computes with a backward function of the input itself (``threshold_backward(grad,
# self, 0)``, ``grad * self.sgn()``, ``adaptive_max_pool2d_backward(grad, self, indices)``): that gradient, recorded
# with create_graph=True, requires grad through the input even though it is piecewise constant in it. Elsewhere a
# dependency through a mask (clamp, where, minimum, max, sort, indexing) is none, as PyTorch's formulas.
_READS_INPUT = frozenset(("relu", "abs", "hardtanh", "leaky_relu", "threshold", "hardshrink", "softshrink",
                          "hardsigmoid", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "l1_loss"))


def _flow(jaxpr, ins, discrete=False):
    """The input positions each output of ``jaxpr`` depends on differentiably, given those of its inputs: an
    equation's outputs depend on what its inputs depend on, except integer and bool values (masks, comparisons,
    indices), which carry no gradient (unless ``discrete``)."""
    dep = {id(v): d for v, d in zip(jaxpr.invars, ins)}
    for e in jaxpr.eqns:
        ins_e = [dep.get(id(v), _NONE) for v in e.invars]
        sub = None
        if e.primitive.name in _CALLS:
            sub = next((e.params[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if k in e.params), None)
            sub = getattr(sub, "jaxpr", sub)  # a ClosedJaxpr's program
        if sub is not None and len(sub.invars) == len(e.invars) and len(sub.outvars) == len(e.outvars):
            outs = _flow(sub, ins_e, discrete)
        else:
            outs = [_NONE.union(*ins_e)] * len(e.outvars)
        for v, d in zip(e.outvars, outs):
            dep[id(v)] = d if discrete or jnp.issubdtype(v.aval.dtype, jnp.inexact) else _NONE
    return [dep.get(id(v), _NONE) for v in jaxpr.outvars]


def drop_unused(op, args):
    """``args`` with the graph-linked Tensors that ``op``'s forward never reads replaced by plain values, so its
    outputs require grad only when they really depend on a differentiable input (as PyTorch's derivative formulas:
    the gradient of ``x * 2`` does not require grad). Found once per op from its jaxpr."""
    used = _analysis(op, args)[0]
    if len(used) != len(args):  # (an analysis of another arity: keep every argument rather than drop some)
        return args
    return tuple(Tensor._make(a._d) if isinstance(a, Tensor) and a._rg and not u else a for a, u in zip(args, used))


def _stand_in(v):
    """What :func:`_analyse` traces for a value: an empty array as one of size 1 in each empty dimension. JAX
    builds the result of an op on an empty array as a constant, which would read as no dependency at all, and the
    analysis is kept for every later call of the op (a first create_graph backward through an empty tensor left
    every later gradient of that op detached)."""
    shape = jnp.shape(v)
    if 0 not in shape:
        return v
    return jax.ShapeDtypeStruct(tuple(max(d, 1) for d in shape), v.dtype)


def _analysis(op, args):
    # per op and argument shapes: a dependency can vanish for one shape only (cumprod's gradient over a dim of size
    # 1 is the incoming gradient itself; kept for the op, it left later gradients over longer dims detached)
    key = (op, tuple(jnp.shape(a._d) if isinstance(a, Tensor) else None for a in args))
    got = _USED.get(key)
    if got is None:
        try:
            got = _analyse(op, args)
        except Exception:  # noqa: BLE001 - analysis is an optimisation of requires_grad; keep every edge
            got = _linear_backward(op, args)
            if got is None:
                got = ((True,) * len(args), None)
                if any(isinstance(a, Tensor) and 0 in a.shape for a in args):
                    return got  # (the stand-ins may not fit the op's static shapes: analyse a later call)
        _USED[key] = _USED[op] = got  # (by op alone: the latest, for live_inputs)
    return got


def _linear_backward(op, args):
    """``(used, deps)`` of the backward of a linear op (``OpDef.linear``: its VJP needs no saved values), known
    without a trace: it reads the incoming gradients only, and each input's gradient may depend on all of them.
    For when the trace fails: an empty input's stand-in does not fit the op (``cat`` of two (0, 3) tensors: inputs
    (1, 3), gradient (1, 3), not (2, 3); ``split`` of a (3, 0) one, whose static sizes hold the 0), and keeping
    every edge made the gradients of a ``create_graph`` backward require grad (autograd fuzzer seed 9100224)."""
    of = _BACKWARD_OF.get(op)
    if of is None or not of[0].linear:
        return None
    first = _GRADS_AT[op]
    grads = frozenset(i for i in range(first, len(args)) if isinstance(args[i], Tensor))
    return tuple(i in grads for i in range(len(args))), (grads,) * sum(map(bool, of[1]))


def detach_independent(op, args, outs):
    """``outs`` of ``op`` (a backward recorded for create_graph) with those that depend on no input requiring
    grad made plain tensors, as PyTorch's separate derivative formulas give them (a bias's gradient, the sum of
    the incoming gradient, does not require grad)."""
    deps = _analysis(op, args)[1]
    if deps is None or len(deps) != len(outs):
        return outs
    rg = [isinstance(a, Tensor) and a._rg for a in args]
    for o, d in zip(outs, deps):
        if o._gfn is not None and not any(rg[i] for i in d):
            o._rg, o._gfn, o._out_nr = False, None, 0
    return outs


def live_inputs(op, grads):
    """The inputs of ``op`` a gradient can reach when only some of its outputs got one (a gradient recorded with
    create_graph=True is one output of its backward op, the other inputs' gradients its siblings): the inputs
    those outputs depend on, or None for all. PyTorch's derivative formulas are separate functions, so an input
    that no differentiated output depends on has no edge there, and its ``.grad`` stays None rather than zero."""
    got = _USED.get(op)
    if got is None or got[1] is None or len(got[1]) != len(grads) or all(g is not None for g in grads):
        return None
    return frozenset().union(*(d for d, g in zip(got[1], grads) if g is not None))


def backward_op(op, static, cdt, mask, n_out):
    """The backward of ``op`` as an op of its own, so that create_graph=True records it (higher-order grads). One
    per number of outputs too: ``unbind``'s static arguments do not give it, and the op's analysis of which
    arguments its formula reads (:func:`drop_unused`) holds for one arity only."""
    key = (op, static, cdt, mask, n_out)
    bop = _BACKWARD_OPS.get(key)
    if bop is None:
        bwd = _bwd_fn(op, static, cdt, mask)
        n_in = len(mask)
        has_outs = op.save_out

        def fwd(*flat):
            vals = flat[:n_in]
            outs = flat[n_in:n_in + n_out] if has_outs else None
            gs = flat[n_in + n_out:] if has_outs else flat[n_in:]
            res = bwd(tuple(vals), outs, tuple(gs))
            return res if len(res) != 1 else res[0]

        name = _BACKWARD_GRAD_NAMES.get(op.name) or op.grad_name.replace("Backward0", "BackwardBackward0")
        bop = _registry.OpDef(op.name + "_backward", fwd, grad_name=name)
        _GRADS_AT[bop] = n_in + n_out if has_outs else n_in
        _BACKWARD_OF[bop] = (op, mask)
        _BACKWARD_OPS[key] = bop
    return bop
