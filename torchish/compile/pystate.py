"""The plain Python values a compiled function depends on: numbers, strings and flags it reads from module
attributes (``self.scale``), from attributes of its own objects (``cfg.alpha``), from globals and closure variables
(``SCALE``, ``n[0]``). A program is traced with their values baked in, so they are guarded as PyTorch's compiler
guards them: a value changed between calls makes the next call trace again (or switch to a program traced for that
value before). A function that *changes* such a value itself (``self.calls += 1``, ``log.append(1)``) has a Python
side effect one XLA program cannot repeat: every trace of one call starts again from the values it began with, so
the effect happens once, and later calls run eagerly (see ``function.CompiledFunction._run_side_effects``).

Each item is ``(kind, holder, key)``: ``"d"`` an entry of a ``__dict__`` or of a module's globals, ``"m"`` an
entry of an ``nn.Module``'s ``__dict__`` (set through ``Module.__setattr__``, which counts changes), ``"c"`` a
closure cell, ``"s"`` a small list/dict/set of Python values (compared as a snapshot), ``"o"`` and ``"oc"`` an
object (an optimizer, a module, a config object: not a number, a Tensor or a function) in a ``__dict__`` or a
closure cell, guarded by identity as PyTorch's compiler guards it (``self.opt = Adam(...)`` between calls makes the
program stale: it steps the old optimizer's state), ``"u"`` and ``"uc"`` a user object without such state (a config
object), which may be rebound to another whose attributes are the same (see ``_same_object``), ``"f"`` a flag ``key(holder)`` computed from a container's
numbers (SGD's ``momentum != 0``: see ``recorder.static_derived``), ``"n"`` a numpy array in a ``__dict__`` (by
identity and contents, see ``_array_key``), ``"t"`` a small list or deque of tensors (its length is guarded;
a call that changes it has a side effect, see ``_tensor_list``).

Globals, closure variables and attributes of watched objects that hold tensors (``x``, ``batch = (x, y)``,
``self.batch``) are *sources*: the program reads the tensors they hold at each call (``tensor_paths``).
"""
from __future__ import annotations

import collections
import enum
import functools
import itertools
import operator
import os
import pickle
import random
import sys
import types

import numpy as np

from .. import _tensor
from ..autograd.grad_mode import STATE
from ..nn.module import ATTR_EPOCH, Module

_SCALARS = frozenset((int, float, bool, str, bytes, complex, type(None)))
_MISSING = MISSING = object()
_MISSINGS = itertools.repeat(_MISSING)
_SMALL = 64  # containers of Python values up to this length are guarded by a snapshot
_SKIP = frozenset(("training",))  # a module's train/eval flag is guarded (and re-applied) on its own
_CONTAINERS = frozenset((tuple, list, dict, collections.deque))  # containers whose tensors are sources
_SEQUENCES = (tuple, list, collections.deque)                      # (see tensor_paths)
_HYPER_READS = frozenset(("param_groups", "get_last_lr", "_last_lr"))  # (see PyState._watch_hyper_parameters)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_IDENTITY = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial, enum.Enum, type)


def _constant(v, depth=0):
    """Whether ``v`` is a value (not a number) that a program bakes in and that ``==`` compares safely: a function,
    a ``functools.partial``, an enum member, a class, a dtype or device, or a tuple of such values and numbers
    (``self.act = F.gelu``, ``self.mode = Mode.B``, ``self.dtype = torch.float64``, ``self.shape = (1, 9)``)."""
    t = type(v)
    if t in _SCALARS or isinstance(v, np.generic):  # (a numpy number: self.scale = np.float32(2.0))
        return True
    if t is tuple:
        return depth < 2 and len(v) <= _SMALL and all(_constant(x, depth + 1) for x in v)
    from .._device import device
    from .._dtype import dtype
    return isinstance(v, _IDENTITY) or isinstance(v, (dtype, device))


_ARRAY_BYTES = 1 << 16  # numpy arrays up to this size are compared by contents, larger ones by identity


def _array_key(v):
    """A numpy array a program read (``torch.from_numpy(self.w)``: a constant of the program), as compared between
    calls: the same array object, with the same dtype, shape and (up to _ARRAY_BYTES) contents."""
    if not isinstance(v, np.ndarray):
        return _entry(v)
    return id(v), v.dtype.str, v.shape, v.tobytes() if v.nbytes <= _ARRAY_BYTES else None


