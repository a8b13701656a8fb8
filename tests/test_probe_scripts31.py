"""Third-party programs, round 31: model code in the style of timm, Hugging Face generation, EDM diffusion
and lucidrains' repositories, run with ``torch.manual_seed`` and default initialisation in both libraries and
compared with torch 2.13 by ``assert_script_matches`` (tests/oracle.py): a timm ViT with qk-norm
attention (fused ``scaled_dot_product_attention`` with a boolean mask beside the unfused path), LayerScale (in place),
DropPath drawing from its own Generator, ``trunc_normal_`` through ``model.apply``, no-weight-decay parameter groups
and a warmup-cosine LambdaLR; a generation loop with a KV cache grown by ``cat``, HF's expanded and causal
``finfo.min`` masks, position ids from a mask's cumsum, no-repeat-ngram/min-length/typical/eta processors and
``multinomial`` with a Generator; EDM's preconditioned denoiser trained on log-normal sigmas and Karras' Heun
sampler with churn in float64; local windowed attention with interleaved rotary embeddings, ``look_around`` by
``F.pad`` and a token shift by a negative pad, ``Tensor.unfold`` patches (test_probe_scripts32.py: LoRA).

Nothing in these programs differed from PyTorch's results (test_probe_scripts32.py holds the round's fixes).
Left out for time (they matched, ~4 s of XLA compiles each): a Mamba block (depthwise causal Conv1d, softplus dt,
the selective scan by einsum), a capsule network's dynamic routing, log-domain Sinkhorn transport, RWKV's time and
channel mixing (``nn.ZeroPad2d((0, 0, 1, -1))``), k-means++ with a GMM fitted by EM, MoCo's key queue and
momentum encoder with BYOL/SimSiam losses.
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_timm_vit_qknorm_layerscale_droppath(lib):
    """timm's VisionTransformer pieces: Attention with q/k LayerNorm (fused and unfused), LayerScale (one in place),
    DropPath with its own Generator and stochastic-depth rates from ``linspace``, ``_init_weights`` by ``apply``,
    ``param_groups_weight_decay`` and a warmup-cosine LambdaLR over AdamW with label smoothing."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    g = lib.Generator().manual_seed(7)

    def drop_path(x, drop_prob, training):
        if drop_prob == 0.0 or not training:
            return x
        keep_prob = 1 - drop_prob
        random_tensor = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep_prob, generator=g)
        return x * random_tensor.div_(keep_prob)

    class LayerScale(nn.Module):
        def __init__(self, dim, init_values=0.1, inplace=False):
            super().__init__()
            self.inplace = inplace
            self.gamma = nn.Parameter(init_values * lib.ones(dim))

        def forward(self, x):
            return x.mul_(self.gamma) if self.inplace else x * self.gamma

    class Attention(nn.Module):
        def __init__(self, dim, num_heads=2, fused=True):
            super().__init__()
            self.num_heads, self.head_dim = num_heads, dim // num_heads
            self.scale, self.fused = self.head_dim ** -0.5, fused
            self.qkv = nn.Linear(dim, dim * 3)
            self.q_norm, self.k_norm = nn.LayerNorm(self.head_dim), nn.LayerNorm(self.head_dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, attn_mask=None):
            B, N, C = x.shape
            q, k, v = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
            q, k = self.q_norm(q), self.k_norm(k)
            if self.fused:
                x = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            else:
                attn = (q * self.scale) @ k.transpose(-2, -1)
                if attn_mask is not None:
                    attn = attn.masked_fill(~attn_mask, float("-inf"))
                x = attn.softmax(dim=-1) @ v
            return self.proj(x.transpose(1, 2).reshape(B, N, C))

    class Block(nn.Module):
        def __init__(self, dim, dpr):
            super().__init__()
            self.norm1, self.attn, self.ls1 = nn.LayerNorm(dim, eps=1e-6), Attention(dim), LayerScale(dim)
            self.norm2, self.ls2 = nn.LayerNorm(dim, eps=1e-6), LayerScale(dim, inplace=True)
            self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim))
            self.dpr = dpr

        def forward(self, x):
            x = x + drop_path(self.ls1(self.attn(self.norm1(x))), self.dpr, self.training)
            return x + drop_path(self.ls2(self.mlp(self.norm2(x))), self.dpr, self.training)

    class ViT(nn.Module):
        def __init__(self, dim=8, depth=2):
            super().__init__()
            self.patch = nn.Conv2d(1, dim, 2, 2)
            self.cls_token = nn.Parameter(lib.zeros(1, 1, dim))
            self.pos_embed = nn.Parameter(lib.randn(1, 5, dim) * 0.02)
            dpr = [x.item() for x in lib.linspace(0, 0.5, depth)]
            self.blocks = nn.Sequential(*[Block(dim, dpr[i]) for i in range(depth)])
            self.norm, self.head = nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, 3)
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
            nn.init.normal_(self.cls_token, std=1e-6)
            self.apply(self._init_weights)

        def _init_weights(self, m):
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.constant_(m.bias, 0)
                nn.init.constant_(m.weight, 1.0)

        def forward(self, img):
            x = self.patch(img).flatten(2).transpose(1, 2)
            x = lib.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
            return self.head(self.norm(self.blocks(x))[:, 0])

    model = ViT()
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if param.ndim <= 1 or name.endswith(".bias") or name in {"pos_embed", "cls_token"}
         else decay).append(param)
    opt = lib.optim.AdamW([{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": 0.05}],
                          lr=1e-2)
    warmup, total = 2, 5

    def lr_lambda(step):
        if step < warmup:
            return float(step) / float(max(1, warmup))
        progress = float(step - warmup) / float(max(1, total - warmup))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))

    sched = lib.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    imgs, y = lib.randn(4, 1, 4, 4), lib.tensor([0, 2, 1, 0])
    out = [[len(no_decay), len(decay)], model.pos_embed.detach().clone(),
           model.blocks[0].mlp[0].weight.detach().clone()]
    for step in range(total):
        loss = F.cross_entropy(model(imgs), y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        out.append((loss.item(), sched.get_last_lr(), model.blocks[1].ls2.gamma.grad))
    model.eval()
    with lib.no_grad():
        out.append(model(imgs))
    a, b = model.blocks[0].attn, Attention(8, fused=False)
    b.load_state_dict(a.state_dict())
    x, mask = lib.randn(4, 5, 8), lib.ones(5, 5, dtype=lib.bool).tril()
    return out + [a(x, mask), b(x, mask), g.initial_seed(), lib.rand(2, generator=g)]


def case_hf_generate_kv_cache_processors(lib):
    """A decoder with a KV cache run by a sampling loop as ``generate`` writes it: ``_expand_mask`` and
    ``_make_causal_mask`` with ``finfo.min`` (past length prepended), position ids from the mask's cumsum, a
    float32 softmax clamped at finfo.min, min-length and no-repeat-ngram (``tolist`` and list indexing) processors,
    typical and eta warpers, ``multinomial`` with a Generator, finished rows padded, ``isin`` on eos."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    V, D, pad, eos, dtype = 7, 8, 0, 6, lib.float32

    def expand_mask(mask, dtype, tgt_len):
        bsz, src_len = mask.size()
        inverted = 1.0 - mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
        return inverted.masked_fill(inverted.to(lib.bool), lib.finfo(dtype).min)

    def make_causal_mask(shape, dtype, past_len):
        bsz, tgt_len = shape
        mask = lib.full((tgt_len, tgt_len), lib.finfo(dtype).min)
        mask_cond = lib.arange(mask.size(-1))
        mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
        if past_len > 0:
            mask = lib.cat([lib.zeros(tgt_len, past_len, dtype=dtype), mask.to(dtype)], dim=-1)
        return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_len)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.pos = nn.Embedding(V, D, padding_idx=pad), nn.Embedding(16, D)
            self.qkv, self.o, self.head = nn.Linear(D, 3 * D), nn.Linear(D, D), nn.Linear(D, V, bias=False)

        def forward(self, ids, attention_mask, position_ids, past=None):
            x = self.emb(ids) + self.pos(position_ids)
            q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
            past_len = 0
            if past is not None:
                past_len = past[0].shape[-2]
                k, v = lib.cat([past[0], k], dim=-2), lib.cat([past[1], v], dim=-2)
            m = make_causal_mask(ids.shape, dtype, past_len) + expand_mask(attention_mask, dtype, ids.shape[1])
            s = lib.max((q @ k.transpose(-1, -2)) / math.sqrt(D) + m, lib.tensor(lib.finfo(dtype).min))
            a = F.softmax(s, dim=-1, dtype=lib.float32).to(q.dtype)
            return self.head(self.o((a @ v).squeeze(1)) + x), (k, v)

    def typical(scores, mass=0.9, min_keep=1):
        normalized = F.log_softmax(scores, dim=-1)
        ent = -(normalized * normalized.exp()).nansum(-1, keepdim=True)
        sorted_scores, sorted_indices = lib.sort(lib.abs((-normalized) - ent), descending=False)
        cumulative = scores.gather(-1, sorted_indices).softmax(dim=-1).cumsum(dim=-1)
        last_ind = (cumulative < mass).sum(dim=1)
        last_ind.clamp_(max=sorted_scores.shape[-1] - 1)
        to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
        to_remove[..., :min_keep] = 0
        return scores.masked_fill(to_remove.scatter(1, sorted_indices, to_remove), -float("Inf"))

    def eta(scores, epsilon=0.1):
        entropy = lib.distributions.Categorical(logits=scores).entropy()
        e = lib.min(lib.tensor(epsilon), lib.sqrt(lib.tensor(epsilon)) * lib.exp(-entropy))[..., None]
        remove = (scores.softmax(dim=-1) < e) & (scores < lib.topk(scores, 1)[0][..., -1, None])
        return scores.masked_fill(remove, -float("Inf"))

    def no_repeat_ngram(input_ids, scores, n=2):
        cur_len = input_ids.shape[1]
        for b in range(input_ids.shape[0]):
            gen, ngrams = input_ids[b].tolist(), {}
            for ng in zip(*[gen[i:] for i in range(n)]):
                ngrams.setdefault(tuple(ng[:-1]), []).append(ng[-1])
            scores[b, ngrams.get(tuple(gen[cur_len + 1 - n:cur_len]), [])] = -float("inf")
        return scores

    model = Model().eval()
    input_ids = lib.tensor([[pad, pad, 3, 4], [1, 2, 3, 5]])
    attention_mask = (input_ids != pad).long()
    g = lib.Generator().manual_seed(3)
    unfinished, cur, past, out = lib.ones(2, dtype=lib.long), input_ids, None, []
    with lib.no_grad():
        for step in range(3):
            position_ids = attention_mask.long().cumsum(-1) - 1
            position_ids.masked_fill_(attention_mask == 0, 1)
            if past is not None:
                position_ids = position_ids[:, -1].unsqueeze(-1)
            logits, past = model(cur, attention_mask, position_ids, past)
            scores = logits[:, -1, :].float()
            if input_ids.shape[-1] < 6:
                scores[:, eos] = -float("inf")
            scores = no_repeat_ngram(input_ids, scores)
            scores = typical(scores) if step % 2 else eta(scores / 0.7)
            probs = F.softmax(scores, dim=-1)
            next_tokens = lib.multinomial(probs, num_samples=1, generator=g).squeeze(1)
            next_tokens = next_tokens * unfinished + pad * (1 - unfinished)
            input_ids = lib.cat([input_ids, next_tokens[:, None]], dim=-1)
            attention_mask = lib.cat([attention_mask, attention_mask.new_ones((2, 1))], dim=-1)
            unfinished = unfinished & ~lib.isin(next_tokens, lib.tensor([eos]))
            cur = next_tokens[:, None]
            out.append((scores, probs, past[0].shape))
            if unfinished.max() == 0:
                break
    return out + [input_ids, attention_mask, unfinished]


def case_edm_karras_heun_sampler_and_precond(lib):
    """NVIDIA's EDM: a preconditioned denoiser (c_skip/c_out/c_in/c_noise) around a conv net with GroupNorm and a
    scale-shift noise embedding (``ger``), EDMLoss on log-normal sigmas with NaN-scrubbed grads (``nan_to_num(out=)``),
    then ``edm_sampler``'s Karras steps in float64 with churn and Heun's second-order correction."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    sigma_min, sigma_max, rho, sigma_data = 0.002, 80.0, 7.0, 0.5

    class Net(nn.Module):
        def __init__(self, ch=4):
            super().__init__()
            self.inp, self.emb = nn.Conv2d(1, ch, 3, padding=1), nn.Linear(8, 2 * ch)
            self.norm, self.out = nn.GroupNorm(2, ch), nn.Conv2d(ch, 1, 3, padding=1)

        def forward(self, x, c_noise):
            freqs = (1 / 10000) ** (lib.arange(start=0, end=4, dtype=lib.float32) / 4)
            e = c_noise.ger(freqs.to(c_noise.dtype))
            scale, shift = self.emb(lib.cat([e.cos(), e.sin()], dim=1))[:, :, None, None].chunk(2, dim=1)
            h = self.norm(F.silu(self.inp(x))) * (1 + scale) + shift
            return self.out(F.silu(h))

    class Precond(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = Net()

        def forward(self, x, sigma):
            sigma = sigma.to(lib.float32).reshape(-1, 1, 1, 1)
            c_skip = sigma_data ** 2 / (sigma ** 2 + sigma_data ** 2)
            c_out = sigma * sigma_data / (sigma ** 2 + sigma_data ** 2).sqrt()
            c_in = 1 / (sigma_data ** 2 + sigma ** 2).sqrt()
            F_x = self.model((c_in * x).to(lib.float32), (sigma.log() / 4).flatten())
            return c_skip * x + c_out * F_x.to(lib.float32)

    net = Precond()
    opt = lib.optim.Adam(net.parameters(), lr=2e-3)
    images, out = lib.randn(4, 1, 4, 4).clamp(-1, 1), []
    for it in range(3):
        sigma = (lib.randn([images.shape[0], 1, 1, 1]) * 1.2 - 1.2).exp()
        weight = (sigma ** 2 + sigma_data ** 2) / (sigma * sigma_data) ** 2
        D_yn = net(images + lib.randn_like(images) * sigma, sigma)
        loss = (weight * ((D_yn - images) ** 2)).sum().mul(1 / images.shape[0])
        opt.zero_grad()
        loss.backward()
        for p in net.parameters():
            if p.grad is not None:
                lib.nan_to_num(p.grad, nan=0, posinf=1e5, neginf=-1e5, out=p.grad)
        opt.step()
        out.append(loss.item())
    num_steps = 4
    step_indices = lib.arange(num_steps, dtype=lib.float64)
    t_steps = (sigma_max ** (1 / rho) + step_indices / (num_steps - 1) * (sigma_min ** (1 / rho)
                                                                         - sigma_max ** (1 / rho))) ** rho
    t_steps = lib.cat([lib.as_tensor(t_steps), lib.zeros_like(t_steps[:1])])
    g = lib.Generator().manual_seed(5)
    x_next = lib.randn([4, 1, 4, 4], generator=g).to(lib.float64) * t_steps[0]
    with lib.no_grad():
        for i, (t_cur, t_next) in enumerate(zip(t_steps[:-1], t_steps[1:])):
            x_cur = x_next
            gamma = min(2.0 / num_steps, math.sqrt(2) - 1)  # (S_churn=2, every step inside [S_min, S_max])
            t_hat = lib.as_tensor(t_cur + gamma * t_cur)
            x_hat = x_cur + (t_hat ** 2 - t_cur ** 2).sqrt() * lib.randn(x_cur.shape, generator=g, dtype=lib.float64)
            d_cur = (x_hat - net(x_hat, t_hat).to(lib.float64)) / t_hat
            x_next = x_hat + (t_next - t_hat) * d_cur
            if i < num_steps - 1:
                d_prime = (x_next - net(x_next, t_next).to(lib.float64)) / t_next
                x_next = x_hat + (t_next - t_hat) * (0.5 * d_cur + 0.5 * d_prime)
            # (float64 arithmetic around a float32 net: compared at float32's tolerance)
            out.append((t_hat, x_next.dtype, x_next.float()))
    return out + [t_steps]


def case_lucidrains_local_attention_rotary(lib):
    """lucidrains' local-attention: a token shift by ``F.pad(x, (0, 0, 1, -1))``, interleaved rotary embeddings
    (einsum, ``repeat_interleave``, ``unflatten``/``unbind``/``stack``/``flatten``), windows by reshape with
    ``look_around`` (F.pad with a value and slices), causal, padding and key masks filled with
    ``-finfo.max``, ``nn.Identity``; then ``Tensor.unfold`` patches, ZeroPad2d/ConstantPad1d with negative pads."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    def rotate_every_two(x):
        x1, x2 = x.unflatten(-1, (-1, 2)).unbind(dim=-1)
        return lib.stack((-x2, x1), dim=-1).flatten(-2)

    def apply_rotary(freqs, t):
        rot_dim = freqs.shape[-1]
        t_rot, t_pass = t[..., :rot_dim], t[..., rot_dim:]
        return lib.cat((t_rot * freqs.cos() + rotate_every_two(t_rot) * freqs.sin(), t_pass), dim=-1)

    def look_around(x, backward=1, forward=0, pad_value=-1, dim=2):
        t = x.shape[1]
        padded_x = F.pad(x, (*((len(x.shape) - dim) * (0, 0)), backward, forward), value=pad_value)
        return lib.cat([padded_x[:, ind:(ind + t), ...] for ind in range(forward + backward + 1)], dim=dim)

    class LocalAttention(nn.Module):
        def __init__(self, dim, heads=2, window=2):
            super().__init__()
            self.heads, self.window, self.dh = heads, window, dim // heads
            self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
            self.register_buffer("inv_freq", 1.0 / (10000 ** (lib.arange(0, self.dh // 2, 2).float() / (self.dh // 2))),
                                 persistent=False)
            self.to_out = nn.Linear(dim, dim) if heads > 1 else nn.Identity()

        def forward(self, x, mask=None):
            x_shift, x_pass = x.chunk(2, dim=-1)
            x = lib.cat((F.pad(x_shift, (0, 0, 1, -1), value=0.0), x_pass), dim=-1)
            b, n, _ = x.shape
            q, k, v = (t.reshape(b, n, self.heads, self.dh).transpose(1, 2).reshape(b * self.heads, n, self.dh)
                       for t in self.to_qkv(x).chunk(3, dim=-1))
            pos = lib.einsum("i , j -> i j", lib.arange(n).type(self.inv_freq.dtype), self.inv_freq)
            pos = pos.repeat_interleave(2, dim=-1)
            q, k = apply_rotary(pos, q), apply_rotary(pos, k)
            w = self.window
            b_t = lib.arange(n).reshape(1, n // w, w)
            bq, bk, bv = (t.reshape(b * self.heads, n // w, w, self.dh) for t in (q, k, v))
            bk, bv, bq_k = look_around(bk, pad_value=0.0), look_around(bv, pad_value=0.0), look_around(b_t)
            sim = lib.einsum("b h i e, b h j e -> b h i j", bq, bk) * self.dh ** -0.5
            mask_value = -lib.finfo(sim.dtype).max
            sim = sim.masked_fill((b_t[..., :, None] < bq_k[..., None, :]) | (bq_k[..., None, :] == -1), mask_value)
            if mask is not None:
                mk = look_around(mask.reshape(b, n // w, w), pad_value=False).repeat_interleave(self.heads, dim=0)
                sim = sim.masked_fill(~mk[..., None, :], mask_value)
            attn = sim.softmax(dim=-1)
            o = lib.einsum("b h i j, b h j e -> b h i e", attn, bv).reshape(b, self.heads, n, self.dh)
            return self.to_out(o.transpose(1, 2).reshape(b, n, -1)), attn

    m = LocalAttention(8)
    x = lib.randn(2, 6, 8, requires_grad=True)
    y, attn = m(x, lib.tensor([[True] * 6, [True] * 4 + [False] * 2]))
    y.square().mean().backward()
    out = [y, attn, x.grad, m.to_qkv.weight.grad, list(m.state_dict())]
    seq = lib.arange(10.0).reshape(1, 1, 10)
    out += [seq.unfold(-1, 4, 3), nn.ZeroPad2d((1, -2, 0, 0))(lib.ones(1, 2, 5)), nn.ConstantPad1d((-1, 2), 3.5)(seq),
            F.pad(seq, (-3, -3)), nn.Identity(54, unused="x")(seq) is seq]
    z = lib.randn(2, 3, 8, 8)
    patches = z.unfold(2, 4, 4).unfold(3, 4, 4).contiguous().view(2, 3, -1, 16).permute(0, 2, 1, 3)
    return out + [patches.shape, patches[0, 1]]


test_script_matches_torch = script_test(globals())
