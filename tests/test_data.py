"""torchish.utils.data against torch.utils.data on the same numpy data: collation (structure, dtypes, shapes), the
DataLoader's batches and length, samplers, datasets, random_split, error types, and worker processes."""
from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, check_raises, needs_torch, run_both, torch, torchish
import torchish.utils.data  # noqa: F401  (``torchish.utils`` imports its submodules lazily)
import _data_worker

pytestmark = needs_torch

Point = collections.namedtuple("Point", ["p", "q"])


def assert_batches(ref, got, path="batch"):
    """Same container types all the way down (list vs tuple vs dict vs namedtuple), then the leaves."""
    if isinstance(ref, torch.Tensor):
        assert_same(ref, got, path)
    elif isinstance(ref, dict):
        assert type(got) is dict and list(got) == list(ref), f"{path}: {got!r} vs torch's {ref!r}"
        for k in ref:
            assert_batches(ref[k], got[k], f"{path}[{k!r}]")
    elif isinstance(ref, (list, tuple)):
        assert type(got).__name__ == type(ref).__name__, f"{path}: {type(got).__name__} != {type(ref).__name__}"
        assert len(got) == len(ref), f"{path}: length {len(got)} != {len(ref)}"
        for i, (r, g) in enumerate(zip(ref, got)):
            assert_batches(r, g, f"{path}[{i}]")
    else:
        assert type(got) is type(ref) and got == ref, f"{path}: {got!r} != torch's {ref!r}"


def samples(lib, kind):
    """A list of samples of one structure, built from numpy (tensors made with ``lib``)."""
    rows = range(3)
    if kind == "numpy":
        return [arr(2, 3, seed=i) for i in rows]
    if kind == "numpy_dtypes":
        return [(arr(2, seed=i, dtype=np.float64), arr(3, seed=i, lo=0, hi=9, dtype=np.int32),
                 arr(2, seed=i, dtype=np.bool_), np.uint8(i), np.float32(i / 2), np.array(i)) for i in rows]
    if kind == "numbers":
        return [(float(i) / 3, i, bool(i % 2)) for i in rows]
    if kind == "tensors":
        return [lib.tensor(arr(4, seed=i)) for i in rows]
    if kind == "nested":
        return [{"img": arr(2, 2, seed=i), "label": i, "meta": {"name": f"n{i}", "scale": 0.5 * i},
                 "pt": Point(np.int64(i), [i, i + 1]), "tags": ["a", f"t{i}"]} for i in rows]
    if kind == "str_bytes":
        return [(f"s{i}", b"b", (i, "x")) for i in rows]
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["numpy", "numpy_dtypes", "numbers", "tensors", "nested", "str_bytes"])
def test_default_collate_matches_torch(kind):
    ref, got = run_both(lambda T: T.utils.data.default_collate(samples(T, kind)))
    assert_batches(ref, got)


@pytest.mark.parametrize("kind", ["numpy_dtypes", "nested", "numbers"])
def test_default_convert_and_batch_size_none(kind):
    ref, got = run_both(lambda T: list(T.utils.data.DataLoader(samples(T, kind), batch_size=None)))
    assert_batches(ref, got)
    ref, got = run_both(lambda T: T.utils.data.default_convert(samples(T, kind)[1]))
    assert_batches(ref, got)


def test_collate_errors():
    D = lambda T: T.utils.data  # noqa: E731
    check_raises(lambda T: D(T).default_collate([[1, 2], [3]]))                         # ragged sequences
    check_raises(lambda T: D(T).default_collate([object(), object()]))                  # unsupported type
    check_raises(lambda T: D(T).default_collate([np.array(["a"]), np.array(["b"])]))    # numpy strings
    check_raises(lambda T: D(T).default_collate([arr(2), arr(3)]))                      # unequal shapes
    check_raises(lambda T: D(T).default_collate([T.zeros(2), T.zeros(3)]))


def tensor_dataset(T, n=10):
    return T.utils.data.TensorDataset(T.tensor(arr(n, 3)), T.tensor(arr(n, lo=0, hi=5, dtype=np.int64)))


