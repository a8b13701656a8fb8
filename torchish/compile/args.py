"""A compiled function's arguments as a cache key: their pytree leaves (Tensors, Python values, other objects) and,
per leaf, what the program depends on (a Tensor's shape, dtype and ``requires_grad``; a Python value itself).

An argument that is a plain object of the user's (a dataclass ``Batch(x, y)`` built every step, a config object) is
taken apart into its attributes, as PyTorch's compiler reads them: its tensors are inputs of the program and its
Python values are guarded, so a new object with the same kind of contents reuses the program. (Kept whole, each new
object was a new signature: every call ran eagerly, and the cache kept every batch alive.) Objects that own state
(an optimizer, a module, a trainer holding them, an object holding tensors that require grad: parameters) stay
whole and are guarded by identity. While a program is traced the function gets copies of the objects taken apart,
holding the traced tensors; a function that changes one of them (``batch.loss = loss``) has a Python side effect a
program cannot repeat, and runs eagerly. A dataclass the function returns is taken apart the same way
(:func:`output_tree`): its tensors are outputs of the program.
"""
from __future__ import annotations

import collections
import dataclasses

import jax
import numpy as np

from .. import _dtype, _precision
from .._tensor import Tensor
from ..amp import _state as _autocast
from ..autograd.grad_mode import STATE
from ..ops import inplace as _ip
from . import pyvalues

_MAX_ATTRS = 64  # an object with more attributes than this, or a longer container among them, is kept whole
_MAX_DEPTH = 3   # objects held by objects are taken apart this deep
_SCALARS = (int, float, bool, str, bytes, type(None), complex)
_BIG = (list, tuple, dict, set)
_INEXACT = (float, complex, np.inexact)


def strides(t):
    """The strides of a non-contiguous argument (a transposed or sliced view), which ``view()``, ``stride()`` and
    ``is_contiguous()`` depend on, or None. (Not its storage offset: a program serves ``x[i]`` for every ``i``.)"""
    if t._view is None and t._layout is None:  # (a channels-last tensor has strides of its own)
        return None
    shape, st, _ = _ip.layout(t)
    return None if _ip.is_contiguous(shape, st) else st


def _leaf_key(x):
    if isinstance(x, Tensor):
        if x._rg:  # (whether an argument's .grad exists: a backward inside accumulates into it; whether it is a
            # leaf: is_leaf, in-place ops on it)
            return (type(x), x._v.shape, x._v.dtype, True, x._gval is None, x._gfn is None, strides(x),
                    x.__dict__.get("_grad_dtype", False))
        return (type(x), x._v.shape, x._v.dtype, False, strides(x))  # (a Tensor subclass: one of its own)
    if isinstance(x, _INEXACT):  # (by its bits: -0.0 is not 0.0 for a program that bakes it in; every NaN one key)
        return ("V", type(x), float(x.real).hex(), float(x.imag).hex())
    if isinstance(x, _SCALARS):
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


_PLAIN: dict = {}  # type -> whether its instances may be taken apart (before looking at the instance)


def _plain_type(t):
    v = _PLAIN.get(t)
    if v is None:
        # (a class with its own __hash__ is a value, keyed by it; one with its own __new__ may not copy)
        v = _PLAIN[t] = (not issubclass(t, (Tensor, type) + _SCALARS) and pyvalues._user_class(t)
                         and t.__hash__ in (object.__hash__, None) and t.__new__ is object.__new__)
    return v


def _takes_apart(x, depth, seen):
    if not _plain_type(type(x)) or depth > _MAX_DEPTH or id(x) in seen:
        return False
    d = getattr(x, "__dict__", None)
    return (type(d) is dict and len(d) <= _MAX_ATTRS and not pyvalues._by_identity(x)
            and not any(type(v) in _BIG and len(v) > _MAX_ATTRS for v in d.values())  # (a dataset: kept whole)
            and not any(map(_holds_leaf, d.values())))


def _is_leaf_param(v):
    return isinstance(v, Tensor) and v._rg and v._gfn is None


def _holds_leaf(v):
    """Whether ``v`` is, or directly holds, a tensor that requires grad and is a leaf: the parameters of a model
    written without ``nn.Module`` (``self.w = torch.randn(..., requires_grad=True)``). Their object is state, kept
    whole: its tensors are found as state, whose ``.grad`` a step accumulates into."""
    t = type(v)
    if t in (list, tuple):
        return any(map(_is_leaf_param, v))
    if t is dict:
        return any(map(_is_leaf_param, v.values()))
    return _is_leaf_param(v)


