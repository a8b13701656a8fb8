"""Autocast state, per thread and per device type, behind PyTorch's ``torch.*autocast*`` functions.

``LOCAL.modes`` maps each device type whose autocast is on (in this thread) to its lower-precision dtype; it is
what the cast hook reads. While any thread has autocast on, ``registry.autocast_hook`` is the hook; otherwise it
is None and ``apply`` pays nothing for autocast.
"""
from __future__ import annotations

import functools
import threading
import warnings

from .. import _device, _dtype
from ..ops import registry

# PyTorch's _AUTOCAST_SUPPORTED_DEVICES and its default lower-precision dtype per device type
_DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16, "mtia": _dtype.float16,
                   "maia": _dtype.float16, "xpu": _dtype.float16, "ipu": _dtype.float16, "hpu": _dtype.bfloat16,
                   "xla": _dtype.bfloat16, "privateuseone": _dtype.float16, "mps": _dtype.float16}


class _Local(threading.local):
    def __init__(self):
        self.enabled = {}  # device type -> True while its autocast is on
        self.dtypes = dict(_DEFAULT_DTYPES)
        self.modes = {}  # device type -> dtype, for the enabled ones: what the cast hook reads
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(weight) -> (weight, its value, grad mode, cast): see _casting._cached_cast


LOCAL = _Local()

_LOCK = threading.Lock()
_ON_THREADS = set()  # threads with some autocast on; the hook is installed while this is not empty
HOOK = None  # set by _casting: the function installed as registry.autocast_hook


@functools.lru_cache(maxsize=64)
def parse_device_type(name) -> str:
    """The device type a ``device_type`` argument names (``"cuda:0"`` -> ``"cuda"``), validated as PyTorch does."""
    if not isinstance(name, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(name)}`")
    return _device.device(name).type


def _supported(name) -> str:
    dev = parse_device_type(name)
    if dev not in _DEFAULT_DTYPES:
        raise RuntimeError(f"unknown device type for autocast in get_autocast_dispatch_key_from_device_type: {dev}")
    return dev


def _refresh():
    s = LOCAL
    s.modes = {d: s.dtypes[d] for d, on in s.enabled.items() if on}
    me = threading.get_ident()
    with _LOCK:
        if s.modes:
            _ON_THREADS.add(me)
        else:
            _ON_THREADS.discard(me)
        registry.autocast_hook = HOOK if _ON_THREADS else None


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be used for ``device_type`` (``'cpu'``, ``'cuda'``, ...)."""
    return parse_device_type(device_type) in _DEFAULT_DTYPES


def is_autocast_enabled(device_type=None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: ``'cuda'``, as in PyTorch)."""
    return bool(LOCAL.enabled.get("cuda" if device_type is None else _supported(device_type)))


def set_autocast_enabled(device_type, enabled=None) -> None:
    """``set_autocast_enabled(device_type, enabled)``; the one-argument form sets ``'cuda'``."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    LOCAL.enabled[_supported(device_type)] = bool(enabled)
    _refresh()


def set_mode(device_type, enabled, dtype) -> None:
    """Enable/disable autocast for ``device_type`` and set its dtype at once (``autocast.__enter__/__exit__``)."""
    dev = _supported(device_type)
    LOCAL.enabled[dev] = bool(enabled)
    LOCAL.dtypes[dev] = _dtype.as_dtype(dtype)
    _refresh()


def get_autocast_dtype(device_type) -> _dtype.dtype:
    """The lower-precision dtype autocast uses for ``device_type`` (default: bfloat16 on cpu, float16 on cuda)."""
    return LOCAL.dtypes[_supported(device_type)]


def set_autocast_dtype(device_type, dtype) -> None:
    LOCAL.dtypes[_supported(device_type)] = _dtype.as_dtype(dtype)
    _refresh()


def _deprecated(old, new):
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled) -> None:
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return LOCAL.cache_enabled


def set_autocast_cache_enabled(enabled) -> None:
    LOCAL.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    LOCAL.cache.clear()


def autocast_increment_nesting() -> int:
    LOCAL.nesting += 1
    return LOCAL.nesting


def autocast_decrement_nesting() -> int:
    LOCAL.nesting -= 1
    return LOCAL.nesting


def signature():
    """The autocast state that changes what a traced program computes (``torchish.compile``'s cache key)."""
    modes = LOCAL.modes
    return tuple(sorted((d, dt.name) for d, dt in modes.items())) if modes else ()
