"""Regression tests from running tutorial-style PyTorch programs (language models, policy gradients, ViT, distillation,
contrastive losses, schedulers, weight tying and norm reparametrisations, checkpoints, hooks, WGAN-GP, printing) on
torchish and on PyTorch, and from the gaps they found (linspace's rounding, mixed-dtype products, in-place error
messages). Each ``case_*`` is written against the PyTorch API only; inputs and weights come from formulas."""
import io

import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch
from oracle import formula_data as _data, formula_init as _init, script_test


def case_lstm_lm_packed_with_clipping(lib):
    """A word-level LSTM language model: padded batch, pack_padded_sequence(enforce_sorted=False), ignore_index pads,
    clip_grad_norm_ returning the total norm, SGD."""
    nn, F = lib.nn, lib.nn.functional
    emb = _init(lib, nn.Embedding(11, 6, padding_idx=0))
    rnn, head = _init(lib, nn.LSTM(6, 5, batch_first=True), 1), _init(lib, nn.Linear(5, 11), 2)
    params = [*emb.parameters(), *rnn.parameters(), *head.parameters()]
    opt = lib.optim.SGD(params, lr=0.5)
    tokens = lib.tensor([[3, 4, 5, 6, 7], [2, 9, 1, 0, 0], [8, 10, 0, 0, 0]])
    lengths = lib.tensor([5, 3, 2])
    out = []
    for _ in range(2):
        x, y = tokens[:, :-1], tokens[:, 1:]
        packed = nn.utils.rnn.pack_padded_sequence(emb(x), (lengths - 1).clamp(min=1), batch_first=True,
                                                   enforce_sorted=False)
        h, _ = rnn(packed)
        h, lens = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=4)
        logits = head(h)
        loss = F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(params, max_norm=0.25)
        opt.step()
        out.append((loss.detach(), norm))
    return out, lens, emb.weight, emb.weight.grad[0], lib.exp(loss).item()


def case_policy_gradient_categorical(lib):
    """REINFORCE with a baseline: discounted returns by a reversed loop, Categorical log_prob and entropy bonus."""
    nn = lib.nn
    policy = _init(lib, nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)))
    opt = lib.optim.Adam(policy.parameters(), lr=0.01)
    states = _data(lib, 6, 4)
    actions = lib.tensor([0, 2, 1, 1, 0, 2])
    rewards = [1.0, 0.0, 0.5, 1.0, -1.0, 0.25]
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + 0.99 * g
        returns.insert(0, g)
    returns = lib.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    hist = []
    for _ in range(2):
        dist = lib.distributions.Categorical(logits=policy(states))
        logp = dist.log_prob(actions)
        loss = -(logp * returns).mean() - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append(loss.item())
    probs = dist.probs
    return hist, logp, probs, dist.entropy(), dist.mode, returns


def case_vit_patches_mha_key_padding(lib):
    """ViT-style patch embedding by unfold + reshape, a class token, MultiheadAttention with key_padding_mask."""
    nn, F = lib.nn, lib.nn.functional
    img = _data(lib, 2, 3, 8, 8)
    patches = F.unfold(img, kernel_size=4, stride=4).transpose(1, 2)  # (B, 4, 48)
    proj, mha = _init(lib, nn.Linear(48, 8)), _init(lib, nn.MultiheadAttention(8, 2, batch_first=True), 3)
    cls = nn.Parameter(lib.zeros(1, 1, 8))
    tok = lib.cat([cls.expand(2, -1, -1), proj(patches)], dim=1)
    pos = lib.sin(lib.arange(5, dtype=lib.float32)[:, None] / (10000 ** (lib.arange(8) / 8.0)))
    tok = tok + pos
    pad = lib.tensor([[False] * 5, [False, False, False, True, True]])
    out, w = mha(tok, tok, tok, key_padding_mask=pad)
    out[:, 0].pow(2).sum().backward()
    return out, w, cls.grad, mha.in_proj_weight.grad


