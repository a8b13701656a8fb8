"""PyTorch's float8 dtypes (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu) against
torch 2.13's CPU build: the dtype objects and finfo, conversions bit for bit (PyTorch's rounding: e4m3fn saturates
at +-448, e5m2 overflows to inf, the fnuz types to NaN, e8m0fnu takes the exponent), creation, copies, views and
indexing, the few kernels PyTorch has (mul, abs, eq/ne, the mm family) and the errors of those it has not, printing,
and checkpoints (torch.save / torch.load across the two libraries, safetensors). Each ``case_*`` is written against
the PyTorch API; float8 tensors are returned as their bits (``.view(uint8)``) or widened (``.float()``), since
PyTorch cannot make NumPy arrays of them. Also complex32 (``torch.chalf``), which torchish has as a dtype object only
(no JAX type holds it)."""
import io

import ml_dtypes
import numpy as np
import pytest

from oracle import formula_init, needs_avx512_fp16_torch, needs_torch, same_error, script_test, torch, torchish

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
SPECIAL = [0.0, -0.0, 1.0, 0.3, -2.5, 447.9, 448.0, 449.0, 464.0, 465.0, 480.0, 1000.0, -1000.0, 57344.0, 61440.0,
           1e6, float("inf"), float("-inf"), float("nan"), -float("nan"), 1e-3, 1e-9, 2.0 ** -10, 2.0 ** -9 * 1.5,
           3e38, -2.0 ** -17, 2.0 ** -127, 0.0625, 0.09375, 240.0, 256.0]


def _bits(lib, t):
    return t.view(lib.uint8)


def case_dtype_objects(lib):
    out = []
    for n in NAMES:
        d = getattr(lib, n)
        f = lib.finfo(d)
        out.append([repr(d), str(d), d.is_floating_point, d.is_complex, d.itemsize, d.is_signed, repr(d.to_real()),
                    f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, str(f.dtype), repr(f),
                    lib.ones(2, dtype=d).element_size(), lib.zeros(1, dtype=d).dtype.is_floating_point,
                    lib.empty(3, dtype=d).is_floating_point(), lib.zeros(2, dtype=d).is_signed(),
                    lib.zeros(1, dtype=d).type()])
    return out


def case_convert_from_wider_types(lib):
    """Every float16 and bfloat16 bit pattern, special float32/float64 values and integers into each float8 type."""
    half = lib.arange(-32768, 32768, dtype=lib.int32).to(lib.int16)
    srcs = [half.view(lib.float16), half.view(lib.bfloat16), lib.tensor(SPECIAL), lib.tensor(SPECIAL, dtype=lib.float64),
            lib.tensor([0, 1, -1, 300, -300, 449, 464, 465, 1000, -1000, 2 ** 40, -2 ** 62]),
            lib.tensor([True, False]), lib.tensor([1.5 + 2j, -3j])]
    return [_bits(lib, s.to(getattr(lib, n))) for n in NAMES for s in srcs]


def case_convert_to_wider_types(lib):
    """Every float8 bit pattern into float32/float64 (exact), the integer types (NaN into an int: PyTorch's values)
    and bool, and between the float8 types."""
    out = []
    for n in NAMES:
        x = lib.arange(256, dtype=lib.int32).to(lib.uint8).view(getattr(lib, n))
        out += [x.float(), x.double(), x.to(lib.int64), x.int(), x.short(), x.char(), x.bool(),
                x.to(lib.complex64), x.bfloat16().float(), x.half().float()]
        out += [_bits(lib, x.to(getattr(lib, m))) for m in NAMES if m != n]
    return out


def case_creation(lib):
    out = []
    for n in ("float8_e4m3fn", "float8_e8m0fnu"):
        d = getattr(lib, n)
        x = lib.tensor([1.0, 3.3, 1000.0, -0.5, 0.0], dtype=d)
        out += [_bits(lib, t) for t in (
            x, lib.tensor([[1, 2], [300, -7]], dtype=d), lib.zeros(2, 3, dtype=d), lib.ones(4, dtype=d),
            lib.full((3,), 2.5, dtype=d), lib.full((1,), 1e6, dtype=d), lib.zeros_like(x), lib.ones_like(x),
            lib.full_like(x, 7.0), lib.ones_like(lib.ones(2), dtype=d), x.new_zeros(2), x.new_tensor([0.75]),
            lib.eye(2, dtype=d), lib.as_tensor([3.0], dtype=d), lib.tensor(3.3).to(d), lib.empty(2, dtype=d).fill_(4.0),
            x.clone().zero_(), lib.ones(3).type_as(x))]
        out += [x.tolist(), x[1].item(), float(x[0]), int(x[1]), bool(x[4]), x.shape, x.dtype, x.requires_grad_().dtype]
    return out


