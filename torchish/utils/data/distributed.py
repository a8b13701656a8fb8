"""``DistributedSampler``: each of ``num_replicas`` processes reads its own, equally long share of a dataset."""
from __future__ import annotations

import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Rank ``rank`` of ``num_replicas`` sees indices ``rank, rank + num_replicas, ...`` of the (shuffled) dataset.

    Without ``drop_last`` the index list is padded by repeating its start so every rank gets the same number of
    samples; with it, the tail that does not divide evenly is dropped. With ``shuffle=True`` the order is a
    permutation drawn from a generator seeded with ``seed + epoch``: call :meth:`set_epoch` before each epoch to
    reshuffle (every rank must use the same ``seed``). The indices equal PyTorch's, shuffled or not.

    ``num_replicas`` / ``rank`` default to ``torchish.distributed.get_world_size()`` / ``get_rank()``.

    Example:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _all_indices(self):
        """The full, padded or trimmed, index list that the ranks share."""
        import torchish
        n = len(self.dataset)
        if self.shuffle:
            g = torchish.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torchish.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            return indices[:self.total_size]
        padding = self.total_size - len(indices)
        if padding <= len(indices):
            return indices + indices[:padding]
        return indices + (indices * math.ceil(padding / len(indices)))[:padding]

    def __iter__(self):
        indices = self._all_indices()
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})")
        mine = indices[self.rank:self.total_size:self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(mine)}) does not match num_samples "
                                 f"({self.num_samples})")
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch (part of the shuffle seed), so that each epoch sees a different order."""
        self.epoch = epoch
