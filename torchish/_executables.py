"""A bound on the number of compiled XLA executables a process keeps alive.

Eager torchish runs every op as a jitted JAX kernel, and JAX keeps each compiled kernel (one per op, dtype and shape
signature) for the life of the process. On XLA:CPU every executable holds about three memory mappings, so a long
program that meets many shapes (a data pipeline with ragged batches, a sweep over sizes, a test suite) approaches
Linux's ``vm.max_map_count`` (65530 by default) after some 20,000 compiles, and the next compile's ``mmap`` fails
inside LLVM: the process dies with a segfault in ``backend_compile_and_load``, not with a Python error.

PyTorch has no such limit (its kernels are not compiled per shape), so torchish bounds it itself. A JAX monitoring
listener counts backend compiles; every ``CHECK_EVERY`` compiles it reads the number of mappings from
``/proc/self/maps`` and, past ``FRACTION`` of the limit, drops JAX's compiled-kernel caches (``jax.clear_caches()``).
Kernels used again are compiled again; executables held elsewhere (a ``torchish.compile`` function's programs) stay.
The clear waits while a trace is in progress (it would discard what that trace is building) and happens at the next
compile after it; inside a ``deferred()`` block it waits for the block's end. Where ``/proc`` does not exist (macOS,
Windows) nothing is counted.
"""
from __future__ import annotations

import contextlib

import jax

try:
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # (a JAX without it: compiles inside a trace happen at most once per traced op, clear anyway)
    def _trace_state_clean():
        return True

CHECK_EVERY = 256  # compiles between two reads of /proc/self/maps (a read costs ~1 ms; a compile 10 ms or more)
FRACTION = 0.5  # of vm.max_map_count: clearing there leaves room for the mappings made between two checks

_MAPS = "/proc/self/maps"
_state = {"compiles": 0, "clears": 0, "pending": False, "limit": None, "deferred": 0}
# Called after each clear: records of what is compiled that the clear made stale (autograd/lowering.py's)
ON_CLEAR: list = []


def _read_limit():
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def map_count():
    """The number of memory mappings of this process, or None where ``/proc`` cannot tell."""
    try:
        with open(_MAPS) as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def stats():
    """Backend compiles counted since import, caches dropped, and the mapping limit in force (None: not bounded)."""
    return {"compiles": _state["compiles"], "clears": _state["clears"], "limit": _state["limit"]}


def set_limit(limit):
    """Bound the mappings at ``FRACTION * limit`` instead of the kernel's ``vm.max_map_count`` (None: the kernel's).
    Returns the previous limit. For tests and for processes that share the limit with other mapping-heavy code."""
    previous = _state["limit"]
    _state["limit"] = _read_limit() if limit is None else int(limit)
    return previous


def _on_duration(event, duration, **kwargs):
    if event != "/jax/core/compile/backend_compile_duration":
        return
    _state["compiles"] += 1
    if not (_state["pending"] or _state["compiles"] % CHECK_EVERY == 0) or _state["limit"] is None:
        return
    if not _state["pending"]:
        n = map_count()
        if n is None or n <= FRACTION * _state["limit"]:
            return
    if _state["deferred"] or not _trace_state_clean():
        _state["pending"] = True  # inside a trace or a deferred block: clear after it
        return
    _clear()


def _clear():
    _state["pending"] = False
    _state["clears"] += 1
    drop_caches()


def drop_caches():
    """Drop JAX's compiled kernels (``jax.clear_caches()``) and torchish's records of what is compiled (``ON_CLEAR``).
    The bound's clears and a changed matmul/conv precision (``torchish/_precision.py``) both come here."""
    jax.clear_caches()
    for fn in ON_CLEAR:
        fn()


@contextlib.contextmanager
def deferred():
    """Within the block no cache is dropped; a clear found due waits for the block's end (and happens there, outside
    a trace). For code that counts compiles or compiled-kernel cache entries across a block: the test suite runs each
    test in one, so a clear forced by the tests before cannot land between a test's two counts."""
    _state["deferred"] += 1
    try:
        yield
    finally:
        _state["deferred"] -= 1
        if not _state["deferred"] and _state["pending"] and _trace_state_clean():
            _clear()


def install():
    """Start counting (once per process; torchish's import calls it)."""
    if _state.get("installed"):
        return
    _state["installed"] = True
    _state["limit"] = _read_limit()
    jax.monitoring.register_event_duration_secs_listener(_on_duration)
