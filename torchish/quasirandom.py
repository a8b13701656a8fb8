"""``torch.quasirandom``: the Sobol low-discrepancy sequence.

The direction numbers are Joe and Kuo's (``new-joe-kuo-6.21201``, the table PyTorch uses), read from the copy SciPy
ships (SciPy is a dependency of JAX). Point ``i`` of the sequence is the XOR of the direction numbers picked by the
bits of ``i``'s Gray code (then the scramble's digital shift), so a draw of ``n`` points is computed in one
vectorised pass, whatever the position: the same points, in the same order, as PyTorch's one-at-a-time Gray-code
walk. Scrambling (``scramble=True``) applies a random linear matrix scramble and a digital shift drawn from
torchish's generator: a valid scrambled Sobol sequence, not PyTorch's random stream.
"""
from __future__ import annotations

import functools
import os

import numpy as np

from . import _dtype

__all__ = ["SobolEngine"]

_MAXBIT = 30
_MAXDIM = 21201


@functools.lru_cache(maxsize=1)
def _direction_table():
    import scipy.stats
    data = np.load(os.path.join(os.path.dirname(scipy.stats.__file__), "_sobol_direction_numbers.npz"))
    return data["poly"], data["vinit"]


def _initial_state(dimension):
    """The ``(dimension, 30)`` direction numbers, scaled so that column ``j`` holds bit ``29 - j`` and below."""
    poly, vinit = _direction_table()
    state = np.zeros((dimension, _MAXBIT), np.int64)
    state[0, :] = 1
    for d in range(1, dimension):
        p = int(poly[d])
        m = p.bit_length() - 1
        state[d, :m] = vinit[d, :m]
        for j in range(m, _MAXBIT):
            v = int(state[d, j - m])
            pow2 = 1
            for k in range(m):
                pow2 <<= 1
                if (p >> (m - 1 - k)) & 1:
                    v ^= pow2 * int(state[d, j - k - 1])
            state[d, j] = v
    return state * (1 << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64))


def _points(state, shift, start, n):
    """Integer Sobol points ``start .. start + n - 1`` (rows), XORed with ``shift``."""
    idx = np.arange(start, start + n, dtype=np.int64)
    gray = idx ^ (idx >> 1)
    acc = np.broadcast_to(shift, (n, state.shape[0])).copy()
    for b in range(_MAXBIT):
        bit = ((gray >> b) & 1).astype(bool)
        acc[bit] ^= state[:, b]
    return acc


class SobolEngine:
    """Draws from a (scrambled) Sobol sequence of ``dimension`` coordinates in ``[0, 1)``.

    Args:
        dimension: the number of coordinates, 1 to 21201.
        scramble: apply a random linear matrix scramble and digital shift.
        seed: the scramble's seed (None: drawn from the default generator, as PyTorch's, so ``manual_seed``
            fixes it).

    Example::

        >>> engine = torchish.quasirandom.SobolEngine(dimension=2)
        >>> engine.draw(4)
        tensor([[0.0000, 0.0000],
                [0.5000, 0.5000],
                [0.7500, 0.2500],
                [0.2500, 0.7500]])
    """

    MAXBIT = _MAXBIT
    MAXDIM = _MAXDIM

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _initial_state(dimension)
        shift = np.zeros(dimension, np.int64)
        if scramble:
            state, shift = self._scramble(state)
        self._state, self._shift = state, shift
        self.sobolstate = _tensor(state)
        self.shift = _tensor(shift)
        self.quasi = _tensor(shift)
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self, state):
        """A random lower-triangular (unit diagonal) binary matrix per dimension mixes each direction number's
        digits, and a random digital shift is XORed into every point."""
        from ._random import Generator
        from .ops.random import randint
        g = Generator().manual_seed(self.seed) if self.seed is not None else None
        shift_bits = randint(2, (self.dimension, _MAXBIT), generator=g).numpy()
        shift = shift_bits @ (1 << np.arange(_MAXBIT, dtype=np.int64))
        ltm = np.tril(randint(2, (self.dimension, _MAXBIT, _MAXBIT), generator=g).numpy())
        ltm[:, np.arange(_MAXBIT), np.arange(_MAXBIT)] = 1
        weights = 1 << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)       # digit k (MSB first) -> 2**(29-k)
        digits = (state[:, :, None] // weights[None, None, :]) & 1           # (D, column, digit)
        mixed = np.einsum("dkl,djl->djk", ltm, digits) & 1
        return mixed @ weights, shift

    def draw(self, n=1, out=None, dtype=None):
        """The next ``n`` points, shape ``(n, dimension)``, of ``dtype`` (the default float dtype by default)."""
        dtype = _dtype.get_default_dtype() if dtype is None else dtype
        ints = _points(self._state, self._shift, self.num_generated, n)
        if n:
            self.quasi = _tensor(ints[-1])
        result = _tensor(ints.astype(np.float64) / 2.0 ** self.MAXBIT).to(dtype)
        if self.num_generated == 0 and n:
            # PyTorch's first point is the one made at construction, in the default dtype of then (float32 rounding
            # shows in a float64 draw of a scrambled engine)
            result[0] = self._first_point[0].to(dtype)
        self.num_generated += n
        if out is not None:
            out.resize_(result.shape).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next ``2 ** m`` points; the total drawn must stay a power of two (the net's balance)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                             "If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self.quasi = self.shift.clone()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip the next ``n`` points."""
        if n > 0:
            self.quasi = _tensor(_points(self._state, self._shift, self.num_generated + n - 1, 1)[0])
        self.num_generated += n
        return self

    def __repr__(self):
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"


def _tensor(a):
    from .ops.creation import tensor
    return tensor(np.asarray(a))
