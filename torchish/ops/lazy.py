"""Lazy capture: eager-looking code, run as fused XLA programs.

With ``torchish.config.lazy = True`` an op does not dispatch a kernel: it records a :class:`LazyCall` and returns
:class:`LazyValue` placeholders that know their shape and dtype (inferred once per op signature with
``jax.eval_shape``, so shape and dtype errors still surface at the line that caused them). A placeholder behaves
like a JAX array — ``__jax_array__``, ``__array__`` and any other attribute access *materialise* it: every
pending call (the *segment* recorded since the last materialisation, in recording order) runs as ONE jitted
program, cached by the segment's structure, which returns every pending value still referenced from outside (by a
Tensor, by a saved value of an autograd node). Reading a value (``.item()``, printing, ``bool()``) and an
optimizer's ``step()`` materialise. The segment's structure is built as ops record, so materialising costs one
pass over the pending calls to find what is still referenced.
"""
from __future__ import annotations

import sys
import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .._config import config
from . import nesting

STATS = {"calls_recorded": 0, "materialisations": 0, "programs_compiled": 0, "op_by_op": 0}

_AVAL_CACHE: dict = {}


class LazyCall:
    """One pending op application."""

    __slots__ = ("op", "static", "cdt", "inputs", "outs", "multi", "pos", "__weakref__")

    def __init__(self, op, static, cdt, inputs, pos):
        self.op = op
        self.static = static
        self.cdt = cdt
        self.inputs = inputs
        self.outs = ()
        self.multi = False
        self.pos = pos  # its place in the pending segment


class LazyValue:
    """A pending array: shape and dtype are known, the value is computed on first use."""

    __slots__ = ("shape", "dtype", "weak_type", "call", "index", "value", "owner", "uses", "__weakref__")

    def __init__(self, call, index, aval):  # aval: (shape, dtype, weak_type)
        self.call = call
        self.index = index
        self.shape, self.dtype, self.weak_type = aval
        self.value = None
        self.owner = None
        self.uses = 0  # how many pending calls take it as an input (references the segment holds)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def resolve(self):
        if self.value is None:
            materialize(self)
        return self.value

    def devices(self):
        for v in self.call.inputs if self.value is None else ():
            if type(v) is LazyValue or hasattr(v, "devices"):
                return v.devices()
        return self.resolve().devices()

    def __jax_array__(self):
        return self.resolve()

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.resolve())
        return a.astype(dtype) if dtype is not None else a

    def __getattr__(self, name):
        return getattr(self.resolve(), name)

    def __repr__(self):
        state = "pending" if self.value is None else "materialised"
        return f"LazyValue({state}, shape={self.shape}, dtype={self.dtype})"

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        return iter(self.resolve())

    def __bool__(self):
        return bool(self.resolve())

    def __float__(self):
        return float(self.resolve())

    def __int__(self):
        return int(self.resolve())

    def __index__(self):
        return int(self.resolve())


from .. import _tensor as _tensor_mod  # noqa: E402

_tensor_mod._LAZY[0] = LazyValue


def concrete(v):
    """``v`` with any LazyValue replaced by its (materialised) value."""
    return v.resolve() if type(v) is LazyValue else v


def concrete_all(vals):
    return [v.resolve() if type(v) is LazyValue else v for v in vals]


def _aval_key(v):
    t = type(v)
    if t is LazyValue:
        return (v.shape, v.dtype)
    if t is ARRAY_TYPE:  # a concrete jax.Array: its aval is a plain attribute (shape/dtype are properties)
        a = v.aval
        return (a.shape, a.dtype, a.weak_type)
    if hasattr(v, "shape"):
        return (v.shape, v.dtype, getattr(v, "weak_type", False))
    return t if v is not None else None


ARRAY_TYPE = type(jax.device_put(np.zeros((), np.float32)))  # the concrete jax.Array class (the lowered backward
# reads avals this way too; a transfer, where jnp.zeros compiled a program at import)


