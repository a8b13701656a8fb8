"""The guards of a compiled program over Python state (``Guard``: the values it was traced with), where tensors sit
in Python containers (``tensor_paths``, slots), the structure of its modules and the optimizers' per-parameter state
(``structure``, ``OptimizerState``)."""
from __future__ import annotations

import itertools
import operator
import types

import numpy as np

from .. import _tensor
from ..nn.module import ATTR_EPOCH, Module
from .pyvalues import _CONTAINERS, _MISSING, _MISSINGS, _SCALARS, _SEQUENCES, _constant, value



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
