"""``torchish.compile(module)``: PyTorch's ``OptimizedModule``, a module that holds the original as its child
``_orig_mod`` and whose ``forward`` is the original's call, compiled.

As in PyTorch, it is a module of its own: its ``state_dict()`` keys and ``named_parameters()`` names start with
``_orig_mod.`` (a state dict saved from it loads into it, not into the bare model, and the reverse), its ``repr``
shows ``OptimizedModule((_orig_mod): ...)``, ``isinstance(compiled, nn.Sequential)`` is False and indexing it is a
TypeError (``len`` is the original's). Attributes it does not have are read from, written to and deleted from the
original (``compiled.fc1``, ``compiled.weight = ...``, ``del compiled.note``; ``dir`` lists the original's too),
``training`` is the original's, hooks registered on it run around the compiled call (global module hooks fire once
more, for the wrapper: PyTorch warns of it), and a copy or pickle of it compiles a copy of the original again.
``module.compile()`` compiles in place instead (the keys stay the module's own; a copy or pickle of such a module is
not compiled, as in PyTorch).
"""
from __future__ import annotations

import warnings

from ..nn._hooks import GLOBAL as _GLOBAL_HOOKS
from ..nn.modules.module import Module
from .function import CompiledFunction

_GLOBAL_HOOKS_WARNING = (
    "Using `torch.compile(module)` when there are global hooks on modules (e.g., from `register_module_forward_hook`);"
    " this will cause the hooks to fire an extra time for the `OptimizedModule` created by `torch.compile(module)`. "
    "If this causes undesired behavior, please try using `module.compile()`, or use the per-module hooks instead")


class OptimizedModule(Module):
    """The module ``torchish.compile(module)`` returns (``torch._dynamo.eval_frame.OptimizedModule``)."""

    _opt_mod_attributes = frozenset({"_orig_mod", "forward", "_compile_kwargs", "_compiled_call", "__dict__",
                                     "_super_module_initialized"})

    def __init__(self, mod, **compile_kwargs):
        object.__setattr__(self, "_super_module_initialized", False)  # (Module.__init__ sets `training`)
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod  # (a child: the '_orig_mod.' prefix of the keys)
        self._compile_kwargs = compile_kwargs
        self._initialize()

    def _initialize(self):
        mod = self._orig_mod
        compiled = CompiledFunction(mod._call_impl if hasattr(mod, "_call_impl") else mod.__call__,
                                    **self._compile_kwargs)
        self.forward = compiled  # (the original's call, its own hooks included, runs compiled)
        self._compiled_call = compiled  # (its statistics, for tests and tools)
        mod.__dict__["_compiled_call"] = compiled

    def __call__(self, *args, **kwargs):
        if _GLOBAL_HOOKS.any_call_hooks():
            warnings.warn(_GLOBAL_HOOKS_WARNING, stacklevel=2)
        return super().__call__(*args, **kwargs)

    def __len__(self):
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if self.__dict__.get("_super_module_initialized"):  # (not Module.__init__'s default: the original's)
            self._orig_mod.training = value

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules")
        if modules is None or "_orig_mod" not in modules:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "_orig_mod":
            return modules["_orig_mod"]
        return getattr(modules["_orig_mod"], name)

    def __setattr__(self, name, value):
        if name in self._opt_mod_attributes or hasattr(type(self), name):
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in self._opt_mod_attributes or hasattr(type(self), name):
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __dir__(self):
        orig = self._orig_mod.__dir__()
        return orig + [name for name in super().__dir__() if name not in orig]

    def __reduce_ex__(self, protocol):  # (a copy or a pickle compiles the copied original again)
        return _rebuild, (self._orig_mod, self._compile_kwargs)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("forward", None)
        state.pop("_compiled_call", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._initialize()


def _rebuild(mod, compile_kwargs):
    return OptimizedModule(mod, **compile_kwargs)