def case_knowledge_distillation(lib):
    """Hinton distillation: kl_div(log_target=True) on temperature-scaled log-softmaxes, times T^2, plus hard CE."""
    nn, F = lib.nn, lib.nn.functional
    teacher = _init(lib, nn.Linear(6, 4), 1, scale=0.8).eval()
    student = _init(lib, nn.Linear(6, 4), 2)
    opt = lib.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
    x, y, T = _data(lib, 5, 6), lib.tensor([0, 1, 2, 3, 1]), 4.0
    hist = []
    for _ in range(3):
        with lib.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        soft = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.log_softmax(t_logits / T, dim=1),
                        reduction="batchmean", log_target=True) * T * T
        kl2 = nn.KLDivLoss(reduction="sum")(F.log_softmax(s_logits, 1), F.softmax(t_logits, 1))
        loss = 0.7 * soft + 0.3 * F.cross_entropy(s_logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append((soft.item(), kl2.item(), loss.item()))
    return hist, student.weight, opt.state_dict()["state"][0]["momentum_buffer"]


def case_infonce_contrastive(lib):
    """SimCLR's NT-Xent: normalize, a 2N x 2N similarity with the diagonal masked, cross_entropy on positives,
    and the same loss written by logsumexp; a learnable log temperature."""
    nn, F = lib.nn, lib.nn.functional
    enc = _init(lib, nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 4)))
    log_t = nn.Parameter(lib.tensor(np.log(1 / 0.07), dtype=lib.float32))
    x = _data(lib, 4, 5)
    z = F.normalize(enc(lib.cat([x, x.flip(1) * 0.9])), dim=1)
    sim = z @ z.T * log_t.exp().clamp(max=100)
    sim = sim.masked_fill(lib.eye(8, dtype=lib.bool), float("-inf"))
    target = lib.arange(8).roll(4)
    loss = F.cross_entropy(sim, target)
    manual = (lib.logsumexp(sim, dim=1) - sim[lib.arange(8), target]).mean()
    loss.backward()
    acc = (sim.argmax(1) == target).float().mean()
    return loss, manual, log_t.grad, enc[0].weight.grad, acc, F.cosine_similarity(z[:4], z[4:]).sum()


def case_warmup_sequential_lr(lib):
    """Linear warmup by LambdaLR then cosine decay, chained with SequentialLR; get_last_lr at every step."""
    w = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.AdamW([w], lr=1e-2, weight_decay=0.05)
    warm = lib.optim.lr_scheduler.LambdaLR(opt, lambda s: (s + 1) / 3)
    cos = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=1e-4)
    sched = lib.optim.lr_scheduler.SequentialLR(opt, schedulers=[warm, cos], milestones=[3])
    lrs = []
    for step in range(8):
        opt.zero_grad()
        (w * lib.arange(1.0, 4.0)).pow(2).sum().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    return lrs, w, sched.state_dict()["_milestones"], sched.last_epoch, opt.param_groups[0]["lr"]


def case_weight_tying(lib):
    """An embedding and the output projection sharing one Parameter: one entry in parameters(), grads summed."""
    nn, F = lib.nn, lib.nn.functional

    class TiedLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(7, 4)
            self.mix = nn.Linear(4, 4)
            self.out = nn.Linear(4, 7, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, t):
            return self.out(lib.tanh(self.mix(self.emb(t))))

    m = _init(lib, TiedLM())
    t = lib.tensor([[1, 2, 3], [4, 5, 6]])
    loss = F.cross_entropy(m(t).flatten(0, 1), t.roll(1, 1).flatten())
    loss.backward()
    names = [n for n, _ in m.named_parameters()]
    sd = m.state_dict()
    return (loss, m.emb.weight.grad, names, sorted(sd), sd["emb.weight"].data_ptr() == sd["out.weight"].data_ptr(),
            sum(p.numel() for p in m.parameters()), m.out.weight is m.emb.weight)


def case_weight_norm_parametrization(lib):
    """torch.nn.utils.parametrizations.weight_norm: original0/original1, grads to both, remove_parametrizations."""
    nn = lib.nn
    lin = _init(lib, nn.Linear(4, 3))
    lin = nn.utils.parametrizations.weight_norm(lin, name="weight", dim=0)
    names = sorted(n for n, _ in lin.named_parameters())
    x = _data(lib, 2, 4)
    lin(x).pow(2).sum().backward()
    g, v = lin.parametrizations.weight.original0, lin.parametrizations.weight.original1
    out = (names, g.shape, g.grad, v.grad, lin.weight, sorted(lin.state_dict()))
    nn.utils.parametrize.remove_parametrizations(lin, "weight")
    return out, sorted(n for n, _ in lin.named_parameters()), lin(x), nn.utils.parametrize.is_parametrized(lin)


