"""Graph introspection against PyTorch: grad_fn names, next_functions, AccumulateGrad identity, node and tensor
hooks (their exact order), removable handles, post-accumulate-grad hooks."""
import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, needs_torch, run_both, same, same_error


def leaf(T, *shape, seed=0):
    return T.tensor(arr(*shape, seed=seed), requires_grad=True)


# ----------------------------------------------------------------------------------------------------------------
# grad_fn names


GRAD_FN_OPS = {
    "add": lambda T, a: a + 1, "add_tensor": lambda T, a: a + a, "sub": lambda T, a: a - a, "rsub": lambda T, a: 1 - a,
    "mul": lambda T, a: a * a, "mul_scalar": lambda T, a: a * 2, "div": lambda T, a: a / 2, "neg": lambda T, a: -a,
    "pow_scalar": lambda T, a: a ** 2, "pow_tensor": lambda T, a: a ** a, "rpow": lambda T, a: 2 ** a,
    "exp": lambda T, a: a.exp(), "log": lambda T, a: a.log(), "sqrt": lambda T, a: a.sqrt(),
    "sin": lambda T, a: a.sin(), "tanh": lambda T, a: a.tanh(), "sigmoid": lambda T, a: a.sigmoid(),
    "relu": lambda T, a: a.relu(), "abs": lambda T, a: a.abs(), "square": lambda T, a: a.square(),
    "clamp": lambda T, a: a.clamp(0, 1), "clamp_min": lambda T, a: a.clamp_min(0),
    "sum": lambda T, a: a.sum(), "sum_dim": lambda T, a: a.sum(0), "mean": lambda T, a: a.mean(),
    "mean_dim": lambda T, a: a.mean(1), "max": lambda T, a: a.max(), "max_dim": lambda T, a: a.max(0)[0],
    "amax": lambda T, a: a.amax(0), "prod": lambda T, a: a.prod(), "norm": lambda T, a: a.norm(),
    "var": lambda T, a: a.var(), "logsumexp": lambda T, a: a.logsumexp(0), "cumsum": lambda T, a: a.cumsum(0),
    "softmax": lambda T, a: a.softmax(0), "log_softmax": lambda T, a: a.log_softmax(0),
    "view": lambda T, a: a.view(4), "reshape": lambda T, a: a.reshape(4), "flatten": lambda T, a: a.flatten(),
    "t": lambda T, a: a.t(), "transpose": lambda T, a: a.transpose(0, 1), "permute": lambda T, a: a.permute(1, 0),
    "unsqueeze": lambda T, a: a.unsqueeze(0), "squeeze": lambda T, a: a.squeeze(), "expand": lambda T, a: a.expand(3, 2, 2),
    "select": lambda T, a: a[0], "slice": lambda T, a: a[:, 1:], "narrow": lambda T, a: a.narrow(0, 0, 1),
    "index": lambda T, a: a[[0, 1]], "split": lambda T, a: a.split(1)[0], "unbind": lambda T, a: a.unbind()[0],
    "cat": lambda T, a: T.cat([a, a]), "stack": lambda T, a: T.stack([a, a]), "clone": lambda T, a: a.clone(),
    "to_double": lambda T, a: a.to(T.float64), "matmul": lambda T, a: a @ a, "mm": lambda T, a: a.mm(a),
    "mv": lambda T, a: a.mv(a[0]), "dot": lambda T, a: a[0].dot(a[1]),
    "bmm": lambda T, a: a.unsqueeze(0).bmm(a.unsqueeze(0)), "addmm": lambda T, a: a.addmm(a, a),
    "where": lambda T, a: a.where(a > 0, 0.0), "masked_fill": lambda T, a: a.masked_fill(a > 0, 0.0),
    "gather": lambda T, a: a.gather(0, T.tensor([[0, 1]])), "index_select": lambda T, a: a.index_select(0, T.tensor([0])),
    "repeat": lambda T, a: a.repeat(2, 1), "triu": lambda T, a: a.triu(), "maximum": lambda T, a: a.maximum(a * 2),
    "log1p": lambda T, a: a.log1p(), "deg2rad": lambda T, a: a.deg2rad(),
    "special_i0e": lambda T, a: T.special.i0e(a),
}


