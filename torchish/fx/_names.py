"""Names in an FX graph, as ``torch.fx`` writes them: the qualified name of a call's target (``torch.relu``,
``torch.nn.functional.relu``, ``torch._C._nn.linear``, ``operator.add``), unique node and global names, and the
Python operators that generated code writes as operators (``add = x + y``).

torchish's functions are Python functions living in private modules (``torchish.ops.unary.relu``), so their names
come from the public tables of :mod:`torchish._overridable` (the ones ``__torch_function__`` dispatch uses) mapped to
where PyTorch defines each one: its builtins by their C++ namespace (``torch._C._linalg.linalg_norm``), its Python
functions by their module (``torch.functional.norm``).
"""
from __future__ import annotations

import builtins
import functools
import keyword
import re
import sys

_PUBLIC_NAMES: dict = {}  # id(torchish function) -> (function, PyTorch's qualified name)


def _build_public_names():
    from .. import _overridable as tables
    from .._torch_function_call import pytorch_name, _own_name
    import torchish
    functional = tables.FUNCTIONAL + tables.PYTHON_FUNCTIONAL_UNLISTED + tables.FUNCTIONAL_INPLACE_UNLISTED
    spaces = (("torch", torchish, tables.TORCH + tables.TORCH_INPLACE_UNLISTED),
              ("torch.nn.functional", torchish.nn.functional, functional),
              ("torch.linalg", torchish.linalg, tables.LINALG), ("torch.fft", torchish.fft, tables.FFT),
              ("torch.special", torchish.special, tables.SPECIAL))
    for public, module, names in spaces:
        for name in names:
            fn = getattr(module, name, None)
            if fn is None or id(fn) in _PUBLIC_NAMES or not callable(fn) or isinstance(fn, type):
                continue
            if public in ("torch.linalg", "torch.fft", "torch.special"):
                qualified = f"torch._C._{public[6:]}.{_own_name(public, name)}"
            elif public == "torch":
                qualified = tables.PYTHON_TORCH.get(name) or f"torch.{_own_name(public, name)}"
            else:
                qualified = pytorch_name(public, name)
                if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.functional."):
                    qualified = "torch._C._nn." + qualified[len("torch.nn."):]
            _PUBLIC_NAMES[id(fn)] = (fn, qualified)


def public_name(fn):
    """PyTorch's qualified name of the torchish function ``fn`` (``torchish.relu``: ``"torch.relu"``), or None."""
    if not _PUBLIC_NAMES:
        _build_public_names()
    found = _PUBLIC_NAMES.get(id(fn))
    return found[1] if found is not None and found[0] is fn else None


def qualified_name(func) -> str:
    """``torch.fx.node._get_qualified_name``: ``getattr``, ``operator.add``, ``torch.relu``, ``mymodule.fn``."""
    name = func.__name__
    if getattr(builtins, name, None) is func:
        return name
    public = public_name(func)
    if public is not None:
        return public
    if str(getattr(func, "__module__", "")).startswith("torchish") and getattr(sys.modules["torchish"], name,
                                                                                 None) is func:
        return f"torch.{name}"  # (a function of the top namespace that the tables leave out: torch._assert)
    from .._tensor import Tensor
    if getattr(Tensor, name, None) is func:
        return f"torch.Tensor.{name}"
    module = getattr(func, "__module__", None)
    if module is None:
        raise RuntimeError(f"cannot find module for {func}")
    if module == "_operator":
        module = "operator"
    elif module.startswith("torchish"):
        module = "torch" + module[len("torchish"):]
    return f"{module}.{name}"


def pretty_target(target) -> str:
    """How ``str(graph)`` shows a target (``Node._pretty_print_target``)."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    if module == "builtins":
        return f"builtins.{target.__name__}"
    if module == "_operator":
        return f"operator.{target.__name__}"
    return qualified_name(target)


def type_repr(obj) -> str:
    """A type as ``str(graph)`` and generated code write it (``torch.Tensor`` for torchish's Tensor)."""
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        if obj.__module__.startswith("torchish") and getattr(sys.modules["torchish"], obj.__name__, None) is obj:
            return f"torch.{obj.__name__}"
        module = obj.__module__.replace("torchish", "torch", 1) if obj.__module__.startswith("torchish.") \
            else obj.__module__
        return f"{module}.{obj.__qualname__}"
    return "..." if obj is ... else repr(obj)


def is_torch_name(qualified: str) -> bool:
    return qualified == "torch" or qualified.startswith("torch.")


_snake_case_sub = functools.partial(re.compile(r"(?<=[a-z])([A-Z])").sub, r"_\1")
_illegal_chars = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)  # (a name may not shadow a builtin)


def snake_case(s: str) -> str:
    """``mod.pascalCase`` -> ``mod.pascal_case``."""
    return _snake_case_sub(s).lower()


def target_to_str(target) -> str:
    """The base of a node's name for ``target`` (``Graph._target_to_str``)."""
    if callable(target):
        op = target.__name__
    else:
        op = target
        if op.startswith("__") and op.endswith("__"):
            op = op[2:-2]
    return snake_case(op)


class Namespace:
    """Unique names, one per object; a name never shadows a builtin unless it is that builtin."""

    def __init__(self):
        self._obj_to_name: dict = {}
        self._used_names: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str, obj) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_chars.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj) -> None:
        self._obj_to_name.setdefault(obj, name)

    def rename_object(self, obj, name: str) -> None:
        self._obj_to_name[obj] = name
        self._used_names.add(name)


def format_target(base: str, target: str) -> str:
    """``self.layer1.0`` written as Python: ``getattr(self.layer1, "0")``."""
    out = base
    for part in target.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


# the operator module's functions that generated code writes as Python operators
REFLECTABLE_MAGIC = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
MAGIC = {"eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
         "pos": "+{}", "neg": "-{}", "invert": "~{}", **REFLECTABLE_MAGIC}
