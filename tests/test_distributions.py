"""torchish.distributions against torch.distributions: log_prob / cdf / icdf / entropy / moments and their
gradients with respect to the parameters, shapes, expand, validation errors, KL divergences, transforms.

Samples differ from PyTorch's (another RNG), so samples are checked for shape, dtype and support, and their
statistics against the distribution's own moments with loose bounds — the only non-oracle checks here. Shapes are
kept small and shared across cases: XLA compiles per op and shape, and that is this file's cost.
"""
import math

import numpy as np
import pytest

from oracle import arr, assert_same, check, run_both, same, same_error, torch, torchish


def D(lib):
    return lib.distributions


# ----------------------------------------------------------------------------------------------------------------
# the cases: a builder, its parameters (numpy, by seed) and values to score


def pos(seed, lo=0.5, hi=2.0, n=3):
    return arr(n, seed=seed, lo=lo, hi=hi)


def real(seed, n=3):
    return arr(n, seed=seed, lo=-1.5, hi=1.5)


def simplex(seed, *shape):
    x = arr(*shape, seed=seed, lo=0.2, hi=1.0)
    return (x / x.sum(-1, keepdims=True)).astype(np.float32)


SPD = (lambda a: (a @ a.T + np.eye(2)).astype(np.float32))(arr(2, 2, seed=7))
TRIL = np.tril(arr(2, 2, seed=8)) + np.diag([1.0, 1.5]).astype(np.float32)

U = np.array([0.2, 0.5, 0.85], np.float32)  # probabilities for icdf
MOMENTS = ["entropy", "mean", "mode", "variance", "stddev"]


class Case:
    """A distribution to compare: ``build(D, *params)``, parameters from ``params(seed)``, ``value`` to score and
    the methods/properties to compare."""

    def __init__(self, name, build, params, value, methods, attrs=()):
        self.name, self.build, self.params, self.value = name, build, params, value
        self.methods, self.attrs = methods, attrs


