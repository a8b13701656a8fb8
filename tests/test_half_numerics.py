"""Numerics PyTorch's CPU kernels pin down exactly, compared bit for bit with torch.

- float16 / bfloat16: activations and their backward kernels (computed in float32, rounded once, from the values
  the forward stored in the half type), the composite backward formulas of unary ops (every op rounded),
  softmax over a dimension that is not the last (accumulated in order, divided), reductions and norms, and the
  normalization layers (statistics saved in the half type).
- signed zeros: cummax/cummin, relu, relu6, hardtanh, i1, logsigmoid.
- poles and special values: digamma/polygamma/lgamma and their gradients, logit, ndtri, sinc, erfcx.

Inputs are deterministic numpy values; PyTorch's softmax kernels split work across threads (its vectorized and
scalar paths round differently), so torch runs single-threaded here and shapes keep the inner size a multiple
of the vector width (32).
"""

import numpy as np
import pytest

import torchish
from oracle import check_fd, needs_avx512_torch, needs_torch, run_both, torch, torch_one_thread

HALF = ["float16", "bfloat16"]
_LIN = np.linspace(-8, 8, 128).astype(np.float32)
_RAND = np.random.default_rng(0).uniform(-6, 6, 128).astype(np.float32)
_COT = np.linspace(-1.3, 1.7, 128).astype(np.float32)


_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _run(lib, f, x, dtype, grad=True):
    """``f(lib, x)`` on ``x`` cast to ``dtype``; its value and (with the cotangent ``_COT``) the input gradient."""
    t = lib.tensor(x).to(getattr(lib, dtype))
    if grad:
        t.requires_grad_(True)
    y = f(lib, t)
    out = [str(y.dtype).split(".")[-1], y.detach().float().numpy()]
    if grad:
        cot = lib.tensor(_COT[:y.numel()].reshape(tuple(y.shape))).to(getattr(lib, dtype))
        y.backward(cot)
        out.append(t.grad.float().numpy())
    return out


def _same_bits(f, x, dtype, grad=True):
    ref, got = _run(torch, f, x, dtype, grad), _run(torchish, f, x, dtype, grad)
    assert got[0] == ref[0], f"dtype {got[0]} != torch's {ref[0]}"
    for name, r, g in zip(("value", "grad"), ref[1:], got[1:]):
        np.testing.assert_array_equal(g, r, err_msg=name)
        np.testing.assert_array_equal(np.signbit(g) | np.isnan(g), np.signbit(r) | np.isnan(r), err_msg=name + " sign")


F = lambda T: T.nn.functional  # noqa: E731

