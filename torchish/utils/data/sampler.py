"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset (indices, or lists of indices).

Random orders make PyTorch's calls in PyTorch's order, so a seeded run visits the data exactly as torch 2.13 does:
``RandomSampler`` without a ``generator`` takes one int64 seed from the default generator per pass and seeds a
fresh :class:`torchish.Generator` with it, then draws ``randperm`` (or ``randint`` in chunks of 32 with
replacement); ``SubsetRandomSampler`` draws one ``randperm`` and ``WeightedRandomSampler`` one ``multinomial``
from ``generator`` (the default generator when None).
"""
from __future__ import annotations

import itertools

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

_CHUNK = 32  # RandomSampler(replacement=True) draws its indices 32 at a time, as PyTorch does


def _is_positive_int(n):
    return isinstance(n, int) and not isinstance(n, bool) and n > 0


class Sampler:
    """Base class: subclasses provide ``__iter__`` over indices (or batches of indices) and optionally ``__len__``.

    Example:
        >>> class Reversed(Sampler):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self): return iter(range(self.n - 1, -1, -1))
        ...     def __len__(self): return self.n
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``.

    Example:
        >>> list(SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order: a permutation each pass, or ``num_samples`` draws with ``replacement=True``.

    Without replacement and ``num_samples > len(data_source)``, whole permutations follow each other (the last one
    cut short), as in PyTorch.

    Example:
        >>> sorted(RandomSampler(range(4), generator=torchish.Generator().manual_seed(0)))
        [0, 1, 2, 3]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        import torchish
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(torchish.empty((), dtype=torchish.int64).random_().item())
            generator = torchish.Generator()
            generator.manual_seed(seed)
        if self.replacement:
            for _ in range(self.num_samples // _CHUNK):
                yield from torchish.randint(high=n, size=(_CHUNK,), dtype=torchish.int64, generator=generator).tolist()
            yield from torchish.randint(high=n, size=(self.num_samples % _CHUNK,), dtype=torchish.int64,
                                        generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from torchish.randperm(n, generator=generator).tolist()
            yield from torchish.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a fresh permutation each pass).

    Example:
        >>> sorted(SubsetRandomSampler([5, 7, 9]))
        [5, 7, 9]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        import torchish
        for i in torchish.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (as ``torch.multinomial``).

    Example:
        >>> s = WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=5)
        >>> 0 in list(s)
        False
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        import torchish
        if not _is_positive_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = torchish.as_tensor(weights, dtype=torchish.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        import torchish
        drawn = torchish.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Group another sampler's indices into lists of ``batch_size`` (the last one shorter unless ``drop_last``).

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_positive_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the index stream for an IterableDataset (the dataset decides where it ends)."""

    def __iter__(self):
        return itertools.repeat(None)