CASES = [
    Case("Normal", lambda d, a, b: d.Normal(a, b), lambda s: [real(s), pos(s + 1)], real(99),
         ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("LogNormal", lambda d, a, b: d.LogNormal(a, b), lambda s: [real(s), pos(s + 1)], pos(99),
         ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("HalfNormal", lambda d, b: d.HalfNormal(b), lambda s: [pos(s)], pos(99),
         ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("Uniform", lambda d, a, b: d.Uniform(a, b), lambda s: [real(s) - 2.0, pos(s + 1)],
         arr(3, seed=98, lo=0, hi=0.4), ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("Laplace", lambda d, a, b: d.Laplace(a, b), lambda s: [real(s), pos(s + 1)], real(99),
         ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("Cauchy", lambda d, a, b: d.Cauchy(a, b), lambda s: [real(s), pos(s + 1)], real(99),
         ["log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance"]),
    Case("Gumbel", lambda d, a, b: d.Gumbel(a, b), lambda s: [real(s), pos(s + 1)], real(99),
         ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("Exponential", lambda d, r: d.Exponential(r), lambda s: [pos(s)], pos(99),
         ["log_prob", "cdf", "icdf", *MOMENTS]),
    Case("Gamma", lambda d, a, b: d.Gamma(a, b), lambda s: [pos(s, 0.6, 3.0), pos(s + 1)], pos(99),
         ["log_prob", *MOMENTS]),
    Case("Chi2", lambda d, k: d.Chi2(k), lambda s: [pos(s, 1.0, 4.0)], pos(99), ["log_prob", *MOMENTS], ["df"]),
    Case("StudentT", lambda d, df, a, b: d.StudentT(df, a, b),
         lambda s: [np.array([0.8, 1.5, 3.0], np.float32) + s / 100, real(s + 1), pos(s + 2)], real(99),
         ["log_prob", *MOMENTS]),
    Case("Beta", lambda d, a, b: d.Beta(a, b), lambda s: [pos(s, 1.2, 3.0), pos(s + 1, 1.2, 3.0)], pos(99, 0.1, 0.9),
         ["log_prob", *MOMENTS], ["concentration1", "concentration0"]),
    Case("Dirichlet", lambda d, c: d.Dirichlet(c), lambda s: [arr(2, 3, seed=s, lo=1.2, hi=3.0)], simplex(99, 2, 3),
         ["log_prob", *MOMENTS]),
    Case("Bernoulli", lambda d, p: d.Bernoulli(p), lambda s: [pos(s, 0.1, 0.45)], np.array([0.0, 1.0, 1.0], np.float32),
         ["log_prob", *MOMENTS], ["logits"]),
    Case("BernoulliLogits", lambda d, lg: d.Bernoulli(logits=lg), lambda s: [real(s)],
         np.array([0.0, 1.0, 1.0], np.float32), ["log_prob", *MOMENTS], ["probs"]),
    Case("Geometric", lambda d, p: d.Geometric(p), lambda s: [pos(s, 0.2, 0.9)], np.array([0.0, 2.0, 5.0], np.float32),
         ["log_prob", *MOMENTS], ["logits"]),
    Case("Poisson", lambda d, r: d.Poisson(r), lambda s: [pos(s, 0.5, 4.0)], np.array([0.0, 2.0, 5.0], np.float32),
         ["log_prob", "mean", "mode", "variance"]),
    Case("Binomial", lambda d, p: d.Binomial(5, p), lambda s: [pos(s, 0.1, 0.9)], np.array([0.0, 2.0, 5.0], np.float32),
         ["log_prob", *MOMENTS], ["logits"]),
    Case("BinomialLogits", lambda d, lg: d.Binomial(4, logits=lg), lambda s: [real(s)],
         np.array([0.0, 2.0, 4.0], np.float32), ["log_prob", "entropy", "mean", "variance"], ["probs"]),
    Case("Categorical", lambda d, p: d.Categorical(p), lambda s: [arr(2, 3, seed=s, lo=0.2, hi=2.0)],
         np.array([2, 0]), ["log_prob", "entropy", "mode"], ["probs", "logits"]),
    Case("CategoricalLogits", lambda d, lg: d.Categorical(logits=lg), lambda s: [arr(2, 3, seed=s, lo=-2, hi=2)],
         np.array([1, 2]), ["log_prob", "entropy", "mode"], ["probs", "logits"]),
    Case("OneHotCategorical", lambda d, p: d.OneHotCategorical(p), lambda s: [arr(2, 3, seed=s, lo=0.2, hi=2.0)],
         np.eye(3, dtype=np.float32)[[2, 0]], ["log_prob", "entropy", "mean", "mode", "variance"], ["probs", "logits"]),
    Case("MVNScaleTril", lambda d, m, L: d.MultivariateNormal(m, scale_tril=L), lambda s: [real(s, 2), TRIL],
         arr(3, 2, seed=99), ["log_prob", "entropy", "mean", "mode", "variance"],
         ["covariance_matrix", "precision_matrix"]),
    Case("MVNCovariance", lambda d, m, S: d.MultivariateNormal(m, covariance_matrix=S), lambda s: [real(s, 2), SPD],
         arr(3, 2, seed=99), ["log_prob", "entropy", "variance"], ["scale_tril", "precision_matrix"]),
    Case("MVNPrecision", lambda d, m, P: d.MultivariateNormal(m, precision_matrix=P), lambda s: [real(s, 2), SPD],
         arr(3, 2, seed=99), ["log_prob", "entropy", "variance"], ["scale_tril", "covariance_matrix"]),
    Case("LowRankMVN", lambda d, m, W, dg: d.LowRankMultivariateNormal(m, W, dg),
         lambda s: [real(s, 2), arr(2, 1, seed=s + 1), pos(s + 2, n=2)], arr(3, 2, seed=99),
         ["log_prob", "entropy", "mean", "variance"], ["scale_tril", "covariance_matrix", "precision_matrix"]),
    Case("Independent", lambda d, a, b: d.Independent(d.Normal(a, b), 1),
         lambda s: [arr(2, 3, seed=s), arr(2, 3, seed=s + 1, lo=0.5, hi=2)], arr(2, 3, seed=99),
         ["log_prob", "entropy", "mean", "mode", "variance"]),
    Case("MixtureSameFamily", lambda d, w, a, b: d.MixtureSameFamily(d.Categorical(w), d.Normal(a, b)),
         lambda s: [pos(s), real(s + 1), pos(s + 2)], arr(4, seed=99, lo=-2, hi=2),
         ["log_prob", "cdf", "mean", "variance"]),
    Case("TanhNormal", lambda d, a, b: d.TransformedDistribution(d.Normal(a, b), [d.TanhTransform()]),
         lambda s: [real(s), pos(s + 1)], arr(3, seed=99, lo=-0.9, hi=0.9), ["log_prob", "cdf", "icdf"]),
    Case("AffineExpNormal",
         lambda d, a, b: d.TransformedDistribution(d.Normal(a, b), [d.ExpTransform(), d.AffineTransform(1.0, 2.0)]),
         lambda s: [real(s), pos(s + 1)], pos(99, 1.5, 4.0), ["log_prob", "cdf", "icdf"]),
    Case("RelaxedBernoulli", lambda d, t, p: d.RelaxedBernoulli(t, p),
         lambda s: [np.array(0.7, np.float32), pos(s, 0.1, 0.9)], pos(99, 0.1, 0.9), ["log_prob"]),
    Case("RelaxedOneHotCategorical", lambda d, t, p: d.RelaxedOneHotCategorical(t, p),
         lambda s: [np.array(0.7, np.float32), arr(2, 3, seed=s, lo=0.2, hi=2.0)], simplex(99, 2, 3), ["log_prob"]),
]
BY_NAME = {c.name: c for c in CASES}
IDS = [c.name for c in CASES]


def _evaluate(case, d, value):
    out = []
    for m in case.methods:
        if m in ("log_prob", "cdf"):
            out.append(getattr(d, m)(value))
        elif m == "icdf":
            out.append(d.icdf(value.new_tensor(U[: value.shape[-1]]) if value.dim() else value))
        elif m == "entropy":
            out.append(d.entropy())
        else:
            out.append(getattr(d, m))
    return out + [getattr(d, a) for a in case.attrs]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients(case):
    """log_prob / cdf / icdf / entropy / moments (and derived parameters), and their gradients."""
    def fn(lib, *args):
        *params, value = args
        return _evaluate(case, case.build(D(lib), *params), value)
    check(fn, case.params(0) + [case.value], grad=range(len(case.params(0))))


def test_gamma_cdf():
    """Gamma's cdf is differentiable in the rate (PyTorch has no gradient for igamma's first argument)."""
    check(lambda lib, a, b, v: D(lib).Gamma(a, b).cdf(v), [pos(0, 0.6, 3.0), pos(1), pos(99)], grad=[1])


def test_gradients_wrt_value():
    check(lambda lib, a, b, v: [D(lib).Normal(a, b).log_prob(v), D(lib).Gamma(b, b).log_prob(v.abs() + 0.1)],
            [real(0), pos(1), real(99)])


def test_shapes_and_expand():
    """batch/event shapes, flags, repr and expand (without sampling) of every case."""
    def fn(lib):
        out = []
        for case in CASES:
            d = case.build(D(lib), *[lib.tensor(p) for p in case.params(0)])
            e = d.expand((2,) + tuple(d.batch_shape))
            out.append([case.name, d.batch_shape, d.event_shape, d.has_rsample, d.has_enumerate_support, repr(d),
                        type(e).__name__, e.batch_shape, e.event_shape, e.has_rsample, e._validate_args])
        return out
    same(fn)


ENUMERABLE = ["Bernoulli", "Binomial", "Categorical", "OneHotCategorical"]


@pytest.mark.parametrize("name", ENUMERABLE)
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(name, expand):
    case = BY_NAME[name]
    same(lambda lib: case.build(D(lib), *[lib.tensor(p) for p in case.params(0)]).enumerate_support(expand))


# ----------------------------------------------------------------------------------------------------------------
# validation


def test_parameter_validation_message():
    same_error(lambda lib: D(lib).Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])))
    same_error(lambda lib: D(lib).Normal(lib.tensor([float("nan"), 1.0]), lib.tensor([1.0, 1.0])))


@pytest.mark.parametrize("make", [
    lambda lib: D(lib).Bernoulli(lib.tensor([0.5, 1.5])),
    lambda lib: D(lib).Categorical(lib.tensor([[0.5, -0.5]])),
    lambda lib: D(lib).Gamma(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda lib: D(lib).Beta(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib: D(lib).Dirichlet(lib.tensor([1.0, 0.0])),
    lambda lib: D(lib).Geometric(lib.tensor([0.0, 0.5])),
    lambda lib: D(lib).Binomial(lib.tensor([2.5]), lib.tensor([0.5])),
    lambda lib: D(lib).MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1.0, 1.0], [0.0, 1.0]])),
    lambda lib: D(lib).MultivariateNormal(lib.zeros(2), covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: D(lib).Bernoulli(),
    lambda lib: D(lib).Categorical(lib.tensor(1.0)),
    lambda lib: D(lib).MultivariateNormal(lib.zeros(2)),
    lambda lib: D(lib).Dirichlet(lib.tensor(1.0)),
    lambda lib: D(lib).Independent(D(lib).Normal(0.0, 1.0), 1),
    lambda lib: D(lib).TransformedDistribution(D(lib).Normal(0.0, 1.0), "exp"),
    lambda lib: D(lib).MixtureSameFamily(D(lib).Categorical(lib.ones(2)), D(lib).Normal(lib.zeros(3), 1.0)),
], ids=["bernoulli", "categorical", "gamma", "beta", "dirichlet", "geometric", "binomial", "scale_tril",
        "covariance", "probs_and_logits", "categorical_dim", "mvn_none", "dirichlet_dim", "independent",
        "transforms", "mixture"])
def test_constructor_errors(make):
    same_error(make)


@pytest.mark.parametrize("score", [
    lambda lib: D(lib).Exponential(lib.tensor([1.0, 2.0])).log_prob(lib.tensor([-1.0, 1.0])),
    lambda lib: D(lib).Bernoulli(lib.tensor([0.3])).log_prob(lib.tensor([0.5])),
    lambda lib: D(lib).Categorical(lib.ones(2, 3)).log_prob(lib.tensor([0, 3])),
    lambda lib: D(lib).Beta(lib.tensor([2.0]), lib.tensor([2.0])).log_prob(lib.tensor([1.5])),
    lambda lib: D(lib).Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
    lambda lib: D(lib).MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3)),
    lambda lib: D(lib).Normal(0.0, 1.0).log_prob(0.5),
    lambda lib: D(lib).Uniform(lib.zeros(2), lib.ones(2)).cdf(lib.tensor([0.5, 2.0])),
], ids=["exponential", "bernoulli", "categorical", "beta", "batch", "event", "number", "uniform_cdf"])
def test_value_validation(score):
    same_error(score)


