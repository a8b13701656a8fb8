"""``torch.fx.Interpreter`` and ``Transformer``: run a GraphModule's graph node by node, one overridable method
per kind of node (``placeholder``, ``get_attr``, ``call_function``, ``call_method``, ``call_module``, ``output``),
for passes that look at each value (profiling, shape propagation); a Transformer runs the same methods on Proxies
and so writes a new graph (``transform()`` returns it as a GraphModule)."""
from __future__ import annotations

import copy
import inspect

from .. import _subclass
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer


class Interpreter:
    """Runs ``module.graph`` (or ``graph``) on concrete values.

    Example::

        >>> class CountCalls(torchish.fx.Interpreter):
        ...     def call_function(self, target, args, kwargs):
        ...         self.calls = getattr(self, "calls", 0) + 1
        ...         return super().call_function(target, args, kwargs)
        >>> CountCalls(gm).run(x)  # doctest: +SKIP
    """

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            seen: dict = {}
            self.user_to_last_uses: dict = {}
            for node in reversed(self.graph.nodes):
                for inp in node._input_nodes:
                    if inp not in seen:
                        seen[inp] = node
                        self.user_to_last_uses.setdefault(node, []).append(inp)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        """Run the graph on ``args``; returns what its output node returns."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:  # (PyTorch's note of the node; its tlparse hint has no use here)
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else msg
                    msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n):
        """Run one node: fetch its argument values and call the method named by its ``op``."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per kind of node ------------------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               f"in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # -- helpers ----------------------------------------------------------------------------------------------
    def fetch_attr(self, target: str):
        atoms = target.split(".")
        attr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            attr = getattr(attr, atom)
        return attr

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to diagnose "
                                   f"such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph, root):
        super().__init__()
        self.graph = graph
        self.root = root
        self.tensor_attrs = {}
        self.submodule_paths = {id(m): name for name, m in root.named_modules()}

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Writes a new graph by running the old one on Proxies; override the per-node methods to change what each
    node becomes.

    Example::

        >>> class AddToMul(torchish.fx.Transformer):
        ...     def call_function(self, target, args, kwargs):
        ...         target = operator.mul if target is operator.add else target
        ...         return super().call_function(target, args, kwargs)
        >>> new_gm = AddToMul(gm).transform()  # doctest: +SKIP
    """

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """The new graph as a GraphModule over the same module."""
        _subclass.activate()  # (Proxies take part in __torch_function__)
        result = super().run(enable_io_processing=False)
        if result is not None:
            out = self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
            old_output = next(iter(reversed(self.graph.nodes)))
            out.meta = copy.copy(old_output.meta)
        return GraphModule(self.module, self.new_graph, type(self.module).__name__)
