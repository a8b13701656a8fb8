"""``torchish.compile``: a PyTorch-style step (forward, ``backward()``, hooks, ``optimizer.step()``) as ONE XLA
program, with the facade's semantics kept inside the trace.

Per input signature (a cache entry):

1. the first call runs eagerly under a :class:`Recorder`, which learns the *state*: pre-existing Tensors read or
   written (parameters, ``.grad``, optimizer moments, buffers, the RNG key), Tensors created lazily by the call
   and still alive after it (Adam's moments, new ``.grad`` tensors), the hyper-parameters read through
   :func:`recorder.scalar` (learning rates), and the Modules called (their ``training`` flags are guarded);
2. the second call traces a pure function ``(args, state, scalars) -> (outputs, written state, new grads)``:
   tracers are bound into the state Tensors, the user's Python runs through the same ops and engine as eager
   mode, then the facades are restored. A concrete pre-existing Tensor met during the trace means the state was
   incomplete: it is added and the function traced again. State tensors that hold one array (the step counts of
   an Adam-family optimizer, see ``optim.optimizer._share_steps``) are one input and, written alike, one output;
   the program is compiled with the written state donated;
3. later calls check the guards (argument shapes/dtypes, state shapes/dtypes/requires_grad, ``.grad`` presence,
   module training flags, grad mode), call the executable, and write outputs back into the same Tensor objects.
"""
from __future__ import annotations

import collections
import functools
import itertools
import operator
import sys
import time
import traceback
import warnings

import jax
import jax.numpy as jnp
from jax.core import eval_jaxpr

from .. import _dtype, _precision
from .._tensor import Tensor, set_values
from ..autograd.grad_mode import STATE
from ..autograd.graph import Node, node_class
from ..ops import lazy, tracing
from ..amp import _state as _autocast
from .recorder import Recorder

_CONCRETE_ERRORS = (tracing.ConcretizationError, jax.errors.ConcretizationTypeError,
                    jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError,
                    jax.errors.TracerArrayConversionError)
RETRACE_WARN = 8


class _DeviceChanged(RuntimeError):
    """The program was compiled for another device than its inputs now live on."""


class GraphBreakError(RuntimeError):
    """Something in the compiled function needs concrete values (``.item()``, ``if tensor:``, printing...)."""


def _user_frame(tb):
    """The innermost frame of user code in a traceback (not torchish, not jax)."""
    import os
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    best = None
    for fs in traceback.extract_tb(tb):
        f = os.path.abspath(fs.filename)
        if f.startswith(pkg) or "/jax/" in f or "/jaxlib/" in f or f.startswith(sys.prefix + "/lib/python"):
            continue
        best = fs
    return best


def _leaf_key(x):
    if isinstance(x, Tensor):
        return ("T", x._v.shape, x._v.dtype, x._rg)
    if isinstance(x, (int, float, bool, str, bytes, type(None), complex)):
        return ("V", type(x), x)
    if isinstance(x, (jax.Array,)):
        return ("A", x.shape, x.dtype)
    try:
        hash(x)
        return ("H", x)
    except TypeError:
        return ("O", id(x))


def _is_tensor(x):
    return isinstance(x, Tensor)


def _signature(args, kwargs):
    """The leaves of the call's arguments and the key of its cache entry: the arguments' structure, shapes, dtypes
    and Python values, grad mode, the default dtype, the matmul/convolution precision settings and the autocast
    state (which ops run in which dtype)."""
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
    return leaves, (tree, tuple(map(_leaf_key, leaves)), STATE.grad_enabled, _dtype.DEFAULTS.float,
                    _precision.EPOCH[0], _autocast.signature())


# written state arrays smaller than this are not donated (benchmarks/compile_overhead.py varies it; donating all is
# the fastest on the GPU and CPU measured)
DONATE_MIN_BYTES = 0


