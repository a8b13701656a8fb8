"""backward() / autograd.grad() semantics against PyTorch: gradient arguments, accumulation, retain_graph,
inputs=, create_graph, requires_grad propagation, detach, and the grad modes (also as decorators, per thread)."""
import threading
import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, run_both, torch, same


def same_error(fn, prefix=None):
    """Both raise the same builtin exception type; torchish's message equals PyTorch's (or its first
    ``prefix`` characters, where PyTorch's names torch-only things)."""
    err = check_raises(fn)
    got = _message(fn)
    want = str(err)
    if prefix is not None:
        want, got = want[:prefix], got[:prefix]
    assert got == want


def _message(fn):
    import torchish
    try:
        fn(torchish)
    except Exception as e:  # noqa: BLE001
        return str(e)
    raise AssertionError("torchish did not raise")


def leaf(T, *shape, seed=0, dtype=np.float32):
    return T.tensor(arr(*shape, seed=seed, dtype=dtype), requires_grad=True)


# ----------------------------------------------------------------------------------------------------------------
# the gradient argument


def test_scalar_backward():
    def f(T):
        x = leaf(T, 3, 4)
        y = (x * x).sin().sum()
        y.backward()
        return x.grad, x.is_leaf, y.is_leaf, y.requires_grad, x.grad.requires_grad
    same(f)


VJP_FUNCS = {
    "exp_mul": lambda T, x: x.exp() * x,
    "matmul": lambda T, x: x @ x.t(),
    "sum_dim": lambda T, x: x.sum(0),
    "index": lambda T, x: x[1:, :2] * 3,
}


@pytest.mark.parametrize("name", sorted(VJP_FUNCS))
def test_vector_jacobian_product(name):
    def f(T):
        x = leaf(T, 3, 3)
        y = VJP_FUNCS[name](T, x)
        v = T.tensor(arr(*y.shape, seed=5))
        y.backward(v)
        return y, x.grad
    same(f)


def test_gradient_keyword_and_autograd_backward():
    def f(T):
        x = leaf(T, 2)
        y = T.stack([x[0] ** 2 + x[1], x[0] * x[1] * 3])
        y.backward(gradient=T.tensor([1.0, 10.0]), retain_graph=True)
        g1 = x.grad.clone()
        x.grad = None
        T.autograd.backward(y, grad_tensors=T.tensor([1.0, 1.0]))
        return g1, x.grad
    same(f)


def test_implicit_grad_only_for_scalars():
    same_error(lambda T: (leaf(T, 3) * 2).backward())
    same_error(lambda T: T.autograd.grad(leaf(T, 3) * 2, []))


def test_grad_tensor_shape_mismatch():
    same_error(lambda T: (leaf(T, 3) * 2).backward(T.ones(2)))
    same_error(lambda T: T.autograd.grad((leaf(T, 2, 3) * 2), [leaf(T, 1)], T.ones(3, 2)))


def test_grad_tensor_complex_mismatch():
    same_error(lambda T: (leaf(T, 3) * 2).backward(T.ones(3, dtype=T.complex64)))


def test_grad_tensor_other_dtype_is_cast():
    def f(T):
        x = leaf(T, 3)
        (x * 2).backward(T.tensor([1.0, 2.0, 3.0], dtype=T.float64))
        a = x.grad
        z = leaf(T, 3, dtype=np.float64)
        (z * 2).backward(T.ones(3))
        return a, z.grad
    same(f)


def test_backward_on_tensor_without_grad():
    same_error(lambda T: T.ones(3).sum().backward())
    same_error(lambda T: T.autograd.grad(T.ones(3).sum(), leaf(T, 2)))
    same_error(lambda T: T.autograd.grad((leaf(T, 3) * 2).sum(), T.ones(3)))


def test_grad_inputs_must_be_tensors():
    same_error(lambda T: T.autograd.grad((leaf(T, 3) * 2).sum(), [None]))
    same_error(lambda T: T.autograd.grad((leaf(T, 3) * 2).sum(), []))


# ----------------------------------------------------------------------------------------------------------------
# broadcasting and accumulation


