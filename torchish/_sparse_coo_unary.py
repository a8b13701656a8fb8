"""The elementwise ops PyTorch runs on a COO tensor's entries: ``abs``, ``sqrt``, ``sin``, ``relu``, ``isnan``,
``pow(s, 2)``... (its ``coalesced_unary_ufunc`` kernels: the input coalesced, the op applied to the values, the
result coalesced), their aliases (``absolute``, ``arcsin``, ``fix``...) and their in-place forms.

The result's dense value is the dense op's on the input's dense value; its values are read from it at the
coalesced indices. The gradient follows PyTorch's: where its formula runs on sparse tensors the gradient reaches
the input at its entries only (the input is read through a mask there, so ``sqrt``'s infinite slope at an absent
zero gives no NaN), and where it does not (``sin``'s formula needs ``cos`` of a sparse tensor, ``sqrt``'s a
division by one) the backward raises PyTorch's error. An in-place form (``s.sqrt_()``) needs a coalesced input, as
in PyTorch; ``pow_``/``square_`` have no sparse kernel, nor ``round(decimals=...)``, nor a tensor exponent.

Example:
    >>> import torchish as torch
    >>> s = torch.sparse_coo_tensor([[0, 1, 0]], [4., 9., 5.], (3,))
    >>> r = s.sqrt()
    >>> r.is_sparse, r.is_coalesced(), r.indices(), r.values()
    (True, True, tensor([[0, 1]]), tensor([3., 3.]))
"""
from __future__ import annotations

from . import _dtype
from ._sparse_coo_grad import hands_sparse_grad
from ._sparse_coo_math import coalesced_indices
from ._tensor import Tensor
from .ops.registry import apply, overload
from .sparse import (_COO, _TO_DENSE, _SparseTensor, _refused, dispatch_error, entries_mask, grad_gate, mark_sparse,
                     refusing)

_MASKED = overload(_TO_DENSE, "SparseMaskBackward0")  # (the input read at its entries only: its gradient masked)


def _not_implemented(aten_name):
    return lambda x: ("NotImplementedError", dispatch_error(aten_name))


_ADD_DENSE = ("RuntimeError", "add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

# each op: None where PyTorch's backward runs on sparse tensors, else the error it raises (given the input)
_OPS = {
    "abs": None, "sign": None, "ceil": None, "floor": None, "round": None, "trunc": None, "frac": None,
    "log1p": None, "rad2deg": None, "deg2rad": None, "relu": None, "pow": None, "square": None,
    "isnan": None, "isinf": None, "isposinf": None, "isneginf": None, "signbit": None,
    "sgn": _not_implemented("_efficientzerotensor"), "erf": _not_implemented("exp"),
    "erfinv": _not_implemented("exp"), "sin": _not_implemented("cos"), "sinh": _not_implemented("cosh"),
    "tanh": _not_implemented("tanh_backward"), "nan_to_num": _not_implemented("ne.Scalar"),
    "asin": lambda x: _ADD_DENSE, "asinh": lambda x: _ADD_DENSE, "atan": lambda x: _ADD_DENSE,
    "expm1": lambda x: _ADD_DENSE, "tan": lambda x: _ADD_DENSE,
    "atanh": lambda x: ("RuntimeError", "memory format option is only supported by strided tensors"),
    "sqrt": lambda x: ("RuntimeError", f"Sparse division requires a scalar or zero-dim dense tensor divisor (got "
                                       f"shape {list(x.shape)} for divisor)"),
}
ALIASES = {"absolute": "abs", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh",
           "fix": "trunc"}


def _check_args(name, self, args, kwargs):
    """The calls PyTorch's sparse kernels refuse: ``round(decimals=)``, a tensor exponent, the zeroth power."""
    if name == "round" and kwargs.get("decimals") is not None:
        _refused("round.decimals")(self)
    if name == "pow":
        exponent = args[0] if args else kwargs.get("exponent")
        if isinstance(exponent, Tensor):
            _refused("pow.Tensor_Tensor")(self)
        if exponent == 0:
            raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result "
                               "tensor dense")


def _entries_of(out, indices):
    """The coalesced result's entries: ``out``'s values at ``indices``."""
    if not indices.shape[0]:
        return _COO(indices, Tensor.unsqueeze(out, 0), True)
    return _COO(indices, Tensor.__getitem__(out, tuple(indices.unbind(0))), True)


def _coalescing(name, refuse):
    dense_method = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        coo = self._coo
        if coo is None:
            return dense_method(self, *args, **kwargs)
        _check_args(name, self, args, kwargs)
        source, indices = self, coalesced_indices(coo, tuple(self.shape))
        if self.requires_grad:
            source = refusing(self, refuse(self)) if refuse is not None else hands_sparse_grad(apply(
                _MASKED, (grad_gate(self), entries_mask(coo.indices, tuple(self.shape), self.device))), 0, indices)
        out = dense_method(source, *args, **kwargs)
        if name == "pow" and out.dtype != self.dtype:  # (PyTorch's sparse pow writes into the input's dtype)
            raise RuntimeError(f"result type {_dtype.scalar_type_name(out.dtype)} can't be cast to the desired "
                               f"output type {_dtype.scalar_type_name(self.dtype)}")
        return mark_sparse(out, _entries_of(out, indices))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense_method.__doc__
    return method


def _coalescing_inplace(name, canonical):
    dense_method = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        coo = self._coo
        if coo is None:
            return dense_method(self, *args, **kwargs)
        if not coo.coalesced:
            raise RuntimeError(f"{canonical}_ requires coalesced input")
        _check_args(canonical, self, args, kwargs)
        dense_method(self, *args, **kwargs)
        self._coo = _entries_of(self, coo.indices)
        self._coo.refuse = coo.refuse
        return self
    method.__name__ = method.__qualname__ = name
    method.__doc__ = dense_method.__doc__
    return method


for _name, _refuse in _OPS.items():
    setattr(_SparseTensor, _name, _coalescing(_name, _refuse))
    if hasattr(Tensor, _name + "_") and _name not in ("pow", "square"):
        setattr(_SparseTensor, _name + "_", _coalescing_inplace(_name + "_", _name))
for _alias, _name in ALIASES.items():
    setattr(_SparseTensor, _alias, _coalescing(_alias, _OPS[_name]))
    if hasattr(Tensor, _alias + "_"):
        setattr(_SparseTensor, _alias + "_", _coalescing_inplace(_alias + "_", _name))
_SparseTensor.__abs__ = _SparseTensor.abs
for _name in ("pow_", "square_"):  # (PyTorch's square_ is pow_(2))
    setattr(_SparseTensor, _name, _refused("pow_.Scalar"))