@pytest.mark.parametrize("name", sorted(GRAD_FN_OPS))
def test_grad_fn_names(name):
    def f(T):
        a = T.tensor(np.array([[0.5, 1.5], [2.0, 3.0]], np.float32), requires_grad=True)
        out = GRAD_FN_OPS[name](T, a)
        return type(out.grad_fn).__name__, out.grad_fn.name(), out.is_leaf, a.grad_fn is None
    same(f)


# The node PyTorch records depends on the overload the operands select (``fmod.Scalar`` / ``fmod.Tensor``), or is
# the last step of PyTorch's decomposition (quantile's squeeze, l1_loss's abs); some record a node whose backward
# raises. Inputs (a, b, p) keep away from ties, zeros and the jumps of fmod/remainder.
_A = np.array([1.3, -2.7, 0.6, 3.1, -0.4, 2.2], np.float32)
_B = np.array([0.7, 1.9, -1.1, 2.3, 0.9, -1.6], np.float32)
_P = np.array([0.8, 1.7, 0.5, 2.9, 0.3, 1.2], np.float32)

OVERLOAD_OPS = {
    "aminmax": lambda T, a, b, p: T.aminmax(a),
    "aminmax_dim": lambda T, a, b, p: T.aminmax(a.reshape(2, 3), dim=1),
    "aminmax_max_only": lambda T, a, b, p: T.aminmax(a.reshape(2, 3), dim=0, keepdim=True).max,
    "copysign_tensor": lambda T, a, b, p: T.copysign(a, b),
    "copysign_scalar": lambda T, a, b, p: T.copysign(a, -1.0),
    "xlogy_tensor": lambda T, a, b, p: T.xlogy(a, p),
    "xlogy_scalar_self": lambda T, a, b, p: T.xlogy(2.0, p),
    "xlogy_scalar_other": lambda T, a, b, p: T.xlogy(a, 2.0),
    "fmod_tensor": lambda T, a, b, p: T.fmod(a, p),
    "fmod_scalar": lambda T, a, b, p: T.fmod(a, 2.0),
    "remainder_tensor": lambda T, a, b, p: T.remainder(a, p),
    "remainder_scalar": lambda T, a, b, p: T.remainder(a, 2.0),
    "remainder_scalar_self": lambda T, a, b, p: T.remainder(2.0, p),
    "mod_operator": lambda T, a, b, p: a % 2.0,
    "clamp_min_tensor": lambda T, a, b, p: T.clamp_min(a, b),
    "clamp_max_tensor": lambda T, a, b, p: T.clamp_max(a, b),
    "clamp_tensors": lambda T, a, b, p: T.clamp(a, min=b, max=b + p),
    "clamp_min_tensor_only": lambda T, a, b, p: T.clamp(a, min=b),
    "dist": lambda T, a, b, p: T.dist(a, b),
    "dist_p1_broadcast": lambda T, a, b, p: T.dist(a, b[:3].reshape(3, 1), p=1),
    "dist_p0": lambda T, a, b, p: T.dist(a, b, p=0),
    "ldexp": lambda T, a, b, p: T.ldexp(a, b),
    "quantile": lambda T, a, b, p: T.quantile(a, 0.3),
    "quantile_dim": lambda T, a, b, p: T.quantile(a.reshape(2, 3), 0.3, dim=1),
    "quantile_q_tensor_keepdim": lambda T, a, b, p: T.quantile(a.reshape(2, 3), T.tensor([0.3, 0.7]), 1, True),
    "nanquantile": lambda T, a, b, p: T.nanquantile(a, 0.3),
    "nanquantile_dim": lambda T, a, b, p: T.nanquantile(a.reshape(2, 3), 0.6, dim=0),
    "floor_divide": lambda T, a, b, p: T.floor_divide(a, p),
    "heaviside": lambda T, a, b, p: T.heaviside(a, b),
    "slice_scatter": lambda T, a, b, p: T.slice_scatter(a, b[:2], 0, 1, 3),
    "slice_scatter_step": lambda T, a, b, p: T.slice_scatter(a.reshape(2, 3), b[:4].reshape(2, 2), 1, 0, None, 2),
    "select_scatter": lambda T, a, b, p: T.select_scatter(a.reshape(2, 3), b[:3], 0, 1),
    "select_scatter_negative": lambda T, a, b, p: T.select_scatter(a.reshape(2, 3), b[:2], -1, -1),
    "select_scatter_src_only": lambda T, a, b, p: T.select_scatter(a.detach().reshape(2, 3), b[:3].double(), 0, 0),
    "diagonal_scatter": lambda T, a, b, p: T.diagonal_scatter(a.reshape(2, 3), b[:2]),
    "diagonal_scatter_offset": lambda T, a, b, p: T.diagonal_scatter(a.reshape(2, 3), b[:1], 1, 1, 0),
    "diagonal_scatter_3d": lambda T, a, b, p: T.diagonal_scatter(a.reshape(2, 1, 3), b[:2].reshape(1, 2), -1, 2, 0),
    "scatter_reduce_arg": lambda T, a, b, p: a.reshape(2, 3).scatter(1, T.tensor([[0, 2], [1, 0]]), 2.0,
                                                                       reduce="multiply"),
    "scatter_reduce_arg_inplace": lambda T, a, b, p: (a * 1).reshape(2, 3).scatter_(1, T.tensor([[0, 2]]), 2.0,
                                                                                     reduce="add"),
    "index_reduce": lambda T, a, b, p: a.reshape(2, 3).index_reduce(1, T.tensor([0, 2]), b[:4].reshape(2, 2), "prod"),
    "l1_loss_none": lambda T, a, b, p: T.nn.functional.l1_loss(a, b, reduction="none"),
    "l1_loss_mean": lambda T, a, b, p: T.nn.functional.l1_loss(a, b),
    "l1_loss_sum": lambda T, a, b, p: T.nn.functional.l1_loss(a, b, reduction="sum"),
    "l1_loss_weighted_none": lambda T, a, b, p: T.nn.functional.l1_loss(a, b, reduction="none", weight=p.detach()),
    "mse_loss_weighted_mean": lambda T, a, b, p: T.nn.functional.mse_loss(a, b, weight=p.detach()),
    "bernoulli": lambda T, a, b, p: T.bernoulli(p / 4),
    "bernoulli_float_p": lambda T, a, b, p: T.bernoulli(p, 0.5),
    "poisson": lambda T, a, b, p: T.poisson(p),
    "poisson_double": lambda T, a, b, p: T.poisson(p.double()),
    "frexp": lambda T, a, b, p: T.frexp(a),
    "unique": lambda T, a, b, p: T.unique(a, return_counts=True),
    "unique_dim": lambda T, a, b, p: T.unique(a.reshape(2, 3), dim=1),
    "unique_consecutive": lambda T, a, b, p: T.unique_consecutive(a),
}


