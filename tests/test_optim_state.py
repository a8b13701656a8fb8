"""torch.optim's surface in torchish: parameter groups (per-group hyper-parameters, ``lr`` changed between steps,
``add_param_group``), parameters without gradient, ``zero_grad``, ``state_dict``/``load_state_dict`` (torchish's
own and PyTorch's), ``step(closure)``, step and state-dict hooks, and the errors for bad arguments — each against
real torch on the model of ``test_optim.py`` (so the compiled updates are shared with its trajectory tests)."""
import copy
import importlib

import numpy as np
import pytest

import torchish
from oracle import arr, assert_same, check_raises, needs_torch, to_numpy, torch
from test_optim import TOL, _flat, _loss, _model, opt_factory, same_trajectory

pytestmark = needs_torch

# one representative per optimizer (the first trajectory case of each, so no new compiles)
DEFAULTS = [("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)), ("Adam", dict(lr=0.05)),
            ("AdamW", dict(lr=0.05, weight_decay=0.1)), ("RMSprop", dict(lr=0.01)), ("Adagrad", dict(lr=0.1)),
            ("Adadelta", dict()), ("Adamax", dict()), ("NAdam", dict(lr=0.05)), ("RAdam", dict(lr=0.05)),
            ("ASGD", dict(lr=0.05)), ("Rprop", dict(lr=0.01))]
NAMES = [n for n, _ in DEFAULTS]


def _same_state_dict(ref, got, **tols):
    """Equal values, dtypes and shapes (``assert_same``), plus the same key order as PyTorch."""
    assert_same(ref, got, **(tols or TOL))
    assert [list(g) for g in got["param_groups"]] == [list(g) for g in ref["param_groups"]]
    assert list(got["state"]) == list(ref["state"])
    for k in ref["state"]:
        assert list(got["state"][k]) == list(ref["state"][k]), k


# ---------------------------------------------------------------------------------------------------------------
# parameter groups

@pytest.mark.parametrize("name,kw", [("SGD", dict(momentum=0.9)), ("Adam", dict())])
def test_groups_with_own_hyperparameters_and_lr_changes(name, kw):
    def make(lib, params):
        w, b = params
        return getattr(lib.optim, name)([{"params": [w], "lr": 0.05, "weight_decay": 0.1}, {"params": b}],
                                        lr=0.1, **kw)

    def change_lr(lib, opt, i, w, b):
        if i == 6:
            opt.param_groups[0]["lr"] = 0.02
        if i == 12:
            opt.param_groups[1]["lr"] *= 0.5

    topt, xopt = same_trajectory(make, before_step=change_lr)
    _same_state_dict(topt.state_dict(), xopt.state_dict())


def test_add_param_group():
    def add_bias(lib, opt, i, w, b):
        if i == 5:
            opt.add_param_group({"params": [b], "lr": 0.01, "betas": (0.8, 0.9)})

    def make(lib, params):
        w, b = params
        return lib.optim.Adam([w], lr=0.05)

    topt, xopt = same_trajectory(make, before_step=add_bias)
    _same_state_dict(topt.state_dict(), xopt.state_dict())


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.05)),
                                     ("Rprop", dict(lr=0.01))])
def test_params_without_grad_are_skipped(name, kw):
    """A parameter never used gets no state; one whose grad is None on some steps keeps its state unchanged
    then (its step count lags), as in PyTorch."""
    out = {}
    for lib in (torch, torchish):
        w, b = _model(lib)
        unused = lib.tensor(arr(2, seed=9), requires_grad=True)
        opt = getattr(lib.optim, name)([w, unused, b], **kw)
        traj = []
        for i in range(8):
            opt.zero_grad()
            _loss(lib, w, b).backward()
            if i % 3 == 0:
                b.grad = None
            opt.step()
            traj.append(_flat(w, b, unused))
        out[lib] = np.stack(traj), opt.state_dict()
    np.testing.assert_allclose(out[torchish][0], out[torch][0], **TOL)
    _same_state_dict(out[torch][1], out[torchish][1])
    assert 1 not in out[torchish][1]["state"]


