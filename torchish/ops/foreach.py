"""``torch._foreach_*``: an op applied to each Tensor of a list (EMA updates, hand-written optimizers use them).

On CPU PyTorch runs these as a loop over the per-Tensor op, so each element here is that op, with its numbers,
dtype rules, errors and autograd. Out-of-place forms return a tuple; in-place forms (trailing ``_``) update the
Tensors and return the list given. The second operand is a Number, a list of Numbers (one per Tensor), a 0-dim
Tensor, or a list of Tensors; ``alpha`` goes with the Tensor forms of add/sub, as PyTorch's overloads.
"""
from __future__ import annotations

import numbers

from .._tensor import Tensor

__all__ = []

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "clamp_min", "clamp_max", "maximum", "minimum", "pow")
_ALPHA = ("add", "sub")
_TENSOR_OVERLOAD = ("add", "mul", "div")
_SCALAR_FORM = {"maximum": "clamp_min", "minimum": "clamp_max"}


def _tensors(name, tensors):
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{name}(): argument 'self' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _per_tensor(name, other, n, alpha_given, tensor_overload=False):
    """``other`` as one operand per Tensor of the list (PyTorch's overload checks). ``tensor_overload``: the op
    takes one Tensor for the whole list (add, mul, div); elsewhere a 0-dim Tensor is read as a Number."""
    if isinstance(other, Tensor):
        if tensor_overload:
            if other.ndim != 0:
                raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.ndim} dimensions and "
                                   f"{other.numel()} elements.")
            return [other] * n
        if other.ndim == 0 and not alpha_given:
            return [other.item()] * n
        raise TypeError(f"{name}() received an invalid combination of arguments - got (tuple of Tensors, Tensor)")
    if isinstance(other, (list, tuple)):
        if all(isinstance(o, Tensor) for o in other) and other:
            if len(other) != n:
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(other)}")
            return list(other)
        if alpha_given:
            raise TypeError(f"{name}() received an invalid combination of arguments: alpha goes with Tensor operands")
        if len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, numbers.Number) and not alpha_given:
        return [other] * n
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(other).__name__}"
                    f"{', alpha' if alpha_given else ''})")


def _method(t, op, inplace):
    return getattr(t, op + "_" if inplace else op)


def _unary(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"

    def f(self):
        self = _tensors(name, self)
        out = tuple(_method(t, op, inplace)() for t in self)
        return self if inplace else out
    f.__name__ = name
    return f


def _binary(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"

    def f(self, other, *, alpha=None):
        if op == "pow" and not inplace and isinstance(self, numbers.Number):  # _foreach_pow(scalar, tensors)
            exps = _tensors(name, other)
            from .power import pow as pow_
            return tuple(pow_(self, e) for e in exps)
        self = _tensors(name, self)
        if alpha is not None and op not in _ALPHA:
            raise TypeError(f"{name}() got an unexpected keyword argument 'alpha'")
        others = _per_tensor(name, other, len(self), alpha is not None, op in _TENSOR_OVERLOAD)
        kw = {"alpha": alpha} if alpha is not None else {}
        # maximum/minimum with Numbers are PyTorch's clamp_min/clamp_max
        each = op if isinstance(others[0], Tensor) else _SCALAR_FORM.get(op, op)
        out = tuple(_method(t, each, inplace)(o, **kw) for t, o in zip(self, others))
        return self if inplace else out
    f.__name__ = name
    return f


def _pointwise(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"

    def f(self, tensor1, tensor2, value=1):
        self = _tensors(name, self)
        n = len(self)
        t1, t2 = _per_tensor(name, list(tensor1), n, False), _per_tensor(name, list(tensor2), n, False)
        if isinstance(value, Tensor):
            value = value.tolist() if value.ndim else [value.item()] * n
        values = _per_tensor(name, value, n, False)
        out = tuple(_method(t, op, inplace)(a, b, value=v) for t, a, b, v in zip(self, t1, t2, values))
        return self if inplace else out
    f.__name__ = name
    return f


def _lerp(inplace):
    name = f"_foreach_lerp{'_' if inplace else ''}"

    def f(self, tensors1, weight):
        self = _tensors(name, self)
        ends = _per_tensor(name, list(tensors1), len(self), False)
        weights = _per_tensor(name, weight, len(self), False)
        out = tuple(_method(t, "lerp", inplace)(e, w) for t, e, w in zip(self, ends, weights))
        return self if inplace else out
    f.__name__ = name
    return f


def _export(f):
    globals()[f.__name__] = f
    __all__.append(f.__name__)


for _op in _UNARY:
    _export(_unary(_op, False))
    _export(_unary(_op, True))
for _op in _BINARY:
    _export(_binary(_op, False))
    _export(_binary(_op, True))
for _op in ("addcmul", "addcdiv"):
    _export(_pointwise(_op, False))
    _export(_pointwise(_op, True))
_export(_lerp(False))
_export(_lerp(True))


def _foreach_norm(self, ord=2, dtype=None):
    from ..linalg import vector_norm
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensors("_foreach_norm", self))


def _foreach_max(self):
    return tuple(t.max() for t in _tensors("_foreach_max", self))


def _foreach_zero_(self):
    for t in _tensors("_foreach_zero_", self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    self = _tensors("_foreach_copy_", self)
    srcs = _per_tensor("_foreach_copy_", list(src), len(self), False)
    for t, s in zip(self, srcs):
        t.copy_(s, non_blocking)
    return self


def _foreach_clone(self):
    return tuple(t.clone() for t in _tensors("_foreach_clone", self))


__all__ += ["_foreach_norm", "_foreach_max", "_foreach_zero_", "_foreach_copy_", "_foreach_clone"]
