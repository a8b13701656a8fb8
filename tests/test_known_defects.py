"""Regression tests for defects found by comparing with PyTorch: cumprod's backward at zeros and infinities,
in-place comparisons on tensors that require grad, complex logcumsumexp, torch.special on half precision,
checkpoint under saved_tensors_hooks, SparseAdam with dense gradients, and the tie order of sort/topk."""
import numpy as np
import pytest

import torchish
from oracle import arr, assert_same, check, check_fd, check_raises, needs_torch, run_both, same, same_error, \
    to_numpy, torch

INF, NAN = float("inf"), float("nan")


# ---------------------------------------------------------------------------------------------------------------
# cumprod backward: PyTorch's O(n) formula (reversed cumsum of out * grad divided by the input before the first
# zero, the product formula at the first zero, 0 after it): an infinite or NaN input gives NaN where it is divided

CUMPROD_INPUTS = [
    [INF, 2.0, 3.0], [2.0, INF], [-3.0, -INF], [INF, 0.0], [0.0, 2.0, INF], [0.0, 0.0, NAN], [2.0, NAN, 0.0, 3.0],
    [0.5, 0.0, 4.0, 0.0, -2.0], [-INF, 0.5, 0.0, INF], [NAN], [0.0], [1.5, -2.0, 0.5, 4.0], [0.0, 0.0, 0.0],
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("values", CUMPROD_INPUTS, ids=[str(v) for v in CUMPROD_INPUTS])
def test_cumprod_backward_with_zeros_and_infinities(values, dtype):
    check(lambda lib, x: lib.cumprod(x, 0), [np.array(values, dtype)])


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_backward_2d_mixed_rows(dim):
    x = np.array([[2.0, 0.0, 3.0, INF], [1.0, -2.0, 0.5, 4.0], [0.0, 0.0, 1.0, 2.0], [INF, 2.0, NAN, 1.0]])
    check(lambda lib, t: lib.cumprod(t, dim), [x])


def test_cumprod_backward_half_and_dtype_argument():
    x = np.array([[2.0, 0.0, 3.0], [1.0, -2.0, 0.5]], np.float32)
    check(lambda lib, t: lib.cumprod(t.to(lib.bfloat16), 1), [x])
    check(lambda lib, t: lib.cumprod(t, 1, dtype=lib.float64), [x])


@needs_torch
def test_cumprod_backward_complex():
    x = np.array([1 + 2j, 0.5 - 1j, 0j, -2 + 1j, 3 - 0.5j])

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(lib.cumprod(t, 0), t, lib.tensor(np.linspace(1, 2, 5) * (1 - 0.5j)))
        return g
    same(run)


@needs_torch
@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 2.0, 3.0], [0.0, 0.0, 2.0], [1.5, -2.0, 0.5]])
def test_cumprod_double_backward(values):
    # create_graph=True: the second derivative is the exact one (PyTorch switches to its O(n^2) formula)
    x = np.array(values)

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(lib.cumprod(t, 0), t, lib.tensor(np.arange(1.0, len(x) + 1)), create_graph=True)
        h, = lib.autograd.grad((g * lib.tensor(np.linspace(-1, 1, len(x)))).sum(), t)
        return g, h
    same(run)


def test_cumprod_gradient_finite_differences():
    check_fd(lambda t: torchish.cumprod(t, 1), np.array([[2.0, 0.0, 3.0, -1.5], [0.5, -2.0, 0.0, 0.0]]))
    check_fd(lambda t: torchish.cumprod(t, 0), arr(4, 3, seed=3))


# prod backward: PyTorch's grad * result / input without zeros (inf / inf = NaN), exclusive products with them,
# and prod() of two or more zeros: 0

PROD_INPUTS = [[2.0, INF, -3.0], [INF, 2.0, INF], [0.0, 0.0, INF], [0.0, INF, -0.0], [NAN, 2.0, 2.0], [NAN, 0.0, 1.0],
               [0.0, 2.0, 3.0], [1.5, -2.0, 0.5]]


@pytest.mark.parametrize("values", PROD_INPUTS, ids=[str(v) for v in PROD_INPUTS])
def test_prod_backward_with_zeros_and_infinities(values):
    x = np.array(values)
    check(lambda lib, t: lib.prod(t), [x])
    check(lambda lib, t: lib.prod(t, 0), [x])
    check(lambda lib, t: lib.prod(t.reshape(3, 1) * t, 1, keepdim=True), [x])