class _Parts:
    """A user object taken apart (a pytree node: its attribute names and class are the structure, its attribute
    values the children). Unflattened, it is a copy of the object with the children as attributes."""

    __slots__ = ("obj", "depth", "seen")

    def __init__(self, obj, depth, seen):
        self.obj, self.depth, self.seen = obj, depth, seen


def _flatten_parts(p):
    d = p.obj.__dict__
    seen = p.seen | {id(p.obj)}
    cls = type(p.obj)  # (and the plain values of its class attributes, which the program may read: `self.k`)
    return [_wrap(v, p.depth + 1, seen) for v in d.values()], (cls, tuple(d), pyvalues.class_values(cls))


COPIES: list = []  # (copy, attribute names and values it was made with) while a program is traced (see changed_copies)


def _unflatten_parts(aux, children):
    cls, names, _ = aux
    obj = cls.__new__(cls)
    obj.__dict__.update(zip(names, children))
    COPIES.append((obj, names, tuple(children)))
    return obj


jax.tree_util.register_pytree_node(_Parts, _flatten_parts, _unflatten_parts)


def _wrap(x, depth=0, seen=frozenset()):
    """``x`` with the user objects in it (in lists, tuples and dicts too) as :class:`_Parts`, and its dicts whose
    keys are out of order as :class:`_InOrder`."""
    def one(leaf):
        if type(leaf) in _DICTS:
            return _InOrder(leaf, lambda v: _wrap(v, depth, seen))
        return _Parts(leaf, depth, seen) if _takes_apart(leaf, depth, seen) else leaf
    return jax.tree_util.tree_map(one, x, is_leaf=_tensor_or_unsorted)


class _Returned:
    """A dataclass instance the function returns (``Output(loss=loss, logits=logits)``, as PyTorch's compiler
    returns it), or an instance of a plain class of the user's that the call itself made (``Out(loss, logits)``,
    ``self.Output(...)``): a pytree node whose children are its attribute values. Unflattened after each
    compiled call, it is a new instance of the class holding that call's values (made without ``__init__``, as
    ``copy.copy`` makes one). Kept whole, its tensors were values the function stored outside itself: the call ran
    eagerly. (An object that existed before the call is returned as itself.)"""

    __slots__ = ("obj", "born")

    def __init__(self, obj, born=None):
        self.obj, self.born = obj, born


def _taken_apart(x):
    """Whether ``x`` is an object (not a class) whose attributes a returned copy can hold: a plain ``__dict__`` of
    at most ``_MAX_ATTRS`` entries."""
    d = getattr(x, "__dict__", None)
    return type(d) is dict and len(d) <= _MAX_ATTRS and not isinstance(x, type)


def _returned_object(x, born=None):
    if not _taken_apart(x):
        return False
    if dataclasses.is_dataclass(x):
        return True
    return born is not None and id(x.__dict__) in born and returned_class(type(x))


def returned_class(cls):
    """A class whose instances made by a compiled call are returned as new instances after each call (a plain
    class of the user's: not a module, a tensor or a class of a library)."""
    return pyvalues._user_class(cls) and not issubclass(cls, Tensor)


def _flatten_returned(r):
    d = r.obj.__dict__
    return [output_tree(v, r.born) for v in d.values()], (type(r.obj), tuple(d))


def _unflatten_returned(aux, children):
    cls, names = aux
    obj = cls.__new__(cls)
    obj.__dict__.update(zip(names, children))
    return obj


jax.tree_util.register_pytree_node(_Returned, _flatten_returned, _unflatten_returned)


class _InOrder:
    """A dict (or defaultdict) whose keys are not in sorted order (or cannot be sorted: ``{1: x, "a": y}``), as a
    pytree node that
    keeps its insertion order: JAX's own dict node sorts the keys, so a compiled function got ``{"b": x, "a": y}``
    as ``{"a": y, "b": x}`` (``torch.cat(list(d.values()))`` in the other order: other numbers) and returned its
    dicts with sorted keys. ``wrap`` takes its values apart as the dict's container does."""

    __slots__ = ("d", "wrap")

    def __init__(self, d, wrap):
        self.d, self.wrap = d, wrap


