"""PyTorch's rejection samplers (gamma, poisson, binomial) and the distributions on them draw PyTorch's numbers.

As tests/test_random_streams.py: each case seeds both libraries, runs the same code, compares, then draws ``rand(3)``
and ``randn(1)``: equal trailing draws show that as many words of the stream were used and that the generator's
cached normal (which gamma's Marsaglia-Tsang loop uses and refills) was left as PyTorch leaves it. The parameters
cover both branches of each sampler: gamma's concentrations below 1 (boosted) and above, Poisson rates below 10
(multiplied uniforms) and from 10 (PTRS), binomial counts and probabilities for BTRS (count * p >= 10) and
inversion, with p above 1/2 (the complement) too. float32 draws are bit-exact; float64 gamma values go through
XLA's log1p/sin/cos/pow, which differ from glibc's in the last bits (a wrong draw differs by O(1)).
"""
from __future__ import annotations

import numpy as np
import pytest

import torchish
from oracle import check_raises, needs_torch, torch

EXACT = dict(rtol=0, atol=0)
F64_ULPS = dict(rtol=1e-13, atol=0)
ULPS = dict(rtol=1e-6, atol=1e-6)  # float32 through PyTorch's vectorised rsqrt/log against XLA's

ALPHAS = [0.3, 0.7, 1.0, 2.5, 0.05, 7.0, 40.0, 0.0]
RATES = [0.5, 3.0, 9.9, 10.0, 25.0, 300.0, 0.0, 1e-3]
COUNTS = [10.0, 100.0, 100.0, 1000.0, 7.0, 50.0, 2.5, 30.0]
PROBS = [0.3, 0.05, 0.5, 0.9, 0.99, 0.85, 0.3, 1.0]  # inversion, inversion, BTRS, 1 - BTRS, 1 - inv, 1 - inv, ...


def _dists(T):
    return T.distributions


