"""optim.lr_scheduler against PyTorch: the same schedule built in both libraries over an optimizer of one tiny
parameter per group must give identical ``get_last_lr()`` sequences and ``param_groups`` (lr, momentum, betas), the
same ``state_dict()`` and the same continuation after a state-dict round trip, the same warnings and error types.

Most tests step the optimizer without gradients (its step then does no XLA work, but still counts as called, which
the schedulers check); ``test_scheduled_training_matches_torch`` and the compile test run real updates.
"""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

from oracle import arr, check_raises, needs_torch, torch, torchish

pytestmark = needs_torch


def same(ref, got, path="value"):
    """Exact equality, with the same Python types (a float learning rate must stay a Python float)."""
    assert type(got) is type(ref), f"{path}: {type(got).__name__} != torch's {type(ref).__name__}"
    if isinstance(ref, dict):
        assert set(got) == set(ref), f"{path}: keys {sorted(got)} != torch's {sorted(ref)}"
        for k in ref:
            same(ref[k], got[k], f"{path}[{k!r}]")
    elif isinstance(ref, (list, tuple)):
        assert len(got) == len(ref), f"{path}: length {len(got)} != torch's {len(ref)}"
        for i, (r, g) in enumerate(zip(ref, got)):
            same(r, g, f"{path}[{i}]")
    else:
        assert got == ref or (got != got and ref != ref), f"{path}: {got!r} != torch's {ref!r}"


def make_opt(T, kind="sgd", groups=1):
    """One 2-element parameter per group; group i > 0 has its own lr."""
    pgs = [{"params": [T.nn.Parameter(T.tensor(arr(2, seed=i)))]} for i in range(groups)]
    for i, g in enumerate(pgs[1:], 1):
        g["lr"] = 0.05 * i
    if kind == "sgd":
        return T.optim.SGD(pgs, lr=0.1, momentum=0.9)
    return T.optim.Adam(pgs, lr=0.01, betas=(0.9, 0.99))


def snapshot(opt, sched):
    groups = [{k: g[k] for k in ("lr", "momentum", "betas") if k in g} for g in opt.param_groups]
    return list(sched.get_last_lr()), groups


def advance(opt, sched, steps):
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(snapshot(opt, sched))
    return out


# (id, optimizer kind, groups, steps, build(lr_scheduler module, optimizer))
CASES = [
    ("step", "sgd", 2, 40, lambda S, o: S.StepLR(o, step_size=7, gamma=0.5)),
    ("multistep", "sgd", 1, 40, lambda S, o: S.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3)),
    ("exponential", "adam", 2, 40, lambda S, o: S.ExponentialLR(o, gamma=0.93)),
    ("cosine", "sgd", 1, 45, lambda S, o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    ("cosine_groups", "adam", 2, 30, lambda S, o: S.CosineAnnealingLR(o, T_max=7)),
    ("warm_restarts_mult", "sgd", 2, 50, lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=1e-3)),
    ("warm_restarts", "sgd", 1, 30, lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4)),
    ("lambda", "sgd", 1, 30, lambda S, o: S.LambdaLR(o, lambda e: 0.95 ** e)),
    ("lambda_list", "sgd", 2, 30, lambda S, o: S.LambdaLR(o, [lambda e: 1.0 / (1 + e), lambda e: e // 7 + 1])),
    ("multiplicative", "adam", 1, 30, lambda S, o: S.MultiplicativeLR(o, lambda e: 0.97)),
    ("linear", "sgd", 2, 30, lambda S, o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8)),
    ("linear_default", "sgd", 1, 30, lambda S, o: S.LinearLR(o)),
    ("constant", "sgd", 1, 30, lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4)),
    ("polynomial", "adam", 1, 30, lambda S, o: S.PolynomialLR(o, total_iters=12, power=2.0)),
    ("onecycle_cos", "sgd", 1, 40, lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=40)),
    ("onecycle_three_linear", "sgd", 2, 40,
     lambda S, o: S.OneCycleLR(o, max_lr=[0.5, 0.2], epochs=4, steps_per_epoch=10, anneal_strategy="linear",
                               three_phase=True, base_momentum=[0.8, 0.7], max_momentum=0.95)),
    ("onecycle_adam", "adam", 1, 30, lambda S, o: S.OneCycleLR(o, max_lr=0.01, total_steps=30, pct_start=0.25)),
    ("onecycle_no_momentum", "adam", 2, 30,
     lambda S, o: S.OneCycleLR(o, max_lr=0.01, total_steps=31, cycle_momentum=False, div_factor=10.0,
                               final_div_factor=100.0)),
    ("cyclic_triangular", "sgd", 1, 40, lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("cyclic_triangular2", "sgd", 2, 40,
     lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=3, step_size_down=5,
                             mode="triangular2", base_momentum=[0.8, 0.85], max_momentum=0.95)),
    ("cyclic_exp_range_adam", "adam", 1, 40,
     lambda S, o: S.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=5, mode="exp_range", gamma=0.97)),
    ("cyclic_scale_fn", "sgd", 1, 40,
     lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 1 / (1.0 + x),
                             scale_mode="iterations", cycle_momentum=False)),
    ("sequential", "sgd", 2, 30,
     lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9)],
                                 milestones=[5])),
    ("sequential3", "sgd", 1, 40,
     lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.2, total_iters=3), S.CosineAnnealingLR(o, T_max=8),
                                     S.StepLR(o, step_size=4, gamma=0.5)], milestones=[4, 15])),
    ("sequential_nested", "adam", 2, 30,
     lambda S, o: S.SequentialLR(o, [S.ChainedScheduler([S.LinearLR(o, start_factor=0.5, total_iters=3),
                                                         S.MultiStepLR(o, [2, 4], gamma=0.8)]),
                                     S.PolynomialLR(o, total_iters=10)], milestones=[6])),
    ("chained", "sgd", 2, 30,
     lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=3), S.ExponentialLR(o, gamma=0.9)])),
    ("chained_optimizer", "adam", 1, 30,
     lambda S, o: S.ChainedScheduler([S.LinearLR(o, start_factor=0.5, total_iters=6),
                                      S.CosineAnnealingLR(o, T_max=9, eta_min=1e-4)], optimizer=o)),
]
CASE_PARAMS = [pytest.param(*c[1:], id=c[0]) for c in CASES]


