"""Seeded random draws give PyTorch's numbers: torchish's generator is PyTorch's CPU mt19937.

Every case seeds both libraries, draws, then draws ``rand(3)`` and ``randn(1)`` (``oracle.same_draws``): equal
trailing draws show that the sampler used as many words of the stream as PyTorch's kernel. Nearly every sampler is
bit-exact, float32 normals included (PyTorch's vectorised log/sin/cos polynomials are reproduced:
``ops/_avx_mathfun.py``); the float64 samplers that go through XLA's transcendental functions are compared at a few
ulps. Without torch, the stream is checked against numpy's MT19937, which seeds the same way.
"""
from __future__ import annotations

import numpy as np
import pytest

import torchish
from oracle import needs_torch, same_draws, same_error, torch

EXACT = dict(rtol=0, atol=0)
ULPS = dict(rtol=1e-6, atol=1e-6)


CASES = {
    "rand": (lambda T: T.rand(3, 5), EXACT),
    "rand_1000_crosses_a_twist": (lambda T: T.rand(1000), EXACT),
    "rand_float64": (lambda T: T.rand(7, dtype=T.float64), EXACT),
    "rand_float16": (lambda T: T.rand(9, dtype=T.float16), EXACT),
    "rand_bfloat16": (lambda T: T.rand(9, dtype=T.bfloat16), EXACT),
    "rand_complex64": (lambda T: T.rand(4, dtype=T.complex64), EXACT),
    "uniform_bounds": (lambda T: T.empty(40).uniform_(-0.3, 0.7), EXACT),
    "uniform_float32_inexact_width": (lambda T: [T.empty(200).uniform_(-0.0924, 2.1098),  # (to - from rounds in float)
                                               T.empty(50).uniform_(0.6132, 1474.5)], EXACT),
    "uniform_float64_bounds": (lambda T: T.empty(6, dtype=T.float64).uniform_(-2, 3), ULPS),
    "uniform_to_is_excluded": (lambda T: T.empty(5).uniform_(1, float(np.nextafter(np.float32(1), 2))), EXACT),
    "randn_serial_with_cache": (lambda T: [T.randn(3), T.randn(5), T.randn(1)], EXACT),
    "randn_fill": (lambda T: T.randn(4, 10), EXACT),
    "randn_fill_tail": (lambda T: T.randn(37), EXACT),
    "randn_fill_large": (lambda T: T.randn(65536 - 3), EXACT),
    "randn_float16_fill_tail": (lambda T: T.randn(37, dtype=T.float16), EXACT),  # (whole blocks' uniforms only)
    "normal_bfloat16_fill_tail": (lambda T: T.empty(20, dtype=T.bfloat16).normal_(1.0, 2.0), EXACT),
    "normal_float16_mean_std_in_float": (lambda T: T.empty(64, dtype=T.float16).normal_(0.82, 33.04), EXACT),
    "randn_float64_fill": (lambda T: T.randn(40, dtype=T.float64), dict(rtol=1e-12, atol=1e-12)),
    "randn_complex64": (lambda T: T.randn(3, 4, dtype=T.complex64), EXACT),
    "normal_tensor_mean": (lambda T: T.normal(T.arange(20.0), 2.0), EXACT),
    "normal_tensor_std": (lambda T: T.normal(1.0, T.arange(1.0, 6.0)), EXACT),
    "normal_method_mean_std": (lambda T: T.empty(24).normal_(3.0, 0.5), EXACT),
    "randint": (lambda T: T.randint(-3, 10, (4, 5)), EXACT),
    "randint_int32": (lambda T: T.randint(0, 1000, (6,), dtype=T.int32), EXACT),
    "randint_wide_range": (lambda T: T.randint(0, 2 ** 40, (5,)), EXACT),
    "randint_2_28": (lambda T: T.randint(0, 2 ** 28, (5,)), EXACT),
    "randint_float32_beyond_exact_integers": (lambda T: T.randint(-7, 2 ** 28 - 7, (6,), dtype=T.float32), EXACT),
    "random_float16_ends_moved": (lambda T: T.empty(6, dtype=T.float16).random_(2049, 4099), EXACT),
    "randint_bfloat16_far_ends": (lambda T: T.randint(-263333026867516, -192025011781251, (6,), dtype=T.bfloat16),
                                  EXACT),
    "randint_float32_huge_ends": (lambda T: T.randint(2 ** 59, 2 ** 60 + 2 ** 36 + 2, (4,), dtype=T.float32), EXACT),
    "inplace_transposed_uniform": (lambda T: T.empty(3, 4).t().uniform_(), EXACT),
    "inplace_transposed_bernoulli": (lambda T: T.empty(3, 4).t().bernoulli_(0.3), EXACT),
    "inplace_transposed_normal_is_serial": (lambda T: T.empty(3, 8).t().normal_(), EXACT),
    "inplace_sliced_normal_is_serial": (lambda T: T.empty(4, 10)[:, :5].normal_(), EXACT),
    "inplace_transposed_random": (lambda T: T.empty(3, 4, dtype=T.int64).t().random_(0, 100), EXACT),
    "rand_like_transposed": (lambda T: T.rand_like(T.empty(2, 3, 4).transpose(0, 1)), EXACT),
    "randn_like_transposed": (lambda T: T.randn_like(T.empty(4, 6).t()), EXACT),
    "randint_like_transposed": (lambda T: T.randint_like(T.zeros(4, 5).t(), 9), EXACT),
    "randint_like_channels_last": (lambda T: T.randint_like(T.empty(1, 3, 2, 2).to(memory_format=T.channels_last), 5,
                                                            dtype=T.int64), EXACT),
    "bernoulli_tensor_p_into_transposed": (lambda T: T.empty(8, 5).t().bernoulli_(T.linspace(0, 1, 40).reshape(5, 8)),
                                           EXACT),
    "bernoulli_broadcast_p_into_transposed": (lambda T: T.empty(5, 4).t().bernoulli_(T.linspace(0.1, 0.9, 5)), EXACT),
    "multinomial_of_transposed_probs": (lambda T: [T.multinomial(T.arange(1.0, 13.0).reshape(3, 4).t(), k)
                                                   for k in (1, 2)], EXACT),
    "randn_like_channels_last": (lambda T: T.randn_like(T.empty(1, 3, 2, 4).to(memory_format=T.channels_last)),
                                 EXACT),
    "randperm": (lambda T: T.randperm(50), EXACT),
    "random_int64": (lambda T: T.empty(4, dtype=T.int64).random_(), EXACT),
    "random_float32": (lambda T: T.empty(4).random_(), EXACT),
    "random_to": (lambda T: T.empty(6, dtype=T.int32).random_(7), EXACT),
    "random_bool": (lambda T: T.empty(8, dtype=T.bool).random_(), EXACT),
    # (no bounds: one 32-bit word per element for all but int64/float64, though int32's range is >= 2**28)
    "random_int32_int16_float64": (lambda T: [T.empty(5, dtype=dt).random_() for dt in (T.int32, T.int16,
                                                                                          T.float64)], EXACT),
    "random_int32_from_to_none": (lambda T: T.empty(4, dtype=T.int32).random_(3, None), EXACT),
    "random_full_int64_range": (lambda T: [T.empty(2, 3, dtype=dt).t().random_(-2 ** 63, None) for dt in (
        T.int64, T.float64, T.float32, T.bfloat16)], EXACT),
    "bernoulli_p": (lambda T: T.empty(30).bernoulli_(0.3), EXACT),
    "bernoulli_probs_float32": (lambda T: T.bernoulli(T.linspace(0, 1, 25)), EXACT),
    "bernoulli_probs_float64": (lambda T: T.bernoulli(T.linspace(0, 1, 25, dtype=T.float64)), EXACT),
    "exponential": (lambda T: T.empty(20).exponential_(2.0), EXACT),
    "exponential_float64": (lambda T: T.empty(5, dtype=T.float64).exponential_(), dict(rtol=1e-15, atol=0)),
    "cauchy": (lambda T: T.empty(20).cauchy_(1.0, 2.0), EXACT),
    "log_normal": (lambda T: T.empty(7).log_normal_(0.5, 0.25), EXACT),
    "geometric": (lambda T: T.empty(20).geometric_(0.3), EXACT),
    "multinomial_no_replacement": (lambda T: T.multinomial(T.tensor([[1., 2., 3., 4.], [4., 1., 1., 2.]]), 3),
                                   EXACT),
    "multinomial_zero_weights_tie_order": (lambda T: T.multinomial(T.tensor([0., 3., 0., 0.], dtype=T.float64), 3),
                                           EXACT),
    "multinomial_one": (lambda T: T.multinomial(T.tensor([0.2, 0.5, 0.3]), 1, replacement=True), EXACT),
    "multinomial_replacement": (lambda T: T.multinomial(T.tensor([[1., 2., 3.], [3., 0., 1.]]), 6,
                                                        replacement=True), EXACT),
    "dropout": (lambda T: T.nn.functional.dropout(T.ones(8, 16), 0.25), EXACT),
    "dropout2d_module": (lambda T: T.nn.Dropout2d(0.5)(T.ones(4, 6, 2, 2)), EXACT),
    "generator_argument": (lambda T: T.rand(5, generator=T.Generator().manual_seed(11)), EXACT),
    "linear_init": (lambda T: [p for p in T.nn.Linear(7, 5).parameters()], EXACT),
    "conv_and_embedding_init": (lambda T: [T.nn.Conv2d(3, 4, 3).weight, T.nn.Embedding(6, 4).weight], EXACT),
    "trunc_normal": (lambda T: T.nn.init.trunc_normal_(T.empty(30), std=0.5), EXACT),
    "trunc_normal_far_interval": (lambda T: T.nn.init.trunc_normal_(T.empty(30), a=1.0, b=3.0), EXACT),
    "sparse": (lambda T: T.nn.init.sparse_(T.empty(6, 4), 0.5), EXACT),
    "orthogonal": (lambda T: T.nn.init.orthogonal_(T.empty(4, 6)), dict(rtol=1e-5, atol=1e-6)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 2024])