def _plain_container(v):
    """A small list, set or dict of plain Python values (``self.scales = [1.0, 2.0]``)."""
    t = type(v)
    return t in (list, set, dict) and len(v) <= _SMALL and all(
        type(x) in _SCALARS for x in (itertools.chain(v, v.values()) if t is dict else v))


def _object_list(v):
    """A small list or tuple of modules, user objects and constants (``self.order = [self.a, self.b]``): compared
    element by element by identity."""
    return type(v) in (list, tuple) and len(v) <= _SMALL and all(
        isinstance(x, Module) or _constant(x) or _user_class(type(x)) for x in v)


def _tensor_list(v):
    """A small list or deque holding tensors (``buffer = [x0, x1]``, ``self.memory``): its length is guarded (the
    program read ``buffer[-2:]`` at the positions it had), and a call that appends to it, pops from it or replaces
    an entry has a Python side effect (every trace of the call starts again from its entries)."""
    return type(v) in (list, collections.deque) and 0 < len(v) <= _SMALL and any(
        isinstance(x, _tensor.Tensor) for x in v)


def _small_container(v):
    t = type(v)
    if t in (list, set):
        return len(v) <= _SMALL and all(type(x) in _SCALARS for x in v)
    if t is dict:
        return len(v) <= _SMALL and all(type(k) in _SCALARS for k in v)
    return False


class _Obj(tuple):
    """An object in a snapshot, by identity (a Tensor held in a dict the function reads: ``cache["w"]``)."""


def _entry(x):
    return x if type(x) in _SCALARS else _Obj((id(x),))


def _by_identity(v):
    """Whether ``v`` is guarded by identity: an object that owns the state a program was traced with — an
    optimizer, a module, a scheduler, or an object holding one of them (a trainer with ``self.opt``). Not plain
    values, containers (a global ``batch`` tuple rebound every step), Tensors (found by the recorder) or objects
    without such state (a config object: its attributes are guarded by value)."""
    return _owns_state(v) or (hasattr(v, "__dict__") and _user_class(type(v)) and not isinstance(v, type)
                              and any(_owns_state(x) for x in vars(v).values()))


def _owns_state(v):
    from ..optim.lr_scheduler import LRScheduler
    from ..optim.optimizer import Optimizer
    return isinstance(v, (Optimizer, Module, LRScheduler))


_RNGS = (random.Random, np.random.Generator, np.random.RandomState)


def _rng_state(r):
    """(the state of a Python or numpy random generator, its pickled bytes for comparing)."""
    st = r.getstate() if isinstance(r, random.Random) else r.bit_generator.state if isinstance(
        r, np.random.Generator) else r.get_state()
    return st, pickle.dumps(st)


def _set_rng_state(r, st):
    if isinstance(r, random.Random):
        r.setstate(st)
    elif isinstance(r, np.random.Generator):
        r.bit_generator.state = st
    else:
        r.set_state(st)


def _owns_state_class(cls):
    from ..optim.lr_scheduler import LRScheduler
    from ..optim.optimizer import Optimizer
    return issubclass(cls, (Optimizer, LRScheduler))


def value(item):
    kind, holder, key = item
    if kind == "f":  # a flag computed from a container (recorder.static_derived)
        return key(holder)
    if kind == "n":
        return _array_key(holder.get(key, _MISSING))
    if kind in ("d", "m", "o", "u"):
        return holder.get(key, _MISSING)
    if kind in ("c", "oc", "uc"):
        try:
            return holder.cell_contents
        except ValueError:
            return _MISSING
    if kind == "t":
        return tuple(holder)
    if type(holder) is dict:
        return tuple((k, _entry(x)) for k, x in holder.items())
    if type(holder) is set:
        return frozenset(holder)
    return tuple(holder)