def _lower_donating(traced, written, arg_vals, state_vals, scalar_vals):
    """Lower the traced step with the buffers of the state it writes donated, so XLA updates parameters,
    gradients and optimizer state in place instead of holding old and new copies. Returns the lowering and the
    ``(donated, kept)`` split of the state indices (None when nothing is written). The step is replayed from its
    jaxpr: the user's Python is not run a second time."""
    donated = [i for i in written if getattr(state_vals[i], "nbytes", 0) >= DONATE_MIN_BYTES]
    if not donated:
        return traced.lower(), None
    donated_set = set(donated)
    kept = [i for i in range(len(state_vals)) if i not in donated_set]
    closed, out_tree, n = traced.jaxpr, traced.out_tree, len(state_vals)

    def replay(arg_vals, donated_vals, kept_vals, scalar_vals):
        sv = [None] * n
        for i, v in zip(donated, donated_vals):
            sv[i] = v
        for i, v in zip(kept, kept_vals):
            sv[i] = v
        out = eval_jaxpr(closed.jaxpr, closed.consts, *jax.tree.leaves((arg_vals, sv, scalar_vals)))
        return jax.tree.unflatten(out_tree, out)

    lowered = jax.jit(replay, donate_argnums=(1,)).lower(
        arg_vals, [state_vals[i] for i in donated], [state_vals[i] for i in kept], scalar_vals)
    return lowered, (donated, kept)


# references to a donated state value while `_donated_values` counts them: its Tensor, the state-values list
# (`entry.seen`), the list of donated values and getrefcount's argument. An input shared by k state tensors (see
# `_share_classes`) has k Tensors and k places in `entry.seen`, plus the list of the program's inputs.
_OWN_REFS = itertools.repeat(4)


def _own_refs(sizes):
    return [2 * k + 3 for k in sizes]


def _donated_values(state_vals, donated, own_refs=_OWN_REFS):
    """The donated state values, each replaced by a copy where something besides its Tensor(s) holds the same
    array (a ``detach()``ed or ``clone()``d alias, a user's ``.jax()``): donating would delete it under the alias."""
    out = [state_vals[i] for i in donated]
    for k, extra in enumerate(map(operator.gt, map(sys.getrefcount, out), own_refs)):
        if extra:
            out[k] = jnp.array(out[k], copy=True)
    return out


def _share_classes(state, state_vals, split):
    """The state tensors that hold one array (Adam's per-parameter step counts, see ``optim.optimizer._share_steps``)
    become ONE input of the program: ``rep[i]`` is the first index holding ``state_vals[i]`` with the same label in
    ``split`` (tensor id -> label, from :func:`_unstable`)."""
    first = {}
    return [first.setdefault((id(v), split.get(id(t))), i) for i, (t, v) in enumerate(zip(state, state_vals))]


def _unstable(state, rep, written, written_out, split):
    """Labels for the tensors of each input class that a run would split (some members written and others not, or
    written with different values): after one run they no longer hold one array, so the class must not be one
    input. Members keep sharing with those that get the same output; a tensor split before gets an input of its
    own (the trace loop ends)."""
    out_of = dict(zip(written, written_out))
    classes = {}
    for i, r in enumerate(rep):
        classes.setdefault(r, []).append(i)
    labels = {}
    for members in classes.values():
        if len(members) > 1 and len({out_of.get(i, -1) for i in members}) > 1:
            for i in members:
                t = state[i]
                labels[id(t)] = ("own", id(t)) if id(t) in split else out_of.get(i, -1)
    return labels


def _dedupe(values):
    """The distinct objects of ``values`` (by identity) and the index of each value among them."""
    pos, out = {}, []
    index = [pos.setdefault(id(v), len(pos)) for v in values]
    for v, j in zip(values, index):
        if j == len(out):
            out.append(v)
    return out, index


def _as_weak_array(v):
    if type(v) in (float, int):
        return jnp.asarray(v)  # weakly typed, as jit would make it from the Python number
    if type(v) is tuple:
        return tuple(_as_weak_array(x) for x in v)
    return v


def _scalar_values(entry):
    """The hyper-parameters as the executable takes them. A Python number is turned into a (weakly typed) device
    array once and reused while it keeps its value: passing the number itself costs a host-to-device transfer per
    call. A changed value (a scheduler's new learning rate) is converted afresh — never a retrace."""
    cache = entry.scalar_cache
    out = []
    for j, (c, k) in enumerate(entry.scalars):
        v = c[k]
        hit = cache.get(j)
        if hit is None or hit[0] != v or type(hit[0]) is not type(v):
            hit = cache[j] = (v, _as_weak_array(v))
        out.append(hit[1])
    return out


