"""Third-party programs, round 64 (helper 181): parameter-efficient fine-tuning and model surgery written in pure
PyTorch the way peft, loralib and Hugging Face write it (loralib's ``LoRALinear`` with ``kaiming_uniform_(a=sqrt(5))``
A and zero B, input dropout, ``merge``/``unmerge`` in ``train()`` overrides through ``weight.data``,
``mark_only_lora_as_trainable`` and a name-filtered ``lora_state_dict``, injected into a tiny transformer by walking
``named_modules()`` and ``setattr`` on the parent, trained by AdamW over the trainable parameters only and merged;
loralib's fused-qkv ``MergedLinear`` with its grouped ``conv1d`` delta and boolean ``zero_pad`` and its LoRA
``Embedding``; peft's DoRA with detached ``linalg.norm`` column norms and IA3 scaling vectors, merged; prefix tuning
with a reparametrized ``PrefixEncoder`` and prompt tuning with a text-initialised soft prompt through
``scaled_dot_product_attention`` with boolean masks, Hugging Face's additive ``finfo.min`` mask and ``is_causal``;
``parametrize.register_parametrization`` (chained skew/matrix-exp and a two-tensor weight-norm ``right_inverse``),
``parametrizations.orthogonal``, ``weight_norm`` and ``spectral_norm``, ``register_full_backward_hook`` on frozen
blocks, ``load_state_dict(strict=False)`` and ``state_dict(keep_vars=True)``; the LoRA training step compiled with
frozen parameters), re-implemented here, run with torch 2.13 and torchish and compared by ``assert_script_matches``
(tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)

VOCAB, D, HEADS, SEQ, BATCH = 11, 8, 2, 5, 2


def _lora_classes(torch):
    """loralib.layers: ``LoRALayer``, ``Linear`` (as LoRALinear), ``Embedding`` and ``MergedLinear``, as written
    there (``fan_in_fan_out`` for GPT-2's Conv1D layout, ``merge_weights`` on ``train()``/``eval()``)."""
    nn, F = torch.nn, torch.nn.functional

    class LoRALayer:
        def __init__(self, r, lora_alpha, lora_dropout, merge_weights):
            self.r = r
            self.lora_alpha = lora_alpha
            if lora_dropout > 0.:
                self.lora_dropout = nn.Dropout(p=lora_dropout)
            else:
                self.lora_dropout = lambda x: x
            self.merged = False
            self.merge_weights = merge_weights

    class LoRALinear(nn.Linear, LoRALayer):
        def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0., fan_in_fan_out=False,
                     merge_weights=True, **kwargs):
            nn.Linear.__init__(self, in_features, out_features, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                               merge_weights=merge_weights)
            self.fan_in_fan_out = fan_in_fan_out
            if r > 0:
                self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
                self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
                self.scaling = self.lora_alpha / self.r
                self.weight.requires_grad = False
            self.reset_parameters()
            if fan_in_fan_out:
                self.weight.data = self.weight.data.transpose(0, 1)

        def reset_parameters(self):
            nn.Linear.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def train(self, mode: bool = True):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            nn.Linear.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    if self.r > 0:
                        self.weight.data -= T(self.lora_B @ self.lora_A) * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    if self.r > 0:
                        self.weight.data += T(self.lora_B @ self.lora_A) * self.scaling
                    self.merged = True
            return self

        def forward(self, x):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            if self.r > 0 and not self.merged:
                result = F.linear(x, T(self.weight), bias=self.bias)
                result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) \
                    * self.scaling
                return result
            return F.linear(x, T(self.weight), bias=self.bias)

    class LoRAEmbedding(nn.Embedding, LoRALayer):
        def __init__(self, num_embeddings, embedding_dim, r=0, lora_alpha=1, merge_weights=True, **kwargs):
            nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=0, merge_weights=merge_weights)
            if r > 0:
                self.lora_A = nn.Parameter(self.weight.new_zeros((r, num_embeddings)))
                self.lora_B = nn.Parameter(self.weight.new_zeros((embedding_dim, r)))
                self.scaling = self.lora_alpha / self.r
                self.weight.requires_grad = False
            self.reset_parameters()

        def reset_parameters(self):
            nn.Embedding.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                nn.init.zeros_(self.lora_A)
                nn.init.normal_(self.lora_B)

        def train(self, mode: bool = True):
            nn.Embedding.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    if self.r > 0:
                        self.weight.data -= (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    if self.r > 0:
                        self.weight.data += (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                    self.merged = True
            return self

        def forward(self, x):
            if self.r > 0 and not self.merged:
                result = nn.Embedding.forward(self, x)
                after_A = F.embedding(x, self.lora_A.transpose(0, 1), self.padding_idx, self.max_norm,
                                      self.norm_type, self.scale_grad_by_freq, self.sparse)
                result += (after_A @ self.lora_B.transpose(0, 1)) * self.scaling
                return result
            return nn.Embedding.forward(self, x)

    class MergedLinear(nn.Linear, LoRALayer):
        def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0., enable_lora=(False,),
                     fan_in_fan_out=False, merge_weights=True, **kwargs):
            nn.Linear.__init__(self, in_features, out_features, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                               merge_weights=merge_weights)
            assert out_features % len(enable_lora) == 0, 'The length of enable_lora must divide out_features'
            self.enable_lora = enable_lora
            self.fan_in_fan_out = fan_in_fan_out
            if r > 0 and any(enable_lora):
                self.lora_A = nn.Parameter(self.weight.new_zeros((r * sum(enable_lora), in_features)))
                self.lora_B = nn.Parameter(
                    self.weight.new_zeros((out_features // len(enable_lora) * sum(enable_lora), r)))
                self.scaling = self.lora_alpha / self.r
                self.weight.requires_grad = False
                self.lora_ind = self.weight.new_zeros((out_features, ), dtype=torch.bool).view(len(enable_lora), -1)
                self.lora_ind[list(enable_lora), :] = True
                self.lora_ind = self.lora_ind.view(-1)
            self.reset_parameters()
            if fan_in_fan_out:
                self.weight.data = self.weight.data.transpose(0, 1)

        def reset_parameters(self):
            nn.Linear.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def zero_pad(self, x):
            result = x.new_zeros((len(self.lora_ind), *x.shape[1:]))
            result[self.lora_ind] = x
            return result

        def merge_AB(self):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            delta_w = F.conv1d(self.lora_A.unsqueeze(0), self.lora_B.unsqueeze(-1),
                               groups=sum(self.enable_lora)).squeeze(0)
            return T(self.zero_pad(delta_w))

        def train(self, mode: bool = True):
            nn.Linear.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    if self.r > 0 and any(self.enable_lora):
                        self.weight.data -= self.merge_AB() * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    if self.r > 0 and any(self.enable_lora):
                        self.weight.data += self.merge_AB() * self.scaling
                    self.merged = True
            return self

        def forward(self, x):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            if self.merged:
                return F.linear(x, T(self.weight), bias=self.bias)
            result = F.linear(x, T(self.weight), bias=self.bias)
            if self.r > 0:
                result += self.lora_dropout(x) @ T(self.merge_AB().T) * self.scaling
            return result

    def mark_only_lora_as_trainable(model, bias='none'):
        for n, p in model.named_parameters():
            if 'lora_' not in n:
                p.requires_grad = False
        if bias == 'none':
            return
        elif bias == 'all':
            for n, p in model.named_parameters():
                if 'bias' in n:
                    p.requires_grad = True
        elif bias == 'lora_only':
            for m in model.modules():
                if isinstance(m, LoRALayer) and hasattr(m, 'bias') and m.bias is not None:
                    m.bias.requires_grad = True
        else:
            raise NotImplementedError

    def lora_state_dict(model, bias='none'):
        my_state_dict = model.state_dict()
        if bias == 'none':
            return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k}
        elif bias == 'all':
            return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k or 'bias' in k}
        elif bias == 'lora_only':
            to_return = {}
            for k in my_state_dict:
                if 'lora_' in k:
                    to_return[k] = my_state_dict[k]
                    bias_name = k.split('lora_')[0] + 'bias'
                    if bias_name in my_state_dict:
                        to_return[bias_name] = my_state_dict[bias_name]
            return to_return
        raise NotImplementedError

    return LoRALayer, LoRALinear, LoRAEmbedding, MergedLinear, mark_only_lora_as_trainable, lora_state_dict


def _tiny_transformer(torch):
    """A two-block pre-LN decoder with separate q/k/v/o projections and an MLP (the names peft targets)."""
    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj, self.k_proj, self.v_proj = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
            self.o_proj = nn.Linear(D, D)

        def forward(self, x, prefix=None, attn_mask=None):
            b, t, _ = x.shape
            q, k, v = (p(x).view(b, t, HEADS, D // HEADS).transpose(1, 2)
                       for p in (self.q_proj, self.k_proj, self.v_proj))
            if prefix is not None:
                pk, pv = prefix
                k, v = torch.cat([pk, k], dim=2), torch.cat([pv, v], dim=2)
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            else:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o_proj(y.transpose(1, 2).reshape(b, t, D))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.attn = Attention()
            self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

        def forward(self, x, prefix=None, attn_mask=None):
            x = x + self.attn(self.ln1(x), prefix, attn_mask)
            return x + self.mlp(self.ln2(x))

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.ln_f = nn.LayerNorm(D)
            self.lm_head = nn.Linear(D, VOCAB, bias=False)

        def forward(self, ids=None, inputs_embeds=None, past_key_values=None, attn_mask=None):
            x = self.embed(ids) if inputs_embeds is None else inputs_embeds
            for i, blk in enumerate(self.blocks):
                x = blk(x, None if past_key_values is None else past_key_values[i], attn_mask)
            return self.lm_head(self.ln_f(x))

    return TinyLM


def _inject_lora(torch, model, LoRALinear, targets, r=2, alpha=4, dropout=0.1):
    """peft's ``_create_and_replace``: walk ``named_modules()``, build the LoRA layer, reuse the base weights and
    ``setattr`` it on the parent found by ``get_submodule``."""
    nn = torch.nn
    replaced = []
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and name.split('.')[-1] in targets:
            parent_name, _, child = name.rpartition('.')
            parent = model.get_submodule(parent_name)
            new = LoRALinear(module.in_features, module.out_features, r=r, lora_alpha=alpha, lora_dropout=dropout,
                             bias=module.bias is not None)
            new.weight.data = module.weight.data
            if module.bias is not None:
                new.bias.data = module.bias.data
            setattr(parent, child, new)
            replaced.append(name)
    return replaced


def _batch(torch):
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return ids[:, :-1], ids[:, 1:]


def case_lora_inject_train_merge(lib):
    """loralib + peft injection on a tiny decoder: LoRA into q/v/o projections, ``mark_only_lora_as_trainable``
    (bias ``lora_only``), AdamW over the trainable parameters for three steps with dropout active, then ``eval()``
    merges into ``weight.data`` (outputs equal to the unmerged eval forward), ``train()`` unmerges back to the
    frozen base weights; ``lora_state_dict`` loaded into a fresh injected model by ``load_state_dict(strict=False)``
    (the missing keys reported), the same predictions after."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(0)
    _, LoRALinear, _, _, mark_only, lora_sd = _lora_classes(torch)
    TinyLM = _tiny_transformer(torch)
    model = TinyLM()
    base = {k: v.clone() for k, v in model.state_dict().items()}
    replaced = _inject_lora(torch, model, LoRALinear, ("q_proj", "v_proj", "o_proj"))
    mark_only(model, bias='lora_only')
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    n_total = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.05, weight_decay=0.01)
    x, y = _batch(torch)
    model.train()
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    frozen_grads = [n for n, p in model.named_parameters() if p.grad is not None and not p.requires_grad]
    q = model.blocks[0].attn.q_proj
    q.merge_weights = False  # one layer evaluated unmerged: the reference for the merged forward
    q.eval()
    unmerged_q = q(torch.ones(1, D))
    q.merge_weights = True
    model.eval()
    merged_flags = [m.merged for m in model.modules() if isinstance(m, LoRALinear)]
    with torch.no_grad():
        merged_logits = model(x)
        merged_q = q(torch.ones(1, D))
    model.train()
    restored = [torch.allclose(model.state_dict()[k], base[k], atol=1e-6) for k in base]
    sd = lora_sd(model, bias='lora_only')
    torch.manual_seed(1)
    fresh = TinyLM()
    fresh.load_state_dict(base)
    _inject_lora(torch, fresh, LoRALinear, ("q_proj", "v_proj", "o_proj"))
    res = fresh.load_state_dict(sd, strict=False)
    fresh.eval()
    model.eval()
    with torch.no_grad():
        same = torch.allclose(fresh(x), model(x), atol=1e-5)
    return (replaced, trainable, n_trainable, n_total, losses, frozen_grads, merged_flags, merged_logits,
            unmerged_q, merged_q, restored, sorted(sd), sorted(res.missing_keys), res.unexpected_keys, same,
            model.blocks[1].attn.v_proj.lora_B.detach(), type(model.blocks[0].attn.q_proj).__mro__[1].__name__)


def case_loralib_merged_qkv_embedding(lib):
    """loralib's GPT-2 pieces: ``MergedLinear`` for a fused c_attn (``enable_lora=[True, False, True]``,
    ``fan_in_fan_out`` Conv1D layout, grouped ``conv1d`` delta scattered by a boolean ``lora_ind``) and the LoRA
    ``Embedding`` (zero A, normal B, ``padding_idx``); two SGD steps, the merged eval forward against the unmerged
    one, and ``bias='all'`` trainability."""
    torch, nn = lib, lib.nn
    torch.manual_seed(3)
    _, _, LoRAEmbedding, MergedLinear, mark_only, lora_sd = _lora_classes(torch)
    emb = LoRAEmbedding(VOCAB, D, r=2, lora_alpha=2, padding_idx=0)
    c_attn = MergedLinear(D, 3 * D, r=2, lora_alpha=4, lora_dropout=0.1, enable_lora=[True, False, True],
                          fan_in_fan_out=True)
    model = nn.ModuleDict({"wte": emb, "c_attn": c_attn})
    mark_only(model, bias='all')
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5, momentum=0.9)
    ids = torch.tensor([[0, 3, 5, 7], [2, 0, 9, 10]])
    losses = []
    model.train()
    for step in range(2):
        opt.zero_grad()
        qkv = model["c_attn"](model["wte"](ids))
        q, k, v = qkv.split(D, dim=2)
        loss = (q * k).sum(-1).tanh().mean() + v.pow(2).mean()
        loss.backward()
        losses.append(loss)
    opt.step()
    grads = [c_attn.lora_A.grad, c_attn.lora_B.grad, emb.lora_A.grad, emb.lora_B.grad, c_attn.bias.grad]
    for step in range(2):
        opt.zero_grad()
        qkv = model["c_attn"](model["wte"](ids))
        loss = qkv.pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    delta = c_attn.merge_AB()
    model.eval()
    c_attn.merge_weights = emb.merge_weights = False
    model.train()
    model.eval()
    with torch.no_grad():
        unmerged = c_attn(emb(ids))
    c_attn.merge_weights = emb.merge_weights = True
    model.train()
    model.eval()
    with torch.no_grad():
        merged = c_attn(emb(ids))
    return (trainable, losses, grads, delta, c_attn.lora_ind, unmerged, merged, (merged - unmerged).abs().max() < 1e-5,
            tuple(c_attn.weight.shape), emb.weight[0], sorted(lora_sd(model, bias='all')), c_attn.merged, emb.merged)


def case_dora_ia3_merge(lib):
    """peft's DoRA linear (magnitude initialised from ``torch.linalg.norm(W + s BA, dim=1)``, the norm recomputed
    with the LoRA weight and the norm itself ``.detach()``-ed in the forward, ``(m / ||W'|| - 1) * W x`` plus the
    scaled LoRA path) and the DoRA paper's column form (``dim=0, keepdim``); IA3 vectors on keys/values (output
    scaling) and on the feed-forward input, both trained with AdamW, then merged into the base weights and the
    merged forwards compared."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(5)

    class DoraLinear(nn.Module):
        def __init__(self, base, r=2, alpha=4):
            super().__init__()
            self.base_layer = base
            base.weight.requires_grad_(False)
            if base.bias is not None:
                base.bias.requires_grad_(False)
            self.lora_A = nn.Linear(base.in_features, r, bias=False)
            self.lora_B = nn.Linear(r, base.out_features, bias=False)
            nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
            nn.init.normal_(self.lora_B.weight, std=0.1)  # (as after some training: B = 0 would make DoRA trivial)
            self.scaling = alpha / r
            self.lora_dropout = nn.Dropout(0.2)
            lora_weight = self.lora_B.weight @ self.lora_A.weight
            self.lora_magnitude_vector = nn.Parameter(
                self.get_weight_norm(base.weight, lora_weight, self.scaling), requires_grad=True)

        @staticmethod
        def get_weight_norm(weight, lora_weight, scaling):
            weight = weight + scaling * lora_weight
            return torch.linalg.norm(weight, dim=1).to(weight.dtype)

        def forward(self, x):
            result = self.base_layer(x)
            x_d = self.lora_dropout(x)
            lora_weight = self.lora_B.weight @ self.lora_A.weight
            magnitude = self.lora_magnitude_vector
            weight_norm = self.get_weight_norm(self.base_layer.weight, lora_weight.detach(), self.scaling).detach()
            mag_norm_scale = (magnitude / weight_norm).view(1, -1)
            result_dora = (mag_norm_scale - 1) * F.linear(x_d, self.base_layer.weight) \
                + mag_norm_scale * self.lora_B(self.lora_A(x_d)) * self.scaling
            return result + result_dora

        def merged_weight(self):
            lora_weight = self.lora_B.weight @ self.lora_A.weight
            weight_norm = self.get_weight_norm(self.base_layer.weight, lora_weight, self.scaling).detach()
            dora_factor = self.lora_magnitude_vector / weight_norm
            return dora_factor.view(-1, 1) * (self.base_layer.weight + lora_weight * self.scaling)

    class IA3Linear(nn.Module):
        def __init__(self, base, is_feedforward):
            super().__init__()
            self.base_layer, self.is_feedforward = base, is_feedforward
            base.requires_grad_(False)
            shape = (1, base.in_features) if is_feedforward else (base.out_features, 1)
            self.ia3_l = nn.Parameter(torch.randn(shape))
            nn.init.constant_(self.ia3_l, 1.0)

        def forward(self, x):
            ia3_scaling = self.ia3_l.flatten()
            if self.is_feedforward:
                return self.base_layer(x * ia3_scaling)
            return self.base_layer(x) * ia3_scaling

        def merge(self):
            self.base_layer.weight.data = torch.mul(self.base_layer.weight.data, self.ia3_l.data)
            if not self.is_feedforward and self.base_layer.bias is not None:
                scaling = self.ia3_l.reshape(self.base_layer.bias.shape)
                self.base_layer.bias.data = torch.mul(self.base_layer.bias.data, scaling.data)

    base_k, base_v, base_ff, base_d = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, 2 * D), nn.Linear(2 * D, D)
    dora = DoraLinear(base_d)
    k_ia3, v_ia3, ff_ia3 = IA3Linear(base_k, False), IA3Linear(base_v, False), IA3Linear(base_ff, True)
    modules = nn.ModuleList([dora, k_ia3, v_ia3, ff_ia3])
    init_mag = dora.lora_magnitude_vector.detach().clone()
    x = torch.randn(3, D)

    def forward(x):
        h = F.silu(ff_ia3(x))
        return dora(h) + k_ia3(x).tanh() * v_ia3(x)

    params = [p for p in modules.parameters() if p.requires_grad]
    names = [n for n, p in modules.named_parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=0.02)
    modules.train()
    losses = []
    for i in range(3):
        opt.zero_grad()
        loss = (forward(x) - 0.3 * i).pow(2).mean()
        loss.backward()
        losses.append(loss.item())
        opt.step()
    grads = [p.grad for p in params]
    modules.eval()
    with torch.no_grad():
        before = forward(x)
        w_merged = dora.merged_weight()
        for m in (k_ia3, v_ia3, ff_ia3):
            m.merge()
        h = F.silu(F.linear(x, base_ff.weight, base_ff.bias))
        merged = F.linear(h, w_merged, base_d.bias) + base_k(x).tanh() * base_v(x)
    col = torch.linalg.norm(base_d.weight.T, ord=2, dim=0, keepdim=True)
    col2 = base_d.weight.T.norm(p=2, dim=0, keepdim=True)
    return (names, init_mag, losses, grads, before, merged, torch.allclose(before, merged, atol=1e-5), w_merged,
            col, torch.equal(col, col2), dora.lora_magnitude_vector.detach(), base_ff.weight.requires_grad)


