"""gradcheck / gradgradcheck: they pass for correct gradients over a range of ops, and catch wrong ones with
PyTorch's verdicts and messages."""
import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, run_both, torchish, same


def d(T, *shape, seed=0, lo=-1.0, hi=1.0):
    return T.tensor(arr(*shape, seed=seed, lo=lo, hi=hi, dtype=np.float64), requires_grad=True)


OPS = {
    "sin_exp_div": (lambda a, b: a.sin() * b.exp() / (b ** 2 + 1), (3,)),
    "tanh_sigmoid_where": (lambda a, b: torchish.where(a > 0, a.tanh() * b, b.sigmoid()), (3,)),
    "matmul_softmax": (lambda a, b: (a @ b).softmax(-1), (2, 2)),
    "reductions": (lambda a, b: a.norm() * b.cumsum(0) + a.prod() * b.var(), (3,)),
    "index_cat_broadcast": (lambda a, b: torchish.cat([a[1:], (a.unsqueeze(1) * b).sum(0)]), (3,)),
    "logsumexp_clamp": (lambda a, b: a.logsumexp(0) + b.clamp(-0.5, 0.5), (3,)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_passes_for_ops(name):
    fn, shape = OPS[name]
    a, b = d(torchish, *shape, seed=1), d(torchish, *shape, seed=2)
    assert torchish.autograd.gradcheck(fn, (a, b))


@pytest.mark.parametrize("name", ["sin_exp_div", "matmul_softmax"])
def test_gradgradcheck_passes_for_ops(name):
    fn, shape = OPS[name]
    a, b = d(torchish, *shape, seed=1), d(torchish, *shape, seed=2)
    assert torchish.autograd.gradgradcheck(fn, (a, b))


def test_gradcheck_options():
    x, y = d(torchish, 3, seed=1), d(torchish, 3, seed=2)

    def fn(a, b):
        return a.exp() * b, (a * b).sum()

    assert torchish.autograd.gradcheck(fn, (x, y), check_batched_grad=True, check_grad_dtypes=True)
    assert torchish.autograd.gradcheck(fn, (x, y), fast_mode=True)
    assert torchish.autograd.gradcheck(fn, (x, y), check_forward_ad=True, check_backward_ad=False)
    assert torchish.autograd.gradcheck(lambda a, k: a * k, (x, 2.0), eps=1e-5, atol=1e-6, rtol=1e-4)
    assert torchish.autograd.gradgradcheck(lambda a: a.exp() * a, (x,), check_fwd_over_rev=True)


def wrong_backward(T, scale):
    class Twice(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * scale

    return Twice.apply


def test_gradcheck_catches_wrong_backward():
    def verdicts(T):
        x = d(T, 3)
        good = T.autograd.gradcheck(wrong_backward(T, 2.0), (x,))
        bad = T.autograd.gradcheck(wrong_backward(T, 3.0), (x,), raise_exception=False)
        fast = T.autograd.gradcheck(wrong_backward(T, 3.0), (x,), raise_exception=False, fast_mode=True)
        try:
            T.autograd.gradcheck(wrong_backward(T, 3.0), (x,))
            message = None
        except RuntimeError as e:
            message = (type(e).__name__, str(e).split("\n")[0])
        return good, bad, fast, message
    same(verdicts)


def test_gradcheck_catches_wrong_jvp():
    def verdict(T):
        class BadJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 5

        try:
            T.autograd.gradcheck(BadJvp.apply, (d(T, 3),), check_forward_ad=True)
        except RuntimeError as e:
            return str(e).split("\n")[0]
    same(verdict)


def test_gradcheck_backward_not_multiplied_by_grad_output():
    def verdict(T):
        class Sneaky(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2 + (g == 0).all().double()

        try:
            T.autograd.gradcheck(Sneaky.apply, (d(T, 3),), check_undefined_grad=False)
        except RuntimeError as e:
            return str(e)
    same(verdict)


def test_gradcheck_input_checks():
    def no_grad_inputs(T):
        try:
            T.autograd.gradcheck(lambda a: a * 2, (T.ones(3, dtype=T.float64),))
        except ValueError as e:
            return str(e)
    same(no_grad_inputs)

    def float32_warns(T):
        x = T.tensor(arr(3), requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
        return [str(m.message) for m in w if "double precision" in str(m.message)]
    same(float32_warns)


def test_gradcheck_without_differentiable_outputs():
    same(lambda T: T.autograd.gradcheck(lambda a: a.argmax(), (d(T, 3),)))


def test_gradcheck_error_type_and_module():
    from torchish.autograd.gradcheck import GradcheckError, gradcheck
    assert issubclass(GradcheckError, RuntimeError)
    x = d(torchish, 2)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"):
        gradcheck(wrong_backward(torchish, 5.0), (x,))
    assert torchish.autograd.gradcheck(lambda a: a.exp(), (x,))  # the package attribute is still callable
    assert torchish.autograd.gradgradcheck(lambda a: a.exp(), (x,), torchish.ones(2, dtype=torchish.float64))
