"""nn.init: gains and fans exactly as PyTorch's; the random initialisers by their bounds and statistics (torchish's
random stream is not PyTorch's); the deterministic ones value for value."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from oracle import needs_torch, to_numpy, torch, torchish

pytestmark = needs_torch
init = torchish.nn.init

GAINS = [("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None),
         ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]


@pytest.mark.parametrize("nl,param", GAINS)
def test_calculate_gain_matches_torch(nl, param):
    assert init.calculate_gain(nl, param) == torch.nn.init.calculate_gain(nl, param)


@pytest.mark.parametrize("nl,param", [("leaky_relu", True), ("leaky_relu", "x"), ("softmax", None)])
def test_calculate_gain_errors(nl, param):
    with pytest.raises(ValueError) as ref:
        torch.nn.init.calculate_gain(nl, param)
    with pytest.raises(ValueError) as got:
        init.calculate_gain(nl, param)
    assert str(got.value) == str(ref.value)


SHAPES = [(5, 3), (2, 3, 4), (4, 2, 3, 3), (1, 1, 2, 2, 2)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    ref = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(torchish.empty(shape)) == ref
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert init._calculate_correct_fan(torchish.empty(shape), mode) == \
            torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)


def test_fan_errors():
    for T in (torch, torchish):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            T.nn.init.xavier_uniform_(T.empty(3))
        with pytest.raises(ValueError, match="Mode fan_avg not supported"):
            T.nn.init.kaiming_uniform_(T.empty(3, 3), mode="fan_avg")
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
            T.nn.init.eye_(T.empty(2, 2, 2))
        with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
            T.nn.init.dirac_(T.empty(2, 2))
        with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
            T.nn.init.dirac_(T.empty(3, 2, 2), groups=2)
        with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
            T.nn.init.orthogonal_(T.empty(3))
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
            T.nn.init.sparse_(T.empty(3), 0.5)


BIG = (256, 128)  # fan_in 128, fan_out 256: 32768 samples, the standard deviation is known within ~1%


def _std(x):
    return float(np.std(to_numpy(x).astype(np.float64)))


def test_uniform_and_normal_statistics():
    w = torchish.nn.Parameter(torchish.empty(BIG))
    out = init.uniform_(w, -0.5, 1.5)
    assert out is w and w.is_leaf and w.requires_grad and w.grad_fn is None
    a = to_numpy(w)
    assert a.min() >= -0.5 and a.max() < 1.5
    assert abs(a.mean() - 0.5) < 0.02 and abs(_std(w) - 2 / math.sqrt(12)) < 0.02
    init.normal_(w, 2.0, 0.5)
    assert abs(to_numpy(w).mean() - 2.0) < 0.02 and abs(_std(w) - 0.5) < 0.01


@pytest.mark.parametrize("fn,kw", [
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {"nonlinearity": "relu"}), ("kaiming_normal_", {"a": 0.1, "mode": "fan_out"}),
])
def test_scaled_initialisers_statistics_match_torch(fn, kw):
    ref = getattr(torch.nn.init, fn)(torch.empty(BIG), **kw)
    got = getattr(init, fn)(torchish.empty(BIG), **kw)
    r, g = to_numpy(ref), to_numpy(got)
    assert abs(g.mean()) < 0.05 * r.std()
    assert abs(g.std() - r.std()) < 0.03 * r.std(), (g.std(), r.std())  # ~5 standard errors of the difference
    if "uniform" in fn:  # the bound is a function of the fans and the gain: equal to torch's up to sampling
        bound = math.sqrt(3.0) * r.std()
        assert np.abs(g).max() <= bound * 1.03 and np.abs(g).max() > bound * 0.97
        assert np.abs(g).max() <= np.abs(r).max() * 1.03 + 1e-6


def test_trunc_normal_bounds_and_moments():
    def moments(mean, std, a, b):
        alpha, beta = (a - mean) / std, (b - mean) / std
        pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
        cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
        z = cdf(beta) - cdf(alpha)
        m = mean + std * (pdf(alpha) - pdf(beta)) / z
        v = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
        return m, math.sqrt(v)
    for mean, std, a, b in [(0.0, 1.0, -2.0, 2.0), (0.5, 0.2, 0.0, 0.6), (0.0, 1.0, 2.0, 4.0)]:
        w = init.trunc_normal_(torchish.empty(BIG), mean, std, a, b)
        x = to_numpy(w).astype(np.float64)
        assert x.min() >= a and x.max() <= b
        m, s = moments(mean, std, a, b)
        assert abs(x.mean() - m) < 0.02 * max(s, 0.1) + 0.005
        assert abs(x.std() - s) < 0.02 * s
    ref = torch.nn.init.trunc_normal_(torch.empty(BIG), 0.0, 0.02)
    got = init.trunc_normal_(torchish.empty(BIG), 0.0, 0.02)
    assert abs(to_numpy(got).std() - to_numpy(ref).std()) < 0.03 * to_numpy(ref).std()
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        init.trunc_normal_(torchish.empty(2, 2), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape,gain", [((6, 4), 1.0), ((4, 6), 2.0), ((4, 3, 2), 0.5)])
def test_orthogonal(shape, gain):
    w = init.orthogonal_(torchish.nn.Parameter(torchish.empty(shape)), gain=gain)
    assert isinstance(w, torchish.nn.Parameter) and w.is_leaf
    q = to_numpy(w).reshape(shape[0], -1).astype(np.float64) / gain
    small = min(q.shape)
    prod = q @ q.T if q.shape[0] == small else q.T @ q
    np.testing.assert_allclose(prod, np.eye(small), atol=1e-5)
    ref = torch.nn.init.orthogonal_(torch.empty(shape), gain=gain).reshape(shape[0], -1)
    np.testing.assert_allclose(np.linalg.svd(to_numpy(w).reshape(shape[0], -1), compute_uv=False),
                               np.linalg.svd(to_numpy(ref), compute_uv=False), rtol=1e-5)


@pytest.mark.parametrize("sparsity", [0.1, 0.5, 0.9])
def test_sparse_zero_count_per_column_matches_torch(sparsity):
    shape = (10, 400)
    ref = to_numpy(torch.nn.init.sparse_(torch.empty(shape), sparsity, std=0.5))
    got = to_numpy(init.sparse_(torchish.empty(shape), sparsity, std=0.5))
    np.testing.assert_array_equal((got == 0).sum(0), (ref == 0).sum(0))
    nz = got[got != 0]
    assert abs(nz.std() - 0.5) < 5 * 0.5 / math.sqrt(2 * nz.size)  # five standard errors of the estimate


@pytest.mark.parametrize("shape,groups", [((3, 3, 3), 1), ((4, 2, 3, 3), 2), ((6, 2, 3, 2, 3), 3), ((2, 5, 3), 1)])
def test_dirac_matches_torch(shape, groups):
    ref = torch.nn.init.dirac_(torch.empty(shape), groups=groups)
    got = init.dirac_(torchish.empty(shape), groups=groups)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(ref))


@pytest.mark.parametrize("name,args", [("eye_", ()), ("constant_", (0.3,)), ("ones_", ()), ("zeros_", ())])
def test_deterministic_fills_match_torch(name, args):
    for shape in ((3, 5), (4, 2)):
        ref = getattr(torch.nn.init, name)(torch.nn.Parameter(torch.empty(shape)), *args)
        p = torchish.nn.Parameter(torchish.empty(shape))
        got = getattr(init, name)(p, *args)
        assert got is p and p.requires_grad and p.is_leaf
        np.testing.assert_array_equal(to_numpy(got), to_numpy(ref))


def test_dtypes_preserved():
    cases = [(init.xavier_uniform_, torchish.float64), (init.orthogonal_, torchish.float64),
             (init.trunc_normal_, torchish.float64), (init.kaiming_normal_, torchish.bfloat16),
             (init.uniform_, torchish.float16)]
    for fn, dt in cases:
        w = fn(torchish.empty(4, 3, dtype=dt))
        assert w.dtype == dt and np.isfinite(to_numpy(w).astype(np.float64)).all() and to_numpy(w).std() > 0


def test_generator_and_global_seed_reproducibility():
    g1 = torchish.Generator().manual_seed(7)
    g2 = torchish.Generator().manual_seed(7)
    for fn in (init.uniform_, init.kaiming_uniform_, init.trunc_normal_, init.orthogonal_):
        a = to_numpy(fn(torchish.empty(4, 3), generator=g1))
        b = to_numpy(fn(torchish.empty(4, 3), generator=g2))
        np.testing.assert_array_equal(a, b)
    torchish.manual_seed(3)
    a = to_numpy(init.kaiming_uniform_(torchish.empty(4, 3)))
    c = to_numpy(init.kaiming_uniform_(torchish.empty(4, 3)))
    torchish.manual_seed(3)
    b = to_numpy(init.kaiming_uniform_(torchish.empty(4, 3)))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_deprecated_names_and_zero_element_warning():
    for old in ("uniform", "normal", "xavier_uniform", "kaiming_normal", "orthogonal", "eye", "dirac", "sparse"):
        with pytest.warns(FutureWarning, match=f"nn.init.{old}_"):
            if old == "dirac":
                init.dirac(torchish.empty(4, 3, 1))
            elif old == "sparse":
                init.sparse(torchish.empty(4, 3), 0.5)
            else:
                getattr(init, old)(torchish.empty(4, 3))
    with pytest.warns(FutureWarning):
        init.constant(torchish.empty(4, 3), 1.0)
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(torchish.empty(0, 3))


def test_init_inside_no_grad_free_graph():
    p = torchish.nn.Parameter(torchish.empty(4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.kaiming_uniform_(p)
        init.zeros_(p)
    y = (p * 2).sum()
    y.backward()
    np.testing.assert_array_equal(to_numpy(p.grad), np.full((4, 3), 2.0, np.float32))
