"""torchish.nn.functional: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

The attention core is one registry op in each case (scores, masks, softmax, dropout and the weighted sum fused in
one kernel; the gradient is ``jax.vjp`` of it). ``multi_head_attention_forward`` runs its input projections and its
output projection through ``F.linear`` and the head split, bias_kv / zero-attention columns, mask merging and
attention inside one op, with PyTorch's numerics: a row whose keys are all masked gives zeros through
``scaled_dot_product_attention`` (PyTorch's safe softmax) and NaN through the ``need_weights=True`` path.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ... import _dtype, _precision
from ... import backends as _backends
from ..._tensor import Tensor, wrap_dim
from ...ops.broadcast import broadcast_error
from ...ops.casting import rounded
from ...ops.linalg import copied_by_reshape
from ...ops.out_layout import like_format
from ...ops import registry as _registry
from ...ops.registry import apply, defop, overload
from ._flash_reduced import SDPA_FLASH_REDUCED, _flash_reduced
from .attention_math import math_applies, sdpa_math
from .dropout import inverted_dropout_mask
from .linear import linear
from ._args import need_bool, need_number, need_tensor

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward", "_canonical_mask", "_none_or_dtype"]


def _cpp_name(dt):
    n = _dtype.scalar_type_name(dt)
    return {"Float": "float", "Double": "double", "Long": "long int", "Int": "int", "Bool": "bool",
            "Short": "short int", "Char": "signed char", "Byte": "unsigned char"}.get(n, "c10::" + n)


# ----------------------------------------------------------------------------------------------------------------
# pure JAX core


def _softmax(s, safe):
    if not safe:
        return jax.nn.softmax(s, axis=-1)
    m = jnp.max(s, axis=-1, keepdims=True, initial=-jnp.inf)  # (no keys at all: every row is masked out)
    m = jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m))
    e = jnp.exp(s - jax.lax.stop_gradient(m))
    den = jnp.sum(e, axis=-1, keepdims=True)
    empty = den == 0
    return jnp.where(empty, jnp.zeros_like(e), e / jnp.where(empty, jnp.ones_like(den), den))


def _attend(q, k, v, mask, drop, scale, causal, safe):
    """softmax(q k^T * scale + mask) (dropped out) @ v; returns (output, attention weights)."""
    s = jnp.matmul(q, jnp.swapaxes(k, -1, -2), precision=_precision.matmul()) * jnp.asarray(scale, q.dtype)
    if causal:
        L, S = s.shape[-2], s.shape[-1]
        s = jnp.where(jnp.tril(jnp.ones((L, S), bool)), s, jnp.asarray(-jnp.inf, s.dtype))
    if mask is not None:
        if mask.dtype == jnp.bool_:
            s = jnp.where(mask, s, jnp.asarray(-jnp.inf, s.dtype))
        else:
            # a float32 mask on reduced-precision scores is added (and softmaxed) in float32, as PyTorch's CPU
            # kernel does, and the weights come back in the query's dtype
            s = s.astype(jnp.promote_types(s.dtype, mask.dtype)) + mask
    p = _softmax(s, safe).astype(q.dtype)
    if drop is not None:
        p = p * drop
    return jnp.matmul(p, v, precision=_precision.matmul()), p


def _sdpa_fwd(q, k, v, mask, drop, *, scale, causal, rep, upcast=False):
    if rep > 1:
        k = jnp.repeat(k, rep, axis=-3)
        v = jnp.repeat(v, rep, axis=-3)
    if upcast:  # PyTorch's math kernel keeps half/bfloat16 inputs in float32 and casts the output back
        f32 = jnp.float32
        return _attend(q.astype(f32), k.astype(f32), v.astype(f32), mask, drop, scale, causal, True)[0].astype(q.dtype)
    return _attend(q, k, v, mask, drop, scale, causal, True)[0]


_SDPA = defop("scaled_dot_product_attention", _sdpa_fwd, grad_name="ScaledDotProductAttentionBackward0")
# PyTorch's math path saves the value for the weights' gradient, unless it first copies it (a grouped-query repeat, a
# broadcast batch): then only temporaries are saved
_SDPA_COPIED_V = defop("scaled_dot_product_attention_copied_value", _sdpa_fwd,
                       grad_name="ScaledDotProductAttentionBackward0")
# where PyTorch's CPU build runs its flash kernel, its node's name
_FLASH_NAMED = {op: overload(op, "ScaledDotProductFlashAttentionForCpuBackward0")
                for op in (_SDPA, _SDPA_COPIED_V, SDPA_FLASH_REDUCED)}
# the node PyTorch's math kernel leaves on top: its last op, attn @ v (a mm of matrices, else matmul's view of a bmm),
# or the cast back of an upcast half/bfloat16 computation; an empty output, or no key, is its early return
# (zeros plus the inputs' sums times 0)
_MATH_NAMED = {(op, name): overload(op, name) for op in (_SDPA, _SDPA_COPIED_V)
               for name in ("MmBackward0", "UnsafeViewBackward0", "ToCopyBackward0", "AddBackward0")}


def _named(op, flash, upcast, batch, L, S, ev):
    if 0 in batch or 0 in (L, S, ev):
        return _MATH_NAMED.get((op, "AddBackward0"), op)
    if flash:
        return _FLASH_NAMED[op]
    if op not in (_SDPA, _SDPA_COPIED_V):
        return op
    return _MATH_NAMED[op, "ToCopyBackward0" if upcast else "UnsafeViewBackward0" if batch else "MmBackward0"]


def _mha_fwd(q, k, v, bias_k, bias_v, attn_mask, kpm, drop, *, heads, causal, need_weights, average, zero_attn,
             safe, flash=False):
    """q (L, B, E), k/v (S, B, E) already projected; masks additive floats: attn (L, S) / (B*H, L, S), kpm (B, S)."""
    L, B, E = q.shape
    hd = E // heads
    if bias_k is not None:
        k = jnp.concatenate([k, jnp.broadcast_to(bias_k.reshape(1, 1, E), (1, B, E))], axis=0)
        v = jnp.concatenate([v, jnp.broadcast_to(bias_v.reshape(1, 1, E), (1, B, E))], axis=0)
    qh = q.reshape(L, B, heads, hd).transpose(1, 2, 0, 3)  # (B, H, L, hd)

    def heads_of(t):
        return t.reshape(t.shape[0], B, heads, hd).transpose(1, 2, 0, 3)

    kh, vh = heads_of(k), heads_of(v)
    if zero_attn:
        kh = jnp.concatenate([kh, jnp.zeros(kh.shape[:2] + (1, kh.shape[3]), kh.dtype)], axis=2)
        vh = jnp.concatenate([vh, jnp.zeros(vh.shape[:2] + (1, vh.shape[3]), vh.dtype)], axis=2)
    S = kh.shape[2]
    mask = None
    if attn_mask is not None:
        am = attn_mask
        if am.shape[-1] < S:
            am = jnp.pad(am, [(0, 0)] * (am.ndim - 1) + [(0, S - am.shape[-1])])
        mask = am.reshape(B, heads, L, S) if am.ndim == 3 and am.shape[0] != 1 else am.reshape(1, 1, L, S)
    if kpm is not None:
        km = jnp.pad(kpm, [(0, 0), (0, S - kpm.shape[-1])]) if kpm.shape[-1] < S else kpm
        km = km[:, None, None, :]
        mask = km if mask is None else mask + km
    if q.dtype in _precision.LOW:
        out, p = _attend_half(qh, kh, vh, mask, drop, hd, causal, need_weights, flash)
    else:
        out, p = _attend(qh, kh, vh, mask, drop, 1.0 / math.sqrt(hd), causal, safe and not need_weights)
    out = out.transpose(2, 0, 1, 3).reshape(L, B, E)
    if not need_weights:
        return out
    return out, (p.mean(axis=1) if average else p)


_MHA = defop("multi_head_attention", _mha_fwd, grad_name="MultiHeadAttentionBackward0")


def _attend_half(q, k, v, mask, drop, hd, causal, need_weights, flash):
    """multi_head_attention_forward's core on float16/bfloat16 heads as PyTorch computes it. Without weights it
    calls scaled_dot_product_attention: the CPU flash kernel (``flash``: no dropout), else the math kernel, in
    float32. With weights, its explicit ops, each rounded to the half type: ``q * sqrt(1 / head_dim)``, then
    ``bmm(q, k^T)`` (``baddbmm(mask, q, k^T)`` with a mask: added in float32), ``softmax`` (in float32),
    ``bmm(weights, v)``, the products accumulated in float32. (Rounding the scores to the half type and computing
    the softmax there put bfloat16 outputs 18% off.)"""
    dt, f32 = q.dtype, jnp.float32
    if not need_weights and flash:
        return _flash_reduced(q, k, v, mask, 1.0 / math.sqrt(hd), causal)[0], None
    if not need_weights:
        wide = _attend(q.astype(f32), k.astype(f32), v.astype(f32), mask, drop, 1.0 / math.sqrt(hd), causal, True)
        return wide[0].astype(dt), None
    qs = rounded(q.astype(f32) * f32(math.sqrt(1.0 / hd)), dt).astype(dt)
    s = jnp.matmul(qs, jnp.swapaxes(k, -1, -2), precision=_precision.matmul(), preferred_element_type=f32)
    if causal:
        s = jnp.where(jnp.tril(jnp.ones(s.shape[-2:], bool)), s, -jnp.inf)
    if mask is not None:
        s = jnp.where(mask, s, -jnp.inf) if mask.dtype == jnp.bool_ else s + mask.astype(f32)
    p = jax.nn.softmax(rounded(s, dt), axis=-1)
    if drop is not None:
        p = p * drop.astype(f32)
    p = rounded(p, dt).astype(dt)
    return jnp.matmul(p, v, precision=_precision.matmul(), preferred_element_type=f32).astype(dt), p


# ----------------------------------------------------------------------------------------------------------------
# scaled_dot_product_attention


def _broadcast(*shapes):
    try:
        return tuple(jnp.broadcast_shapes(*shapes))
    except ValueError:
        a, b = tuple(shapes[0]), tuple(shapes[1])
        nd = max(len(a), len(b))
        pa, pb = (1,) * (nd - len(a)) + a, (1,) * (nd - len(b)) + b
        if any(x != y and x != 1 and y != 1 for x, y in zip(pa, pb)):
            raise broadcast_error(a, b) from None
        raise


def _grad_on():
    from ...autograd.grad_mode import STATE
    return STATE.grad_enabled


def _flash_kernel(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch would run its flash kernel here, where that matters (the CPU: on an accelerator XLA's kernels
    stand for all of PyTorch's fused ones): 4-D inputs, no dropout, no mask that requires grad, equal batch sizes,
    equal head counts (or grouped ones with ``enable_gqa``), non-empty sequences, value's head size equal to
    query's and unit last-dimension strides. Raises PyTorch's errors where the kernels ``torchish.nn.attention.sdpa_kernel`` allows cannot run."""
    flags = _backends._SDP
    if query.device.type != "cpu":
        if not any(flags[k] for k in ("math", "flash", "mem_efficient", "cudnn")):
            raise RuntimeError(_NO_VIABLE)
        return False
    if not (flags["math"] or flags["flash"]):
        raise RuntimeError(_NO_VIABLE)
    dense = query.ndim == key.ndim == value.ndim == 4 and not dropout_p and query.shape[0] == key.shape[0] == \
        value.shape[0] and query.shape[2] > 0 and key.shape[2] > 0 and (
            query.shape[1] == key.shape[1] == value.shape[1] or enable_gqa and key.shape[1] == value.shape[1]
            and key.shape[1] > 0 and query.shape[1] % key.shape[1] == 0)  # (sdp_utils: GQA runs fused on the CPU)
    mask_ok = attn_mask is None or not (attn_mask.requires_grad and _grad_on())
    if flags["flash"] and dense and mask_ok and attn_mask is not None and attn_mask.ndim < 2:
        wrap_dim(-2, attn_mask.ndim, wrap_scalar=False)  # PyTorch's mask shape check reads attn_mask.size(-2)
    fits = dense and mask_ok and (attn_mask is None or attn_mask.ndim in (2, 4)) and (
        query.shape[-1] == value.shape[-1] and all(t.stride(-1) == 1 for t in (query, key, value)))
    if not flags["math"] and not fits:
        raise RuntimeError("No available kernel.  Aborting execution.")
    return flags["flash"] and fits