def test_validation_switches():
    def fn(lib):
        d = D(lib).Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=False)
        lp = d.log_prob(lib.tensor([1.0]))
        D(lib).Distribution.set_default_validate_args(False)
        try:
            D(lib).Exponential(lib.tensor([-1.0])).log_prob(lib.tensor([-1.0]))
        finally:
            D(lib).Distribution.set_default_validate_args(True)
        return [lp, D(lib).Normal(0.0, 1.0)._validate_args]
    same(fn)
    same_error(lambda lib: D(lib).Distribution.set_default_validate_args("yes"))


def test_lazy_probs_logits_repr():
    """Only the parameter given is stored (repr and validation see it); the other is derived on first use."""
    def fn(lib):
        d = D(lib).Bernoulli(logits=lib.tensor([0.0, 1.0]))
        before = repr(d)
        _ = d.probs
        return [before, repr(d), repr(D(lib).Categorical(logits=lib.zeros(3))), repr(D(lib).Normal(0.0, 1.0)),
                repr(D(lib).Normal(lib.tensor([1.0]), 1.0))]
    same(fn)


# ----------------------------------------------------------------------------------------------------------------
# KL divergences


KL_PAIRS = [("Normal", "Normal"), ("Bernoulli", "Bernoulli"), ("Categorical", "Categorical"),
            ("OneHotCategorical", "OneHotCategorical"), ("MVNScaleTril", "MVNScaleTril"),
            ("MVNCovariance", "MVNPrecision"), ("LowRankMVN", "LowRankMVN"), ("LowRankMVN", "MVNScaleTril"),
            ("MVNScaleTril", "LowRankMVN"), ("Independent", "Independent"), ("Beta", "Beta"), ("Gamma", "Gamma"),
            ("Dirichlet", "Dirichlet"), ("Uniform", "Normal"), ("Uniform", "Uniform"), ("Exponential", "Exponential"),
            ("Laplace", "Laplace"), ("Poisson", "Poisson"), ("Geometric", "Geometric"), ("Gumbel", "Gumbel"),
            ("Cauchy", "Cauchy"), ("Binomial", "Binomial"), ("LogNormal", "LogNormal"), ("HalfNormal", "HalfNormal"),
            ("Normal", "Laplace"), ("Normal", "Gumbel"), ("Laplace", "Normal"), ("Gumbel", "Normal"),
            ("Exponential", "Gamma"), ("Exponential", "Normal"), ("Exponential", "Gumbel"), ("Gamma", "Exponential"),
            ("Gamma", "Normal"), ("Gamma", "Gumbel"), ("Beta", "Normal"), ("Beta", "Gamma"), ("Beta", "Exponential"),
            ("Beta", "Uniform"), ("Uniform", "Beta"), ("Uniform", "Gamma"), ("Uniform", "Exponential"),
            ("Uniform", "Gumbel"), ("Bernoulli", "Poisson"), ("Normal", "Gamma"), ("Poisson", "Bernoulli"),
            ("Gamma", "Uniform"), ("Chi2", "Chi2")]


