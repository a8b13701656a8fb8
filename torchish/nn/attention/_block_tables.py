"""The block-sparse tables of a FlexAttention mask (PyTorch's ``BlockMask`` layout), each computed by one
registered op: the per-(batch, head) lists of attended column blocks of each row block (``kv_num_blocks`` /
``kv_indices``, split into partly and fully attended blocks), their transposes (the ``q_*`` tables), the dense 0/1
picture of a list, and the dQ write-order tables of PyTorch's deterministic backward. One XLA kernel per mask shape
for each, where the same steps as separate eager ops compiled some thirty."""
from __future__ import annotations

import jax.numpy as jnp

from ...ops.registry import apply, defop


def _jax_ordered_to_dense(num_blocks_in_row, col_indices, *, num_cols):
    """The int32 ``[..., rows, num_cols]`` 0/1 table of the blocks each row lists (its first ``num_blocks_in_row``
    entries of ``col_indices``)."""
    listed = jnp.arange(col_indices.shape[-1]) < num_blocks_in_row[..., None]
    hit = (col_indices[..., None] == jnp.arange(num_cols)) & listed[..., None]
    return hit.any(axis=-2).astype(jnp.int32)


def _jax_dense_to_ordered(dense):
    """Per row: how many blocks it has, and their columns first (in order), then the others (PyTorch's stable
    descending argsort of the 0/1 table)."""
    dense = dense.astype(jnp.int32)
    return dense.sum(axis=-1, dtype=jnp.int32), jnp.argsort(1 - dense, axis=-1, stable=True).astype(jnp.int32)


def _jax_transpose_ordered(num_blocks_in_row, col_indices):
    dense = _jax_ordered_to_dense(num_blocks_in_row, col_indices, num_cols=col_indices.shape[-1])
    return _jax_dense_to_ordered(jnp.swapaxes(dense, -2, -1))


def _jax_block_tables(mask, *, q_block, kv_block, separate_full):
    """From a bool ``[B, H, Q, KV]`` mask: (kv_num_blocks, kv_indices, q_num_blocks, q_indices) of the partly
    attended blocks, then the same four of the fully attended ones when ``separate_full`` (else of none)."""
    B, H, Q, KV = mask.shape
    counts = jnp.pad(mask.astype(jnp.int32), ((0, 0), (0, 0), (0, -Q % q_block), (0, -KV % kv_block)))
    nq, nkv = counts.shape[2] // q_block, counts.shape[3] // kv_block
    sums = counts.reshape(B, H, nq, q_block, nkv, kv_block).sum(axis=(3, 5))
    full = q_block * kv_block
    tables = [(sums > 0) & (sums < full), sums == full] if separate_full else [sums > 0]
    out = []
    for t in tables:
        out += [*_jax_dense_to_ordered(t), *_jax_dense_to_ordered(jnp.swapaxes(t, -2, -1))]
    return tuple(out)


_BLOCK_TABLES = defop("flex_block_tables", _jax_block_tables, differentiable=False)
_TRANSPOSE_ORDERED = defop("flex_transpose_ordered", _jax_transpose_ordered, differentiable=False)
_ORDERED_TO_DENSE = defop("flex_ordered_to_dense", _jax_ordered_to_dense, differentiable=False)


def block_tables(mask, q_block, kv_block, separate_full):
    """The kv and q tables of a bool ``[B, H, Q, KV]`` mask: 4 tensors of its partly attended blocks, then 4 of its
    fully attended ones (4 Nones without ``separate_full``)."""
    tables = apply(_BLOCK_TABLES, (mask,), q_block=q_block, kv_block=kv_block, separate_full=bool(separate_full))
    return tuple(tables) if separate_full else tuple(tables) + (None,) * 4


def ordered_to_dense(num_blocks_in_row, col_indices, num_cols):
    return apply(_ORDERED_TO_DENSE, (num_blocks_in_row, col_indices), num_cols=int(num_cols))


def transpose_ordered(num_blocks_in_row, col_indices):
    return apply(_TRANSPOSE_ORDERED, (num_blocks_in_row, col_indices))


def _jax_dq_write_order(kv_num, kv_idx, q_idx, full_kv_num, full_kv_idx, full_q_idx, *, descending):
    """For each (column block, listed row block) of the backward's q tables: the row block's rank among the blocks
    its row attends to, in ascending column order or (``descending``) descending; for the full blocks too."""
    B, H = jnp.broadcast_shapes(*(t.shape[:2] for t in (kv_idx, q_idx, full_kv_idx, full_q_idx) if t is not None))

    def expand(t):
        return jnp.broadcast_to(t, (B, H) + t.shape[2:])
    num_m, num_n = kv_idx.shape[2], q_idx.shape[2]
    dense = _jax_ordered_to_dense(expand(kv_num), expand(kv_idx), num_cols=num_n)
    if full_kv_num is not None:
        dense = jnp.minimum(dense + _jax_ordered_to_dense(expand(full_kv_num), expand(full_kv_idx), num_cols=num_n), 1)
    cumsum = jnp.cumsum(dense, axis=-1)
    rank = cumsum - dense
    if descending:
        rank = cumsum[..., -1:] - 1 - rank

    def gather(bwd_idx):
        b = jnp.arange(B)[:, None, None, None]
        h = jnp.arange(H)[None, :, None, None]
        n = jnp.arange(bwd_idx.shape[2])[None, None, :, None]
        return rank[b, h, jnp.clip(bwd_idx, 0, num_m - 1), n].astype(jnp.int32)
    return (gather(q_idx),) + ((gather(full_q_idx),) if full_q_idx is not None else ())


_DQ_WRITE_ORDER = defop("flex_dq_write_order", _jax_dq_write_order, differentiable=False)


def dq_write_order(block_mask, dq_kv_order):
    """PyTorch's dQ write-order tables (for its deterministic FLASH backward): ``(dq_write_order,
    dq_write_order_full)``."""
    bm = block_mask
    if bm.q_num_blocks is None or bm.q_indices is None:
        raise ValueError("BlockMask must have q_num_blocks and q_indices to compute dq_write_order")
    full_q = bm.full_q_indices if bm.full_kv_num_blocks is not None and bm.full_q_num_blocks is not None else None
    orders = apply(_DQ_WRITE_ORDER, (bm.kv_num_blocks, bm.kv_indices, bm.q_indices, bm.full_kv_num_blocks,
                                     bm.full_kv_indices, full_q), descending=bool(dq_kv_order))
    orders = orders if isinstance(orders, tuple) else (orders,)
    return orders[0], orders[1] if len(orders) > 1 else None
