"""Tensor subclasses and the ``__torch_function__`` protocol on torchish's own functions.

PyTorch hands every call of a public function or Tensor method whose arguments include a Tensor subclass (or an
object whose type defines ``__torch_function__``) to that type's ``__torch_function__(func, types, args,
kwargs)``; Tensor's default implementation runs ``func`` with the protocol off and returns Tensor results as the
subclass (``_convert``), so ``Sub`` tensors stay ``Sub`` through ``x * 2``, ``torch.cat`` or ``F.relu``, and a
logging subclass sees each call.

Checking every argument of every call would slow the plain programs that never define a subclass, so the check
is off until one is defined: the first Tensor subclass created outside torchish (``Tensor.__init_subclass__``)
makes the functions PyTorch dispatches dispatch (``_overridable``: the ``torch``, ``torch.nn.functional``,
``linalg``, ``fft``, ``special`` and ``autograd`` functions, Tensor's methods, operators and properties). The
functions stay the same objects, their code swapped for a check that runs the original code when no argument takes
part (``_torch_function_call``), so ``func is torch.mean`` holds in ``__torch_function__`` for references taken
before dispatch turned on (a ``HANDLED_FUNCTIONS = {torch.mean: ...}`` built at a module's top, ``from torchish
import mean``) as for those taken after, and a program without subclasses runs the functions untouched. A class
statement that defines ``__torch_function__`` on a class that is not a Tensor (PyTorch's ``ScalarTensor`` duck
type) turns dispatch on as well: while dispatch is off, ``builtins.__build_class__`` is wrapped (``_build_class``:
one attribute lookup per class created, nothing per call). ``torchish.overrides.enable_dispatch()`` turns it on
explicitly (for a duck class made before torchish was imported, or by ``type(...)``).
"""
from __future__ import annotations

import builtins
import collections
import inspect
import sys
import threading

from ._tensor import Tensor

_ACTIVE = [False]
_LOCAL = threading.local()
_HANDLE = []  # torchish.overrides._dispatch, once dispatch is on
_UNDO = []  # what deactivate() runs, last first: each puts back a function's code or a name's value


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
    """``torch._C._is_torch_function_enabled()``: False inside ``DisableTorchFunctionSubclass`` as inside
    ``DisableTorchFunction`` (PyTorch's answer; :func:`_is_torch_function_all_disabled` tells them apart)."""
    return not getattr(_LOCAL, "disabled", 0)


def _is_torch_function_all_disabled() -> bool:
    """``torch._C._is_torch_function_all_disabled()``: inside ``DisableTorchFunction``."""
    return bool(getattr(_LOCAL, "all_disabled", 0))


# ``TorchFunctionMode``s (``torchish.overrides``): each thread's stack of entered modes is ``_LOCAL.modes``;
# ``MODES_ENTERED[0]`` counts the modes entered on any thread, the one flag the dispatching check reads before it
# looks at the thread's stack (a plain Tensor's property read checks nothing else)
MODES_ENTERED = [0]
MODE_MARK = [object()]  # what the check finds when only a mode takes part (no argument does: ``_dispatch`` drops it)


def mode_stack() -> list:
    """This thread's stack of entered ``TorchFunctionMode``s, innermost last."""
    stack = getattr(_LOCAL, "modes", None)
    if stack is None:
        stack = _LOCAL.modes = []
    return stack


def mode_dispatch_on() -> bool:
    """Whether a call on this thread goes to a mode first: one is entered and ``DisableTorchFunction`` is not (the
    global count first: with no mode anywhere, no thread-local lookup)."""
    return MODES_ENTERED[0] > 0 and bool(getattr(_LOCAL, "modes", None)) and not getattr(_LOCAL, "all_disabled", 0)


def push_mode(mode) -> None:
    activate()  # (a mode sees every call: the functions must check)
    mode_stack().append(mode)
    MODES_ENTERED[0] += 1


def pop_mode():
    stack = mode_stack()
    if not stack:
        raise RuntimeError("trying to pop from empty mode stack")
    MODES_ENTERED[0] -= 1
    return stack.pop()


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


