"""The call torchish hands to ``__torch_function__(func, types, args, kwargs)``, as PyTorch 2.13 hands it
(``torchish._subclass`` decides when dispatch is on and which functions take part).

``func``: the object the program itself reaches. Turning dispatch on does not put new function objects in place: it
swaps the *code* of each dispatched function for a short check (:func:`dispatch_in_place`) that runs the original
code, kept in a copy, when no argument takes part. So ``func is torch.mean`` and ``func is Tensor.split`` hold for
references taken before dispatch turned on (``HANDLED = {torch.mean: ...}`` at a module's top, ``from torchish
import mean``) as for those taken after, and a program without subclasses runs the functions untouched: no check at
all, not even a flag. Operators hand the method PyTorch hands (``x * 2``: ``Tensor.mul``) through a wrapper in
Tensor's class dict (:func:`operator_wrapper`); properties hand ``Tensor.shape.__get__`` and, for the ones PyTorch
dispatches on assignment, ``Tensor.grad.__set__`` (:func:`dispatch_property`).

``args``/``kwargs``: PyTorch's C++ builtins hand the arguments as the caller wrote them (``kwargs`` is None when
there are none); the functions it writes in Python (``torch.functional``, ``torch._tensor``, most of
``torch.nn.functional``) hand what their ``handle_torch_function`` call writes: the parameters without a default
positionally and every one with a default by keyword, filled in (``torch.norm(x)``: ``(x,)``, ``{'p': 'fro',
'dim': None, 'keepdim': False, 'out': None, 'dtype': None}``), with the exceptions of :mod:`torchish._overridable`
(``LEFT_OUT``, ``BY_KEYWORD``, ``AS_WRITTEN``, ``TUPLED``) and ``_FIXUPS`` below.
"""
from __future__ import annotations

import inspect
import sys
import types

from . import _subclass

_PLACEHOLDER = ("__torchish_relevant__", "__torchish_plain__", "__torchish_slow__", "__torchish_tensor__",
                "__torchish_modes__")
_TEMPLATES: dict = {}  # (kind, number of free variables) -> the dispatching code

# the dispatching code's parameters and what it hands on, by kind: a function; a property's getter and setter (which
# look at ``self`` only, and first at whether it is a plain Tensor: those run often in torchish's own code)
_KINDS = {"call": ("*args, **kwargs", "args, kwargs", "*args, **kwargs", False),
          "get": ("self", "(self,), None", "self", True),
          "set": ("self, value", "(self, value), None", "self, value", True)}


# the dispatching code's file name. Python's ``warnings.warn(..., stacklevel=n)`` steps over the frames of a file
# whose name holds both "importlib" and "_bootstrap" (the import system's own), so that the warning a dispatched
# function raises for its caller (``x.resize(2)``: "non-inplace resize is deprecated", stacklevel=2) points at the
# caller's line, not at this check's frame, as it does without dispatch
_FRAME_NAME = "<torchish __torch_function__ check ({kind}, {n_free} free variables; a frame warnings skip as " \
              "importlib._bootstrap's)>"


def _template(kind, n_free):
    """The code a dispatched function runs: ``relevant(args, kwargs)`` finds the arguments that take part; with
    none, the original code (``plain``) runs; else ``slow`` hands the call to ``__torch_function__``. Python lets
    a function take new code only with as many free variables as its closure has cells, so the template names
    ``n_free`` unused ones. The callables are the code's constant (:func:`_code_for`)."""
    code = _TEMPLATES.get((kind, n_free))
    if code is None:
        params, handed, plain_args, self_only = _KINDS[kind]
        cells = [f"_cell{i}" for i in range(n_free)]
        lines = ["def _outer():"]
        if cells:
            lines.append(f"    {', '.join(cells)} = {', '.join(['None'] * n_free)}")
        lines += [f"    def dispatching({params}):",
                  f"        relevant, plain, slow, tensor, modes = {_PLACEHOLDER!r}"]
        indent = "        "
        if self_only:
            lines.append("        if type(self) is not tensor or modes[0]:")
            indent += "    "
        lines += [f"{indent}found = relevant({handed})",
                  f"{indent}if found:",
                  f"{indent}    return slow(found, {handed})",
                  f"        return plain({plain_args})"]
        if cells:
            lines.append(f"        ({', '.join(cells)},)")  # (unreachable: only makes them free variables)
        lines.append("    return dispatching")
        space: dict = {}
        source = compile("\n".join(lines), _FRAME_NAME.format(kind=kind, n_free=n_free), "exec")
        exec(source, space)  # noqa: S102
        code = _TEMPLATES[kind, n_free] = space["_outer"]().__code__
    return code


