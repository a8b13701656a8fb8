"""``torchish.autocast``: regions of a script where ops run in an op-specific dtype (PyTorch's autocast).

Example::

    >>> model = torchish.nn.Linear(4, 2)
    >>> with torchish.autocast("cpu"):              # bfloat16 on the CPU, float16 on cuda
    ...     y = model(torchish.ones(3, 4))           # linear is a lower-precision op
    >>> y.dtype
    torchish.bfloat16

The casting policy per op is in :mod:`torchish.amp.policy`; the state (per thread, per device type) in ``_state``.
"""
from __future__ import annotations

import collections.abc
import copy
import functools
import warnings

import jax
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import _casting  # noqa: F401  (installs the cast hook)
from ._state import (LOCAL, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
                     get_autocast_dtype, is_autocast_available, is_autocast_cache_enabled, is_autocast_enabled,
                     set_mode)

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_SUPPORTED = (_dtype.bfloat16, _dtype.float16)


def _cuda():
    from .. import cuda
    return cuda


class autocast:
    """Context manager and decorator: inside, ops autocast (see :mod:`torchish.amp.policy`).

    Args:
        device_type: ``'cpu'`` or ``'cuda'`` (any type :func:`is_autocast_available` accepts).
        dtype: the lower-precision dtype (default :func:`torchish.get_autocast_dtype`: bfloat16 on cpu, float16
            on cuda).
        enabled: False makes the region run without autocast (a nested ``enabled=False`` region turns it off).
        cache_enabled: whether casts of weights are reused within the region (default: the current setting).

    Example::

        >>> @torchish.autocast("cpu")
        ... def forward(x, w):
        ...     return x @ w
        >>> forward(torchish.ones(2, 2), torchish.ones(2, 2)).dtype
        torchish.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else _dtype.as_dtype(dtype)
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                cuda = _cuda()
                if not cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
                elif self.fast_dtype is _dtype.bfloat16 and not cuda.is_bf16_supported():
                    raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to "
                                       "float16.")
            elif self.fast_dtype not in _SUPPORTED:
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of "
                              + ", ".join(map(str, _SUPPORTED)) + " currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_mode(self.device, self._enabled, self.fast_dtype)
        autocast_increment_nesting()
        LOCAL.cache_enabled = bool(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:  # leaving the outermost region: drop the cached weight casts
            clear_autocast_cache()
        set_mode(self.device, self.prev, self.prev_fastdtype)
        LOCAL.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with copy.copy(self):  # a fresh instance per call: recursion and threads keep their own saved state
                return func(*args, **kwargs)
        return decorate_autocast


# ----------------------------------------------------------------------------------------------------------------
# custom autograd Functions


def _cast(value, device_type, dtype):
    """``value`` with its floating Tensors on ``device_type`` (float64 aside) cast to ``dtype``, through
    containers (strings and numpy arrays pass as they are)."""
    if isinstance(value, Tensor):
        # a traced value (inside torchish.compile) has no device of its own: it counts as on the autocast device
        on_device = isinstance(value._v, jax.core.Tracer) or value.device.type == device_type
        eligible = value.is_floating_point() and on_device and value.dtype is not _dtype.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for the ``forward`` of a custom :class:`torchish.autograd.Function`.

    Inside an autocast region with ``cast_inputs`` given, the floating Tensors passed in are cast to
    ``cast_inputs`` and ``forward`` runs with autocast off; with ``cast_inputs=None`` it runs under the current
    autocast state. Outside autocast it changes nothing. Pair it with :func:`custom_bwd` on ``backward``.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for the ``backward`` of a custom Function: runs it with the autocast state its ``forward``
    (decorated with :func:`custom_fwd`) ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
