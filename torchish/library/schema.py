"""Operator schemas: parsing PyTorch's schema strings and checking call arguments against them.

A schema reads ``name.overload(Tensor(a!) x, Tensor? y=None, int[] dims=[], *, float eps=1e-5) -> (Tensor, Tensor)``:
typed arguments with optional defaults, ``*`` before the keyword-only ones, ``(a!)`` marking a Tensor the op
writes in place, and one return, ``()`` for none or a parenthesised tuple. :func:`parse` turns the text into a
:class:`FunctionSchema`; :meth:`FunctionSchema.bind` matches a call's ``(args, kwargs)`` to it with PyTorch's errors.

    >>> s = parse("foo(Tensor x, float a=2.0) -> Tensor")
    >>> [a.name for a in s.arguments], s.returns_tuple
    (['x', 'a'], False)
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import numpy as np

BASE_TYPES = ("Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device", "Layout",
              "MemoryFormat", "Generator", "Dimname", "complex", "Storage", "Any")
UNKNOWN_TYPE = ("unknown type specifier. Common valid schema types include Tensor, SymInt, int, float, bool, Scalar; "
                "for a full list, please see https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/"
                "README.md#func :\n")
_ARG = re.compile(r"^(?P<base>[A-Za-z_]\w*)(?:\((?P<alias>[A-Za-z0-9_]+)(?P<write>!)?\))?(?P<opt1>\?)?"
                  r"(?:\[(?P<size>\d*)\])?(?P<opt2>\?)?(?:\s+(?P<name>[A-Za-z_]\w*))?(?:\s*=\s*(?P<default>.+))?$")
NO_DEFAULT = object()


@dataclass(frozen=True)
class AliasInfo:
    is_write: bool
    before_set: frozenset
    after_set: frozenset


@dataclass
class Argument:
    """One argument (or return) of a schema."""
    name: str
    base: str  # "Tensor", "SymInt", ... without the optional/list marks
    optional: bool = False  # ``T?`` or ``T[]?``: None is accepted
    is_list: bool = False
    elem_optional: bool = False  # ``Tensor?[]``
    size: int = 0  # ``int[2]``: the length a single int broadcasts to (0: none given)
    alias: str | None = None
    is_write: bool = False
    default: object = NO_DEFAULT
    default_text: str = ""
    kwarg_only: bool = False
    text: str = ""  # the type as written

    @property
    def type(self):
        """The argument's type as PyTorch's JIT prints it (``Optional[Tensor]``, ``List[int]``, ``number``...)."""
        base = {"SymInt": "int", "Scalar": "number", "ScalarType": "int", "MemoryFormat": "int",
                "Layout": "int"}.get(self.base, self.base)
        if self.is_list:
            base = f"List[{'Optional[' + base + ']' if self.elem_optional else base}]"
        return f"Optional[{base}]" if self.optional else base

    @property
    def default_value(self):
        return None if self.default is NO_DEFAULT else self.default

    @property
    def N(self):  # noqa: N802  (PyTorch's name)
        return self.size or None

    @property
    def alias_info(self):
        """PyTorch's ``_AliasInfo`` of a ``Tensor(a!)`` argument (None for one without an alias set)."""
        if self.alias is None:
            return None
        return AliasInfo(self.is_write, frozenset({self.alias}), frozenset({self.alias}))


    def __str__(self):
        out = f"{self.text} {self.name}" if self.name else self.text
        return out + (f"={self.default_text}" if self.default is not NO_DEFAULT else "")


@dataclass
class FunctionSchema:
    name: str  # "ns::op" once the namespace is known, else "op"
    overload_name: str
    arguments: list
    returns: list
    returns_tuple: bool  # ``-> (...)``: the op returns a tuple (even of one element)

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def mutated(self):
        return [a for a in self.arguments if a.is_write]

    def __str__(self):
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        rets = ", ".join(str(r) for r in self.returns)
        ret = f"({rets})" if self.returns_tuple or not self.returns else rets
        full = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{full}({', '.join(args)}) -> {ret}"

    def bind(self, args, kwargs):
        """The call's values in schema order (defaults filled in), as PyTorch's dispatcher binds them."""
        positional = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            raise RuntimeError(f"{self.name}() expected at most {len(positional)} argument(s) but received "
                               f"{len(args)} argument(s). Declaration: {self}")
        values = []
        for i, a in enumerate(self.arguments):
            if i < len(args) and not a.kwarg_only:
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            elif a.default is not NO_DEFAULT:
                v = a.default
            else:
                raise RuntimeError(f"{self.name}() is missing value for argument '{a.name}'. Declaration: {self}")
            if not _accepts(a, v):
                raise RuntimeError(f"{self.name}() Expected a value of type '{_type_name(a)}' for argument "
                                   f"'{a.name}' but instead found type '{type(v).__name__}'.\nPosition: {i}\n"
                                   f"Value: {v!r}\nDeclaration: {self}")
            values.append(_convert(a, v))
        names = {a.name for a in self.arguments}
        for k in kwargs:
            if k not in names:
                raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{self.name}'. Schema: {self}")
            if any(a.name == k and not a.kwarg_only for a in positional[:len(args)]):
                raise RuntimeError(f"{self.name}() got multiple values for argument '{k}'. Declaration: {self}")
        return values


def _type_name(a):
    base = {"SymInt": "int", "Scalar": "number"}.get(a.base, a.base)
    if a.is_list:
        base = f"List[{'Optional[' + base + ']' if a.elem_optional else base}]"
    return f"Optional[{base}]" if a.optional else base


