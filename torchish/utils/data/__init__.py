"""``torchish.utils.data``: PyTorch's data loading — datasets, samplers, collation and the ``DataLoader``.

Samples may be numpy arrays, Python numbers, torchish Tensors or nested dicts/tuples/lists of them;
``default_collate`` stacks them into Tensors with PyTorch's dtypes. ``num_workers > 0`` loads in worker processes
started with ``'spawn'`` (see :class:`DataLoader`); workers produce numpy data and the main process makes the Tensors.

Example:
    >>> from torchish.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torchish.arange(6.).reshape(3, 2), torchish.tensor([0, 1, 0]))
    >>> for x, y in DataLoader(ds, batch_size=2, shuffle=True, generator=torchish.Generator().manual_seed(0)):
    ...     pass
"""
from __future__ import annotations

from ._collate import collate as collate, default_collate as default_collate, \
    default_collate_fn_map as default_collate_fn_map, default_convert as default_convert
from ._worker import WorkerInfo as WorkerInfo, get_worker_info as get_worker_info
from .dataloader import DataLoader as DataLoader
from .dataset import ChainDataset as ChainDataset, ConcatDataset as ConcatDataset, Dataset as Dataset, \
    IterableDataset as IterableDataset, StackDataset as StackDataset, Subset as Subset, \
    TensorDataset as TensorDataset, random_split as random_split
from .distributed import DistributedSampler as DistributedSampler
from .sampler import BatchSampler as BatchSampler, RandomSampler as RandomSampler, Sampler as Sampler, \
    SequentialSampler as SequentialSampler, SubsetRandomSampler as SubsetRandomSampler, \
    WeightedRandomSampler as WeightedRandomSampler

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
