"""Activations: values and input gradients against PyTorch (functional and module forms), including the
boundaries where the gradient is a convention (x == 0 for relu-likes, the limits of hardtanh/relu6/hardswish/
hardsigmoid, |x| == lambd for the shrinks), in-place variants, extra_repr, and PyTorch's errors."""
import warnings

import numpy as np
import pytest

from oracle import arr, check, check_raises, check_fd, run_both, to_numpy, torch, torchish

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# every boundary value of the table's activations, plus ordinary values
EDGES = np.array([-7.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 30.0, -0.25, 0.3], np.float32)


def F(T):
    return T.nn.functional


FUNCTIONAL = {
    "relu": lambda T, x: F(T).relu(x),
    "relu6": lambda T, x: F(T).relu6(x),
    "leaky_relu": lambda T, x: F(T).leaky_relu(x, 0.2),
    "elu": lambda T, x: F(T).elu(x, alpha=0.7),
    "selu": lambda T, x: F(T).selu(x),
    "celu": lambda T, x: F(T).celu(x, alpha=2.0),
    "gelu": lambda T, x: F(T).gelu(x),
    "gelu_tanh": lambda T, x: F(T).gelu(x, approximate="tanh"),
    "silu": lambda T, x: F(T).silu(x),
    "mish": lambda T, x: F(T).mish(x),
    "sigmoid": lambda T, x: F(T).sigmoid(x),
    "tanh": lambda T, x: F(T).tanh(x),
    "hardtanh": lambda T, x: F(T).hardtanh(x, -0.5, 3.0),
    "hardswish": lambda T, x: F(T).hardswish(x),
    "hardsigmoid": lambda T, x: F(T).hardsigmoid(x),
    "softplus": lambda T, x: F(T).softplus(x),
    "softplus_beta": lambda T, x: F(T).softplus(x, beta=2.0, threshold=6.0),
    "softsign": lambda T, x: F(T).softsign(x),
    "softshrink": lambda T, x: F(T).softshrink(x, 0.5),
    "hardshrink": lambda T, x: F(T).hardshrink(x, 1.0),
    "tanhshrink": lambda T, x: F(T).tanhshrink(x),
    "threshold": lambda T, x: F(T).threshold(x, 0.5, -2.0),
    "logsigmoid": lambda T, x: F(T).logsigmoid(x),
    "rrelu_eval": lambda T, x: F(T).rrelu(x, 0.1, 0.3),
    "glu": lambda T, x: F(T).glu(x[:12].reshape(3, 4), dim=1),
    "glu_dim0": lambda T, x: F(T).glu(x[:12].reshape(4, 3), dim=0),
    "softmax": lambda T, x: F(T).softmax(x[:12].reshape(3, 4), dim=1),
    "softmax_dtype": lambda T, x: F(T).softmax(x[:12].reshape(3, 4), dim=0, dtype=T.float64),
    "log_softmax": lambda T, x: F(T).log_softmax(x[:12].reshape(3, 4), dim=-1),
    "softmin": lambda T, x: F(T).softmin(x[:12].reshape(3, 4), dim=1),
    "prelu_scalar": lambda T, x: F(T).prelu(x, T.tensor([0.3])),
}