# forward values and input gradients, bit for bit in float16 and bfloat16
HALF_CASES = {
    # activations: PyTorch's float32 kernels (float16 gelu with its vectorized approximation of erf)
    "gelu": (lambda T, x: F(T).gelu(x), _LIN),
    "gelu_tanh": (lambda T, x: F(T).gelu(x, approximate="tanh"), _LIN),
    "glu_dim0": (lambda T, x: F(T).glu(x.reshape(2, 64), 0), _LIN),
    "glu_last": (lambda T, x: F(T).glu(x.reshape(64, 2), -1), _RAND),
    "logsigmoid": (lambda T, x: F(T).logsigmoid(x), _LIN),
    "silu": (lambda T, x: F(T).silu(x), _LIN),
    "mish": (lambda T, x: F(T).mish(x), _LIN),
    "softplus": (lambda T, x: F(T).softplus(x, beta=1.1, threshold=5.0), _LIN),
    "elu": (lambda T, x: F(T).elu(x, alpha=0.7), _LIN),
    "selu": (lambda T, x: F(T).selu(x), _LIN),
    "celu": (lambda T, x: F(T).celu(x, alpha=1.3), _LIN),
    "hardswish": (lambda T, x: F(T).hardswish(x), _RAND),
    "hardsigmoid": (lambda T, x: F(T).hardsigmoid(x), _RAND),
    "softsign": (lambda T, x: F(T).softsign(x), _LIN),
    "tanhshrink": (lambda T, x: F(T).tanhshrink(x), _LIN),
    # softmax family over a dim that is not the last; logsumexp's composite
    "softmax_dim0": (lambda T, x: F(T).softmax(x.reshape(4, 32), 0), _RAND),
    "softmax_3d_dim1": (lambda T, x: F(T).softmax(x.reshape(2, 2, 32), 1), _LIN),
    "softmin_dim0": (lambda T, x: F(T).softmin(x.reshape(4, 32), 0), _RAND),
    "log_softmax_dim0": (lambda T, x: F(T).log_softmax(x.reshape(4, 32), 0), _RAND),
    "logsumexp_dim0": (lambda T, x: T.logsumexp(x.reshape(8, 16), 0), _RAND),
    "logsumexp_dim1": (lambda T, x: T.logsumexp(x.reshape(8, 16), 1), _LIN),
    # reductions and norms
    "var_dim1": (lambda T, x: x.reshape(8, 16).var(1), _RAND),
    "std_all": (lambda T, x: x.std(), _LIN),
    "norm_all": (lambda T, x: x.norm(), _RAND),
    "norm_dim1": (lambda T, x: x.reshape(8, 16).norm(dim=1), _RAND),
    "norm_p3": (lambda T, x: x.reshape(8, 16).norm(p=3, dim=1), _RAND),
    "norm_inf": (lambda T, x: T.linalg.vector_norm(x.reshape(8, 16), float("inf"), dim=0), _RAND),
    # normalization layers: mean and rstd saved in the half type
    "layer_norm": (lambda T, x: F(T).layer_norm(x.reshape(8, 16), (16,)), _RAND),
    "group_norm": (lambda T, x: F(T).group_norm(x.reshape(2, 8, 8), 2), _RAND),
    # unary ops: float32 forwards rounded once, derivatives.yaml formulas one rounded op at a time
    "expm1": (lambda T, x: T.expm1(x), _LIN),
    "log2": (lambda T, x: T.log2(x.abs() + 0.01), _LIN),
    "log10": (lambda T, x: T.log10(x.abs() + 0.01), _LIN),
    "exp2": (lambda T, x: T.exp2(x), _LIN),
    "rsqrt": (lambda T, x: T.rsqrt(x.abs() + 0.01), _LIN),
    "tan": (lambda T, x: T.tan(x / 6), _LIN),
    "asin": (lambda T, x: T.asin(x / 9), _LIN),
    "acos": (lambda T, x: T.acos(x / 9), _LIN),
    "asinh": (lambda T, x: T.asinh(x), _LIN),
    "atanh": (lambda T, x: T.atanh(x / 9), _LIN),
    "erf": (lambda T, x: T.erf(x / 3), _LIN),
    "erfc": (lambda T, x: T.erfc(x / 3), _LIN),
    "erfinv": (lambda T, x: T.erfinv(x / 9), _LIN),
    "sinc": (lambda T, x: T.sinc(x), _LIN),
    "digamma": (lambda T, x: T.digamma(x.abs() + 0.1), _LIN),
    "i0": (lambda T, x: T.special.i0(x), _LIN),
    "entr": (lambda T, x: T.special.entr(x.abs()), _LIN),
}


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", list(HALF_CASES))
def test_half_values_and_gradients_match_torch_bit_for_bit(name, dtype):
    if name == "gelu" and (dtype == "bfloat16" or torch.ops.mkldnn._is_mkldnn_fp16_supported()):
        pytest.skip(f"PyTorch's {dtype} gelu runs oneDNN where the CPU has it (float16: AVX512-FP16 or AMX-FP16): "
                    "its erf differs by machine")
    f, x = HALF_CASES[name]
    _same_bits(f, x, dtype, grad=name not in ("i0", "entr"))


