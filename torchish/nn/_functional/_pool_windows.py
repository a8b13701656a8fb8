"""Window geometry shared by the pooling ops (static: plain Python ints and numpy, evaluated while tracing).

PyTorch's pooling output sizes (``ceil_mode``: the last window must start inside the input or its left padding),
the adaptive ``[floor(i*in/out), ceil((i+1)*in/out))`` windows, and a max over windows given as a table of flat
input indices, which yields PyTorch's indices (into each ``(n, c)`` plane) and sends the gradient to the first
maximum of each window (a NaN wins: the last one, as PyTorch scans).
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

def out_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length along one dim."""
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_positions(n, k, s, p, d, out):
    """Input positions ``(out, k)`` covered by each window along one dim, and whether each is inside the input."""
    pos = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d
    return pos, (pos >= 0) & (pos < n)


def _adaptive_bounds(n, out):
    i = np.arange(out)
    return (i * n) // out, -((-(i + 1) * n) // out)


def _adaptive_positions(n, out):
    start, end = _adaptive_bounds(n, out)
    kmax = int((end - start).max()) if out else 1
    pos = start[:, None] + np.arange(kmax)[None, :]
    return np.minimum(pos, n - 1), pos < end[:, None]


def _window_table(per_dim, in_sizes):
    """Flat input indices ``(O, K)`` of every window element (the sentinel ``prod(in)`` where outside), the
    validity mask ``(O, K)`` and the output sizes."""
    nd = len(per_dim)
    outs = tuple(pos.shape[0] for pos, _ in per_dim)
    ks = tuple(pos.shape[1] for pos, _ in per_dim)
    flat = np.zeros(outs + ks, np.int64)
    valid = np.ones(outs + ks, bool)
    for d, (pos, ok) in enumerate(per_dim):
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = pos.shape
        flat = flat + pos.reshape(shape) * int(np.prod(in_sizes[d + 1:], dtype=np.int64))
        valid = valid & ok.reshape(shape)
    o, k = int(np.prod(outs, dtype=np.int64)), int(np.prod(ks, dtype=np.int64))
    sentinel = int(np.prod(in_sizes, dtype=np.int64))
    return np.where(valid, flat, sentinel).reshape(o, k), valid.reshape(o, k), outs


def _lowest(dtype):
    return -jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


# ----------------------------------------------------------------------------------------------------------------
# max over windows (with indices)


def _window_max_fwd(x, *, nd, geometry, adaptive):
    in_sizes = x.shape[-nd:]
    if adaptive:
        per_dim = [_adaptive_positions(n, o) for n, o in zip(in_sizes, geometry)]
    else:
        per_dim = [_pool_positions(n, *g) for n, g in zip(in_sizes, geometry)]
    table, valid, outs = _window_table(per_dim, in_sizes)
    lead = x.shape[:-nd]
    xf = x.reshape(lead + (math.prod(in_sizes),))                     # (not -1: a zero-size batch is allowed)
    xf = jnp.concatenate([xf, jnp.full(lead + (1,), _lowest(x.dtype), x.dtype)], axis=-1)
    win = xf[..., table]                                             # (*lead, O, K)
    val, k = window_max(win, valid)
    idx = jnp.asarray(table)[jnp.arange(table.shape[0]), k]
    return val.reshape(lead + outs), idx.reshape(lead + outs).astype(jnp.int64)


def window_max(win, valid=True):
    """The maximum over the last axis of ``win`` among the ``valid`` positions, and its position there: the first
    maximum, or the last NaN (a NaN wins, as PyTorch's kernels scan with ``val > max || isnan(val)``)."""
    masked = jnp.where(valid, win, _lowest(win.dtype))
    best = jnp.max(masked, axis=-1, keepdims=True)
    k = jnp.argmax(valid & (masked == best), axis=-1)                # first maximum among valid positions
    if jnp.issubdtype(win.dtype, jnp.floating):
        isn = valid & jnp.isnan(win)
        last_nan = isn.shape[-1] - 1 - jnp.argmax(isn[..., ::-1], axis=-1)
        k = jnp.where(jnp.any(isn, axis=-1), last_nan, k)
    return jnp.take_along_axis(win, k[..., None], axis=-1)[..., 0], k


def _reduce_max_fwd(x, *, nd, kernel, stride, pads):
    cfg = [(0, 0, 0)] * (x.ndim - nd) + [(lo, hi, 0) for lo, hi in pads]
    init = np.array(_lowest(x.dtype), x.dtype)                       # a constant: JAX then knows this is a max-pool
    xp = lax.pad(x, init, cfg)
    lead = (1,) * (x.ndim - nd)
    return lax.reduce_window(xp, init, lax.max, lead + kernel, lead + stride,
                             "VALID")




def pool_node(nd, name):
    """The node name of an ``nd``-d pooling op: PyTorch pools a 1-d input with its 2-d kernel between an unsqueeze
    and a squeeze, so its node there is the squeeze's."""
    return "SqueezeBackward1" if nd == 1 else name
