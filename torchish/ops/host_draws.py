"""Draws computed on the host with numpy, bit for bit the compiled samplers' (and PyTorch's) numbers.

An eager draw on the CPU is a jitted sampler kernel per size class (``ops/draw.py``), and compiling one costs
~0.1–0.3 s: building a model (each Linear's ``kaiming_uniform_`` and bias ``uniform_`` a new size class) or making
its first data with ``rand``/``randn``/``randint`` used to spend seconds compiling samplers it called once. The
samplers whose arithmetic is exactly rounded — uniform (float16/32/64), float32 normal_fill (PyTorch's AVX2
Box-Muller, ``_avx_mathfun``), bernoulli from a number, randint, randperm — run here instead on the state read
from the generator (mt19937 twisted by numpy: ``_mt19937.host_words``) and give the same values and the same next
state as the kernel: they are the same functions, evaluated with numpy (``ops/_xp.py``).

Which path a draw takes is a ski rental (:func:`use_host`): a size class draws on the host until the time spent
there exceeds :data:`BUDGET` (about what compiling its kernel costs), then compiles; a class whose kernel exists
always uses it. One-off draws never compile, and a draw repeated every step (dropout masks) compiles soon.
"""
from __future__ import annotations

import time

import numpy as np

from .. import _mt19937 as mt
from . import _avx_mathfun
from . import _samplers as S
from ._xp import NP

BUDGET = 0.05  # seconds of host draws per size class before its kernel is compiled
MAX_WORDS = 1 << 20
# (not bfloat16: a float64 bound is rounded to it directly in the kernel; ml_dtypes' conversion may go through float32)
_FLOATS = frozenset(np.dtype(d) for d in ("float16", "float32", "float64"))
_INTS = frozenset(np.dtype(d) for d in ("uint8", "int8", "int16", "int32", "int64", "bool"))
_SPENT: dict = {}
COMPILED: set = set()  # size classes whose kernel draw.py compiled: they stay there


def eligible(kind, npdt, n, params, static) -> bool:
    """Whether the draw has a host version giving the kernel's bits."""
    if any(not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool) for p in params):
        return False  # (parameter tensors: elementwise parameters are left to the kernel)
    if kind == "uniform":
        ok = npdt in _FLOATS
    elif kind == "normal":
        ok = npdt == np.float32 and static is None and n >= S.FILL_MIN
    elif kind == "bernoulli":
        ok = static is None and (npdt in _FLOATS or npdt in _INTS)
    elif kind == "randint":
        ok = static in (None, "wide") and npdt in _INTS | _FLOATS
    elif kind == "randperm":
        ok = True
    else:
        return False
    return ok and n * 2 <= MAX_WORDS


def use_host(key) -> bool:
    """Ski rental: draw ``key``'s size class on the host while its time there is under :data:`BUDGET`."""
    return key not in COMPILED and _SPENT.get(key, 0.0) < BUDGET


def draw(key, kind, state, n, npdt, params, static):
    """``(next state, the n samples)`` as numpy arrays, from a concrete state; accounts the time to ``key``."""
    t0 = time.perf_counter()
    new, out = _SAMPLERS[kind](np.asarray(state), n, npdt, params, static)
    _SPENT[key] = _SPENT.get(key, 0.0) + time.perf_counter() - t0
    return new, out


def _uniform(state, n, npdt, params, static):
    per = S._per(npdt)
    words, new = mt.host_words(state, n * per, n * per)
    return new, S.uniform_values(S.unit(words, npdt), npdt, *params, NP)


def _normal(state, n, npdt, params, static):
    """PyTorch's normal_fill (float32): Box-Muller on each block of 16 uniforms; a last partial block from 16 fresh
    uniforms over the last 16 values (``_samplers._normal_fill`` with n known)."""
    mean, std = params
    tail = n % S.FILL_MIN
    words, new = mt.host_words(state, n + S.FILL_MIN, n + (S.FILL_MIN if tail else 0))
    u = S.unit(words, npdt)
    body = _avx_mathfun.box_muller_16(np.pad(u[:n], (0, -n % S.FILL_MIN)), NP)[:n]
    if tail:
        body[n - S.FILL_MIN:] = _avx_mathfun.box_muller_16(u[n:n + S.FILL_MIN], NP)
    return new, S.affine(body, S.cast(std, npdt, NP), S.cast(mean, npdt, NP), npdt, NP)


def _bernoulli(state, n, npdt, params, static):
    words, new = mt.host_words(state, 2 * n, 2 * n)
    return new, (S.u53(words) < np.float64(params[0])).astype(npdt)


def _randint(state, n, npdt, params, static):
    wide = static == "wide"
    per = 2 if wide else 1
    words, new = mt.host_words(state, n * per, n * per)
    val = mt.words64(words) if wide else words.astype(np.uint64)
    lo, hi = (int(p) for p in params)
    out = (val % np.uint64(hi - lo)).astype(np.int64) + np.int64(lo)
    return new, out.astype(npdt)


def _randperm(state, n, npdt, params, static):
    """Fisher-Yates with one word a step (``_samplers._randperm``): position i swaps with i + word % (n - i)."""
    if n < 2:
        return state, np.arange(n, dtype=npdt)
    words, new = mt.host_words(state, n - 1, n - 1)
    picks = (np.arange(n - 1) + words % (n - np.arange(n - 1)).astype(np.uint32)).tolist()
    perm = list(range(n))
    for i, z in enumerate(picks):
        perm[i], perm[z] = perm[z], perm[i]
    return new, np.asarray(perm, np.int64).astype(npdt)


_SAMPLERS = {"uniform": _uniform, "normal": _normal, "bernoulli": _bernoulli, "randint": _randint,
             "randperm": _randperm}
