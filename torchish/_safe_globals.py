"""What ``load(weights_only=True)`` lets through: PyTorch's default allow-list, the user's safe globals
(:func:`add_safe_globals`, :class:`safe_globals`), PyTorch's refusal message, and a static scan of a pickle's globals
(:func:`globals_in_pickle`, behind ``get_unsafe_globals_in_checkpoint``).

A global is named ``"module.qualname"`` as pickle writes it; a name is looked up here before anything is imported,
so a refused global never runs and its module is never loaded.

Example:
    >>> import argparse, torchish
    >>> with torchish.serialization.safe_globals([argparse.Namespace]):
    ...     "argparse.Namespace" in allowed_user_globals()
    True
"""
from __future__ import annotations

import _compat_pickle
import io
import pickle
import pickletools
from collections import Counter, OrderedDict

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_USER: list = []  # what add_safe_globals was given, in order (PyTorch keeps a module-level list as well)


class WeightsOnlyError(pickle.UnpicklingError):
    """What PyTorch's weights-only load raises for a global it does not allow."""


def add_safe_globals(safe_globals) -> None:
    """Mark globals safe for ``load(weights_only=True)``: classes/functions, or ``(obj, "module.name")`` pairs
    for objects pickled under another name.

    Example:
        >>> import argparse, torchish
        >>> torchish.serialization.add_safe_globals([argparse.Namespace])
        >>> torchish.serialization.clear_safe_globals()
    """
    for g in safe_globals:
        if g not in _USER:
            _USER.append(g)


def clear_safe_globals() -> None:
    """Forget every global marked safe by :func:`add_safe_globals`."""
    _USER.clear()


def get_safe_globals() -> list:
    """The globals marked safe by the user (not the built-in allow-list), oldest first."""
    return list(_USER)


class safe_globals:
    """Context manager marking globals safe for ``load(weights_only=True)`` inside its block only.

    Example:
        >>> import argparse, torchish
        >>> with torchish.serialization.safe_globals([argparse.Namespace]):
        ...     pass  # torchish.load(path) may return Namespace objects here
    """

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._before = list(_USER)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _USER[:] = self._before


def allowed_user_globals() -> dict:
    """``{"module.qualname": object}`` for every user safe global (PyTorch's checks of the pair form included)."""
    out = {}
    for g in _USER:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple "
                                 f"of length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(g[1])}")
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


def _latin1_encode(s, encoding="latin1"):
    """``_codecs.encode``, which protocol-2 pickles use for bytes; restricted to that one use."""
    if not isinstance(s, str) or encoding != "latin1":
        raise WeightsOnlyError(weights_only_message("_codecs.encode is only allowed for latin1 bytes"))
    return s.encode("latin1")


# PyTorch's default allow-list for the plain Python globals a pickle may name (its tensors, dtypes, devices and
# sizes torchish handles itself); frozenset, slice, range, defaultdict, deque and namedtuples are NOT on it
DEFAULT_ALLOWED = {
    "collections.OrderedDict": OrderedDict, "collections.Counter": Counter, "builtins.set": set,
    "builtins.bytearray": bytearray, "builtins.complex": complex, "_codecs.encode": _latin1_encode,
}

def full_name(module: str, name: str) -> str:
    """``module.name`` in Python 3's spelling (protocol-2 pickles write Python 2's: ``__builtin__.xrange``)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return f"{module}.{name}"


_HOW_TO = ("Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those "
           "steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the "
           "default value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running "
           "`torch.load` with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code "
           "execution. Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
           "`weights_only=True` please check the recommended steps in the following error message.\n\t"
           "WeightsUnpickler error: ")
_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with weights_only "
         "https://pytorch.org/docs/stable/generated/torch.load.html.")


def weights_only_message(detail: str) -> str:
    """PyTorch's weights-only refusal text around ``detail``."""
    return _HOW_TO + detail + _DOCS


def refusal(qualified: str) -> WeightsOnlyError:
    """PyTorch's error for a global that is neither on the default allow-list nor marked safe by the user."""
    shown = qualified[len("builtins."):] if qualified.startswith("builtins.") else qualified
    return WeightsOnlyError(weights_only_message(
        f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
        "context manager to allowlist this global if you trust this class/function."))


def resolve_weights_only(module: str, name: str, extra=None):
    """The object a weights-only load may use for ``module.name`` (``extra`` maps more names to objects), or
    PyTorch's refusal; nothing is imported."""
    qualified = full_name(module, name)
    for table in (extra or {}, DEFAULT_ALLOWED, allowed_user_globals()):
        if qualified in table:
            return table[qualified]
    raise refusal(qualified)


def globals_in_pickle(data: bytes) -> list:
    """Every global a pickle names, in order of first use, found without running it (GLOBAL, and STACK_GLOBAL
    after two string pushes)."""
    found, strings = [], []
    for op, arg, _ in pickletools.genops(io.BytesIO(data)):
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            found.append(full_name(module, name))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append(full_name(strings[-2], strings[-1]))
        if isinstance(arg, str) and "UNICODE" in op.name:
            strings.append(arg)
        if op.name == "STOP":
            break
    return list(dict.fromkeys(found))
