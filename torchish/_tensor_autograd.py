"""The autograd record of a Tensor (:class:`TensorAutograd`, a base of :class:`torchish._tensor.Tensor`):
``requires_grad``, ``grad_fn``/``is_leaf`` (with PyTorch's refusals for views whose storage was written behind
their graph), ``.grad`` and ``grad_dtype``, the version counter, the tensor's gradient edge, hooks and
``retain_grad``."""
from __future__ import annotations

import collections
import weakref

from . import _dtype
from .autograd.graph import AccumulateGrad, add_hook
from .autograd.grad_mode import STATE

Tensor = None  # torchish._tensor.Tensor, set once it is defined (this class is its base)


class TensorAutograd:
    """Where a Tensor's gradient comes from and goes (a base of :class:`torchish._tensor.Tensor`)."""

    __slots__ = ()

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        if not isinstance(flag, bool):
            raise RuntimeError("requires_grad must be a bool")
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype can require gradients")

    def requires_grad_(self, requires_grad=True):
        # (PyTorch words the integer-dtype error differently on each path: this method, the attribute's setter, and
        # nn.Parameter / factory functions)
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")

    def _set_requires_grad(self, requires_grad, int_message):
        if not isinstance(requires_grad, bool):  # (PyTorch's argument parser takes a Python bool only)
            from .ops.elementwise import type_name
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type_name(requires_grad)}")
        if self._gfn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self.dtype.category < _dtype._FLOAT:
            raise RuntimeError(int_message)
        if requires_grad and self._inf and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._rg = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        if self._nograd_view or self._fn_view is not None:
            self._check_view_rebase()
        return self._gfn

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made inside ``inference_mode`` (or a view of one)."""
        return self._inf

    @property
    def is_leaf(self) -> bool:
        if self._nograd_view or self._fn_view is not None:
            self._check_view_rebase()
        return self._gfn is None

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
        if self._gfn is None:
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
        if self._gfn is not None and not self._retains_grad and self._gval is None:
            _warn_nonleaf_grad()
        return self._gval

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
        self._gval = g

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
        if self._gfn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        self.__dict__["_grad_dtype"] = value

    @grad.deleter
    def grad(self):
        self._gval = None

    # PyTorch's private names for ``grad`` and ``grad_fn``: its ``_grad`` is ``grad`` (checks, warning, and a
    # subclass's ``__torch_function__`` sees ``Tensor.grad.__get__``/``__set__``), its ``_grad_fn`` reads ``grad_fn``.
    # torchish's own fields are ``_gval`` and ``_gfn``, which its internal reads use without dispatching.
    @property
    def _grad(self):
        return self.grad

    @_grad.setter
    def _grad(self, g):
        self.grad = g

    @_grad.deleter
    def _grad(self):
        del self.grad

    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.setter
    def _grad_fn(self, value):
        if value is not None:
            raise RuntimeError("_grad_fn can be only set to None")
        from ._subclass import _disable_torch_function_subclass
        with _disable_torch_function_subclass():  # (a subclass sees this assignment alone, not a detach_)
            self.detach_()  # (PyTorch detaches in place: the tensor becomes a leaf)

    @property
    def _cdata(self) -> int:
        """A number that identifies this tensor while it lives (PyTorch's: its C++ object's address)."""
        return id(self)

    @property
    def _backward_hooks(self):
        """The hooks ``register_hook`` added (PyTorch's ordered dict: handle id -> hook), or None."""
        if self._gfn is not None:
            return (self._gfn._tensor_pre_hooks or {}).get(self._out_nr)
        return self._hooks

    @_backward_hooks.setter
    def _backward_hooks(self, hooks):
        if self._gfn is None:
            self._hooks = hooks
        elif hooks is None:
            (self._gfn._tensor_pre_hooks or {}).pop(self._out_nr, None)
        else:
            if self._gfn._tensor_pre_hooks is None:
                self._gfn._tensor_pre_hooks = {}
            self._gfn._tensor_pre_hooks[self._out_nr] = hooks

    @property
    def _post_accumulate_grad_hooks(self):
        """The hooks ``register_post_accumulate_grad_hook`` added (handle id -> hook), or None."""
        return self._post_acc_hooks

    @_post_accumulate_grad_hooks.setter
    def _post_accumulate_grad_hooks(self, hooks):
        self._post_acc_hooks = hooks

    @property
    def _version(self) -> int:
        if self._inf:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc.value

    def _edge(self):
        """Where this tensor's gradient goes: (grad_fn, output_nr), or its AccumulateGrad for a leaf; None for a
        view made under no_grad (PyTorch gives its uses a ``(None, 0)`` edge)."""
        if self._gfn is not None:
            if self._fn_view is not None:
                self._check_view_rebase()
            return (self._gfn, self._out_nr)
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
        if self._gfn is not None:
            return self._gfn.add_tensor_pre_hook(self._out_nr, hook)
        if self._hooks is None:
            self._hooks = collections.OrderedDict()
        return add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after the gradient was accumulated into ``tensor.grad`` (leaves only)."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._gfn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = collections.OrderedDict()
        return add_hook(self._post_acc_hooks, hook)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._gfn is None or self._retains_grad:
            return
        self._retains_grad = True
        ref = weakref.ref(self)
        self._gfn.set_retain(self._out_nr, ref)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def _move_retain(self, fn, nr):
        """Before this tensor's grad_fn becomes output ``nr`` of ``fn`` (an in-place write, a view's regenerated
        grad_fn): PyTorch moves the retains_grad hook to the node of the new value."""
        if not self._retains_grad or fn is None or (fn is self._gfn and nr == self._out_nr):
            return
        old = self._gfn
        if old is not None and old._retains:
            old._retains.pop(self._out_nr, None)
        fn.set_retain(nr, weakref.ref(self))


def _warn_nonleaf_grad():
    import warnings
    warnings.warn(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
            "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
        "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, "
        "make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
        "information.", UserWarning, stacklevel=3)
