"""float32 (and float16/bfloat16/float64) rounding of PyTorch's CPU kernels, compared bit for bit with torch.

Where PyTorch's kernel is a cheap composition that rounds more than once (``rsqrt`` is ``1 / sqrt(x)``: two
roundings, where XLA's ``rsqrt`` rounds once), torchish composes the same way. Inputs are deterministic numpy grids
whose length is a multiple of 64: PyTorch's half-precision kernels compute the last ``n % 64`` elements on their
scalar path (AVX-512), which rounds ``sqrt`` to the half type before dividing, unlike the vectorized path.
"""

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch

FLOATS = ["float32", "float64", "float16", "bfloat16"]


@pytest.fixture(autouse=True)
def _torch_single_thread():
    if torch is None:
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _run(lib, f, xs, dtype, cot):
    """``f(lib, *tensors)`` on ``xs`` cast to ``dtype`` (requiring grad): its dtype, value and, with the
    cotangent ``cot``, the inputs' gradients, all as float64 numpy arrays."""
    ts = [lib.tensor(x).to(getattr(lib, dtype)).requires_grad_(True) for x in xs]
    y = f(lib, *ts)
    grads = lib.autograd.grad(y, ts, lib.tensor(cot[:y.numel()].reshape(tuple(y.shape))).to(y.dtype),
                              allow_unused=True)
    return [str(y.dtype).split(".")[-1], y.detach().double().numpy()] + \
        [None if g is None else g.double().numpy() for g in grads]


def _same_bits(f, xs, dtype, cot):
    ref, got = _run(torch, f, xs, dtype, cot), _run(torchish, f, xs, dtype, cot)
    assert got[0] == ref[0], f"dtype {got[0]} != torch's {ref[0]}"
    for i, (r, g) in enumerate(zip(ref[1:], got[1:])):
        name = "value" if i == 0 else f"grad[{i - 1}]"
        if r is None:
            assert g is None or not g.any(), name
            continue
        np.testing.assert_array_equal(g, r, err_msg=name)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(r), err_msg=name + " sign")


_POS = np.linspace(1e-3, 100, 1024).astype(np.float32)
_UNIT = np.linspace(-0.999, 0.999, 1024).astype(np.float32)
_COT = np.cos(np.arange(1024) * 0.3).astype(np.float32)

# rsqrt: 1 / sqrt(x) (35% of float32 results were 1-2 ulps off through XLA's rsqrt, and its gradient up to 7);
# asin/acos/asinh/acosh: their gradient formulas call rsqrt
UNARY = {
    "rsqrt": (lambda T, x: T.rsqrt(x), _POS),
    "asin": (lambda T, x: T.asin(x), _UNIT),
    "acos": (lambda T, x: T.acos(x), _UNIT),
    "asinh": (lambda T, x: T.asinh(x), _UNIT * 50),
    "acosh": (lambda T, x: T.acosh(x), _POS + 1),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_torch_bit_for_bit(name):
    f, x = UNARY[name]
    if name == "rsqrt":
        for dtype in FLOATS:
            _same_bits(f, [x], dtype, _COT)
        return
    # the forwards are libm's against XLA's approximations (1-4 ulps): only the gradient formula is compared
    ref, got = _run(torch, f, [x], "float32", _COT), _run(torchish, f, [x], "float32", _COT)
    np.testing.assert_array_equal(got[2], ref[2], err_msg="grad")
