"""torchish.distributions against torch.distributions for Multinomial, VonMises, Wishart and LKJCholesky:
log_prob / entropy / moments and their gradients, shapes and expand, validation errors, exports, and samples
(shape, dtype, support, and statistics against the distribution's own moments with loose bounds at a fixed seed).
"""
import math
import warnings

import numpy as np
import pytest

from oracle import check, needs_torch, same, same_error, torch, torchish

NEW = ["LKJCholesky", "Multinomial", "VonMises", "Wishart"]


def D(lib):
    return lib.distributions


PROBS = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], np.float32)
LOGITS = np.array([[0.5, -1.0, 2.0], [0.0, 1.5, -0.5]], np.float32)
COUNTS = np.array([[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]], np.float32)
LOC = np.array([0.3, -1.0, 2.0], np.float32)
KAPPA = np.array([0.5, 3.0, 6.0], np.float32)  # both branches (< 3.75 and >= 3.75) of the Bessel approximations
ANGLES = np.array([0.1, 2.0, -7.0], np.float32)
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]], np.float32)
X_SPD = np.array([[3.0, 0.5, 0.2], [0.5, 2.0, 0.1], [0.2, 0.1, 1.5]], np.float32)
DF = np.array([4.0, 5.5], np.float32)
CORR_L = np.linalg.cholesky(X_SPD / np.sqrt(np.outer(np.diag(X_SPD), np.diag(X_SPD)))).astype(np.float32)
ETA = np.array([0.5, 1.0, 2.5], np.float32)


