"""Recording a module's ``forward`` for :func:`torchish.export.export`.

The forward runs once on the example inputs inside a :class:`TorchFunctionMode` that sees every call PyTorch
dispatches (functions, Tensor methods, operators, factories) and writes each call that makes or changes a tensor
as one node of an fx :class:`Graph`, its tensor arguments replaced by the nodes that made them. Parameters,
buffers and other tensor attributes become placeholders (``p_fc_weight``, ``b_bn_running_mean``, ``c_...``), the
flattened user inputs the placeholders after them. Because the values are concrete, Python control flow on shapes
takes the branch the example takes (export specialises it, as PyTorch's does); a branch on a tensor's *value*
(``if x.sum() > 0``, ``.item()``) raises, since the graph could not follow another input.

A dimension marked dynamic is handed to ``forward`` as a :class:`SymInt` (an ``int`` that remembers the node
reading it, ``sym_size_int``), so ``x.view(x.shape[0], -1)`` records the size, not the example's number. An
output dimension is taken to be the same symbol when its size equals the symbol's example size (export's
examples should therefore give distinct sizes to distinct dynamic dimensions).
"""
from __future__ import annotations

import inspect
import linecache
import operator
import os
import sys

from .. import overrides
from ..autograd import grad_mode
from .._tensor import Tensor
from ..fx.graph import Graph
from ..fx.node import Node, has_side_effect
from ..utils import _pytree as pytree
from ._symbolic import SymFloat, SymInt, _Sym, data_dependent_error


class ConstraintViolationError(RuntimeError):
    """``torch.fx.experimental.symbolic_shapes.ConstraintViolationError``: an example input outside the range
    its ``Dim`` allows."""


class UserError(RuntimeError):
    """``torch._dynamo.exc.UserError``: a ``dynamic_shapes`` spec that does not fit the inputs."""


def sym_size_int(x, dim: int) -> int:
    """``torch.ops.aten.sym_size.int``: the size of ``x`` along ``dim``, read when the graph runs."""
    return x.size(dim)


def _set_grad_enabled(mode: bool) -> None:
    """``torch._C._set_grad_enabled``: where the exported forward entered or left a ``no_grad`` block, the graph
    sets the grad mode the recorded calls ran in."""
    grad_mode.set_grad_enabled(mode)


has_side_effect(_set_grad_enabled)  # (dead-code elimination keeps it)


_DATA_DEPENDENT = frozenset({"__bool__", "item", "tolist", "__int__", "__float__", "__index__", "__complex__"})
_READ_AS_NUMBER = frozenset({"item"})  # (int(x)/float(x) cannot hand back a symbolic number: they raise)
_SIZE_QUERIES = frozenset({"size", "shape"})
_PROPERTY_NAMES: dict = {}  # id(property) -> its name on Tensor


def _property_name(func):
    prop = getattr(func, "__self__", None)
    if not isinstance(prop, property):
        return None
    if not _PROPERTY_NAMES:
        for klass in reversed(Tensor.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, property):
                    _PROPERTY_NAMES[id(value)] = name
    return _PROPERTY_NAMES.get(id(prop))


def _has_tensor(tree) -> bool:
    return any(isinstance(leaf, Tensor) for leaf in pytree.tree_leaves(tree))


