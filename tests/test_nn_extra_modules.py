"""The less common torch.nn classes against PyTorch: AdaptiveLogSoftmaxWithLoss (outputs, log_prob, predict,
gradients, errors), SyncBatchNorm (one process: batch norm with its own checks; convert_sync_batchnorm),
CrossMapLRN2d (PyTorch's legacy forward and hand-written backward), DataParallel on a CPU-only host, the
deprecated Container and nn.factory_kwargs."""
import warnings

import numpy as np
import pytest

from layer_oracle import check_module, copy_state
from oracle import arr, assert_same, check_raises, needs_torch, run_both, torch, torchish

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore:Initializing zero-element tensors is a no-op")]


def _targets(n, n_classes, seed):
    return np.random.default_rng(seed).integers(0, n_classes, size=n).astype(np.int64)


# ---- AdaptiveLogSoftmaxWithLoss ---------------------------------------------------------------------------------

ASM_CASES = [
    (lambda nn: nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 7]), 6, 10),
    (lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 12, (2, 5, 9), div_value=2.0, head_bias=True), 8, 12),
    (lambda nn: nn.AdaptiveLogSoftmaxWithLoss(5, 4, [1]), 5, 4),
]


@pytest.mark.parametrize("make,features,classes", ASM_CASES)
def test_adaptive_log_softmax_forward_and_grads(make, features, classes):
    check_module(make, [arr(7, features), _targets(7, classes, seed=features)])


@pytest.mark.parametrize("target", [np.array([0, 1, 2], np.int64), np.array([9, 8, 7], np.int64),
                                    np.array([5], np.int64)])
def test_adaptive_log_softmax_clusters_partly_used(target):
    # clusters without any target row: torch leaves their gradients None, torchish exact zeros
    check_module(ASM_CASES[0][0], [arr(len(target), 6, seed=3), target])


def test_adaptive_log_softmax_unbatched():
    check_module(ASM_CASES[1][0], [arr(8, seed=4), np.array(10, np.int64)])


@pytest.mark.parametrize("method", ["log_prob", "predict"])
def test_adaptive_log_softmax_log_prob_predict(method):
    def make(nn):
        return nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 7], head_bias=True)
    tm, xm = make(torch.nn), make(torchish.nn)
    copy_state(tm, xm)
    with torch.no_grad(), torchish.no_grad():   # head biases that make some rows pick a tail cluster, some not
        tm.head.bias.copy_(torch.tensor([0.0, 0.1, 0.0, 2.0, -1.0]))
        xm.head.bias.copy_(torchish.tensor([0.0, 0.1, 0.0, 2.0, -1.0]))
    x = arr(9, 6, lo=-3, hi=3, seed=7)
    ref, got = getattr(tm, method)(torch.tensor(x)), getattr(xm, method)(torchish.tensor(x))
    if method == "predict":
        assert 0 < int((ref >= 3).sum()) < 9, "the case should mix head and tail predictions"
    assert_same(ref, got)


def test_adaptive_log_softmax_log_prob_grads():
    def make(nn):
        return nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 7])
    tm, xm = make(torch.nn), make(torchish.nn)
    copy_state(tm, xm)
    x = arr(4, 6, seed=8)
    tx, xx = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
    cot = arr(4, 10, seed=9)
    tout, xout = tm.log_prob(tx), xm.log_prob(xx)
    assert_same(tout, xout)
    tout.backward(torch.tensor(cot))
    xout.backward(torchish.tensor(cot))
    assert_same(tx.grad, xx.grad)
    for (name, p), q in zip(tm.named_parameters(), xm.parameters()):
        assert_same(p.grad, q.grad, name)


def test_adaptive_log_softmax_repr_and_attributes():
    t, x = run_both(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [2, 5], div_value=2.0))
    assert repr(x) == repr(t)
    for name in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "in_features", "n_classes", "div_value"):
        assert getattr(x, name) == getattr(t, name), name
    out_t = t(torch.tensor(arr(2, 8)), torch.tensor([0, 11]))
    out_x = x(torchish.tensor(arr(2, 8)), torchish.tensor([0, 11]))
    assert type(out_x).__name__ == type(out_t).__name__ == "_ASMoutput"
    assert out_x._fields == out_t._fields


@pytest.mark.parametrize("cutoffs", [[], [5, 3], [0, 4], [4, 10], [3, 3], [2.5]])
def test_adaptive_log_softmax_bad_cutoffs(cutoffs):
    check_raises(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, cutoffs), match="cutoffs should be")


