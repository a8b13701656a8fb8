"""The Tensor facade: a mutable PyTorch-style handle on an immutable JAX value.

A Tensor holds ``_d`` (a ``jax.Array``, or a tracer inside ``torchish.compile``), its autograd record
(``requires_grad``, ``grad``, ``grad_fn``) and a version counter. JAX values never change, so an in-place op
computes a new value and *rebinds* the facade (bumping the version). A view keeps ``(base, chain, differentiable)``:
writing to it writes through to its base, and every live view of a base is refreshed when the base changes.

Ops, dunders and most methods are installed onto this class by the layers above (``torchish.ops``,
``torchish.autograd``), so this file holds only what every layer needs: state, views, in-place rebinding, hooks
and the Python protocol that needs no op.
"""
from __future__ import annotations

import itertools
import weakref

import jax
import numpy as np

from . import _dtype, _device, _layout
from . import _tensor_values
from ._meta import MetaArray
from .autograd.graph import AccumulateGrad, VersionCounter, add_hook
from .autograd.grad_mode import STATE

_SERIAL = itertools.count()
_LAZY = [None]  # the LazyValue class, filled in by torchish.ops.lazy


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = super().__getitem__(item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def multi_output_view_error(chain):
    """PyTorch's RuntimeError for an in-place write into an output of a view op that returns several views
    (``chunk``, ``split``, ``unbind``), or None when ``chain`` (a view's ``(op, static)`` steps) has no such op."""
    if not any(any(k == "_out" for k, _ in st) for _, st in chain):
        return None
    op, st = chain[-1]
    out_nr = dict(st).get("_out", 0)
    name = op.grad_name[:-len("Backward0")] if op.grad_name.endswith("Backward0") else op.grad_name
    return RuntimeError(f"Output {out_nr} of {name} is a view and is being modified inplace. This view is the output "
                        "of a function that returns multiple views. Such functions do not allow the output views to "
                        "be modified inplace. You should replace the inplace operation by an out-of-place one.")


class Tensor(_tensor_values.TensorValues):
    """A multi-dimensional array with PyTorch's autograd semantics, running on JAX."""

    __slots__ = ("_v", "_rg", "_grad", "_grad_fn", "_out_nr", "_vc", "_view", "_views", "_hooks", "_post_acc_hooks",
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
        return cls._legacy_new(*args, **kwargs)

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
        t._grad = None
        t._grad_fn = grad_fn
        t._out_nr = out_nr
        t._vc = VersionCounter()
        t._view = None
        t._views = None
        t._hooks = None
        t._post_acc_hooks = None
        t._acc = None
        t._retains_grad = False
        t._sn = next(_SERIAL)  # creation order: torchish.compile tells pre-existing state from temporaries
        if STATE.inference:
            t._inf = True
        rec = STATE.recorder
        if rec is not None:
            rec.created(t)
        return t

    # ---------------------------------------------------------------------------------------------------------
    # metadata

    @property
    def shape(self) -> Size:
        return Size(self._v.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._v.shape)
        return self._v.shape[wrap_dim(dim, len(self._v.shape), False)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_np(self._v.dtype)

    @property
    def device(self) -> _device.device:
        d = self._v
        if type(d) is MetaArray:
            return _device.device("meta")
        if isinstance(d, jax.core.Tracer):
            return _device.get_default_device()
        try:
            devs = d.devices()
        except AttributeError:
            return _device.get_default_device()
        return _device.from_jax(next(iter(devs))) if len(devs) == 1 else _device.get_default_device()

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self) -> int:
        """The device index; -1 on the CPU (PyTorch's convention)."""
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def ndim(self) -> int:
        return self._v.ndim

    def dim(self) -> int:
        return self._v.ndim

    def ndimension(self) -> int:
        return self._v.ndim

    def numel(self) -> int:
        return int(np.prod(self._v.shape, dtype=np.int64))

    nelement = numel

    def element_size(self) -> int:
        return self._v.dtype.itemsize

    @property
    def itemsize(self):
        return self._v.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self._v.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_contiguous(self, memory_format=None) -> bool:
        return True

    def is_signed(self):
        return self.dtype.is_signed

    @property
    def is_sparse(self):
        return self._coo is not None

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        return type(self._v) is MetaArray

    @property
    def layout(self):
        return _layout.strided if self._coo is None else _layout.sparse_coo

    def _wrap_dim(self, dim, ndim=None):
        ndim = self._v.ndim if ndim is None else ndim
        return wrap_dim(dim, ndim)

    def jax(self) -> jax.Array:
        """The ``jax.Array`` behind this tensor, without a copy (a pending lazy value is computed first).

        A JAX array carries no autograd graph, so the result is detached even when this tensor requires grad.
        """
        return self._d

    # ---------------------------------------------------------------------------------------------------------
    # autograd record

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        if not isinstance(flag, bool):
            raise RuntimeError("requires_grad must be a bool")
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if not isinstance(requires_grad, bool):  # (PyTorch's argument parser takes a Python bool only)
            from .ops.elementwise import type_name
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type_name(requires_grad)}")
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self.dtype.category < _dtype._FLOAT:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if requires_grad and self._inf and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._rg = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        if self._nograd_view or self._fn_view is not None:
            self._check_view_rebase()
        return self._grad_fn

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made inside ``inference_mode`` (or a view of one)."""
        return self._inf

    @property
    def is_leaf(self) -> bool:
        if self._nograd_view or self._fn_view is not None:
            self._check_view_rebase()
        return self._grad_fn is None

    def _check_view_rebase(self):
        """PyTorch refuses to rebuild the grad_fn of a view made under no_grad, or returned by a custom Function,
        once its storage was written."""
        if self._vc.value == self.__dict__["_view_ver"]:
            return
        if self._fn_view is not None and len(self._fn_view) == 3:  # an output of a multi-view op (unbind, split)
            raise RuntimeError(
                f"Output {self._fn_view[1]} of {self._fn_view[0]} is a view and its base or another view of its "
                "base has been modified inplace. This view is the output of a function that returns multiple "
                "views. Such functions do not allow the output views to be modified inplace. You should replace the "
                "inplace operation by an out-of-place one.")
        if self._fn_view is not None:
            raise RuntimeError(
                f"Output {self._fn_view[1]} of {self._fn_view[0]} is a view and its base or another view of its "
                "base has been modified inplace. This view was created inside a custom Function (or because an "
                "input was returned as-is) and the autograd logic to handle view+inplace would override the custom "
                "backward associated with the custom Function, leading to incorrect gradients. This behavior is "
                "forbidden. You can fix this by cloning the output of the custom Function.")
        if self._grad_fn is None:
            raise RuntimeError(
                "A view was created in no_grad mode and its base or another view of its base has been modified "
                "inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace either both inside "
                "the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the "
                "inplace to be tracked).")

    @property
    def output_nr(self) -> int:
        return self._out_nr

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            _warn_nonleaf_grad()
        return self._grad

    @grad.setter
    def grad(self, g):
        if g is not None:
            if not isinstance(g, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}")
            if tuple(g.shape) != tuple(self.shape):
                raise RuntimeError(f"attempting to assign a gradient of size '{list(g.shape)}' to a tensor of size "
                                   f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the "
                                   "same size")
            want = self.grad_dtype
            if want is not None and g.dtype != want:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype.cpp_type_name(g.dtype)}' to a tensor with "
                    f"grad_dtype '{_dtype.scalar_type_name(want)}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
        if STATE.recorder is not None:
            STATE.recorder.wrote(self)
        self._grad = g

    @property
    def grad_dtype(self):
        """The dtype ``.grad`` must have (the tensor's own unless set; None: any): accumulated gradients are cast
        to it."""
        want = self.__dict__.get("_grad_dtype", False)
        return self.dtype if want is False else want

    @grad_dtype.setter
    def grad_dtype(self, value):
        if value is not None and not isinstance(value, _dtype.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        self.__dict__["_grad_dtype"] = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def _version(self) -> int:
        if self._inf:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc.value

    def _edge(self):
        """Where this tensor's gradient goes: (grad_fn, output_nr), or its AccumulateGrad for a leaf; None for a
        view made under no_grad (PyTorch gives its uses a ``(None, 0)`` edge)."""
        if self._grad_fn is not None:
            if self._fn_view is not None:
                self._check_view_rebase()
            return (self._grad_fn, self._out_nr)
        if self._nograd_view:
            self._check_view_rebase()
            return None
        acc = self._acc() if self._acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc = weakref.ref(acc)
        return (acc, 0)

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn.add_tensor_pre_hook(self._out_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after the gradient was accumulated into ``tensor.grad`` (leaves only)."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        return add_hook(self._post_acc_hooks, hook)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        ref = weakref.ref(self)
        self._grad_fn.set_retain(self._out_nr, ref)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def _move_retain(self, fn, nr):
        """Before this tensor's grad_fn becomes output ``nr`` of ``fn`` (an in-place write, a view's regenerated
        grad_fn): PyTorch moves the retains_grad hook to the node of the new value."""
        if not self._retains_grad or fn is None or (fn is self._grad_fn and nr == self._out_nr):
            return
        old = self._grad_fn
        if old is not None and old._retains:
            old._retains.pop(self._out_nr, None)
        fn.set_retain(nr, weakref.ref(self))

    def detach(self):
        """A new tensor sharing this one's value and version counter, outside the graph (inside a trace, outside
        the trace's own differentiation too)."""
        out = Tensor._make(_detached(self._v) if STATE.tracing else self._v)
        out._attach_alias(self, share_version=True)
        if self._coo is not None:
            from .sparse import mark_sparse
            mark_sparse(out, self._coo.detach())
        return out

    def detach_(self):
        if self._view is not None and self._view[2]:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self._grad_fn is not None:  # (a backward that saved this non-leaf then raises, as PyTorch's SavedVariable)
            self._vc.detached = self._vc.value
        self._grad_fn = None
        self._rg = False
        if STATE.tracing:
            self._v = _detached(self._v)
        return self

    @property
    def data(self):
        out = Tensor._make(_detached(self._v) if STATE.tracing else self._v)
        out._attach_alias(self, share_version=False)
        return out

    @data.setter
    def data(self, other):
        from .ops.resize import set_data
        set_data(self, other)

    # ---------------------------------------------------------------------------------------------------------
    # views and in-place rebinding

    def _attach_view(self, src, op, static):
        """Mark self as the output of view op ``op`` applied to ``src`` (sharing its storage and version)."""
        if src._view is not None:
            base, chain, diff = src._view
        else:
            base, chain, diff = src, (), True
        self._view = (base, chain + ((op, static),), diff)
        self._vc = src._vc
        if not diff:
            self._alias_base = src if src._alias else src._alias_base
        if src._fn_view is not None and len(src._fn_view) == 2:  # a view of a Function's view output: the same
            name = op.grad_name[:-len("Backward0")] if op.grad_name.endswith("Backward0") else op.grad_name
            self._fn_view = (name, dict(static).get("_out", 0))
            self._view_ver = self._vc.value
        if src._inf:
            self._inf = True
        elif self._inf:  # made inside inference_mode, but a view of a normal tensor stays a normal tensor
            del self._inf
        if diff and not self._rg and base._rg and (not STATE.grad_enabled or STATE.inference):
            self._rg = True
            self._nograd_view = True
            self._view_ver = self._vc.value
        if base._views is None:
            base._views = weakref.WeakSet()
        base._views.add(self)

    def _attach_alias(self, src, share_version):
        """Mark self as a non-differentiable alias of ``src`` (``detach()``, ``.data``)."""
        if src._view is not None:
            base, chain, _ = src._view
        else:
            base, chain = src, ()
        self._view = (base, chain, False)
        self._alias = True
        if src._inf:
            self._inf = True
        if share_version:
            self._vc = src._vc
        if base._views is None:
            base._views = weakref.WeakSet()
        base._views.add(self)

    def _check_inplace(self):
        """PyTorch's guards for an in-place op on this tensor while gradients are recorded."""
        if self._inf and not STATE.inference:
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                               "clone to get a normal tensor before doing inplace update.See "
                               "https://github.com/pytorch/rfcs/pull/17 for more details.")
        if not STATE.grad_enabled:
            return
        if self._nograd_view and self._grad_fn is None:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
                "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
                "inplace to be tracked) or both outside (if you want the inplace to be tracked).")
        if self._fn_view is not None and len(self._fn_view) == 2:
            name, nr = self._fn_view
            raise RuntimeError(
                f"Output {nr} of {name} is a view and is being modified inplace. This view was created inside a "
                "custom Function (or because an input was returned as-is) and the autograd logic to handle "
                "view+inplace would override the custom backward associated with the custom Function, leading to "
                "incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
                "custom Function.")
        if self._view is not None and self._view[2]:
            base = self._view[0]
            if base._grad_fn is None and (base._rg or self._rg):  # (PyTorch: the view requires grad, its base is
                # a leaf: also a view made a leaf that requires grad, `arange(6.).view(2, 3).requires_grad_()[0]`)
                multi = multi_output_view_error(self._view[1])
                if multi is not None:  # PyTorch refuses the view itself before it looks at its base
                    raise multi
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
        elif self._grad_fn is None and self._rg:  # a leaf, or an alias (detach(), copy.copy) made one
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")

    def _assign(self, r):
        """Make ``r`` (already of self's shape and dtype) the new value of self, in place: write through views,
        rebind the graph when recording, bump the version, refresh the other views of the same storage."""
        if getattr(STATE, "functional_trace", 0):
            _check_captured_write(self if self._view is None else self._view[0], r)
        if self._view is None:
            self._rebind(r)
            return self
        base, chain, diff = self._view
        _VIEW_WRITE.write(self, base, chain, diff, r)
        return self

    def _rebind(self, r, vc=None):
        if STATE.recorder is not None:
            STATE.recorder.wrote(self)
        if not STATE.grad_enabled and self._rg and STATE.tracing:  # written behind autograd's back: to the
            self._v = _written_through(self._v, r._v)             # trace's differentiation still the old value
        else:
            self._v = r._v
        if STATE.grad_enabled:
            if r._grad_fn is not None:
                self._move_retain(r._grad_fn, r._out_nr)
                self._grad_fn = r._grad_fn
                self._out_nr = r._out_nr
                self._rg = True
            elif self._grad_fn is not None:  # the new value does not depend on the graph: no gradient flows back
                self._grad_fn = None
                self._rg = False
        (vc or self._vc).value += 1
        if self._views is not None:
            _refresh_views(self._views)

    def _set_value(self, value):
        """Replace the value in place, outside autograd (RNG state, optimizer state, compile write-back). A pending
        lazy value is owned by this tensor from now on: its computed value is written into it."""
        set_values((self,), (value,))

    def _refresh(self):
        """Recompute this view's value (and its grad_fn) from its base after the base changed."""
        base, chain, diff = self._view
        if not chain:
            self._v = _detached(base._v) if not diff and STATE.tracing else base._v
            return
        _VIEW_WRITE.refresh(self, base, chain, diff)


