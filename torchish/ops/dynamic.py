"""Static integers that eager kernels take as values: one compiled kernel for ``x[i]`` whatever ``i`` is.

An op's static arguments key its cached jitted kernels, so an op whose static arguments carry Python integers that
change from call to call — an index (``x[i]``, ``x.select(0, i)``), a slice start (``x[i:i + 4]``,
``x.narrow(0, i, 4)``), and the chains of such views that writes through views replay — would compile a kernel per
value: ~20 ms each on CPU, in a loop over rows every iteration. Such an op declares ``OpDef.dynamic``, a function
``dynamic(static, take) -> static`` that replaces each of those integers ``v`` by ``take(v)`` (a :class:`Slot`).
Its eager kernels (forward, the node's VJP, view replays, the lowered backward) are keyed by the static arguments
with Slots and called with the integers as extra arguments; inside the kernel :func:`fill` puts the traced values
back, so the forward sees a traced integer where it saw a Python one (it indexes with ``lax.dynamic_*``). Traced
programs (``torchish.compile``, lazy segments) keep the integers static: there they are constants anyway.

The values travel as cached device scalars (:func:`values`): a Python integer passed to a jitted function is
transferred on each call (~1.5 us); a cached device array costs ~0.2 us.
"""
from __future__ import annotations

import jax
import numpy as np


class Slot:
    """The place of the ``k``-th dynamic integer in an op's static arguments."""

    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return type(other) is Slot and other.k == self.k

    def __hash__(self):
        return hash((Slot, self.k))

    def __repr__(self):
        return f"Slot({self.k})"


def split(op, static):
    """``(static with op's dynamic integers as Slots, their values as Python ints)``."""
    return split_with(op.dynamic, static)


def split_with(fn, obj):
    """``(fn(obj, take), the values taken)``: ``fn`` replaces integers by ``take(v)``."""
    found = []

    def take(v):
        found.append(v)
        return Slot(len(found) - 1)

    return fn(obj, take), tuple(found)


def split_chain(chain, take):
    """A chain of view ops ``((op, static), ...)`` with each op's dynamic integers taken."""
    return tuple((op, op.dynamic(st, take) if op.dynamic is not None else st) for op, st in chain)


def chain_static(static, take):
    """``OpDef.dynamic`` of ops whose static argument ``chain`` is a chain of view ops (view writes and replays)."""
    return tuple((k, split_chain(v, take) if k == "chain" else v) for k, v in static)


def fill(obj, vals):
    """``obj`` (static arguments: nested tuples) with each Slot replaced by its value."""
    t = type(obj)
    if t is Slot:
        return vals[obj.k]
    if t is tuple:
        return tuple(fill(o, vals) for o in obj)
    return obj


def count(obj) -> int:
    """How many Slots ``obj`` holds."""
    t = type(obj)
    if t is Slot:
        return 1
    if t is tuple:
        return sum(count(o) for o in obj)
    return 0


_ON_DEVICE: dict = {}
_SPLITS: dict = {}


def split_values(op, static):
    """:func:`split` with the values as :func:`values` (cached per ``(op, static)``: the eager fast path);
    ``(static, ())`` for an op without dynamic integers."""
    if op.dynamic is None:
        return static, ()
    key = (op, static)
    hit = _SPLITS.get(key)
    if hit is None:
        if len(_SPLITS) >= 8192:
            _SPLITS.clear()
        kst, ints = split(op, static)
        hit = _SPLITS[key] = (kst, values(ints))
    return hit


def values(ints):
    """Python integers as (cached, uncommitted) device scalars: int32 where they fit."""
    out = []
    for v in ints:
        a = _ON_DEVICE.get(v)
        if a is None:
            if len(_ON_DEVICE) >= 8192:
                _ON_DEVICE.clear()
            a = _ON_DEVICE[v] = jax.device_put(np.int32(v) if -2 ** 31 <= v < 2 ** 31 else np.int64(v))
        out.append(a)
    return tuple(out)
