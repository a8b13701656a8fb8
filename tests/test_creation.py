"""Creation functions and random sampling against PyTorch.

Creation: dtype inference, shapes, values and errors are compared case by case. Random streams are not PyTorch's,
so samplers are checked for reproducibility (seeds, generators, saved states), shapes, dtypes, ranges, argument
errors, and loose statistics on large samples.
"""
import math

import numpy as np
import pytest

from oracle import run_both, torch, torchish

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")


def describe(lib, fn):
    """dtype, shape and values of ``fn(lib)``, or its builtin exception type and message."""
    try:
        x = fn(lib)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        t = type(e)
        while t.__module__ != "builtins":
            t = t.__mro__[1]
        return t.__name__, str(e).split("\n")[0]
    if isinstance(x, lib.Tensor):
        if x.dtype == lib.bfloat16:
            x = x.float()
        return str(x.dtype).replace("torch.", ""), tuple(x.shape), x.detach().tolist(), x.requires_grad
    return repr(x)


def compare(fn, values=True):
    ref, got = describe(torch, fn), describe(torchish, fn)
    if not values and len(ref) == 4:
        ref, got = ref[:2] + ref[3:], got[:2] + got[3:]
    if len(ref) == 4 and len(got) == 4 and ref[:2] == got[:2]:  # float values: compare numerically
        np.testing.assert_allclose(np.asarray(got[2], dtype=complex), np.asarray(ref[2], dtype=complex), rtol=1e-6,
                                   atol=1e-12)
        assert ref[3] == got[3]
        return
    assert got == ref