@pytest.mark.parametrize("kind, groups, steps, build", CASE_PARAMS)
def test_schedule_matches_torch(kind, groups, steps, build):
    """The schedule, and the warnings (PyTorch's text): none, but a nested scheduler stepped while it is built."""
    runs = []
    for T in (torch, torchish):
        opt = make_opt(T, kind, groups)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched = build(T.optim.lr_scheduler, opt)
            seq = [snapshot(opt, sched)] + advance(opt, sched, steps)
        runs.append((seq, [(w.category.__name__, str(w.message)) for w in caught]))
    same(runs[0], runs[1], "schedule")


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step")  # sequential_nested: as in PyTorch
@pytest.mark.parametrize("kind, groups, steps, build", CASE_PARAMS)
def test_state_dict_round_trip(kind, groups, steps, build):
    """Stop after ``k`` steps, rebuild optimizer and scheduler, load both state dicts: the continuation equals the
    uninterrupted schedule, and the scheduler's state dict equals PyTorch's."""
    k = steps // 3 + 1
    results = []
    for T in (torch, torchish):
        S = T.optim.lr_scheduler
        opt = make_opt(T, kind, groups)
        sched = build(S, opt)
        full = advance(opt, sched, steps)
        opt = make_opt(T, kind, groups)
        sched = build(S, opt)
        advance(opt, sched, k)
        opt_sd, sched_sd = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
        opt2 = make_opt(T, kind, groups)
        sched2 = build(S, opt2)
        opt2.load_state_dict(opt_sd)
        results.append((full, copy.deepcopy(sched_sd)))  # PyTorch's CyclicLR.load_state_dict pops a key
        sched2.load_state_dict(sched_sd)
        assert advance(opt2, sched2, steps - k) == full[k:]
    same(results[0][0], results[1][0], "schedule")
    same(results[0][1], results[1][1], "state_dict")


def test_scheduled_training_matches_torch():
    """Real updates: the optimizers use the scheduled lr and the cycled momentum / beta1 at every step."""
    grads = [arr(3, seed=20 + i) for i in range(12)]
    out = []
    for T in (torch, torchish):
        S = T.optim.lr_scheduler
        ps = [T.nn.Parameter(T.tensor(arr(3, seed=1))), T.nn.Parameter(T.tensor(arr(3, seed=2)))]
        sgd = T.optim.SGD([ps[0]], lr=0.1, momentum=0.9)
        adam = T.optim.Adam([ps[1]], lr=0.01)
        scheds = [S.OneCycleLR(sgd, max_lr=0.5, total_steps=12), S.CyclicLR(adam, 0.001, 0.05, step_size_up=3)]
        for g in grads:
            for p, opt, sched in zip(ps, (sgd, adam), scheds):
                p.grad = T.tensor(g)
                opt.step()
                sched.step()
        out.append([p.detach().numpy() for p in ps])
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


