"""Regressions found by probing torchish.compile against PyTorch (the identity as ``jit``): a ``.grad`` replaced
between calls, programs kept per guard (gradient accumulation, train/eval switches), module modes set inside the
function, and Python side effects a program cannot repeat (tensors stored away, a scheduler stepped inside), which
run correctly: the traced call gives the stored tensors their values and later calls run eagerly, with a warning.
"""
import warnings

import numpy as np
import pytest

import torchish
from oracle import arr, needs_torch, torch

pytestmark = needs_torch


def _both(case):
    """``case(T, jit)`` with PyTorch (identity) and torchish (``torchish.compile``, whose CompiledFunctions are
    collected); returns the two results as numpy trees and the compiled functions."""
    made = []

    def jit(fn=None, **kw):
        c = torchish.compile(fn, **kw)
        made.append(c)
        return c
    ref = case(torch, lambda fn=None, **kw: fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = case(torchish, jit)
    _close(got, ref)
    return made, [str(w.message) for w in caught if "torchish.compile" in str(w.message)]


def _close(got, ref):
    if isinstance(ref, (list, tuple)):
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            _close(g, r)
    elif isinstance(ref, torch.Tensor):
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=2e-4, atol=2e-5)
    else:
        assert got == ref or np.isclose(got, ref, rtol=2e-4, atol=2e-5), (got, ref)


def _t(T, *shape, seed=0):
    return T.tensor(arr(*shape, seed=seed))


def _linear(T, i=3, o=2, seed=0):
    lin = T.nn.Linear(i, o)
    with T.no_grad():
        lin.weight.copy_(_t(T, o, i, seed=seed))
        lin.bias.copy_(_t(T, o, seed=seed + 1))
    return lin


def test_grad_replaced_outside_between_calls():
    """The program reads ``p.grad`` through the tensor that was ``p.grad`` when it was traced: a new ``.grad``
    tensor set outside takes its place (it used to keep reading the old one)."""
    def case(T, jit):
        w = _t(T, 3, seed=1).requires_grad_(True)

        @jit
        def step(x):
            (w * x).sum().backward()
            with T.no_grad():
                w.sub_(0.1 * w.grad)
            return w.grad.clone()
        outs = []
        for k in range(4):
            w.grad = T.full((3,), float(k))
            outs.append(step(_t(T, 3, seed=k)))
        return outs, w.detach(), w.grad
    (c,), _ = _both(case)
    assert c.stats["compiled_calls"] == 3 and c.stats["retraces"] == 0


def test_gradient_accumulation_and_train_eval_switches_reuse_their_programs():
    """zero_grad() every other call (``.grad`` None, then present) and train/eval alternation: one program per
    guard, reused when the guard holds again (each switch used to retrace)."""
    def case(T, jit):
        m = T.nn.Sequential(_linear(T, 3, 4), T.nn.BatchNorm1d(4), _linear(T, 4, 2, seed=3))
        opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        @jit
        def micro(x):
            loss = m(x).pow(2).mean() / 2
            loss.backward()
            return loss
        outs = []
        for k in range(8):
            m.train(k < 6 or k % 2 == 0)
            outs.append(micro(_t(T, 5, 3, seed=k)))
            if k % 2 == 1:
                opt.step()
                opt.zero_grad()
        return outs, [p.detach() for p in m.parameters()], m[1].running_mean
    (c,), _ = _both(case)
    assert c.stats["retraces"] <= 2 and c.stats["traces"] <= 4, c.stats


def test_modes_set_inside_the_function():
    """``model.train()`` / ``model.eval()`` inside compiled steps: guarded by the mode at the call, set again after
    each compiled call (each call used to retrace)."""
    def case(T, jit):
        m = T.nn.Sequential(_linear(T, 3, 4), T.nn.BatchNorm1d(4), _linear(T, 4, 2, seed=3))
        opt = T.optim.SGD(m.parameters(), lr=0.1)

        @jit
        def train_step(x):
            m.train()
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss

        @jit
        def eval_step(x):
            m.eval()
            with T.no_grad():
                return m(x)
        outs = []
        for k in range(4):
            outs += [train_step(_t(T, 5, 3, seed=k)), m.training, eval_step(_t(T, 5, 3, seed=k + 7)), m.training]
        return outs, m[1].running_var
    made, _ = _both(case)
    assert all(c.stats["retraces"] == 0 and c.stats["compiled_calls"] == 3 for c in made), [c.stats for c in made]


