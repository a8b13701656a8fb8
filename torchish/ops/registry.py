"""The op registry: each op is ONE entry — a pure JAX forward, an optional VJP, and how its inputs are promoted.

``apply(op, args, **static)`` is the single funnel every public function and Tensor method goes through:

1. unwrap Tensors to their JAX values, compute PyTorch's result dtype for the op's promotion rule;
2. call the op's forward through a cache of ``jax.jit`` kernels keyed by ``(static args, compute dtype)``
   (never trace per call: a jitted call is an order of magnitude cheaper than an eager ``jax.vjp``);
3. when grad recording is on and an input requires grad, create an :class:`OpNode` that saves the input values
   (and their versions) and whose backward is the op's VJP, itself traced once into a cached jitted kernel.

With ``create_graph=True`` the backward runs as an op of its own (its VJP derived by JAX again), so gradients of
gradients work to any order.
"""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _meta
from .. import _dtype
from .._tensor import Tensor, wrap
from ..autograd.graph import ERR_INFERENCE_SAVED, Node, node_class
from ..autograd.grad_mode import STATE
from ..autograd import saved_hooks as _saved_hooks
from . import lazy, saved as _saved, tracing
from .._config import config

_FLOAT = _dtype._FLOAT


class OpDef:
    """One registry entry.

    Args:
        name: the op's name (also its key in :data:`OPS`).
        fwd: pure JAX function ``fwd(*inputs, **static)``; inputs are arrays or Python scalars (or None).
        vjp: optional ``vjp(g, *inputs, out=..., **static)`` returning one gradient per input (None where not
            differentiable). Without it the VJP is derived by ``jax.vjp`` of ``fwd``.
        grad_name: the ``grad_fn`` class name PyTorch shows (``MulBackward0``).
        promote: how input dtypes combine: None (fwd sees them as given), ``"same"`` (cast to PyTorch's result
            type), ``"float"`` (result type, integers and bools promoted to the default float).
        promote_args: which argument positions take part in promotion (default: all).
        linear: the VJP needs no saved values (add, sum, views...): backward twice through it does not fail.
        differentiable: False for ops whose outputs never carry gradients (comparisons, argmax...).
        view: the first output is a view of the first input (writes to it reach the input).
        saved: what PyTorch saves for the backward, per input position: the inputs (digits) and outputs (``"o"``
            all, ``"o1"`` output 1) the gradient of that input reads, e.g. ``("1", "0")`` for mul, ``("o",)``
            for exp. Only the saves of inputs that require grad are made, as PyTorch's generated nodes do. It
            decides which in-place writes make the backward fail and whether a second backward does; the VJP
            itself always sees the forward's (immutable) values. Default: :data:`saved.SAVED`'s entry for
            ``name``, else every Tensor input, and the outputs when the op has a custom ``vjp`` (nothing for
            ``linear`` ops).
    """

    __slots__ = ("name", "fwd", "vjp", "grad_name", "promote", "promote_args", "linear", "differentiable", "view",
                 "node_cls", "kernels", "bwd_kernels", "save_out", "saved", "__weakref__")

    def __init__(self, name, fwd, *, vjp=None, grad_name=None, promote=None, promote_args=None, linear=False,
                 differentiable=True, view=False, save_out=None, saved=None):
        self.name = name
        self.fwd = fwd
        self.vjp = vjp
        self.grad_name = grad_name or _default_grad_name(name)
        self.promote = promote
        self.promote_args = promote_args
        self.linear = linear
        self.differentiable = differentiable
        self.view = view
        self.save_out = bool(vjp is not None) if save_out is None else save_out
        self.saved = _saved.SAVED.get(name) if saved is None else saved
        self.node_cls = node_class(OpNode, self.grad_name)
        self.kernels = {}
        self.bwd_kernels = {}

    def __repr__(self):
        return f"<op {self.name}>"


OPS: dict = {}


def _default_grad_name(name):
    return "".join(p.capitalize() for p in name.strip("_").split("_")) + "Backward0"