def case_printing(lib):
    e4 = lib.float8_e4m3fn
    vals = [[1.0, 2.0], [1.5, 2.0], [1.0, float("nan"), -448.0], [1e-3, 100.0], [1.0, -2.5, 0.3, 448.0]]
    out = [repr(lib.tensor(v).to(e4)) for v in vals]
    out += [repr(lib.tensor(3.0).to(e4)), str(lib.tensor([[1.0, 2.0], [3.0, 4.0]]).to(e4)),
            repr(lib.tensor(list(range(0, 300, 7))).to(e4)), repr(lib.tensor([1.0, 2.0]).to(lib.float8_e5m2)),
            repr(lib.tensor([1.0, 2.0, 512.0]).to(lib.float8_e8m0fnu)),
            repr(lib.tensor([1.0, 2.0], requires_grad=True).to(e4))]
    return out


def case_storage_ops(lib):
    """Copies, views, indexing, joins and padding: PyTorch's own bits (-0.0, NaN and saturation included)."""
    out = []
    for n in ("float8_e4m3fn", "float8_e8m0fnu"):
        d = getattr(lib, n)
        x = lib.tensor([1.0, -0.0, 0.3, 448.0, float("nan"), -2.5]).to(d)
        m = x.reshape(2, 3)
        y = x.clone()
        y[0] = 1000.0
        y[1:3] = lib.tensor([0.5, 0.25]).to(d)
        z = lib.zeros(6, dtype=d).copy_(lib.tensor([1e6, -1e6, 3.3, 0.0, 2.0 ** -9, -7.0]))
        w = x.clone().index_put_((lib.tensor([0, 2]),), lib.tensor([0.75, 3.0]).to(d)) if n != "float8_e8m0fnu" else x
        out += [_bits(lib, t) for t in (
            x.clone(), m.t().contiguous(), m[1], m[:, 1:], x[lib.tensor([0, 3, 3])], x[x == x], y, z, w,
            lib.cat([x, x[:2]]), lib.stack([x, x]), m.permute(1, 0).reshape(-1), x.roll(2), x[:1].expand(3),
            x.repeat(2), m.unsqueeze(0).squeeze(0), lib.cat(m.chunk(3, 1), 0), x.narrow(0, 1, 3),
            x.index_select(0, lib.tensor([5, 0])), x.masked_select(x == x), m.diagonal(), lib.diag_embed(x[:2]),
            lib.diag(x[:3]), x.unfold(0, 2, 2), lib.where(x == x, x, lib.tensor(0.0, dtype=d)),
            lib.where(x == x, x, 1000.0), x.view(lib.int8).view(d), x[:4].view(lib.int16).view(d),
            lib.block_diag(m, m), lib.block_diag(m, m[:1]),
            lib.nn.functional.embedding(lib.tensor([1, 0]), m),
            lib.nn.functional.pad(x, (1, 2)) if n != "float8_e8m0fnu" else x, x.detach(), x.conj(), x.real)]
        out += [x.isnan(), x.any(), x.all(), x == x, x != 0, x == 0.3, x.sum(dtype=lib.float32),
                m.sum(1, dtype=lib.float32), m.mean(dtype=lib.float64), m.prod(dtype=lib.float32),
                m.cumsum(0, dtype=lib.float32)]
    return out


def case_kernels(lib):
    """The float8 kernels PyTorch has: mul (by a non-scalar), abs, and the mm family, computed in float32 and
    rounded once (e4m3fn saturating)."""
    out = []
    for n in ("float8_e4m3fn", "float8_e5m2"):
        d = getattr(lib, n)
        x = lib.tensor([1.0, -2.5, 0.3125, 448.0, 3.0, -0.0625]).to(d)
        m = x.reshape(2, 3)
        s = lib.tensor([[1.0, 0.0625, 0.0625], [300.0, 300.0, 1.0]]).to(d)
        out += [_bits(lib, t) for t in (
            x * x, x * x.roll(1), m * m[:, :1], lib.tensor(2.0, dtype=d) * x, x.abs(),
            lib.outer(x[:3], x[3:]), lib.kron(m[:, :2], m[:, 1:]), m @ m.t(), s @ s.t(), lib.mm(m.t(), m),
            lib.matmul(m.reshape(1, 2, 3), m.t()), x[:2] @ m, lib.nn.functional.linear(m, s),
            lib.nn.functional.linear(m, s, x[:2]), lib.addmm(x[:2], m, s.t(), beta=2.0),
            x.clone().mul_(x.roll(2)))]
    for n in ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):  # (fnuz overflow: NaN)
        x = lib.tensor([1.0, 2.0, 0.25, 200.0]).to(getattr(lib, n))
        out += [_bits(lib, x * x)] + ([_bits(lib, x.reshape(2, 2) @ x.reshape(2, 2).t())] if "fnuz" in n else [])
    return out


