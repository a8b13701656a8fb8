"""Output a traced call would make once: ``print``, writes to ``sys.stdout``/``sys.stderr``, ``logging`` records.

PyTorch's compiler breaks the graph at such a call, so the text appears at every call, with the values of that
call. A trace runs the user's Python once, to build a program that cannot print, so text written during it would
appear for the traced call only (and twice where the state took two traces to settle, or half a line where the
print met a tensor). :func:`held` makes the first output of the tracing thread a graph break instead, with none of
it written: the call then runs eagerly and writes it once, as every later call with these inputs does.
So does ``warnings.warn`` called by the user's code, under any name (the library's own warnings are left alone).
Other threads print as usual while a trace runs.
"""
from __future__ import annotations

import builtins
import contextlib
import logging
import sys
import threading
import warnings

from .errors import GraphBreakError

_OWN_LOGGERS = ("jax", "torchish")  # (their records and warnings while a trace runs are the library's own)


def _graph_break(what, frame):
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}: " if frame is not None else ""
    raise GraphBreakError(f"torchish.compile: {where}{what} inside the compiled function, which one XLA program cannot "
                          "repeat at every call (PyTorch's compiler breaks the graph there); it runs eagerly. Move it "
                          "outside the compiled function (return the values it shows) to compile it.")


class _Stream:
    """``sys.stdout`` or ``sys.stderr`` during a trace: the tracing thread's writes break the graph (but for the
    warnings module's: a warning is shown once), others' pass through."""

    def __init__(self, stream, thread, name):
        self._stream, self._thread, self._name = stream, thread, name

    def write(self, text):
        frame = sys._getframe(1)
        if threading.get_ident() == self._thread and text and frame.f_globals.get("__name__") != "warnings":
            _graph_break(f"writes to sys.{self._name}", frame)
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Tripwire:
    """The message pattern of a ``warnings.filters`` entry put first while a trace runs: the warnings machinery asks
    it about every warning, whatever name the user's code called ``warn`` by (``from warnings import warn as w``
    binds the function before the trace could replace it). Asked on the tracing thread by a caller outside
    torchish and JAX, it breaks the graph; else it matches nothing, and the other filters decide."""

    def __init__(self, thread):
        self.thread = thread

    def match(self, text):
        frame = sys._getframe(1)  # (the frame that called warn: the warnings machinery is C code)
        if threading.get_ident() == self.thread and not frame.f_globals.get("__name__", "").startswith(_OWN_LOGGERS):
            _graph_break(f"warnings.warn({text[:60]!r})", frame)
        return None


@contextlib.contextmanager
def held():
    """While a trace runs: ``print``, ``sys.stdout.write``/``sys.stderr.write`` and handled ``logging`` records of
    this thread raise a :class:`GraphBreakError` before writing anything."""
    thread = threading.get_ident()
    print_, call_handlers, streams = builtins.print, logging.Logger.callHandlers, (sys.stdout, sys.stderr)
    warn = warnings.warn

    def print_held(*args, **kwargs):
        if threading.get_ident() == thread:
            _graph_break("print()", sys._getframe(1))
        return print_(*args, **kwargs)

    def warn_held(message, category=None, stacklevel=1, source=None, **kwargs):
        frame = sys._getframe(1)
        if threading.get_ident() == thread and not frame.f_globals.get("__name__", "").startswith(_OWN_LOGGERS):
            _graph_break(f"warnings.warn({str(message)[:60]!r})", frame)
        return warn(message, category, stacklevel + 1, source, **kwargs)  # (+1: this frame)

    def call_handlers_held(logger, record):
        if threading.get_ident() == thread and not logger.name.startswith(_OWN_LOGGERS):
            frame = sys._getframe(1)
            while frame is not None and frame.f_globals.get("__name__") == "logging":
                frame = frame.f_back
            _graph_break(f"logs {str(record.msg)[:60]!r} to the logger {logger.name!r}", frame)
        return call_handlers(logger, record)
    builtins.print, logging.Logger.callHandlers, warnings.warn = print_held, call_handlers_held, warn_held
    sys.stdout, sys.stderr = _Stream(streams[0], thread, "stdout"), _Stream(streams[1], thread, "stderr")
    trip = ("default", _Tripwire(thread), Warning, None, 0)
    warnings.filters.insert(0, trip)  # (no _filters_mutated(): a warning shown once already stays skipped, as eagerly)
    try:
        yield
    finally:
        if trip in warnings.filters:
            warnings.filters.remove(trip)
        builtins.print, logging.Logger.callHandlers, warnings.warn = print_, call_handlers, warn
        if sys.stdout.__class__ is _Stream:  # (unless the function replaced it for good)
            sys.stdout = streams[0]
        if sys.stderr.__class__ is _Stream:
            sys.stderr = streams[1]