def defop(name, fwd, **kw) -> OpDef:
    """Register an op (see :class:`OpDef`); re-registering a name replaces it."""
    op = OpDef(name, fwd, **kw)
    OPS[name] = op
    return op


# ------------------------------------------------------------------------------------------------------------
# dtypes


_PROMO_CACHE: dict = {}


def compute_dtype(op, args):
    """The dtype op's promoted inputs are cast to (a torchish dtype), or None when the op does not promote.

    Cached on the raw operand description (numpy dtype and dim-ness of Tensors, Python type of scalars). Calls whose
    promoted Tensors share one dtype are answered before this, by apply's dispatch cache.
    """
    idx = op.promote_args
    key = [op.promote]
    for i in (range(len(args)) if idx is None else idx):
        a = args[i]
        if isinstance(a, Tensor):
            d = a._v
            key.append((d.dtype, d.ndim != 0))
        elif a is not None:
            key.append(type(a))
    key = tuple(key)
    try:
        return _PROMO_CACHE[key]
    except KeyError:
        pass
    keys = tuple((_dtype.from_np(k[0]), 2 if k[1] else 1) if isinstance(k, tuple) else
                 (_dtype.scalar_dtype(k(0) if k is not complex else 0j), 0) for k in key[1:])
    dt = _dtype.result_type_from_keys(keys) if keys else None
    if dt is not None and op.promote == "float" and dt.category < _FLOAT:
        dt = _dtype.DEFAULTS.float
    _PROMO_CACHE[key] = dt
    return dt


# (op, static, operand dtypes / Python types) -> (compute dtype, jitted kernel): everything apply needs to dispatch,
# for calls whose promoted Tensors share one dtype (then dim-ness cannot change the compute dtype).
_DISPATCH: dict = {}


def _dispatch_entry(op, args, st, key):
    cdt = compute_dtype(op, args) if op.promote is not None else None
    entry = (cdt, kernel(op, st, cdt))
    idx = op.promote_args
    promoted = {args[i]._v.dtype for i in (range(len(args)) if idx is None else idx) if isinstance(args[i], Tensor)}
    if len(promoted) <= 1 or op.promote is None:
        _DISPATCH[key] = entry
    return entry


def _reset_promotion_cache():
    _PROMO_CACHE.clear()
    _DISPATCH.clear()


_dtype._ON_DEFAULT_CHANGE.append(_reset_promotion_cache)


# ------------------------------------------------------------------------------------------------------------
# kernels


_HALF_NP = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))
_F32 = np.dtype(np.float32)
# Ops PyTorch's CPU kernels evaluate in float32 ("opmath") for float16/bfloat16 and round once, with the positions
# whose Python number or 0-dim tensor they take at float32 precision (the operand's original value, not first
# rounded to the half type): ``x * 0.1`` in bfloat16 is round(float(x) * 0.1f), not x * round(0.1).
OPMATH = {"mul": (1,), "div": (1,), "div_mode": (1,), "floor_divide": (1,), "addcmul": (3,), "addcdiv": (3,)}


def _opmath_fn(fwd, idx, npdt, keep):
    """fwd in float32 for a half-precision ``npdt``: promoted inputs rounded to ``npdt`` (except a 0-dim operand at
    a ``keep`` position), then widened; a float32 result is rounded back to ``npdt``."""
    def opmath_fwd(*vals, **static):
        vals = list(vals)
        for i in range(len(vals)):
            v = vals[i]
            promoted = idx is None or i in idx
            if v is None or not (promoted or i in keep):
                continue
            v = jnp.asarray(v)
            if promoted and not (i in keep and v.ndim == 0):
                v = v.astype(npdt)
            vals[i] = v.astype(_F32)
        out = fwd(*vals, **static)
        return out.astype(npdt) if out.dtype == _F32 else out

    return opmath_fwd


