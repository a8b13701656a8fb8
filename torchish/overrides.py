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
import functools
import inspect
import sys
import warnings

from . import _subclass
from ._subclass import _disable_torch_function_subclass, _overloaded
from ._tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function",
           "is_tensor_like", "enable_dispatch", "TorchFunctionMode", "BaseTorchFunctionMode",
           "get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "resolve_name",
           "is_tensor_method_or_property", "wrap_torch_function", "get_default_nowrap_functions",
           "enable_reentrant_dispatch"]

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


# ----------------------------------------------------------------------------------------------------------------
# The tables of ``torch.overrides``: which functions dispatch, under which names.

def _listed(leave_out=()):
    """(holder, PyTorch's name of it, [(name, function)]) of every function PyTorch dispatches, as they are now
    (after a subclass was defined they are the dispatching versions: the objects a program calls), without the
    namespaces in ``leave_out`` and without the Tensor methods PyTorch's tables leave out (``new_zeros``...)."""
    from . import _overridable
    ignored = {n[len("Tensor."):] for n in _overridable.IGNORED if n.startswith("Tensor.")}
    out = []
    for holder, names, public in _subclass._namespaces():
        if public in leave_out:
            continue
        if holder is Tensor:
            names = [n for n in names if n not in ignored]
        fns = [(n, holder.__dict__[n] if isinstance(holder, type) and n in holder.__dict__ else getattr(holder, n, None))
               for n in names]
        out.append((holder, public, [(n, f) for n, f in fns if callable(f)]))
    return out


def get_overridable_functions() -> dict:
    """``{namespace: [functions]}`` of the functions that hand their calls to ``__torch_function__``:
    ``torchish`` (PyTorch's ``torch``), ``torchish.Tensor`` (its methods), ``nn.functional``, ``linalg``, ``fft``,
    ``special``."""
    return {holder: [f for _, f in fns] for holder, _, fns in _listed(("torch.autograd", "torch.nn.init"))}


def _names_by_id():
    """``{id(function): PyTorch's name}`` of the functions as they are now (not cached: defining a subclass swaps
    them for their dispatching versions)."""
    names = {}
    for holder, public, fns in _listed():
        for n, f in fns:
            names.setdefault(id(f), f"{public}.{n}")
    from . import _overridable
    torchish = sys.modules["torchish"]
    for name in _overridable.IGNORED:
        obj = _resolve(torchish, name)
        if obj is not None:
            names.setdefault(id(obj), "torch." + name)
    return names


def _resolve(root, dotted):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _class_attr(name):
    """The attribute ``name`` as Tensor's class defines it (a property object, not its value)."""
    for klass in Tensor.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def resolve_name(f):
    """PyTorch's name of a function that takes part in ``__torch_function__`` (``"torch.add"``,
    ``"torch.Tensor.add"``, ``"torch.Tensor.grad.__get__"``), or None."""
    if getattr(f, "__name__", None) in ("__get__", "__set__"):
        from . import _overridable
        prop = getattr(f, "__self__", None)
        for attr in _overridable.TENSOR_PROPERTIES + _overridable.TENSOR_PRIVATE_PROPERTIES:
            if prop is not None and _class_attr(attr) is prop:
                return f"torch.Tensor.{attr}.{f.__name__}"
    return _names_by_id().get(id(f))


def is_tensor_method_or_property(func) -> bool:
    """Whether ``func`` is a Tensor method or a property getter that ``__torch_function__`` sees (such functions
    receive the Tensor as their first argument)."""
    if getattr(func, "__name__", None) == "__get__":
        return True
    tensor_fns = {id(f) for holder, _, fns in _listed() if holder is Tensor for _, f in fns}
    return id(func) in tensor_fns


def get_ignored_functions() -> set:
    """The public functions that take part in no ``__torch_function__`` dispatch (factories such as ``zeros`` and
    ``tensor``, settings, ``Tensor.new_*``), as ``torch.overrides.get_ignored_functions`` lists them."""
    from . import _overridable
    torchish = sys.modules["torchish"]
    found = (_resolve(torchish, name) for name in _overridable.IGNORED)
    return {f for f in found if f is not None}


def get_testing_overrides() -> dict:
    """``{function: dummy}`` for every dispatching function: each dummy takes the function's arguments and returns
    -1 (PyTorch's test helper for ``__torch_function__`` implementations)."""
    out = {}
    for _, _, fns in _listed(("torch.autograd",)):
        for _, f in fns:
            def dummy(*args, **kwargs):
                return -1
            try:
                dummy.__signature__ = inspect.signature(f)
            except (TypeError, ValueError):
                pass
            out[f] = dummy
    return out


def get_default_nowrap_functions() -> set:
    """Functions that Tensor's default ``__torch_function__`` does not wrap into the subclass: the getters of
    ``_base``, ``grad`` and ``_grad``."""
    return {p.__get__ for p in map(_class_attr, ("_base", "grad", "_grad")) if hasattr(p, "__get__")}


def wrap_torch_function(dispatcher):
    """Decorator: the function hands its calls to ``__torch_function__`` of the arguments ``dispatcher(*args,
    **kwargs)`` returns, as PyTorch's."""
    def decorator(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return decorator


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """PyTorch's re-entry into ``__torch_dispatch__`` state; torchish has no ``__torch_dispatch__``, so, as
    PyTorch outside one, this raises."""
    raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.")
    yield