TENSOR_CASES = [
    lambda T: T.tensor([]), lambda T: T.tensor([[]]), lambda T: T.tensor([[], []]), lambda T: T.tensor([True, 1]),
    lambda T: T.tensor([1, 2.0]), lambda T: T.tensor([1, 1j]), lambda T: T.tensor(np.ones(2)),
    lambda T: T.tensor(np.ones(2, np.int32)), lambda T: T.tensor(np.float64(1.5)),
    lambda T: T.tensor([np.float64(1.5), 2.0]), lambda T: T.tensor([np.int32(1)]),
    lambda T: T.tensor([np.float32(1), 2]), lambda T: T.tensor([np.ones(2), np.ones(2)]),
    lambda T: T.tensor([np.float16(1), 2.0]), lambda T: T.tensor([np.int32(1), 5]),
    lambda T: T.tensor([np.ones(2, np.int8), np.ones(2, np.int16)]),
    lambda T: T.tensor([[1, 2], np.ones(2, np.float32)]), lambda T: T.tensor([[1, 2], [3]]),
    lambda T: T.tensor([[1, 2], 3]), lambda T: T.tensor([1, [2, 3]]), lambda T: T.tensor(["a"]),
    lambda T: T.tensor("a"), lambda T: T.tensor(None), lambda T: T.tensor(object()), lambda T: T.tensor([1, None]),
    lambda T: T.tensor([1.0, "a"]), lambda T: T.tensor([1, 2], requires_grad=True),
    lambda T: T.tensor([True], requires_grad=True), lambda T: T.tensor([1.0, 2.0], requires_grad=True),
    lambda T: T.tensor([T.tensor(1.0), T.tensor(2.0)]), lambda T: T.tensor([T.ones(2), T.ones(2)]),
    lambda T: T.tensor([T.tensor(1), 1.5]), lambda T: T.tensor([T.tensor(1.0, dtype=T.float64), 1]),
    lambda T: T.tensor([T.tensor([1.0])]), lambda T: T.tensor([[T.tensor(1), T.tensor(2)]]),
    lambda T: T.tensor([2 ** 63]), lambda T: T.tensor((1, 2)), lambda T: T.tensor(range(3)),
    lambda T: T.tensor([1.7, -1.7], dtype=T.int64), lambda T: T.tensor([0, 2], dtype=T.bool),
    lambda T: T.tensor([-1.5, 300.0], dtype=T.uint8), lambda T: T.tensor([1 + 1j], dtype=T.float32),
    lambda T: T.tensor([2 ** 40], dtype=T.int32), lambda T: T.tensor(np.array([True])),
    lambda T: T.tensor(np.array([1], np.float16)), lambda T: T.tensor(np.array([1, "a"], dtype=object)),
    lambda T: T.tensor(np.array([1], np.uint16)), lambda T: T.tensor([np.uint16(1), 2]),
    lambda T: T.tensor(T.Size([2, 3])), lambda T: T.tensor(3), lambda T: T.tensor(True), lambda T: T.tensor(1e40),
    lambda T: T.tensor(2.5, dtype=T.float16), lambda T: T.tensor([[[1]]]), lambda T: T.tensor([0.1, 0.2],
                                                                                              dtype=T.bfloat16),
    lambda T: T.tensor([1, 2], dtype=T.complex64), lambda T: T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64),
    lambda T: T.tensor(np.float32(2)), lambda T: T.tensor(np.arange(6).reshape(2, 3)),
    lambda T: T.as_tensor([1, 2]), lambda T: T.as_tensor(np.ones(2, np.float64)),
    lambda T: T.as_tensor([1, 2], dtype=T.float32), lambda T: T.asarray([1.5, 2]),
    lambda T: T.from_numpy(np.ones(2, np.float16)), lambda T: T.from_numpy(np.arange(3, dtype=np.int16)),
    lambda T: T.from_numpy([1]), lambda T: T.from_numpy(np.array([1, "a"], dtype=object)),
    # numpy's bool (a gym env's ``done``) in a list: a number for float/complex/bool types, refused by integer types
    lambda T: T.tensor([0.5, np.True_]), lambda T: T.tensor([np.True_, 2], dtype=T.float16),
    lambda T: T.tensor([np.False_, 1j]), lambda T: T.tensor([1, np.True_]),
    lambda T: T.tensor([np.True_], dtype=T.uint8), lambda T: T.tensor([np.True_], dtype=T.uint64),
    lambda T: T.tensor([0.5, 1j], dtype=T.int64), lambda T: T.tensor([np.complex64(1)], dtype=T.int8),
    # 0-d arrays in a list: PyTorch asks the first element its len(), later ones are scalars of their own dtype
    lambda T: T.tensor([np.array(1.5)]), lambda T: T.tensor([1.0, np.array(2.5)]),
    lambda T: T.tensor([[1], [np.array(2, np.int32)]]),
    # Python ints beyond int64 are unpacked as doubles for floating, complex and bool dtypes (only integer dtypes
    # overflow), and a tensor element of other than one element fails by the dtype it is stored as
    lambda T: T.tensor([2 ** 64, 1.5]), lambda T: T.tensor([2 ** 63], dtype=T.float64),
    lambda T: T.tensor([[2 ** 128 - 2 ** 104], [2 ** 128 - 2 ** 103]], dtype=T.float32),
    lambda T: T.tensor([2 ** 63], dtype=T.float16), lambda T: T.tensor([2 ** 64, 1j]),
    lambda T: T.tensor([-2 ** 63 - 1, 0], dtype=T.bool), lambda T: T.tensor([10 ** 400], dtype=T.float64),
    lambda T: T.tensor([2 ** 63, 2.5], dtype=T.int64), lambda T: T.tensor([T.tensor([1, 2]), T.tensor([3, 4])]),
    lambda T: T.tensor([T.tensor([1.0, 2.0])], dtype=T.int32), lambda T: T.tensor([T.tensor([True, False])]),
    lambda T: T.tensor([T.tensor([1, 2])], dtype=T.complex64), lambda T: T.tensor([1.5, T.tensor([1, 2])]),
]


@pytest.mark.parametrize("i", range(len(TENSOR_CASES)))
def test_tensor_construction(i):
    compare(TENSOR_CASES[i])