@pytest.mark.parametrize("pq", KL_PAIRS, ids=[f"{p}-{q}" for p, q in KL_PAIRS])
def test_kl_divergence(pq):
    cp, cq = BY_NAME[pq[0]], BY_NAME[pq[1]]
    n = len(cp.params(0))

    def fn(lib, *params):
        return D(lib).kl_divergence(cp.build(D(lib), *params[:n]), cq.build(D(lib), *params[n:]))
    check(fn, cp.params(0) + cq.params(10))


@pytest.mark.parametrize("make", [
    lambda d, t: (d.Normal(t.zeros(2), 1.0), d.Cauchy(t.zeros(2), 1.0)),
    lambda d, t: (d.Normal(0.0, 1.0), d.Bernoulli(0.3)),
    lambda d, t: (d.Independent(d.Normal(t.zeros(2), 1.0), 1), d.Normal(t.zeros(2), 1.0)),
    lambda d, t: (d.Categorical(t.ones(3)), d.Bernoulli(0.3)),
    lambda d, t: (d.MultivariateNormal(t.zeros(2), t.eye(2)), d.MultivariateNormal(t.zeros(3), t.eye(3))),
    lambda d, t: (d.TransformedDistribution(d.Normal(0.0, 1.0), d.ExpTransform()),
                  d.TransformedDistribution(d.Normal(0.0, 1.0), d.TanhTransform())),
], ids=["normal-cauchy", "expfamily", "independent-normal", "categorical-bernoulli", "mvn-events", "transforms"])
def test_kl_not_implemented(make):
    same_error(lambda lib: D(lib).kl_divergence(*make(D(lib), lib)))


