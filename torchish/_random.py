"""Random number generators: PyTorch's ``Generator``/``manual_seed`` surface, with PyTorch's CPU stream.

A generator's state is the mt19937 state of PyTorch's CPU generator (``torchish._mt19937``) held in a Tensor
(``_state``): every draw runs a jitted kernel ``state -> (new state, samples)`` and rebinds the tensor. Seeded
draws therefore give PyTorch's numbers on every device (PyTorch's CUDA generator, philox, is not reproduced).
Keeping the state in a Tensor lets ``torchish.compile`` see it as state, thread it through the compiled program and
write it back, so compiled code draws the same stream as eager code. ``get_state``/``set_state`` use PyTorch's
5056-byte layout, so states move between torch and torchish.
"""
from __future__ import annotations

import contextlib
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np

from . import _mt19937 as mt
from ._tensor import Tensor

_MASK64 = 0xFFFFFFFFFFFFFFFF
_DEFAULT_SEED = 67280421310721

# A draw under ``vmap(..., randomness="same")`` whose stream advance depends on the batched values (poisson, gamma,
# binomial, dirichlet: their rejection loops) would leave a batched tracer in the generator, and every later draw
# would fail. PyTorch refuses any such op with a batched tensor input in that mode; this is its error, which
# ops.draw raises before sampling, and Generator._set_state for any batched write that gets past it.
_ERR_BATCHED_STATE = ("Vmap does not currently support same randomness with a batched tensor input. Please file an "
                      "issue with functorch")


def _check_seed(seed) -> int:
    """PyTorch's seed rules for ``Generator.manual_seed``: a Python int (not a bool) in [-2**63, 2**64), negative ones
    taken modulo 2**64. Anything else is PyTorch's error: numpy integers a TypeError, other types (floats, strings,
    tensors) a RuntimeError. ``torchish.manual_seed`` converts with ``int()`` first, as ``torch.manual_seed``."""
    if isinstance(seed, np.integer):
        raise TypeError("an integer is required")
    if not isinstance(seed, int) or isinstance(seed, bool):
        kind = type(seed)
        name = f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__
        raise RuntimeError(f"manual_seed expected a long, but got {name}")
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK64


@functools.lru_cache(maxsize=1)
def _key_kernel():
    def k(state):
        words, blocks = mt.stream(state, 2)
        return mt.advance(state, blocks, 2), words
    return jax.jit(k)


def _seed_array(seed):
    """The stream state ``manual_seed(seed)`` gives, on the device: a copy of the host array (a transfer; the
    ``jnp.asarray`` it replaces compiled a conversion program at import)."""
    return jax.device_put(mt.seed_state(seed), may_alias=False)


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
        if self.device.type == "cpu":
            self.device = _dev("cpu")  # (PyTorch's CPU generator has no index)
        elif self.device.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        else:
            try:
                to_jax(self.device)
            except (AssertionError, RuntimeError) as e:  # (no such accelerator: PyTorch's RuntimeError)
                raise RuntimeError(f"Cannot get {self.device.type.upper()} generator without ATen_{self.device.type} "
                                   "library.") from e
        self._seed = _DEFAULT_SEED
        self._state = Tensor._make(_seed_array(self._seed))
        self._state._is_rng_key = True  # one stream for every device: torchish.compile moves it to the program's

    def manual_seed(self, seed):
        """Reset the stream to the one ``seed`` starts; returns the generator."""
        seed = _check_seed(seed)
        self._seed = seed
        self._set_state(_seed_array(seed))
        return self

    def seed(self):
        """Seed from the operating system's entropy (64 bits, as PyTorch); returns the seed used."""
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor in PyTorch's CPU layout (for :meth:`set_state`, here or in PyTorch)."""
        return Tensor._make(jnp.asarray(mt.to_bytes(np.asarray(self._state._concrete()), self._seed)))

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._v.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != mt.STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {mt.STATE_BYTES} but found the input RNG "
                               f"state size to be {new_state.numel()}")
        state, self._seed = mt.from_bytes(np.asarray(new_state._concrete()).reshape(-1))
        self._set_state(jnp.asarray(state))
        return self

    def clone_state(self):
        """A new generator of the same device in this generator's state."""
        out = Generator(self.device)
        out._seed = self._seed
        out._set_state(self._state._d)
        return out

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def _set_state(self, value):
        if getattr(value, "batch_dim", None) is not None:  # (a jax.vmap BatchTracer: see _ERR_BATCHED_STATE)
            raise RuntimeError(_ERR_BATCHED_STATE)
        self._state._set_value(value)  # reported to torchish.compile's recorder: state it threads through

    def _read(self):
        """The state array for a draw; inside torchish.compile's trace, an input of the program."""
        from .autograd.grad_mode import STATE
        if STATE.recorder is not None:
            STATE.recorder.read((self._state,))
        return self._state._d

    def next_key(self):
        """A threefry key (typed JAX key) made of the next two words of the stream; for samplers drawn from JAX's
        PRNG (and for ``torchish.func``'s transforms, which may supply keys of their own)."""
        if key_source is not None:
            return key_source(self)
        new, words = _key_kernel()(self._read())
        self._set_state(new)
        return jax.random.wrap_key_data(words, impl="threefry2x32")


# The platform of the program torchish.compile is tracing ("cpu", "gpu", "tpu"; None outside a trace): draws on an
# accelerator take threefry keys from the stream instead of running mt19937's sequential twist there.
trace_platform = None


@contextlib.contextmanager
def tracing_on(platform):
    global trace_platform
    prev, trace_platform = trace_platform, platform
    try:
        yield
    finally:
        trace_platform = prev


# Set by ``torchish.func`` while it runs a function under a JAX transform: ``key_source(generator)`` gives the key
# of one draw inside the trace (vmap's randomness modes, ``to_jax``'s explicit key) or raises. None otherwise.
key_source = None

# Set by ``torchish.func.vmap`` while it traces its function: ``draw_hook(kind, shape, dtype, params, generator,
# static, device)`` returns one batch element's samples of a draw (its row of a block drawn for the whole batch),
# or None to draw as usual. None otherwise.
draw_hook = None


def _nondeterministic_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


default_generator = Generator()
default_generator.manual_seed(_nondeterministic_seed())  # as PyTorch's: unseeded programs differ from run to run


def manual_seed(seed):
    """Seed the default generator (and return it), as ``torch.manual_seed`` (which takes anything ``int()`` takes)."""
    default_generator.manual_seed(int(seed))
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