def shape_dtype(v):
    """``(v.shape, v.dtype)`` of an array, traced or pending value; a concrete jax.Array's through its ``aval`` (a
    plain attribute, where its ``shape`` and ``dtype`` are Python properties: one read instead of two)."""
    a = v.aval if type(v) is ARRAY_TYPE else v
    return a.shape, a.dtype


def _abstract(v):
    if type(v) is LazyValue:
        return jax.ShapeDtypeStruct(v.shape, v.dtype)
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return jax.ShapeDtypeStruct(v.shape, v.dtype, weak_type=getattr(v, "weak_type", False))
    return v


# a segment this long drops its dead calls when the next op records (they hold their inputs); if more than half
# of it is still needed, it runs: pending work (and the inputs it holds) never grows without bound
MAX_PENDING = 2048


class _Segment:
    """Everything recorded since the last materialisation, in recording order (so inputs come first): the calls,
    the structure of each (op, static arguments, compute dtype, where each input comes from), the concrete inputs
    (leaves) and the Python scalars. Built as ops record, so that materialising does not walk the graph again."""

    __slots__ = ("calls", "plan", "leaves", "leaf_keys", "leaf_index", "consts", "limit", "bucketed")

    def __init__(self):
        self.bucketed = False  # (holds an op with bucketed eager kernels: run op by op, never compiled whole)
        self.calls = []
        self.plan = []
        self.leaves = []
        self.leaf_keys = []
        self.leaf_index = {}
        self.consts = []
        self.limit = MAX_PENDING

    def add_leaf(self, v, key):
        """The position of the concrete input ``v`` among the segment's leaves (arrays are passed once)."""
        if key is type(v):  # not an array: passed as it is, once per use
            self.leaves.append(v)
            self.leaf_keys.append(key)
            return len(self.leaves) - 1
        j = self.leaf_index.get(id(v))
        if j is None:
            j = self.leaf_index[id(v)] = len(self.leaves)
            self.leaves.append(v)
            self.leaf_keys.append(key)
        return j


_SEG = _Segment()
LOCK = _LOCK = threading.RLock()  # (LOCK: registry.apply records under it)


def _infer(op, static, cdt, vals):
    from .kernels import _cast_fn
    fn, kw = _cast_fn(op, cdt), dict(static)
    return jax.eval_shape(lambda *a: fn(*a, **kw), *[_abstract(v) for v in vals])


def _drop_after(seg, n_leaves, n_consts):
    for v in seg.leaves[n_leaves:]:
        seg.leaf_index.pop(id(v), None)
    del seg.leaves[n_leaves:], seg.leaf_keys[n_leaves:], seg.consts[n_consts:]


def _compact(seg):
    """Drop from ``seg`` the calls whose results nobody holds and no live call reads (their positions, leaves and
    scalars are renumbered)."""
    calls, plan = seg.calls, seg.plan
    live = [False] * len(calls)
    getrefcount = sys.getrefcount
    for k in range(len(calls) - 1, -1, -1):  # readers come after what they read
        if not live[k]:
            for r in calls[k].outs:
                lv = r()
                if lv is not None and getrefcount(lv) - 2 - lv.uses > 0:
                    live[k] = True
                del lv
        if live[k]:
            for ref in plan[k][3]:
                if ref is not None and type(ref[0]) is int:
                    live[ref[0]] = True
    old_leaves, old_consts = seg.leaves, seg.consts
    seg.calls, seg.plan, seg.leaves, seg.leaf_keys, seg.leaf_index, seg.consts = [], [], [], [], {}, []
    for k, call in enumerate(calls):
        if not live[k]:
            for v in call.inputs:
                if type(v) is LazyValue and v.value is None:
                    v.uses -= 1
            continue
        op, st, cdt, refs, multi = plan[k]
        new = []
        for ref in refs:
            if ref is None or type(ref[0]) is int:
                new.append(ref if ref is None else (calls[ref[0]].pos, ref[1]))
            elif ref[0] == "l":
                v = old_leaves[ref[1]]
                new.append(("l", seg.add_leaf(v, _aval_key(v) if hasattr(v, "shape") else type(v))))
            else:
                new.append(("k", len(seg.consts), ref[2]))
                seg.consts.append(old_consts[ref[1]])
        call.pos = len(seg.calls)
        seg.calls.append(call)
        seg.plan.append((op, st, cdt, tuple(new), multi))
    seg.limit = MAX_PENDING


