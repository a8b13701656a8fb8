"""Random number generators: PyTorch's ``Generator``/``manual_seed`` surface over JAX's counter-based PRNG.

A generator's state is a threefry key held in a Tensor (``_key``): every draw splits it (in the same jitted kernel
that samples), and rebinds the tensor. Keeping the state in a Tensor lets ``torchish.compile`` see it as state,
thread it through the compiled program and write it back, so dropout masks differ from step to step there too.
The streams are not PyTorch's: the same seed gives reproducible, but different, numbers.
"""
from __future__ import annotations

import contextlib
import time

import jax.numpy as jnp
import numpy as np

from ._tensor import Tensor

_MASK64 = 0xFFFFFFFFFFFFFFFF
_DEFAULT_SEED = 67280421310721
_STATE_BYTES = 16  # 8 bytes of threefry key + 8 bytes of the seed it started from


def _check_seed(seed) -> int:
    """PyTorch's seed rules: any int in [-2**63, 2**64), negative ones taken modulo 2**64."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    seed = int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK64


def _key_data(seed: int) -> np.ndarray:
    """The threefry2x32 key of a 64-bit seed (as ``jax.random.key`` builds it: high word, low word)."""
    return np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], dtype=np.uint32)


class Generator:
    """``torchish.Generator(device='cpu')``: an independent random stream, passed as ``generator=`` to samplers.

    Example:
        >>> g = torchish.Generator().manual_seed(0)
        >>> a = torchish.rand(3, generator=g)
        >>> b = torchish.rand(3, generator=torchish.Generator().manual_seed(0))
        >>> bool((a == b).all())
        True
    """

    def __init__(self, device="cpu"):
        from ._device import device as _dev, to_jax
        self.device = _dev(device)
        if self.device.type != "cpu":
            to_jax(self.device)  # fails like PyTorch without the accelerator
        self._seed = _DEFAULT_SEED
        self._key = Tensor._make(jnp.asarray(_key_data(self._seed)))
        self._key._is_rng_key = True  # one stream for every device: torchish.compile moves it to the program's

    def manual_seed(self, seed):
        """Reset the stream to the one ``seed`` starts; returns the generator."""
        seed = _check_seed(seed)
        self._seed = seed
        self._set_key(jnp.asarray(_key_data(seed)))
        return self

    def seed(self):
        """Seed from the clock; returns the seed used."""
        s = int(time.time_ns()) & 0xFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (for :meth:`set_state`)."""
        key = np.asarray(self._key._concrete()).astype(np.uint32)
        raw = np.concatenate([key.view(np.uint8), np.array([self._seed], np.uint64).view(np.uint8)])
        return Tensor._make(jnp.asarray(raw))

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a ByteTensor, but got {type(new_state).__name__}")
        if new_state._v.dtype != np.uint8:
            raise TypeError("RNG state must be a ByteTensor")
        if new_state.numel() != _STATE_BYTES:
            raise RuntimeError(f"Expected a torchish RNG state of size {_STATE_BYTES} but found the input RNG state "
                               f"size to be {new_state.numel()}")
        raw = np.asarray(new_state._concrete()).reshape(-1)
        self._seed = int(raw[8:].view(np.uint64)[0])
        self._set_key(jnp.asarray(raw[:8].view(np.uint32)))
        return self

    def _set_key(self, value):
        self._key._set_value(value)  # reported to torchish.compile's recorder: the key is state it threads through

    def next_key(self):
        """Split off a fresh key (a typed JAX key) and advance the state; used inside traced code."""
        if key_source is not None:
            return key_source(self)
        import jax
        from .autograd.grad_mode import STATE
        if STATE.recorder is not None:
            STATE.recorder.read((self._key,))  # inside torchish.compile the key is an input of the program
        k = jax.random.wrap_key_data(self._key._d, impl="threefry2x32")
        new, sub = jax.random.split(k)
        self._set_key(jax.random.key_data(new))
        return sub


# Set by ``torchish.func`` while it runs a function under a JAX transform: ``key_source(generator)`` gives the key
# of one draw inside the trace (vmap's randomness modes, ``to_jax``'s explicit key) or raises. None otherwise.
key_source = None

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
    if g is None:
        return default_generator
    if not isinstance(g, Generator):
        raise TypeError(f"generator must be a torchish.Generator, not {type(g).__name__}")
    return g


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Run a block whose random draws do not change the default generator's stream afterwards.

    Example:
        >>> with torchish.random.fork_rng():
        ...     _ = torchish.rand(3)   # the stream outside the block is as if this never ran
    """
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