def _one_device(state, state_vals, arg_vals):
    """A program runs on one device: the devices of the arguments and state (generator keys aside) must agree, as
    PyTorch requires of one op's inputs; generator keys (torchish has one stream for every device) are moved to
    that device. Returns the state values to pass (None when nothing moved)."""
    from .. import _device
    # sharded: a data-parallel program, which XLA places by the shardings
    devs, sharded = _device.committed_devices(list(arg_vals) + [v for t, v in zip(state, state_vals)
                                                                 if not _is_key(t)])
    if len(devs) > 1:
        raise _device.mixed_devices_error(devs, " (torchish.compile: the arguments and the state the function reads)")
    if not devs and not sharded:
        return None
    moved = None
    for i, t in enumerate(state):
        v = state_vals[i]
        if not _is_key(t) or not isinstance(v, jax.Array):
            continue
        if sharded:  # the key goes uncommitted: jit places it with the sharded arrays
            if not v.committed:
                continue
            new = _device.uncommitted(v)
        elif v.devices() != {devs[0]}:
            new = jax.device_put(v, devs[0])
        else:
            continue
        moved = list(state_vals) if moved is None else moved
        moved[i] = t._v = new
    return moved


_REQUIRES_GRAD = operator.attrgetter("_rg")
_VALUE = operator.attrgetter("_v")
_make = Tensor._make
_GRAD = operator.attrgetter("_grad")
_TRAINING = operator.attrgetter("training")
_NONES = itertools.repeat(None)


def _flags(entry):
    """The guarded flags: each state tensor's requires_grad and whether it has a ``.grad``, each module's
    training mode."""
    state = entry.state
    return (tuple(map(_REQUIRES_GRAD, state)), tuple(map(operator.is_, map(_GRAD, state), _NONES)),
            tuple(map(_TRAINING, entry.modules)))


def _is_key(t):
    return getattr(t, "_is_rng_key", False)


class _Entry:
    """One input signature of a compiled function."""

    def __init__(self):
        self.calls = 0
        self.eager = False          # fall back to eager (graph break allowed by fullgraph=False)
        self.state = []             # state Tensors, in a fixed order
        self.scalars = []           # (container, key)
        self.modules = []
        self.executable = None
        self.lowered = None
        self.donate = None          # (donated, kept) state indices when written state is donated
        self.scalar_cache = {}      # scalar index -> (Python value, device array)
        self.info = None
        self.guard = None           # (state shapes and dtypes, _flags) the program was traced for
        self.seen = []              # the state values the guard last saw (or the last run wrote)
        self.written_tensors = []   # the state tensors the program writes, in its outputs' order
        self.grads_of_args = False  # whether the program sets the .grad of an argument (not only of state)
        self.compile_time = 0.0
        self.split = {}             # state tensor id -> label: shared arrays that a run splits (_unstable)
        self.uniq = None            # state indices passed to the program when some tensors share an input
        self.pairs = []             # (i, j): state tensors i and j must hold one array for the program to fit
        self.own_refs = _OWN_REFS   # expected reference counts of the donated values (_donated_values)
        self.written_out = None     # program output of each written tensor when outputs are shared


