"""Regression tests from running the code people copy from LLM repositories on torchish and on PyTorch: Hugging Face's
LLaMA (RMSNorm in float32, rotate_half rope, GQA repeat_kv, SDPA, KV caches grown with cat and static ones written
in place, in float32 and bfloat16), Meta's llama (complex rope via polar/view_as_complex, explicit masks), GPT-2
(Conv1D, gelu_new, the bool-buffer causal mask with finfo.min, tied embeddings, shifted loss), BERT, T5's relative
position buckets, the logits processors and beam search bookkeeping of generate, and the Trainer's AdamW/no-decay
groups/warmup schedules/gradient accumulation/clipping, compiled and under autocast. Each ``case_*`` is written
against the PyTorch API only; inputs and weights come from formulas (tests/oracle.py) and sampling is replaced by
argmax. Also probed and matching (kept out for time): Meta's generation.py loop (padded prompts, token_logprobs,
sample_top_p), HF's 4-d/sliding-window mask converter, lucidrains-style attention (einsum, null kv, token shift,
checkpoint), Mixtral's MoE block with the load-balancing loss, BLOOM's ALiBi with baddbmm, GPT-J's rope,
Whisper/CLIP/ViT pieces, a compiled forward over growing lengths.

Where a program differs from the repository it imitates, a comment says why."""
import math
from dataclasses import dataclass

from oracle import formula_data as _data, formula_init as _init, script_test



