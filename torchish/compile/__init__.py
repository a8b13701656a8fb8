"""``torchish.compile``: trace a PyTorch-style function (or Module) into one XLA program, keeping PyTorch's
semantics (``backward()``, ``.grad``, hooks, in-place optimizer updates, buffers, RNG) inside it."""
from __future__ import annotations

from .function import CompiledFunction, GraphBreakError
from .recorder import scalar, note_module

__all__ = ["compile", "CompiledFunction", "GraphBreakError", "scalar", "note_module"]


def compile(model=None, *, fullgraph=None, dynamic=None, backend="xla", mode=None, options=None, disable=False):
    """Compile ``model`` (a function or a Module) into one XLA program per input signature.

    Works as ``torchish.compile(fn)``, ``@torchish.compile`` and ``@torchish.compile(fullgraph=True)``.
    PyTorch's keyword arguments are accepted; ``dynamic``, ``backend``, ``mode`` and ``options`` do not change
    anything. A function that cannot be traced (it reads tensor values in Python: ``.item()``, ``if loss > 0:``)
    runs eagerly for that input signature, as PyTorch's graph breaks do, with a warning naming the line;
    ``fullgraph=True`` raises a :class:`GraphBreakError` (a RuntimeError) instead, ``fullgraph=False`` silences the
    warning.

    Example::

        @torchish.compile
        def train_step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
    """
    def wrap(m):
        from ..nn.modules.module import Module
        if isinstance(m, Module):
            return compile_module(m, fullgraph=fullgraph, disable=disable)
        return CompiledFunction(m, fullgraph=fullgraph, dynamic=dynamic, mode=mode, backend=backend,
                                options=options, disable=disable)
    if model is None:
        return wrap
    return wrap(model)


def compile_module(module, **kw):
    """A module whose calls run compiled (PyTorch's ``OptimizedModule``). It *is* the module in every other way:
    an instance of a subclass of the module's class sharing the module's ``__dict__``, so ``isinstance``, ``len``,
    indexing and iterating a Sequential, ``state_dict()`` keys, ``parameters()``, ``train()``/``eval()`` and
    attribute writes behave as on the module itself; the original module stays eager (``._orig_mod``)."""
    compiled = CompiledFunction(module._call_impl if hasattr(module, "_call_impl") else module.__call__, **kw)
    module.__dict__["_compiled_call"] = compiled  # (the latest compiled wrapper's statistics, for tests and tools)
    cls = type(module)
    opt_cls = type(cls.__name__, (_OptimizedModule, cls), {"_torchish_compiled": compiled, "_torchish_orig": module,
                                                          "__module__": cls.__module__,
                                                          "__qualname__": cls.__qualname__})
    wrapper = object.__new__(opt_cls)
    object.__setattr__(wrapper, "__dict__", module.__dict__)
    return wrapper


class _OptimizedModule:
    """Mixed in before the compiled module's class (see :func:`compile_module`)."""

    def __call__(self, *args, **kwargs):
        return type(self)._torchish_compiled(*args, **kwargs)

    @property
    def _orig_mod(self):
        return type(self)._torchish_orig

    def __reduce_ex__(self, protocol):  # pickles (torchish.save, deepcopy) as the original module
        return _original, (type(self)._torchish_orig,)


def _original(module):
    return module
