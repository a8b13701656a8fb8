"""``nn.MultiheadAttention`` (PyTorch keeps it in ``torch/nn/modules/activation.py``; here it has a file of its own).

The forward is :func:`torchish.nn.functional.multi_head_attention_forward`: input projections and the output
projection through ``F.linear``, the attention itself as one op. Where PyTorch would take its fused inference
"fast path" the numbers are that path's: the same as the regular path except that a query whose keys are all
masked gives NaN (instead of zeros) and the ``is_causal`` hint is ignored.
"""
from __future__ import annotations

from ...ops import registry as _registry
from ...ops.creation import empty
from .. import init
from ...autograd.grad_mode import STATE
from ...overrides import has_torch_function as _has_torch_function
from .._functional.attention import (_canonical_mask, _multi_head_attention, _none_or_dtype,
                                     multi_head_attention_forward)
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention: ``softmax(Q K^T / sqrt(d)) V`` over ``num_heads`` heads, then an output projection.

    Args:
        embed_dim: model dimension (query size); must be divisible by ``num_heads``.
        num_heads: number of heads.
        dropout: dropout on the attention weights (training only).
        bias: biases on the input and output projections.
        add_bias_kv: learnt bias rows appended to the keys and values.
        add_zero_attn: a zero row appended to the keys and values.
        kdim, vdim: key/value feature sizes (separate ``q/k/v_proj_weight`` when they differ from ``embed_dim``).
        batch_first: inputs are (N, L, E) instead of (L, N, E).

    Example:
        >>> import torchish as torch
        >>> mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = torch.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (torch.Size([3, 5, 8]), torch.Size([3, 5, 5]))
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Attend from ``query`` to ``key``/``value``; returns ``(attn_output, attn_weights or None)``.

        Masks: ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N*num_heads, L, S), bool (True = masked
        out) or additive float. ``is_causal`` is a hint that ``attn_mask`` is the causal mask.
        """
        is_batched = query.ndim == 3
        fast = self._takes_fast_path(query, key, value, attn_mask, key_padding_mask)
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        args = (query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
                self.training, key_padding_mask, need_weights, attn_mask, not self._qkv_same_embed_dim,
                self.q_proj_weight, self.k_proj_weight, self.v_proj_weight, None, None, average_attn_weights,
                is_causal)
        if not fast:  # (the public function: a subclass's __torch_function__ or a mode sees it, as PyTorch's)
            out, weights = multi_head_attention_forward(*args)
        elif _registry.flop_hook is not None:  # (PyTorch's fused kernel: no FLOP formula counts it)
            with _registry.flop_hook.hidden():
                out, weights = _multi_head_attention(*args, fast_path=True)
        else:
            out, weights = _multi_head_attention(*args, fast_path=True)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights

    def _takes_fast_path(self, query, key, value, attn_mask, key_padding_mask):
        """Whether PyTorch would run its fused inference kernel for this call (same conditions, same order)."""
        if any(m is not None and m.dtype.is_floating_point for m in (attn_mask, key_padding_mask)):
            return False
        if query.ndim != 3 or query is not key or key is not value or self.training:
            return False
        if self.in_proj_weight is None or self.in_proj_bias is None or not self._qkv_same_embed_dim:
            return False
        if query.dtype != self.in_proj_weight.dtype or query.dtype != self.in_proj_bias.dtype:
            return False
        if self.num_heads % 2 or not self.batch_first or self.bias_k is not None or self.add_zero_attn:
            return False
        tensors = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias)
        if _has_torch_function(tensors):  # (a subclass argument or a TorchFunctionMode: the Python path)
            return False
        return not (STATE.grad_enabled and any(t is not None and t.requires_grad for t in tensors))

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Combine ``attn_mask`` and ``key_padding_mask`` into one (N, num_heads, L, S) float mask, as PyTorch.

        Returns ``(merged_mask, mask_type)`` with mask_type 0 (attn_mask), 1 (key_padding_mask), 2 (both) or None.
        """
        mask_type = None
        merged = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1,
                                                                                   -1)
            merged = attn_mask_expanded
            if key_padding_mask is not None:
                kpm = key_padding_mask.view(batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged = attn_mask_expanded + kpm
        return merged, mask_type
