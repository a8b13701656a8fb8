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
            return compile_module(m, fullgraph=fullgraph, dynamic=dynamic, mode=mode, backend=backend,
                                  options=options, disable=disable)
        return CompiledFunction(m, fullgraph=fullgraph, dynamic=dynamic, mode=mode, backend=backend,
                                options=options, disable=disable)
    if model is None:
        return wrap
    return wrap(model)


def compile_module(module, **kw):
    """``torchish.compile(module)``: an :class:`~torchish.compile.module.OptimizedModule` holding ``module`` as
    ``_orig_mod`` and running its calls compiled, as PyTorch's; with ``disable=True``, the module itself."""
    if kw.get("disable"):
        return module
    from .module import OptimizedModule
    return OptimizedModule(module, **kw)
