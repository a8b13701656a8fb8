"""torchish.utils.data draws PyTorch's random numbers: after the same seed, shuffled loaders, samplers,
``random_split`` and ``DistributedSampler`` give torch 2.13's exact index orders, and leave the default generator in
the same state (the stream's bytes are compared, so a draw too many or too few fails even when the orders agree).

Each case seeds both libraries with ``manual_seed``, runs the same code against ``torch.utils.data`` and
``torchish.utils.data``, and compares the results and ``get_rng_state()`` afterwards.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch

import _data_worker

pytestmark = needs_torch


def _state(T):
    return np.asarray(T.get_rng_state().numpy()).tobytes()


def _both(fn, seed=0):
    """``fn(T)`` after ``T.manual_seed(seed)`` for torch, then torchish: the results and the streams left over."""
    out = []
    for T in (torch, torchish):
        T.manual_seed(seed)
        out.append((fn(T), _state(T)))
    (ref, ref_state), (got, got_state) = out
    assert got == ref
    assert got_state == ref_state, "the default generator was advanced differently"
    return got


def _loader_epochs(T, with_generator, epochs=2, **kw):
    ds = T.utils.data.TensorDataset(T.arange(11))
    g = T.Generator().manual_seed(7) if with_generator else None
    dl = T.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=g, **kw)
    orders = [[b[0].tolist() for b in dl] for _ in range(epochs)]
    return orders, (g.get_state().numpy().tobytes() if with_generator else None)


@pytest.mark.parametrize("with_generator", [False, True], ids=["default_generator", "own_generator"])
def test_dataloader_shuffle_two_epochs(with_generator):
    """Each epoch draws the iterator's base seed, then (on the first batch) the sampler's seed or permutation."""
    orders, _ = _both(lambda T: _loader_epochs(T, with_generator))
    assert orders[0] != orders[1]


def test_dataloader_partial_epoch_and_drop_last():
    """An epoch stopped after one batch drew only the base seed and the sampler's draw; drop_last keeps the order."""
    def run(T):
        ds = T.utils.data.TensorDataset(T.arange(10))
        dl = T.utils.data.DataLoader(ds, batch_size=3, shuffle=True, drop_last=True)
        first = next(iter(dl))[0].tolist()
        unused = iter(dl)  # noqa: F841  (creating an iterator draws its base seed, as PyTorch's does)
        return first, [b[0].tolist() for b in dl]
    _both(run, seed=3)


def test_random_sampler_variants():
    D = lambda T: T.utils.data  # noqa: E731
    _both(lambda T: [list(D(T).RandomSampler(range(10))) for _ in range(2)])
    # with replacement: randint in chunks of 32 plus the remainder
    _both(lambda T: list(D(T).RandomSampler(range(7), replacement=True, num_samples=70)))

    def first_five(T):  # the sampler is lazy: five indices drew a whole chunk of 32 from the generator
        g = T.Generator().manual_seed(1)
        it = iter(D(T).RandomSampler(range(7), replacement=True, num_samples=70, generator=g))
        return [next(it) for _ in range(5)], g.get_state().numpy().tobytes()
    _both(first_five)
    # without replacement and num_samples > n: whole permutations, then a cut one
    _both(lambda T: list(D(T).RandomSampler(range(4), num_samples=10)))
    _both(lambda T: list(D(T).RandomSampler(range(6), num_samples=4, generator=T.Generator().manual_seed(2))))
    _both(lambda T: list(D(T).SubsetRandomSampler([5, 7, 9, 11, 13])))
    _both(lambda T: list(D(T).BatchSampler(D(T).RandomSampler(range(9)), batch_size=4, drop_last=False)))


@pytest.mark.parametrize("lengths", [[0.3, 0.3, 0.4], [0.5, 0.5], [3, 7], [10, 0]])
def test_random_split(lengths):
    _both(lambda T: [list(s) for s in T.utils.data.random_split(range(10), lengths)])
    _both(lambda T: [list(s) for s in T.utils.data.random_split(range(10), lengths,
                                                                  generator=T.Generator().manual_seed(42))])


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler(replacement):
    weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6, 0.0]
    n = 40 if replacement else 6
    _both(lambda T: [list(T.utils.data.WeightedRandomSampler(weights, n, replacement=replacement))
                     for _ in range(2)])
    _both(lambda T: list(T.utils.data.WeightedRandomSampler(weights, n, replacement=replacement,
                                                             generator=T.Generator().manual_seed(5))))


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_set_epoch(drop_last):
    """Ranks share the permutation of a Generator seeded with seed + epoch; the default generator is untouched."""
    def run(T):
        out = []
        for epoch in range(2):
            for rank in range(3):
                s = T.utils.data.DistributedSampler(range(10), num_replicas=3, rank=rank, seed=4, drop_last=drop_last)
                s.set_epoch(epoch)
                out.append(list(s))
        return out
    parts = _both(run)
    assert parts[:3] != parts[3:]


def _probe(T):
    """As _data_worker.SeedProbe sees it: the worker's seed, then draws from the torch, random and numpy globals."""
    info = T.utils.data.get_worker_info()
    return info.seed, np.array([*T.rand(2, dtype=T.float64).tolist(), random.random(), np.random.rand()])


@pytest.mark.slow
def test_worker_seeds_and_draws():
    """Worker ``w`` is seeded with ``base_seed + w`` (numpy from the same SeedSequence state as PyTorch's): the
    seeds and the draws made inside two spawned workers equal those in PyTorch's (forked) workers."""
    torchish.manual_seed(0)
    got = list(torchish.utils.data.DataLoader(_data_worker.SeedProbe(2), num_workers=2, timeout=120))

    class TorchSeedProbe(torch.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return _probe(torch)

    torch.manual_seed(0)
    with warnings.catch_warnings():  # JAX warns about fork; PyTorch's workers run no JAX code
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = list(torch.utils.data.DataLoader(TorchSeedProbe(), num_workers=2, timeout=120,
                                               multiprocessing_context="fork"))
    assert [(s.tolist(), d.tolist()) for s, d in got] == [(s.tolist(), d.tolist()) for s, d in ref]
    assert _state(torchish) == _state(torch)