class CompiledFunction:
    """The callable returned by :func:`torchish.compile`."""

    def __init__(self, fn, fullgraph=None, dynamic=None, mode=None, backend=None, options=None, disable=False):
        self.fn = fn
        self.fullgraph = fullgraph
        self.disable = disable
        self.entries = {}
        self.stats = {"calls": 0, "eager_calls": 0, "traces": 0, "retraces": 0, "compiled_calls": 0,
                      "compile_seconds": 0.0}
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objtype=None):  # decorating a method
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    # ---------------------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self.disable or STATE.recorder is not None or tracing.active():
            return self.fn(*args, **kwargs)  # nested inside another compiled function: inline
        self.stats["calls"] += 1
        leaves, key = _signature(args, kwargs)
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = _Entry()
        entry.calls += 1
        if entry.eager:
            self.stats["eager_calls"] += 1
            return self.fn(*args, **kwargs)
        if entry.calls == 1:
            return self._record(entry, args, kwargs, leaves)
        if entry.executable is None or not self._guards_hold(entry):
            if entry.executable is not None:
                self.stats["retraces"] += 1
                if self.stats["retraces"] == RETRACE_WARN:
                    warnings.warn(f"torchish.compile: {getattr(self.fn, '__name__', 'function')} has been retraced "
                                  f"{RETRACE_WARN} times (state or flags keep changing); each retrace recompiles.",
                                  RuntimeWarning, stacklevel=2)
            try:
                self._trace(entry, args, kwargs, leaves, key[0])
            except GraphBreakError as e:
                if self.fullgraph:
                    raise
                if self.fullgraph is None:  # PyTorch's default allows graph breaks: say so once per signature
                    warnings.warn(f"{e.args[0]}\ntorchish.compile runs this function eagerly for these inputs "
                                  "(graph breaks are allowed by default, as in PyTorch; fullgraph=True makes this "
                                  "an error, fullgraph=False silences it).", UserWarning, stacklevel=2)
                entry.eager = True
                self.stats["eager_calls"] += 1
                return self.fn(*args, **kwargs)
        try:
            return self._run(entry, leaves)
        except _DeviceChanged:  # the state and arguments moved together (model.to("cuda")): compile for there
            self.stats["retraces"] += 1
            self._trace(entry, args, kwargs, leaves, key[0])
            return self._run(entry, leaves)

    # ---------------------------------------------------------------------------------------------------------
    def _record(self, entry, args, kwargs, leaves):
        """First call: run eagerly and learn the state."""
        from .._tensor import _SERIAL
        start = next(_SERIAL)
        rec = Recorder("eager", start)
        with rec:
            out = self.fn(*args, **kwargs)
        arg_ids = {id(x) for x in leaves if isinstance(x, Tensor)}
        out_ids = {id(x) for x in jax.tree_util.tree_leaves(out, is_leaf=lambda x: isinstance(x, Tensor))
                   if isinstance(x, Tensor)}
        cand = {}
        cand.update(rec.reads)
        cand.update(rec.writes)
        for k, t in rec.survivors().items():
            if k not in out_ids and t._grad_fn is None:
                cand[k] = t
        for k in list(cand):
            if k in arg_ids:
                del cand[k]
        entry.state = sorted(cand.values(), key=lambda t: t._sn)
        entry.scalars = list(rec.scalars.values())
        entry.modules = list(rec.modules.values())
        self.stats["eager_calls"] += 1
        return out

    @staticmethod
    def _guard_key(entry):
        return (tuple((t._v.shape, t._v.dtype) for t in entry.state), _flags(entry))

    def _guards_hold(self, entry):
        """Whether the compiled program still fits the state. The values the last run left (or the trace saw) are
        compared by identity first: the same array objects cannot have changed shape or dtype, so only a value
        replaced outside the function (``p.mul_(0.5)``, ``load_state_dict``) costs the full comparison."""
        vals = list(map(_VALUE, entry.state))
        if not all(map(operator.is_, vals, entry.seen)):
            if self._guard_key(entry) != entry.guard or not all(vals[i] is vals[j] for i, j in entry.pairs):
                return False
            entry.seen = vals
            return True
        return _flags(entry) == entry.guard[1]

    # ---------------------------------------------------------------------------------------------------------
    def _trace(self, entry, args, kwargs, leaves, tree):
        t0 = time.perf_counter()
        for attempt in range(6):
            self.stats["traces"] += 1
            missing = self._trace_once(entry, leaves, tree)
            if not missing:
                break
            entry.state = sorted({id(t): t for t in entry.state + missing[0]}.values(), key=lambda t: t._sn)
            entry.scalars = entry.scalars + [s for s in missing[1] if s not in entry.scalars]
            entry.modules = entry.modules + [m for m in missing[2] if m not in entry.modules]
        else:
            raise RuntimeError("torchish.compile: the set of state tensors did not settle after 6 traces")
        entry.guard = self._guard_key(entry)
        entry.seen = list(map(_VALUE, entry.state))
        entry.written_tensors = [entry.state[i] for i in entry.info["written"]]
        entry.grads_of_args = any(i >= len(entry.state) for i, _ in entry.info["grad_spec"])
        dt = time.perf_counter() - t0
        entry.compile_time += dt
        self.stats["compile_seconds"] += dt

    def _trace_once(self, entry, leaves, tree):
        state = entry.state
        info = {}
        fn = self.fn
        arg_pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        arg_rg = [leaves[i]._rg for i in arg_pos]
        scalar_keys = [(id(c), k) for c, k in entry.scalars]
        modules_seen = {}

        def pure(arg_vals, state_vals, scalar_vals):
            from .._tensor import _SERIAL
            saved = [(t._d, t._grad, t._grad_fn, t._out_nr, t._rg) for t in state]
            for t, v in zip(state, state_vals):
                t._d = v
            targs = list(leaves)
            arg_tensors = []
            for i, v, rg in zip(arg_pos, arg_vals, arg_rg):
                tt = Tensor._make(v, rg)
                targs[i] = tt
                arg_tensors.append(tt)
            a, kw = jax.tree_util.tree_unflatten(tree, targs)
            start = next(_SERIAL)
            rec = Recorder("trace", start, dict(zip(scalar_keys, scalar_vals)))
            try:
                with rec, tracing.tracing_scope():
                    out = fn(*a, **kw)
                out_leaves, out_tree = jax.tree_util.tree_flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
                missing = [t for t in rec.missing.values()]
                # writes to known state are fine; writes to concrete pre-existing tensors outside it are missing
                state_ids = {id(t) for t in state}
                for t in rec.writes.values():
                    if id(t) not in state_ids and not isinstance(t._d, jax.core.Tracer):
                        missing.append(t)
                for m in rec.modules.values():
                    modules_seen[id(m)] = m
                out_vals, out_spec = [], []
                for x in out_leaves:
                    if isinstance(x, Tensor):
                        out_spec.append(("T", x._rg and x._grad_fn is not None))
                        out_vals.append(x._d)
                    else:
                        out_spec.append(("C", x))
                written = [i for i, t in enumerate(state) if t._d is not state_vals[i]]
                grads = []
                grad_spec = []
                for i, t in enumerate(state + arg_tensors):
                    g = t._grad
                    before = saved[i][1] if i < len(state) else None
                    if g is before:
                        continue
                    if g is None:
                        grad_spec.append((i, "none"))
                    elif id(g) in state_ids:
                        grad_spec.append((i, ("state", state.index(g))))
                    else:
                        if not isinstance(g._d, jax.core.Tracer) and g._sn < start:
                            missing.append(g)
                        grad_spec.append((i, "new"))
                        grads.append(g._d)
                arg_written = [k for k, tt in enumerate(arg_tensors) if tt._d is not arg_vals[k]]
                info.update(out_tree=out_tree, out_spec=out_spec, written=written, grad_spec=grad_spec,
                            arg_written=arg_written, missing=missing, missing_scalars=list(rec.missing_scalars.values()),
                            backward_ran=rec.backward_ran)
                # the written state first, in the donated inputs' order: XLA pairs a donated input with the first
                # output of its shape, so anything before it (a scalar loss before a scalar Adam step) costs copies
                return [state[i]._d for i in written], out_vals, grads, [arg_tensors[k]._d for k in arg_written]
            except _CONCRETE_ERRORS as e:
                fs = _user_frame(e.__traceback__)
                where = f"{fs.filename}:{fs.lineno}: `{fs.line}`\n" if fs is not None else ""
                raise GraphBreakError(
                    f"torchish.compile could not trace {getattr(fn, '__name__', 'the function')}: {where}"
                    f"{type(e).__name__}: {str(e).splitlines()[0]}\nValue-dependent Python (`.item()`, `.tolist()`, "
                    "`if tensor:`, printing a tensor) cannot run inside one XLA program. Move it outside the "
                    "compiled function or express it with tensor ops (torchish.where, masks) to compile it.") from e
            finally:
                for t, (d, g, gf, nr, rg) in zip(state, saved):
                    t._d, t._grad, t._grad_fn, t._out_nr, t._rg = d, g, gf, nr, rg
                rec.restore()

        arg_vals = lazy.concrete_all([leaves[i]._d for i in arg_pos])
        state_vals = lazy.concrete_all([t._d for t in state])
        state_vals = _one_device(state, state_vals, arg_vals) or state_vals
        scalar_vals = [c[k] for c, k in entry.scalars]  # Python numbers stay weakly typed
        rep = _share_classes(state, state_vals, entry.split)
        uniq = [i for i, r in enumerate(rep) if r == i]
        position = {r: c for c, r in enumerate(uniq)}
        cls = [position[r] for r in rep] if len(uniq) < len(rep) else None

        def shared(arg_vals, unique_vals, scalar_vals):  # one input per array; one output per written value
            written, outs, grads, argw = pure(arg_vals, unique_vals if cls is None else
                                              [unique_vals[c] for c in cls], scalar_vals)
            written, info["written_out"] = _dedupe(written)
            return written, outs, grads, argw
        unique_vals = [state_vals[i] for i in uniq]
        traced = jax.jit(shared).trace(arg_vals, unique_vals, scalar_vals)  # runs the user's Python once
        if info["missing"] or info["missing_scalars"] or [m for k, m in modules_seen.items()
                                                           if all(m is not e for e in entry.modules)]:
            new_modules = [m for m in modules_seen.values() if all(m is not e for e in entry.modules)]
            return (info["missing"], info["missing_scalars"], new_modules)
        entry.modules = entry.modules + [m for m in modules_seen.values() if all(m is not e for e in entry.modules)]
        entry.diff = None
        entry.donate = None
        entry.uniq, entry.pairs, entry.own_refs, entry.written_out = None, [], _OWN_REFS, None
        if any(rg for kind, rg in info["out_spec"] if kind == "T") and not info["backward_ran"] \
                and STATE.grad_enabled:  # (the forward and its VJP are traced afresh, one input per tensor)
            lowered = self._lower_with_vjp(entry, pure, info, arg_vals, state_vals, scalar_vals, arg_rg)
        else:
            split = _unstable(state, rep, info["written"], info["written_out"], entry.split)
            if split:  # tensors that share an array now but not after a run: trace them with inputs of their own
                entry.split.update(split)
                return [], [], []
            if info["written_out"] != list(range(len(info["written"]))):
                entry.written_out = info["written_out"]
            written = set(info["written"])
            if cls is not None:
                entry.uniq = uniq
                entry.pairs = [(i, r) for i, r in enumerate(rep) if r != i]
            lowered, entry.donate = _lower_donating(traced, [c for c, i in enumerate(uniq) if i in written],
                                                    arg_vals, unique_vals, scalar_vals)
            if cls is not None and entry.donate is not None:
                sizes = collections.Counter(rep)
                entry.own_refs = _own_refs([sizes[uniq[c]] for c in entry.donate[0]])
        entry.lowered = lowered
        entry.executable = lowered.compile()
        entry.info = info
        entry.arg_pos = arg_pos
        return None

    def _lower_with_vjp(self, entry, pure, info, arg_vals, state_vals, scalar_vals, arg_rg):
        """Outputs that carry gradients and no backward inside: compile the forward together with its VJP
        (``jax.vjp``), and link the outputs to a node whose backward runs the compiled pullback — so
        ``loss.backward()`` outside a compiled module works as in eager mode."""
        def inexact(v):
            return jnp.issubdtype(v.dtype, jnp.inexact)
        d_arg = [k for k, v in enumerate(arg_vals) if arg_rg[k] and inexact(v)]
        d_state = [i for i, t in enumerate(entry.state) if t._rg and inexact(t._d)]
        out_rg = [j for j, (kind, rg) in enumerate([s for s in info["out_spec"] if s[0] == "T"]) if rg]

        def fwd(arg_vals, state_vals, scalar_vals):
            def f(da, ds):
                av, sv = list(arg_vals), list(state_vals)
                for k, v in zip(d_arg, da):
                    av[k] = v
                for i, v in zip(d_state, ds):
                    sv[i] = v
                written, outs, grads, argw = pure(av, sv, scalar_vals)
                return [outs[j] for j in out_rg], (written, outs, grads, argw)
            diff_outs, pull, aux = jax.vjp(f, [arg_vals[k] for k in d_arg], [state_vals[i] for i in d_state],
                                           has_aux=True)
            return aux + (pull,)
        entry.diff = (d_arg, d_state, out_rg)
        entry.pullback = jax.jit(lambda pull, gs: pull(gs))
        return jax.jit(fwd).lower(arg_vals, state_vals, scalar_vals)

    # ---------------------------------------------------------------------------------------------------------
    def _run(self, entry, leaves):
        self.stats["compiled_calls"] += 1
        info = entry.info
        arg_vals = [leaves[i]._v for i in entry.arg_pos]
        state_vals = entry.seen
        if lazy.STATS["calls_recorded"]:  # lazy mode was used: pending values may remain
            # (the list replaces entry.seen: a second list holding the values would make _donated_values copy them all)
            arg_vals, state_vals = lazy.concrete_all(arg_vals), lazy.concrete_all(state_vals)
            entry.seen = state_vals
        scalar_vals = _scalar_values(entry)
        try:
            res = self._call(entry, arg_vals, state_vals, scalar_vals)
        except ValueError as e:  # an argument on another device than the program (a key moved by an eager draw,
            moved = _one_device(entry.state, state_vals, arg_vals)  # a model moved with .to())
            try:
                if moved is None:
                    raise
                res = self._call(entry, arg_vals, moved, scalar_vals)
            except ValueError as again:
                raise _DeviceChanged(str(again)) from e
        written, out_vals, grads, arg_written = res[:4]
        pull = res[4] if entry.diff is not None else None
        state = entry.state
        if entry.written_out is not None:
            written = [written[j] for j in entry.written_out]
        set_values(entry.written_tensors, written)
        entry.seen = list(map(_VALUE, state))
        arg_tensors = [leaves[i] for i in entry.arg_pos]
        for k, v in zip(info["arg_written"], arg_written):
            arg_tensors[k]._set_value(v)
        targets = state + arg_tensors if entry.grads_of_args else state
        it = iter(grads)
        for i, kind in info["grad_spec"]:
            if kind == "new":
                targets[i]._grad = _make(next(it))
            else:
                targets[i]._grad = None if kind == "none" else state[kind[1]]
        out = []
        vit = iter(out_vals)
        tensors_out = []
        for kind, x in info["out_spec"]:
            if kind == "T":
                t = _make(next(vit))
                tensors_out.append(t)
                out.append(t)
            else:
                out.append(x)
        if pull is not None and STATE.grad_enabled:
            _link_outputs(entry, pull, [leaves[i] for i in entry.arg_pos], tensors_out)
        return jax.tree_util.tree_unflatten(info["out_tree"], out)

    @staticmethod
    def _call(entry, arg_vals, state_vals, scalar_vals):
        if entry.uniq is not None:
            state_vals = [state_vals[i] for i in entry.uniq]
        if entry.donate is None:
            return entry.executable(arg_vals, state_vals, scalar_vals)
        donated, kept = entry.donate
        return entry.executable(arg_vals, _donated_values(state_vals, donated, entry.own_refs),
                                [state_vals[i] for i in kept], scalar_vals)

    # ---------------------------------------------------------------------------------------------------------
    def _entry_for(self, args, kwargs):
        entry = self.entries.get(_signature(args, kwargs)[1])
        if entry is None or entry.executable is None:
            raise RuntimeError("torchish.compile: this input signature has not been compiled yet (a function is "
                               "compiled on its second call with a signature); call it twice first")
        return entry

    def lower(self, *args, **kwargs):
        """The ``jax.stages.Lowered`` program for these arguments (``.as_text()`` gives StableHLO)."""
        return self._entry_for(args, kwargs).lowered

    def compiled(self, *args, **kwargs):
        """The ``jax.stages.Compiled`` executable for these arguments (``.memory_analysis()``,
        ``.cost_analysis()``, ``.as_text()`` for the optimised HLO)."""
        return self._entry_for(args, kwargs).executable

    def hlo_text(self, *args, **kwargs):
        return self.compiled(*args, **kwargs).as_text()

    def memory_analysis(self, *args, **kwargs):
        return self.compiled(*args, **kwargs).memory_analysis()


