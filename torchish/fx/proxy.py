"""``torch.fx.Proxy``: the stand-in value a traced function computes with. Each operation on a Proxy records a
node instead of computing: Python operators (``x + 1``: ``operator.add``), attribute reads (``x.shape``:
``getattr``), method calls (``x.view(2, -1)``: ``call_method``) and, through ``__torch_function__``, torchish's
functions (``torch.relu(x)``, ``F.linear(x, w)``). Using a Proxy's value in Python control flow (``if x.sum() > 0``)
cannot be recorded and raises :class:`TraceError`."""
from __future__ import annotations

import dis
import inspect
import operator

from .. import _subclass
from ._names import MAGIC, REFLECTABLE_MAGIC, target_to_str
from .graph import Graph
from .node import Node, map_aggregate


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy needs of its tracer: creating nodes and proxies and turning arguments into graph values."""
    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    module_stack: dict  # (set per tracer: PyTorch's attributes, unused here)
    node_name_to_scope: dict

    def create_node(self, kind: str, target, args, kwargs, name=None, type_expr=None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> "Proxy":
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """A node for the call (its arguments made graph values by :meth:`create_arg`) and its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """``a`` as it goes into a node's arguments: Proxies become their nodes; containers are walked."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple):
            mapped = tuple(self.create_arg(elem) for elem in a)
            return mapped if not hasattr(a, "_fields") else type(a)(*mapped)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: "
                                       f"{k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if a is None or a is ... or isinstance(a, (Node, str, int, float, bool, complex)) or _is_base_type(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: "Proxy") -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: "Proxy"):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the "
                         "Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: "Proxy"):
        return Attribute(obj, "keys")()


def _is_base_type(a) -> bool:
    from .._device import device
    from .._dtype import dtype
    from .._tensor import Tensor
    return isinstance(a, (dtype, device, Tensor))


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (for Proxies built around a graph's nodes by hand)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """A traced value: the :class:`Node` that computes it and the tracer recording operations on it.

    Example::

        >>> def f(x):
        ...     return torchish.relu(x) + 1
        >>> torchish.fx.symbolic_trace(f).code  # doctest: +SKIP
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        _subclass.activate()  # (a Proxy takes part in __torch_function__, which is off until a participant exists)
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> "Attribute":
        if k.startswith("__") and k.endswith("__"):  # (copy, pickle and numpy probe these)
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        raise RuntimeError("Proxy objects cannot be deep-copied while tracing")

    def __call__(self, *args, **kwargs) -> "Proxy":
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        inst = next((i for i in dis.get_instructions(frame.f_code) if i.offset >= frame.f_lasti), None)
        if inst is not None and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        return self.tracer.keys(self)

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while trying to trace operations "
                               f"{orig_method}")
        tracer = next(iter(tracers))
        if _is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs, name=target_to_str(orig_method))


def _is_tensor_method_or_property(func) -> bool:
    from .._tensor import Tensor
    name = getattr(func, "__name__", None)
    return name == "__get__" or (name is not None and getattr(Tensor, name, None) is func)


class Attribute(Proxy):
    """``proxy.attr``: a ``getattr`` node, made only when the value is used; calling it records a method call."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _define_magic(name: str) -> None:
    target = getattr(operator, name)

    def impl(*args):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", target, args, {})
    impl.__name__ = impl.__qualname__ = f"__{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


def _define_reflected(name: str) -> None:
    target = getattr(operator, name)
    dunder = f"__r{name.strip('_')}__"

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    impl.__name__ = impl.__qualname__ = dunder
    setattr(Proxy, dunder, impl)


for _name in MAGIC:
    if hasattr(operator, _name):
        _define_magic(_name)
for _name in REFLECTABLE_MAGIC:
    if _name != "getitem" and hasattr(operator, _name):
        _define_reflected(_name)
