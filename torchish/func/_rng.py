"""Where random ops inside a ``torchish.func`` transform take their samples from.

Inside a transform every draw asks ``torchish._random.key_source`` (when set) for its key instead of splitting the
generator's state. ``vmap``'s ``randomness`` argument picks the source: ``'error'`` refuses (as PyTorch),
``'same'`` keeps the enclosing source (one draw, shared by every batch element), ``'different'`` gives each element
its own draws: as PyTorch's batching rule, a draw of shape ``S`` takes a block of shape ``(B, *S)`` from the
generator's stream (``(B_outer, B_inner, *S)`` under nested vmaps) and each element its row (``batched_draw``, the
``_random.draw_hook``), so ``vmap(lambda x: x + rand(4), randomness='different')(x)`` adds the rows of
``rand(B, 4)``. Samplers whose stream use depends on their (batched) parameters (poisson, gamma, binomial) draw from
threefry keys split off one key from the stream instead. ``jacfwd`` maps over keys split up front
(``batch_keys``). ``to_jax``'s ``apply_fn`` draws from the key it is given. A source never writes a tracer into a
generator, so nothing leaks out of the transform.
"""
from __future__ import annotations

import contextlib
import itertools
import math

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import Tensor
from ..autograd.grad_mode import STATE

RANDOMNESS = ("error", "different", "same")


def check_randomness(randomness):
    if randomness not in RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")


def _refuse(_generator):
    raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the 'same' "
                       "or 'different' randomness flags on vmap or perform the randomness operation out of vmap")


class KeyStream:
    """A source splitting successive keys off ``key`` (a typed JAX key; a tracer inside the transform)."""

    def __init__(self, key):
        self.key = key

    def __call__(self, _generator):
        self.key, sub = jax.random.split(self.key)
        return sub


@contextlib.contextmanager
def key_source(source):
    """Install ``source`` (a callable ``generator -> key``) for the block; restores the previous one."""
    prev = _random.key_source
    _random.key_source = source
    try:
        yield
    finally:
        _random.key_source = prev


def base_key():
    """One key from the current source, or from the default generator (which it advances)."""
    return _random.default_generator.next_key()


def batch_keys(randomness, size):
    """The keys ``vmap`` maps over for ``randomness='different'`` (key data, ``size`` rows); None otherwise."""
    if randomness != "different":
        return None
    return jax.random.key_data(jax.random.split(base_key(), size))


def source_for(randomness, key_data=None):
    """The key source inside one vmapped call: ``key_data`` is this element's row of :func:`batch_keys`."""
    if randomness == "error":
        return _refuse
    if randomness == "same":
        return _random.key_source
    return KeyStream(jax.random.wrap_key_data(key_data, impl="threefry2x32"))


# ----------------------------------------------------------------------------------------------------------------
# vmap(..., randomness="different"): blocks of the generator's stream, one row per batch element

_LEVELS: list = []  # (axis name, batch size, randomness) of the vmaps being traced, outermost first
_NAMES = itertools.count()
_BLOCK_KINDS = frozenset({"uniform", "normal", "randint", "bernoulli", "exponential", "cauchy", "log_normal",
                          "geometric", "randperm", "multinomial"})


def axis_name():
    """A fresh JAX axis name for one vmap (its elements' indices pick their rows of a block)."""
    return f"torchish_vmap_{next(_NAMES)}"


@contextlib.contextmanager
def vmap_level(name, size, randomness):
    """The body of one vmap over ``size`` elements, mapped along the JAX axis ``name``."""
    _LEVELS.append((name, size, randomness))
    prev = _random.draw_hook, _random.key_source
    _random.draw_hook = batched_draw
    _random.key_source = (_refuse if randomness == "error" else prev[1] if randomness == "same" else _batched_key)
    try:
        yield
    finally:
        _LEVELS.pop()
        _random.draw_hook, _random.key_source = prev


def _different():
    return [(name, size) for name, size, randomness in _LEVELS if randomness == "different"]


def _rows(block, levels):
    """This element's part of ``block`` (leading dims: one per level, outermost first)."""
    for name, _ in levels:
        block = block[jax.lax.axis_index(name)]
    return block


@contextlib.contextmanager
def _outside(generator):
    """Draw from the generator itself, as outside the transform: no hook, no key source, and the eager kernels
    when its state is concrete (not inside torchish.compile's trace)."""
    prev = _random.draw_hook, _random.key_source, STATE.tracing
    _random.draw_hook = _random.key_source = None
    if STATE.recorder is None and not isinstance(_random.generator_or_default(generator)._state._d, jax.core.Tracer):
        STATE.tracing = 0
    try:
        yield
    finally:
        _random.draw_hook, _random.key_source, STATE.tracing = prev


def _batched_key(generator):
    """For samplers drawn from keys: one key from the stream, split into a key per element."""
    levels = _different()
    with _outside(generator):
        key = generator.next_key()
    keys = jax.random.split(key, math.prod(size for _, size in levels))
    return _rows(keys.reshape(tuple(size for _, size in levels)), levels)


def _block(gen, kind, shape, dtype, params, static, device):
    """A draw of ``shape`` from the generator itself (outside the transform)."""
    from ..ops.draw import draw
    with _outside(gen):
        return draw(kind, shape, dtype, params, gen, static, device)


def batched_draw(kind, shape, dtype, params, generator, static, device):
    """``ops.draw.draw`` under vmap: this element's row of a block drawn for the whole batch (None: the sampler
    takes keys instead, see ``_batched_key``)."""
    if _LEVELS and _LEVELS[-1][2] == "error":
        _refuse(generator)
    levels = _different()
    if not levels or kind not in _BLOCK_KINDS:
        return None
    lead = tuple(size for _, size in levels)
    if isinstance(device, Tensor) and isinstance(device._d, jax.core.Tracer):
        device = None
    gen = _random.generator_or_default(generator)
    batched = any(isinstance(p, jax.core.Tracer) for p in params)
    if kind == "randperm":  # (PyTorch's rule: one permutation after another)
        perms = [_block(gen, kind, shape, dtype, (), None, device) for _ in range(math.prod(lead))]
        return _rows(jnp.stack(perms).reshape(lead + tuple(shape)), levels)
    if kind == "bernoulli" and batched:  # u < p, from the uniforms the kernel would compare
        p = params[0]
        wide = jnp.dtype(p.dtype) == jnp.float64
        u = _block(gen, "uniform", lead + tuple(shape), jnp.float64 if wide else jnp.float32, (0.0, 1.0), None, device)
        u = _rows(u, levels)
        return (u < p.astype(u.dtype)).astype(dtype)
    if kind == "multinomial":  # probs / exponential keys (with replacement: an inverse-CDF search, from keys)
        probs = params[0]
        if static not in ("keys", False, True) or (static is True and shape[-1] != 1):
            return None
        q = _block(gen, "exponential", lead + tuple(probs.shape), probs.dtype, (1.0,), None, device)
        keys = probs / _rows(q, levels)
        return keys if static == "keys" else jnp.argmax(keys, axis=-1, keepdims=True).astype(jnp.int64)
    if batched:
        return None
    return _rows(_block(gen, kind, lead + tuple(shape), dtype, params, static, device), levels)
