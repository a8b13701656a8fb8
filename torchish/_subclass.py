"""Tensor subclasses and the ``__torch_function__`` protocol on torchish's own functions.

PyTorch hands every call of a public function or Tensor method whose arguments include a Tensor subclass (or an
object whose type defines ``__torch_function__``) to that type's ``__torch_function__(func, types, args,
kwargs)``; Tensor's default implementation runs ``func`` with the protocol off and returns Tensor results as the
subclass (``_convert``), so ``Sub`` tensors stay ``Sub`` through ``x * 2``, ``torch.cat`` or ``F.relu``, and a
logging subclass sees each call.

Checking every argument of every call would slow the plain programs that never define a subclass, so the check
is off until one is defined: the first Tensor subclass created outside torchish (``Tensor.__init_subclass__``)
puts dispatching wrappers in place of the functions PyTorch dispatches (``_overridable``: the ``torch``,
``torch.nn.functional``, ``linalg``, ``fft`` and ``special`` functions, Tensor's methods and operators and its
tensor-valued properties). The wrapper is the public function from then on, and is what ``__torch_function__``
receives as ``func`` (``func is torch.add`` holds). A class statement that defines ``__torch_function__`` on a
class that is not a Tensor (PyTorch's ``ScalarTensor`` duck type) turns dispatch on as well: while dispatch is off,
``builtins.__build_class__`` is wrapped (``_build_class``: one attribute lookup per class created, nothing per
call), so the class's ``HANDLED_FUNCTIONS[torch.mean]`` entries, written after the class, hold the wrappers.
``torchish.overrides.enable_dispatch()`` turns it on explicitly (for a duck class made before torchish was
imported, or by ``type(...)``). References to a function taken before dispatch turned on (``from torchish import
add``) keep the plain function.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import sys
import threading

from ._tensor import Tensor

_ACTIVE = [False]
_LOCAL = threading.local()
_HANDLE = []  # torchish.overrides.handle_torch_function, once dispatch is on
_REPLACED = []  # (namespace, name, what it held) for each wrapper put in place: deactivate() puts them back


def _disabled() -> bool:
    return getattr(_LOCAL, "disabled", 0) > 0


class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass()``: inside the block Tensor subclasses take no part in the
    protocol (their operations run as Tensor's); other ``__torch_function__`` types still do."""
    _key = "disabled"

    def __enter__(self):
        setattr(_LOCAL, self._key, getattr(_LOCAL, self._key, 0) + 1)
        return self

    def __exit__(self, *exc):
        setattr(_LOCAL, self._key, getattr(_LOCAL, self._key, 0) - 1)
        return False


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """``torch._C.DisableTorchFunction()``: inside the block no type takes part in the protocol."""
    _key = "all_disabled"

    def __enter__(self):
        super().__enter__()
        _LOCAL.disabled = getattr(_LOCAL, "disabled", 0) + 1
        return self

    def __exit__(self, *exc):
        _LOCAL.disabled -= 1
        return super().__exit__(*exc)


_disable_torch_function_subclass = DisableTorchFunctionSubclass


def _is_torch_function_enabled() -> bool:
    """``torch._C._is_torch_function_enabled()``."""
    return not getattr(_LOCAL, "all_disabled", 0)


def _overloaded(obj) -> bool:
    """Whether ``obj`` takes part: its type defines ``__torch_function__``, other than Tensor's own and the disabled
    one (Parameter's); a Tensor subclass not inside ``_disable_torch_function_subclass``."""
    t = type(obj)
    if t is Tensor:
        return False
    impl = getattr(t, "__torch_function__", None)
    if impl is None or impl is _disabled_torch_function_impl:
        return False
    if issubclass(t, Tensor):
        return not _disabled()
    return not getattr(_LOCAL, "all_disabled", 0)


_NOWRAP = {"grad", "_base"}  # (PyTorch's get_default_nowrap_functions: returned as they are)


class _DisabledTorchFunctionImpl:
    """``torch._C._disabled_torch_function_impl``: as a class's ``__torch_function__`` it takes the class out of
    the protocol (Parameter's: operations on parameters return plain Tensors). Not a function, so that it does not
    bind as a method."""

    def __call__(self, func, types, args=(), kwargs=None):
        with _disable_torch_function_subclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