def _cast_fn(op, cdt):
    """fwd with promoted inputs cast to ``cdt`` inside the kernel (so the cast fuses with the op)."""
    fwd = op.fwd
    if cdt is None:
        return fwd
    npdt = cdt.np
    idx = op.promote_args
    if npdt in _HALF_NP and op.name in OPMATH:
        return _opmath_fn(fwd, idx, npdt, OPMATH[op.name])

    def cast_fwd(*vals, **static):
        vals = list(vals)
        for i in (range(len(vals)) if idx is None else idx):
            v = vals[i]
            if v is not None:
                vals[i] = v.astype(npdt) if hasattr(v, "astype") else jnp.asarray(v, npdt)
        return fwd(*vals, **static)

    return cast_fwd


def kernel(op, static, cdt):
    key = (static, cdt)
    k = op.kernels.get(key)
    if k is None:
        fn = _cast_fn(op, cdt)
        kw = dict(static)
        k = jax.jit(lambda *vals: fn(*vals, **kw))
        op.kernels[key] = k
    return k


def run_forward(op, vals, static, cdt):
    """Run op's forward on raw values: through the cached jitted kernel, or inline when tracing."""
    if tracing.active():
        return traced_fn(op, static, cdt)(*vals)
    if config.lazy:
        if STATE.recorder is None:
            return lazy.record(op, vals, static, cdt)
    if lazy.STATS["calls_recorded"]:
        vals = lazy.concrete_all(vals)
    return kernel(op, static, cdt)(*vals)


# ------------------------------------------------------------------------------------------------------------
# apply


# Set by ``autograd.forward_ad`` while a dual level is open: ``forward_hook(op, args, static, cdt, result)`` gives the
# result the tangents implied by the inputs' tangents (forward-mode AD). None otherwise (no cost).
forward_hook = None

# Set by ``torchish.amp`` while autocast is on (in some thread): ``autocast_hook(name, args)`` returns ``args`` with
# the casts autocast's policy for the op ``name`` asks for (differentiable ``to_copy`` ops). None otherwise (no cost).
# Front-ends that check dtypes before ``apply`` (``mm``, ``linear``...) call it first under PyTorch's op name.
autocast_hook = None


def apply(op: OpDef, args: tuple, **static):
    """Run ``op`` on ``args`` (Tensors and Python values) and record it for autograd. Returns Tensor(s)."""
    if autocast_hook is not None:
        args = autocast_hook(op.name, args)
    st = tuple(static.items()) if static else ()
    vals = []
    key = [op, st]
    req = False
    for a in args:
        if isinstance(a, Tensor):
            v = a._v
            vals.append(v)
            key.append(v.dtype)
            req = req or a._rg
        else:
            vals.append(a)
            key.append(type(a))
    if STATE.recorder is not None:
        STATE.recorder.read(args)
    key = tuple(key)
    hit = _DISPATCH.get(key)
    if hit is None:
        hit = _dispatch_entry(op, args, st, key)
    cdt, k = hit
    try:
        if STATE.tracing or config.lazy:
            out = run_forward(op, vals, st, cdt)
        else:  # the eager fast path: one dict lookup, then the jitted kernel's C++ dispatch
            out = k(*vals)
    except (TypeError, ValueError) as e:
        if lazy.STATS["calls_recorded"] and lazy.LazyValue in map(type, vals):
            # an input still pending from lazy capture (jit refuses it): run what is pending, then the kernel
            for a in args:
                if isinstance(a, Tensor):
                    a._d  # noqa: B018  (materialises: the Tensor now holds a concrete array)
            return apply(op, args, **static)
        if _meta.has_meta(vals):  # meta tensors (no data): the outputs' shapes and dtypes only
            err = _meta.mixed_error(vals)
            if err is not None:
                raise err from None
            try:
                out = _meta.eval_meta(k, vals)
            except (TypeError, ValueError) as e2:
                raise translate_error(op, args, static, e2) from None
        else:
            moved = _cpu_scalars_moved(args, vals)
            if moved is None:
                raise translate_error(op, args, static, e) from None
            vals = moved
            out = run_forward(op, vals, st, cdt)
    multi = isinstance(out, (tuple, list))
    record = req and op.differentiable and STATE.grad_enabled and not STATE.inference
    if not multi:
        res = wrap(out)
        if type(out) is lazy.LazyValue:
            out.owner = weakref.ref(res)
        if record and _inexact(out):
            _record(op, args, vals, st, cdt, (res,))
        if op.view:
            res._attach_view(args[0], op, st)
        if forward_hook is not None:
            forward_hook(op, args, st, cdt, res)
        return res
    res = tuple(wrap(o) for o in out)
    if type(out[0]) is lazy.LazyValue:
        for o, r in zip(out, res):
            o.owner = weakref.ref(r)
    if record:
        _record(op, args, vals, st, cdt, res)
    if op.view:
        for i, r in enumerate(res):
            r._attach_view(args[0], op, st + (("_out", i),))
    if forward_hook is not None:
        forward_hook(op, args, st, cdt, res)
    return res