def test_zero_grad_set_to_none_false_keeps_zero_grads():
    def zero_keep(lib, opt, i, w, b):
        if i % 2:
            opt.zero_grad(set_to_none=False)  # Adam still steps: zero gradients move the parameters by momentum
            assert w.grad is not None and not to_numpy(w.grad).any()

    same_trajectory(opt_factory("Adam", lr=0.05), n=6, before_step=zero_keep)
    for lib in (torch, torchish):
        w, b = _model(lib)
        opt = lib.optim.SGD([w, b], lr=0.1)
        _loss(lib, w, b).backward()
        opt.zero_grad()
        assert w.grad is None and b.grad is None
        opt.step()  # nothing has a gradient: nothing moves
        np.testing.assert_array_equal(_flat(w, b), _flat(arr(3, 4, seed=1), arr(4, seed=2)))


# ---------------------------------------------------------------------------------------------------------------
# state_dict / load_state_dict

def _torch_to_torchish(obj):
    if isinstance(obj, torch.Tensor):
        return torchish.tensor(obj.detach().numpy())
    if isinstance(obj, dict):
        return {k: _torch_to_torchish(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_torch_to_torchish(v) for v in obj]
    return obj


def _continue(lib, opt_name, kw, values, state_dict, n):
    """A fresh optimizer over parameters set to ``values`` with ``state_dict`` loaded, trained ``n`` steps."""
    w, b = (lib.tensor(v, requires_grad=True) for v in values)
    opt = getattr(lib.optim, opt_name)([w, b], **kw)
    opt.load_state_dict(state_dict)
    traj = []
    for _ in range(n):
        opt.zero_grad()
        _loss(lib, w, b).backward()
        opt.step()
        traj.append(_flat(w, b))
    return np.stack(traj), opt


@pytest.mark.parametrize("name,kw", DEFAULTS, ids=NAMES)
def test_state_dict_round_trip_and_loading_torch_state(name, kw):
    # before any step: the same (empty, or for Adagrad eagerly created) state as PyTorch
    fresh = {lib: getattr(lib.optim, name)(list(_model(lib)), **kw).state_dict() for lib in (torch, torchish)}
    _same_state_dict(fresh[torch], fresh[torchish])

    trained = {}
    for lib in (torch, torchish):
        w, b = _model(lib)
        opt = getattr(lib.optim, name)([w, b], **kw)
        for _ in range(4):
            opt.zero_grad()
            _loss(lib, w, b).backward()
            opt.step()
        trained[lib] = ([to_numpy(w), to_numpy(b)], opt)
    values, topt = trained[torch]
    xvalues, xopt = trained[torchish]
    _same_state_dict(topt.state_dict(), xopt.state_dict())

    torch_sd = copy.deepcopy(topt.state_dict())  # torch's load aliases the loaded tensors and updates them
    ref, _ = _continue(torch, name, kw, values, topt.state_dict(), 4)
    # torchish's own state dict: the loaded optimizer continues exactly as the original would
    # (a deep copy: loading shares the state dict's tensors, as torch's does, and the original continues below)
    own, loaded = _continue(torchish, name, kw, xvalues, copy.deepcopy(xopt.state_dict()), 4)
    orig = []
    w, b = xopt.param_groups[0]["params"]
    for _ in range(4):
        xopt.zero_grad()
        _loss(torchish, w, b).backward()
        xopt.step()
        orig.append(_flat(w, b))
    np.testing.assert_array_equal(own, np.stack(orig))
    np.testing.assert_allclose(own, ref, **TOL)
    # PyTorch's state dict (tensors converted) loads into torchish and continues as PyTorch does
    from_torch, _ = _continue(torchish, name, kw, values, _torch_to_torchish(torch_sd), 4)
    np.testing.assert_allclose(from_torch, ref, **TOL)


def test_loaded_groups_restored():
    # (whether loaded state tensors are shared with the source, as torch shares them: test_probe_optim.py)
    w, b = _model(torchish)
    opt = torchish.optim.Adam([w, b], lr=0.05)
    _loss(torchish, w, b).backward()
    opt.step()
    sd = opt.state_dict()
    w2, b2 = _model(torchish)
    opt2 = torchish.optim.Adam([w2, b2], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.05 and opt2.param_groups[0]["params"][0] is w2
    assert set(opt2.state[w2]) == set(opt.state[w])


def test_load_state_dict_mismatch_raises():
    def bad_groups(lib):
        w, b = _model(lib)
        sd = lib.optim.SGD([w, b], lr=0.1).state_dict()
        lib.optim.SGD([{"params": [w]}, {"params": [b]}], lr=0.1).load_state_dict(sd)

    def bad_sizes(lib):
        w, b = _model(lib)
        sd = lib.optim.SGD([w, b], lr=0.1).state_dict()
        lib.optim.SGD([w], lr=0.1).load_state_dict(sd)

    check_raises(bad_groups)
    check_raises(bad_sizes)


def test_state_dict_hooks():
    calls = {}
    for lib in (torch, torchish):
        w, b = _model(lib)
        opt = lib.optim.SGD([w, b], lr=0.1)
        log = calls[lib] = []
        opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load_pre", sorted(sd))))
        opt.register_load_state_dict_post_hook(lambda o: log.append("load_post"), prepend=True)
        sd = opt.state_dict()
        log.append(sorted(sd))
        opt.load_state_dict(copy.deepcopy({k: v for k, v in sd.items() if k != "extra"}))
    assert calls[torchish] == calls[torch]


# ---------------------------------------------------------------------------------------------------------------
# step(closure) and step hooks

def test_step_closure_returns_loss_and_runs_with_grad():
    out = {}
    for lib in (torch, torchish):
        w, b = _model(lib)
        opt = lib.optim.Adam([w, b], lr=0.05)
        results = []

        def closure():
            opt.zero_grad()
            loss = _loss(lib, w, b)
            loss.backward()
            results.append(loss)
            return loss

        with lib.no_grad():  # the closure enables grad itself
            for _ in range(3):
                ret = opt.step(closure)
                assert ret is results[-1]
        out[lib] = [float(r.detach()) for r in results], _flat(w, b)
    np.testing.assert_allclose(out[torchish][0], out[torch][0], **TOL)
    np.testing.assert_allclose(out[torchish][1], out[torch][1], **TOL)


def test_step_hooks_order_args_and_removal():
    logs = {}
    for lib in (torch, torchish):
        w, b = _model(lib)
        opt = lib.optim.SGD([w, b], lr=0.1)
        log = logs[lib] = []

        def pre(o, args, kwargs):
            log.append(("pre", o is opt, len(args), sorted(kwargs)))

        def post(o, args, kwargs):
            log.append(("post", o is opt, len(args), sorted(kwargs)))

        def replace_closure(o, args, kwargs):
            log.append("replace")
            return args, {"closure": lambda: 7.0}

        mod = importlib.import_module(f"{lib.__name__}.optim.optimizer")
        handles = [mod.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global_pre")),
                   mod.register_optimizer_step_post_hook(lambda o, a, k: log.append("global_post")),
                   opt.register_step_pre_hook(pre), opt.register_step_post_hook(post)]
        try:
            _loss(lib, w, b).backward()
            opt.step()
            h = opt.register_step_pre_hook(replace_closure)
            log.append(opt.step(closure=None))
            h.remove()
        finally:
            for h in handles:
                h.remove()
        opt.step()
        log.append("after removal")
        logs[lib].append(_flat(w, b).round(5).tolist())
    assert logs[torchish] == logs[torch]


# ---------------------------------------------------------------------------------------------------------------
# bad arguments: the same exception type as PyTorch

BAD = [("SGD", dict(lr=-0.1)), ("SGD", dict(lr=0.1, momentum=-0.5)), ("SGD", dict(lr=0.1, weight_decay=-1.0)),
       ("SGD", dict(lr=0.1, nesterov=True)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
       ("Adam", dict(lr=-1e-3)), ("Adam", dict(betas=(1.0, 0.999))), ("Adam", dict(betas=(0.9, 1.0))),
       ("Adam", dict(betas=(-0.1, 0.999))), ("Adam", dict(eps=-1e-8)), ("Adam", dict(weight_decay=-0.1)),
       ("AdamW", dict(betas=(0.9, 1.5))), ("AdamW", dict(lr=-1.0)),
       ("RMSprop", dict(lr=-0.1)), ("RMSprop", dict(alpha=-0.5)), ("RMSprop", dict(eps=-1.0)),
       ("RMSprop", dict(momentum=-0.1)), ("RMSprop", dict(weight_decay=-0.1)),
       ("Adagrad", dict(lr=-0.1)), ("Adagrad", dict(lr_decay=-0.1)), ("Adagrad", dict(eps=-1.0)),
       ("Adagrad", dict(initial_accumulator_value=-1.0)), ("Adagrad", dict(weight_decay=-0.1)),
       ("Adadelta", dict(lr=-0.1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1.0)),
       ("Adadelta", dict(weight_decay=-1.0)),
       ("Adamax", dict(lr=-0.1)), ("Adamax", dict(betas=(0.9, 1.0))), ("Adamax", dict(eps=-1.0)),
       ("NAdam", dict(betas=(1.0, 0.9))), ("NAdam", dict(momentum_decay=-0.1)), ("NAdam", dict(weight_decay=-1.0)),
       ("RAdam", dict(betas=(0.9, -0.1))), ("RAdam", dict(eps=-1.0)), ("RAdam", dict(weight_decay=-1.0)),
       ("ASGD", dict(lr=-0.1)), ("ASGD", dict(weight_decay=-0.1)),
       ("Rprop", dict(lr=-0.1)), ("Rprop", dict(etas=(1.2, 0.5))), ("Rprop", dict(etas=(0.5, 0.9))),
       ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)), ("SparseAdam", dict(betas=(1.0, 0.9))),
       ("LBFGS", dict(lr=-1.0))]


@pytest.mark.parametrize("name,kw", BAD, ids=[f"{n}-{k}" for n, k in BAD])
def test_bad_hyperparameters_raise(name, kw):
    check_raises(lambda lib: getattr(lib.optim, name)(list(_model(lib)), **kw))


@pytest.mark.parametrize("name", NAMES + ["SparseAdam", "LBFGS"])
def test_bad_parameter_lists_raise(name):
    cls = lambda lib: getattr(lib.optim, name)  # noqa: E731
    check_raises(lambda lib: cls(lib)([]))                                   # empty
    check_raises(lambda lib: cls(lib)(_model(lib)[0]))                       # a Tensor, not an iterable
    check_raises(lambda lib: cls(lib)([_model(lib)[0] * 2]))                 # not a leaf
    check_raises(lambda lib: cls(lib)([1.0]))                                # not a Tensor
    check_raises(lambda lib: cls(lib)([{"params": set(_model(lib))}]))      # a group's params in a set


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_parameter_in_two_groups_raises(name):
    def two_groups(lib):
        w, b = _model(lib)
        getattr(lib.optim, name)([{"params": [w, b]}, {"params": [w]}], lr=0.1)

    def added_twice(lib):
        w, b = _model(lib)
        opt = getattr(lib.optim, name)([w, b], lr=0.1)
        opt.add_param_group({"params": [b]})

    check_raises(two_groups)
    check_raises(added_twice)
    check_raises(lambda lib: getattr(lib.optim, name)(list(_model(lib)), lr=0.1).add_param_group([1]))