def test_tensor_copies_and_aliases():
    def probe(T):
        src = T.tensor([1.0, 2.0])
        t = T.as_tensor(src)
        n = np.array([1.0, 2.0])
        c = T.tensor(n)
        n[0] = 5.0
        return [t is src, T.as_tensor(src, dtype=T.float64).dtype, c.tolist(), T.Tensor(src) is src]
    ref, got = run_both(probe)
    assert [str(x) for x in got] == [str(x) for x in ref]


FILL_CASES = [
    lambda T: T.zeros(T.Size([2, 3])), lambda T: T.zeros([2, 3]), lambda T: T.zeros(2, 3), lambda T: T.zeros(()),
    lambda T: T.zeros(2, -1), lambda T: T.zeros(2.5), lambda T: T.zeros(), lambda T: T.zeros((2, 3), 4),
    lambda T: T.zeros(np.int64(2)), lambda T: T.zeros(T.tensor(2)), lambda T: T.zeros(size=(2,)),
    lambda T: T.ones(size=[1, 2]), lambda T: T.ones(-1), lambda T: T.empty(-1), lambda T: T.full((-1,), 1.0),
    lambda T: T.ones(2, dtype=T.int64, requires_grad=True), lambda T: T.ones(2, 3, dtype=T.float64, requires_grad=True),
    lambda T: T.empty(2, 3, dtype=T.int16).shape, lambda T: T.zeros(2, dtype=T.complex64),
    lambda T: T.ones(3, dtype=T.bool), lambda T: T.ones(2, dtype=T.bfloat16),
    lambda T: T.full((2,), 3), lambda T: T.full((2,), True), lambda T: T.full((2,), 3.0), lambda T: T.full((2,), 1j),
    lambda T: T.full(2, 1.0), lambda T: T.full([2, 1], 1.0), lambda T: T.full((2,), T.tensor(3)),
    lambda T: T.full(size=(2,), fill_value=2), lambda T: T.full((2,), 2.5, dtype=T.int32),
    lambda T: T.full((2,), np.float64(2.5)), lambda T: T.full((2,), False), lambda T: T.full((2,), -1, dtype=T.uint8),
    lambda T: T.full_like(T.ones(2, dtype=T.int32), 2.7), lambda T: T.full_like(T.ones(2), True),
    lambda T: T.zeros_like(T.ones(2, dtype=T.int32)), lambda T: T.empty_like(T.ones(2, 3, dtype=T.float64)).shape,
    lambda T: T.ones_like(T.ones(2), dtype=T.int8), lambda T: T.ones_like(T.ones(2, 2), requires_grad=True),
    lambda T: T.zeros_like(T.ones(2), dtype=T.int64, requires_grad=True),
    lambda T: T.scalar_tensor(3), lambda T: T.scalar_tensor(True),
    lambda T: T.eye(3), lambda T: T.eye(2, 3), lambda T: T.eye(2, dtype=T.int32), lambda T: T.eye(-1),
    lambda T: T.eye(2, -1), lambda T: T.eye(2, dtype=T.bool), lambda T: T.eye(2, requires_grad=True),
]


@pytest.mark.parametrize("i", range(len(FILL_CASES)))
def test_filled_tensors(i):
    compare(FILL_CASES[i])


