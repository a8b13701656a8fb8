"""The main-process side of multi-process loading: start the workers, hand out batches of indices round-robin with
``prefetch_factor`` batches in flight per worker, put results back in sampler order, and shut the workers down.

Workers are started with the ``'spawn'`` method unless the loader names another: JAX runs threads, and a forked
copy of a process holding them can deadlock. ``JAX_PLATFORMS=cpu`` is placed in the environment the workers start
with, so they never claim an accelerator (a GPU's memory would otherwise be preallocated once per worker). A
dataset, ``collate_fn`` or ``worker_init_fn`` that pickle cannot send by reference (a class or a lambda defined in
a function, which PyTorch's forked workers inherit) travels by value through cloudpickle.

A spawned worker imports the main script again, so a script that iterates a loader from top-level code outside
``if __name__ == "__main__":`` (fine with PyTorch's forked workers on Linux) would start loading again in each
worker. For such a script the workers start without the main module (multiprocessing's preparation data does not
name it) and receive the dataset, ``collate_fn`` and ``worker_init_fn`` by value: the script runs once.
"""
from __future__ import annotations

import ast
import atexit
import contextlib
import itertools
import multiprocessing
import os
import pickle
import queue
import sys
import threading
import weakref

from ._worker import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration, \
    _worker_loop, decode_batch
from .dataloader import _BaseDataLoaderIter

_ENV_LOCK = threading.Lock()
_MAIN_LOCK = threading.Lock()
_PERSISTENT = weakref.WeakSet()  # live iterators with persistent workers, shut down at exit


@contextlib.contextmanager
def _cpu_only_children():
    """Start child processes with ``JAX_PLATFORMS=cpu`` (the variable is restored afterwards)."""
    with _ENV_LOCK:
        old = os.environ.get("JAX_PLATFORMS")
        os.environ["JAX_PLATFORMS"] = "cpu"
        try:
            yield
        finally:
            if old is None:
                del os.environ["JAX_PLATFORMS"]
            else:
                os.environ["JAX_PLATFORMS"] = old


_PARSED: dict = {}  # (path, mtime) -> the script's top-level statements' line spans and whether each is the guard


def _is_main_guard(node):
    """``if __name__ == "__main__":`` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.ops) != 1 \
            or not isinstance(node.test.ops[0], ast.Eq):
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and \
        any(isinstance(a, ast.Constant) and a.value == "__main__" for a in sides)


def _unguarded_main():
    """Whether the running main script is executing top-level code outside ``if __name__ == "__main__":`` (what a
    spawned worker, which imports the script, would run again)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or not os.path.isfile(path):
        return False  # an interactive session, ``python -c``: nothing to run again
    line, frame = None, sys._getframe(1)
    while frame is not None:  # the outermost frame of the script's top-level code
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
        frame = frame.f_back
    if line is None:
        return False
    try:
        key = (path, os.path.getmtime(path))
        spans = _PARSED.get(key)
        if spans is None:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            spans = _PARSED[key] = [(n.lineno, n.end_lineno, _is_main_guard(n)) for n in tree.body]
    except (OSError, SyntaxError, ValueError):
        return False
    return any(a <= line <= b and not guard for a, b, guard in spans)


@contextlib.contextmanager
def _main_not_imported():
    """Start processes whose preparation names no main module (they do not run the script again)."""
    main = sys.modules["__main__"]
    with _MAIN_LOCK:
        saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
        main.__dict__.pop("__file__", None)
        main.__spec__ = None
        try:
            yield
        finally:
            main.__dict__.update(saved)
            if "__spec__" not in saved:
                del main.__spec__


@atexit.register
def _shutdown_persistent_workers():
    for it in list(_PERSISTENT):
        it._shutdown_workers()


class _Probe(pickle.Pickler):
    """Pickles to nowhere, keeping nothing: whether an object pickles by reference, without holding its bytes."""

    def __init__(self):
        super().__init__(_Discard(), protocol=pickle.HIGHEST_PROTOCOL)


class _Discard:
    def write(self, b):
        return len(b)


def _picklable(obj):
    try:
        _Probe().dump(obj)
        return True
    except (pickle.PicklingError, AttributeError, TypeError):
        return False


class _ByValue:
    """An object sent to a worker by value (cloudpickle): the worker receives the object itself."""

    def __init__(self, obj):
        self.obj = obj

    def __reduce__(self):
        import cloudpickle
        return cloudpickle.loads, (cloudpickle.dumps(self.obj),)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Batches loaded by ``num_workers`` processes; ``_task_info[i]`` is ``(worker,)`` while task ``i`` is out and
    ``(worker, data)`` once it arrived ahead of its turn."""

    def __init__(self, loader):
        super().__init__(loader)
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        self._workers_status = [True] * self._num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context or multiprocessing.get_context("spawn")
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        forked = ctx.get_start_method() == "fork"
        env = _cpu_only_children() if not forked else contextlib.nullcontext()
        unguarded = not forked and _unguarded_main()
        dataset, collate_fn, init_fn = self._dataset, self._collate_fn, loader.worker_init_fn
        if not forked and (unguarded or not _picklable((dataset, collate_fn, init_fn))):
            dataset, collate_fn, init_fn = _ByValue(dataset), _ByValue(collate_fn), _ByValue(init_fn)
        with env, _main_not_imported() if unguarded else contextlib.nullcontext():
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(target=_worker_loop, daemon=True, args=(
                    self._iterable, dataset, index_queue, self._result_queue, self._done_event,
                    self._auto_collation, collate_fn, self._drop_last, self._base_seed, init_fn,
                    i, self._num_workers, self._persistent_workers))
                try:
                    w.start()
                except BaseException:
                    self._shutdown_workers()
                    raise
                self._index_queues.append(index_queue)
                self._workers.append(w)
        if self._persistent_workers:
            _PERSISTENT.add(self)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:  # results still queued from the last epoch arrive first and are dropped
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        try:
            return True, self._result_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            if failed:
                for i, w in enumerate(self._workers):
                    if w in failed:
                        self._mark_worker_as_unavailable(i)
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            # Skip tasks whose worker ran out of data (iterable datasets) and that will never arrive.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    self._task_info.pop(idx)
                    return self._process_data(data)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker that still has data
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return decode_batch(data)

    def _mark_worker_as_unavailable(self, worker_id):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        if _PERSISTENT is not None:  # None when called from __del__ during interpreter shutdown
            _PERSISTENT.discard(self)
        try:
            self._done_event.set()
            for i, q in enumerate(self._index_queues):
                if self._persistent_workers or self._workers_status[i]:
                    q.put(None)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._result_queue.cancel_join_thread()
            self._result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        if getattr(self, "_workers", None) is not None and not getattr(self, "_shutdown", True):
            self._shutdown_workers()