_NO_VIABLE = ("No viable backend for scaled_dot_product_attention was found. This is likely due to turning off both "
              "the math kernel and the fused kernels.")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(q @ k^T * scale + mask) @ v`` with PyTorch's semantics, as one op.

    Args:
        query: (N, ..., Hq, L, E); key: (N, ..., H, S, E); value: (N, ..., H, S, Ev).
        attn_mask: bool (True = attend) or a float mask added to the scores, broadcastable to (N, ..., L, S).
        dropout_p: dropout on the attention weights (always applied when > 0, as in PyTorch).
        is_causal: a top-left aligned causal mask (applied together with ``attn_mask`` when both are given).
        scale: the score scale (default ``1/sqrt(E)``).
        enable_gqa: grouped-query attention: ``Hq`` a multiple of ``H``, keys/values repeated per group.

    Example::

        >>> q = torchish.randn(2, 4, 5, 8)
        >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        torch.Size([2, 4, 5, 8])
    """
    need_tensor("scaled_dot_product_attention", query, "query", 1)
    need_tensor("scaled_dot_product_attention", key, "key", 2)
    need_tensor("scaled_dot_product_attention", value, "value", 3)
    need_tensor("scaled_dot_product_attention", attn_mask, "attn_mask", None, optional=True)
    # (a direct binding in PyTorch: these are usually passed by keyword, which its message shows without a position)
    need_number("scaled_dot_product_attention", dropout_p, "dropout_p", None, kind="float")
    if dropout_p > 1:  # (PyTorch's kernels check only this bound)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p:g}")
    need_bool("scaled_dot_product_attention", is_causal, "is_causal")
    if scale is not None:
        need_number("scaled_dot_product_attention", scale, "scale", None, kind="float")
    if _registry.autocast_hook is not None:  # autocast casts before the dtype checks
        query, key, value, attn_mask = _registry.autocast_hook("scaled_dot_product_attention",
                                                               (query, key, value, attn_mask))
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_name(query.dtype)} key.dtype: {_cpp_name(key.dtype)} and value.dtype: "
                           f"{_cpp_name(value.dtype)} instead.")
    if query.dtype.is_complex:  # PyTorch's math kernel gets as far as the softmax
        raise NotImplementedError(f'"softmax_lastdim_kernel_impl" not implemented for '
                                  f"'{_dtype.scalar_type_name(query.dtype)}'")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point query, got "
                           f"{_cpp_name(query.dtype)}")
    flash = _flash_kernel(query, key, value, attn_mask, dropout_p, enable_gqa)
    if attn_mask is not None:
        if is_causal and not flash:
            # PyTorch 2.13's CPU flash kernel applies both; its math kernel refuses the pair
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if attn_mask.dtype not in (_dtype.bool, _dtype.float32, query.dtype):
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_cpp_name(attn_mask.dtype)} and  query.dtype: "
                               f"{_cpp_name(query.dtype)} instead.")
    rep = 1
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk != 0 or hq % hv != 0 or hk != hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        rep = hq // hk
    if query.shape[-1] != key.shape[-1]:  # (PyTorch's math kernel: q @ k^T, a mm or a bmm over the batch)
        _product_error(query, query.shape[-1], key.shape[-1], f"{query.shape[-2]}x{query.shape[-1]} and "
                                                               f"{key.shape[-1]}x{key.shape[-2]}")
    if key.shape[-2] != value.shape[-2]:  # (then attn @ v)
        _product_error(query, key.shape[-2], value.shape[-2], f"{query.shape[-2]}x{key.shape[-2]} and "
                                                               f"{value.shape[-2]}x{value.shape[-1]}")
    kb = tuple(key.shape[:-3]) + ((key.shape[-3] * rep,) if key.ndim >= 3 else ())
    batch = _broadcast(tuple(query.shape[:-2]), kb)
    _broadcast(kb, tuple(value.shape[:-3]) + ((value.shape[-3] * rep,) if value.ndim >= 3 else ()))
    L, S = query.shape[-2], key.shape[-2]
    if attn_mask is not None:  # (the math kernel adds the mask into the scores in place)
        full = _broadcast(tuple(attn_mask.shape), batch + (L, S))
        if full != batch + (L, S):
            raise RuntimeError(f"output with shape {list(batch + (L, S))} doesn't match the broadcast shape "
                               f"{list(full)}")
    reduced = query.dtype in (_dtype.float16, _dtype.bfloat16)
    # PyTorch's fused kernels on half/bfloat16 (the CPU flash kernel, and on an accelerator those XLA's stand for)
    # accumulate in float32 and round the attention weights to the input dtype; its math kernel computes in float32
    fused = reduced and (flash or query.device.type != "cpu" and not dropout_p and rep == 1
                         and query.shape[:-2] == key.shape[:-2] == value.shape[:-2])
    upcast = reduced and not fused and not _backends._SDP["fp16_bf16_reduction_math"]
    drop = inverted_dropout_mask(float(dropout_p), batch + (L, S), _dtype.float32 if upcast else query.dtype,
                                 query) if dropout_p > 0 else None
    # (a head size of 0: PyTorch's default scale is 1/sqrt(0) = inf, which multiplies only empty tensors; every
    # score is then an empty sum, 0, whatever the scale)
    sc = float(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    ev = value.shape[-1]
    copied = rep > 1 or value.ndim > 2 and copied_by_reshape(value, batch + (S, ev), (math.prod(batch), S, ev))
    if math_applies(query, key, value, attn_mask, flash):
        return sdpa_math(query, key, value, attn_mask, is_causal, scale, rep, drop)
    if fused:
        op = SDPA_FLASH_REDUCED
        out = apply(_named(op, flash, upcast, batch, L, S, ev), (query, key, value, attn_mask, None), scale=sc,
                    causal=bool(is_causal), rep=rep)
    else:
        kw = dict(upcast=True) if upcast else {}
        op = _SDPA_COPIED_V if copied else _SDPA
        out = apply(_named(op, flash, upcast, batch, L, S, ev), (query, key, value, attn_mask, drop), scale=sc,
                    causal=bool(is_causal), rep=rep, **kw)
    # the flash kernel allocates its output as empty_like(query): a (B, L, H, E)-strided query, as multi-head code
    # makes by transposing, gives an output whose transpose(1, 2) is contiguous (and may be view()ed); math's is
    # contiguous
    return like_format(out, query) if flash else out


# ----------------------------------------------------------------------------------------------------------------
# multi-head attention


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as an additive float mask (True -> -inf) of ``target_type``; float masks pass through."""
    if mask is None:
        return None
    if mask.dtype != _dtype.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        import warnings
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask.dtype == _dtype.bool:
        from ...ops.creation import zeros_like
        return zeros_like(mask, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.ndim}-D tensor instead")
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                         "tensor")


