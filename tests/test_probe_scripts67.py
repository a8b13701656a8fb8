"""Third-party programs, round 67 (helper 184): training loops that compile the optimizer, the scheduler or the whole
step with ``torch.compile`` (the recipe "(beta) Compiling the optimizer with torch.compile" and the training scripts
that follow it): ``compile(opt.step)`` with the backward outside; ``opt.step(); sched.step()`` in one compiled
function with float and Tensor learning rates (LinearLR, CosineAnnealingLR, OneCycleLR with its momentum cycle,
SequentialLR, LambdaLR, MultiStepLR, ExponentialLR); a compiled whole step (zero_grad, forward, backward,
clip_grad_norm_, step) with the scheduler stepped outside it; gradient accumulation over micro-batches inside and
outside the compiled step; param groups with their own lr and weight decay, one added by ``add_param_group`` between
compiled calls; resuming with ``load_state_dict`` (optimizer, model, scheduler) between compiled calls;
``zero_grad(set_to_none=False)``; SGD momentum/nesterov, Adam/AdamW (amsgrad, maximize), RMSprop, Adagrad, Adamax,
NAdam, RAdam with ``foreach``/``fused``; an EMA of the weights (``AveragedModel`` and a manual ``lerp_``) in and out of
the compiled step; freezing part of the model with ``requires_grad_(False)`` between calls. Every case runs 5-7
calls, so the record (first call), trace (second) and compiled calls (later) are all compared, step by step: losses,
learning rates (``get_last_lr()`` and ``param_groups``), parameters and optimizer state. Run with torch 2.13 and
torchish and compared by ``assert_script_matches`` (tests/oracle.py).

Fixed here (silent wrong numbers or a crash under ``torchish.compile``; eager mode was right): an lr or weight decay
written into the groups as a numpy scalar (``lr_schedule[it]`` of a float32 array) was baked into the program
unguarded (torchish/compile/recorder.py); a Tensor lr replaced by another Tensor between calls was ignored, the
program read the one it was traced with, and Tensor ``betas`` (also OneCycleLR's (float, Tensor)) raised JAX's
ValueError inside the traced update (torchish/optim/optimizer.py ``_hyper_values``, compile/trace.py).
"""
import copy

import numpy as np
import pytest

import torchish
from oracle import assert_same, needs_torch, script_test, torch, torch_one_thread
from oracle import formula_data as _data, formula_init as _init

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _mlp(lib, seed=0):
    nn = lib.nn
    return _init(lib, nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)), seed=seed)


def _lrs(opt):
    """Every group's lr as a float (a Tensor lr read back as its value)."""
    return [float(g["lr"]) for g in opt.param_groups]


def _state(opt):
    """The optimizer's state tensors, in parameter order, keys sorted."""
    out = []
    for g in opt.param_groups:
        for p in g["params"]:
            st = opt.state.get(p, {})
            out.append({k: (v.clone() if hasattr(v, "clone") else v) for k, v in sorted(st.items())})
    return out


def case_compiled_opt_step_sgd_nesterov_multistep(lib, jit):
    F = lib.nn.functional
    model = _mlp(lib)
    x, y = _data(lib, 8, 4), _data(lib, 8, 2, seed=1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    sched = lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    step = jit(opt.step)  # the recipe: only the step compiled, the backward eager
    hist = []
    for _ in range(6):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step()
        sched.step()
        hist.append((loss.detach(), sched.get_last_lr(), opt.param_groups[0]["lr"]))
    return hist, [p.detach().clone() for p in model.parameters()], _state(opt)


def case_compiled_step_and_cosine_tensor_lr_adamw_amsgrad(lib, jit):
    F = lib.nn.functional
    model = _mlp(lib)
    x, y = _data(lib, 8, 4), _data(lib, 8, 2, seed=2)
    opt = lib.optim.AdamW(model.parameters(), lr=lib.tensor(0.05), weight_decay=0.1, amsgrad=True)
    sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.001)

    @jit
    def opt_step():
        opt.step()
        sched.step()

    hist = []
    for _ in range(6):
        opt.zero_grad(set_to_none=True)
        loss = F.smooth_l1_loss(model(x), y)
        loss.backward()
        opt_step()
        hist.append((loss.item(), sched.get_last_lr(), float(opt.param_groups[0]["lr"]), sched.last_epoch))
    return hist, list(model.parameters()), _state(opt), type(opt.param_groups[0]["lr"]).__name__