@pytest.mark.parametrize("name", sorted(OVERLOAD_OPS))
def test_grad_fn_names_by_overload(name):
    def f(T):
        leaves = [T.tensor(v, requires_grad=True) for v in (_A, _B, _P)]
        out = OVERLOAD_OPS[name](T, *leaves)
        outs = list(out) if isinstance(out, tuple) else [out]
        nodes = [(type(o.grad_fn).__name__ if o.grad_fn is not None else None, o.requires_grad) for o in outs]
        diff = [o for o in outs if o.requires_grad]
        cots = [T.tensor(np.linspace(-1, 1, o.numel(), dtype=np.float32).reshape(tuple(o.shape))) for o in diff]
        try:
            grads = T.autograd.grad(diff, leaves, cots, allow_unused=True)
        except (RuntimeError, NotImplementedError) as e:  # the nodes PyTorch records without a formula
            return nodes, type(e).__name__, str(e)
        return nodes, list(grads)
    same(f)


def test_custom_function_and_accumulate_grad_names():
    def f(T):
        class MyOp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = leaf(T, 3)
        y = MyOp.apply(x)
        acc = y.grad_fn.next_functions[0][0]
        return type(y.grad_fn).__name__, type(acc).__name__, acc.name(), repr(y.grad_fn).startswith("<")
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# next_functions


