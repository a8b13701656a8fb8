"""The array namespace the samplers compute with: ``JNP`` inside jitted kernels, ``NP`` for draws made on the host
(``ops/host_draws.py``). Both give the same bits: the samplers use only exactly rounded operations (IEEE
arithmetic, ``sqrt``, conversions, bit manipulation), never a library's ``log``/``sin``.

``xp.where``, ``xp.asarray``... are the module's own; ``bitcast`` and ``shift_right_logical`` are lax's and their
numpy equivalents.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


class _Namespace:
    def __init__(self, module, **extra):
        self._module = module
        self.__dict__.update(extra)

    def __getattr__(self, name):
        return getattr(self._module, name)


def _np_bitcast(x, dtype):
    return np.asarray(x).view(dtype)


def _np_shift_right_logical(x, n):
    x = np.asarray(x)
    unsigned = np.dtype(f"uint{x.dtype.itemsize * 8}")
    return (x.view(unsigned) >> unsigned.type(n)).view(x.dtype)


JNP = _Namespace(jnp, bitcast=jax.lax.bitcast_convert_type, shift_right_logical=jax.lax.shift_right_logical)
NP = _Namespace(np, bitcast=_np_bitcast, shift_right_logical=_np_shift_right_logical)
