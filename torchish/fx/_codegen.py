"""The Python source of a graph's ``forward``, written as ``torch.fx`` writes it (``GraphModule.code``): one line
per node, operators as operators (``add = x + y``), PyTorch's functions by their public names (``torch.relu(x)``),
and each value set to None after its last use (``;  x = None``)."""
from __future__ import annotations

import dataclasses
import math
import re
import sys

from ._names import MAGIC, Namespace, format_target, is_torch_name, qualified_name, type_repr
from .node import Node


@dataclasses.dataclass
class PythonCode:
    """``src``: the source of ``forward``; ``globals``: the names it reads."""
    src: str
    globals: dict


class _TorchNames:
    """The ``torch`` that generated code reads: the names it writes (``torch._C._nn.linear``) resolved to torchish's
    objects, and torchish itself for the rest."""

    def __init__(self, fallback):
        self._fallback = fallback

    def _add(self, parts, obj) -> None:
        # (set as instance attributes, so that the generated code's lookups are plain attribute reads)
        if len(parts) == 1:
            self.__dict__[parts[0]] = obj
            return
        child = self.__dict__.get(parts[0])
        if not isinstance(child, _TorchNames):
            child = self.__dict__[parts[0]] = _TorchNames(getattr(self._fallback, parts[0], None))
        child._add(parts[1:], obj)

    def __getattr__(self, name):
        return getattr(self.__dict__["_fallback"], name)


def _color(code: str):
    return lambda s: f"{code}{s}\033[0m"


_COLORS = {"red": _color("\033[31m"), "blue": _color("\033[34m"), "dim": _color("\033[2m"),
           "dim_blue": _color("\033[2m\033[34m"), "dim_green": _color("\033[2m\033[32m")}
_PLAIN = {k: (lambda s: s) for k in _COLORS}


def torch_namespace():
    """A ``torch`` for code written out by ``GraphModule.to_folder``: every PyTorch name generated code may use
    (``torch._C._nn.linear``, ``torch.relu``) resolved to torchish's function, the rest read from torchish."""
    from ._names import _PUBLIC_NAMES, public_name
    public_name(None)  # (builds the table)
    names = _TorchNames(sys.modules["torchish"])
    for fn, qualified in _PUBLIC_NAMES.values():
        names._add(qualified.split(".")[1:], fn)
    return names


def _repr_arg(arg, add_global, blue=_PLAIN["blue"]) -> str:
    if isinstance(arg, Node):
        return repr(arg)
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        return f"{add_global(qualified_name(type(arg)), type(arg))}{repr(tuple(arg))}"
    if isinstance(arg, tuple):
        if len(arg) == 1:
            return f"({_repr_arg(arg[0], add_global, blue)},)"
        return "(" + ", ".join(_repr_arg(a, add_global, blue) for a in arg) + ")"
    if isinstance(arg, list):
        return "[" + ", ".join(_repr_arg(a, add_global, blue) for a in arg) + "]"
    if isinstance(arg, slice):
        return f"slice({_repr_arg(arg.start, add_global, blue)}, {_repr_arg(arg.stop, add_global, blue)}, " \
               f"{_repr_arg(arg.step, add_global, blue)})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_repr_arg(v, add_global, blue)}" for k, v in arg.items()) + "}"
    from .._dtype import dtype as _dtype_cls
    if isinstance(arg, _dtype_cls):
        return blue(f"torch.{str(arg).split('.')[-1]}")
    from .._tensor import Tensor
    if isinstance(arg, Tensor):
        return f"torch.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
    return blue(repr(arg))  # (``inf`` and ``nan`` are globals of the code)


