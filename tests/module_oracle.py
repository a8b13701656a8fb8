"""Module-level oracle for the nn tests: build the same module in PyTorch and torchish (parameters copied from
PyTorch's, names and order checked) and compare outputs and the gradients of inputs and parameters."""
from __future__ import annotations

import numpy as np

from oracle import assert_same, to_numpy, torch, torchish


def pair(make):
    """``make(lib)`` builds the module with ``lib``; returns (torch module, torchish module with torch's values)."""
    tm, xm = make(torch), make(torchish)
    tn = [n for n, _ in tm.named_parameters()]
    xn = [n for n, _ in xm.named_parameters()]
    assert xn == tn
    with torchish.no_grad():
        for p, q in zip(xm.parameters(), tm.parameters()):
            assert tuple(p.shape) == tuple(q.shape)
            p.copy_(torchish.tensor(q.detach().numpy()))
    return tm, xm


def flat(out):
    """Tensors of a (nested) result, a PackedSequence standing for its data; None dropped."""
    if out is None:
        return []
    if isinstance(out, (torch.nn.utils.rnn.PackedSequence, torchish.nn.utils.rnn.PackedSequence)):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def compare(tm, xm, arrays, call, seed=5, grad=True, **tols):
    """Run ``call(lib, module, *tensors)`` in both libraries; compare the outputs, then the gradients of the
    float inputs and of every parameter under the same random cotangent."""
    def make(lib):
        return [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") if isinstance(a, np.ndarray) else a
                for a in arrays]

    tin, xin = make(torch), make(torchish)
    tout, xout = flat(call(torch, tm, *tin)), flat(call(torchish, xm, *xin))
    assert_same(tout, xout, **tols)
    if not grad:
        return
    tout = [t for t in tout if t.requires_grad]
    xout = [t for t in xout if t.requires_grad]
    assert len(tout) == len(xout)
    rng = np.random.default_rng(seed)
    cots = [rng.uniform(-1, 1, size=tuple(t.shape)).astype(to_numpy(t).dtype) for t in tout]
    tparams = [p for p in tm.parameters() if p.requires_grad]
    tleaves = [t for t in tin if isinstance(t, torch.Tensor) and t.requires_grad] + tparams
    xleaves = [t for t in xin if isinstance(t, torchish.Tensor) and t.requires_grad] + \
        [p for p in xm.parameters() if p.requires_grad]
    names = [f"input{i}" for i in range(len(tleaves) - len(tparams))] + \
        [n for n, p in tm.named_parameters() if p.requires_grad]
    tg = torch.autograd.grad(tout, tleaves, [torch.tensor(c) for c in cots], allow_unused=True)
    xg = torchish.autograd.grad(xout, xleaves, [torchish.tensor(c) for c in cots], allow_unused=True)
    for name, a, b in zip(names, tg, xg):
        if a is None:
            assert b is None or not np.any(to_numpy(b)), f"grad {name}: torch has none"
            continue
        assert b is not None, f"grad {name}: torchish returned None"
        assert_same(a, b, f"grad {name}", **tols)
