"""torchish.distributions against torch.distributions for HalfCauchy, Pareto, Weibull, InverseGamma, Kumaraswamy,
LogisticNormal, NegativeBinomial, ContinuousBernoulli, FisherSnedecor and GeneralizedPareto: log_prob / cdf / icdf /
entropy / moments and their gradients, the infinite / nan moment branches, shapes and expand, validation errors,
exports, and sample shapes / dtypes / supports.
"""
import numpy as np
import pytest

from oracle import check, needs_torch, same, same_error, torch, torchish

NEW = ["ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto", "HalfCauchy", "InverseGamma", "Kumaraswamy",
       "LogisticNormal", "NegativeBinomial", "Pareto", "Weibull"]


def D(lib):
    return lib.distributions


def f32(*values):
    return np.array(values, np.float32)


A = f32(1.5, 2.0, 3.0)  # positive parameters with finite moments
B = f32(2.5, 3.5, 5.0)
V = f32(0.3, 2.0, 5.0)  # positive values
U = f32(0.1, 0.5, 0.9)  # probabilities / unit-interval values


def _moments(d):
    return [d.mean, d.mode, d.variance, d.stddev]


# ----------------------------------------------------------------------------------------------------------------
# values and gradients


def test_half_cauchy():
    check(lambda lib, s, v, p: (lambda d: [d.log_prob(v), d.entropy(), d.cdf(v), d.icdf(p), d.mode])(
        D(lib).HalfCauchy(s)), [A, V, U])


def test_pareto():
    check(lambda lib, s, a, v, p: (lambda d: [d.log_prob(v + s), d.entropy(), d.cdf(v + s), d.icdf(p)] + _moments(d))(
        D(lib).Pareto(s, a)), [A, B, V, U])


def test_weibull():
    check(lambda lib, s, c, v, p: (lambda d: [d.log_prob(v), d.entropy(), d.cdf(v), d.icdf(p)] + _moments(d))(
        D(lib).Weibull(s, c)), [B, A, V, U])


def test_inverse_gamma():
    check(lambda lib, c, r, v: (lambda d: [d.log_prob(v), d.entropy()] + _moments(d))(D(lib).InverseGamma(c, r)),
          [B, A, V])
    check(lambda lib, c, r, v: D(lib).InverseGamma(c, r).cdf(v), [B, A, V], grad=[2])  # torch: no igamma grad in c


def test_kumaraswamy():
    check(lambda lib, a, b, v, p: (lambda d: [d.log_prob(v), d.entropy(), d.cdf(v), d.icdf(p)] + _moments(d))(
        D(lib).Kumaraswamy(a, b)), [A, B, U, U], rtol=1e-3, atol=1e-5)


def test_logistic_normal():
    loc = np.array([[0.3, -1.0, 2.0], [0.0, 0.5, -0.5]], np.float32)
    scale = np.array([[1.0, 0.5, 2.0], [1.5, 0.7, 0.3]], np.float32)
    value = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]], np.float32)
    check(lambda lib, m, s, v: D(lib).LogisticNormal(m, s).log_prob(v), [loc, scale, value])
    check(lambda lib, v: D(lib).LogisticNormal(0.0, 1.0).log_prob(v), [f32(0.3, 0.7)])  # event shape (2,)


def test_negative_binomial():
    counts = f32(0.0, 3.0, 7.0)
    check(lambda lib, n, p, v: (lambda d: [d.log_prob(v)] + _moments(d) + [d.logits])(
        D(lib).NegativeBinomial(n, p)), [B, U, counts])
    check(lambda lib, n, lg, v: (lambda d: [d.log_prob(v)] + _moments(d) + [d.probs])(
        D(lib).NegativeBinomial(n, logits=lg)), [B, f32(-1.0, 0.5, 2.0), counts])


def test_negative_binomial_zero_count():
    """``total_count + value == 0`` scores 0 (the log-normaliser is masked)."""
    same(lambda lib: D(lib).NegativeBinomial(lib.tensor([0.0, 2.0]), lib.tensor([0.3, 0.4])).log_prob(
        lib.tensor([0.0, 0.0])))


