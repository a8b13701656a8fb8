"""Training-loop recipes against PyTorch: gradient accumulation over micro-batches, the optimizer step inside
backward (``register_post_accumulate_grad_hook``), and clip_grad_norm_ in an accumulation loop."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import arr, needs_torch, to_numpy, torch, torchish

pytestmark = needs_torch

X, Y = arr(8, 4, seed=1), arr(8, 4, seed=2)


def model(T):
    m = T.nn.Sequential(T.nn.Linear(4, 4), T.nn.Tanh(), T.nn.Linear(4, 4))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.tensor(arr(*p.shape, seed=10 + i)))
    return m


def loss_fn(T, m, lo, hi):
    return T.nn.functional.mse_loss(m(T.tensor(X[lo:hi])), T.tensor(Y[lo:hi]))


def numpy_of(tensors):
    return [to_numpy(t) for t in tensors]


def assert_all_close(ref, got, rtol=2e-5, atol=1e-6):
    assert len(ref) == len(got)
    for i, (a, b) in enumerate(zip(ref, got)):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=f"[{i}]")


def test_gradient_accumulation_equals_full_batch():
    accumulated = {}
    for T in (torch, torchish):
        m = model(T)
        for k in range(4):  # 4 micro-batches of 2, each loss scaled by 1/4
            (loss_fn(T, m, 2 * k, 2 * k + 2) / 4).backward()
        accumulated[T] = numpy_of(p.grad for p in m.parameters())
    full = model(torchish)
    loss_fn(torchish, full, 0, 8).backward()
    assert_all_close(numpy_of(p.grad for p in full.parameters()), accumulated[torchish])
    assert_all_close(accumulated[torch], accumulated[torchish])


OPTIMIZERS = {"sgd": lambda T, ps: T.optim.SGD(ps, lr=0.1, momentum=0.9),
              "adam": lambda T, ps: T.optim.Adam(ps, lr=0.05)}


def train(T, make_opt, in_backward, steps=3):
    """``steps`` full-batch steps; with ``in_backward`` one optimizer per parameter stepped from its
    post-accumulate-grad hook (PyTorch's recipe), so each gradient is used and freed during backward."""
    m = model(T)
    params = list(m.parameters())
    if in_backward:
        opts = {p: make_opt(T, [p]) for p in params}

        def hook(p):
            opts[p].step()
            opts[p].zero_grad()
        for p in params:
            p.register_post_accumulate_grad_hook(hook)
    else:
        opt = make_opt(T, params)
    for _ in range(steps):
        if not in_backward:
            opt.zero_grad()
        loss_fn(T, m, 0, 8).backward()
        if in_backward:
            assert all(p.grad is None for p in params)  # freed inside backward
        else:
            opt.step()
    return numpy_of(params)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_step_in_backward_matches_step_loop(name):
    make = OPTIMIZERS[name]
    ref = train(torchish, make, in_backward=False)
    got = train(torchish, make, in_backward=True)
    assert_all_close(ref, got)
    assert_all_close(train(torch, make, in_backward=True), got)


def test_clip_grad_norm_in_accumulation_loop():
    out = []
    for T in (torch, torchish):
        m = model(T)
        opt = T.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
        norms = []
        for _ in range(3):
            opt.zero_grad()
            for k in range(4):
                (loss_fn(T, m, 2 * k, 2 * k + 2) / 4).backward()
            norms.append(float(T.nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.05)))
            opt.step()
        out.append((norms, numpy_of(m.parameters())))
    (tn, tp), (xn, xp) = out
    assert tn[0] > 0.05  # the clipping is active
    np.testing.assert_allclose(xn, tn, rtol=2e-5)
    assert_all_close(tp, xp)