@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (3, True), (5, True), (1, False), (None, False)])
def test_dataloader_tensor_dataset_matches_torch(batch_size, drop_last):
    def run(T):
        dl = T.utils.data.DataLoader(tensor_dataset(T), batch_size=batch_size, drop_last=drop_last)
        return len(dl), list(dl)
    (n_ref, ref), (n_got, got) = run_both(run)
    assert n_got == n_ref == len(ref)
    assert_batches(ref, got)


def test_dataloader_custom_samplers_and_collate():
    def run(T):
        D = T.utils.data
        ds = tensor_dataset(T)
        a = list(D.DataLoader(ds, batch_size=4, sampler=[9, 0, 3, 3, 7]))
        b = list(D.DataLoader(ds, batch_sampler=[[1, 2], [8], [0, 5, 6]]))
        c = list(D.DataLoader(list(range(7)), batch_size=3, collate_fn=lambda batch: [x * 2 for x in batch]))
        subset = D.Subset(ds, [4, 2, 8])
        d = list(D.DataLoader(subset, batch_size=2))
        return a, b, c, d
    ref, got = run_both(run)
    assert_batches(ref, got)


class _Stream:
    """A stand-in for both libraries' IterableDataset with a length (subclassed per library below)."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(float(i) for i in range(self.n))

    def __len__(self):
        return self.n


def _stream(T, n):
    return type("Stream", (_Stream, T.utils.data.IterableDataset), {})(n)


@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (3, True), (None, False)])
def test_iterable_dataset_batches_and_len(batch_size, drop_last):
    def run(T):
        dl = T.utils.data.DataLoader(_stream(T, 7), batch_size=batch_size, drop_last=drop_last)
        return len(dl), list(dl)
    (n_ref, ref), (n_got, got) = run_both(run)
    assert n_got == n_ref
    assert_batches(ref, got)


def test_samplers_deterministic_match_torch():
    def run(T):
        D = T.utils.data
        seq = list(D.SequentialSampler(range(5)))
        batches = [list(D.BatchSampler(D.SequentialSampler(range(7)), bs, dl)) for bs in (1, 3, 7, 8) for dl in
                   (False, True)]
        lens = [len(D.BatchSampler(range(7), bs, dl)) for bs in (1, 3, 7, 8) for dl in (False, True)]
        dist = []
        for n, reps, dl in [(10, 3, False), (10, 3, True), (2, 4, False), (9, 3, True), (7, 2, False)]:
            for rank in range(reps):
                s = D.DistributedSampler(range(n), num_replicas=reps, rank=rank, shuffle=False, drop_last=dl)
                dist.append((list(s), len(s), s.total_size))
        return seq, batches, lens, dist
    ref, got = run_both(run)
    assert ref == got


def test_random_samplers_permutations_and_determinism():
    D = torchish.utils.data
    g = lambda s: torchish.Generator().manual_seed(s)  # noqa: E731
    a = list(D.RandomSampler(range(10), generator=g(1)))
    assert sorted(a) == list(range(10)) and a == list(D.RandomSampler(range(10), generator=g(1)))
    s = D.RandomSampler(range(10), generator=g(1))
    assert list(s) != list(s)                                          # the stream advances between passes
    torchish.manual_seed(3)
    default = list(D.RandomSampler(range(10)))                         # no generator: the default one
    torchish.manual_seed(3)
    assert list(D.RandomSampler(range(10))) == default
    rep = list(D.RandomSampler(range(4), replacement=True, num_samples=70, generator=g(2)))
    assert len(rep) == 70 and set(rep) <= set(range(4))
    longer = list(D.RandomSampler(range(4), num_samples=10, generator=g(3)))
    assert sorted(longer[:4]) == sorted(longer[4:8]) == [0, 1, 2, 3] and len(longer) == 10
    sub = list(D.SubsetRandomSampler([5, 7, 9, 11], generator=g(4)))
    assert sorted(sub) == [5, 7, 9, 11]
    w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 50, generator=g(5)))
    assert len(w) == 50 and set(w) <= {1, 3}
    nw = list(D.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g(6)))
    assert sorted(nw) == [0, 1, 2]
    ref, got = run_both(lambda T: (T.manual_seed(0), list(T.utils.data.WeightedRandomSampler([0.0, 3.0, 0.0, 0.0], 3,
                                                                                              False)))[1])
    # the one positive weight first, then zero-weight indices in PyTorch's tie order (its top-k's)
    assert got == ref
    # DistributedSampler with shuffle: the ranks share one padded permutation, fixed by (seed, epoch).
    def shares(epoch, seed=0, n=11, reps=3):
        out = []
        for r in range(reps):
            s = D.DistributedSampler(range(n), num_replicas=reps, rank=r, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    e0 = shares(0)
    assert shares(0) == e0 and shares(1) != e0 and shares(0, seed=5) != e0
    flat = [i for r in range(4) for s in e0 for i in s[r:r + 1]]
    assert sorted(set(flat)) == list(range(11)) and len(flat) == 12 and all(len(s) == 4 for s in e0)


def test_sampler_errors():
    D = lambda T: T.utils.data  # noqa: E731
    check_raises(lambda T: D(T).RandomSampler(range(3), replacement=1))
    check_raises(lambda T: D(T).RandomSampler(range(3), num_samples=0))
    check_raises(lambda T: D(T).WeightedRandomSampler([1.0, 2.0], num_samples=True))
    check_raises(lambda T: D(T).WeightedRandomSampler([[1.0, 2.0]], num_samples=2))
    check_raises(lambda T: D(T).WeightedRandomSampler([1.0, 2.0], 2, replacement="yes"))
    check_raises(lambda T: D(T).BatchSampler(range(3), 0, False))
    check_raises(lambda T: D(T).BatchSampler(range(3), 2, 1))
    check_raises(lambda T: D(T).DistributedSampler(range(3), num_replicas=2, rank=2))
    for weights, n, rep in [([1.0, 2.0], 3, False), ([1.0, -1.0], 1, True),
                            ([0.0, 0.0], 1, True), ([1.0, float("nan")], 1, True)]:
        check_raises(lambda T: list(D(T).WeightedRandomSampler(weights, n, replacement=rep)))


def test_datasets_indexing_match_torch():
    def run(T):
        D = T.utils.data
        ds = tensor_dataset(T, 4)
        cat = D.ConcatDataset([ds, tensor_dataset(T, 3), D.Subset(ds, [3, 1])])
        plus = ds + ds
        stack_t = D.StackDataset(ds, list(range(10, 14)))
        stack_d = D.StackDataset(a=list("wxyz"), b=ds)
        return (cat.cumulative_sizes, len(cat), [cat[i] for i in (0, 3, 4, 6, 7, 8, -1, -9)],
                type(plus).__name__, len(plus), plus[5], stack_t[2], stack_d[1], len(stack_d),
                D.Subset(ds, [2, 0])[1], len(D.Subset(ds, [2, 0, 1])))
    ref, got = run_both(run)
    assert_batches(ref, got)


def test_dataset_errors():
    D = lambda T: T.utils.data  # noqa: E731
    check_raises(lambda T: D(T).TensorDataset(T.zeros(3), T.zeros(4)))
    check_raises(lambda T: D(T).ConcatDataset([]))
    check_raises(lambda T: D(T).ConcatDataset([range(2), _stream(T, 2)]))
    check_raises(lambda T: D(T).ConcatDataset([range(2), range(3)])[-6])
    check_raises(lambda T: D(T).ConcatDataset([range(2), range(3)])[5])
    check_raises(lambda T: D(T).StackDataset(range(2), range(3)))
    check_raises(lambda T: D(T).StackDataset())
    check_raises(lambda T: D(T).Dataset()[0])


@pytest.mark.filterwarnings("ignore:Length of split")
@pytest.mark.parametrize("n,fracs", [(10, [0.3, 0.7]), (7, [0.5, 0.5]), (11, [0.2, 0.2, 0.6]), (5, [0.1] * 10),
                                     (3, [1.0])])
def test_random_split_sizes_match_torch(n, fracs):
    ref, got = run_both(lambda T: [len(s) for s in T.utils.data.random_split(range(n), fracs)])
    assert got == ref


def test_random_split_partition_and_determinism():
    D = torchish.utils.data
    split = lambda seed: [list(s) for s in D.random_split(range(10, 20), [3, 5, 2],  # noqa: E731
                                                          generator=torchish.Generator().manual_seed(seed))]
    a = split(0)
    assert [len(s) for s in a] == [3, 5, 2] and sorted(sum(a, [])) == list(range(10, 20))
    assert split(0) == a and split(1) != a
    check_raises(lambda T: T.utils.data.random_split(range(5), [2, 2]))
    check_raises(lambda T: T.utils.data.random_split(range(5), [1.5, -0.5]))


def test_dataloader_argument_errors():
    def make(**kw):
        return lambda T: T.utils.data.DataLoader(tensor_dataset(T), **kw)
    for kw in [dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
               dict(batch_sampler=[[0]], shuffle=True), dict(batch_sampler=[[0]], drop_last=True),
               dict(batch_sampler=[[0]], sampler=[0]), dict(batch_size=None, drop_last=True),
               dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2), dict(persistent_workers=True),
               dict(multiprocessing_context="spawn"), dict(batch_size=0)]:
        check_raises(make(**kw))
    for kw in [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])]:
        check_raises(lambda T: T.utils.data.DataLoader(_stream(T, 3), **kw))
    check_raises(lambda T: setattr(T.utils.data.DataLoader(tensor_dataset(T)), "batch_size", 3))


def test_shuffle_with_generator_is_a_deterministic_permutation():
    D = torchish.utils.data
    ds = tensor_dataset(torchish)

    def epochs(seed, n=2):
        dl = D.DataLoader(ds, batch_size=4, shuffle=True, generator=torchish.Generator().manual_seed(seed))
        return [np.concatenate([x.numpy() for x, _ in dl]) for _ in range(n)]
    a, b = epochs(0)
    x = ds.tensors[0].numpy()
    order = [int(np.flatnonzero((x == row).all(1))[0]) for row in a]
    assert sorted(order) == list(range(10))
    assert all(np.array_equal(u, v) for u, v in zip(epochs(0), (a, b)))
    assert not np.array_equal(a, b)


def test_worker_exception_keeps_its_type():
    from torchish.utils.data._worker import ExceptionWrapper
    try:
        {}["missing"]
    except KeyError:
        w = ExceptionWrapper(where="in DataLoader worker process 0")
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        w.reraise()
    assert torchish.utils.data.get_worker_info() is None


@pytest.mark.slow
def test_workers_map_style_same_as_main_process():
    """Two spawned workers (persistent, two epochs, worker_init_fn) give the batches of num_workers=0, in order,
    and those equal PyTorch's."""
    D = torchish.utils.data
    ds = _data_worker.NestedSamples(11)
    main = list(D.DataLoader(ds, batch_size=3))
    dl = D.DataLoader(ds, batch_size=3, num_workers=2, persistent_workers=True,
                      worker_init_fn=_data_worker.seed_numpy_marker, timeout=120)
    assert len(dl) == len(main) == 4
    for _ in range(2):
        assert_batches_equal_torchish(main, list(dl))
    ref = list(torch.utils.data.DataLoader([_data_worker.sample(i) for i in range(11)], batch_size=3))
    assert_batches(ref, [{k: v for k, v in b.items() if k != "t"} for b in main])
    np.testing.assert_array_equal(main[1]["t"].numpy(), 2 * main[1]["x"].numpy())


