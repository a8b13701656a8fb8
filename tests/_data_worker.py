"""Datasets for the multi-process DataLoader tests of tests/test_data.py.

Worker processes are spawned: they import the module that defines the dataset class to unpickle it. Keeping these
classes here (numpy and torchish only) spares every worker importing PyTorch and the test module.
"""
from __future__ import annotations

import numpy as np

import torchish
from torchish.utils.data import Dataset, IterableDataset, get_worker_info


def sample(i):
    """Sample ``i``: a nested structure of numpy arrays, Python numbers, strings and a tuple."""
    x = np.arange(3, dtype=np.float32) + i
    return {"x": x, "y": i % 3, "w": float(i) / 4, "name": f"s{i}", "pair": (np.int64(i), x[:2].astype(np.float64))}


class NestedSamples(Dataset):
    """``sample(i)`` plus a torchish Tensor under ``"t"``."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        out = sample(i)
        out["t"] = torchish.as_tensor(out["x"] * 2)  # a torchish Tensor made in the worker (host CPU backend)
        return out


def shard(n, info):
    """The part of ``range(n)`` one worker yields: every ``num_workers``-th item from its id."""
    if info is None:
        return range(n)
    return range(info.id, n, info.num_workers)


class ShardedRange(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in shard(self.n, get_worker_info()):
            yield {"i": i, "v": np.full(2, i, np.float32)}


def seed_numpy_marker(worker_id):
    """A ``worker_init_fn``: worker-local state that the dataset could read (checks it runs without error)."""
    info = get_worker_info()
    if info is None or info.id != worker_id:
        raise RuntimeError("worker_init_fn ran outside its worker")


class SeedProbe(Dataset):
    """``n`` samples, each what its worker sees: ``(WorkerInfo.seed, [torchish.rand(2) (float64), random.random(),
    np.random.rand()])`` — to compare workers' seeding with PyTorch's."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import random
        info = get_worker_info()
        return info.seed, np.array([*torchish.rand(2, dtype=torchish.float64).tolist(), random.random(),
                                    np.random.rand()])
