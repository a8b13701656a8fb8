"""Reading, restoring and comparing the plain Python values a compiled function depends on (the items of
``pystate.PyState``): numbers, strings, flags, small containers, numpy arrays, random generators, objects guarded
by identity."""
from __future__ import annotations

import collections
import enum
import functools
import itertools
import os
import pickle
import random
import types

import numpy as np

from .. import _tensor
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


def class_values(cls):
    """The plain values among a user class's own attributes (``class Cfg: scale = 2.0``), as a snapshot."""
    return tuple((k, v) for k, v in vars(cls).items() if type(v) in _SCALARS and not k.startswith("__"))


def slot_values(obj):
    """The plain values in the ``__slots__`` of a user object without a ``__dict__`` (``@dataclass(slots=True)``
    configs), as a snapshot."""
    out = []
    for klass in type(obj).__mro__:
        names = klass.__dict__.get("__slots__", ())
        for name in (names,) if isinstance(names, str) else names:
            v = getattr(obj, name, _MISSING)
            if type(v) in _SCALARS or v is _MISSING:
                out.append((name, v))
    return tuple(out)


def slotted(v):
    """Whether ``v`` is an instance of a user class that keeps its attributes in ``__slots__`` only."""
    t = type(v)
    return (not hasattr(v, "__dict__") and hasattr(t, "__slots__") and not isinstance(v, type)
            and not (getattr(t, "__module__", "") or "").startswith(_LIBRARIES))


def user_class_object(v):
    """Whether ``v`` is a class of the user's (a config namespace ``Cfg``, a ``cls`` argument), whose plain class
    attributes the program may bake in."""
    return isinstance(v, type) and not (getattr(v, "__module__", "") or "").startswith(_LIBRARIES)


def value(item):
    kind, holder, key = item
    if kind == "f":  # a flag computed from a container (recorder.static_derived)
        return key(holder)
    if kind == "k":
        return class_values(holder)
    if kind == "l":
        return slot_values(holder)
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
    if kind == "k":
        for k, x in v:
            if vars(holder).get(k, _MISSING) is not x:
                setattr(holder, k, x)
        return
    if kind == "l":
        for k, x in v:
            if getattr(holder, k, _MISSING) is not x and x is not _MISSING:
                setattr(holder, k, x)
        return
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
