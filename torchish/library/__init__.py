"""``torchish.library``: PyTorch's Python API for defining operators (``torch.library``).

Two ways in, as in PyTorch: :func:`custom_op` wraps an annotated function (see :mod:`.custom_ops`), and
:class:`Library` defines schemas and registers kernels per dispatch key. Either way the op is reachable as
``torchish.ops.<namespace>.<name>`` and gets a fake implementation (:func:`register_fake`), an autograd formula
(:func:`register_autograd`) and device kernels (:func:`register_kernel`, :func:`impl`); :func:`opcheck` tests
the registrations. How a call runs is in :mod:`.dispatch`.

    >>> lib = torchish.library.Library("mylib", "FRAGMENT")
    >>> lib.define("scale(Tensor x, float a=2.0) -> Tensor")
    >>> lib.impl("scale", lambda x, a=2.0: x * a, "CompositeExplicitAutograd")
    >>> torchish.ops.mylib.scale(torchish.ones(2))
"""
from __future__ import annotations

import weakref

from . import registry
from .custom_ops import CustomOpDef, custom_op, device_key
from .fake import get_ctx
from .infer_schema import infer_schema
from .opcheck import OpCheckError, opcheck
from .registry import OpOverload, OpOverloadPacket
from .schema import parse as _parse
from .._tags import normalize as _normalize_tags

__all__ = ["Library", "custom_op", "CustomOpDef", "define", "impl", "register_fake", "register_autograd",
           "register_kernel", "register_vmap", "register_autocast", "get_ctx", "opcheck", "infer_schema",
           "fallthrough_kernel", "impl_abstract", "OpCheckError", "OpOverload", "OpOverloadPacket"]

_RESERVED = ("prim",)
_DEF_NAMESPACES: dict = {}  # namespace -> id of the live "DEF" Library holding it
_GLOBAL_LIBS: dict = {}  # namespace -> the FRAGMENT library behind torchish.library.define/impl without ``lib=``