def case_compiled(lib, jit):
    w = lib.tensor([[1.0, -2.0], [0.5, 4.0]]).to(lib.float8_e4m3fn)

    @jit
    def f(a, b):
        return (a * b) @ w, (a @ b).float() * 3.0, a.float() + b.float()

    a = lib.tensor([[300.0, 1.0], [2.0, -3.0]]).to(lib.float8_e4m3fn)
    return [_bits(lib, t) if t.dtype == lib.float8_e4m3fn else t for t in f(a, a) + f(a.t(), a)]


def case_quantize_dequantize(lib):
    """The scale-and-cast of float8 inference code: per-row scales in float32, weights to float8 and back."""
    wt = lib.cos(lib.arange(24.0) * 0.7).reshape(4, 6) * 3.0
    out = []
    for n in ("float8_e4m3fn", "float8_e5m2"):
        d = getattr(lib, n)
        amax = wt.abs().amax(dim=1, keepdim=True)
        scale = lib.finfo(d).max / amax.clamp(min=1e-12)
        q = (wt * scale).clamp(lib.finfo(d).min, lib.finfo(d).max).to(d)
        out += [_bits(lib, q), q.float() / scale, (q.to(lib.bfloat16) * (1 / scale).to(lib.bfloat16)).float(),
                q.view(lib.uint8).view(d).float().sum()]
    return out


def case_fp8_weight_only_linear(lib):
    """Weight-only float8 quantisation as inference code writes it: float8 buffers with a per-row scale, dequantised
    in forward; the module cast with .to()/.half(), its state dict saved and loaded, and nn.Linear.to(float8)."""
    nn, F = lib.nn, lib.nn.functional
    e4 = lib.float8_e4m3fn

    class FP8Linear(nn.Module):
        def __init__(self, lin):
            super().__init__()
            w = lin.weight.detach()
            scale = w.abs().amax(dim=1, keepdim=True) / lib.finfo(e4).max
            self.register_buffer("weight", (w / scale).to(e4))
            self.register_buffer("scale", scale)
            self.bias = lin.bias

        def forward(self, x):
            return F.linear(x, self.weight.to(x.dtype) * self.scale, self.bias)

    x = lib.cos(lib.arange(8.0) * 0.3).reshape(2, 4)
    q = FP8Linear(formula_init(lib, nn.Linear(4, 3)))
    out = [q(x), q.to(lib.bfloat16)(x.bfloat16()), str(q.weight.dtype)]
    buf = io.BytesIO()
    lib.save(q.state_dict(), buf)
    buf.seek(0)
    q2 = FP8Linear(formula_init(lib, nn.Linear(4, 3), seed=3))
    q2.load_state_dict(lib.load(buf))
    lin8 = formula_init(lib, nn.Linear(4, 3)).to(e4)
    out += [_bits(lib, q2.weight), sorted((k, str(v.dtype)) for k, v in q2.state_dict().items()),
            _bits(lib, lin8(x.to(e4))), lin8.weight.requires_grad, repr(nn.Parameter(lib.ones(2).to(e4)))]
    return out