def test_compiled_step_takes_scheduled_lr_without_retracing():
    grads = [arr(3, seed=30 + i) for i in range(6)]
    out = []
    for T in (torch, torchish):
        w = T.nn.Parameter(T.tensor(arr(3, seed=3)))
        opt = T.optim.SGD([w], lr=0.1, momentum=0.9)
        sched = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=6)

        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            opt.step()

        fn = torchish.compile(step) if T is torchish else step
        for g in grads:
            fn(T.tensor(g))
            sched.step()
        out.append(w.detach().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6, atol=1e-7)
    assert fn.stats["traces"] <= 1 and fn.stats["retraces"] == 0, fn.stats


def test_tensor_lr_is_filled_in_place():
    """A Tensor ``lr`` stays the same Tensor object (filled in place); ``get_last_lr()`` returns copies."""
    runs = []
    for T in (torch, torchish):
        S = T.optim.lr_scheduler
        opt = T.optim.SGD([T.nn.Parameter(T.zeros(2))], lr=T.tensor(0.1), momentum=0.9)
        lr = opt.param_groups[0]["lr"]
        sched = S.SequentialLR(opt, [S.ExponentialLR(opt, gamma=0.9), S.CosineAnnealingLR(opt, T_max=5)], [4])
        seq = []
        for _ in range(10):
            opt.step()
            sched.step()
            last = sched.get_last_lr()[0]
            assert isinstance(last, T.Tensor) and last is not lr
            seq.append((float(last), float(opt.param_groups[0]["initial_lr"])))
        assert opt.param_groups[0]["lr"] is lr
        runs.append(seq)
    same(runs[0], runs[1], "tensor lr")


# ---------------------------------------------------------------------------------------------------------------
# warnings, step(epoch), resuming


def test_step_order_warnings():
    for T in (torch, torchish):
        S = T.optim.lr_scheduler
        opt = make_opt(T)
        sched = S.StepLR(opt, 3)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            sched.step()
        opt = make_opt(T)
        sched = S.ExponentialLR(opt, 0.9)
        opt.step = lambda closure=None: None  # replaced after the scheduler wrapped it
        with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
            sched.step()
        with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
            assert sched.get_lr() == [opt.param_groups[0]["lr"] * 0.9]


@pytest.mark.parametrize("name, build, epochs", [
    ("step", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5), [4, 7, 2, 9, 9]),
    ("multistep", lambda S, o: S.MultiStepLR(o, [2, 5, 5], gamma=0.5), [1, 5, 3, 8]),
    ("constant", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=3), [1, 4, 2]),
    ("linear", lambda S, o: S.LinearLR(o, start_factor=0.2, total_iters=6), [3, 9, 1, 6]),
    ("exponential", lambda S, o: S.ExponentialLR(o, gamma=0.8), [3, 1, 6]),
    ("polynomial", lambda S, o: S.PolynomialLR(o, total_iters=5, power=0.5), [2, 7, 4]),
    ("cosine", lambda S, o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01), [2, 7, 4, 13]),
    ("warm_restarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
     [0.5, 1.25, 2.9, 3.0, 4.5, 9.2, 21.0, 25.75, 1.5]),
    ("warm_restarts_1", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4), [0.4, 3.9, 6.2, 17.5, 2.0]),
])
def test_step_with_epoch_matches_torch(name, build, epochs):
    """The deprecated ``step(epoch)`` (closed forms; fractional epochs for warm restarts), mixed with plain
    steps."""
    runs = []
    for T in (torch, torchish):
        opt = make_opt(T, groups=2)
        sched = build(T.optim.lr_scheduler, opt)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                opt.step()
                sched.step(e)
                seq.append(snapshot(opt, sched) + (sched.last_epoch,))
                opt.step()
                sched.step()
                seq.append(snapshot(opt, sched) + (sched.last_epoch,))
        runs.append(seq)
    same(runs[0], runs[1], name)


def test_epoch_deprecation_warning():
    for T in (torch, torchish):
        opt = make_opt(T)
        sched = T.optim.lr_scheduler.StepLR(opt, 2)
        opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sched.step(3)


