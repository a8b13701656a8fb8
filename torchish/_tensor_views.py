"""How Tensors share a storage (:class:`TensorViews`, a base of :class:`torchish._tensor.Tensor`): a view keeps
``(base, chain, differentiable)`` and a ``detach()``/``.data`` alias is a view outside the graph; JAX values never
change, so an in-place op computes a new value and *rebinds* the tensor (``_assign``: through its base for a view),
bumping the version and refreshing every live view of the base. Also the value write-back outside autograd
(``set_values``: optimizers, torchish.compile) and PyTorch's refusals of in-place writes (leaves, views made under
no_grad, outputs of multi-view ops, captured tensors inside ``torchish.func`` transforms)."""
from __future__ import annotations

import itertools
import weakref

import jax

from .autograd.grad_mode import STATE

Tensor = None  # torchish._tensor.Tensor, set once it is defined (this class is its base)
_SERIAL = itertools.count()  # creation order: torchish.compile and the func transforms tell older tensors by it
_LAZY = [None]  # the LazyValue class, filled in by torchish.ops.lazy


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


class TensorViews:
    """Views, aliases and in-place rebinding of a Tensor (a base of :class:`torchish._tensor.Tensor`)."""

    __slots__ = ()

    def detach(self):
        """A new tensor sharing this one's value and version counter, outside the graph (inside a trace, outside
        the trace's own differentiation too)."""
        out = Tensor._make(_detached(self._v) if STATE.tracing else self._v)
        out._attach_alias(self, share_version=True)
        if self._coo is not None:
            from .sparse import mark_sparse
            mark_sparse(out, self._coo.detach())
        return out

    def module_load(self, other, assign=False):
        """What ``nn.Module.load_state_dict`` swaps into this parameter or buffer under
        ``torch.__future__.set_swap_module_params_on_conversion(True)``: ``other`` detached with ``assign``, else
        this tensor with ``other`` copied in, detached (a Tensor subclass may override it, as in PyTorch)."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    def detach_(self):
        if self._view is not None and self._view[2]:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self._gfn is not None:  # (a backward that saved this non-leaf then raises, as PyTorch's SavedVariable)
            self._vc.detached = self._vc.value
        self._gfn = None
        self._rg = False
        if STATE.tracing:
            self._v = _detached(self._v)
        return self

    @property
    def data(self):
        """This tensor's value outside the graph, with a version counter of its own (a sparse tensor's ``.data`` is
        sparse, with the same entries, as PyTorch's)."""
        out = Tensor._make(_detached(self._v) if STATE.tracing else self._v)
        out._attach_alias(self, share_version=False)
        if self._coo is not None:
            from .sparse import mark_sparse
            mark_sparse(out, self._coo.detach())
        return out

    @data.setter
    def data(self, other):
        from .ops.resize import set_data
        set_data(self, other)

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
        if self._nograd_view and self._gfn is None:
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
            if base._gfn is None and (base._rg or self._rg):  # (PyTorch: the view requires grad, its base is
                # a leaf: also a view made a leaf that requires grad, `arange(6.).view(2, 3).requires_grad_()[0]`)
                multi = multi_output_view_error(self._view[1])
                if multi is not None:  # PyTorch refuses the view itself before it looks at its base
                    raise multi
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
        elif self._gfn is None and self._rg:  # a leaf, or an alias (detach(), copy.copy) made one
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
            if r._gfn is not None:
                self._move_retain(r._gfn, r._out_nr)
                self._gfn = r._gfn
                self._out_nr = r._out_nr
                self._rg = True
            elif self._gfn is not None:  # the new value does not depend on the graph: no gradient flows back
                self._gfn = None
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