CB_PROBS = f32(0.2, 0.5, 0.9)  # 0.5: the Taylor branch


def test_continuous_bernoulli_probs():
    check(lambda lib, p, v: (lambda d: [d.log_prob(v), d.entropy(), d.cdf(v), d.icdf(v), d.mean, d.variance,
                                        d.stddev, d.logits])(D(lib).ContinuousBernoulli(p)),
          [CB_PROBS, f32(0.3, 0.5, 0.8)], rtol=1e-3, atol=1e-5)


def test_continuous_bernoulli_logits():
    check(lambda lib, lg, v: (lambda d: [d.log_prob(v), d.entropy(), d.cdf(v), d.mean, d.variance, d.probs])(
        D(lib).ContinuousBernoulli(logits=lg)), [f32(-1.5, 0.0, 2.0), f32(0.3, 0.0, 1.0)], rtol=1e-3, atol=1e-5)


def test_continuous_bernoulli_log_normalizer():
    check(lambda lib, x: D(lib).ContinuousBernoulli(lib.tensor([0.3, 0.6]))._log_normalizer(x),
          [f32(-1.0, 0.0005, 2.0)], rtol=1e-3, atol=1e-5)


def test_fisher_snedecor():
    df1, df2 = f32(3.0, 5.0, 10.0), f32(5.0, 8.0, 12.0)
    check(lambda lib, a, b, v: (lambda d: [d.log_prob(v)] + _moments(d))(D(lib).FisherSnedecor(a, b)),
          [df1, df2, V])


def test_generalized_pareto():
    loc, scale, conc = f32(0.0, 1.0, -1.0), f32(1.0, 2.0, 0.5), f32(-0.3, 0.0, 0.4)
    value = f32(0.5, 2.0, 0.0)
    check(lambda lib, m, s, c, v, p: (lambda d: [d.log_prob(v), d.cdf(v), d.icdf(p), d.log_survival_function(v),
                                                 d.entropy(), d.mean, d.mode, d.variance])(
        D(lib).GeneralizedPareto(m, s, c)), [loc, scale, conc, value, U], rtol=1e-3, atol=1e-5)


def test_infinite_and_nan_moments():
    """The branches where a moment is infinite or undefined."""
    def fn(lib):
        t = lib.tensor
        small = t([0.5, 1.5, 3.0])
        return [D(lib).HalfCauchy(t([1.0, 2.0])).mean, D(lib).HalfCauchy(t([1.0, 2.0])).variance,
                _moments(D(lib).Pareto(t([1.0, 2.0, 1.0]), small)), D(lib).Weibull(t([1.0, 2.0, 1.0]), small).mode,
                _moments(D(lib).InverseGamma(small, t([1.0, 2.0, 1.0]))),
                D(lib).Kumaraswamy(small, t([2.0, 0.5, 2.0])).mode,
                _moments(D(lib).FisherSnedecor(t([1.0, 3.0, 5.0]), t([1.0, 3.0, 5.0]))),
                D(lib).GeneralizedPareto(0.0, 1.0, t([1.5, 0.7, 0.2])).mean,
                D(lib).GeneralizedPareto(0.0, 1.0, t([1.5, 0.7, 0.2])).variance,
                D(lib).HalfCauchy(1.0, validate_args=False).log_prob(t([-1.0, 0.0]))]
    same(fn)


def test_kl_divergence():
    def fn(lib, s1, a1, s2, a2, p1, p2):
        kl = D(lib).kl_divergence
        return [kl(D(lib).Pareto(s1, a1), D(lib).Pareto(s2, a2)),
                kl(D(lib).ContinuousBernoulli(p1), D(lib).ContinuousBernoulli(p2))]
    check(fn, [f32(1.0, 2.0, 0.5), A, f32(0.5, 1.0, 1.0), B, CB_PROBS, f32(0.7, 0.3, 0.5005)], rtol=1e-3, atol=1e-5)