def _llama(lib, complex_rope):
    nn, F = lib.nn, lib.nn.functional

    class LlamaRMSNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(lib.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * lib.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return lib.cat((-x2, x1), dim=-1)

    def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
        cos = cos.unsqueeze(unsqueeze_dim)
        sin = sin.unsqueeze(unsqueeze_dim)
        q_embed = (q * cos) + (rotate_half(q) * sin)
        k_embed = (k * cos) + (rotate_half(k) * sin)
        return q_embed, k_embed

    class LlamaRotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000):
            super().__init__()
            inv_freq = 1.0 / (base ** (lib.arange(0, dim, 2, dtype=lib.int64).float() / dim))
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        @lib.no_grad()
        def forward(self, x, position_ids):
            inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
            position_ids_expanded = position_ids[:, None, :].float()
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = lib.cat((freqs, freqs), dim=-1)
            cos = emb.cos()
            sin = emb.sin()
            return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    def precompute_freqs_cis(dim, end, theta=10000.0):
        freqs = 1.0 / (theta ** (lib.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = lib.arange(end, device=freqs.device, dtype=lib.float32)
        freqs = lib.outer(t, freqs)
        freqs_cis = lib.polar(lib.ones_like(freqs), freqs)
        return freqs_cis

    def reshape_for_broadcast(freqs_cis, x):
        ndim = x.ndim
        assert 0 <= 1 < ndim
        assert freqs_cis.shape == (x.shape[1], x.shape[-1])
        shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
        return freqs_cis.view(*shape)

    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = lib.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
        xq_out = lib.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = lib.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    def repeat_kv(hidden_states, n_rep):
        batch, num_key_value_heads, slen, head_dim = hidden_states.shape
        if n_rep == 1:
            return hidden_states
        hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
        return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)

    class LlamaMLP(nn.Module):
        def __init__(self, hidden, inter):
            super().__init__()
            self.gate_proj = nn.Linear(hidden, inter, bias=False)
            self.up_proj = nn.Linear(hidden, inter, bias=False)
            self.down_proj = nn.Linear(inter, hidden, bias=False)
            self.act_fn = nn.SiLU()

        def forward(self, x):
            return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))

    class Attention(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.n_heads, self.n_kv = cfg.n_heads, cfg.n_kv_heads
            self.head_dim = cfg.dim // cfg.n_heads
            self.n_rep = self.n_heads // self.n_kv
            self.q_proj = nn.Linear(cfg.dim, self.n_heads * self.head_dim, bias=False)
            self.k_proj = nn.Linear(cfg.dim, self.n_kv * self.head_dim, bias=False)
            self.v_proj = nn.Linear(cfg.dim, self.n_kv * self.head_dim, bias=False)
            self.o_proj = nn.Linear(self.n_heads * self.head_dim, cfg.dim, bias=False)

        def forward(self, x, rope, past_kv=None, mask=None):
            bsz, q_len, _ = x.size()
            q = self.q_proj(x).view(bsz, q_len, self.n_heads, self.head_dim)
            k = self.k_proj(x).view(bsz, q_len, self.n_kv, self.head_dim)
            v = self.v_proj(x).view(bsz, q_len, self.n_kv, self.head_dim).transpose(1, 2)
            if complex_rope:
                q, k = apply_rotary_emb(q, k, rope)
                q, k = q.transpose(1, 2), k.transpose(1, 2)
            else:
                cos, sin = rope
                q, k = apply_rotary_pos_emb(q.transpose(1, 2), k.transpose(1, 2), cos, sin)
            if past_kv is not None:
                k = lib.cat([past_kv[0], k], dim=2)
                v = lib.cat([past_kv[1], v], dim=2)
            present = (k, v)
            k = repeat_kv(k, self.n_rep)
            v = repeat_kv(v, self.n_rep)
            if mask is None:
                out = F.scaled_dot_product_attention(q, k, v, is_causal=q_len > 1)
            else:
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            out = out.transpose(1, 2).contiguous().view(bsz, q_len, -1)
            return self.o_proj(out), present

    class Block(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.self_attn = Attention(cfg)
            self.mlp = LlamaMLP(cfg.dim, cfg.inter)
            self.input_layernorm = LlamaRMSNorm(cfg.dim)
            self.post_attention_layernorm = LlamaRMSNorm(cfg.dim)

        def forward(self, x, rope, past_kv=None, mask=None):
            h, present = self.self_attn(self.input_layernorm(x), rope, past_kv, mask)
            x = x + h
            return x + self.mlp(self.post_attention_layernorm(x)), present

    class Llama(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.cfg = cfg
            self.embed_tokens = nn.Embedding(cfg.vocab, cfg.dim)
            self.layers = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
            self.norm = LlamaRMSNorm(cfg.dim)
            self.lm_head = nn.Linear(cfg.dim, cfg.vocab, bias=False)
            hd = cfg.dim // cfg.n_heads
            if complex_rope:
                self.freqs_cis = precompute_freqs_cis(hd, cfg.max_seq * 2)
            else:
                self.rotary_emb = LlamaRotaryEmbedding(hd)

        def forward(self, tokens, start_pos=0, past=None, mask=None):
            bsz, seqlen = tokens.shape
            h = self.embed_tokens(tokens)
            if complex_rope:
                rope = self.freqs_cis[start_pos: start_pos + seqlen]
            else:
                position_ids = lib.arange(start_pos, start_pos + seqlen).unsqueeze(0).expand(bsz, -1)
                rope = self.rotary_emb(h, position_ids)
            presents = []
            for i, layer in enumerate(self.layers):
                h, p = layer(h, rope, None if past is None else past[i], mask)
                presents.append(p)
            return self.lm_head(self.norm(h)).float(), presents

    return Llama


@dataclass
class _Cfg:
    vocab: int = 13
    dim: int = 16
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    inter: int = 24
    max_seq: int = 8


def case_llama_hf_rope_gqa_kv_cache_generate(lib):
    """HF LLaMA: RMSNorm in float32 then .to(input_dtype), rotate_half rope from an inv_freq buffer (persistent
    False), GQA via repeat_kv, SDPA(is_causal), a KV cache grown with cat, a greedy generation loop; the full
    forward's logits equal the cached steps'; gradients of a loss through it all."""
    Llama = _llama(lib, False)
    model = _init(lib, Llama(_Cfg()))
    tokens = lib.tensor([[1, 5, 7, 2], [3, 3, 9, 12]])
    logits, past = model(tokens)
    out = [logits, list(model.state_dict()), [p[0].shape for p in past]]
    gen = tokens
    for step in range(3):
        nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        gen = lib.cat([gen, nxt], dim=-1)
        logits, past = model(nxt, start_pos=gen.shape[1] - 1, past=past)
    out += [gen, logits]
    full, _ = model(gen[:, :-1])
    out.append(full[:, -1])
    loss = lib.nn.functional.cross_entropy(full.view(-1, full.size(-1)), gen[:, 1:].reshape(-1))
    loss.backward()
    out.append({n: p.grad for n, p in model.named_parameters()})
    return out


def case_llama_meta_complex_rope_bool_and_float_mask(lib):
    """Meta's llama: precompute_freqs_cis with outer/polar, view_as_complex/view_as_real rope, explicit masks
    for SDPA: the float mask built with full(-inf).triu(1) and hstack of zeros for the cache, and a boolean tril
    mask; prefill then one decode step; gradients through the complex rope."""
    Llama = _llama(lib, True)
    model = _init(lib, Llama(_Cfg(n_layers=1)))
    tokens = lib.tensor([[1, 5, 7, 2, 4]])
    seqlen = tokens.shape[1]
    mask = lib.full((seqlen, seqlen), float("-inf"))
    mask = lib.triu(mask, diagonal=1)
    logits_f, past = model(tokens, mask=mask)
    bmask = lib.ones(seqlen, seqlen, dtype=lib.bool).tril()
    logits_b, _ = model(tokens, mask=bmask)
    nxt = logits_f[:, -1].argmax(-1, keepdim=True)
    step_mask = lib.hstack([lib.zeros((1, seqlen)), lib.zeros(1, 1)])
    logits_s, past2 = model(nxt, start_pos=seqlen, past=past, mask=step_mask)
    out = [logits_f, logits_b, logits_s, model.freqs_cis.dtype, model.freqs_cis[:3], past2[0][0].shape]
    (logits_f.logsumexp(-1).sum() + logits_s.sum()).backward()
    out.append([p.grad for p in model.parameters()])
    return out


def case_llama_bf16_static_cache(lib):
    """LLaMA in bfloat16 (model.to(torch.bfloat16)): RMSNorm's float32 round trip, rope cos/sin cast to the
    activations' dtype, a static cache (zeros of max length) written with index_copy_ and slice assignment, and
    SDPA over the cache with a boolean mask of the filled positions; logits upcast with .float()."""
    F = lib.nn.functional
    Llama = _llama(lib, False)
    cfg = _Cfg(n_layers=1)
    model = _init(lib, Llama(cfg)).to(lib.bfloat16)
    hd = cfg.dim // cfg.n_heads
    max_len = 8
    kc = lib.zeros(1, cfg.n_kv_heads, max_len, hd, dtype=lib.bfloat16)
    vc = lib.zeros(1, cfg.n_kv_heads, max_len, hd, dtype=lib.bfloat16)
    layer = model.layers[0]
    attn = layer.self_attn
    tokens = lib.tensor([[1, 5, 7]])
    outs = [model.layers[0].input_layernorm.weight.dtype, model.rotary_emb.inv_freq.dtype]
    pos, nxt = 0, None
    with lib.no_grad():
        for step in range(4):
            L = tokens.shape[1] if step == 0 else 1
            cur = tokens if step == 0 else nxt
            h = model.embed_tokens(cur)
            position_ids = lib.arange(pos, pos + L).unsqueeze(0)
            cos, sin = model.rotary_emb(h, position_ids)
            x = layer.input_layernorm(h)
            q = attn.q_proj(x).view(1, L, attn.n_heads, hd).transpose(1, 2)
            k = attn.k_proj(x).view(1, L, attn.n_kv, hd).transpose(1, 2)
            v = attn.v_proj(x).view(1, L, attn.n_kv, hd).transpose(1, 2)
            c, s = cos.unsqueeze(1), sin.unsqueeze(1)
            q = q * c + lib.cat((-q[..., hd // 2:], q[..., :hd // 2]), -1) * s
            k = k * c + lib.cat((-k[..., hd // 2:], k[..., :hd // 2]), -1) * s
            cache_position = lib.arange(pos, pos + L)
            kc.index_copy_(2, cache_position, k)
            vc[:, :, pos:pos + L] = v
            mask = lib.arange(max_len)[None, :] <= cache_position[:, None]
            kk = kc[:, :, None].expand(1, attn.n_kv, attn.n_rep, max_len, hd).reshape(1, -1, max_len, hd)
            vv = vc[:, :, None].expand(1, attn.n_kv, attn.n_rep, max_len, hd).reshape(1, -1, max_len, hd)
            o = F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask)
            h = h + attn.o_proj(o.transpose(1, 2).reshape(1, L, -1))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
            logits = model.lm_head(model.norm(h)).float()
            nxt = logits[:, -1:].argmax(-1)
            outs += [logits, nxt, h.dtype]
            pos += L
    outs += [kc, vc]
    return outs


def _gpt2(lib):
    nn = lib.nn

    class Conv1D(nn.Module):
        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(lib.empty(nx, nf))
            self.bias = nn.Parameter(lib.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = lib.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            x = x.view(size_out)
            return x

    class NewGELUActivation(nn.Module):
        def forward(self, input):
            return 0.5 * input * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * lib.pow(input, 3.0))))

    class Attn(nn.Module):
        def __init__(self, n_embd, n_head, n_pos):
            super().__init__()
            self.register_buffer("bias", lib.tril(lib.ones((n_pos, n_pos), dtype=lib.bool)).view(1, 1, n_pos, n_pos),
                                 persistent=False)
            self.register_buffer("masked_bias", lib.tensor(-1e4), persistent=False)
            self.n_head, self.head_dim, self.split_size = n_head, n_embd // n_head, n_embd
            self.c_attn = Conv1D(3 * n_embd, n_embd)
            self.c_proj = Conv1D(n_embd, n_embd)

        def _split_heads(self, tensor, num_heads, attn_head_size):
            new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
            tensor = tensor.view(new_shape)
            return tensor.permute(0, 2, 1, 3)

        def _merge_heads(self, tensor, num_heads, attn_head_size):
            tensor = tensor.permute(0, 2, 1, 3).contiguous()
            new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
            return tensor.view(new_shape)

        def _attn(self, query, key, value, attention_mask=None):
            attn_weights = lib.matmul(query, key.transpose(-1, -2))
            attn_weights = attn_weights / lib.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                                                   device=attn_weights.device)
            query_length, key_length = query.size(-2), key.size(-2)
            causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
            mask_value = lib.finfo(attn_weights.dtype).min
            mask_value = lib.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
            attn_weights = lib.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
            if attention_mask is not None:
                attn_weights = attn_weights + attention_mask
            attn_weights = nn.functional.softmax(attn_weights, dim=-1)
            attn_weights = attn_weights.type(value.dtype)
            return lib.matmul(attn_weights, value), attn_weights

        def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
            query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
            query = self._split_heads(query, self.n_head, self.head_dim)
            key = self._split_heads(key, self.n_head, self.head_dim)
            value = self._split_heads(value, self.n_head, self.head_dim)
            if layer_past is not None:
                past_key, past_value = layer_past
                key = lib.cat((past_key, key), dim=-2)
                value = lib.cat((past_value, value), dim=-2)
            present = (key, value) if use_cache else None
            a, w = self._attn(query, key, value, attention_mask)
            a = self._merge_heads(a, self.n_head, self.head_dim)
            return self.c_proj(a), present, w

    class MLP(nn.Module):
        def __init__(self, inner, n_embd, approx):
            super().__init__()
            self.c_fc = Conv1D(inner, n_embd)
            self.c_proj = Conv1D(n_embd, inner)
            self.act = NewGELUActivation() if not approx else nn.GELU(approximate="tanh")

        def forward(self, x):
            return self.c_proj(self.act(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, n_embd, n_head, n_pos, approx):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd, eps=1e-5)
            self.attn = Attn(n_embd, n_head, n_pos)
            self.ln_2 = nn.LayerNorm(n_embd, eps=1e-5)
            self.mlp = MLP(4 * n_embd, n_embd, approx)

        def forward(self, x, layer_past=None, attention_mask=None, use_cache=False):
            a, present, w = self.attn(self.ln_1(x), layer_past, attention_mask, use_cache)
            x = x + a
            return x + self.mlp(self.ln_2(x)), present, w

    class GPT2LMHeadModel(nn.Module):
        def __init__(self, vocab=17, n_pos=10, n_embd=8, n_head=2, n_layer=2):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(n_pos, n_embd)
            self.h = nn.ModuleList([Block(n_embd, n_head, n_pos, i % 2 == 1) for i in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, input_ids, attention_mask=None, labels=None, past_key_values=None, use_cache=False):
            input_shape = input_ids.size()
            input_ids = input_ids.view(-1, input_shape[-1])
            past_length = 0 if past_key_values is None else past_key_values[0][0].size(-2)
            position_ids = lib.arange(past_length, input_shape[-1] + past_length, dtype=lib.long)
            position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
            if attention_mask is not None:
                attention_mask = attention_mask.view(input_ids.shape[0], -1)
                attention_mask = attention_mask[:, None, None, :]
                attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
                attention_mask = (1.0 - attention_mask) * lib.finfo(self.wte.weight.dtype).min
            hidden_states = self.wte(input_ids) + self.wpe(position_ids)
            presents, attns = (), ()
            for i, block in enumerate(self.h):
                hidden_states, present, w = block(hidden_states, None if past_key_values is None else
                                                  past_key_values[i], attention_mask, use_cache)
                presents += (present,)
                attns += (w,)
            hidden_states = self.ln_f(hidden_states)
            lm_logits = self.lm_head(hidden_states)
            loss = None
            if labels is not None:
                shift_logits = lm_logits[..., :-1, :].contiguous()
                shift_labels = labels[..., 1:].contiguous()
                loss_fct = nn.CrossEntropyLoss()
                loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
            return loss, lm_logits, presents, attns

    return GPT2LMHeadModel


def case_gpt2_hf_padded_batch_loss_and_cache(lib):
    """HF GPT-2: Conv1D (addmm over a view), gelu_new formula and GELU(approximate='tanh'), the bool tril buffer
    (persistent=False: not in state_dict) with finfo.min via torch.where, the padded attention_mask expanded as
    (1.0 - mask) * finfo.min, tied lm_head, shift_logits/shift_labels with -100 labels; a cached decode step
    equals the full forward; gradients of the tied weight."""
    GPT2 = _gpt2(lib)
    model = _init(lib, GPT2())
    ids = lib.tensor([[3, 8, 1, 4, 0, 0], [5, 6, 2, 9, 11, 7]])
    am = lib.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    labels = ids.masked_fill(am == 0, -100)
    loss, logits, _, attns = model(ids, attention_mask=am, labels=labels)
    loss.backward()
    out = [loss, logits, attns[0], list(model.state_dict()), model.lm_head.weight is model.wte.weight,
           model.wte.weight.grad, model.h[0].attn.c_attn.weight.grad, model.h[1].mlp.c_fc.bias.grad,
           len(list(model.parameters())), lib.finfo(lib.float32).min, lib.finfo(lib.bfloat16).min]
    with lib.no_grad():
        _, l1, presents, _ = model(ids[:, :5], use_cache=True)
        _, l2, presents2, _ = model(ids[:, 5:], past_key_values=presents, use_cache=True)
        _, lf, _, _ = model(ids)
    out += [l2[:, -1], lf[:, -1], presents2[1][0].shape]
    return out


def case_bert_embeddings_pooler_mlm_head(lib):
    """HF BERT: word + position (position_ids buffer with persistent=False, sliced) + token_type embeddings
    (token_type_ids buffer of zeros expanded), LayerNorm, the extended attention mask
    (1.0 - mask[:, None, None, :]) * finfo.min, self-attention with permute/view, the pooler's tanh over the first
    token, the MLM head (dense, gelu, LayerNorm, decoder tied with its own bias), MLM loss with -100 and NSP loss."""
    nn, F = lib.nn, lib.nn.functional
    H, nh, V = 8, 2, 19

    class BertEmbeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(V, H, padding_idx=0)
            self.position_embeddings = nn.Embedding(12, H)
            self.token_type_embeddings = nn.Embedding(2, H)
            self.LayerNorm = nn.LayerNorm(H, eps=1e-12)
            self.dropout = nn.Dropout(0.1)
            self.register_buffer("position_ids", lib.arange(12).expand((1, -1)), persistent=False)
            self.register_buffer("token_type_ids", lib.zeros(self.position_ids.size(), dtype=lib.long),
                                 persistent=False)

        def forward(self, input_ids, token_type_ids=None):
            seq_length = input_ids.size()[1]
            position_ids = self.position_ids[:, 0: seq_length]
            if token_type_ids is None:
                buffered = self.token_type_ids[:, :seq_length]
                token_type_ids = buffered.expand(input_ids.size()[0], seq_length)
            emb = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
            emb += self.position_embeddings(position_ids)
            return self.dropout(self.LayerNorm(emb))

    class BertSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.num_attention_heads, self.attention_head_size = nh, H // nh
            self.all_head_size = H
            self.query, self.key, self.value = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H)

        def transpose_for_scores(self, x):
            new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
            return x.view(new_x_shape).permute(0, 2, 1, 3)

        def forward(self, hidden_states, attention_mask):
            q = self.transpose_for_scores(self.query(hidden_states))
            k = self.transpose_for_scores(self.key(hidden_states))
            v = self.transpose_for_scores(self.value(hidden_states))
            scores = lib.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
            scores = scores + attention_mask
            probs = nn.functional.softmax(scores, dim=-1)
            ctx = lib.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            return ctx.view(ctx.size()[:-2] + (self.all_head_size,))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = BertEmbeddings()
            self.attn = BertSelfAttention()
            self.out = nn.Linear(H, H)
            self.ln = nn.LayerNorm(H, eps=1e-12)
            self.pooler = nn.Linear(H, H)
            self.transform = nn.Linear(H, H)
            self.transform_ln = nn.LayerNorm(H, eps=1e-12)
            self.decoder = nn.Linear(H, V, bias=False)
            self.bias = nn.Parameter(lib.zeros(V))
            self.decoder.bias = self.bias
            self.seq_relationship = nn.Linear(H, 2)
            self.decoder.weight = self.embeddings.word_embeddings.weight

        def get_extended_attention_mask(self, attention_mask, dtype):
            ext = attention_mask[:, None, None, :]
            ext = ext.to(dtype=dtype)
            return (1.0 - ext) * lib.finfo(dtype).min

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            ext = self.get_extended_attention_mask(attention_mask, self.out.weight.dtype)
            h = self.embeddings(input_ids, token_type_ids)
            h = self.ln(self.out(self.attn(h, ext)) + h)
            pooled = lib.tanh(self.pooler(h[:, 0]))
            t = self.transform_ln(F.gelu(self.transform(h)))
            return self.decoder(t), self.seq_relationship(pooled), ext

    model = _init(lib, Bert())
    model.eval()
    ids = lib.tensor([[2, 7, 9, 3, 5, 0], [2, 4, 3, 8, 6, 3]])
    am = (ids != 0).long()
    tt = lib.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
    mlm_labels = lib.full_like(ids, -100)
    mlm_labels[:, 1] = ids[:, 1]
    mlm_labels[1, 4] = 6
    nsp = lib.tensor([0, 1])
    scores, rel, ext = model(ids, am, tt)
    loss_fct = nn.CrossEntropyLoss()
    mlm = loss_fct(scores.view(-1, V), mlm_labels.view(-1))
    nsp_loss = loss_fct(rel.view(-1, 2), nsp.view(-1))
    (mlm + nsp_loss).backward()
    s2, r2, _ = model(ids, am)
    return [scores, rel, ext, mlm, nsp_loss, list(model.state_dict()), list(dict(model.named_buffers())),
            model.embeddings.word_embeddings.weight.grad, model.bias.grad, model.pooler.weight.grad, s2, r2,
            model.embeddings.position_ids.stride(), model.embeddings.token_type_ids.shape]


def case_t5_relative_position_bias(lib):
    """HF T5: _relative_position_bucket (bidirectional and causal: abs, full_like, torch.min, log of float
    ratios, .to(torch.long), where), compute_bias through an Embedding and permute, scores + position_bias
    (plus a causal mask of finfo.min), softmax(scores.float()).type_as(scores), gradients of the bias table."""
    nn, F = lib.nn, lib.nn.functional

    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(lib.long) * num_buckets
            relative_position = lib.abs(relative_position)
        else:
            relative_position = -lib.min(relative_position, lib.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            lib.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(lib.long)
        relative_position_if_large = lib.min(
            relative_position_if_large, lib.full_like(relative_position_if_large, num_buckets - 1)
        )
        relative_buckets += lib.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    class Bias(nn.Module):
        def __init__(self, bidirectional, nb=8, md=20, heads=2):
            super().__init__()
            self.bidirectional, self.nb, self.md = bidirectional, nb, md
            self.relative_attention_bias = nn.Embedding(nb, heads)

        def compute_bias(self, query_length, key_length):
            context_position = lib.arange(query_length, dtype=lib.long)[:, None]
            memory_position = lib.arange(key_length, dtype=lib.long)[None, :]
            relative_position = memory_position - context_position
            relative_position_bucket = _relative_position_bucket(
                relative_position, bidirectional=self.bidirectional, num_buckets=self.nb, max_distance=self.md)
            values = self.relative_attention_bias(relative_position_bucket)
            values = values.permute([2, 0, 1]).unsqueeze(0)
            return values, relative_position_bucket

    out = []
    rp = lib.arange(-40, 41).view(9, 9)
    out.append(_relative_position_bucket(rp))
    out.append(_relative_position_bucket(rp, bidirectional=False, num_buckets=16, max_distance=30))
    for bidir in (True, False):
        mod = _init(lib, Bias(bidir))
        bias, buckets = mod.compute_bias(6, 6)
        q = _data(lib, 1, 2, 6, 4)
        k = _data(lib, 1, 2, 6, 4, seed=1)
        v = _data(lib, 1, 2, 6, 4, seed=2)
        scores = lib.matmul(q, k.transpose(3, 2))
        if not bidir:
            causal = lib.tril(lib.ones(6, 6, dtype=lib.bool))
            bias = bias + lib.where(causal, 0.0, lib.finfo(scores.dtype).min)[None, None]
        scores += bias
        attn_weights = F.softmax(scores.float(), dim=-1).type_as(scores)
        o = lib.matmul(attn_weights, v)
        o.pow(2).sum().backward()
        out += [buckets, bias, o, mod.relative_attention_bias.weight.grad]
    return out


def case_logits_processors(lib):
    """HF logits processors on a batch of scores: temperature, TopK (topk + `< values[..., -1, None]` +
    masked_fill with -inf), TopP (sort ascending, softmax, cumsum, <= 1 - top_p, keep min_tokens, scatter back),
    nanoGPT-style top-p (sort descending, shift right with clone, scatter), repetition penalty (gather, where,
    scatter_), min-length EOS suppression, no-repeat bigram ban by index assignment, typical decoding (entropy),
    then softmax and argmax instead of multinomial."""
    F = lib.nn.functional
    scores0 = _data(lib, 3, 11) * 3.0
    scores0[1, 4] = scores0[1, 2]  # a tie
    input_ids = lib.tensor([[1, 4, 4, 7], [2, 3, 5, 2], [10, 0, 1, 10]])
    out = []
    filter_value = -float("Inf")
    # temperature
    scores = scores0 / 0.7
    # repetition penalty
    penalty = 1.3
    score = lib.gather(scores, 1, input_ids)
    score = lib.where(score < 0, score * penalty, score / penalty)
    scores_processed = scores.scatter(1, input_ids, score)
    out.append(scores_processed)
    # top-k
    top_k = 4
    indices_to_remove = scores_processed < lib.topk(scores_processed, top_k)[0][..., -1, None]
    s_topk = scores_processed.masked_fill(indices_to_remove, filter_value)
    out.append(s_topk)
    # top-p (HF)
    top_p, min_tokens_to_keep = 0.8, 1
    sorted_logits, sorted_indices = lib.sort(scores_processed, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    s_topp = scores_processed.masked_fill(indices_to_remove, filter_value)
    out += [sorted_indices_to_remove, s_topp]
    # top-p (descending, shift right)
    sorted_logits, sorted_indices = lib.sort(scores_processed, descending=True)
    cumulative_probs = lib.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
    sorted_indices_to_remove = cumulative_probs > top_p
    sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
    sorted_indices_to_remove[..., 0] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(dim=1, index=sorted_indices, src=sorted_indices_to_remove)
    s2 = scores_processed.clone()
    s2[indices_to_remove] = filter_value
    out += [s2, indices_to_remove.dtype]
    # min length: suppress eos
    eos = lib.tensor([3, 9])
    vocab_tensor = lib.arange(scores.shape[-1])
    eos_token_mask = lib.isin(vocab_tensor, eos)
    s3 = scores.clone()
    s3 = lib.where(eos_token_mask, -math.inf, s3)
    out.append(s3)
    # no repeat bigram
    banned = [[] for _ in range(3)]
    for b, ids in enumerate(input_ids.tolist()):
        prev = tuple(ids[-1:])
        for i in range(len(ids) - 1):
            if tuple(ids[i:i + 1]) == prev:
                banned[b].append(ids[i + 1])
    s4 = scores.clone()
    for i, toks in enumerate(banned):
        s4[i, toks] = -float("inf")
    out += [banned, s4]
    # typical
    normalized = lib.nn.functional.log_softmax(scores, dim=-1)
    p = lib.exp(normalized)
    ent = -(normalized * p).nansum(-1, keepdim=True)
    shifted_scores = lib.abs((-normalized) - ent)
    sorted_scores, sorted_indices = lib.sort(shifted_scores, descending=False)
    sorted_logits = scores.gather(-1, sorted_indices)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    last_ind = (cumulative_probs < 0.9).sum(dim=1)
    last_ind.clamp_(max=sorted_scores.shape[-1] - 1)
    sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
    sorted_indices_to_remove[..., :1] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    s5 = scores.masked_fill(indices_to_remove, filter_value)
    out += [ent, last_ind, s5]
    for s in (s_topk, s_topp, s2, s5):
        probs = F.softmax(s, dim=-1)
        out += [probs, lib.argmax(probs, dim=-1), probs.max(dim=-1)]
    # an all -inf row through softmax (nan)
    out.append(F.softmax(lib.full((1, 3), -float("inf")), -1))
    return out


def case_beam_search_bookkeeping(lib):
    """Beam search as HF/fairseq write it: scores of each beam plus log_softmax of the next-token logits,
    view(batch, beams * vocab), topk(2 * beams) over the flattened scores, next_indices = tokens // vocab
    (and torch.div(rounding_mode='floor')), next_tokens = tokens % vocab, batch_beam_idx built with arange and
    index_select of the running sequences, cat of the chosen tokens, length-penalised final scores, EOS handling."""
    F = lib.nn.functional
    batch_size, num_beams, vocab = 2, 3, 7
    eos = 6
    W = _data(lib, 5, vocab) * 2
    emb = _data(lib, vocab, 5, seed=3)
    input_ids = lib.tensor([[1], [2]]).repeat_interleave(num_beams, dim=0)
    beam_scores = lib.zeros((batch_size, num_beams), dtype=lib.float)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view((batch_size * num_beams,))
    out = []
    finished = []
    for step in range(4):
        h = emb[input_ids].mean(1)
        logits = h @ W + 0.1 * input_ids.shape[1]
        next_token_scores = F.log_softmax(logits, dim=-1)
        next_token_scores = next_token_scores + beam_scores[:, None].expand_as(next_token_scores)
        next_token_scores = next_token_scores.view(batch_size, num_beams * vocab)
        next_token_scores, next_tokens = lib.topk(next_token_scores, 2 * num_beams, dim=1, largest=True,
                                                  sorted=True)
        next_indices = lib.div(next_tokens, vocab, rounding_mode="floor")
        assert lib.equal(next_indices, next_tokens // vocab)
        next_tokens = next_tokens % vocab
        # keep the first num_beams non-eos candidates per batch
        new_scores = lib.zeros((batch_size, num_beams), dtype=next_token_scores.dtype)
        new_tokens = lib.zeros((batch_size, num_beams), dtype=next_tokens.dtype)
        new_indices = lib.zeros((batch_size, num_beams), dtype=next_indices.dtype)
        for b in range(batch_size):
            j = 0
            for rank, (tok, score, idx) in enumerate(zip(next_tokens[b], next_token_scores[b], next_indices[b])):
                batch_beam_idx = b * num_beams + idx
                if tok.item() == eos:
                    seq = lib.cat([input_ids[batch_beam_idx], tok.unsqueeze(0)])
                    finished.append((b, score.item() / (seq.shape[-1] ** 1.0), seq.tolist()))
                    continue
                new_scores[b, j], new_tokens[b, j], new_indices[b, j] = score, tok, batch_beam_idx
                j += 1
                if j == num_beams:
                    break
        beam_scores = new_scores.view(-1)
        beam_next_tokens = new_tokens.view(-1)
        beam_idx = new_indices.view(-1)
        input_ids = lib.cat([input_ids[beam_idx, :], beam_next_tokens.unsqueeze(-1)], dim=-1)
        reordered = emb.index_select(0, beam_idx)
        out += [next_token_scores, next_tokens, next_indices, beam_scores, input_ids, reordered]
    out.append(finished)
    best = beam_scores.view(batch_size, num_beams).argmax(-1)
    out.append(input_ids.view(batch_size, num_beams, -1)[lib.arange(batch_size), best])
    return out


def _hf_optimizer(lib, model, lr, wd, steps, warmup):
    no_decay = ["bias", "LayerNorm.weight", "layernorm.weight", "norm.weight", "ln_1.weight", "ln_2.weight",
                "ln_f.weight"]
    optimizer_grouped_parameters = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": wd},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = lib.optim.AdamW(optimizer_grouped_parameters, lr=lr, eps=1e-8)

    def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
        def lr_lambda(current_step: int):
            if current_step < num_warmup_steps:
                return float(current_step) / float(max(1, num_warmup_steps))
            return max(0.0, float(num_training_steps - current_step) /
                       float(max(1, num_training_steps - num_warmup_steps)))
        return lib.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch)

    def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5):
        def lr_lambda(current_step):
            if current_step < num_warmup_steps:
                return float(current_step) / float(max(1, num_warmup_steps))
            progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
        return lib.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    sched = get_linear_schedule_with_warmup(optimizer, warmup, steps)
    return optimizer, sched, get_cosine_schedule_with_warmup


def case_gpt2_trainer_loop_grad_accum(lib):
    """The HF Trainer's loop on GPT-2: AdamW with the no-decay groups by name, get_linear_schedule_with_warmup as
    LambdaLR, gradient accumulation (loss / accum steps), clip_grad_norm_(max 1.0) returning the total norm,
    optimizer.step / scheduler.step / zero_grad; compares losses, the lr sequence, norms, final parameters and the
    optimizer and scheduler state_dicts."""
    GPT2 = _gpt2(lib)
    model = _init(lib, GPT2(n_layer=1))
    model.train()
    steps, accum = 2, 2
    optimizer, scheduler, _ = _hf_optimizer(lib, model, 5e-3, 0.01, steps, 1)
    data = lib.arange(60).view(10, 6) * 7 % 17
    out = [[len(g["params"]) for g in optimizer.param_groups], scheduler.get_last_lr()]
    for step in range(steps * accum):
        batch = data[step % 10: step % 10 + 2]
        am = lib.ones_like(batch)
        am[0, -1] = 0
        labels = batch.masked_fill(am == 0, -100)
        loss = model(batch, attention_mask=am, labels=labels)[0]
        loss = loss / accum
        loss.backward()
        out.append(loss.detach())
        if (step + 1) % accum == 0:
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            out += [norm, scheduler.get_last_lr(), optimizer.param_groups[0]["lr"]]
    out.append(dict(model.named_parameters()))
    out.append(scheduler.state_dict())
    sd = optimizer.state_dict()
    out += [sd["param_groups"], sd["state"][0], sd["state"][len(sd["state"]) - 1]]
    return out


def case_llama_compiled_train_step(lib, jit):
    """A LLaMA training step under torch.compile-style jit: forward with SDPA(is_causal) and GQA, shifted
    cross-entropy with ignore_index=-100, backward, clip_grad_norm_, AdamW with no-decay groups, a warmup-cosine
    LambdaLR stepped outside the compiled step; losses, norms and final parameters."""
    Llama = _llama(lib, False)
    model = _init(lib, Llama(_Cfg(n_layers=1)))
    optimizer, _, cosine = _hf_optimizer(lib, model, 3e-3, 0.1, 4, 1)
    scheduler = cosine(optimizer, 1, 4)
    F = lib.nn.functional

    def train_step(tokens, labels):
        logits, _ = model(tokens)
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1),
                               ignore_index=-100)
        loss.backward()
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach(), norm
    step = jit(train_step)
    out = []
    for it in range(4):
        tokens = (lib.arange(10).view(2, 5) * (it + 3)) % 13
        labels = tokens.clone()
        labels[:, :2] = -100
        loss, norm = step(tokens, labels)
        scheduler.step()
        out += [loss, norm, scheduler.get_last_lr()]
    out.append(dict(model.named_parameters()))
    return out


def case_llama_autocast_bf16_train(lib):
    """LLaMA trained under torch.autocast('cpu', dtype=torch.bfloat16): Linear in bfloat16, RMSNorm's explicit
    float32 (pow/mean/rsqrt are not autocast ops), SDPA, the logits .float(), cross_entropy in float32; float32
    master weights updated by AdamW; grads' dtypes and the final parameters."""
    Llama = _llama(lib, False)
    model = _init(lib, Llama(_Cfg(n_layers=1)))
    optimizer, sched, _ = _hf_optimizer(lib, model, 1e-2, 0.01, 3, 1)
    F = lib.nn.functional
    out = []
    for it in range(2):
        tokens = (lib.arange(10).view(2, 5) * (it + 2)) % 13
        with lib.autocast("cpu", dtype=lib.bfloat16):
            logits, past = model(tokens)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, 13), tokens[:, 1:].reshape(-1))
        out += [logits.dtype, past[0][0].dtype, loss.dtype]
        loss.backward()
        out.append([p.grad.dtype for p in model.parameters()])
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        sched.step()
        optimizer.zero_grad()
        out.append(loss)
    out.append(dict(model.named_parameters()))
    return out


def case_autocast_leaves_inplace_and_out_ops_alone(lib):
    """Under torch.autocast('cpu', bfloat16), in-place and out= ops are not autocast (PyTorch's policy lists the
    functional ops only): a float32 accumulator updated with addmm_/baddbmm_/addbmm_ stays exact, addmm(out=float32)
    computes in float32, a float32 static cache written with index_copy_ of a bfloat16 key raises the dtype error
    (the HF static-cache pitfall: the key must be cast to the cache's dtype first), while the functional ops in the
    same block (linear, index_copy) are cast."""
    a = lib.arange(4.).view(2, 2) * 1.001 + 0.3
    out = []
    with lib.autocast("cpu", dtype=lib.bfloat16):
        acc = lib.zeros(2, 2)
        acc.addmm_(a, a)
        acc3 = lib.zeros(1, 2, 2).baddbmm_(a[None], a[None], alpha=0.5)
        acc.addbmm_(a[None], a[None], beta=0.5)
        buf = lib.empty(2, 2)
        lib.addmm(a, a, a, out=buf)
        cache = lib.zeros(1, 2, 4, 2)
        k = lib.nn.functional.linear(a, a)[None, :, None, :].expand(1, 2, 2, 2)  # cast: bfloat16
        try:
            cache.index_copy_(2, lib.tensor([0, 1]), k)
            err = None
        except RuntimeError as e:
            err = str(e)
        cache.index_copy_(2, lib.tensor([0, 1]), k.to(cache.dtype))
        promoted = lib.index_copy(cache, 2, lib.tensor([2, 3]), k * 1.5)  # functional: promoted to float32
        out += [acc, acc3, buf, k, err, cache, promoted]
    return out


def case_sdpa_mask_shapes_llm_code_gets_wrong(lib):
    """Mask shapes LLM code gets wrong with F.scaled_dot_product_attention, as PyTorch's CPU kernels answer: a 1-d
    key-padding mask (or a 0-d one) on 4-d inputs raises the IndexError of the flash kernel's shape check (it reads
    attn_mask.size(-2)); on 3-d inputs, or when the mask requires grad, the math kernel broadcasts it. A mask
    broadcasting to more than the scores' shape (a (B, L, S) padding mask without the head axis, a 5-d mask) raises
    the math kernel's in-place add error; a (B, 1, L, S) mask is fine."""
    F = lib.nn.functional
    q = lib.arange(24.).view(2, 1, 6, 2).sin()
    kv = lib.arange(24.).view(2, 1, 6, 2).cos()
    pad = lib.tensor([True, True, True, True, False, False])
    out = []
    for args in [(q, pad), (q, pad.float()), (q, pad[0]), (q[:, 0], pad), (q, lib.zeros(6, requires_grad=True)),
                 (q, pad.expand(2, 6, 6)), (q[:1], lib.zeros(2, 1, 6, 6)), (q, lib.zeros(1, 2, 1, 6, 6)),
                 (q, pad[None, None, None].expand(2, 1, 6, 6)), (q[0, 0], lib.zeros(1, 6, 6))]:
        x, m = args
        k = kv[:x.shape[0]] if x.ndim == 4 else (kv[:, 0] if x.ndim == 3 else kv[0, 0])
        try:
            out.append(F.scaled_dot_product_attention(x, k, k, attn_mask=m))
        except (IndexError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def case_compiled_static_cache_decode(lib, jit):
    """A decode step compiled once (the torch.compile(mode='reduce-overhead') recipe for a static KV cache), with
    Hugging Face StaticCache's setup: the cache tensors marked with torch._dynamo.mark_static_address when not
    compiling (torchish had no mark_static_address), registered as buffers, written in place with index_copy_ at
    cache_position (a tensor argument) and by index assignment, attention over the full cache with a mask from
    arange <= cache_position; the same compiled step reused for every position; the caches afterwards."""
    nn, F = lib.nn, lib.nn.functional

    class StaticCacheAttn(nn.Module):
        def __init__(self, dim=8, heads=2, max_len=6):
            super().__init__()
            self.heads, self.hd, self.max_len = heads, dim // heads, max_len
            self.emb = nn.Embedding(11, dim)
            self.qkv = nn.Linear(dim, 3 * dim, bias=False)
            self.o = nn.Linear(dim, dim, bias=False)
            self.head = nn.Linear(dim, 11, bias=False)
            k_cache = lib.zeros(1, heads, max_len, dim // heads)
            v_cache = lib.zeros(1, heads, max_len, dim // heads)
            if not lib.compiler.is_compiling():
                lib._dynamo.mark_static_address(k_cache)
                lib._dynamo.mark_static_address(v_cache)
            self.register_buffer("k_cache", k_cache, persistent=False)
            self.register_buffer("v_cache", v_cache, persistent=False)

        def forward(self, token, cache_position):
            x = self.emb(token)
            q, k, v = self.qkv(x).view(1, -1, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
            self.k_cache.index_copy_(2, cache_position, k)
            self.v_cache[:, :, cache_position] = v
            mask = lib.arange(self.max_len) <= cache_position[:, None]
            o = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask[None, None])
            o = self.o(o.transpose(1, 2).reshape(1, -1, self.heads * self.hd)) + x
            return self.head(o)

    model = _init(lib, StaticCacheAttn())
    model.eval()

    @lib.no_grad()
    def decode_one(token, cache_position):
        logits = model(token, cache_position)
        return logits[:, -1].argmax(-1, keepdim=True), logits

    step = jit(decode_one)
    token = lib.tensor([[3]])
    out = []
    for pos in range(5):
        token, logits = step(token, lib.tensor([pos]))
        out += [token, logits]
    out += [model.k_cache.clone(), model.v_cache.clone(), model.k_cache._dynamo_static_input_type]
    model.k_cache.zero_()
    model.v_cache.zero_()
    token, logits = step(lib.tensor([[7]]), lib.tensor([0]))
    out += [token, logits, model.k_cache.sum()]
    return out


test_script_matches_torch = script_test(globals(), avx512={
    "gpt2_trainer_loop_grad_accum": "the float32 rounding of its GELU/softmax kernels (3.8e-4 apart after the loop)"})