@pytest.mark.parametrize("build", [
    lambda S, o, e: S.StepLR(o, step_size=4, gamma=0.5, last_epoch=e),
    lambda S, o, e: S.ExponentialLR(o, gamma=0.9, last_epoch=e),
    lambda S, o, e: S.CosineAnnealingLR(o, T_max=6, eta_min=0.01, last_epoch=e),
    lambda S, o, e: S.MultiplicativeLR(o, lambda i: 0.9, last_epoch=e),
    lambda S, o, e: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, last_epoch=e),
    lambda S, o, e: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, last_epoch=e),
], ids=["step", "exponential", "cosine", "multiplicative", "warm_restarts", "cyclic"])
def test_resume_with_last_epoch(build):
    """``last_epoch >= 0`` needs ``'initial_lr'`` in every group (KeyError otherwise) and continues from there."""
    check_raises(lambda T: build(T.optim.lr_scheduler, make_opt(T), 7))
    runs = []
    for T in (torch, torchish):
        opt = make_opt(T, groups=2)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
            g.setdefault("base_momentum", 0.8)
            g.setdefault("max_momentum", 0.9)
        sched = build(T.optim.lr_scheduler, opt, 7)
        runs.append([snapshot(opt, sched)] + advance(opt, sched, 15) + [sched.state_dict()])
    same(runs[0], runs[1], "resumed")


def test_initial_lr_and_base_lrs():
    for T in (torch, torchish):
        opt = make_opt(T, groups=2)
        opt.param_groups[1]["initial_lr"] = 0.3  # kept: setdefault
        sched = T.optim.lr_scheduler.StepLR(opt, 2)
        assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.3]
        assert sched.base_lrs == [0.1, 0.3] and sched.last_epoch == 0 and sched._step_count == 1


def test_lambda_state_dict_saves_callable_objects():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    dicts = []
    for T in (torch, torchish):
        S = T.optim.lr_scheduler
        opt = make_opt(T, groups=2)
        sched = S.LambdaLR(opt, [Decay(0.9), lambda e: 1.0])
        advance(opt, sched, 3)
        sd = sched.state_dict()
        other = S.LambdaLR(make_opt(T, groups=2), [Decay(0.5), lambda e: 2.0])
        other.load_state_dict(sd)
        assert other.lr_lambdas[0].rate == 0.9 and "lr_lambdas" in sd
        dicts.append(sd)
    same(dicts[0], dicts[1], "state_dict")


# ---------------------------------------------------------------------------------------------------------------
# ReduceLROnPlateau

def _metrics(n=60):
    """A decreasing trend with noise and plateaus."""
    noise = arr(n, seed=5, lo=-0.05, hi=0.05)
    return [float(1.0 / (1 + i // 4) + noise[i]) for i in range(n)]


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(mode="min", factor=0.5, patience=2, threshold=0.05, threshold_mode="rel"),
    dict(mode="min", factor=0.5, patience=1, threshold=0.02, threshold_mode="abs", cooldown=3),
    dict(mode="max", factor=0.3, patience=2, threshold=0.1, threshold_mode="rel", min_lr=[0.01, 0.002]),
    dict(mode="max", factor=0.7, patience=0, threshold=0.01, threshold_mode="abs", cooldown=1, min_lr=0.004),
    dict(mode="min", factor=0.9, patience=0, eps=0.005),
], ids=["default", "min_rel", "min_abs_cooldown", "max_rel_minlr_list", "max_abs", "eps"])
def test_reduce_on_plateau_matches_torch(kwargs):
    sign = -1.0 if kwargs.get("mode") == "max" else 1.0
    metrics = [sign * m for m in _metrics()]
    runs = []
    for T in (torch, torchish):
        opt = make_opt(T, groups=2)
        sched = T.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = [snapshot(opt, sched)]
        for i, m in enumerate(metrics):
            opt.step()
            sched.step(T.tensor(np.float32(m)) if i % 3 == 0 else m)
            seq.append(snapshot(opt, sched) + (sched.best, sched.num_bad_epochs, sched.cooldown_counter,
                                               sched.last_epoch))
            if i == 30:
                sd = copy.deepcopy(sched.state_dict())
                sched = T.optim.lr_scheduler.ReduceLROnPlateau(opt)  # defaults, replaced by the loaded state
                sched.load_state_dict(sd)
        runs.append((seq, sd))
    same(runs[0], runs[1], "plateau")


def test_reduce_on_plateau_new_group():
    """A group added later: a single ``min_lr`` extends, a list raises RuntimeError."""
    for min_lr in (0.0, [0.0]):
        def run(T):
            opt = make_opt(T)
            sched = T.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=min_lr)
            sched.step(1.0)
            opt.add_param_group({"params": [T.nn.Parameter(T.zeros(2))], "lr": 0.5})
            sched.step(2.0)
            return [g["lr"] for g in opt.param_groups]
        if isinstance(min_lr, list):
            check_raises(run)
        else:
            assert run(torchish) == run(torch)


# ---------------------------------------------------------------------------------------------------------------
# errors

def _past_total_steps(T):
    opt = make_opt(T)
    sched = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    for _ in range(4):
        opt.step()
        sched.step()