def test_seeded_draws_match_pytorch(name, seed):
    fn, tols = CASES[name]
    same_draws(fn, seed, **tols)


@needs_torch
def test_rng_state_moves_between_pytorch_and_torchish():
    torch.manual_seed(5)
    torch.randn(3)  # leaves a cached normal in the state
    state = torch.get_rng_state()
    torchish.set_rng_state(torchish.from_numpy(state.numpy()))
    np.testing.assert_array_equal(torchish.get_rng_state().numpy(), state.numpy())
    np.testing.assert_array_equal(torchish.randn(3).numpy(), torch.randn(3).numpy())
    torchish.manual_seed(9)
    torchish.rand(700)
    torch.set_rng_state(torch.from_numpy(torchish.get_rng_state().numpy()))
    np.testing.assert_array_equal(torchish.rand(5).numpy(), torch.rand(5).numpy())
    assert torchish.initial_seed() == 9


def test_stream_is_mt19937_without_torch():
    bits = np.random.MT19937(0)
    bits._legacy_seeding(1234)  # init_genrand, as PyTorch seeds
    words = bits.random_raw(900).astype(np.uint64)
    expect = ((words & 0xFFFFFF).astype(np.float32) * np.float32(2 ** -24))
    torchish.manual_seed(1234)
    np.testing.assert_array_equal(torchish.rand(900).numpy(), expect)
    torchish.manual_seed(1234 + 2 ** 32)  # PyTorch seeds mt19937 with the low 32 bits
    np.testing.assert_array_equal(torchish.rand(900).numpy(), expect)