def _detached(v):
    """A traced value cut from the trace's differentiation where torchish's autograd cuts it (``detach()``,
    ``.data``): inside ``torchish.compile`` and ``torchish.func`` transforms, as PyTorch's are."""
    from .ops.tracing import cut
    return cut(v)


def _written_through(old, new):
    from .ops.tracing import through, writes_behind_autograd
    return through(old, new) if writes_behind_autograd() else new


_tensor_values.Tensor = Tensor
_rebuild = _tensor_values._rebuild  # (pickles made before the protocol moved name it here)


def _check_captured_write(target, r):
    """PyTorch's refusals of in-place writes inside a ``torchish.func`` transform, which here would also leak the
    transform's tracers into Tensors that outlive it. Under grad/vjp/jvp: any in-place op on a Tensor captured from
    outside the transform (a module's buffer, a closed-over tensor: made before the outermost transform scope began,
    ``transform_scope_start``); Tensors made inside the function may be written. Under vmap: a batched value (a
    tracer) written into an unbatched Tensor (a concrete value), made inside or not."""
    if isinstance(target._v, jax.core.Tracer) or getattr(STATE, "captured_writes", 0):
        return  # a value of the transform, or to_jax's own copies of the buffers
    if getattr(STATE, "vmap_level", 0):
        if isinstance(r._v, jax.core.Tracer):
            raise RuntimeError(
                "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` "
                "in extra_args that has more elements than `self`. This happened due to `other` being vmapped over "
                "but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
                "inplace arithmetic. If said operator is being called inside the PyTorch framework, please file a bug "
                "report instead.")
        return
    if target._sn < STATE.transform_start:
        raise RuntimeError(
            "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place "
            "operation that would mutate a captured Tensor. This is not supported; please rewrite the function being "
            "transformed to explicitly accept the mutated Tensor(s) as inputs.")