RANGE_CASES = [
    lambda T: T.arange(5), lambda T: T.arange(5.0), lambda T: T.arange(0, 1, 0.1), lambda T: T.arange(1, 2.5, 0.5),
    lambda T: T.arange(0, -3, -1), lambda T: T.arange(0, 3, -1), lambda T: T.arange(0, 3, 0),
    lambda T: T.arange(0, 10, 3, dtype=T.float32), lambda T: T.arange(0.5, 4, dtype=T.int64),
    lambda T: T.arange(-1.5, 2.2, 0.7, dtype=T.int32), lambda T: T.arange(-1.5, 2.2, 0.7, dtype=T.int64),
    lambda T: T.arange(0.5, 3.7, 1.5, dtype=T.int64), lambda T: T.arange(0, 5, 1.5, dtype=T.int32),
    lambda T: T.arange(0, 5, 1.5, dtype=T.int64), lambda T: T.arange(3, 3), lambda T: T.arange(T.tensor(5)),
    lambda T: T.arange(T.tensor(5.0)), lambda T: T.arange(np.float64(2.5)), lambda T: T.arange(True),
    lambda T: T.arange(0, 1, 0.25, dtype=T.float16), lambda T: T.arange(0, 0.05, 0.01),
    lambda T: T.arange(-5, 5, 1.3), lambda T: T.arange(1, 2, 0.1, dtype=T.float64), lambda T: T.arange(10, 0, -3.5),
    lambda T: T.arange(3.0, requires_grad=True), lambda T: T.arange(0, float("inf")),
    lambda T: T.arange(0, float("nan")), lambda T: T.arange(start=1, end=4),
    lambda T: T.linspace(0, 1, 5), lambda T: T.linspace(0, 10, 4, dtype=T.int64), lambda T: T.linspace(0, 1, 1),
    lambda T: T.linspace(0, 1, 0), lambda T: T.linspace(0, 1, -1), lambda T: T.linspace(-1, 1, 7, dtype=T.float64),
    lambda T: T.linspace(0, 1 + 1j, 3), lambda T: T.linspace(T.tensor(0.0), T.tensor(1.0), 3),
    lambda T: T.linspace(-10, 10, 6, dtype=T.int32), lambda T: T.linspace(0.5, 10.7, 4, dtype=T.int64),
    lambda T: T.linspace(1, 0, 3), lambda T: T.linspace(-3, 7, 11), lambda T: T.linspace(0, 1, 3, requires_grad=True),
    lambda T: T.logspace(0, 2, 3), lambda T: T.logspace(0, 3, 4, base=2), lambda T: T.logspace(0, 2, 3,
                                                                                             dtype=T.int64),
    lambda T: T.logspace(-1, 1, 3, dtype=T.float64), lambda T: T.logspace(0, 2, 3, base=-2),
    lambda T: T.logspace(0, 1j, 2),
    lambda T: T.linspace(0, 1, np.int64(3)), lambda T: T.logspace(0, 1, steps=np.uint8(2)),
]


@pytest.mark.parametrize("i", range(len(RANGE_CASES)))
def test_ranges(i):
    compare(RANGE_CASES[i])


def test_linspace_steps_must_be_int():
    with pytest.raises(TypeError):
        torch.linspace(0, 1, 2.0)
    with pytest.raises(TypeError):
        torchish.linspace(0, 1, 2.0)


LEGACY_CASES = [
    lambda T: T.Tensor(2, 3).shape, lambda T: T.Tensor([1, 2]), lambda T: T.Tensor(), lambda T: T.Tensor((2, 3)),
    lambda T: T.Tensor(T.Size([2])).shape, lambda T: T.Tensor([[1, 2]]), lambda T: T.Tensor(np.ones(2, np.int64)),
    lambda T: T.Tensor(T.ones(2, dtype=T.int64)), lambda T: T.Tensor(2.5),
    lambda T: T.ones(2, dtype=T.int32).new_zeros(3), lambda T: T.ones(2, dtype=T.int32).new_zeros((3, 2)),
    lambda T: T.ones(2, dtype=T.float64).new_ones(2, 2), lambda T: T.ones(2, dtype=T.int32).new_full((2,), 3.7),
    lambda T: T.ones(2, dtype=T.int32).new_tensor([1.5, 2.5]), lambda T: T.ones(2, dtype=T.int32).new_empty(3).shape,
    lambda T: T.ones(2, dtype=T.float64).new_tensor(np.array([1, 2], np.int32)),
    lambda T: T.ones(2).new_zeros(2, dtype=T.int8), lambda T: T.ones(2).new_ones((1,), requires_grad=True),
    lambda T: T.ones(2, dtype=T.float64).new_tensor([1, 2], requires_grad=True),
]


@pytest.mark.parametrize("i", range(len(LEGACY_CASES)))
def test_legacy_constructor_and_new_methods(i):
    compare(LEGACY_CASES[i])


