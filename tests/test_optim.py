"""torchish.optim against torch.optim: parameter trajectories over 20 steps for every optimizer and its main
options, L-BFGS with and without the strong-Wolfe line search, SparseAdam, and compiled steps equal to eager ones.

Every test trains the same tiny model (a (3, 4) weight and a (4,) bias, initialised from numpy) on the same fixed
loss, so the forward/backward kernels compile once and are shared. State-dict, parameter-group, hook and argument
tests are in ``test_optim_state.py``.
"""
import numpy as np
import pytest

import torchish
from oracle import arr, assert_same, needs_avx512_torch, needs_torch, to_numpy, torch

pytestmark = needs_torch

X, Y = arr(5, 3, seed=3), arr(5, 4, seed=4)
TOL = dict(rtol=1e-5, atol=1e-6)


def _model(lib, dtype=np.float32):
    w = lib.tensor(arr(3, 4, seed=1).astype(dtype), requires_grad=True)
    b = lib.tensor(arr(4, seed=2).astype(dtype), requires_grad=True)
    return w, b


def _loss(lib, w, b, x=X):
    dtype = np.float64 if str(w.dtype).endswith("float64") else np.float32  # (w may be traced)
    return ((lib.tanh(lib.tensor(x.astype(dtype)) @ w + b) - lib.tensor(Y.astype(dtype))) ** 2).mean()


def _flat(*params):
    return np.concatenate([to_numpy(p).ravel() for p in params])


def _train(lib, make_opt, n=20, before_step=None, x=X):
    """``n`` steps of ``make_opt(lib, [w, b])``; ``before_step(lib, opt, i, w, b)`` runs between backward and
    step. Returns the trajectory (one row of all parameter values per step) and the optimizer."""
    w, b = _model(lib)
    opt = make_opt(lib, [w, b])
    traj = []
    for i in range(n):
        opt.zero_grad()
        _loss(lib, w, b, x).backward()
        if before_step is not None:
            before_step(lib, opt, i, w, b)
        opt.step()
        traj.append(_flat(w, b))
    return np.stack(traj), opt


def same_trajectory(make_opt, n=20, before_step=None, x=X):
    """Train with torch and torchish; the trajectories agree to float32 precision. Returns both optimizers."""
    ref, topt = _train(torch, make_opt, n, before_step, x)
    got, xopt = _train(torchish, make_opt, n, before_step, x)
    for i, (r, g) in enumerate(zip(ref, got)):
        np.testing.assert_allclose(g, r, err_msg=f"step {i + 1}", **TOL)
    return topt, xopt


def opt_factory(name, **kw):
    return lambda lib, params: getattr(lib.optim, name)(params, **kw)


# Cases that differ only in numbers (lr, weight_decay, maximize...) share one compiled update; each structural
# flag combination (momentum buffer, nesterov, amsgrad, centered, decoupled decay) compiles its own.
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05)),  # 20 steps cross rho_t > 5: both the SGD-like and the rectified branch run
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),  # averaging starts at step 6
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05), maximize=True)),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{'-'.join(k) or 'default'}" for n, k in CASES])
def test_trajectory_matches_torch(name, kw):
    topt, xopt = same_trajectory(opt_factory(name, **kw))
    # Centered RMSprop divides by sqrt(E[g^2] - E[g]^2), which cancels in float32 once the gradients settle; its
    # momentum buffer (a sum of O(1) terms g / avg of both signs) then carries absolute rounding ~1e-5 of the
    # terms' scale (torch float32 itself is that far from torch float64 there). Parameters are held to TOL above.
    state_tol = dict(rtol=1e-5, atol=1e-5) if kw.get("centered") else TOL
    if kw.get("centered") and kw.get("momentum"):  # (the parameters were compared above)
        needs_avx512_torch("the rounding of centered RMSprop's cancelling momentum buffer (1.3e-5 apart)")
    assert_same(topt.state_dict(), xopt.state_dict(), **state_tol)


def test_sparse_adam_updates_only_touched_coordinates():
    # a zero column of x leaves a row of the weight without gradient: PyTorch's sparse gradient omits it, so
    # neither the row nor its moments move
    x = X.copy()
    x[:, 1] = 0.0

    def to_sparse(lib, opt, i, w, b):
        w.grad, b.grad = w.grad.to_sparse(), b.grad.to_sparse()

    w0 = arr(3, 4, seed=1)
    topt, xopt = same_trajectory(opt_factory("SparseAdam", lr=0.05), before_step=to_sparse, x=x)
    w = xopt.param_groups[0]["params"][0]
    np.testing.assert_array_equal(to_numpy(w)[1], w0[1])
    assert_same(topt.state_dict(), xopt.state_dict(), **TOL)


# ---------------------------------------------------------------------------------------------------------------
# L-BFGS: float64, so that the algorithm's branches (curvature pairs kept, line-search brackets, termination) are
# taken identically and the trajectories agree to double precision

def _lbfgs_run(lib, n, **kw):
    w, b = _model(lib, np.float64)
    opt = lib.optim.LBFGS([w, b], **kw)

    def closure():
        opt.zero_grad()
        loss = _loss(lib, w, b)
        loss.backward()
        return loss

    traj, losses = [], []
    for _ in range(n):
        losses.append(float(opt.step(closure).detach()))
        traj.append(_flat(w, b))
    return np.stack(traj), losses, opt