def test_compiled_draws_continue_the_eager_stream():
    def step(x):
        return x * torchish.rand(40) + torchish.randn(5).sum() + torchish.nn.functional.dropout(x, 0.5)

    compiled = torchish.compile(step)
    x = torchish.ones(40)
    torchish.manual_seed(3)
    eager = [step(x).numpy() for _ in range(3)]
    torchish.manual_seed(3)
    got = [compiled(x).numpy() for _ in range(3)]
    np.testing.assert_array_equal(np.stack(got), np.stack(eager))
    after = torchish.rand(4).numpy()
    torchish.manual_seed(3)
    for _ in range(3):
        step(x)
    np.testing.assert_array_equal(torchish.rand(4).numpy(), after)


def test_state_errors_match_pytorch():
    with pytest.raises(RuntimeError, match="of size 5056"):
        torchish.set_rng_state(torchish.zeros(10, dtype=torchish.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        torchish.set_rng_state(torchish.zeros(5056))
    bad = torchish.get_rng_state().numpy().copy()
    bad[8:12] = np.array([0], np.int32).view(np.uint8)  # left = 0
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        torchish.set_rng_state(torchish.from_numpy(bad))


def test_float_range_beyond_exact_integers_warns_as_pytorch():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]\. Due to precision "
                      "limitations float can support"):
        torchish.randint(0, 2 ** 25, (2,), dtype=torchish.float32)
    with pytest.warns(UserWarning, match="from is out of bounds .* c10::Half"):
        torchish.empty(2, dtype=torchish.float16).random_(2049, 2100)