def _other_optimizer(T):
    S = T.optim.lr_scheduler
    a, b = make_opt(T), make_opt(T)
    return S.SequentialLR(a, [S.StepLR(a, 2), S.StepLR(b, 2)], milestones=[3])


def _plateau_in_chain(T):
    S = T.optim.lr_scheduler
    o = make_opt(T)
    return S.ChainedScheduler([S.StepLR(o, 2), S.ReduceLROnPlateau(o)])


ERRORS = {
    "onecycle_no_length": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), max_lr=0.1),
    "onecycle_epochs_only": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), max_lr=0.1, epochs=3),
    "onecycle_total_zero": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), max_lr=0.1, total_steps=0),
    "onecycle_total_float": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), max_lr=0.1, total_steps=5.0),
    "onecycle_bad_epochs": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), 0.1, epochs=-1, steps_per_epoch=2),
    "onecycle_pct_int": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), 0.1, total_steps=5, pct_start=1),
    "onecycle_pct_big": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), 0.1, total_steps=5, pct_start=1.5),
    "onecycle_anneal": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), 0.1, total_steps=5,
                                                                 anneal_strategy="exp"),
    "onecycle_max_lr_len": lambda T: T.optim.lr_scheduler.OneCycleLR(make_opt(T), [0.1, 0.2], total_steps=5),
    "onecycle_past_total": _past_total_steps,
    "sequential_milestones": lambda T: T.optim.lr_scheduler.SequentialLR(
        (o := make_opt(T)), [T.optim.lr_scheduler.StepLR(o, 2)], milestones=[3]),
    "sequential_empty": lambda T: T.optim.lr_scheduler.SequentialLR(make_opt(T), [], milestones=[]),
    "sequential_other_optimizer": _other_optimizer,
    "sequential_not_scheduler": lambda T: T.optim.lr_scheduler.SequentialLR(make_opt(T), [object()], []),
    "chained_empty": lambda T: T.optim.lr_scheduler.ChainedScheduler([]),
    "chained_plateau": _plateau_in_chain,
    "not_optimizer": lambda T: T.optim.lr_scheduler.StepLR(object(), 2),
    "cyclic_not_optimizer": lambda T: T.optim.lr_scheduler.CyclicLR("opt", 0.1, 1.0),
    "lambda_list_len": lambda T: T.optim.lr_scheduler.LambdaLR(make_opt(T), [lambda e: 1.0] * 2),
    "multiplicative_not_callable": lambda T: T.optim.lr_scheduler.MultiplicativeLR(make_opt(T), 0.9),
    "constant_factor": lambda T: T.optim.lr_scheduler.ConstantLR(make_opt(T), factor=1.5),
    "linear_start": lambda T: T.optim.lr_scheduler.LinearLR(make_opt(T), start_factor=0),
    "linear_end": lambda T: T.optim.lr_scheduler.LinearLR(make_opt(T), end_factor=1.5),
    "warm_t0": lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_opt(T), T_0=0),
    "warm_t0_float": lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_opt(T), T_0=2.5),
    "warm_tmult": lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_opt(T), T_0=2, T_mult=0),
    "warm_eta_min": lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_opt(T), T_0=2, eta_min="0"),
    "warm_negative_epoch": lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_opt(T), T_0=2).step(-1),
    "cyclic_mode": lambda T: T.optim.lr_scheduler.CyclicLR(make_opt(T), 0.01, 0.1, mode="square"),
    "cyclic_base_lr_len": lambda T: T.optim.lr_scheduler.CyclicLR(make_opt(T), [0.01, 0.02], 0.1),
    "plateau_factor": lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(make_opt(T), factor=1.0),
    "plateau_mode": lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(make_opt(T), mode="lowest"),
    "plateau_threshold_mode": lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(make_opt(T), threshold_mode="pct"),
    "plateau_min_lr_len": lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(make_opt(T), min_lr=[0.1, 0.2]),
    "plateau_not_optimizer": lambda T: T.optim.lr_scheduler.ReduceLROnPlateau([1.0]),
}


@pytest.mark.parametrize("fn", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_match_torch(fn):
    check_raises(fn)


def test_namespace():
    S = torchish.optim.lr_scheduler
    assert sorted(S.__all__) == sorted(torch.optim.lr_scheduler.__all__)
    for name in S.__all__:
        assert issubclass(getattr(S, name), S.LRScheduler)
    assert issubclass(S._LRScheduler, S.LRScheduler)
    assert S.EPOCH_DEPRECATION_WARNING == torch.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING
    assert math.isclose(torchish.optim.lr_scheduler.ConstantLR(make_opt(torchish)).factor, 1 / 3)
