"""Masks for :func:`~torchish.nn.attention.flex_attention.flex_attention`: PyTorch's ``BlockMask``,
``create_block_mask``, ``create_mask`` and the mask_mod combinators.

A mask_mod ``(b, h, q_idx, kv_idx) -> bool`` is a Python function written with tensor ops on index tensors. PyTorch
vmaps it over 0-d indices; torchish calls it ONCE with broadcastable index tensors (``b`` of shape ``[B,1,1,1]``,
``h`` ``[1,H,1,1]``, ``q_idx`` ``[1,1,Q,1]``, ``kv_idx`` ``[1,1,1,KV]``), which gives the same elementwise result in
a handful of vectorised ops (indexing a table with ``q_idx - kv_idx`` broadcasts like any advanced index).

A ``BlockMask`` keeps PyTorch's block-sparse layout (``kv_num_blocks``/``kv_indices``, their "full" twins and the
transposed ``q_*`` tables) so code that reads them works. As in PyTorch's eager CPU path, attention itself applies
the mask_mod per element: the block layout never changes the numbers.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import operator
import typing
import warnings
from enum import Enum

from ... import _dtype
from ._block_tables import block_tables, dq_write_order, ordered_to_dense, transpose_ordered

__all__ = ["BlockMask", "create_block_mask", "create_mask", "and_masks", "or_masks", "noop_mask"]

_score_mod_signature = typing.Callable[..., typing.Any]
_mask_mod_signature = typing.Callable[..., typing.Any]
_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def _torch():
    import torchish
    return torchish


def _default_device():
    """PyTorch's default device for masks: the accelerator when there is one, else the CPU."""
    return _torch().accelerator.current_accelerator() or "cpu"


class _ModificationType(Enum):
    """A score_mod takes 5 positional arguments, a mask_mod 4."""
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn) -> _ModificationType:
    """Whether ``fn`` is a score_mod or a mask_mod, from its number of positional arguments without defaults."""
    if hasattr(fn, "__code__"):
        code = fn.__code__
        n = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        n = sum(1 for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return _ModificationType.SCORE_MOD if n == 5 else _ModificationType.MASK_MOD


def noop_mask(batch, head, token_q, token_kv):
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=_dtype.bool, device=batch.device)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    """The mask_mod of a sliced BlockMask: using it raises PyTorch's error."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the mask_mod attribute is "
        "reset. You must set it from the original BlockMask's mask_mod.")


def or_masks(*mask_mods):
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=_dtype.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result
    return or_mask


def and_masks(*mask_mods):
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_dtype.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result
    return and_mask


def _index_grid(B, H, Q, KV, device, dtype):
    """Index tensors that broadcast to ``[B, H, Q, KV]``: what a mod sees in place of PyTorch's 0-d indices."""
    torch = _torch()
    return (torch.arange(B, dtype=dtype, device=device).view(B, 1, 1, 1),
            torch.arange(H, dtype=dtype, device=device).view(1, H, 1, 1),
            torch.arange(Q, dtype=dtype, device=device).view(1, 1, Q, 1),
            torch.arange(KV, dtype=dtype, device=device).view(1, 1, 1, KV))


