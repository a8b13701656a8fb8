"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset (indices, or lists of indices).

Random orders are drawn on the host: each pass takes ONE 64-bit seed from the torchish generator (``generator=``, or
the default generator) and draws the permutation or indices with a numpy ``Generator`` seeded by it. A seeded
``generator=`` therefore makes the order reproducible and advances by one draw per pass, and no JAX program is
compiled per dataset length. The numbers are not PyTorch's (the random streams differ).
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


def _draw_seed(generator=None) -> int:
    """One non-negative 64-bit integer from a torchish generator (the default one when None)."""
    import torchish
    return int(torchish.empty((), dtype=torchish.int64).random_(generator=generator).item())


def host_rng(generator=None) -> np.random.Generator:
    """A numpy generator seeded by one draw from the torchish ``generator``."""
    return np.random.default_rng(_draw_seed(generator))


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
        n = len(self.data_source)
        rng = host_rng(self.generator)
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from rng.permutation(n).tolist()
            yield from rng.permutation(n)[:self.num_samples % n].tolist()

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
        for i in host_rng(self.generator).permutation(len(self.indices)).tolist():
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

    def _probabilities(self):
        """The normalised weights, refused as ``torch.multinomial`` refuses them."""
        w = np.asarray(self.weights.detach()._concrete(), dtype=np.float64)
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > w.shape[0]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        return w / w.sum()

    def __iter__(self):
        p = self._probabilities()
        rng = host_rng(self.generator)
        if self.replacement:
            drawn = rng.choice(p.shape[0], size=self.num_samples, p=p)
        else:
            # Without replacement, as torch.multinomial: the smallest exponential(1) / p keys, so zero-weight
            # categories are drawn only once the others are used up.
            with np.errstate(divide="ignore"):
                keys = rng.exponential(size=p.shape[0]) / p
            drawn = np.argsort(keys, kind="stable")[:self.num_samples]
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