_NOWRAP = ("grad", "_base")  # (PyTorch's get_default_nowrap_functions: the getters' results returned as they are)


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


def nowrap(func) -> bool:
    """Whether ``func`` is one whose result Tensor's default ``__torch_function__`` returns as it is (PyTorch's
    ``get_default_nowrap_functions``: ``Tensor.grad.__get__``, whose result stays the tensor stored)."""
    owner = getattr(func, "__self__", None)
    return (isinstance(owner, property) and func.__name__ == "__get__"
            and any(owner is inspect.getattr_static(Tensor, name, None) for name in _NOWRAP))


def _put(holder, name, value):
    """Set ``holder.name`` until ``deactivate``."""
    old = holder.__dict__.get(name, _INHERITED)
    setattr(holder, name, value)
    _UNDO.append(lambda: delattr(holder, name) if old is _INHERITED else setattr(holder, name, old))


_INHERITED = object()  # (a Tensor attribute defined on a base class: deactivate() deletes the one put on Tensor)


def _dispatch_functions(holder, names, public, swapped):
    """Make each function ``holder.name`` dispatch in place (``_torch_function_call.dispatch_in_place``); a
    function under several names dispatches as the first (``swapped``: id -> (function, its plain copy, public,
    name)). Operators come after (``_dispatch_operators``); callables that are not Python functions take no part."""
    from . import _torch_function_call as call
    is_class = isinstance(holder, type)
    for name in _own_names_first(holder, names):
        fn = getattr(holder, name, None)
        if not call.swappable(fn) or id(fn) in swapped or (is_class and name in call.OPERATOR_METHODS):
            continue
        if is_class and isinstance(inspect.getattr_static(holder, name), (staticmethod, classmethod)):
            continue
        swapped[id(fn)] = (fn, call.dispatch_in_place(fn, name, public, undo=_UNDO), public, name)


def _dispatch_operators(names, swapped):
    """Tensor's operators that hand another method (``__mul__``: ``Tensor.mul``) get a wrapper in its dict."""
    from . import _torch_function_call as call
    made = {}  # (id(operator function), method) -> its wrapper: one object under two names stays one (``__idiv__``)
    for name in names:
        fn = getattr(Tensor, name, None)
        method = call.OPERATOR_METHODS.get(name)
        if method is None or fn is getattr(Tensor, method, None):
            continue  # (an operator that is the method itself, ``Tensor.__neg__ is Tensor.neg``, dispatches with it)
        if call.swappable(fn):
            key = id(fn), method
            if key not in made:
                plain = swapped[id(fn)][1] if id(fn) in swapped else fn
                made[key] = call.operator_wrapper(plain, name, "torch.Tensor", getattr(Tensor, method, None))
            _put(Tensor, name, made[key])


def _dispatch_properties(getters, setters, swapped):
    """Tensor's properties dispatch reads (and the ``setters`` assignments) as PyTorch's do. A property whose
    function other names share (``is_xla``, ``is_mps``, ... one ``_false``) is replaced by one with copies."""
    from . import _torch_function_call as call
    found = [(name, inspect.getattr_static(Tensor, name, None)) for name in getters]
    found = [(name, p) for name, p in found if isinstance(p, property) and call.swappable(p.fget)]
    uses = collections.Counter(id(f) for _, p in found for f in (p.fget, p.fset) if f is not None)
    for name, prop in found:
        fns = (prop.fget, prop.fset if name in setters and call.swappable(prop.fset) else None)
        if any(f is not None and (uses[id(f)] > 1 or id(f) in swapped) for f in fns):
            fget, fset = (None if f is None else call.copy_function(swapped[id(f)][1] if id(f) in swapped else f)
                          for f in fns)
            new = property(fget, fset if fset is not None else prop.fset, prop.fdel, prop.__doc__)
            _put(Tensor, name, new)
            prop, fns = new, (fget, fset)
        call.dispatch_property(prop, name, *fns, _UNDO)