def _kl_families(lib, x, y):
    """One of each family, from two positive parameter vectors (``x`` in (0, 1) for the unit-interval ones)."""
    d = D(lib)
    return {"Pareto": d.Pareto(y, y + 2.5), "ContinuousBernoulli": d.ContinuousBernoulli(x), "Beta": d.Beta(y, y + 1),
            "Exponential": d.Exponential(y), "Gamma": d.Gamma(y + 1, y), "Gumbel": d.Gumbel(x, y),
            "Laplace": d.Laplace(x, y), "Normal": d.Normal(x, y), "Uniform": d.Uniform(x, x + y)}


KL_PAIRS = [("Beta", "ContinuousBernoulli"), ("Beta", "Pareto"), ("ContinuousBernoulli", "Pareto"),
            ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"),
            ("ContinuousBernoulli", "Uniform"),
            ("Exponential", "ContinuousBernoulli"), ("Exponential", "Pareto"), ("Gamma", "ContinuousBernoulli"),
            ("Gamma", "Pareto"), ("Gumbel", "ContinuousBernoulli"), ("Gumbel", "Pareto"),
            ("Laplace", "ContinuousBernoulli"), ("Laplace", "Pareto"), ("Normal", "ContinuousBernoulli"),
            ("Normal", "Pareto"), ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli"), ("Pareto", "Uniform"),
            ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Uniform", "ContinuousBernoulli"),
            ("Uniform", "Pareto")]


def test_kl_divergence_across_families():
    x, y = f32(0.2, 0.45, 0.6), f32(0.5, 1.5, 3.0)
    x2, y2 = f32(0.7, 0.3, 0.1), f32(1.2, 0.4, 2.0)

    def fn(lib, x, y, x2, y2):
        p, q = _kl_families(lib, x, y), _kl_families(lib, x2, y2)
        return [D(lib).kl_divergence(p[a], q[b]) for a, b in KL_PAIRS]
    check(fn, [x, y, x2, y2], rtol=1e-3, atol=1e-5)


def test_kl_infinite_branches():
    """Pareto with alpha <= 1 or <= 2 against Exponential / Gamma / Normal; Uniform starting below a Pareto's scale;
    Uniform / ContinuousBernoulli leaving the other's support."""
    def fn(lib):
        t, d = lib.tensor, D(lib)
        par = d.Pareto(t([1.0, 1.0, 1.0]), t([0.5, 1.5, 3.0]))
        return [d.kl_divergence(par, d.Exponential(t([1.0, 2.0, 0.5]))), d.kl_divergence(par, d.Gamma(2.0, 1.0)),
                d.kl_divergence(par, d.Normal(0.0, 1.0)),
                d.kl_divergence(d.Uniform(t([0.5, 1.5]), 3.0), d.Pareto(1.0, 2.0)),
                d.kl_divergence(d.Uniform(t([0.5, -0.5]), 1.0), d.ContinuousBernoulli(0.3)),
                d.kl_divergence(d.ContinuousBernoulli(t([0.3, 0.6])), d.Uniform(t([0.0, -1.0]), t([1.0, 2.0])))]
    same(fn)


# ----------------------------------------------------------------------------------------------------------------
# shapes, expand, repr, exports


def _builders(lib):
    t = lib.tensor
    return [D(lib).HalfCauchy(t(A)), D(lib).Pareto(t(A), t(B)), D(lib).Weibull(t(B), t(A)),
            D(lib).InverseGamma(t(B), t(A)), D(lib).Kumaraswamy(t(A), t(B)),
            D(lib).LogisticNormal(t([[0.3, -1.0, 2.0], [0.0, 0.5, -0.5]]), t([1.0, 0.5, 2.0])),
            D(lib).NegativeBinomial(t(B), t(U)), D(lib).ContinuousBernoulli(t(CB_PROBS)),
            D(lib).FisherSnedecor(t(A), t(B)), D(lib).GeneralizedPareto(t([0.0, 1.0, -1.0]), 1.0, t([-0.3, 0.0, 0.4])),
            D(lib).HalfCauchy(2.0), D(lib).Pareto(1.0, 2.0), D(lib).ContinuousBernoulli(logits=0.3),
            D(lib).FisherSnedecor(3.0, 4.0), D(lib).GeneralizedPareto(0.0, 1.0, 0.5), D(lib).LogisticNormal(0.0, 1.0),
            D(lib).NegativeBinomial(3.0, logits=t([0.2, -0.4]))]


