"""Forward-mode AD (torchish.autograd.forward_ad) against torch.autograd.forward_ad: dual levels, make_dual /
unpack_dual, tangents through registry ops and custom Functions, reverse mode through tangents."""
import pytest

from oracle import arr, assert_same, check_raises, run_both, torchish, same, same_error


def t(T, *shape, seed=0, rg=False):
    return T.tensor(arr(*shape, seed=seed), requires_grad=rg)


def fw(T):
    return T.autograd.forward_ad


OPS = {
    "mul_sin": lambda T, d, c: (d * d).sin(),
    "exp_sum": lambda T, d, c: d.exp().sum() * d,
    "matmul": lambda T, d, c: d @ c,
    "div_const": lambda T, d, c: c / (d + 2),
    "tanh_pow": lambda T, d, c: d.tanh() ** 3,
    "softmax": lambda T, d, c: d.softmax(-1),
    "max_dim": lambda T, d, c: d.max(-1)[0],
    "slice_view": lambda T, d, c: d.reshape(-1)[1:] * 2,
    "where": lambda T, d, c: T.where(d > 0, d, c),
    "mean_keepdim": lambda T, d, c: d.mean(-1, keepdim=True) - d,
    "cat": lambda T, d, c: T.cat([d, c * d]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_tangents_through_ops(name):
    def f(T):
        F = fw(T)
        with F.dual_level():
            d = F.make_dual(t(T, 2, 2), t(T, 2, 2, seed=1))
            out = OPS[name](T, d, t(T, 2, 2, seed=2))
            p, tan = F.unpack_dual(out)
            return p, tan
    same(f)


def test_unpack_dual_is_a_namedtuple():
    def f(T):
        F = fw(T)
        with F.dual_level() as level:
            d = F.make_dual(t(T, 3), t(T, 3, seed=1))
            u = F.unpack_dual(d * 2)
            plain = F.unpack_dual(t(T, 3))
            return level, type(u).__name__, u._fields, u.primal, u.tangent, plain.tangent, u[1]
    same(f)


def test_make_dual_keeps_autograd_and_levels_drop_tangents():
    def f(T):
        F = fw(T)
        x = t(T, 3, rg=True)
        with F.dual_level():
            d = F.make_dual(x, t(T, 3, seed=1))
            y = d * d
            inside = F.unpack_dual(y).tangent
        after = F.unpack_dual(y).tangent, F.unpack_dual(d).tangent
        y.sum().backward()
        return d.requires_grad, d.is_leaf, inside, after, x.grad
    same(f)


def test_enter_and_exit_dual_level():
    def f(T):
        F = fw(T)
        level = F.enter_dual_level()
        d = F.make_dual(t(T, 1), t(T, 1, seed=1))
        inside = F.unpack_dual(d * 3).tangent
        F.exit_dual_level(level=level)
        return level, inside, F.unpack_dual(d).tangent
    same(f)

    def decorated(T):
        F = fw(T)

        @F.dual_level()
        def g():
            return F.unpack_dual(F.make_dual(t(T, 2), t(T, 2, seed=1)).exp())
        return g()
    same(decorated)


def test_level_errors():
    same_error(lambda T: fw(T).make_dual(t(T, 2), t(T, 2)))
    same_error(lambda T: fw(T).exit_dual_level())

    def nested(T):
        with fw(T).dual_level():
            fw(T).enter_dual_level()
    same_error(nested)

    def wrong_level(T):
        with fw(T).dual_level():
            fw(T).exit_dual_level(level=3)
    same_error(wrong_level)


def test_make_dual_errors():
    def in_level(T, fn):
        with fw(T).dual_level():
            return fn(fw(T))
    same_error(lambda T: in_level(T, lambda F: F.make_dual(t(T, 2), t(T, 3))))
    same_error(lambda T: in_level(T, lambda F: F.make_dual(t(T, 2), T.ones(2, dtype=T.int64))))
    same_error(lambda T: in_level(T, lambda F: F.make_dual(T.tensor([1, 2]), T.ones(2))))


def test_integer_and_boolean_results_have_no_tangent():
    def f(T):
        F = fw(T)
        with F.dual_level():
            d = F.make_dual(T.tensor([1.0, 2.0]), T.tensor([1.0, 1.0]))
            return (F.unpack_dual(d * T.tensor([1, 2])), F.unpack_dual(d.argmax()).tangent,
                    F.unpack_dual(d > 1).tangent, F.unpack_dual(d + 1).tangent)
    same(f)


def test_reverse_mode_through_tangents():
    def f(T):
        F = fw(T)
        x = t(T, 2, rg=True)
        v = t(T, 2, seed=1, rg=True)
        with F.dual_level():
            d = F.make_dual(x, v)
            tan = F.unpack_dual(d.exp() * d).tangent
            gx, gv = T.autograd.grad(tan.sum(), (x, v))
        return tan, gx, gv
    same(f)


def test_custom_function_jvp():
    def f(T):
        F = fw(T)

        class MulK(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.save_for_forward(x)
                ctx.k = k
                return x * y * k, x + 1

            @staticmethod
            def jvp(ctx, tx, ty, tk):
                (x,) = ctx.saved_tensors
                return tx * 2 * x + ty, tx

            @staticmethod
            def backward(ctx, g1, g2):
                return g1, g1, None

        with F.dual_level():
            x = F.make_dual(t(T, 2), t(T, 2, seed=1))
            a, b = MulK.apply(x, t(T, 2, seed=2), 2.0)
            return F.unpack_dual(a), F.unpack_dual(b)
    same(f)


def test_custom_function_without_jvp():
    def f(T):
        F = fw(T)

        class NoJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        with F.dual_level():
            NoJvp.apply(F.make_dual(t(T, 2), t(T, 2)))
    same_error(f)


def test_forward_over_reverse():
    def f(T):
        F = fw(T)
        x = t(T, 3, rg=True)
        with F.dual_level():
            d = F.make_dual(x, t(T, 3, seed=1))
            (g,) = T.autograd.grad((d.sin() * d ** 2).sum(), d, create_graph=True)
            return F.unpack_dual(g)
    same(f)


def test_gradcheck_forward_ad():
    x = torchish.tensor(arr(2, 3, dtype="float64"), requires_grad=True)
    y = torchish.tensor(arr(3, seed=1, dtype="float64"), requires_grad=True)
    assert torchish.autograd.gradcheck(lambda a, b: (a * b).tanh() @ b, (x, y), check_forward_ad=True)
