"""Layer-level oracle for the linear/conv/pool/norm/dropout/embedding tests: build the same layer in PyTorch and
torchish, give torchish PyTorch's parameters and buffers, then compare outputs, input gradients, parameter
gradients, buffers, state_dict keys and repr.

``check_module(lambda nn: nn.Conv2d(2, 3, 3), [arr(1, 2, 5, 5)])`` runs ``module(*inputs)`` with both libraries.
"""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_same, to_numpy, torch, torchish


def copy_state(src, dst):
    """Write ``src``'s (PyTorch) parameters and buffers into ``dst``'s (torchish) tensors, in place."""
    dparams = dict(dst.named_parameters())
    dbufs = dict(dst.named_buffers())
    assert list(dparams) == [n for n, _ in src.named_parameters()], "parameter names differ"
    assert list(dbufs) == [n for n, _ in src.named_buffers()], "buffer names differ"
    with torchish.no_grad():
        for name, p in src.named_parameters():
            assert tuple(dparams[name].shape) == tuple(p.shape), f"{name}: shape differs"
            dparams[name].copy_(torchish.tensor(to_numpy(p)))
        for name, b in src.named_buffers():
            dbufs[name].copy_(torchish.tensor(to_numpy(b)))


def _tensors(out, lib):
    if isinstance(out, lib.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o, lib)]
    return []


def _inputs(lib, inputs, grad):
    out = []
    for x in inputs:
        if isinstance(x, np.ndarray):
            t = lib.tensor(x)
            if grad and x.dtype.kind == "f":
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(x)
    return out


def check_module(make, inputs, *, train=True, grad=True, steps=1, kwargs=None, seed=5, **tols):
    """Compare one layer between the libraries; returns ``(torch module, torchish module)``.

    ``make(nn)`` builds the layer from either library's ``nn``; ``inputs`` are numpy arrays (float ones require
    grad) and plain values passed positionally. With ``steps > 1`` the forward/backward runs that many times (so
    running statistics and renormalised weights evolve) and everything is compared after each step.
    """
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    tm, xm = make(torch.nn), make(torchish.nn)
    assert repr(xm) == repr(tm)
    assert list(xm.state_dict().keys()) == list(tm.state_dict().keys())
    copy_state(tm, xm)
    tm.train(train)
    xm.train(train)
    rng = np.random.default_rng(seed)
    for step in range(steps):
        tin, xin = _inputs(torch, inputs, grad), _inputs(torchish, inputs, grad)
        ref = tm(*tin, **(kwargs or {}))
        got = xm(*xin, **(kwargs or {}))
        assert_same(ref, got, f"step {step} out", **tols)
        touts = [t for t in _tensors(ref, torch) if t.requires_grad]
        xouts = [t for t in _tensors(got, torchish) if t.requires_grad]
        assert len(touts) == len(xouts)
        if grad and touts:
            cots = [rng.uniform(-1, 1, size=tuple(t.shape)).astype(to_numpy(t).dtype) for t in touts]
            for p in list(tm.parameters()) + list(xm.parameters()):
                p.grad = None
            torch.autograd.backward(touts, [torch.tensor(c) for c in cots])
            torchish.autograd.backward(xouts, [torchish.tensor(c) for c in cots])
            for i, (a, b) in enumerate(zip(tin, xin)):
                if isinstance(a, torch.Tensor) and a.requires_grad:
                    assert_same(a.grad, b.grad, f"step {step} input[{i}].grad", **tols)
            xparams = dict(xm.named_parameters())
            for name, p in tm.named_parameters():
                if p.grad is None:
                    g = xparams[name].grad
                    assert g is None or not np.any(to_numpy(g)), f"{name}.grad: torch has none"
                else:
                    assert_same(p.grad, xparams[name].grad, f"step {step} {name}.grad", **tols)
        xbufs = dict(xm.named_buffers())
        for name, b in tm.named_buffers():
            assert_same(b, xbufs[name], f"step {step} buffer {name}", **tols)
        xp = dict(xm.named_parameters())
        for name, p in tm.named_parameters():      # in-place updates (max_norm) reach the parameters too
            assert_same(p.detach(), xp[name].detach(), f"step {step} parameter {name}", **tols)
    return tm, xm
