"""The Tensor facade: a mutable PyTorch-style handle on an immutable JAX value.

A Tensor holds ``_d`` (a ``jax.Array``, or a tracer inside ``torchish.compile``), its autograd record
(``requires_grad``, ``grad``, ``grad_fn``) and a version counter. JAX values never change, so an in-place op
computes a new value and *rebinds* the facade (bumping the version). A view keeps ``(base, chain, differentiable)``:
writing to it writes through to its base, and every live view of a base is refreshed when the base changes.

This file holds the class itself: its fields, how one is made and how its value is read. Its methods come from its
bases, one job each: ``_tensor_meta`` (metadata; also ``Size`` and ``wrap_dim``), ``_tensor_autograd`` (the
autograd record, hooks), ``_tensor_views`` (views, aliases, in-place rebinding, ``set_values``) and
``_tensor_values`` (the Python protocol that reads values). Ops, dunders and most methods are installed onto the
class by the layers above (``torchish.ops``, ``torchish.autograd``).
"""
from __future__ import annotations

from . import _tensor_autograd, _tensor_values, _tensor_views
from ._tensor_autograd import TensorAutograd
from ._tensor_meta import Size, TensorMetadata, wrap_dim
from ._tensor_views import _LAZY, _SERIAL, TensorViews, multi_output_view_error, set_values, transform_scope_start
from ._tensor_views import _refresh_views  # noqa: F401  (torchish.compile's write-back imports it from here)
from .autograd.graph import VersionCounter
from .autograd.grad_mode import STATE, UNUSUAL


class Tensor(TensorViews, TensorAutograd, TensorMetadata, _tensor_values.TensorValues):
    """A multi-dimensional array with PyTorch's autograd semantics, running on JAX."""

    __slots__ = ("_v", "_rg", "_gval", "_gfn", "_out_nr", "_vc", "_view", "_views", "_hooks", "_post_acc_hooks",
                 "_acc", "_retains_grad", "_sn", "__dict__", "__weakref__")

    # an inference tensor (made inside ``inference_mode``, or a view of one) sets this in its ``__dict__``
    _inf = False
    # a view made with grad recording off of a base that requires grad: it reports requires_grad=True (PyTorch's
    # differentiable view) but no gradient flows through it, and an in-place op on it with grad mode on is refused
    _nograd_view = False
    # a ``detach()`` / ``.data`` alias: outside its source's graph, but its own in-place ops are recorded on it
    _alias = False
    _alias_base = None  # the alias a view of an alias was taken from (the base its in-place writes are recorded on)
    # (Function name, output index) for a custom Function's output that is a view of an input; (op name, output
    # index, "multi") for an output of unbind/split whose storage was written with grad recording off
    _fn_view = None
    # a sparse COO tensor (``torchish.sparse``) keeps its indices and values here; its value is their dense sum
    _coo = None
    # the (sizes, strides, storage offset) of a tensor standing for a non-contiguous argument while torchish.compile
    # traces its program (its view chain stays outside): what stride() and view() see, as in the eager call
    _layout = None

    # binding for ``torchish.Tensor(2, 3)`` / ``Tensor([1., 2.])`` is installed by the creation ops
    _legacy_new = None

    def __new__(cls, *args, **kwargs):
        if cls._legacy_new is None:
            raise RuntimeError("torchish.Tensor() needs torchish's creation ops; import torchish first")
        t = cls._legacy_new(*args, **kwargs)
        if cls is not Tensor and type(t) is not cls:  # (Sub([1., 2.]) is a Sub)
            t.__class__ = cls
        return t

    @property
    def _d(self):
        """The value as a concrete ``jax.Array`` (or tracer): a pending lazy value is materialised first. Code
        that only needs shape/dtype, or records ops (the registry), reads ``_v`` and keeps laziness."""
        v = self._v
        if type(v) is not _LAZY[0]:
            return v
        v = v.resolve()
        self._v = v
        return v

    @_d.setter
    def _d(self, value):
        self._v = value

    @classmethod
    def _make(cls, value, requires_grad=False, grad_fn=None, out_nr=0):
        t = object.__new__(cls)
        t._v = value
        t._rg = requires_grad
        t._gval = None
        t._gfn = grad_fn
        t._out_nr = out_nr
        t._vc = VersionCounter()
        t._view = None
        t._views = None
        t._hooks = None
        t._post_acc_hooks = None
        t._acc = None
        t._retains_grad = False
        t._sn = next(_SERIAL)  # creation order: torchish.compile tells pre-existing state from temporaries
        if UNUSUAL[0]:  # (some thread is in inference mode or has a recorder: see grad_mode.UNUSUAL)
            if STATE.inference:
                t._inf = True
            rec = STATE.recorder
            if rec is not None:
                rec.created(t)
        return t


_tensor_values.Tensor = _tensor_autograd.Tensor = _tensor_views.Tensor = Tensor
_rebuild = _tensor_values._rebuild  # (pickles made before the protocol moved name it here)

wrap = Tensor._make
"""``wrap(value)``: a fresh Tensor (no graph) around a JAX value."""

__all__ = ["Tensor", "Size", "wrap", "wrap_dim", "set_values", "multi_output_view_error", "transform_scope_start"]