def _code_for(name, kind, n_free, relevant, plain, slow):
    code = _template(kind, n_free)
    consts = tuple((relevant, plain, slow, _subclass.Tensor, _subclass.MODES_ENTERED) if c == _PLACEHOLDER else c
                   for c in code.co_consts)
    code = code.replace(co_consts=consts, co_name=name)
    return code.replace(co_qualname=name) if hasattr(code, "co_qualname") else code


def copy_function(fn):
    """A function running ``fn``'s original code (its closure, defaults and attributes too)."""
    plain = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    plain.__kwdefaults__ = fn.__kwdefaults__
    plain.__dict__.update(fn.__dict__)
    plain.__qualname__, plain.__module__, plain.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    return plain


def swappable(fn) -> bool:
    return type(fn) is types.FunctionType


def dispatch_in_place(fn, name, public, relevant=None, undo=None):
    """Make ``fn`` itself dispatch (``public.name``, e.g. ``torch.norm``): ``__torch_function__`` receives ``fn``
    and the arguments in PyTorch's layout; ``__name__`` becomes PyTorch's (``linalg_norm``). Returns the plain copy
    that runs the original code; ``undo`` collects how to put ``fn`` back (``deactivate``)."""
    plain = copy_function(fn)
    slow = _slow(fn, name, public, plain)
    code, own = fn.__code__, fn.__name__
    had_wrapped = "__wrapped__" in fn.__dict__
    fn.__code__ = _code_for(own, "call", len(code.co_freevars), relevant or _relevant_for(name), plain, slow)
    fn.__name__ = _own_name(public, name)
    if not had_wrapped:
        fn.__wrapped__ = plain  # (inspect.signature reads the original parameters)
    names = _names(public, name)
    vars(fn).update(names)

    def put_back():
        fn.__code__, fn.__name__ = code, own
        for key in names:
            vars(fn).pop(key, None)
        if not had_wrapped:
            vars(fn).pop("__wrapped__", None)
    if undo is not None:
        undo.append(put_back)
    return plain


def operator_wrapper(plain, name, public, target):
    """A new function for Tensor's class dict: the operator ``name`` running ``plain``, handing ``target`` (the
    method PyTorch hands, ``Tensor.mul`` for ``__mul__``; ``__eq__`` hands itself when its ``self`` takes part)."""
    itself = []
    slow = _slow(target, name, public, plain, itself=itself if name in _ITSELF_FOR_SELF else None)
    wrapper = types.FunctionType(_code_for(name, "call", 0, _relevant_for(name), plain, slow), plain.__globals__,
                                 name)
    itself.append(wrapper)
    wrapper.__qualname__, wrapper.__module__, wrapper.__doc__ = plain.__qualname__, plain.__module__, plain.__doc__
    wrapper.__wrapped__ = plain
    return wrapper


def dispatch_property(prop, name, fget, fset, undo):
    """Make the property ``prop`` (``Tensor.name``) dispatch its reads, handing ``prop.__get__``, and with ``fset``
    its assignments, handing ``prop.__set__``: ``fget``/``fset`` are its functions made to dispatch (the
    property's own, or copies of them where other names share them). Only ``self`` takes part, as in PyTorch."""
    for fn, target, kind in ((fget, prop.__get__, "get"), (fset, prop.__set__, "set")):
        if fn is None:
            continue
        code = fn.__code__
        plain = copy_function(fn)
        slow = _slow(target, name, "torch.Tensor", plain, accessor=target.__name__)
        if not _takes_exactly(code, 1 if kind == "get" else 2):  # (torchish calls it with more, ``_mT(x, name)``)
            kind = "call"
        fn.__code__ = _code_for(code.co_name, kind, len(code.co_freevars), _relevant_self, plain, slow)
        undo.append(lambda fn=fn, code=code: setattr(fn, "__code__", code))


