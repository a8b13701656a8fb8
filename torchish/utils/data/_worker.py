"""The worker-process side of multi-process loading: the worker entry (``_worker_loop``), ``get_worker_info``, and how
a batch crosses from a worker to the main process.

A worker runs no JAX program for the default collate: ``default_collate``/``default_convert`` are swapped for their
host variants (``_collate._host_*``), which stack numpy arrays into ``HostTensor`` s. Whatever the batch holds is
then pickled with ``_BatchPickler``: every ``HostTensor`` and every torchish Tensor (from a dataset or a custom
``collate_fn`` that builds Tensors) travels as a numpy array, and ``decode_batch`` in the main process rebuilds them
as torchish Tensors there. Workers are started with ``JAX_PLATFORMS=cpu`` (``_multiprocess.py``), so a dataset that
does hold Tensors only ever touches the host CPU backend, never an accelerator.
"""
from __future__ import annotations

import io
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

from ..._tensor import Tensor
from ._collate import HostTensor, default_collate, default_convert, host_array, to_tensor, _host_default_collate, \
    _host_default_convert
from ._fetch import create_fetcher

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds between liveness checks while waiting on a queue

_worker_info = None


class WorkerInfo:
    """What a worker knows about itself: ``id``, ``num_workers``, ``seed`` and its own copy of ``dataset``."""

    _frozen = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self._keys = tuple(kwargs)
        self._frozen = True

    def __setattr__(self, key, val):
        if self._frozen:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self._keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """Inside a DataLoader worker: its :class:`WorkerInfo`; in the main process: ``None``.

    Use it in ``IterableDataset.__iter__`` to shard the stream, or in ``worker_init_fn`` to configure the worker's
    dataset copy.

    Example:
        >>> info = get_worker_info()
        >>> shard = range(n) if info is None else range(info.id, n, info.num_workers)
    """
    return _worker_info


class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Start a new epoch with the same (persistent) workers."""


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and re-raised there with its traceback text."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        try:  # a class the main process cannot import (defined in a function) travels as RuntimeError
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_type = RuntimeError
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            raise KeyError(_KeyErrorMessage(msg))
        try:
            exception = self.exc_type(msg)
        except Exception:  # the type needs other constructor arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError shows its argument with repr(); this keeps the traceback text readable."""

    def __repr__(self):
        return str(self)


class _BatchPickler(pickle.Pickler):
    """Pickles a batch with every Tensor (torchish or HostTensor) as a plain numpy array."""

    def persistent_id(self, obj):
        if isinstance(obj, HostTensor):
            return ("tensor", obj.array, obj.requires_grad)
        if isinstance(obj, Tensor):
            return ("tensor", host_array(obj), obj.requires_grad)
        return None


class _BatchUnpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        _, array, requires_grad = pid
        t = to_tensor(array)
        return t.requires_grad_(True) if requires_grad else t


def encode_batch(data) -> bytes:
    buf = io.BytesIO()
    _BatchPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(data)
    return buf.getvalue()


def decode_batch(payload: bytes):
    return _BatchUnpickler(io.BytesIO(payload)).load()


def _host_collate(collate_fn):
    """The worker's version of the default collate functions; a user's ``collate_fn`` runs as given."""
    if collate_fn is default_collate:
        return _host_default_collate
    if collate_fn is default_convert:
        return _host_default_convert
    return collate_fn


def _seed_worker(base_seed, worker_id):
    """Seed Python's, numpy's and torchish's global generators for this worker (``base_seed + worker_id``), as
    PyTorch's workers do: numpy gets the SeedSequence state that PyTorch's ``_generate_state`` reproduces."""
    import torchish
    seed = base_seed + worker_id
    random.seed(seed)
    torchish.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers):
    """A worker process's life: take ``(task_idx, indices)`` from ``index_queue``, put ``(task_idx, batch)`` on
    ``data_queue``; ``None`` ends it, ``_ResumeIteration`` starts a new epoch (persistent workers)."""
    global _worker_info
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        collate_fn = _host_collate(collate_fn)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:  # the main process is alive
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = encode_batch(fetcher.fetch(index))
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