def record(op, vals, static, cdt):
    """Record ``op`` on ``vals`` and return placeholder(s) for its output(s); shape inference is cached per
    signature (a JAX shape error surfaces here, at the line that caused it)."""
    with _LOCK:  # one segment for all threads: a call's position and its append must not interleave
        return _record(op, vals, static, cdt)


def _record(op, vals, static, cdt):
    seg = _SEG
    if len(seg.calls) >= seg.limit:  # code that records on and on without reading: drop what nobody needs
        _compact(seg)
        if len(seg.calls) > seg.limit // 2:  # still long: run it (an eval loop summing a metric over batches)
            _materialize(())
            seg = _SEG
    leaves, consts, index = seg.leaves, seg.consts, seg.leaf_index
    n_leaves, n_consts = len(leaves), len(consts)
    akeys, refs, pending = [], [], []
    for v in vals:
        t = type(v)
        if t is LazyValue:
            if v.value is None:
                akeys.append((v.shape, v.dtype))
                refs.append((v.call.pos, v.index))
                pending.append(v)
                continue
            v = v.value
            t = type(v)
        if t is ARRAY_TYPE:
            a = v.aval
            ak = (a.shape, a.dtype, a.weak_type)
        elif v is None:
            akeys.append(None)
            refs.append(None)
            continue
        elif t in _SCALAR_TYPES:
            akeys.append(t)
            refs.append(("k", len(consts), t))
            consts.append(v)
            continue
        elif hasattr(v, "shape"):
            ak = (v.shape, v.dtype, getattr(v, "weak_type", False))
        else:  # not an array: passed as it is, once per use
            akeys.append(t)
            refs.append(("l", len(leaves)))
            leaves.append(v)
            seg.leaf_keys.append(t)
            continue
        akeys.append(ak)
        j = index.get(id(v))  # (an array is passed once however many calls take it)
        if j is None:
            j = index[id(v)] = len(leaves)
            leaves.append(v)
            seg.leaf_keys.append(ak)
        refs.append(("l", j))
    key = (op, static, cdt, tuple(akeys))
    avals = _AVAL_CACHE.get(key)
    if avals is None:
        try:
            avals = _infer(op, static, cdt, vals)
        except BaseException:  # the call is not recorded: take back the leaves and scalars it added
            _drop_after(seg, n_leaves, n_consts)
            raise
        avals = _AVAL_CACHE[key] = ((True, tuple((tuple(a.shape), a.dtype, a.weak_type) for a in avals))
                                    if isinstance(avals, (tuple, list)) else
                                    (False, (tuple(avals.shape), avals.dtype, avals.weak_type)))
    for v in pending:
        v.uses += 1
    if op.bucket is not None and op.bucket.active(vals):
        seg.bucketed = True
    calls = seg.calls
    call = LazyCall(op, static, cdt, tuple(vals), len(calls))
    calls.append(call)
    STATS["calls_recorded"] += 1
    multi, avals = avals  # (whether the op has several outputs, their (shape, dtype, weak_type))
    if multi:
        outs = tuple(LazyValue(call, i, a) for i, a in enumerate(avals))
        call.multi = True
        call.outs = tuple(map(weakref.ref, outs))
        seg.plan.append((op, static, cdt, tuple(refs), True))
        return outs
    out = LazyValue(call, None, avals)
    call.outs = (weakref.ref(out),)
    seg.plan.append((op, static, cdt, tuple(refs), False))
    return out


def is_pending(v):
    """Whether ``v`` is a LazyValue (a pytree leaf for :func:`record_pytree`)."""
    return type(v) is LazyValue


_PYTREE_OPS: dict = {}


_EAGER: dict = {}  # a recorded pytree op -> the already-jitted function it stands for (run op by op)
_IN_PROGRAM: dict = {}  # a recorded pytree op -> the jitted function a compiled segment calls for it