def test_creation_default_float64():
    def probe(T):
        T.set_default_dtype(T.float64)
        try:
            return [describe(T, f) for f in (lambda T: T.tensor([1, 2.5]), lambda T: T.arange(0, 1, 0.25),
                                             lambda T: T.linspace(0, 1, 3), lambda T: T.zeros(2), lambda T: T.eye(2),
                                             lambda T: T.full((2,), 0.1), lambda T: T.Tensor([1, 2]),
                                             lambda T: T.tensor([1j]))]
        finally:
            T.set_default_dtype(T.float32)
    ref, got = run_both(probe)
    assert got == ref


# ----------------------------------------------------------------------------------------------------------------
# random


def test_manual_seed_reproducibility():
    def draws():
        return [x.tolist() for x in (torchish.rand(3), torchish.randn(2, 2), torchish.randint(0, 10, (4,)),
                                     torchish.randperm(5), torchish.normal(0.0, 1.0, (3,)),
                                     torchish.bernoulli(torchish.full((4,), 0.5)),
                                     torchish.multinomial(torchish.tensor([0.2, 0.3, 0.5]), 2),
                                     torchish.ones(3).normal_(), torchish.ones(3).uniform_(-1, 1))]
    torchish.manual_seed(123)
    a = draws()
    torchish.manual_seed(123)
    b = draws()
    assert a == b
    torchish.manual_seed(124)
    assert draws() != a
    assert torchish.initial_seed() == 124


def test_generators_and_state():
    g1 = torchish.Generator().manual_seed(7)
    g2 = torchish.Generator().manual_seed(7)
    assert torchish.rand(3, generator=g1).tolist() == torchish.rand(3, generator=g2).tolist()
    assert g1.initial_seed() == 7 and isinstance(g1.manual_seed(7), torchish.Generator)
    torchish.manual_seed(0)
    before = torchish.rand(2).tolist()
    torchish.manual_seed(0)
    torchish.rand(2, generator=g1)  # another generator does not move the default stream
    assert torchish.rand(2).tolist() == before
    state = torchish.get_rng_state()
    assert state.dtype == torchish.uint8 and state.ndim == 1
    x = torchish.randn(4).tolist()
    torchish.set_rng_state(state)
    assert torchish.randn(4).tolist() == x
    gs = g1.get_state()
    y = torchish.rand(2, generator=g1).tolist()
    g1.set_state(gs)
    assert torchish.rand(2, generator=g1).tolist() == y
    with torchish.random.fork_rng():
        inside = torchish.rand(3).tolist()
    assert torchish.rand(3).tolist() == inside
    ref, got = run_both(lambda T: [T.manual_seed(-1).initial_seed(), T.Generator().manual_seed(-5).initial_seed()])
    assert got == ref


@pytest.mark.parametrize("fn", [
    lambda T: T.set_rng_state(T.ones(3)), lambda T: T.set_rng_state([1, 2]), lambda T: T.manual_seed(2 ** 64),
    lambda T: T.manual_seed("a"), lambda T: T.rand(2, generator=1),
])
def test_rng_state_errors(fn):
    ref, got = describe(torch, fn), describe(torchish, fn)
    assert len(ref) == 2 and got[0] == ref[0], f"{got} vs torch's {ref}"