@pytest.mark.parametrize("kw", [dict(lr=0.5, max_iter=5, history_size=3),
                                dict(line_search_fn="strong_wolfe", max_iter=6, history_size=3)],
                         ids=["plain", "strong_wolfe"])
def test_lbfgs_matches_torch(kw):
    ref, rloss, topt = _lbfgs_run(torch, 4, **kw)
    got, gloss, xopt = _lbfgs_run(torchish, 4, **kw)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(gloss, rloss, rtol=1e-9)  # step(closure) returns the first evaluation's loss
    assert_same(topt.state_dict(), xopt.state_dict(), rtol=1e-9, atol=1e-11)


def test_lbfgs_rejects_groups_and_unknown_line_search():
    for lib in (torch, torchish):
        w, b = _model(lib)
        with pytest.raises(ValueError):
            lib.optim.LBFGS([{"params": [w]}, {"params": [b]}])
        opt = lib.optim.LBFGS([w, b], line_search_fn="armijo", max_iter=2)

        def closure():
            opt.zero_grad()
            loss = _loss(lib, w, b)
            loss.backward()
            return loss
        with pytest.raises(RuntimeError):
            opt.step(closure)


# ---------------------------------------------------------------------------------------------------------------
# inside torchish.compile: the whole step (forward, backward, optimizer) as one program equals eager, and changing
# group['lr'] between calls neither retraces nor is ignored

def _compiled_vs_eager(make_opt, n=8):
    runs = []
    for compiled in (False, True):
        w, b = _model(torchish)
        opt = make_opt(torchish, [w, b])

        def step():
            opt.zero_grad()
            loss = _loss(torchish, w, b)
            loss.backward()
            opt.step()
            return loss

        fn = torchish.compile(step) if compiled else step
        losses = []
        for i in range(n):
            if i == n // 2:
                opt.param_groups[0]["lr"] *= 0.5
            losses.append(float(fn()))
        runs.append((losses, _flat(w, b), opt, fn))
    (le, pe, oe, _), (lc, pc, oc, fn) = runs
    np.testing.assert_allclose(lc, le, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(pc, pe, rtol=1e-6, atol=1e-7)
    for se, sc in zip(oe.state.values(), oc.state.values()):
        for k in se:
            np.testing.assert_allclose(to_numpy(sc[k]), to_numpy(se[k]), rtol=1e-6, atol=1e-7, err_msg=k)
    assert fn.stats["retraces"] == 0 and fn.stats["compiled_calls"] >= n - 2


def test_compiled_rmsprop_matches_eager():
    _compiled_vs_eager(opt_factory("RMSprop", lr=0.01, alpha=0.9, centered=True, momentum=0.5))


def test_compiled_nadam_loop_matches_eager():
    _compiled_vs_eager(opt_factory("NAdam", lr=0.05, weight_decay=0.1))


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("name, kw", [("SGD", dict(lr=0.1)), ("Adam", dict(lr=0.05))])
def test_compiled_step_alone_reads_each_new_gradient(name, kw, set_to_none):
    """``torchish.compile(opt.step)`` with the backward outside it (a compiled optimizer step): the gradients are
    inputs of the program, read afresh at every call (new ``.grad`` tensors after ``zero_grad()``, or new values in
    the same ones), not constants holding the values the trace saw; the trajectory is torch's."""
    trajs = []
    for lib, wrap in ((torch, lambda f: f), (torchish, torchish.compile)):
        w, b = _model(lib)
        opt = getattr(lib.optim, name)([w, b], **kw)
        step = wrap(opt.step)
        traj = []
        for i in range(5):
            opt.zero_grad(set_to_none=set_to_none)
            _loss(lib, w, b, X * (i + 1)).backward()
            step()
            traj.append(_flat(w, b))
        trajs.append(np.stack(traj))
    np.testing.assert_allclose(trajs[1], trajs[0], **TOL)
    assert step.stats["compiled_calls"] >= 3


# PyTorch's optimizers add ``weight_decay * param`` to the gradient only when weight_decay != 0: with it 0, a parameter
# holding inf or NaN keeps a finite gradient (torchish computed ``g + 0 * p``: NaN moments and a NaN parameter).
_DECAY_SKIPPED = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": {}, "NAdam": {}, "RAdam": {}, "Adamax": {},
                  "RMSprop": {}, "Adagrad": {}, "Adadelta": {}, "ASGD": {}}


@needs_torch
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(_DECAY_SKIPPED))
def test_zero_weight_decay_leaves_inf_and_nan_parameters_out_of_the_gradient(name, compiled):
    def run(lib, jit):
        p = lib.nn.Parameter(lib.tensor([1.0, float("inf"), float("nan"), -2.0]))
        opt = getattr(lib.optim, name)([p], **_DECAY_SKIPPED[name])

        def step():
            opt.zero_grad()
            (p * lib.tensor([0.5, 0.0, 0.0, -1.0])).sum().backward()
            opt.step()

        step = jit(step)
        for _ in range(2):
            step()
        state = opt.state[p]
        return [p.detach()] + [state[k].detach() for k in sorted(state) if k != "step" and state[k].dim() == 1]

    ident = lambda fn: fn  # noqa: E731
    ref = run(torch, ident)
    got = run(torchish, torchish.compile if compiled else ident)
    for r, g in zip(ref, got):  # (inf and NaN where torch has them; the finite entries to float32 rounding)
        np.testing.assert_allclose(to_numpy(g), to_numpy(r), rtol=1e-6, atol=0)