@pytest.mark.parametrize("x_shape,target,match", [
    ((3, 6), [0, 1], "same size in the batch"),
    ((2, 3, 6), [0, 1], "1D target tensor expects 2D"),
    ((2, 6), 0, "0D target tensor expects 1D"),
    ((2, 6), [[0, 1]], "multi-target not supported"),
    ((3, 6), [0, 10, 2], r"Target values should be in \[0, 9\], but values in range \[0, 10\]"),
    ((2, 6), [-1, 2], r"values in range \[-1, 2\]"),
])
def test_adaptive_log_softmax_errors(x_shape, target, match):
    x = arr(*x_shape)
    check_raises(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 7])(lib.tensor(x), lib.tensor(target)),
                 match=match)


# ---- SyncBatchNorm ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.SyncBatchNorm(3), (4, 3)),
    (lambda nn: nn.SyncBatchNorm(3, momentum=None), (4, 3, 5)),
    (lambda nn: nn.SyncBatchNorm(2, affine=False), (3, 2, 2, 3)),
    (lambda nn: nn.SyncBatchNorm(2, bias=False, track_running_stats=False), (2, 2, 3, 2, 2)),
])
@pytest.mark.parametrize("train", [True, False])
def test_sync_batch_norm_matches_torch(make, shape, train):
    check_module(make, [arr(*shape)], train=train, steps=2)


@pytest.mark.parametrize("shape,train,match", [
    ((4,), True, "expected at least 2D input"),
    ((4,), False, "expected at least 2D input"),
    ((1, 3), True, "Expected more than 1 value per channel"),
])
def test_sync_batch_norm_errors(shape, train, match):
    def fn(lib):
        return lib.nn.SyncBatchNorm(3).train(train)(lib.tensor(arr(*shape)))
    check_raises(fn, match=match)


def test_sync_batch_norm_zero_channels():
    check_raises(lambda lib: lib.nn.SyncBatchNorm(0)(lib.zeros(2, 0)), match="channels should be non-zero")


def _bn_net(nn):
    return nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3),
                         nn.Sequential(nn.Flatten(), nn.BatchNorm1d(12, affine=False, momentum=None)))


def test_convert_sync_batchnorm():
    tnet, xnet = _bn_net(torch.nn), _bn_net(torchish.nn)
    copy_state(tnet, xnet)
    with torch.no_grad(), torchish.no_grad():
        tnet[1].running_mean.fill_(0.5)
        xnet[1].running_mean.fill_(0.5)
    tnet[1].eval()
    xnet[1].eval()
    xweight, xmean = xnet[1].weight, xnet[1].running_mean
    tconv, xconv = (torch.nn.SyncBatchNorm.convert_sync_batchnorm(tnet),
                    torchish.nn.SyncBatchNorm.convert_sync_batchnorm(xnet))
    assert xconv is xnet and tconv is tnet
    assert repr(xconv) == repr(tconv)
    assert list(xconv.state_dict()) == list(tconv.state_dict())
    assert type(xconv[1]).__name__ == type(xconv[2][1]).__name__ == "SyncBatchNorm"
    assert xconv[1].weight is xweight and xconv[1].running_mean is xmean     # shared, not copied
    assert xconv[1].training is tconv[1].training is False
    x = arr(4, 2, 2, 2, seed=2)
    assert_same(tconv(torch.tensor(x)), xconv(torchish.tensor(x)))
    assert_same(tconv.state_dict(), xconv.state_dict())


def test_convert_sync_batchnorm_single_layer():
    t, x = run_both(lambda lib: lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.BatchNorm1d(3, eps=1e-3)))
    assert repr(x) == repr(t)
    t, x = run_both(lambda lib: lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.Linear(2, 2)))
    assert type(x).__name__ == type(t).__name__ == "Linear"


# ---- CrossMapLRN2d ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size,alpha,beta,k,shape", [
    (3, 1e-4, 0.75, 1, (2, 4, 3, 3)),
    (5, 0.5, 0.75, 2.0, (2, 9, 2, 3)),        # more channels than pre_pad: PyTorch's running-sum quirk shows
    (4, 1.0, 0.5, 1.5, (1, 6, 2, 2)),         # even size
    (7, 2.0, 1.25, 1.0, (1, 3, 2, 2)),        # window wider than the channels
])
def test_cross_map_lrn2d(size, alpha, beta, k, shape):
    check_module(lambda nn: nn.CrossMapLRN2d(size, alpha, beta, k), [arr(*shape, lo=-2, hi=2)])