BROADCASTS = [((4, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((), (3,))]


@pytest.mark.parametrize("sa,sb", BROADCASTS)
def test_broadcasting_reduces_gradients(sa, sb):
    def f(T):
        a, b = leaf(T, *sa, seed=1), leaf(T, *sb, seed=2)
        ((a * b + a.exp()) ** 2).sum().backward()
        return a.grad, b.grad
    same(f)


def test_grad_accumulates_in_place_into_held_reference():
    def f(T):
        x = leaf(T, 3)
        (x * 2).sum().backward()
        g = x.grad
        (x.sin() * 3).sum().backward()
        (x ** 2).sum().backward()
        return g, g is x.grad, x.grad
    same(f)


def test_repeated_identical_backward_accumulates_in_place():
    def f(T):
        x = leaf(T, 3)
        g = None
        for _ in range(4):  # the same graph structure again and again (the engine may lower it)
            (x.exp() * x).sum().backward()
            g = x.grad if g is None else g
        return g is x.grad, x.grad
    same(f)


def test_grad_accumulation_with_create_graph_is_out_of_place():
    def f(T):
        x = leaf(T, 3)
        (x * 2).sum().backward()
        g = x.grad
        (x ** 3).sum().backward(create_graph=True)
        return g, g is x.grad, x.grad.requires_grad, x.grad
    same(f)


def test_grad_zero_and_reset():
    def f(T):
        w = leaf(T, 4)
        (w * 2).sum().backward()
        w.grad.zero_()
        (w * 3).sum().backward()
        a = w.grad.clone()
        w.grad = None
        (w * 5).sum().backward()
        return a, w.grad
    same(f)


def test_grad_assignment_errors():
    check_raises(lambda T: setattr(leaf(T, 3), "grad", T.ones(2)))
    check_raises(lambda T: setattr(leaf(T, 3), "grad", T.ones(3, dtype=T.float64)))
    same_error(lambda T: setattr(leaf(T, 3), "grad", [1.0]))


# ----------------------------------------------------------------------------------------------------------------
# retain_graph


def test_second_backward_without_retain_graph_fails():
    same_error(lambda T: [y.backward() for y in [(leaf(T, 4).exp() * 3).sum()] * 2])
    same_error(lambda T: [y.backward() for y in [(leaf(T, 4) * 2).sum()] * 2])


def test_retain_graph_allows_second_backward():
    def f(T):
        x = leaf(T, 4)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    same(f)


def test_saved_tensor_modified_in_place():
    def f(T):
        x = leaf(T, 3)
        y = x * 1
        w = (y * y).sum()
        y.mul_(2)
        w.backward()
    same_error(f, prefix=112)


# ----------------------------------------------------------------------------------------------------------------
# inputs=


def test_backward_inputs_leaf():
    def f(T):
        a, b = leaf(T, 3, seed=1), leaf(T, 3, seed=2)
        (a * b.exp()).sum().backward(inputs=[a])
        return a.grad, b.grad is None
    same(f)


def test_backward_inputs_non_leaf():
    def f(T):
        x = leaf(T, 3)
        y = x * 2
        z = (y * y).sum()
        z.backward(inputs=[y], retain_graph=True)
        first = y.grad.clone()
        z.backward(inputs=[y, x])
        return first, y.grad, x.grad, y.is_leaf, y.retains_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading .grad of a non-leaf that got one does not warn
        same(f)


def test_backward_inputs_empty():
    same_error(lambda T: (leaf(T, 3) * 2).sum().backward(inputs=[]))


# ----------------------------------------------------------------------------------------------------------------
# autograd.grad


def test_grad_with_grad_outputs_and_multiple_inputs():
    def f(T):
        a, b = leaf(T, 2, 3, seed=1), leaf(T, 3, seed=2)
        y = a * b.sin()
        ga, gb = T.autograd.grad(y, (a, b), T.tensor(arr(2, 3, seed=3)))
        return ga, gb, a.grad is None, b.grad is None
    same(f)


def test_grad_allow_unused_and_materialize():
    def f(T):
        a, b = leaf(T, 3, seed=1), leaf(T, 2, seed=2)
        y = (a * 2).sum()
        r1 = T.autograd.grad(y, [a, b], allow_unused=True, retain_graph=True)
        r2 = T.autograd.grad(y, [a, b], materialize_grads=True)
        return r1, r2
    same(f)


def test_grad_unused_errors():
    same_error(lambda T: T.autograd.grad((leaf(T, 3) * 2).sum(), [leaf(T, 3), leaf(T, 2)]))
    same_error(lambda T: T.autograd.grad(leaf(T, 3).sum(), leaf(T, 3), materialize_grads=True, allow_unused=False))


def test_grad_is_grads_batched():
    def f(T):
        x = leaf(T, 3)
        y = x ** 2 * x.exp()
        (jac,) = T.autograd.grad(y, x, T.eye(3), is_grads_batched=True)
        return jac
    same(f)
    same_error(lambda T: T.autograd.grad(leaf(T, 3) ** 2, leaf(T, 3), T.eye(2), is_grads_batched=True), prefix=240)


def test_create_graph_gradient_penalty():
    def f(T):
        w = leaf(T, 3, 3, seed=3)
        x = leaf(T, 5, 3, seed=4)
        out = T.tanh(x @ w).sum()
        (gx,) = T.autograd.grad(out, x, create_graph=True)
        penalty = ((gx.norm(2, dim=1) - 1) ** 2).mean()
        penalty.backward()
        return gx.requires_grad, penalty, w.grad, x.grad
    same(f)


def test_hessian_vector_product_and_third_derivative():
    def f(T):
        x = leaf(T, 3)
        v = T.tensor([1.0, -1.0, 2.0])
        y = (x.sin() * x ** 2).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        (hv,) = T.autograd.grad(g, x, v, create_graph=True)
        (t,) = T.autograd.grad(hv.sum(), x)
        return g, hv, t
    same(f)


def test_double_backward_accumulates():
    def f(T):
        x = leaf(T, 4)
        y = (x ** 3).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# graph shapes


def test_multiple_roots():
    def f(T):
        x = leaf(T, 3)
        y1, y2 = x.exp(), (x * 3).sum()
        T.autograd.backward([y1, y2], [T.tensor([1.0, 2.0, 3.0]), None])
        g1 = x.grad.clone()
        x.grad = None
        z1, z2 = x.sin(), x.cos() * x
        T.autograd.backward([z1.sum(), z2.sum()])
        ga = T.autograd.grad([x.exp(), x ** 2], x, [T.ones(3), T.full((3,), 2.0)])
        return g1, x.grad, ga
    same(f)


def test_diamond_graph():
    def f(T):
        x = leaf(T, 3)
        a = x * 2
        b = x.exp()
        c = a * b + a.sin()
        d = (c * a + b).sum()
        d.backward()
        return x.grad
    same(f)


def test_tensor_used_many_times():
    def f(T):
        x = leaf(T, 2, 2)
        y = x * x * x + x @ x + x.t() * x
        y.sum().backward()
        return x.grad
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# requires_grad, is_leaf, detach


def test_requires_grad_propagation():
    def f(T):
        x = leaf(T, 3)
        c = T.tensor(arr(3, seed=1))
        i = T.tensor([1, 2, 3])
        return [(x * c).requires_grad, (c * 2).requires_grad, (x * i).requires_grad, (x * i).dtype,
                (i * 2).requires_grad, (x > 0).requires_grad, x.argmax().requires_grad, x.long().requires_grad,
                x.double().requires_grad, (x * c).is_leaf, c.is_leaf, T.ones(2).requires_grad]
    same(f)


def test_integer_tensors_cannot_require_grad():
    same_error(lambda T: T.tensor([1, 2, 3]).requires_grad_(), prefix=10)
    same_error(lambda T: T.tensor([1, 2, 3], requires_grad=True))
    same_error(lambda T: setattr(T.tensor([1, 2, 3]), "requires_grad", True))


def test_requires_grad_on_non_leaf():
    same_error(lambda T: (leaf(T, 2) * 2).requires_grad_(False))
    same_error(lambda T: setattr(leaf(T, 2) * 2, "requires_grad", False))

    def f(T):
        y = leaf(T, 2) * 2
        return y.requires_grad_(True).is_leaf, y.requires_grad
    same(f)


def test_detach():
    def f(T):
        x = leaf(T, 3)
        y = x * 2
        z = y.detach()
        w = (y * z).sum()
        w.backward()
        y.detach_()
        return z.requires_grad, z.is_leaf, z.grad_fn is None, x.grad, y.requires_grad, y.is_leaf, y.grad_fn is None
    same(f)


def test_detach_shares_storage_and_version():
    def f(T):
        x = leaf(T, 3)
        z = x.detach()
        z.add_(1)
        return x, x._version, z._version
    same(f)


def test_detach_inplace_on_view():
    same_error(lambda T: leaf(T, 3)[:2].detach_(), prefix=48)


def test_requires_grad_after_no_grad_forward():
    def f(T):
        x = leaf(T, 3)
        with T.no_grad():
            y = x * 2
        y.requires_grad_()
        (y * y).sum().backward()
        return y.is_leaf, y.grad, x.grad
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# grad modes


def test_grad_modes_as_context_managers():
    def f(T):
        x = leaf(T, 3)
        out = []
        with T.no_grad():
            out.append((x * 2).requires_grad)
            with T.enable_grad():
                out.append((x * 2).requires_grad)
                with T.set_grad_enabled(False):
                    out.append((x * 2).requires_grad)
            out.append(T.is_grad_enabled())
        with T.inference_mode():
            out += [(x * 2).requires_grad, T.is_inference_mode_enabled(), T.is_grad_enabled()]
        with T.inference_mode(False):
            out.append((x * 2).requires_grad)
        out += [T.is_grad_enabled(), T.is_inference_mode_enabled()]
        return out
    same(f)


def test_set_grad_enabled_as_function():
    def f(T):
        x = leaf(T, 2)
        T.set_grad_enabled(False)
        a = (x * 2).requires_grad
        T.set_grad_enabled(True)
        return a, (x * 2).requires_grad, T.is_grad_enabled()
    same(f)


def test_grad_modes_as_decorators():
    def f(T):
        x = leaf(T, 2)

        @T.no_grad()
        def a():
            return (x * 2).requires_grad

        @T.no_grad
        def b():
            return (x * 2).requires_grad

        @T.enable_grad()
        def c():
            return (x * 2).requires_grad

        @T.inference_mode()
        def d():
            return (x * 2).requires_grad, T.is_inference_mode_enabled()

        @T.inference_mode
        def e():
            return (x * 2).requires_grad

        @T.set_grad_enabled(False)
        def g():
            return (x * 2).requires_grad

        enabled_after_decorating = T.is_grad_enabled()
        with T.no_grad():
            inside = c()
        return a(), b(), inside, d(), e(), g(), enabled_after_decorating, T.is_grad_enabled()
    same(f)


def test_grad_mode_decorator_on_generator():
    def f(T):
        x = leaf(T, 2)

        @T.no_grad()
        def gen():
            for _ in range(3):
                got = yield (x * 2).requires_grad, T.is_grad_enabled()
                assert got in (None, 7)

        it = gen()
        out = [next(it), T.is_grad_enabled(), it.send(7), T.is_grad_enabled(), list(it)]
        return out
    same(f)


def test_grad_mode_restored_after_exception():
    def f(T):
        try:
            with T.no_grad():
                raise ValueError("inside")
        except ValueError:
            pass
        return T.is_grad_enabled()
    same(f)


def test_grad_mode_is_per_thread():
    def f(T):
        res = {}
        x = leaf(T, 2)
        started, release = threading.Event(), threading.Event()

        def worker():
            res["worker_enabled"] = T.is_grad_enabled()
            res["worker_records"] = (x * 2).requires_grad
            with T.no_grad():
                started.set()
                release.wait()

        with T.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            started.wait()
        res["main_after_block"] = (x * 2).requires_grad  # the worker's no_grad is still open
        release.set()
        t.join()
        return sorted(res.items())
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# .grad of a non-leaf


def _warnings_of(fn, T):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(T)
    return out, [(x.category.__name__, str(x.message)[:80]) for x in w]


def test_non_leaf_grad_warns():
    def f(T):
        x = leaf(T, 3)
        y = x * 2
        z = x * 3
        z.retain_grad()
        (y + z).sum().backward()
        return (_warnings_of(lambda T: y.grad, T), _warnings_of(lambda T: z.grad, T),
                _warnings_of(lambda T: x.grad, T))
    same(f)


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
def test_no_grad_parameter_update_loop():
    def f(T):
        w = leaf(T, 4)
        for _ in range(3):
            loss = ((w - 0.5) ** 2).sum()
            loss.backward()
            with T.no_grad():
                w -= 0.1 * w.grad
            w.grad = None
        return w, w.requires_grad, w.is_leaf
    same(f)


def test_saved_non_leaf_detached_in_place_raises_as_pytorch():
    """A non-leaf saved for backward and then ``detach_()``ed makes the backward that unpacks it raise PyTorch's
    SavedVariable error; a view of it saved elsewhere, and a custom Function's saved input, still work."""
    def run(T):
        out = []
        for case in ("saved", "view", "function"):
            x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = x * 2
            if case == "saved":
                loss = (y * y).sin().sum()
            elif case == "view":
                loss = (y[:2] * y[:2]).sum()
            else:
                class Triple(T.autograd.Function):
                    @staticmethod
                    def forward(ctx, a):
                        ctx.save_for_backward(a)
                        return a * 3

                    @staticmethod
                    def backward(ctx, g):
                        a, = ctx.saved_tensors
                        return g * a
                loss = Triple.apply(y).sum()
            y.detach_()
            try:
                loss.backward()
                out.append(x.grad)
            except RuntimeError as e:
                out.append(str(e))
        return out
    same(run)


def test_non_leaf_detached_in_place_before_it_is_saved_backpropagates():
    """The truncated-BPTT idiom of d2l's RNNs: the state a step returned is ``detach_()``ed, then used (and saved)
    by the next step's graph, whose backward works in PyTorch (only saves made before the ``detach_()`` are stale);
    an alias ``.detach()``ed off before the ``detach_()`` and saved stays usable too."""
    def run(T):
        w = T.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
        h = T.zeros(1, 2)
        out = []
        for _ in range(3):
            h.detach_()
            h = T.tanh(h @ w + 1.0)
            (h * h).sum().backward()
            out.append(w.grad.clone())
        for saved in ("alias", "itself"):
            y = w * 2
            z = y.detach()
            loss = ((z if saved == "alias" else y) * w).sum()
            y.detach_()
            try:
                loss.backward()
                out.append(w.grad.clone())
            except RuntimeError as e:
                out.append(str(e))
        return out
    same(run)


def test_grad_dtype_assignment_checks_and_accumulation():
    """``Tensor.grad_dtype`` (PyTorch 2.13): the dtype an assigned ``.grad`` must have (the tensor's own by default,
    None for any), set on leaves only; backward casts the accumulated gradient to it (eager, lowered, compiled)."""
    def run(T):
        out = []
        x = T.ones(2, requires_grad=True)
        for g in (T.ones(2, dtype=T.float64), T.ones(3), T.ones(2, dtype=T.int64)):
            try:
                x.grad = g
            except RuntimeError as e:
                out.append(str(e))
        x.grad_dtype = None
        x.grad = T.ones(2, dtype=T.int32)
        out.append((str(x.grad.dtype), x.grad_dtype))
        for value in (T.float64, "a"):
            for t in (x * 2, T.ones(2)):
                try:
                    t.grad_dtype = value
                    out.append(str(t.grad_dtype))
                except RuntimeError as e:
                    out.append(str(e))
        w = T.ones(2, requires_grad=True)
        w.grad_dtype = T.float64
        for _ in range(3):  # (the repeats take the lowered backward)
            (w * 2).sum().backward()
            out.append(w.grad)
        return out
    same(run)
    import torchish
    step = torchish.compile(lambda w: (w * 3).sum().backward())
    w = torchish.ones(2, requires_grad=True)
    w.grad_dtype = torchish.float64
    for _ in range(3):
        w.grad = None
        step(w)
        assert w.grad.dtype == torchish.float64