def case_gradients_through_conversions(lib):
    """ToCopyBackward0 across float8: the gradient of x.to(float8) reaches x (converted back), a straight-through
    fake-quant's too, and a float8 leaf's gradient is converted with PyTorch's rounding (e4m3fn saturating)."""
    e4 = lib.float8_e4m3fn
    x = lib.tensor([0.3, -2.7, 500.0, 1.1], requires_grad=True)
    (x.to(e4).float() * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    out = [x.grad, type(x.to(e4).grad_fn).__name__]
    x.grad = None
    q = x + (x.to(e4).float() - x).detach()
    (q * q).sum().backward()
    out.append(x.grad)
    for n in ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"):
        p = lib.tensor([1.0, 2.0]).to(getattr(lib, n)).requires_grad_()
        (p.double() * lib.tensor([1000.0, 0.3], dtype=lib.float64)).sum().backward()
        out.append(_bits(lib, p.grad))
    return out


def case_meta_and_printing_corners(lib):
    """Meta tensors take any float8 op (PyTorch's meta kernels check no dtype support, and a real tensor after them
    still raises); printing of large, signed-zero, e8m0fnu and e5m2 infinity values."""
    e4 = lib.float8_e4m3fn
    meta = lib.zeros(3, dtype=e4, device="meta")
    out = [str((meta + meta).dtype), tuple((meta * 2.0).shape)]
    try:
        lib.ones(3).to(e4) + lib.ones(3).to(e4)
    except NotImplementedError as e:
        out.append(str(e))
    out += [repr(lib.arange(2000.0).to(e4).reshape(40, 50)), repr(lib.tensor([-0.0, 0.5]).to(e4)),
            repr(lib.tensor([2.0 ** 100, 1.0]).to(lib.float8_e8m0fnu)),
            repr(lib.tensor([float("inf"), -1.0, float("nan")]).to(lib.float8_e5m2)),
            format(lib.tensor(0.3).to(e4), ".2f")]
    return out


def case_scaled_mm(lib):
    """torch._scaled_mm on the CPU: float32 products of float8 matrices, scaled tensor-wise or row-wise, plus bias,
    rounded once to out_dtype (into float8 without saturation: 896 is NaN); scale_result is ignored."""
    e4 = lib.float8_e4m3fn
    a = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]]).to(e4)
    b = lib.tensor([[1.0, 0.5], [2.0, -1.0], [0.25, 3.0]]).to(e4)
    one, two, half = lib.tensor(1.0), lib.tensor(2.0), lib.tensor(0.5)
    big = lib.tensor([[448.0, 448.0]]).to(e4)
    outs = [lib._scaled_mm(a, b, one, one), lib._scaled_mm(a, b.t().contiguous().t(), two, half, out_dtype=lib.float32),
            lib._scaled_mm(a, b, two, half, out_dtype=lib.bfloat16),
            lib._scaled_mm(a, b, one, one, bias=lib.tensor([1.0, 2.0]), out_dtype=lib.float32),
            lib._scaled_mm(a, b, lib.tensor([[1.0], [2.0]]), lib.tensor([[1.0, 3.0]]), out_dtype=lib.float32),
            lib._scaled_mm(a, b, one, one, scale_result=two, out_dtype=lib.float16),
            lib._scaled_mm(a, b.to(lib.float8_e5m2), one, one, out_dtype=lib.float8_e5m2),
            lib._scaled_mm(a, b, one.half(), one.double()),
            lib._scaled_mm(big, big.t(), one, one), lib._scaled_mm(big, big.t(), one, one, out_dtype=lib.float32)]
    return [_bits(lib, t) if t.dtype in (e4, lib.float8_e5m2) else t for t in outs]


def case_complex32_dtype(lib):
    c = lib.complex32
    f = lib.finfo(lib.chalf)
    others = (lib.float16, lib.bfloat16, lib.float32, lib.float64, lib.int64, lib.uint8, lib.bool, lib.complex64,
              lib.complex128, c)
    return [repr(c), c is lib.chalf, c.is_complex, c.is_floating_point, c.itemsize, c.is_signed, repr(c.to_real()),
            repr(c.to_complex()), repr(lib.float16.to_complex()), repr(lib.bfloat16.to_complex()), repr(f), f.eps,
            [repr(lib.promote_types(c, d)) for d in others], [repr(lib.promote_types(d, c)) for d in others]]


test_script_matches_torch = script_test(globals(), avx512_fp16={
    "scaled_mm": "_scaled_mm's accepted scale dtypes (another implementation validates it)"})


def test_complex32_tensors_raise():
    """No torchish tensor holds complex32 (README): making or converting to one is a TypeError, not a silent
    complex64 tensor."""
    x = torchish.ones(2)
    for make in (lambda: torchish.zeros(2, dtype=torchish.chalf), lambda: torchish.tensor([1j], dtype=torchish.chalf),
                 lambda: x.to(torchish.complex32), lambda: x.chalf(), lambda: torchish.full((2,), 1j,
                                                                                               dtype=torchish.chalf)):
        with pytest.raises(TypeError, match="complex32"):
            make()


