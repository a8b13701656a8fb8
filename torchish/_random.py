"""Random number generators: PyTorch's ``Generator``/``manual_seed`` surface over JAX's counter-based PRNG.

A generator's state is a JAX key held in a Tensor (``_key``): every draw splits it (in the same jitted kernel
that samples), and rebinds the tensor. Keeping the state in a Tensor lets ``torchish.compile`` see it as state,
thread it through the compiled program and write it back, so dropout masks differ from step to step there too.
The streams are not PyTorch's: the same seed gives reproducible, but different, numbers.
"""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from ._tensor import Tensor
from .autograd.grad_mode import STATE


def _key_data(seed: int):
    return np.asarray(jax.random.key_data(jax.random.key(int(seed) & 0xFFFFFFFFFFFFFFFF, impl="threefry2x32")))


class Generator:
    """``torchish.Generator(device='cpu')``: an independent random stream."""

    def __init__(self, device="cpu"):
        from ._device import device as _dev
        self.device = _dev(device)
        self._seed = 67280421310721
        self._key = Tensor._make(jnp.asarray(_key_data(self._seed)))

    def manual_seed(self, seed):
        seed = int(seed)
        self._seed = seed
        self._key._set_value(jnp.asarray(_key_data(seed)))
        return self

    def seed(self):
        s = int(time.time_ns()) & 0xFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return Tensor._make(self._key._d)

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor) or tuple(new_state.shape) != tuple(self._key.shape):
            raise RuntimeError("Expected a torchish RNG state (from get_state()) of shape "
                               f"{list(self._key.shape)}")
        self._key._set_value(new_state._d.astype(self._key._d.dtype))
        return self

    def next_key(self):
        """Split off a fresh key (raw JAX key data) and advance the state; used inside traced code."""
        if STATE.recorder is not None:
            STATE.recorder.read((self._key,))
        k = jax.random.wrap_key_data(self._key._d, impl="threefry2x32")
        new, sub = jax.random.split(k)
        self._key._set_value(jax.random.key_data(new))
        return sub


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator (and return it), as ``torch.manual_seed``."""
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def generator_or_default(g):
    return default_generator if g is None else g