def _check_merged_mask_dtype(attn_mask, key_padding_mask, dtype, need_weights):
    """PyTorch merges the (canonical) masks into one, of their promoted dtype, which then meets the scores in
    ``baddbmm`` (need_weights: the query's dtype only) or ``scaled_dot_product_attention`` (float32 too)."""
    masks = [m.dtype for m in (attn_mask, key_padding_mask) if m is not None]
    if not masks:
        return
    merged = masks[0] if len(masks) == 1 else _dtype.promote_types(*masks)
    if merged == dtype:
        return
    if need_weights:  # (baddbmm(mask, q, k^T))
        raise RuntimeError(f"Input dtypes must be the same, got: input {_dtype.cpp_type_name(merged)}, batch1: "
                           f"{_dtype.cpp_type_name(dtype)}, batch2: {_dtype.cpp_type_name(dtype)}")
    if merged != _dtype.float32:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cpp_name(merged)} and  query.dtype: {_cpp_name(dtype)} instead.")


def _in_projection(query, key, value, w_q, w_k, w_v, b_q, b_k, b_v):
    """Separate q/k/v projections; the weights' shapes are checked first (PyTorch's asserts: AssertionError)."""
    Eq, Ek, Ev = query.shape[-1], key.shape[-1], value.shape[-1]
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _in_projection_packed(query, key, value, w, b=None):
    """Project q/k/v with the packed (3E, E) weight: one matmul when they are the same tensor."""
    E = query.shape[-1]
    if key is value and query is key:
        q, k, v = linear(query, w, b).chunk(3, -1)
        return q, k, v
    w_q, w_kv = w.split([E, 2 * E])
    b_q, b_kv = b.split([E, 2 * E]) if b is not None else (None, None)
    if key is value:  # (the query's projection first, as PyTorch: the backward then runs the key's first)
        q = linear(query, w_q, b_q)
        k, v = linear(key, w_kv, b_kv).chunk(2, -1)
        return q, k, v
    w_k, w_v = w_kv.chunk(2)
    b_k, b_v = b_kv.chunk(2) if b is not None else (None, None)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _check_key_padding_mask(key_padding_mask, src_len, bsz):
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")