def _describe(fn):
    """Nested (name, [(child, output_nr), ...]) of a small graph (recursion is fine on a 4-level test graph)."""
    if fn is None:
        return None
    return type(fn).__name__, [(_describe(n), i) for n, i in fn.next_functions]


def test_next_functions_structure():
    def f(T):
        a, b = leaf(T, 2, seed=1), leaf(T, 2, seed=2)
        c = T.tensor([1.0, 2.0])
        y = (a * b) * (c * a)
        z = (y.exp() * y.sin()).sum()
        return _describe(z.grad_fn)
    same(f)


def test_next_functions_of_add():
    def f(T):
        a, b = leaf(T, 2, seed=1), leaf(T, 2, seed=2)
        z = (a + b.exp()).sum()
        return _describe(z.grad_fn)
    same(f)


def test_next_functions_multi_output_and_constants():
    def f(T):
        a = leaf(T, 4)
        p, q = a.split(2)
        y = (q * p).sum()
        mul = y.grad_fn.next_functions[0][0]
        w = a * 2
        return ([(type(n).__name__, i) for n, i in mul.next_functions], p.output_nr, q.output_nr,
                [(type(n).__name__ if n is not None else None, i) for n, i in w.grad_fn.next_functions],
                a.grad_fn is None, len(y.grad_fn.next_functions))
    same(f)


def test_accumulate_grad_identity_is_stable():
    def f(T):
        x = leaf(T, 3)
        a = (x * 2).grad_fn.next_functions[0][0]
        b = (x.exp()).grad_fn.next_functions[0][0]
        return a is b, a.variable is x, type(a).__name__
    same(f)


def test_calling_grad_fn_directly():
    def f(T):
        x = leaf(T, 3)
        y = x * 2
        return y.grad_fn(T.ones(3)), y.grad_fn.next_functions[1]
    same(f)


# ----------------------------------------------------------------------------------------------------------------
# hooks


def test_hook_order_matches_pytorch():
    def f(T):
        log = []
        x = leaf(T, 3)
        y = x * 2
        z = y.exp()
        w = (z * y).sum()
        acc = y.grad_fn.next_functions[0][0]
        x.register_hook(lambda g: log.append("x.hook1"))
        x.register_post_accumulate_grad_hook(lambda t: log.append("x.post_acc"))
        x.register_hook(lambda g: log.append("x.hook2"))
        acc.register_prehook(lambda go: log.append("acc.pre"))
        acc.register_hook(lambda gi, go: log.append(("acc.post", len(gi), len(go))))
        y.register_hook(lambda g: log.append("y.hook1"))
        y.retain_grad()
        y.register_hook(lambda g: (log.append("y.hook2"), g * 2)[1])
        y.grad_fn.register_prehook(lambda go: log.append(("yfn.pre", len(go))))
        y.grad_fn.register_hook(lambda gi, go: log.append(("yfn.post", len(gi), len(go))))
        z.grad_fn.register_hook(lambda gi, go: log.append("zfn.post"))
        z.grad_fn.register_prehook(lambda go: log.append("zfn.pre"))
        z.register_hook(lambda g: log.append("z.hook"))
        w.grad_fn.register_prehook(lambda go: log.append("wfn.pre"))
        w.register_hook(lambda g: log.append("w.hook"))
        w.backward()
        return log, y.grad, x.grad
    same(f)


