"""torch.optim.Adafactor and torch.optim.Muon (torch 2.13) in torchish.optim: parameter trajectories over several
steps against torch, state dicts, group defaults, argument errors, and compiled steps equal to eager ones."""
import numpy as np
import pytest

import torchish
from oracle import arr, assert_same, check_raises, needs_torch, to_numpy, torch

pytestmark = needs_torch

X, Y = arr(5, 3, seed=3), arr(5, 4, seed=4)


def _params(lib):
    w = lib.tensor(arr(3, 4, seed=1), requires_grad=True)
    b = lib.tensor(arr(4, seed=2), requires_grad=True)
    return w, b


def _loss(lib, w, b):
    return ((lib.tanh(lib.tensor(X) @ w + b) - lib.tensor(Y)) ** 2).mean()


def _same(make, n=6, muon=False, **tol):
    def params(lib):
        w, b = _params(lib)
        return [w] if muon else [w, b]

    def run(lib):
        ps = params(lib)
        opt = make(lib, ps)
        traj = []
        for _ in range(n):
            opt.zero_grad()
            bias = lib.tensor(arr(4, seed=2)) if muon else ps[1]
            _loss(lib, ps[0], bias).backward()
            opt.step()
            traj.append(np.concatenate([to_numpy(p).ravel() for p in ps]))
        return np.stack(traj), opt
    (ref, topt), (got, xopt) = run(torch), run(torchish)
    for i, (r, g) in enumerate(zip(ref, got)):
        np.testing.assert_allclose(g, r, err_msg=f"step {i + 1}", **(tol or dict(rtol=1e-5, atol=1e-6)))
    return topt, xopt


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.05, weight_decay=0.1, maximize=True),
                                dict(lr=0.1, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5)])
def test_adafactor_trajectory(kw):
    topt, xopt = _same(lambda lib, ps: lib.optim.Adafactor(ps, **kw))
    assert_same(topt.state_dict(), xopt.state_dict())


def test_adafactor_3d_param():
    def run(lib):
        p = lib.tensor(arr(2, 3, 4, seed=5), requires_grad=True)
        opt = lib.optim.Adafactor([p], lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            (p.sin() * lib.tensor(arr(2, 3, 4, seed=6))).sum().backward()
            opt.step()
        return p.detach(), opt.state_dict()
    ref, got = run(torch), run(torchish)
    assert_same(ref, got, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.02, weight_decay=0.0, momentum=0.9, nesterov=False),
                                dict(lr=0.01, adjust_lr_fn="match_rms_adamw", ns_steps=3)])
def test_muon_trajectory(kw):
    topt, xopt = _same(lambda lib, ps: lib.optim.Muon(ps, **kw), muon=True, rtol=1e-4, atol=2e-5)
    assert_same(topt.state_dict(), xopt.state_dict(), rtol=1e-3, atol=1e-5)


def test_muon_tall_matrix():
    def run(lib):
        p = lib.tensor(arr(5, 2, seed=5), requires_grad=True)
        opt = lib.optim.Muon([p], lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            (p.sin() * lib.tensor(arr(5, 2, seed=6))).sum().backward()
            opt.step()
        return p.detach()
    assert_same(run(torch), run(torchish), rtol=1e-4, atol=2e-5)


def test_defaults_and_errors():
    def groups(lib):
        w, b = _params(lib)
        return (lib.optim.Adafactor([w, b]).state_dict()["param_groups"],
                lib.optim.Muon([w]).state_dict()["param_groups"], repr(lib.optim.Muon([w]).defaults))
    assert_same(groups(torch), groups(torchish))
    w = arr(3, 4)
    for bad in (dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)), dict(eps=(None, -1.0)), dict(d=0.5),
                dict(weight_decay=-1.0)):
        check_raises(lambda T, bad=bad: T.optim.Adafactor([T.tensor(w, requires_grad=True)], **bad))
    for bad in (dict(lr=-1.0), dict(momentum=-1.0), dict(weight_decay=-1.0), dict(adjust_lr_fn="x")):
        check_raises(lambda T, bad=bad: T.optim.Muon([T.tensor(w, requires_grad=True)], **bad))
    check_raises(lambda T: T.optim.Muon([T.ones(3, requires_grad=True)]))

    def complex_param(T):
        p = T.ones(2, 2, dtype=T.complex64, requires_grad=True)
        p.grad = T.ones(2, 2, dtype=T.complex64)
        T.optim.Adafactor([p]).step()
    check_raises(complex_param)


def test_adafactor_load_state_dict_continues():
    def run(lib):
        w, b = _params(lib)
        opt = lib.optim.Adafactor([w, b], lr=0.05)
        for _ in range(2):
            opt.zero_grad()
            _loss(lib, w, b).backward()
            opt.step()
        opt2 = lib.optim.Adafactor([w, b], lr=0.05)
        opt2.load_state_dict(opt.state_dict())
        opt2.zero_grad()
        _loss(lib, w, b).backward()
        opt2.step()
        return w.detach(), b.detach(), opt2.state_dict()
    assert_same(run(torch), run(torchish), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_compiled_matches_eager(name):
    runs = []
    for compiled in (False, True):
        w, b = _params(torchish)
        params = [w, b] if name == "Adafactor" else [w]
        opt = getattr(torchish.optim, name)(params, lr=0.05)

        def step():
            opt.zero_grad()
            loss = _loss(torchish, w, b)
            loss.backward()
            opt.step()
            return loss

        fn = torchish.compile(step) if compiled else step
        losses = [float(fn()) for _ in range(5)]
        runs.append((losses, to_numpy(w).copy(), fn))
    (le, pe, _), (lc, pc, fn) = runs
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pc, pe, rtol=1e-5, atol=1e-6)
    assert fn.stats["retraces"] == 0