class Recorder(overrides.TorchFunctionMode):
    """Writes the calls made inside it into ``graph``; ``nodes`` maps id(tensor) -> the node holding it."""

    def __init__(self, graph: Graph, constant_names):
        super().__init__()
        self.graph = graph
        self.nodes: dict = {}
        self.dynamic: dict = {}  # id(tensor) -> {dim: (SymInt of the placeholder's size)}
        self.keep: list = []  # (every tensor seen stays alive, so that no id is reused while recording)
        self.constants: dict = {}  # placeholder name -> (target, tensor) for tensors met that nothing made
        self._constant_names = constant_names
        self._sizes: dict = {}  # (node, dim) -> SymInt
        self.grad_enabled = grad_mode.is_grad_enabled()  # (the grad mode the graph's calls run in so far)
        # tensors made during the capture by code that dispatches nothing (no node made them): the innermost
        # submodule call that made one is recorded as one call_module node instead (see module_call)
        self.start_serial = _tensor_serial()
        self.orphans: list = []
        self.module_paths: dict = {}  # id(submodule) -> its path in the exported module
        self.called_modules: dict = {}  # path -> submodule, for the call_module nodes

    def sync_grad_mode(self, mode: bool) -> None:
        """Record a switch of the grad mode before the next call, when the forward changed it."""
        if mode != self.grad_enabled:
            node = self.graph.call_function(_set_grad_enabled, (mode,))
            node.meta["stack_trace"] = _user_stack()
            self.grad_enabled = mode

    # -- values -----------------------------------------------------------------------------------------------
    def bind(self, tensor: Tensor, node: Node) -> None:
        self.keep.append(tensor)
        self.nodes[id(tensor)] = node

    def node_of(self, t: Tensor) -> Node:
        node = self.nodes.get(id(t))
        if node is None:
            if t._sn > self.start_serial:
                self.orphans.append(t)
            target = self._constant_names(t, len(self.constants))
            name = "c_" + target.replace(".", "_")
            with self.graph.inserting_before(self._first_user_placeholder()):
                node = self.graph.placeholder(name)
            self.constants[node.name] = (target, t)
            self.bind(t, node)
        return node

    def _first_user_placeholder(self):
        for node in self.graph.nodes:
            if node.op == "placeholder" and node.meta.get("kind") == "user_input":
                return node
        return None

    def to_arg(self, a):
        def one(v):
            if isinstance(v, Tensor):
                return self.node_of(v)
            if isinstance(v, _Sym):
                return v.node
            return v
        return pytree.tree_map(one, a, is_leaf=lambda v: isinstance(v, (Tensor, _Sym)))

    def size_of(self, t: Tensor, dim: int):
        syms = self.dynamic.get(id(t), {})
        n = t.dim()
        dim = dim + n if dim < 0 else dim
        if dim not in syms:
            return int(t.shape[dim])
        node = self.node_of(t)
        key = (node, dim)
        if key not in self._sizes:
            self._sizes[key] = SymInt(int(t.shape[dim]), self.graph.call_function(sym_size_int, (node, dim)))
        return self._sizes[key]

    def _tag(self, out, args) -> None:
        """Mark the output dims whose size is a dynamic input's size as that same symbol."""
        symbols = {}
        for leaf in pytree.tree_leaves(args):
            if isinstance(leaf, Tensor):
                for d, sym in self.dynamic.get(id(leaf), {}).items():
                    symbols.setdefault(int(leaf.shape[d]), sym)
        if not symbols:
            return
        for leaf in pytree.tree_leaves(out):
            if isinstance(leaf, Tensor) and id(leaf) not in self.dynamic:
                dims = {d: symbols[s] for d, s in enumerate(leaf.shape) if s in symbols}
                if dims:
                    self.dynamic[id(leaf)] = dims

    # -- submodule calls -------------------------------------------------------------------------------------
    def module_call(self, call, module, args, kwargs):
        """Run ``call(module, *args, **kwargs)``; when the calls inside made a tensor no recorded call made (code
        that dispatches nothing, such as the fused RNN layers), replace what was recorded inside by one
        ``call_module`` node of this submodule."""
        path = self.module_paths.get(id(module))
        if path is None:
            return call(module, *args, **kwargs)
        mark, orphans, consts = self.graph._root.prev, len(self.orphans), dict(self.constants)
        out = call(module, *args, **kwargs)
        leaves = pytree.tree_leaves(out)
        made_outside = any(isinstance(t, Tensor) and id(t) not in self.nodes and t._sn > self.start_serial
                           for t in leaves)
        if len(self.orphans) == orphans and not made_outside:
            return out
        del self.orphans[orphans:]
        self._roll_back(mark, consts)
        node_args, node_kwargs = self.to_arg((tuple(args), dict(kwargs)))
        self.sync_grad_mode(grad_mode.is_grad_enabled())
        node = self.graph.call_module(path, node_args, node_kwargs)
        self.called_modules[path] = module
        self._bind_structure(out, node)
        return out

    def _roll_back(self, mark: Node, constants: dict) -> None:
        """Erase the nodes recorded after ``mark`` and the constants lifted since (``constants``: those before)."""
        erased = set()
        while self.graph._root.prev is not mark:
            node = self.graph._root.prev
            for user in list(node.users):
                user._update_args_kwargs((), {})
            self.graph.erase_node(node)
            erased.add(node)
        for name in [n for n in self.constants if n not in constants]:
            del self.constants[name]
            for node in self.graph.nodes:
                if node.op == "placeholder" and node.name == name:
                    self.graph.erase_node(node)
                    erased.add(node)
                    break
        self.nodes = {k: v for k, v in self.nodes.items() if v not in erased}
        self._sizes = {k: v for k, v in self._sizes.items() if k[0] not in erased and v.node not in erased}

    def _bind_structure(self, out, node: Node) -> None:
        """Bind the tensors of a (nested tuple/list) call result to ``getitem`` nodes of ``node``."""
        if isinstance(out, Tensor):
            if id(out) not in self.nodes:
                self.bind(out, node)  # (its meta['val'] is set after the capture: detach() here would record)
        elif isinstance(out, (tuple, list)):
            for i, leaf in enumerate(out):
                if isinstance(leaf, (Tensor, tuple, list)):
                    self._bind_structure(leaf, self.graph.call_function(operator.getitem, (node, i)))

    def _read_number(self, func, name: str, t: Tensor):
        """``x.item()``: the number as a data-dependent SymInt/SymFloat whose node reads it
        when the graph runs (arithmetic with it is recorded; control flow on it raises)."""
        value = func(t)
        self.sync_grad_mode(grad_mode.is_grad_enabled())
        node = self.graph.call_method(name, (self.node_of(t),))
        node.meta["stack_trace"] = _user_stack()
        return (SymInt if isinstance(value, int) else SymFloat)(value, node, True)

    # -- calls ------------------------------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        prop = _property_name(func)
        name = prop or getattr(func, "__name__", "")
        if name in _DATA_DEPENDENT and args and isinstance(args[0], Tensor):
            dtype = args[0].dtype
            if name in _READ_AS_NUMBER and not dtype.is_complex and str(dtype) != "torch.bool":
                return self._read_number(func, name, args[0])
            raise data_dependent_error(f"Tensor.{name} of a traced tensor")
        if name in _SIZE_QUERIES and args and isinstance(args[0], Tensor) and id(args[0]) in self.dynamic:
            t = args[0]
            if name == "size" and (len(args) > 1 or "dim" in kwargs):
                return self.size_of(t, args[1] if len(args) > 1 else kwargs["dim"])
            return tuple.__new__(type(t.shape), [self.size_of(t, d) for d in range(t.dim())])
        plain_args = pytree.tree_map(lambda v: v.plain() if isinstance(v, _Sym) else v, (args, kwargs),
                                     is_leaf=lambda v: isinstance(v, _Sym))
        out = func(*plain_args[0], **plain_args[1])
        if not _has_tensor(out) and not (out is None and _has_tensor((args, kwargs))):
            return out
        node_args, node_kwargs = self.to_arg((tuple(args), dict(kwargs)))
        self.sync_grad_mode(grad_mode.is_grad_enabled())
        if prop is not None:
            node = self.graph.call_function(getattr, (node_args[0], prop))
        elif args and isinstance(args[0], Tensor) and getattr(Tensor, name, None) is func:
            node = self.graph.call_method(name, node_args, node_kwargs)
        else:
            node = self.graph.call_function(func, node_args, node_kwargs)
        self._tag(out, (args, kwargs))
        node.meta["stack_trace"] = _user_stack()
        if isinstance(out, Tensor):
            node.meta["val"] = out.detach()
            if id(out) not in self.nodes:
                self.bind(out, node)
        elif isinstance(out, (tuple, list)):
            for i, leaf in enumerate(out):
                if isinstance(leaf, Tensor) and id(leaf) not in self.nodes:
                    self.bind(leaf, self.graph.call_function(operator.getitem, (node, i)))
        return out


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MODULES_DIR = os.path.join(_PACKAGE, "nn", "modules")