_INEXACT: dict = {}


def _inexact(v):
    """Whether ``v``'s dtype is floating or complex (cached per dtype: ``jnp.issubdtype`` is slow per op)."""
    dt = v.dtype
    r = _INEXACT.get(dt)
    if r is None:
        r = _INEXACT[dt] = bool(jnp.issubdtype(dt, jnp.inexact))
    return r


def _record(op, args, vals, st, cdt, outs):
    mask, edges, any_in = [], [], False
    for a in args:
        if isinstance(a, Tensor) and a._rg and _inexact(a._v):
            mask.append(True)
            edges.append(a._edge())
        else:
            mask.append(False)
            edges.append(None)
    mask = tuple(mask)
    spec = op.saved
    if spec is None:
        saves = not op.linear
        ins, save_outs = range(len(args)), range(len(outs)) if op.save_out else ()
    else:
        ins, save_outs, saves = _saved.plan(spec, mask, len(outs))
    if len(outs) == 1:
        o = outs[0]._v
        meta = ((o.shape, o.dtype),)
    else:
        meta = tuple((o._v.shape, o._v.dtype) for o in outs)
    node = op.node_cls(tuple(edges), meta, saves)
    node.op = op
    node.static = st
    node.cdt = cdt
    node.mask = mask
    node.vals = tuple(vals)
    node.packed = None
    hooks = STATE.saved_hooks if saves and _saved_hooks.ACTIVE else None
    if hooks:  # saved_tensors_hooks: packed once the outputs are linked (a saved output shows its grad_fn)
        node.versions = ()
    elif saves:
        versions = []
        for i in ins:
            a = args[i]
            if isinstance(a, Tensor):
                if a._inf:  # PyTorch's SavedVariable refuses inference tensors
                    raise RuntimeError(ERR_INFERENCE_SAVED)
                vc = a._vc
                versions.append((vc, vc.value, a._v, id(a)))
        for j in save_outs:
            o = outs[j]
            versions.append((o._vc, 0, o._v, None))
        node.versions = tuple(versions)
    else:
        node.versions = ()
    node.outs = tuple(o._v for o in outs) if op.save_out else None
    for i, o in enumerate(outs):
        if _inexact(o._v):
            o._rg = True
            o._grad_fn = node
            o._out_nr = i
    if hooks:
        _pack_saved(node, hooks[-1], spec, args, outs)