def _annotation(node, include_stride: bool, include_device: bool, colors) -> str | None:
    """The verbose annotation of ``node`` (``"f32[4, 3]"``) from its ``meta['val']`` (a tensor: with its stride
    and device when asked) or ``meta['tensor_meta']`` (ShapeProp's: dtype and shape only), as torch.fx writes it;
    ``meta['symbolic_shape']`` (torchish.export's) names the dynamic sizes."""
    from .._tensor import Tensor
    from .passes.shape_prop import TensorMetadata
    val = node.meta.get("val", node.meta.get("tensor_meta", node.meta.get("example_value")))
    shape = node.meta.get("symbolic_shape")
    if isinstance(val, Tensor):
        core = colors["red"](val.dtype.abbr) + colors["blue"](_shape_str(shape or val.shape))
        core += colors["dim_blue"](_shape_str(val.stride())) if include_stride else ""
        core += colors["dim_green"](str(val.device)) if include_device else ""
        return f': "{core}"'
    if isinstance(val, TensorMetadata):
        return f': "{val.dtype.abbr}{_shape_str(shape or val.shape)}"'
    if "sym" in node.meta:
        return f': "Sym({node.meta["sym"]})"'
    return None


def _shape_str(shape) -> str:
    return f"[{', '.join(str(x) for x in shape)}]"


def python_code(graph, root_module: str = "self", verbose: bool = False, include_stride: bool = False,
                include_device: bool = False, colored: bool = False) -> PythonCode:
    """The source and globals of ``forward`` for ``graph`` (``Graph.python_code``); ``verbose`` writes each
    node's shape annotation (with ``include_stride``/``include_device``) and ``colored`` ANSI colours, as
    torch.fx's ``print_readable``."""
    colors = _COLORS if colored else _PLAIN
    nodes = list(graph.nodes)
    namespace = Namespace()
    torch_names = _TorchNames(sys.modules["torchish"])
    globals_: dict = {"torch": torch_names, "inf": math.inf, "nan": math.nan, "NoneType": type(None),
                      "device": sys.modules["torchish"].device}
    for name, obj in globals_.items():
        namespace.create_name(name, obj)
    for node in nodes:
        namespace.create_name(node.name, node)

    def add_global(hint, obj):
        if isinstance(hint, str) and is_torch_name(hint):
            torch_names._add(hint.split(".")[1:], obj)
            return hint
        name = namespace.create_name(hint, obj)
        globals_[name] = obj
        return name

    def fmt(args, kwargs):
        out = [_repr_arg(a, add_global, colors["blue"]) for a in args]
        out += [f"{k} = {_repr_arg(v, add_global, colors['blue'])}" for k, v in kwargs.items()]
        return ", ".join(out)

    # the node after which each value is last used (walking backwards, the first user met)
    last_use: dict = {}
    deletes: dict = {}
    for node in reversed(nodes):
        for inp in node._input_nodes:
            if inp not in last_use:
                last_use[inp] = node
                deletes.setdefault(node, []).append(inp)

    free_vars, body = [], []
    return_annotation = [""]
    last_summary = None
    for node in nodes:
        if verbose and node.op not in ("placeholder", "output"):
            summary = f"\n{colors['dim']('# ' + _stack_summary(node.stack_trace))}\n"
            if summary != last_summary:
                body.append(summary)
                last_summary = summary
        annotation = _annotation(node, include_stride, include_device, colors) if verbose else None
        line = _emit(node, root_module, free_vars, fmt, add_global, return_annotation, annotation, colors["blue"])
        if line is None:
            continue
        body.append(line)
        if node.op == "placeholder":
            body.append("\n")
            continue
        if node.op == "output":
            body.append("\n")
            continue
        dead = list(deletes.get(node, []))
        if not node.users:
            dead.append(node)
        body.append(f";  {colors['dim'](' = '.join([repr(n) for n in dead] + ['None']))}\n" if dead else "\n")
    if not body:
        body.append("pass\n")
    wrapped = [add_global(qualified_name(n.target), n.target) for n in nodes
               if n.op == "call_function" and n.meta.get("is_wrapped")]
    wrap_stmts = "\n".join(f'{add_global("torch.fx._symbolic_trace.wrap", _wrap())}("{name}")'
                            for name in dict.fromkeys(wrapped))
    info = getattr(graph, "_pytree_info", None)
    bindings = ""
    if info is not None:
        bindings = _pytree_bindings(info, free_vars, add_global)
        free_vars = list(info.orig_args)
    if not free_vars or free_vars[0] != "self":
        free_vars.insert(0, "self")
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    src = f"\n{wrap_stmts}\n\ndef forward({', '.join(free_vars)}){return_annotation[0]}:{bindings}\n{code}"
    return PythonCode(src, globals_)


