"""PyTorch's CPU generator, mt19937, as pure functions on one uint32 array (the generator's state tensor).

The state is ``STATE_WORDS`` uint32 words: the 624 words of the Mersenne twister, the number of them already used
(624 means "twist before the next draw", which is where seeding leaves it), and the two Box-Muller caches PyTorch
keeps in its generator (a float64 value and a float32 value, each with a valid flag). A draw is one jitted function
``state -> (new state, samples)``: :func:`stream` twists as many blocks as the largest request needs (vectorised,
three slices per twist) and returns the tempered words from the current position on; :func:`advance` then moves the
state past the words the sampler actually used (which may depend on traced values). Seeding and the byte layout of
``get_rng_state`` (PyTorch's 5056-byte ``THGeneratorStateNew``) are host-side numpy.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

N = 624
_M = 397
POS = N  # words already used from the current block
DCACHE = N + 1  # float64 Box-Muller cache: low word, high word
DVALID = N + 3
FCACHE = N + 4  # float32 cache
FVALID = N + 5
STATE_WORDS = N + 6

_UPPER, _LOWER, _MATRIX_A = 0x80000000, 0x7FFFFFFF, 0x9908B0DF
_MASK32 = 0xFFFFFFFF


@functools.lru_cache(maxsize=4)  # (every new Generator starts from the default seed)
def seed_state(seed: int) -> np.ndarray:
    """The state ``manual_seed(seed)`` gives (read-only): init_genrand of the low 32 bits, every word to be twisted
    first."""
    mt = [seed & _MASK32]
    for i in range(1, N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32)
    state = np.zeros(STATE_WORDS, np.uint32)
    state[:N] = mt
    state[POS] = N
    state.setflags(write=False)
    return state


def _mix(cur, nxt, far, xp=jnp):
    y = (cur & _UPPER) | (nxt & _LOWER)
    return far ^ (y >> 1) ^ xp.where((y & 1) == 1, np.uint32(_MATRIX_A), np.uint32(0))


def twist(mt, xp=jnp):
    """The next 624 words. Word i reads old words i, i + 1 and i + 397; past the middle, i + 397 wraps onto words
    already replaced, so the block is computed in the slices whose inputs are ready. ``xp``: jax.numpy, or numpy
    for a draw on the host."""
    a = _mix(mt[0:227], mt[1:228], mt[397:624], xp)  # words 0..226
    b = _mix(mt[227:454], mt[228:455], a, xp)  # 227..453 read new 0..226
    c = _mix(mt[454:623], mt[455:624], b[:169], xp)  # 454..622 read new 227..395
    d = _mix(mt[623:], a[:1], b[169:170], xp)  # 623 reads new 0 and new 396
    return xp.concatenate([a, b, c, d])


def temper(y):
    y = y ^ (y >> 11)
    y = y ^ ((y << 7) & np.uint32(0x9D2C5680))
    y = y ^ ((y << 15) & np.uint32(0xEFC60000))
    return y ^ (y >> 18)


def stream(state, count: int):
    """``(words, blocks)``: the next ``count`` (static) tempered words, and the untempered blocks (the current one
    and every twist after it) that :func:`advance` picks the next state from."""
    mt = state[:N]
    twists = math.ceil(count / N) if count else 0
    if twists:
        _, later = jax.lax.scan(lambda m, _: (twist(m),) * 2, mt, None, length=twists)
        blocks = jnp.concatenate([mt[None], later])
    else:
        blocks = mt[None]
    flat = blocks.reshape(-1)
    pos = state[POS].astype(jnp.int32)
    words = jax.lax.dynamic_slice(flat, (pos,), (count,)) if count else flat[:0]
    if count >= _MATERIALIZE:
        words = jax.lax.cond(pos >= 0, lambda w: w, lambda w: w + jnp.uint32(0), words)
    return temper(words), blocks


# From this many words on, the stream is a buffer of its own (a conditional's result) instead of a dynamic slice
# fused into every sampler that reads it: XLA recomputes the slice's index arithmetic per element and per use there
# (a float32 randn of 524288 values: 19.4 -> 5.2 ms; of 1024: 67 -> 23 us; below ~256 words the two are alike).
_MATERIALIZE = 256


def advance(state, blocks, used):
    """The state after ``used`` words (a traced int at most the count :func:`stream` was asked for)."""
    end = state[POS].astype(jnp.int32) + jnp.asarray(used, jnp.int32)
    j = jnp.maximum((end - 1) // N, 0)
    block = jax.lax.dynamic_index_in_dim(blocks, j, keepdims=False)
    pos = (end - j * N).astype(jnp.uint32)
    return jnp.concatenate([block, pos[None], state[N + 1:]])


def words64(w):
    """random64 from consecutive pairs of words (first one high), as uint64 (jax or numpy arrays)."""
    w = w.astype(np.uint64)
    return (w[0::2] << np.uint64(32)) | w[1::2]


def host_words(state: np.ndarray, count: int, used: int):
    """numpy, for a concrete state: ``(the next count tempered words, the state after the first used of them)``,
    the words :func:`stream` and :func:`advance` give (only the blocks needed are twisted)."""
    pos = int(state[POS])
    blocks = [state[:N]]
    while len(blocks) * N - pos < max(count, used):
        blocks.append(twist(blocks[-1], np))
    words = temper(np.concatenate(blocks)[pos:pos + count])
    end = pos + used
    j = max((end - 1) // N, 0)
    return words, np.concatenate([blocks[j], np.array([end - j * N], np.uint32), state[N + 1:]])


def get_dcache(state):
    bits = state[DCACHE].astype(jnp.uint64) | (state[DCACHE + 1].astype(jnp.uint64) << 32)
    return state[DVALID] != 0, jax.lax.bitcast_convert_type(bits, jnp.float64)


def set_dcache(state, valid, value):
    bits = jax.lax.bitcast_convert_type(jnp.asarray(value, jnp.float64), jnp.uint64)
    new = jnp.stack([(bits & _MASK32).astype(jnp.uint32), (bits >> 32).astype(jnp.uint32),
                     jnp.asarray(valid).astype(jnp.uint32)])
    return jax.lax.dynamic_update_slice(state, new, (DCACHE,))


# --------------------------------------------------------------------------------------------------------------
# PyTorch's byte layout (CPUGeneratorImpl::get_state): THGeneratorState { uint64 the_initial_seed; int left; int
# seeded; uint64 next; uint64 state[624]; double normal_x, normal_y, normal_rho; int normal_is_valid; } then float
# next_float_normal_sample; bool is_next_float_normal_sample_valid; padded to 8 bytes.

_LAYOUT = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"), ("state", "<u8", (N,)),
                    ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"), ("normal_valid", "<i4"),
                    ("pad", "<i4"), ("fnormal", "<f4"), ("fvalid", "u1"), ("pad2", "u1", (3,))])
STATE_BYTES = _LAYOUT.itemsize  # 5056


def to_bytes(state: np.ndarray, seed: int) -> np.ndarray:
    s = np.asarray(state, np.uint32)
    rec = np.zeros((), _LAYOUT)
    rec["seed"], rec["seeded"] = seed, 1
    rec["left"] = N + 1 - int(s[POS])
    rec["next"] = int(s[POS]) % N if int(s[POS]) < N else 0
    rec["state"] = s[:N]
    if s[DVALID]:
        rec["normal_valid"] = 1
        rec["normal_y"] = np.array([s[DCACHE], s[DCACHE + 1]], np.uint32).view(np.float64)[0]
    if s[FVALID]:
        rec["fvalid"] = 1
        rec["fnormal"] = np.array([s[FCACHE]], np.uint32).view(np.float32)[0]
    return np.frombuffer(rec.tobytes(), np.uint8).copy()


def from_bytes(raw: np.ndarray) -> tuple[np.ndarray, int]:
    """``(state, seed)`` of PyTorch's layout; raises PyTorch's errors for a state it would refuse."""
    rec = np.frombuffer(np.ascontiguousarray(raw, np.uint8).tobytes(), _LAYOUT)[0]
    left = int(rec["left"])
    if not 1 <= left <= N + 1 or int(rec["seeded"]) not in (0, 1):  # PyTorch: legacy_pod.left / seeded checks
        raise RuntimeError("Invalid mt19937 state")
    state = np.zeros(STATE_WORDS, np.uint32)
    state[:N] = rec["state"].astype(np.uint32)
    state[POS] = N + 1 - left
    if rec["normal_valid"]:
        state[DCACHE:DCACHE + 2] = np.array([rec["normal_y"]], np.float64).view(np.uint32)
        state[DVALID] = 1
    if rec["fvalid"]:
        state[FCACHE] = np.array([rec["fnormal"]], np.float32).view(np.uint32)[0]
        state[FVALID] = 1
    return state, int(rec["seed"])