def test_kl_infinite_and_register():
    def fn(lib):
        d = D(lib)
        inf_pairs = [d.kl_divergence(d.Normal(lib.zeros(2), 1.0), d.Uniform(lib.zeros(2), 1.0)),
                     d.kl_divergence(d.Uniform(lib.tensor([0.0]), lib.tensor([2.0])),
                                     d.Uniform(lib.tensor([0.5]), lib.tensor([3.0]))),
                     d.kl_divergence(d.Bernoulli(lib.tensor([0.5, 0.0])), d.Bernoulli(lib.tensor([0.0, 0.0])))]

        class MyNormal(d.Normal):
            pass

        @d.register_kl(MyNormal, MyNormal)
        def _kl(p, q):
            return lib.zeros(())
        return inf_pairs + [d.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)),
                            d.kl_divergence(MyNormal(0.0, 1.0), d.Normal(1.0, 1.0))]
    same(fn)


# ----------------------------------------------------------------------------------------------------------------
# transforms


TRANSFORMS = {
    "exp": (lambda d: d.ExpTransform(), real(3)),
    "sigmoid": (lambda d: d.SigmoidTransform(), real(3)),
    "tanh": (lambda d: d.TanhTransform(), real(3)),
    "softplus": (lambda d: d.SoftplusTransform(), real(3)),
    "affine": (lambda d: d.AffineTransform(1.5, -2.0), real(3)),
    "affine_event": (lambda d: d.AffineTransform(0.5, 3.0, event_dim=1), real(3)),
    "power": (lambda d: d.PowerTransform(2.5), pos(3)),
    "exp_inv": (lambda d: d.ExpTransform().inv, pos(3)),
    "compose": (lambda d: d.ComposeTransform([d.AffineTransform(0.1, 2.0), d.TanhTransform()]), real(3)),
    "stick_breaking": (lambda d: d.StickBreakingTransform(), real(3)),
    "independent": (lambda d: d.IndependentTransform(d.SigmoidTransform(), 1), real(3)),
    "reshape": (lambda d: d.ReshapeTransform((3,), (3, 1)), real(3)),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform(name):
    make, x = TRANSFORMS[name]

    def fn(lib, x):
        t = make(D(lib))
        y = t(x)
        return [y, t.inv(y.detach()), t.log_abs_det_jacobian(x, y), t.forward_shape(x.shape),
                t.inverse_shape(y.shape), t.domain.event_dim, t.codomain.event_dim, repr(t), t.bijective]
    check(fn, [x])


@pytest.mark.parametrize("name", ["softmax", "lower_cholesky", "positive_definite", "abs"])
def test_transform_forward_inverse(name):
    make, x = {"softmax": (lambda d: d.SoftmaxTransform(), real(3)),
               "lower_cholesky": (lambda d: d.LowerCholeskyTransform(), arr(2, 2, seed=4)),
               "positive_definite": (lambda d: d.PositiveDefiniteTransform(), arr(2, 2, seed=4)),
               "abs": (lambda d: d.AbsTransform(), real(3))}[name]
    check(lambda lib, x: [make(D(lib))(x), make(D(lib)).inv(make(D(lib))(x).detach())], [x])


def test_transform_cache_and_identity():
    def fn(lib):
        d = D(lib)
        t = d.TanhTransform(cache_size=1)
        x = lib.tensor([25.0, 0.5])
        y = t(x)
        cached = t.inv(y) is x  # the cache returns the very pre-image, even where tanh saturated
        u = d.TanhTransform()
        return [cached, u.inv(u(x)), t.with_cache(1) is t, d.ExpTransform() == d.ExpTransform(), t.sign,
                d.AffineTransform(0.0, -2.0).sign, d.AffineTransform(0.0, 2.0) == d.AffineTransform(0.0, 2.0),
                d.ExpTransform().inv.inv == d.ExpTransform(), d.identity_transform(x), t.event_dim]
    same(fn)
    same_error(lambda lib: D(lib).ExpTransform(cache_size=2))


def test_sac_tanh_normal():
    """SAC's policy: rsample, then log_prob of that very sample through the cached inverse, and gradients."""
    def fn(lib, mu, log_std):
        d = D(lib)
        base = d.Normal(mu, log_std.exp())
        pi = d.TransformedDistribution(base, [d.TanhTransform(cache_size=1)])
        u = mu.detach() * 3.0  # a fixed pre-image (torch and torchish draw different noise)
        a = lib.tanh(u)
        pi.transforms[0]._cached_x_y = (u, a)
        lp = pi.log_prob(a).sum(-1)
        return [lp, pi.batch_shape, pi.event_shape, pi.support.event_dim]
    check(fn, [arr(2, 3, seed=0), arr(2, 3, seed=1, lo=-1, hi=0.5)])


# ----------------------------------------------------------------------------------------------------------------
# constraints and biject_to / transform_to


CONSTRAINT_VALUES = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, float("nan")]], np.float32)