def _accepts_one(base, v):
    from .._tensor import Tensor
    is_int = isinstance(v, (int, np.integer))
    if base == "Tensor":
        return isinstance(v, Tensor)
    if base in ("int", "SymInt"):  # (a one-element integer tensor or a NumPy integer is taken as its value)
        return is_int or (isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point())
    if base == "float":
        return is_int or isinstance(v, (float, np.floating)) or (isinstance(v, Tensor) and v.dim() == 0)
    if base == "bool":
        return is_int
    if base == "str":
        return isinstance(v, str)
    if base == "Scalar":
        return isinstance(v, (int, float, complex))
    if base == "ScalarType":
        from .._dtype import dtype
        return isinstance(v, dtype) or (isinstance(v, int) and v in _SCALAR_TYPE_CODES)
    if base == "Device":
        from .._device import device
        return isinstance(v, (str, device, int))
    return True


def _accepts(a, v):
    if v is None:
        return a.optional
    if not a.is_list:
        return _accepts_one(a.base, v)
    if a.base in ("int", "SymInt") and isinstance(v, int) and a.size:  # ``int[2] k=1`` broadcasts a single int
        return True
    if not isinstance(v, (list, tuple)):
        return False
    return all((e is None and a.elem_optional) or (e is not None and _accepts_one(a.base, e)) for e in v)


# PyTorch's ScalarType codes (an int is accepted where a dtype is expected)
_SCALAR_TYPE_CODES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
                      7: "float64", 9: "complex64", 10: "complex128", 11: "bool", 15: "bfloat16"}


def _convert_one(base, v):
    """The value a kernel receives: PyTorch's dispatcher hands Python kernels plain ints, floats and bools."""
    if base in ("int", "SymInt"):
        return int(v)
    if base == "float":
        return float(v)
    if base == "bool":
        return bool(v)
    if base == "ScalarType" and isinstance(v, int):
        from .. import _dtype
        return getattr(_dtype, _SCALAR_TYPE_CODES[v])
    return v


def _convert(a, v):
    if v is None:
        return None
    if not a.is_list:
        return _convert_one(a.base, v)
    if isinstance(v, int) and a.base in ("int", "SymInt"):
        return [v] * a.size
    return [None if e is None else _convert_one(a.base, e) for e in v]


def _split(text):
    """``text`` split on the commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _default(text, base):
    if text == "None":
        return None
    if base == "ScalarType":
        from .. import _dtype
        dt = getattr(_dtype, text, None)
        return dt if isinstance(dt, _dtype.dtype) else text
    if text in ("True", "False"):
        return text == "True"
    if text in ("inf", "-inf", "nan"):
        return float(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # (an enum name: contiguous_format, Mean...)
    return list(value) if isinstance(value, tuple) else value


def parse_argument(text, full, *, is_return=False):
    m = _ARG.match(text.strip())
    if m is None or (not is_return and not m["name"]) or (is_return and m["default"]):
        raise RuntimeError(f"expected a type and a name here:\n{full}\n")
    base = m["base"]
    if base not in BASE_TYPES:
        raise RuntimeError(UNKNOWN_TYPE + full + "\n")
    is_list = m["size"] is not None
    size = int(m["size"]) if m["size"] else 0
    a = Argument(name=m["name"] or "", base=base, optional=bool(m["opt2"] or (m["opt1"] and not is_list)),
                 is_list=is_list, elem_optional=bool(m["opt1"] and is_list), alias=m["alias"], size=size,
                 is_write=bool(m["write"]), text=m.string[:m.start("name")].strip() if m["name"] else m.string)
    if m["default"] is not None:
        a.default_text = m["default"].strip()
        a.default = _default(a.default_text, base)
        if a.is_list and base in ("int", "SymInt", "float", "bool") and not isinstance(a.default, (list, type(None))):
            a.default = [a.default] * int(m["size"] or 1)
        if _accepts(a, a.default):
            a.default = _convert(a, a.default)  # (``float a=2`` is 2.0, as the dispatcher hands it over)
    return a


def parse(text, ns=None):
    """A :class:`FunctionSchema` from ``text`` (``name(args) -> returns``; ``ns`` prefixes the name)."""
    head, sep, ret = text.partition("->")
    head = head.strip()
    if not sep or "(" not in head or not head.endswith(")"):
        raise RuntimeError(f"expected a schema of the form name(args) -> returns, but found:\n{text}\n")
    name, _, args = head.partition("(")
    name, args = name.strip(), args[:-1]
    if not re.fullmatch(r"(?:[A-Za-z_]\w*::)?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?", name):
        raise RuntimeError(f"expected an operator name but found '{name}' here:\n{text}\n")
    name, _, overload = name.partition(".")
    if "::" not in name and ns is not None:
        name = f"{ns}::{name}"
    arguments, kwarg_only = [], False
    for part in _split(args):
        if part == "*":
            kwarg_only = True
            continue
        a = parse_argument(part, text)
        a.kwarg_only = kwarg_only
        arguments.append(a)
    ret = ret.strip()
    returns_tuple = ret.startswith("(")
    if returns_tuple:
        if not ret.endswith(")"):
            raise RuntimeError(f"expected ) at the end of the returns:\n{text}\n")
        inner = ret[1:-1].strip()
        if inner.startswith("(") and inner.endswith(")"):  # ``((Tensor))``: a one-element tuple
            inner = inner[1:-1]
        returns = [parse_argument(p, text, is_return=True) for p in _split(inner)]
    else:
        returns = [parse_argument(ret, text, is_return=True)]
    return FunctionSchema(name, overload, arguments, returns, returns_tuple)
