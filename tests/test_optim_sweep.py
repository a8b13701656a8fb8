"""Representative cases of a table-driven sweep of torchish.optim against torch.optim (optimizer x option x parameter
situation, 4 steps each, the parameters and the whole ``state_dict()`` compared after every step, then a fresh
optimizer loaded from it continuing), and the divergences the sweep found: ``capturable=True`` on the CPU,
``fused=True`` with complex parameters, Adagrad's complex accumulator, Adam's checks of Tensor ``lr``/``betas``,
SGD's learning-rate comparison, L-BFGS's state key order, a loaded state of another shape and Adafactor's empty
parameters.

Gradients are set from numpy (no backward), so each case compiles only the optimizer's own update.
"""
import copy

import numpy as np
import pytest

import torchish
from oracle import assert_same, needs_torch, same_error, torch

pytestmark = needs_torch

TOL = dict(rtol=1e-5, atol=1e-6)


def _values(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    v = rng.uniform(-1, 1, size=shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.uniform(-1, 1, size=shape)
    return v.astype(dtype)


def _same_state_dict(ref, got):
    """Equal values, dtypes and shapes, and PyTorch's key order (groups and per-parameter state)."""
    assert_same(ref, got, **TOL)
    assert [list(g) for g in got["param_groups"]] == [list(g) for g in ref["param_groups"]]
    for k in ref["state"]:
        assert list(got["state"][k]) == list(ref["state"][k]), k


def _run(lib, name, kw, situation, shapes=((3, 4), (4,)), dtype=np.float32, steps=4):
    """``steps`` steps of ``name(**kw)`` in a parameter situation; the parameters and state dict after each, then
    two steps of a fresh optimizer loaded from the state dict."""
    params = [lib.tensor(_values(90 + i, s, dtype), requires_grad=True) for i, s in enumerate(shapes)]
    cls = getattr(lib.optim, name)

    def make(ps):
        if situation == "groups":
            return cls([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.02, "weight_decay": 0.05}], **kw)
        if situation == "add_group":
            return cls(ps[:1], **kw)
        return cls(ps, **kw)

    opt, out = make(params), []
    for step in range(steps):
        if situation == "add_group" and step == 2:
            opt.add_param_group({"params": params[1:], "lr": 0.03})
        for i, p in enumerate(params):
            g = lib.tensor(_values(10 * step + i, tuple(p.shape), dtype))
            if situation == "none_grad" and i == 1 and step in (1, 2):
                p.grad = None
            elif situation == "zero_grad_false" and p.grad is not None:
                p.grad.add_(g)
            else:
                p.grad = g
        opt.step()
        if situation == "zero_grad_false":
            opt.zero_grad(set_to_none=False)
        out.append(([p.detach().clone() for p in params], copy.deepcopy(opt.state_dict())))
    params2 = [p.detach().clone().requires_grad_(True) for p in params]
    opt2 = make(params2)
    if situation == "add_group":
        opt2.add_param_group({"params": params2[1:], "lr": 0.03})
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    for step in range(steps, steps + 2):
        for i, p in enumerate(params2):
            p.grad = lib.tensor(_values(10 * step + i, tuple(p.shape), dtype))
        opt2.step()
        out.append(([p.detach().clone() for p in params2], copy.deepcopy(opt2.state_dict())))
    return out


def _same_run(*args, **kwargs):
    ref, got = _run(torch, *args, **kwargs), _run(torchish, *args, **kwargs)
    for (rp, rs), (gp, gs) in zip(ref, got):
        assert_same(rp, gp, **TOL)
        _same_state_dict(rs, gs)


# (optimizer, options, situation): one row per option the sweep covers, spread over the situations
SWEEP = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), "groups"),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, maximize=True), "none_grad"),
    ("SGD", dict(lr=0.1, momentum=0.5, fused=True), "add_group"),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1), "zero_grad_false"),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, foreach=True), "groups"),
    ("AdamW", dict(lr=0.05, maximize=True, fused=True), "none_grad"),
    ("Adamax", dict(lr=0.05, weight_decay=0.1), "add_group"),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2), "groups"),
    ("Adadelta", dict(lr=0.5, rho=0.5, maximize=True), "none_grad"),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, foreach=True), "add_group"),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 1.0)), "zero_grad_false"),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01, decoupled_weight_decay=True), "groups"),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, maximize=True), "none_grad"),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1), "add_group"),
    ("Adafactor", dict(lr=0.05, weight_decay=0.1, maximize=True), "groups"),
]