def test_constraints():
    def fn(lib, v):
        c = D(lib).constraints
        singles = [c.real, c.positive, c.nonnegative, c.unit_interval, c.boolean, c.nonnegative_integer,
                   c.positive_integer, c.interval(-0.5, 1.0), c.half_open_interval(0.0, 1.0), c.greater_than(0.5),
                   c.greater_than_eq(0.5), c.less_than(1.0), c.integer_interval(0, 1), c.simplex,
                   c.independent(c.positive, 1), c.real_vector, c.one_hot]
        out = [[repr(k), k.check(v), k.event_dim, k.is_discrete] for k in singles]
        m = lib.tensor([[2.0, 0.0], [1.0, 3.0]])
        mats = [c.lower_cholesky, c.lower_triangular, c.positive_definite, c.symmetric, c.square,
                c.positive_semidefinite]
        out += [[repr(k), k.check(m), k.check(m @ m.mT), k.event_dim] for k in mats]
        return out + [c.is_dependent(c.dependent), c.is_dependent(D(lib).Uniform.support), repr(c.dependent)]
    check(fn, [CONSTRAINT_VALUES], grad=False)


@pytest.mark.parametrize("which", ["biject_to", "transform_to"])
def test_biject_transform_to(which):
    def fn(lib, x):
        d = D(lib)
        c = d.constraints
        reg = getattr(d, which)
        out = []
        for k in [c.real, c.positive, c.greater_than(1.0), c.less_than(-1.0), c.interval(-2.0, 3.0), c.unit_interval,
                  c.simplex, c.independent(c.positive, 1)]:
            t = reg(k)
            y = t(x)
            out += [repr(t), y, bool(k.check(y).all())]
        if which == "transform_to":
            for k in [c.lower_cholesky, c.positive_definite]:
                y = reg(k)(x[:2].reshape(1, 2).expand(2, 2) + lib.eye(2))
                out += [y, bool(k.check(y).all())]
        return out
    check(fn, [real(5)])
    same_error(lambda lib: getattr(D(lib), which)(D(lib).constraints.one_hot))