@needs_torch
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_double_backward(dim):
    x = np.array([[2.0, 0.0, 3.0], [1.0, -2.0, 0.5]])

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        out = lib.prod(t) if dim is None else lib.prod(t, dim)
        g, = lib.autograd.grad(out, t, lib.ones_like(out) * 1.5, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), t)
        return g, h
    same(run)
    check_fd(lambda t: torchish.prod(t, 1), x)


# ---------------------------------------------------------------------------------------------------------------
# in-place comparisons: differentiable with zero gradients (LtBackward0 for a number, LtBackward1 for a Tensor)

COMPARISONS = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "less_equal_", "not_equal_"]


@needs_torch
@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("other", ["number", "tensor", "tensor_rg", "int_tensor"])
def test_inplace_comparison_keeps_grad(name, other):
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = {"number": 2.0, "tensor": lib.tensor([2.0, 2.0, 5.0]), "int_tensor": lib.tensor([1, 2, 5]),
             "tensor_rg": lib.tensor([2.0, 2.0, 5.0], requires_grad=True)}[other]
        x = a * 1
        r = getattr(x, name)(y)
        nexts = [type(n).__name__ for n, _ in r.grad_fn.next_functions]
        r.sum().backward()
        grads = [a.grad] + ([y.grad] if other == "tensor_rg" else [])
        return r is x, r, r.requires_grad, type(r.grad_fn).__name__, nexts, grads
    same(run)


@needs_torch
def test_inplace_comparison_other_cases():
    def run(lib):
        y = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        x = lib.tensor([1.0, 2.0, 3.0]).double()
        r = x.lt_(y)                                  # other requiring grad makes x require it
        r.sum().backward()
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = b.clone()
        c[:2].ge_(2.0)                                # through a view: CopySlices on the base
        c.sum().backward()
        d = b.clone()
        e = d.eq_(y)
        e.sum().backward(retain_graph=False)
        e.sum().backward()                            # nothing saved: a second backward is fine
        with lib.no_grad():
            f = (b * 1).gt_(1.0)
        return r, r.dtype, y.grad, type(c.grad_fn).__name__, b.grad, f.requires_grad
    same(run)
    check_raises(lambda lib: lib.tensor([1.0], requires_grad=True).lt_(2.0))  # a leaf
    check_raises(lambda lib: (lib.tensor([1.0, 2.0], requires_grad=True) * 1).lt_(lib.ones(3, 2)))


# ---------------------------------------------------------------------------------------------------------------
# complex logcumsumexp: PyTorch's sequential log-add-exp keeps imaginary parts unwrapped

LCSE_INPUTS = [
    [1 + 2j, 0.5 - 3j, -1 + 4j, 2 + 1j], [3j, 3j, 3j], [1 + np.pi * 1j, 1 - np.pi * 1j], [10 + 0.1j, -5 + 6j, 3 - 7j],
    [complex(-INF, 0), 1 + 1j], [complex(INF, 0), 1 + 1j], [1 + 1j, complex(-INF, 2)], [complex(1, INF), 1 + 1j],
    [complex(NAN, 0), 2 - 1j], [complex(-INF, 0), complex(1, INF)], [0j, complex(INF, 1), -2 + 4j],
]