SAMPLER_CASES = [
    lambda T: T.rand(2, 3), lambda T: T.rand((2, 3), dtype=T.float64), lambda T: T.rand(2, dtype=T.float16),
    lambda T: T.rand(2, dtype=T.bfloat16), lambda T: T.rand(2, dtype=T.complex64), lambda T: T.rand(()),
    lambda T: T.rand(2, requires_grad=True), lambda T: T.randn(2, dtype=T.float64), lambda T: T.randn(3, 1),
    lambda T: T.randn(2, dtype=T.complex128), lambda T: T.randint(5, (3,)), lambda T: T.randint(2, 5, (3, 2)),
    lambda T: T.randint(5, (3,), dtype=T.int32), lambda T: T.randint(5, (3,), dtype=T.float32),
    lambda T: T.randint(-3, -1, (2,)), lambda T: T.randint(5, size=(2,)),
    lambda T: T.randint(low=1, high=5, size=(2,)), lambda T: T.randint(3, (2,), dtype=T.float32, requires_grad=True),
    lambda T: T.randperm(5), lambda T: T.randperm(5, dtype=T.float32), lambda T: T.randperm(0),
    lambda T: T.randperm(4, dtype=T.int8), lambda T: T.normal(0.0, 1.0, (2, 3)), lambda T: T.normal(0.0, 1.0, size=(2,)),
    lambda T: T.normal(T.zeros(3), 1.0), lambda T: T.normal(0.0, T.ones(3)), lambda T: T.normal(T.zeros(3), T.ones(3)),
    lambda T: T.normal(T.zeros(3, dtype=T.float64), 1.0), lambda T: T.normal(T.zeros(2, 3), T.ones(3)),
    lambda T: T.bernoulli(T.full((3,), 0.5)), lambda T: T.bernoulli(T.full((3,), 0.5, dtype=T.float64)),
    lambda T: T.bernoulli(T.ones(3), 0.3), lambda T: T.bernoulli(T.full((3,), 0.5), p=0.5),
    lambda T: T.multinomial(T.tensor([0.2, 0.8]), 3, replacement=True), lambda T: T.multinomial(T.tensor([0.2, 0.8]), 2),
    lambda T: T.multinomial(T.tensor([[0.2, 0.8], [1.0, 0.0]]), 2),
    lambda T: T.multinomial(T.tensor([0.2, 0.8], dtype=T.float64), 1),
    lambda T: T.multinomial(T.tensor([[0.2, 0.8], [1.0, 0.0]]), 5, True),
    lambda T: T.poisson(T.ones(3)), lambda T: T.poisson(T.ones(3, dtype=T.float64)),
    lambda T: T.rand_like(T.ones(2, dtype=T.float64)), lambda T: T.randn_like(T.ones(2, 3)),
    lambda T: T.randint_like(T.ones(2), 5), lambda T: T.randint_like(T.ones(2), 2, 5),
    lambda T: T.randint_like(T.ones(2, dtype=T.int32), 5), lambda T: T.ones(3).uniform_(2, 3),
    lambda T: T.ones(3).bernoulli_(0.5), lambda T: T.ones(3, dtype=T.int64).bernoulli_(0.5),
    lambda T: T.ones(3, dtype=T.bool).bernoulli_(0.5), lambda T: T.ones(3).bernoulli_(T.full((3,), 0.5)),
    lambda T: T.ones(3).exponential_(2.0), lambda T: T.ones(3).random_(5), lambda T: T.ones(3, dtype=T.int32).random_(2, 5),
    lambda T: T.ones(3, dtype=T.bool).random_(), lambda T: T.ones(3).geometric_(0.5),
    lambda T: T.ones(3, dtype=T.int64).geometric_(0.5), lambda T: T.ones(3).log_normal_(), lambda T: T.ones(3).cauchy_(),
    lambda T: T.ones(3, dtype=T.float64).normal_(2.0, 0.5),
]


@pytest.mark.parametrize("i", range(len(SAMPLER_CASES)))
def test_sampler_shapes_and_dtypes(i):
    compare(SAMPLER_CASES[i], values=False)