def case_prefix_and_prompt_tuning(lib):
    """peft's prefix tuning: a ``PrefixEncoder`` with ``prefix_projection`` (Embedding → Linear → Tanh → Linear),
    ``view``/``permute([2, 0, 3, 1, 4])``/``split(2)`` into per-layer past key/values concatenated before the
    keys, a boolean mask (prefix always visible, causal ``tril(diagonal=P)``, padded keys off) through
    ``scaled_dot_product_attention``; the frozen decoder's plain ``is_causal=True`` path checked against an explicit
    boolean mask; prompt tuning with a soft prompt initialised from the word embeddings of a text, labels padded
    with -100; both trained with AdamW."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(11)
    TinyLM = _tiny_transformer(torch)
    model = TinyLM()
    model.requires_grad_(False)
    P, L = 3, SEQ - 1
    ids, labels = _batch(torch)
    pad = torch.tensor([[True] * L, [False] + [True] * (L - 1)])

    class PrefixEncoder(nn.Module):
        def __init__(self, num_virtual_tokens, num_layers, token_dim, hidden):
            super().__init__()
            self.embedding = nn.Embedding(num_virtual_tokens, token_dim)
            self.transform = nn.Sequential(nn.Linear(token_dim, hidden), nn.Tanh(),
                                           nn.Linear(hidden, num_layers * 2 * token_dim))

        def forward(self, prefix):
            return self.transform(self.embedding(prefix))

    enc = PrefixEncoder(P, len(model.blocks), D, 6)
    prefix_tokens = torch.arange(P).long()

    def past_key_values(batch_size):
        kv = enc(prefix_tokens.unsqueeze(0).expand(batch_size, -1))
        kv = kv.view(batch_size, P, len(model.blocks) * 2, HEADS, D // HEADS)
        kv = kv.permute([2, 0, 3, 1, 4]).split(2)
        return kv

    causal = torch.ones(L, P + L, dtype=torch.bool).tril(diagonal=P)
    keys_on = torch.cat([torch.ones(BATCH, P, dtype=torch.bool), pad], dim=1)
    mask = causal[None, None] & keys_on[:, None, None, :]
    opt = torch.optim.AdamW(enc.parameters(), lr=0.05)
    prefix_losses = []
    for _ in range(3):
        opt.zero_grad()
        logits = model(ids, past_key_values=past_key_values(BATCH), attn_mask=mask)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
        loss.backward()
        opt.step()
        prefix_losses.append(loss.item())
    enc_grad = enc.embedding.weight.grad
    # is_causal against the explicit lower-triangular boolean mask
    q = torch.randn(BATCH, HEADS, L, D // HEADS)
    k, v = torch.randn_like(q), torch.randn_like(q)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    b = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(L, L, dtype=torch.bool).tril())
    c = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(L, L, dtype=torch.bool).tril(), scale=0.3)
    # Hugging Face's additive 4-D mask: finfo.min above the diagonal and on padded keys (their sum overflows to -inf)
    fmin = torch.finfo(torch.float32).min
    hf = torch.full((L, L), fmin)
    cond = torch.arange(L)
    hf.masked_fill_(cond < (cond + 1).view(L, 1), 0)
    inverted = 1.0 - pad[:, None, None, :].expand(BATCH, 1, L, L).to(torch.float32)
    hf = inverted.masked_fill(inverted.to(torch.bool), fmin) + hf[None, None]
    d = F.scaled_dot_product_attention(q, k, v, attn_mask=hf)

    # prompt tuning: soft prompt from the embeddings of "text" tokens
    init_ids = torch.tensor([4, 7, 1])
    soft = nn.Embedding(3, D)
    soft.weight = nn.Parameter(model.embed(init_ids).detach().clone().to(torch.float32))
    opt2 = torch.optim.AdamW(soft.parameters(), lr=0.1)
    prompt_losses = []
    for _ in range(3):
        opt2.zero_grad()
        prompts = soft(torch.arange(3).unsqueeze(0).expand(BATCH, -1))
        embeds = torch.cat([prompts, model.embed(ids)], dim=1)
        full_labels = torch.cat([torch.full((BATCH, 3), -100), labels], dim=1)
        logits = model(inputs_embeds=embeds)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), full_labels[:, 1:].reshape(-1), ignore_index=-100)
        loss.backward()
        opt2.step()
        prompt_losses.append(loss)
    frozen = [n for n, p in model.named_parameters() if p.grad is not None]
    return (prefix_losses, enc_grad, [t.detach() for t in past_key_values(1)[0]], mask, a, b,
            torch.allclose(a, b, atol=1e-6), c, hf, d, torch.isinf(hf).sum(), prompt_losses, soft.weight.detach(),
            soft.weight.grad, frozen)


def case_parametrize_and_surgery(lib):
    """Model surgery: chained ``register_parametrization`` (skew part, then ``matrix_exp``: an orthogonal weight),
    a two-tensor weight-norm parametrization with ``right_inverse`` (``original0``/``original1``, assignment through
    it, ``parametrize.cached()``), ``remove_parametrizations(leave_parametrized=True)``, ``parametrizations.orthogonal``
    (Cayley map), ``parametrizations.weight_norm`` and ``spectral_norm`` (power iterations in training mode, none in
    eval);
    ``register_full_backward_hook`` counting calls on frozen and trainable blocks; ``load_state_dict(strict=False)``
    with missing/unexpected keys and ``state_dict(keep_vars=True)``."""
    torch, nn = lib, lib.nn
    P = torch.nn.utils.parametrize
    torch.manual_seed(2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

    class MatrixExp(nn.Module):
        def forward(self, X):
            return torch.linalg.matrix_exp(X)

    class WN(nn.Module):
        def forward(self, g, v):
            return g * v / v.norm(dim=1, keepdim=True)

        def right_inverse(self, w):
            return w.norm(dim=1, keepdim=True), w

    orth = nn.Linear(4, 4)
    P.register_parametrization(orth, "weight", Skew())
    P.register_parametrization(orth, "weight", MatrixExp())
    W = orth.weight
    orth_err = (W @ W.T - torch.eye(4)).abs().max()
    orth_names = [n for n, _ in orth.named_parameters()]
    x = torch.randn(3, 4)
    orth(x).sum().backward()
    orth_grad = orth.parametrizations.weight.original.grad

    wn = nn.Linear(4, 3)
    P.register_parametrization(wn, "weight", WN())
    wn_names = sorted(wn.state_dict())
    g0 = wn.parametrizations.weight.original0.detach().clone()
    with torch.no_grad():
        wn.weight = torch.arange(12.).reshape(3, 4) / 10
    g1 = wn.parametrizations.weight.original0.detach().clone()
    with P.cached():
        y1 = wn(x)
        y2 = wn(x * 2)
    wn(x).pow(2).sum().backward()
    wn_grads = (wn.parametrizations.weight.original0.grad, wn.parametrizations.weight.original1.grad)
    P.remove_parametrizations(wn, "weight", leave_parametrized=True)
    after_remove = (P.is_parametrized(wn), type(wn.weight).__name__, wn.weight.detach())

    cay = torch.nn.utils.parametrizations.orthogonal(nn.Linear(4, 4), orthogonal_map="cayley")
    cay(x).sum().backward()
    cay_out = (cay.weight.detach(), cay.parametrizations.weight.original.grad, type(cay).__name__)

    wn2 = torch.nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
    wn2(x).sum().backward()
    wn2_out = (sorted(wn2.state_dict()), wn2.parametrizations.weight.original0.grad,
               wn2.parametrizations.weight.original1.grad)

    sn = torch.nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3))
    sn.train()
    for _ in range(3):
        sn(x)
    sigma_train = torch.linalg.matrix_norm(sn.weight.detach(), ord=2)
    sn.eval()
    w_eval1 = sn.weight.detach().clone()
    w_eval2 = sn.weight.detach().clone()
    sn_out = (sorted(sn.state_dict()), sigma_train, torch.equal(w_eval1, w_eval2),
              sn.parametrizations.weight[0]._u.detach())

    # frozen blocks with full backward hooks
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
    model[0].requires_grad_(False)
    model[2].requires_grad_(False)
    calls = []

    def make_hook(name):
        def hook(module, grad_input, grad_output):
            calls.append((name, [g is None for g in grad_input], [tuple(g.shape) for g in grad_output],
                          float(grad_output[0].norm())))
        return hook
    handles = [model[i].register_full_backward_hook(make_hook(i)) for i in (0, 2, 3, 4)]
    model(x).sum().backward()
    x_req = x.clone().requires_grad_(True)
    model(x_req).sum().backward()
    for h in handles:
        h.remove()
    model(x).sum().backward()
    grads_none = [p.grad is None for p in model.parameters()]

    sd = model.state_dict(keep_vars=True)
    kv = [(k, type(v).__name__, v.requires_grad) for k, v in sd.items()]
    plain = [(k, type(v).__name__, v.requires_grad) for k, v in model.state_dict().items()]
    target = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 3))
    partial = {k: v for k, v in model.state_dict().items() if not k.startswith("4.")}
    partial["extra.weight"] = torch.zeros(1)
    res = target.load_state_dict(partial, strict=False)
    try:
        target.load_state_dict(model.state_dict(), strict=False)
        mismatch = None
    except RuntimeError as e:
        mismatch = "size mismatch" in str(e)
    full = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
    ok = full.load_state_dict(model.state_dict())
    return (orth_err < 1e-5, orth_names, orth_grad, wn_names, g0, g1, y1, y2, wn_grads, after_remove, cay_out, wn2_out,
            sn_out, calls, grads_none, kv, plain, res.missing_keys, res.unexpected_keys, mismatch, str(ok),
            torch.equal(target[0].weight, model[0].weight))


def case_compiled_lora_step(lib, jit):
    """The LoRA training step compiled whole (forward, backward, AdamW step) with the base weights frozen by
    ``requires_grad_(False)`` and dropout on the LoRA input: losses, LoRA weights and optimizer state match the
    eager run of the same program, the frozen weights get no ``.grad`` and stay unchanged, then an eval forward
    compiled on its own after merging."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4)
    _, LoRALinear, _, _, mark_only, lora_sd = _lora_classes(torch)
    TinyLM = _tiny_transformer(torch)
    model = TinyLM()
    _inject_lora(torch, model, LoRALinear, ("q_proj", "v_proj"))
    mark_only(model)
    frozen_before = model.blocks[0].attn.q_proj.weight.detach().clone()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.05)
    x, y = _batch(torch)

    @jit
    def train_step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach()

    model.train()
    losses = [train_step(x, y) for _ in range(3)]
    frozen_grads = [n for n, p in model.named_parameters() if p.grad is not None and not p.requires_grad]
    model.eval()

    @jit
    def predict(x):
        with torch.no_grad():
            return model(x).argmax(-1), model(x).softmax(-1)

    pred, probs = predict(x)
    model.train()
    return (losses, frozen_grads, torch.equal(model.blocks[0].attn.q_proj.weight, frozen_before),
            {k: v for k, v in lora_sd(model).items()}, opt.state[model.blocks[1].attn.v_proj.lora_A]["exp_avg_sq"],
            pred, probs)


test_script_matches_torch = script_test(globals())