def _static_kv(t, name, bsz, num_heads, head_dim):
    """A user's static key/value (B*H, S, hd) in the (S, B, E) layout the attention op takes."""
    if t.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t.reshape(bsz, num_heads, t.shape[1], head_dim).permute(2, 0, 1, 3).reshape(t.shape[1], bsz,
                                                                                       num_heads * head_dim)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """PyTorch's functional multi-head attention on (L, N, E) query and (S, N, E) key/value (or unbatched 2-D).

    Returns ``(attn_output, attn_weights)``; the weights are None unless ``need_weights``, averaged over heads when
    ``average_attn_weights``. Masks may be bool (True = masked out) or additive floats.
    """
    return _multi_head_attention(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
        add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
        use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v,
        average_attn_weights, is_causal, fast_path=False)


def _multi_head_attention(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
                          bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
                          need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight,
                          v_proj_weight, static_k, static_v, average_attn_weights, is_causal, fast_path):
    """multi_head_attention_forward; ``fast_path`` gives the numbers of PyTorch's fused inference kernel, which
    differ in two corners: a row whose keys are all masked is NaN (not zeros), and ``is_causal`` is ignored."""
    if fast_path:
        is_causal = False
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the is_causal hint replaces the mask inside the attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    if bias_k is not None and (static_k is not None or static_v is not None):
        raise AssertionError("bias cannot be added to static key." if static_k is not None else
                             "bias cannot be added to static value.")
    if static_k is not None:
        k = _static_kv(static_k, "static_k", bsz, num_heads, head_dim)
    if static_v is not None:
        v = _static_kv(static_v, "static_v", bsz, num_heads, head_dim)
    if bias_k is not None and k.ndim == 3 and k.shape[1] != bsz:  # (PyTorch's cat([k, bias_k.repeat(1, bsz, 1)]))
        raise RuntimeError(f"Sizes of tensors must match except in dimension 0. Expected size {k.shape[1]} but got "
                           f"size {bsz} for tensor number 1 in the list.")
    for t, static in ((k, static_k), (v, static_v)):  # (PyTorch's t.view(len, bsz * num_heads, head_dim))
        if static is None and bias_k is None and t.ndim == 3 and t.shape[1] != bsz:
            raise RuntimeError(f"shape '[{t.shape[0]}, {bsz * num_heads}, {head_dim}]' is invalid for input of size "
                               f"{t.numel()}")
    full_len = k.shape[0] + (bias_k is not None) + bool(add_zero_attn)
    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, k.shape[0], bsz)
    if not training:
        dropout_p = 0.0
    if dropout_p > 1:  # PyTorch's F.dropout of the weights (ValueError), or scaled_dot_product_attention's check
        msg = "dropout probability has to be between 0 and 1, but got "
        raise ValueError(f"{msg}{dropout_p}") if need_weights else RuntimeError(f"{msg}{dropout_p:g}")
    drop = None
    if dropout_p > 0.0:
        drop = inverted_dropout_mask(float(dropout_p), (bsz, num_heads, tgt_len, full_len), query.dtype,
                                     query)
    _check_merged_mask_dtype(attn_mask, key_padding_mask, query.dtype, need_weights)
    res = apply(_MHA, (q, k, v, bias_k, bias_v, attn_mask, key_padding_mask, drop), heads=int(num_heads),
                causal=bool(is_causal) and attn_mask is None, need_weights=bool(need_weights),
                average=bool(average_attn_weights), zero_attn=bool(add_zero_attn), safe=not fast_path,
                flash=not need_weights and drop is None and bool(_backends._SDP["flash"]))
    out, weights = res if need_weights else (res, None)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not is_batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


def _product_error(query, want, got, mm_shapes):
    """The error of PyTorch's math attention kernel for mismatched sizes: its ``mm`` for 2-D inputs, else its
    ``bmm`` over the query's batch dims flattened."""
    if query.ndim == 2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mm_shapes})")
    b = math.prod(query.shape[:-2])
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {want}] but got: "
                       f"[{b}, {got}].")
