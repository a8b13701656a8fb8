"""torchish.nn.functional: ``embedding`` and ``embedding_bag``.

A lookup is one registry op whose gradient JAX derives (a scatter-add into the weight). PyTorch's gradient options
are written into the forward without changing its value: ``padding_idx`` rows take ``stop_gradient`` and
``scale_grad_by_freq`` divides the gradient path (only) by each index's count. ``max_norm`` renormalises the
referenced weight rows IN PLACE before the lookup, as PyTorch does.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype, _precision
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops import tracing
from ...ops.registry import apply, defop
from ._args import need_int, need_tensor, need_tensor_attr
from .embedding_sparse import sparse_variant

__all__ = ["embedding", "embedding_bag"]


def _bag_divisors(counts, idx):
    """The count each position's gradient is divided by in PyTorch's CPU ``embedding_bag`` backward. Its loop over
    the unique indices (ascending, group ``g``) divides by ``counts[sorted_indices[g]]``: the count of the value at
    POSITION ``g`` of the sorted indices, not of the group's own value. The two agree until a value repeats; after
    that PyTorch divides later groups by other values' counts (indices [0, 2, 2, 5, 2, 1]: row 5's gradient is
    divided by 3). Matched here so gradients equal PyTorch's."""
    rank = jnp.cumsum(counts > 0) - 1                  # group of each present value
    return counts[jnp.sort(idx)[rank[idx]]]


@jax.custom_vjp
def _no_sparse_freq_grad(x):
    """``x``, whose gradient raises PyTorch's error: a sparse gradient scaled by frequency (raised when the backward
    is traced, i.e. when it first runs, as PyTorch raises in backward)."""
    return x


def _refuse_fwd(x):
    return x, None


def _refuse_bwd(_, g):
    raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")


_no_sparse_freq_grad.defvjp(_refuse_fwd, _refuse_bwd)


def _grad_options(w, idx, emb, padding_idx, scale_grad_by_freq, bag=False, sparse=False):
    """``emb`` (rows of ``w`` at ``idx``) with PyTorch's gradient options applied to its gradient only (``bag``:
    ``embedding_bag``'s frequency divisors, see :func:`_bag_divisors`)."""
    if scale_grad_by_freq and sparse:
        return _no_sparse_freq_grad(emb)
    if scale_grad_by_freq:
        flat = idx.reshape(-1)
        counts = jnp.zeros((w.shape[0],), emb.dtype).at[flat].add(1)
        counts = _bag_divisors(counts, flat) if bag else counts[idx]
        frozen = jax.lax.stop_gradient(emb)
        emb = frozen + (emb - frozen) / counts[..., None]
    if padding_idx is not None:
        emb = jnp.where((idx == padding_idx)[..., None], jax.lax.stop_gradient(emb), emb)
    return emb


def _embedding_fwd(w, idx, *, padding_idx, scale_grad_by_freq, sparse=False):
    # w[idx], not jnp.take: that drops idx's shape when w has no rows (PyTorch's result is idx.shape + (dim,))
    return _grad_options(w, idx, w[idx], padding_idx, scale_grad_by_freq, sparse=sparse)


_EMBEDDING = defop("embedding", _embedding_fwd, grad_name="EmbeddingBackward0")


def _renorm_fwd(w, idx, *, max_norm, norm_type):
    """The renormalised weight; to a program's own differentiation (torchish.compile's backward of a step that
    looks rows up) it is the weight itself, as PyTorch's in-place renorm under no_grad is invisible to autograd
    (differentiated through, the traced step's weight gradient had the renorm's Jacobian in it)."""
    return _straight_through(w, idx, max_norm, norm_type)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _straight_through(w, idx, max_norm, norm_type):
    return _renormed(w, idx, max_norm, norm_type)


def _straight_through_fwd(w, idx, max_norm, norm_type):
    return _renormed(w, idx, max_norm, norm_type), idx


def _straight_through_bwd(max_norm, norm_type, idx, g):
    return g, np.zeros(idx.shape, jax.dtypes.float0)


_straight_through.defvjp(_straight_through_fwd, _straight_through_bwd)


def _renormed(w, idx, max_norm, norm_type):
    flat = idx.reshape(-1)
    rows = w[flat]
    if norm_type == float("inf"):
        norm = jnp.max(jnp.abs(rows), axis=1)
    else:
        norm = jnp.sum(jnp.abs(rows) ** norm_type, axis=1) ** (1.0 / norm_type)
    scale = jnp.where(norm > max_norm, max_norm / (norm + 1e-7), 1.0).astype(w.dtype)
    return w.at[flat].set(rows * scale[:, None])      # duplicates write the same row: deterministic


_RENORM = defop("embedding_renorm", _renorm_fwd, differentiable=False)


