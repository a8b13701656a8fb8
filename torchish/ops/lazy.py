"""Lazy capture: eager-looking code, run as fused XLA programs.

With ``torchish.config.lazy = True`` an op does not dispatch a kernel: it records a :class:`LazyCall` and returns
:class:`LazyValue` placeholders that know their shape and dtype (inferred once per op signature with
``jax.eval_shape``, so shape and dtype errors still surface at the line that caused them). A placeholder behaves
like a JAX array — ``__jax_array__``, ``__array__`` and any other attribute access *materialise* it: the pending
calls it depends on are run as ONE jitted program, cached by the structure of the pending graph, which returns
every pending value still referenced from outside (by a Tensor, by a saved value of an autograd node, by another
pending call). Reading a value (``.item()``, printing, ``bool()``, ``backward()``) is what materialises.
"""
from __future__ import annotations

import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np

STATS = {"calls_recorded": 0, "materialisations": 0, "programs_compiled": 0}

_AVAL_CACHE: dict = {}


class LazyCall:
    """One pending op application."""

    __slots__ = ("op", "static", "cdt", "inputs", "outs", "multi", "__weakref__")

    def __init__(self, op, static, cdt, inputs):
        self.op = op
        self.static = static
        self.cdt = cdt
        self.inputs = inputs
        self.outs = ()
        self.multi = False


class LazyValue:
    """A pending array: shape and dtype are known, the value is computed on first use."""

    __slots__ = ("shape", "dtype", "call", "index", "value", "owner", "__weakref__")

    def __init__(self, call, index, aval):
        self.call = call
        self.index = index
        self.shape = tuple(aval.shape)
        self.dtype = aval.dtype
        self.value = None
        self.owner = None

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


ARRAY_TYPE = type(jnp.zeros(()))  # the concrete jax.Array class (the lowered backward reads avals this way too)


def _abstract(v):
    if type(v) is LazyValue:
        return jax.ShapeDtypeStruct(v.shape, v.dtype)
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return jax.ShapeDtypeStruct(v.shape, v.dtype, weak_type=getattr(v, "weak_type", False))
    return v


def record(op, vals, static, cdt):
    """Record ``op`` on ``vals`` and return placeholder(s) for its output(s); shape inference is cached per
    signature (a JAX shape error surfaces here, at the line that caused it)."""
    key = (op, static, cdt, tuple(map(_aval_key, vals)))
    avals = _AVAL_CACHE.get(key)
    if avals is None:
        from .registry import _cast_fn
        fn, kw = _cast_fn(op, cdt), dict(static)
        avals = jax.eval_shape(lambda *a: fn(*a, **kw), *[_abstract(v) for v in vals])
        _AVAL_CACHE[key] = avals
    call = LazyCall(op, static, cdt, tuple(vals))
    STATS["calls_recorded"] += 1
    if isinstance(avals, (tuple, list)):
        outs = tuple(LazyValue(call, i, a) for i, a in enumerate(avals))
        call.multi = True
        call.outs = tuple(weakref.ref(o) for o in outs)
        return outs
    out = LazyValue(call, None, avals)
    call.outs = (weakref.ref(out),)
    return out


def is_pending(v):
    """Whether ``v`` is a LazyValue (a pytree leaf for :func:`record_pytree`)."""
    return type(v) is LazyValue


_PYTREE_OPS: dict = {}


def record_pytree(name, key, fn, args):
    """Record ``fn(*args)`` as ONE pending call and return its result with LazyValues in place of arrays.

    ``fn`` is a pure function of pytrees (arrays, LazyValues, Python scalars, Nones) returning a pytree of arrays
    and Nones; ``key`` identifies it (with the arguments' tree structure) in the cache of ops made for it. The
    lowered backward and the optimizer update record themselves this way in lazy mode, so forward, backward and
    update run as one program."""
    flat, tree = jax.tree.flatten(args, is_leaf=is_pending)
    entry = _PYTREE_OPS.get((key, tree))
    if entry is None:
        from .registry import OpDef
        box = {}

        def flat_fn(*leaves):
            flat_out, box["tree"] = jax.tree.flatten(fn(*jax.tree.unflatten(tree, leaves)))
            return tuple(flat_out)
        entry = _PYTREE_OPS[(key, tree)] = (OpDef(name, flat_fn, differentiable=False), box)
    op, box = entry
    outs = record(op, flat, (), None)  # traces flat_fn on a new signature, which fills box["tree"]
    return jax.tree.unflatten(box["tree"], outs if isinstance(outs, tuple) else (outs,))


def adopt(tensor, value):
    """Make ``tensor`` the owner of the pending ``value`` (its value is written into the tensor when computed)."""
    if type(value) is LazyValue:
        value.owner = weakref.ref(tensor)
    return tensor


def materialize_all(values):
    """Run every pending call the given values depend on as ONE program (a training step's end: parameters,
    optimizer state and whatever else is pending and still referenced)."""
    pending = [v for v in values if type(v) is LazyValue and v.value is None]
    if pending:
        materialize(*pending)


_SCALAR_TYPES = frozenset((bool, int, float, complex))
_STRUCTURES: dict = {}  # the structure of a pending graph -> its _Structure