def case_state_dict_bytesio_round_trip(lib):
    """Model and optimizer checkpoint through io.BytesIO; load into fresh objects; strict=False key report."""
    nn = lib.nn
    m = _init(lib, nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.BatchNorm1d(4), nn.Linear(4, 2)))
    opt = lib.optim.Adam(m.parameters(), lr=0.01)
    x = _data(lib, 5, 3)
    (m(x) - _data(lib, 5, 2, seed=4)).pow(2).mean().backward()
    opt.step()
    buf = io.BytesIO()
    lib.save({"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 3}, buf)
    buf.seek(0)
    ck = lib.load(buf, weights_only=True)
    m2 = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.BatchNorm1d(4), nn.Linear(4, 2))
    m2.load_state_dict(ck["model"])
    opt2 = lib.optim.Adam(m2.parameters(), lr=0.5)
    opt2.load_state_dict(ck["opt"])
    m2.eval(), m.eval()
    partial = {k: v for k, v in ck["model"].items() if not k.startswith("3.")}
    partial["extra.w"] = lib.zeros(1)
    res = m2.load_state_dict(partial, strict=False)
    return (m2(x), m(x), ck["epoch"], opt2.param_groups[0]["lr"], opt2.state_dict()["state"][1]["exp_avg_sq"],
            sorted(res.missing_keys), res.unexpected_keys, ck["model"]["2.num_batches_tracked"])


def case_causal_masks(lib):
    """Causal attention three ways: masked_fill on triu, torch.where with -inf, and sdpa(is_causal=True)."""
    F = lib.nn.functional
    q = _data(lib, 2, 5, 4).requires_grad_()
    k, v = _data(lib, 2, 5, 4, seed=1), _data(lib, 2, 5, 4, seed=2)
    mask = lib.triu(lib.ones(5, 5, dtype=lib.bool), diagonal=1)
    scores = q @ k.transpose(-2, -1) / 4 ** 0.5
    a = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
    b = lib.softmax(lib.where(mask, lib.tensor(float("-inf")), scores), -1) @ v
    c = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    tril = lib.tril(lib.ones(5, 5)).view(1, 5, 5)
    d = F.softmax(scores.masked_fill(tril == 0, -1e9), dim=-1) @ v
    c.sum().backward()
    return a, b, c, d, q.grad, mask.dtype, tril.dtype


def case_embedding_padding_idx_max_norm(lib):
    """nn.Embedding(padding_idx, max_norm): rows renormalised in place on lookup, pad row gets no gradient."""
    nn = lib.nn
    emb = _init(lib, nn.Embedding(6, 3, padding_idx=2, max_norm=0.5), scale=1.0)
    idx = lib.tensor([[0, 2, 4], [2, 4, 5]])
    out = emb(idx)
    (out * lib.arange(1.0, 4.0)).sum().backward()
    w = emb.weight.detach().clone()
    fn = lib.nn.functional.embedding(idx, w * 2, padding_idx=2, max_norm=1.0, norm_type=1.0)
    bag = nn.EmbeddingBag.from_pretrained(w, mode="mean", padding_idx=2)
    return out, emb.weight.grad, w, w.norm(dim=1), fn, bag(idx)


def case_label_smoothing_weights_ignore(lib):
    """cross_entropy with label_smoothing, class weights and ignore_index together; and with probability targets."""
    F = lib.nn.functional
    logits = _data(lib, 6, 4).requires_grad_()
    y = lib.tensor([0, 3, -100, 1, 2, 3])
    w = lib.tensor([1.0, 2.0, 0.5, 1.5])
    a = F.cross_entropy(logits, y, weight=w, label_smoothing=0.1)
    b = F.cross_entropy(logits, y, weight=w, label_smoothing=0.2, reduction="sum")
    c = F.cross_entropy(logits, y, weight=w, label_smoothing=0.1, reduction="none")
    probs = F.softmax(_data(lib, 6, 4, seed=3) * 3, dim=1)
    d = F.cross_entropy(logits, probs, weight=w, label_smoothing=0.1)
    (a + b + d).backward()
    crit = lib.nn.CrossEntropyLoss(weight=w, ignore_index=3, label_smoothing=0.05)
    e = crit(logits.detach().view(2, 3, 4).transpose(1, 2), lib.tensor([[0, 3, 1], [2, 3, 3]]))
    return a, b, c, d, e, logits.grad


def case_float64_model(lib):
    """A model converted with .double() trained in float64; a float32 batch then raises a dtype error."""
    nn, F = lib.nn, lib.nn.functional
    m = _init(lib, nn.Sequential(nn.Conv1d(2, 3, 3, padding=1), nn.LayerNorm(6), nn.SiLU(), nn.Flatten(),
                                 nn.Linear(18, 1)).double())
    opt = lib.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    x = _data(lib, 4, 2, 6, dtype=lib.float64)
    y = lib.linspace(-1, 1, 4, dtype=lib.float64)[:, None]
    hist = []
    for _ in range(2):
        loss = F.mse_loss(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append(loss)
    try:
        m(x.float())
        err = None
    except RuntimeError:
        err = "RuntimeError"
    return hist, m[0].weight.dtype, m[4].bias, err


def case_forward_hook_features(lib):
    """Feature extraction with register_forward_hook on named submodules, a backward hook, then handle.remove()."""
    nn = lib.nn
    m = _init(lib, nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(2, 2)))
    feats, grads = {}, []

    def save(name):
        def hook(mod, inp, out):
            feats[name] = out.detach()
        return hook

    hs = [mod.register_forward_hook(save(name)) for name, mod in m.named_modules() if name in ("0", "2")]
    hb = m[4].register_full_backward_hook(lambda mod, gi, go: grads.append((gi[0], go[0])))
    hp = m[1].register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))
    x = _data(lib, 1, 1, 4, 4).requires_grad_()
    m(x).sum().backward()
    for h in (*hs, hb, hp):
        h.remove()
    y = m(x)
    return feats["0"], feats["2"], grads[0][0], grads[0][1], x.grad, y, len(feats), len(grads)


