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

import re

import weakref

import jax.numpy as jnp

from .. import _meta
from .. import _dtype
from .._tensor import Tensor, wrap
from ..autograd.graph import ERR_INFERENCE_SAVED, node_class
from ..autograd.grad_mode import STATE, UNUSUAL
from ..autograd import saved_hooks as _saved_hooks
from . import dynamic as _dynamic, lazy, saved as _saved, tracing
from . import barebones as _barebones
from . import float8 as _float8
from . import opnode as _opnode
from .opnode import OpNode, ZerosLike
from .._config import config
from .kernels import _jitted, run_forward
from .dispatch_errors import _cpu_scalars_moved, translate_error, unsigned_numbers

_FLOAT = _dtype._FLOAT
NotDifferentiable = _opnode.NotDifferentiable  # the marker an op's VJP returns (op modules import it from here)


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
        vjp_uncast: ``vjp`` receives the inputs as given, not cast to the promoted dtype (PyTorch's formula computes
            in the operands' own dtypes: addcdiv's ``value / tensor2``); the output gradient has the result's dtype.
        linear: the VJP needs no saved values (add, sum, views...): backward twice through it does not fail.
        differentiable: False for ops whose outputs never carry gradients (comparisons, argmax...).
        view: the first output is a view of the first input (writes to it reach the input).
        dynamic: ``dynamic(static, take) -> static`` for an op whose static arguments hold integers that eager
            kernels take as values (indices, slice starts: see ``ops/dynamic.py``), else None.
        eager: ``eager(fwd, static) -> kernel``: the eager kernel, where ``jax.jit`` of the forward as one program
            compiles slowly (``unbind``: a program's compile time grows with its number of outputs).
        bucket: for an op whose eager kernels would compile for every new input shape and compile slowly (a packed
            recurrent stack: every new batch of lengths), an object whose ``forward(jitted_fwd, *vals)`` and
            ``backward(jitted_bwd, mask, vals, outs, gs)`` pad the values to a few bucketed shapes, call the jitted
            function there and cut the results back (see ``nn/_functional/rnn.py``). Graphs holding a call it is
            ``active(vals)`` for are not lowered or compiled as lazy segments (programs keyed by the exact shapes).
        saved: what PyTorch saves for the backward, per input position: the inputs (digits) and outputs (``"o"``
            all, ``"o1"`` output 1) the gradient of that input reads, e.g. ``("1", "0")`` for mul, ``("o",)``
            for exp. Only the saves of inputs that require grad are made, as PyTorch's generated nodes do. It
            decides which in-place writes make the backward fail and whether a second backward does; the VJP
            itself always sees the forward's (immutable) values. Default: :data:`saved.SAVED`'s entry for
            ``name``, else every Tensor input, and the outputs when the op has a custom ``vjp`` (nothing for
            ``linear`` ops).
    """

    __slots__ = ("name", "fwd", "vjp", "grad_name", "promote", "promote_args", "linear", "differentiable", "view",
                 "node_cls", "kernels", "bwd_kernels", "save_out", "saved", "vjp_uncast", "dynamic", "eager",
                 "bucket", "__weakref__")

    def __init__(self, name, fwd, *, vjp=None, grad_name=None, promote=None, promote_args=None, linear=False,
                 differentiable=True, view=False, save_out=None, saved=None, vjp_uncast=False, dynamic=None,
                 eager=None, bucket=None):
        self.name = name
        self.dynamic = dynamic
        self.eager = eager
        self.bucket = bucket
        self.vjp_uncast = vjp_uncast
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
# ops whose complex outputs PyTorch's autograd does not differentiate (they are missing from its codegen's
# GRADIENT_IMPLEMENTED_FOR_COMPLEX; their in-place forms are not): recording one raises its error
NO_COMPLEX_GRAD = frozenset({"silu", "nan_to_num", "embedding", "slice_copy", "select_copy", "view_as_complex_copy"})
# names of the ops whose output PyTorch's TensorIterator allocates with its inputs' memory layout (ops.out_layout:
# the unary and binary op families add theirs)
ELEMENTWISE: set = set()
# names of the ops whose outputs PyTorch allocates in their input's suggested memory format (channels-last
# convolutions, pooling, normalization, resampling, padding: ops.out_layout.set_suggested_layout)
SUGGESTS_FORMAT: set = set()
# names of the LAPACK-backed ops some of whose outputs PyTorch allocates as batches of column-major matrices
# (ops.out_layout.set_column_major: the table, and which outputs)
COLUMN_MAJOR: dict = {}


def _default_grad_name(name):
    """PyTorch's generated node name: the op's words capitalised, and a letter after a digit too (``log1p`` ->
    ``Log1PBackward0``, ``special_i0e`` -> ``SpecialI0EBackward0``)."""
    camel = "".join(p.capitalize() for p in name.strip("_").split("_"))
    return re.sub(r"(?<=\d)[a-z]", lambda m: m.group(0).upper(), camel) + "Backward0"


def defop(name, fwd, **kw) -> OpDef:
    """Register an op (see :class:`OpDef`); re-registering a name replaces it."""
    op = OpDef(name, fwd, **kw)
    OPS[name] = op
    return op


def overload(op, grad_name, **kw) -> OpDef:
    """Another of PyTorch's overloads of ``op`` (``fmod.Tensor`` beside ``fmod.Scalar``): the same name, forward,
    VJP, promotion and saves, under the node name that overload shows; ``kw`` replaces any of them (a VJP that
    raises, for an overload PyTorch does not differentiate). Not registered: :data:`OPS` keeps ``op``."""
    fields = dict(vjp=op.vjp, promote=op.promote, promote_args=op.promote_args, linear=op.linear,
                  differentiable=op.differentiable, view=op.view, save_out=op.save_out, saved=op.saved,
                  vjp_uncast=op.vjp_uncast, dynamic=op.dynamic, eager=op.eager,
                  bucket=op.bucket)
    fields.update(kw)
    return OpDef(op.name, op.fwd, grad_name=grad_name, **fields)


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
    """``key[1]`` is ``st`` with the op's dynamic integers as Slots (``ops/dynamic.py``): the kernel takes them as
    trailing arguments."""
    cdt = compute_dtype(op, args) if op.promote is not None else None
    # PyTorch has few float8 kernels: the others raise (some by the operands' sizes: such calls are not cached)
    by_size = not _dtype.FLOAT8_NP.isdisjoint(key[2:]) and _float8.check(op, args, dict(st))
    if not _barebones.NP.isdisjoint(key[2:]):  # (and few uint16/uint32/uint64 kernels)
        _barebones.check(op, args, dict(st), cdt)
    entry = (cdt, _jitted(op, key[1], cdt))
    if by_size:
        return entry
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
# apply


# Set by ``autograd.forward_ad`` while a dual level is open: ``forward_hook(op, args, static, cdt, result)`` gives the
# result the tangents implied by the inputs' tangents (forward-mode AD). None otherwise (no cost).
forward_hook = None

# Set by ``torchish.amp`` while autocast is on (in some thread): ``autocast_hook(name, args)`` returns ``args`` with
# the casts autocast's policy for the op ``name`` asks for (differentiable ``to_copy`` ops). None otherwise (no cost).
# Front-ends that check dtypes before ``apply`` (``mm``, ``linear``...) call it first under PyTorch's op name.
autocast_hook = None

# Set by ``torchish.func`` while a transform's function runs with autograd recording outside the transform:
# ``read_hook(args)`` sees the arguments of each op among which a Tensor requires grad (the Tensors the function
# captured from outside, which the transform must differentiate too). None otherwise (no cost).
read_hook = None

# Set by ``torchish.utils.flop_counter`` while a FlopCounterMode is active: ``flop_hook(op, args, static, result)``
# sees each op's inputs and result (it counts the ATen products PyTorch's decomposition would run). None otherwise.
flop_hook = None


def apply(op: OpDef, args: tuple, **static):
    """Run ``op`` on ``args`` (Tensors and Python values) and record it for autograd. Returns Tensor(s)."""
    if autocast_hook is not None:
        args = autocast_hook(op.name, args)
    st = tuple(static.items()) if static else ()
    vals = []
    if op.dynamic is None:
        key, dv = [op, st], ()
    else:  # the integers eager kernels take as values (ops/dynamic.py)
        kst, dv = _dynamic.split_values(op, st)
        key = [op, kst]
    req = strided = False
    for a in args:
        if isinstance(a, Tensor):
            v = a._v
            vals.append(v)
            key.append(v.dtype)
            req = req or a._rg
            strided = strided or a._view is not None or a._layout is not None
        else:
            vals.append(a)
            key.append(type(a))
    unusual = UNUSUAL[0]  # (0: no thread traces, records for compile, or is in inference mode: skip those reads)
    if unusual and STATE.recorder is not None:
        STATE.recorder.read(args)
    if req and read_hook is not None:
        read_hook(args)
    key = tuple(key)
    hit = _DISPATCH.get(key)
    if hit is None:
        hit = _dispatch_entry(op, args, st, key)
    cdt, k = hit
    try:
        if config.lazy and not STATE.tracing and STATE.recorder is None:
            with lazy.LOCK:  # (run_forward's lazy branch, inline: recording is the whole cost of a lazy op)
                out = lazy._record(op, vals, st, cdt)
        elif config.lazy or unusual and STATE.tracing:
            out = run_forward(op, vals, st, cdt)
        else:  # the eager fast path: one dict lookup, then the jitted kernel's C++ dispatch
            out = k(*vals, *dv)
    except OverflowError:  # (JAX's, for a Python int beyond int64 given to the jitted kernel)
        wide = unsigned_numbers(args)
        if wide is None:
            raise
        return apply(op, wide, **static)
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
                out = _meta.eval_meta(k, [*vals, *dv])
            except (TypeError, ValueError) as e2:
                raise translate_error(op, args, static, e2) from None
        else:
            moved = _cpu_scalars_moved(args, vals)
            if moved is None:
                raise translate_error(op, args, static, e) from None
            vals = moved
            out = run_forward(op, vals, st, cdt)
    multi = isinstance(out, (tuple, list))
    record = req and op.differentiable and STATE.grad_enabled and not (unusual and STATE.inference)
    if unusual and STATE.tracing and tracing.cuts(record):  # (no gradient reaches it in PyTorch either)
        out = tracing.cut(out)
    if not multi:
        res = wrap(out)
        if type(out) is lazy.LazyValue:
            out.owner = weakref.ref(res)
        if strided and op.name in ELEMENTWISE:  # (an input with PyTorch strides of its own: the output follows)
            from .out_layout import set_output_layout
            set_output_layout(res, args)
        elif strided and op.name in SUGGESTS_FORMAT:
            from .out_layout import set_suggested_layout
            set_suggested_layout(op.name, (res,), args)
        elif op.name in COLUMN_MAJOR:
            from .out_layout import set_column_major
            set_column_major(op.name, (res,), st)
        if record and _inexact(out):
            _record(op, args, vals, st, cdt, (res,), key)
        if op.view:
            res._attach_view(args[0], op, st)
        if forward_hook is not None:
            forward_hook(op, args, st, cdt, res)
        if flop_hook is not None:
            flop_hook(op, args, st, res)
        return res
    res = tuple(wrap(o) for o in out)
    if type(out[0]) is lazy.LazyValue:
        for o, r in zip(out, res):
            o.owner = weakref.ref(r)
    if strided and op.name in ELEMENTWISE:
        from .out_layout import set_output_layout
        for r in res:
            set_output_layout(r, args)
    elif strided and op.name in SUGGESTS_FORMAT:
        from .out_layout import set_suggested_layout
        set_suggested_layout(op.name, res, args)
    elif op.name in COLUMN_MAJOR:
        from .out_layout import set_column_major
        set_column_major(op.name, res, st)
    if record:
        _record(op, args, vals, st, cdt, res, key)
    if op.view:
        for i, r in enumerate(res):
            r._attach_view(args[0], op, st + (("_out", i),))
    if forward_hook is not None:
        forward_hook(op, args, st, cdt, res)
    if flop_hook is not None:
        flop_hook(op, args, st, res)
    return res


_INEXACT: dict = {}


def _inexact_dtype(dt):
    """Whether ``dt`` is a floating or complex dtype (cached: ``jnp.issubdtype`` is slow per op)."""
    r = _INEXACT.get(dt)
    if r is None:
        r = _INEXACT[dt] = bool(jnp.issubdtype(dt, jnp.inexact))
    return r


def _inexact(v):
    """Whether ``v``'s dtype is floating or complex."""
    return _inexact_dtype(v.dtype)


def _refuse_complex_grad(op, args, outs):
    """PyTorch's error for recording an op of :data:`NO_COMPLEX_GRAD` with a complex output, unless the op is
    writing its first input in place (``silu_``, ``nan_to_num_``)."""
    from .inplace import writing
    if any(jnp.issubdtype(o._v.dtype, jnp.complexfloating) for o in outs) and not writing(args[0]):
        raise RuntimeError(f"{op.name} does not support automatic differentiation for outputs with complex dtype.")


def _record(op, args, vals, st, cdt, outs, key=None):
    """Make ``op``'s node for its outputs ``outs`` and link them to it. ``key``: ``apply``'s dispatch key, whose
    entries after the first two are the arguments' dtypes (Tensors) or types (the rest)."""
    if op.name in NO_COMPLEX_GRAD:
        _refuse_complex_grad(op, args, outs)
    mask, edges = [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and a._rg and (_inexact(a._v) if key is None else _inexact_dtype(key[i + 2])):
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
        meta = (lazy.shape_dtype(outs[0]._v),)
    else:
        meta = tuple(lazy.shape_dtype(o._v) for o in outs)
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
                vc = a._vc  # (last: whether it was a non-leaf when saved, which a later detach_() makes stale)
                versions.append((vc, vc.value, a._v, id(a), a._gfn is not None))
        if ins and ins[0] == 0:  # the first record is the op's ``self``: an in-place op keeps its old value
            node.saves_self = True  # (see inplace.restamp)
        for j in save_outs:
            o = outs[j]
            versions.append((o._vc, 0, o._v, -1 - j, True))  # (a saved output: -1 - its index, never an id)
        node.versions = tuple(versions)
    else:
        node.versions = ()
    node.outs = tuple(o._v for o in outs) if op.save_out else None
    for i, o in enumerate(outs):
        if _inexact_dtype(meta[i][1]):
            o._rg = True
            o._gfn = node
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
