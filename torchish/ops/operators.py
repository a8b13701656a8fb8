"""The Tensor's Python operators: ``a + b``, ``2 ** a``, ``a &= b``, ``a < b``, ``-a``, ``~a``, ... as dunders that
call the op families' functions (reflected ``__r*__`` swap the operands; in-place ``__i*__`` call the family's
``name_`` method). An operand that is not a Tensor, number or array gives ``NotImplemented``, so Python tries the
other side.

A NumPy array operand also gives ``NotImplemented`` (except to ``==``), as PyTorch's operators do: ``t + arr`` then
runs as NumPy's ufunc on ``t.__array__()`` and comes back through ``Tensor.__array_wrap__`` (NumPy's promotion, no
autograd: a tensor that requires grad refuses), ``t += arr`` rebinds ``t`` to that new tensor, and ``arr + t``,
``t < arr`` find no method on either side (TypeError)."""
from __future__ import annotations

import numbers

import jax
import numpy as np

from .._tensor import Tensor
from . import arith, compare, power
from .arith import add, div, floor_divide, mul, remainder, rsub, sub
from .power import pow
from .compare import (bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, eq,
                      ge, gt, le, lt, ne)
from .elementwise import INTS_ONLY
from .registry import Family as _Family, apply
from .unary import reciprocal

_Family(globals())  # METHODS: the dunders (Tensor methods only; nothing for torchish.*)
_ARRAYS = (Tensor, numbers.Number, np.generic, np.ndarray, jax.Array)


def _operand(other):
    """``==`` takes numpy arrays (``t == np.ones(2)``), which the named ops reject as PyTorch's do."""
    if isinstance(other, np.ndarray):
        from .creation import tensor
        return tensor(other)
    return other


def _dunder(f, reflected=False, arrays=False):
    """The operator for ``f``; ``arrays``: it converts a NumPy array operand (``==``) instead of leaving it to
    NumPy."""
    fast = None if reflected else getattr(f, "fast", None)
    if fast is not None:  # ``t * u``, ``t + 0.5``: straight to the op (``f`` checks nothing for these operands)
        op, extra = fast

        def d(self, other):
            t = type(other)
            if t is Tensor or t is float or t is int:
                return apply(op, (self, other, *extra))
            if not isinstance(other, _ARRAYS) or (t is np.ndarray and not arrays):
                return NotImplemented
            return f(self, _operand(other))
        return d

    def d(self, other):
        if not isinstance(other, _ARRAYS) or (isinstance(other, np.ndarray) and not arrays):
            return NotImplemented
        other = _operand(other)
        return f(other, self) if reflected else f(self, other)
    return d


def _inplace_dunder(methods, name):
    def d(self, other):
        if not isinstance(other, _ARRAYS) or isinstance(other, np.ndarray):
            return NotImplemented
        return methods[name](self, other)
    return d


def _invert(self):
    if self.dtype.category in INTS_ONLY:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def _binary_dunders(py, fn, methods, inplace):
    METHODS[f"__{py}__"] = _dunder(fn)
    METHODS[f"__r{py}__"] = _dunder(fn, reflected=True)
    METHODS[f"__i{py}__"] = _inplace_dunder(methods, inplace)


for _py, _fn, _ip in (("add", add, "add_"), ("mul", mul, "mul_"), ("truediv", div, "div_"),
                      ("floordiv", floor_divide, "floor_divide_"), ("mod", remainder, "remainder_")):
    _binary_dunders(_py, _fn, arith.METHODS, _ip)
_binary_dunders("pow", pow, power.METHODS, "pow_")
for _py, _fn, _ip in (("and", bitwise_and, "bitwise_and_"), ("or", bitwise_or, "bitwise_or_"),
                      ("xor", bitwise_xor, "bitwise_xor_"), ("lshift", bitwise_left_shift, "bitwise_left_shift_"),
                      ("rshift", bitwise_right_shift, "bitwise_right_shift_")):
    _binary_dunders(_py, _fn, compare.METHODS, _ip)

def _rtruediv(self, other):
    """``number / t`` is ``t.reciprocal() * number`` in PyTorch (grad_fn ``MulBackward0`` over
    ``ReciprocalBackward0``, and its rounding)."""
    if not isinstance(other, _ARRAYS):
        return NotImplemented
    if isinstance(other, np.ndarray):  # PyTorch's ``reciprocal(t) * arr``: NumPy's ufunc (see the module docstring)
        return reciprocal(self) * other
    return mul(reciprocal(self), other)


METHODS.update({
    "__rtruediv__": _rtruediv,
    "__rmul__": _dunder(mul),  # PyTorch's ``2 * t`` is ``t.mul(2)`` (the number second: float16 opmath, node order)
    "__radd__": _dunder(add),  # ``2 + t`` is ``t.add(2)``: alpha scales the number (complex t: ``inf + t`` has nan imag)
    "__sub__": _dunder(sub), "__rsub__": _dunder(rsub), "__isub__": _inplace_dunder(arith.METHODS, "sub_"),
    "__eq__": _dunder(eq, arrays=True), "__ne__": _dunder(ne), "__lt__": _dunder(lt), "__le__": _dunder(le),
    "__gt__": _dunder(gt), "__ge__": _dunder(ge),
    "__invert__": _invert,
})
# the operators that are the method itself in PyTorch (``Tensor.__neg__ is Tensor.neg``): set by ops._install once
# the methods are in place
SAME_AS_METHOD = {"__neg__": "neg", "__pos__": "positive", "__abs__": "abs"}
# PyTorch's Python 2 names of true division (``t.__div__(2)``, ``t.__rdiv__(2)``, ``t.__idiv__(2)``): ``__rdiv__`` and
# ``__idiv__`` are ``__rtruediv__`` and ``__itruediv__`` themselves, ``__div__`` a function of its own as PyTorch's
METHODS.update({"__div__": _dunder(div), "__rdiv__": _rtruediv, "__idiv__": METHODS["__itruediv__"]})