CASES = {
    "standard_gamma": (lambda T: T._standard_gamma(T.tensor(ALPHAS)), EXACT),
    "standard_gamma_float64": (lambda T: T._standard_gamma(T.tensor(ALPHAS, dtype=T.float64)), F64_ULPS),
    "standard_gamma_crosses_a_twist": (lambda T: T._standard_gamma(T.linspace(0.2, 5.0, 150)), EXACT),
    "standard_gamma_odd_concentrations": (lambda T: T._standard_gamma(T.tensor([-1.5, float("nan"), float("inf"),
                                                                               1e-3, 1e-30, 0.0, 1e6, 0.5])), EXACT),
    "randn_cache_shared_with_gamma": (lambda T: [T.randn(1), T._standard_gamma(T.tensor(ALPHAS[:3])), T.randn(1)],
                                      EXACT),
    "poisson": (lambda T: T.poisson(T.tensor(RATES).reshape(2, 4)), EXACT),
    "poisson_float64": (lambda T: T.poisson(T.tensor(RATES, dtype=T.float64)), EXACT),
    "poisson_infinite_rate": (lambda T: T.poisson(T.tensor([float("inf"), 1e7, 4.0, 0.0, 2.5, 11.0, 0.1, 60.0])),
                              EXACT),
    "binomial": (lambda T: T.binomial(T.tensor(COUNTS), T.tensor(PROBS)), EXACT),
    "binomial_float64": (lambda T: T.binomial(T.tensor(COUNTS, dtype=T.float64), T.tensor(PROBS, dtype=T.float64)),
                         EXACT),
    "binomial_edges": (lambda T: T.binomial(T.tensor([10.0, float("inf"), 0.0, 1e9, 20.0, 5.0, 1e6, 40.0]),
                                            T.tensor([float("nan"), 0.5, 0.5, 1e-6, 0.0, 1.0, 0.37, 0.75])), EXACT),
    "sample_dirichlet": (lambda T: T._sample_dirichlet(T.tensor([[0.3, 2.0, 5.0], [1.5, 0.1, 0.7]])), EXACT),
    "binomial_broadcast_count_and_prob": (lambda T: T.binomial(T.tensor([[5.0], [70.0]]), T.tensor([0.3, 0.5])),
                                          EXACT),
    "Gamma": (lambda T: _dists(T).Gamma(T.tensor([0.5, 2.0, 9.0]), T.tensor([1.0, 3.0, 0.5])).sample((2,)), EXACT),
    "Gamma_rsample_float64": (lambda T: _dists(T).Gamma(T.tensor([0.5, 2.0], dtype=T.float64),
                                                        T.tensor([1.0, 3.0], dtype=T.float64)).rsample((3,)),
                              F64_ULPS),
    "Beta": (lambda T: _dists(T).Beta(T.tensor([0.5, 2.0, 3.0]), T.tensor([1.5, 0.3, 3.0])).sample((2,)), EXACT),
    "Dirichlet": (lambda T: _dists(T).Dirichlet(T.tensor([[0.3, 2.0, 5.0], [1.5, 0.1, 0.7]])).sample(), EXACT),
    "Dirichlet_float64": (lambda T: _dists(T).Dirichlet(T.tensor([0.3, 2.0, 5.0], dtype=T.float64)).sample((2,)),
                          F64_ULPS),
    "Chi2": (lambda T: _dists(T).Chi2(T.tensor([1.0, 3.0, 7.5])).sample((2,)), EXACT),
    "StudentT": (lambda T: _dists(T).StudentT(T.tensor([1.0, 3.0, 7.5])).sample((2,)), ULPS),
    "Poisson": (lambda T: _dists(T).Poisson(T.tensor([0.5, 12.0, 4.0])).sample((2,)), EXACT),
    "Binomial": (lambda T: _dists(T).Binomial(T.tensor([10.0, 100.0, 40.0]), T.tensor([0.3, 0.2, 0.9])).sample((2,)),
                 EXACT),
    "NegativeBinomial": (lambda T: _dists(T).NegativeBinomial(T.tensor([5.0, 20.0]), T.tensor([0.3, 0.6])).sample(
        (2,)), EXACT),
}


@needs_torch
@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")  # binomial's broadcasting
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 2024])
def test_seeded_rejection_samplers_match_pytorch(name, seed):
    fn, tols = CASES[name]
    outs = []
    for T in (torch, torchish):
        T.manual_seed(seed)
        got = fn(T)
        got = got if isinstance(got, list) else [got]
        outs.append(([g.detach().numpy() for g in got], T.rand(3).numpy(), T.randn(1).numpy()))
    (ref, ref_rand, ref_randn), (mine, mine_rand, mine_randn) = outs
    for r, m in zip(ref, mine):
        assert r.dtype == m.dtype and r.shape == m.shape
        np.testing.assert_allclose(m, r, **tols)
    np.testing.assert_array_equal(mine_rand, ref_rand)  # the same number of words used
    np.testing.assert_array_equal(mine_randn, ref_randn)  # the same cached normal


@needs_torch
def test_generator_argument_leaves_the_default_stream():
    outs = []
    for T in (torch, torchish):
        T.manual_seed(1)
        g = T.Generator().manual_seed(11)
        got = [T.poisson(T.tensor(RATES), generator=g), T.binomial(T.tensor(COUNTS), T.tensor(PROBS), generator=g),
               T._standard_gamma(T.tensor(ALPHAS), generator=g)]
        outs.append([x.numpy() for x in got] + [T.rand(3).numpy()])
    for r, m in zip(*outs):
        np.testing.assert_array_equal(m, r)