def fallthrough_kernel():
    """A dummy PyTorch accepts as a kernel meaning "fall through to the next key"; torchish skips it."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def _undo(defs, registrations, ns, def_id):
    for e, what, key in registrations:
        if what == "kernel":
            e.kernels.pop(key, None)
        else:
            setattr(e, what, None)
    for e in defs:
        e.schema = e.custom = e.function_cls = e.fake = e.backward = e.setup_context = e.vmap_fn = None
        e.autocast, e.tags = {}, ()
    if def_id is not None and _DEF_NAMESPACES.get(ns) == def_id:
        del _DEF_NAMESPACES[ns]


class Library:
    """Operators of one namespace: ``kind`` "DEF" (the one library defining it), "FRAGMENT" (one of several) or
    "IMPL" (kernels only). Its registrations last as long as the object does."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your "
                    "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                    "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                    "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                    "explicitly indicate this.")
            _DEF_NAMESPACES[ns] = id(self)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs = []
        self._registrations = []
        self._finalizer = weakref.finalize(self, _undo, self._op_defs, self._registrations, ns,
                                           id(self) if kind == "DEF" else None)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define the operator ``schema`` ("name(args) -> returns") in this namespace; returns its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if not self._finalizer.alive:
            raise AssertionError("Library object has been destroyed")
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{schema.split("(")[0]}"): Cannot define an operator inside of a '
                               "TORCH_LIBRARY_IMPL block.  All def()s should be placed in the (unique) TORCH_LIBRARY "
                               "block for their namespace.")
        s = _parse(schema, self.ns)
        ns = s.name.split("::")[0]
        if ns != self.ns:
            raise RuntimeError(f"Explicitly provided namespace ({ns}) in schema string does not match namespace of "
                               f"enclosing TORCH_LIBRARY_FRAGMENT block ({self.ns}).")
        e = registry.entry(s.name, s.overload_name)
        if e.schema is not None:
            raise RuntimeError(f"Tried to register an operator ({s}) with the same name and overload name multiple "
                               "times. Each overload's schema should only be registered with a single call to def(). "
                               "Duplicate registration: torchish.library. Original registration: torchish.library")
        e.schema = s
        e.tags = _normalize_tags(tags)
        self._op_defs.append(e)
        return schema.split("(")[0]

    def _entry_for(self, op_name):
        if isinstance(op_name, OpOverload):
            return op_name._entry
        if not isinstance(op_name, str):
            raise RuntimeError(f"impl should be passed either a name or an OpOverload object as the first argument, "
                               f"got {type(op_name)}")
        name = op_name if "::" in op_name else f"{self.ns}::{op_name}"
        return registry.entry(*registry.split_name(name))

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` ("CPU", "CUDA", "Meta", "Autograd",
        "CompositeExplicitAutograd", "CompositeImplicitAutograd"; the library's key when empty)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        e = self._entry_for(op_name)
        if fn is fallthrough_kernel:
            return
        if key in e.kernels and not allow_override:
            raise RuntimeError(f"This is not allowed since there's already a kernel registered from python "
                               f"overriding {e.opname}'s behavior for {key} dispatch key and {self.ns} namespace.")
        e.kernels[key] = (fn, with_keyset)
        self._registrations.append((e, "kernel", key))

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=True):
        e = self._entry_for(op_name)
        e.fake = fn
        self._registrations.append((e, "fake", None))

    def _register_autograd(self, e, backward, setup_context):
        e.backward, e.setup_context = backward, setup_context
        self._registrations.append((e, "backward", None))
        self._registrations.append((e, "setup_context", None))

    def _destroy(self):
        self._finalizer()


def _qualname_parts(qualname):
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    parts = qualname.split("::")
    if len(parts) != 2:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname '
                         'passed to the torch.library APIs must consist of a namespace and a name, e.g. aten::sin')
    return parts


def _library(ns, lib):
    if lib is not None:
        return lib
    if ns not in _GLOBAL_LIBS:
        _GLOBAL_LIBS[ns] = Library(ns, "FRAGMENT")
    return _GLOBAL_LIBS[ns]


def define(qualname, schema, *, lib=None, tags=()):
    """Define ``qualname`` ("ns::name") with ``schema`` ("(Tensor x) -> Tensor")."""
    ns, name = _qualname_parts(qualname)
    if not isinstance(schema, str):
        raise ValueError(f"define(qualname, schema, ...): expected schema to be instance of str, got {type(schema)}")
    _library(ns, lib).define(name + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` for the device ``types`` ("cpu", "cuda", a list, or "default" for all) of ``qualname``.
    ``impl(lib, name, dispatch_key)`` (the older form) returns a decorator registering to that key."""
    if isinstance(qualname, Library):
        lib_, name, key = qualname, types, func or ""

        def legacy(fn):
            lib_.impl(name, fn, key)
            return fn
        return legacy
    ns, _ = registry.split_name(qualname)[0].split("::")
    keys = [types] if isinstance(types, str) else list(types)

    def register(fn):
        target = _library(ns, lib)
        for t in keys:
            target.impl(qualname.split("::")[1], fn, device_key(t))
        return fn
    return register if func is None else register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as ``op``'s implementation for ``device_types``."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    e = registry.resolve(op)
    return impl(f"{e.qualname}" + (f".{e.overload}" if e.overload else ""), device_types or "default", func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Register ``func`` as the fake (meta) implementation of ``op`` (a name, OpOverload or CustomOpDef)."""
    def register(fn):
        if isinstance(op, CustomOpDef):
            return op.register_fake(fn)
        e = registry.resolve(op)
        _library(e.namespace, lib)._register_fake(e.opname + (f".{e.overload}" if e.overload else ""), fn)
        return fn
    return register if func is None else register(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register the backward formula of ``op``: ``backward(ctx, *grads)`` and ``setup_context(ctx, inputs,
    output)`` with :class:`torchish.autograd.Function`'s semantics."""
    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    e = registry.resolve(op)
    if e.schema is None:
        raise AttributeError(f"'_OpNamespace' '{e.namespace}' object has no attribute '{e.opname}'")
    if e.schema.is_mutable or any(r.alias for r in e.schema.returns):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {e.dotted} with schema "
                           f"{e.schema}. Please create a functional operator and register an autograd formula for "
                           "that.")
    _library(e.namespace, lib)._register_autograd(e, backward, setup_context)


def register_vmap(op, func=None, /, *, lib=None):
    """Register ``func(info, in_dims, *args, **kwargs) -> (output, out_dims)`` as ``op``'s rule under
    ``torchish.func.vmap`` (see :mod:`.vmap`)."""
    def register(fn):
        if isinstance(op, CustomOpDef):
            return op.register_vmap(fn)
        e = registry.resolve(op)
        e.vmap_fn = fn
        _library(e.namespace, lib)._registrations.append((e, "vmap_fn", None))
        return fn
    return register if func is None else register(func)


def register_autocast(op, device_type, cast_inputs, *, lib=None):
    """Inside autocast for ``device_type``, ``op`` casts its floating-point inputs to ``cast_inputs`` and runs with
    autocast off (see :mod:`.autocast`)."""
    if isinstance(op, CustomOpDef):
        return op.register_autocast(device_type, cast_inputs)
    from .autocast import validate
    validate(device_type)
    e = registry.resolve(op)
    e.autocast.setdefault(device_type, cast_inputs)
