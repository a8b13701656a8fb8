"""Where random ops inside a ``torchish.func`` transform take their keys from.

Inside a transform every draw asks ``torchish._random.key_source`` (when set) for its key instead of splitting the
generator's state. ``vmap``'s ``randomness`` argument picks the source: ``'error'`` refuses (as PyTorch),
``'same'`` keeps the enclosing source (one draw, shared by every batch element), ``'different'`` splits a batch of
keys that ``vmap`` maps over, so each element sees its own draws. ``to_jax``'s ``apply_fn`` draws from the key it is
given. A source never writes a tracer into a generator, so nothing leaks out of the transform.
"""
from __future__ import annotations

import contextlib

import jax

from .. import _random

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
