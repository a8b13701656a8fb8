"""``F.scaled_dot_product_attention``'s math path op by op, where autograd records: PyTorch's CPU build runs it when
its flash kernel cannot (inputs that are not 4-d, a mask that requires grad or is 3-d), and its graph is that of
ATen's ``_scaled_dot_product_attention_math``:

``matmul(softmax_safe(matmul(q * sqrt(scale), k.transpose(-2, -1) * sqrt(scale)) [+= mask]), v)``

(``MulBackward1`` for the Scalar products, matmul's ``MmBackward0`` or ``UnsafeViewBackward0`` over a ``bmm``, the
mask added in place: ``AddBackward0``; a boolean or causal mask first becomes a float one of 0 and -inf;
``SafeSoftmaxBackward0``: a row with every key masked gives zeros). Grouped-query heads repeat key and value with
``repeat_interleave`` along the head dim (``ViewBackward0`` over ``CloneBackward0`` of an expand); dropout is
``at::dropout``'s product with its scaled Bernoulli noise (``MulBackward0`` with a ``None`` edge), the noise drawn
as the fused kernel draws it. With half precision or empty inputs the fused kernel stays.
"""
from __future__ import annotations

import math

from ... import _dtype
from ...ops.filled import ones, zeros_like
from ...ops.linalg import matmul
from ...ops.registry import apply, defop
from ...ops.scalar_overloads import mul_scalar


def _safe_softmax_fwd(x):
    from .attention import _softmax
    return _softmax(x, True)


_SAFE_SOFTMAX = defop("_safe_softmax", _safe_softmax_fwd, grad_name="SafeSoftmaxBackward0")


def math_applies(query, key, value, attn_mask, flash):
    """Whether the math path is taken op by op: it runs (no flash kernel), autograd records, and nothing needs what
    only the fused kernel does."""
    from ...autograd.grad_mode import STATE
    dt = query.dtype
    return (not flash and STATE.grad_enabled and dt in (_dtype.float32, _dtype.float64)
            and query.device.type == "cpu" and any(t is not None and t.requires_grad
                                                   for t in (query, key, value, attn_mask))
            and 0 not in (*query.shape, *key.shape, *value.shape))


def _float_mask(mask, dtype):
    """PyTorch's convert_boolean_attn_mask: True attends (0), False is -inf; a float mask stays as it is."""
    if mask.dtype is not _dtype.bool:
        return mask
    return zeros_like(mask, dtype=dtype).masked_fill_(mask.logical_not(), -math.inf)


def sdpa_math(query, key, value, attn_mask, is_causal, scale, rep=1, noise=None):
    """ATen's ``_scaled_dot_product_attention_math``. ``rep``: query heads per key/value head (grouped-query
    attention); ``noise``: the dropout's scaled Bernoulli draws (a tensor of the scores' shape), or None."""
    s = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    factor = math.sqrt(abs(s))
    q = mul_scalar(query, -factor if s < 0 else factor)
    if is_causal:
        attn_mask = ones(query.shape[-2], key.shape[-2], dtype=_dtype.bool).tril()
    if rep > 1:  # (pre_process_group_query_attention_input)
        key, value = key.repeat_interleave(rep, -3), value.repeat_interleave(rep, -3)
    attn = matmul(q, mul_scalar(key.transpose(-2, -1), factor))
    if attn_mask is not None:
        attn.add_(_float_mask(attn_mask, query.dtype))
    attn = apply(_SAFE_SOFTMAX, (attn,))
    if noise is not None:
        attn = attn * noise
    return matmul(attn, value)