def _namespaces():
    """(namespace, the names PyTorch dispatches there, PyTorch's name for it), in the order a function under
    several names dispatches as the first (``nn.functional`` before ``torch``: ``F.conv2d is torch.conv2d``)."""
    from . import _overridable as names
    torchish = sys.modules["torchish"]
    return ((torchish.nn.functional, names.FUNCTIONAL + names.PYTHON_FUNCTIONAL_UNLISTED, "torch.nn.functional"),
            (torchish.linalg, names.LINALG, "torch.linalg"), (torchish.fft, names.FFT, "torch.fft"),
            (torchish.special, names.SPECIAL, "torch.special"), (torchish, names.TORCH, "torch"),
            (Tensor, names.TENSOR, "torch.Tensor"), (torchish.autograd, names.AUTOGRAD, "torch.autograd"),
            (torchish.nn.init, names.INIT, "torch.nn.init"))


def _own_names_first(holder, names):
    """``names`` with those of functions that call themselves so first: a function under several names keeps the
    name it calls itself (``Tensor.numel``, not ``nelement``)."""
    return sorted(names, key=lambda n: getattr(getattr(holder, n, None), "__name__", None) != n)


def separate_aliases():
    """Give each name its own function object where PyTorch's are distinct (``Tensor.acosh_`` and ``arccosh_``,
    ``torch.vstack`` and ``row_stack``, ``torch.det`` and ``linalg.det``, ``F.celu`` and ``torch.celu``), so that
    ``__torch_function__`` receives the one called, under its name. Where PyTorch's are one builtin (``F.conv2d
    is torch.conv2d``) torchish's stay one. Run once, at the end of ``import torchish`` (a copy made later would not
    be the object a program took before)."""
    from . import _torch_function_call as call
    first = {}  # id(function) -> (public, name) of the name that keeps it
    for holder, listed, public in _namespaces():
        is_class = isinstance(holder, type)
        for name in _own_names_first(holder, listed):
            fn = getattr(holder, name, None)
            if not call.swappable(fn) or (is_class and name in call.OPERATOR_METHODS):
                continue
            if id(fn) not in first:
                first[id(fn)] = (public, name)
            elif call.pytorch_name(*first[id(fn)]) != call.pytorch_name(public, name):
                copy = call.copy_function(fn)
                copy.__name__ = name
                setattr(holder, name, copy)


def activate():
    """Make the functions PyTorch dispatches dispatch (once)."""
    if _ACTIVE[0]:
        return
    _ACTIVE[0] = True
    if builtins.__build_class__ is _build_class:  # (not when another tool wrapped it after us: _build_class idles)
        builtins.__build_class__ = _BUILD_CLASS
    from . import _overridable as names
    from . import _torch_function_call as call
    from .overrides import _dispatch
    _HANDLE.append(_dispatch)
    swapped = {}
    for holder, listed, public in _namespaces():
        _dispatch_functions(holder, listed, public, swapped)
    torchish = sys.modules["torchish"]
    # (dispatched though PyTorch's tables leave them out, so not in _namespaces, which the override tables read)
    _dispatch_functions(torchish.nn.functional, names.FUNCTIONAL_INPLACE_UNLISTED, "torch.nn.functional", swapped)
    _dispatch_functions(torchish, names.TORCH_INPLACE_UNLISTED, "torch", swapped)
    for name in names.MODE_ONLY:  # (a mode sees them; no argument takes part)
        fn = getattr(torchish, name, None)
        if call.swappable(fn) and id(fn) not in swapped:
            swapped[id(fn)] = (fn, call.dispatch_in_place(fn, name, "torch", call.relevant_mode_only, _UNDO),
                               "torch", name)
    _dispatch_operators(names.TENSOR, swapped)
    _dispatch_properties(names.TENSOR_PROPERTIES + names.TENSOR_PRIVATE_PROPERTIES, names.TENSOR_SETTERS, swapped)


def deactivate():
    """Put the functions' own code back (the test suite does, after a test that defined a Tensor subclass, so that
    the tests after it run as a program without subclasses does)."""
    while _UNDO:
        _UNDO.pop()()
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
