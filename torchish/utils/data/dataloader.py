"""``DataLoader``: batches from a dataset, in the main process or in worker processes, with PyTorch's options."""
from __future__ import annotations

import math
import multiprocessing
import os
import warnings

from ._collate import default_collate, default_convert
from ._fetch import create_fetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Iterate over a dataset in batches: PyTorch's ``torch.utils.data.DataLoader``.

    Args:
        dataset: a map-style :class:`Dataset` (anything with ``__getitem__``/``__len__``) or an
            :class:`IterableDataset`.
        batch_size: samples per batch; ``None`` turns automatic batching off (each sample goes through
            ``default_convert`` alone).
        shuffle: a fresh random order every epoch (``RandomSampler`` drawing from ``generator``).
        sampler / batch_sampler: custom index orders; mutually exclusive with ``shuffle`` (and ``batch_sampler``
            with ``batch_size``/``drop_last``), raising PyTorch's ``ValueError``.
        num_workers: worker processes that load batches in parallel (0: load in the main process). Workers are
            started with the ``'spawn'`` method by default — JAX is multithreaded and must not be forked — so the
            dataset, ``collate_fn`` and ``worker_init_fn`` must be picklable (module-level), and scripts need the
            usual ``if __name__ == "__main__":`` guard. Workers run JAX on the CPU only; batches come back as numpy
            arrays and become Tensors in the main process. Batches arrive in sampler order (unless ``in_order=False``).
        collate_fn: merges a list of samples into a batch (default: :func:`default_collate`).
        pin_memory: accepted for compatibility; a no-op (JAX moves host arrays to the device itself).
        drop_last: drop the last, incomplete batch.
        timeout: seconds to wait for a worker's batch before raising ``RuntimeError`` (0: wait forever).
        worker_init_fn: called with the worker id in each worker, after seeding.
        multiprocessing_context: a start method name (``'spawn'``, ``'forkserver'``, ``'fork'``) or context.
        generator: draws the shuffle order and each epoch's base seed; worker ``w`` seeds Python's ``random``,
            numpy's global RNG and ``torchish.manual_seed`` from ``base_seed + w``.
        prefetch_factor: batches loaded in advance per worker (default 2 with workers).
        persistent_workers: keep the workers alive between epochs.

    Example:
        >>> ds = TensorDataset(torchish.arange(10.), torchish.arange(10))
        >>> [y.tolist() for _, y in DataLoader(ds, batch_size=4)]
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self._check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        object.__setattr__(self, "_mp_context", context)

    def __setattr__(self, attr, val):
        if self._initialized and attr in _FROZEN:
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from ._multiprocess import _MultiProcessingDataLoaderIter
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def _check_worker_number_rationality(self):
        if not self.num_workers:
            return
        try:
            suggested = len(os.sched_getaffinity(0))
        except AttributeError:
            suggested = os.cpu_count()
        if suggested is None or self.num_workers > suggested:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested "
                          f"max number of worker in current system is {suggested}, which is smaller than what this "
                          "DataLoader is going to create. Please be aware that excessive worker creation might get "
                          "DataLoader running slow or even freeze, lower the worker number to avoid potential "
                          "slowness/freeze if necessary.", stacklevel=3)


def _refuse_inside_a_trace():
    """A batch drawn inside a function ``torchish.compile`` traces would be a constant of its program (every call
    the same batch), and a trace given up would have consumed it: the call graph-breaks before anything is drawn
    and runs eagerly, as PyTorch's compiler runs a DataLoader iterator."""
    from ...autograd.grad_mode import STATE
    rec = STATE.recorder
    if rec is not None and rec.mode == "trace":
        from ...compile.errors import GraphBreakError
        raise GraphBreakError("torchish.compile: next() of a DataLoader iterator inside the compiled function: the "
                              "batch would be a constant of the program. Draw batches outside and pass them as "
                              "arguments to compile the step.")


class _BaseDataLoaderIter:
    """What every loader iterator shares: the index stream, the epoch's base seed, the length warning."""

    def __init__(self, loader):
        import torchish
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(torchish.empty((), dtype=torchish.int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=2)
        if loader.pin_memory and not torchish.accelerator.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        _refuse_inside_a_trace()
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None \
                and self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise TypeError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Load each batch in the main process when it is asked for."""

    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._iterable, self._dataset, self._auto_collation, self._collate_fn,
                                       self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


from ._worker import get_worker_info  # noqa: E402,F401  (torch.utils.data.dataloader.get_worker_info)
