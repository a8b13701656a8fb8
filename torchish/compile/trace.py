"""Tracing and lowering for :class:`~torchish.compile.function.CompiledFunction` (step 2 of its docstring):
the user's function runs once with tracers bound into its state Tensors and arguments, under a recording that
learns what it wrote (state, ``.grad`` tensors, arguments, flags), what it returns and what it reads that the state
did not hold yet; that trace is retried until the state settles, then lowered and compiled — with the written state
donated, or with its VJP when the outputs are differentiated outside the call.

:class:`TraceMixin` holds these methods; the compiled call itself (``_run``: the executable, the write-back, the
outputs) stays in :mod:`.function`.
"""
from __future__ import annotations

import collections
import time
import weakref

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from ..autograd.graph import STRUCT_EPOCH, _SEQ as _NODE_SEQ, saved_origin
from .. import _random, _subclass
from ..ops import lazy, nesting, tracing
from .backward import (argument_wrapper, drop_added_hooks, hook_marks, reached_inputs, second_order_op,
                       with_inputs)
from .args import COPIES, changed_copies, output_tree, sharing, strides as arg_strides_of
from .entry import scalar_kind
from .errors import GraphBreakError, user_frame
from .recorder import Recorder
from .state import (_lower_donating, _OWN_REFS, _own_refs, _share_classes, _unstable, _dedupe, _as_weak_array,
                    _one_device, _VALUE)
from .views import view_spec
from .side_effects import ModuleHooks, _kept_alive, _leaked, _replayable, _with_leaks, module_slots
from . import checks, output, pyguard, pystate, pyvalues

_CONCRETE_ERRORS = (tracing.ConcretizationError, jax.errors.ConcretizationTypeError,
                    jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError,
                    jax.errors.TracerArrayConversionError)


def _program_platform(arg_vals, state, state_vals):
    """The platform the program will run on: that of its first argument or state value (generator states aside)
    committed to a device, else JAX's default backend (where jit places uncommitted values)."""
    values = list(arg_vals) + [v for t, v in zip(state, state_vals) if not getattr(t, "_is_rng_key", False)]
    for v in values:
        if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer) and v.committed:
            return next(iter(v.devices())).platform
    return jax.default_backend()


def _output_layouts(traced):
    """``(position, layout)`` of the traced output tensors whose strides are dense but not contiguous (an
    elementwise op on a channels-last or transposed argument, a convolution of a channels-last input): the
    program's outputs take them, as torch.compile keeps eager's output strides."""
    from ..ops.inplace import dense_layout
    return [(j, lay) for j, lay in enumerate(map(dense_layout, traced)) if lay is not None]