@needs_torch
@pytest.mark.parametrize("name", ["batch_norm", "instance_norm"])
def test_half_batch_norm_matches_torch_bit_for_bit(name):
    """float16 only: PyTorch's bfloat16 invstd occasionally differs from the float32 one rounded (one channel)."""
    f = {"batch_norm": lambda T, x: F(T).batch_norm(x.reshape(8, 16), None, None, training=True),
         "instance_norm": lambda T, x: F(T).instance_norm(x.reshape(2, 8, 8))}[name]
    _same_bits(f, _RAND, "float16")


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
def test_half_norm_layer_weight_gradients_match_torch(dtype):
    """layer_norm's weight and bias gradients accumulate row by row in the half type; group_norm's in float32."""
    rng = np.random.default_rng(3)
    x, w, b = (rng.uniform(-2, 2, s).astype(np.float32) for s in ((6, 8), (8,), (8,)))
    out = {}
    for T in (torch, torchish):
        ts = [T.tensor(v).to(getattr(T, dtype)).requires_grad_() for v in (x, w, b)]
        y = F(T).layer_norm(ts[0], (8,), ts[1], ts[2]) + F(T).group_norm(ts[0].reshape(6, 8, 1), 2, ts[1], ts[2])[..., 0]
        y.backward(T.tensor(_COT[:48].reshape(6, 8)).to(getattr(T, dtype)))
        out[T] = [t.grad.float().numpy() for t in ts]
    for r, g in zip(out[torch], out[torchish]):
        np.testing.assert_array_equal(g, r)


# ----------------------------------------------------------------------------------------------------------------
# signed zeros


_ZEROS = np.array([0.0, -0.0, -0.0, 0.0, 1.0, -1.0, -0.0, 0.0, -0.0, 2.0, -0.0, 0.0] * 4, np.float32)
SIGN_CASES = {
    "cummax": lambda T, x: T.cummax(x, 0).values,
    "cummin": lambda T, x: T.cummin(x, 0).values,
    "cummax_2d": lambda T, x: T.cummax(x.reshape(4, 12), 1).values,
    "relu": lambda T, x: T.relu(x),
    "relu_functional": lambda T, x: F(T).relu(x),
    "relu6": lambda T, x: F(T).relu6(x),
    "hardtanh_zero_limits": lambda T, x: F(T).hardtanh(x, -0.0, 0.0),
    "i1": lambda T, x: T.special.i1(x),
    "logsigmoid_of_large_inputs": lambda T, x: F(T).logsigmoid(x.abs() * 500 + 600),  # min(0, x) - log1p(0): +0
}


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(SIGN_CASES))
def test_signed_zeros_match_torch(name, dtype):
    f = SIGN_CASES[name]
    ref = f(torch, torch.tensor(_ZEROS).to(getattr(torch, dtype))).float().numpy()
    got = f(torchish, torchish.tensor(_ZEROS).to(getattr(torchish, dtype))).float().numpy()
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


@needs_torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_sgn_zeros_match_torch(dtype):
    """sgn(0) is +0+0j; complex64 divides by ``|z| + 0j`` (zero parts take the sign of that division),
    complex128 divides each part by ``|z|``."""
    if dtype == "complex64":
        needs_avx512_torch("the sign of a zero part of complex64 sgn")
    z = np.array([complex(-0.0, -0.0), complex(0.0, -0.0), complex(-0.0, 0.0), complex(1, -0.0), complex(-0.0, 2),
                  complex(-3, -0.0), complex(3, 4), complex(np.inf, 1)])
    ref = torch.sgn(torch.tensor(z).to(getattr(torch, dtype))).numpy()
    got = torchish.sgn(torchish.tensor(z).to(getattr(torchish, dtype))).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6, equal_nan=True)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(ref)))


# ----------------------------------------------------------------------------------------------------------------
# poles and special values


