"""``torch.fx.symbolic_trace`` and ``Tracer``: run a module's ``forward`` (or a function) with :class:`Proxy`
inputs and record what it does as a :class:`Graph`.

While a trace runs, ``Module.__call__`` and ``Module.__getattr__`` are patched: a call of a leaf module (the
standard ``torchish.nn`` layers, or what :meth:`Tracer.is_leaf_module` says) becomes one ``call_module`` node
while other modules are traced through, and a parameter read in ``forward`` becomes a ``get_attr`` node. Functions
named by :func:`wrap` (and ``math``'s) are patched in the traced function's globals to record a ``call_function``
node when a Proxy reaches them. Everything patched is put back when the trace ends, also on an error.
"""
from __future__ import annotations

import functools
import inspect
import math
import sys
import types

from .. import _subclass
from .graph import Graph
from .node import map_aggregate
from .proxy import Proxy, TracerBase

_WRAPPED: dict = {}  # (id of a module's globals, function name) -> that globals dict: functions fx.wrap names
_MISSING = object()


def _assert_is_none(value, msg):
    if value is not None:
        raise AssertionError(msg)


class _Patcher:
    """Sets attributes/dict entries for the trace and puts the old values back on exit."""

    def __init__(self):
        self._undo = []

    def __enter__(self):
        return self

    def set_item(self, space: dict, name: str, value) -> None:
        self._undo.append((space, name, space.get(name, _MISSING)))
        space[name] = value

    def set_attr(self, obj, name: str, value) -> None:
        self._undo.append((obj, name, obj.__dict__.get(name, _MISSING)))
        setattr(obj, name, value)

    def __exit__(self, *exc):
        while self._undo:
            target, name, old = self._undo.pop()
            if isinstance(target, dict):
                if old is _MISSING:
                    target.pop(name, None)
                else:
                    target[name] = old
            elif old is _MISSING:
                delattr(target, name)
            else:
                setattr(target, name, old)
        return False


def _recording(fn):
    """``fn`` that records a ``call_function`` node when any argument is a Proxy."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        proxies = []
        map_aggregate((args, kwargs), lambda a: proxies.append(a) if isinstance(a, Proxy) else None)
        if proxies:
            proxy = proxies[0].tracer.create_proxy("call_function", fn, args, kwargs)
            proxy.node.meta["is_wrapped"] = True
            return proxy
        return fn(*args, **kwargs)
    return wrapped


def wrap(fn_or_name):
    """Record calls of a module-level function as one ``call_function`` node instead of tracing through it (or
    failing on ``len(proxy)``); call it at the top of the module that uses the function::

        torchish.fx.wrap("len")
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _WRAPPED[id(frame.f_globals), name] = frame.f_globals
    return fn_or_name