def _pack_saved(node, hooks, spec, args, outs):
    """Give each tensor ``node`` saves to the pack hook, in PyTorch's order, and keep what it returns instead:
    the node's own references become shape-and-dtype placeholders (:class:`ZerosLike`) until backward unpacks."""
    vals = list(node.vals)
    kept = list(node.outs) if node.outs is not None else None
    packed = []
    op = node.op
    names = _saved.names(op.name, op.grad_name, spec, len(args), len(outs))
    for kind, j in _saved.pack_order(spec, node.mask, len(outs), op.save_out, names and names[0]):
        t = args[j] if kind == "i" else outs[j]
        if not isinstance(t, Tensor):
            continue  # a Python number PyTorch wraps into a tensor: saved, never given to the hook
        if t._inf:
            raise RuntimeError(ERR_INFERENCE_SAVED)
        packed.append((kind, j, _saved_hooks.pack(hooks, t)))
        if kind == "i":
            vals[j] = ZerosLike(vals[j])
        elif kept is not None:
            kept[j] = ZerosLike(kept[j])
    node.vals = tuple(vals)
    node.outs = tuple(kept) if kept is not None else None
    node.packed = tuple(packed) if packed else None


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
        return not a.weak_type and _inexact(a)
    return t is lazy.LazyValue and not v.weak_type and _inexact(v)


# Positions PyTorch's node lists in ``next_functions`` even when they hold no array: the Python-number operands it
# wraps into tensors (``x * 2`` is ``mul.Tensor``) and the optional Tensors (``Tensor?``: norm weights, conv bias,
# clamp bounds) left as None; both show as ``(None, 0)``. Elsewhere Python numbers and Nones are Scalar or static
# arguments PyTorch's node omits.
_LISTED = {"add": (0, 1), "sub": (0, 1), "mul": (0, 1), "div": (0, 1), "where": (1, 2), "clamp_tensor": (1, 2),
           "layer_norm": (1, 2), "batch_norm": (1, 2), "group_norm": (1, 2), "convolution": (2,)}
# reflected operators (``2 * x``) call ``x.mul(2)`` in PyTorch: the tensor comes first
_COMMUTATIVE = ("add", "mul")


def _is_array(v):
    return hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, np.generic)


def shown_inputs(op, vals, mask):
    """The input positions PyTorch's node lists in ``next_functions`` (and returns gradients for when called), in
    its order: the Tensor operands the op differentiates. Python numbers and Nones are absent unless :data:`_LISTED`
    names their place; Tensors outside the promoted operands (``where``'s condition) or, for ops
    that do not promote, of integer or bool dtype (indices, masks) have no derivative formula (absent)."""
    listed = _LISTED.get(op.name, ())
    operands = range(len(vals)) if op.promote is None or op.promote_args is None else op.promote_args
    used = _USED.get(op)  # a backward op: the values its formula does not read are no inputs of PyTorch's node
    pos = []
    for i, v in enumerate(vals):
        if used is not None and not used[i]:
            continue
        if mask[i] or i in listed:
            pos.append(i)
        elif _is_array(v) and (i in operands if op.promote is not None else _inexact(v)):
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
        edges = self.next_edges
        return tuple((edges[i][0], edges[i][1]) if edges[i] is not None else (None, 0) for i in self._shown_inputs())

    def __call__(self, *grads):
        out = self.apply_grads(list(grads), STATE.grad_enabled)
        out = [out[i] for i in self._shown_inputs()]
        return out[0] if len(out) == 1 else tuple(out)

    def release(self):
        if self._saves:
            self._released = True
            self.release_saved()
        elif self.vals is not None and type(self.vals) is not Released:
            self.vals = Released(ZerosLike(v) if _droppable(v) else v for v in self.vals)
            if self.outs is not None:
                self.outs = Released(ZerosLike(v) if _droppable(v) else v for v in self.outs)

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
        for vc, v, val, _ in self.versions:
            if vc.value != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{_dtype.legacy_type_name(_dtype.from_np(val.dtype))} {list(val.shape)}], which is "
                    f"an input or output of {self.name()}, is at version {vc.value}; expected version {v} instead. "
                    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                    "with torchish.autograd.set_detect_anomaly(True).")

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        self._check_versions()
        op = self.op
        if not create_graph:
            gvals = tuple(g._d if g is not None else None for g in grads)
            k = backward_kernel(op, self.static, self.cdt, self.mask)
            vals, outs = self.saved_values()
            if tracing.active():
                res = k.__wrapped__(vals, outs, gvals)
            else:
                vals = tuple(lazy.concrete_all(vals))
                outs = tuple(lazy.concrete_all(outs)) if outs is not None else None
                res = k(vals, outs, tuple(lazy.concrete_all(gvals)))
            it = iter(res)
            return [wrap(next(it)) if m else None for m in self.mask]
        bop = backward_op(op, self.static, self.cdt, self.mask, len(self.out_meta))
        vals, outs = self.saved_values()
        prim = [_rebuild(v, e) for v, e in zip(vals, self.next_edges)]
        outs = [Tensor._make(o, True, self, i) for i, o in enumerate(outs)] if outs is not None else []
        n = len(self.out_meta)
        gs = [grads[i] if i < len(grads) else None for i in range(n)]
        res = apply(bop, drop_unused(bop, tuple(prim) + tuple(outs) + tuple(gs)))
        res = res if isinstance(res, tuple) else (res,)
        it = iter(res)
        return [next(it) if m else None for m in self.mask]


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
    fn = _cast_fn(op, cdt)
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
        primal_out, pull = jax.vjp(f, *[vals[i] for i in idx])
        if isinstance(primal_out, tuple):
            ct = tuple(None if po is None else _ct(gs[i] if i < len(gs) else None, po)
                       for i, po in enumerate(primal_out))
        else:
            ct = _ct(gs[0], primal_out)
        return tuple(map(_conj, pull(jax.tree_util.tree_map(_conj, ct))))
    return bwd


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
    if cdt is not None:
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
    fn = _cast_fn(op, cdt)
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
            grads = _custom_vjp_all(op, cdt, kw, vals, outs, gs)
            return tuple(None if (r is None or isinstance(r, NotDifferentiable) or not hasattr(v, "dtype")
                                  or not jnp.issubdtype(v.dtype, jnp.inexact))
                         else _fit(r, v) for r, v in zip(grads, vals))
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
    key = (static, cdt, mask)
    k = op.bwd_kernels.get(key)
    if k is None:
        k = jax.jit(_bwd_fn(op, static, cdt, mask))
        op.bwd_kernels[key] = k
    return k