@needs_torch
@needs_torch
@pytest.mark.parametrize("dt", ["float16", "bool", "complex64", "int32", "uint8"])
def test_random_over_the_whole_int64_range_refuses_other_dtypes_as_pytorch(dt):
    """random_(-2**63, None): int64, float64, float32 and bfloat16 only (an empty tensor is returned unchecked)."""
    same_error(lambda T: T.zeros(2, dtype=getattr(T, dt)).random_(-2 ** 63, None))
    assert torchish.zeros(0, dtype=getattr(torchish, dt)).random_(-2 ** 63, None).shape == (0,)


@pytest.mark.parametrize("probs,k,replacement", [([1.0, -1.0], 2, True), ([1.0, float("nan")], 2, True),
                                                 ([[1.0, float("inf")]], 2, True), ([1.0, -1.0], 1, True),
                                                 ([1.0, -1.0], 2, False), ([0.0, 0.0], 2, True)])
def test_multinomial_errors_match_pytorch(probs, k, replacement):
    msgs = []
    for T in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            T.multinomial(T.tensor(probs), k, replacement)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@needs_torch
def test_generator_methods_match_pytorch():
    for lib in (torch, torchish):
        g = lib.Generator().manual_seed(4)
        lib.rand(3, generator=g)
        h = g.clone_state()
        assert h.initial_seed() == 4
        np.testing.assert_array_equal(lib.rand(5, generator=h).numpy(), lib.rand(5, generator=g).numpy())
    for call in (lambda lib: lib.Generator().get_offset(), lambda lib: lib.Generator().set_offset(1),
                 lambda lib: lib.Generator().graphsafe_get_state()):
        same_error(call)


@pytest.fixture
def accelerator_draws(monkeypatch):
    """Draw as on an accelerator (threefry keys taken from the stream), on this CPU."""
    from torchish.ops import draw as random_ops
    monkeypatch.setattr(random_ops, "_counter_based", lambda platform: True)


def test_accelerator_draws_take_two_words_each_and_compile_alike(accelerator_draws):
    F = torchish.nn.functional

    def step(x, probs):
        return [torchish.rand(3, 4), torchish.randn(5), torchish.randint(0, 7, (6,)), torchish.randperm(5),
                F.dropout(x, 0.5), torchish.multinomial(probs, 2), torchish.multinomial(probs, 3, True),
                torchish._standard_gamma(probs), x.clone().uniform_(-1, 1)]

    x, probs = torchish.ones(8), torchish.tensor([0.1, 0.2, 0.3, 0.4])
    torchish.manual_seed(0)
    eager = [[t.numpy() for t in step(x, probs)] for _ in range(2)]
    torchish.manual_seed(0)
    compiled = torchish.compile(step)
    got = [[t.numpy() for t in compiled(x, probs)] for _ in range(2)]
    for e, g in zip(eager, got):
        for a, b in zip(e, g):
            np.testing.assert_array_equal(b, a)
    assert sorted(eager[0][3].tolist()) == list(range(5)) and eager[0][1].dtype == np.float32
    assert not np.array_equal(eager[0][0], eager[1][0])  # the stream moved on
    bits = np.random.MT19937(0)
    bits._legacy_seeding(0)
    bits.random_raw(2 * 2 * 9)  # two steps of nine draws, two words each
    expect = (bits.random_raw(3) & 0xFFFFFF).astype(np.float32) * np.float32(2 ** -24)
    from torchish.ops import draw as random_ops
    with pytest.MonkeyPatch.context() as m:
        m.setattr(random_ops, "_counter_based", lambda platform: False)
        np.testing.assert_array_equal(torchish.rand(3).numpy(), expect)


@needs_torch
def test_poisson_nan_rate_is_refused_as_pytorch():
    same_error(lambda lib: lib.poisson(lib.tensor([1.0, float("nan")])))


def test_default_generator_starts_from_a_random_seed_and_new_ones_from_the_fixed_one():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import torchish; print(torchish.initial_seed())"],
                         capture_output=True, text=True, check=True).stdout
    assert int(out) != 67280421310721  # (the fixed seed tests/conftest.py starts the suite from)
    assert torchish.Generator().initial_seed() == 67280421310721
    state = torchish.get_rng_state()
    try:
        s = torchish.seed()
        assert 0 <= s < 2 ** 64 and torchish.initial_seed() == s and torchish.seed() != s
    finally:  # (later tests in this worker keep the suite's fixed stream)
        torchish.set_rng_state(state)


