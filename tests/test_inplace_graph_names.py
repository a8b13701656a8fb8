"""What the graph says after in-place ops, against PyTorch: the error for a saved tensor modified in place names the
grad_fn the tensor has NOW (``which is output 0 of Add``; nothing for a leaf), in-place draws (``uniform_``,
``bernoulli_``...) keep a tensor that requires grad in the graph with a zero gradient, in-place view ops record
their own overloads (``t_`` -> TBackward1), and PyTorch's C++ nodes are named as ``name()`` names them."""
import pytest

import torchish
from oracle import assert_same, needs_torch, run_both, same

pytestmark = needs_torch

_WRITES = {
    "add_s": lambda T, b: b.add_(1), "add_t": lambda T, b: b.add_(T.ones(3)), "mul_t": lambda T, b: b.mul_(T.ones(3)),
    "sub_s": lambda T, b: b.sub_(1), "div_mode": lambda T, b: b.div_(2, rounding_mode="floor"),
    "clamp_": lambda T, b: b.clamp_(0, 1), "clip_": lambda T, b: b.clip_(max=1.0), "clamp_min_": lambda T, b: b.clamp_min_(0),
    "setitem": lambda T, b: b.__setitem__(0, 5.0), "view_mul": lambda T, b: b[1:].mul_(2),
    "copy_": lambda T, b: b.copy_(T.zeros(3)), "fill_": lambda T, b: b.fill_(1), "fill_t": lambda T, b: b.fill_(T.tensor(1.0)),
    "zero_": lambda T, b: b.zero_(), "relu_": lambda T, b: b.relu_(), "pow_": lambda T, b: b.pow_(2),
    "exp_": lambda T, b: b.exp_(), "sigmoid_": lambda T, b: b.sigmoid_(), "neg_": lambda T, b: b.neg_(),
    "lerp_": lambda T, b: b.lerp_(T.ones(3), 0.5), "addcmul_": lambda T, b: b.addcmul_(T.ones(3), T.ones(3)),
    "masked_fill_": lambda T, b: b.masked_fill_(T.tensor([True, False, True]), 0.0),
    "index_add_": lambda T, b: b.index_add_(0, T.tensor([0]), T.ones(1)),
    "scatter_": lambda T, b: b.scatter_(0, T.tensor([1]), 2.0),
    "t_": lambda T, b: b.t_(), "unsqueeze_": lambda T, b: b.unsqueeze_(0), "squeeze_": lambda T, b: b.squeeze_(),
    "transpose_": lambda T, b: b.transpose_(0, -1), "swapdims_": lambda T, b: b.swapdims_(0, 0),
    "as_strided_": lambda T, b: b.as_strided_((3,), (1,)),
    "uniform_": lambda T, b: b.uniform_(), "normal_": lambda T, b: b.normal_(),
}


def _stale_error(lib, write):
    """``b`` (a non-leaf) is saved by ``sin``, then written: the backward's error up to PyTorch's hint."""
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    c = b.sin()
    _WRITES[write](lib, b)
    with pytest.raises(RuntimeError) as e:
        c.sum().backward()
    return str(e.value).split(" Hint:")[0], b.grad_fn.name()


@pytest.mark.parametrize("write", sorted(_WRITES))
def test_saved_input_names_its_grad_fn_now(write):
    ref, got = run_both(_stale_error, write)
    assert got == ref


def _stale_cases(lib):
    out = []
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([1.0, 2.0, 3.0])  # a leaf without grad: no "which is" clause
    c = a * w
    w.add_(1)
    with pytest.raises(RuntimeError) as e:
        c.sum().backward()
    out.append(str(e.value).split(" Hint:")[0])
    m = lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    v, _ = m.max(0)  # an output of a multi-output op, written after a product saved it
    d = v * v
    v.add_(1)
    with pytest.raises(RuntimeError) as e:
        d.sum().backward()
    out.append(str(e.value).split(" Hint:")[0])
    b = (a * 1).sigmoid()  # a saved output: the node that saved it
    b.mul_(2)
    with pytest.raises(RuntimeError) as e:
        b.sum().backward()
    out.append(str(e.value).split(" Hint:")[0])
    return out


def test_saved_leaf_output_and_multi_output_messages():
    ref, got = run_both(_stale_cases)
    assert got == ref


