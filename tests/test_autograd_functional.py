"""torchish.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch.autograd.functional."""
import pytest

from oracle import arr, assert_same, check_raises, run_both, torchish, same, same_error


def t(T, *shape, seed=0, rg=False):
    return T.tensor(arr(*shape, seed=seed), requires_grad=rg)


def F(T):
    return T.autograd.functional


def two_in_two_out(a, b):
    return a * b.exp(), (a.sin() * b).sum()


# ----------------------------------------------------------------------------------------------------------------
# jacobian


def test_jacobian_single():
    same(lambda T: F(T).jacobian(lambda x: x.sin() * x, t(T, 2)))
    same(lambda T: F(T).jacobian(lambda x: x @ x, t(T, 2, 2)))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_tuples(vectorize):
    same(lambda T: F(T).jacobian(two_in_two_out, (t(T, 2), t(T, 2, seed=1)), vectorize=vectorize))
    same(lambda T: F(T).jacobian(lambda a, b: a * 2, (t(T, 2), t(T, 3)), vectorize=vectorize))


def test_jacobian_forward_mode():
    same(lambda T: F(T).jacobian(two_in_two_out, (t(T, 2), t(T, 2, seed=1)), vectorize=True,
                                 strategy="forward-mode"))
    same_error(lambda T: F(T).jacobian(lambda x: x * 2, t(T, 2), strategy="forward-mode"))
    same_error(lambda T: F(T).jacobian(lambda x: x * 2, t(T, 2), strategy="forward-mode", vectorize=True,
                                       create_graph=True))
    check_raises(lambda T: F(T).jacobian(lambda x: x * 2, t(T, 2), strategy="sideways"))


def test_jacobian_create_graph():
    def f(T):
        x = t(T, 2, rg=True)
        j = F(T).jacobian(lambda a: a.sin() * a, x, create_graph=True)
        (g,) = T.autograd.grad(j.sum(), x)
        return j, j.requires_grad, g, F(T).jacobian(lambda a: a * 2, x).requires_grad
    same(f)


def test_jacobian_strict():
    same_error(lambda T: F(T).jacobian(lambda a, b: a * 2, (t(T, 2), t(T, 2)), strict=True))
    same_error(lambda T: F(T).jacobian(lambda a: T.ones(2), t(T, 2), strict=True))
    same_error(lambda T: F(T).jacobian(lambda a: a * 2, t(T, 2), strict=True, vectorize=True))


def test_jacobian_non_differentiable_output():
    same(lambda T: F(T).jacobian(lambda a: (a * 2, a.argmax()), t(T, 2)))


def test_jacobian_of_data_dependent_function():
    same(lambda T: F(T).jacobian(lambda a: a[a > 0].sum() * a, t(T, 4), vectorize=True))


