"""``torch.fx.GraphModule``: a Module whose ``forward`` is generated from a :class:`Graph` (Python source,
``gm.code``, compiled with ``exec``). It holds the submodules, parameters and buffers the graph's ``call_module``
and ``get_attr`` nodes name, copied by reference from the traced root, so ``state_dict`` has the root's keys.
After editing ``gm.graph``, ``gm.recompile()`` regenerates ``forward``."""
from __future__ import annotations

import copy
import itertools
import linecache

from ..nn import Module, Parameter
from .._tensor import Tensor
from .graph import Graph

_SOURCE_IDS = itertools.count()


def _exec_forward(src: str, globals_: dict):
    """Compile ``src`` (registered with linecache so tracebacks show the generated lines) and return ``forward``."""
    key = f"<eval_with_key>.{next(_SOURCE_IDS)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    space = dict(globals_)
    exec(compile(src, key, "exec", dont_inherit=True), space)  # noqa: S102
    return space["forward"]


def _copy_attr(from_module, to_module, target: str) -> None:
    """Install ``from_module``'s attribute at path ``target`` on ``to_module`` (plain Modules for the missing
    parents; a tensor that is not a Parameter becomes a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # (a parent already installed brings its children)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line if line.strip() else "" for line in lines)


class GraphModule(Module):
    """A Module running ``graph``; ``root`` (a Module, or a dict of name -> object) supplies what the graph's
    ``get_attr``/``call_module`` nodes name.

    Example::

        >>> gm = torchish.fx.symbolic_trace(model)  # doctest: +SKIP
        >>> for node in gm.graph.nodes:             # doctest: +SKIP
        ...     if node.target is torchish.relu:
        ...         node.target = torchish.nn.functional.gelu
        >>> gm.recompile()                          # doctest: +SKIP
    """

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so that its generated ``forward`` does not replace another's
        for base in cls.__mro__:
            if base.__qualname__ == "GraphModule.__new__.<locals>.GraphModuleImpl":
                cls = base.__bases__[0]
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           f"provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.graph = graph
        self._tracer_cls = graph._tracer_cls
        self.meta = {}

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def _in_spec(self):
        """The structure of the arguments (a graph traced with ``PH`` in ``concrete_args``)."""
        return self._graph._pytree_info.in_spec

    @property
    def _out_spec(self):
        return self._graph._pytree_info.out_spec

    @property
    def code(self) -> str:
        """The source of the generated ``forward``."""
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerate ``forward`` from ``self.graph`` (after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        type(self).forward = _exec_forward(python_code.src, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False):
        """The generated code as a class statement (with the nested GraphModules'), printed and returned; each
        value annotated with its dtype and shape where the nodes' meta has them (``meta['val']``, or ShapeProp's
        ``meta['tensor_meta']``), with strides and device when asked; ANSI colours when ``colored``."""
        return _print_readable(self, type(self).__name__, print_output, (include_stride, include_device, colored))

    def to_folder(self, folder, module_name: str = "FxModule") -> None:
        """Write this module as a Python package: ``folder/module.py`` (a class ``module_name`` with the generated
        ``forward``), ``folder/__init__.py`` and ``folder/state_dict.pt``, importable with ``from <folder> import
        <module_name>``. Linear/Conv/BatchNorm submodules are written as their constructor calls, others saved to
        ``folder/<name>.pt`` (with a warning), as torch.fx's; the code's ``torch`` is torchish."""
        _to_folder(self, folder, module_name)

    def add_submodule(self, target: str, m: Module) -> bool:
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        *path, field = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, field) or not isinstance(getattr(mod, field), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":
                    used.update(name if not name else f"{node.target}.{name}"
                                for name, _ in self.get_submodule(node.target).named_modules())
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def __deepcopy__(self, memo):
        fake = Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        res = GraphModule(fake, fake.__dict__["_graph"], type(self).__name__)
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph)  # (named GraphModule, as PyTorch's copy)
        res.meta = getattr(self, "meta", {})
        return res

    def __reduce__(self):
        """Pickles as the Module state (submodules, parameters, buffers, other attributes) plus the graph."""
        holder = Module()
        holder.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")})
        return _rebuild, (holder, self._graph, type(self).__name__)

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def _replicate_for_data_parallel(self):
        return copy.copy(self)


def _rebuild(holder, graph: Graph, class_name: str) -> GraphModule:
    gm = GraphModule(holder, graph, class_name)
    for key, value in holder.__dict__.items():
        if key not in gm.__dict__ and key not in ("_parameters", "_buffers", "_modules"):
            gm.__dict__[key] = value
    return gm


def _print_readable(module, module_name: str, print_output: bool, options=(False, False, False)) -> str:
    code = module.graph.python_code("self", True, *options).src.lstrip("\n")
    code = _addindent(f"class {module_name}(torch.nn.Module):\n" + code, 4)
    subs = [""] + [_print_readable(sub, name, False, options) for name, sub in module.named_children()
                   if isinstance(sub, GraphModule)]
    out = code + _addindent("\n".join(subs), 4)
    if print_output:
        print(out)
    return out


_FOLDER_HEADER = """
import torchish
from torchish.fx._codegen import torch_namespace
torch = torch_namespace()  # (PyTorch's names, such as torch._C._nn.linear, resolved to torchish's)
from math import inf
from math import nan
NoneType = type(None)
from torchish import device
import torchish.fx._pytree as fx_pytree
import torchish.utils._pytree as pytree

from torchish.nn import *
"""


def _to_folder(gm: GraphModule, folder, module_name: str) -> None:
    import pathlib
    import warnings
    from .. import nn, serialization
    folder = pathlib.Path(folder)
    folder.mkdir(exist_ok=True)
    serialization.save(gm.state_dict(), folder / "state_dict.pt")
    tab = " " * 4
    src = _FOLDER_HEADER + f"class {module_name}(torch.nn.Module):\n"
    src += f"{tab}def __init__(self):\n{tab * 2}super().__init__()\n"
    safe = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
    blobbed = []
    for name, module in gm.named_children():
        if type(module) in safe:
            src += f"{tab * 2}setattr(self, '{name}', {module!r})\n"
            continue
        path = folder / f"{name}.pt"
        serialization.save(module, path)
        blobbed.append(name)
        flat = repr(module).replace("\r", " ").replace("\n", " ")
        src += f"{tab * 2}setattr(self, '{name}', torch.load(r'{path}', weights_only=False)) # {flat}\n"
    for name, buf in gm._buffers.items():
        if buf is not None:
            src += f"{tab * 2}self.register_buffer('{name}', torch.empty({list(buf.shape)}, dtype={buf.dtype}))\n"
    for name, param in gm._parameters.items():
        if param is not None:
            src += (f"{tab * 2}setattr(self, '{name}', torch.nn.Parameter(torch.empty({list(param.shape)}, "
                    f"dtype={param.dtype})))\n")
    src += f"{tab * 2}self.load_state_dict(torch.load(r'{folder}/state_dict.pt'))\n"
    src += f"{_addindent(gm.code, 4)}\n"
    (folder / "module.py").write_text(src)
    (folder / "__init__.py").write_text("from .module import *")
    if blobbed:
        warnings.warn(f"Was not able to save the following children modules as reprs -saved as pickled files "
                      f"instead: {blobbed}")
