"""Regression tests from running third-party-style PyTorch programs (autocast / bfloat16 inference) on torchish and
on PyTorch: half-precision softmaxes and activations are computed as PyTorch's CPU kernels compute them, so that
``.float()`` of a bfloat16 result matches at float32 tolerance."""
import numpy as np
import pytest

import torchish
from oracle import needs_avx512_torch, needs_torch, torch

HALF = ["bfloat16", "float16"]
_X = np.random.default_rng(0).uniform(-6, 6, 600).astype(np.float32)
_G = np.random.default_rng(1).uniform(-1, 1, 600).astype(np.float32)


def _value_and_grad(lib, fn, dtype, shape=(600,)):
    x = lib.tensor(_X.reshape(shape)).to(getattr(lib, dtype)).requires_grad_()
    y = fn(lib, x)
    g = lib.tensor(_G[:y.numel()].reshape(tuple(y.shape))).to(getattr(lib, dtype))
    gx, = lib.autograd.grad(y, x, g)
    return y.detach().float().numpy(), gx.float().numpy()


def _same_bits(fn, dtype, shape=(600,), grad=True):
    ref = _value_and_grad(torch, fn, dtype, shape)
    got = _value_and_grad(torchish, fn, dtype, shape)
    np.testing.assert_array_equal(got[0], ref[0], err_msg="forward")
    if grad:
        np.testing.assert_array_equal(got[1], ref[1], err_msg="backward")


SOFTMAX = {
    "softmax_lastdim": (lambda T, x: T.softmax(x, -1), (20, 30)),
    "log_softmax_lastdim": (lambda T, x: T.log_softmax(x, -1), (20, 30)),  # sum and its log kept in the half type
    "log_softmax_dim0": (lambda T, x: T.nn.functional.log_softmax(x, 0), (20, 30)),
    "log_softmax_3d_mid": (lambda T, x: T.log_softmax(x, 1), (4, 5, 30)),
    "log_softmax_1d": (lambda T, x: T.log_softmax(x, 0), (600,)),
}


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", list(SOFTMAX))
def test_half_softmax_matches_torch_bit_for_bit(dtype, name):
    if name == "softmax_lastdim" and dtype == "float16":
        needs_avx512_torch("float16 softmax's vectorised accumulation order (one element's last bit)")
    fn, shape = SOFTMAX[name]
    _same_bits(fn, dtype, shape)


ACTIVATIONS = {
    "sigmoid": lambda T, x: T.sigmoid(x),
    "silu": lambda T, x: T.nn.functional.silu(x),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x, 0.1),
    "elu": lambda T, x: T.nn.functional.elu(x),
    "selu": lambda T, x: T.nn.functional.selu(x),
    "celu": lambda T, x: T.nn.functional.celu(x, 0.7),
    "hardsigmoid": lambda T, x: T.nn.functional.hardsigmoid(x),
    "tanh": lambda T, x: T.tanh(x),
}
FORWARD_ONLY = {  # the forward is bit-exact; the backward differs in rare last bits (JAX's derivative)
    "logsigmoid": lambda T, x: T.nn.functional.logsigmoid(x),
    "mish": lambda T, x: T.nn.functional.mish(x),
    "hardswish": lambda T, x: T.nn.functional.hardswish(x),
    "glu": lambda T, x: T.nn.functional.glu(x.view(-1, 2), -1),
}


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", list(ACTIVATIONS) + list(FORWARD_ONLY))
def test_half_activation_matches_torch_bit_for_bit(dtype, name):
    if name in ACTIVATIONS:
        _same_bits(ACTIVATIONS[name], dtype)
    else:
        _same_bits(FORWARD_ONLY[name], dtype, grad=False)


@needs_torch
def test_autocast_bfloat16_attention_block_matches_torch():
    # an autocast inference step: matmul in bfloat16, softmax and activations on bfloat16 values, read back as float
    rng = np.random.default_rng(0)
    w1 = rng.uniform(-0.5, 0.5, (8, 6)).astype(np.float32)
    w2 = rng.uniform(-0.5, 0.5, (6, 8)).astype(np.float32)
    x = rng.uniform(-1, 1, (5, 6)).astype(np.float32)
    outs = []
    for lib in (torch, torchish):
        lin1, lin2 = lib.nn.Linear(6, 8), lib.nn.Linear(8, 6)
        with lib.no_grad():
            lin1.weight.copy_(lib.tensor(w1)); lin1.bias.fill_(0.1)
            lin2.weight.copy_(lib.tensor(w2)); lin2.bias.fill_(-0.1)
        xt = lib.tensor(x)
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            h = lib.nn.functional.silu(lin1(xt))
            att = lib.softmax(xt @ xt.t(), -1)
            y = lib.sigmoid(lin2(h))
        outs.append([t.detach().float().numpy() for t in (h, att, y)] + [str(h.dtype), str(att.dtype)])
    for r, g in zip(*outs):
        if isinstance(r, str):
            assert g.split(".")[-1] == r.split(".")[-1]
        else:
            np.testing.assert_allclose(g, r, rtol=2e-4, atol=2e-5)


def test_half_softmax_is_normalised_without_torch():
    x = torchish.tensor(_X.reshape(20, 30)).to(torchish.bfloat16)
    p = torchish.softmax(x, -1).float()
    np.testing.assert_allclose(p.sum(-1).numpy(), np.ones(20), atol=2e-2)
    lp = torchish.log_softmax(x, 0).float().exp().sum(0).numpy()
    np.testing.assert_allclose(lp, np.ones(30), atol=2e-2)