def record_pytree(name, key, fn, args, jitted=None, nested=None):
    """Record ``fn(*args)`` as ONE pending call and return its result with LazyValues in place of arrays.

    ``fn`` is a pure function of pytrees (arrays, LazyValues, Python scalars, Nones) returning a pytree of arrays
    and Nones; ``key`` identifies it (with the arguments' tree structure) in the cache of ops made for it. The
    lowered backward and the optimizer update record themselves this way in lazy mode, so forward, backward and
    update run as one program. ``jitted``: the same function already jitted (the eager path's kernel), which a
    segment run op by op calls instead of compiling ``fn`` once more; ``nested``: the same function jitted to be
    called inside a compiled segment (``jitted`` by default; see :mod:`.nesting`)."""
    flat, tree = jax.tree.flatten(args)  # a LazyValue is a leaf: it is no registered pytree node
    entry = _PYTREE_OPS.get((key, tree))
    if entry is None:
        from .registry import OpDef
        box = {}

        def flat_fn(*leaves):
            flat_out, box["tree"] = jax.tree.flatten(fn(*jax.tree.unflatten(tree, leaves)))
            return tuple(flat_out)
        op = OpDef(name, flat_fn, differentiable=False)
        if jitted is not None:
            _EAGER[op] = _flat_call(jitted, tree)
            _IN_PROGRAM[op] = _flat_call(nested or jitted, tree)
        entry = _PYTREE_OPS[(key, tree)] = (op, box)
    op, box = entry
    outs = record(op, flat, (), None)  # traces flat_fn on a new signature, which fills box["tree"]
    return jax.tree.unflatten(box["tree"], outs if isinstance(outs, tuple) else (outs,))


def _flat_call(jitted, tree):
    return lambda *leaves: tuple(jax.tree.leaves(jitted(*jax.tree.unflatten(tree, leaves))))


def adopt(tensor, value):
    """Make ``tensor`` the owner of the pending ``value`` (its value is written into the tensor when computed)."""
    if type(value) is LazyValue:
        value.owner = weakref.ref(tensor)
    return tensor


_SCALAR_TYPES = frozenset((bool, int, float, complex))
_STRUCTURES: dict = {}  # the structure of a pending segment -> its jitted program (_ONCE: seen once, run op by op)
_ONCE = object()
_SCALAR_ARRAYS: dict = {}  # (type, value) -> the Python scalar as a device array (see _scalar_arrays)


def _scalar_key(v):
    """Tells apart what ``==`` does not: -0.0 from 0.0, NaN from itself, 1 from 1.0 and True."""
    if type(v) is float:
        return float, v.hex()
    if type(v) is complex:
        return complex, v.real.hex(), v.imag.hex()
    return type(v), v


def _scalar_arrays(consts):
    """A segment's Python scalars as the program takes them: arguments, as an op's kernel takes them one by one
    (baked in as constants, XLA folds them into the arithmetic around them — Adam's bias corrections — and rounds
    otherwise), each made a (weakly typed) device array once and reused: passing the number itself would cost a
    host-to-device transfer per call."""
    out = []
    for v in consts:
        key = _scalar_key(v)
        a = _SCALAR_ARRAYS.get(key)
        if a is None:
            if len(_SCALAR_ARRAYS) >= 4096:  # a loop counter passed on every step: keep the cache bounded
                _SCALAR_ARRAYS.clear()
            a = _SCALAR_ARRAYS[key] = jnp.asarray(v)
        out.append(a)
    return out


def _program(plan, out_slots):
    """The jitted ``(leaf values, scalars) -> returned values`` of a pending segment."""
    fns = [_IN_PROGRAM.get(op) or _nested_kernel(op, st, cdt) for op, st, cdt, _, _ in plan]

    def run(leaf_vals, scalars):
        results = []
        for (op, st, cdt, refs, multi), fn in zip(plan, fns):
            results.append(fn(*_arguments(refs, results, leaf_vals, scalars.__getitem__)))
        return _returned(results, out_slots)
    return jax.jit(run, compiler_options=nesting.options())


