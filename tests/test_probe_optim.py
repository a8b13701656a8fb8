"""Regressions found by probing torchish.optim against torch.optim: state dicts from older PyTorch versions (group
keys missing, scalar state as Python numbers) load as PyTorch's ``__setstate__`` fills them in, a loaded state dict
shares its Tensors with the optimizer (as PyTorch's ``load_state_dict`` does), and the lr schedulers' corner cases.
"""
import copy

import numpy as np
import pytest

import torchish
from oracle import assert_same, needs_torch, to_numpy, torch
from test_optim import TOL, _flat, _loss, _model

pytestmark = needs_torch

# the group keys each PyTorch optimizer's __setstate__ fills in with a default (what an older state dict lacks)
MISSING = {
    "SGD": ("nesterov", "maximize", "foreach", "differentiable", "fused"),
    "Adam": ("amsgrad", "maximize", "foreach", "capturable", "differentiable", "decoupled_weight_decay", "fused"),
    "AdamW": ("amsgrad", "maximize", "foreach", "capturable", "differentiable", "decoupled_weight_decay", "fused"),
    "Adamax": ("foreach", "maximize", "differentiable", "capturable"),
    "NAdam": ("maximize", "foreach", "capturable", "differentiable", "decoupled_weight_decay"),
    "RAdam": ("foreach", "maximize", "differentiable", "decoupled_weight_decay", "capturable"),
    "Adadelta": ("foreach", "maximize", "differentiable", "capturable"),
    "Adagrad": ("foreach", "maximize", "differentiable", "fused"),
    "RMSprop": ("momentum", "centered", "foreach", "maximize", "differentiable", "capturable"),
    "ASGD": ("foreach", "maximize", "differentiable", "capturable"),
    "Rprop": ("foreach", "maximize", "differentiable", "capturable"),
}
# the per-parameter scalars that older versions kept as Python numbers
OLD_SCALARS = {"NAdam": ("step", "mu_product"), "ASGD": ("step", "eta", "mu"), "SGD": ()}
KW = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.05), "AdamW": dict(lr=0.05, weight_decay=0.1),
      "NAdam": dict(lr=0.05), "RAdam": dict(lr=0.05), "ASGD": dict(lr=0.05), "Rprop": dict(lr=0.01),
      "RMSprop": dict(lr=0.01, momentum=0.5), "Adagrad": dict(lr=0.1), "Adadelta": dict(), "Adamax": dict()}


