"""``grad_mode.UNUSUAL``: the op dispatch reads the per-thread flags for inference mode, anomaly mode, tracing and
compile's recorder only while some thread has one set. These tests pin the count and what ops see, per thread."""
import threading

import pytest

from oracle import torch as real_torch, torchish
from torchish.autograd.grad_mode import STATE, UNUSUAL


def _flags_now():
    return STATE.tracing + (STATE.recorder is not None) + bool(STATE.inference) + bool(STATE.anomaly)


def _in_thread_while(lib, enter, body):
    """Run ``body(lib)`` on this thread while another thread sits inside ``enter(lib)``; returns
    ``(body's result, what the other thread saw)``."""
    inside, done, seen = threading.Event(), threading.Event(), {}

    def other():
        with enter(lib):
            seen["inference"] = lib.ones(2).is_inference()
            inside.set()
            done.wait(30)

    t = threading.Thread(target=other)
    t.start()
    assert inside.wait(30)
    try:
        out = body(lib)
    finally:
        done.set()
        t.join(30)
    return out, seen


def _ops(lib):
    x = lib.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    return x.grad.tolist(), y.requires_grad, y.grad_fn.name(), lib.ones(2).is_inference()


@pytest.mark.parametrize("lib", ["torchish", "torch"])
def test_another_threads_inference_mode_leaves_this_thread_recording(lib):
    if lib == "torch" and real_torch is None:
        pytest.skip("torch not installed")
    mod = torchish if lib == "torchish" else real_torch
    out, seen = _in_thread_while(mod, lambda m: m.inference_mode(), _ops)
    assert out == ([2.0, 2.0, 2.0], True, "SumBackward0", False)
    assert seen == {"inference": True}


def test_this_threads_inference_mode_is_seen_while_another_thread_has_none():
    assert UNUSUAL[0] == _flags_now()
    with torchish.inference_mode():
        assert UNUSUAL[0] == _flags_now() and STATE.inference
        t = torchish.ones(2, requires_grad=False) * 3
        assert t.is_inference()
        x = torchish.ones(2, requires_grad=True)
        assert not (x * 2).requires_grad  # (grad is off in inference mode, as PyTorch)
    assert not (torchish.ones(2) * 3).is_inference()


def test_anomaly_mode_of_another_thread_does_not_trace_this_threads_nodes():
    def body(lib):
        x = lib.ones(2, requires_grad=True)
        return (x * 2).grad_fn._trace

    trace, _ = _in_thread_while(torchish, lambda m: m.autograd.set_detect_anomaly(True), body)
    assert trace is None
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torchish.autograd.detect_anomaly():
            x = torchish.ones(2, requires_grad=True)
            assert (x * 2).grad_fn._trace  # (the forward's traceback, for the error a NaN in backward raises)


def test_the_count_comes_back_after_errors_inside_each_kind_of_block():
    base = UNUSUAL[0]
    with pytest.raises(ValueError):
        with torchish.inference_mode():
            raise ValueError
    with pytest.raises(ValueError), pytest.warns(UserWarning):
        with torchish.autograd.detect_anomaly():
            raise ValueError

    @torchish.compile
    def step(x):
        if x.sum() > 0:  # (a graph break; the eager run it falls back to still counts right)
            return x * 2
        return x

    for _ in range(3):
        step(torchish.ones(2))
    with pytest.raises(RuntimeError):
        torchish.func.grad(lambda x: (x * x).sum().item() * x)(torchish.ones(2))
    assert UNUSUAL[0] == base


def test_set_detect_anomaly_as_a_function_counts_once_per_change():
    base = UNUSUAL[0]
    torchish.autograd.set_detect_anomaly(True)
    torchish.autograd.set_detect_anomaly(True)
    try:
        assert UNUSUAL[0] == base + 1
    finally:
        torchish.autograd.set_detect_anomaly(False)
    assert UNUSUAL[0] == base
    torchish.autograd.set_detect_anomaly(False)
    assert UNUSUAL[0] == base
