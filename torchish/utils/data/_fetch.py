"""Fetchers: turn one entry of the index sampler into one batch (used by the main process and by every worker).

A map-style fetcher reads ``dataset[i]`` for each index of a batch (or ``dataset.__getitems__(indices)`` when the
dataset has it) and collates; an iterable-style fetcher pulls ``len(batch)`` samples from the dataset's iterator
(the indices are ``None`` placeholders) and raises ``StopIteration`` when the stream ends.
"""
from __future__ import annotations

import jax
import numpy as np

from ... import _device
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE
from ...ops.creation import place
from ...ops.index import _INDEX
from ...ops.registry import apply
from ._collate import default_collate
from .dataset import Subset, TensorDataset


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.collate_fn is default_collate:
                rows = tensor_rows(self.dataset, possibly_batched_index)
                if rows is not None:
                    return rows
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


HOST_GATHER = True  # a TensorDataset's CPU tensors are gathered by numpy (tests turn it off to cover the other path)


def tensor_rows(dataset, indices):
    """``default_collate([dataset[i] for i in indices])`` for a TensorDataset (or a Subset of one, at any depth) as
    one gather per tensor instead of a dispatch per sample and a stack: the same list of tensors, about 20x faster
    for a batch of 32. None where that shortcut does not apply and the samples must be read one by one (a
    subclass that changes how samples are read, tensors that require grad, indices that are not integers or are
    out of range: the per-sample path raises PyTorch's error)."""
    while isinstance(dataset, Subset):
        cls = type(dataset)
        if cls.__getitem__ is not Subset.__getitem__ or cls.__getitems__ is not Subset.__getitems__ \
                or not isinstance(dataset.indices, (list, tuple, range)):
            return None
        try:
            indices = [dataset.indices[i] for i in indices]
        except (IndexError, TypeError):
            return None
        dataset = dataset.dataset
    if not isinstance(dataset, TensorDataset) or type(dataset).__getitem__ is not TensorDataset.__getitem__ \
            or getattr(dataset, "__getitems__", None) is not None:
        return None
    idx = np.asarray(indices)
    n = len(dataset)
    if idx.ndim != 1 or not idx.size or idx.dtype.kind not in "iu" or idx.min() < -n or idx.max() >= n:
        return None
    tensors = dataset.tensors
    if STATE.grad_enabled and any(t.requires_grad for t in tensors):
        return None  # (the per-sample path's graph: StackBackward0 over SelectBackward0s)
    idx = idx.astype(np.int64)
    on = {}  # device -> the index tensor there
    out = []
    for t in tensors:
        v = t._v
        devs = v.devices() if HOST_GATHER and isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer) else ()
        if len(devs) == 1 and next(iter(devs)).platform == "cpu":
            # a CPU array: numpy gathers the rows from its buffer and the batch goes to the device as a new
            # array, ready at once (no kernel queued behind a running step, nothing for its checks to wait on)
            out.append(Tensor._make(_device.put(np.asarray(v)[idx], next(iter(devs)))))
            continue
        dev = t.device
        if dev not in on:
            on[dev] = place(idx, None, dev)
        out.append(apply(_INDEX, (t, on[dev]), template=(("a", 0),)))
    return out


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    """The fetcher for a map-style (``iterable=False``) or iterable-style dataset."""
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