def _to_torchish(obj):
    if isinstance(obj, torch.Tensor):
        return torchish.tensor(obj.detach().numpy())
    if isinstance(obj, dict):
        return {k: _to_torchish(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_torchish(v) for v in obj]
    return obj


def _trained_torch_state(name, kw, n=3):
    w, b = _model(torch)
    opt = getattr(torch.optim, name)([w, b], **kw)
    for _ in range(n):
        opt.zero_grad()
        _loss(torch, w, b).backward()
        opt.step()
    return [to_numpy(w), to_numpy(b)], copy.deepcopy(opt.state_dict())


def _old_layout(sd, name, drop):
    """``sd`` as an older PyTorch saved it: the group keys in ``drop`` absent, scalar state as Python numbers."""
    for g in sd["param_groups"]:
        for k in drop:
            g.pop(k, None)
    for st in sd["state"].values():
        for k in OLD_SCALARS.get(name, ("step",)):
            st[k] = int(st[k].item()) if k == "step" else float(st[k].item())
    return sd


def _load_and_continue(lib, name, kw, values, sd, n=3):
    w, b = (lib.tensor(v, requires_grad=True) for v in values)
    opt = getattr(lib.optim, name)([w, b], **kw)
    opt.load_state_dict(sd)
    loaded = copy.deepcopy(opt.state_dict())
    traj = []
    for _ in range(n):
        opt.zero_grad()
        _loss(lib, w, b).backward()
        opt.step()
        traj.append(_flat(w, b))
    return loaded, np.stack(traj), opt


@pytest.mark.parametrize("name", sorted(MISSING))
def test_state_dict_of_an_older_version_loads_and_steps_as_torch(name):
    kw = KW[name]
    values, sd = _trained_torch_state(name, kw)
    old = _old_layout(sd, name, MISSING[name])
    t_loaded, t_traj, topt = _load_and_continue(torch, name, kw, values, copy.deepcopy(old))
    x_loaded, x_traj, xopt = _load_and_continue(torchish, name, kw, values, _to_torchish(old))
    # the groups got PyTorch's defaults, in PyTorch's order; the scalar state became PyTorch's scalar Tensors
    assert [list(g) for g in x_loaded["param_groups"]] == [list(g) for g in t_loaded["param_groups"]]
    assert_same(t_loaded, x_loaded, **TOL)
    np.testing.assert_allclose(x_traj, t_traj, **TOL)
    assert_same(topt.state_dict(), xopt.state_dict(), **TOL)


def test_adamw_keeps_decoupled_weight_decay_whatever_was_saved():
    # PyTorch's AdamW.__setstate__ sets decoupled_weight_decay=True over a loaded False
    values, sd = _trained_torch_state("AdamW", KW["AdamW"])
    for g in sd["param_groups"]:
        g["decoupled_weight_decay"] = False
    t_loaded, t_traj, _ = _load_and_continue(torch, "AdamW", KW["AdamW"], values, copy.deepcopy(sd))
    x_loaded, x_traj, _ = _load_and_continue(torchish, "AdamW", KW["AdamW"], values, _to_torchish(sd))
    assert x_loaded["param_groups"][0]["decoupled_weight_decay"] is True
    assert_same(t_loaded, x_loaded, **TOL)
    np.testing.assert_allclose(x_traj, t_traj, **TOL)


def test_sparse_adam_state_dict_without_maximize_steps():
    # SparseAdam.step reads group.get("maximize", False); its __setstate__ adds nothing
    def run(lib):
        w, b = _model(lib)
        opt = lib.optim.SparseAdam([w, b], lr=0.05)
        sd = opt.state_dict()
        del sd["param_groups"][0]["maximize"]
        opt.load_state_dict(sd)
        for _ in range(3):
            opt.zero_grad()
            _loss(lib, w, b).backward()
            w.grad, b.grad = w.grad.to_sparse(), b.grad.to_sparse()
            opt.step()
        return _flat(w, b), list(opt.state_dict()["param_groups"][0])

    (t_flat, t_keys), (x_flat, x_keys) = run(torch), run(torchish)
    assert x_keys == t_keys and "maximize" not in x_keys
    np.testing.assert_allclose(x_flat, t_flat, **TOL)


# ---------------------------------------------------------------------------------------------------------------
# load_state_dict keeps the loaded Tensors (PyTorch does not copy them unless a cast is needed)

def _sharing_outcomes(lib, name, dtype):
    """What a user can observe of the sharing between an optimizer and a fresh one loaded from its state dict."""
    out = []
    p1 = lib.tensor(np.arange(4, dtype=np.float32), requires_grad=True)
    opt1 = getattr(lib.optim, name)([p1], lr=0.1)
    p1.grad = lib.ones(4)
    opt1.step()
    p2 = lib.tensor(np.arange(4, dtype=dtype), requires_grad=True)
    opt2 = getattr(lib.optim, name)([p2], lr=0.1)
    sd = opt1.state_dict()
    opt2.load_state_dict(sd)
    s1, s2 = opt1.state[p1], opt2.state[p2]
    keys = list(s1)
    out.append([s1[k] is s2[k] for k in keys])
    out.append([str(s2[k].dtype) for k in keys])
    with lib.no_grad():
        s1[keys[-1]].add_(100.0)
        s1["step"].add_(5)
    p1.grad = lib.ones(4)
    opt1.step()  # an update of the source is seen by the loaded optimizer where they share
    out.append([to_numpy(s2[k]).tolist() for k in keys])
    p2.grad = lib.ones(4, dtype=p2.dtype)
    opt2.step()  # and the other way round
    out.append([to_numpy(s1[k]).tolist() for k in keys] + [to_numpy(p2).tolist()])
    out.append(opt2.param_groups[0] is sd["param_groups"][0])
    out.append(opt2.param_groups[0]["params"][0] is p2)
    return out


@pytest.mark.parametrize("name", ["Adam", "NAdam", "ASGD"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loaded_state_is_shared_as_in_torch(name, dtype):
    # float32: every state Tensor is kept as it is; float64 parameters: the moments are cast (new Tensors), the
    # float32 step count is still shared
    ref, got = _sharing_outcomes(torch, name, dtype), _sharing_outcomes(torchish, name, dtype)
    assert got[0] == ref[0] and got[1] == ref[1] and got[-2:] == ref[-2:]
    assert_same(ref, got, rtol=1e-5, atol=1e-5)


def test_checkpoint_loaded_into_a_compiled_step_continues_as_torch():
    """Where the optimizer already holds state, torchish writes the loaded values into its Tensors (PyTorch
    replaces them): a compiled step that ran before the load must continue from the checkpoint."""
    def run(lib):
        w, b = _model(lib)
        opt = lib.optim.Adam([w, b], lr=0.05)

        def step():
            opt.zero_grad()
            _loss(lib, w, b).backward()
            opt.step()
        fn = torchish.compile(step) if lib is torchish else step
        for _ in range(3):
            fn()
        w2, b2 = _model(lib)
        other = lib.optim.Adam([w2, b2], lr=0.05)
        w2.grad, b2.grad = lib.ones_like(w2), lib.ones_like(b2)
        other.step()
        opt.load_state_dict(other.state_dict())
        for _ in range(3):
            fn()
        return _flat(w, b), opt.state_dict()

    (t_flat, t_sd), (x_flat, x_sd) = run(torch), run(torchish)
    np.testing.assert_allclose(x_flat, t_flat, **TOL)
    assert_same(t_sd, x_sd, **TOL)
