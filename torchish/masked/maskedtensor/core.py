"""``MaskedTensor``: a tensor whose elements each carry a validity bit (PyTorch's prototype
``torch.masked.MaskedTensor``).

PyTorch builds it as a ``__torch_dispatch__`` wrapper around a data tensor and a boolean mask. Here a MaskedTensor
is a Tensor whose value is the data, with the mask beside it (``_masked_mask``); every function called on it goes
through ``__torch_function__`` (:mod:`.dispatch`), which runs the operation on a differentiable alias of the data
(:func:`data_of`: its gradient is zero at masked-out elements) and wraps the result with the mask PyTorch gives
it. The autograd graph is therefore the plain one over the data; the gradients' masks follow beside it
(:mod:`.grad_mask`), so a MaskedTensor leaf's ``.grad`` is a MaskedTensor with PyTorch's mask.

Differences: sparse (COO/CSR) data raises NotImplementedError; where PyTorch raises on accumulating two gradients
with different masks (``a[0].sum() + a[2].sum()``), the masks are or-ed here.

Example::

    >>> import torchish as torch
    >>> mt = torch.masked.masked_tensor(torch.tensor([1., 2., 3.]), torch.tensor([True, False, True]))
    >>> mt
    MaskedTensor(
      [  1.0000,       --,   3.0000]
    )
"""
from __future__ import annotations

import warnings

import jax.numpy as jnp

from ..._layout import strided
from ..._subclass import DisableTorchFunctionSubclass, activate
from ..._tensor import Tensor
from ...ops.registry import apply, defop
from ...ops.tensor_api import _ALIAS


def _masked_grad_vjp(g, x, mask, out):
    return jnp.where(mask, g, jnp.zeros((), g.dtype)), None


# A MaskedTensor's data in the graph: the forward is the identity, the gradient is zero at the masked-out elements.
# PyTorch's gradients of MaskedTensors are MaskedTensors, so a masked-out element never reaches (nor spoils with
# 0 * inf = nan) another operand's gradient; zeroing it where it enters the graph does the same here.
_DATA = defop("masked_tensor_data", lambda x, mask: x, vjp=_masked_grad_vjp, grad_name="AliasBackward0")
_GET_DATA = defop("masked_tensor_get_data", lambda x, mask: x, vjp=_masked_grad_vjp, grad_name="GetDataBackward")
# as_masked_tensor's node (PyTorch's reductions hand their results through it)
CONSTRUCTOR = defop("masked_tensor_constructor", lambda x: x, linear=True, grad_name="ConstructorBackward")

_SUPPORTED = ("float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64")

PROTOTYPE_WARNING = ("The PyTorch API of MaskedTensors is in prototype stage "
                     "and will change in the near future. Please open a Github issue "
                     "for features requests and see our documentation on the torch.masked "
                     "module for further information about the project.")


def is_masked_tensor(obj, /):
    """Whether ``obj`` is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def data_of(a, op=_DATA):
    """A MaskedTensor's data as a plain Tensor in its autograd graph, whose gradient is zero at the masked-out
    elements; anything else as it is."""
    if not isinstance(a, MaskedTensor):
        return a
    with DisableTorchFunctionSubclass():
        out = apply(op, (a, a._masked_mask))
    out.__class__ = Tensor
    return out


def masked_grad(t, mask):
    """Plain tensor ``t`` (requiring grad) broadcast to ``mask``'s shape, with its gradient zero where ``mask`` is
    False: a plain operand of a MaskedTensor op takes gradient from the valid elements only, as in PyTorch."""
    if not (isinstance(t, Tensor) and t.requires_grad):
        return t
    with DisableTorchFunctionSubclass():
        out = apply(_DATA, (t.expand(mask.shape), mask))
    out.__class__ = Tensor
    return out


def mask_of(a):
    """A MaskedTensor's mask; None for anything else."""
    return a._masked_mask if isinstance(a, MaskedTensor) else None


def wrap(data, mask):
    """``data`` (a plain Tensor result, in the graph) as a MaskedTensor with ``mask``; tuples and lists item by
    item (with the matching item of ``mask``)."""
    if isinstance(data, (list, tuple)):
        return type(data)(wrap(d, m) for d, m in zip(data, mask))
    if not isinstance(data, Tensor):
        return data
    if type(data) is not Tensor:  # (a MaskedTensor handed back as it is: alias it, never reclass the caller's)
        with DisableTorchFunctionSubclass():
            data = apply(_ALIAS, (data,))
    data.__class__ = MaskedTensor
    data._masked_mask = mask
    _validate(data, mask)
    return data


