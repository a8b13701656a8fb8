"""Regressions found by the differential fuzzers (tests/test_fuzz_math.py, tests/test_fuzz_nn.py), continued from
tests/test_fuzz_regressions.py: each test is the minimised program of one mismatch class, compared with PyTorch
(values, dtypes and gradients, or the exception family) — addcmul/addcdiv gradients of operands of other dtypes,
mvlgamma's gradient at a pole, the sign of a QR reflector at a negative zero, and local_response_norm's view of a
transposed 5-d input."""
import warnings

import numpy as np
import pytest

from fuzz_harness import agree
from oracle import needs_torch

warnings.filterwarnings("ignore", category=UserWarning)


def _grads(T, op, dtypes, shapes, value):
    """``op(x, a, b, value=value)`` backpropagated with a fixed cotangent: the output and the three gradients."""
    data = np.array([-1.5, -0.5, 0.3, 2.7, -0.1, 7.0], np.float64)
    ts = [T.tensor(np.resize(np.roll(data, k), s), dtype=getattr(T, d)) for k, (d, s) in
          enumerate(zip(dtypes, shapes))]
    for t in ts:
        t.requires_grad_(t.is_floating_point())
    y = getattr(T, op)(*ts, value=value)
    y.backward(T.full_like(y, 0.75))
    return [y.detach()] + [t.grad for t in ts]


@needs_torch
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_gradients_compute_in_the_operands_own_dtypes(op):
    # (math fuzzer seed 130067: addcdiv(float32 x, float64 0-d tensor1, bfloat16 tensor2, value=True)) PyTorch's
    # formulas run on the operands as given: addcdiv's tensor1 gradient is grad * (value / tensor2), the quotient
    # ATen's empty_like(tensor2).fill_(value).div_(tensor2) in bfloat16; addcmul's is grad * (tensor2 * value), in
    # tensor2's dtype. torchish computed them in the promoted float32 (-1.16667 for PyTorch's -1.16797).
    agree(lambda T: _grads(T, op, ("float32", "float64", "bfloat16"), ((2, 1), (), (2, 1)), True),
          lambda T: _grads(T, op, ("float32", "float32", "bfloat16"), ((2, 3), (2, 3), (3,)), 0.3),
          lambda T: _grads(T, op, ("bfloat16", "bfloat16", "float64"), ((2, 3), (2, 3), ()), 2))


@needs_torch
def test_addcdiv_gradient_through_an_integer_divisor_raises_as_pytorchs_fill_div():
    # value / tensor2 of an int64 tensor2 is a float quotient written into an int64 tensor: PyTorch's backward
    # raises RuntimeError (torchish returned a gradient); tensor2's own gradient is not asked for then
    agree(lambda T: _grads(T, "addcdiv", ("float32", "float32", "int64"), ((3,), (3,), (3,)), 0.3),
          lambda T: _grads(T, "addcdiv", ("float32", "int64", "float32"), ((3,), (3,), (3,)), 2))


def _mvlgamma_grad(T, dtype, p):
    x = T.tensor([1.0, 1.5, 2.0, -0.3, 3.25, 7.1], dtype=getattr(T, dtype), requires_grad=True)
    T.mvlgamma(x, p).backward(T.tensor([1.625, -1.0, 0.5, 1.625, 2.0, 0.25], dtype=getattr(T, dtype)))
    return x.grad


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_mvlgamma_gradient_is_a_sum_of_digammas_with_poles(dtype):
    # (math fuzzer seed 130263: mvlgamma(tensor([1.]), p=3)'s gradient) PyTorch's mvlgamma_backward sums
    # digamma(x + arange(-(p-1)/2, 0.5, 0.5)), -inf at x = 1 (digamma(0)); JAX's derivative of gammaln gave NaN.
    # In bfloat16 each op rounds (the offset sum, every digamma, their sum).
    agree(*[lambda T, p=p: _mvlgamma_grad(T, dtype, p) for p in (1, 3, 5)])


_NEG_ZERO_PIVOT = [[-0.0, -1.25, -2.75], [-2.5, -3.0, 2.25], [2.0, 2.75, 0.5]]


def _qr(T, rows, complete=False):
    A = T.tensor(rows, dtype=T.float64, requires_grad=True)
    Q, R = T.linalg.qr(A, mode="complete" if complete else "reduced")
    (Q.sum() + (R * T.arange(R.numel(), dtype=T.float64).reshape(R.shape)).sum()).backward()
    return Q.detach(), R.detach(), A.grad