def test_retain_grad_sees_hooked_gradient():
    def f(T):
        x = leaf(T, 3)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return y.grad, x.grad
    same(f)


def test_tensor_hooks_replace_or_observe():
    def f(T):
        seen = []
        x = leaf(T, 4)
        x.register_hook(lambda g: g.clamp(max=0.5))
        y = x.tanh()
        y.register_hook(lambda g: seen.append(g.clone()))
        y.register_hook(lambda g: g * 3)
        (y * y).sum().backward()
        return seen, x.grad
    same(f)


def test_hooks_run_in_autograd_grad():
    def f(T):
        log = []
        x = leaf(T, 3)
        x.register_hook(lambda g: (log.append("x"), g + 1)[1])
        y = x * 2
        y.register_hook(lambda g: log.append("y"))
        (g,) = T.autograd.grad(y.sum(), x)
        return g, log, x.grad is None
    same(f)


def test_removable_handles():
    def f(T):
        log = []
        x = leaf(T, 3)
        h1 = x.register_hook(lambda g: g + 1)
        y = x * 2
        h2 = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        h3 = y.grad_fn.register_prehook(lambda go: log.append("pre"))
        y.sum().backward(retain_graph=True)
        first = x.grad.clone()
        for h in (h1, h2, h3):
            h.remove()
        h1.remove()  # removing twice is harmless
        x.grad = None
        y.sum().backward()
        with x.register_hook(lambda g: g * 0):
            pass
        x.grad = None
        (x * 3).sum().backward()
        return first, log, x.grad
    same(f)


def test_node_hooks_replace_gradients():
    def f(T):
        x = leaf(T, 3)
        y = x * 2
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        y.sum().backward(retain_graph=True)
        a = x.grad.clone()
        x.grad = None
        z = x.exp()
        z.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        z.sum().backward()
        return a, x.grad
    same(f)


def test_hook_errors():
    check_raises(lambda T: T.ones(3).register_hook(lambda g: g))
    check_raises(lambda T: (leaf(T, 3) * 2).register_post_accumulate_grad_hook(lambda t: None))

    def wrong_count(T):
        x = leaf(T, 3)
        y = x * x
        y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        y.sum().backward()
    err = check_raises(wrong_count)
    import torchish
    with pytest.raises(RuntimeError, match="^" + __import__("re").escape(str(err)) + "$"):
        wrong_count(torchish)

    def wrong_size(T):
        y = leaf(T, 3) * 2
        y.register_hook(lambda g: g.sum())
        y.sum().backward()
    check_raises(wrong_size, match="^hook '<lambda>' has changed the size of value")


def test_post_accumulate_grad_hook_optimizer_in_backward():
    def f(T):
        w1, w2 = leaf(T, 3, seed=1), leaf(T, 2, seed=2)
        log = []

        def step(p):
            log.append(p.grad.clone())
            with T.no_grad():
                p.add_(p.grad, alpha=-0.1)
            p.grad = None

        for p in (w1, w2):
            p.register_post_accumulate_grad_hook(step)
        for _ in range(2):
            ((w1 ** 2).sum() + w2.exp().sum() + w1.sum() * w2.sum()).backward()
        return w1, w2, w1.grad, w2.grad, log
    same(f)


def test_post_accumulate_grad_hook_sees_accumulated_grad():
    def f(T):
        x = leaf(T, 3)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        return seen
    same(f)


@needs_torch
@pytest.mark.parametrize("was,got", [("bfloat16", "float32"), ("float32", "float64"), ("float32", "bfloat16"),
                                     ("float16", "complex64")])
def test_hook_changing_the_type_names_both_types_as_torch(was, got):
    """PyTorch's message prints the old TH names for its eight legacy types and CPU<Name>Type for the others."""

    def fn(lib):
        x = lib.ones(2, requires_grad=True)
        y = (x * 2).to(getattr(lib, was))
        y.register_hook(lambda g: g.to(getattr(lib, got)))
        y.float().sum().backward() if was != "float32" else y.sum().backward()
    same_error(fn)