@pytest.mark.parametrize("name,kw,situation", SWEEP, ids=[f"{n}-{s}" for n, _, s in SWEEP])
def test_sweep_steps_state_dicts_and_reloading_match_torch(name, kw, situation):
    _same_run(name, kw, situation)


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.05)), ("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("RMSprop", dict(lr=0.01, centered=True))])
def test_float64_complex_and_zero_dim_and_empty_parameters(name, kw):
    _same_run(name, kw, "plain", dtype=np.float64, steps=2)
    _same_run(name, kw, "plain", dtype=np.complex64, steps=2)
    _same_run(name, kw, "plain", shapes=((), (0, 3)), steps=2)


def test_adagrad_complex_sum_starts_at_complex_value_value():
    # PyTorch fills a complex parameter's sum with complex(v, v): both parts of its real view start at v
    _same_run("Adagrad", dict(lr=0.1, initial_accumulator_value=0.2), "plain", dtype=np.complex64, steps=2)


def test_adam_tensor_lr_and_betas():
    def kw(lib):
        return dict(lr=lib.tensor(0.05), betas=(lib.tensor([0.8]), lib.tensor(0.9)))
    ref = _run(torch, "Adam", kw(torch), "plain", steps=2)
    got = _run(torchish, "Adam", kw(torchish), "plain", steps=2)
    for (rp, rs), (gp, gs) in zip(ref, got):
        assert_same(rp, gp, **TOL)
        _same_state_dict(rs, gs)  # (betas[0] given with shape (1,) is kept 0-d)


def _one_step(lib, name, kw, dtype=np.float32):
    p = lib.tensor(_values(0, (2, 3), dtype), requires_grad=True)
    opt = getattr(lib.optim, name)([p], **kw)
    p.grad = lib.tensor(_values(1, (2, 3), dtype))
    try:
        opt.step()
    finally:
        state = opt.state_dict()["state"]
    return state


CAPTURABLE = [(n, f) for n in ("Adam", "AdamW", "Adamax", "Adadelta", "RMSprop", "Rprop", "NAdam", "RAdam", "ASGD")
              for f in (False, True)]


@pytest.mark.parametrize("name,foreach", CAPTURABLE)
def test_capturable_on_the_cpu_raises_torchs_assertion(name, foreach):
    same_error(lambda lib: _one_step(lib, name, dict(capturable=True, foreach=foreach)))


def test_capturable_step_creates_the_state_before_raising():
    def state(lib):
        p = lib.tensor(_values(0, (2, 3), np.float32), requires_grad=True)
        opt = lib.optim.NAdam([p], capturable=True)
        p.grad = lib.ones(2, 3)
        with pytest.raises(AssertionError):
            opt.step()
        return opt.state_dict()["state"], p
    ref, got = state(torch), state(torchish)
    assert_same(ref, got)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_refuses_complex_parameters(name):
    same_error(lambda lib: _one_step(lib, name, dict(lr=0.1, fused=True), dtype=np.complex64))


@pytest.mark.parametrize("name", ["SGD", "Adagrad", "Adam"])
def test_fused_dtype_checks_of_a_parameter_added_later(name):
    # SGD checks its first parameter only (its fused kernel refuses the others: NotImplementedError), Adagrad and
    # Adam check each parameter whose state they create
    def run(lib, name):
        a = lib.tensor(_values(0, (2,), np.float32), requires_grad=True)
        b = lib.tensor(_values(1, (2,), np.complex64), requires_grad=True)
        opt = getattr(lib.optim, name)([a], lr=0.1, fused=True)
        a.grad = lib.ones(2)
        opt.step()
        opt.add_param_group({"params": [b]})
        b.grad = lib.ones(2, dtype=lib.complex64)
        opt.step()
    same_error(lambda lib: run(lib, name))


BAD_ADAM = [dict(lr=torchish.tensor(0.1), foreach=True), dict(betas=(0, 0.99)),
            dict(betas=(torchish.tensor(0.9), 0.99)), dict(betas=(torchish.tensor(0.9), torchish.tensor(0.99)),
                                                           foreach=True),
            dict(betas=(torchish.tensor([0.9, 0.8]), torchish.tensor(0.99)))]


@pytest.mark.parametrize("kw", BAD_ADAM, ids=range(len(BAD_ADAM)))
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_checks_tensor_lr_and_betas(name, kw):
    def make(lib):
        args = {k: (tuple(lib.tensor(b.numpy()) if isinstance(b, torchish.Tensor) else b for b in v)
                    if isinstance(v, tuple) else lib.tensor(v.numpy()) if isinstance(v, torchish.Tensor) else v)
                for k, v in kw.items()}
        return getattr(lib.optim, name)([lib.ones(2, requires_grad=True)], **args)
    same_error(make)


@pytest.mark.parametrize("lr", ["a", None])
def test_sgd_compares_lr_below_zero(lr):
    same_error(lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=lr))


