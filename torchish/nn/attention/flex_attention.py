"""``torchish.nn.attention.flex_attention``: PyTorch's FlexAttention — scaled dot product attention whose scores a
user function rewrites (``score_mod``) and whose pattern a mask function selects (``block_mask``).

The numbers are those of PyTorch's dense reference (its eager CPU path): scores ``q @ k^T * scale`` in float32
(float64 for float64 queries), ``score_mod`` and the mask applied element by element, a softmax that gives 0 (not
NaN) on rows with nothing to attend to (their logsumexp is -inf), then ``probs @ v`` in the query's dtype. The
softmax and that product are one registered op whose backward is PyTorch's formula (its rounding too).

``score_mod(score, b, h, q_idx, kv_idx)`` and ``mask_mod(b, h, q_idx, kv_idx)`` are called once, with the whole
score matrix and int32 index tensors that broadcast to ``[B, H, Q, KV]`` (see ``_block_mask``): the same values as
PyTorch's vmap over 0-d indices, in a few vectorised ops. They are ordinary torchish ops, so gradients reach the
tensors a score_mod captures (a learned bias table), ``torchish.compile`` traces them into its program, and
autocast casts q/k/v once, as PyTorch does, with the attention itself run outside autocast.

As in PyTorch, attention on CPU tensors has no backward for q/k/v (``NotImplementedError``); on an accelerator
(``cuda``) it has, and gradients for captured tensors work on both.

Example:
    >>> from torchish.nn.attention.flex_attention import flex_attention, create_block_mask
    >>> def causal(b, h, q_idx, kv_idx):
    ...     return q_idx >= kv_idx
    >>> q = k = v = torchish.ones(1, 2, 16, 8)
    >>> mask = create_block_mask(causal, None, None, 16, 16, device="cpu")
    >>> flex_attention(q, k, v, block_mask=mask).shape
    torch.Size([1, 2, 16, 8])
"""
from __future__ import annotations

import inspect
import math
import typing
import warnings
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp

from ... import _dtype, _precision
from ...ops.registry import apply, defop
from ._block_mask import (_DEFAULT_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE, BlockMask,  # noqa: F401
                          _get_mod_type, _index_grid, _mask_mod_signature, _ModificationType, _score_mod_signature,
                          _sliced_mask_mod_error, and_masks, create_block_mask, create_mask, noop_mask, or_masks)

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_Backend = typing.Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
_WARNINGS_SHOWN: set = set()


class FlexKernelOptions(TypedDict, total=False):
    """PyTorch's kernel tuning options (they change no numbers here; ``BACKEND`` is validated as in PyTorch)."""
    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: _Backend


class AuxRequest(NamedTuple):
    """Request which auxiliary outputs to compute from flex_attention."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs from flex_attention (None where not requested)."""
    lse: typing.Any = None
    max_scores: typing.Any = None


def _torch():
    import torchish
    return torchish


def _warn_once(warning_id, message, category=UserWarning):
    if warning_id not in _WARNINGS_SHOWN:
        if not _torch().compiler.is_compiling():
            warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


def _identity(score, batch, head, token_q, token_kv):
    return score


def _concrete_device(t):
    """The device of a Tensor holding a concrete array; None for a traced one (its device is not known)."""
    return None if isinstance(t._v, jax.core.Tracer) else t.device


def _validate_inputs(query, key, value):
    """PyTorch's checks, in its order, of the q/k/v tensors themselves."""
    if any(getattr(t, "is_nested", False) for t in (query, key, value)):
        raise NotImplementedError("flex_attention does not support NestedTensor inputs, including "
                                  "torch.compile(flex_attention) with jagged NestedTensor inputs. "
                                  "Convert inputs to dense tensors before calling flex_attention.")
    devices = [_concrete_device(t) for t in (query, key, value)]
    if None not in devices and (devices[0] != devices[1] or devices[0] != devices[2]):
        raise ValueError(f"Expected query, key, and value to have the same device type, but got query.device: "
                         f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got "
                         f"E={query.size(-1)} and E={key.size(-1)}.")
    dev = devices[0]
    if dev is not None and dev.type in ("cpu", "mps") and (query.requires_grad or key.requires_grad
                                                            or value.requires_grad):
        name = dev.type.upper()
        raise NotImplementedError(f"FlexAttention does not support backward on {name}. Please set the input "
                                  "requires_grad to False or use another device.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")


def _validate_shapes(query, key, block_mask, enable_gqa):
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={query.size(-3)} "
                         f"and Hkv={key.size(-3)}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                         f"Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but "
                             f"got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")


