"""Tensor Python protocol and autograd API details found by differential probing against PyTorch: scalar
conversion errors, ``in``, ``copy.copy``/``deepcopy`` storage sharing, inference tensors, legacy Function calls."""
import copy

import numpy as np

from oracle import arr, same, same_error


def test_float_int_complex_of_many_elements_raise_value_error():
    same_error(lambda lib: float(lib.zeros(2)))
    same_error(lambda lib: int(lib.zeros(2)))
    same_error(lambda lib: complex(lib.zeros(3)))


def test_contains_scalars_tensors_and_bad_types():
    def f(lib):
        x = lib.tensor([1., 2., 3.])
        return 2 in x, 5 in x, np.float32(3) in x, lib.tensor(3.) in x, lib.tensor([9., 3., 0.]) in x
    same(f)
    same_error(lambda lib: "a" in lib.zeros(2))
    same_error(lambda lib: lib.tensor([1, 2]) in lib.tensor([1, 2, 3]))  # "tensor a (2)": the element is a


def test_copy_copy_shares_storage():
    def f(lib):
        x = lib.zeros(3)
        y = copy.copy(x)
        y += 1
        p = lib.ones(2, requires_grad=True)
        q = copy.copy(p)
        return x, y is x, q.requires_grad, q.is_leaf
    same(f)


def test_inplace_on_alias_that_requires_grad_raises():
    def f(lib):
        y = lib.zeros(3).detach().requires_grad_()
        y += 1
    same_error(f)

    def g(lib):
        y = copy.copy(lib.zeros(3, requires_grad=True))
        y.mul_(2)
    same_error(g)


def test_deepcopy_keeps_views_of_the_copied_base():
    def f(lib):
        x = lib.zeros(3, 4)
        d = copy.deepcopy({"a": x, "b": x[1], "c": x.t()})
        d["a"] += 1
        return d["b"], d["c"], x
    same(f)


def test_inference_tensors():
    def f(lib):
        x = lib.tensor(arr(3), requires_grad=True)
        with lib.inference_mode():
            y = x * 2
            inside = lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            z = x * 2
        return (y.requires_grad, y.is_inference(), x.is_inference(), inside, z.is_inference(), y[0].is_inference(),
                y.detach().is_inference(), (y + 1).is_inference(), y.clone().is_inference())
    same(f)


def test_inference_tensor_misuse_outside_inference_mode():
    def make(lib):
        with lib.inference_mode():
            return lib.ones(3)
    same_error(lambda lib: make(lib).add_(1))
    same_error(lambda lib: make(lib).__setitem__(0, 2.))
    same_error(lambda lib: make(lib).requires_grad_())

    def inside(lib):
        with lib.inference_mode():
            y = lib.ones(3)
            y.add_(1)
            y.requires_grad_()
        return y, y.requires_grad
    same(inside)


def test_calling_a_function_instance_raises():
    def f(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return Double()(lib.ones(2, requires_grad=True))
    same_error(f)