def case_onecycle_cycles_momentum_inside_and_outside(lib, jit):
    F = lib.nn.functional
    x, y = _data(lib, 6, 4, seed=3), _data(lib, 6, 2, seed=4)
    out = []
    # (a) the recipe's compiled step and scheduler together, Adam's beta1 cycled
    model = _mlp(lib, seed=1)
    opt = lib.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.99))
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=8, pct_start=0.4)

    @jit
    def opt_step():
        opt.step()
        sched.step()

    hist = []
    for _ in range(7):
        opt.zero_grad()
        F.l1_loss(model(x), y).backward()
        opt_step()
        g = opt.param_groups[0]
        hist.append((sched.get_last_lr(), g["lr"], g["betas"], g["initial_lr"], g["max_lr"]))
    out.append((hist, list(model.parameters()), _state(opt)))
    # (b) only opt.step compiled, the scheduler cycling momentum (or beta1, a float beside a Tensor beta2) outside
    for name, kw in (("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)), ("RMSprop", dict(lr=0.01, momentum=0.9)),
                     ("AdamW", dict(lr=lib.tensor(0.01), betas=(lib.tensor(0.9), lib.tensor(0.95))))):
        model = _mlp(lib, seed=1)
        opt = getattr(lib.optim, name)(model.parameters(), **kw)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=8, pct_start=0.4,
                                                  base_momentum=0.5, max_momentum=0.95)
        step = jit(opt.step)
        hist = []
        for _ in range(7):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            step()
            sched.step()
            g = opt.param_groups[0]
            hist.append((loss.detach(), float(g["lr"]), [float(b) for b in g.get("betas", (g.get("momentum"),))]))
        out.append((name, hist, list(model.parameters()), _state(opt)))
    return out


def case_sequential_warmup_cosine_rmsprop_centered(lib, jit):
    F = lib.nn.functional
    model = _mlp(lib, seed=2)
    x, y = _data(lib, 8, 4, seed=5), _data(lib, 8, 2, seed=6)
    opt = lib.optim.RMSprop(model.parameters(), lr=0.02, alpha=0.9, momentum=0.5, centered=True, foreach=True)
    sched = lib.optim.lr_scheduler.SequentialLR(opt, schedulers=[
        lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=2),
        lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)], milestones=[2])

    @jit
    def opt_step():
        opt.step()
        sched.step()

    hist = []
    for _ in range(7):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt_step()
        hist.append((loss.detach(), sched.get_last_lr(), opt.param_groups[0]["lr"], sched.last_epoch))
    return hist, list(model.parameters()), _state(opt)


def case_compiled_train_step_clip_lambda_outside(lib, jit):
    nn, F = lib.nn, lib.nn.functional
    model = _mlp(lib, seed=3)
    x, y = _data(lib, 10, 4, seed=7), lib.tensor([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])
    opt = lib.optim.Adam(model.parameters(), lr=0.05, foreach=False)
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1 + e))

    @jit
    def train_step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        opt.step()
        return loss.detach(), norm

    hist = []
    for _ in range(6):
        loss, norm = train_step(x, y)
        sched.step()
        hist.append((loss, norm, sched.get_last_lr(), opt.param_groups[0]["lr"]))
    return hist, list(model.parameters()), _state(opt)