def convert(ret, cls):
    """PyTorch's ``torch._tensor._convert``: Tensor results (also inside tuples, lists and named tuples) as ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


def _relevant(args, kwargs):
    """The arguments that take part: each positional and keyword argument, and the items of a list or tuple one."""
    out = []
    for a in (*args, *kwargs.values()) if kwargs else args:
        t = type(a)
        if t is Tensor or t is int or t is float or t is bool or a is None:
            continue
        if t is list or t is tuple:
            out += [x for x in a if type(x) is not Tensor and _overloaded(x)]
        elif _overloaded(a):
            out.append(a)
    return out


def _with_tensors(args, kwargs):
    """The arguments that take part in a function PyTorch writes in Python: those of :func:`_relevant` and the
    plain Tensors among them (its Python ``handle_torch_function`` lists Tensor's type too)."""
    out = []
    for a in (*args, *kwargs.values()) if kwargs else args:
        if type(a) is list or type(a) is tuple:
            out += [x for x in a if type(x) is Tensor or _overloaded(x)]
        elif type(a) is Tensor or _overloaded(a):
            out.append(a)
    return out


def _dispatching(fn, name, public, func=None):
    """``fn`` behind the protocol's check; ``__torch_function__`` receives ``func`` (the wrapper itself unless
    given: an operator passes the method PyTorch passes, ``Tensor.mul`` for ``x * 2``). A binary operator whose
    handlers all decline (or raise a TypeError) returns ``NotImplemented``, as PyTorch's do, so that Python tries
    the other operand's reflected method and otherwise says "unsupported operand type(s)"."""
    binary = name in _BINARY_OPERATORS
    self_only = name == "__contains__"  # (PyTorch's asks its self only: an element of another type is an error)
    python = _python_name(public, name)
    layout = _functional_layout(fn, name) if python is not None and public == "torch.nn.functional" else None

    def dispatching(*args, **kwargs):
        relevant = _relevant(args[:1], None) if self_only else _relevant(args, kwargs)
        if relevant:
            target = func or dispatching
            if python is not None:
                if layout is not None:
                    args, kwargs = layout(args, kwargs)
                    if kwargs.get("return_indices") is True:  # (PyTorch's F.max_pool2d with it is another function)
                        target = getattr(sys.modules["torchish.nn.functional"], f"{name}_with_indices", target)
                relevant = _with_tensors(args[:1] if self_only else args, None if self_only else kwargs)
            if not binary:
                return _HANDLE[0](target, relevant, *args, **kwargs)
            try:
                return _HANDLE[0](func or dispatching, relevant, *args, **kwargs)
            except TypeError:
                return NotImplemented
        return fn(*args, **kwargs)
    functools.update_wrapper(dispatching, fn)
    dispatching.__name__ = _own_name(public, name)
    if python is not None:  # (PyTorch's names, for the error when every handler declines)
        dispatching._torchish_python = python
    else:
        dispatching._torchish_public = _builtin_name(public, name)
    dispatching._torchish_plain = fn
    return dispatching


def _functional_layout(fn, name):
    """``(args, kwargs) -> (args, kwargs)`` as PyTorch's Python ``torch.nn.functional`` functions hand them to
    ``__torch_function__``: the parameters without a default positionally, every one with a default by keyword,
    with its default where the call leaves it out (``F.relu(x, False)`` and ``F.relu(x)`` both give ``(x,),
    {"inplace": False}``). Arguments that do not fit the signature are handed on as given (the function raises)."""
    from . import _overridable as names
    sig = None
    left_out = names.FUNCTIONAL_LEFT_OUT.get(name, ())

    def layout(args, kwargs):
        nonlocal sig
        if sig is None:
            sig = inspect.signature(fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        bound.apply_defaults()
        pos, kw = [], {}
        for key, p in sig.parameters.items():
            value = bound.arguments[key]
            if p.kind is p.VAR_POSITIONAL:
                pos += value
            elif p.kind is p.VAR_KEYWORD:
                kw.update(value)
            elif p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
                pos.append(value)
            elif not (key in left_out and value is p.default):
                kw[key] = value
        return tuple(pos), kw
    return layout


def _own_name(public, name):
    """The ``__name__`` of PyTorch's ``public.name``."""
    from . import _overridable as names
    if public in ("torch.linalg", "torch.fft", "torch.special"):
        return f"{public[6:]}_{name}"
    return names.OWN_NAMES.get(f"{public}.{name}", name)


def _python_name(public, name):
    """``module.name`` of the function PyTorch writes in Python that ``public.name`` is, or None for a builtin."""
    from . import _overridable as names
    own = _own_name(public, name)
    if public == "torch.nn.functional" and name in names.PYTHON_FUNCTIONAL + names.PYTHON_FUNCTIONAL_UNLISTED:
        return f"{public}.{own}"
    if public == "torch.Tensor" and name in names.PYTHON_TENSOR:
        return f"torch._tensor.{own}"
    return names.PYTHON_TORCH.get(name) if public == "torch" else None


def _builtin_name(public, name):
    """The name PyTorch's "Multiple dispatch failed for '...'" gives the builtin ``public.name``."""
    from . import _overridable as names
    if public in ("torch.linalg", "torch.fft", "torch.special"):
        return f"{public}.{_own_name(public, name)}"
    return names.BUILTIN_NAMES.get(f"{public}.{name}", f"{public}.{name}")


# the method PyTorch hands to ``__torch_function__`` for an operator (``x * 2``: ``Tensor.mul``)
_OPERATOR_METHODS = {
    "__abs__": "abs", "__add__": "add", "__div__": "div", "__eq__": "eq", "__ge__": "ge", "__gt__": "gt",
    "__iadd__": "add_", "__idiv__": "div_", "__ifloordiv__": "floor_divide_", "__imod__": "remainder_",
    "__imul__": "mul_", "__isub__": "sub_", "__itruediv__": "div_", "__le__": "le", "__lt__": "lt",
    "__matmul__": "matmul", "__mod__": "remainder", "__mul__": "mul", "__ne__": "ne", "__neg__": "neg",
    "__pos__": "positive", "__radd__": "add", "__rand__": "bitwise_and", "__rmul__": "mul",
    "__ror__": "bitwise_or", "__rxor__": "bitwise_xor", "__sub__": "sub", "__truediv__": "div",
}


_BINARY_OPERATORS = frozenset(
    f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "matmul", "and", "or",
                              "xor", "lshift", "rshift") for p in ("", "r", "i")
) | {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}


def _put(holder, name, wrapper):
    _REPLACED.append((holder, name, holder.__dict__.get(name, _INHERITED)))
    setattr(holder, name, wrapper)


_INHERITED = object()  # (a Tensor method defined on a base class: deactivate() deletes the wrapper again)


def _replace(holder, names, public, plain_to_wrapper):
    is_class = isinstance(holder, type)
    wrapped = {}
    for name in names:
        fn = getattr(holder, name, None)
        if fn is None or isinstance(fn, type) or getattr(fn, "_torchish_plain", None) is not None:
            continue
        if not callable(fn) or (is_class and isinstance(inspect.getattr_static(holder, name),
                                                        (staticmethod, classmethod))):
            continue
        wrapped[name] = fn
    for name, fn in wrapped.items():
        if name not in _OPERATOR_METHODS:
            _put(holder, name, plain_to_wrapper.setdefault(id(fn), _dispatching(fn, name, public)))
    for name, fn in wrapped.items():
        if name in _OPERATOR_METHODS:
            _put(holder, name, _dispatching(fn, name, public, getattr(holder, _OPERATOR_METHODS[name], None)))


def _rebind_internal_references(plain_to_wrapper):
    """torchish's own modules call the functions through names they imported (``nn.Linear`` calls
    ``F.linear``'s function directly): those names take the wrappers too, so that a module called on a subclass
    hands ``F.linear`` to ``__torch_function__`` as PyTorch's does. A public function that wraps another
    (``_torchish_stands_for``: ``torchish.relu`` sends a sparse tensor to its method, else calls ``ops.unary.relu``)
    stands for it: the names holding the wrapped function take the wrapper's dispatcher."""
    for wrapper in list(plain_to_wrapper.values()):
        inner = getattr(getattr(wrapper, "_torchish_plain", None), "_torchish_stands_for", None)
        if inner is not None:
            plain_to_wrapper.setdefault(id(inner), wrapper)
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or mod_name.split(".")[0] != "torchish" or mod_name == __name__:
            continue
        space = getattr(mod, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for key, value in list(space.items()):
            wrapper = plain_to_wrapper.get(id(value)) if callable(value) else None
            plain = getattr(wrapper, "_torchish_plain", None)
            if wrapper is not None and (plain is value or getattr(plain, "_torchish_stands_for", None) is value):
                _REPLACED.append((space, key, value))
                space[key] = wrapper


def _replace_properties(names):
    for name in names:
        prop = getattr(Tensor, name, None)
        if isinstance(prop, property) and name not in _NOWRAP and prop.fget is not None:
            _put(Tensor, name, property(_dispatching(prop.fget, name, "torch.Tensor"), prop.fset, prop.fdel, prop.__doc__))


def activate():
    """Put the dispatching wrappers in place (once)."""
    if _ACTIVE[0]:
        return
    _ACTIVE[0] = True
    if builtins.__build_class__ is _build_class:  # (not when another tool wrapped it after us: _build_class idles)
        builtins.__build_class__ = _BUILD_CLASS
    from . import _overridable as names
    from .overrides import handle_torch_function
    _HANDLE.append(handle_torch_function)
    torchish = sys.modules["torchish"]
    functions = {}  # id(plain function) -> its wrapper
    _replace(torchish.nn.functional, names.FUNCTIONAL + names.PYTHON_FUNCTIONAL_UNLISTED, "torch.nn.functional",
             functions)
    _replace(torchish.linalg, names.LINALG, "torch.linalg", functions)
    _replace(torchish.fft, names.FFT, "torch.fft", functions)
    _replace(torchish.special, names.SPECIAL, "torch.special", functions)
    _replace(torchish, names.TORCH, "torch", functions)
    _replace(Tensor, names.TENSOR, "torch.Tensor", {})
    _replace_properties(names.TENSOR_PROPERTIES)
    _rebind_internal_references(functions)


def deactivate():
    """Take the wrappers away again (the test suite does, after a test that defined a Tensor subclass, so that
    the tests after it run on the plain functions as a program without subclasses does)."""
    while _REPLACED:
        holder, name, old = _REPLACED.pop()
        if isinstance(holder, dict):
            holder[name] = old
        elif old is _INHERITED:
            delattr(holder, name)
        else:
            setattr(holder, name, old)
    _HANDLE.clear()
    _ACTIVE[0] = False
    if builtins.__build_class__ is _BUILD_CLASS:
        builtins.__build_class__ = _build_class


def _init_subclass(cls, **kwargs):
    super(Tensor, cls).__init_subclass__(**kwargs)
    impl = getattr(cls, "__torch_function__", None)
    if cls.__module__.split(".")[0] != "torchish" and impl is not _disabled_torch_function_impl:
        activate()


_BUILD_CLASS = builtins.__build_class__
_LIBRARIES = ("torchish", "torch")  # (whose classes with __torch_function__ are no user's duck types: PyTorch's
                                    # own, where a program or test imports it beside torchish)


def _build_class(func, name, *bases, **kwargs):
    """``builtins.__build_class__`` (what a ``class`` statement calls) while dispatch is off: a class that has a
    ``__torch_function__`` of a class defined outside torchish and PyTorch (its own or a base's) turns dispatch on,
    as PyTorch dispatches such a duck type from the start. Tensor subclasses do through ``__init_subclass__``."""
    cls = _BUILD_CLASS(func, name, *bases, **kwargs)
    if _ACTIVE[0] or not isinstance(cls, type):
        return cls
    try:  # (a metaclass's __getattr__ may raise anything: the class statement must not fail here)
        duck = getattr(cls, "__torch_function__", None) is not None
    except Exception:  # noqa: BLE001
        return cls
    if duck:
        for owner in cls.__mro__:
            if "__torch_function__" in owner.__dict__:
                if str(owner.__module__).split(".")[0] not in _LIBRARIES and \
                        owner.__dict__["__torch_function__"] is not _disabled_torch_function_impl:
                    activate()
                break
    return cls


builtins.__build_class__ = _build_class


def _make_subclass(cls, data, require_grad=False, dispatch_sizes_strides_policy=None, dispatch_device=False,
                   dispatch_layout=False, _extra_dispatch_keys=None, storage_size=None):
    """``torch.Tensor._make_subclass(cls, data, require_grad)``: a ``cls`` object over ``data``'s storage (a
    detached alias), requiring grad when asked."""
    from .ops.resize import take_storage
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("cls must be a type (got " + type(cls).__name__ + ")")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {type(data).__name__}")
    if type(require_grad) is not bool:
        raise TypeError(f"_make_subclass(): argument 'require_grad' (position 3) must be bool, not "
                        f"{type(require_grad).__name__}")
    t = cls._make(data._d)
    if require_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    take_storage(t, data, share_version=True)
    return t


Tensor.__init_subclass__ = classmethod(_init_subclass)
Tensor._make_subclass = staticmethod(_make_subclass)