_POLES = np.array([-3.0, -2.0, -1.0, -0.0, 0.0, -2.5, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan, 30.0], np.float64)
SPECIAL_CASES = {
    "digamma": lambda T, x: T.digamma(x),
    "lgamma": lambda T, x: T.lgamma(x),
    "polygamma1": lambda T, x: T.polygamma(1, x),
    "polygamma2": lambda T, x: T.polygamma(2, x),
    "polygamma3": lambda T, x: T.polygamma(3, x),
    "logit": lambda T, x: T.logit(x),
    "ndtri": lambda T, x: T.special.ndtri(x),
    "sinc": lambda T, x: T.sinc(x * 1e-30),
}


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(SPECIAL_CASES))
def test_special_values_and_gradients_at_poles_match_torch(name, dtype):
    if name == "logit" and dtype == "float64":
        needs_avx512_torch("the sign of float64 logit's gradient at a pole")
    f = SPECIAL_CASES[name]
    res = []
    for T in (torch, torchish):
        x = T.tensor(_POLES, dtype=getattr(T, dtype), requires_grad=True)
        y = f(T, x)
        (g,) = T.autograd.grad(y.sum(), x)
        res.append((y.detach().numpy(), g.numpy()))
    for r, g in zip(res[0], res[1]):
        finite = np.isfinite(r)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(r))
        np.testing.assert_array_equal(g[~finite], r[~finite])  # the same infinities, with their signs
        np.testing.assert_allclose(g[finite], r[finite], rtol=2e-6 if dtype == "float32" else 1e-12)


def test_trigamma_is_digammas_derivative():
    """The digamma gradient (PyTorch's trigamma) against central differences, across the reflection point."""
    x = np.array([-2.7, -1.5, -0.3, 0.2, 0.7, 3.0, 12.5])
    check_fd(lambda t: torchish.digamma(t), x, eps=1e-6, rtol=1e-6, atol=1e-8)
    check_fd(lambda t: torchish.polygamma(1, t), x, eps=1e-6, rtol=1e-5, atol=1e-7)


@needs_torch
def test_float32_lgamma_is_exact_at_one_and_two():
    ref = torch.lgamma(torch.tensor([1.0, 2.0, 0.5, 3.5]))
    got = torchish.lgamma(torchish.tensor([1.0, 2.0, 0.5, 3.5]))
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@needs_torch
def test_erfcx_gradient_follows_torchs_formula():
    """``2 x erfcx(x) - 2 / sqrt(pi)`` (JAX's derivative differs); far out the formula cancels to rounding noise."""
    out = []
    for T in (torch, torchish):
        x = T.tensor([-1.0, 0.5, 3.0, 10.0], requires_grad=True)
        T.special.erfcx(x).sum().backward()
        out.append(x.grad.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-4, atol=1e-9)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("exponent", [2, 3, 4, 2.5, 0.5, -0.5, -1.5, -1, -2, -3, 7])
def test_pow_scalar_exponent_half_bit_exact(dtype, exponent):
    """PyTorch's pow(Tensor, Scalar) in half types: its bfloat16 cube is (x*x)*x and x**-2 is 1/(x*x), each step
    rounded; the backward grad * (exponent * x.pow(exponent - 1)) rounds every op to the half type."""
    base = np.linspace(-3, 3, 64).astype(np.float32)
    if exponent != int(exponent):
        base = np.abs(base) + 0.1
    grad = np.linspace(0.5, 2, 64).astype(np.float32)

    def fn(T):
        t = T.tensor(base).to(getattr(T, dtype)).requires_grad_()
        y = t ** exponent
        y.backward(T.tensor(grad).to(getattr(T, dtype)))
        return y.detach().float(), t.grad.float()
    ref, got = run_both(fn)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(r.numpy(), g.numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_pow_tensor_exponent_half_bit_exact(dtype):
    def fn(T):
        a = T.tensor(np.abs(np.linspace(-3, 3, 64)).astype(np.float32) + 0.1).to(getattr(T, dtype)).requires_grad_()
        b = T.tensor(np.linspace(-2, 3, 64).astype(np.float32)).to(getattr(T, dtype)).requires_grad_()
        y = a ** b
        y.backward(T.ones(64, dtype=getattr(T, dtype)))
        return y.detach().float(), a.grad.float(), b.grad.float()
    ref, got = run_both(fn)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(r.numpy(), g.numpy())