def case_wgan_gradient_penalty(lib):
    """WGAN-GP: interpolates between real and fake, autograd.grad(create_graph=True), ((|g|-1)^2).mean(), Adam."""
    nn = lib.nn
    critic = _init(lib, nn.Sequential(nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1)))
    opt = lib.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    real, fake = _data(lib, 4, 3), _data(lib, 4, 3, seed=7) * 2
    alpha = lib.linspace(0.1, 0.9, 4)[:, None]
    hist = []
    for _ in range(2):
        inter = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        out = critic(inter)
        g, = lib.autograd.grad(outputs=out, inputs=inter, grad_outputs=lib.ones_like(out), create_graph=True,
                               retain_graph=True)
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append((gp.item(), loss.item()))
    return hist, critic[0].weight.grad, critic[2].weight


def case_gcn_index_add_mean_aggregation(lib):
    """A GraphSAGE mean aggregator: messages by index_select, summed with index_add_, degrees from bincount, and
    the same by scatter_reduce(mean, include_self=False)."""
    nn = lib.nn
    src = lib.tensor([0, 1, 2, 3, 0, 2, 4])
    dst = lib.tensor([1, 0, 1, 2, 3, 4, 2])
    lin = _init(lib, nn.Linear(3, 3))
    x = _data(lib, 5, 3).requires_grad_()
    msg = lin(x).index_select(0, src)
    agg = lib.zeros(5, 3).index_add_(0, dst, msg)
    deg = lib.bincount(dst, minlength=5).clamp(min=1).unsqueeze(1)
    mean1 = agg / deg
    mean2 = lib.zeros(5, 3).scatter_reduce(0, dst[:, None].expand(-1, 3), msg, reduce="mean", include_self=False)
    h = lib.relu(mean1 + x)
    (h.sum() + mean2.pow(2).sum()).backward()
    return mean1, mean2, deg.dtype, x.grad, lin.weight.grad


