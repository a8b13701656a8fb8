"""torchish.compile's value checks evaluated with numpy on the host (``compile.host_eval``) instead of a program
dispatched behind the running step: the numpy evaluation must give exactly what XLA gives, refuse what it cannot
match, and the compiled calls must raise the same errors on either path."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchish
from torchish.compile import checks, host_eval


def _host(fn, *args):
    closed = jax.make_jaxpr(fn)(*args)
    return host_eval.build(closed.jaxpr, closed.consts)([np.asarray(a) for a in args])


INTS = np.array([[3, -7, 0, 12], [5, 9, -1, -12]], np.int64)
FLOATS = np.array([0.5, -0.0, np.nan, np.inf, -3.0, 2.5e-38], np.float32)

SAME_AS_XLA = {
    "compare": (lambda a: [a < 3, a >= -1, a == 0, a != 5, a > 2, a <= 9], INTS),
    "logic": (lambda a: [(a > 0) & (a < 9) | ~(a == 3), (a > 0) ^ (a < 5), ~a], INTS),
    "int arithmetic": (lambda a: [a + 3, a - 100, a * -2, -a, jnp.abs(a), jnp.sign(a), jnp.maximum(a, 1),
                                  jnp.minimum(a, 0), jnp.clip(a, -5, 5)], INTS),
    "remainder": (lambda a: [a % 5, a % -5, jnp.fmod(a, 4)], INTS),
    "reductions": (lambda a: [jnp.any(a > 10), jnp.all(a > -20, axis=1), a.max(0), a.min(1), a.sum(), a.sum(1)],
                   INTS),
    "argmax of a mask": (lambda a: [jnp.argmax(a.ravel() < 0), jnp.argmax(a > 100, axis=1),
                                    jnp.argmin(a, axis=0)], INTS),
    "select": (lambda a: [jnp.where(a > 0, a, -a), jax.lax.select_n(a[0] > 0, a[0], a[1])], INTS),
    "dynamic_slice clamps": (lambda a: [jax.lax.dynamic_slice(a.ravel(), (jnp.int64(6),), (4,)),
                                        jax.lax.dynamic_slice(a, (jnp.int64(-3), jnp.int64(1)), (1, 2)),
                                        a.ravel()[jnp.argmax(a.ravel() > 8)]], INTS),
    "shapes": (lambda a: [a.T, a.reshape(4, 2), a[None].squeeze(0), jnp.broadcast_to(a[:, :1], (2, 4)),
                          jnp.concatenate([a, a], 1), jnp.stack([a, a]), jnp.arange(6).reshape(2, 3) + a[0, 0]],
               INTS),
    "converts": (lambda a: [a.astype(jnp.float32), a.astype(jnp.bool_), (a > 0).astype(jnp.int32),
                            a.astype(jnp.int32)], INTS),
    "floats compared": (lambda x: [x < 0, x >= 0, x == x, jnp.isfinite(x), ~((x >= 0) & (x <= 1)),
                                   x.astype(jnp.float64)], FLOATS),
    "nested jit": (lambda a: [jax.jit(lambda b: jnp.where(b > 3, b, 3))(a)], INTS),
}


@pytest.mark.parametrize("name", list(SAME_AS_XLA))
def test_numpy_evaluation_equals_xla(name):
    fn, x = SAME_AS_XLA[name]
    want = [np.asarray(w) for w in fn(jnp.asarray(x))]  # (torchish turns on jax_enable_x64)
    got = _host(fn, x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fn,x", [
    (lambda x: x + 1.0, FLOATS),                    # floating-point arithmetic: XLA's own rounding, flushing
    (lambda x: jnp.sin(x), FLOATS),                 # (not listed at all)
    (lambda x: x.astype(jnp.int32), FLOATS),        # float -> int truncation
    (lambda x: jnp.argmax(x), FLOATS),              # NaN rule of argmax on floats
    (lambda a: a.sum(), FLOATS),                    # float summation order
])
def test_what_numpy_cannot_match_is_refused(fn, x):
    with pytest.raises(host_eval.Unsupported):
        _host(fn, x)


def test_integer_remainder_by_zero_is_left_to_xla():
    with pytest.raises(host_eval.Unsupported):
        _host(lambda a, b: jax.lax.rem(a, b), INTS, np.zeros_like(INTS))


# ---------------------------------------------------------------------------------------------------------------
# compiled calls: the same outcomes on the host path and on the program path


def _outcome(f, *args):
    try:
        out = f(*args)
    except Exception as e:  # noqa: BLE001  (the outcome compared is the exception's type and message)
        return type(e).__name__, str(e)
    return np.asarray(out.detach().numpy())


def _cases():
    F = torchish.nn.functional
    T = torchish.tensor
    x = T(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    return {
        "cross_entropy": (lambda y: F.cross_entropy(x, y), [T([0, 3, 1]), T([0, 4, 1]), T([-1, 0, 0])]),
        "nll ignore_index": (lambda y: F.nll_loss(x, y, ignore_index=-100),
                             [T([0, -100, 1]), T([0, -100, 7]), T([-3, 0, 0])]),
        "embedding": (lambda i: F.embedding(i, x), [T([[0, 2], [1, 1]]), T([[0, 3], [1, 1]]), T([[0, -1]])]),
        "gather": (lambda i: x.gather(1, i), [T([[0], [3], [2]]), T([[0], [4], [2]]), T([[0], [-5], [2]])]),
        "index": (lambda i: x[i], [T([2, 0, -3]), T([1, 3]), T([-4])]),
        "index_select": (lambda i: x.index_select(1, i), [T([3, 0]), T([4]), T([-1])]),
        "one_hot": (lambda y: F.one_hot(y, 4).sum(0), [T([0, 3]), T([0, 4]), T([-1, 2])]),
        "bce target": (lambda t: F.binary_cross_entropy(torchish.full((3, 4), 0.25), t),
                       [torchish.full((3, 4), 0.5), torchish.full((3, 4), 1.5), -torchish.ones(3, 4)]),
        # (the input's check reads sigmoid(x), floating-point maths numpy does not evaluate: the program decides)
        "bce input computed": (lambda p: F.binary_cross_entropy(p.sigmoid() * 2, torchish.full((3, 4), 0.5)),
                               [x, x + 1, x - 1]),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_compiled_checks_raise_alike_on_both_paths(name, monkeypatch):
    used = []
    on_host = checks._on_host

    def spy(host, vals):
        out = on_host(host, vals)
        used.append(out is not None)
        return out
    monkeypatch.setattr(checks, "_on_host", spy)
    results = {}
    for path in ("host", "program"):
        if path == "program":
            monkeypatch.setattr(checks, "_on_host", lambda host, vals: None)
        fn, inputs = _cases()[name]
        f = torchish.compile(fn)
        eager = [_outcome(fn, i) for i in inputs]
        # (a first call records, the second traces: the checks' program runs from the third on)
        results[path] = [_outcome(f, i) for i in [inputs[0]] * 2 + inputs]
        for got, want in zip(results[path][2:], eager):
            if isinstance(want, tuple):
                assert got == want, (path, got, want)
            else:
                np.testing.assert_array_equal(got, want)
    assert used and all(used) == (name != "bce input computed"), used
    assert [str(r) for r in results["host"]] == [str(r) for r in results["program"]]


def test_denormal_targets_are_checked_as_in_eager_mode_and_pytorch():
    """XLA:CPU reads float denormals as zero; the host check reads them as PyTorch and torchish's eager check do."""
    F = torchish.nn.functional
    p = torchish.full((2,), 0.25)
    f = torchish.compile(lambda t: F.binary_cross_entropy(p, t))
    ok = torchish.full((2,), 0.5)
    bad = torchish.tensor([0.5, -1e-40])
    want = _outcome(lambda t: F.binary_cross_entropy(p, t), bad)
    assert want == ("RuntimeError", "all elements of target should be between 0 and 1")
    assert [_outcome(f, t) for t in (ok, ok, bad)][2] == want


