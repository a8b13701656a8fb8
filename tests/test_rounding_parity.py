"""float32 (and float16/bfloat16/float64) rounding of PyTorch's CPU kernels, compared bit for bit with torch.

Where PyTorch's kernel is a cheap composition that rounds more than once (``rsqrt`` is ``1 / sqrt(x)``: two
roundings, where XLA's ``rsqrt`` rounds once), torchish composes the same way. Inputs are deterministic numpy grids
whose length is a multiple of 64: PyTorch's half-precision kernels compute the last ``n % 64`` elements on their
scalar path (AVX-512), which rounds ``sqrt`` to the half type before dividing, unlike the vectorized path.
"""

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch, torch_one_thread

FLOATS = ["float32", "float64", "float16", "bfloat16"]


_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


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


def _norm_data(shape, seed, scale=1.0):
    i = np.arange(int(np.prod(shape)))
    return ((np.sin(i * 0.731 + seed) + np.cos(i * 0.117 * (seed + 1)) * 0.5) * scale).astype(np.float32).reshape(shape)


_DYADIC_X = (np.arange(4 * 8 * 5 * 5) % 23 - 11).astype(np.float32).reshape(4, 8, 5, 5) / 8
_DYADIC_COT = (np.arange(4 * 8 * 5 * 5) % 7 - 3).astype(np.float32) / 4
_AFFINE = np.linspace(0.5, 1.5, 8).astype(np.float32), np.linspace(-0.3, 0.4, 8).astype(np.float32)


def _bn_eval(T, x, w, b):
    rm, rv = (T.arange(8) / 8 - 0.5).to(x.dtype), T.linspace(0.3, 2.0, 8).to(x.dtype)
    return T.nn.functional.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_batch_norm_eval_matches_torch_bit_for_bit(dtype):
    # x * alpha + beta with alpha = invstd * w and beta = b - mean * alpha, each multiply-add rounded once, invstd
    # = 1 / sqrt(var + eps); the float32 backward's invstd in double (its eps is a double). Dyadic inputs make the
    # gradient sums exact in any order. Before: float32 output 51% not bit-equal (up to 104 ulps), input grad 41%.
    _same_bits(_bn_eval, [_DYADIC_X, *_AFFINE], dtype, _DYADIC_COT)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32"])
def test_batch_norm_train_output_matches_torch_bit_for_bit(dtype):
    # y = x * alpha + beta as one multiply-add (the output matched only where XLA happened to contract it into an
    # FMA: its default optimisation level does, the test suite's does not). float64 is left to XLA's contraction
    # (no wider type to compute an FMA in), so it matches at XLA's default optimisation level only.
    x = _norm_data((4, 8, 5, 5), 1, 3.0)

    def run(L):
        w, b = (L.tensor(a).to(getattr(L, dtype)) for a in _AFFINE)
        y = L.nn.functional.batch_norm(L.tensor(x).to(getattr(L, dtype)), None, None, w, b, True)
        return y.double().numpy()
    np.testing.assert_array_equal(run(torchish), run(torch))