def _quiet(fn):
    """``fn`` with the Wishart low-df / singular-sample warnings silenced."""
    def wrapped(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return wrapped


# ----------------------------------------------------------------------------------------------------------------
# values and gradients


def test_multinomial_probs():
    check(lambda lib, p, v: (lambda m: [m.log_prob(v), m.entropy(), m.mean, m.variance, m.probs, m.logits])(
        D(lib).Multinomial(4, p)), [PROBS, COUNTS], grad=[0])


def test_multinomial_logits():
    check(lambda lib, lg, v: (lambda m: [m.log_prob(v), m.entropy(), m.mean, m.variance, m.probs])(
        D(lib).Multinomial(4, logits=lg)), [LOGITS, COUNTS], grad=[0])


def test_multinomial_log_prob_without_total_count_and_zero_probs():
    """``total_count`` is not needed to score; a zero probability that is never drawn costs nothing."""
    probs = np.array([[0.0, 0.4, 0.6], [0.25, 0.25, 0.5]], np.float32)
    value = np.array([[0.0, 3.0, 2.0], [1.0, 0.0, 0.0]], np.float32)
    check(lambda lib, p, v: D(lib).Multinomial(probs=p, validate_args=False).log_prob(v), [probs, value], grad=[0])


def test_von_mises():
    check(lambda lib, a, k, v: (lambda m: [m.log_prob(v), m.mean, m.mode, m.variance, m.stddev])(
        D(lib).VonMises(a, k)), [LOC, KAPPA, ANGLES], grad=[0, 1])


def test_von_mises_gradient_wrt_value():
    check(lambda lib, a, k, v: D(lib).VonMises(a, k).log_prob(v), [LOC, KAPPA, ANGLES])


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(param):
    mat = np.linalg.cholesky(COV).astype(np.float32) if param == "scale_tril" else COV

    def fn(lib, df, m, x):
        w = D(lib).Wishart(df, **{param: m})
        return [w.log_prob(x), w.entropy(), w.mean, w.mode, w.variance, w.scale_tril, w.covariance_matrix,
                w.precision_matrix]
    check(_quiet(fn), [DF, mat, X_SPD], grad=[0, 1], rtol=1e-3, atol=1e-4)


def test_wishart_number_df():
    check(lambda lib, m, x: (lambda w: [w.log_prob(x), w.entropy(), w.mean, w.mode, w.variance])(
        D(lib).Wishart(4.5, covariance_matrix=m)), [COV, X_SPD], grad=[0], rtol=1e-3, atol=1e-4)


def test_lkj_cholesky():
    check(lambda lib, c, v: D(lib).LKJCholesky(3, c).log_prob(v), [ETA, CORR_L], grad=[0])
    check(lambda lib, v: D(lib).LKJCholesky(3, 1.5).log_prob(v), [CORR_L])


# ----------------------------------------------------------------------------------------------------------------
# shapes, expand, repr, exports


def _builders(lib):
    t = lib.tensor
    return [D(lib).Multinomial(4, t(PROBS)), D(lib).Multinomial(logits=t(LOGITS)), D(lib).VonMises(t(LOC), t(KAPPA)),
            D(lib).VonMises(0.0, 2.0), D(lib).Wishart(t(DF), covariance_matrix=t(COV)),
            D(lib).Wishart(6.0, scale_tril=t(np.linalg.cholesky(COV))), D(lib).LKJCholesky(3, t(ETA)),
            D(lib).LKJCholesky(2)]


def test_shapes_and_expand():
    def fn(lib):
        out = []
        for d in _builders(lib):
            e = d.expand((2,) + tuple(d.batch_shape))
            out.append([d.batch_shape, d.event_shape, d.has_rsample, d.has_enumerate_support, repr(d),
                        repr(d.support), d.support.event_dim, d.support.is_discrete, type(e).__name__,
                        e.batch_shape, e.event_shape, e._validate_args])
        return out
    same(fn)


def test_expanded_values():
    """An expanded distribution scores (and, for Multinomial, has an entropy) like the original, broadcast."""
    def fn(lib):
        t = lib.tensor
        m = D(lib).Multinomial(4, t(PROBS)).expand((3, 2))
        v = D(lib).VonMises(t(LOC), t(KAPPA)).expand((2, 3))
        w = D(lib).Wishart(t(DF), covariance_matrix=t(COV)).expand((3, 2))
        lkj = D(lib).LKJCholesky(3, t(ETA)).expand((2, 3))
        return [m.log_prob(t(COUNTS)), m.mean, v.log_prob(t(ANGLES)), v.variance, w.log_prob(t(X_SPD)), w.variance,
                lkj.log_prob(t(CORR_L))]
    same(_quiet(fn), rtol=1e-3, atol=1e-4)


@needs_torch
def test_exports_and_module_paths():
    for name in NEW:
        assert name in torchish.distributions.__all__
        assert name in torch.distributions.__all__
    from torchish.distributions.lkj_cholesky import LKJCholesky  # noqa: F401
    from torchish.distributions.multinomial import Multinomial  # noqa: F401
    from torchish.distributions.von_mises import VonMises  # noqa: F401
    from torchish.distributions.wishart import Wishart  # noqa: F401


# ----------------------------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("make", [
    lambda lib: D(lib).Multinomial(2.5, lib.tensor([0.5, 0.5])),
    lambda lib: D(lib).Multinomial(3, lib.tensor([0.5, 0.5]), lib.tensor([0.0, 0.0])),
    lambda lib: D(lib).Multinomial(3, lib.tensor([0.5, -0.5]), validate_args=True),
    lambda lib: D(lib).Multinomial(3, lib.tensor(1.0)),
    lambda lib: D(lib).Multinomial(3, lib.tensor([0.5, 0.5]), validate_args=True).log_prob(lib.tensor([2.0, 2.0])),
    lambda lib: D(lib).Multinomial(3, lib.tensor([0.5, 0.5]), validate_args=True).log_prob(lib.tensor([1.0, -1.0])),
    lambda lib: D(lib).Multinomial(3, lib.ones(2, 3), validate_args=True).log_prob(lib.ones(2, 2)),
    lambda lib: D(lib).VonMises(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0]), validate_args=True),
    lambda lib: D(lib).VonMises(lib.tensor([0.0, float("nan")]), lib.tensor([1.0, 1.0]), validate_args=True),
    lambda lib: D(lib).VonMises(0.0, 1.0, validate_args=True).log_prob(0.5),
    lambda lib: D(lib).VonMises(lib.zeros(3), 1.0, validate_args=True).log_prob(lib.zeros(2)),
    lambda lib: D(lib).VonMises(0.0, 1.0).entropy(),
    lambda lib: D(lib).Wishart(4.0),
    lambda lib: D(lib).Wishart(4.0, lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib: D(lib).Wishart(4.0, lib.ones(2)),
    lambda lib: D(lib).Wishart(lib.tensor([4.0, 1.5]), lib.eye(3)),
    lambda lib: D(lib).Wishart(4.0, lib.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True),
    lambda lib: D(lib).Wishart(4.0, scale_tril=lib.tensor([[1.0, 1.0], [0.0, 1.0]]), validate_args=True),
    lambda lib: D(lib).Wishart(4.0, lib.eye(2), validate_args=True).log_prob(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: D(lib).LKJCholesky(1, 1.0),
    lambda lib: D(lib).LKJCholesky(3, lib.tensor([1.0, -1.0]), validate_args=True),
    lambda lib: D(lib).LKJCholesky(2, 1.0, validate_args=True).log_prob(lib.tensor([[1.0, 0.0], [0.5, 0.5]])),
    lambda lib: D(lib).kl_divergence(D(lib).Multinomial(2, lib.tensor([0.5, 0.5])),
                                     D(lib).Multinomial(2, lib.tensor([0.3, 0.7]))),
    lambda lib: D(lib).kl_divergence(D(lib).VonMises(0.0, 1.0), D(lib).VonMises(1.0, 1.0)),
], ids=["mn_count", "mn_both", "mn_probs", "mn_dim", "mn_support_sum", "mn_support_neg", "mn_event",
        "vm_concentration", "vm_loc_nan", "vm_number", "vm_batch", "vm_entropy", "wi_none", "wi_two", "wi_dim",
        "wi_df", "wi_covariance", "wi_scale_tril", "wi_support", "lkj_dim", "lkj_concentration", "lkj_support",
        "kl_multinomial", "kl_von_mises"])
def test_errors(make):
    same_error(_quiet(make))


@needs_torch
def test_wishart_low_df_warning():
    for lib in (torch, torchish):
        with pytest.warns(UserWarning, match="Low df values detected"):
            D(lib).Wishart(lib.tensor([2.5]), covariance_matrix=lib.eye(3))


