"""``nn.Module``: the base class of every layer — registration of parameters, buffers and submodules, traversal,
conversions, printing and calling.

Hooks and ``__call__`` live in :mod:`._module_call`, ``state_dict``/``load_state_dict`` in :mod:`._module_state`,
modes and dtype/device conversions in :mod:`._module_convert`; :class:`Module` combines them. The registries are the same ordered dicts PyTorch uses (``_parameters``,
``_buffers``, ``_modules``), so names and iteration order match PyTorch's exactly.
"""
from __future__ import annotations

from collections import OrderedDict

from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..autograd.graph import STRUCT_EPOCH
from ._hooks import GLOBAL
from ._module_call import CallMixin
from ._module_convert import ConvertMixin
from ._module_state import StateDictMixin, _IncompatibleKeys  # noqa: F401  (re-exported)
from .parameter import Buffer, Parameter
from .._runtime import typename  # noqa: F401  (torch.typename; param_container and utils import it from here)


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


# bumped when an attribute, child, parameter or buffer of any module is set or deleted (and by hook handles):
# torchish.compile re-checks the module settings (``eps``, ``p``, a user's ``self.scale``) and structure its
# programs were traced with only after a change
ATTR_EPOCH = STRUCT_EPOCH

# (get_extra_state/set_extra_state of a module that does not define them: PyTorch's words)
_UNREACHABLE = ("Reached a code path in Module.{}() that should never be called. Please file an issue at "
                "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to report this bug.")


class Module(CallMixin, StateDictMixin, ConvertMixin):
    """Base class for all neural network modules; subclass it and define ``forward``.

    Assigning a :class:`Parameter`, a :class:`Module` or a :class:`Buffer` as an attribute registers it.

    Example:
        >>> import torchish as torch
        >>> class Scale(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = torch.nn.Parameter(torch.ones(2))
        ...     def forward(self, x):
        ...         return x * self.w
        >>> [n for n, _ in Scale().named_parameters()]
        ['w']
    """

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were "
                            "given")
        if STATE.recorder is not None:  # made inside a compiled function (nn.ReLU()(x)): made again by each trace,
            STATE.recorder.fresh_modules[id(self)] = self  # it is no state to guard (the traces never settled)
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---------------------------------------------------------------------------------------------------------
    # registration

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter); ``persistent=False`` keeps it out of the state_dict."""
        ATTR_EPOCH[0] += 1
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in GLOBAL.buffer_registration.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (or None) under ``name``."""
        ATTR_EPOCH[0] += 1
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        for hook in GLOBAL.parameter_registration.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Add a child module (or None) under ``name``."""
        ATTR_EPOCH[0] += 1
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in GLOBAL.module_registration.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name: str, module) -> None:
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        raise RuntimeError(_UNREACHABLE.format("get_extra_state"))

    def set_extra_state(self, state) -> None:
        raise RuntimeError(_UNREACHABLE.format("set_extra_state"))

    # ---------------------------------------------------------------------------------------------------------
    # attribute protocol

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name != "training":  # (train/eval is guarded on its own)
            ATTR_EPOCH[0] += 1
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            for hook in GLOBAL.module_registration.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            for hook in GLOBAL.module_registration.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.__dict__.get("persistent", True)
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        ATTR_EPOCH[0] += 1
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        # (a copy or a pickle is not compiled, as PyTorch's: `module.compile()`'s program and the one
        # `torchish.compile(module)` notes on the module belong to this module's call)
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        state.pop("_compiled_call", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        defaults = (("_forward_pre_hooks", OrderedDict), ("_forward_pre_hooks_with_kwargs", OrderedDict),
                    ("_forward_hooks", OrderedDict), ("_forward_hooks_with_kwargs", OrderedDict),
                    ("_forward_hooks_always_called", OrderedDict), ("_backward_hooks", OrderedDict),
                    ("_backward_pre_hooks", OrderedDict), ("_state_dict_hooks", OrderedDict),
                    ("_state_dict_pre_hooks", OrderedDict), ("_load_state_dict_pre_hooks", OrderedDict),
                    ("_load_state_dict_post_hooks", OrderedDict), ("_non_persistent_buffers_set", set))
        for key, factory in defaults:
            if key not in self.__dict__:
                self.__dict__[key] = factory()
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ---------------------------------------------------------------------------------------------------------
    # traversal (the same names and order as PyTorch)

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Yield ``(name, module)`` for this module and every descendant, pre-order (iterative)."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            pre, mod = stack.pop()
            if mod in memo:
                continue
            if remove_duplicate:
                memo.add(mod)
            yield pre, mod
            kids = [(pre + ("." if pre else "") + n, m) for n, m in mod._modules.items() if m is not None]
            stack.extend(reversed(kids))

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and m not in memo:
                memo.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in get_members(mod):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---------------------------------------------------------------------------------------------------------
    # printing

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _remove_from(name, *dicts_or_sets):
    for d in dicts_or_sets:
        if name in d:
            if isinstance(d, dict):
                del d[name]
            else:
                d.discard(name)