def test_shapes_and_expand():
    def fn(lib):
        out = []
        for d in _builders(lib):
            e = d.expand((2,) + tuple(d.batch_shape))
            out.append([type(d).__name__, d.batch_shape, d.event_shape, d.has_rsample, d.has_enumerate_support,
                        repr(d), d.support.event_dim, d.support.is_discrete, type(e).__name__, e.batch_shape,
                        e.event_shape, e._validate_args, sorted(d.arg_constraints)])
        return out
    same(fn)


def test_expanded_values():
    def fn(lib):
        out = []
        for d, v in zip(_builders(lib)[:10], [V, V + A, V, V, U, [[0.1, 0.2, 0.3, 0.4]], [0.0, 3.0, 7.0], U, V,
                                              [0.5, 2.0, 0.0]]):
            e = d.expand((2,) + tuple(d.batch_shape))
            out.append(e.log_prob(lib.tensor(np.asarray(v, np.float32))))
        return out
    same(fn, rtol=1e-3, atol=1e-5)


@needs_torch
def test_exports_and_module_paths():
    import importlib
    for name in NEW:
        assert name in torchish.distributions.__all__
        assert name in torch.distributions.__all__
        module = getattr(torch.distributions, name).__module__.rsplit(".", 1)[1]
        assert getattr(importlib.import_module(f"torchish.distributions.{module}"), name) is getattr(
            torchish.distributions, name)


# ----------------------------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("make", [
    lambda lib: D(lib).HalfCauchy(lib.tensor([1.0, -1.0]), validate_args=True),
    lambda lib: D(lib).HalfCauchy(lib.tensor([1.0, 2.0]), validate_args=True).log_prob(lib.tensor([-1.0, 1.0])),
    lambda lib: D(lib).Pareto(lib.tensor([1.0, 1.0]), lib.tensor([1.0, 0.0]), validate_args=True),
    lambda lib: D(lib).Pareto(lib.tensor([1.0, 2.0]), 2.0, validate_args=True).log_prob(lib.tensor([1.5, 1.5])),
    lambda lib: D(lib).Weibull(lib.tensor([1.0, 1.0]), lib.tensor([-1.0, 1.0]), validate_args=True),
    lambda lib: D(lib).Weibull(1.0, 1.0, validate_args=True).log_prob(lib.tensor([-0.5])),
    lambda lib: D(lib).InverseGamma(lib.tensor([0.0, 1.0]), 1.0, validate_args=True),
    lambda lib: D(lib).InverseGamma(2.0, 1.0, validate_args=True).log_prob(lib.tensor([0.0])),
    lambda lib: D(lib).Kumaraswamy(lib.tensor([1.0, 1.0]), lib.tensor([1.0, -2.0]), validate_args=True),
    lambda lib: D(lib).Kumaraswamy(2.0, 2.0, validate_args=True).log_prob(lib.tensor([1.5])),
    lambda lib: D(lib).LogisticNormal(lib.zeros(2), lib.tensor([1.0, 0.0]), validate_args=True),
    lambda lib: D(lib).LogisticNormal(lib.zeros(2), lib.ones(2), validate_args=True).log_prob(
        lib.tensor([0.5, 0.6, 0.1])),
    lambda lib: D(lib).NegativeBinomial(2.0),
    lambda lib: D(lib).NegativeBinomial(2.0, lib.tensor([0.5]), lib.tensor([0.0])),
    lambda lib: D(lib).NegativeBinomial(2.0, lib.tensor([0.5, 1.0]), validate_args=True),
    lambda lib: D(lib).NegativeBinomial(lib.tensor([-1.0, 1.0]), lib.tensor([0.5, 0.5]), validate_args=True),
    lambda lib: D(lib).NegativeBinomial(2.0, lib.tensor([0.5]), validate_args=True).log_prob(lib.tensor([1.5])),
    lambda lib: D(lib).ContinuousBernoulli(),
    lambda lib: D(lib).ContinuousBernoulli(lib.tensor([0.5]), lib.tensor([0.0])),
    lambda lib: D(lib).ContinuousBernoulli(lib.tensor([0.5, 1.5]), validate_args=False),
    lambda lib: D(lib).ContinuousBernoulli(lib.tensor([0.5, 1.5]), validate_args=True),
    lambda lib: D(lib).ContinuousBernoulli(lib.tensor([0.5]), validate_args=True).log_prob(lib.tensor([1.5])),
    lambda lib: D(lib).FisherSnedecor(lib.tensor([1.0, 0.0]), 1.0, validate_args=True),
    lambda lib: D(lib).FisherSnedecor(2.0, 3.0, validate_args=True).log_prob(lib.tensor([-1.0])),
    lambda lib: D(lib).GeneralizedPareto(0.0, lib.tensor([1.0, -1.0]), 0.5, validate_args=True),
    lambda lib: D(lib).GeneralizedPareto(lib.tensor([0.0, float("nan")]), 1.0, 0.5, validate_args=True),
    lambda lib: D(lib).GeneralizedPareto(0.0, 1.0, lib.tensor([0.5, -0.5]), validate_args=True).log_prob(
        lib.tensor([1.0, 3.0])),
    lambda lib: D(lib).GeneralizedPareto(lib.zeros(2, dtype=lib.float64), 1.0, 0.5).log_prob(  # torch's isclose
        lib.ones(2, dtype=lib.float64)),
], ids=["hc_scale", "hc_support", "pa_alpha", "pa_support", "we_conc", "we_support", "ig_conc", "ig_support",
        "ku_conc", "ku_support", "ln_scale", "ln_support", "nb_none", "nb_both", "nb_probs", "nb_count",
        "nb_support", "cb_none", "cb_both", "cb_probs_false", "cb_probs", "cb_support", "fs_df", "fs_support",
        "gp_scale", "gp_loc", "gp_support", "gp_float64"])
