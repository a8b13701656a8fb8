"""A draw: ``draw(kind, shape, dtype, params, generator)`` returns a raw JAX array of samples and advances the
generator, with PyTorch's CPU samplers (``ops._samplers``) on the generator's mt19937 state (``torchish._random``).

Eagerly a draw is one cached jitted kernel ``(state, n, *params) -> (next state, samples)``; inside a trace
(torchish.compile, JAX transforms) the same samplers run on the traced state, so compiled code draws what eager
code draws. On accelerators (and in torchish.func's transforms) a draw takes a threefry key from the stream instead.
Argument checks with PyTorch's errors are the callers' (``ops.random``, ``nn.init``, dropout...).
"""
from __future__ import annotations

import functools
import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _meta
from .. import _random as _generators
from .._random import generator_or_default
from .._tensor import Tensor
from . import _samplers, host_draws, tracing
from .from_data import _jdev


# Samplers whose every element is drawn independently from scalar parameters draw a flat block of a power-of-two
# size and keep the first numel elements (the stream advances by numel): all shapes up to a bucket share one compiled
# sampler (the reshape is a trivial kernel). The traced path draws the same way, so compiled and eager code see the
# same stream. Small normal draws are PyTorch's serial kernel and keep their exact size.
_ELEMENTWISE = frozenset({"uniform", "normal", "bernoulli", "exponential", "cauchy", "log_normal", "geometric",
                          "randint"})
_MAX_BUCKET = 1 << 22
_SERIAL = frozenset({"gamma", "poisson", "binomial"})


def pow2_size(n):
    """The power-of-two draw size (at least 64) that ``n`` samples share a compiled sampler with."""
    return max(64, 1 << max(n - 1, 0).bit_length())


def _bucket(kind, shape, params):
    """The flat size to draw for ``shape``, or None to draw the exact shape."""
    if kind not in _ELEMENTWISE or any(getattr(p, "ndim", 0) for p in params):
        return None
    n = math.prod(shape)
    return pow2_size(n) if n <= _MAX_BUCKET else None


def _plan(kind, shape, params):
    """``(size, n)``: the flat size the mt19937 samplers draw and the numel the stream advances by; size None for
    the samplers drawn from one threefry key (their parameters are tensors: multinomial, poisson, gamma...)."""
    if kind == "randperm":
        return shape[0], shape[0]
    if kind == "multinomial":
        return shape, 0
    if kind in _SERIAL:  # PyTorch's rejection loops, element by element (torchish.ops._serial_samplers)
        n = math.prod(shape)
        return (pow2_size(n) if n <= _MAX_BUCKET else n), n
    if kind not in _ELEMENTWISE:
        return None, None
    n = math.prod(shape)
    bucket = _bucket(kind, shape, params)
    return (n if bucket is None else bucket), n


def _flat_params(kind, params, shape, size=None):
    """Parameter tensors of an elementwise sampler, broadcast to the draw and flattened as the samples are; padded
    with zeros to ``size`` (the serial samplers' bucket: a zero rate, concentration or count draws nothing).
    multinomial's probabilities stay as they are (its samples are not elementwise)."""
    if kind == "multinomial":
        return params
    n = math.prod(shape)
    pad = 0 if size is None or size <= n else size - n
    return tuple(jnp.pad(jnp.ravel(jnp.broadcast_to(p, shape)), (0, pad)) if getattr(p, "ndim", 0) else p
                 for p in params)


def _counter_based(platform):
    """Whether draws on this platform come from threefry keys taken from the stream (two words a draw) instead of
    mt19937 itself: on accelerators, where the twist's sequential loop would run as a chain of small kernels
    (PyTorch's CUDA generator is another stream, philox, anyway)."""
    return platform is not None and platform != "cpu"


def _keyed(kind, key, shape, dtype, params, static):
    """A draw from one threefry key; elementwise samplers draw their bucket and keep the first numel, so shapes
    share kernels (eager) and compiled code draws as eager code."""
    size, n = _plan(kind, shape, params)
    if size is None or kind in ("multinomial", "randperm"):
        return _samplers.keyed(kind, key, shape, dtype, params, static)
    return _samplers.keyed(kind, key, (size,), dtype, _flat_params(kind, params, shape, size), static)[:n].reshape(shape)


def _sample_traced(kind, gen, shape, dtype, params, static):
    """The draw inside a trace (torchish.compile, a JAX transform): the same samplers on the traced state."""
    if _generators.key_source is not None or _counter_based(_generators.trace_platform):
        # (torchish.func's transforms hand out keys of their own)
        return _keyed(kind, gen.next_key(), shape, dtype, params, static)
    size, n = _plan(kind, shape, params)
    if size is None:
        return _keyed(kind, gen.next_key(), shape, dtype, params, static)
    new, out = _samplers.sample(kind, gen._read(), size, n, dtype, _flat_params(kind, params, shape, size), static)
    gen._set_state(new)
    return out if kind == "multinomial" else out[:n].reshape(shape)


@functools.lru_cache(maxsize=1024)
def _kernel(kind, size, dtype, static):
    def k(state, n, *params):
        return _samplers.sample(kind, state, size, n, dtype, params, static)
    return jax.jit(k)


@functools.lru_cache(maxsize=1024)
def _take(shape):
    n = math.prod(shape)
    return jax.jit(lambda flat: flat[:n].reshape(shape))


def _target(device):
    """The JAX device samples go to: a Tensor's own device, a ``device=`` argument, else the default device (CPU,
    as in PyTorch, also where JAX's own default is an accelerator)."""
    if isinstance(device, Tensor):
        v = device._v
        if isinstance(v, jax.core.Tracer):
            return None
        devs = v.devices()
        return next(iter(devs)) if len(devs) == 1 else None  # sharded: samples follow the sharded input
    return _jdev(device)