def _restore(item, v):
    kind, holder, key = item
    if kind in ("f", "n"):
        return  # (computed from the container's values, which are restored on their own; an array's contents)
    if kind == "m":
        ATTR_EPOCH[0] += 1
    if kind in ("d", "m", "o", "u"):
        if v is _MISSING:
            holder.pop(key, None)
        else:
            holder[key] = v
    elif kind in ("c", "oc", "uc"):
        if v is not _MISSING:
            holder.cell_contents = v
    elif type(holder) is dict:
        if any(type(x) is _Obj for k, x in v):  # objects are not restored (a tensor the function stores: see
            holder.update((k, x) for k, x in v if type(x) is not _Obj)  # side_effects), its plain values are
            return
        holder.clear()
        holder.update(v)
    elif type(holder) is set:
        holder.clear()
        holder.update(v)
    elif type(holder) is list:
        holder[:] = v
    elif type(holder) is collections.deque:
        holder.clear()
        holder.extend(v)


_LIBRARIES = ("torchish", "builtins", "jax", "numpy", "torch", "optax", "flax")


def _user_class(cls):
    """A class defined outside torchish and the libraries whose attribute access may be watched."""
    mod = getattr(cls, "__module__", "") or ""
    if mod.startswith(_LIBRARIES) or issubclass(cls, Module):
        return False
    get = cls.__getattribute__  # (object's, or ours while a trace watches the class)
    return "__dict__" in dir(cls) and (get is object.__getattribute__ or getattr(get, "watching", False))