# ----------------------------------------------------------------------------------------------------------------
# sampling: shapes, dtypes and support as torch; statistics against the distribution's own moments


N = 2000


def _sample_info(lib):
    lib.manual_seed(0)
    out = []
    for d in _builders(lib)[::2]:  # one of each (every new shape compiles a sampler: the cost here)
        s = d.sample((5,))
        out += [s.shape, s.dtype, s.requires_grad, bool(d.support.check(s).all()), d.expand((4,) + d.batch_shape)
                .sample().shape]
        if d.has_rsample:
            r = d.rsample((5,))  # the shape just compiled
            out += [r.shape, r.dtype]
    return out


def test_sample_shapes_dtypes_support():
    if torch is not None:
        same(_quiet(_sample_info))
    else:  # without the oracle: every sample inside the support
        torchish.manual_seed(0)
        for d in _quiet(_builders)(torchish)[::2]:
            assert bool(d.support.check(_quiet(d.sample)((5,))).all()), d


def test_float64_samples():
    def fn(lib):
        lib.manual_seed(0)
        t = lambda a: lib.tensor(a, dtype=lib.float64)  # noqa: E731
        return [D(lib).Multinomial(3, t(PROBS)).sample().dtype, D(lib).VonMises(t(LOC), t(KAPPA)).sample().dtype]
    same(fn)


def test_multinomial_sample_statistics():
    torchish.manual_seed(0)
    m = torchish.distributions.Multinomial(10, torchish.tensor(PROBS))
    s = m.sample((N,)).double().numpy()
    assert np.all(s.sum(-1) == 10)
    np.testing.assert_allclose(s.mean(0), m.mean.numpy(), atol=0.2)
    np.testing.assert_allclose(s.var(0), m.variance.numpy(), rtol=0.15)


def test_von_mises_sample_statistics():
    """Circular moments: E[cos(x - loc)] = I1/I0 = 1 - variance, E[sin(x - loc)] = 0, values in [-pi, pi)."""
    torchish.manual_seed(0)
    loc = torchish.tensor([0.3, -1.0, 2.0, 3.0])
    kappa = torchish.tensor([1e-6, 0.5, 3.0, 20.0])
    d = torchish.distributions.VonMises(loc, kappa)
    s = d.sample((N,))
    assert s.dtype == torchish.float32 and tuple(s.shape) == (N, 4)
    x = s.double().numpy()
    assert np.all(x >= -math.pi) and np.all(x < math.pi + 1e-6)
    delta = x - loc.numpy()
    np.testing.assert_allclose(np.cos(delta).mean(0), 1 - d.variance.numpy(), atol=0.04)
    np.testing.assert_allclose(np.sin(delta).mean(0), 0.0, atol=0.05)


def test_wishart_sample_statistics_and_rsample_gradient():
    torchish.manual_seed(0)
    df = torchish.tensor(5.0, requires_grad=True)
    cov = torchish.tensor(COV, requires_grad=True)
    w = torchish.distributions.Wishart(df, covariance_matrix=cov)
    s = w.rsample((N,))
    x = s.detach().double().numpy()
    var = w.variance.detach().double().numpy()
    # the mean within 4 standard errors (seed 0 puts X[0, 0] 2.6 of them away, in PyTorch's own draws too)
    np.testing.assert_array_less(np.abs(x.mean(0) - w.mean.detach().numpy()), 4 * np.sqrt(var / N))
    np.testing.assert_allclose(x.var(0), var, rtol=0.25, atol=0.3)
    s.mean(0).sum().backward()  # d E[X] / d df = sum(cov); d E[X] / d cov = df (per entry)
    np.testing.assert_allclose(df.grad.item(), COV.sum(), rtol=0.15)
    assert cov.grad is not None and bool(torchish.isfinite(cov.grad).all())


# PyTorch 2.13's onion sampler, 20000 draws of LKJCholesky(3, 2.0): the variances of the correlations (1,0),
# (2,0), (2,1). The first is the LKJ marginal's 1 / (2 eta + d - 1) = 1/6; the other two are not (PyTorch's
# sampler, followed here as written, gives them larger spread), so they are compared with PyTorch's numbers.
TORCH_LKJ_CORR_VAR = np.array([0.1675, 0.2138, 0.2152])


def test_lkj_sample_statistics():
    """Correlation matrices with unit diagonal, off-diagonal mean 0, and PyTorch's sampler's spread."""
    torchish.manual_seed(0)
    eta, dim = 2.0, 3
    L = torchish.distributions.LKJCholesky(dim, eta).sample((N,))
    corr = (L @ L.mT).double().numpy()
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-5)
    off = corr[:, [1, 2, 2], [0, 0, 1]]
    np.testing.assert_allclose(off.mean(0), 0.0, atol=0.05)
    np.testing.assert_allclose(off.var(0)[0], 1 / (2 * eta + dim - 1), rtol=0.12)
    np.testing.assert_allclose(off.var(0), TORCH_LKJ_CORR_VAR, rtol=0.12)