SAMPLER_ERRORS = [
    lambda T: T.rand(2, dtype=T.int32), lambda T: T.rand(), lambda T: T.randn(3, dtype=T.int64),
    lambda T: T.rand(-1), lambda T: T.randint(5, 2, (3,)), lambda T: T.randint(5, 3), lambda T: T.randint(0, (3,)),
    lambda T: T.randint(3, (3,), dtype=T.bool), lambda T: T.randint(3.5, (2,)), lambda T: T.randint(2 ** 63, (2,)),
    lambda T: T.randint(3, (2,), requires_grad=True), lambda T: T.randperm(-1), lambda T: T.randperm(3, dtype=T.bool),
    lambda T: T.randperm(129, dtype=T.int8), lambda T: T.randperm(3, requires_grad=True),
    lambda T: T.normal(0.0, -1.0, (2,)), lambda T: T.normal(T.zeros(3), -1.0),
    lambda T: T.normal(T.zeros(3), T.ones(3) * -1), lambda T: T.normal(T.zeros(3), T.ones(2)),
    lambda T: T.normal(0.0, 1.0), lambda T: T.normal(T.zeros(3, dtype=T.int64), 1.0),
    lambda T: T.bernoulli(T.full((3,), 1.5)), lambda T: T.bernoulli(T.ones(3, dtype=T.int64)),
    lambda T: T.bernoulli(T.full((3,), 0.5), 1.5), lambda T: T.multinomial(T.tensor([0.2, 0.8]), 3),
    lambda T: T.multinomial(T.tensor([0.0, 0.0]), 1), lambda T: T.multinomial(T.tensor([-1.0, 2.0]), 1),
    lambda T: T.multinomial(T.ones(2, 2, 2), 1), lambda T: T.multinomial(T.tensor([1, 2]), 1),
    lambda T: T.multinomial(T.tensor([1.0, float("inf")]), 1), lambda T: T.multinomial(T.tensor([0.2, 0.8]), 0),
    lambda T: T.multinomial(T.tensor([[0.2, 0.8], [0.0, 0.0]]), 1), lambda T: T.multinomial(T.tensor(0.5), 1),
    lambda T: T.poisson(-T.ones(3)), lambda T: T.poisson(T.ones(3, dtype=T.int64)),
    lambda T: T.rand_like(T.ones(2, dtype=T.int64)), lambda T: T.ones(3).uniform_(3, 2),
    lambda T: T.ones(3, dtype=T.int64).uniform_(), lambda T: T.ones(3).normal_(0, -1),
    lambda T: T.ones(3, dtype=T.int64).normal_(), lambda T: T.ones(3).bernoulli_(1.5),
    lambda T: T.ones(3).bernoulli_(-0.1), lambda T: T.ones(3).bernoulli_(T.full((3,), 1.5)),
    lambda T: T.ones(3).exponential_(-1.0), lambda T: T.ones(3).exponential_(0.0),
    lambda T: T.ones(3, dtype=T.int64).exponential_(), lambda T: T.ones(3).random_(5, 2), lambda T: T.ones(3).random_(0),
    lambda T: T.ones(3, dtype=T.uint8).random_(300), lambda T: T.ones(3, dtype=T.uint8).random_(-1, 3),
    lambda T: T.ones(3, dtype=T.int32).random_(2 ** 40), lambda T: T.ones(3, dtype=T.int64).random_(2 ** 63),
    lambda T: T.ones(3).geometric_(1.5), lambda T: T.ones(3).geometric_(0.0), lambda T: T.ones(3).log_normal_(0.0, -1.0),
    lambda T: T.ones(3).cauchy_(0.0, -1.0), lambda T: T.ones(3, dtype=T.int64).cauchy_(),
    lambda T: T.ones(3, dtype=T.int64).log_normal_(), lambda T: T.ones(3, requires_grad=True).normal_(),
]


@pytest.mark.parametrize("i", range(len(SAMPLER_ERRORS)))
def test_sampler_errors(i):
    ref, got = describe(torch, SAMPLER_ERRORS[i]), describe(torchish, SAMPLER_ERRORS[i])
    assert len(ref) == 2, f"torch did not raise: {ref}"
    assert got[0] == ref[0], f"{got} vs torch's {ref}"
    if ref[0] != "TypeError":  # argument-parser messages list every overload; only their type is compared
        assert got[1] == ref[1]


N = 20000


def _moments(x):
    a = np.asarray(x.tolist(), dtype=np.float64).reshape(-1)
    return a.mean(), a.std(), a.min(), a.max()


