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
a call that changes it has a side effect, see ``_tensor_list``), ``"k"`` the plain class attributes of a user's class
(``Cfg.scale``, a class-level ``scale = 2.0`` read as ``self.scale``, a classmethod's ``cls.k``; a snapshot, see
``pyvalues.class_values``), ``"l"`` the plain values in the ``__slots__`` of a user object without a ``__dict__``
(``@dataclass(slots=True)``; a snapshot, see ``pyvalues.slot_values``).

Globals, closure variables and attributes of watched objects that hold tensors (``x``, ``batch = (x, y)``,
``self.batch``) are *sources*: the program reads the tensors they hold at each call (``tensor_paths``).
"""
from __future__ import annotations

import collections.abc
import functools
import operator
import random
import sys
import types

import numpy as np

from ..autograd.grad_mode import STATE
from ..nn.module import Module
from .pyguard import (Guard, _HOOK_DICTS, _names, _optimizer_hook_dicts, _same, _same_item, _tensor_slots, set_slot,
                      slot_value, tensor_paths)
from .pyvalues import (_HYPER_READS, _LIBRARIES, _MISSING, _Obj, _PACKAGE, _RNGS, _SCALARS, _SKIP, _array_key,
                       _by_identity, _constant, _object_list, _owns_state_class, _plain_container, _restore,
                       _rng_state, _set_rng_state, _small_container, _tensor_list, _user_class, class_values,
                       slot_values, slotted, user_class_object, value)



class _Defaults:
    """A function's ``__defaults__`` and ``__kwdefaults__``, read live as the entries of a dict (an item's holder)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def get(self, key, default=None):
        return getattr(self.fn, key, default)

    def __setitem__(self, key, v):
        setattr(self.fn, key, v)

    def pop(self, key, default=None):
        setattr(self.fn, key, None)


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
        self.iterators = []         # names of iterators among them (see _consider)
        self._discover(fn, 0, set())
        for a in args:
            if _user_class(type(a)):
                self.classes.add(type(a))
            elif user_class_object(a):  # (a classmethod's cls: its class attributes are read)
                self.static.append(("k", a, None))
            elif slotted(a) and slot_values(a):  # (an argument kept whole, whose slots the program reads)
                self.static.append(("l", a, None))
        self._patched = []
        self._hyper_patched = []
        self._init_patched = []
        self._born = {}             # id -> __dict__ of the watched objects the running trace created (see _watch)
        self.returned = set()       # classes of the objects the function returned before (see args.output_tree)
        self._library_state = _library_state()

    # -- discovery of the globals and closure variables the function (and functions it names) refer to ---------
    def _discover(self, fn, depth, seen):
        if isinstance(fn, functools.partial):  # its function, and the values bound to it, as a closure's
            for name, v in fn.keywords.items():
                self._consider(("d", fn.keywords, name), v, depth, seen)
            held = dict(enumerate(fn.args))  # (a tuple: its items are never rebound, their contents may change)
            for k, v in held.items():
                self._consider(("d", held, k), v, depth, seen)
            return self._discover(fn.func, depth, seen)
        if _user_class(type(fn)) and not isinstance(fn, Module) and callable(fn):  # an object with __call__:
            self.classes.add(type(fn))                                            # its attributes are watched
            fn = type(fn).__call__
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
        if (fn.__defaults__ or fn.__kwdefaults__) and not (fn.__module__ or "").startswith(_LIBRARIES):
            live = _Defaults(fn)  # (f.__defaults__ = (3.0,) between calls: by identity)
            self.static += [("o", live, "__defaults__"), ("o", live, "__kwdefaults__")]
            for held in (dict(enumerate(fn.__defaults__ or ())), dict(fn.__kwdefaults__ or {})):
                for k, v in held.items():  # (default values: a `hist=[]` the function appends to, a `cfg=CFG` dict)
                    self._consider(("d", held, k), v, depth, seen)
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
        if isinstance(v, collections.abc.Iterator):  # (next(batches) in the function: every trace would consume
            self.iterators.append(item[2])           # an item, and the program would keep one as a constant)
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
        if user_class_object(v):  # (a config namespace: Cfg.scale set between calls)
            self.static.append(("k", v, None))
        elif slotted(v) and slot_values(v):  # (a @dataclass(slots=True) config: no __dict__ to watch)
            self.static.append(("l", v, None))

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
        _restore_library_state(self._library_state)  # (a scheduler stepped before the graph break)

    # -- watching ------------------------------------------------------------------------------------------------
    def touch(self, item, v):
        k = (id(item[1]), item[2])
        if k[0] in self._born:  # (an object the call made: its attributes are the call's own, no outside state)
            return
        if k not in self.before:
            self.before[k] = (item, v)

    def __enter__(self):
        for item, v in self.before.values():  # a later trace of the same call starts from the same values
            _restore(item, v)
        self._restore_slots()
        _restore_library_state(self._library_state)  # (a scheduler the last attempt stepped: not stepped twice)
        for item in self.static:
            self.touch(item, value(item))
        self._rng_states = [_rng_state(r) for r in self.rngs]
        self._born = {}
        self._watched = set()
        for cls in list(self.classes):
            self._watch(cls)
        for cls in self.returned:  # (only their births: an instance the call makes is returned as a new one)
            self._note_births(cls)
        self._watch_hyper_parameters()
        return self

    def born(self):
        """The ids of the ``__dict__`` of the objects of watched and returned classes the last trace made, and
        forgets those objects (kept alive while it ran, so that their ids stayed their own): after the trace they
        are the outputs' or garbage, not tensors the function stored outside itself."""
        ids, self._born = set(self._born), {}
        return ids

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
        for klass in cls.__mro__:  # (self.k read from the class, type(self).k: Plain.k set between calls)
            if klass is not object and user_class_object(klass) and class_values(klass):
                self.touch(("k", klass, None), class_values(klass))
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
                    else:  # (a class attribute: `scale = 2.0` in the class body, set on the class between calls,
                        klass = next((k for k in type(obj).__mro__ if name in vars(k)), None)  # or on the object)
                        if klass is not None and user_class_object(klass) and name not in d:
                            touch(("k", klass, None), class_values(klass))
                            touch(("m" if isinstance(obj, Module) else "d", d, name), _MISSING)
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
                elif slotted(v):  # (self.cfg, a @dataclass(slots=True) config: its slots as a snapshot)
                    touch(("l", v, None), slot_values(v))
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
        self._note_births(cls)
        self.classes.add(cls)  # (watched from the start of the function's next trace)

    def _note_births(self, cls):
        """Note the instances of ``cls`` the trace creates (``nn.CrossEntropyLoss()(out, y)``, a config object
        built in the function): what their ``__init__`` sets, and what the call then reads or writes on them, is
        the call's own state, made again at every call, not a value from outside the function to guard or a side
        effect (each new module's attributes read as 'changed' and ran the function eagerly)."""
        if any(c is cls for c, _ in self._init_patched):  # (a returned class watched too)
            return
        own, original, born = cls.__dict__.get("__init__"), cls.__init__, self._born

        def init(obj, *args, **kwargs):
            try:
                d = object.__getattribute__(obj, "__dict__")
            except AttributeError:  # (slots only: never watched)
                pass
            else:
                born[id(d)] = d  # (kept alive while the trace runs: its id stays its own)
            return original(obj, *args, **kwargs)
        try:
            cls.__init__ = init
        except (TypeError, AttributeError):
            return
        self._init_patched.append((cls, own))

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
        for cls, own in reversed(self._init_patched):
            if own is None:
                del cls.__init__
            else:
                cls.__init__ = own
        self._init_patched = []

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


def _library_state():
    """The Python state of every live scheduler (its ``__dict__``, lists copied) and the hyper-parameters of the
    param groups of every optimizer they drive: a trace given up after stepping a scheduler (a graph break after
    ``sched.step()``) must not leave it stepped, or the eager run steps it a second time."""
    from ..optim._schedulers_base import LIVE
    scheds, groups = [], {}
    for sched in list(LIVE):
        d = object.__getattribute__(sched, "__dict__")
        scheds.append((d, dict(d), {k: list(v) for k, v in d.items() if type(v) is list}))
        opt = d.get("optimizer")
        for g in getattr(opt, "param_groups", None) or ():
            if type(g) is dict:
                groups[id(g)] = (g, {k: v for k, v in g.items() if k != "params"})
    return scheds, list(groups.values())


def _restore_library_state(state):
    scheds, groups = state
    for d, saved, lists in scheds:
        d.clear()
        d.update(saved)
        for k, items in lists.items():  # (the same list objects, their items put back)
            d[k][:] = items
    for g, saved in groups:
        for k in [k for k in g if k != "params" and k not in saved]:
            del g[k]
        g.update(saved)