class CompiledBackward(Node):
    """grad_fn of the outputs of a compiled forward: runs the compiled pullback. Subclasses change ``_pull``
    (how the saved pullback is called) and the create_graph refusal."""

    __slots__ = ()
    _create_graph_error = ("torchish.compile: create_graph=True through a compiled forward is not supported; "
                           "call backward(create_graph=True) inside the compiled function instead")

    def release_saved(self):
        self.pull = None

    def _pull(self, gs):
        return self.pullback(self.pull, gs)

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        if create_graph:
            raise RuntimeError(self._create_graph_error)
        gs = [g._d if g is not None else jnp.zeros(shape, dt) for g, (shape, dt) in zip(grads, self.out_meta)]
        da, ds = self._pull(gs)
        return [Tensor._make(g) for g in list(da) + list(ds)]


_COMPILED_NODE = node_class(CompiledBackward, "CompiledFunctionBackward")


def _link_outputs(entry, pull, arg_tensors, tensors_out):
    d_arg, d_state, out_rg = entry.diff
    inputs = [arg_tensors[k] for k in d_arg] + [entry.state[i] for i in d_state]
    outs = [tensors_out[j] for j in out_rg]
    node = _COMPILED_NODE(tuple(t._edge() for t in inputs), tuple((o._v.shape, o._v.dtype) for o in outs))
    node.pull = pull
    node.pullback = entry.pullback
    for i, o in enumerate(outs):
        o._rg, o._grad_fn, o._out_nr = True, node, i