def test_sampler_statistics():
    torchish.manual_seed(0)
    tol = 5 / math.sqrt(N)  # about five standard errors
    m, s, lo, hi = _moments(torchish.rand(N))
    assert abs(m - 0.5) < tol and abs(s - math.sqrt(1 / 12)) < tol and 0 <= lo and hi < 1
    m, s, _, _ = _moments(torchish.randn(N))
    assert abs(m) < tol and abs(s - 1) < 2 * tol
    m, s, _, _ = _moments(torchish.normal(3.0, 2.0, (N,)))
    assert abs(m - 3) < 2 * tol * 2 and abs(s - 2) < 4 * tol
    m, s, _, _ = _moments(torchish.normal(torchish.full((N,), -1.0), torchish.full((N,), 0.5)))
    assert abs(m + 1) < tol and abs(s - 0.5) < tol
    m, s, lo, hi = _moments(torchish.randint(-3, 4, (N,)))
    assert abs(m) < 2 * tol * 3 and lo == -3 and hi == 3 and abs(s - 2) < 0.1
    m, _, lo, hi = _moments(torchish.bernoulli(torchish.full((N,), 0.3)))
    assert abs(m - 0.3) < tol and {lo, hi} == {0.0, 1.0}
    m, s, lo, _ = _moments(torchish.empty(N).exponential_(2.0))
    assert abs(m - 0.5) < 2 * tol and abs(s - 0.5) < 4 * tol and lo >= 0
    m, s, lo, _ = _moments(torchish.poisson(torchish.full((N,), 4.0)))
    assert abs(m - 4) < 6 * tol and abs(s - 2) < 6 * tol and lo >= 0
    m, _, lo, _ = _moments(torchish.empty(N).geometric_(0.25))
    assert abs(m - 4) < 10 * tol and lo >= 1
    m, s, lo, hi = _moments(torchish.empty(N).uniform_(-2, 6))
    assert abs(m - 2) < 8 * tol and abs(s - 8 / math.sqrt(12)) < 8 * tol and -2 <= lo and hi < 6
    z = torchish.randn(N, dtype=torchish.complex64)
    assert abs(float(z.real.var()) - 0.5) < 4 * tol and abs(float(z.imag.var()) - 0.5) < 4 * tol
    counts = np.bincount(np.asarray(torchish.multinomial(torchish.tensor([0.1, 0.2, 0.7]), N, True).tolist()),
                         minlength=3) / N
    assert np.allclose(counts, [0.1, 0.2, 0.7], atol=3 * tol)
    perm = torchish.randperm(50).tolist()
    assert sorted(perm) == list(range(50)) and perm != list(range(50))
    without = torchish.multinomial(torchish.tensor([[0.2, 0.3, 0.5, 0.0]] * 200), 3).tolist()
    assert all(len(set(r)) == 3 and 3 not in r for r in without)
    m, _, lo, hi = _moments(torchish.empty(N, dtype=torchish.int64).random_())
    assert lo >= 0 and hi > 2 ** 60
    _, _, lo, hi = _moments(torchish.empty(N, dtype=torchish.uint8).random_())
    assert lo == 0 and hi == 255
    _, _, lo, hi = _moments(torchish.empty(N).random_(5))
    assert lo == 0 and hi == 4


def test_normal_gives_mean_and_std_zero_gradients():
    """PyTorch's formula for torch.normal(mean, std) gives both zero gradients (no reparameterised sample; against
    torch in test_random_streams): the draw still comes from the seeded stream."""
    mean = torchish.tensor([1.0, 2.0], requires_grad=True)
    std = torchish.tensor([0.5, 3.0], requires_grad=True)
    torchish.manual_seed(3)
    out = torchish.normal(mean, std)
    out.sum().backward()
    torchish.manual_seed(3)
    z = np.array(torchish.normal(torchish.zeros(2), torchish.ones(2)).tolist())
    np.testing.assert_allclose(out.tolist(), [1.0, 2.0] + z * [0.5, 3.0], rtol=1e-6)
    assert mean.grad.tolist() == [0.0, 0.0] and std.grad.tolist() == [0.0, 0.0]
    assert out.grad_fn.name() == "NormalBackward3"