class PyState:
    """The Python values one traced call touched, with the values it began with; reused across the traces of that
    call (every trace starts again from those values, so a side effect happens once)."""

    def __init__(self, fn, args):
        self.before = {}            # id-key -> (item, value the call began with)
        self.classes = {Module}     # classes whose instances' attribute reads/writes are watched
        self.static = []            # items found in the function's globals and closures
        self.rngs = [random._inst, np.random.mtrand._rand]  # Python's and numpy's random generators it may draw from
        self.drew_random = False    # whether the last trace drew from one of them (see __exit__)
        self.sources = []           # those of them that hold tensors (see tensor_paths)
        self.slots = {}             # (id(holder), key) -> (holder, key, the tensor there before the call)
        self._discover(fn, 0, set())
        for a in args:
            if _user_class(type(a)):
                self.classes.add(type(a))
        self._patched = []
        self._hyper_patched = []

    # -- discovery of the globals and closure variables the function (and functions it names) refer to ---------
    def _discover(self, fn, depth, seen):
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, Module):  # a compiled module: its _call_impl, whose user code is forward
            fn = owner
        elif owner is not None and _user_class(type(owner)):  # a method: its object's attributes are watched
            self.classes.add(type(owner))
        if isinstance(fn, Module):
            fn = type(fn).forward
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None or id(code) in seen or depth > 2:
            return
        seen.add(id(code))
        g = fn.__globals__
        for name in _names(code):
            if name in g:
                self._consider(("d", g, name), g[name], depth, seen)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            self._consider(("c", cell, name), v, depth, seen)

    def discover_hooks(self, modules, state, optimizers=()):
        """The hooks a trace may have run are the user's code too: the forward and backward (pre-)hooks of the
        modules it called, the global module hooks, the gradient hooks of its state tensors and the step hooks of
        the optimizers it stepped. The plain Python
        values their globals and closures hold (``lambda m, go: (go[0] * cfg["scale"],)``) are guarded as the
        function's own, by the values they have now (a hook registered after an earlier trace included); the
        attributes of a hook object or of a bound method's object (``self.scale``) are watched as the function's
        objects are. Returns whether it found such a class not watched yet: the call must be traced again, watching
        it."""
        from ..nn._hooks import GLOBAL
        dicts = [GLOBAL.forward_pre, GLOBAL.forward, GLOBAL.backward, GLOBAL.backward_pre]
        for m in modules:
            dicts.extend(d for d in (m.__dict__.get(name) for name in _HOOK_DICTS) if isinstance(d, dict))
        dicts.extend(h for t in state for h in (t._hooks, t._post_acc_hooks) if isinstance(h, dict))
        dicts.extend(_optimizer_hook_dicts(optimizers))
        first, seen, known = len(self.static), set(), set(self.classes)
        for d in dicts:
            for hook in list(d.values()):
                if isinstance(hook, (types.FunctionType, types.MethodType)):
                    self._discover(hook, 1, seen)
                elif callable(hook) and _user_class(type(hook)):  # (an object with __call__ reading its attributes)
                    self.classes.add(type(hook))
                    self._discover(type(hook).__call__, 1, seen)
        for item in self.static[first:]:
            self.touch(item, value(item))
        return bool(self.classes - known)

    def _add_source(self, item):
        if not any(it[1] is item[1] and it[2] == item[2] for it in self.sources):
            self.sources.append(item)
            rec = STATE.recorder
            for holder, key, t in _tensor_slots(item):  # (as first seen: before the trace rebinds them; not one
                if rec is None or t._sn < rec.start:     # the trace made, read back after it stored it)
                    self.slots.setdefault((id(holder), key), (holder, key, t))

    def _restore_slots(self):
        for holder, key, t in self.slots.values():
            if slot_value(holder, key) is not t:
                set_slot(holder, key, t)

    def _consider(self, item, v, depth, seen):
        if isinstance(v, _RNGS) and all(v is not r for r in self.rngs):
            self.rngs.append(v)
        if tensor_paths(v):
            self._add_source(item)
        if _constant(v):  # (numbers, flags, and a global or closure variable rebound: ACT = torch.sigmoid)
            self.static.append(item)
        if _tensor_list(v):
            self.static.append(("t", v, None))
        if _small_container(v) and type(v) in (list, dict, set):
            self.static.append(("s", v, None))
            for x in (v.values() if type(v) is dict else v):  # the user's objects kept in it are watched too
                if _user_class(type(x)):
                    self.classes.add(type(x))
        elif isinstance(v, types.FunctionType):
            if not (getattr(v, "__module__", "") or "").startswith(_LIBRARIES):  # the user's own functions
                self._discover(v, depth + 1, seen)
        elif _user_class(type(v)):
            self.classes.add(type(v))
        if _by_identity(v) and not _small_container(v):  # (a global `opt` rebound to a new optimizer)
            self.static.append(("o" if item[0] == "d" else "oc",) + item[1:])
        elif _user_class(type(v)):  # (`cfg` rebound to a config object with other values)
            self.static.append(("u" if item[0] == "d" else "uc",) + item[1:])

    def watch_optimizer_state(self, optimizers):
        """Plain Python values kept in the per-parameter state of the optimizers the function steps (a custom
        optimizer's ``state["n"] = state.get("n", 0) + 1`` beside its tensors) are guarded like the function's
        own: a step that changes them has a Python side effect a program cannot repeat (the call then runs
        eagerly), one changed outside between calls traces again."""
        for o in optimizers:
            st = o.__dict__.get("state")
            for d in (st.values() if isinstance(st, dict) else ()):
                if _small_container(d) and type(d) is dict and any(type(x) in _SCALARS for x in d.values()):
                    self.static.append(("s", d, None))

    def rewind(self):
        """Put back the Python values a trace that was given up changed (a graph break, state created lazily):
        the call then runs eagerly, and its side effects must happen once, not once more for the trace."""
        for item, v in self.before.values():
            _restore(item, v)
        self._restore_slots()  # (a tensor rebound by the trace: ``total = total + loss``)

    # -- watching ------------------------------------------------------------------------------------------------
    def touch(self, item, v):
        k = (id(item[1]), item[2])
        if k not in self.before:
            self.before[k] = (item, v)

    def __enter__(self):
        for item, v in self.before.values():  # a later trace of the same call starts from the same values
            _restore(item, v)
        self._restore_slots()
        for item in self.static:
            self.touch(item, value(item))
        self._rng_states = [_rng_state(r) for r in self.rngs]
        self._watched = set()
        for cls in list(self.classes):
            self._watch(cls)
        self._watch_hyper_parameters()
        return self

    def _watch_hyper_parameters(self):
        """An optimizer's hyper-parameters (``group["lr"]``) are inputs of the program, not constants, when the
        optimizer reads them (``recorder.scalar``): a scheduler changes them without a retrace. Read by the user's
        own code (``lr = opt.param_groups[0]["lr"]``, ``sched.get_last_lr()``, a custom optimizer's ``step``), they
        are plain Python numbers baked into the program, so they are guarded by value as PyTorch's compiler
        guards them: the param groups (or the scheduler's last rates) read from outside torchish during the trace
        are watched, and a new value traces again (or switches to a program traced for it before)."""
        from ..optim.lr_scheduler import LRScheduler
        from ..optim.optimizer import Optimizer

        def getattribute(obj, name):
            if name in _HYPER_READS and not sys._getframe(1).f_code.co_filename.startswith(_PACKAGE):
                self._hyper_read(obj)
            return object.__getattribute__(obj, name)
        for cls in (Optimizer, LRScheduler):
            cls.__getattribute__ = getattribute
            self._hyper_patched.append(cls)

    def _watch(self, cls):
        """Record reads and writes of plain Python values on instances of ``cls`` while the trace runs; an
        instance of a user class met in one of its attributes (``self.cfg``) is watched in turn."""
        if cls in self._watched:
            return
        self._watched.add(cls)
        touch, watch, watched, add_source = self.touch, self._watch, self._watched, self._add_source
        rngs, states = self.rngs, self._rng_states
        own = cls.__dict__.get("__setattr__")
        base_set = cls.__setattr__

        hyper = self._hyper_read if _owns_state_class(cls) else None

        def getattribute(obj, name):
            v = object.__getattribute__(obj, name)
            if hyper is not None and name in _HYPER_READS and \
                    not sys._getframe(1).f_code.co_filename.startswith(_PACKAGE):
                hyper(obj)  # (a user's optimizer or scheduler subclass: its own step reads its param groups)
            t = type(v)
            if t in _SCALARS:
                if name not in _SKIP:
                    d = object.__getattribute__(obj, "__dict__")
                    if d.get(name, _MISSING) is v:
                        touch(("m" if isinstance(obj, Module) else "d", d, name), v)
            else:
                plain = (_plain_container(v) or _object_list(v)) and not name.startswith("_")  # (not a module's
                if plain or _constant(v):                                                  # own bookkeeping)
                    d = object.__getattribute__(obj, "__dict__")
                    if d.get(name, _MISSING) is v:  # (self.act = F.gelu, self.scales = [3.0, 4.0] between calls)
                        touch(("m" if isinstance(obj, Module) else "d", d, name), v)
                        if plain:  # (self.scales[0] = -1.0: compared as a snapshot)
                            touch(("s", v, None), value(("s", v, None)))
                elif _tensor_list(v) and not name.startswith("_"):  # (self.memory: appended to between calls)
                    touch(("t", v, None), tuple(v))
                if isinstance(v, _RNGS) and all(v is not r for r in rngs):  # (self.rng: drawn from by the trace)
                    rngs.append(v)
                    states.append(_rng_state(v))
                if t not in watched and _user_class(t):
                    watch(t)
                if tensor_paths(v):
                    d = object.__getattribute__(obj, "__dict__")
                    if d.get(name, _MISSING) is v:  # (self.batch = (x, y) rebound between calls)
                        add_source(("d", d, name))
                # (self.opt rebound to a new optimizer, self.cfg to a new config object; type: isinstance reads
                # __class__)
                owner = not issubclass(type(obj), Module) and _by_identity(v)
                if owner or _user_class(t):
                    d = object.__getattribute__(obj, "__dict__")
                    if d.get(name, _MISSING) is v:
                        touch(("o" if owner else "u", d, name), v)
                if t is np.ndarray:  # (self.w = np.array(...) replaced, or changed in place, between calls)
                    d = object.__getattribute__(obj, "__dict__")
                    if d.get(name, _MISSING) is v:
                        touch(("n", d, name), _array_key(v))
                if name == "forward" and isinstance(obj, Module):  # (module.forward = patched, between calls)
                    d = object.__getattribute__(obj, "__dict__")
                    if "forward" not in d:
                        touch(("m", d, "forward"), _MISSING)
            return v

        def setattr_(obj, name, v):
            if name not in _SKIP:
                d = object.__getattribute__(obj, "__dict__")
                old = d.get(name, _MISSING)
                if type(v) in _SCALARS or type(old) in _SCALARS:
                    touch(("m" if isinstance(obj, Module) else "d", d, name), old)
            base_set(obj, name, v)
        getattribute.watching = True
        try:
            cls.__getattribute__ = getattribute
        except (TypeError, AttributeError):  # a class that takes no new attributes: not watched
            return
        try:
            cls.__setattr__ = setattr_
        except (TypeError, AttributeError):
            del cls.__getattribute__
            return
        self._patched.append((cls, own))
        self.classes.add(cls)  # (watched from the start of the function's next trace)

    def _hyper_read(self, obj):
        """Guard the param groups of the optimizer ``obj`` (or of a scheduler's optimizer, and its last rates)
        by value: the user's code read them (see ``_watch_hyper_parameters``)."""
        from ..optim.lr_scheduler import LRScheduler
        if isinstance(obj, LRScheduler):
            d = object.__getattribute__(obj, "__dict__")
            self.touch(("d", d, "_last_lr"), d.get("_last_lr", _MISSING))
            obj = object.__getattribute__(obj, "optimizer")
        for g in object.__getattribute__(obj, "param_groups"):
            if _small_container(g):
                self.touch(("s", g, None), value(("s", g, None)))

    def __exit__(self, *exc):
        # Python's or numpy's random numbers drawn by the trace would be constants of the program, the same at every
        # call: the generators are put back (the call then runs eagerly and draws them, see drew_random)
        self.drew_random = False
        for r, st in zip(self.rngs, self._rng_states):
            if _rng_state(r)[1] != st[1]:
                _set_rng_state(r, st[0])
                self.drew_random = True
        for cls in self._hyper_patched:
            del cls.__getattribute__
        self._hyper_patched = []
        for cls, own in reversed(self._patched):
            del cls.__getattribute__
            if own is None:
                del cls.__setattr__
            else:
                cls.__setattr__ = own
        self._patched = []

    def guard(self):
        """(the guard of the values the call began with or None, whether the call changed any of them). A dict
        whose objects the call replaced (a tensor stored: ``cache["h"] = h``, which ``side_effects`` gives its value
        after every call) is not guarded; a changed Python value in it is a side effect."""
        pairs, changed = [], False
        for it, v in self.before.values():
            now = value(it)
            if it[0] == "t" and (len(now) != len(v) or any(map(operator.is_not, now, v))):
                changed = True  # (the call appended to, popped from or wrote into a list of tensors)
            elif _same_item(it, now, v):
                pairs.append((it, v))
            elif it[0] == "s" and type(it[1]) is dict and (
                    any(type(x) is _Obj for k, x in v) or any(type(x) is _Obj for k, x in now)):
                old, new = dict(v), dict(now)
                changed |= any(not _same(old.get(k, _MISSING), x) for k, x in new.items() if type(x) is not _Obj)
            else:
                changed = True
        return (Guard([it for it, v in pairs], [v for it, v in pairs]) if pairs else None), changed