def test_cross_map_lrn2d_float64_and_grad_fn():
    t, x = run_both(lambda lib: lib.nn.CrossMapLRN2d(5, 1.0, 0.75, 1)(
        lib.tensor(arr(2, 7, 2, 2, dtype=np.float64), requires_grad=True)))
    assert_same(t, x)
    assert type(x.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize("make_input", [lambda lib: lib.ones(2, 3), lambda lib: lib.ones(1, 1, 1, 1, 1),
                                        lambda lib: lib.ones(1, 2, 1, 1, dtype=lib.int64)])
def test_cross_map_lrn2d_errors(make_input):
    check_raises(lambda lib: lib.nn.CrossMapLRN2d(3)(make_input(lib)))


# ---- DataParallel, Container, factory_kwargs ----------------------------------------------------------------------

def test_data_parallel_on_cpu_host():
    if torchish.cuda.is_available():
        pytest.skip("PyTorch's CPU-only DataParallel applies without an accelerator")
    tm, xm = run_both(lambda lib: lib.nn.DataParallel(lib.nn.Linear(3, 2)))
    assert repr(xm) == repr(tm)
    assert list(xm.state_dict()) == list(tm.state_dict()) == ["module.weight", "module.bias"]
    assert xm.device_ids == tm.device_ids == []
    copy_state(tm, xm)
    x = arr(4, 3)
    assert_same(tm(torch.tensor(x)), xm(torchish.tensor(x)))
    t, x = run_both(lambda lib: lib.nn.DataParallel(lib.nn.ReLU())(lib.tensor([-1.0, 2.0])))
    assert_same(t, x)
    assert torchish.nn.parallel.DataParallel is torchish.nn.DataParallel


def test_data_parallel_function_on_cpu_host():
    if torchish.cuda.is_available():
        pytest.skip("PyTorch's data_parallel raises only without an accelerator")
    check_raises(lambda lib: lib.nn.parallel.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2)),
                 match="device type could not be determined")


def test_container_is_deprecated():
    def make(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = lib.nn.Container(fc=lib.nn.Linear(2, 2), act=lib.nn.Tanh())
        return c, [(w.category, str(w.message)) for w in caught]
    (tc, tw), (xc, xw) = run_both(make)
    assert xw == tw
    assert repr(xc) == repr(tc)
    assert list(xc.state_dict()) == list(tc.state_dict())
    assert isinstance(xc, torchish.nn.Module)


@pytest.mark.parametrize("kwargs", [None, {}, {"dtype": "D"}, {"device": "cpu", "factory_kwargs": {"dtype": "D"}},
                                    {"bad": 1}, {"dtype": "D", "factory_kwargs": {"dtype": "E"}}])
def test_factory_kwargs(kwargs):
    try:
        ref = torch.nn.factory_kwargs(kwargs)
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e).split(" ")[0]):
            torchish.nn.factory_kwargs(kwargs)
        return
    assert torchish.nn.factory_kwargs(kwargs) == ref


# ---- nn.utils fusion / skip_init / stateless, F.conv_tbc, nn.grad ----------------------------------------------

def _fusion_pair(lib, kind):
    with lib.no_grad():
        if kind == "linear":
            layer, bn = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)
        elif kind == "convT":
            layer, bn = lib.nn.ConvTranspose2d(2, 3, 2), lib.nn.BatchNorm2d(3)
        else:
            layer, bn = lib.nn.Conv2d(2, 3, 2, bias=kind != "conv_nobias"), lib.nn.BatchNorm2d(3)
        bn.running_mean.copy_(lib.tensor([0.1, -0.2, 0.3, 0.0][:bn.num_features]))
        bn.running_var.copy_(lib.tensor([1.5, 0.5, 2.0, 1.0][:bn.num_features]))
        bn.weight.copy_(lib.tensor([1.2, 0.7, -0.4, 2.0][:bn.num_features]))
        bn.bias.copy_(lib.tensor([0.3, -0.1, 0.2, 0.5][:bn.num_features]))
    return layer.eval(), bn.eval()