class PHBase:
    """``torch.fx.PH``: a placeholder inside a structured ``concrete_args`` value (``{"x": {"a": PH, "b": PH}}``):
    each one becomes an input of the traced graph, whose code then takes the structure apart."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


class PHWithMeta(PHBase):
    """A ``PH`` whose attributes (``ph_key``) are copied onto its placeholder node."""

    def __init__(self, ph_key: str | None = None) -> None:
        super().__init__()
        self.ph_key = ph_key


def _transfer_attrs(fr, to) -> None:
    for name in dir(fr):
        value = getattr(fr, name)
        if not callable(value) and not name.startswith("__") and not hasattr(to, name):
            setattr(to, name, value)


class Tracer(TracerBase):
    """Records a module's ``forward`` as a :class:`Graph`; subclass it to change what is a leaf
    (:meth:`is_leaf_module`) or how calls are recorded (:meth:`create_proxy`, :meth:`call_module`,
    :meth:`getattr`)."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant: bool = False):
        super().__init__()
        self._autowrap_modules = list(autowrap_modules)
        self._autowrap_ids = {id(v) for m in autowrap_modules for k, v in m.__dict__.items()
                              if not k.startswith("_") and callable(v)} | {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}

    # -- arguments ------------------------------------------------------------------------------------------
    def create_arg(self, a):
        """As :meth:`TracerBase.create_arg`, and: a parameter or buffer of the root becomes a ``get_attr`` of its
        name; another tensor a ``get_attr`` of a new ``_tensor_constant{i}`` attribute; a submodule a
        ``get_attr`` of its path."""
        from ..nn import Module, Parameter
        from .._tensor import Tensor
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Module):
            for name, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, Tensor):
            for name, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", name, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                self.tensor_attrs[id(a)] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    # -- modules --------------------------------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """The standard layers (``torchish.nn``'s, not ``Sequential``) are leaves."""
        from ..nn import Sequential
        module = type(m).__module__
        return (module.startswith("torchish.nn") or module.startswith("torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod) -> str:
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """A ``call_module`` node for a leaf module; otherwise trace through its ``forward``."""
        qualname = self.path_of_module(m)
        if not self.is_leaf_module(m, qualname):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualname, args, kwargs)

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        """A parameter read in ``forward``: one ``get_attr`` node (per trace) for it."""
        from ..nn import Parameter
        from .._tensor import Tensor
        spaces = []
        if isinstance(attr_val, Parameter):
            spaces.append(self.root.named_parameters)
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            spaces.append(self.root.named_buffers)
        for space in spaces:
            for name, p in space():
                if attr_val is p:
                    if name not in parameter_proxy_cache:
                        parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                    return parameter_proxy_cache[name]
        return attr_val

    # -- the trace ------------------------------------------------------------------------------------------
    def create_args_for_root(self, root_fn, is_module: bool, concrete_args=None):
        """The placeholders for ``root_fn``'s parameters (``self`` skipped for a module's ``forward``)."""
        fn = inspect.unwrap(root_fn)
        code = fn.__code__
        total = code.co_argcount + code.co_kwonlyargcount
        names = iter(code.co_varnames)
        args = []
        skip = 0
        if is_module:
            if total == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names)
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = [next(names) for _ in range(skip, total)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} "
                                   f"concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        self._annotations = getattr(fn, "__annotations__", {})
        args.extend(self._placeholder(name, concrete_args, sig) for name in arg_names)
        if code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            if code.co_flags & inspect.CO_VARARGS:
                args.append(self._placeholder("*" + next(names), None, sig))
            if code.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._placeholder("**" + next(names), None, sig))
            root_fn = _all_positional(root_fn, len(args))
        return self._flattening(root_fn, args, list(code.co_varnames[:total]))

    def _flattening(self, root_fn, args: list, orig_args: list):
        """With ``PH`` inside structured ``concrete_args`` (an argument that is a container of placeholders), the
        graph takes the flattened leaves and its code takes the arguments apart (``fx_pytree.tree_flatten_spec``)
        and puts the output back together (``pytree.tree_unflatten``), as torch.fx's."""
        from . import _pytree as fx_pytree
        from ..utils import _pytree as pytree
        flat_args, in_spec = pytree.tree_flatten(tuple(args))
        if all(child.is_leaf() for child in in_spec.children_specs):
            return root_fn, args
        graph = self.graph
        graph._pytree_info = fx_pytree.PyTreeInfo(orig_args, in_spec, None)

        def flatten_fn(*flat):
            out, out_spec = pytree.tree_flatten(root_fn(*pytree.tree_unflatten(list(flat), in_spec)))
            graph._pytree_info = graph._pytree_info._replace(out_spec=out_spec)
            return out
        return flatten_fn, flat_args

    def _placeholder(self, name: str, concrete_args, sig):
        if concrete_args is not None and name in concrete_args:
            from ..utils import _pytree as pytree
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            count = [0]

            def replace_ph(value):
                count[0] += 1
                out = self.create_proxy("placeholder", f"{name}_{count[0]}", default, {})
                if isinstance(value, PHBase):
                    if value is not PH:
                        _transfer_attrs(value, out.node)
                    return out
                if value is None:
                    msg = f"{name} has been specialized to have value None but got another value"
                    self.create_proxy("call_function", _assert_is_none, (out, msg), {})
                elif type(value) in (bool, int, float, str):
                    from .._runtime import _assert
                    msg = f"{name} has been specialized to have value {value} but got another value"
                    self.create_proxy("call_function", _assert, (out == value, msg), {})
                return value
            return pytree.tree_map(replace_ph, concrete_args[name])
        default = ()
        if name[0] != "*":
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {}, type_expr=self._annotations.get(name))

    def trace(self, root, concrete_args=None) -> Graph:
        """Record ``root`` (a Module, or a function) as a Graph."""
        from ..nn import Module
        _subclass.activate()  # (Proxy takes part in __torch_function__; dispatch is off until a participant exists)
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
        else:
            self.root = Module()
            fn = root
        self.traced_func_name = getattr(fn, "__name__", "forward")
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs: dict = {}
        self._collect_tensor_attrs(self.root, [])
        self.submodule_paths = {id(m): name for name, m in self.root.named_modules()}
        fn_globals = getattr(inspect.unwrap(fn), "__globals__", {})
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        cache: dict = {}
        tracer = self
        original_getattr = Module.__getattr__
        original_call = Module.__call__

        def module_getattr(mod, attr):
            value = original_getattr(mod, attr)
            return tracer.getattr(attr, value, cache)

        def module_call(mod, *call_args, **call_kwargs):
            def forward(*a, **k):
                return original_call(mod, *a, **k)
            tracer._autowrap(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}))
            return tracer.call_module(mod, forward, call_args, call_kwargs)

        with _Patcher() as patcher:
            patcher.set_attr(Module, "__getattr__", module_getattr)
            patcher.set_attr(Module, "__call__", module_call)
            self._autowrap(patcher, fn_globals)
            for module in self._autowrap_modules:
                self._autowrap(patcher, module.__dict__)
            result = fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=getattr(fn, "__annotations__", {}).get("return"))
        return self.graph

    def _collect_tensor_attrs(self, m, prefix: list) -> None:
        """Plain tensor attributes of the root and its submodules (not parameters or buffers), by path: a
        forward reading one records a ``get_attr`` of that path."""
        from .._tensor import Tensor
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[id(v)] = ".".join(prefix + [k])
        for k, child in m.named_children():
            self._collect_tensor_attrs(child, prefix + [k])

    def _autowrap(self, patcher: _Patcher, space: dict) -> None:
        """Patch, in the globals ``space``, the functions ``wrap`` named there and the autowrapped ones."""
        for name, value in list(space.items()):
            if (id(space), name) in _WRAPPED or (callable(value) and id(value) in self._autowrap_ids
                                                 and not name.startswith("_")):
                if getattr(value, "__torchish_fx_recording__", False):
                    continue
                recording = _recording(value)
                recording.__torchish_fx_recording__ = True
                patcher.set_item(space, name, recording)
        for (space_id, name), globals_ in list(_WRAPPED.items()):
            if space_id == id(space) and name not in space:
                builtin = getattr(sys.modules["builtins"], name, None)
                if builtin is not None:
                    recording = _recording(builtin)
                    recording.__torchish_fx_recording__ = True
                    patcher.set_item(space, name, recording)


def _all_positional(root_fn, nargs: int):
    """``root_fn`` with its keyword-only, ``*args`` and ``**kwargs`` parameters made plain positional ones, so the
    placeholders for them (``*args`` gets one Proxy) are handed in order."""
    fn = inspect.unwrap(root_fn)
    code = fn.__code__
    flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    new_code = code.replace(co_argcount=nargs, co_kwonlyargcount=0, co_posonlyargcount=0, co_flags=flags)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (a Module or a function) into a :class:`GraphModule`.

    Example::

        >>> gm = torchish.fx.symbolic_trace(torchish.nn.Sequential(torchish.nn.Linear(2, 2), torchish.nn.ReLU()))
        >>> print(gm.code)  # doctest: +SKIP
    """
    from ..nn import Module
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
