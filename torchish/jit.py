"""``torchish.jit``: PyTorch's TorchScript entry points as honest pass-throughs, so scripts that call them run.

No TorchScript is produced. :func:`script` and :func:`trace` return the module or function they are given (a
module keeps its parameters, hooks and ``state_dict``); the decorators (:func:`ignore`, :func:`unused`,
:func:`export`) return the function unchanged; :func:`is_scripting` and :func:`is_tracing` are always False, so
the eager branch of ``if torch.jit.is_scripting():`` code runs. To compile for speed use ``torchish.compile``;
to save a model use ``torchish.save`` of its ``state_dict()``. :func:`save` and :func:`load` raise, since there is
no TorchScript archive to write or read.

This is what PyTorch itself does with TorchScript disabled (``PYTORCH_JIT=0``). Like PyTorch 2.13, :func:`script`
and :func:`trace` warn that they are deprecated (DeprecationWarning).

What differs from PyTorch: the returned object is the original one (``script(m) is m``), so it is not a
``RecursiveScriptModule``/``ScriptFunction`` and has no ``.graph``/``.code``, and it is not an instance of
:class:`ScriptModule` (a plain ``nn.Module`` subclass here, for code that subclasses or tests for it: scripts that
branch on ``isinstance(m, torch.jit.ScriptModule)`` take their plain-module path, which works).

Example::

    model = torchish.jit.script(MyModel())     # the same MyModel instance
    traced = torchish.jit.trace(model, torchish.randn(2, 3))
    out = traced(torchish.randn(2, 3))
"""
from __future__ import annotations

import contextlib
import typing
import warnings

from .nn.module import Module

from .futures import Future, _fork, _wait

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing", "Final",
           "annotate", "ScriptModule", "save", "load", "script_if_tracing", "interface", "optimized_execution",
           "fork", "wait", "Future"]

class ScriptModule(Module):
    """PyTorch's base of scripted modules. Nothing torchish returns is one (nothing is scripted); subclassing it
    gives a plain module."""
Final = typing.Final

def _warn_deprecated(name):
    """PyTorch 2.13 deprecates the TorchScript entry points; the same DeprecationWarning is given here."""
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=3)


_NO_TORCHSCRIPT = ("torchish does not support TorchScript serialization: torchish.jit.script/trace return the "
                   "original Python module or function, so there is no TorchScript archive to {}. Save the weights "
                   "with torchish.save(model.state_dict(), path) and load them into the model with "
                   "model.load_state_dict(torchish.load(path)).")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Return ``obj`` (a module, function or class) unchanged: no TorchScript is compiled.

    Example::

        >>> lin = torchish.nn.Linear(2, 2)
        >>> torchish.jit.script(lin) is lin
        True
    """
    _warn_deprecated("script")
    if type(obj) in (int, float, bool, complex, str, bytes, type(None)):  # (TorchScript compiles no instances of these)
        raise TypeError(f"{type(obj)} is a built-in class")
    code = getattr(obj, "__code__", None)
    if code is not None and obj.__name__ == "<lambda>":  # (TorchScript parses a function's source: a def)
        raise RuntimeError(f"Expected a single top-level function: {code.co_filename}:{code.co_firstlineno}")
    return obj


def _as_args(example_inputs):
    if example_inputs is None:
        return ()
    return tuple(example_inputs) if isinstance(example_inputs, tuple) else (example_inputs,)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Run ``func`` once on the example inputs (as PyTorch's tracer does, so errors and side effects such as
    BatchNorm statistics updates happen here too) and return ``func`` itself: no graph is recorded.

    Args:
        func: a module or a function.
        example_inputs: a tuple of positional arguments, or a single Tensor.
        example_kwarg_inputs: a dict of keyword arguments.

    Example::

        >>> f = torchish.jit.trace(lambda x: x * 2, torchish.ones(2))
        >>> f(torchish.ones(2))
        tensor([2., 2.])
    """
    _warn_deprecated("trace")
    if example_inputs is not None or example_kwarg_inputs is not None:
        func(*_as_args(example_inputs), **(example_kwarg_inputs or {}))
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Run each named method of ``mod`` once on its example inputs (``{"forward": (x,)}``) and return ``mod``."""
    _warn_deprecated("trace_method")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            method(**example)
        else:
            method(*_as_args(example))
    return mod


def ignore(drop=False, **kwargs):
    """``@ignore`` or ``@ignore(drop=...)``: leave a function to Python; here every function is, so it is returned
    unchanged."""
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    return lambda fn: fn


def unused(fn):
    """``@unused``: a method the compiler would skip; returned unchanged."""
    return fn


def export(fn):
    """``@export``: a method the compiler would also compile; returned unchanged."""
    return fn


def script_if_tracing(fn):
    """``@script_if_tracing``: returned unchanged (nothing is ever traced)."""
    return fn


def interface(obj):
    """``@interface``: a TorchScript interface type; the class is returned unchanged."""
    return obj


def is_scripting():
    """Always False: code runs as ordinary Python (the eager branch of ``if torch.jit.is_scripting():``)."""
    return False


def is_tracing():
    """Always False: :func:`trace` runs the function eagerly, without a tracer."""
    return False


def annotate(the_type, the_value):
    """A type hint for the TorchScript compiler; returns ``the_value``."""
    return the_value


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A no-op context manager (TorchScript's optimization switch)."""
    yield


def save(m, f, _extra_files=None):
    """Not supported: raises RuntimeError (use ``torchish.save(model.state_dict(), f)``)."""
    raise RuntimeError(_NO_TORCHSCRIPT.format("write"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Not supported: raises RuntimeError (use ``model.load_state_dict(torchish.load(f))``)."""
    raise RuntimeError(_NO_TORCHSCRIPT.format("read"))


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` and return a completed :class:`~torchish.futures.Future` of its result. Outside
    TorchScript PyTorch's ``fork`` runs the call at once, in this thread, and so does this (an error in ``func`` is
    raised here, as there). Deprecated in PyTorch 2.13, with the same warning."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return _fork(func, *args, **kwargs)


def wait(future):
    """The value of a future from :func:`fork` (waiting for it to complete)."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return _wait(future)
