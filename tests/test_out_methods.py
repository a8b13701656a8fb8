"""``out=``: the functions that take it in PyTorch (softmax, log_softmax, norm, msort here), and the Tensor methods,
which never do (``x.add(y, out=z)`` is PyTorch's TypeError)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_same, check_raises, run_both, same, same_error

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


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_out_of_an_input_that_requires_grad(name):
    """PyTorch's out kernels of softmax/log_softmax have no derivative: ``out`` becomes a NotImplemented node of
    the input, and backward through it raises."""
    def f(m):
        x = m.tensor(X, requires_grad=True)
        o = m.empty(2, 3)
        v0 = o._version
        r = getattr(m, name)(x, 1, out=o)
        nexts = [type(n).__name__ for n, _ in r.grad_fn.next_functions]
        return r is o, o.detach(), o.requires_grad, type(r.grad_fn).__name__, nexts, o._version - v0
    same(f)
    same_error(lambda m: getattr(m, name)(m.tensor(X, requires_grad=True), 1, out=m.empty(2, 3)).sum().backward())
    same_error(lambda m: getattr(m, name)(m.tensor(X), 1, out=m.empty(2, 3, requires_grad=True)))


@pytest.mark.parametrize("call", [
    lambda m, x: m.norm(x, out=m.empty(())),
    lambda m, x: m.norm(x, 1, dim=0, out=m.empty(3)),
    lambda m, x: m.exp(x, out=m.empty(2, 3)),
])
def test_out_of_a_graph_raises_with_pytorch_words(call):
    same_error(lambda m: call(m, m.tensor(X, requires_grad=True)))


def test_norm_out_is_positional_in_the_function_only():
    same(lambda m: m.norm(m.tensor(X), 2, None, False, m.empty(())))
    same(lambda m: m.tensor(X).norm(2, None, False, m.float64))
    same_error(lambda m: m.tensor(X).norm(2, None, False, m.empty(())))
