"""Transformer layers: encoder/decoder layers and stacks and the full ``nn.Transformer``, as in PyTorch.

PyTorch's inference fast path gives the same numbers as its regular path with one visible exception, which is
reproduced here: a ``TransformerEncoder`` that would run on nested tensors (eval mode, ``batch_first``, a
``src_key_padding_mask`` and no ``mask``, ...) returns zeros at the padded positions (before its final ``norm``).
"""
from __future__ import annotations

import copy

import jax
import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE
from ...overrides import has_torch_function as _has_torch_function
from ...ops import registry as _registry, tracing
from ...ops.creation import full
from ...ops.diag import triu
from ...ops.ternary import where
from .. import init
from .._functional.activation import relu
from .._functional.activation_smooth import gelu
from .._functional.attention import _canonical_mask, _none_or_dtype
from ..container import ModuleList
from ..module import Module
from .activation_mha import MultiheadAttention

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _layers():
    """Linear, LayerNorm and Dropout, looked up when a layer is built (they live in sibling layer families)."""
    from .. import Dropout, LayerNorm, Linear
    return Linear, LayerNorm, Dropout


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A float (sz, sz) mask with -inf above the diagonal and 0 elsewhere."""
    dtype = dtype if dtype is not None else _dtype.get_default_dtype()
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src, batch_first):
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` as given, or (when None) whether ``mask`` equals the causal mask of ``size``."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None and isinstance(mask._d, jax.core.Tracer) and \
            not (mask.requires_grad and STATE.grad_enabled):
        return False  # unknowable inside a trace; the explicit mask gives the same numbers as the hint
    # (a mask that requires grad: a causal one gets no gradient, as PyTorch's attention then drops it, so the
    # comparison below runs, and inside torchish.compile makes a graph break, as in PyTorch's torch.compile)
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return make_causal


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return relu
    if activation == "gelu":
        return gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _relu_or_gelu(activation):
    """PyTorch's ``activation_relu_or_gelu`` flag: 1 for relu, 2 for gelu, 0 for anything else."""
    if activation is relu or type(activation).__name__ == "ReLU":
        return 1
    if activation is gelu or type(activation).__name__ == "GELU":
        return 2
    return 0


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm.

    Args:
        d_model, nhead: model size and number of heads.
        dim_feedforward: hidden size of the feed-forward block (default 2048).
        dropout: dropout after attention, inside and after the feed-forward block (default 0.1).
        activation: "relu", "gelu" or a callable.
        layer_norm_eps, batch_first, norm_first, bias: as in PyTorch.

    Example:
        >>> import torchish as torch
        >>> layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> layer(torch.randn(3, 5, 8)).shape
        torch.Size([3, 5, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        Linear, LayerNorm, Dropout = _layers()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if _registry.flop_hook is not None and self._fast_path(src):
            with _registry.flop_hook.hidden():  # (PyTorch's fused inference kernel: no FLOP formula counts it)
                return self._forward(src, src_mask, src_key_padding_mask, is_causal)
        return self._forward(src, src_mask, src_key_padding_mask, is_causal)

    def _fast_path(self, src):
        """Whether PyTorch would run its fused inference kernel (``_transformer_encoder_layer_fwd``) here."""
        from ... import backends, is_autocast_enabled
        attn = self.self_attn
        if not backends.mha.get_fastpath_enabled() or src.ndim != 3 or self.training or not attn.batch_first:
            return False
        if attn.in_proj_bias is None or not attn._qkv_same_embed_dim or not self.activation_relu_or_gelu:
            return False
        if self.norm1.eps != self.norm2.eps or attn.num_heads % 2 == 1 or is_autocast_enabled():
            return False
        if any(len(getattr(m, "_forward_hooks", {})) + len(getattr(m, "_forward_pre_hooks", {}))
               for m in self.modules()):
            return False
        tensors = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                   self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias, self.linear1.weight,
                   self.linear1.bias, self.linear2.weight, self.linear2.bias)
        if _has_torch_function(tensors):  # (a subclass argument or a TorchFunctionMode: the Python path)
            return False
        return not (STATE.grad_enabled and any(t is not None and t.requires_grad for t in tensors))

    def _forward(self, src, src_mask, src_key_padding_mask, is_causal):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then a feed-forward block (residuals + LayerNorm).

    Example:
        >>> import torchish as torch
        >>> layer = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
        >>> layer(torch.randn(4, 2, 8), torch.randn(6, 2, 8)).shape
        torch.Size([4, 2, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        Linear, LayerNorm, Dropout = _layers()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of ``encoder_layer`` with an optional final ``norm``.

    ``enable_nested_tensor`` and ``mask_check`` are accepted as in PyTorch; see the module docstring for the one
    numerical effect of the nested-tensor path.

    Example:
        >>> import torchish as torch
        >>> layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
        >>> enc = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        >>> enc(torch.randn(5, 3, 8)).shape
        torch.Size([5, 3, 8])
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            import warnings
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        batch_first = first.self_attn.batch_first
        nested = self._runs_nested(src, mask, src_key_padding_mask)
        kpm = src_key_padding_mask
        if nested:  # PyTorch drops the padded tokens (any non-zero mask entry) and pads the result with zeros
            padded = src_key_padding_mask != 0
            kpm = where(padded, float("-inf"), 0.0).to(src.dtype)
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=kpm)
        if nested:
            output = where(padded.unsqueeze(-1), 0.0, output)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _runs_nested(self, src, mask, kpm):
        """Whether PyTorch would run this call on nested tensors (its sparsity fast path)."""
        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training or src.ndim != 3 or kpm is None:
            return False
        if mask is not None:
            return False
        if getattr(self, "mask_check", True):
            if tracing.active():
                return False
            # left aligned: in every row the valid positions come first, then padding only
            pad = np.asarray((kpm != 0)._concrete())
            if np.any(np.maximum.accumulate(pad, axis=-1) != pad):
                return False
        sa = first.self_attn
        tensors = (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias,
                   first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                   first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias)
        if STATE.grad_enabled and any(isinstance(t, Tensor) and t.requires_grad for t in tensors):
            return False
        return True


def _why_not_nested(layer):
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if not layer.norm1.eps == layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of ``decoder_layer`` with an optional final ``norm``.

    Example:
        >>> import torchish as torch
        >>> layer = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
        >>> dec = torch.nn.TransformerDecoder(layer, num_layers=2)
        >>> dec(torch.randn(4, 2, 8), torch.randn(6, 2, 8)).shape
        torch.Size([4, 2, 8])
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", with PyTorch's defaults and arguments.

    Example:
        >>> import torchish as torch
        >>> model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
        ...                              dim_feedforward=16)
        >>> tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
        >>> model(torch.randn(6, 2, 8), torch.randn(4, 2, 8), tgt_mask=tgt_mask).shape
        torch.Size([4, 2, 8])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        _, LayerNorm, _ = _layers()
        kw = dict(device=device, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.ndim == 3
        if is_batched and src.shape[0 if self.batch_first else 1] != tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A causal float mask: -inf above the diagonal, 0 on and below it."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
