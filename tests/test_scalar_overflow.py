"""Python numbers converted into a tensor's type with PyTorch's checked conversion (``c10::checked_convert``).

Each op below is run with boundary numbers on float16/bfloat16/float32 and int8/uint8 tensors of one and two
elements (0-d too where that is a path of its own): where PyTorch raises "value cannot be converted to type ...
without overflow", torchish raises the same; where it does not (a one-element float16 fill, setitem, lerp's weight
and addcmul's value computed in float32, a number operand of ``*``), torchish gives the same values.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from oracle import same, same_error, torch, torchish

_INF, _NAN = math.inf, math.nan

# the largest finite value, one just above it (rounds down to it, but fails the check), a value above the
# computation type's range, huge, and the non-finite values (never refused by a floating type)
VALUES = {
    "float16": (65504.0, 65504.5, 65520.0, -1e300, _INF, _NAN),
    "bfloat16": (3.3895313892515355e38, 3.3961775292304854e38, 3.5e38, -1e39, _NAN),
    "float32": (3.4028234663852886e38, 3.4028235677973366e38, -1e300, _INF),
    "int8": (127, 128, -129, 127.9, _NAN),
    "uint8": (255, 256, -1, -1.0, 300.0),
}


def _mask(T, x):
    return T.ones(x.shape, dtype=T.bool)


def _diag(T, x, v):
    n = max(x.numel(), 1)
    return T.ones(n, n, dtype=x.dtype).fill_diagonal_(v)


def _setitem(T, x, v):
    y = x.clone()
    y[...] = v
    return y


OPS = {
    "fill_": lambda T, x, v: x.clone().fill_(v),
    "setitem": _setitem,
    "masked_fill": lambda T, x, v: x.masked_fill(_mask(T, x), v),
    "index_fill": lambda T, x, v: x.reshape(-1).index_fill(0, T.tensor([0]), v),
    "scatter": lambda T, x, v: x.reshape(-1).scatter(0, T.tensor([0]), v),
    "lerp": lambda T, x, v: T.lerp(x, x, v),
    "add_alpha": lambda T, x, v: x.add(x, alpha=v),
    "sub_alpha": lambda T, x, v: x.sub(x, alpha=v),
    "full": lambda T, x, v: T.full(tuple(x.shape), v, dtype=x.dtype),
    "full_like": lambda T, x, v: T.full_like(x, v),
    "clamp_max": lambda T, x, v: x.clamp(max=v),
    "clamp_min": lambda T, x, v: x.clamp(min=v),
    "where": lambda T, x, v: T.where(_mask(T, x), x, v),
    "addcmul": lambda T, x, v: T.addcmul(x, x, x, value=v),
    "fill_diagonal_": _diag,
    "threshold_value": lambda T, x, v: T.nn.functional.threshold(x, 0.5, v),
    "threshold": lambda T, x, v: T.nn.functional.threshold(x, v, 0.5),
    "hardtanh": lambda T, x, v: T.nn.functional.hardtanh(x, -abs(v), abs(v)),
    "pad": lambda T, x, v: T.nn.functional.pad(x.reshape(-1), (1, 1), value=v),
    "arange": lambda T, x, v: T.arange(0, v, v / 2, dtype=x.dtype),
    "mul_number": lambda T, x, v: x * v,
}


def _compare(fn):
    """``fn(lib)`` raises the same error in both libraries, or gives the same result."""
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(torch)
        except Exception:
            same_error(fn)
            return
        same(fn)


@pytest.mark.parametrize("dtype", list(VALUES))
@pytest.mark.parametrize("op", list(OPS))
def test_number_converted_checked(op, dtype):
    f = OPS[op]
    for shape in ((1,), (2,), ()) if op in ("fill_", "full", "setitem") else ((1,), (2,)):
        for v in VALUES[dtype]:
            _compare(lambda T: f(T, T.ones(shape, dtype=getattr(T, dtype)), v))


@pytest.mark.parametrize("v", [3e38, 1e300, 1e300j, 1 + 1e39j, _INF])
def test_complex64(v):
    for f in (OPS["fill_"], OPS["masked_fill"], OPS["add_alpha"], OPS["full"]):
        _compare(lambda T: f(T, T.ones(2, dtype=T.complex64), v))


@pytest.mark.parametrize("case", [
    lambda T: T.ones(1, 3, dtype=T.float16).fill_diagonal_(1e5),  # a one-element diagonal: unchecked
    lambda T: T.ones(3, 1, dtype=T.float16).fill_diagonal_(1e5, wrap=True),  # and its one-element wrapped part
    lambda T: T.ones(5, 1, dtype=T.float16).fill_diagonal_(1e5, wrap=True),  # a two-element wrapped part: checked
    lambda T: T.ones(0, dtype=T.float16).fill_(1e5),  # an empty fill is checked
    lambda T: T.ones(1, dtype=T.float16).new_full((2,), 1e5),
    lambda T: T.ones(2, dtype=T.float16).masked_fill(T.zeros(2, dtype=T.bool), 1e5),  # checked, nothing written
    lambda T: T.arange(0, 1e39, 1e38, dtype=T.bfloat16),  # arange checks start and step, not end
    lambda T: T.arange(1e39, 0, -1e38, dtype=T.bfloat16),
    lambda T: T.arange(0, 1e19, 1e18, dtype=T.int8),
    lambda T: T.arange(0, 1e19, 1e18, dtype=T.int64),  # (int64 sizes the range from the converted end)
    lambda T: T.arange(0, 10, 1e19, dtype=T.int32),
    lambda T: T.arange(0, _NAN, 1.0, dtype=T.int8),
    lambda T: T.arange(0, 1.0, _NAN),
    lambda T: T.ones(2, dtype=T.int8).sub(T.ones(2, dtype=T.int8), alpha=-128),  # sub converts -alpha
    lambda T: T.ones(2, dtype=T.uint8).sub(1, alpha=255),
    lambda T: T.nn.functional.hardtanh(T.ones(2, dtype=T.uint8), -0.5, 2.5),  # integer limits: int64, truncated
    lambda T: T.nn.functional.hardtanh(T.ones(2, dtype=T.int8), _NAN, _NAN),
    lambda T: T.nn.functional.threshold(T.zeros(2, dtype=T.uint8), 0.5, -1),  # -1 wraps into uint8
    lambda T: T.nn.functional.pad(T.ones(2, dtype=T.int64), (1, 1), value=2 ** 63 - 1),  # float 2**63: wraps
    lambda T: T.where(T.tensor([True, False]), T.ones(2, dtype=T.int32), 2 ** 40),
    lambda T: T.where(T.tensor([True, False]), 1e39, T.ones(2, dtype=T.bfloat16)),
    lambda T: T.ones(2, dtype=T.float16).index_fill(0, T.tensor([0]), T.tensor(1e5)),  # a 0-d value: its item()
    lambda T: T.ones(2, dtype=T.uint8).index_fill(0, T.tensor([0]), T.tensor(300)),
    lambda T: T.ones(2, dtype=T.float16).fill_(T.tensor(1e5)),  # (fill_ with a 0-d Tensor: unchecked)
    lambda T: T.ones(2).fill_(10 ** 40),  # beyond what PyTorch's argument parser takes
    lambda T: T.ones(2).masked_fill(T.ones(2, dtype=T.bool), -10 ** 40),
    lambda T: T.full((2,), 1e40), lambda T: T.full((), -1e40),  # the number's default dtype is checked too
    lambda T: T.full((2,), 1e40 + 0j), lambda T: T.ones(2).new_full((2,), 1e40),
    lambda T: T.full((2,), T.tensor(1e40, dtype=T.float64)),
])
def test_paths(case):
    _compare(case)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_lerp_half_in_float32(dtype):
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal(300).astype(np.float32) * s for s in (1, 50, 2))
    for weight in (0.3, 0.7, -2.5, 1e5):
        same(lambda T: T.lerp(T.tensor(a).to(getattr(T, dtype)), T.tensor(b).to(getattr(T, dtype)), weight),
             rtol=0, atol=0)
    same(lambda T: T.lerp(*(T.tensor(t).to(getattr(T, dtype)) for t in (a, b, w))), rtol=0, atol=0)


@pytest.mark.parametrize("limits", [(-1.0, 1.0), (_NAN, _NAN), (-1.0, _NAN)])
def test_hardtanh_nan_limits(limits):
    def f(T):
        x = T.tensor([-3.0, 0.5, 3.0, _NAN, -1.0, 1.0], requires_grad=True)
        y = T.nn.functional.hardtanh(x, *limits)
        y.sum().backward()
        return y, x.grad
    same(f)
