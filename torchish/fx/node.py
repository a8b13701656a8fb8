"""``torch.fx.Node``: one operation of a :class:`~torchish.fx.Graph` (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``), linked to its neighbours in the graph's order and
to the nodes it reads (``all_input_nodes``) and that read it (``users``); plus ``map_arg``/``map_aggregate``, which
walk the nested tuples, lists, dicts and slices that hold a node's arguments.
"""
from __future__ import annotations

import operator

from ._names import pretty_target, type_repr

_SIDE_EFFECTFUL: dict = {}  # id(function) -> function: calls dead-code elimination keeps (``has_side_effect``)


def has_side_effect(fn):
    """Mark ``fn`` so that :meth:`Graph.eliminate_dead_code` keeps its calls even when nothing uses their result."""
    _SIDE_EFFECTFUL[id(fn)] = fn
    return fn


def map_aggregate(a, fn):
    """``fn`` applied to each leaf of ``a`` (tuples, namedtuples, lists, dicts and slices are walked)."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        # (namedtuples keep their type; PyTorch's return types, struct sequences there, become tuples)
        named = hasattr(a, "_fields") and type(a).__module__ != "torch.return_types"
        return type(a)(*mapped) if named else mapped
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``fn`` applied to each :class:`Node` inside ``a``; other leaves are kept."""
    if not callable(fn):
        raise TypeError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg) -> str:
    """A node's arguments as ``str(graph)`` shows them: nodes as ``%name``, strings bare."""
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation of a graph. ``op`` says what it does with ``target``:

    - ``placeholder``: an input of the function, named ``target``; ``args`` holds its default, if any.
    - ``get_attr``: reads the attribute ``target`` (a qualified name) of the module.
    - ``call_function``: calls the function ``target`` with ``args``/``kwargs``.
    - ``call_method``: calls the method named ``target`` of ``args[0]``.
    - ``call_module``: calls the submodule named ``target``.
    - ``output``: returns ``args[0]``.

    Example::

        >>> gm = torchish.fx.symbolic_trace(torchish.nn.ReLU())
        >>> [(n.op, n.name) for n in gm.graph.nodes]
        [('placeholder', 'input_1'), ('call_function', 'relu'), ('output', 'output')]
    """

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict, return_type=None):
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # -- the graph's order ---------------------------------------------------------------------------------
    @property
    def next(self) -> "Node":
        return self._next

    @property
    def prev(self) -> "Node":
        return self._prev

    def prepend(self, x: "Node") -> None:
        """Put ``x`` just before this node (taking it out of where it was)."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: "Node") -> None:
        """Put ``x`` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # -- arguments and uses --------------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """The nodes this node reads, in the order its arguments name them, each once."""
        return list(self._input_nodes)

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    def update_arg(self, idx: int, arg) -> None:
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg) -> None:
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_arg(tuple(new_args), self._collect)
        self._kwargs = map_arg(dict(new_kwargs), self._collect)
        for node in self._input_nodes:
            node.users.setdefault(self)

    def _collect(self, n: "Node") -> "Node":
        self._input_nodes.setdefault(n)
        return n

    def replace_all_uses_with(self, replace_with: "Node", delete_user_cb=lambda user: True, *,
                              propagate_meta: bool = False) -> list:
        """Make every user of this node (those ``delete_user_cb`` accepts) read ``replace_with`` instead.
        Returns the users changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), but "
                                     "replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: "Node", new_input: "Node") -> None:
        """Read ``new_input`` wherever this node's arguments read ``old_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead-code elimination must keep this node even with no users."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return id(self.target) in _SIDE_EFFECTFUL or _is_random(self.target)
        if self.op == "call_module":
            owner = self.graph.owning_module
            if owner is None:
                return False
            return bool(getattr(owner.get_submodule(self.target), "_is_impure", False))
        return False

    # -- printing ------------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return self.name

    def format_node(self, placeholder_names=None, maybe_return_typename=None) -> str | None:
        """The line ``str(graph)`` shows for this node."""
        if self.op == "placeholder":
            arg_str = self.target
            if placeholder_names:  # (PyTorch tests the list, which starts empty: placeholders get their own line)
                placeholder_names.append(arg_str)
                return None
            typename = f"{type_repr(self.type)} " if self.type else ""
            default = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}[target={self.target}]{default}"
        typename = f"{type_repr(self.type)} " if self.type is not None else ""
        if self.op == "get_attr":
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}[target={self.target}]"
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}"
                f"[target={pretty_target(self.target)}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")


_RANDOM = ("bernoulli", "multinomial", "normal", "poisson", "rand", "rand_like", "randint", "randint_like", "randn",
           "randn_like", "randperm")


def _is_random(fn) -> bool:
    """PyTorch's random functions (calls that move the generator are kept, as PyTorch keeps them)."""
    import torchish
    name = getattr(fn, "__name__", None)
    return name in _RANDOM and getattr(torchish, name, None) is fn


def _default_side_effects() -> None:
    """What PyTorch's DCE always keeps: operator.setitem, torch._assert and the like."""
    import torchish
    for fn in (operator.setitem, torchish._assert, getattr(torchish, "_assert_async", None),
               getattr(torchish, "_set_grad_enabled", None)):
        if fn is not None:
            has_side_effect(fn)
