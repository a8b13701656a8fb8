"""State tensors that hold one array: the per-parameter step counts of Adam-family optimizers start together and
stay one array (``optim.optimizer._share_steps``), so ``torchish.compile`` passes them as ONE program input and
output. The sharing must be invisible: values, an in-place change of one count, a parameter that stops getting
gradients — each equals eager torchish and PyTorch."""
import re

import numpy as np
import pytest

import torchish
from oracle import arr, needs_torch, torch

OPTS = {"Adam": dict(lr=0.05), "AdamW": dict(lr=0.05, amsgrad=True), "NAdam": dict(lr=0.05),
        "RAdam": dict(lr=0.05), "Adamax": dict(lr=0.05), "ASGD": dict(lr=0.05), "Rprop": dict(lr=0.05),
        "RMSprop": dict(lr=0.01), "Adagrad": dict(lr=0.05), "Adadelta": dict(lr=0.5)}


def _setup(lib, name):
    ws = [lib.tensor(arr(4, 3, seed=1), requires_grad=True), lib.tensor(arr(3, seed=2), requires_grad=True),
          lib.tensor(arr(3, 2, seed=3), requires_grad=True)]
    opt = getattr(lib.optim, name)(ws, **OPTS[name])
    x, y = lib.tensor(arr(6, 4, seed=4)), lib.tensor(arr(6, 2, seed=5))
    return ws, opt, x, y


def _step_fn(lib, ws, opt, freeze=None):
    def step(x, y):
        opt.zero_grad()
        loss = ((lib.tanh(x @ ws[0] + ws[1]) @ ws[2] - y) ** 2).mean()
        loss.backward()
        if freeze is not None:
            ws[freeze].grad = None  # this parameter stops being updated (its step count stops)
        opt.step()
        return loss
    return step


def _state(opt, ws):
    return [{k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v)
             for k, v in opt.state[w].items()} for w in ws]


def _compare(a, b, rtol=2e-5, atol=1e-6):
    for sa, sb in zip(a, b):
        assert sa.keys() == sb.keys()
        for k in sa:
            np.testing.assert_allclose(sa[k], sb[k], rtol=rtol, atol=atol, err_msg=k)


def _scalar_inputs(compiled_fn, *args):
    """Scalar float32 parameters of the optimised program's entry computation."""
    text = compiled_fn.hlo_text(*args)
    entry = text[text.index("\nENTRY"):]
    header = entry[:entry.index("{")]
    return len(re.findall(r": f32\[\]", header))


def _run(lib, name, compiled, schedule):
    """Run the step per ``schedule`` (items: "step", "step_frozen", "bump"), returning losses, parameters, state."""
    ws, opt, x, y = _setup(lib, name)
    plain, frozen = _step_fn(lib, ws, opt), _step_fn(lib, ws, opt, freeze=2)
    if compiled:
        plain, frozen = torchish.compile(plain), torchish.compile(frozen)
    losses = []
    for item in schedule:
        if item == "bump":
            with lib.no_grad():
                opt.state[ws[0]]["step"].add_(5)  # one count changed outside: the others must not follow
        else:
            losses.append(float((frozen if item == "step_frozen" else plain)(x, y).detach()))
    return losses, [w.detach().numpy() for w in ws], _state(opt, ws), (plain, frozen, x, y)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "Rprop"])