def _custom_function_origin(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = Twice.apply(a)
    c = b.sin()
    with lib.no_grad():
        b.mul_(2)
    with pytest.raises(RuntimeError) as e:
        c.sum().backward()
    return str(e.value).split(" Hint:")[0]


def test_custom_function_output_is_named_without_backward():
    ref, got = run_both(_custom_function_origin)
    assert got == ref


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_saved_input_names_its_grad_fn(reentrant):
    def f(lib):
        import importlib
        cp = importlib.import_module(lib.__name__ + ".utils.checkpoint")
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 1
        y = cp.checkpoint(lambda x: x.sin() * 2, b, use_reentrant=reentrant)
        b.add_(1)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        return str(e.value).split(" Hint:")[0]
    ref, got = run_both(f)
    assert got == ref


_DRAWS = [("uniform_", ()), ("normal_", ()), ("bernoulli_", (0.5,)), ("exponential_", ()), ("cauchy_", ()),
          ("log_normal_", ()), ("geometric_", (0.5,)), ("random_", ()), ("random_", (5,)), ("random_", (1, 5))]


@pytest.mark.parametrize("name,args", _DRAWS)
def test_inplace_draw_keeps_tensor_in_graph(name, args):
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 2
        getattr(b, name)(*args)
        info = (b.requires_grad, b.is_leaf, b.grad_fn.name(),
                [type(n).__name__ if n is not None else None for n, _ in b.grad_fn.next_functions])
        (b * 3).sum().backward()
        return info, a.grad
    ref, got = run_both(f)
    assert got[0] == ref[0]
    assert_same(ref[1], got[1])


def test_bernoulli_tensor_probability_is_a_node_input():
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        p = lib.full((3,), 0.5, requires_grad=True)
        b = a * 2
        b.bernoulli_(p)
        names = [type(n).__name__ if n is not None else None for n, _ in b.grad_fn.next_functions]
        b.sum().backward()
        return b.grad_fn.name(), names, a.grad, p.grad
    ref, got = run_both(f)
    assert got[:2] == ref[:2]
    assert_same(ref[2:], got[2:])


def test_draws_without_grad_record_nothing():
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 2
        with lib.no_grad():
            b.uniform_()
        c = lib.zeros(3).normal_()
        return b.grad_fn.name(), c.requires_grad, c.grad_fn
    ref, got = run_both(f)
    assert got == ref


_VIEW_WRITES = {"t_": lambda b: b.t_(), "unsqueeze_": lambda b: b.unsqueeze_(0), "squeeze_()": lambda b: b.squeeze_(),
                "squeeze_(0)": lambda b: b.squeeze_(0), "squeeze_((0,))": lambda b: b.squeeze_((0,)),
                "transpose_": lambda b: b.transpose_(0, 1), "swapaxes_": lambda b: b.swapaxes_(0, 1),
                "as_strided_": lambda b: b.as_strided_((1, 3), (3, 1)), "t": lambda b: b.t(),
                "squeeze(0)": lambda b: b.squeeze(0), "squeeze((0,))": lambda b: b.squeeze((0,))}


@pytest.mark.parametrize("write", sorted(_VIEW_WRITES))
def test_inplace_view_overload_names(write):
    def f(lib):
        a = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        r = _VIEW_WRITES[write](a * 1)
        r.sum().backward()
        return r.grad_fn.name(), tuple(r.shape), a.grad
    ref, got = run_both(f)
    assert got[:2] == ref[:2]
    assert_same(ref[2], got[2])


def test_cpp_node_names_and_reprs():
    def f(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 1
        b[0] = 5.0
        c = (a * 1).copy_(lib.zeros(3))
        acc = b.grad_fn.next_functions[0][0].next_functions[0][0]
        return (b.grad_fn.name(), type(b.grad_fn).__name__, c.grad_fn.name(), type(c.grad_fn).__name__, acc.name(),
                repr(acc).split(" at ")[0], repr(b.grad_fn).split(" at ")[0])
    ref, got = run_both(f)
    assert got == ref


def test_torchish_only_gone_input_falls_back():
    """A saved input whose Tensor is gone (only a view of it was written) still gets an error naming the node."""
    a = torchish.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    c = b.sin()
    v = b[:]
    del b
    v.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


@needs_torch
@pytest.mark.parametrize("name,args", [("polygamma_", (1,)), ("polygamma_", (2,)), ("digamma_", ()), ("lgamma_", ()),
                                       ("mvlgamma_", (2,)), ("erfinv_", ()), ("i0_", ()), ("sinc_", ()),
                                       ("logit_", (0.1,)), ("sin_", ())])
def test_inplace_unary_of_a_non_leaf_differentiates_the_overwritten_value(name, args):
    """An in-place op whose formula reads its input keeps the value it overwrote (PyTorch's original_self):
    ``polygamma_`` raised the in-place-modification error in backward."""
    def run(T):
        x = T.tensor([0.3, 0.55, 0.8], requires_grad=True)
        y = getattr(x * 1.5, name)(*args)
        y.backward(T.tensor([1.0, -0.5, 2.0]))
        return y, x.grad, y.grad_fn.name()
    same(run)


@needs_torch
@pytest.mark.parametrize("name", ["asinh_", "acosh_", "atanh_", "arcsinh_"])
@pytest.mark.parametrize("view", [False, True])
def test_inplace_inverse_hyperbolics_have_no_derivative(name, view):
    """PyTorch has no derivative for asinh_/acosh_/atanh_ on a tensor that requires grad: the write records
    AsinhBackward1 (...) and backward raises NotImplementedError; torchish differentiated them. Without grad the
    values are the out-of-place op's."""
    def run(T):
        x = T.tensor([1.3, 0.55, 0.8], requires_grad=True) * 1.0
        y = getattr(x[1:] if view else x, name)()
        plain = getattr(T.tensor([1.3, 0.55, 0.8]), name)()
        try:
            x.sum().backward()
            err = None
        except NotImplementedError as e:
            err = str(e)
        return x, plain, y.grad_fn.name(), x.grad_fn.name(), err
    same(run)


@needs_torch
@pytest.mark.parametrize("target", ["plain", "view", "detach_view"])
def test_bernoulli_inplace_with_a_probability_that_requires_grad(target):
    """``t.bernoulli_(p)`` with p requiring grad makes t require grad (BernoulliBackward1; p's gradient zero) even
    when t did not, as PyTorch's; torchish left t outside the graph. Found by the in-place-on-views scan."""
    def run(T):
        x = T.ones(2, 3, requires_grad=True) * 1
        p = T.tensor([0.0, 1.0, 1.0], requires_grad=True)
        t = {"plain": lambda: T.zeros(3), "view": lambda: T.zeros(2, 3)[1], "detach_view": lambda: x.detach()[1]}[target]()
        t.bernoulli_(p)
        (t * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        return t, t.requires_grad, t.grad_fn.name(), p.grad
    same(run)