@pytest.mark.parametrize("kind", ["conv", "conv_nobias", "convT", "linear"])
def test_fuse_bn_eval(kind):
    (tl, tb), (xl, xb) = _fusion_pair(torch, kind), _fusion_pair(torchish, kind)
    copy_state(tl, xl)
    if kind == "linear":
        tf, xf = torch.nn.utils.fuse_linear_bn_eval(tl, tb), torchish.nn.utils.fuse_linear_bn_eval(xl, xb)
        x = arr(5, 3)
    else:
        t_ = kind == "convT"
        tf, xf = (torch.nn.utils.fuse_conv_bn_eval(tl, tb, transpose=t_),
                  torchish.nn.utils.fuse_conv_bn_eval(xl, xb, transpose=t_))
        x = arr(2, 2, 4, 4)
    assert xf is not xl and xl.bias is not xf.bias
    assert_same(dict(tf.named_parameters()), dict(xf.named_parameters()))
    assert all(isinstance(p, torchish.nn.Parameter) for p in xf.parameters())
    assert [p.requires_grad for p in xf.parameters()] == [p.requires_grad for p in tf.parameters()]
    assert_same(tf(torch.tensor(x)), xf(torchish.tensor(x)))
    assert_same(tb(tl(torch.tensor(x))), xf(torchish.tensor(x)), rtol=1e-4, atol=1e-5)


def test_fuse_bn_errors():
    check_raises(lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3)),
                 match="Fusion only for eval")
    check_raises(lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(),
                                                              lib.nn.BatchNorm1d(2).eval()), match="To fuse")


def test_skip_init():
    t, x = run_both(lambda lib: lib.nn.utils.skip_init(lib.nn.Linear, 5, out_features=2, bias=False))
    assert repr(x) == repr(t) and list(x.state_dict()) == list(t.state_dict())
    assert x.weight.shape == t.weight.shape
    check_raises(lambda lib: lib.nn.utils.skip_init(int, 3), match="Expected a Module")
    check_raises(lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU), match="must support a 'device' arg")


def test_stateless_functional_call_warns():
    def fn(lib):
        lin = lib.nn.Linear(2, 1)
        params = {"weight": lib.tensor([[1.0, -2.0]]), "bias": lib.tensor([0.5])}
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            return lib.nn.utils.stateless.functional_call(lin, params, (lib.tensor([[3.0, 1.0]]),))
    assert_same(*run_both(fn))


@pytest.mark.parametrize("t_len,kernel,pad", [(5, 3, 1), (4, 2, 0), (6, 3, -1), (3, 3, 0)])
def test_conv_tbc(t_len, kernel, pad):
    from oracle import check
    check(lambda lib, x, w, b: lib.nn.functional.conv_tbc(x, w, b, pad),
          [arr(t_len, 2, 3), arr(kernel, 3, 4, seed=1), arr(4, seed=2)])


@pytest.mark.parametrize("shapes", [((5, 2), (3, 3, 4), (4,)), ((5, 2, 3), (3, 3), (4,)), ((5, 2, 3), (3, 3, 4), (4, 1)),
                                    ((5, 2, 3), (3, 2, 4), (4,)), ((5, 2, 3), (3, 3, 4), (5,)),
                                    ((2, 2, 3), (4, 3, 4), (4,))])
def test_conv_tbc_errors(shapes):
    check_raises(lambda lib: lib.nn.functional.conv_tbc(*[lib.ones(*s) for s in shapes]))


@pytest.mark.parametrize("nd,x_shape,w_shape,kw", [
    (1, (2, 4, 7), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (2, (1, 2, 5, 6), (3, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    (3, (1, 1, 4, 4, 3), (2, 1, 2, 2, 2), dict()),
])
def test_nn_grad_conv(nd, x_shape, w_shape, kw):
    x, w = arr(*x_shape), arr(*w_shape, seed=1)
    out_shape = tuple(getattr(torch.nn.functional, f"conv{nd}d")(torch.tensor(x), torch.tensor(w), **kw).shape)
    go = arr(*out_shape, seed=2)

    def both(lib):
        f = lib.nn.functional.grad
        g_in = getattr(f, f"conv{nd}d_input")(x_shape, lib.tensor(w), lib.tensor(go), **kw)
        g_w = getattr(f, f"conv{nd}d_weight")(lib.tensor(x), w_shape, lib.tensor(go), **kw)
        return g_in, g_w
    assert_same(*run_both(both))
    assert torchish.nn.grad.conv2d_input is torchish.nn.functional.grad.conv2d_input