def _same(a, b):
    """Whether a program traced with the Python value ``b`` baked in also fits ``a``: the same type and value, where
    ``-0.0`` is not ``0.0`` (``1 / (x * s)`` is -inf, not inf) and a NaN is a NaN (comparing unequal to itself, it
    retraced every call); tuples element by element."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t is float or isinstance(a, np.floating):
        return a == b and (a != 0 or np.signbit(a) == np.signbit(b)) or a != a and b != b
    if t is complex or isinstance(a, np.complexfloating):
        return _same(float(a.real), float(b.real)) and _same(float(a.imag), float(b.imag))
    if t is tuple:
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


def _same_item(it, a, b):
    if it[0] == "t":  # (a list of tensors: the same length; the tensors now in it are read, see tensor_paths)
        return len(a) == len(b)
    if it[0] in ("u", "uc"):
        return _same_object(a, b)
    return a is b if it[0] in ("o", "oc") else _same(a, b)


def _same_object(a, b):
    """A user object (a config) rebound to another of its class whose attributes are the same numbers, constants
    and objects: the program still fits (a script making a fresh config object every step does not retrace)."""
    if a is b:
        return True
    if type(a) is not type(b) or not hasattr(a, "__dict__") or not hasattr(b, "__dict__"):
        return False
    da, db = vars(a), vars(b)
    return da.keys() == db.keys() and all(
        da[k] is db[k] or _constant(da[k]) and _constant(db[k]) and _same(da[k], db[k]) for k in da)


class Guard:
    """Whether every guarded Python value still has the value (and type: ``x * 1`` and ``x * 1.0`` differ) the
    program was traced with. Module settings (dozens in a transformer: ``eps``, ``p``, ``num_heads``) are compared
    only after some module attribute was set since the last check (``ATTR_EPOCH``), a dict at a time; globals,
    closure variables and other objects' attributes every call."""

    def __init__(self, items, began):
        groups, self.slow, self.cells = {}, [], []
        for it, v in zip(items, began):
            if it[0] == "m" or it[0] == "d" and v is not _MISSING:  # (a module's missing `forward`: set later)
                g = groups.setdefault((it[0], id(it[1])), (it[1], [], []))
                g[1].append(it[2])
                g[2].append(v)
            elif it[0] in ("c", "oc"):  # closure variables
                self.cells.append((it[1], v, it[0] == "oc"))
            else:
                self.slow.append((it, v))
        self.modules = [(h, tuple(k), tuple(v)) for (kind, i), (h, k, v) in groups.items() if kind == "m"]
        self.other = [(h, tuple(k), tuple(v)) for (kind, i), (h, k, v) in groups.items() if kind == "d"]
        self.epoch = None

    @staticmethod
    def _groups_hold(groups):
        for h, keys, vals in groups:
            got = tuple(map(h.get, keys, _MISSINGS))  # (a deleted key reads as _MISSING, never as None)
            if not all(map(_same, got, vals)):  # (the types too: `x * 1` and `x * 1.0` differ)
                return False
        return True

    def __call__(self):
        if self.modules and self.epoch != ATTR_EPOCH[0]:
            if not self._groups_hold(self.modules):
                return False
            self.epoch = ATTR_EPOCH[0]
        for h, keys, vals in self.other:  # (the same objects first: flags and numbers a dict keeps)
            if not all(map(operator.is_, map(h.get, keys, _MISSINGS), vals)) and not self._groups_hold(
                    [(h, keys, vals)]):
                return False
        for cell, v, by_identity in self.cells:
            try:
                now = cell.cell_contents
            except ValueError:
                now = _MISSING
            if now is not v and (by_identity or not _same(now, v)):
                return False
        for it, v in self.slow:
            if not _same_item(it, value(it), v):
                return False
        return True