_FRAME = re.compile(r"^File \"(.+)\", line (\d+), in (.+)$")


def _stack_summary(stack_trace) -> str:
    """``File: path:line in fn, code: ...`` of the innermost frame of a node's ``meta['stack_trace']`` (the
    comment torch.fx's verbose code writes above the nodes of each source line)."""
    lines = (stack_trace or "").strip().split("\n")
    for i in range(len(lines) - 2, -1, -1):
        found = _FRAME.match(lines[i].strip())
        if found:
            return f"File: {found.group(1)}:{found.group(2)} in {found.group(3)}, code: {lines[i + 1].strip()}"
    return "No stacktrace found for following nodes"


def _pytree_bindings(info, free_vars: list, add_global) -> str:
    """The line that takes a structured call apart (``x_1, x_2, y, = fx_pytree.tree_flatten_spec([x, y],
    self._in_spec)``), for a graph traced with ``PH`` in ``concrete_args``: torch.fx's ``_PyTreeCodeGen``."""
    from . import _pytree as fx_pytree
    from ..utils import _pytree as pytree
    add_global("fx_pytree", fx_pytree)
    add_global("pytree", pytree)
    names = list(free_vars)
    if info.orig_args and info.orig_args[0] == "self":
        names.insert(0, "self")
    if not names:
        return ""
    names = [n.split(":")[0].split("=")[0].strip() for n in names]
    return f"\n    {', '.join(names)}, = fx_pytree.tree_flatten_spec([{', '.join(info.orig_args)}], self._in_spec)"


def _wrap():
    from ._symbolic_trace import wrap
    return wrap


def _emit(node, root_module, free_vars, fmt, add_global, return_annotation, verbose_annotation=None,
          blue=_PLAIN["blue"]):
    """The line for ``node`` (without its deletions), or None for a placeholder."""
    annotation = ""
    if node.type is not None:
        annotation = f" : {add_global(type_repr(node.type), node.type)}"
    if verbose_annotation is not None:
        annotation = verbose_annotation
    if node.op == "placeholder":
        default = "" if not node.args else f" = {_repr_arg(node.args[0], add_global)}"
        free_vars.append(f"{node.target}{annotation}{default}")
        raw = node.target.replace("*", "")
        return f"{node.name} = {raw}" if raw != node.name else None
    if node.op == "call_method":
        return f"{node.name}{annotation} = {format_target(_repr_arg(node.args[0], add_global), node.target)}" \
               f"({fmt(node.args[1:], node.kwargs)})"
    if node.op == "call_function":
        target = node.target
        if getattr(target, "__module__", "") == "_operator" and target.__name__ in MAGIC:
            return f"{node.name}{annotation} = " + MAGIC[target.__name__].format(*(_repr_arg(a, add_global, blue)
                                                                                     for a in node.args))
        name = add_global(qualified_name(target), target)
        if (name == "getattr" and len(node.args) == 2 and isinstance(node.args[1], str)
                and node.args[1].isidentifier()):
            return f"{node.name}{annotation} = {format_target(_repr_arg(node.args[0], add_global), node.args[1])}"
        return f"{node.name}{annotation} = {name}({fmt(node.args, node.kwargs)})"
    if node.op == "call_module":
        return f"{node.name}{annotation} = {format_target(root_module, node.target)}({fmt(node.args, node.kwargs)})"
    if node.op == "get_attr":
        return f"{node.name}{annotation} = {format_target(root_module, node.target)}"
    if node.op == "output":
        if node.type is not None:
            return_annotation[0] = f" -> {add_global(type_repr(node.type), node.type)}"
        info = getattr(node.graph, "_pytree_info", None)
        if info is not None and info.out_spec is not None:
            return f"return pytree.tree_unflatten({_repr_arg(node.args[0], add_global)}, self._out_spec)"
        return f"return {_repr_arg(node.args[0], add_global)}"
    raise NotImplementedError(f"node: {node.op} {node.target}")
