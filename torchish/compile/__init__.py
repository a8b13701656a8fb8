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
    """A Module whose ``__call__`` is compiled (``OptimizedModule`` in PyTorch); attributes reach the original."""
    module._compiled_call = CompiledFunction(module._call_impl if hasattr(module, "_call_impl") else module.__call__,
                                             **kw)
    return _OptimizedModule(module)


class _OptimizedModule:
    def __init__(self, mod):
        object.__setattr__(self, "_orig_mod", mod)

    def __call__(self, *args, **kwargs):
        return self._orig_mod._compiled_call(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return f"OptimizedModule({self._orig_mod!r})"