def slot_value(holder, key):
    """The value in a slot (a dict entry, or a closure cell with key None) now, or None."""
    if type(holder) is dict:
        return holder.get(key)
    try:
        return holder.cell_contents
    except ValueError:
        return None


def set_slot(holder, key, t):
    if type(holder) is dict:
        holder[key] = t
    else:
        holder.cell_contents = t


def _tensor_slots(item):
    """``[(holder, key, tensor)]``: the tensors a source item holds directly or in a dict (``x``, ``G["ema"]``,
    ``self.total``; a closure cell's key is None)."""
    kind, holder, key = item
    if kind == "c":
        key = None
    v = slot_value(holder, key)
    if isinstance(v, _tensor.Tensor):
        return [(holder, key, v)]
    if type(v) is dict:
        return [(v, k, x) for k, x in v.items() if isinstance(x, _tensor.Tensor)]
    return []


def tensor_paths(v, depth=0):
    """``[(path, tensor)]`` for a Tensor (path ``()``) or the tensors in tuples/lists/dicts of them, nested up to 3
    deep (a global ``x``, ``batch = (x, y)`` or ``data = {"train": (x, y)}`` a script rebinds between calls: the
    program reads the tensors found there now, see ``entry._Entry.rebind_sources``)."""
    from .._tensor import Tensor
    if isinstance(v, Tensor):
        return [((), v)]
    t = type(v)
    if depth >= 3 or t not in _CONTAINERS or len(v) > 64:
        return []
    out = []
    for k, x in (v.items() if t is dict else enumerate(v)):
        out.extend(((k,) + p, y) for p, y in tensor_paths(x, depth + 1))
    return out


