"""float16 / bfloat16 arithmetic as PyTorch's CPU kernels compute it: in float32 ("opmath") and rounded once.

PyTorch multiplies and divides a half tensor by a Python number (or a 0-dim tensor) with the number in float32,
not first rounded to the half type; it accumulates sums and means in float32; composite activations (softplus,
addcmul/addcdiv with a value) round once. Compared bit for bit against torch (the results are half-precision values;
computing them any other way moves many elements by an ulp)."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch

HALF = ["float16", "bfloat16"]
_V = np.random.default_rng(0).uniform(-50, 50, 257).astype(np.float32)

CASES = {
    "mul_number": lambda T, x: x * 0.1234567,
    "rmul_number": lambda T, x: 0.1234567 * x,
    "mul_big": lambda T, x: x * 1e5,
    "div_number": lambda T, x: x / 3.3,
    "rdiv_number": lambda T, x: 3.3 / x,
    "floordiv_number": lambda T, x: x // 0.3,
    "mul_0dim_float32": lambda T, x: x * T.tensor(0.1234567),
    "mul_inplace": lambda T, x: x.clone().mul_(0.1234567),
    "div_inplace": lambda T, x: x.clone().div_(3.3),
    "add_number": lambda T, x: x + 0.1234567,
    "lt_number": lambda T, x: x < 0.1234567,
    "sum": lambda T, x: (x * 0 + 0.1).sum(),
    "mean": lambda T, x: (x * 0 + 0.1).mean(),
    "sum_dim": lambda T, x: x.reshape(1, 257).sum(1),
    "addcmul_value": lambda T, x: T.addcmul(x, x, x, value=0.1),
    "addcdiv_value": lambda T, x: T.addcdiv(x, x, x + 100, value=0.1),
    "softplus_beta": lambda T, x: T.nn.functional.softplus(x / 10, beta=1.1),
}


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", list(CASES))
def test_half_precision_arithmetic_matches_torch(dtype, name):
    f = CASES[name]
    ref = f(torch, torch.tensor(_V).to(getattr(torch, dtype)))
    got = f(torchish, torchish.tensor(_V).to(getattr(torchish, dtype)))
    assert str(got.dtype) == str(ref.dtype)
    np.testing.assert_array_equal(got.float().numpy(), ref.float().numpy())


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
def test_half_precision_mul_number_gradient_matches_torch(dtype):
    out = {}
    for T in (torch, torchish):
        x = T.tensor(_V[:16]).to(getattr(T, dtype)).requires_grad_()
        (x * 0.1234567).backward(T.tensor(_V[16:32]).to(getattr(T, dtype)))
        out[T] = x.grad.float().numpy()
    np.testing.assert_array_equal(out[torchish], out[torch])


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
def test_half_precision_softplus_gradient_matches_torch(dtype):
    out = {}
    for T in (torch, torchish):
        x = (T.tensor(_V[:16]) / 10).to(getattr(T, dtype)).requires_grad_()
        T.nn.functional.softplus(x, beta=1.1).backward(T.tensor(_V[16:32]).to(getattr(T, dtype)))
        out[T] = x.grad.float().numpy()
    np.testing.assert_array_equal(out[torchish], out[torch])


# Unary/binary math on half types: PyTorch's kernels evaluate the float32 function and round once; each backward
# formula rounds op by op. Small tensors (15 elements: PyTorch's scalar loop; its vectorized one agrees for these).
_MATH_X = np.concatenate([np.random.default_rng(1).uniform(-11.5, 11.5, 240), [10.96875, -10.96875, 9.359375],
                          np.exp(np.random.default_rng(2).uniform(-12, 4, 57))]).astype(np.float32)
MATH = {
    "sinh": lambda T, x: T.sinh(x),
    "cosh": lambda T, x: T.cosh(x),
    "atan": lambda T, x: T.atan(x),
    "logaddexp": lambda T, x: T.logaddexp(x, x.flip(0) * 0.5),
    "logaddexp2": lambda T, x: T.logaddexp2(x, x.flip(0) * 0.5),
}


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", list(MATH))
def test_half_precision_math_rounds_the_float32_result_once(dtype, name):
    out = {}
    for T in (torch, torchish):
        values, grads = [], []
        for i in range(0, len(_MATH_X), 15):
            x = T.tensor(_MATH_X[i:i + 15]).to(getattr(T, dtype)).requires_grad_()
            y = MATH[name](T, x)
            y.backward(T.tensor(_V[:len(y)]).to(getattr(T, dtype)))
            grads.append(x.grad.float().numpy())
            values.append(y.detach().float().numpy())
        out[T] = np.concatenate(values), grads
    np.testing.assert_array_equal(out[torchish][0], out[torch][0])
    for got, ref in zip(out[torchish][1], out[torch][1]):
        np.testing.assert_array_equal(got, ref)