def test_counts_share_one_input_and_compiled_equals_eager(name):
    schedule = ["step"] * 4
    eager = _run(torchish, name, False, schedule)
    comp = _run(torchish, name, True, schedule)
    np.testing.assert_allclose(comp[0], eager[0], rtol=1e-5)
    for a, b in zip(comp[1], eager[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    _compare(comp[2], eager[2])
    plain, _, x, y = comp[3]
    assert plain.stats["retraces"] == 0
    # three parameters' counts: one input (optimizers with other scalar state, NAdam's mu_product, keep theirs)
    assert _scalar_inputs(plain, x, y) == {"NAdam": 4}.get(name, 1)


@needs_torch
@pytest.mark.parametrize("name", sorted(OPTS))
def test_one_count_changed_outside_and_a_frozen_parameter_match_pytorch(name):
    """Counts that start as one array split when one is changed in place or one parameter stops getting gradients;
    the compiled program retraces for the new split and every count keeps its own value, as PyTorch's."""
    schedule = ["step", "step", "step", "bump", "step", "step", "step_frozen", "step_frozen", "step"]
    ref = _run(torch, name, False, schedule)
    eager = _run(torchish, name, False, schedule)
    comp = _run(torchish, name, True, schedule)
    for got in (eager, comp):
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-4, atol=1e-6)
        for a, b in zip(got[1], ref[1]):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        _compare(got[2], ref[2], rtol=1e-4, atol=1e-5)
    assert [s["step"] for s in comp[2]] == [s["step"] for s in ref[2]]
    assert [int(s["step"]) for s in comp[2]] == [13, 8, 6]  # bump, frozen: three different counts


@needs_torch
@pytest.mark.parametrize("lib_name", ["torch", "eager", "compiled"])
def test_tensors_sharing_an_array_that_a_run_splits(lib_name):
    """Two state tensors hold one array when the program is traced, and the program rebinds only one of them: they
    cannot be one input (after a run they differ), so the program is traced again with an input for each."""
    lib = torch if lib_name == "torch" else torchish
    a, d = lib.ones(3), lib.zeros(3)

    def f(x):
        a.data = a + x  # rebinds a; d keeps the values it had
        return d * 2 + a
    g = torchish.compile(f) if lib_name == "compiled" else f
    outs = [g(lib.full((3,), 1.0)).numpy().tolist()]
    d.data = a.data  # d now holds a's values (PyTorch: its storage)
    outs += [g(lib.full((3,), float(i))).numpy().tolist() for i in range(4)]
    assert [o[0] for o in outs] == [2.0, 6.0, 7.0, 9.0, 12.0]
    assert a.numpy().tolist() == [8.0] * 3 and d.numpy().tolist() == [2.0] * 3
    if lib_name == "compiled":
        assert g.stats["retraces"] == 0 and g.stats["compiled_calls"] == 4


@pytest.mark.parametrize("lazy", [False, True])
def test_counts_stay_one_array_step_after_step(monkeypatch, lazy):
    """The invariant the compiled program relies on, on the eager and the lazy path (where a materialised value is
    handed to only one of the Tensors holding it): counts that started together are one array after every step."""
    monkeypatch.setattr(torchish.config, "lazy", lazy)
    ws, opt, x, y = _setup(torchish, "Adam")
    step = _step_fn(torchish, ws, opt)
    for n in range(1, 4):
        step(x, y)
        counts = [opt.state[w]["step"] for w in ws]
        assert all(c._d is counts[0]._d for c in counts) and [float(c) for c in counts] == [n] * 3


def test_loaded_counts_are_one_array_again_and_stay_independent():
    """A state dict loaded into a fresh optimizer (resuming training) gives equal counts one array again, so the
    compiled step keeps one input for them; changing one count afterwards changes only that count."""
    ws, opt, x, y = _setup(torchish, "Adam")
    step = _step_fn(torchish, ws, opt)
    for _ in range(3):
        step(x, y)
    ws2, opt2, _, _ = _setup(torchish, "Adam")
    opt2.load_state_dict(opt.state_dict())
    counts = [opt2.state[w]["step"] for w in ws2]
    assert all(c._d is counts[0]._d for c in counts) and [float(c) for c in counts] == [3.0] * 3
    with torchish.no_grad():
        counts[1].add_(1)
    assert [float(c) for c in counts] == [3.0, 4.0, 3.0]
    c = torchish.compile(_step_fn(torchish, ws2, opt2))
    for _ in range(3):
        c(x, y)
    assert [float(opt2.state[w]["step"]) for w in ws2] == [6.0, 7.0, 6.0]
