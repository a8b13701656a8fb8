"""``torchish.overrides``: the ``__torch_function__`` protocol helpers of ``torch.overrides``.

Library code written for PyTorch checks ``has_torch_function(args)`` and hands the call to
``handle_torch_function``, which calls the ``__torch_function__(func, types, args, kwargs)`` of the arguments'
types (subclasses before their bases) until one does not return ``NotImplemented``. Plain Tensors and Parameters
take no part; a Tensor subclass does (with Tensor's default ``__torch_function__``: run the function with the
protocol disabled and return the result as the subclass), as in PyTorch.

Example:
    >>> from torchish.overrides import has_torch_function, handle_torch_function
    >>> def scale(x, k=2):
    ...     if has_torch_function((x,)):
    ...         return handle_torch_function(scale, (x,), x, k=k)
    ...     return x * k
"""
from __future__ import annotations

import contextlib
import inspect
import warnings

from . import _subclass
from ._subclass import _disable_torch_function_subclass, _overloaded
from ._tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function",
           "is_tensor_like", "enable_dispatch", "TorchFunctionMode", "BaseTorchFunctionMode"]

def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor's default ``__torch_function__``: run ``func`` and return Tensor results as ``cls``."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with _disable_torch_function_subclass():
        ret = func(*args, **kwargs)
        if _subclass.nowrap(func):
            return ret
        return _subclass.convert(ret, cls)


Tensor.__torch_function__ = classmethod(_tensor_torch_function)  # torch.Tensor has it (subclasses call super())


def enable_dispatch() -> None:
    """Hand torchish's functions' calls to ``__torch_function__`` from now on. The first Tensor subclass defined
    does this; a program whose only participants are non-Tensor classes (``torch.overrides`` duck types) calls it
    first (PyTorch dispatches them always; torchish checks arguments only once asked, see ``torchish._subclass``)."""
    _subclass.activate()


def has_torch_function(relevant_args) -> bool:
    """Whether any of ``relevant_args`` (an iterable) defines ``__torch_function__`` (Tensor subclasses do;
    Tensor and Parameter do not count), or a ``TorchFunctionMode`` is on and there is any argument (PyTorch's
    answer: a mode takes every call)."""
    if _subclass.mode_dispatch_on():
        return any(True for _ in relevant_args)
    return any(_overloaded(a) for a in relevant_args)


def has_torch_function_unary(obj) -> bool:
    return _overloaded(obj) or _subclass.mode_dispatch_on()


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def _overloaded_args(relevant_args):
    """The arguments whose types implement the protocol, one per type, subclasses before their bases. A plain
    Tensor among them counts too, as in PyTorch's Python (``has_torch_function`` does not count it; torchish's
    functions leave it out where PyTorch's builtins do)."""
    if _subclass._is_torch_function_all_disabled():  # (duck types still take part without subclasses)
        return []
    types, args = [], []
    for arg in relevant_args:
        t = type(arg)
        if t in types or (t is not Tensor and not _overloaded(arg)):
            continue
        index = len(args)
        for i, seen in enumerate(types):
            if issubclass(t, seen):
                index = i
                break
        types.insert(index, t)
        args.insert(index, arg)
    return args


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of the overloaded arguments in turn and return
    the first result that is not ``NotImplemented``; a ``TypeError`` if all decline."""
    return _dispatch(public_api, relevant_args, args, kwargs)


def _dispatch(func, relevant_args, args, kwargs, names=None, mode_types=None):
    """:func:`handle_torch_function` with ``args`` and ``kwargs`` handed on as they are (torchish's dispatched
    functions build them as PyTorch's do: ``torchish._torch_function_call``; ``kwargs`` may be None); ``names``
    says how the error names ``func`` (``_torchish_public`` for a builtin, ``_torchish_python``), else ``func``'s
    own attributes do; ``mode_types``, where given, the ``types`` a mode receives (``type(self)``)."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(map(type, overloaded))
    declined = ""
    if _subclass.mode_dispatch_on():
        with _pop_mode_temporarily() as mode:  # (calls inside it go to the next mode, or run)
            result = mode.__torch_function__(func, types if mode_types is None else mode_types, args, kwargs)
        if result is not NotImplemented:
            return result
        declined = f"\n  - mode object {mode!r}"
    for arg in overloaded:
        impl = inspect.getattr_static(type(arg), "__torch_function__", None)
        if inspect.isfunction(impl):
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and will be an error in "
                          "future, please define it as a classmethod.", DeprecationWarning, stacklevel=3)
        result = arg.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    names = names if names is not None else vars(func) if hasattr(func, "__dict__") else {}
    builtin = names.get("_torchish_public")  # (one of torchish's own, as PyTorch's C++ ones)
    if builtin is not None:
        kinds = declined + "".join(f"\n  - tensor subclass {type(arg)}" for arg in overloaded)
        raise TypeError(f"Multiple dispatch failed for '{builtin}'; all __torch_function__ handlers returned "
                        f"NotImplemented:\n{kinds}")
    name = names.get("_torchish_python") or f"{func.__module__}.{func.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(arg) for arg in overloaded]}")


def is_tensor_like(inp) -> bool:
    """Whether ``inp`` is a Tensor or implements ``__torch_function__`` (an instance or a class)."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")



class TorchFunctionMode:
    """``torch.overrides.TorchFunctionMode``: inside ``with Mode():`` every call of a function PyTorch dispatches
    (``torch.*``, ``nn.functional``, Tensor methods, operators and properties, factory functions too) goes first to
    the mode's ``__torch_function__(func, types, args, kwargs)``, with the mode taken off this thread's stack while
    it runs, so the calls it makes go to the next mode (or run). ``types`` holds the types of the arguments that
    take part (Tensor subclasses; Tensor itself for the functions PyTorch writes in Python), as PyTorch's do. A mode
    that returns ``NotImplemented`` hands the call on to the arguments' ``__torch_function__``."""

    inner: "TorchFunctionMode"

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each call as it is (a base for modes that handle a few functions)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode) -> None:
    _subclass.push_mode(mode)


def _pop_mode():
    return _subclass.pop_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _get_current_function_mode_stack() -> list:
    """The modes entered on this thread, outermost first."""
    return list(_subclass.mode_stack())


def _get_current_function_mode():
    stack = _subclass.mode_stack()
    return stack[-1] if stack else None


def _is_torch_function_mode_enabled() -> bool:
    return _subclass.mode_dispatch_on()
