"""``torchish.export``: PyTorch's ``torch.export``. :func:`export` records a module's forward once into an
:class:`ExportedProgram` (a flat fx graph of torchish's functions plus its signature, state and input guards),
``ep.module()`` runs it, :func:`save`/:func:`load` write and read it, :class:`Dim` marks dynamic sizes. The
modules behind these names load on first use, so ``import torchish`` does not pay for them.

Example::

    >>> ep = torchish.export.export(torchish.nn.Linear(3, 2), (torchish.randn(4, 3),))
    >>> ep.module()(torchish.randn(4, 3)).shape
    torch.Size([4, 2])
"""
import importlib as _importlib

# (loaded on first use, so that ``import torchish`` does not pay for export's modules: name -> submodule)
_LAZY = {"ConstraintViolationError": "_capture", "GuardOnDataDependentSymNode": "_symbolic", "UserError": "_capture",
         "load": "_serialize", "save": "_serialize", "Dim": "dynamic_shapes", "dims": "dynamic_shapes",
         "ExportedProgram": "exported_program", "export": "exported_program",
         "ExportGraphSignature": "graph_signature", "InputKind": "graph_signature", "InputSpec": "graph_signature",
         "OutputKind": "graph_signature", "OutputSpec": "graph_signature"}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def unflatten(module, flat_args_adapter=None):
    """A Module with the exported module's submodule hierarchy (``unflatten(ep).fc.weight``): here the same as
    ``ep.module()``, whose parameters sit at their original paths (PyTorch's also splits the graph into one
    ``InterpreterModule`` per submodule call)."""
    return module.module()


def export_for_training(mod, args, kwargs=None, *, dynamic_shapes=None, strict: bool = False, **extra):
    """The same as :func:`export` (PyTorch's deprecated name for its training-IR export)."""
    return __getattr__("export")(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict, **extra)


__all__ = ["export", "ExportedProgram", "Dim", "dims", "save", "load", "unflatten", "ExportGraphSignature",
           "InputKind", "InputSpec", "OutputKind", "OutputSpec", "ConstraintViolationError",
           "GuardOnDataDependentSymNode", "UserError", "export_for_training"]