ERRORS = {
    "add": lambda t, x: x + x, "add_scalar": lambda t, x: x + 1, "sub": lambda t, x: x - x, "neg": lambda t, x: -x,
    "div": lambda t, x: x / x, "mul_scalar": lambda t, x: x * 2.0, "mul_one": lambda t, x: x * x[:1, :1],
    "mul_0d": lambda t, x: x * t.tensor(2.0), "sum": lambda t, x: x.sum(), "mean": lambda t, x: x.mean(1),
    "max": lambda t, x: x.max(), "amax": lambda t, x: x.amax(0), "argmax": lambda t, x: x.argmax(),
    "lt": lambda t, x: x < x, "exp": lambda t, x: x.exp(), "relu": lambda t, x: t.relu(x),
    "sigmoid": lambda t, x: x.sigmoid(), "clamp": lambda t, x: x.clamp(0, 1), "sort": lambda t, x: x.sort(),
    "topk": lambda t, x: x.topk(1), "cumsum": lambda t, x: x.cumsum(0), "softmax": lambda t, x: x.softmax(-1),
    "masked_fill": lambda t, x: x.masked_fill(x == x, 0.5), "gather": lambda t, x: x.gather(1, t.zeros(2, 1).long()),
    "tril": lambda t, x: x.tril(), "bmm": lambda t, x: x[None] @ x.t()[None],
    "mv": lambda t, x: x @ x[0], "dot": lambda t, x: x[0] @ x[0], "var": lambda t, x: x.var(),
    "std_dim": lambda t, x: x.std(0), "nonzero": lambda t, x: x.nonzero(), "equal": lambda t, x: t.equal(x, x),
    "unique": lambda t, x: x.unique(), "sign": lambda t, x: x.sign(), "isinf": lambda t, x: x.isinf(),
    "layer_norm": lambda t, x: t.nn.functional.layer_norm(x, (2,)), "fft": lambda t, x: t.fft.fft(x),
    "numpy": lambda t, x: x.numpy(), "array": lambda t, x: np.asarray(x),
    "arange": lambda t, x: t.arange(3, dtype=x.dtype), "linspace": lambda t, x: t.linspace(0, 1, 3, dtype=x.dtype),
    "randn": lambda t, x: t.randn(2, dtype=x.dtype), "rand": lambda t, x: t.rand(2, dtype=x.dtype),
    "bernoulli": lambda t, x: x.bernoulli(), "bernoulli_p": lambda t, x: x.bernoulli(0.5),
    "randint": lambda t, x: t.randint(0, 3, (2,), dtype=x.dtype), "normal_": lambda t, x: x.clone().normal_(),
    "promote_f32": lambda t, x: x + t.ones(2, 2), "promote_cat": lambda t, x: t.cat([x, t.ones(1, 2)]),
    "promote_f8": lambda t, x: x * x.to(t.float8_e5m2 if x.dtype != t.float8_e5m2 else t.float8_e4m3fn),
    "promote_bool": lambda t, x: x * (x == x), "promote_long_0d": lambda t, x: t.ones(2, dtype=t.long) * x[0, 0],
    "promote_types": lambda t, x: t.promote_types(t.int64, x.dtype), "complex": lambda t, x: x * 1j,
    "to_complex": lambda t, x: x.dtype.to_complex(), "full_overflow": lambda t, x: t.full((2,), -1e6, dtype=x.dtype),
    "full_inf": lambda t, x: t.full((2,), float("-inf"), dtype=x.dtype) if x.dtype != t.float8_e5m2 else 1 / 0,
    "fill_overflow": lambda t, x: x.clone().fill_(-1e6), "mm_f32": lambda t, x: x @ t.ones(2, 2),
    "dropout": lambda t, x: t.nn.functional.dropout(x, 0.5), "mse": lambda t, x: t.nn.functional.mse_loss(x, x),
    "conv1d": lambda t, x: t.nn.functional.conv1d(x[None], x[:, :, None]), "isin": lambda t, x: t.isin(x, x), "setitem_mask": lambda t, x: x.clone().__setitem__(x == x, 3.0),
    "set_default_dtype": lambda t, x: t.set_default_dtype(x.dtype), "scaled_mm_f32": lambda t, x: t._scaled_mm(x.float(), x, t.tensor(1.0), t.tensor(1.0)),
    "scaled_mm_scale": lambda t, x: t._scaled_mm(x, x, t.tensor([1.0, 2.0]), t.tensor(1.0)),
    "scaled_mm_shape": lambda t, x: t._scaled_mm(x, x[:1], t.tensor(1.0), t.tensor(1.0)),
    "scaled_mm_mixed": lambda t, x: t._scaled_mm(x, x.to(t.float8_e5m2), t.tensor(1.0).half(), t.tensor(1.0)),
    "scaled_mm_out": lambda t, x: t._scaled_mm(x, x, t.tensor(1.0), t.tensor(1.0), out_dtype=t.int32),
    "from_numpy": lambda t, x: t.from_numpy(x.view(t.uint8).numpy().view(ml_dtypes.float8_e4m3fn)),
    "flip_last": lambda t, x: x.flip(1), "gather_1d": lambda t, x: x[0].gather(0, t.tensor([1, 0])),
    "pad_e8m0_zero": lambda t, x: t.nn.functional.pad(x, (1, 1)) if x.dtype == t.float8_e8m0fnu else 1 / 0,
    "mean_empty": lambda t, x: x[:0].mean(), "mean_dim_empty": lambda t, x: x[:, :0].mean(1),
}