def test_python_number_inputs_take_the_programs_dtype():
    """A number passed where the jaxpr takes float32 is compared in float32 (numpy would use float64)."""
    closed = jax.make_jaxpr(lambda x, s: s < x)(np.float32(0.1), np.float32(0.1))
    # 0.1 as float32 is 0.100000001490116...; the float64 0.1 is below that, so a float64 comparison says True
    assert not host_eval.build(closed.jaxpr, closed.consts)([np.float32(0.1), 0.1])[0]


@pytest.mark.parametrize("name,fn,good,bad", [
    ("multinomial < 0", lambda T, p: T.multinomial(p, 2), [[0.2, 0.3, 0.5]], [[0.2, -0.3, 0.5]]),
    ("multinomial nan", lambda T, p: T.multinomial(p, 2), [[0.2, 0.3, 0.5]], [[float("nan"), 0.3, 0.5]]),
    ("multinomial sum 0", lambda T, p: T.multinomial(p, 1), [[0.2, 0.3], [1.0, 0.0]], [[0.2, 0.3], [0.0, 0.0]]),
    ("bernoulli p > 1", lambda T, p: T.bernoulli(p), [0.2, 0.9], [0.2, 1.5]),
    ("poisson rate < 0", lambda T, p: T.poisson(p), [0.2, 0.9], [-0.2, 0.9]),
    ("normal std < 0", lambda T, p: T.normal(T.zeros(2), p), [0.2, 0.9], [0.2, -0.9]),
])
def test_sampling_value_checks_in_a_compiled_call(name, fn, good, bad):
    """The probability checks of the samplers raise PyTorch's error from a compiled call too (the check runs before
    the program; before, a compiled call sampled from invalid probabilities)."""
    from oracle import check_raises
    err = check_raises(lambda T: fn(T, T.tensor(bad)))
    f = torchish.compile(lambda p: fn(torchish, p))
    for _ in range(3):
        f(torchish.tensor(good))
    assert f.stats["compiled_calls"] >= 1
    with pytest.raises(type(err)) as got:
        f(torchish.tensor(bad))
    assert str(got.value) == str(err)
