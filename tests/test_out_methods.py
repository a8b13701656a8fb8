"""``out=``: the functions that take it in PyTorch (softmax, log_softmax, norm, msort here), and the Tensor methods,
which never do (``x.add(y, out=z)`` is PyTorch's TypeError)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_same, check_raises, run_both

X = np.array([[3., 1., 2.], [0., 5., 4.]], np.float32)

FUNCTIONS = {
    "softmax": lambda m, x, o: m.softmax(x, 1, out=o),
    "log_softmax": lambda m, x, o: m.log_softmax(x, 1, out=o),
    "norm": lambda m, x, o: m.norm(x, out=o),
    "norm dim": lambda m, x, o: m.norm(x, dim=1, out=o),
    "norm nuc": lambda m, x, o: m.norm(x, p="nuc", out=o),
    "msort": lambda m, x, o: m.msort(x, out=o),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("size", [0, 5])
def test_functions_write_into_out(name, size):
    def f(m):
        o = m.empty(size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a non-empty out of the wrong shape is resized with a warning)
            r = FUNCTIONS[name](m, m.tensor(X), o)
        return r is o, o
    (ref_same, ref), (got_same, got) = run_both(f)
    assert got_same and ref_same
    assert_same(ref, got)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_out_of_another_dtype_raises(name):
    check_raises(lambda m: FUNCTIONS[name](m, m.tensor(X), m.empty(0, dtype=m.float64)), match="dtype")


@pytest.mark.parametrize("call", [
    lambda m, x: x.add(x, out=m.empty(2, 3)),
    lambda m, x: x.mul(2, out=m.empty(2, 3)),
    lambda m, x: x.softmax(1, out=m.empty(2, 3)),
    lambda m, x: x.norm(out=m.empty(())),
    lambda m, x: x.sort(out=(m.empty(2, 3), m.empty(2, 3, dtype=m.int64))),
    lambda m, x: x.clamp(0, 1, out=m.empty(2, 3)),
])
def test_tensor_methods_take_no_out(call):
    check_raises(lambda m: call(m, m.tensor(X)), match="unexpected keyword argument 'out'")
