"""Third-party programs, round 66 (helper 183): dtype and integer-arithmetic idioms as image, audio and
data-processing pipelines write them (uint8 image normalisation and quantisation back with ``round().clamp()``,
uint8 wrap-around, bitwise ops and shifts on uint8/int32/int64 with negative values, bit packing into bytes;
floor and trunc division with negatives and int/float mixes, ``remainder`` vs ``fmod`` signs, half-to-even
``round`` and ``round(decimals=)``; type promotion inside expressions, int64 sums and cumsums of small ints and
bools, ``mean`` of ints raising, ``result_type``/``promote_types``/``can_cast``, ``finfo``/``iinfo`` fields;
float16/bfloat16 audio normalisation, int16 PCM round trips and mu-law companding; complex STFT-style helpers
(``polar``, ``angle``, ``view_as_real``/``view_as_complex``, conjugates); int64 hashing near 2**53 and 2**63 with
wrap-around; ``torch.tensor`` inference from mixed lists, ``.item()`` and ``.tolist()`` types; ``copysign``,
``nextafter``, ``frexp``, ``ldexp`` and ``isclose(equal_nan=)``), re-implemented here, run with torch 2.13 and
torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import builtins

import pytest

from oracle import outcome as _family, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _types(xs):
    """Python type names of the nested elements of a ``tolist()`` result."""
    if isinstance(xs, list):
        return [_types(x) for x in xs]
    return type(xs).__name__


def case_uint8_image_math_and_bits(lib):
    """torchvision-style uint8 image handling: ``img.float() / 255``, ``to_uint8`` by ``(x * 255).round().clamp(0,
    255).to(torch.uint8)``, brightness by uint8 + uint8 wrap-around and by saturating through int16, uint8 - uint8
    underflow, ``img // 2``, ``img >> 4 << 4`` posterize, bitwise and/or/xor/not and shifts on uint8, int32 and int64
    with negative values (arithmetic right shift), and bit packing of a bool mask into bytes (numpy's ``packbits``
    written with shifts and a sum) and back."""
    torch = lib
    img = torch.tensor([[0, 17, 128, 200], [255, 3, 64, 250]], dtype=torch.uint8)
    x = img.float() / 255
    back = (x * 255).round().clamp(0, 255).to(torch.uint8)
    noisy = (x + torch.tensor([[0.3, -0.2, 0.0049, 0.5], [0.1, -0.01, 0.498 / 255, 0.002]])).clamp(0, 1)
    q = (noisy * 255).round().clamp(0, 255).to(torch.uint8)
    q_trunc = (noisy * 255).to(torch.uint8)
    wrap = img + torch.tensor(100, dtype=torch.uint8)
    wrap2 = img + img
    under = img - torch.full_like(img, 100)
    sat = (img.to(torch.int16) + 100).clamp(0, 255).to(torch.uint8)
    half = img // 2
    poster = (img >> 4) << 4
    inv = ~img
    inv2 = 255 - img
    band = torch.bitwise_and(img, 0x0F)
    bor = torch.bitwise_or(img, torch.tensor(0x80, dtype=torch.uint8))
    bxor = torch.bitwise_xor(img, img.flip(-1))
    i32 = torch.tensor([-7, -1, 0, 5, 2 ** 30, -(2 ** 31)], dtype=torch.int32)
    i64 = torch.tensor([-7, -1, 0, 5, 2 ** 40, -(2 ** 62)])
    shifts32 = (i32 >> 1, i32 << 1, torch.bitwise_right_shift(i32, 3), torch.bitwise_left_shift(i32, 2),
                i32 & 0xFF, i32 | -16, i32 ^ -1, ~i32, torch.bitwise_not(i32))
    shifts64 = (i64 >> 3, i64 << 1, torch.bitwise_right_shift(i64, torch.tensor([0, 1, 2, 3, 4, 5])),
                torch.bitwise_left_shift(torch.tensor(1), torch.arange(6) * 10), i64 & (2 ** 35 - 1),
                torch.bitwise_xor(i64, torch.tensor(0x5DEECE66D)), i64 % 256, (i64 & 0xFF).to(torch.uint8))
    u8_shift = (img << 1, img >> torch.tensor([1, 2, 3, 7], dtype=torch.uint8), img.to(torch.int32) << 24)
    mask = torch.tensor([[1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1],
                         [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]], dtype=torch.bool)
    weights = torch.tensor([128, 64, 32, 16, 8, 4, 2, 1], dtype=torch.uint8)
    packed = (mask.view(2, -1, 8).to(torch.uint8) * weights).sum(-1, dtype=torch.uint8)
    packed_shift = (mask.view(2, -1, 8).to(torch.uint8) << torch.arange(7, -1, -1, dtype=torch.uint8)).sum(
        -1).to(torch.uint8)
    unpacked = ((packed.unsqueeze(-1) >> torch.arange(7, -1, -1, dtype=torch.uint8)) & 1).bool().view(2, -1)
    bits = torch.tensor([0b1011, 0xFF, 0, 0x80], dtype=torch.uint8)
    popcount = sum(((bits >> k) & 1) for k in range(8))
    return (x, back, q, q_trunc, wrap, wrap2, under, sat, half, poster, inv, inv2, band, bor, bxor, shifts32,
            shifts64, u8_shift, packed, packed_shift, unpacked, torch.equal(unpacked, mask), popcount,
            [t.dtype for t in (x, wrap, sat, half, band, bor, packed, packed_shift, popcount, u8_shift[2])])


def case_integer_division_and_rounding(lib):
    """Integer division as index arithmetic writes it: ``//`` and ``torch.div(rounding_mode='floor'|'trunc')`` with
    negative ints, int by float, float by int and Python scalars on either side, ``floor_divide``, ``remainder`` (the
    sign of the divisor) against ``fmod`` (the sign of the dividend) on ints and floats, ``divmod``-style pairs,
    ``torch.div`` of ints giving float, ``round`` half-to-even on .5 values and ``round(decimals=)`` with positive and
    negative decimals, ``trunc``/``floor``/``ceil``/``frac`` of negatives, and int tensors rounded by dtype round
    trips."""
    torch = lib
    a = torch.tensor([-7, -6, -1, 0, 1, 6, 7, 9])
    b = torch.tensor([2, -4, 3, -3, -2, 4, -3, 5])
    fa = a.float() + 0.5
    divs = (a // 2, a // -2, a // b, torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
            torch.div(a, b), a / b, torch.floor_divide(a, b), a // 2.5, a.float() // b, fa // 2, fa // -2,
            -7 // torch.tensor(2), 7.5 // torch.tensor([2, -2]), torch.div(fa, 2, rounding_mode="trunc"),
            torch.div(a, 2.0, rounding_mode="floor"), torch.div(a.to(torch.int32), 3, rounding_mode="trunc"),
            torch.div(a.to(torch.int16), torch.tensor(3, dtype=torch.int16), rounding_mode="floor"))
    mods = (a % 3, a % -3, torch.remainder(a, b), torch.fmod(a, b), torch.remainder(fa, -2.0), torch.fmod(fa, -2.0),
            fa % 2, torch.remainder(-3, torch.tensor([2, -2])), torch.fmod(a, 2.5), torch.remainder(a, 2.5),
            a.to(torch.int32) % 4, torch.remainder(a.to(torch.uint8), 3))
    q, r = a // b, a % b
    roundtrip = torch.equal(q * b + r, a)
    halves = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.0, 2.675])
    rounds = (torch.round(halves), halves.round(), torch.round(halves, decimals=1),
              torch.round(torch.tensor([1234.5678, -1234.5678, 0.125, 0.375]), decimals=2),
              torch.round(torch.tensor([1234.5678, -1250.0, 1350.0, 15.0]), decimals=-2),
              torch.round(halves.double(), decimals=3), torch.round(halves.half()))
    # exact: a price or a metric rounded for display, compared with the literal it should equal
    shown = torch.tensor([-8.946, 2.675, 0.125, 1.005, 8.919001, 123.456])
    exact = (torch.round(shown, decimals=1) == torch.tensor([-8.9, 2.7, 0.1, 1.0, 8.9, 123.5]),
             torch.round(shown, decimals=2) == torch.tensor([-8.95, 2.67, 0.12, 1.0, 8.92, 123.46]),
             torch.round(shown.half(), decimals=2) == torch.tensor([-8.95, 2.67, 0.12, 1.0, 8.92, 123.44],
                                                                    dtype=torch.float16),
             torch.round(torch.tensor([0.125, 0.375, 0.625], dtype=torch.float16), decimals=2) == torch.tensor(
                 [0.12, 0.38, 0.62], dtype=torch.float16),
             torch.round(shown.bfloat16(), decimals=1).float().tolist())
    fl = (torch.trunc(halves), torch.floor(halves), torch.ceil(halves), torch.frac(halves), halves.fix(),
          torch.sign(halves), torch.sgn(halves))
    ints_round = (torch.round(a), torch.floor(a), torch.ceil(a), torch.trunc(a))
    centre = (torch.tensor([3, 4, 5, 10]) - 1) // 2
    grid = torch.arange(10)
    rows, cols = grid // 4, grid % 4
    return (divs, mods, roundtrip, rounds, exact, fl, ints_round, centre, rows, cols,
            [t.dtype for t in divs], [t.dtype for t in mods], [t.dtype for t in ints_round])


def case_type_promotion_and_info(lib):
    """Promotion inside expressions (int tensor * Python float, int + bool, uint8 + int8, int32 + int64 0-dim,
    float16 + float32 0-dim, int * float64 tensor), bool sums and ``.float().mean()`` accuracy, int64 ``sum``,
    ``cumsum`` and ``prod`` of int32/uint8/bool, ``sum(dtype=)``, ``mean`` of ints raising and ``mean(dtype=)``,
    ``torch.result_type``, ``promote_types`` and ``can_cast``; ``finfo``/``iinfo`` fields as numerics code reads
    them (eps, tiny, max, min, resolution, bits, smallest_normal, dtype)."""
    torch = lib
    i = torch.tensor([1, 2, 3])
    i32 = torch.tensor([1, 2, 3], dtype=torch.int32)
    u8 = torch.tensor([200, 100, 7], dtype=torch.uint8)
    s8 = torch.tensor([-100, 50, 7], dtype=torch.int8)
    bo = torch.tensor([True, False, True, True])
    h = torch.tensor([1.5, 2.25, -3.0], dtype=torch.float16)
    exprs = (i * 0.5, i32 * 1.5, i + True, bo + bo, bo * 2, bo + 0.5, u8 + s8, u8 * 2, i32 + torch.tensor(5),
             i32 + torch.tensor([5]), h + torch.tensor(1.0), h * torch.tensor([2.0]), i * torch.tensor(2.0,
             dtype=torch.float64), u8 / 2, i32 / i32, i ** 2, i32 ** 2.0, 2 ** i, i * 1j, h.double() + 1,
             torch.tensor(3, dtype=torch.int8) * 100, bo & torch.tensor([True, True, False, False]), -bo.int())
    pred = torch.tensor([0, 2, 1, 1, 0])
    target = torch.tensor([0, 1, 1, 1, 2])
    correct = pred == target
    stats = (correct.sum(), correct.float().mean(), correct.sum().item() / len(correct), correct.sum() / 5,
             bo.sum(), bo.cumsum(0), i32.sum(), i32.cumsum(0), u8.sum(), u8.cumsum(0), u8.prod(), s8.sum(),
             u8.sum(dtype=torch.uint8), i32.sum(dtype=torch.int32), i32.cumsum(0, dtype=torch.int32),
             u8.cumsum(0, dtype=torch.float32), bo.prod(), bo.any(), bo.all(), i32.max(), u8.argmax(),
             i.mean(dtype=torch.float32), u8.to(torch.float64).mean(), torch.count_nonzero(bo))
    errs = (_family(lambda: i.mean()), _family(lambda: u8.mean()), _family(lambda: bo.float().mean().long()),
            _family(lambda: i.var()), _family(lambda: i.std()))
    dts = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
           torch.float32, torch.float64, torch.bool, torch.complex64]
    promo = [[torch.promote_types(a, b) for b in dts] for a in dts]
    cast = [[torch.can_cast(a, b) for b in dts] for a in dts]
    rt = (torch.result_type(i, 1.0), torch.result_type(i32, 5), torch.result_type(u8, s8),
          torch.result_type(h, torch.tensor(1.0)), torch.result_type(h, torch.tensor([1.0])),
          torch.result_type(bo, 1), torch.result_type(2, 3.0), torch.result_type(torch.tensor(2), 1.5),
          torch.result_type(i32, torch.tensor(1, dtype=torch.int64)), torch.result_type(u8, -1),
          torch.result_type(h.bfloat16(), 2j), torch.result_type(i32, 2j), torch.result_type(h.double(), 1j))
    info = []
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        f = torch.finfo(dt)
        info.append([repr(v) for v in (f.eps, f.tiny, f.max, f.min, f.resolution, f.smallest_normal)]
                    + [f.bits, str(f.dtype)])
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        ii = torch.iinfo(dt)
        info.append((ii.max, ii.min, ii.bits, str(ii.dtype)))
    f32 = torch.finfo(torch.float32)
    logits = torch.tensor([0.0, 1.0, -2.0])
    masked = logits.masked_fill(torch.tensor([False, True, False]), torch.finfo(logits.dtype).min)
    safe_log = torch.log(torch.tensor([0.0, 0.5]).clamp(min=f32.tiny))
    eps_div = torch.tensor([1.0, 0.0]) / (torch.tensor([2.0, 0.0]) + f32.eps)
    info_default = (torch.finfo().bits, str(torch.finfo().dtype), torch.iinfo(torch.int32).max + 1,
                    type(torch.finfo(torch.float32).eps).__name__, type(torch.iinfo(torch.int8).max).__name__,
                    torch.finfo(logits.dtype) == torch.finfo(torch.float32), torch.finfo(torch.complex64) == f32,
                    torch.finfo(torch.float16) != f32, torch.iinfo(torch.int8) == torch.iinfo(torch.int8),
                    _family(lambda: torch.finfo("float32")), _family(lambda: torch.iinfo(None)))
    return (exprs, [t.dtype for t in exprs], stats, [t.dtype for t in stats if isinstance(t, torch.Tensor)], errs,
            promo, cast, rt, info, masked, safe_log, eps_div, info_default)


def case_audio_pcm_mulaw_half(lib):
    """Audio pipelines: peak normalisation ``x / x.abs().max()`` in float32, float16 and bfloat16 (with
    ``clamp(-1, 1)`` and a float32 accumulate for the RMS), int16 PCM by ``(x * 32767).to(torch.int16)`` and back
    ``/ 32768``, ``torchaudio``'s mu-law encode (``sign * log1p(mu * |x|) / log1p(mu)`` quantised into 256 int64
    bins) and decode, dB conversion with an ``amin`` clamp, float16 sums over a long-ish buffer and float16 <->
    bfloat16 casts."""
    torch = lib
    t = torch.arange(64, dtype=torch.float32)
    wav = 0.8 * torch.sin(t * 0.37) + 0.15 * torch.cos(t * 1.31) - 0.02
    wav16 = wav.half()
    wavbf = wav.bfloat16()
    outs = []
    for w in (wav, wav16, wavbf):
        peak = w.abs().max()
        norm = (w / peak).clamp(-1, 1)
        rms = w.float().pow(2).mean().sqrt()
        outs.append((peak, norm, rms, w.sum(), w.mean(), w.cumsum(0)[-1], (w * 3).clamp(-1, 1), w.abs().argmax()))
    pcm = (wav.clamp(-1, 1) * 32767).to(torch.int16)
    pcm_round = (wav.clamp(-1, 1) * 32767).round().to(torch.int16)
    back = pcm.float() / 32768
    back16 = pcm.to(torch.float16) / 32768
    pcm_sum = pcm.sum()
    pcm_i32 = pcm.to(torch.int32) * 2
    pcm_peak = pcm.abs().max()
    mu = 255
    x_mu = torch.sign(wav) * torch.log1p(mu * torch.abs(wav)) / torch.log1p(torch.tensor(mu, dtype=wav.dtype))
    codes = ((x_mu + 1) / 2 * mu + 0.5).to(torch.int64)
    codes_u8 = codes.to(torch.uint8)
    y = codes.to(torch.float32) / mu * 2 - 1.0
    decoded = torch.sign(y) * (torch.exp(torch.abs(y) * torch.log1p(torch.tensor(float(mu)))) - 1.0) / mu
    power = wav ** 2
    db = 10.0 * torch.log10(torch.clamp(power, min=1e-10))
    db = torch.max(db, db.max() - 80.0)
    h_buf = torch.full((1000,), 0.1, dtype=torch.float16)
    h_sums = (h_buf.sum(), h_buf.cumsum(0)[[9, 99, 999]], h_buf.mean(), h_buf.float().sum(),
              h_buf.sum(dtype=torch.float32))
    casts = (wav16.bfloat16(), wavbf.half(), wav16.to(torch.bfloat16).float(), (wav16 + wavbf).dtype,
             (wav16 * 1.0001).dtype, torch.tensor(65504.0, dtype=torch.float16) + 16,
             torch.tensor(1.0, dtype=torch.bfloat16) + 2 ** -8, torch.tensor(1.0, dtype=torch.float16) + 2 ** -11)
    return outs, pcm, pcm_round, back, back16, pcm_sum, pcm_i32, pcm_peak, codes, codes_u8, decoded, db, h_sums, casts


def case_complex_signal_helpers(lib):
    """Complex numbers as signal code uses them: ``torch.polar(mag, phase)``, ``angle`` of complex and of real
    negatives, ``view_as_real``/``view_as_complex`` round trips, complex ``abs`` (hypot without overflow),
    ``conj().resolve_conj()`` and ``is_conj``, ``x * x.conj()`` power, phase differences wrapped to (-pi, pi],
    complex from ``torch.complex(re, im)``, complex * real promotion, complex128 from float64 and complex
    ``.item()``/``.tolist()``."""
    torch = lib
    mag = torch.tensor([1.0, 2.0, 0.5, 0.0, 3.0])
    phase = torch.tensor([0.0, 0.5, -2.0, 1.0, 3.14159])
    z = torch.polar(mag, phase)
    zr = torch.view_as_real(z)
    z2 = torch.view_as_complex(zr.contiguous() * 2)
    c = z.conj()
    rc = c.resolve_conj()
    power = (z * z.conj()).real
    big = torch.complex(torch.tensor([3e38, 1e-30, -4.0]), torch.tensor([4e38, 1e-30, 3.0]))
    ang = (torch.angle(z), torch.angle(torch.tensor([-1.0, 0.0, 2.0, -0.0])), z.angle(), z.abs(), big.abs(),
           torch.angle(torch.tensor([-1, 0, 3])))
    dphi = torch.angle(z[1:] * z[:-1].conj())
    wrapped = torch.remainder(phase[1:] - phase[:-1] + torch.pi, 2 * torch.pi) - torch.pi
    mixed = (z * 2, z * torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), z + 1j,
             z.to(torch.complex128) * torch.tensor(2.0, dtype=torch.float64), torch.tensor([1, 2]) * (1 + 2j),
             torch.tensor([1.0, 2.0], dtype=torch.float64) * 1j)
    item = z[1].item()
    items = (type(item).__name__, [item.real, item.imag], torch.tensor(z[:2].tolist()), _types(z[:2].tolist()),
             torch.tensor([1 + 2j, 3]).dtype, torch.tensor([1 + 2j], dtype=torch.complex128).dtype,
             torch.tensor(2j).item())
    parts = (z.real, z.imag, c.imag, rc.imag, c.is_conj(), rc.is_conj(), torch.is_complex(z), z.dtype, zr.dtype,
             zr.shape, torch.view_as_real(c.resolve_conj()), torch.sgn(z), z.real.dtype)
    return z, zr, z2, c, rc, power, ang, dphi, wrapped, mixed, items, parts


def case_int64_hashing_inference_bitlevel(lib):
    """Hashing tricks on int64 (``(a * 1000003) ^ b`` wrapping past 2**63, ``% (2**31 - 1)``, FNV-style multiply
    and xor folding), values near 2**53 where float64 stops being exact and near 2**63, ``torch.tensor`` dtype
    inference from mixed Python lists (ints and bools, ints and floats, big ints), ``.item()`` types for every
    dtype and ``.tolist()`` of each dtype; ``copysign``, ``nextafter``, ``frexp``, ``ldexp`` and ``isclose`` with
    ``equal_nan``."""
    torch = lib
    a = torch.tensor([1, 12345678901, -5, 2 ** 62, 2 ** 53 + 1, -(2 ** 63)])
    b = torch.tensor([7, 3, 2 ** 40, 99, -1, 1])
    h = (a * 1000003) ^ b
    h2 = h % (2 ** 31 - 1)
    fnv = torch.full((3,), 0xCBF29CE484222325 - 2 ** 64)
    for byte in (torch.tensor([104, 105, 33]), torch.tensor([0, 255, 7])):
        fnv = (fnv ^ byte) * 0x100000001B3
    fold = (fnv ^ (fnv >> 32)) & 0xFFFFFFFF
    near53 = torch.tensor([2 ** 53, 2 ** 53 + 1, 2 ** 53 + 2, -(2 ** 53) - 1])
    as_f64 = near53.double()
    f64_back = as_f64.long()
    near63 = torch.tensor([2 ** 63 - 1, -(2 ** 63), 2 ** 62])
    wrapped = (near63 + 1, near63 * 2, -near63, near63 // 3, near63 % 1000, near63 - 1,
               torch.iinfo(torch.int64).max - near63[2])
    ints = (torch.tensor([1, 2, True]), torch.tensor([1, 2.5]), torch.tensor([True, False]), torch.tensor([2 ** 40]),
            torch.tensor([[1, 2], [3, 4.0]]), torch.tensor(3), torch.tensor(3.0), torch.tensor([]),
            torch.tensor([[]]), torch.tensor([-(2 ** 63)]), torch.tensor([1, 2], dtype=torch.uint8) + 1,
            torch.tensor(True) + 1)
    inference = [(t.dtype, t.shape) for t in ints]
    big = (torch.tensor([2 ** 64, 1.5]), torch.tensor([2 ** 63], dtype=torch.float64),
           torch.tensor([[2 ** 63 - 1], [2 ** 63 + 2 ** 40]], dtype=torch.float32),
           torch.tensor([2 ** 70, 0], dtype=torch.bool), torch.tensor([2 ** 64, 1j]),
           torch.tensor(2 ** 66, dtype=torch.float16), _family(lambda: torch.tensor([2 ** 64])),
           _family(lambda: torch.tensor([10 ** 400], dtype=torch.float64)),
           _family(lambda: torch.tensor([2 ** 63], dtype=torch.int64)),
           _family(lambda: torch.tensor([torch.tensor([1, 2]), torch.tensor([3, 4])])),
           _family(lambda: torch.tensor([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])])),
           _family(lambda: torch.tensor([torch.tensor([1.0, 2.0])], dtype=torch.int32)),
           _family(lambda: torch.tensor([torch.tensor([True, False])])))
    items = []
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool, torch.float16,
               torch.bfloat16, torch.float32, torch.float64):
        t = torch.tensor([1, 0, 3], dtype=dt)
        v = t[0].item()
        items.append((type(v).__name__, v, t.tolist(), _types(t.tolist()), type(t.sum().item()).__name__))
    big_items = (torch.tensor(2 ** 62 + 1).item(), torch.tensor([2 ** 53 + 1]).tolist(),
                 torch.tensor(0.1, dtype=torch.float32).item(), torch.tensor(0.1, dtype=torch.float16).tolist(),
                 torch.tensor(1 / 3, dtype=torch.bfloat16).item(), builtins.int(torch.tensor(7.9)),
                 builtins.float(torch.tensor(3)), bool(torch.tensor(0.0)), torch.tensor([[1, 2], [3, 4]]).tolist(),
                 torch.tensor(5).tolist(), type(torch.tensor(5).tolist()).__name__)
    x = torch.tensor([1.0, -2.0, 0.0, -0.0, float("inf"), float("nan")])
    s = torch.tensor([-1.0, 1.0, -0.0, 1.0, -3.0, -1.0])
    cs = (torch.copysign(x, s), torch.copysign(x, -1), torch.copysign(torch.tensor([1, -2, 3]), -0.0),
          torch.copysign(torch.tensor([1, 2]), torch.tensor([-1, 1])))
    na = (torch.nextafter(torch.tensor([1.0, 0.0, -1.0, 1e-38]), torch.tensor([2.0, 1.0, -2.0, 0.0])),
          torch.nextafter(torch.tensor([1.0], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64)),
          torch.nextafter(torch.tensor(1.0), torch.tensor(2.0)) - 1)
    m, e = torch.frexp(torch.tensor([8.0, 0.3, -5.0, 0.0, 1e-40, 1024.0]))
    m64, e64 = torch.frexp(torch.tensor([3.0, -0.125], dtype=torch.float64))
    ld = (torch.ldexp(m, e), torch.ldexp(torch.tensor([1.0, 3.0]), torch.tensor([3, -2])),
          torch.ldexp(torch.tensor([1.5], dtype=torch.float64), torch.tensor([10])),
          torch.ldexp(torch.tensor([1, 2]), torch.tensor([1, 2])))
    p = torch.tensor([1.0, float("nan"), 1e-9, 100.0, float("inf"), float("-inf")])
    q = torch.tensor([1.0 + 1e-6, float("nan"), 0.0, 100.001, float("inf"), float("inf")])
    close = (torch.isclose(p, q), torch.isclose(p, q, equal_nan=True), torch.isclose(p, q, rtol=0, atol=1e-8),
             torch.isclose(torch.tensor([1, 2, 3]), torch.tensor([1, 3, 3])), torch.allclose(p[:1], q[:1]),
             torch.allclose(p[:2], q[:2], equal_nan=True), torch.isclose(p.double(), q.double(), rtol=1e-8))
    return (h, h2, fnv, fold, as_f64, f64_back, wrapped, inference, ints, big, items, big_items, cs, na, (m, e),
            (m64, e64), (e.dtype, e64.dtype), ld, close)


test_script_matches_torch = script_test(globals())