MODULES = {
    "ReLU": lambda T, x: T.nn.ReLU()(x),
    "ReLU6": lambda T, x: T.nn.ReLU6()(x),
    "LeakyReLU": lambda T, x: T.nn.LeakyReLU(0.2)(x),
    "ELU": lambda T, x: T.nn.ELU(0.7)(x),
    "SELU": lambda T, x: T.nn.SELU()(x),
    "CELU": lambda T, x: T.nn.CELU(2.0)(x),
    "GELU": lambda T, x: T.nn.GELU("tanh")(x),
    "SiLU": lambda T, x: T.nn.SiLU()(x),
    "Mish": lambda T, x: T.nn.Mish()(x),
    "Sigmoid": lambda T, x: T.nn.Sigmoid()(x),
    "Tanh": lambda T, x: T.nn.Tanh()(x),
    "Hardtanh": lambda T, x: T.nn.Hardtanh(-0.5, 3.0)(x),
    "Hardswish": lambda T, x: T.nn.Hardswish()(x),
    "Hardsigmoid": lambda T, x: T.nn.Hardsigmoid()(x),
    "Softplus": lambda T, x: T.nn.Softplus(2.0, 6.0)(x),
    "Softsign": lambda T, x: T.nn.Softsign()(x),
    "Softshrink": lambda T, x: T.nn.Softshrink(0.5)(x),
    "Hardshrink": lambda T, x: T.nn.Hardshrink(1.0)(x),
    "Tanhshrink": lambda T, x: T.nn.Tanhshrink()(x),
    "Threshold": lambda T, x: T.nn.Threshold(0.5, -2.0)(x),
    "LogSigmoid": lambda T, x: T.nn.LogSigmoid()(x),
    "RReLU_eval": lambda T, x: T.nn.RReLU(0.1, 0.3).eval()(x),
    "GLU": lambda T, x: T.nn.GLU(1)(x[:12].reshape(3, 4)),
    "Softmax": lambda T, x: T.nn.Softmax(dim=1)(x[:12].reshape(3, 4)),
    "LogSoftmax": lambda T, x: T.nn.LogSoftmax(dim=1)(x[:12].reshape(3, 4)),
    "Softmin": lambda T, x: T.nn.Softmin(dim=1)(x[:12].reshape(3, 4)),
    "Softmax2d": lambda T, x: T.nn.Softmax2d()(x[:12].reshape(1, 3, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_values_and_grads_at_boundaries(name):
    ref, got = check(FUNCTIONAL[name], [EDGES])
    assert type(got.grad_fn).__name__ == type(ref.grad_fn).__name__


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_values_and_grads(name):
    check(MODULES[name], [EDGES], grad=name in MODULE_GRADS)


# the modules call the functional forms tested above; these also compare gradients through the module
MODULE_GRADS = {"ReLU6", "ELU", "CELU", "Hardtanh", "Softplus", "Threshold", "RReLU_eval", "GLU", "Softmin",
                "Softmax2d"}


@pytest.mark.parametrize("name", ["elu", "gelu", "softplus"])
def test_float64(name):
    check(FUNCTIONAL[name], [arr(2, 5, lo=-4, hi=4, dtype=np.float64)])


@pytest.mark.parametrize("name", ["elu", "softplus", "logsigmoid", "mish"])
def test_large_magnitudes_no_nan(name):
    check(FUNCTIONAL[name], [np.array([-100.0, -30.0, 30.0, 90.0, 100.0], np.float32)])


# ------------------------------------------------------------------------------------------------------------
# in-place variants: the result, the mutated input and the gradient through the in-place op

INPLACE = {
    "relu_": lambda T, y: F(T).relu_(y),
    "relu6": lambda T, y: F(T).relu6(y, inplace=True),
    "leaky_relu_": lambda T, y: F(T).leaky_relu_(y, 0.2),
    "elu": lambda T, y: F(T).elu(y, 0.7, inplace=True),
    "selu_": lambda T, y: F(T).selu_(y),
    "celu_": lambda T, y: F(T).celu_(y, 2.0),
    "hardtanh_": lambda T, y: F(T).hardtanh_(y, -0.5, 3.0),
    "threshold_": lambda T, y: F(T).threshold_(y, 0.5, -2.0),
    "silu": lambda T, y: F(T).silu(y, inplace=True),
    "mish": lambda T, y: F(T).mish(y, inplace=True),
    "hardswish": lambda T, y: F(T).hardswish(y, inplace=True),
    "hardsigmoid": lambda T, y: F(T).hardsigmoid(y, inplace=True),
    "rrelu_eval": lambda T, y: F(T).rrelu(y, 0.1, 0.3, inplace=True),
    "ELU_module": lambda T, y: T.nn.ELU(0.7, inplace=True)(y),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace(name):
    def fn(T, x):
        y = x * 1.0
        out = INPLACE[name](T, y)
        assert out is y
        return out, y
    check(fn, [EDGES])


INPLACE_NO_GRAD = {
    "relu": lambda T, y: F(T).relu(y, inplace=True),
    "leaky_relu": lambda T, y: F(T).leaky_relu(y, 0.2, inplace=True),
    "elu_": lambda T, y: F(T).elu_(y, 0.7),
    "selu": lambda T, y: F(T).selu(y, inplace=True),
    "celu": lambda T, y: F(T).celu(y, 2.0, inplace=True),
    "hardtanh": lambda T, y: F(T).hardtanh(y, -0.5, 3.0, inplace=True),
    "threshold": lambda T, y: F(T).threshold(y, 0.5, -2.0, inplace=True),
    "ReLU_module": lambda T, y: T.nn.ReLU(inplace=True)(y),
}


def test_inplace_variants_values():
    for name, fn in INPLACE_NO_GRAD.items():
        ref, got = run_both(lambda T: (lambda y: (fn(T, y) is y, y))(T.tensor(EDGES)))
        assert got[0] and ref[0], name
        np.testing.assert_allclose(to_numpy(got[1]), to_numpy(ref[1]), rtol=1e-6, err_msg=name)


def test_inplace_on_leaf_requiring_grad_raises():
    check_raises(lambda T: F(T).relu(T.ones(3, requires_grad=True), inplace=True))
    check_raises(lambda T: F(T).elu_(T.ones(3, requires_grad=True)))


def test_inplace_without_grad_mutates():
    t_ref, got = run_both(lambda T: (lambda y: (F(T).leaky_relu_(y, 0.5), y)[1])(T.tensor([-2.0, 1.0])))
    np.testing.assert_allclose(to_numpy(got), to_numpy(t_ref))


# ------------------------------------------------------------------------------------------------------------
# PReLU: per-channel weights (value and weight gradient), parameters copied from torch


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 3, 2, 2), (5,)])
def test_prelu_per_channel(shape):
    c = shape[1] if len(shape) > 1 else 1
    check(lambda T, x, w: F(T).prelu(x, w), [arr(*shape, lo=-2, hi=2), arr(c, seed=3, lo=0, hi=0.5)])


def test_prelu_module_weight_grad():
    x = arr(2, 3, 4, lo=-2, hi=2)
    x[0, 0, 0] = 0.0
    cot = arr(2, 3, 4, seed=8)

    def fn(T):
        m = T.nn.PReLU(3, init=0.1)
        with T.no_grad():
            m.weight.copy_(T.tensor([0.1, -0.2, 0.3]))  # PyTorch's parameter values, copied in
        xt = T.tensor(x, requires_grad=True)
        out = m(xt)
        return out, T.autograd.grad(out, [xt, m.weight], T.tensor(cot))
    ref, got = run_both(fn)
    for r, g in zip([ref[0], *ref[1]], [got[0], *got[1]]):
        np.testing.assert_allclose(to_numpy(g), to_numpy(r), rtol=2e-4, atol=2e-5)


def test_prelu_module_defaults_and_repr():
    ref, got = run_both(lambda T: T.nn.PReLU())
    assert repr(got) == repr(ref)
    assert got.weight.shape == ref.weight.shape
    np.testing.assert_allclose(to_numpy(got.weight), to_numpy(ref.weight))
    ref, got = run_both(lambda T: T.nn.PReLU(4, 0.5))
    np.testing.assert_allclose(to_numpy(got.weight), to_numpy(ref.weight))
    assert [n for n, _ in got.named_parameters()] == ["weight"]


# ------------------------------------------------------------------------------------------------------------
# extra_repr

REPRS = [
    lambda T: T.nn.ReLU(), lambda T: T.nn.ReLU(inplace=True), lambda T: T.nn.ReLU6(True), lambda T: T.nn.Hardtanh(),
    lambda T: T.nn.Hardtanh(-2.0, 3.0, True), lambda T: T.nn.Threshold(0.1, 20), lambda T: T.nn.RReLU(),
    lambda T: T.nn.RReLU(0.1, 0.2, True), lambda T: T.nn.ELU(inplace=True), lambda T: T.nn.CELU(2.0),
    lambda T: T.nn.SELU(True), lambda T: T.nn.GELU(), lambda T: T.nn.GELU("tanh"), lambda T: T.nn.SiLU(True),
    lambda T: T.nn.Mish(True), lambda T: T.nn.Hardswish(True), lambda T: T.nn.Hardsigmoid(True),
    lambda T: T.nn.LeakyReLU(), lambda T: T.nn.LeakyReLU(0.2, True), lambda T: T.nn.Softplus(2, 10),
    lambda T: T.nn.Softshrink(), lambda T: T.nn.Hardshrink(0.3), lambda T: T.nn.GLU(), lambda T: T.nn.Softmax(1),
    lambda T: T.nn.LogSoftmax(), lambda T: T.nn.Softmin(0), lambda T: T.nn.Softmax2d(), lambda T: T.nn.Sigmoid(),
    lambda T: T.nn.Tanh(), lambda T: T.nn.LogSigmoid(), lambda T: T.nn.Softsign(), lambda T: T.nn.Tanhshrink(),
    lambda T: T.nn.PReLU(3, 0.1),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr(i):
    ref, got = run_both(REPRS[i])
    assert repr(got) == repr(ref)


# ------------------------------------------------------------------------------------------------------------
# errors

ERRORS = {
    "leaky_relu_int": lambda T: F(T).leaky_relu(T.tensor([1, 2])),
    "elu_int": lambda T: F(T).elu(T.tensor([1, 2])),
    "gelu_int": lambda T: F(T).gelu(T.tensor([1, 2])),
    "silu_int": lambda T: F(T).silu(T.tensor([1, 2])),
    "hardswish_int": lambda T: F(T).hardswish(T.tensor([1, 2])),
    "softplus_int": lambda T: F(T).softplus(T.tensor([1, 2])),
    "hardshrink_int": lambda T: F(T).hardshrink(T.tensor([1, 2])),
    "logsigmoid_int": lambda T: F(T).logsigmoid(T.tensor([1, 2])),
    "gelu_bad_approx": lambda T: F(T).gelu(T.ones(2), approximate="foo"),
    "hardtanh_min_gt_max": lambda T: F(T).hardtanh(T.ones(2), 2.0, 1.0),
    "Hardtanh_min_gt_max": lambda T: T.nn.Hardtanh(2.0, 1.0),
    "softshrink_negative": lambda T: F(T).softshrink(T.ones(2), -1.0),
    "celu_alpha_zero": lambda T: F(T).celu(T.ones(2), 0.0),
    "glu_odd": lambda T: F(T).glu(T.ones(2, 3)),
    "glu_scalar": lambda T: F(T).glu(T.tensor(1.0)),
    "glu_bad_dim": lambda T: F(T).glu(T.ones(2, 4), 5),
    "prelu_mismatch": lambda T: F(T).prelu(T.ones(2, 3), T.ones(2)),
    "prelu_1d_input": lambda T: F(T).prelu(T.ones(3), T.ones(3)),
    "prelu_2d_weight": lambda T: F(T).prelu(T.ones(2, 3), T.ones(1, 3)),
    "prelu_dtype": lambda T: F(T).prelu(T.ones(2, 3, dtype=T.float64), T.ones(3)),
    "rrelu_bounds": lambda T: F(T).rrelu(T.ones(2), 0.5, 0.1, training=True),
    "softmax2d_2d": lambda T: T.nn.Softmax2d()(T.ones(2, 3)),
    "softmax_bad_dim": lambda T: F(T).softmax(T.ones(2, 3), dim=2),
    "softmax_int": lambda T: F(T).softmax(T.ones(2, 3, dtype=T.int64), dim=1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])


@pytest.mark.parametrize("name", ["relu", "relu6", "hardtanh", "threshold"])
def test_integer_inputs_supported(name):
    fn = FUNCTIONAL[name]
    check(lambda T, x: fn(T, x), [np.array([-3, 0, 2, 7], np.int64)], grad=False)


@pytest.mark.parametrize("name", ["softsign", "tanhshrink", "sigmoid"])
def test_integer_inputs_promote(name):
    check(FUNCTIONAL[name], [np.array([-3, 0, 2, 7], np.int64)], grad=False)


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning):
        F(torchish).softmax(torchish.ones(2, 3))
    check(lambda T, x: F(T).softmax(x), [arr(2, 3)])
    check(lambda T, x: F(T).log_softmax(x), [arr(4)])


def test_fd_smooth_activations():
    for fn in (F(torchish).gelu, F(torchish).mish, lambda x: F(torchish).celu(x, 0.7)):
        check_fd(fn, arr(6, lo=-3, hi=3, seed=5))


# ------------------------------------------------------------------------------------------------------------
# randomized activations: rrelu (training) and gumbel_softmax draw from torchish's generator


def test_rrelu_training_slopes_and_grad():
    torchish.manual_seed(0)
    x = torchish.tensor(EDGES, requires_grad=True)
    out = F(torchish).rrelu(x, 0.1, 0.3, training=True)
    xv, ov = EDGES, to_numpy(out)
    pos = xv > 0
    np.testing.assert_array_equal(ov[pos], xv[pos])
    neg = xv < 0
    slopes = ov[neg] / xv[neg]
    assert np.all((slopes >= 0.1) & (slopes <= 0.3))
    assert len(np.unique(slopes)) > 1
    (g,) = torchish.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(to_numpy(g)[neg], slopes, rtol=1e-6)
    np.testing.assert_array_equal(to_numpy(g)[pos], 1.0)
    assert 0.1 <= to_numpy(g)[xv == 0][0] <= 0.3  # x == 0 takes a random slope too (PyTorch: x <= 0)
    assert type(out.grad_fn).__name__ == "RreluWithNoiseBackward0"


def test_rrelu_seeded_and_module_modes():
    x = torchish.tensor(EDGES)
    torchish.manual_seed(3)
    a = F(torchish).rrelu(x, training=True)
    torchish.manual_seed(3)
    m = torchish.nn.RReLU()
    b = m(x)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    m.eval()
    ref = torch.nn.RReLU().eval()(torch.tensor(EDGES))
    np.testing.assert_allclose(to_numpy(m(x)), to_numpy(ref), rtol=1e-6)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax(hard, dim):
    logits = arr(3, 4, seed=2)
    tau = 0.7
    torchish.manual_seed(11)
    x = torchish.tensor(logits, requires_grad=True)
    y = F(torchish).gumbel_softmax(x, tau=tau, hard=hard, dim=dim)
    torchish.manual_seed(11)
    soft = to_numpy(F(torchish).gumbel_softmax(torchish.tensor(logits), tau=tau, dim=dim))
    np.testing.assert_allclose(soft.sum(axis=dim), 1.0, rtol=1e-5)
    yv = to_numpy(y)
    if hard:
        assert set(np.unique(yv)) <= {0.0, 1.0}
        np.testing.assert_array_equal(yv.argmax(axis=dim), soft.argmax(axis=dim))
        np.testing.assert_array_equal(yv.sum(axis=dim), 1.0)
    else:
        np.testing.assert_allclose(yv, soft)
    # the gradient (straight-through when hard) is the softmax's: compare with PyTorch's softmax backward at the
    # same perturbed logits z = tau * log(y_soft) (equal to logits + gumbels up to a per-row constant)
    cot = arr(3, 4, seed=9)
    (g,) = torchish.autograd.grad(y, x, torchish.tensor(cot))
    z = torch.tensor(tau * np.log(soft.astype(np.float64)), requires_grad=True)
    (gt,) = torch.autograd.grad(torch.softmax(z / tau, dim=dim), z, torch.tensor(cot, dtype=torch.float64))
    np.testing.assert_allclose(to_numpy(g), gt.numpy(), rtol=2e-4, atol=2e-5)


def test_gumbel_softmax_changes_between_draws():
    x = torchish.zeros(2, 5)
    torchish.manual_seed(0)
    a, b = F(torchish).gumbel_softmax(x), F(torchish).gumbel_softmax(x)
    assert not np.allclose(to_numpy(a), to_numpy(b))


def test_no_warnings_on_plain_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F(torchish).relu(torchish.ones(2))
        F(torchish).softmax(torchish.ones(2), dim=0)