def tensor_at(v, path):
    """The tensor at ``path`` of ``v`` (see :func:`tensor_paths`), or None where ``v`` no longer has one there."""
    for key in path:
        t = type(v)
        if t in _SEQUENCES:
            if not (isinstance(key, int) and key < len(v)):
                return None
            v = v[key]
        elif t is dict:
            v = v.get(key)
        else:
            return None
    return v if isinstance(v, _tensor.Tensor) else None


def _names(code):
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


_HOOKS = operator.attrgetter("_hooks")
_POST_HOOKS = operator.attrgetter("_post_acc_hooks")
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")
_MODULE_DICTS = ("_modules", "_parameters", "_buffers", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                 "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_hooks",
                 "_backward_pre_hooks")


_CONTAINER_DICTS = ("_modules", "_parameters", "_buffers")


def _optimizer_hook_dicts(optimizers):
    from ..optim.optimizer import _GLOBAL_POST_HOOKS, _GLOBAL_PRE_HOOKS
    out = [_GLOBAL_PRE_HOOKS, _GLOBAL_POST_HOOKS] if optimizers else []
    for o in optimizers:
        out.extend(d for d in (o.__dict__.get(name) for name in ("_optimizer_step_pre_hooks",
                                                                 "_optimizer_step_post_hooks")) if isinstance(d, dict))
    return out