def _user_stack() -> str:
    """The frames of the code being exported (the user's, and torchish's nn module ``forward``s, as PyTorch's
    shows its own), outermost first, formatted as a traceback: a node's ``meta['stack_trace']``."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith("<") and (not path.startswith(_PACKAGE) or path.startswith(_MODULES_DIR)):
            code = linecache.getline(path, frame.f_lineno).strip()
            frames.append(f'  File "{path}", line {frame.f_lineno}, in {frame.f_code.co_name}\n    {code}\n')
        frame = frame.f_back
    return "".join(reversed(frames))


def _tensor_serial() -> int:
    """The creation number the next Tensor gets (``Tensor._sn``)."""
    from .. import _tensor_views
    return next(_tensor_views._SERIAL)


def user_input_names(forward, args: tuple, kwargs: dict) -> list:
    """The names of ``forward``'s arguments as bound to ``args``/``kwargs``, in call order."""
    try:
        sig = inspect.signature(forward)
    except (TypeError, ValueError):
        return [f"args_{i}" for i in range(len(args))] + list(kwargs)
    bound = sig.bind(*args, **kwargs)
    names = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            names.extend(f"{name}_{i}" for i in range(len(value)))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            names.extend(value)
        else:
            names.append(name)
    return names


def leaf_paths(name: str, tree) -> list:
    """``(placeholder name, guard path)`` for each leaf of one argument: ``ys_0`` / ``ys[0]``."""
    out = []
    for path, _ in pytree.tree_flatten_with_path(tree)[0]:
        pname, gpath = name, name
        for key in path:
            k = getattr(key, "idx", getattr(key, "key", getattr(key, "name", key)))
            pname += f"_{k}"
            gpath += f"[{k!r}]"
        out.append((pname, gpath))
    return out