class TraceMixin:
    """How :class:`~torchish.compile.function.CompiledFunction` traces and compiles a call (see the module's
    docstring); it reads ``fn``, ``name`` and ``stats`` of the instance."""

    def _trace(self, entry, args, kwargs, leaves, tree):
        t0 = time.perf_counter()
        modes = [(m, m.training) for m in entry.modules]  # the flags the program is traced (and guarded) for
        py = pystate.PyState(self.fn, leaves)  # every trace of this call starts from the same Python values
        py.returned = entry.returned
        py.watch_optimizer_state(entry.optimizers)
        py.discover_hooks(entry.modules, entry.state, entry.optimizers)  # (before the trace runs them: their
        try:                                                              # side effects are seen)
            if py.iterators:
                raise GraphBreakError(f"torchish.compile: {self.name} refers to "
                                      f"the iterator {py.iterators[0]!r}: what next() draws from it inside would be "
                                      "a constant of the program, and every trace would draw again. Draw outside "
                                      "and pass the values as arguments to compile it.")
            if _subclass._ACTIVE[0] and any(_subclass._overloaded(x) for x in leaves if isinstance(x, Tensor)):
                raise GraphBreakError(f"torchish.compile: {self.name} is called "
                                      "with a Tensor subclass that takes part in __torch_function__, whose Python "
                                      "runs at every call (and whose results are of its class); it runs eagerly.")
            self._trace_attempts(entry, leaves, tree, py, modes)
        except Exception:  # the call runs eagerly instead (or raises there): its side effects happen there
            py.rewind()
            raise
        # modes the function sets (model.eval() in an evaluation step) are set again after each compiled call
        entry.mode_writes = [(m, m.training) for m, flag in modes if m.training != flag]
        for m, flag in modes:
            m.training = flag
        entry.guard = entry.guard_key()
        entry.scalar_kinds = tuple(scalar_kind(c[k]) for c, k in entry.scalars)
        entry.py_guard, entry.py_changed = py.guard()
        index = {id(t): j for j, t in enumerate(entry.state)}
        entry.sources = [(item, paths) for item, paths in
                         ((item, [(k, index[id(t)]) for k, t in pyguard.tensor_paths(pyvalues.value(item))
                                  if id(t) in index]) for item in py.sources) if paths]
        for m, flag in entry.mode_writes:
            m.training = flag
        index = {id(t): j for j, t in enumerate(entry.state)}
        entry.grad_links = [(i, index[id(t._gval)]) for i, t in enumerate(entry.state) if id(t._gval) in index]
        entry.link_of = dict(entry.grad_links)
        entry.written_links = bool(set(entry.link_of.values()) & set(entry.info["written"]))
        entry.other_grads = any(kind != "new" for i, kind in entry.info["grad_spec"])
        grad_slots = set(entry.link_of.values())
        entry.struct = pyguard.structure(entry.modules, [t for j, t in enumerate(entry.state) if j not in grad_slots],
                                         entry.optimizers) + (STRUCT_EPOCH[0],)
        entry.opt_state = pyguard.OptimizerState(entry.optimizers) if entry.optimizers else None
        entry.seen, entry.grads_seen = list(map(_VALUE, entry.state)), None
        entry.written_tensors = [entry.state[i] for i in entry.info["written"]]
        entry.grads_of_args = any(i >= len(entry.state) for i, _ in entry.info["grad_spec"])
        dt = time.perf_counter() - t0
        entry.compile_time += dt
        self.stats["compile_seconds"] += dt

    def _trace_attempts(self, entry, leaves, tree, py, modes):
        """Trace until the state settles: a trace that meets state it did not know (or a hook object to watch)
        adds it and traces again."""
        for attempt in range(6):
            self.stats["traces"] += 1
            for m, flag in modes:  # (a function may switch modes itself: model.train() at its start)
                m.training = flag
            missing = self._trace_once(entry, leaves, tree, py)
            if not missing:
                if py.discover_hooks(entry.modules, entry.state, entry.optimizers):  # (hook objects: traced again)
                    continue
                return
            entry.state = sorted({id(t): t for t in entry.state + missing[0]}.values(), key=lambda t: t._sn)
            known = {(id(c), k) for c, k in entry.scalars}  # (by identity: a group dict holds tensors)
            entry.scalars = entry.scalars + [s for s in missing[1] if (id(s[0]), s[1]) not in known]
            entry.modules = entry.modules + [m for m in missing[2] if m not in entry.modules]
        raise RuntimeError("torchish.compile: the set of state tensors did not settle after 6 traces")

    def _trace_once(self, entry, leaves, tree, py):
        state = entry.state
        info = {}
        fn = self.fn
        arg_pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        arg_rg = [leaves[i]._rg for i in arg_pos]
        arg_strides = [arg_strides_of(leaves[i]) for i in arg_pos]
        scalar_keys = [(id(c), k) for c, k in entry.scalars]
        modules_seen = {}
        arg_refs = []  # (weak references to the trace's argument tensors: one still alive after it was stored)

        def pure(arg_vals, state_vals, scalar_vals):
            from .._tensor import _SERIAL
            saved = [(t._d, t._gval, t._gfn, t._out_nr, t._rg) for t in state]
            marks = [hook_marks(t) for t in state]
            for t, v in zip(state, state_vals):
                t._d = v
            targs = list(leaves)
            arg_tensors = []
            for i, v, rg, st in zip(arg_pos, arg_vals, arg_rg, arg_strides):
                tt = argument_wrapper(leaves[i], v, rg)
                if st is not None:  # (a transposed argument is still one: view() refuses it, stride() reports it)
                    tt._layout = (tuple(v.shape), st, 0)
                targs[i] = tt
                arg_tensors.append(tt)
            arg_refs[:] = map(weakref.ref, arg_tensors)
            n_copies = len(COPIES)
            a, kw = jax.tree_util.tree_unflatten(tree, targs)  # (user objects in the arguments: copies)
            start = next(_SERIAL)
            first_seq = next(_NODE_SEQ)
            rec = Recorder("trace", start, dict(zip(scalar_keys, scalar_vals)), scalar_start)
            module_hooks = ModuleHooks(entry.modules)
            try:
                with rec, tracing.tracing_scope(), py, output.held(), tracing.deferred_checks() as deferred:
                    out = fn(*a, **kw)
                if module_hooks.added():
                    raise GraphBreakError(
                        f"torchish.compile: {self.name} registers a module hook that it "
                        "does not remove (register_forward_hook, register_forward_pre_hook, register_full_backward_hook"
                        "), which eager mode adds once per call and one XLA program cannot; it runs eagerly.")
                if any(hook_marks(t) != m for t, m in zip(state, marks)):
                    raise GraphBreakError(
                        f"torchish.compile: {self.name} registers a gradient hook on a "
                        "parameter or buffer (register_hook, register_post_accumulate_grad_hook, retain_grad), which "
                        "eager mode adds once per call and one XLA program cannot; it runs eagerly.")
                changed = changed_copies(n_copies)
                if changed:
                    raise GraphBreakError(
                        f"torchish.compile: {self.name} changes an attribute of an "
                        f"argument ({type(changed[0]).__name__} object), a Python side effect one XLA program cannot "
                        "repeat. Return the value instead of storing it on the argument, to compile it.")
                if py.drew_random:
                    raise GraphBreakError(
                        f"torchish.compile: {self.name} draws Python or numpy random "
                        "numbers (random.random(), rng.normal()), which one XLA program would keep as constants. Draw "
                        "them outside and pass them in, or use torch's random functions, to compile it.")
                for c, k in rec.statics.values():  # flags baked into the program (an optimizer's maximize)
                    py.touch(("d", c, k), c.get(k, pyvalues.MISSING))
                for c, f in rec.derived.values():  # (SGD's momentum != 0)
                    py.touch(("f", c, f), f(c))
                for c, k in rec.sources.values():  # (a Tensor lr: the one the group holds at each call is read)
                    py._add_source(("d", c, k))
                out_leaves, out_tree = jax.tree_util.tree_flatten(output_tree(out, py.born()),  # (dataclass objects
                                                                  is_leaf=lambda x: isinstance(x, Tensor))  # apart)
                missing = [t for t in rec.missing.values()]
                # writes to known state are fine; writes to concrete pre-existing tensors outside it are missing
                state_ids = {id(t) for t in state}
                # (by the value it had when first written, which the recorder kept: it holds a tracer now, as an
                # optimizer's state loaded from a checkpoint into a fresh optimizer does after its update)
                for t in rec.writes.values():
                    if id(t) not in state_ids and (id(t) in rec.originals or not isinstance(t._d, jax.core.Tracer)):
                        missing.append(t)
                for m in rec.modules.values():
                    modules_seen[id(m)] = m
                entry.optimizers = entry.optimizers + [o for o in rec.optimizers.values()
                                                       if all(o is not e for e in entry.optimizers)]
                out_vals, out_spec, out_inf, out_reach, out_traced = [], [], [], [], []
                per_leaf, engine_only = reached_inputs(out_leaves, state, saved, arg_tensors, first_seq)
                # a state tensor or an argument returned as itself (a parameter, a running metric, an argument
                # normalised in place) is returned as itself by every call, as PyTorch returns the same object
                held = {id(t): ("S", j) for j, t in enumerate(state)}
                held.update((id(t), ("A", k)) for k, t in enumerate(arg_tensors))
                first = {}  # id -> position of a tensor among the outputs: one returned twice is one object
                for pos, (x, reach) in enumerate(zip(out_leaves, per_leaf)):
                    if isinstance(x, Tensor) and x._gfn is getattr(x, "_arg_node", None) and id(x) in held:
                        out_spec.append(held[id(x)])
                    elif isinstance(x, Tensor) and id(x) in first:
                        out_spec.append(("R", first[id(x)]))
                    elif isinstance(x, Tensor) and view_spec(x, held) is not None:
                        first[id(x)] = pos  # a view of an argument or of state: taken again after each call
                        out_spec.append(view_spec(x, held))
                    elif isinstance(x, Tensor):
                        first[id(x)] = pos
                        if x._inf:  # made under inference_mode inside the function: an inference tensor again
                            out_inf.append(len(out_vals))
                        out_spec.append(("T", x._gfn.name() if x._rg and x._gfn is not None else None))
                        out_vals.append(x._d)
                        out_reach.append(reach or (set(), frozenset(), set(), None))
                        out_traced.append(x)
                    else:
                        out_spec.append(("C", x))
                written = [i for i, t in enumerate(state) if t._d is not state_vals[i]]
                # (a write that changes a value's dtype or shape — an optimizer's state promoted after model.double()
                # — leaves state this program was not compiled for: the next call's guard compares in full)
                info["retyped"] = any((state[i]._d.dtype, state[i]._d.shape) != (state_vals[i].dtype,
                                                                                  state_vals[i].shape) for i in written)
                grads = []
                grad_spec = []
                for i, t in enumerate(state + arg_tensors):
                    g = t._gval
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
                for k, tt in enumerate(arg_tensors):
                    if tt._gval is not None and leaves[arg_pos[k]]._gval is not None:
                        raise GraphBreakError(
                            f"torchish.compile: {self.name} accumulates gradients into "
                            "the .grad of an argument that already has one; the program does not take argument "
                            "gradients as inputs. Set the argument's .grad to None before the call to compile it.")
                info["reached"], info["engine_only"] = out_reach, engine_only
                # per output, the outputs its graph saved for backward (an in-place write into one after the call
                # makes its backward raise PyTorch's error), with what that error says of them
                info["saved_outputs"] = [[(k, f"{t.type()} {list(t.shape)}]{saved_origin(t._gfn, t._out_nr)}")
                                          for k, t in enumerate(out_traced) if id(t._vc) in r[2]] for r in out_reach]
                # and the arguments and state tensors it saved (written in place after the call, as a view output of
                # the call or an optimizer step before backward, they make its backward raise PyTorch's error too)
                info["saved_inputs"] = [[("A", k) for k, t in enumerate(arg_tensors) if id(t._vc) in r[2]] +
                                        [("S", i) for i, t in enumerate(state) if id(t._vc) in r[2]]
                                        for r in out_reach]
                info["out_layouts"] = _output_layouts(out_traced)
                info.update(out_tree=out_tree, out_spec=out_spec, out_inf=out_inf, written=written,
                            grad_spec=grad_spec, arg_written=arg_written, missing=missing,
                            missing_scalars=list(rec.missing_scalars.values()),
                            backward_ran=rec.backward_ran, recorder=rec,
                            checks=[(err, message) for _, _, err, message in deferred.checks])
                # the value checks' results last (cut out into a program of their own: compile.checks)
                out_vals += [c[0] for c in deferred.checks] + [c[1] for c in deferred.checks]
                info["n_outputs"] = len(out_vals)
                # the written state first, in the donated inputs' order: XLA pairs a donated input with the first
                # output of its shape, so anything before it (a scalar loss before a scalar Adam step) costs copies
                return [state[i]._d for i in written], out_vals, grads, [arg_tensors[k]._d for k in arg_written]
            except _CONCRETE_ERRORS as e:
                fs = user_frame(e.__traceback__)
                where = f"{fs.filename}:{fs.lineno}: `{fs.line}`\n" if fs is not None else ""
                raise GraphBreakError(
                    f"torchish.compile could not trace {self.name}: {where}"
                    f"{type(e).__name__}: {str(e).splitlines()[0]}\nValue-dependent Python (`.item()`, `.tolist()`, "
                    "`if tensor:`, printing a tensor) cannot run inside one XLA program. Move it outside the "
                    "compiled function or express it with tensor ops (torchish.where, masks) to compile it.") from e
            finally:
                # requires_grad_ set by the function on state (a module frozen or unfrozen by an argument's flag):
                # set again after each compiled call, as the train/eval switches it makes
                info["rg_writes"] = [(i, t._rg) for i, (t, sv) in enumerate(zip(state, saved)) if t._rg != sv[4]]
                info["arg_rg_writes"] = [(k, tt._rg) for k, (tt, rg) in enumerate(zip(arg_tensors, arg_rg))
                                         if tt._rg != rg and tt._gfn is None]  # (x.requires_grad_() on a leaf)
                for t, (d, g, gf, nr, rg), m in zip(state, saved, marks):
                    t._d, t._gval, t._gfn, t._out_nr, t._rg = d, g, gf, nr, rg
                    drop_added_hooks(t, m)  # (the trace's: the eager calls add their own)
                if module_hooks.added():
                    module_hooks.restore()
                rec.restore()
                del COPIES[n_copies:]

        arg_vals = lazy.concrete_all([leaves[i]._d for i in arg_pos])
        state_vals = lazy.concrete_all([t._d for t in state])
        state_vals = _one_device(state, state_vals, arg_vals) or state_vals
        scalar_vals = [c[k] for c, k in entry.scalars]  # Python numbers stay weakly typed
        scalar_start = dict(zip(scalar_keys, scalar_vals))
        rep = _share_classes(state, state_vals, entry.split)
        uniq = [i for i, r in enumerate(rep) if r == i]
        position = {r: c for c, r in enumerate(uniq)}
        cls = [position[r] for r in rep] if len(uniq) < len(rep) else None

        def shared(arg_vals, unique_vals, scalar_vals):  # one input per array; one output per written value
            written, outs, grads, argw = pure(arg_vals, unique_vals if cls is None else
                                              [unique_vals[c] for c in cls], scalar_vals)
            written, info["written_out"] = _dedupe(written)
            info["n_written"] = len(written)
            return written, outs, grads, argw
        unique_vals = [state_vals[i] for i in uniq]
        buffers = module_slots(entry.modules)  # (the buffers before the trace: one the function rebinds is replayed)
        with _random.tracing_on(_program_platform(arg_vals, state, state_vals)):
            traced = nesting.jit(shared).trace(arg_vals, unique_vals, scalar_vals)  # runs the user's Python once
        for k, (holder, key, t) in py.slots.items():  # (and the tensors its globals and attributes held)
            buffers.setdefault(k, t)
        if _kept_alive(arg_refs, info["recorder"]):
            raise GraphBreakError(f"torchish.compile: {self.name} stores an argument "
                                  "tensor outside itself (appends it to a list, puts it in a dict or an attribute), "
                                  "a Python side effect one XLA program cannot repeat; it runs eagerly.")
        if info["arg_written"] and sharing(leaves) is not None:
            # (the program takes each argument as a value of its own: a write into one would not show in the other)
            raise GraphBreakError(f"torchish.compile: {self.name} writes in place into "
                                  "an argument that shares its memory with another argument (the same tensor twice, "
                                  "a view and its base); it runs eagerly.")
        if info["missing"] or info["missing_scalars"] or [m for k, m in modules_seen.items()
                                                           if all(m is not e for e in entry.modules)]:
            new_modules = [m for m in modules_seen.values() if all(m is not e for e in entry.modules)]
            return (info["missing"], info["missing_scalars"], new_modules)
        entry.modules = entry.modules + [m for m in modules_seen.values() if all(m is not e for e in entry.modules)]
        entry.check, entry.check_uniq, entry.check_seen = None, uniq, None
        if info["checks"]:
            written = set(info["written"])
            entry.check = checks.program(traced, info, jax.tree.leaves((arg_vals, unique_vals, scalar_vals)),
                                         [len(arg_vals) + c for c, i in enumerate(uniq) if i in written])
        entry.diff = entry.second_op = None
        entry.donate = entry.feed = None
        entry.check_outputs = 2 * len(info["checks"])  # (the step's outputs of its value checks, if it keeps them)
        entry.uniq, entry.pairs, entry.own_refs, entry.written_out = None, [], _OWN_REFS, None
        entry.side_effects = entry.scalar_override = entry.replay = None
        rec = info.pop("recorder")
        leaked = _leaked(rec)
        # (under no_grad too: an output made under enable_grad() inside has a graph; grad mode is in the signature)
        differentiable = any(rg for kind, rg in info["out_spec"] if kind == "T") and not info["backward_ran"]
        if differentiable and info["engine_only"]:
            # the outputs' backward must run Python the program's differentiation does not see: PyTorch's engine
            # (eager mode) runs it
            raise GraphBreakError(f"torchish.compile: {self.name} "
                                  f"{info['engine_only']} in the graph of outputs differentiated outside it; its "
                                  "backward runs eagerly.")
        if differentiable and any(arg_rg[k] for k in info["arg_written"]):
            # the argument's own graph would have to take the in-place op in, as PyTorch's does: eager mode does
            raise GraphBreakError(f"torchish.compile: {self.name} writes in "
                                  "place into an argument that requires grad, and its outputs are differentiated "
                                  "outside it; it runs eagerly.")
        if rec.scalars_written or any(c[k] is not v and c[k] != v for (c, k), v in zip(entry.scalars, scalar_vals)):
            entry.scalar_override = [_as_weak_array(v) for v in scalar_vals]  # this call's values: those it began with
        if leaked or entry.scalar_override is not None:
            # this call runs the traced program, which also returns the values the function stored away
            pure_leaking, entry.side_effects = _with_leaks(traced, leaked, uniq, info)
            if entry.scalar_override is None:
                entry.replay = _replayable(leaked, state, buffers, set(info["written"]))
            if info["written_out"] != list(range(len(info["written"]))):
                entry.written_out = info["written_out"]
            if differentiable:
                lowered = self._lower_with_vjp(entry, pure_leaking, info, arg_vals, state_vals, scalar_vals, arg_rg)
            else:
                lowered = nesting.jit(pure_leaking).lower(arg_vals, state_vals, scalar_vals)
        elif differentiable:  # (the forward and its VJP are traced afresh, one input per tensor)
            lowered = self._lower_with_vjp(entry, pure, info, arg_vals, state_vals, scalar_vals, arg_rg)
            if cls is None:  # (the traced forward as a jaxpr: its VJP is recorded under create_graph=True)
                entry.second_op = second_order_op(traced.jaxpr, info["n_written"], len(arg_vals), len(state_vals),
                                                  *entry.diff)
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
                                                    arg_vals, unique_vals, scalar_vals, 2 * len(info["checks"]))
            if entry.donate is not None:  # (the state indices of the donated and kept inputs)
                entry.feed = tuple([uniq[c] for c in part] for part in entry.donate)
                entry.check_outputs = 0
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
        out_rg = [j for j, (kind, rg) in enumerate([s for s in info["out_spec"] if s[0] == "T"]) if rg]
        reached = set().union(*(info["reached"][j][0] for j in out_rg))  # (an input no output reaches: .grad None)
        d_arg = [k for k, v in enumerate(arg_vals) if arg_rg[k] and inexact(v) and ("A", k) in reached]
        d_state = [i for i, t in enumerate(entry.state) if t._rg and inexact(t._d) and ("S", i) in reached]
        position = {("A", k): p for p, k in enumerate(d_arg)}
        position.update((("S", i), len(d_arg) + p) for p, i in enumerate(d_state))
        entry.diff_reach = [{position[w] for w in info["reached"][j][0] if w in position} for j in out_rg]
        entry.diff_saving = [info["reached"][j][1] for j in out_rg]
        entry.diff_stale = [info["reached"][j][3] for j in out_rg]
        entry.diff_saved = [info["saved_outputs"][j] for j in out_rg]
        entry.diff_saved_inputs = [info["saved_inputs"][j] for j in out_rg]

        def fwd(arg_vals, state_vals, scalar_vals):
            def f(da, ds):
                av, sv = with_inputs(arg_vals, state_vals, d_arg, d_state, da, ds)
                res = tuple(pure(av, sv, scalar_vals))  # (written, outs, grads, argw[, stored away])
                return [res[1][j] for j in out_rg], res
            diff_outs, pull, aux = jax.vjp(f, [arg_vals[k] for k in d_arg], [state_vals[i] for i in d_state],
                                           has_aux=True)
            return aux + (pull,)
        entry.diff = (d_arg, d_state, out_rg)
        entry.pullback = nesting.jit(lambda pull, gs: pull(gs))
        return nesting.jit(fwd).lower(arg_vals, state_vals, scalar_vals)