def _validate_block_mask(query, key, block_mask):
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if block_mask.BLOCK_SIZE != (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        q_len, kv_len = block_mask.shape[-2], block_mask.shape[-1]
        got = f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={query.size(-2)} " \
              f"and kv_len={key.size(-2)}. "
        if query.size(-2) > q_len or key.size(-2) > kv_len:
            raise ValueError(got + "As the block mask was created for a smaller length than you're using it for, "
                             "you likely need to create a new block mask.")
        if query.size(-2) != q_len or key.size(-2) != kv_len:
            raise ValueError(got + "As the block mask was created for a larger length than you're using it for, "
                             "you can either 1. create a new block mask with the correct length, or 2. 'adjust' "
                             "the existing block mask to the correct length by calling block_mask._adjust(q_len, "
                             "kv_len). This essentially 'crops' the block mask to the upper left corner, which "
                             "does not work for all mask_mods!")
    qdev, mdev = _concrete_device(query), _concrete_device(block_mask.kv_num_blocks)
    if qdev is not None and mdev is not None and qdev != mdev:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got {qdev} and {mdev}.")


def _kernel_options(query, kernel_options, return_aux):
    """PyTorch's validation of ``kernel_options`` and of the auxiliary outputs the device can give."""
    options = {} if kernel_options is None else dict(kernel_options)
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError("BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes the "
                           "legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired BACKEND.")
    valid = typing.get_args(_Backend)
    if "BACKEND" in options and options["BACKEND"] not in valid:
        raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of {valid}")
    if "OUTPUT_LOGSUMEXP" in options:
        raise AssertionError("OUTPUT_LOGSUMEXP must not be in kernel_options")
    if "OUTPUT_MAX" in options:
        raise AssertionError("OUTPUT_MAX must not be in kernel_options")
    want_max = return_aux is not None and return_aux.max_scores
    if want_max and options.get("BACKEND") == "FLASH":
        raise NotImplementedError("Returning max scores is not supported with BACKEND='FLASH'. "
                                  "Use return_aux=AuxRequest(lse=True) or omit max_scores.")
    dev = _concrete_device(query)
    if want_max and dev is not None and dev.type in ("cpu", "mps"):
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _check_arity(fn, n, what):
    """A score_mod/mask_mod must take ``n`` positional arguments (PyTorch's compiler fails to bind it otherwise)."""
    try:
        inspect.signature(fn).bind(*range(n))
    except TypeError as e:
        raise RuntimeError(f"failed to bind arguments when attempting to inline {what}: {e}") from None
    except ValueError:  # (no signature: a builtin) it is called as it is
        pass


def _softmax_value_fwd(post, value, *, out_dtype):
    """``(softmax(post) @ value, logsumexp(post))`` over the last axis, the product in ``out_dtype``; rows that are
    all -inf (nothing to attend to) give 0 and -inf."""
    empty = jnp.all(post == -jnp.inf, axis=-1, keepdims=True)
    safe = jnp.where(empty, 0, post)
    lse = jnp.where(empty[..., 0], -jnp.inf, jax.nn.logsumexp(safe, axis=-1))
    probs = jnp.where(empty, 0, jax.nn.softmax(safe, axis=-1))
    return _precision.mm(probs.astype(out_dtype), value.astype(out_dtype)), lse


def _softmax_value_vjp(g, post, value, *, out, out_dtype):
    """PyTorch's formula (``sdpa_dense_backward``): the probabilities again from the logsumexp, the value gradient
    from them in the output dtype, the score gradient in the scores' dtype with ``sum(out * grad_out)`` (the output
    as rounded to its dtype) for the softmax's correction term."""
    (g_out, g_lse), (o, lse) = g, out
    wp = post.dtype
    finite_lse = jnp.where(jnp.isneginf(lse), 0, lse)[..., None]
    probs = jnp.where(jnp.isneginf(lse)[..., None], 0, jnp.exp(post - finite_lse))
    g_value = _precision.mm(jnp.swapaxes(probs.astype(out_dtype), -2, -1), g_out.astype(out_dtype))
    g_probs = _precision.mm(g_out.astype(wp), jnp.swapaxes(value.astype(wp), -2, -1))
    correction = jnp.sum(o.astype(wp) * g_out.astype(wp), axis=-1, keepdims=True)
    return probs * (g_probs - correction + g_lse.astype(wp)[..., None]), g_value


_SOFTMAX_VALUE = defop("flex_softmax_value", _softmax_value_fwd, vjp=_softmax_value_vjp,
                       grad_name="FlexAttentionAutogradOpBackward")


def _math_attention(query, key, value, score_mod, mask_mod, scale, want_max=False):
    """PyTorch's dense FlexAttention: ``(out, lse, max_scores)``, the statistics in the working precision
    (``max_scores`` None unless ``want_max``)."""
    torch = _torch()
    G = query.size(1) // key.size(1)
    if G > 1:
        key = key.repeat_interleave(G, dim=1)
        value = value.repeat_interleave(G, dim=1)
    Bq, Bkv = query.size(0), key.size(0)
    if not (Bq == Bkv or (Bq > 1 and Bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={Bq} and Bkv={Bkv}")
    key = key.expand(Bq, *key.shape[1:])
    value = value.expand(Bq, *value.shape[1:])
    wp = _dtype.float64 if query.dtype == _dtype.float64 else _dtype.float32
    scores = (query.to(wp) @ key.to(wp).transpose(-2, -1) * scale).to(wp)
    B, H, Q, KV = scores.shape
    b, h, m, n = _index_grid(B, H, Q, KV, scores.device, _dtype.int32)
    post = score_mod(scores, b, h, m, n) if score_mod is not None else scores
    if mask_mod is not None:
        post = torch.where(mask_mod(b, h, m, n), post, torch.tensor(-math.inf, dtype=wp, device=scores.device))
    post = post.expand(B, H, Q, KV)
    out, lse = apply(_SOFTMAX_VALUE, (post, value), out_dtype=jnp.dtype(query.dtype.np))
    result = (out, lse, post.detach().amax(dim=-1) if want_max else None)
    if query.dtype != key.dtype or query.dtype != value.dtype:
        _refuse_backward(result, query, key, value)
    return result


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """Attention of ``query`` ``(B, Hq, L, E)`` over ``key`` ``(B, Hkv, S, E)`` and ``value`` ``(B, Hkv, S, Ev)``
    with scores rewritten by ``score_mod(score, b, h, q_idx, kv_idx)`` and masked by ``block_mask`` (from
    :func:`create_block_mask`), scaled by ``scale`` (default ``1/sqrt(E)``); ``enable_gqa`` lets several query
    heads share a key/value head.

    Returns the output ``(B, Hq, L, Ev)``; with ``return_aux=AuxRequest(lse=True)`` also an :class:`AuxOutput`
    holding the logsumexp ``(B, Hq, L)`` of the scores (deprecated form: ``return_lse=True`` returns it directly).
    """
    _validate_inputs(query, key, value)
    _validate_shapes(query, key, block_mask, enable_gqa)
    if block_mask is not None:
        _validate_block_mask(query, key, block_mask)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in v2.10. Please use "
                   "return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    _kernel_options(query, kernel_options, return_aux)
    if score_mod is not None:
        _check_arity(score_mod, 5, f"score_mod {getattr(score_mod, '__name__', score_mod)}")
    mask_mod = None if block_mask is None or block_mask.mask_mod is noop_mask else block_mask.mask_mod
    if mask_mod is not None:
        _check_arity(mask_mod, 4, f"mask_mod {getattr(mask_mod, '__name__', mask_mod)}")
    if not _FLEX_ATTENTION_DISABLE_COMPILE_DEBUG:
        _warn_once("flex_attention_performance",
                   "flex_attention called without torch.compile() - this will use an unfused implementation that "
                   "materializes the full scores matrix instead of generating a fused kernel.\n\nSOLUTION: Use "
                   "torch.compile(flex_attention)(...)\n\nIf you want to debug your score_mod/mask_mod, you can set:"
                   "\ntorch.nn.attention.flex_attention._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True\n\nThis will "
                   "allow you to use print statements or breakpoints. Note: This doesn't work with the backwards "
                   "pass and may produce incorrect results.")
    want_max = return_aux is not None and return_aux.max_scores
    out, lse, max_scores = _autocast_math(query, key, value, score_mod, mask_mod, scale, want_max)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None,
                              max_scores=max_scores if return_aux.max_scores else None)
    return (out, lse) if return_lse else out


def _refuse_backward(outputs, query, key, value):
    """Make a backward through ``outputs`` raise, as PyTorch's does for attention of mixed q/k/v dtypes (its forward
    runs)."""
    msg = (f"Backward pass with mixed query, key, and value dtype is not supported, got query.dtype={query.dtype}, "
           f"key.dtype={key.dtype}, and value.dtype={value.dtype}")

    def refuse(grad):
        raise ValueError(msg)
    for t in outputs:
        if t is not None and t.requires_grad:
            t.register_hook(refuse)


def _autocast_math(query, key, value, score_mod, mask_mod, scale, want_max):
    """:func:`_math_attention`; under autocast for the inputs' device q/k/v are cast to its dtype first and the
    attention runs with autocast off, as PyTorch's autocast rule for FlexAttention does."""
    torch = _torch()
    concrete = _concrete_device(query)  # (a traced query counts as on the device whose autocast is on)
    dev = concrete.type if concrete is not None else next(
        (d for d in ("cuda", "cpu") if torch.is_autocast_enabled(d)), "cpu")
    if not torch.amp.is_autocast_available(dev) or not torch.is_autocast_enabled(dev):
        return _math_attention(query, key, value, score_mod, mask_mod, scale, want_max)
    from ...amp.autocast_mode import _cast
    low = torch.get_autocast_dtype(dev)
    query, key, value = (_cast(t, dev, low) for t in (query, key, value))
    with torch.autocast(dev, enabled=False):
        return _math_attention(query, key, value, score_mod, mask_mod, scale, want_max)