def _on(x, jdev):
    """``x`` committed to ``jdev`` (moved only when it is elsewhere or uncommitted)."""
    if not isinstance(x, jax.Array) or jdev is None or (x.committed and x.devices() == {jdev}):
        return x
    return jax.device_put(x, jdev)


_NUMBERS: dict = {}


def _number_on(x, jdev):
    """A Python number (or numpy scalar) as an array on ``jdev``, cached: a number passed to a jitted kernel is
    transferred on every call (~4 µs each, half of a small draw's kernel call). float64 for floats, int64 for ints:
    the samplers convert their parameters themselves."""
    t = type(x)
    if t is float or t is np.float64:
        key = (float.hex(float(x)), jdev)  # (-0.0 and nan keyed as written)
    elif t is int or t is np.int32 or t is bool:
        key = (t, int(x), jdev)
        if t is int and not -2 ** 63 <= x < 2 ** 63:
            return x
    else:
        return x
    arr = _NUMBERS.get(key)
    if arr is None:
        if len(_NUMBERS) >= 4096:
            _NUMBERS.clear()
        arr = _NUMBERS[key] = jax.device_put(np.asarray(x, np.float64 if t is float else None), jdev)
    return arr


def draw(kind, shape, dtype, params=(), generator=None, static=None, device=None):
    """A raw JAX array of samples of ``kind`` (``"uniform"``, ``"normal"``, ``"bernoulli"``...); advances the
    generator. ``params`` are traced (values), ``static`` is a hashable option baked into the kernel. ``device``
    (a Tensor to sample beside, a device, or None for the default device) is where the sampling runs and the
    samples live: the generator's key moves there (torchish has one stream for all devices)."""
    npdt = _dtype.as_dtype(dtype).np
    shape = tuple(operator.index(s) for s in shape)  # (numpy integers too: a module built with np.int64 sizes)
    # numpy scalars are Python numbers (doubles) to PyTorch's parser, not float32 probability tensors
    params = tuple(p.item() if isinstance(p, np.generic) else p for p in params)
    if (type(device._v) is _meta.MetaArray) if isinstance(device, Tensor) else _meta.is_meta_device(device):
        return _meta.MetaArray(shape, npdt)  # the meta device: no samples, the generator does not move
    gen = generator_or_default(generator)
    if _generators.draw_hook is not None:  # (inside torchish.func.vmap)
        out = _generators.draw_hook(kind, shape, npdt, params, gen, static, device)
        if out is not None:
            return out
    if _generators.key_source is None and any(getattr(p, "batch_dim", None) is not None for p in params):
        # (a parameter batched by vmap(..., randomness="same"): refused before a kernel is queued, as PyTorch)
        raise RuntimeError(_generators._ERR_BATCHED_STATE)
    if kind == "randint" and static is None and params[1] - params[0] >= 2 ** 28:
        static = "wide"  # (measured on torch 2.13: random64 for any dtype from a range of 2**28 on)
    if kind == "bernoulli" and getattr(params[0], "dtype", np.float64) != np.float64:
        static = "narrow"  # a float32 probability tensor: float uniforms (one word each)
    reals = math.prod(shape) * (2 if np.issubdtype(npdt, np.complexfloating) else 1)  # (complex: its real view)
    if kind == "normal" and reals < _samplers.FILL_MIN:
        static = "serial"  # (PyTorch's serial kernel below 16 values: drawn in the 64-value bucket too)
    if tracing.active() or isinstance(gen._state._d, jax.core.Tracer) or _generators.key_source is not None:
        return _sample_traced(kind, gen, shape, npdt, params, static)
    target = _target(device)
    state = gen._state._d
    # beside a sharded tensor the state goes uncommitted, so the samples follow the sharded arrays they meet
    moved = _on(state, target) if target is not None else _device.uncommitted(state)
    if moved is not state:
        gen._state._v = moved  # the same state, on another device: not a write (no version bump)
    size, n = _plan(kind, shape, params)
    params = tuple(_on(p, target) for p in params)
    if size is None or _counter_based(target.platform if target is not None else None):
        return _keyed_kernel(kind, shape, npdt, static)(jax.random.key_data(gen.next_key()), *params)
    params = _flat_params(kind, params, shape, size)
    key = (kind, size, npdt, static)
    on_cpu = target is not None and target.platform == "cpu"
    if on_cpu and host_draws.use_host(key) and host_draws.eligible(kind, npdt, n, params, static):
        # (no kernel to compile for a one-off draw)
        new, out = host_draws.draw(key, kind, moved, n, npdt, params, static)
        gen._set_state(jax.device_put(new, target))
        return jax.device_put(out.reshape(shape), target)
    host_draws.COMPILED.add(key)
    if target is not None:
        params = tuple(_number_on(p, target) for p in params)
    new, out = _kernel(kind, size, npdt, static)(moved, _number_on(np.int32(n), target), *params)
    gen._set_state(new)
    if kind == "multinomial" or (size == n and len(shape) == 1):
        return out
    if n <= _HOST_TAKE and on_cpu:
        return jax.device_put(np.asarray(out)[:n].reshape(shape), target)  # (no slicing kernel to compile per shape)
    return _take(shape)(out)


_HOST_TAKE = 1 << 16


@functools.lru_cache(maxsize=1024)
def _keyed_kernel(kind, shape, dtype, static):
    return jax.jit(lambda key_data, *params: _keyed(
        kind, jax.random.wrap_key_data(key_data, impl="threefry2x32"), shape, dtype, params, static))
