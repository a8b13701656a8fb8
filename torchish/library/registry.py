"""The registry of user-defined operators and its ``torchish.ops.<namespace>.<op>.<overload>`` handles.

One :class:`Entry` per operator overload ("ns::op" plus an overload name, "" for the default) holds everything
registered for it, by whichever API: the schema (``Library.define``, ``custom_op``), kernels by dispatch key
(``Library.impl``, ``register_kernel``), the fake (meta) implementation and the autograd formula. Registrations
are made by a :class:`torchish.library.Library` and undone when it is destroyed, as in PyTorch.

``torchish.ops.mylib`` is an :class:`OpNamespace`, ``torchish.ops.mylib.foo`` an :class:`OpOverloadPacket` and
``torchish.ops.mylib.foo.default`` an :class:`OpOverload`; calling any of them goes through
:func:`torchish.library.dispatch.call`.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Entry:
    qualname: str  # "ns::op"
    overload: str = ""
    schema: object = None  # a schema.FunctionSchema once defined
    kernels: dict = field(default_factory=dict)  # dispatch key -> (fn, with_keyset)
    fake: object = None
    backward: object = None
    setup_context: object = None
    vmap_fn: object = None  # register_vmap's rule
    autocast: dict = field(default_factory=dict)  # device type -> dtype (register_autocast)
    tags: tuple = ()  # torchish.Tag values given at definition

    def has_tag(self, name):
        return any(t.name == name for t in self.tags)
    custom: object = None  # the CustomOpDef that owns the op, if custom_op made it
    function_cls: object = None  # the autograd.Function built for it (dispatch.autograd_function)
    handle: object = None  # its OpOverload (one object, as torch.ops.ns.op.default always is)

    @property
    def namespace(self):
        return self.qualname.split("::")[0]

    @property
    def opname(self):
        return self.qualname.split("::")[1]

    @property
    def overload_name(self):
        return self.overload or "default"

    @property
    def dotted(self):
        """``ns.op.default``: how PyTorch prints an OpOverload."""
        return f"{self.namespace}.{self.opname}.{self.overload_name}"


ENTRIES: dict = {}  # (qualname, overload) -> Entry
_PACKETS: dict = {}  # qualname -> OpOverloadPacket
_NAMESPACES: dict = {}  # name -> OpNamespace


def split_name(name):
    """``("ns::op", "overload")`` from "ns::op" or "ns::op.overload"."""
    qualname, _, overload = name.partition(".")
    return qualname, "" if overload == "default" else overload


def entry(qualname, overload="", create=True):
    key = (qualname, overload)
    e = ENTRIES.get(key)
    if e is None and create:
        e = ENTRIES[key] = Entry(qualname, overload)
    return e


def defined(qualname):
    """The defined overloads of ``qualname``, in definition order."""
    return [e for (q, _), e in ENTRIES.items() if q == qualname and e.schema is not None]


def defined_in(ns):
    return any(q.split("::")[0] == ns and e.schema is not None for (q, _), e in ENTRIES.items())


def namespaces():
    return {q.split("::")[0] for (q, _), e in ENTRIES.items() if e.schema is not None}


class OpOverload:
    """One overload of an operator: ``torchish.ops.mylib.foo.default``."""

    def __init__(self, e):
        self._entry = e
        self.__name__ = f"{e.opname}.{e.overload_name}"
        self.__qualname__ = self.__name__
        self._overloadname = e.overload_name
        self._opname = e.opname
        self._namespace = e.namespace

    @property
    def _schema(self):
        return self._entry.schema

    @property
    def tags(self):
        return list(self._entry.tags)

    @property
    def overloadpacket(self):
        return getattr(OpNamespace(self._namespace), self._opname)

    def name(self):
        return self._entry.qualname + (f".{self._entry.overload}" if self._entry.overload else "")

    @property
    def namespace(self):
        return self._namespace

    def __call__(self, *args, **kwargs):
        from .dispatch import call
        return call(self._entry, args, kwargs)

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self):
        return self._entry.dotted

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other._entry is self._entry

    def __hash__(self):
        return hash(id(self._entry))


class OpOverloadPacket:
    """All overloads of one operator: ``torchish.ops.mylib.foo``; calling it picks the overload that binds."""

    def __init__(self, qualname):
        self._qualified_op_name = qualname
        self._namespace, self.__name__ = qualname.split("::")

    def overloads(self):
        return [e.overload_name for e in defined(self._qualified_op_name)]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        e = entry(self._qualified_op_name, "" if name == "default" else name, create=False)
        if e is None or e.schema is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")
        return overload(e)

    def __call__(self, *args, **kwargs):
        from .dispatch import call
        overloads = defined(self._qualified_op_name)
        if not overloads:
            raise RuntimeError(f"operator {self._qualified_op_name} does not exist")
        if len(overloads) == 1:
            return call(overloads[0], args, kwargs)
        first = None
        for e in overloads:  # the first overload whose schema the arguments fit
            try:
                e.schema.bind(args, kwargs)
            except RuntimeError as err:
                first = first or err
                continue
            return call(e, args, kwargs)
        raise first

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self.__name__}')>"

    def __str__(self):
        return f"{self._namespace}.{self.__name__}"


class OpNamespace:
    """``torchish.ops.mylib``: the operators defined in one namespace."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        qualname = f"{self.name}::{op}"
        if not defined(qualname):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")
        if qualname not in _PACKETS:
            _PACKETS[qualname] = OpOverloadPacket(qualname)
        return _PACKETS[qualname]

    def __repr__(self):
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


def namespace(name):
    """``torchish.ops.<name>`` for a namespace that has had defined operators (None otherwise); ``aten`` names
    PyTorch's operators (:mod:`.aten`)."""
    if name == "aten" and not defined_in("aten"):
        from .aten import ATEN
        return ATEN
    if name not in _NAMESPACES and name not in namespaces():
        return None
    if name not in _NAMESPACES:
        _NAMESPACES[name] = OpNamespace(name)
    return _NAMESPACES[name]


def overload(e):
    """The OpOverload of an entry (made once)."""
    if e.handle is None:
        e.handle = OpOverload(e)
    return e.handle


def resolve(op):
    """The Entry named by a qualified name ("ns::op[.overload]"), an OpOverload, a packet or a CustomOpDef."""
    if isinstance(op, OpOverload):
        return op._entry
    if isinstance(op, OpOverloadPacket):
        op = op._qualified_op_name
    if hasattr(op, "_entry") and not isinstance(op, str):  # a CustomOpDef
        return op._entry
    if not isinstance(op, str) or "::" not in op:
        raise ValueError(f"Expected a qualified operator name 'namespace::name' (or an OpOverload), got {op!r}")
    return entry(*split_name(op))