@needs_torch
@pytest.mark.parametrize("name", ["layer_norm", "group_norm"])
def test_half_layer_and_group_norm_match_torch_bit_for_bit(name):
    # PyTorch's reduced-precision layer_norm: x * rstd + (-rstd * mean), then * w + b, each multiply-add rounded
    # once, in float32; group_norm: scale * x + bias with scale = rstd * w, bias = -scale * mean + b. rstd is
    # 1 / sqrt(var + eps). Before: bfloat16 layer_norm 84% of outputs off by up to 25 ulps, float16 100%.
    if name == "layer_norm":
        x, (w, b) = _norm_data((32, 16), 0), (np.linspace(0.5, 1.5, 16).astype(np.float32),
                                             np.linspace(-0.3, 0.4, 16).astype(np.float32))
        f = lambda T, x, w, b: T.nn.functional.layer_norm(x, (16,), w, b)  # noqa: E731
    else:
        x, (w, b) = _norm_data((4, 8, 4, 4), 0), _AFFINE
        f = lambda T, x, w, b: T.nn.functional.group_norm(x, 4, w, b)  # noqa: E731
    # (group_norm's bfloat16 output differs in one element of this input: its statistics are PyTorch's Welford
    # moments, an ulp away from torchish's two-pass ones)
    for dtype in ("float16", "bfloat16") if name == "layer_norm" else ("float16",):
        ref = _run(torch, f, [x, w, b], dtype, _COT)
        got = _run(torchish, f, [x, w, b], dtype, _COT)
        np.testing.assert_array_equal(got[1], ref[1], err_msg=f"{dtype} value")


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_ndtr_is_torchs_composite(dtype):
    # (1 + erf(x * sqrt(1/2))) * 0.5, each op rounded to the half type: one float32 kernel moved 48% of the float16
    # results by up to 2035 ulps (the negative tail, where 1 + erf cancels)
    _same_bits(lambda T, x: T.special.ndtr(x), [np.linspace(-5, 5, 1024).astype(np.float32)], dtype, _COT)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_div_gradient_matches_torch_bit_for_bit(dtype):
    # DivBackward0's -grad * ((self / other) / other): JAX's -grad * self * other**-2 (and XLA's rewrite of the two
    # divisions into a / (b * b)) left 51% of the float32 gradients of the divisor 1-4 ulps off
    a = np.linspace(-5, 5, 1024).astype(np.float32)
    b = np.linspace(0.1, 5, 1024)[::-1].astype(np.float32).copy()
    _same_bits(lambda T, x, y: x / y, [a, b], dtype, _COT)