def _scalar_key(v):
    """Tells apart what ``==`` does not: -0.0 from 0.0, NaN from itself (so a baked constant is reused only for an
    identical value)."""
    if type(v) is float:
        return v.hex()
    if type(v) is complex:
        return (v.real.hex(), v.imag.hex())
    return v


class _Structure:
    """The programs compiled for one structure of pending graph, and which of its Python scalars are passed as
    arguments. The others are baked in as constants: a scalar is baked until its value is seen to change between
    runs (a constant like ``h * 0.5``, every run: one argument fewer, each costing a host-to-device transfer per
    call), then passed (a learning rate or a step count: one more compile, then none)."""

    __slots__ = ("first", "mask", "programs")

    def __init__(self, consts):
        self.first = tuple(map(_scalar_key, consts))
        self.mask = (False,) * len(consts)
        self.programs = {}  # varying mask -> jitted program

    def varying(self, consts):
        keys = tuple(map(_scalar_key, consts))
        if keys != self.first:
            self.mask = tuple(var or a != b for var, a, b in zip(self.mask, keys, self.first))
        return self.mask


def _program(plan, out_slots, consts, varying):
    """The jitted ``(leaf values, varying scalars) -> returned values`` of a pending graph."""
    from .registry import _cast_fn
    fns = [_cast_fn(op, cdt) for op, _, cdt, _, _ in plan]
    kws = [dict(st) for _, st, _, _, _ in plan]
    pos, baked = {}, {}
    for i, (c, var) in enumerate(zip(consts, varying)):
        if var:
            pos[i] = len(pos)
        else:
            baked[i] = c

    def run(leaf_vals, scalars):
        results = []
        for (op, st, cdt, refs, multi), fn, kw in zip(plan, fns, kws):
            args = []
            for ref in refs:
                kind = ref[0]
                if kind == "n":
                    r = results[ref[1]]
                    args.append(r[ref[2]] if ref[2] is not None else r)
                elif kind == "l":
                    args.append(leaf_vals[ref[1]])
                elif kind == "k":  # a baked constant is weakly typed, like the traced Python scalar it stands for
                    args.append(jnp.asarray(baked[ref[1]]) if ref[1] in baked else scalars[pos[ref[1]]])
                else:
                    args.append(None)
            results.append(fn(*args, **kw))
        return [results[k][i] if i is not None else results[k] for k, i in out_slots]
    return jax.jit(run)


def materialize(*roots):
    """Run every pending call the ``roots`` depend on as one cached jitted program."""
    # the pending calls, inputs first (iterative DFS)
    order, index = [], {}
    stack = [(v.call, False) for v in reversed(roots)]
    root_ids = {id(v) for v in roots}
    while stack:
        call, expanded = stack.pop()
        if id(call) in index:
            continue
        if expanded:
            index[id(call)] = len(order)
            order.append(call)
            continue
        stack.append((call, True))
        for v in call.inputs:
            if type(v) is LazyValue and v.value is None and id(v.call) not in index:
                stack.append((v.call, False))
    # the leaves (concrete inputs), the Python scalars and the structure
    leaves, leaf_index, plan, internal, consts = [], {}, [], {}, []
    for call in order:
        refs = []
        for v in call.inputs:
            if type(v) is LazyValue and v.value is None:
                refs.append(("n", index[id(v.call)], v.index))
                internal[id(v)] = internal.get(id(v), 0) + 1
                continue
            if type(v) is LazyValue:
                v = v.value
            if v is None:
                refs.append(("c", None))
            elif type(v) in _SCALAR_TYPES:
                refs.append(("k", len(consts), type(v)))
                consts.append(v)
            elif hasattr(v, "shape"):
                j = leaf_index.get(id(v))
                if j is None:
                    j = leaf_index[id(v)] = len(leaves)
                    leaves.append(v)
                refs.append(("l", j))
            else:
                refs.append(("l", len(leaves)))
                leaves.append(v)
        plan.append((call.op, call.static, call.cdt, tuple(refs), call.multi))
    # which pending values are still referenced from outside the pending graph: those are returned
    outputs, out_slots = [], []
    for k, call in enumerate(order):
        for r in call.outs:
            lv = r()
            if lv is None:
                continue
            # references: `lv` here, getrefcount's argument, and pending inputs counted in `internal`
            if id(lv) in root_ids or sys.getrefcount(lv) - 2 - internal.get(id(lv), 0) > 0:
                outputs.append(lv)
                out_slots.append((k, lv.index))
            del lv
    sig = (tuple(plan), tuple(_aval_key(v) for v in leaves), tuple(out_slots))
    seen = _STRUCTURES.get(sig)
    if seen is None:
        seen = _STRUCTURES[sig] = _Structure(consts)
    varying = seen.varying(consts)
    prog = seen.programs.get(varying)
    if prog is None:
        prog = seen.programs[varying] = _program(plan, out_slots, consts, varying)
        STATS["programs_compiled"] += 1
    vals = prog(leaves, [c for c, var in zip(consts, varying) if var])
    STATS["materialisations"] += 1
    for lv, v in zip(outputs, vals):
        lv.value = v
        owner = lv.owner() if lv.owner is not None else None
        if owner is not None and owner._v is lv:
            owner._v = v
    for call in order:  # the pending graph is done: drop it so intermediates can be freed
        call.inputs = ()