def test_lbfgs_state_keys_in_torchs_order():
    def run(lib):
        x = lib.tensor([1.5, -0.5, 0.3], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], max_iter=4)

        def closure():
            opt.zero_grad()
            loss = ((x - 1) ** 2).sum() + (x[0] * x[1]) ** 2
            loss.backward()
            return loss
        opt.step(closure)
        return opt.state_dict()["state"][0]
    ref, got = run(torch), run(torchish)
    assert list(got) == list(ref)
    assert_same(ref, got)


@pytest.mark.parametrize("shape", [(3,), (1,), (2, 3)])
@pytest.mark.parametrize("name,kw", [("SGD", dict(momentum=0.9)), ("Adam", dict()), ("RMSprop", dict(centered=True))])
def test_state_loaded_for_another_shape_fails_the_step_as_torch(name, kw, shape):
    def run(lib):
        p = lib.ones(2, requires_grad=True)
        opt = getattr(lib.optim, name)([p], lr=0.1, **kw)
        p.grad = lib.ones(2)
        opt.step()
        q = lib.ones(shape, requires_grad=True)
        opt2 = getattr(lib.optim, name)([q], lr=0.1, **kw)
        opt2.load_state_dict(opt.state_dict())
        q.grad = lib.ones(shape)
        opt2.step()
    same_error(run)


def test_adafactor_refuses_an_empty_parameter_as_torch():
    # PyTorch divides by sqrt(numel) in Python: ZeroDivisionError
    same_error(lambda lib: _run(lib, "Adafactor", dict(lr=0.05), "plain", shapes=((0, 3),), steps=1))


# (PyTorch's differentiable RMSprop, Adagrad, Adamax, ASGD and Adadelta take a Python number lr only)
DIFFERENTIABLE = [("SGD", dict(weight_decay=0.1), True), ("SGD", dict(momentum=0.9, nesterov=True), True),
                  ("Adam", dict(), True), ("AdamW", dict(amsgrad=True), True), ("NAdam", dict(), True),
                  ("RAdam", dict(), True), ("RMSprop", dict(centered=True), False), ("Adagrad", dict(), False),
                  ("Adamax", dict(), False), ("ASGD", dict(), False), ("Adadelta", dict(), False)]


@pytest.mark.parametrize("name,kw,tensor_lr", DIFFERENTIABLE, ids=[n for n, _, _ in DIFFERENTIABLE])
def test_differentiable_step_carries_the_graph(name, kw, tensor_lr):
    # differentiable=True: the step is recorded, so a loss of the new parameters differentiates to a Tensor lr, to
    # the parameters before the step and to gradients made inside the graph (torchish's step ignored the graph).
    # SGD's first momentum buffer is a detached copy of the gradient, as in PyTorch.
    def run(lib):
        w0 = lib.tensor([1.0, 2.0, -0.5], requires_grad=True)
        w = w0.clone()
        lr = lib.tensor(0.1, requires_grad=True) if tensor_lr else 0.1
        c = lib.tensor([0.5, -1.0, 0.3], requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=lr, differentiable=True, **kw)
        w.grad = c * 2
        opt.step()
        (w ** 2).sum().backward()
        return w.detach(), w0.grad, c.grad, lr.grad if tensor_lr else None
    ref, got = run(torch), run(torchish)
    assert_same(ref, got, rtol=1e-4, atol=1e-5)


def test_differentiable_adam_with_tensor_betas():
    def run(lib):
        w0 = lib.tensor([1.0, 2.0, -0.5], requires_grad=True)
        w = w0.clone()
        b1 = lib.tensor(0.8, requires_grad=True)
        opt = lib.optim.Adam([w], lr=lib.tensor(0.1), betas=(b1, lib.tensor(0.9)), differentiable=True)
        for i in range(2):
            w.grad = lib.tensor([0.5, -1.0, 0.3]) * (i + 1)
            opt.step()
        (w ** 2).sum().backward()
        return w.detach(), w0.grad, b1.grad
    assert_same(run(torch), run(torchish), rtol=1e-4, atol=1e-5)


def test_differentiable_step_refuses_a_leaf_that_requires_grad():
    same_error(lambda lib: _one_step(lib, "Adam", dict(differentiable=True)))
