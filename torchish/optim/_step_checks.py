"""PyTorch's checks and errors of an optimizer step, as :class:`StepChecksMixin` (a base of
:class:`~torchish.optim.Optimizer`): a sparse gradient an optimizer refuses, ``fused=True`` over parameters that are
not floating point, ``capturable=True`` on the CPU, state of another dtype than its gradient where PyTorch's update
calls ``lerp_`` (after counting the step, as PyTorch does), loaded state of another shape than its parameter, and
the broadcast error of a kernel that meets such state (:class:`_state_shape_errors`). Each raises PyTorch's
exception type with PyTorch's words, before or instead of a JAX error inside the jitted update.

Subclasses tune the checks through the class attributes below (``_capturable_check``, ``_lerp_state``, ...).
"""
from __future__ import annotations

import re

from .. import _dtype
from .._tensor import Tensor, set_values
from ..autograd.grad_mode import STATE
from ..ops import tracing
from ..ops.broadcast import broadcast_error, broadcast_shapes


def check_fused_param(p):
    """PyTorch's ``_device_dtype_check_for_fused``: a fused step takes floating-point parameters only."""
    if not p.is_floating_point():
        devices = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of supported devices: "
                           f"{devices} but {p.dtype} and {p.device.type}")


class StepChecksMixin:
    """The step-time checks of :class:`~torchish.optim.Optimizer` (see the module's docstring)."""

    def _check_sparse_grad(self, group):
        """Raise PyTorch's error where this optimizer refuses a sparse gradient (``Embedding(sparse=True)``'s,
        ``grad.to_sparse()``)."""
        raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")

    # PyTorch's capturable check (made outside torch.compile), per path (single-tensor, foreach): what its message
    # names and whether its list of devices names 'xla'
    _capturable_check = (("params and state_steps", True), ("params and state_steps", False))
    # PyTorch checks a fused group's dtype where it creates a parameter's state (Adam, Adagrad) and, for SGD and
    # Adagrad, once per optimizer on the first parameter with a gradient; SGD has no state check, its fused kernel
    # (named here) refuses the other dtypes
    _fused_check_first = False
    _fused_kernel = None

    def _check_fused(self, p):
        if self._fused_check_first and not self.__dict__.get("_fused_checked"):
            check_fused_param(p)
            self._fused_checked = True
        elif self._fused_kernel is not None:
            if not p.is_floating_point():
                raise NotImplementedError(f'"{self._fused_kernel}" not implemented for '
                                          f"'{_dtype.scalar_type_name(p.dtype)}'")
        elif not self.state.get(p):
            check_fused_param(p)

    _param_shaped_state = True  # every non-scalar state Tensor has its parameter's shape (not Adafactor's)

    # the state PyTorch's update writes with ``state.lerp_(grad, weight)``, which refuses a gradient of another
    # dtype (a model converted with ``model.double()`` after the state was made): see _check_lerp_dtypes
    _lerp_state = ()

    def _counted_before_lerp(self, group, p):
        """The state values PyTorch's update has written before its ``lerp_`` refuses ``p``'s gradient: the step."""
        return {"step": self.state[p]["step"]._d + 1}

    def _check_lerp_dtypes(self, group, params, keys, states):
        idx = [j for j, k in enumerate(keys) if k in self._lerp_state]
        for i, (p, row) in enumerate(zip(params, states)):
            gdt = p.grad._v.dtype  # (array dtypes: a pending lazy value knows its own)
            for j in idx:
                s = row[j]
                if isinstance(s, Tensor) and s._v.dtype != gdt:
                    break
            else:
                continue
            # PyTorch meets it after counting the step: the foreach update has counted every parameter's, the
            # single-tensor loop has updated the parameters before this one and counted this one's
            if group.get("foreach"):
                counted = params
            else:
                if i:
                    self._step_group(group, params[:i])
                counted = [p]
            tensors, values = [], []
            for q in counted:
                for k, v in self._counted_before_lerp(group, q).items():
                    tensors.append(self.state[q][k])
                    values.append(v)
            set_values(tensors, values)
            raise RuntimeError(f"expected dtype {_c_type_name(s.dtype)} for `end` but got dtype "
                               f"{_c_type_name(p.grad.dtype)}")

    # the foreach flags for which PyTorch's update meets a mismatched state first in an op on the parameter (or its
    # gradient) and the state, in that order (Rprop's grad.mul(prev)): its broadcast error names the parameter's size
    # first
    _param_first_on_mismatch = frozenset()

    def _check_loaded_shapes(self, params, foreach=False):
        """A loaded state Tensor whose shape is not its parameter's (a checkpoint of another model) fails the step
        with the RuntimeError of PyTorch's in-place update (of the state with the gradient, or the smaller one
        with the broadcast shape), not inside the jitted update."""
        for p in params:
            if id(p) not in self._unchecked_shapes:
                continue
            self._unchecked_shapes.discard(id(p))
            for s in self.state[p].values():
                if not isinstance(s, Tensor) or s.dim() == 0 or s.shape == p.shape:
                    continue
                try:
                    shape = list(broadcast_shapes(s.shape, p.shape))
                except RuntimeError:
                    pair = (tuple(s.shape), tuple(p.shape))
                    raise broadcast_error(*(pair[::-1] if foreach in self._param_first_on_mismatch else pair)) from None
                out = s if list(s.shape) != shape else p
                raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape {shape}")

    def _check_capturable(self, group, params):
        """``capturable=True`` needs the parameters on an accelerator: on the CPU PyTorch's step raises
        AssertionError (after creating the state), except while compiling."""
        if tracing.active() or STATE.tracing or STATE.recorder is not None:
            return
        what, xla = self._capturable_check[bool(group.get("foreach"))]
        devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
        if any(p.device.type not in devices for p in params):
            raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")


class _state_shape_errors:
    """PyTorch's broadcast RuntimeError where the update's kernel meets state of another shape than its parameter
    (state edited by hand, ``o.state[p]["exp_avg"] = torch.ones(4)``): JAX refuses it with a TypeError while
    tracing, PyTorch's foreach/elementwise ops with "The size of tensor a ..."."""

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if kind is TypeError:
            m = _SHAPES.search(str(e))
            if m is not None:
                a, b = (tuple(int(v) for v in g.split(",") if v.strip()) for g in m.groups())
                raise broadcast_error(a, b) from None
        return False


_SHAPES = re.compile(r"incompatible shapes for broadcasting: \(([\d, ]*)\), \(([\d, ]*)\)")


def _c_type_name(dtype):
    """The C++ type name PyTorch's dtype checks print (``TypeMeta``): ``float``, ``double``, ``c10::Half``."""
    name = str(dtype).rsplit(".", 1)[-1]
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}.get(name, name)
