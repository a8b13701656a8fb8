"""DataLoader over a TensorDataset (and Subsets of one): a batch is read as one gather per tensor
(``_fetch.tensor_rows``) instead of a dispatch per sample. Its batches must be exactly what the per-sample path
and PyTorch give; the shortcut must step aside wherever the user's code or PyTorch's errors depend on the samples
being read one by one."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, run_both, torchish
import torchish.utils.data  # noqa: F401
from torchish.utils.data import _fetch
from torchish.utils.data._collate import default_collate


def columns(lib, n=11):
    return (lib.tensor(arr(n, 3, seed=1)), lib.tensor(arr(n, lo=0, hi=9, dtype=np.int64, seed=2)),
            lib.tensor(arr(n, 2, 2, dtype=np.bool_, seed=3)), lib.tensor(arr(n, dtype=np.float64, seed=4)))


ORDER = [7, 0, 10, 3, 3, -1, 5, 2, 9, 1, 4, 6, 8]  # (a repeat and a negative index: both valid for a sampler)


def loader_batches(lib, batch_size, drop_last, subset):
    ds = lib.utils.data.TensorDataset(*columns(lib))
    if subset:  # a Subset of a Subset
        ds = lib.utils.data.Subset(lib.utils.data.Subset(ds, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]), [1, 3, 5, 7, 9, 0])
        order = [5, 0, 2, 2, 1, 4, 3]
    else:
        order = ORDER
    return list(lib.utils.data.DataLoader(ds, batch_size=batch_size, sampler=order, drop_last=drop_last))


@pytest.fixture(params=["numpy gather", "device gather"])
def gather(request, monkeypatch):
    """Both ways of gathering a batch: numpy from a CPU tensor's buffer, and a gather kernel (other devices)."""
    monkeypatch.setattr(_fetch, "HOST_GATHER", request.param == "numpy gather")


@pytest.mark.parametrize("subset", [False, True])
@pytest.mark.parametrize("batch_size,drop_last", [(4, False), (4, True), (1, False), (32, False)])
def test_batches_match_torch(batch_size, drop_last, subset, gather):
    ref, got = run_both(loader_batches, batch_size, drop_last, subset)
    assert len(got) == len(ref)
    for r, g in zip(ref, got):
        assert type(g) is list and len(g) == len(r)
        for a, b in zip(r, g):
            assert_same(a, b)


def test_gather_equals_per_sample_collate(gather):
    ds = torchish.utils.data.TensorDataset(*columns(torchish))
    sub = torchish.utils.data.random_split(ds, [0.5, 0.5], generator=torchish.Generator().manual_seed(0))[1]
    for d, idx in ((ds, ORDER), (sub, [0, 4, 2, 1])):
        rows = _fetch.tensor_rows(d, idx)
        assert rows is not None  # (the shortcut is taken here)
        slow = default_collate([d[i] for i in idx])
        assert len(rows) == len(slow)
        for a, b in zip(rows, slow):
            assert a.dtype == b.dtype and a.shape == b.shape and not a.requires_grad
            np.testing.assert_array_equal(a.numpy(), b.numpy())


class Shifted(torchish.utils.data.TensorDataset):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return x + 100, y


def test_subclass_reading_its_own_way_is_respected():
    x, y = torchish.arange(12.).reshape(6, 2), torchish.arange(6)
    ds = Shifted(x, y)
    assert _fetch.tensor_rows(ds, [0, 1]) is None
    (bx, by), = list(torchish.utils.data.DataLoader(ds, batch_size=6))
    np.testing.assert_array_equal(bx.numpy(), x.numpy() + 100)


def test_custom_collate_sees_samples():
    ds = torchish.utils.data.TensorDataset(torchish.arange(4.), torchish.arange(4))
    seen = []
    list(torchish.utils.data.DataLoader(ds, batch_size=2, collate_fn=lambda b: seen.append(b) or b))
    assert len(seen) == 2 and isinstance(seen[0], list) and isinstance(seen[0][0], tuple)


def test_requires_grad_keeps_the_per_sample_graph():
    def f(lib):
        ds = lib.utils.data.TensorDataset(lib.tensor(arr(4, 2), requires_grad=True))
        (b,), = list(lib.utils.data.DataLoader(ds, batch_size=4))
        b.sum().backward()
        return type(b.grad_fn).__name__, ds.tensors[0].grad
    (rn, rg), (gn, gg) = run_both(f)
    assert gn == rn
    assert_same(rg, gg)


def test_out_of_range_index_raises_as_torch():
    def f(lib):
        ds = lib.utils.data.TensorDataset(lib.arange(5.))
        return list(lib.utils.data.DataLoader(ds, batch_size=2, sampler=[0, 5]))
    check_raises(f)


def test_shuffled_epochs_cover_the_data():
    x = torchish.arange(40.).reshape(20, 2)
    dl = torchish.utils.data.DataLoader(torchish.utils.data.TensorDataset(x, torchish.arange(20)), batch_size=6,
                                        shuffle=True, generator=torchish.Generator().manual_seed(3))
    for _ in range(2):
        xs, ys = zip(*dl)
        ys = torchish.cat(ys).numpy()
        assert sorted(ys.tolist()) == list(range(20))
        np.testing.assert_array_equal(torchish.cat(xs).numpy(), x.numpy()[ys])