def transform_scope_start():
    """A creation serial no Tensor made so far has reached: Tensors made later are the transform's own."""
    return next(_SERIAL)


def _warn_nonleaf_grad():
    import warnings
    warnings.warn(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
            "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
        "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, "
        "make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
        "information.", UserWarning, stacklevel=3)


def wrap_dim(dim, ndim, wrap_scalar=True):
    """Normalise a possibly negative dim, raising PyTorch's IndexError when it is out of range. A 0-d tensor takes
    dims -1 and 0 unless ``wrap_scalar`` is false (``size(dim)``): then it has none."""
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if not isinstance(dim, int):
        try:
            dim = dim.__index__()
        except AttributeError:
            raise TypeError(f"dim must be an int, got {type(dim).__name__}") from None
    if ndim == 0 and not wrap_scalar:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim > 0 else 0


wrap = Tensor._make
"""``wrap(value)``: a fresh Tensor (no graph) around a JAX value."""


def set_values(tensors, values):
    """``Tensor._set_value`` for many tensors at once (compile write-back, optimizer updates)."""
    rec = STATE.recorder
    lazy_type = _LAZY[0]
    for t, value in zip(tensors, values):
        if rec is not None:
            rec.wrote(t)
        if t._view is not None:  # a view or alias: the value is written into the storage its base holds
            _write_through(t, value)
            continue
        t._v = value
        if type(value) is lazy_type:
            value.owner = weakref.ref(t)
        t._vc.value += 1
        if t._views is not None:
            _refresh_views(t._views)


def _write_through(t, value):
    """``t._set_value(value)`` for a view: the write goes into its base (and so reaches the base's other views), as
    a write with grad recording off."""
    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        base, chain, diff = t._view
        _VIEW_WRITE.write(t, base, chain, diff, Tensor._make(value))
    finally:
        STATE.grad_enabled = prev


def _refresh_views(views):
    """Recompute the live views of a base whose value was replaced. ``views.data`` is the WeakSet's set of
    references: testing it is a C-level length, where ``len(WeakSet)`` runs Python (a Parameter keeps the WeakSet
    of the tensor it was made from long after that tensor died)."""
    if views.data:
        for v in list(views):
            v._refresh()


class _ViewWriter:
    """Filled in by the ops layer (which owns the view ops): how to write through a view and refresh one."""

    write = None
    refresh = None


_VIEW_WRITE = _ViewWriter()