def _nested_kernel(op, static, cdt):
    """The op's kernel as a computation of a compiled segment (:func:`.nesting.nested`)."""
    from .kernels import _cast_fn
    fn, kw = _cast_fn(op, cdt), dict(static)
    return nesting.nested(lambda *vals: fn(*vals, **kw), (op, static, cdt))


def _arguments(refs, results, leaf_vals, const):
    """A call's arguments from its recorded references: earlier results, leaves, scalars (``const(index)``)."""
    args = []
    for ref in refs:
        if ref is None:
            args.append(None)
            continue
        kind = ref[0]
        if kind == "l":
            args.append(leaf_vals[ref[1]])
        elif kind == "k":
            args.append(const(ref[1]))
        else:  # (position of the pending call, output index or None)
            r = results[kind]
            args.append(r[ref[1]] if ref[1] is not None else r)
    return args


def _returned(results, out_slots):
    return [results[k][i] if i is not None else results[k] for k, i in out_slots]


_KERNEL = [None]


def _run_op_by_op(seg, out_slots):
    """A segment whose structure is new, run call by call through the ops' own cached kernels (the eager path's,
    and the jitted backward or optimizer update a recorded pytree call stands for): a structure seen once is often
    never seen again, and compiling it whole would cost more than it saves."""
    kernel = _KERNEL[0]
    if kernel is None:  # (registry imports this module: bound on first use)
        from .kernels import kernel
        _KERNEL[0] = kernel
    consts = seg.consts
    results = []
    for (op, st, cdt, refs, multi) in seg.plan:
        args = _arguments(refs, results, seg.leaves, consts.__getitem__)
        eager = _EAGER.get(op)
        results.append(eager(*args) if eager is not None else kernel(op, st, cdt)(*args))
    return _returned(results, out_slots)


def materialize(*roots):
    """Run every pending call (the segment recorded since the last materialisation, which holds whatever the
    ``roots`` depend on) as one cached jitted program that returns the pending values still referenced from
    outside the segment. Calls nobody needs any more are part of the program but return nothing (XLA drops them)."""
    with _LOCK:
        _materialize(roots)


def _materialize(roots):
    global _SEG
    seg = _SEG
    if not seg.calls:
        return
    root_ids = set(map(id, roots))
    outputs, out_slots = [], []
    getrefcount = sys.getrefcount
    for k, call in enumerate(seg.calls):
        for r in call.outs:
            lv = r()
            if lv is None:
                continue
            # references: `lv` here, getrefcount's argument, and the pending inputs that take it (`uses`)
            if getrefcount(lv) - 2 - lv.uses > 0 or id(lv) in root_ids:
                outputs.append(lv)
                out_slots.append((k, lv.index))
            del lv
    consts = seg.consts
    mode = config.lazy_compile
    if len(seg.calls) == 1 and mode != "always" or seg.bucketed:  # one call: its own cached kernel is that program
        seen = None  # already (an op with bucketed kernels, OpDef.bucket: a program per shape would compile slowly)
        mode = "never" if seg.bucketed else mode
    else:
        sig = (tuple(seg.plan), tuple(seg.leaf_keys), tuple(out_slots), config.exact_programs)
        seen = _STRUCTURES.get(sig)
        if seen is None:  # first sighting: op by op (the choice can be forced with ``torchish.config.lazy_compile``)
            _STRUCTURES[sig] = _ONCE
    if seen is None and mode == "auto" or mode == "never":
        vals = _run_op_by_op(seg, out_slots)
        STATS["op_by_op"] += 1
    else:
        if seen is None or seen is _ONCE:
            seen = _STRUCTURES[sig] = _program(seg.plan, out_slots)
            STATS["programs_compiled"] += 1
        vals = seen(seg.leaves, _scalar_arrays(consts))
    _SEG = _Segment()  # the segment is done: what records from now on starts a new one
    STATS["materialisations"] += 1
    for lv, v in zip(outputs, vals):
        lv.value = v
        owner = lv.owner() if lv.owner is not None else None
        if owner is not None and owner._v is lv:
            owner._v = v
    for call in seg.calls:  # drop the segment's references so intermediates can be freed
        call.inputs = ()