def test_jacobian_uses_custom_function_backward():
    def f(T):
        class Twice(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 10  # deliberately not the true derivative: the Jacobian must show it

        return F(T).jacobian(Twice.apply, t(T, 2), vectorize=True)
    same(f)


def test_jacobian_type_errors():
    same_error(lambda T: F(T).jacobian(lambda a: a, [1.0]))
    same_error(lambda T: F(T).jacobian(lambda a, b: a * b, [t(T, 2), t(T, 2)]))
    same_error(lambda T: F(T).jacobian(lambda a: 3.0, t(T, 2)))
    same_error(lambda T: F(T).jacobian(lambda a: (a, 3.0), t(T, 2)))


# ----------------------------------------------------------------------------------------------------------------
# hessian


def pow_adder(a, b):
    return (a ** 3 * b.exp()).sum() + (a * b).sum()


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(vectorize):
    same(lambda T: F(T).hessian(pow_adder, (t(T, 2), t(T, 2, seed=1)), vectorize=vectorize))


def test_hessian_forward_over_reverse():
    same(lambda T: F(T).hessian(lambda x: (x.sin() * x ** 2).sum(), t(T, 2), vectorize=True,
                                outer_jacobian_strategy="forward-mode"))


def test_hessian_create_graph():
    def f(T):
        x = t(T, 2, rg=True)
        h = F(T).hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
        (g,) = T.autograd.grad(h.sum(), x)
        return h, h.requires_grad, g
    same(f)


def test_hessian_errors():
    same_error(lambda T: F(T).hessian(lambda a: a ** 3, t(T, 2)))
    same_error(lambda T: F(T).hessian(lambda a: (a.sum(), a.sum()), t(T, 2)))
    same_error(lambda T: F(T).hessian(lambda a: (a * 2).sum(), t(T, 2), strict=True))


# ----------------------------------------------------------------------------------------------------------------
# vector products


def test_vjp():
    same(lambda T: F(T).vjp(lambda a, b: a * b.exp(), (t(T, 2), t(T, 2, seed=1)), t(T, 2, seed=2)))
    same(lambda T: F(T).vjp(lambda a: a.exp().sum(), t(T, 2)))
    same(lambda T: F(T).vjp(lambda a: (a * 2, a.exp()), t(T, 2), (t(T, 2, seed=1), t(T, 2, seed=2))))
    same(lambda T: F(T).vjp(lambda a, b: a * 2, (t(T, 2), t(T, 2)), t(T, 2, seed=1)))


def test_vjp_create_graph():
    def f(T):
        x = t(T, 2, rg=True)
        out, g = F(T).vjp(lambda a: a ** 3, x, t(T, 2, seed=1), create_graph=True)
        (h,) = T.autograd.grad(g.sum(), x)
        plain = F(T).vjp(lambda a: a ** 3, x, t(T, 2, seed=1))
        return out, g, out.requires_grad, g.requires_grad, h, plain[1].requires_grad
    same(f)


def test_vjp_errors():
    same_error(lambda T: F(T).vjp(lambda a: a * 2, t(T, 2)))
    same_error(lambda T: F(T).vjp(lambda a: a * 2, t(T, 2), t(T, 3)))
    same_error(lambda T: F(T).vjp(lambda a: (a * 2, a), t(T, 2), (t(T, 2),)))
    same_error(lambda T: F(T).vjp(lambda a: a * 2, t(T, 2), (t(T, 2), t(T, 2))))
    same_error(lambda T: F(T).vjp(lambda a, b: a * 2, (t(T, 2), t(T, 2)), t(T, 2), strict=True))


def test_jvp():
    same(lambda T: F(T).jvp(lambda a, b: a * b.exp(), (t(T, 2), t(T, 2, seed=1)), (t(T, 2, seed=2), t(T, 2, seed=3))))
    same(lambda T: F(T).jvp(lambda a: (a.exp(), a.sum()), t(T, 1)))
    same(lambda T: F(T).jvp(lambda a: a.sin(), t(T, 2), t(T, 2, seed=4)))


def test_jvp_create_graph():
    def f(T):
        x = t(T, 2, rg=True)
        out, j = F(T).jvp(lambda a: a ** 3, x, t(T, 2, seed=1), create_graph=True)
        (h,) = T.autograd.grad(j.sum(), x)
        return out, j, j.requires_grad, h
    same(f)


def test_jvp_errors():
    same_error(lambda T: F(T).jvp(lambda a: a.exp(), t(T, 2)))
    same_error(lambda T: F(T).jvp(lambda a: a.exp(), t(T, 2), t(T, 3)))
    same_error(lambda T: F(T).jvp(lambda a, b: a.exp(), (t(T, 2), t(T, 2)), (t(T, 2),)))


def test_hvp_and_vhp():
    same(lambda T: F(T).hvp(pow_adder, (t(T, 2), t(T, 2, seed=1)), (t(T, 2, seed=2), t(T, 2, seed=3))))
    same(lambda T: F(T).vhp(pow_adder, (t(T, 2), t(T, 2, seed=1)), (t(T, 2, seed=2), t(T, 2, seed=3))))
    same(lambda T: F(T).hvp(lambda a: (a ** 3).sum(), t(T, 1)))


def test_hvp_vhp_create_graph():
    def f(T):
        x = t(T, 2, rg=True)
        out, hv = F(T).hvp(lambda a: (a ** 3).sum(), x, t(T, 2, seed=1), create_graph=True)
        _, vh = F(T).vhp(lambda a: (a ** 3).sum(), x, t(T, 2, seed=1), create_graph=True)
        (g,) = T.autograd.grad((hv + vh).sum(), x)
        return out, hv, vh, hv.requires_grad, g
    same(f)


def test_hvp_vhp_errors():
    same_error(lambda T: F(T).hvp(lambda a: a ** 3, t(T, 2), t(T, 2)))
    same_error(lambda T: F(T).vhp(lambda a: (a.sum(), a.sum()), t(T, 2), t(T, 2)))
    same_error(lambda T: F(T).hvp(lambda a: (a * 2).sum(), t(T, 2), t(T, 2), strict=True))
    same_error(lambda T: F(T).vhp(lambda a: (a ** 3).sum(), t(T, 2)))