def case_small_unet(lib):
    """A two-level U-Net: conv blocks, max pool, ConvTranspose2d up, F.pad to match sizes, cat skip, BCE with logits."""
    nn, F = lib.nn, lib.nn.functional

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.d1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True))
            self.d2 = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
            self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
            self.u1 = nn.Conv2d(8, 4, 3, padding=1)
            self.out = nn.Conv2d(4, 1, 1)

        def forward(self, x):
            s = self.d1(x)
            b = self.d2(F.max_pool2d(s, 2))
            u = self.up(b)
            dy, dx = s.size(2) - u.size(2), s.size(3) - u.size(3)
            u = F.pad(u, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
            return self.out(F.relu(self.u1(lib.cat([s, u], dim=1))))

    net = _init(lib, UNet(), scale=0.3)
    opt = lib.optim.Adam(net.parameters(), lr=1e-2)
    x = _data(lib, 2, 1, 7, 7)
    target = (x > 0).float()
    hist = []
    for _ in range(2):
        logits = net(x)
        loss = F.binary_cross_entropy_with_logits(logits, target, pos_weight=lib.tensor([2.0]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append(loss.item())
    up = F.interpolate(logits, scale_factor=2, mode="bilinear", align_corners=True)
    return hist, logits, net.d1[1].running_var, net.up.weight.grad, up.shape, up[0, 0, :2, :3]


def case_print_model(lib):
    """``print(model)`` and ``print(optimizer)`` as tutorials do, for a model of many layer kinds."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, kernel_size=3, stride=(2, 1), padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4, momentum=0.05)
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.drop = nn.Dropout(p=0.25)
            self.rnn = nn.GRU(4, 3, batch_first=True, bidirectional=True)
            self.blocks = nn.ModuleList([nn.Linear(6, 6) for _ in range(2)])
            self.heads = nn.ModuleDict({"a": nn.Linear(6, 2), "b": nn.Identity()})
            self.act = nn.LeakyReLU(0.1, inplace=True)
            self.ln = nn.LayerNorm([6], elementwise_affine=False)
            self.emb = nn.Embedding(10, 3, padding_idx=0)
            self.mha = nn.MultiheadAttention(6, 2, batch_first=True)
            self.ct = nn.ConvTranspose2d(4, 2, 2, stride=2, output_padding=0)
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.seq = nn.Sequential(nn.Flatten(), nn.Softmax(dim=-1), nn.GELU(approximate="tanh"))
            self.mp = nn.MaxPool2d(2, 2, ceil_mode=True)
    m = Net()
    opt = lib.optim.AdamW(m.parameters(), lr=1e-3)
    return repr(m), str(lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)), repr(opt)


def case_print_tensors(lib):
    """``print(tensor)`` of the values scripts print: a linspace whose middle value is -5.96e-08 in float32 (not 0),
    losses with grad_fn, scientific notation, nan/inf, halves, complex, summaries of long tensors."""
    x = lib.linspace(-2, 2, 7)
    big = lib.arange(0, 2000, dtype=lib.float32) * 1.5
    outs = [repr(x), str(x.reshape(1, 7)), repr(x.requires_grad_() * 2), repr(lib.tensor([1e-8, 1.0, 1e8])),
            repr(lib.arange(5)), repr(lib.tensor([True, False])), repr(big), repr(lib.tensor(3.5)),
            repr(lib.tensor([1.0, float("nan"), float("inf")])), repr(lib.zeros(2, 0)),
            repr(lib.tensor([1, 2], dtype=lib.float64)), repr(lib.tensor([0.1, 0.25], dtype=lib.float16)),
            f"{lib.tensor(0.123456):.3f}", repr(x.detach()[1:3].sum()), str(lib.tensor([[1.5, 2], [3, 4]]).mean(0)),
            repr(lib.tensor([1+2j, 3.5-1j])), repr(lib.randn(3, 3, 3).shape), str(lib.float32), str(x.device),
            repr(lib.tensor([100000.0, 1.0])), repr(lib.tensor([123456789.0])), repr(lib.tensor([0.0001, 0.5])),
            repr(lib.linspace(-2, 2, 7, dtype=lib.float64)), (lib.linspace(-1, 1, 11) == 0).nonzero().tolist()]
    return outs


test_script_matches_torch = script_test(globals())


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "uint8"])
def test_linspace_matches_torch_bit_for_bit(dtype):
    """``linspace(-2, 2, 7)[3]`` is -5.96e-08 in float32 in PyTorch (one fused multiply-add per value)."""
    for start, end, steps in [(-2, 2, 7), (0, 1, 10), (-1, 1, 100), (0.5, 99.25, 333), (90, 3, 41), (0, 6.283, 361)]:
        ref = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).double().numpy()
        got = torchish.linspace(start, end, steps, dtype=getattr(torchish, dtype)).double().numpy()
        np.testing.assert_array_equal(got, ref, err_msg=f"{start}, {end}, {steps}")


@needs_torch
@pytest.mark.parametrize("args", [(0, 200, 5, "int8"), (0.5, -5.5, 4, "uint8"), (0, 1, 3, "bool"),
                                  (0, 300, 4, "uint8")])
def test_linspace_checked_conversions_raise_as_torch(args):
    for lib in (torch, torchish):
        with pytest.raises((RuntimeError, NotImplementedError)) as err:
            lib.linspace(*args[:3], dtype=getattr(lib, args[3]))
        if lib is torch:
            ref = err
    assert err.type is ref.type and str(err.value) == str(ref.value)
    with pytest.raises(NotImplementedError, match="logspace_cpu"):
        torchish.logspace(0, 1, 3, dtype=torchish.bool)


@needs_torch
@pytest.mark.parametrize("split", ["chunk", "split", "unbind", "slice"])
def test_inplace_into_a_multi_output_view_of_a_leaf_names_the_view_op(split):
    """``w.chunk(2)[1].mul_(2)`` on a leaf that requires grad: PyTorch refuses the multi-output view first."""
    def run(lib):
        w = lib.ones(4, requires_grad=True)
        parts = {"chunk": lambda: w.chunk(2), "split": lambda: w.split(2), "unbind": lambda: w.unbind(0),
                 "slice": lambda: (w[:2], w[2:])}[split]()
        with pytest.raises(RuntimeError) as err:
            parts[1].mul_(2)
        return str(err.value)
    assert run(torchish) == run(torch)


_MIXED = {"linear_float64_bias": lambda lib, f, d: lib.nn.functional.linear(f, f, d[0]),
          "linear_float64_input_with_bias": lambda lib, f, d: lib.nn.functional.linear(d[None], f, f[0]),
          "linear_float64_input_no_bias": lambda lib, f, d: lib.nn.functional.linear(d, f),
          "linear_long_input": lambda lib, f, d: lib.nn.Linear(2, 2)(f.long()),
          "addmm_self": lambda lib, f, d: lib.addmm(d, f, f[:, :1]),
          "addmm_mat1": lambda lib, f, d: lib.addmm(f, d, f[:1]),
          "addbmm": lambda lib, f, d: lib.addbmm(f, d[None], f[None]),
          "addbmm_bool": lambda lib, f, d: lib.addbmm(f.bool(), f.bool()[None], f.bool()[None]),
          "bilinear": lambda lib, f, d: lib.nn.functional.bilinear(f.to(lib.int8), f.half(), f[None], f[0, :1])}


@needs_torch
@pytest.mark.parametrize("name", sorted(_MIXED))
def test_mixed_dtype_products_raise_torchs_message(name):
    """A float64 bias from numpy on a float32 Linear, and kin: PyTorch refuses them (addmm's dtype checks come before
    its shape checks) with messages people search for."""
    msgs = []
    for lib in (torch, torchish):
        f = lib.ones(2, 2)
        with pytest.raises((RuntimeError, NotImplementedError)) as err:
            _MIXED[name](lib, f, f.double())
        msgs.append((err.type, str(err.value)))
    assert msgs[1] == msgs[0]


@needs_torch
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "exp"])
def test_modified_saved_output_error_names_the_op(act):
    """``h = act(x); h += 1`` then backward: PyTorch names the op whose saved output was overwritten."""
    def run(lib):
        x = lib.linspace(-1, 1, 4, requires_grad=True)
        h = getattr(lib, act)(x * 2)
        h += 1
        with pytest.raises(RuntimeError) as err:
            h.sum().backward()
        return str(err.value).split(" Hint:")[0]
    assert run(torchish) == run(torch)


@needs_torch
@pytest.mark.parametrize("write", ["output", "input", "input_view"])
def test_custom_function_stale_saved_tensor_error_names_its_origin(write):
    """A custom Function's saved output names the Function; a saved input names the op that last wrote it."""
    def run(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y

        x = lib.ones(2, requires_grad=True) + 1
        y = Double.apply(x)
        {"output": lambda: y.mul_(2), "input": lambda: x.mul_(2), "input_view": lambda: x[0].mul_(2)}[write]()
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        return str(err.value).split(" Hint:")[0]
    assert run(torchish) == run(torch)