def test_tensors_stored_outside_get_their_values_then_run_eagerly():
    """A hook appending to a list and a dict entry rebound in the function: Python side effects one program cannot
    repeat. The traced call's stored tensors hold values (they used to hold leaked tracers), later calls run eagerly
    with a warning naming the fix, and fullgraph=True raises."""
    def case(T, jit):
        m = T.nn.Sequential(_linear(T, 3, 4), T.nn.Tanh(), _linear(T, 4, 2, seed=3))
        seen, state = [], {"acc": T.zeros(4), "n": T.zeros(())}
        m[1].register_forward_hook(lambda mod, i, o: seen.append(o.detach().sum()))

        @jit
        def step(x):
            m.zero_grad()
            h = m[1](m[0](x))
            state["acc"] = state["acc"] + h.detach().mean(0)
            state["n"] += 1
            loss = m[2](h).pow(2).sum()
            loss.backward()
            return loss
        outs = [step(_t(T, 5, 3, seed=k)) for k in range(3)]
        return outs, seen, state["acc"], state["n"], [p.grad for p in m.parameters()]
    (c,), msgs = _both(case)
    assert c.stats["traces"] == 1 and any("stores 2 tensor(s)" in m for m in msgs), (c.stats, msgs)

    w = torchish.ones(2, requires_grad=True)
    kept = []
    strict = torchish.compile(lambda x: kept.append(w * x) or (w * x).sum(), fullgraph=True)
    strict(torchish.ones(2))
    with pytest.raises(RuntimeError, match="stores 1 tensor"):
        strict(torchish.ones(2))
    np.testing.assert_allclose(kept[1].numpy(), [1.0, 1.0])


def test_scheduler_stepped_inside_the_function():
    """``scheduler.step()`` inside the step changes the learning rate the program takes as an input: the traced
    call uses the rate it began with, later calls run eagerly (the rate used to stay frozen after the trace)."""
    def case(T, jit):
        lin = _linear(T)
        opt = T.optim.SGD(lin.parameters(), lr=0.2, momentum=0.5)
        sched = T.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)

        @jit
        def step(x):
            opt.zero_grad()
            loss = lin(x).pow(2).mean()
            loss.backward()
            opt.step()
            sched.step()
            return loss
        x = _t(T, 4, 3, seed=5)
        return [step(x) for _ in range(5)], lin.weight.detach(), opt.param_groups[0]["lr"]
    (c,), msgs = _both(case)
    assert any("hyper-parameter" in m for m in msgs), msgs


def test_computed_tensor_kept_in_a_dict_is_stored_again_after_each_call():
    """A computed tensor set into a dict entry or a module attribute (legacy weight norm's pre-hook, an activation
    cache) is stored again, with its new value, after every compiled call: the function stays compiled."""
    def case(T, jit):
        lin = _linear(T)
        cache = {}

        @jit
        def step(x):
            lin.zero_grad()
            lin.scaled = lin.weight * 2
            h = T.tanh(x @ lin.scaled.t() + lin.bias)
            cache["h"] = h
            h.pow(2).sum().backward()
            with T.no_grad():
                lin.weight.sub_(0.1 * lin.weight.grad)
            return h.sum().detach()
        outs = []
        for k in range(4):
            outs += [step(_t(T, 2, 3, seed=k)), cache["h"].detach(), lin.scaled.detach()]
        return outs
    (c,), msgs = _both(case)
    assert c.stats["compiled_calls"] == 3 and not msgs, (c.stats, msgs)
