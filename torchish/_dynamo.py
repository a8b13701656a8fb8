"""``torchish._dynamo``: the parts of ``torch._dynamo`` training scripts touch — ``config``, ``reset``,
``is_compiling``, ``disable``, the shape/address markers (``mark_dynamic``, ``mark_static_address``...) and
``eval_frame.OptimizedModule`` (the class of ``torchish.compile(module)``, which Hugging Face and Accelerate test a
model against to unwrap it).

``config`` knows the settings scripts commonly set, with PyTorch's defaults; a name it does not know raises
PyTorch's ``AttributeError``. ``cache_size_limit`` (alias ``recompile_limit``) governs torchish.compile: it is the
number of programs kept per input signature for different guards (train/eval, ``.grad`` present or not). The other
settings are recorded and read back; they tune TorchDynamo's Python-bytecode tracer, which torchish does not have.

Example:
    >>> import torchish._dynamo
    >>> torchish._dynamo.config.cache_size_limit = 16
    >>> torchish._dynamo.config.suppress_errors = True
"""
from __future__ import annotations

import contextlib
import sys
import types as _types

from .compile import entry as _entry
from .compile.module import OptimizedModule as OptimizedModule
from .compiler import disable as disable, reset as reset, is_compiling as is_compiling  # noqa: F401
from .compiler import allow_in_graph as allow_in_graph, set_stance as set_stance  # noqa: F401
from .compiler import assume_constant_result as assume_constant_result  # noqa: F401

__all__ = ["config", "OptimizedModule", "reset", "is_compiling", "disable", "allow_in_graph", "assume_constant_result",
           "set_stance", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address"]

_DEFAULTS = {  # PyTorch 2.13's defaults
    "verbose": False, "suppress_errors": False, "accumulated_recompile_limit": 256,
    "fail_on_recompile_limit_hit": False, "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True, "dynamic_shapes": True,
    "specialize_int": False, "specialize_float": False, "force_parameter_static_shapes": True,
    "optimize_ddp": True, "inline_inbuilt_nn_modules": True, "guard_nn_modules": True, "error_on_recompile": False,
    "replay_record_enabled": False, "raise_on_ctx_manager_usage": True, "disable": False, "cprofile": False,
    "log_file_name": None, "trace_numpy": True, "compiled_autograd": False, "skip_nnmodule_hook_guards": True,
    "allow_rnn": False, "minimum_call_count": 1, "report_guard_failures": True, "allow_unspec_int_on_nn_module": False,
    "capture_autograd_function": True, "capture_func_transforms": True, "log_compilation_metrics": True,
}
_ALIASES = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit",
            "fail_on_cache_limit_hit": "fail_on_recompile_limit_hit"}


class _Config:
    """``torchish._dynamo.config``: attribute access to the known settings, ``patch`` to change some for a block
    or a function, ``get_config_copy``/``load_config`` to save and restore them."""

    def __init__(self):
        object.__setattr__(self, "_values", dict(_DEFAULTS))

    @staticmethod
    def _canonical(name):
        name = _ALIASES.get(name, name)
        if name != "recompile_limit" and name not in _DEFAULTS:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        return name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        name = self._canonical(name)
        if name == "recompile_limit":
            return _entry.VARIANTS
        return self._values[name]

    def __setattr__(self, name, value):
        name = self._canonical(name)
        if name == "recompile_limit":
            # (VARIANTS counts the programs kept besides the current one; at least one is always kept)
            _entry.VARIANTS = max(int(value), 1)
        else:
            self._values[name] = value

    def __delattr__(self, name):  # back to the default, as PyTorch's config does
        name = self._canonical(name)
        if name == "recompile_limit":
            _entry.VARIANTS = 8
        else:
            self._values[name] = _DEFAULTS[name]

    def __dir__(self):
        return sorted([*_DEFAULTS, "recompile_limit", *_ALIASES, "patch", "get_config_copy", "load_config"])

    def get_config_copy(self):
        return {**self._values, "recompile_limit": _entry.VARIANTS}

    def load_config(self, values):
        for name, value in values.items():
            setattr(self, name, value)

    @contextlib.contextmanager
    def _patched(self, changes):
        before = {name: getattr(self, name) for name in changes}
        for name, value in changes.items():
            setattr(self, name, value)
        try:
            yield
        finally:
            for name, value in before.items():
                setattr(self, name, value)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """``config.patch(name, value)``, ``config.patch({name: value})`` or ``config.patch(name=value)``: a
        context manager and decorator that sets the values inside it."""
        if isinstance(arg1, str):
            changes = {arg1: arg2}
        elif isinstance(arg1, dict):
            changes = dict(arg1)
        else:
            changes = {}
        changes.update(kwargs)
        for name in changes:
            self._canonical(name)
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, cfg, changes):
        self.cfg, self.changes, self.cm = cfg, changes, None

    def __enter__(self):
        self.cm = self.cfg._patched(self.changes)
        return self.cm.__enter__()

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)


config = _Config()
sys.modules[__name__ + ".config"] = config  # `import torch._dynamo.config` works as in PyTorch

# `torch._dynamo.eval_frame.OptimizedModule` (transformers' `_is_torch_compiled`, accelerate's
# `is_compiled_module`): an attribute, and importable by `from torchish._dynamo.eval_frame import OptimizedModule`
eval_frame = _types.ModuleType(__name__ + ".eval_frame", "The class of ``torchish.compile(module)``.")
eval_frame.OptimizedModule = OptimizedModule
sys.modules[eval_frame.__name__] = eval_frame


# ----------------------------------------------------------------------------------------------------------------
# markers: Hugging Face's StaticCache calls mark_static_address on its cache tensors, serving code marks dynamic
# sequence dims. torchish.compile keys its programs by exact shapes and keeps state by identity, so these only
# record what PyTorch records on the tensor (the same attributes), with its argument checks.


def _each_index(fn, t, index, **kw):
    if not isinstance(index, (list, tuple)):
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")
    for i in index:
        fn(t, i, **kw)


def _mark(t, attr, index):
    if not hasattr(t, attr):
        setattr(t, attr, set())
    getattr(t, attr).add(index)
    t._has_dynamo_dim_marking = True


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Mark dim ``index`` (an int, or a list/tuple of them) of ``t`` dynamic: recorded on ``t`` only."""
    if isinstance(index, int):
        _mark(t, "_dynamo_dynamic_indices", index)
        return
    _each_index(mark_dynamic, t, index, min=min, max=max, specialize_on=specialize_on)


def maybe_mark_dynamic(t, index):
    """``mark_dynamic`` that does not insist: recorded on ``t`` only."""
    if isinstance(index, int):
        _mark(t, "_dynamo_weak_dynamic_indices", index)
        return
    _each_index(maybe_mark_dynamic, t, index)


def mark_static(t, index=None):
    """Mark dim ``index`` of ``t`` (all dims when None) static, or an ``nn.Module`` class static (returned)."""
    from ._tensor import Tensor
    if not isinstance(t, Tensor):
        from .nn import Module
        if isinstance(t, type) and issubclass(t, Module):
            t._dynamo_marked_static = True
            return t
        raise TypeError(f"mark_static expects a tensor/nn.Module class but received {type(t)}")
    if isinstance(index, int):
        _mark(t, "_dynamo_static_indices", index)
    elif index is None:
        for i in range(t.dim()):
            mark_static(t, i)
    else:
        _each_index(mark_static, t, index)


def mark_static_address(t, guard=False):
    """Mark ``t``'s storage as fixed across calls (for CUDA graphs in PyTorch): recorded on ``t`` only."""
    from ._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"
