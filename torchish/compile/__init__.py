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
    warning. ``disable=True`` returns ``model`` itself; a compiled function or module given again is compiled from
    its original (see :func:`_innermost`).

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
        if disable:  # (PyTorch's: the model itself)
            return m
        m = _innermost(m)
        if not callable(m) and not isinstance(m, (staticmethod, classmethod)):  # (PyTorch's check is an assert;
            # ``@compile`` over ``@classmethod`` binds as the descriptor does: CompiledFunction.binds)
            raise AssertionError(f"A callable function is expected, but {type(m)} is provided.")
        kw = dict(fullgraph=fullgraph, dynamic=dynamic, mode=mode, backend=backend, options=options)
        if isinstance(m, Module):
            from .module import OptimizedModule
            return OptimizedModule(m, **kw)
        return CompiledFunction(m, **kw)
    if model is None:
        return wrap
    return wrap(model)


def _innermost(m):
    """The callable a compiled module or function compiles: ``torchish.compile(torchish.compile(f))`` compiles ``f``
    once, as PyTorch's unwraps to the innermost callable, and compiling a compiled module wraps the original module
    (its keys have one ``_orig_mod.`` prefix; PyTorch's gives a function there, with no ``state_dict``)."""
    from .module import OptimizedModule
    while True:
        if type(m) is OptimizedModule:
            m = m._orig_mod
        elif type(m) is CompiledFunction:
            m = staticmethod(m.fn) if m.binds == "static" else classmethod(m.fn) if m.binds == "class" else m.fn
        else:
            return m