def _takes_exactly(code, n):
    """Whether the code takes ``n`` positional parameters and nothing else."""
    return (code.co_argcount == n and not code.co_kwonlyargcount and not code.co_posonlyargcount
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def _relevant_for(name):
    return _relevant_self if name == "__contains__" else _relevant_or_mode


def _relevant_or_mode(args, kwargs):
    """The participants (:func:`torchish._subclass._relevant`), or, with none and a ``TorchFunctionMode`` entered on
    this thread, a marker that hands the call to the mode all the same."""
    return _or_mode(_subclass._relevant(args, kwargs))


def _or_mode(found):
    """``found``, or the mode marker when no argument takes part and a mode is on."""
    return _subclass.MODE_MARK if not found and _subclass.mode_dispatch_on() else found


def relevant_mode_only(args, kwargs):
    """A mode takes part, no argument does (``_overridable.MODE_ONLY``: ``torch.zeros``, ``torch.tensor``)."""
    return _subclass.MODE_MARK if _subclass.mode_dispatch_on() else ()


def _relevant_self(args, kwargs):
    """The participants among ``self`` only (PyTorch's ``__contains__`` and property accessors ask only it)."""
    return _or_mode(_subclass._relevant(args[:1], None))


def _slow(target, name, public, plain, accessor=None, itself=None):
    """``(found, args, kwargs) -> result``: the call handed to the participants' ``__torch_function__`` (a binary
    operator that they all decline returns ``NotImplemented``, as PyTorch's do, so that Python tries the other
    operand's reflected method and otherwise says "unsupported operand type(s)")."""
    binary = name in _BINARY_OPERATORS
    self_only = name == "__contains__"
    python = _python_name(public, name) if accessor is None else None
    from . import _overridable as tables
    self_typed = accessor is not None or public == "torch.Tensor" and name in tables.SELF_TYPED
    layout = _layout(plain, f"{public}.{name}") if python is not None else None
    functional = public == "torch.nn.functional"
    names = _names(public, name, accessor)
    handle = _subclass._HANDLE

    def slow(found, args, kwargs):
        mode_types = None
        func = itself[0] if itself and (_subclass._relevant(args[:1], None) or found is _subclass.MODE_MARK and
                                        isinstance(args[0], _subclass.Tensor)) else target
        if layout is not None:
            args, kwargs = layout(args, kwargs)
            if functional and kwargs.get("return_indices") is True:  # (F.max_pool2d with it is another function)
                func = getattr(sys.modules["torchish.nn.functional"], f"{name}_with_indices", func)
        if python is not None:  # (the plain Tensors take part too, in PyTorch's Python handle_torch_function)
            found = _subclass._with_tensors(args[:1] if self_only else args, None if self_only else kwargs)
        else:
            if self_typed:  # (and in its property accessors and methods of ``self`` alone: a mode sees
                found = _subclass._with_tensors(args[:1], None)  # ``type(self)``, a Parameter's too)
                mode_types = (type(args[0]),) if args and isinstance(args[0], _subclass.Tensor) else None
            if not kwargs:
                kwargs = None
        if not binary:
            return handle[0](func, found, args, kwargs, names, mode_types)
        try:
            return handle[0](func, found, args, kwargs, names, mode_types)
        except TypeError:
            return NotImplemented
    return slow


def _layout(plain, qualified):
    """``(args, kwargs) -> (args, kwargs)`` as the ``handle_torch_function`` call of PyTorch's Python function
    ``qualified`` writes them: the parameters without a default positionally, every one with a default by keyword,
    with its default where the call leaves it out (``F.relu(x, False)`` and ``F.relu(x)`` both give ``(x,),
    {"inplace": False}``); ``*args`` spread. Arguments that do not fit the signature are handed on as given (the
    function raises); None for the functions that hand them as written."""
    from . import _overridable as tables
    if qualified in tables.AS_WRITTEN:
        return None
    left_out = tables.LEFT_OUT.get(qualified, ())
    by_keyword = tables.BY_KEYWORD.get(qualified, ())
    tupled = tables.TUPLED.get(qualified, ())
    fixup = _FIXUPS.get(qualified)
    sig = None

    def layout(args, kwargs):
        nonlocal sig
        if sig is None:
            sig = _signature(plain)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        bound.apply_defaults()
        pos, kw = [], {}
        for key, p in sig.parameters.items():
            value = bound.arguments[key]
            if key in tupled and value is not None:
                value = (value,) if isinstance(value, _subclass.Tensor) or not hasattr(value, "__iter__") else \
                    tuple(value.values()) if isinstance(value, dict) else tuple(value)
            if p.kind is p.VAR_POSITIONAL:
                pos += value
            elif p.kind is p.VAR_KEYWORD:
                kw.update(value)
            elif p.default is p.empty and p.kind is not p.KEYWORD_ONLY and key not in by_keyword:
                pos.append(value)
            elif not (key in left_out and value is p.default):
                kw[key] = value
        if fixup is not None:
            fixup(pos, kw)
        return tuple(pos), kw
    return layout


def _signature(fn):
    """``fn``'s parameters, those of the function it wraps (``functools.wraps``), with the ``out`` that a wrapper
    such as ``ops.elementwise.structured_out`` takes for it (``torch.lu(A, out=...)``)."""
    sig = inspect.signature(fn)
    if "out" not in sig.parameters and "out" in inspect.signature(fn, follow_wrapped=False).parameters:
        params = list(sig.parameters.values())
        at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
        params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
        sig = sig.replace(parameters=params)
    return sig


def _spread_operands(pos, kw):
    """``torch.einsum(eq, [a, b])`` hands ``(eq, a, b)``, as ``einsum(eq, a, b)``."""
    if len(pos) == 2 and isinstance(pos[1], (list, tuple)):
        pos[1:] = pos[1]


def _allow_unused(pos, kw):
    """``torch.autograd.grad`` hands ``allow_unused`` None as ``materialize_grads`` (what it means)."""
    if kw.get("allow_unused") is None:
        kw["allow_unused"] = kw.get("materialize_grads", False)


# what PyTorch's Python functions do to their arguments before they hand them on
_FIXUPS = {"torch.einsum": _spread_operands, "torch.autograd.grad": _allow_unused}


def _names(public, name, accessor=None):
    """What the error names when every handler declines: PyTorch's Python functions by their module
    (``torch.functional.norm``: "no implementation found for ..."), the builtins as its C++ does ("Multiple
    dispatch failed for 'torch.add'")."""
    if accessor is not None:
        return {"_torchish_public": f"torch.Tensor.{name}.{accessor}"}
    python = _python_name(public, name)
    if python is not None:
        return {"_torchish_python": python}
    return {"_torchish_public": _builtin_name(public, name)}


def pytorch_name(public, name):
    """The name PyTorch's errors give ``public.name``: equal for two names of one PyTorch function."""
    return _python_name(public, name) or _builtin_name(public, name)


def _own_name(public, name):
    """The ``__name__`` of PyTorch's ``public.name``."""
    from . import _overridable as tables
    if public in ("torch.linalg", "torch.fft", "torch.special"):
        return f"{public[6:]}_{name}"
    return tables.OWN_NAMES.get(f"{public}.{name}", name)


def _python_name(public, name):
    """``module.name`` of the function PyTorch writes in Python that ``public.name`` is, or None for a builtin."""
    from . import _overridable as tables
    own = _own_name(public, name)
    if public == "torch.nn.functional" and name in tables.PYTHON_FUNCTIONAL + tables.PYTHON_FUNCTIONAL_UNLISTED:
        return f"{public}.{own}"
    if public == "torch.Tensor" and name in tables.PYTHON_TENSOR:
        return f"torch._tensor.{own}"
    if public in ("torch.autograd", "torch.nn.init"):
        return f"{public}.{own}"
    return tables.PYTHON_TORCH.get(name) if public == "torch" else None


def _builtin_name(public, name):
    """The name PyTorch's "Multiple dispatch failed for '...'" gives the builtin ``public.name``."""
    from . import _overridable as tables
    if public in ("torch.linalg", "torch.fft", "torch.special"):
        return f"{public}.{_own_name(public, name)}"
    return tables.BUILTIN_NAMES.get(f"{public}.{name}", f"{public}.{name}")


# the method PyTorch hands to ``__torch_function__`` for an operator (``x * 2``: ``Tensor.mul``); the others hand
# themselves (``x // 2``: ``Tensor.__floordiv__``)
OPERATOR_METHODS = {
    "__abs__": "abs", "__add__": "add", "__div__": "div", "__eq__": "eq", "__ge__": "ge", "__gt__": "gt",
    "__iadd__": "add_", "__idiv__": "div_", "__ifloordiv__": "floor_divide_", "__imod__": "remainder_",
    "__imul__": "mul_", "__isub__": "sub_", "__itruediv__": "div_", "__le__": "le", "__lt__": "lt",
    "__matmul__": "matmul", "__mod__": "remainder", "__mul__": "mul", "__ne__": "ne", "__neg__": "neg",
    "__pos__": "positive", "__radd__": "add", "__rand__": "bitwise_and", "__rmul__": "mul",
    "__ror__": "bitwise_or", "__rxor__": "bitwise_xor", "__sub__": "sub", "__truediv__": "div",
}

# the operators that hand themselves when their ``self`` takes part (PyTorch's checks it first), the method above
# when another argument does (``t == duck``: ``Tensor.eq``)
_ITSELF_FOR_SELF = frozenset({"__eq__"})

_BINARY_OPERATORS = frozenset(
    f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "matmul", "and", "or",
                              "xor", "lshift", "rshift") for p in ("", "r", "i")
) | {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}