def case_grad_accumulation_inside_and_outside(lib, jit):
    F = lib.nn.functional
    accum = 3
    xs = [_data(lib, 4, 4, seed=10 + i) for i in range(accum)]
    ys = [_data(lib, 4, 2, seed=20 + i) for i in range(accum)]
    out = []
    # (a) micro-batches outside: a compiled forward/backward per micro-batch, a compiled step every `accum`
    model = _mlp(lib, seed=4)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.8)

    @jit
    def micro(xb, yb):
        loss = F.mse_loss(model(xb), yb) / accum
        loss.backward()
        return loss.detach()

    step = jit(opt.step)
    hist = []
    for it in range(5):
        tot = 0.0
        for xb, yb in zip(xs, ys):
            tot += micro(xb, yb).item()
        step()
        opt.zero_grad(set_to_none=False)
        hist.append((tot, model[0].weight.grad.abs().sum()))
    out.append((hist, [p.detach().clone() for p in model.parameters()], _state(opt)))
    # (b) the micro-batch loop inside the compiled step
    model = _mlp(lib, seed=4)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.8)

    @jit
    def train_step():
        tot = 0.0
        for xb, yb in zip(xs, ys):
            loss = F.mse_loss(model(xb), yb) / accum
            loss.backward()
            tot = tot + loss.detach()
        opt.step()
        opt.zero_grad()
        return tot

    out.append(([train_step() for _ in range(5)], list(model.parameters()), _state(opt)))
    return out


def case_param_groups_and_add_param_group(lib, jit):
    nn, F = lib.nn, lib.nn.functional
    body = _init(lib, nn.Linear(4, 5), seed=5)
    head = _init(lib, nn.Linear(5, 2), seed=6)
    extra = _init(lib, nn.Linear(2, 2), seed=7)
    x, y = _data(lib, 6, 4, seed=8), _data(lib, 6, 2, seed=9)
    decay = [body.weight, head.weight]
    no_decay = [body.bias, head.bias]
    opt = lib.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                           {"params": no_decay, "weight_decay": 0.0, "lr": 0.02}], lr=0.01)
    sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)

    opt_step = jit(opt.step)
    hist = []
    for it in range(7):
        if it == 3:  # unfreeze the extra head: a new group, its own lr (the scheduler's base_lrs do not know it)
            opt.add_param_group({"params": extra.parameters(), "lr": 0.005, "weight_decay": 0.01})
        opt.zero_grad()
        out = head(body(x).relu())
        if it >= 3:
            out = extra(out)
        loss = F.mse_loss(out, y)
        loss.backward()
        opt_step()
        sched.step()
        hist.append((loss.detach(), _lrs(opt), sched.get_last_lr(), len(opt.param_groups)))
    params = [p.detach().clone() for m in (body, head, extra) for p in m.parameters()]
    return hist, params, _state(opt)


def case_resume_from_checkpoint_between_compiled_calls(lib, jit):
    F = lib.nn.functional
    x, y = _data(lib, 8, 4, seed=11), _data(lib, 8, 2, seed=12)
    out = []
    for lr in (0.03, lib.tensor(0.03)):  # (a Tensor lr: the loaded group holds the checkpoint's Tensor)
        model = _mlp(lib, seed=5)
        opt = lib.optim.Adam(model.parameters(), lr=lr, amsgrad=True)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        @jit
        def train_step():
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        hist = []
        ckpt = None
        for it in range(8):
            if it == 3:  # (as torch.save / torch.load would: copies)
                ckpt = copy.deepcopy({"model": model.state_dict(), "opt": opt.state_dict(),
                                      "sched": sched.state_dict()})
            if it == 5:  # a crash: resume from the checkpoint into the same objects
                model.load_state_dict(ckpt["model"])
                opt.load_state_dict(ckpt["opt"])
                sched.load_state_dict(ckpt["sched"])
            loss = train_step()
            sched.step()
            hist.append((loss, sched.get_last_lr(), float(opt.param_groups[0]["lr"]),
                         float(opt.state[model[0].weight]["step"])))
        out.append((hist, list(model.parameters()), _state(opt)))
    return out


