"""``torchish.library.custom_op``: a Python function turned into an operator, as ``torch.library.custom_op``.

    >>> @torchish.library.custom_op("mylib::numpy_sin", mutates_args=())
    ... def numpy_sin(x: torchish.Tensor) -> torchish.Tensor:
    ...     return torchish.from_numpy(np.sin(x.numpy()))
    >>> numpy_sin.register_fake(lambda x: torchish.empty_like(x))
    >>> numpy_sin(torchish.ones(3)); torchish.ops.mylib.numpy_sin(torchish.ones(3))

The schema comes from the annotations (:mod:`.infer_schema`); the op is defined in a FRAGMENT library of its own,
so defining the same name again with ``custom_op`` replaces it (PyTorch's behaviour) while ``Library.define`` of a
taken name raises. Kernels, the fake implementation and the autograd formula live in the op's registry entry.
"""
from __future__ import annotations

import contextlib
import inspect
import logging

from .infer_schema import infer_schema
from .registry import entry, overload

log = logging.getLogger(__name__)
OPDEF_TO_LIB: dict = {}  # qualname -> the Library that defines the custom op now


def device_key(device_type):
    """The dispatch key of a device type ("cpu" -> "CPU"; None and "default": every device); a dispatch key
    ("CompositeImplicitAutograd", "Autograd"...), which torch.library.impl also takes, stays as it is."""
    from .dispatch import BACKEND_KEYS
    if device_type is None or device_type == "default":
        return "CompositeExplicitAutograd"
    if device_type[:1].isupper():
        return device_type
    return BACKEND_KEYS.get(device_type, device_type.upper())


class CustomOpDef:
    """What :func:`custom_op` returns: callable, with methods registering more behaviour for the op."""

    def __init__(self, namespace, name, schema, fn):
        from . import Library
        self._namespace, self._name, self._schema, self._init_fn = namespace, name, schema, fn
        self._backend_fns = {}
        self._disabled_kernel = set()
        old = OPDEF_TO_LIB.pop(self._qualname, None)
        if old is not None:
            old._destroy()
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema)
        OPDEF_TO_LIB[self._qualname] = self._lib
        self._entry = entry(self._qualname)
        self._entry.custom = self
        if any(a.kwarg_only and a.base == "Tensor" for a in self._entry.schema.arguments):
            self._lib._destroy()
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name + schema}")

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    @property
    def _opoverload(self):
        return overload(self._entry)

    @property
    def _abstract_fn(self):
        return self._entry.fake

    def _module(self):
        return inspect.getmodule(self._init_fn)

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        from .dispatch import call
        return call(self._entry, args, kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """The implementation for ``device_types`` ("cpu", "cuda", a list of them, or None for all devices)."""
        def inner(fn):
            types = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
            for device_type in types:
                def wrapped(*args, _device_type=device_type, _fn=fn, **kwargs):
                    impl = self._init_fn if _device_type in self._disabled_kernel else _fn
                    return impl(*args, **kwargs)
                self._backend_fns[device_type] = wrapped
                self._lib.impl(self._name, wrapped, device_key(device_type))
            return fn

        if device_types is not None and not any(a.base == "Tensor" for a in self._entry.schema.arguments):
            if not any(a.base == "Device" for a in self._entry.schema.arguments):
                raise ValueError("Functions without tensor inputs are required to have a `device: torch.device` "
                                 "argument")
        return inner if fn is None else inner(fn)

    def register_fake(self, fn, /):
        """The fake (meta) implementation: output shapes and dtypes from input shapes and dtypes, no data."""
        self._entry.fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """``backward(ctx, *grads)`` returns one gradient per input; ``setup_context(ctx, inputs, output)`` saves
        what it needs during the forward."""
        schema = self._entry.schema
        if schema.is_mutable or any(r.alias for r in schema.returns):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{schema}. Please create a functional operator and register an autograd formula "
                               "for that.")
        self._entry.backward = backward
        self._entry.setup_context = setup_context

    def register_vmap(self, func=None):
        """The op's rule under ``torchish.func.vmap``: ``func(info, in_dims, *args) -> (output, out_dims)``."""
        def register(fn):
            self._entry.vmap_fn = fn
        return register if func is None else register(func)

    def register_autocast(self, device_type, cast_inputs):
        """Inside autocast for ``device_type``, cast the floating-point inputs to ``cast_inputs`` and run the op
        with autocast off."""
        from .autocast import validate
        validate(device_type)
        self._entry.autocast.setdefault(device_type, cast_inputs)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this device type.",
                        "enable" if enabled else "disable", device_type)
        if enabled:
            self._disabled_kernel.discard(device_type)
        else:
            self._disabled_kernel.add(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap ``fn`` (type-annotated) into the operator ``name`` ("namespace::opname"); a decorator without ``fn``."""
    def inner(fn):
        schema_str = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = {a.name for a in result._entry.schema.arguments if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {expected}which is "
                                 "different from what was provided to us in `mutates_args`. Please make these "
                                 "consistent.")
        result.register_kernel(device_types)(fn)
        return result

    return inner if fn is None else inner(fn)
