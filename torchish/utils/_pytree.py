"""``torchish.utils._pytree``: PyTorch's pytree utilities (``torch.utils._pytree``), with its semantics.

A pytree is a nest of the registered container types — tuple, list, dict, OrderedDict, defaultdict, deque and
namedtuples, plus anything given to :func:`register_pytree_node` — whose other values are leaves (``None``
included). Dicts keep their insertion order (JAX's ``tree_util`` sorts the keys and drops ``None``: its trees are
not PyTorch's), and a :class:`TreeSpec` prints as PyTorch's does.

Example:
    >>> from torchish.utils import _pytree as pytree
    >>> pytree.tree_map(lambda x: x * 2, {"b": 1, "a": (2, 3)})
    {'b': 2, 'a': (4, 6)}
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, NamedTuple

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_iter", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all",
           "tree_any", "tree_all_only", "tree_any_only", "tree_is_leaf", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "keystr", "SequenceKey", "MappingKey", "GetAttrKey", "treespec_leaf", "treespec_tuple", "treespec_dict"]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Any


SUPPORTED_NODES: dict = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make ``cls`` a container: ``flatten_fn(obj) -> (children, context)``, ``unflatten_fn(children, context)``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple) \
        and all(isinstance(f, str) for f in cls._fields)


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


is_namedtuple = is_namedtuple_instance


# stands for every namedtuple class in SUPPORTED_NODES (a spec prints its type as ``namedtuple``, as PyTorch's)
_NamedTupleMarker = type("namedtuple", (), {"__module__": __name__})


def _node_type(tree):
    t = type(tree)
    if t in SUPPORTED_NODES:
        return t
    if is_namedtuple_class(t):
        return _NamedTupleMarker
    return None


register_pytree_node(tuple, lambda t: (list(t), None), lambda xs, _: tuple(xs))
register_pytree_node(list, lambda t: (list(t), None), lambda xs, _: list(xs))
register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())), lambda xs, keys: dict(zip(keys, xs)))
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                     lambda xs, keys: collections.OrderedDict(zip(keys, xs)))
register_pytree_node(collections.defaultdict,
                     lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                     lambda xs, ctx: collections.defaultdict(ctx[0], zip(ctx[1], xs)))
register_pytree_node(collections.deque, lambda d: (list(d), d.maxlen),
                     lambda xs, maxlen: collections.deque(xs, maxlen=maxlen))
register_pytree_node(_NamedTupleMarker, lambda t: (list(t), type(t)), lambda xs, cls: cls(*xs))


@dataclasses.dataclass(init=True, frozen=True, eq=True, repr=False)
class TreeSpec:
    """The structure of a pytree: its node ``type`` (None for a leaf), the ``context`` its unflatten function needs
    (a dict's keys, a namedtuple's class) and the specs of its children."""
    type: Any
    context: Any
    children_specs: list

    def __post_init__(self):
        object.__setattr__(self, "num_nodes", 1 + sum(c.num_nodes for c in self.children_specs))
        object.__setattr__(self, "num_leaves", 1 if self.type is None else
                           sum(c.num_leaves for c in self.children_specs))
        object.__setattr__(self, "num_children", len(self.children_specs))

    def is_leaf(self) -> bool:
        return self.type is None

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        children = ""
        if self.num_children:
            indent += 2
            children = self.children_specs[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            children += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:])
        return f"TreeSpec({self.type.__name__}, {self.context}, [{children}])"

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this structure down to them)."""
        if self.is_leaf():
            return [tree]
        node = _node_type(tree)
        if node is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {type(tree)!r}.")
        children, context = SUPPORTED_NODES[node].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        if node in (dict, collections.OrderedDict, collections.defaultdict):  # (the same keys in any order)
            keys, want = (context[1], self.context[1]) if node is collections.defaultdict else (context, self.context)
            if set(keys) != set(want):
                missing, extra = set(want) - set(keys), set(keys) - set(want)
                raise ValueError(f"Node keys mismatch; missing key(s): {missing}; extra key(s): {extra}.")
            children, context = [tree[k] for k in want], self.context
        if context != self.context:
            raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        out = []
        for child, spec in zip(children, self.children_specs):
            out.extend(spec.flatten_up_to(child))
        return out

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.is_leaf():
            return next(it)
        children = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF = LeafSpec()


def treespec_leaf() -> TreeSpec:
    return _LEAF


def treespec_tuple(iterable=()) -> TreeSpec:
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping=(), **kwargs) -> TreeSpec:
    d = dict(mapping, **kwargs)
    return TreeSpec(dict, list(d.keys()), list(d.values()))


def tree_is_leaf(tree, is_leaf=None) -> bool:
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) is None


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF
    node = _node_type(tree)
    children, context = SUPPORTED_NODES[node].flatten_fn(tree)
    return TreeSpec(node, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves in order and the structure to rebuild the tree from them."""
    leaves: list = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec: TreeSpec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but got "
                        f"item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def _leaves_of_each(tree, rests, is_leaf):
    """``(spec of tree, [tree's leaves, each rest's subtrees at those leaves...])``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec, [leaves] + [spec.flatten_up_to(r) for r in rests]


def tree_map(func, tree, *rests, is_leaf=None):
    """``func`` applied to each leaf of ``tree`` (and the matching leaves of ``rests``), in ``tree``'s structure."""
    spec, flat = _leaves_of_each(tree, rests, is_leaf)
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """``func`` called on each leaf for its side effects; returns ``tree``."""
    for args in zip(*_leaves_of_each(tree, rests, is_leaf)[1]):
        func(*args)
    return tree


def _only(type_or_types, func):
    return lambda x: func(x) if isinstance(x, type_or_types) else x


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


# ----------------------------------------------------------------------------------------------------------------
# key paths


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def _child_keys(tree, node, children, context):
    if node is _NamedTupleMarker:
        return [GetAttrKey(f) for f in type(tree)._fields]
    if node in (dict, collections.OrderedDict):
        return [MappingKey(k) for k in context]
    if node is collections.defaultdict:
        return [MappingKey(k) for k in context[1]]
    custom = SUPPORTED_NODES[node].flatten_with_keys_fn
    if custom is not None:
        return [k for k, _ in custom(tree)[0]]
    if node in (tuple, list, collections.deque):
        return [SequenceKey(i) for i in range(len(children))]
    raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node}. Please pass a flatten_with_keys_fn "
                     "argument to register_pytree_node.")


def _flatten_with_path(tree, is_leaf, path, out):
    if tree_is_leaf(tree, is_leaf):
        out.append((path, tree))
        return _LEAF
    node = _node_type(tree)
    children, context = SUPPORTED_NODES[node].flatten_fn(tree)
    keys = _child_keys(tree, node, children, context)
    return TreeSpec(node, context, [_flatten_with_path(c, is_leaf, path + (k,), out) for k, c in zip(keys, children)])


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key path, leaf), ...], spec)``: each leaf with the keys leading to it."""
    out: list = []
    spec = _flatten_with_path(tree, is_leaf, (), out)
    return out, spec


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    flat = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(path, leaf, *others) for (path, leaf), *others in zip(pairs, *flat))


def keystr(kp) -> str:
    """A key path as the code that indexes it: ``[0]['a'].x``."""
    return "".join(str(k) for k in kp)