def _vmapped(fn, randomness="different", **kw):
    return lambda T: T.func.vmap(fn(T), randomness=randomness, **kw)


VMAP_CASES = {  # PyTorch's batching rule: a draw of shape S takes a (B, *S) block of the stream, a row per element
    "factory": (_vmapped(lambda T: lambda x: x + T.rand(4) + 10 * T.randn(4)), (3, 4)),
    "like_and_inplace": (_vmapped(lambda T: lambda x: T.randn_like(x) + x.clone().uniform_(-1, 1)), (3, 20)),
    "dropout_module": (_vmapped(lambda T: T.nn.Dropout(0.3)), (3, 5)),
    "bernoulli_tensor_p": (_vmapped(lambda T: lambda x: T.bernoulli(x * 0 + 0.4)), (3, 4)),
    "randint_randperm": (_vmapped(lambda T: lambda x: x + T.randint(0, 5, (4,)) + 10 * T.randperm(4)), (3, 4)),
    "multinomial": (_vmapped(lambda T: lambda x: [T.multinomial(x + 1, 2), T.multinomial(x + 1, 1)]), (3, 4)),
    "nested": (_vmapped(lambda T: T.func.vmap(lambda x: x + T.rand(2), randomness="different")), (3, 4, 2)),
    "chunks": (_vmapped(lambda T: lambda x: x + T.rand(4), chunk_size=2), (3, 4)),
    "same": (_vmapped(lambda T: lambda x: x + T.rand(4), randomness="same"), (3, 4)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_randomness_draws_pytorch_blocks(name):
    fn, shape = VMAP_CASES[name]
    same_draws(lambda T: fn(T)(T.zeros(shape)), 0, **EXACT)


@needs_torch
def test_vmap_randomness_different_compiled_and_rejection_samplers():
    vm = torchish.func.vmap(lambda x: x + torchish.rand(4), randomness="different")
    step = torchish.compile(vm)
    torchish.manual_seed(1)
    got = [step(torchish.zeros(3, 4)).numpy() for _ in range(3)]  # (recorded, then traced, then the program)
    torch.manual_seed(1)
    for g in got:
        np.testing.assert_array_equal(g, torch.rand(3, 4).numpy())
    # poisson/gamma/binomial draw from threefry keys split off the stream (their rejection loops use data-dependent
    # numbers of words): per-element samples, of the right shape and support, not PyTorch's numbers
    out = torchish.func.vmap(lambda r: torchish.poisson(r), randomness="different")(torchish.full((4, 3), 5.0))
    assert out.shape == (4, 3) and bool((out >= 0).all()) and len({tuple(row) for row in out.tolist()}) > 1


@needs_torch
def test_vmap_same_randomness_refuses_batched_normal_parameters():
    for fn in (lambda T: lambda v: T.normal(v, 1.0), lambda T: lambda v: T.normal(0.0, v)):
        same_error(lambda T: T.func.vmap(fn(T), randomness="same")(T.ones(3, 4)))


@needs_torch
def test_normal_with_tensor_mean_or_std_has_pytorchs_zero_gradients():
    """torch.normal(mean, std) with Tensor arguments is no reparameterised sample: PyTorch's formula gives mean and
    std zero gradients (NormalBackward1/2/3), and the result has the first tensor's dtype (float32 mean, float64
    std: float32). torchish differentiated ``mean + std * z``."""
    def run(T):
        T.manual_seed(3)
        m = T.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
        s = T.tensor(np.linspace(0.5, 2, 3), requires_grad=True)  # float64
        outs = [T.normal(m, 0.5), T.normal(2.0, s), T.normal(m, s), T.normal(m[:, :1], s.float())]
        loss = sum((o.double() ** 2).sum() for o in outs)
        loss.backward()
        names = [o.grad_fn.name() for o in outs]
        return outs, names, [str(o.dtype) for o in outs], m.grad, s.grad
    ref, got = run(torch), run(torchish)
    assert got[1:3] == ref[1:3]
    for r, g in zip(ref[0] + list(ref[3:]), got[0] + list(got[3:])):
        assert str(g.dtype) == str(r.dtype) and tuple(g.shape) == tuple(r.shape)
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-6, atol=1e-6)
