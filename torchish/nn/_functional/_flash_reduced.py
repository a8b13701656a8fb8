"""PyTorch's CPU flash attention kernel on half/bfloat16 inputs, with its rounding, as one registry op.

``aten/src/ATen/native/cpu/FlashAttentionKernel.cpp``: products accumulate in float32, the softmax runs in float32
over blocks of 512 keys (a running max and sum), the unnormalised weights are rounded to the input dtype before they
multiply the values, and the output is rounded once. The backward recomputes the weights from the log-sum-exp,
rounds them (and the score gradients) before each product, and adds the gradients of the queries (over key blocks)
and of the keys and values (over query blocks) into tensors of the input dtype, rounding at each addition. So
nanoGPT's attention under ``autocast(bfloat16)`` gives PyTorch's gradients, not ones an ulp away.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...ops.registry import defop

__all__ = ["SDPA_FLASH_REDUCED"]

_KV_BLOCK = 512


def _q_block(length):
    """The kernel's query block size for ``length`` queries (its gradient sums round once per block)."""
    return 256 if length >= 768 else 64 if length >= 192 else 32


def _mm(a, b):
    """A product of half/bfloat16 operands accumulated in float32."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)


def _flash_scores(q, k, mask, scale, causal, start, stop):
    """float32 scores of every query against keys ``start:stop``, scaled, masked."""
    s = _mm(q, jnp.swapaxes(k[..., start:stop, :], -1, -2)) * jnp.float32(scale)
    if causal:
        L = q.shape[-2]
        s = jnp.where(jnp.arange(L)[:, None] >= jnp.arange(start, stop)[None, :], s, -jnp.inf)
    if mask is not None:
        m = mask[..., start:stop] if mask.shape[-1] > 1 else mask
        s = jnp.where(m, s, -jnp.inf) if m.dtype == jnp.bool_ else s + m.astype(jnp.float32)
    return s


def _flash_reduced(q, k, v, mask, scale, causal):
    """(output in q's dtype, float32 log-sum-exp per query)."""
    run_max = jnp.full(q.shape[:-1] + (1,), -jnp.inf, jnp.float32)
    run_sum = jnp.zeros_like(run_max)
    dst = None
    for start in range(0, k.shape[-2], _KV_BLOCK):
        stop = min(start + _KV_BLOCK, k.shape[-2])
        s = _flash_scores(q, k, mask, scale, causal, start, stop)
        new_max = jnp.maximum(run_max, jnp.max(s, axis=-1, keepdims=True))
        empty = new_max == -jnp.inf
        e = jnp.where(empty, 0.0, jnp.exp(s - jnp.where(empty, 0.0, new_max)))
        rescale = jnp.where(empty, 1.0, jnp.exp(run_max - new_max))
        run_sum = jnp.sum(e, axis=-1, keepdims=True) + rescale * run_sum
        run_max = new_max
        part = _mm(e.astype(q.dtype), v[..., start:stop, :])
        dst = part if dst is None else dst * rescale + part
    total = jnp.where(run_sum == 0, 1.0, run_sum)
    lse = jnp.where(run_max == -jnp.inf, 0.0, run_max) + jnp.log(total)
    return (dst * (1 / total)).astype(q.dtype), lse


def _repeat_heads(t, rep):
    """Grouped-query attention: each key/value head serves ``rep`` consecutive query heads."""
    return t if rep == 1 else jnp.repeat(t, rep, axis=-3)


def _flash_reduced_fwd(q, k, v, mask, drop, *, scale, causal, rep):
    return _flash_reduced(q, _repeat_heads(k, rep), _repeat_heads(v, rep), mask, scale, causal)[0]


def _flash_reduced_vjp(g, q, k, v, mask, drop, *, out, scale, causal, rep):
    """The kernel's backward: gradients of query, key and value (the mask takes none on this path). With grouped
    heads, each key/value head's gradients gather its query heads' contributions one head after the other, rounded
    at each addition (a group's heads are not summed apart first)."""
    lse = _flash_reduced(q, _repeat_heads(k, rep), _repeat_heads(v, rep), mask, scale, causal)[1]
    dsum = jnp.sum(g.astype(jnp.float32) * out.astype(jnp.float32), axis=-1, keepdims=True)
    gk, gv = jnp.zeros(k.shape, q.dtype), jnp.zeros(v.shape, q.dtype)
    if rep == 1:
        gq, gk, gv = _backward_blocks(g, q, k, v, mask, lse, dsum, scale, causal, gk, gv)
        return gq, gk, gv, None, None

    def head(t, r):  # query head r of each group: (..., Hk * rep, L, X) -> (..., Hk, L, X)
        return t.reshape(t.shape[:-3] + (k.shape[-3], rep) + t.shape[-2:])[..., r, :, :]
    per_head = mask is not None and mask.ndim >= 3 and mask.shape[-3] > 1
    gqs = []
    for r in range(rep):
        gq, gk, gv = _backward_blocks(head(g, r), head(q, r), k, v, head(mask, r) if per_head else mask,
                                      head(lse, r), head(dsum, r), scale, causal, gk, gv)
        gqs.append(gq)
    gq = jnp.stack(gqs, axis=-3)  # (..., Hk, rep, L, E)
    return gq.reshape(q.shape), gk, gv, None, None


def _backward_blocks(g, q, k, v, mask, lse, dsum, scale, causal, gk, gv):
    """One pass of the kernel's backward over query blocks and key blocks, adding into ``gk``/``gv``."""
    dt, L, S = q.dtype, q.shape[-2], k.shape[-2]
    qb = _q_block(L)
    gq_rows = []
    for m0 in range(0, L, qb):
        m1 = min(m0 + qb, L)
        qm, gm = q[..., m0:m1, :], g[..., m0:m1, :]
        gq = jnp.zeros(qm.shape, dt)
        for start in range(0, min(m1, S) if causal else S, _KV_BLOCK):
            stop = min(start + _KV_BLOCK, S)
            rows = mask[..., m0:m1, :] if mask is not None and mask.ndim > 1 and mask.shape[-2] > 1 else mask
            s = _flash_scores(qm, k, rows, scale, False, start, stop)
            p = jnp.exp(s - lse[..., m0:m1, :])
            if causal:
                p = jnp.where(jnp.arange(m0, m1)[:, None] >= jnp.arange(start, stop)[None, :], p, 0.0)
            pv = _mm(jnp.swapaxes(p.astype(dt), -1, -2), gm)
            gv = gv.at[..., start:stop, :].set((gv[..., start:stop, :].astype(jnp.float32) + pv).astype(dt))
            ds = p * (_mm(gm, jnp.swapaxes(v[..., start:stop, :], -1, -2)) - dsum[..., m0:m1, :])
            ds = ds.astype(dt)
            gq = (gq.astype(jnp.float32) + jnp.float32(scale) * _mm(ds, k[..., start:stop, :])).astype(dt)
            gk = gk.at[..., start:stop, :].set(
                (gk[..., start:stop, :].astype(jnp.float32)
                 + jnp.float32(scale) * _mm(jnp.swapaxes(ds, -1, -2), qm)).astype(dt))
        gq_rows.append(gq)
    return jnp.concatenate(gq_rows, axis=-2), gk, gv


SDPA_FLASH_REDUCED = defop("scaled_dot_product_attention_flash_reduced", _flash_reduced_fwd,
                            vjp=_flash_reduced_vjp, grad_name="ScaledDotProductAttentionBackward0")