@needs_torch
def test_compiled_draws_match_eager_and_pytorch():
    def step(T, a):
        return T._standard_gamma(a) + T.poisson(a * 5)

    compiled = torchish.compile(lambda a: step(torchish, a))
    results = []
    for T, fn in ((torch, lambda a: step(torch, a)), (torchish, lambda a: step(torchish, a)), (torchish, compiled)):
        T.manual_seed(3)
        a = T.tensor([0.5, 2.0, 13.0])
        results.append([fn(a).numpy() for _ in range(2)] + [T.rand(3).numpy()])
    for ref, eager, comp in zip(*results):
        np.testing.assert_array_equal(eager, ref)
        np.testing.assert_array_equal(comp, ref)


def test_zero_parameters_take_no_words():
    """PyTorch answers a concentration, rate or count of 0 without drawing: the stream does not move."""
    torchish.manual_seed(5)
    expect = torchish.rand(3).numpy()
    torchish.manual_seed(5)
    g = torchish._standard_gamma(torchish.zeros(4))
    p = torchish.poisson(torchish.zeros(4, dtype=torchish.float64))
    b = torchish.binomial(torchish.zeros(4), torchish.full((4,), 0.5))
    np.testing.assert_array_equal(torchish.rand(3).numpy(), expect)
    assert (g.numpy() == np.finfo(np.float32).tiny).all() and not p.numpy().any() and not b.numpy().any()


@pytest.mark.parametrize("fn", [lambda T: T._standard_gamma(T.ones(3, dtype=T.int64)),
                                lambda T: T._standard_gamma(T.ones(3, dtype=T.float16)),
                                lambda T: T._sample_dirichlet(T.ones(3, dtype=T.bfloat16)),
                                lambda T: T._sample_dirichlet(T.ones(3, requires_grad=True)).sum().backward(),
                                lambda T: T.distributions.Gamma(T.ones(2, dtype=T.bfloat16), 1.0).sample(),
                                lambda T: T.distributions.Beta(T.ones(2, dtype=T.float16), 1.0).sample(),
                                lambda T: T.distributions.Binomial(10, T.full((2,), 0.5, dtype=T.float16)).sample()],
                         ids=["gamma-int64", "gamma-half", "dirichlet-bfloat16", "dirichlet-backward",
                              "Gamma-bfloat16", "Beta-half", "Binomial-half"])
def test_errors_match_pytorch(fn):
    check_raises(fn)


GRAD_CASES = {
    "Gamma": lambda T, c: T.distributions.Gamma(c, T.tensor([1.0, 2.0, 0.5, 1.0])).rsample((2,)),
    "Dirichlet": lambda T, c: T.distributions.Dirichlet(c).rsample((2,)) * T.tensor([1.0, 2.0, 3.0, 4.0]),
    "Beta": lambda T, c: T.distributions.Beta(c, c.flip(0) + 0.5).rsample((2,)),
    "Dirichlet_float64": lambda T, c: T.distributions.Dirichlet(c.double()).rsample() * T.tensor([1.0, 2.0, 3.0, 4.0]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_reparameterised_gradients_match_pytorch(name):
    """Gamma's gradient is PyTorch's _standard_gamma_grad, Dirichlet's (and Beta's) its _dirichlet_grad, whose
    pathwise gradient differs from the one through normalised gammas."""
    grads = []
    for T in (torch, torchish):
        T.manual_seed(4)
        c = T.tensor([0.3, 2.0, 9.5, 0.9], requires_grad=True)
        GRAD_CASES[name](T, c).sum().backward()
        grads.append(c.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], **ULPS)


@needs_torch
def test_binomial_broadcasts_and_warns_as_pytorch():
    """PyTorch resizes its output (of count's shape) to the broadcast shape, with out='s resize warning."""
    for T in (torch, torchish):
        with pytest.warns(UserWarning, match=r"had shape \[2, 1\], which does not match the required output shape "
                                             r"\[2, 3\]"):
            assert tuple(T.binomial(T.tensor([[5.0], [7.0]]), T.tensor([0.3, 0.5, 0.9])).shape) == (2, 3)
    check_raises(lambda T: T.binomial(T.tensor([1.0, 2.0]), T.tensor([0.3, 0.4, 0.5])),
                 match="must match the size of tensor b")