def _renorm_(weight, idx, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows referenced by ``idx`` with norm above ``max_norm`` are scaled down."""
    with no_grad():
        weight.copy_(apply(_RENORM, (weight.detach(), idx), max_norm=float(max_norm), norm_type=float(norm_type)))


def _bag_index_message(padding_idx, mode, num, dtype=None):
    """embedding_bag's eager message for the first index outside ``[0, num)`` from its general kernel (max mode, or
    a padding_idx), which names the value; None for the fast sum/mean kernel, whose message depends on where its
    parallel loops meet the index (the default message is one of its)."""
    if padding_idx is None and mode != "max" and dtype is not _dtype.float64:  # (float64: the general kernel)
        return None

    def message(a):
        bad = a[(a < 0) | (a >= num)]
        return f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad[0]}"
    return message


def _check_indices(input, num, name, err=IndexError, message=None):
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_dtype.cpp_tensor_type_name(input.dtype)} instead (while checking "
                           f"arguments for {name})")
    msg = ("index out of range in self" if err is IndexError else "Expected i < index_size to be true, but got "
           "false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)")
    d = input._d
    if isinstance(d, jax.core.Tracer):  # (checked before torchish.compile's program runs)
        tracing.defer_check((d < 0) | (d >= num), d, err, lambda b: msg)
        return
    if input.is_meta or d.size == 0:  # (no values to check)
        return
    a = np.asarray(d)
    if a.min() < 0 or a.max() >= num:
        raise err(msg if message is None else message(a.reshape(-1)))


def _check_renorm_indices(input, weight):
    """``embedding_renorm_``'s error: it selects each distinct index's row in ascending order, so the smallest
    index outside ``[-num, num)`` is the one named (a negative one in range reaches the lookup's own check)."""
    d = input._d
    if isinstance(d, jax.core.Tracer) or input.is_meta or d.size == 0 or input.dtype not in (_dtype.int64,
                                                                                             _dtype.int32):
        return
    num = weight.shape[0]
    bad = [int(v) for v in np.unique(np.asarray(d)) if not -num <= v < num]
    if bad:
        raise IndexError(f"select(): index {bad[0]} out of range for tensor of size {list(weight.shape)} at "
                         "dimension 0")


def _padding_idx(padding_idx, num, msg="Padding_idx must be within num_embeddings"):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num:
            raise AssertionError(msg)
    elif padding_idx < 0:
        if padding_idx < -num:
            raise AssertionError(msg)
        padding_idx = num + padding_idx
    return int(padding_idx)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` at the integer ``input``: output shape ``input.shape + (embedding_dim,)``.

    Args:
        padding_idx: the row at this index gets no gradient.
        max_norm: rows looked up whose ``norm_type``-norm exceeds it are renormalised in ``weight``, in place.
        scale_grad_by_freq: divide each row's gradient by the number of times it occurs in ``input``.
        sparse: ``weight``'s gradient is a sparse COO tensor, as PyTorch's: one entry per looked-up index (those
            holding ``padding_idx`` left out), uncoalesced (see ``embedding_sparse.py``). Inside
            ``torchish.compile`` a step whose backward reaches such a lookup runs eagerly (a graph break).

    Example::

        >>> w = torchish.arange(6.).reshape(3, 2)
        >>> F.embedding(torchish.tensor([2, 0]), w)
        tensor([[4., 5.],
                [0., 1.]])
    """
    if max_norm is not None:  # (PyTorch's wrapper: input.contiguous(), then a renorm of weight.detach())
        if padding_idx is not None:
            need_tensor_attr(weight, "size")
        need_tensor_attr(input, "contiguous")
        need_tensor_attr(weight, "detach")
    need_tensor("embedding", weight, "weight", 1)
    need_tensor("embedding", input, "indices", 2)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    original_padding_idx = padding_idx
    padding_idx = _padding_idx(padding_idx, num)
    if original_padding_idx is not None:  # (after the wrapper's range checks, as PyTorch's parser)
        need_int("embedding", original_padding_idx, "padding_idx", 3)
    if num == 0 and input.numel():  # (PyTorch's index_select on an empty weight)
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if max_norm is not None:  # PyTorch renormalises first: its row select() meets an index out of range there
        _check_renorm_indices(input, weight)
    _check_indices(input, num, "embedding")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    op = sparse_variant(_EMBEDDING) if sparse else _EMBEDDING
    return apply(op, (weight, input), padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq),
                 sparse=bool(sparse))


# ----------------------------------------------------------------------------------------------------------------
# embedding_bag


def _bag_fwd(w, idx, offsets, psw, *, mode, num_bags, padding_idx, scale_grad_by_freq, sparse=False):
    if w.dtype in _precision.LOW and mode != "max":
        # PyTorch's CPU kernel (fbgemm) weighs and sums float16/bfloat16 rows in float32 and rounds each bag once
        wide = None if psw is None else psw.astype(jnp.float32)
        return _bag_fwd(w.astype(jnp.float32), idx, offsets, wide, mode=mode, num_bags=num_bags,
                        padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse).astype(w.dtype)
    n = idx.shape[0]
    pos = jnp.arange(n)
    seg = jnp.searchsorted(offsets, pos, side="right") - 1          # bag of each position (>= num_bags: dropped)
    keep = jnp.ones((n,), bool) if padding_idx is None else idx != padding_idx
    emb = _grad_options(w, idx, jnp.take(w, idx, axis=0), None, scale_grad_by_freq, bag=True, sparse=sparse)
    if psw is not None:
        emb = emb * psw[:, None].astype(emb.dtype)
    if mode == "max":
        masked = jnp.where(keep[:, None], emb, -jnp.inf)
        best = jax.ops.segment_max(masked, seg, num_bags)
        hit = keep[:, None] & (masked == best[jnp.clip(seg, 0, num_bags - 1)])
        first = jax.ops.segment_min(jnp.where(hit, pos[:, None], n), seg, num_bags)   # first maximum: its gradient
        padded = jnp.concatenate([emb, jnp.zeros((1, emb.shape[1]), emb.dtype)])
        return jnp.take_along_axis(padded, jnp.minimum(first, n), axis=0)
    total = jax.ops.segment_sum(jnp.where(keep[:, None], emb, 0), seg, num_bags)
    if mode == "sum":
        return total
    count = jax.ops.segment_sum(keep.astype(emb.dtype), seg, num_bags)
    return total / jnp.maximum(count, 1)[:, None]


_EMBEDDING_BAG = defop("embedding_bag", _bag_fwd, grad_name="EmbeddingBagBackward0")


def _bag_offsets(input, offsets, include_last_offset):
    """``(flat indices, offsets, number of bags)`` for a 2-D input (fixed-length bags) or 1-D input + offsets."""
    from ...ops.creation import arange
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type " + _type_repr(offsets))
        b, length = input.shape
        return input.reshape(-1), arange(0, b * length, length if length else 1, dtype=input.dtype)[:b], b
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if offsets.dtype != input.dtype:  # PyTorch's promoteIndicesAndOffsets, before its type and value checks
        common = _dtype.promote_types(input.dtype, offsets.dtype)
        input, offsets = input.to(common), offsets.to(common)
    for name, t in (("indices", input), ("offsets", offsets)):
        if t.dtype not in (_dtype.int64, _dtype.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                               f"Long, Int; but got {_dtype.cpp_tensor_type_name(t.dtype)} instead (while checking "
                               "arguments for embedding_bag)")
    d = offsets._d
    if not isinstance(d, jax.core.Tracer) and d.size:
        a = np.asarray(d)
        if a[0] != 0:  # (PyTorch's message prints offsets[0], a 0-dim tensor)
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {a[0]}\n[ {_dtype.cpp_tensor_type_name(offsets.dtype)}{{}} ]")
        if a[-1] > input.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {input.shape[0]} but got "
                               f"offsets[-1] of {a[-1]}")
        if np.any(np.diff(a) < 0):
            raise RuntimeError("offsets must be non-decreasing, but got " + str(a.tolist()))
    nb = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    return input, offsets, max(nb, 0)


def _type_repr(x):
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sum, mean or max of bags of embeddings without materialising them one by one.

    Bags are the rows of a 2-D ``input``, or the slices ``input[offsets[i]:offsets[i+1]]`` of a 1-D one. Entries equal
    to ``padding_idx`` are left out of their bag (and of a mean's count); an empty bag gives zeros.
    ``per_sample_weights`` (``mode='sum'`` only) scales each looked-up row. With ``sparse=True`` (not in
    ``mode='max'``) ``weight``'s gradient is a sparse COO tensor, one entry per position outside ``padding_idx``.
    """
    need_tensor_attr(weight, "dtype")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    num = weight.shape[0]
    if padding_idx is not None and not -num <= padding_idx < num:  # (ATen's check: F.embedding asserts)
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but got "
                           f"{padding_idx}")
    padding_idx = _padding_idx(padding_idx, num)
    flat, offsets, nb = _bag_offsets(input, offsets, include_last_offset)
    _check_indices(flat, num, "embedding_bag", RuntimeError, _bag_index_message(padding_idx, mode, num, weight.dtype))
    if weight.dtype not in (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64):
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"BFloat16, Float, Double; but got {_dtype.cpp_tensor_type_name(weight.dtype)} instead "
                           "(while checking arguments for embedding_bag)")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                           "#1 'per_sample_weights'; but type " + _dtype.cpp_tensor_type_name(weight.dtype) + " does "
                           "not equal " + _dtype.cpp_tensor_type_name(per_sample_weights.dtype) + " (while checking "
                           "arguments for embedding_bag)")
    if max_norm is not None:
        _renorm_(weight, flat, max_norm, norm_type)
    # (F.embedding_bag flattens a 2-d input's weights; a 1-d input's are passed as they are)
    psw = per_sample_weights.reshape(-1) if per_sample_weights is not None and input.ndim == 2 else per_sample_weights
    op = sparse_variant(_EMBEDDING_BAG) if sparse else _EMBEDDING_BAG
    return apply(op, (weight, flat, offsets, psw), mode=mode, num_bags=nb, padding_idx=padding_idx,
                 scale_grad_by_freq=bool(scale_grad_by_freq), sparse=bool(sparse))
