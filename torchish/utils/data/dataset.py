"""Datasets: PyTorch's map-style and iterable-style containers, their combinators and ``random_split``."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]


class Dataset:
    """A map-style dataset: ``dataset[i]`` gives sample ``i``; ``len(dataset)`` (optional) its size.

    Subclasses implement ``__getitem__`` (and usually ``__len__``); they may add ``__getitems__(indices)`` to
    fetch a whole batch at once, which ``DataLoader`` then prefers. ``a + b`` is ``ConcatDataset([a, b])``.

    Example:
        >>> class Squares(Dataset):
        ...     def __len__(self): return 4
        ...     def __getitem__(self, i): return i * i
        >>> list(DataLoader(Squares(), batch_size=2))
        [tensor([0, 1]), tensor([4, 9])]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An iterable-style dataset: ``iter(dataset)`` yields the samples (streams, generators, shards).

    With ``num_workers > 0`` every worker process iterates its own copy, so each sample comes once per worker
    unless ``__iter__`` shards by :func:`get_worker_info` (``info.id`` of ``info.num_workers``).
    ``a + b`` is ``ChainDataset([a, b])``.

    Example:
        >>> class Range(IterableDataset):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
        ...         return iter(range(start, self.n, step))
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows of the given Tensors: ``dataset[i] == tuple(t[i] for t in tensors)``.

    Example:
        >>> ds = TensorDataset(torchish.arange(6.).reshape(3, 2), torchish.tensor([0, 1, 0]))
        >>> ds[1]
        (tensor([2., 3.]), tensor(1))
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zip datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])``; with keywords, a dict per sample.

    Example:
        >>> StackDataset(images=ds_a, labels=ds_b)[0]      # {'images': ds_a[0], 'labels': ds_b[0]}
    """

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                                 "input/output, but both types are given.")
            datasets = args
        elif kwargs:
            datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")
        members = list(datasets.values()) if isinstance(datasets, dict) else list(datasets)
        self._length = len(members[0])
        if any(self._length != len(d) for d in members):
            raise ValueError("Size mismatch between datasets")
        self.datasets = datasets

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def _column(self, dataset, indices):
        if callable(getattr(dataset, "__getitems__", None)):
            items = dataset.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
            return items
        return [dataset[i] for i in indices]

    def __getitems__(self, indices):
        if isinstance(self.datasets, dict):
            columns = {k: self._column(d, indices) for k, d in self.datasets.items()}
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        columns = [self._column(d, indices) for d in self.datasets]
        return [tuple(col[j] for col in columns) for j in range(len(indices))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Several map-style datasets end to end; ``cumulative_sizes[k]`` is the length of the first ``k + 1``.

    Example:
        >>> ds = ConcatDataset([range(3), range(10, 12)])
        >>> len(ds), ds.cumulative_sizes, ds[3], ds[-1]
        (5, [3, 5], 10, 11)
    """

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx - self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else idx
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after the other (lazily, as ``itertools.chain``)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    Example:
        >>> s = Subset(range(10, 20), [4, 0])
        >>> len(s), s[0], s[1]
        (2, 14, 10)
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        # A subclass that changes __getitem__ must change __getitems__ too, or DataLoader (which prefers
        # __getitems__) would bypass it; PyTorch refuses such a subclass the same way.
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\n"
                "def __getitems__(self, indices):\n    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def _split_lengths(n, lengths):
    """PyTorch's lengths rule: fractions summing to 1 become ``floor(n * f)`` each, the remainder handed out one
    by one from the first split onwards; integer lengths are taken as given."""
    if not (math.isclose(sum(lengths), 1) and sum(lengths) <= 1):
        return list(lengths)
    sizes = []
    for i, frac in enumerate(lengths):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        sizes.append(int(math.floor(n * frac)))
    for i in range(n - sum(sizes)):
        sizes[i % len(sizes)] += 1
    for i, size in enumerate(sizes):
        if size == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                          stacklevel=3)
    return sizes


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random :class:`Subset` s of the given lengths (or fractions).

    The subsets share one ``randperm(len(dataset), generator=generator)`` (the default generator when None), so a
    seeded generator gives PyTorch's split.

    Example:
        >>> train, val = random_split(range(10), [0.7, 0.3], generator=torchish.Generator().manual_seed(0))
        >>> len(train), len(val)
        (7, 3)
    """
    import torchish
    lengths = _split_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = torchish.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, perm[end - length:end]) for end, length in zip(itertools.accumulate(lengths), lengths)]
