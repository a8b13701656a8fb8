"""torchish.utils.checkpoint against torch.utils.checkpoint: outputs, gradients of inputs and parameters, both
variants, checkpoint_sequential, RNG replay, warnings and errors; and inside torchish.compile, the same gradients
as eager with less temporary memory in XLA's memory analysis."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, needs_torch, to_numpy, torch, torchish
import torchish.utils.checkpoint  # noqa: E402,F401  (as `import torch` makes torch.utils.checkpoint reachable)

pytestmark = needs_torch


def ckpt(T):
    return torch.utils.checkpoint if T is torch else torchish.utils.checkpoint


def load(T, module, seed=10):
    with T.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(T.tensor(arr(*p.shape, seed=seed + i)))
    return module


def mlp(T):
    return load(T, T.nn.Sequential(T.nn.Linear(4, 4), T.nn.GELU(), T.nn.Linear(4, 4)))


def grads(module):
    return [None if p.grad is None else to_numpy(p.grad) for p in module.parameters()]


def assert_grads(ref, got):
    assert len(ref) == len(got)
    for i, (a, b) in enumerate(zip(ref, got)):
        assert (a is None) == (b is None), f"grad[{i}]: torch {a}, torchish {b}"
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-5, err_msg=f"grad[{i}]")


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_mlp_matches_torch(reentrant):
    out = []
    for T in (torch, torchish):
        m = mlp(T)
        x = T.tensor(arr(2, 4), requires_grad=True)
        calls = []
        y = ckpt(T).checkpoint(lambda h: calls.append(1) or m(h), x, use_reentrant=reentrant)
        (y * T.tensor(arr(2, 4, seed=3))).sum().backward()
        out.append((y, x.grad, grads(m), len(calls)))
    (ty, tx, tg, tc), (xy, xx, xg, xc) = out
    assert_same(ty.detach(), xy.detach())
    assert_same(tx, xx)
    assert_grads(tg, xg)
    assert xc == tc == 2  # forward, then the recomputation in backward


def test_checkpoint_keeps_no_activations():
    x = torchish.tensor(arr(2, 4), requires_grad=True)
    m = mlp(torchish)
    for reentrant in (True, False):
        y = torchish.utils.checkpoint.checkpoint(m, x, use_reentrant=reentrant)
        inner = [n for n, _ in y.grad_fn.next_functions if n is not None]
        # every edge leaves the block at once: inputs and parameters, no recorded op of the block
        assert inner and all(n.name() == "torch::autograd::AccumulateGrad" for n in inner), inner


def _kw_fn(T):
    w = T.tensor(arr(4, seed=4), requires_grad=True)

    def f(x, y, *, scale, tag):
        h = (x * w).sin() * scale + y
        return h, tag, {"n": 3, "t": h.sum()}
    return f, w


def test_checkpoint_kwargs_and_non_tensor_outputs():
    out = []
    for T in (torch, torchish):
        f, w = _kw_fn(T)
        x = T.tensor(arr(2, 4), requires_grad=True)
        y = T.tensor(arr(2, 4, seed=1), requires_grad=True)
        h, tag, d = ckpt(T).checkpoint(f, x, y, use_reentrant=False, scale=2.0, tag="blk")
        assert tag == "blk" and d["n"] == 3
        (h * h).sum().backward(retain_graph=True)
        d["t"].backward()  # a second output, through the same recomputation
        out.append((h.detach(), x.grad, y.grad, w.grad))
    for a, b in zip(*out):
        assert_same(a, b)
    check_raises(lambda T: ckpt(T).checkpoint(_kw_fn(T)[0], T.ones(2, 4), T.ones(2, 4), use_reentrant=True,
                                              scale=2.0, tag="x"))


def test_checkpoint_autograd_grad_and_double_backward():
    out = []
    for T in (torch, torchish):
        w = T.tensor(arr(4, seed=4), requires_grad=True)
        x = T.tensor(arr(2, 4), requires_grad=True)
        y = ckpt(T).checkpoint(lambda a: (a * w).sin() * a, x, use_reentrant=False)
        (gx,) = T.autograd.grad(y.sum(), x, create_graph=True)
        assert w.grad is None and x.grad is None  # autograd.grad touches no .grad
        (gx * gx).sum().backward()
        out.append((gx.detach(), x.grad, w.grad))
    for a, b in zip(*out):
        assert_same(a, b)


def test_checkpoint_backward_twice_needs_retain_graph():
    def run(T):
        x = T.tensor(arr(2, 4), requires_grad=True)
        y = ckpt(T).checkpoint(T.sin, x, use_reentrant=False).sum()
        y.backward()
        y.backward()
    check_raises(run)


def dropout_block(T):
    return load(T, T.nn.Sequential(T.nn.Linear(4, 4), T.nn.Dropout(0.5), T.nn.GELU()))


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_dropout_replays_the_forward_masks(reentrant):
    """preserve_rng_state: the recomputation draws the forward's masks, and the stream afterwards is as if it
    never ran — the same gradients and next draw as the plain (non-checkpointed) run with the same seed."""
    res = {}
    for mode in ("plain", "preserve", "no_preserve"):
        blk = dropout_block(torchish)
        x = torchish.tensor(arr(2, 4), requires_grad=True)
        torchish.manual_seed(5)
        if mode == "plain":
            y = blk(x)
        else:
            y = torchish.utils.checkpoint.checkpoint(blk, x, use_reentrant=reentrant,
                                                     preserve_rng_state=mode == "preserve")
        (y * y).sum().backward()
        res[mode] = (to_numpy(y), to_numpy(x.grad), grads(blk), to_numpy(torchish.rand(4)))
    plain, pres, nopres = res["plain"], res["preserve"], res["no_preserve"]
    np.testing.assert_array_equal(pres[0], plain[0])
    np.testing.assert_allclose(pres[1], plain[1], rtol=1e-6, atol=1e-7)
    assert_grads(plain[2], pres[2])
    np.testing.assert_array_equal(pres[3], plain[3])
    # without preserving, the recomputation draws new masks from the live stream (as in PyTorch)
    assert not np.allclose(nopres[1], plain[1])
    assert not np.array_equal(nopres[3], plain[3])


@pytest.mark.parametrize("segments,reentrant", [(2, False), (3, True)])
def test_checkpoint_sequential_matches_torch(segments, reentrant):
    out = []
    for T in (torch, torchish):
        seq = load(T, T.nn.Sequential(T.nn.Linear(4, 4), T.nn.Tanh(), T.nn.Linear(4, 4), T.nn.GELU(),
                                      T.nn.Linear(4, 4), T.nn.Tanh()))
        x = T.tensor(arr(2, 4), requires_grad=True)
        y = ckpt(T).checkpoint_sequential(seq, segments, x, use_reentrant=reentrant)
        (y * T.tensor(arr(2, 4, seed=3))).sum().backward()
        out.append((y.detach(), x.grad, grads(seq)))
    assert_same(out[0][0], out[1][0])
    assert_same(out[0][1], out[1][1])
    assert_grads(out[0][2], out[1][2])


def test_use_reentrant_default_and_inputs_without_grad():
    res = []
    for T in (torch, torchish):
        m = mlp(T)
        x = T.tensor(arr(2, 4))
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            y = ckpt(T).checkpoint(m, x)  # no use_reentrant: warns and means True
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = ckpt(T).checkpoint(m, x, use_reentrant=True)
        assert not y.requires_grad  # reentrant: parameters get no gradient through it
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = ckpt(T).checkpoint(m, x, use_reentrant=False)
        y.sum().backward()  # non-reentrant: the parameters do
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            ckpt(T).checkpoint_sequential(m, 2, x)
        res.append(grads(m))
    assert_grads(*res)


@pytest.mark.parametrize("kwargs", [dict(use_reentrant=False, determinism_check="strict"),
                                    dict(use_reentrant=True, debug=True),
                                    dict(use_reentrant=True, context_fn=lambda: (None, None))])
def test_checkpoint_bad_arguments(kwargs):
    check_raises(lambda T: ckpt(T).checkpoint(T.sin, T.ones(2, 4, requires_grad=True), **kwargs))


def test_checkpoint_sequential_bad_kwargs():
    check_raises(lambda T: ckpt(T).checkpoint_sequential(T.nn.Sequential(T.nn.Tanh()), 1, T.ones(2, 4),
                                                         use_reentrant=False, foo=1))


def test_determinism_check_raises_checkpoint_error():
    def run(T, check):
        n = [0]

        def f(x):
            n[0] += 1
            return x[:n[0]].sin()  # the recomputation returns a different shape
        x = T.tensor(arr(2, 4), requires_grad=True)
        ckpt(T).checkpoint(f, x, use_reentrant=False, determinism_check=check).sum().backward()
    for T in (torch, torchish):
        with pytest.raises(ckpt(T).CheckpointError):
            run(T, "default")


# ----------------------------------------------------------------------------------------------------------------
# inside torchish.compile: jax.checkpoint


def _deep(T, n=4):
    return load(T, T.nn.Sequential(*[T.nn.Sequential(T.nn.Linear(4, 4), T.nn.GELU()) for _ in range(n)]))


def _step(T, model, mode):
    def step(x):
        for p in model.parameters():
            p.grad = None
        h = x
        for blk in model:
            if mode == "plain":
                h = blk(h)
            else:
                h = T.utils.checkpoint.checkpoint(blk, h, use_reentrant=mode == "reentrant",
                                                  **({"offload": True} if mode == "offload" else {}))
        loss = (h * h).mean()
        loss.backward()
        return loss
    return step


@pytest.mark.slow
def test_compiled_checkpoint_same_grads_less_temp_memory():
    x_np = arr(2, 4)
    tm = _deep(torch)
    ref_loss = _step(torch, tm, "plain")(torch.tensor(x_np))
    ref = grads(tm)
    temp, barriers = {}, {}
    for mode in ("plain", "checkpoint", "offload"):
        model = _deep(torchish)
        step = torchish.compile(_step(torchish, model, mode))
        x = torchish.tensor(x_np)
        for _ in range(2):  # the first call runs eagerly, the second traces and runs compiled
            loss = step(x)
        assert step.stats["compiled_calls"] == 1, step.stats
        np.testing.assert_allclose(float(loss), ref_loss.item(), rtol=2e-5)
        assert_grads(ref, grads(model))
        temp[mode] = step.memory_analysis(x).temp_size_in_bytes
        # jax.checkpoint: the recomputed forward sits behind optimisation barriers in the program (the plain one has
        # a few too: a mean's true division, _precision.div)
        barriers[mode] = step.lower(x).as_text().count("optimization_barrier")
    assert barriers["checkpoint"] > barriers["plain"] and barriers["offload"] > barriers["plain"], barriers
    assert temp["checkpoint"] < temp["plain"], temp
