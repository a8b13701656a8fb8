"""The prototype ``torch.masked.MaskedTensor`` against PyTorch 2.13: creation and its checks and warnings,
``repr``, elementwise ops with equal masks, reductions, ``softmax``, ``where``, indexing and shape ops, dtype
conversions, and autograd (a MaskedTensor leaf's ``.grad`` is a MaskedTensor; the NaN-gradient examples of
PyTorch's MaskedTensor tutorials)."""
import warnings

import numpy as np
import pytest

from oracle import assert_same, check_raises, needs_torch, torch, torchish

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore::UserWarning")]

DATA = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.0], [0.25, 8.0, 9.0, -1.5]], np.float32)
MASK = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])


def mt(T, data=DATA, mask=MASK, requires_grad=False):
    return T.masked.masked_tensor(T.tensor(data), T.tensor(mask), requires_grad=requires_grad)


def same(ref, got, path="out"):
    """MaskedTensors: class, mask, valid values (masked-out ones as 0), dtype and repr; others as the oracle."""
    if isinstance(ref, torch.masked.MaskedTensor):
        assert isinstance(got, torchish.masked.MaskedTensor), f"{path}: {type(got).__name__} is no MaskedTensor"
        assert_same(ref.get_mask(), got.get_mask(), path + ".mask")
        with torch.no_grad():
            valid = ref.get_data().masked_fill(~ref.get_mask(), 0)
        with torchish.no_grad():
            got_valid = got.get_data().masked_fill(~got.get_mask(), 0)
        assert_same(valid, got_valid, path + ".data")
        if np.array_equal(valid.numpy(), got_valid.numpy(), equal_nan=True):  # (the text, where the values agree)
            assert repr(got) == repr(ref), f"{path}: repr\n{got!r}\n!= torch's\n{ref!r}"
    elif isinstance(ref, (tuple, list)):
        assert len(ref) == len(got), path
        for i, (r, g) in enumerate(zip(ref, got)):
            same(r, g, f"{path}[{i}]")
    else:
        assert_same(ref, got, path)


def both(fn):
    same(fn(torch), fn(torchish))


def both_or_raise(fn):
    """The same result, or the same builtin error type."""
    try:
        fn(torch)
    except Exception:
        check_raises(fn)
        return
    both(fn)


# -- creation ------------------------------------------------------------------------------------------------------

def test_prototype_warning():
    for T in (torch, torchish):
        with pytest.warns(UserWarning, match="The PyTorch API of MaskedTensors is in prototype stage"):
            mt(T)


def test_requires_grad_data_warning():
    for T in (torch, torchish):
        with pytest.warns(UserWarning, match="It is not recommended to create a MaskedTensor with a tensor that "
                                             "requires_grad"):
            T.masked.masked_tensor(T.tensor(DATA, requires_grad=True), T.tensor(MASK))


@pytest.mark.parametrize("call", [
    lambda T: T.masked.masked_tensor(DATA, T.tensor(MASK)),                       # data not a Tensor
    lambda T: T.masked.masked_tensor(T.tensor(DATA), MASK),                       # mask not a Tensor
    lambda T: T.masked.masked_tensor(T.tensor(DATA), T.tensor(MASK).int()),       # mask not bool
    lambda T: T.masked.masked_tensor(T.tensor(DATA), T.tensor(MASK)[0]),          # other dim
    lambda T: T.masked.masked_tensor(T.tensor(DATA), T.tensor(MASK)[:, :2]),      # other size
    lambda T: T.masked.masked_tensor(T.tensor(DATA).to(T.complex64), T.tensor(MASK)),  # unsupported dtype
    lambda T: T.masked.masked_tensor(T.tensor(DATA).long(), T.tensor(MASK), requires_grad=True),
    lambda T: mt(T, mask=MASK, data=DATA) + mt(T, mask=~MASK),                     # masks differ
    lambda T: T.add(mt(T), mt(T), alpha=2),                                       # kwargs in a binary op
    lambda T: mt(T).pow(T.tensor(DATA)),                                          # tensor argument to unary op
    lambda T: mt(T).cumsum(0),                                                    # no MaskedTensor rule
    lambda T: mt(T).T,
    lambda T: mt(T)[1, 0].item(),                                                 # a masked-out element
])
def test_errors(call):
    check_raises(call)


def test_error_messages():
    with pytest.raises(ValueError, match="Input masks must match. If you need support for this, please open an "
                                         "issue on Github."):
        mt(torchish) + mt(torchish, mask=~MASK)
    with pytest.raises(TypeError, match="mask must have dtype bool."):
        torchish.masked.masked_tensor(torchish.tensor(DATA), torchish.tensor(MASK).int())
    with pytest.warns(UserWarning, match="cumsum is not implemented in __torch_dispatch__ for MaskedTensor"):
        with pytest.raises(TypeError, match="Multiple dispatch failed"):
            mt(torchish).cumsum(0)