def _validate(data, mask):
    if type(mask) is not Tensor:
        raise TypeError(f"data and mask must have the same type. Got {type(Tensor._make(data._v))} and "
                        f"{type(mask)}")
    name = str(data.dtype).split(".")[-1]
    if str(mask.dtype) != "torch.bool":
        raise TypeError("mask must have dtype bool.")
    if name not in _SUPPORTED:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.ndim != mask.ndim:
        raise ValueError("data.dim() must equal mask.dim()")
    if tuple(data.shape) != tuple(mask.shape):
        raise ValueError("data.size() must equal mask.size()")


def masked_str(data, mask, formatter):
    """PyTorch's MaskedTensor text: nested brackets, ``--`` for masked-out elements."""
    if data.ndim == 1:
        items = [formatter.format(d) if isinstance(d, float) else str(d) for d in data.tolist()]
        hidden = [not m for m in mask.tolist()]
        width = max(8 if h else len(e) for e, h in zip(items, hidden))
        return "[" + ", ".join("--".rjust(width) if h else e for e, h in zip(items, hidden)) + "]"
    rows = [masked_str(d, m, formatter) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + line for line in r.split("\n")) for r in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


class MaskedTensor(Tensor):
    """A tensor with a boolean mask of its valid elements (``torch.masked.MaskedTensor(data, mask)``)."""

    def __new__(cls, data, mask, requires_grad=False):
        if isinstance(data, MaskedTensor) or not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if isinstance(mask, MaskedTensor) or not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        warnings.warn(PROTOTYPE_WARNING, UserWarning, stacklevel=2)
        if data.requires_grad:
            warnings.warn("It is not recommended to create a MaskedTensor with a tensor that requires_grad. "
                          "To avoid this, you can use data.detach().clone()", UserWarning, stacklevel=2)
        if data.layout != mask.layout:
            raise TypeError("data and mask must have the same layout.")
        if data.layout != strided:
            raise NotImplementedError("torchish's MaskedTensor holds strided data only "
                                      f"(got {data.layout} data)")
        t = cls._make(data._d)
        t._masked_mask = Tensor._make(mask._d)
        _validate(t, t._masked_mask)
        if requires_grad:
            t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
        activate()  # (functions called on a MaskedTensor reach __torch_function__ from now on)
        return t

    def __init__(self, data, mask, requires_grad=False):
        pass

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from .dispatch import handle
        return handle(func, types, args, kwargs or {})

    # -- the mask and the data --------------------------------------------------------------------------------------

    def get_data(self):
        """The data (every element, masked-out ones too) as a plain Tensor; differentiable."""
        from .grad_mask import record
        out = data_of(self, _GET_DATA)
        record(out, [(self, None, 0, None, True)])
        return out

    def get_mask(self):
        """The boolean mask: True where the element is valid."""
        return self._masked_mask

    @property
    def _masked_data(self):
        return Tensor._make(self._d)

    def to_tensor(self, value):
        """A plain Tensor with the masked-out elements set to ``value``."""
        return self.get_data().masked_fill(~self.get_mask(), value)

    def is_sparse_coo(self):
        return False

    def is_sparse_csr(self):
        return False

    @property
    def is_sparse(self):
        return False

    @property
    def grad(self):
        """The accumulated gradient, a MaskedTensor with this tensor's mask (None before a backward)."""
        with DisableTorchFunctionSubclass():
            g = Tensor.grad.__get__(self)
        if g is not None and type(g) is Tensor:
            from .grad_mask import take
            g.__class__ = MaskedTensor
            g._masked_mask = take(self, self._masked_mask)
        return g

    @grad.setter
    def grad(self, value):
        with DisableTorchFunctionSubclass():
            Tensor.grad.__set__(self, value)

    def __repr__(self, *, tensor_contents=None):
        formatter = "{0:8.4f}"
        data, mask = Tensor._make(self._d), self._masked_mask
        if data.ndim == 0:
            value = data.item()
            text = formatter.format(value) if isinstance(value, float) else str(value)
            if not mask.item():
                text = "--"
            return "MaskedTensor(" + text + ", " + str(mask.item()) + ")"
        s = "\n".join("  " + line for line in masked_str(data, mask, formatter).split("\n"))
        return "MaskedTensor(\n" + s + "\n)"

    __str__ = __repr__
