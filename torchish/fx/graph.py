"""``torch.fx.Graph``: the nodes of a traced function in order (a doubly linked list around a sentinel), the
methods that create, move and erase them, and the views of the whole: ``str(graph)``, ``print_tabular()``,
``python_code()``, ``lint()``, ``eliminate_dead_code()``."""
from __future__ import annotations

import copy
import inspect
import warnings

from ._codegen import python_code as _python_code
from ._names import Namespace, target_to_str
from .node import Node, map_arg


class _NodeList:
    """``graph.nodes``: iterates the live nodes in order; erasing the node being visited is allowed."""

    def __init__(self, graph, direction: str = "_next"):
        self._graph = graph
        self._direction = direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self._direction)

    def __reversed__(self):
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))


class _InsertPoint:
    def __init__(self, graph, insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, insert

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert
        return False


class Graph:
    """The operations of a traced function. Build one by hand or get it from :func:`torchish.fx.symbolic_trace`.

    Example::

        >>> g = torchish.fx.Graph()
        >>> x = g.placeholder("x")
        >>> g.output(g.call_function(torchish.relu, (x,)))
        >>> print(g)  # doctest: +SKIP
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._graph_namespace = Namespace()
        self._len = 0
        self._insert = self._root.prepend
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._pytree_info = None  # (fx._pytree.PyTreeInfo when traced with PH in structured concrete_args)

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target=None) -> list:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- creating nodes ------------------------------------------------------------------------------------
    def create_node(self, op: str, target, args=None, kwargs=None, name=None, type_expr=None) -> Node:
        """A new node, inserted at the current insert point (the end, unless ``inserting_before/after``)."""
        if op not in ("call_function", "call_method", "get_attr", "call_module", "placeholder", "output"):
            raise ValueError(f"Unsupported node type {op}")
        candidate = name if name is not None else target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        node = Node(self, name, op, target, () if args is None else args, {} if kwargs is None else kwargs,
                    type_expr)
        self._graph_namespace.associate_name_with_obj(name, node)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name: str, type_expr=None, default_value=inspect.Signature.empty) -> Node:
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        owner = self._owning_module
        if owner is not None and _find_attr(owner, module_name) is None:
            warnings.warn("Attempted to insert a call_module Node with no underlying reference in the owning "
                          "GraphModule! Call GraphModule.add_submodule to add the necessary submodule")
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, name=name, type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform=lambda x: x) -> Node:
        """A copy of ``node`` (from any graph) in this one, its argument nodes mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: "Graph", val_map: dict, return_output_node: bool = False):
        """Copy the nodes of ``g`` but its output into this graph, recording old -> new in ``val_map``; returns
        the value ``g`` outputs, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                out = map_arg(node.args[0], lambda n: val_map[n])
                return (out, node) if return_output_node else out
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> "Graph":
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        g._pytree_info = self._pytree_info
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        if out is not None:
            value, old_output = out
            g.output(value, type_expr=old_output.type)
        return g

    def __reduce__(self):
        """Pickles as a flat list of node specs (a linked list would recurse once per node)."""
        spec = []
        for node in self.nodes:
            to_ref = lambda n: _NodeRef(n.name)  # noqa: E731
            spec.append((node.name, node.op, node.target, map_arg(node.args, to_ref), map_arg(node.kwargs, to_ref),
                         node.type, node.meta))
        return _graph_from_spec, (spec, self._pytree_info)

    # -- where new nodes go --------------------------------------------------------------------------------
    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """``with graph.inserting_before(n):`` new nodes go just before ``n`` (None: at the start)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """``with graph.inserting_after(n):`` new nodes go just after ``n`` (None: at the end)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # -- removing nodes ------------------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nothing uses (RuntimeError otherwise, as PyTorch)."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in "
                               f"the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node=None) -> bool:
        """Erase the nodes whose results nothing uses (keeping impure ones); returns whether any went."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # -- checking and showing ------------------------------------------------------------------------------
    def lint(self) -> None:
        """Check that each node belongs to this graph, comes after the nodes it reads, has a unique name, and
        that ``get_attr``/``call_module`` targets exist in the owning module."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in ("call_function", "call_method", "get_attr", "call_module", "placeholder",
                               "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was "
                                       f"used as an argument! If you are copying nodes from another graph, make "
                                       f"sure to use ``arg_transform`` on node_copy() to remap values\n{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       f"Please check that Nodes in the graph are topologically ordered\n{self}")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
        owner = self._owning_module
        if owner is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module") and _find_attr(owner, node.target) is None:
                what = "module" if node.op == "call_module" else "attribute"
                raise RuntimeError(f"Node {node} target {node.target} references nonexistent {what} "
                                   f"{node.target}")

    def __str__(self) -> str:
        placeholder_names: list = []  # (PyTorch hands no return-type list here, and this one stays empty)
        lines = [node.format_node(placeholder_names) for node in self.nodes]
        out = f"graph({', '.join(placeholder_names)}):"
        for line in lines:
            if line:
                out += "\n    " + line
        return out

    def print_tabular(self) -> None:
        """Print the nodes as a table (needs the ``tabulate`` package)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. "
                  "Run `pip install tabulate` to install the library.")
            raise
        specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(specs, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module: str = "self", verbose: bool = False, include_stride: bool = False,
                    include_device: bool = False, colored: bool = False):
        """The source of ``forward`` (``.src``) and the globals it needs (``.globals``)."""
        return _python_code(self, root_module, verbose, include_stride, include_device, colored)


class _NodeRef:
    """A node named in a pickled graph's arguments."""

    def __init__(self, name: str):
        self.name = name


def _graph_from_spec(spec, pytree_info=None) -> Graph:
    from .node import map_aggregate
    g = Graph()
    g._pytree_info = pytree_info
    by_name: dict = {}
    for name, op, target, args, kwargs, type_expr, meta in spec:
        def resolve(a):
            return by_name[a.name] if isinstance(a, _NodeRef) else a
        node = g.create_node(op, target, map_aggregate(args, resolve), map_aggregate(kwargs, resolve), name,
                             type_expr)
        node.meta = meta
        by_name[name] = node
    return g


def _find_attr(root, qualified: str):
    obj = root
    for part in qualified.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