@pytest.mark.parametrize("data,mask", [
    (DATA, MASK), (np.array(2.5, np.float32), np.array(True)), (np.array(2.5, np.float32), np.array(False)),
    (np.array([1, 20, 3]), np.array([True, False, True])), (np.array([True, False]), np.array([False, True])),
    (np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.arange(24).reshape(2, 3, 4) % 2 == 0),
])
def test_repr_and_accessors(data, mask):
    both(lambda T: mt(T, data, mask))
    both(lambda T: (mt(T, data, mask).get_data(), mt(T, data, mask).get_mask(), mt(T, data, mask).to_tensor(7)))
    for T in (torch, torchish):
        m = mt(T, data, mask)
        assert T.masked.is_masked_tensor(m) and not T.masked.is_masked_tensor(m.get_data())
        assert (tuple(m.shape), m.dim(), m.numel(), str(m.dtype)) == (data.shape, data.ndim, data.size,
                                                                      str(m.get_data().dtype))


# -- operations ----------------------------------------------------------------------------------------------------

UNARY = ["exp", "neg", "sqrt", "log", "sigmoid", "isnan"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    both(lambda T: getattr(mt(T), name)())
    both(lambda T: getattr(T, name)(mt(T)))


@pytest.mark.parametrize("call", [
    lambda T, a, b: a + b, lambda T, a, b: a - b, lambda T, a, b: a * b, lambda T, a, b: a / b,
    lambda T, a, b: 3 * a, lambda T, a, b: a ** 2, lambda T, a, b: 1 / a, lambda T, a, b: a > b,
    lambda T, a, b: a < b, lambda T, a, b: T.maximum(a, b), lambda T, a, b: a.clamp(-1, 1),
    lambda T, a, b: a + T.tensor(DATA[0]),                                # a plain tensor operand broadcasts
])
def test_binary_with_equal_masks(call):
    both(lambda T: call(T, mt(T), mt(T, DATA[::-1].copy())))


def test_inplace():
    def fn(T):
        a = mt(T)
        a.add_(mt(T))
        a.mul_(2)
        a.exp_()
        return a
    both(fn)


REDUCTIONS = ["sum", "mean", "amax", "argmin", "prod", "var", "norm"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(name):
    both_or_raise(lambda T: getattr(T, name)(mt(T)))
    both_or_raise(lambda T: getattr(mt(T), name)(0, keepdim=True))


def test_all():
    data = DATA > 0
    both(lambda T: mt(T, data).all())
    both(lambda T: mt(T, data).all(1))
    both(lambda T: T.all(mt(T, data), 0, keepdim=True))


def test_softmax():
    both(lambda T: T.softmax(mt(T), -1))
    both(lambda T: mt(T).softmax(0))
    both(lambda T: T.nn.functional.softmax(mt(T), dim=1))


def test_where():
    def fn(T):
        x = T.tensor(DATA)
        m = x > 0
        return T.where(m, mt(T, DATA, MASK), T.masked.masked_tensor(T.ones_like(x), ~m))
    both(fn)
    both(lambda T: T.where(T.tensor(MASK), mt(T), T.zeros(3, 4)))


@pytest.mark.parametrize("call", [
    lambda T, a: a[0], lambda T, a: a[1:, ::2], lambda T, a: a.t(), lambda T, a: a.mT,
    lambda T, a: a.reshape(4, 3), lambda T, a: a.unsqueeze(1), lambda T, a: a.narrow(1, 1, 2),
    lambda T, a: a[None].expand(2, 3, 4), lambda T, a: a.split(2), lambda T, a: T.stack([a, a]),
    lambda T, a: T.cat([a, a], 1),
])
def test_indexing_and_shape(call):
    both(lambda T: call(T, mt(T)))


def test_conversions():
    both(lambda T: mt(T).to(T.float64))
    both(lambda T: mt(T).double())
    both(lambda T: mt(T).long())
    both(lambda T: mt(T).clone())
    both(lambda T: mt(T).detach())
    both(lambda T: T.ones_like(mt(T)))
    both(lambda T: mt(T).contiguous())
    both(lambda T: mt(T)[0, 0].item())


# -- autograd ------------------------------------------------------------------------------------------------------

def _grad_of(fn):
    def run(T):
        a = mt(T, requires_grad=True)
        fn(T, a).backward()
        return a.grad
    return run


@pytest.mark.parametrize("fn", [
    lambda T, a: (a * a).sum(), lambda T, a: a.exp().mean(), lambda T, a: (a.sin() * 3 + a).amax(),
    lambda T, a: a.softmax(1).prod(), lambda T, a: (a.reshape(4, 3) * 2).sum(1).sum(), lambda T, a: a.var(),
])
def test_leaf_grad_is_masked_tensor(fn):
    both(_grad_of(fn))


@pytest.mark.parametrize("fn", [
    lambda T, a: a[0].sum(), lambda T, a: (a[:, :2] * 2).sum(), lambda T, a: a[1:, ::2].exp().mean(),
    lambda T, a: a.select(1, 3).sum(), lambda T, a: a.t()[1].sum(),
    lambda T, a: T.where(T.tensor(DATA) > 1, a, T.zeros(3, 4)).sum(), lambda T, a: a.get_data()[0].sum(),
])
def test_gradient_masks_follow_indexing_and_where(fn):
    # PyTorch's gradient of a MaskedTensor is masked out where the gradient did not come from (select_backward,
    # the unchosen side of where): a.grad's mask is not a's own
    both(_grad_of(fn))


def test_where_division_by_zero_gradient():
    # PyTorch issue 52248 (the MaskedTensor overview): where(False, a / 0, c) gives a fully masked-out gradient
    def run(T):
        a = T.masked.masked_tensor(T.tensor(0.5), T.tensor(True), requires_grad=True)
        b, c = T.tensor(False), T.ones(())
        return T.where(b, a / 0, c), T.autograd.grad(T.where(b, a / 0, c), a)
    both(run)


def test_grad_accumulates():
    def run(T):
        a = mt(T, requires_grad=True)
        a.sum().backward()
        (a * 3).sum().backward()
        return a.grad
    both(run)


def test_where_exp_overflow_gradient():
    # PyTorch issue 10729 (the MaskedTensor overview): torch.where(mask, exp(x), 1) has a nan gradient for a plain
    # tensor; with MaskedTensors the gradient is exp(x) where valid
    def run(T):
        x = T.tensor([-10., -5, 0, 5, 10, 50, 60, 70, 80, 90, 100])
        mask = x < 0
        mx = T.masked.masked_tensor(x, mask, requires_grad=True)
        my = T.masked.masked_tensor(T.ones_like(x), ~mask, requires_grad=True)
        y = T.where(mask, T.exp(mx), my)
        y.sum().backward()
        return y, mx.grad, my.grad
    both(run)


def test_nansum_gradient():
    # PyTorch issue 67180: the gradient of a masked sum is not nan where the data holds nan
    def run(T):
        a = T.tensor([1., 2., float("nan")])
        b = T.tensor(1.0, requires_grad=True)
        c1 = T.sum(T.masked.masked_tensor(a, ~T.isnan(a)) * b)
        (g,) = T.autograd.grad(c1, b, retain_graph=True)
        c1.backward()
        return c1, g, b.grad
    both(run)


def test_autograd_grad_of_masked_input():
    def run(T):
        a = mt(T, requires_grad=True)
        return T.autograd.grad((a.exp() * 2).sum(), a)
    both(run)


def test_as_masked_tensor_keeps_history():
    def run(T):
        x = T.tensor(DATA, requires_grad=True)
        m = T.masked.as_masked_tensor(x * 2, T.tensor(MASK))
        m.sum().backward()
        return m, x.grad
    both(run)


def test_as_masked_tensor_of_a_leaf():
    def run(T):
        x = T.tensor(DATA, requires_grad=True)
        T.masked.as_masked_tensor(x, T.tensor(MASK)).exp().sum().backward()
        return x.grad
    both(run)


def test_division_by_zero_gradient():
    # PyTorch issue 4132 (the MaskedTensor overview): the gradient of x / 0 where masked out is hidden, not nan
    def run(T):
        x = T.tensor([1., 1.], requires_grad=True)
        div = T.tensor([0., 1.])
        loss = T.masked.as_masked_tensor(x / div, div != 0)
        loss.sum().backward()
        return x.grad
    both(run)


def test_masked_ops_take_a_masked_tensor():
    both(lambda T: T.masked.sum(mt(T), 1))
    both(lambda T: T.masked.amax(mt(T), 0))
    both(lambda T: T.masked.softmax(mt(T), 1))


def test_public_names():
    for name in ("MaskedTensor", "is_masked_tensor"):
        assert hasattr(torchish.masked.maskedtensor, name) and hasattr(torch.masked.maskedtensor, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(mt(torchish), torchish.Tensor)


def test_metadata_and_graph_names():
    for T in (torch, torchish):
        a = mt(T, requires_grad=True)
        assert (a.stride(), len(a), a.size(0), a.requires_grad, a.is_leaf, a.is_sparse) == ((4, 1), 3, 3, True,
                                                                                            True, False)
        assert [type(t.grad_fn).__name__ for t in (a.exp(), a.sum(), a.get_data())] == \
            ["ExpBackward0", "ConstructorBackward", "GetDataBackward"]