_BACKWARD_OPS: dict = {}
_GRADS_AT: dict = {}  # backward op -> the position of its first incoming-gradient argument

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
    "softmax": "SoftmaxBackwardDataBackward0", "log_softmax": "LogSoftmaxBackwardDataBackward0",
}


_USED: dict = {}


def drop_unused(op, args):
    """``args`` with the graph-linked Tensors that ``op``'s forward never reads replaced by plain values, so its
    outputs require grad only when they really depend on a differentiable input (as PyTorch's derivative formulas:
    the gradient of ``x * 2`` does not require grad). Found once per op from its jaxpr."""
    used = _USED.get(op)
    if used is None:
        try:
            closed = jax.make_jaxpr(lambda *a: op.fwd(*a))(*[a._d if isinstance(a, Tensor) else a for a in args])
            read = {id(v) for v in closed.jaxpr.outvars}
            for e in reversed(closed.jaxpr.eqns):  # dead-code elimination: only what the outputs need
                if e.effects or any(id(v) in read for v in e.outvars):
                    read |= {id(v) for v in e.invars}
            flat_in = closed.jaxpr.invars
            leaves = [jax.tree_util.tree_leaves(a._d if isinstance(a, Tensor) else a) for a in args]
            used, k = [], 0
            for lv in leaves:
                used.append(any(id(flat_in[k + j]) in read for j in range(len(lv))))
                k += len(lv)
            used = tuple(used)
        except Exception:  # noqa: BLE001 - analysis is an optimisation of requires_grad; keep every edge
            used = (True,) * len(args)
        _USED[op] = used
    return tuple(Tensor._make(a._d) if isinstance(a, Tensor) and a._rg and not u else a for a, u in zip(args, used))


def backward_op(op, static, cdt, mask, n_out):
    """The backward of ``op`` as an op of its own, so that create_graph=True records it (higher-order grads)."""
    key = (op, static, cdt, mask)
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
        bop = OpDef(op.name + "_backward", fwd, grad_name=name)
        _GRADS_AT[bop] = n_in + n_out if has_outs else n_in
        _BACKWARD_OPS[key] = bop
    return bop