_SIGNED = np.linspace(-5, 5, 1024).astype(np.float32)
GRADS = {
    # CopysignBackward0: grad * (result / self), the ratio an exact +-1 (torchish divided grad * result by self:
    # 14% of gradients an ulp off)
    "copysign": (lambda T, x, y: T.copysign(x, y), [_SIGNED, _SIGNED[::-1].copy()]),
    # softsign's DivBackward0 -grad * ((x / d) / d): XLA rewrote the two divisions into x / (d * d) (27% off)
    "softsign": (lambda T, x: T.nn.functional.softsign(x), [_SIGNED]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient_formula_matches_torch_bit_for_bit(name):
    f, xs = GRADS[name]
    _same_bits(f, xs, "float32", _COT)


@needs_torch
def test_float64_to_half_rounds_through_float32():
    # c10::Half and c10::BFloat16 are made from a float: PyTorch rounds a double to float32, then to the half type.
    # XLA's float64 -> float16 convert rounds once (13 of 200000 values differed: cos(9125 * 0.3) = -0.38757323...
    # is -0.3876953 in PyTorch, -0.38745117 directly), as did numpy's for torchish.tensor(floats, dtype=float16)
    g = np.cos(np.arange(9120, 9130) * 0.3)

    def run(L):
        return [L.tensor(g).half(), L.tensor(g.tolist(), dtype=L.float16), L.tensor(g).to(L.bfloat16),
                L.tensor(g.tolist(), dtype=L.bfloat16)]
    ref, got = run(torch), run(torchish)
    for i, (r, x) in enumerate(zip(ref, got)):
        np.testing.assert_array_equal(x.float().numpy(), r.float().numpy(), err_msg=str(i))


@needs_torch
@pytest.mark.parametrize("pos_weight", [False, True])
def test_bce_with_logits_input_gradient_matches_torch_bit_for_bit(pos_weight):
    # PyTorch's backward, (sigmoid(x) - t) * grad (with pos_weight: ((pw * t + 1 - t) * sigmoid(x) - pw * t) * grad),
    # then * weight, / numel: JAX's derivative of the log_sigmoid forward differed in 65% of float16 and 58% of
    # bfloat16 input gradients (79% of float32 ones; float32 still meets libm-vs-XLA sigmoid ulps)
    x = np.linspace(-10, 10, 1024).astype(np.float32)
    t = np.linspace(0, 1, 1024)[::-1].astype(np.float32).copy()

    def f(T, x, t):
        kw = dict(pos_weight=T.tensor([2.5]).to(x.dtype), weight=T.full((1024,), 0.7).to(x.dtype)) if pos_weight else {}
        return T.nn.functional.binary_cross_entropy_with_logits(x, t.detach(), reduction="none", **kw)
    for dtype in ("float16", "bfloat16"):  # (the loss itself still differs in 2% of half results: log_sigmoid)
        ref, got = _run(torch, f, [x, t], dtype, _COT), _run(torchish, f, [x, t], dtype, _COT)
        np.testing.assert_array_equal(got[2], ref[2], err_msg=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_lerp_rounds_as_pytorchs_kernels(dtype):
    """lerp is two fused multiply-adds in PyTorch's CPU kernels (vec::fmadd/fnmadd), a number weight taken as
    float32 first. Its backward: grad * (1 - weight), grad * weight, grad * (end - self), op by op (a number weight
    multiplied in as float32). torchish's forward was 8-27% off (no FMA) and its gradients JAX's derivative (15-25%
    off, up to 64 ulp, in every dtype). (float64 is an FMA only where XLA contracts it, at its default optimisation
    level: bit for bit there, not at the suite's level 0.)"""
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal(1024).astype(np.float32) for _ in range(3))
    _same_bits(lambda T, x, y, z: T.lerp(x, y, z * 0.6), [a, b, w], dtype, _COT)
    _same_bits(lambda T, x, y: T.lerp(x, y, 0.3), [a, b], dtype, _COT)
    _same_bits(lambda T, x, y: T.lerp(x, y, 0.7), [a, b], dtype, _COT)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_silu_rounds_as_pytorchs_kernels(dtype):
    """silu is x / (1 + exp(-x)) in PyTorch's CPU kernel and its backward dy * s * (1 + x * (1 - s)) with the inner
    multiply-add fused; torchish took JAX's x * sigmoid(x) and its derivative (float32: 24% of values and half the
    gradients off, gradients by up to hundreds of ulps near the derivative's zero). Now float16/bfloat16 are bit for
    bit and float32 within exp's 1-2 ulps of libm (0.4% of values, 0.2% of gradients, on this grid)."""
    rng = np.random.default_rng(0)
    x, cot = (rng.standard_normal(1024) * 4).astype(np.float32), rng.standard_normal(1024).astype(np.float32)
    ref = _run(torch, lambda T, v: T.nn.functional.silu(v), [x], dtype, cot)
    got = _run(torchish, lambda T, v: T.nn.functional.silu(v), [x], dtype, cot)
    assert got[0] == ref[0]
    for r, g in zip(ref[1:], got[1:]):
        if dtype == "float32":
            np.testing.assert_array_max_ulp(g.astype(np.float32), r.astype(np.float32), maxulp=2)
        else:
            np.testing.assert_array_equal(g, r)


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_number_exponent_rounds_as_pytorchs_kernel(dtype):
    """PyTorch's pow(Tensor, Scalar) CPU kernel computes exponents 2, 3 and -2 as x * x, x * x * x and 1 / (x * x),
    and 0.5, -0.5 and -1 as its sqrt, rsqrt and reciprocal kernels (float16 excepted: one pow); its backward is
    grad * (exponent * self.pow(exponent - 1)), so 4 and 0.5 differentiate through those too. XLA's power left 26%
    of float32 x ** 3 and 27% of x ** -2 an ulp off, and 18-36% of these gradients. (x ** 0.5 is torchish's sqrt,
    as PyTorch's is its sqrt kernel, whose MKL square root is not correctly rounded: not compared here.)"""
    forward = {2: _SIGNED, 3: _SIGNED, -2: _SIGNED, -1: _SIGNED, -0.5: _POS}
    backward = {2: _SIGNED, 3: _SIGNED, 4: _SIGNED, -1: _SIGNED, 0.5: _POS}
    forms = [lambda T, x, e: T.pow(x, e), lambda T, x, e: x.pow(e), lambda T, x, e: x ** e,
             lambda T, x, e: (x * 1).pow_(e)]
    for i, e in enumerate(sorted(set(forward) | set(backward))):
        f = forms[i % len(forms)]
        x = forward.get(e, backward.get(e))
        ref, got = (_run(L, lambda T, v: f(T, v, e), [x], dtype, _COT) for L in (torch, torchish))
        assert got[0] == ref[0]
        if e in forward:
            np.testing.assert_array_equal(got[1], ref[1], err_msg=f"{dtype} x ** {e}")
        if e in backward:
            np.testing.assert_array_equal(got[2], ref[2], err_msg=f"{dtype} grad of x ** {e}")

    def second(L):  # through x * x: the exponents' other branches (sqrt of a negative base) stay out of it
        x = L.tensor(_SIGNED).to(getattr(L, dtype)).requires_grad_(True)
        g, = L.autograd.grad((x ** 3).sum(), x, create_graph=True)
        return L.autograd.grad(g.sum(), x)[0].double().numpy()
    np.testing.assert_array_equal(second(torchish), second(torch), err_msg="second derivative of x ** 3")


@needs_torch
def test_rms_norm_default_eps_is_the_computation_dtypes():
    # PyTorch's eps=None is the epsilon of the type rms_norm computes in: float32's for a float16/bfloat16 input
    # (torchish took the input dtype's 2^-10 / 2^-7: small inputs came out 20-60% smaller)
    x = _norm_data((8, 16), 0, 0.05)
    for dtype in ("float16", "bfloat16"):
        ref, got = (L.nn.functional.rms_norm(L.tensor(x).to(getattr(L, dtype)), (16,)) for L in (torch, torchish))
        np.testing.assert_array_equal(got.float().numpy(), ref.float().numpy(), err_msg=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_rms_norm_backward_is_pytorchs_composite(dtype):
    """PyTorch 2.13's CPU rms_norm is a composite, x * rsqrt(pow(x, 2).mean(-1, keepdim) + eps) * w (in float32 for
    float16/bfloat16), differentiated node by node; torchish's JAX derivative left 12-41% of float32 input
    gradients off on dyadic data (where every sum is exact in any order). The weight's gradient, a sum over rows
    in XLA's order, is compared for the half types only, and float64 (no wider type to keep its products from
    XLA's FMA contraction) matches at the suite's XLA level only."""
    i = np.arange(16 * 64)
    x = (((i * 7 % 23) - 11) / 8).astype(np.float32).reshape(16, 64)
    cot = (((i * 5 % 7) - 3) / 4).astype(np.float32).reshape(16, 64)
    w = ((np.arange(64) % 5 + 2) / 4).astype(np.float32)
    for f in (lambda T, x, w: T.nn.functional.rms_norm(x, (64,), w, 1e-5),
              lambda T, x, w: T.nn.functional.rms_norm(x, (64,), None, 1e-5) * w.detach()):
        ref, got = _run(torch, f, [x, w], dtype, cot), _run(torchish, f, [x, w], dtype, cot)
        assert got[0] == ref[0]
        np.testing.assert_array_equal(got[1], ref[1], err_msg="value")
        np.testing.assert_array_equal(got[2], ref[2], err_msg="input grad")
        if dtype != "float32" and ref[3] is not None:
            np.testing.assert_array_equal(got[3], ref[3], err_msg="weight grad")


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_round_decimals_rounds_as_pytorchs_kernel(dtype):
    """PyTorch's round(decimals=) kernel is nearbyint(x * 10^d) / 10^d (x / 10^d, then * 10^d, for d < 0) in the
    opmath type, a true division. torchish divided by the constant, which XLA turned into a multiplication by its
    rounded reciprocal (float32: round(-8.946, decimals=1) was -8.900001, a third of this grid an ulp off), and
    computed float16/bfloat16 in the half type (round(0.375, decimals=2) was 0.3801 in float16)."""
    x = np.concatenate([np.linspace(-30, 30, 4001), [0.125, 0.375, 2.675, 1.005, -8.946]]).astype(np.float32)

    def rounds(L):
        t = L.tensor(x).to(getattr(L, dtype))
        return [L.round(t * s, decimals=d).double().numpy() for d, s in ((1, 1), (2, 1), (3, 1), (-1, 100),
                                                                          (-2, 1000))]
    for d, (r, g) in enumerate(zip(rounds(torch), rounds(torchish))):
        np.testing.assert_array_equal(g, r, err_msg=f"{dtype} case {d}")