def test_errors(make):
    same_error(make)


# ----------------------------------------------------------------------------------------------------------------
# sampling: shapes, dtypes and supports as torch (one sample shape: each new shape compiles a sampler)


def _sample_info(lib):
    lib.manual_seed(0)
    out = []
    for d in _builders(lib)[:10]:
        s = d.sample((5,))
        out += [type(d).__name__, s.shape, s.dtype, s.requires_grad, bool(d.support.check(s).all())]
        if d.has_rsample:
            r = d.rsample((5,))
            out += [r.shape, r.dtype, bool(d.support.check(r).all())]
    return out


def test_sample_shapes_dtypes_support():
    if torch is not None:
        same(_sample_info)
    else:  # without the oracle: every sample inside the support
        torchish.manual_seed(0)
        for d in _builders(torchish)[:10]:
            assert bool(d.support.check(d.sample((5,))).all()), d


def test_rsample_gradients_flow():
    """Reparameterised samples are differentiable in the parameters (finite gradients)."""
    torchish.manual_seed(0)
    t = torchish.tensor
    a, b, p = t(A, requires_grad=True), t(B, requires_grad=True), t(CB_PROBS, requires_grad=True)
    D_ = torchish.distributions
    for d in [D_.HalfCauchy(a), D_.Pareto(a, b), D_.Weibull(b, a), D_.InverseGamma(b, a), D_.Kumaraswamy(a, b),
              D_.FisherSnedecor(a, b), D_.ContinuousBernoulli(p), D_.GeneralizedPareto(a, b, t([-0.3, 0.0, 0.4]))]:
        grads = torchish.autograd.grad(d.rsample((5,)).sum(), [a, b, p], allow_unused=True)
        assert any(g is not None for g in grads), type(d).__name__
        for g in grads:
            assert g is None or bool(torchish.isfinite(g).all()), type(d).__name__