_DICTS = (dict, collections.defaultdict)


def _unsorted(x):
    if type(x) not in _DICTS:
        return False
    keys = list(x)
    try:
        return keys != sorted(keys)
    except TypeError:
        return True


def _tensor_or_unsorted(x):
    return isinstance(x, Tensor) or type(x) in _DICTS and _unsorted(x)


def _flatten_in_order(n):
    return list(map(n.wrap, n.d.values())), (tuple(n.d), getattr(n.d, "default_factory", _DICTS))


def _unflatten_in_order(aux, children):
    keys, factory = aux
    if factory is _DICTS:
        return dict(zip(keys, children))
    return collections.defaultdict(factory, zip(keys, children))


jax.tree_util.register_pytree_node(_InOrder, _flatten_in_order, _unflatten_in_order)


def output_tree(out, born=None):
    """``out`` (a function's result) with the dataclass instances in it, and the objects of plain classes whose
    ``__dict__`` is among ``born`` (made by the traced call: ids, see ``pystate.PyState.born``), as
    :class:`_Returned` nodes and its dicts in insertion order (:class:`_InOrder`)."""
    def node(x):
        if _returned_object(x, born):
            return _Returned(x, born)
        return _InOrder(x, lambda v: output_tree(v, born)) if type(x) in _DICTS else x
    return jax.tree_util.tree_map(node, out, is_leaf=_tensor_or_unsorted)


def returned_classes(out):
    """The plain classes of the objects among ``out``'s leaves (a result of the function's eager first call): the
    compiled calls note which of their instances the call makes (see ``output_tree``)."""
    found = set()

    def visit(x, depth):
        for leaf in jax.tree_util.tree_leaves(output_tree(x), is_leaf=lambda x: isinstance(x, Tensor)):
            if _taken_apart(leaf) and returned_class(type(leaf)):
                found.add(type(leaf))
                if depth < _MAX_DEPTH:  # (an output object holding another)
                    visit(list(leaf.__dict__.values()), depth + 1)
    visit(out, 0)
    return found


def flatten(args, kwargs):
    """The leaves and tree structure of a call's arguments, user objects taken apart, dicts in insertion order."""
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_tensor_or_unsorted)
    for x in leaves:
        t = type(x)
        if t is not Tensor and t not in _SCALARS and (t in _DICTS or _plain_type(t)):
            return jax.tree_util.tree_flatten(_wrap((args, kwargs)), is_leaf=_is_tensor)
    return leaves, tree


def changed_copies(start):
    """The copies made since ``COPIES[start]`` whose attributes the traced function changed, and forgets them."""
    out = [obj for obj, names, vals in COPIES[start:]
           if tuple(obj.__dict__) != names or any(a is not b for a, b in zip(obj.__dict__.values(), vals))]
    del COPIES[start:]
    return out


_NO_ARGS = jax.tree_util.tree_structure(((), {}))


def signature(args, kwargs):
    """The leaves of the call's arguments and the key of its cache entry: the arguments' structure, shapes, dtypes
    and Python values, grad mode, inference mode (whose outputs are inference tensors), the default dtype, the
    matmul/convolution precision settings, the autocast state (which ops run in which dtype) and which tensor
    arguments share memory."""
    if args or kwargs:
        leaves, tree = flatten(args, kwargs)
    else:  # a training step that takes nothing (the common case): no pytree walk
        leaves, tree = [], _NO_ARGS
    return leaves, (tree, tuple(map(_leaf_key, leaves)), STATE.grad_enabled, STATE.inference,
                    _dtype.DEFAULTS.float, _precision.EPOCH[0], _autocast.signature(), sharing(leaves))


def sharing(leaves):
    """Which tensor arguments share memory (the same tensor twice, a view or ``detach()`` alias and its base, two
    views of one base), as the positions of their first sharer, or None (the common case): ``f(x, x)`` and
    ``f(x, y)`` are different signatures, as a write into one argument shows in the other only in the first."""
    roots = [id(t._view[0]) if t._view is not None else id(t) for t in leaves if isinstance(t, Tensor)]
    if len(roots) < 2 or len(set(roots)) == len(roots):
        return None
    first = {}
    return tuple(first.setdefault(r, k) for k, r in enumerate(roots))
