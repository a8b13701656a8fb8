"""CatTransform, StackTransform, CorrCholeskyTransform and their constraint-registry entries, against PyTorch."""
from __future__ import annotations

import pytest

from oracle import arr, check, same, same_error, torch, torchish  # noqa: F401

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")


def D(lib):
    return lib.distributions


def _event_dim(t):
    try:
        return t.event_dim
    except ValueError as e:  # CorrCholeskyTransform: domain and codomain event dims differ
        return str(e)


def _cat(d, dim=0):
    return d.CatTransform([d.ExpTransform(), d.identity_transform, d.SigmoidTransform()], dim=dim, lengths=[2, 1, 3])


def _cat_event(d):
    # parts with event_dim 1 and 0 along the last dim: the log-det is summed, not concatenated
    return d.CatTransform([d.IndependentTransform(d.SigmoidTransform(), 1), d.ExpTransform()], dim=-1, lengths=[2, 3])


def _stack(d, dim=0):
    return d.StackTransform([d.ExpTransform(), d.TanhTransform(), d.AffineTransform(1.0, 2.0)], dim=dim)


CASES = {
    "cat0": (_cat, arr(6, 2, seed=1)),
    "cat_neg": (lambda d: _cat(d, dim=-1), arr(2, 6, seed=2)),
    "cat_event": (_cat_event, arr(2, 5, seed=3)),
    "stack0": (_stack, arr(3, 2, seed=4)),
    "stack1": (lambda d: _stack(d, dim=1), arr(2, 3, seed=5)),
    "corr_chol": (lambda d: d.CorrCholeskyTransform(), arr(2, 6, seed=6, lo=-2.0, hi=2.0)),
    "corr_chol_2": (lambda d: d.CorrCholeskyTransform(), arr(4, 1, seed=8)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_logdet_gradients(name):
    make, x = CASES[name]

    def fn(lib, x):
        t = make(D(lib))
        y = t(x)
        return [y, t.inv(y), t.log_abs_det_jacobian(x, y), t.bijective, _event_dim(t),
                t.domain.event_dim, t.codomain.event_dim, repr(t)]
    check(fn, [x], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_round_trip_and_codomain(name):
    make, x = CASES[name]

    def fn(lib, x):
        t = make(D(lib))
        y = t(x)
        if name == "cat_event":  # torch's cat constraint cannot check parts of different event dims
            return [t.inv(y.detach())]
        return [t.inv(y.detach()), t.codomain.check(y.detach()), t.domain.check(x)]
    check(fn, [x], grad=False, rtol=1e-5, atol=1e-5)


def test_corr_cholesky_shapes_and_errors():
    def fn(lib):
        t = D(lib).CorrCholeskyTransform()
        return [t.forward_shape((2, 6)), t.inverse_shape((2, 4, 4)), t.forward_shape((0,)), t.inverse_shape((1, 1))]
    same(fn)
    same_error(lambda lib: D(lib).CorrCholeskyTransform().forward_shape((5,)))
    same_error(lambda lib: D(lib).CorrCholeskyTransform().forward_shape(()))
    same_error(lambda lib: D(lib).CorrCholeskyTransform().inverse_shape((3, 4)))
    same_error(lambda lib: D(lib).CorrCholeskyTransform().inverse_shape((3,)))


def test_constructor_and_call_errors():
    same_error(lambda lib: D(lib).CatTransform([D(lib).ExpTransform()], lengths=[1, 2]))
    same_error(lambda lib: D(lib).CatTransform([D(lib).ExpTransform(), 3]))
    same_error(lambda lib: D(lib).StackTransform([lambda x: x]))
    same_error(lambda lib: _cat(D(lib))(lib.zeros(5)))
    same_error(lambda lib: _cat(D(lib), dim=2)(lib.zeros(6)))
    same_error(lambda lib: _cat(D(lib)).inv(lib.zeros(4)))
    same_error(lambda lib: _cat(D(lib)).log_abs_det_jacobian(lib.zeros(6), lib.zeros(4)))
    same_error(lambda lib: _stack(D(lib))(lib.zeros(2)))
    same_error(lambda lib: _stack(D(lib), dim=-3)(lib.zeros(3)))
    same_error(lambda lib: _stack(D(lib)).inv(lib.zeros(4)))
    same_error(lambda lib: _stack(D(lib)).log_abs_det_jacobian(lib.zeros(3), lib.zeros(2)))
    same_error(lambda lib: D(lib).CatTransform([], cache_size=2))


def test_cache_and_identity():
    def fn(lib):
        d = D(lib)
        x = lib.tensor([0.5, -1.0, 2.0, 0.1, 0.2, 0.3])
        out = []
        for make in (_cat, _stack, lambda d: d.CorrCholeskyTransform()):
            t = make(d)
            c = t.with_cache(1)
            xx = x if make is not _stack else x[:3]
            y = c(xx)
            out += [t.with_cache(0) is t, c is not t, type(c).__name__, c._cache_size, c.inv(y) is xx, c(xx) is y,
                    t == t, t == make(d), t.inv.inv is t]
            if hasattr(c, "transforms"):
                out += [[p._cache_size for p in c.transforms], c.dim]
        cat = _cat(d)
        out += [cat.lengths, cat.length, cat.dim, d.CatTransform([d.ExpTransform()]).lengths]
        return out
    same(fn)


def test_registry():
    def fn(lib):
        d = D(lib)
        c = d.constraints
        out = []
        for reg in (d.biject_to, d.transform_to):
            t = reg(c.corr_cholesky)
            out += [type(t).__name__, t.domain.event_dim, t.codomain.event_dim]
            cat = reg(c.cat([c.positive, c.real, c.unit_interval], dim=-1, lengths=[2, 1, 1]))
            st = reg(c.stack([c.positive, c.greater_than(1.0)], dim=0))
            out += [type(cat).__name__, [type(p).__name__ for p in cat.transforms], cat.dim, cat.lengths,
                    type(st).__name__, [type(p).__name__ for p in st.transforms], st.dim, cat.event_dim]
            x = lib.tensor([[0.3, -0.2, 1.5, 0.7]])
            y = cat(x)
            out += [y, cat.log_abs_det_jacobian(x, y), cat.codomain.check(y)]
            z = lib.tensor([[0.2, -0.3, 0.4], [0.1, 0.5, -0.6]])
            w = st(z)
            out += [w, st.log_abs_det_jacobian(z, w), st.inv(w)]
        return out
    same(fn, rtol=1e-5, atol=1e-6)


def test_registry_stack_transform_to():
    def fn(lib, x):
        d = D(lib)
        c = d.constraints
        t = d.transform_to(c.stack([c.positive, c.real, c.interval(-1.0, 2.0)], dim=-1))
        y = t(x)
        return [y, t.log_abs_det_jacobian(x, y), t.inv(y)]
    check(fn, [arr(2, 3, seed=9)], rtol=1e-5, atol=1e-5)


def test_corr_cholesky_in_transformed_distribution():
    def fn(lib, x):
        d = D(lib)
        base = d.Independent(d.Normal(lib.zeros(3), lib.ones(3)), 1)
        td = d.TransformedDistribution(base, [d.CorrCholeskyTransform()])
        y = d.CorrCholeskyTransform()(x)
        return [td.log_prob(y), td.event_shape]
    check(fn, [arr(2, 3, seed=10, lo=-1.0, hi=1.0)], rtol=1e-4, atol=1e-5)


def test_exports():
    import torchish.distributions as tdist
    import torchish.distributions.transforms as tt
    for name in ("CatTransform", "StackTransform", "CorrCholeskyTransform"):
        assert name in tt.__all__ and name in tdist.__all__
        assert getattr(tdist, name) is getattr(tt, name)