# ------------------------------------------------------------------------------------------------------------
# errors


def translate_error(op, args, static, e):
    """Turn a JAX error raised by bad user input into the builtin exception PyTorch raises, with its wording."""
    mixed = _device_mismatch(args)
    if mixed is not None:
        return mixed
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    if len(shapes) >= 2 and not _broadcastable(shapes):
        nd = max(len(sh) for sh in shapes)
        padded = [(1,) * (nd - len(sh)) + sh for sh in shapes]
        for i in range(nd - 1, -1, -1):
            sizes = [p[i] for p in padded if p[i] != 1]
            if any(n != sizes[0] for n in sizes):
                other = next(n for n in sizes if n != sizes[0])
                return RuntimeError(f"The size of tensor a ({sizes[0]}) must match the size of tensor b ({other}) "
                                    f"at non-singleton dimension {i}")
    msg = str(e).split("\n")[0]
    return RuntimeError(f"{op.name}: {msg}")


def _device_mismatch(args):
    """PyTorch's error when the arguments of one op live on different devices (None when they do not)."""
    from .. import _device
    devs, _ = _device.committed_devices([a._v for a in args if isinstance(a, Tensor)])
    by_name = {}
    for d in devs:  # host devices of a multi-device CPU run are all "cpu": not a mismatch PyTorch would see
        by_name.setdefault(_device.from_jax(d), d)
    return _device.mixed_devices_error(list(by_name.values())) if len(by_name) > 1 else None


def _cpu_scalars_moved(args, vals):
    """PyTorch lets a 0-dim CPU tensor join an op on an accelerator (``cuda_t * torch.tensor(2.)``): the values with
    such scalars moved to the other tensors' device, or None when the op's devices differ in another way."""
    from .. import _device
    cpu, other, scalars = [], set(), []
    for i, a in enumerate(args):
        v = vals[i]
        if not isinstance(a, Tensor) or not isinstance(v, jax.Array) or isinstance(v, jax.core.Tracer) \
                or not v.committed:
            continue
        dev = next(iter(v.devices()))
        if _device.from_jax(dev).type == "cpu":
            cpu.append(i)
            if v.ndim == 0:
                scalars.append(i)
        else:
            other.add(dev)
    if len(other) != 1 or not scalars or len(scalars) != len(cpu):
        return None
    target = next(iter(other))
    return [jax.device_put(v, target) if i in scalars else v for i, v in enumerate(vals)]


def _broadcastable(shapes):
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


# ------------------------------------------------------------------------------------------------------------
# exporting an op family


class Family:
    """Collects an op family's public functions (``__all__``) and Tensor methods (``METHODS``).

    ``fam = Family(globals())`` then ``fam.public("sum", sum_fn, method=True, inplace=False)``: the function is
    bound in the module under ``name``, listed in ``__all__`` (re-exported by ``torchish``), installed as a Tensor
    method, and with ``inplace=True`` also as ``name_`` (computed out of place, then written back).
    """

    def __init__(self, namespace: dict):
        self.ns = namespace
        self.methods = namespace.setdefault("METHODS", {})
        self.all = namespace.setdefault("__all__", [])

    def public(self, name, fn, method=True, inplace=False, function=True):
        if "<lambda>" in getattr(fn, "__qualname__", "") or "<locals>" in getattr(fn, "__qualname__", ""):
            fn.__name__ = name
            fn.__qualname__ = name
        self.ns[name] = fn
        if function and name not in self.all:
            self.all.append(name)
        if method:
            self.methods[name] = fn
        if inplace:
            from .inplace import make_inplace
            self.methods[name + "_"] = make_inplace(fn, name + "_")
        return fn

    def method(self, name, fn):
        """A Tensor method only (not a ``torchish.*`` function)."""
        return self.public(name, fn, method=True, function=False)