def case_zero_grad_keep_adagrad_adamax_foreach(lib, jit):
    F = lib.nn.functional
    x, y = _data(lib, 8, 4, seed=13), _data(lib, 8, 2, seed=14)
    out = []
    for name, kw in (("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, foreach=True)),
                     ("Adagrad", dict(lr=0.1, weight_decay=0.01, fused=True)),
                     ("Adamax", dict(lr=0.02, weight_decay=0.01, foreach=False)),
                     ("Adam", dict(lr=0.02, maximize=True, fused=True))):
        model = _mlp(lib, seed=6)
        opt = getattr(lib.optim, name)(model.parameters(), **kw)
        step = jit(opt.step)
        hist = []
        for _ in range(5):
            opt.zero_grad(set_to_none=False)
            loss = F.mse_loss(model(x), y)
            (-loss if kw.get("maximize") else loss).backward()
            step()
            hist.append((loss.detach(), model[2].bias.grad.clone()))
        out.append((hist, [p.detach().clone() for p in model.parameters()], _state(opt)))
    return out


def case_ema_averaged_model_and_manual_lerp(lib, jit):
    F = lib.nn.functional
    swa = lib.optim.swa_utils
    x, y = _data(lib, 8, 4, seed=15), _data(lib, 8, 2, seed=16)
    model = _mlp(lib, seed=7)
    ema = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9))
    shadow = [p.detach().clone() for p in model.parameters()]
    opt = lib.optim.NAdam(model.parameters(), lr=0.03, momentum_decay=0.004)

    @jit
    def train_step(decay):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        with lib.no_grad():  # a manual EMA inside the compiled step
            for s, p in zip(shadow, model.parameters()):
                s.lerp_(p, 1 - decay)
        return loss.detach()

    hist = []
    for _ in range(6):
        loss = train_step(0.8)
        ema.update_parameters(model)  # AveragedModel's outside it
        hist.append((loss, ema.n_averaged.clone(), ema(x)))
    return hist, list(ema.module.parameters()), shadow, list(model.parameters()), _state(opt)


def case_freeze_part_between_calls(lib, jit):
    F = lib.nn.functional
    x, y = _data(lib, 8, 4, seed=17), _data(lib, 8, 2, seed=18)
    out = []
    for set_to_none in (True, False):  # (kept zero grads: Adam's and momentum's updates go on for frozen weights)
        model = _mlp(lib, seed=8)
        opt = lib.optim.RAdam(model.parameters(), lr=0.02, weight_decay=0.01, decoupled_weight_decay=True)
        sched = lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, end_factor=1.0, total_iters=4)

        @jit
        def train_step():
            opt.zero_grad(set_to_none=set_to_none)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        hist = []
        for it in range(7):
            if it == 3:
                model[0].requires_grad_(False)  # freeze the first layer
            if it == 5:
                model[0].requires_grad_(True)
            hist.append((train_step(), sched.get_last_lr(), model[0].weight.grad is None))
            sched.step()
        out.append((hist, list(model.parameters()), _state(opt)))
    return out


def case_lr_and_weight_decay_schedules_from_numpy(lib, jit):
    # (DINO/MAE style: per-iteration schedules precomputed as numpy arrays, written into every group each step)
    F = lib.nn.functional
    x, y = _data(lib, 8, 4, seed=19), _data(lib, 8, 2, seed=20)
    out = []
    for dt in (np.float64, np.float32):
        model = _mlp(lib, seed=9)
        opt = lib.optim.AdamW([{"params": [model[0].weight, model[2].weight]},
                               {"params": [model[0].bias, model[2].bias], "weight_decay": 0.0}], lr=0.01)
        warm = np.linspace(0.0, 0.05, 3)
        cos = 0.001 + 0.5 * (0.05 - 0.001) * (1 + np.cos(np.pi * np.arange(4) / 4))
        lr_schedule = np.concatenate((warm, cos)).astype(dt)
        wd_schedule = (0.04 + 0.5 * (0.4 - 0.04) * (1 + np.cos(np.pi * np.arange(7) / 7))).astype(dt)
        step = jit(opt.step)
        hist = []
        for it in range(7):
            for i, g in enumerate(opt.param_groups):
                g["lr"] = lr_schedule[it]
                if i == 0:
                    g["weight_decay"] = wd_schedule[it]
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            step()
            hist.append((loss.detach(), float(opt.param_groups[0]["lr"])))
        out.append((hist, list(model.parameters()), _state(opt)))
    return out