def _apply_mask_mod(mask_mod, B, H, Q, KV, device, dtype):
    """``mask_mod`` over every (b, h, q, kv): a bool tensor of shape ``[B, H, Q, KV]``."""
    b, h, m, n = _index_grid(B, H, Q, KV, device, dtype)
    return mask_mod(b, h, m, n).expand(B, H, Q, KV)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense ``[B, H, Q_LEN, KV_LEN]`` bool mask of a mask_mod (True: attend), or of a score_mod (False where
    it gives -inf). ``B``/``H`` of None count as 1."""
    torch = _torch()
    device = _default_device() if device is None else device
    B = 1 if B is None else B
    H = 1 if H is None else H
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        b, h, m, n = _index_grid(B, H, Q_LEN, KV_LEN, device, _dtype.int64)
        out = mod_fn(torch.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n).expand(B, H, Q_LEN, KV_LEN)
        return ~torch.isneginf(out)
    return _apply_mask_mod(mod_fn, B, H, Q_LEN, KV_LEN, device, _dtype.int64)


def _adjust_num_blocks_and_indices(num_blocks, indices, new_num_rows, new_num_cols):
    torch = _torch()
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows]
    num_blocks = torch.where(num_blocks < new_num_cols, num_blocks, new_num_cols)
    num_blocks = torch.sum(indices < num_blocks[:, :, :, None], dim=-1).to(_dtype.int32)
    return num_blocks, indices


@dataclasses.dataclass(init=False, repr=False, eq=False)
class BlockMask:
    """PyTorch's block-sparse attention mask: for each (batch, head, row of ``BLOCK_SIZE[0]`` queries) the column
    blocks of ``BLOCK_SIZE[1]`` keys that are partly (``kv_num_blocks``/``kv_indices``) or fully
    (``full_kv_num_blocks``/``full_kv_indices``) attended, their transposes (``q_*``), the sequence lengths and the
    ``mask_mod`` that defines the mask element by element.

    (A dataclass, so that a function compiled with ``torchish.compile`` can return one, as
    ``torch.compile(create_block_mask)`` does.)"""

    seq_lengths: tuple
    kv_num_blocks: typing.Any
    kv_indices: typing.Any
    full_kv_num_blocks: typing.Any
    full_kv_indices: typing.Any
    q_num_blocks: typing.Any
    q_indices: typing.Any
    full_q_num_blocks: typing.Any
    full_q_indices: typing.Any
    dq_write_order: typing.Any
    dq_write_order_full: typing.Any
    dq_kv_order: typing.Any
    dq_kv_order_spt: typing.Any
    BLOCK_SIZE: tuple
    mask_mod: typing.Any

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE,) * 2,
                 mask_mod=noop_mask, *, dq_write_order=None, dq_write_order_full=None, dq_kv_order=None,
                 dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None,
                       compute_q_blocks=True, *, dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        """A BlockMask from its kv block tables (the q tables are derived from them)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = transpose_ordered(full_kv_num_blocks, full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, _torch().Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                   q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE,
                   mask_mod if mask_mod is not None else noop_mask, dq_write_order=dq_write_order,
                   dq_write_order_full=dq_write_order_full,
                   dq_kv_order=None if isinstance(dq_kv_order, bool) else dq_kv_order,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten=True):
        """The attributes as a tuple, in PyTorch's order."""
        block_size = self.BLOCK_SIZE if flatten else (self.BLOCK_SIZE,)
        seq_lengths = self.seq_lengths if flatten else (self.seq_lengths,)
        return (*seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *block_size, self.mask_mod)

    @property
    def shape(self):
        *batch_dims, _, _ = self.kv_indices.shape
        return tuple(batch_dims) + self.seq_lengths

    def numel(self):
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self):
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed_blocks = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed_blocks = computed_blocks + self.full_kv_num_blocks.sum()
        computed_size = computed_blocks.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self):
        """Returns a dense block that is equivalent to the block mask."""
        dense = ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """A picture of the blocks of each (batch, head): full, partly and not attended."""
        dense = self.to_dense().numpy()
        *batch_dims, num_rows, num_cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def block_vis(batch_idx):
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    frac = dense[batch_idx][r:r + row_step, c:c + col_step].astype("float32").mean()
                    vis += ("█" if frac == 1 else " " if frac == 0 else "░") * 2
                vis += "\n"
            return vis

        parts = []
        for i, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            parts.append(block_vis(batch_idx))
        return "\n".join(parts)

    def __str__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"

    def __repr__(self):
        def shape_or_none(x):
            return x.shape if x is not None else None
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(\n    kv_num_blocks={self.kv_num_blocks.shape},\n    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
                f"    q_indices={shape_or_none(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_or_none(self.full_q_indices)},\n    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)")

    def __getitem__(self, index):
        """The BlockMask of some batches/heads/query-block rows (its mask_mod raises when used, as in PyTorch)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1)) if isinstance(i, int) else i
                      for i, n in zip(padded, sizes))
        full = self.full_kv_num_blocks is not None
        return self._with_write_order(BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index],
            self.full_kv_num_blocks[index] if full else None, self.full_kv_indices[index] if full else None,
            BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error, seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None))

    def _with_write_order(self, new):
        """``new`` (a slice or crop of this mask) with its dQ write-order tables remade when this mask has them."""
        new.dq_kv_order_spt = self.dq_kv_order_spt
        if self.dq_write_order is not None:
            new.dq_write_order, new.dq_write_order_full = dq_write_order(new, new.dq_kv_order_spt)
        return new

    def _adjust(self, new_q_len, new_kv_len):
        """The mask cropped to its upper left ``new_q_len x new_kv_len`` corner (same mask_mod)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Adjusting BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata.")
        rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        kv_num, kv_idx = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = _adjust_num_blocks_and_indices(self.full_kv_num_blocks, self.full_kv_indices,
                                                                rows, cols)
        return self._with_write_order(self.from_kv_blocks(
            kv_num, kv_idx, full_num, full_idx, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
            seq_lengths=(new_q_len, new_kv_len), compute_q_blocks=self.q_indices is not None))

    def to(self, device):
        """The BlockMask with its tensors on ``device``."""
        def move(x):
            return x.to(device) if x is not None else None
        return BlockMask(self.seq_lengths, move(self.kv_num_blocks), move(self.kv_indices),
                         move(self.full_kv_num_blocks), move(self.full_kv_indices), move(self.q_num_blocks),
                         move(self.q_indices), move(self.full_q_num_blocks), move(self.full_q_indices),
                         self.BLOCK_SIZE, self.mask_mod, dq_write_order=move(self.dq_write_order),
                         dq_write_order_full=move(self.dq_write_order_full), dq_kv_order=move(self.dq_kv_order),
                         dq_kv_order_spt=self.dq_kv_order_spt)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    """The :class:`BlockMask` of ``mask_mod`` (``(b, h, q_idx, kv_idx) -> bool``, True: attend) for batch ``B``
    and heads ``H`` (None: broadcast over them) and the given lengths.

    Example:
        >>> def causal(b, h, q_idx, kv_idx):
        ...     return q_idx >= kv_idx
        >>> create_block_mask(causal, None, None, 256, 256, device="cpu").shape
        (1, 1, 256, 256)
    """
    device = _default_device() if device is None else device
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a torch.compile limitation. "
            "That limitation has since been addressed. So, to compile create_block_mask, we suggest doing "
            "torch.compile(create_block_mask). This still works for now, but will be removed in the future.",
            DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    mask = _apply_mask_mod(mask_mod, B, H, Q_LEN, KV_LEN, device, _dtype.int64)
    if mask.dtype != _dtype.bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    kv_num, kv_idx, q_num, q_idx, full_kv_num, full_kv_idx, full_q_num, full_q_idx = block_tables(
        mask, q_block, kv_block, separate_full_blocks)
    block_mask = BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, full_kv_num, full_kv_idx, q_num, q_idx, full_q_num,
                           full_q_idx, (q_block, kv_block), mask_mod)
    if compute_dq_write_order:
        block_mask.dq_write_order, block_mask.dq_write_order_full = dq_write_order(block_mask, dq_kv_order)
        block_mask.dq_kv_order, block_mask.dq_kv_order_spt = None, dq_kv_order
    return block_mask
