"""The errors of ``torchish.compile``, and how its warnings name the user's code."""
import os
import sys
import traceback


class _DeviceChanged(RuntimeError):
    """The program was compiled for another device than its inputs now live on."""


class GraphBreakError(RuntimeError):
    """Something in the compiled function needs concrete values (``.item()``, ``if tensor:``, printing...)."""


class _NeedsRecord(Exception):
    """Raised inside a trace where the function creates state lazily (an optimizer's moments for a parameter that
    gets its first gradient, a group added with ``add_param_group``): a traced value cannot be its initial value,
    so this call runs eagerly under a recorder instead, and the next call traces with the new state known."""


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def display_name(fn):
    """How warnings and errors name the compiled callable ``fn``: a compiled module's call (its bound
    ``_call_impl``, see compile.module) by the module's ``forward`` (``Net.forward``), which the user wrote; else
    the function's own name."""
    owner = getattr(fn, "__self__", None)
    if getattr(fn, "__name__", None) == "_call_impl" and owner is not None:
        return f"{type(owner).__name__}.forward"
    return getattr(fn, "__name__", "the function")


def user_stacklevel():
    """The ``stacklevel`` that attributes the caller's warning to the first frame outside torchish: the line that
    called the compiled function or module (not ``Module.__call__``'s, for a compiled module)."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    return level


def user_frame(tb):
    """The innermost frame of user code in a traceback (not torchish, not jax): where a trace met what breaks it."""
    best = None
    for fs in traceback.extract_tb(tb):
        f = os.path.abspath(fs.filename)
        if f.startswith(_PACKAGE) or "/jax/" in f or "/jaxlib/" in f or f.startswith(sys.prefix + "/lib/python"):
            continue
        best = fs
    return best
