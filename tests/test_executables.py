"""The bound on compiled executables kept alive (torchish/_executables.py), run with a lowered limit so that it
clears JAX's kernel caches several times within one short program."""
import jax
import numpy as np
import pytest

import torchish
from torchish import _executables

pytestmark = pytest.mark.skipif(_executables.map_count() is None, reason="needs /proc/self/maps")


@pytest.fixture(autouse=True)
def clears_now(monkeypatch):
    """These tests see clears as programs do, not deferred to the test's end as the suite's other tests do."""
    monkeypatch.setitem(_executables._state, "deferred", 0)


@pytest.fixture
def low_limit(monkeypatch):
    monkeypatch.setattr(_executables, "CHECK_EVERY", 8)
    previous = _executables.set_limit(1)  # every check finds the mappings past FRACTION of the limit
    yield
    _executables.set_limit(previous)


def test_eager_ops_backward_and_compiled_functions_survive_the_caches_being_dropped(low_limit):
    lin = torchish.nn.Linear(3, 2)
    with torchish.no_grad():
        lin.weight.copy_(torchish.arange(6.0).reshape(2, 3) / 10)
        lin.bias.fill_(0.5)

    @torchish.compile
    def step(x):
        return lin(x).sum()

    before, maps = _executables.stats(), _executables.map_count()
    for n in range(1, 41):  # 40 new shapes: eager forward, its backward, and a compiled program per shape
        x = torchish.arange(float(n), requires_grad=True)
        y = (x * 2 + 1).sin().sum()
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * np.arange(n) + 1), rtol=1e-6, atol=1e-6)
        if n % 5 == 0:
            out = step(torchish.ones(n, 3))
            assert out.item() == pytest.approx(n * (0.3 + 1.2 + 2 * 0.5), rel=1e-6)
    after = _executables.stats()
    assert after["compiles"] - before["compiles"] >= 80
    assert after["clears"] - before["clears"] >= (after["compiles"] - before["compiles"]) // 8 - 1
    # each executable kept alive holds about three mappings on XLA:CPU; dropped every 8 compiles, they do not pile up
    assert _executables.map_count() - maps < (after["compiles"] - before["compiles"]) // 2
    # the compiled function's program outlives the clears: calling it again with a seen shape compiles nothing
    step(torchish.ones(5, 3))
    compiles = _executables.stats()["compiles"]
    assert step(torchish.ones(5, 3)).item() == pytest.approx(5 * 2.5, rel=1e-6)
    assert _executables.stats()["compiles"] == compiles


def test_the_clear_waits_for_the_trace_in_progress(low_limit, monkeypatch):
    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(True))
    monkeypatch.setattr(_executables, "CHECK_EVERY", 1)
    event = "/jax/core/compile/backend_compile_duration"

    def traced(x):
        _executables._on_duration(event, 0.01)  # a compile seen while this function is being traced
        return x + 1

    jax.jit(traced).lower(1.0)
    assert cleared == [] and _executables._state["pending"]
    _executables._on_duration("/jax/some/other/event", 0.01)
    assert cleared == []
    _executables._on_duration(event, 0.01)  # the first compile after the trace clears
    assert cleared == [True] and not _executables._state["pending"]


def test_a_clear_forgets_which_backward_kernels_ran(monkeypatch):
    """The lowered backward's record of compiled node kernels (autograd/lowering.py) goes with JAX's caches."""
    from torchish.autograd import lowering
    lowering._COMPILED.add(("a node's signature",))  # (as a node-by-node first sighting notes its nodes)
    monkeypatch.setattr(jax, "clear_caches", lambda: None)
    monkeypatch.setattr(_executables, "CHECK_EVERY", 1)
    monkeypatch.setitem(_executables._state, "limit", 1)
    _executables._on_duration("/jax/core/compile/backend_compile_duration", 0.01)
    assert not lowering._COMPILED


def test_without_a_limit_nothing_is_cleared(monkeypatch):
    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(True))
    monkeypatch.setattr(_executables, "CHECK_EVERY", 1)
    monkeypatch.setitem(_executables._state, "limit", None)
    _executables._on_duration("/jax/core/compile/backend_compile_duration", 0.01)
    assert cleared == []
    monkeypatch.setitem(_executables._state, "limit", 10 ** 9)  # far above this process's mappings
    _executables._on_duration("/jax/core/compile/backend_compile_duration", 0.01)
    assert cleared == []


def test_a_clear_due_in_a_deferred_block_happens_at_its_end(low_limit, monkeypatch):
    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(True))
    monkeypatch.setattr(_executables, "CHECK_EVERY", 1)
    event = "/jax/core/compile/backend_compile_duration"
    with _executables.deferred():
        with _executables.deferred():
            _executables._on_duration(event, 0.01)
            _executables._on_duration(event, 0.01)
        assert cleared == [] and _executables._state["pending"]  # (the outer block still runs)
    assert cleared == [True] and not _executables._state["pending"]