def assert_batches_equal_torchish(a, b):
    if isinstance(a, torchish.Tensor):
        assert isinstance(b, torchish.Tensor) and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_batches_equal_torchish(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_batches_equal_torchish(u, v)
    else:
        assert a == b


@pytest.mark.slow
def test_workers_iterable_sharded_by_worker_info():
    """An IterableDataset sharded with get_worker_info over two spawned workers: every item once, in PyTorch's
    round-robin order (PyTorch's own loader, forked workers, is the reference)."""
    class TorchShardedRange(torch.utils.data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            for i in _data_worker.shard(self.n, torch.utils.data.get_worker_info()):
                yield {"i": i, "v": np.full(2, i, np.float32)}

    got = list(torchish.utils.data.DataLoader(_data_worker.ShardedRange(9), batch_size=2, num_workers=2,
                                              timeout=120))
    with warnings.catch_warnings():  # JAX warns about fork; PyTorch's workers run no JAX code
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = list(torch.utils.data.DataLoader(TorchShardedRange(9), batch_size=2, num_workers=2, timeout=120,
                                               multiprocessing_context="fork"))
    assert_batches(ref, got)
    assert sorted(i for b in got for i in b["i"].tolist()) == list(range(9))



def test_local_dataset_classes_travel_by_value():
    """A dataset class or collate lambda defined in a function cannot be pickled by reference (PyTorch's forked
    workers inherit them); spawned workers receive them by value."""
    import pickle
    from torchish.utils.data._multiprocess import _ByValue, _picklable

    class Local(torchish.utils.data.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * 2
    assert not _picklable(Local()) and not _picklable(lambda b: b) and _picklable(_data_worker.NestedSamples(2))
    back = pickle.loads(pickle.dumps(_ByValue(Local())))
    assert type(back).__name__ == "Local" and [back[i] for i in range(len(back))] == [0, 2, 4]
    assert pickle.loads(pickle.dumps(_ByValue(lambda b: sum(b))))([1, 2]) == 3


@pytest.mark.slow
def test_worker_with_local_dataset_and_lambda_collate():
    class DS(torchish.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return torchish.full((2,), float(i)), i % 2
    collate = lambda b: (torchish.stack([x for x, _ in b]), [y for _, y in b])  # noqa: E731
    main = list(torchish.utils.data.DataLoader(DS(), batch_size=2, collate_fn=collate))
    got = list(torchish.utils.data.DataLoader(DS(), batch_size=2, num_workers=1, collate_fn=collate, timeout=120))
    assert len(got) == len(main) == 3
    for (x, y), (u, v) in zip(got, main):
        np.testing.assert_array_equal(x.numpy(), u.numpy())
        assert y == v


_UNGUARDED_SCRIPT = '''
import numpy as np
import {lib} as torch
from {lib}.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

SCALE = 3.0  # a global of the script that the dataset reads


class Squares(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {{"x": np.full(2, i * SCALE, np.float32), "i": i}}


class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        ids = range(6) if info is None else range(info.id, 6, info.num_workers)
        return iter([np.float32(i) for i in ids])


def init(worker_id):
    np.random.seed(worker_id)


out = []
loader = DataLoader(Squares(), batch_size=3, num_workers=2, worker_init_fn=init, persistent_workers=True,
                    collate_fn=lambda b: (torch.tensor(np.stack([s["x"] for s in b])), [s["i"] for s in b]))
for epoch in range(2):
    for x, i in loader:
        out.append((x.tolist(), i))
for b in DataLoader(Stream(), batch_size=2, num_workers=2):
    out.append(b.tolist())
print(repr(out))
'''


@pytest.mark.slow
def test_workers_from_a_script_without_main_guard(tmp_path):
    """A script iterating loaders from top-level code with no ``if __name__ == "__main__":`` (PyTorch forks its
    workers on Linux, so such scripts work there): torchish's spawned workers do not run the script again, and the
    batches (a dataset class and a lambda collate_fn of the script, an IterableDataset sharded by worker info,
    persistent workers over two epochs) are PyTorch's."""
    import subprocess
    import sys
    outs = {}
    for lib in ("torch", "torchish"):
        path = tmp_path / f"unguarded_{lib}.py"
        path.write_text(_UNGUARDED_SCRIPT.format(lib=lib))
        res = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                             cwd=str(tmp_path))
        assert res.returncode == 0, res.stderr[-3000:]
        outs[lib] = res.stdout.strip().splitlines()[-1]
    assert outs["torchish"] == outs["torch"]
