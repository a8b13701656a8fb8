"""Custom autograd.Function against PyTorch: both forward styles, saved tensors, ctx flags, non-differentiable and
dirty outputs, materialized grads, once_differentiable, double backward, and the errors for bad backwards."""
import re

import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, run_both, torchish, same


def same_error(fn, prefix=None):
    err = check_raises(fn)
    want = str(err)
    try:
        fn(torchish)
    except Exception as e:  # noqa: BLE001
        got = str(e)
    if prefix is not None:
        want, got = want[:prefix], got[:prefix]
    assert got == want


def leaf(T, *shape, seed=0):
    return T.tensor(arr(*shape, seed=seed), requires_grad=True)


def cube(T):
    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g
    return Cube


def simple(T, backward):
    """A Function computing ``x * 2`` whose backward is ``backward(T, ctx, g)``."""
    class MyFn(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    MyFn.backward = staticmethod(lambda ctx, g: backward(T, ctx, g))
    return MyFn


# ----------------------------------------------------------------------------------------------------------------
# the two styles, saved tensors, ctx


def test_forward_with_ctx():
    def f(T):
        x = leaf(T, 5)
        y = cube(T).apply(x * 2)
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__, y.requires_grad, y.is_leaf
    same(f)


def test_setup_context_style():
    def f(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.k = k
                ctx.save_for_backward(x, output)

            @staticmethod
            def backward(ctx, g):
                x, out = ctx.saved_tensors
                return g * ctx.k + 0 * out, None

        x = leaf(T, 3)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__
    same(f)


def test_ctx_is_grad_fn():
    def f(T):
        class Keep(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(x)
                ctx.k = k
                ctx.grad_enabled_in_forward = T.is_grad_enabled()
                return x * k

            @staticmethod
            def backward(ctx, g):
                ctx.grad_enabled_in_backward = T.is_grad_enabled()
                return g * ctx.k, None

        x = leaf(T, 3)
        y = Keep.apply(x, 2.0)
        fn = y.grad_fn
        before = (fn.saved_tensors[0] is x, fn.k, fn.needs_input_grad, fn.grad_enabled_in_forward)
        y.sum().backward()
        return before, fn.grad_enabled_in_backward, [type(n).__name__ for n, _ in fn.next_functions]
    same(f)


def test_saved_tensors_after_free():
    def f(T):
        x = leaf(T, 3)
        y = cube(T).apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors
    same_error(f)
    same_error(lambda T: [z.backward() for z in [cube(T).apply(leaf(T, 3)).sum()] * 2])


def test_saved_tensor_modified_in_place():
    def f(T):
        b = leaf(T, 3) * 1
        y = cube(T).apply(b)
        b.add_(1)
        y.sum().backward()
    same_error(f, prefix=112)


def test_save_for_backward_rejects_non_tensors():
    def f(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2
        Bad.apply(leaf(T, 3))
    same_error(f)


def test_needs_input_grad():
    def f(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, c, d):
                ctx.flags = ctx.needs_input_grad
                return a * 2 + b + d

            @staticmethod
            def backward(ctx, g):
                return (g * 2 if ctx.needs_input_grad[0] else None, None, None,
                        g if ctx.needs_input_grad[3] else None)

        a = leaf(T, 2)
        b = T.tensor(arr(2, seed=1))
        y = F.apply(a, b, 3, a)
        y.sum().backward()
        with T.no_grad():
            z = F.apply(a, b, 3, a)
        return (y.grad_fn.flags, [(type(n).__name__ if n else None) for n, _ in y.grad_fn.next_functions],
                a.grad, z.requires_grad, z.grad_fn is None)
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# outputs


def test_mark_non_differentiable():
    def f(T):
        seen = []

        class MaxIdx(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                doubled = x * 2
                ctx.mark_non_differentiable(idx, doubled)
                return x.max(), idx, doubled

            @staticmethod
            def backward(ctx, gv, gi, gd):
                seen.append((gi, gd))
                return gv * T.ones(3)

        x = leaf(T, 3)
        v, i, d = MaxIdx.apply(x)
        v.backward()
        return v.requires_grad, i.requires_grad, d.requires_grad, d.grad_fn is None, x.grad, seen
    same(f)


def test_mark_dirty_inplace_function():
    def f(T):
        class AddOne(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 1

        a = leaf(T, 3)
        b = a * 2
        c = AddOne.apply(b)
        (c * c).sum().backward()
        return c is b, b._version, type(c.grad_fn).__name__, c, a.grad
    same(f)


def test_mark_dirty_errors():
    def dirty(T, returned):
        class AddOne(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x if returned else x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        return AddOne

    same_error(lambda T: dirty(T, True).apply(leaf(T, 3)))
    same_error(lambda T: dirty(T, False).apply(leaf(T, 3) * 1))


def test_set_materialize_grads():
    def f(T):
        seen = []

        class Lazy(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append((ga is None, gb is None))
                return ga * 2 if ga is not None else None

        class Eager(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append((ga is None, gb))
                return ga * 2

        x = leaf(T, 3)
        Lazy.apply(x)[0].sum().backward()
        Eager.apply(x)[0].sum().backward()
        return seen, x.grad
    same(f)


def test_non_tensor_arguments_and_outputs():
    def f(T):
        seen = []

        class Mixed(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, n, name):
                ctx.n = n
                return x * n, n + 1, name + "!"

            @staticmethod
            def backward(ctx, g, g_int, g_str):
                seen.append((g_int, g_str))
                return g * ctx.n, None, None

        x = leaf(T, 3)
        y, n, s = Mixed.apply(x, 2, "out")
        y.sum().backward()
        return n, s, x.grad, seen
    same(f)


def test_multiple_outputs():
    def f(T):
        class SinCos(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin(), x.cos()

            @staticmethod
            def backward(ctx, gs, gc):
                (x,) = ctx.saved_tensors
                return gs * x.cos() - gc * x.sin()

        x = leaf(T, 4)
        s, c = SinCos.apply(x)
        (s * 2 + c * 3).sum().backward()
        return s, c, s.output_nr, c.output_nr, s.grad_fn is c.grad_fn, x.grad
    same(f)


def test_returning_an_input():
    def f(T):
        class Ident(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = leaf(T, 3)
        y = Ident.apply(x)
        y.sum().backward()
        z = x * 1
        w = Ident.apply(z)
        return y is x, y.is_leaf, type(y.grad_fn).__name__, x.grad, w is z, type(w.grad_fn).__name__
    same(f)


def test_kwargs_are_passed_to_forward():
    def f(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = leaf(T, 3)
        y = Scale.apply(x, k=3)
        y.sum().backward()
        return y, x.grad
    same(f)


def test_vjp_alias_and_missing_backward():
    def f(T):
        class ViaVjp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 7

        x = leaf(T, 3)
        ViaVjp.apply(x).sum().backward()
        return x.grad
    same(f)

    def missing(T):
        class NoBackward(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        NoBackward.apply(leaf(T, 3)).sum().backward()
    same_error(missing)

    def both(T):
        class Both(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g
        Both.apply(leaf(T, 3)).sum().backward()
    same_error(both)


# ----------------------------------------------------------------------------------------------------------------
# higher order


def test_double_backward_through_function():
    def f(T):
        x = leaf(T, 3)
        y = cube(T).apply(x).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        (h,) = T.autograd.grad(g.sum(), x)
        return g, h
    same(f)


def test_double_backward_through_saved_output():
    def f(T):
        class Exp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                return g * r

        a = leaf(T, 3)
        y = Exp.apply(a)
        (g,) = T.autograd.grad(y.sum(), a, create_graph=True)
        (h,) = T.autograd.grad(g.sum(), a)
        return g, h
    same(f)


def _once(T):
    if T is torchish:
        from torchish.autograd.function import once_differentiable
    else:
        from torch.autograd.function import once_differentiable

    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    return Square


def test_once_differentiable():
    def f(T):
        x = leaf(T, 3)
        y = _once(T).apply(x)
        (g,) = T.autograd.grad(y, x, T.ones(3, requires_grad=True), create_graph=True)
        return g, g.requires_grad, type(g.grad_fn).__name__
    same(f)
    same_error(lambda T: (lambda x: T.autograd.grad(_once(T).apply(x), x, T.ones(3, requires_grad=True),
                                                    create_graph=True)[0].sum().backward())(leaf(T, 3)))


# ----------------------------------------------------------------------------------------------------------------
# bad backwards


def test_wrong_number_of_gradients():
    def too_few(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g
        x = leaf(T, 3)
        F.apply(x, x).sum().backward()

    def too_many(T):
        simple(T, lambda T, ctx, g: (g, g)).apply(leaf(T, 3)).sum().backward()
    same_error(too_few)
    same_error(too_many)

    def extra_nones_are_fine(T):
        x = leaf(T, 3)
        simple(T, lambda T, ctx, g: (g, None, None)).apply(x).sum().backward()
        return x.grad
    same(extra_nones_are_fine)


def test_gradient_for_non_tensor_input():
    def f(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g
        F.apply(leaf(T, 3), 2.0).sum().backward()
    same_error(f)


def test_gradient_of_wrong_type():
    same_error(lambda T: simple(T, lambda T, ctx, g: 1.0).apply(leaf(T, 3)).sum().backward())


def test_gradient_shape_mismatch():
    same_error(lambda T: simple(T, lambda T, ctx, g: T.ones(2, 2)).apply(leaf(T, 3)).sum().backward())


def test_gradient_broadcast_and_dtype_are_fixed_up():
    def f(T):
        x = leaf(T, 3)
        simple(T, lambda T, ctx, g: T.ones(2, 3)).apply(x).sum().backward()
        a = x.grad
        z = leaf(T, 3)
        simple(T, lambda T, ctx, g: g.double() * 3).apply(z).sum().backward()
        return a, z.grad
    same(f)


def test_instantiating_a_function_warns():
    class Noop(torchish.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

    with pytest.warns(DeprecationWarning, match=re.escape("should not be instantiated")):
        Noop()


@pytest.mark.parametrize("shape", [(3,), (2, 2)])
def test_custom_function_gradcheck(shape):
    class Softplus(torchish.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (1 + x.exp()).log()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.sigmoid()

    x = torchish.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), requires_grad=True)
    assert torchish.autograd.gradcheck(Softplus.apply, (x,))
    assert torchish.autograd.gradgradcheck(Softplus.apply, (x,))
