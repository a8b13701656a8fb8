"""``torchish.futures``: PyTorch's ``torch.futures`` — a ``Future`` that one thread completes and others wait on.

``torchish.jit.fork(fn, *args)`` returns one. As PyTorch outside TorchScript, ``fork`` runs ``fn`` at once, in the
calling thread, so its result (or error) is there when ``fork`` returns. A ``Future`` made directly is completed by
``set_result`` / ``set_exception``, from any thread; ``wait()`` blocks until then.

Example:
    >>> fut = torchish.futures.Future()
    >>> doubled = fut.then(lambda f: f.value() * 2)
    >>> fut.set_result(torchish.tensor([1., 2.]))
    >>> doubled.wait()
    tensor([2., 4.])
"""
from __future__ import annotations

import threading
import traceback

__all__ = ["Future", "collect_all", "wait_all"]

_PENDING = object()


class Future:
    """The result of an asynchronous computation: pending until ``set_result`` or ``set_exception`` is called."""

    def __init__(self, *, devices=None):
        if devices:
            from ._device import device as _device
            for d in devices:
                if _device(d).index is None:
                    raise ValueError(f"Expected devices to have indices, got {d}")
        self._cond = threading.Condition()
        self._value = _PENDING
        self._error = None
        self._callbacks = []

    def done(self) -> bool:
        """Whether the future has a result or an exception."""
        return self._value is not _PENDING or self._error is not None

    def wait(self):
        """Block until the future completes, then return its value (or raise its exception)."""
        with self._cond:
            while not self.done():
                self._cond.wait()
        return self.value()

    def value(self):
        """The value of a completed future (its exception is raised here)."""
        if self._error is not None:
            raise self._error
        if self._value is _PENDING:
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: Future.value() of a future that has not "
                               "completed; call wait() first")
        return self._value

    def set_result(self, result) -> None:
        """Complete the future with ``result``; its waiters wake and its callbacks run, in this thread."""
        self._complete(result, None)

    def set_exception(self, result) -> None:
        """Complete the future with an error: ``wait()`` and ``value()`` raise it."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(_PENDING, result)

    def _complete(self, value, error):
        with self._cond:
            if self.done():
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future "
                                   "can only be marked completed once.")
            self._value, self._error = value, error
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` when the future completes (at once if it has)."""
        with self._cond:
            if not self.done():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> Future:
        """A new future holding ``callback(self)`` once this one completes; an error in ``callback`` completes it
        with a RuntimeError, as PyTorch's."""
        out = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - handed to the returned future, as PyTorch's
                where = "".join(traceback.format_tb(e.__traceback__))
                out.set_exception(RuntimeError("Got the following error when running the callback: "
                                               f"{type(e).__name__}: {e}\n\nAt:\n{where}"))
            else:
                out.set_result(result)
        self.add_done_callback(run)
        return out

    def __repr__(self):
        return f"<torch.jit.Future object at {hex(id(self))}>"

    __class_getitem__ = classmethod(lambda cls, item: cls)  # (``Future[int]`` in annotations)


def _check_futures(futures, who):
    futures = list(futures)
    for f in futures:
        if not isinstance(f, Future):
            raise TypeError(f"{who}(): incompatible function arguments. The following argument types are "
                            f"supported:\n    1. (arg0: collections.abc.Sequence[torch._C.Future]) -> "
                            f"torch._C.Future\n\nInvoked with: {futures}")
    return futures


def collect_all(futures) -> Future:
    """A future that completes when all of ``futures`` have, holding the list of them (an error among them is its
    error)."""
    futures = _check_futures(futures, "_collect_all")
    out = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            failed = next((f._error for f in futures if f._error is not None), None)
            if failed is not None:
                out.set_exception(failed)
            else:
                out.set_result(futures)
    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures) -> list:
    """Wait for every future and return their values (raising the first error)."""
    return [f.value() for f in collect_all(futures).wait()]


def _fork(func, *args, **kwargs):
    """``torch.fork``: ``func(*args, **kwargs)`` run at once, as a completed :class:`Future` (PyTorch's ``fork``
    outside TorchScript runs the call in the calling thread too; an error in ``func`` is raised here)."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def _wait(future):
    """``torch.wait``: the value of ``future``, once it completes."""
    return future.wait()


_fork.__name__, _wait.__name__ = "fork", "wait"