def _uncalled_descendants(modules):
    """The submodules of ``modules`` that were not called themselves: containers the function iterates or indexes
    (``for layer in self.layers``, ``self.heads[task]``, a ParameterList), in a fixed order. A layer appended to
    such a container changes what the function runs without changing any called module's children."""
    seen = set(map(id, modules))
    out, stack = [], list(modules)
    while stack:
        children = stack.pop().__dict__.get("_modules")
        for c in (children.values() if isinstance(children, dict) else ()):
            if isinstance(c, Module) and id(c) not in seen:
                seen.add(id(c))
                out.append(c)
                stack.append(c)
    return out


def structure(modules, state, optimizers):
    """A function giving the structure a program was traced for, and its value now: the children, parameters,
    buffers and hooks of the modules it called (``net[1] = nn.Tanh()``, ``m.register_forward_hook(f)``), the
    global module hooks, the hooks of its state tensors (``w.register_hook(f)``) and the param groups of the
    optimizers it stepped (``opt.add_param_group(...)``), by identity. A difference means the program is stale."""
    from ..nn._hooks import GLOBAL
    dicts = [d for d in vars(GLOBAL).values() if isinstance(d, dict)]
    for m in modules:
        md = m.__dict__
        dicts.extend(md[name] for name in _MODULE_DICTS if isinstance(md.get(name), dict))
    for m in _uncalled_descendants(modules):  # (containers: a ModuleList appended to, a ParameterList)
        md = m.__dict__
        dicts.extend(md[name] for name in _CONTAINER_DICTS if isinstance(md.get(name), dict))
    dicts.extend(h for h in map(_HOOKS, state) if h)
    dicts.extend(h for h in map(_POST_HOOKS, state) if h)
    dicts.extend(_optimizer_hook_dicts(optimizers))
    values = dict.values
    chain = itertools.chain.from_iterable
    params = operator.itemgetter("params")

    def now():
        return (tuple(map(id, chain(map(values, dicts)))), tuple(map(id, map(_HOOKS, state))),
                tuple(map(id, map(_POST_HOOKS, state))),
                tuple(tuple(map(id, o.param_groups)) + tuple(map(len, map(params, o.param_groups)))
                      for o in optimizers))
    return now, now()


class OptimizerState:
    """Whether the optimizers a program steps still hold the parameters and the per-parameter state it was traced
    with (``opt.param_groups[0]["params"].append(p)`` between calls changes what the step updates). The program
    reads and writes those state tensors (Adam's moments, a momentum buffer); ``opt.state.clear()``,
    ``opt.state = defaultdict(dict)``, ``del opt.state[p]`` or ``opt.state[p]["exp_avg"] = torch.zeros_like(p)``
    between calls leave it updating tensors the optimizer no longer has, where PyTorch's step starts the state
    afresh (or uses the new tensor): the program is then stale. Tensors are compared by identity, plain Python
    values (a custom optimizer's step count) by value."""

    def __init__(self, optimizers):
        self.optimizers = list(optimizers)
        self.values = self._now()

    def _now(self):
        out = []
        for o in self.optimizers:
            groups = o.__dict__.get("param_groups")
            out.extend(groups)
            for g in groups:  # (a parameter appended to a group's list in place)
                out.extend(g.get("params", ()))
            st = o.__dict__.get("state")
            out.append(st)
            for d in (st.values() if isinstance(st, dict) else ()):
                if type(d) is dict:
                    out.extend(d.values())
                else:
                    out.append(d)
        return out

    def __call__(self):
        now, old = self._now(), self.values
        if len(now) != len(old):
            return False
        if all(map(operator.is_, now, old)):
            return True
        if not all(a is b or type(a) in _SCALARS and _same(a, b) for a, b in zip(now, old)):
            return False
        self.values = now
        return True