test_script_matches_torch = script_test(globals())


# --------------------------------------------------------------------------------------------------------- the fixes


def _fit(lib, jit, opt_fn, before_step, steps=6):
    """A compiled ``opt.step`` with the backward outside; ``before_step(opt, it)`` sets the hyper-parameters."""
    F = lib.nn.functional
    x, y = _data(lib, 8, 4, seed=21), _data(lib, 8, 2, seed=22)
    model = _mlp(lib, seed=10)
    opt = opt_fn(model.parameters())
    step = jit(opt.step)
    hist = []
    for it in range(steps):
        before_step(opt, it)
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step()
        hist.append(loss.detach())
    return hist, [p.detach().clone() for p in model.parameters()]


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_compiled_step_takes_numpy_scalar_hyper_parameters_as_values():
    """An lr and a weight decay written into the groups from float32 numpy arrays (``lr_schedule[it]``) were baked
    into the compiled step unguarded: from the third call on it kept the trace's values (loss 0.4905, torch's 0.4874
    at the fourth step). numpy scalars are numbers the program takes as values, as Python floats are."""
    lrs, wds = np.linspace(0.001, 0.05, 6).astype(np.float32), np.linspace(0.05, 0.2, 6).astype(np.float32)

    def run(lib, jit):
        def before(opt, it):
            opt.param_groups[0]["lr"], opt.param_groups[0]["weight_decay"] = lrs[it], wds[it]
            opt.param_groups[0]["betas"] = (np.float32(0.9 - 0.05 * it), 0.999)
        return _fit(lib, jit, lambda ps: lib.optim.AdamW(ps, lr=0.01), before)
    assert_same(run(torch, lambda f: f), run(torchish, torchish.compile))


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_compiled_step_reads_the_tensor_lr_its_group_holds_now():
    """A Tensor lr replaced by another Tensor between calls (``group["lr"] = torch.tensor(...)``, or
    ``opt.load_state_dict`` of a checkpoint saved with a Tensor lr) was ignored: the program read the Tensor it was
    traced with. The group's key is a source of state: the Tensor it holds at each call is read."""
    def run(lib, jit):
        def before(opt, it):
            opt.param_groups[0]["lr"] = lib.tensor(0.01 * (it + 1))
        out = [_fit(lib, jit, lambda ps: lib.optim.Adam(ps, lr=lib.tensor(0.01)), before)]
        saved = copy.deepcopy(lib.optim.SGD(_mlp(lib).parameters(), lr=lib.tensor(0.2), momentum=0.5).state_dict())

        def load(opt, it):
            if it == 3:
                opt.load_state_dict(saved)
        out.append(_fit(lib, jit, lambda ps: lib.optim.SGD(ps, lr=lib.tensor(0.01), momentum=0.5), load))
        return out
    assert_same(run(torch, lambda f: f), run(torchish, torchish.compile))


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_compiled_step_with_tensor_betas():
    """``Adam(betas=(Tensor, Tensor))`` under a compiled step raised JAX's ValueError (the Tensors reached the
    traced update), and a Tensor beta filled between calls must be read; OneCycleLR's cycle makes them
    (float, Tensor), whose float changes every step."""
    def run(lib, jit):
        def fill(opt, it):
            opt.param_groups[0]["betas"][0].fill_(0.9 - 0.05 * it)
        out = [_fit(lib, jit, lambda ps: lib.optim.Adam(ps, lr=0.01, betas=(lib.tensor(0.9), lib.tensor(0.99))),
                    fill)]
        scheds = []

        def cycle(opt, it):
            if not scheds:
                scheds.append(lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=8))
            else:
                scheds[0].step()
        out.append(_fit(lib, jit, lambda ps: lib.optim.AdamW(ps, lr=lib.tensor(0.01),
                                                             betas=(lib.tensor(0.9), lib.tensor(0.99))), cycle))
        return out
    assert_same(run(torch, lambda f: f), run(torchish, torchish.compile))
