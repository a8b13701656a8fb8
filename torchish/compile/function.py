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

This module holds the call's dispatch, the recording run (1) and the compiled call (3); tracing and lowering (2)
live in :mod:`.trace` (:class:`~.trace.TraceMixin`, which :class:`CompiledFunction` inherits).
"""
from __future__ import annotations

import functools
import warnings
import weakref

import jax

from .. import _subclass
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..ops import lazy, registry as _registry, tracing
from ..autograd.lowering import new_leaf_grad
from .backward import _link_outputs, _spent_outputs
from .args import output_tree, returned_classes, signature as _signature
from .entry import _Entry
from .errors import GraphBreakError, _DeviceChanged, _NeedsRecord, display_name, user_stacklevel
from .recorder import Recorder
from .state import _donated_values, _scalar_values, _one_device, _VALUE, _make, _write_back
from .views import take_view
from .side_effects import _store
from .trace import TraceMixin
from . import checks, pyguard

RETRACE_WARN = 8
MAX_SIGNATURES = 64  # cache entries (input signatures) kept per compiled function
INSTANCES = weakref.WeakSet()  # every CompiledFunction (torchish.compiler.reset clears their entries)
STANCE = ["default"]  # torchish.compiler.set_stance: "force_eager", "eager_on_recompile", "fail_on_recompile", ...
_NO_COMPILE = ("eager_on_recompile", "fail_on_recompile")


class CompiledFunction(TraceMixin):
    """The callable returned by :func:`torchish.compile`."""

    def __init__(self, fn, fullgraph=None, dynamic=None, mode=None, backend=None, options=None, disable=False):
        # (``@compile`` over ``@staticmethod``/``@classmethod``: the function, bound as the descriptor binds it)
        self.binds = "static" if isinstance(fn, staticmethod) else "class" if isinstance(fn, classmethod) else None
        fn = fn.__func__ if self.binds else fn
        self.fn = fn
        self.name = display_name(fn)  # (in warnings and errors)
        self.fullgraph = fullgraph
        self.disable = disable
        self.entries = {}
        self.stats = {"calls": 0, "eager_calls": 0, "traces": 0, "retraces": 0, "compiled_calls": 0,
                      "compile_seconds": 0.0, "evictions": 0}
        functools.update_wrapper(self, fn)
        INSTANCES.add(self)

    def __get__(self, obj, objtype=None):  # decorating a method
        if self.binds == "class":
            return functools.partial(self.__call__, objtype if objtype is not None else type(obj))
        if obj is None or self.binds == "static":
            return self
        return functools.partial(self.__call__, obj)

    # ---------------------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self.disable or STATE.recorder is not None or tracing.active() or STANCE[0] == "force_eager" \
                or _registry.flop_hook is not None or _subclass.mode_dispatch_on():
            # (nested inside another compiled function: inline; a FlopCounterMode counts each call's ops, and a
            # TorchFunctionMode sees each call (it may change what runs), as in PyTorch: eagerly)
            return self.fn(*args, **kwargs)
        self.stats["calls"] += 1
        leaves, key = _signature(args, kwargs)
        entry = self.entries.get(key)
        if entry is None:
            if STANCE[0] in _NO_COMPILE:
                return self._cache_miss(args, kwargs)
            if len(self.entries) >= MAX_SIGNATURES:  # keep memory bounded: forget the oldest signature
                del self.entries[next(iter(self.entries))]
                if not self.stats["evictions"]:
                    warnings.warn(f"torchish.compile: {self.name} has been called with "
                                  f"more than {MAX_SIGNATURES} input signatures (shapes, dtypes, Python values or "
                                  "objects of its arguments); the oldest are forgotten, and each new one runs "
                                  "eagerly once, then compiles.", RuntimeWarning, stacklevel=user_stacklevel())
                self.stats["evictions"] += 1
            entry = self.entries[key] = _Entry()
        entry.calls += 1
        if entry.eager:
            self.stats["eager_calls"] += 1
            return self.fn(*args, **kwargs)
        if entry.calls == 1:
            return self._record(entry, args, kwargs, leaves)
        if entry.executable is None or not entry.guards_hold() and not entry.switch_variant():
            if STANCE[0] in _NO_COMPILE:
                return self._cache_miss(args, kwargs)
            if entry.executable is not None:
                entry.stash()
                self.stats["retraces"] += 1
                if self.stats["retraces"] == RETRACE_WARN:
                    warnings.warn(f"torchish.compile: {self.name} has been retraced "
                                  f"{RETRACE_WARN} times (state or flags keep changing); each retrace recompiles.",
                                  RuntimeWarning, stacklevel=user_stacklevel())
            try:
                self._trace(entry, args, kwargs, leaves, key[0])
            except _NeedsRecord:  # the call creates state (see errors._NeedsRecord): it runs eagerly, recorded
                entry.executable = entry.lowered = None
                return self._record(entry, args, kwargs, leaves)
            except GraphBreakError as e:
                if self.fullgraph:
                    raise
                if self.fullgraph is None:  # PyTorch's default allows graph breaks: say so once per signature
                    warnings.warn(f"{e.args[0]}\ntorchish.compile runs this function eagerly for these inputs "
                                  "(graph breaks are allowed by default, as in PyTorch; fullgraph=True makes this "
                                  "an error, fullgraph=False silences it).", UserWarning, stacklevel=user_stacklevel())
                entry.eager = True
                self.stats["eager_calls"] += 1
                return self.fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the user's error, raised by an eager run (see _trace_failed)
                return self._trace_failed(e, args, kwargs)
        if entry.py_changed or entry.side_effects is not None and entry.replay is None:
            return self._run_side_effects(entry, leaves)
        try:
            return self._run(entry, leaves)
        except _DeviceChanged:  # the state and arguments moved together (model.to("cuda")): compile for there
            self.stats["retraces"] += 1
            self._trace(entry, args, kwargs, leaves, key[0])
            return self._run(entry, leaves)

    def _trace_failed(self, error, args, kwargs):
        """The function raised while it was traced (a shape error after some draws, in a call with new shapes):
        run it eagerly, so that its error comes with what the call does before it in PyTorch (its draws advance
        the random stream, its in-place writes land). A trace-time check the eager call does not make (``cond``'s
        branches of different shapes) still raises its error."""
        self.stats["eager_calls"] += 1
        self.fn(*args, **kwargs)
        raise error

    def _cache_miss(self, args, kwargs):
        """A call that needs compiling under a stance that forbids it (``torchish.compiler.set_stance``)."""
        if STANCE[0] == "fail_on_recompile":
            code = getattr(self.fn, "__code__", None)
            raise RuntimeError("Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                               f"filename: '{getattr(code, 'co_filename', '?')}', function name: "
                               f"'{getattr(self.fn, '__name__', '?')}', "
                               f"line number: {getattr(code, 'co_firstlineno', 0)}")
        self.stats["eager_calls"] += 1
        return self.fn(*args, **kwargs)

    # ---------------------------------------------------------------------------------------------------------
    def _record(self, entry, args, kwargs, leaves):
        """First call: run eagerly and learn the state."""
        from .._tensor import _SERIAL
        start = next(_SERIAL)
        rec = Recorder("eager", start)
        with rec:
            out = self.fn(*args, **kwargs)
        arg_ids = {id(x) for x in leaves if isinstance(x, Tensor)}
        out_ids = {id(x) for x in jax.tree_util.tree_leaves(output_tree(out),
                                                               is_leaf=lambda x: isinstance(x, Tensor))
                   if isinstance(x, Tensor)}
        cand = {}
        cand.update(rec.reads)
        cand.update(rec.writes)
        for k, t in rec.survivors().items():
            if k not in out_ids and t._gfn is None:
                cand[k] = t
        for k in list(cand):
            if k in arg_ids:
                del cand[k]
        entry.state = sorted(cand.values(), key=lambda t: t._sn)
        entry.scalars = list(rec.scalars.values())
        entry.modules = list(rec.modules.values())
        entry.optimizers = list(rec.optimizers.values())
        entry.returned = returned_classes(out)
        self.stats["eager_calls"] += 1
        return out

    def _run_side_effects(self, entry, leaves):
        """The traced call of a function that stores tensors it computes outside itself (``seen.append(x)`` in a
        hook, ``cache["h"] = h``): the trace ran those Python side effects once, with traced values; this call runs
        the program and gives the stored tensors their values. A program cannot repeat Python side effects, so the
        later calls with these inputs run eagerly (a graph break)."""
        stored, hyper, python = entry.side_effects, entry.scalar_override is not None, entry.py_changed
        out = self._run(entry, leaves)
        entry.eager, entry.executable, entry.lowered, entry.side_effects = True, None, None, None
        entry.scalar_override, entry.variants, entry.py_changed = None, [], False
        name = self.name
        what = []
        if stored:
            what.append(f"stores {len(stored)} tensor(s) it computes outside itself (appends them to a list, puts "
                        "them in a dict or an attribute, in the function or in one of its hooks)")
        if python:
            what.append("changes plain Python state (an attribute such as `self.calls += 1`, a global or closure "
                        "variable, a list it appends to)")
        if hyper:
            what.append("changes a hyper-parameter it reads (an lr_scheduler stepped inside it, a learning rate set "
                        "in it)")
        msg = (f"torchish.compile: {name} {' and '.join(what)}; one XLA program cannot repeat such Python side "
               "effects. Return the tensors instead, write into tensors that exist before the call (buf.copy_(x)), "
               "and step schedulers outside the compiled function, to compile it.")
        if self.fullgraph:
            raise GraphBreakError(msg)
        if self.fullgraph is None:
            warnings.warn(msg + "\ntorchish.compile runs this function eagerly for these inputs from now on "
                          "(fullgraph=True makes this an error, fullgraph=False silences it).", UserWarning,
                          stacklevel=user_stacklevel())
        return out

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
        scalar_vals = _scalar_values(entry) if entry.scalar_override is None else entry.scalar_override
        if entry.check is not None:
            checks.run(entry, arg_vals, state_vals, scalar_vals)
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
        if entry.check_outputs:  # (the step's outputs of its value checks: compile.checks ran them before it)
            res = (res[0], res[1][:len(res[1]) - entry.check_outputs]) + tuple(res[2:])
        if entry.side_effects is not None:
            if entry.replay is not None:
                for (d, k, j), v in zip(entry.replay, res[4]):
                    if d is None:  # (the base of a stored alias)
                        continue
                    t = _make(v)
                    pyguard.set_slot(d, k, t)
                    if j is not None:  # a rebound buffer: the next call reads the new tensor
                        entry.state = list(entry.state)
                        entry.state[j] = t
            else:
                _store(entry.side_effects, res[4])
            res = res[:4] + res[5:]
        written, out_vals, grads, arg_written = res[:4]
        pull = res[4] if entry.diff is not None else None
        state = entry.state
        if entry.written_out is not None:
            written = [written[j] for j in entry.written_out]
        _write_back(entry.written_tensors, written)
        for m, flag in entry.mode_writes:
            m.training = flag
        for i, rg in info["rg_writes"]:
            state[i]._rg = rg
        arg_tensors = [leaves[i] for i in entry.arg_pos]
        for k, v in zip(info["arg_written"], arg_written):
            arg_tensors[k]._set_value(v)
        for k, rg in info["arg_rg_writes"]:
            arg_tensors[k]._rg = rg
        targets = state + arg_tensors if entry.grads_of_args else state
        it = iter(grads)
        links = entry.link_of
        moved = None
        for i, kind in info["grad_spec"]:
            if kind == "new":
                t = targets[i]
                g = _make(next(it))
                if t._layout is not None:  # (the parameter's strides; the program already cast to its grad_dtype)
                    g = new_leaf_grad(t, g)
                t._gval = g
                j = links.get(i)
                if j is not None:  # the new .grad takes its predecessor's place in the state now, so the next
                    if moved is None:  # call's guard still vouches for every value by identity
                        moved = list(state)
                    moved[j] = g
            else:
                targets[i]._gval = None if kind == "none" else state[kind[1]]
        if moved is not None:
            entry.state = moved
            if entry.written_links:
                entry.written_tensors = [moved[i] for i in info["written"]]
        if entry.grad_links and entry.other_grads:
            entry.rebind_grads()
        entry.seen = list(map(_VALUE, entry.state)) if not info["retyped"] else [None] * len(entry.state)
        entry.note_grads()
        out = []
        vit = iter(out_vals)
        tensors_out = []
        for kind, x in info["out_spec"]:
            if kind == "T":
                t = _make(next(vit))
                tensors_out.append(t)
                out.append(t)
            elif kind == "S":
                out.append(entry.state[x])
            elif kind == "A":
                out.append(leaves[entry.arg_pos[x]])
            elif kind == "R":
                out.append(out[x])
            elif kind == "V":
                (src, k), chain, alias_at, nograd = x
                base = entry.state[k] if src == "S" else leaves[entry.arg_pos[k]]
                out.append(take_view(base, chain, alias_at, nograd))
            else:
                out.append(x)
        for j in info["out_inf"]:
            tensors_out[j]._inf = True
        for j, lay in info["out_layouts"]:  # (strides as the eager call's: a channels-last or transposed result)
            tensors_out[j]._layout = lay
        if pull is not None:
            _link_outputs(entry, pull, [leaves[i] for i in entry.arg_pos], tensors_out, scalar_vals, arg_vals,
                          state_vals)
        else:
            _spent_outputs(info["out_spec"], tensors_out)
        return jax.tree_util.tree_unflatten(info["out_tree"], out)

    @staticmethod
    def _call(entry, arg_vals, state_vals, scalar_vals):
        if entry.feed is None:
            if entry.uniq is not None:
                state_vals = [state_vals[i] for i in entry.uniq]
            return entry.executable(arg_vals, state_vals, scalar_vals)
        donated, kept = entry.feed
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
