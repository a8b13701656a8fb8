"""Lazy capture's pending segment (``torchish/ops/lazy.py``): what records between two materialisations runs as one
program, dead work is dropped, and a failed record leaves the segment usable. Values are checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import torchish
from torchish.ops import lazy


@pytest.fixture
def lazy_mode():
    saved = torchish.config.lazy
    lazy.materialize()  # start from an empty segment
    torchish.config.lazy = True
    try:
        yield
    finally:
        lazy.materialize()
        torchish.config.lazy = saved


X = np.linspace(-1, 1, 6, dtype=np.float32)


def test_reading_one_value_runs_everything_pending(lazy_mode):
    x = torchish.tensor(X)
    a = (x * 2).sin()
    b = (x + 1).exp()
    before = lazy.STATS["materialisations"]
    np.testing.assert_allclose(a.numpy(), np.sin(X * 2), rtol=1e-6)
    assert type(b._v) is not lazy.LazyValue  # computed by the same program
    np.testing.assert_allclose(b.numpy(), np.exp(X + 1), rtol=1e-6)
    assert lazy.STATS["materialisations"] == before + 1
    assert not lazy._SEG.calls


def test_dead_calls_are_dropped_from_a_long_segment(lazy_mode, monkeypatch):
    monkeypatch.setattr(lazy, "MAX_PENDING", 16)
    monkeypatch.setattr(lazy._SEG, "limit", 16)
    x = torchish.tensor(X)
    kept = x * 3
    for i in range(200):  # results thrown away: the segment must not keep them
        (x + float(i)).tanh()
    assert len(lazy._SEG.calls) <= 2 * 16
    total = kept
    runs = lazy.STATS["materialisations"]
    for i in range(40):  # results that stay needed survive the compaction; a segment still long runs
        total = total + x * float(i)
    assert len(lazy._SEG.calls) <= 16 and lazy.STATS["materialisations"] > runs
    np.testing.assert_allclose(total.numpy(), X * 3 + X * sum(range(40)), rtol=1e-5)
    np.testing.assert_allclose(kept.numpy(), X * 3, rtol=1e-6)


def test_a_failed_record_leaves_the_segment_usable(lazy_mode):
    x = torchish.tensor(X)
    y = x * 2.5 + 1
    with pytest.raises(RuntimeError, match="must match the size"):
        x + torchish.ones(4)  # shape error raised at the line that caused it
    z = y - 0.5
    np.testing.assert_allclose(z.numpy(), X * 2.5 + 0.5, rtol=1e-6)


def test_a_changing_python_scalar_gives_each_run_its_value(lazy_mode):
    x = torchish.tensor(X)
    for s in (0.5, 0.5, 2.0, -3.0):
        np.testing.assert_allclose((x * s + s).numpy(), X * s + s, rtol=1e-6)


def test_one_input_array_used_twice_is_one_leaf(lazy_mode):
    x = torchish.tensor(X)
    y = x * x + x
    assert len(lazy._SEG.leaves) == 1
    np.testing.assert_allclose(y.numpy(), X * X + X, rtol=1e-6)


def test_a_new_structure_runs_op_by_op_and_a_repeated_one_compiles(lazy_mode):
    x = torchish.tensor(X)

    def step(s):
        return ((x * s).sin() + x).sum()
    before = dict(lazy.STATS)
    values = [step(1.25).item() for _ in range(4)]
    assert lazy.STATS["op_by_op"] == before["op_by_op"] + 1  # the first sighting
    assert lazy.STATS["programs_compiled"] <= before["programs_compiled"] + 1
    np.testing.assert_allclose(values, [np.sum(np.sin(X * 1.25) + X)] * 4, rtol=1e-6)


@pytest.mark.parametrize("choice", ["never", "always"])
def test_lazy_compile_can_be_forced(lazy_mode, choice):
    saved = torchish.config.lazy_compile
    torchish.config.lazy_compile = choice
    try:
        x = torchish.tensor(X)
        before = dict(lazy.STATS)
        got = [((x * 3.5).tanh() - 0.25).numpy() for _ in range(3)]
        ran = lazy.STATS["op_by_op"] - before["op_by_op"]
        assert ran == (3 if choice == "never" else 0)
        for g in got:
            np.testing.assert_allclose(g, np.tanh(X * 3.5) - 0.25, rtol=1e-6)
    finally:
        torchish.config.lazy_compile = saved
    with pytest.raises(ValueError, match="lazy_compile must be one of"):
        torchish.config.lazy_compile = "sometimes"


def test_threads_record_into_the_segment_safely(lazy_mode):
    import threading
    results, errors = {}, []

    def work(k):
        try:
            x = torchish.tensor(X + k)
            acc = x
            for i in range(60):
                acc = acc * 0.5 + x
            results[k] = acc.numpy()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        ref = X + k
        acc = ref.copy()
        for _ in range(60):
            acc = acc * np.float32(0.5) + ref
        np.testing.assert_allclose(results[k], acc, rtol=1e-5)


def test_eager_ops_take_values_left_pending_by_lazy_capture(lazy_mode):
    """Turning lazy capture off with values still pending: eager ops (the fast path hands them to jit, which
    refuses them) run what is pending first, and autograd through both parts is right."""
    w = torchish.tensor(X, requires_grad=True)
    pending = (w * 3).sin()
    torchish.config.lazy = False
    assert type(pending._v) is lazy.LazyValue
    out = pending * 2 + torchish.tensor(X)  # two eager ops on a pending input
    assert type(pending._v) is not lazy.LazyValue
    np.testing.assert_allclose(out.detach().numpy(), 2 * np.sin(3 * X) + X, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 6 * np.cos(3 * X), rtol=1e-5)
