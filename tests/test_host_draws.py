"""Draws on the host (``torchish/ops/host_draws.py``) give the compiled samplers' bits and leave the generator in the
same state; a size class moves to its kernel once its host time passes the budget (ski rental)."""
from __future__ import annotations

import numpy as np
import pytest

import torchish
from torchish.ops import _avx_mathfun, _samplers, host_draws
from torchish.ops._xp import NP

from oracle import needs_torch, torch

# (name, fn(lib) -> tensor): each after a rand(5) that moves the stream off a block boundary
DRAWS = [
    ("rand_f32", lambda T: T.rand(3, 70)),
    ("rand_f64", lambda T: T.rand(45, dtype=T.float64)),
    ("uniform_f16", lambda T: T.empty(50, dtype=T.float16).uniform_(-3, 5)),
    ("uniform_bounds", lambda T: T.empty(2, 40).uniform_(-0.1, 1e-3)),
    ("randn_blocks", lambda T: T.randn(4, 16)),
    ("randn_partial", lambda T: T.randn(37)),
    ("randn_crossing_twists", lambda T: T.randn(1500)),
    ("normal_mean_std", lambda T: T.empty(29).normal_(2.5, 0.25)),
    ("bernoulli", lambda T: T.empty(3, 33).bernoulli_(0.3)),
    ("bernoulli_int", lambda T: T.zeros(20, dtype=T.int64).bernoulli_(0.7)),
    ("randint", lambda T: T.randint(-5, 7, (60,))),
    ("randint_wide", lambda T: T.randint(0, 2 ** 40, (9,))),
    ("randint_uint8", lambda T: T.randint(0, 200, (30,), dtype=T.uint8)),
    ("randperm", lambda T: T.randperm(700)),
    ("randperm_int32", lambda T: T.randperm(5, dtype=T.int32)),
    ("linear_init", lambda T: T.nn.Linear(19, 7).weight.detach()),
]


def _run(fn, seed):
    torchish.manual_seed(seed)
    torchish.rand(5)
    out = fn(torchish).numpy()
    return out, torchish.get_rng_state().numpy(), torchish.rand(3).numpy()


@pytest.fixture
def path(monkeypatch):
    def force(host):
        monkeypatch.setattr(host_draws, "BUDGET", float("inf") if host else 0.0)
        monkeypatch.setattr(host_draws, "COMPILED", set())
        monkeypatch.setattr(host_draws, "_SPENT", {})
    return force


@pytest.mark.parametrize("name,fn", DRAWS, ids=[d[0] for d in DRAWS])
def test_host_and_kernel_draw_alike(name, fn, path):
    res = {}
    for host in (True, False):
        path(host)
        res[host] = _run(fn, 11)
        assert bool(host_draws.COMPILED) is not host  # (the path forced is the path taken)
    for a, b in zip(res[True], res[False]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@needs_torch
@pytest.mark.parametrize("name,fn", DRAWS[:8] + DRAWS[-6:], ids=[d[0] for d in DRAWS[:8] + DRAWS[-6:]])
def test_host_draws_are_pytorchs(name, fn, path):
    path(True)
    got, state, after = _run(fn, 3)
    torch.manual_seed(3)
    torch.rand(5)
    np.testing.assert_array_equal(got, fn(torch).numpy())
    np.testing.assert_array_equal(state, torch.get_rng_state().numpy())
    np.testing.assert_array_equal(after, torch.rand(3).numpy())


def test_a_repeated_draw_moves_to_its_kernel(monkeypatch):
    monkeypatch.setattr(host_draws, "BUDGET", 0.002)
    monkeypatch.setattr(host_draws, "COMPILED", set())
    monkeypatch.setattr(host_draws, "_SPENT", {})
    torchish.manual_seed(0)
    outs = [torchish.rand(700).numpy() for _ in range(200)]
    assert len(host_draws.COMPILED) == 1  # the budget ran out: one kernel, used from then on
    torchish.manual_seed(0)
    monkeypatch.setattr(host_draws, "BUDGET", float("inf"))
    monkeypatch.setattr(host_draws, "COMPILED", set())
    np.testing.assert_array_equal(np.stack(outs), np.stack([torchish.rand(700).numpy() for _ in range(200)]))


def test_box_muller_numpy_equals_kernel():
    """The AVX2 Box-Muller evaluated by numpy and by XLA, bit for bit, on uniforms over the whole float range of
    the 24-bit grid (the edges included)."""
    rng = np.random.default_rng(5)
    grid = rng.integers(0, 1 << 24, size=1 << 15).astype(np.float32) * np.float32(2.0 ** -24)
    edges = np.array([0.0, 2.0 ** -24, 0.5, 1 - 2.0 ** -24, 0.25, 0.125, 1e-7, 0.75] * 2, np.float32)
    u = np.concatenate([grid, edges])
    host = _avx_mathfun.box_muller_16(u, NP)
    kernel = np.asarray(_avx_mathfun.box_muller_16(u))
    np.testing.assert_array_equal(host.view(np.int32), kernel.view(np.int32))
    for scale, shift in ((0.25, 2.5), (3.0, -1.0)):
        a = _samplers.affine(host, np.float64(scale), np.float64(shift), np.float32, NP)
        b = np.asarray(_samplers.affine(kernel, np.float64(scale), np.float64(shift), np.float32))
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))


@needs_torch
@pytest.mark.parametrize("shape", [(3,), (5, 2), (1,), (15,)])
def test_small_normals_share_one_kernel(shape):
    """Below 16 values PyTorch draws normals serially (float64, with its cached second value): drawn in the 64-value
    bucket, every small size shares one kernel, with PyTorch's numbers and state."""
    torchish.manual_seed(4)
    torch.manual_seed(4)
    for _ in range(2):  # (the second draw starts from the cached value of an odd first one)
        np.testing.assert_allclose(torchish.randn(*shape).numpy(), torch.randn(*shape).numpy(), rtol=2e-7, atol=0)
    np.testing.assert_array_equal(torchish.rand(3).numpy(), torch.rand(3).numpy())