# ----------------------------------------------------------------------------------------------------------------
# sampling. Every draw here has N samples, so that the samplers (compiled per flat block size) and the ops on samples
# compile once for the file; statistics (the streams differ from PyTorch's) are checked against the distribution's
# own moments with loose bounds — the only non-oracle checks of the file.


N = 1000
SAMPLED = ["Normal", "LogNormal", "HalfNormal", "Uniform", "Laplace", "Cauchy", "Gumbel", "Exponential", "Gamma",
           "Chi2", "StudentT", "Beta", "Dirichlet", "Bernoulli", "Geometric", "Poisson", "Binomial", "Categorical",
           "OneHotCategorical", "MVNScaleTril", "MVNCovariance", "LowRankMVN", "Independent", "MixtureSameFamily",
           "TanhNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical"]


def _sample_info(lib, case, params):
    """What PyTorch and torchish agree on for N samples: shapes, dtypes, support, gradient flags, expand."""
    lib.manual_seed(0)
    d = case.build(D(lib), *params)
    n = N // 2 if case.name in ("Beta", "Dirichlet") else N  # 2 * 3 gamma draws per sample: the same block size
    s = d.sample((n,))
    info = [s.shape, s.dtype, s.requires_grad, bool(d.support.check(s).all())]
    if d.has_rsample:
        r = d.rsample((n,))
        with lib.no_grad():
            info += [r.shape, r.dtype, r.requires_grad, d.rsample((n,)).requires_grad]
    e = d.expand((n,) + tuple(d.batch_shape))
    info += [e.sample().shape]
    return info, s, d


@pytest.mark.parametrize("name", SAMPLED)
def test_sampling(name):
    case = BY_NAME[name]
    params = case.params(0)
    tparams = [torchish.tensor(p, requires_grad=True) for p in params]
    got, s, d = _sample_info(torchish, case, tparams)
    if torch is not None:
        ref, _, _ = _sample_info(torch, case, [torch.tensor(p, requires_grad=True) for p in params])
        assert_same(ref, got)
    if d.has_rsample:  # reparameterised: gradients reach every parameter
        d.rsample((len(s),)).sum().backward()
        for p in tparams:
            assert p.grad is not None and bool(torchish.isfinite(p.grad).all()), (name, p.grad)
    if name in ("Cauchy", "TanhNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical"):
        return  # no finite moments / no closed-form moments
    x = s.double().numpy()
    if name == "Categorical":  # frequencies of each category
        freq = np.stack([(x == k).mean(0) for k in range(3)], -1)
        np.testing.assert_allclose(freq, d.probs.detach().numpy(), atol=0.05)
        return
    mean, var = d.mean.detach().double().numpy(), d.variance.detach().double().numpy()
    sd = np.sqrt(np.where(np.isfinite(var), var, 1.0))
    ok = np.isfinite(var)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean)[ok], (0.2 * sd + 1e-3)[ok])
    ok &= var < 5  # the sample variance of heavy tails converges too slowly for N samples
    np.testing.assert_allclose(x.var(0)[ok], var[ok], rtol=0.3, atol=1e-3)