@needs_torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("values", LCSE_INPUTS, ids=[str(v) for v in LCSE_INPUTS])
def test_complex_logcumsumexp(values, dtype):
    x = np.array(values)

    def run(lib):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.logcumsumexp(t, 0)
        cot = lib.tensor(np.linspace(1, 2, len(x)) * (1 - 0.5j), dtype=getattr(lib, dtype))
        g, = lib.autograd.grad(out, t, cot)
        return out, g
    same(run, rtol=1e-4, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("dim", [0, 1])
def test_complex_logcumsumexp_2d_and_double_backward(dim):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4)) * 3 + 1j * rng.normal(size=(3, 4)) * 4

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        out = lib.logcumsumexp(t, dim)
        g, = lib.autograd.grad(out.abs().sum(), t, create_graph=True)
        h, = lib.autograd.grad(g.abs().sum(), t)
        return out, g, h
    same(run, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------------------------------------
# torch.special on float16/bfloat16: PyTorch's result dtype and values, or its NotImplementedError

HALF = ["float16", "bfloat16"]
POINTS = np.array([-2.0, -0.5, 0.0, 0.3, 0.9, 1.5, 3.0], np.float32)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", ["ndtr", "i0e", "i0", "sinc"])
def test_special_half_values_and_grads(name, dtype):
    # the gradient reaches the float32 input through half-precision arithmetic: half-precision tolerances
    check(lambda lib, x: getattr(lib.special, name)(x.to(getattr(lib, dtype))), [POINTS], rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_special_half_forward_only(name, dtype):
    check(lambda lib, x: getattr(lib.special, name)(x.to(getattr(lib, dtype))), [POINTS], grad=False)

    def backward(lib):
        x = lib.tensor(POINTS).to(getattr(lib, dtype)).requires_grad_()
        getattr(lib.special, name)(x).sum().backward()   # "i1_backward" not implemented for 'Half'
    check_raises(backward)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", ["ndtri", "log_ndtr", "erfcx"])
def test_special_half_not_implemented(name, dtype):
    same_error(lambda lib: getattr(lib.special, name)(lib.tensor(POINTS).to(getattr(lib, dtype))))


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_special_i1_grads_at_zero(name):
    # PyTorch's i1_backward/i1e_backward: 0.5 where |x| <= eps
    check_fd(getattr(torchish.special, name), np.array([-3.0, -0.4, 0.2, 2.0]))
    check(lambda lib, x: getattr(lib.special, name)(x), [np.array([0.0, 1e-9, -0.4, 2.0, -7.0])])


# ---------------------------------------------------------------------------------------------------------------
# non-reentrant checkpoint under saved_tensors_hooks: only the positional tensor inputs are packed (once), and
# unpacked at each backward; the block's intermediates are the checkpoint's business

def _checkpoint_log(lib, scenario):
    log = []
    hooks = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack", tuple(t.shape))) or t,
                                                   lambda t: log.append(("unpack", tuple(t.shape))) or t)
    ck = lib.utils.checkpoint.checkpoint
    x = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    c, k = lib.ones(4), lib.ones(5)

    def f(a, n, b, kw=None):
        return (a.sin() * b.sum() * n * kw.sum()).cos()
    if scenario == "basic":
        with hooks:
            y = ck(f, x, 2, c, use_reentrant=False, kw=k)
        log.append("forward")
        (y * y).sum().backward()
    elif scenario == "no_grad_input":
        with hooks:
            y = ck(f, c, 2, c, use_reentrant=False, kw=k)
        log.append(y.requires_grad)
    elif scenario == "backward_inside":
        with hooks:
            y = ck(f, x, 2, c, use_reentrant=False, kw=k)
            log.append("forward")
            y.sum().backward()
    elif scenario == "nested":
        with hooks:
            y = ck(lambda a: ck(lambda t: t.exp() * 2, a.sin(), use_reentrant=False).sum(), x, use_reentrant=False)
        log.append("forward")
        y.backward()
    elif scenario == "twice":
        with hooks:
            y = ck(f, x, 2, c, use_reentrant=False, kw=k)
        y.sum().backward(retain_graph=True)
        log.append("first")
        y.sum().backward()
    return log, x.grad


@needs_torch
@pytest.mark.parametrize("scenario", ["basic", "no_grad_input", "backward_inside", "nested", "twice"])
def test_checkpoint_saved_tensors_hooks_pack_inputs_only(scenario):
    same(lambda lib: _checkpoint_log(lib, scenario))


# ---------------------------------------------------------------------------------------------------------------
# SparseAdam: dense gradients raise at step(); only sparse=True embedding weights have "sparse" gradients

@needs_torch
def test_sparse_adam_refuses_dense_gradients():
    def dense(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SparseAdam([p], lr=0.1)      # constructing with dense parameters is fine
        opt.step()                                    # no gradient: nothing to do
        p.grad = lib.ones(3)
        opt.step()
    same_error(dense)

    def untouched(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SparseAdam([p], lr=0.1)
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError):
            opt.step()
        return p, opt.state_dict()["state"]
    same(untouched)

    def embedding_dense(lib):
        emb = lib.nn.Embedding(5, 3)
        opt = lib.optim.SparseAdam(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
    same_error(embedding_dense)


@needs_torch
def test_sparse_adam_with_sparse_embedding_matches_torch():
    w0 = arr(6, 3, seed=4)

    def run(lib):
        emb = lib.nn.Embedding(6, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        for idx in ([1, 2, 2], [0, 4], [2, 5]):
            opt.zero_grad()
            (emb(lib.tensor(idx)) ** 2).sum().backward()
            opt.step()
        return emb.weight
    same(run)


# ---------------------------------------------------------------------------------------------------------------
# sort/topk ties: PyTorch's CPU sort (stable=False) is stable up to 16 elements (libstdc++'s insertion sort) and
# topk up to 3; beyond that its tie order is libstdc++'s introsort/introselect's, which torchish replays on the host
# (torchish/ops/cpu_order.py; larger sizes are tested in test_cpu_order.py)

@needs_torch
@pytest.mark.parametrize("n", [2, 5, 16])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_tie_order_small(n, descending):
    x = (np.arange(n * 3) % 3).astype(np.float32).reshape(3, n)
    same(lambda lib: lib.sort(lib.tensor(x), dim=1, descending=descending))
    same(lambda lib: lib.sort(lib.tensor(x.T.copy()), dim=0, descending=descending))


@needs_torch
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_tie_order_any_size(descending):
    x = (np.arange(100) % 4).astype(np.float32)
    same(lambda lib: lib.sort(lib.tensor(x), stable=True, descending=descending))
    same(lambda lib: lib.argsort(lib.tensor(x), stable=True, descending=descending))


@needs_torch
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_topk_tie_order_small(largest, k):
    for x in ([1.0, 1.0, 1.0], [2.0, 1.0, 2.0], [0.0, 0.0, 5.0]):
        same(lambda lib: lib.topk(lib.tensor(x), k, largest=largest))


# ---------------------------------------------------------------------------------------------------------------
# orthogonal polynomials with a non-finite degree: PyTorch's int64 cast makes it negative (0); a NaN degree must
# not stop the recurrence for the other elements, nor an infinite one run it forever

@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "hermite_polynomial_h",
                                  "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"])
def test_orthogonal_polynomials_non_finite_degree(name):
    x = np.array([-2.0, 0.3, 3.0, INF, -INF, NAN, 0.5, 0.5])
    n = np.array([3.0, 4.0, 3.0, INF, -INF, NAN, 1e19, -1e19])
    check(lambda lib, a, b: getattr(lib.special, name)(a, b), [x, n], grad=False)


# ---------------------------------------------------------------------------------------------------------------
# logaddexp/logaddexp2 gradients: PyTorch's grad / (1 + exp(other - self)) at infinities

@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_grads_at_infinities(name, dtype):
    a = np.array([0.0, 2.0, INF, INF, -INF, -INF, NAN, -3.0], dtype)
    b = np.array([INF, -3.0, INF, 2.0, -INF, 1.0, 0.0, -INF], dtype)
    check_fd(getattr(torchish, name), np.array([0.5, -2.0, 3.0]), np.array([1.0, -2.5, -1.0]))
    check(lambda lib, x, y: getattr(lib, name)(x, y), [a, b])


# ---------------------------------------------------------------------------------------------------------------
# clamp keeps -0.0 at a zero bound and gives NaN for a NaN bound, as PyTorch's min(max(x, lo), hi)

def test_clamp_signed_zero_and_nan_bounds():
    def fn(lib):
        x = lib.tensor(np.array([-0.0, 0.0, -1.0, NAN, 2.0], np.float32))
        return [lib.clamp(x, min=0), lib.clamp(x, max=0), lib.clamp(x, min=-0.0), lib.clamp(x, min=0, max=1),
                lib.clamp(x, min=lib.zeros(5)), lib.clamp(x, 3, 1), lib.clamp(x, min=float("nan")),
                lib.clamp(x, max=lib.full((5,), float("nan"))), lib.clamp(x.double(), max=-0.0)]
    ref, got = run_both(fn)
    assert_same(ref, got)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(np.signbit(to_numpy(r)), np.signbit(to_numpy(g)))