@needs_torch
def test_empty_sums_are_pytorchs_zeros():
    """A sum over nothing runs no kernel in PyTorch: its zeros are 0 rounded into the type (bits 0, which is 2^-127
    in float8_e8m0fnu, where XLA's conversion of 0 gives NaN)."""
    def bits(lib):
        out = []
        for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):
            z = lib.zeros(2, 0, dtype=getattr(lib, name))
            out.append([z.sum().view(lib.uint8).item(), z.sum(1).view(lib.uint8).tolist(),
                        z.sum(1, keepdim=True).shape, z.sum(dtype=lib.float32).item(), z.mean(dtype=lib.float32).shape])
        return out
    assert bits(torchish) == bits(torch)


@needs_torch
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e8m0fnu"])
@pytest.mark.parametrize("op", sorted(ERRORS))
def test_float8_errors_match_torch(op, name):
    """PyTorch's NotImplementedError for the kernels its CPU build lacks, its promotion errors, its overflow errors
    for numbers written into float8, and NumPy's refusal: the same exception type and message."""
    if op in ("scaled_mm_out", "scaled_mm_shape"):
        needs_avx512_fp16_torch("_scaled_mm's checks (another implementation validates it)")
    same_error(lambda lib: ERRORS[op](lib, lib.tensor([[1.0, 2.0], [0.5, 4.0]]).to(getattr(lib, name))))


@needs_torch
def test_checkpoints_cross_libraries(tmp_path):
    """A float8 state dict saved by either library loads in the other with the same dtypes and bits (views and
    slices of one storage included); safetensors keeps them too (F8_E4M3, F8_E5M2, F8_E8M0)."""
    vals = [1.0, -2.5, 0.3, 448.0, -0.0, float("nan")]
    for n in NAMES:
        t = torch.tensor(vals).to(getattr(torch, n))
        x = torchish.tensor(vals).to(getattr(torchish, n))
        for save, load, obj in ((torchish.save, torch.load, {"w": x, "s": x[1:4]}),
                                (torch.save, torchish.load, {"w": t, "s": t[1:4]})):
            buf = io.BytesIO()
            save(obj, buf)
            buf.seek(0)
            got = load(buf)
            lib = torch if isinstance(got["w"], torch.Tensor) else torchish
            assert str(got["w"].dtype) == str(t.dtype), n
            assert got["w"].view(lib.uint8).tolist() == t.view(torch.uint8).tolist(), n
            assert got["s"].view(lib.uint8).tolist() == t[1:4].view(torch.uint8).tolist(), n
    from torchish.serialization import load_safetensors, save_safetensors
    tensors = {n: torchish.tensor(vals).to(getattr(torchish, n)) for n in ("float8_e4m3fn", "float8_e5m2",
                                                                              "float8_e8m0fnu")}
    path = tmp_path / "f8.safetensors"
    save_safetensors(tensors, str(path))
    back = load_safetensors(str(path))
    for n, x in tensors.items():
        assert back[n].dtype is x.dtype and back[n].view(torchish.uint8).tolist() == x.view(torchish.uint8).tolist()
    raw = path.read_bytes()
    assert b'"F8_E4M3"' in raw and b'"F8_E5M2"' in raw and b'"F8_E8M0"' in raw