def test_gamma_reparameterised_gradient_statistics():
    """d E[x] / d alpha = 1 / rate and d E[x] / d rate = -alpha / rate^2 for x ~ Gamma(alpha, rate): the averaged
    implicit-reparameterisation gradients of many samples match; for the Beta, d E[x] / d a = b / (a + b)^2."""
    torchish.manual_seed(1)
    alpha = torchish.tensor([0.5, 2.0, 5.0], requires_grad=True)
    rate = torchish.tensor([1.0, 2.0, 0.5], requires_grad=True)
    torchish.distributions.Gamma(alpha, rate).rsample((N,)).mean(0).sum().backward()
    np.testing.assert_allclose(alpha.grad.numpy(), 1 / rate.detach().numpy(), rtol=0.15)
    np.testing.assert_allclose(rate.grad.numpy(), -alpha.detach().numpy() / rate.detach().numpy() ** 2, rtol=0.15)
    a = torchish.tensor([2.0, 1.0, 4.0], requires_grad=True)
    b = torchish.tensor([3.0, 1.0, 0.5])
    torchish.distributions.Beta(a, b).rsample((N // 2,)).mean(0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), (b / (a.detach() + b) ** 2).numpy(), rtol=0.15)


def test_sample_n_and_generator_state():
    torchish.manual_seed(3)
    a = torchish.distributions.Normal(torchish.zeros(2), 1.0).sample((5,))
    torchish.manual_seed(3)
    with pytest.warns(FutureWarning):
        b = torchish.distributions.Normal(torchish.zeros(2), 1.0).sample_n(5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_straight_through_and_perplexity():
    def fn(lib, p):
        d = D(lib).OneHotCategoricalStraightThrough(p)
        r = d.rsample((2,))  # one-hot samples (which ones differs), the gradient of the probabilities
        return [r.shape, r.sum(-1), d.perplexity()]
    check(fn, [arr(2, 3, seed=0, lo=0.2, hi=1.0)])


# ----------------------------------------------------------------------------------------------------------------
# execution paths


def test_under_compile():
    """rsample + log_prob + KL (and gamma, categorical, Bernoulli draws) inside torchish.compile: one program,
    fresh noise on every call."""
    d = torchish.distributions
    mu = torchish.zeros(3, requires_grad=True)

    @torchish.compile(fullgraph=True)  # argument validation and sampling must not break the graph
    def step(mu):
        p = d.Normal(mu, torchish.ones(3))
        x = p.rsample()
        g = d.Gamma(mu.exp(), 1.0).rsample()
        c = d.Categorical(logits=mu)
        extra = (c.log_prob(c.sample()) + d.Bernoulli(logits=mu).sample().sum() + g.sum()) * 0.0
        return p.log_prob(x).sum() + d.kl_divergence(p, d.Normal(torchish.ones(3), 2.0)).sum() + extra, x

    outs = [step(mu) for _ in range(3)]
    for loss, x in outs:
        ref = d.Normal(mu, torchish.ones(3)).log_prob(x).sum() + d.kl_divergence(
            d.Normal(mu, torchish.ones(3)), d.Normal(torchish.ones(3), 2.0)).sum()
        np.testing.assert_allclose(loss.item(), ref.item(), rtol=1e-5)
    assert not np.allclose(outs[1][1].detach().numpy(), outs[2][1].detach().numpy())


def test_lazy_mode():
    d = torchish.distributions
    torchish.config.lazy = True
    try:
        a = torchish.tensor([0.5, 2.0, 1.0], requires_grad=True)
        g = d.Normal(a, torchish.tensor([1.0, 1.0, 2.0]))
        lp = g.log_prob(g.rsample()).sum() + d.kl_divergence(g, d.Normal(0.0, 1.0)).sum()
        lp.backward()
        assert a.grad is not None and tuple(a.grad.shape) == (3,)
    finally:
        torchish.config.lazy = False


def test_module_paths():
    """PyTorch's per-class module paths import."""
    from torchish.distributions.uniform import Uniform
    from torchish.distributions.one_hot_categorical import OneHotCategorical
    from torchish.distributions.relaxed_categorical import RelaxedOneHotCategorical
    import torchish.distributions.exp_family as exp_family
    d = torchish.distributions
    assert (Uniform, OneHotCategorical, RelaxedOneHotCategorical) == (d.Uniform, d.OneHotCategorical,
                                                                     d.RelaxedOneHotCategorical)
    assert exp_family.ExponentialFamily is d.ExponentialFamily and d.normal.Normal is d.Normal


def test_math_sanity():
    """A few closed forms independent of PyTorch."""
    d = torchish.distributions
    assert math.isclose(d.Normal(0.0, 1.0).log_prob(torchish.tensor(0.0)).item(), -0.5 * math.log(2 * math.pi),
                        rel_tol=1e-6)
    assert math.isclose(d.Exponential(2.0).entropy().item(), 1 - math.log(2.0), rel_tol=1e-6)
    ref, got = run_both(lambda lib: D(lib).Normal(0.0, 1.0).perplexity())
    assert_same(ref, got)