@needs_torch
def test_householder_qr_reads_a_negative_zero_pivot_as_positive():
    # (math fuzzer seed 130197: linalg.qr of a batch whose matrix starts with -0.0) LAPACK's larfg takes the
    # reflector's sign from alpha: PyTorch's LAPACK reads -0.0 as positive (R[0, 0] = -3.2), jaxlib's as negative
    # (+3.2: that column of Q and row of R flipped); torchish's own geqrf used copysign, the same flip
    t = [list(r) for r in zip(*_NEG_ZERO_PIVOT)]
    agree(lambda T: _qr(T, _NEG_ZERO_PIVOT), lambda T: _qr(T, t), lambda T: _qr(T, [r[:2] for r in _NEG_ZERO_PIVOT]),
          lambda T: tuple(T.geqrf(T.tensor(_NEG_ZERO_PIVOT, dtype=T.float64))),
          lambda T: tuple(T.geqrf(T.tensor(t, dtype=T.float64))))


@needs_torch
def test_local_response_norm_views_the_squares_of_a_5d_input_as_pytorch():
    # (nn fuzzer seed 130152: LocalResponseNorm of a transposed (1, 4, 2, 2, 3) input) PyTorch's composite views
    # input * input, laid out as the input, as (N, 1, C, D, -1): trailing dims that do not merge raise its view
    # RuntimeError; torchish computed the result
    x = lambda T: T.arange(48.0).reshape(1, 4, 2, 2, 3)  # noqa: E731
    agree(lambda T: T.nn.functional.local_response_norm(x(T).transpose(3, 4), 3),
          lambda T: T.nn.functional.local_response_norm(x(T).transpose(1, 2), 3),
          lambda T: T.nn.functional.local_response_norm(x(T)[0].transpose(2, 3), 2))


@needs_torch
def test_gcd_and_lcm_of_the_integer_minimum_follow_pytorchs_wrapping_euclid():
    # (math fuzzer seed 107067: gcd(int32 [-2**31, 2], [-2**31 + 1]) never returned) PyTorch's calc_gcd runs Euclid's
    # algorithm from abs of both, and abs of the type's minimum wraps to itself: C's truncated remainders then end
    # at -1 (or the minimum). jnp.gcd's loop never ended there. calc_lcm's abs(a / g * b) is computed in C's int
    # for 8- and 16-bit types (int8 lcm(100, 30) is 300 wrapped: 44) — lcm of the minimum and a number whose gcd with
    # it is -1 divides the minimum by -1 in PyTorch (SIGFPE), so it is not compared
    for dt in ("int8", "int32", "int64"):
        lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
        a = [lo, lo, lo, 0, 2, 6, -12, lo, 100]
        b = [hi, 0, lo, lo, hi, -4, 18, 3, 30]
        agree(lambda T: T.gcd(T.tensor(a, dtype=getattr(T, dt)), T.tensor(b, dtype=getattr(T, dt))),
              lambda T: T.lcm(T.tensor(a[1:], dtype=getattr(T, dt)), T.tensor(b[1:], dtype=getattr(T, dt))))
    agree(lambda T: T.gcd(T.tensor([[12, -8]], dtype=T.int16), T.tensor([[18], [0]], dtype=T.int16)))


@needs_torch
def test_scatter_ops_convert_a_float_src_into_an_unsigned_input_as_pytorch():
    # (ops fuzzer seed 7300193: slice_scatter of float16 -2.5 into uint8 gave 0, PyTorch 254) slice/select/
    # diagonal_scatter convert src to the input's dtype as a copy does: through int64, wrapping modulo 256
    src = [-2.5, -1.0, 3.75]
    agree(lambda T: T.slice_scatter(T.zeros(5, dtype=T.uint8), T.tensor(src, dtype=T.float16), 0, 1, 4),
          lambda T: T.slice_scatter(T.zeros(2, 6, dtype=T.uint8), T.tensor([src], dtype=T.float32), 1, 0, 6, 2),
          lambda T: T.select_scatter(T.zeros(2, 3, dtype=T.uint8), T.tensor(src), 0, 1),
          lambda T: T.diagonal_scatter(T.zeros(3, 3, dtype=T.uint8), T.tensor(src, dtype=T.float64)))
