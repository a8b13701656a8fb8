"""Regression tests from running architectures as popular repositories write them (torchvision, timm, Hugging Face,
pytorch/examples and research code) on torchish and on PyTorch: complex-valued networks and the Fourier Neural
Operator (complex parameters in the optimizers), LLaMA's complex rotary embeddings and KV cache, VQ-VAE, NeRF's
hierarchical sampling, MAML; complex gradients of linalg ops and of the torch.func transforms. Each ``case_*`` is
written against the PyTorch API only; inputs and weights come from formulas. Each trains a few steps and returns
losses, selected gradients, final parameters and the shapes and dtypes of intermediate outputs; the ``jit`` cases run
torchish's steps under ``torchish.compile``.

Where a program differs from the repository it imitates, a comment says why (a decision at the edge of a float's
rounding is moved off the edge)."""
import io
import math

import pytest

import torchish
from oracle import assert_same, needs_torch, torch
from oracle import formula_data as _data, formula_init as _init, script_test


def _train(lib, model, loss_fn, opt, steps=3, step_fn=None):
    """Runs ``steps`` optimizer steps; returns the losses, the gradients of the last step and the parameters."""
    def step():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        return loss.detach()
    step_fn = step_fn(step) if step_fn is not None else step
    losses = [step_fn() for _ in range(steps)]
    return (losses, {n: p.grad for n, p in model.named_parameters()},
            {n: p.detach().clone() for n, p in model.named_parameters()})


def _meta(t):
    return tuple(t.shape), str(t.dtype)


def case_complex_valued_network(lib, jit):
    """A complex-valued network (MRI / radar / audio-phase repos): nn.Linear(dtype=torch.cfloat), a modReLU
    ``relu(|z| + b) * z / |z|``, a CReLU on real and imaginary parts, a loss on ``abs`` and ``angle``, gradient
    clipping over complex gradients, Adam, RMSprop and SGD(momentum) on complex parameters, the optimizer state
    saved and loaded."""
    nn, F = lib.nn, lib.nn.functional

    class ModReLU(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.b = nn.Parameter(lib.full((n,), -0.1))

        def forward(self, z):
            m = z.abs()
            return F.relu(m + self.b) * z / (m + 1e-6)

    l1 = nn.Linear(3, 4, dtype=lib.cfloat)
    act = ModReLU(4)
    l2 = nn.Linear(4, 2, dtype=lib.cfloat)
    model = nn.ModuleList([l1, act, l2])
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            idx = lib.arange(p.numel(), dtype=lib.float32)
            re = (lib.sin(idx * 0.731 + 1.3 * i) * 0.5).reshape(p.shape)
            p.copy_(lib.complex(re, lib.cos(idx * 0.37 + i).reshape(p.shape) * 0.4) if p.is_complex() else re - 0.1)
    x = lib.complex(_data(lib, 5, 3), _data(lib, 5, 3, seed=1))
    t = lib.complex(_data(lib, 5, 2, seed=2), _data(lib, 5, 2, seed=3))

    def forward(x):
        h = act(l1(x))
        h = lib.complex(F.relu(h.real), F.relu(h.imag))
        return l2(h)

    def loss_fn():
        y = forward(x)
        return (y - t).abs().pow(2).mean() + 0.1 * (lib.angle(y) - lib.angle(t)).pow(2).mean()
    out = []
    for name, kw in (("Adam", dict(lr=0.05)), ("RMSprop", dict(lr=0.01)), ("SGD", dict(lr=0.1, momentum=0.9))):
        opt = getattr(lib.optim, name)(model.parameters(), **kw)

        def step():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss.detach()
        step = jit(step)
        out.append([step() for _ in range(2)])
        buf = io.BytesIO()
        lib.save(opt.state_dict(), buf)
        buf.seek(0)
        opt2 = getattr(lib.optim, name)(model.parameters(), **kw)
        opt2.load_state_dict(lib.load(buf))
        opt2.step()
        out.append(opt2.state_dict()["state"][0])
    return out, list(model.parameters()), l1.weight.grad, forward(x)


def case_fno_spectral_conv(lib, jit):
    """The Fourier Neural Operator's SpectralConv2d: complex weights ``scale * torch.rand(..., dtype=torch.cfloat)``
    overwritten by formulas, torch.fft.rfft2, einsum "bixy,ioxy->boxy" on complex tensors into the low modes of a
    zeros(..., dtype=torch.cfloat) buffer, irfft2 with s=; Adam on complex parameters."""
    nn, F = lib.nn, lib.nn.functional

    class SpectralConv2d(nn.Module):
        def __init__(self, cin, cout, m1, m2):
            super().__init__()
            self.cin, self.cout, self.modes1, self.modes2 = cin, cout, m1, m2
            self.scale = 1 / (cin * cout)
            self.weights1 = nn.Parameter(self.scale * lib.rand(cin, cout, m1, m2, dtype=lib.cfloat))
            self.weights2 = nn.Parameter(self.scale * lib.rand(cin, cout, m1, m2, dtype=lib.cfloat))

        def compl_mul2d(self, input, weights):
            return lib.einsum("bixy,ioxy->boxy", input, weights)

        def forward(self, x):
            b = x.shape[0]
            x_ft = lib.fft.rfft2(x)
            out_ft = lib.zeros(b, self.cout, x.size(-2), x.size(-1) // 2 + 1, dtype=lib.cfloat, device=x.device)
            m1, m2 = self.modes1, self.modes2
            out_ft[:, :, :m1, :m2] = self.compl_mul2d(x_ft[:, :, :m1, :m2], self.weights1)
            out_ft[:, :, -m1:, :m2] = self.compl_mul2d(x_ft[:, :, -m1:, :m2], self.weights2)
            return lib.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))

    class FNO(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc0 = nn.Linear(3, 4)
            self.conv0 = SpectralConv2d(4, 4, 2, 2)
            self.w0 = nn.Conv2d(4, 4, 1)
            self.fc1 = nn.Linear(4, 1)

        def forward(self, x):
            x = self.fc0(x).permute(0, 3, 1, 2)
            x = F.gelu(self.conv0(x) + self.w0(x))
            return self.fc1(x.permute(0, 2, 3, 1))

    net = FNO()
    with lib.no_grad():
        for i, (n, p) in enumerate(net.named_parameters()):
            idx = lib.arange(p.numel(), dtype=lib.float32)
            v = (lib.sin(idx * 0.731 + 1.3 * i) * 0.4).reshape(p.shape)
            if p.is_complex():
                v = lib.complex(v, lib.cos(idx * 0.37 + i).reshape(p.shape) * 0.3)
            p.copy_(v)
    gx = lib.linspace(0, 1, 6)
    grid = lib.stack(lib.meshgrid(gx, gx, indexing="ij"), -1)[None].expand(2, 6, 6, 2)
    a = _data(lib, 2, 6, 6, 1)
    x = lib.cat([a, grid], -1)
    u = _data(lib, 2, 6, 6, 1, seed=3)

    def loss_fn():
        out = net(x)
        # the relative L2 loss of the FNO repo
        diff = lib.norm(out.reshape(2, -1) - u.reshape(2, -1), 2, 1)
        return (diff / lib.norm(u.reshape(2, -1), 2, 1)).sum()
    opt = lib.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-4)
    res = _train(lib, net, loss_fn, opt, step_fn=jit)
    return res, opt.state_dict()["state"][1]["exp_avg_sq"], net.conv0.weights1.dtype


def case_llama_rope_rmsnorm_swiglu(lib, jit):
    """LLaMA: RMSNorm (x * rsqrt(mean(x^2) + eps) in float then type_as), rotary embeddings through complex numbers
    (torch.polar, view_as_complex on reshape(..., -1, 2), view_as_real, flatten(3)), SwiGLU MLP, causal mask by
    torch.full(-inf).triu(1), repeat_kv by expand/reshape (grouped-query attention), a KV cache written by slices."""
    nn, F = lib.nn, lib.nn.functional

    def precompute_freqs_cis(dim, end, theta=10000.0):
        freqs = 1.0 / (theta ** (lib.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = lib.arange(end, device=freqs.device)
        freqs = lib.outer(t, freqs).float()
        return lib.polar(lib.ones_like(freqs), freqs)

    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = lib.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
        freqs_cis = freqs_cis.view(*shape)
        xq_out = lib.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = lib.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(lib.ones(dim))

        def forward(self, x):
            out = x.float() * lib.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
            return out.type_as(x) * self.weight

    def repeat_kv(x, n_rep):
        bs, slen, n_kv_heads, head_dim = x.shape
        if n_rep == 1:
            return x
        x = x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim)
        return x.reshape(bs, slen, n_kv_heads * n_rep, head_dim)

    class Attention(nn.Module):
        def __init__(self, dim=8, n_heads=4, n_kv_heads=2):
            super().__init__()
            self.n_heads, self.n_kv, self.hd = n_heads, n_kv_heads, dim // n_heads
            self.wq = nn.Linear(dim, n_heads * self.hd, bias=False)
            self.wk = nn.Linear(dim, n_kv_heads * self.hd, bias=False)
            self.wv = nn.Linear(dim, n_kv_heads * self.hd, bias=False)
            self.wo = nn.Linear(n_heads * self.hd, dim, bias=False)
            self.register_buffer("cache_k", lib.zeros(2, 8, n_kv_heads, self.hd), persistent=False)
            self.register_buffer("cache_v", lib.zeros(2, 8, n_kv_heads, self.hd), persistent=False)

        def forward(self, x, start_pos, freqs_cis, mask):
            bsz, seqlen, _ = x.shape
            xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.hd)
            xk = self.wk(x).view(bsz, seqlen, self.n_kv, self.hd)
            xv = self.wv(x).view(bsz, seqlen, self.n_kv, self.hd)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
            if not self.training:
                self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
                self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
                keys = self.cache_k[:bsz, : start_pos + seqlen]
                values = self.cache_v[:bsz, : start_pos + seqlen]
            else:
                keys, values = xk, xv
            keys = repeat_kv(keys, self.n_heads // self.n_kv).transpose(1, 2)
            values = repeat_kv(values, self.n_heads // self.n_kv).transpose(1, 2)
            xq = xq.transpose(1, 2)
            scores = lib.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.hd)
            if mask is not None:
                scores = scores + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            out = lib.matmul(scores, values).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
            return self.wo(out)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = Attention()
            self.w1, self.w3 = nn.Linear(8, 12, bias=False), nn.Linear(8, 12, bias=False)
            self.w2 = nn.Linear(12, 8, bias=False)
            self.attention_norm, self.ffn_norm = RMSNorm(8), RMSNorm(8)

        def forward(self, x, start_pos, freqs_cis, mask):
            h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask)
            hn = self.ffn_norm(h)
            return h + self.w2(F.silu(self.w1(hn)) * self.w3(hn))

    emb = nn.Embedding(11, 8)
    blk = Block()
    out = nn.Linear(8, 11, bias=False)
    model = _init(lib, nn.ModuleList([emb, blk, out]))
    freqs = precompute_freqs_cis(2, 16)
    tokens = lib.tensor([[1, 5, 7, 2, 9], [3, 3, 10, 0, 4]])

    def run(tok, start_pos):
        seqlen = tok.shape[1]
        fc = freqs[start_pos: start_pos + seqlen]
        mask = None
        if seqlen > 1:
            mask = lib.full((seqlen, seqlen), float("-inf"))
            mask = lib.triu(mask, diagonal=1)
            mask = lib.hstack([lib.zeros((seqlen, start_pos)), mask]).type_as(tok.float())
        return out(blk(emb(tok), start_pos, fc, mask)).float()

    def loss_fn():
        logits = run(tokens[:, :-1], 0)
        return F.cross_entropy(logits.reshape(-1, 11), tokens[:, 1:].reshape(-1))
    opt = lib.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    res = _train(lib, model, loss_fn, opt, step_fn=jit)
    model.eval()
    with lib.no_grad():
        prefill = run(tokens[:, :3], 0)
        nxt = prefill[:, -1].argmax(-1, keepdim=True)
        step = run(nxt, 3)
    return res, freqs, prefill, step, blk.attention.cache_k, sorted(model.state_dict().keys())


def case_vqvae_codebook(lib, jit):
    """VQ-VAE: encoder output flattened channels-last, distances to the codebook by ``torch.cdist`` and by the
    expanded-square formula, ``argmin``, one-hot encodings by scatter_, quantised by matmul with the codebook, the
    straight-through estimator ``z + (zq - z).detach()``, codebook and commitment losses, perplexity."""
    nn, F = lib.nn, lib.nn.functional

    class VectorQuantizer(nn.Module):
        def __init__(self, num_embeddings, embedding_dim, commitment_cost):
            super().__init__()
            self.D, self.K = embedding_dim, num_embeddings
            self.embedding = nn.Embedding(num_embeddings, embedding_dim)
            self.embedding.weight.data.uniform_(-1 / num_embeddings, 1 / num_embeddings)
            self.commitment_cost = commitment_cost

        def forward(self, inputs):
            inputs = inputs.permute(0, 2, 3, 1).contiguous()
            shape = inputs.shape
            flat = inputs.view(-1, self.D)
            distances = (lib.sum(flat ** 2, dim=1, keepdim=True) + lib.sum(self.embedding.weight ** 2, dim=1)
                         - 2 * lib.matmul(flat, self.embedding.weight.t()))
            idx2 = lib.cdist(flat, self.embedding.weight).argmin(dim=1)
            encoding_indices = lib.argmin(distances, dim=1).unsqueeze(1)
            encodings = lib.zeros(encoding_indices.shape[0], self.K)
            encodings.scatter_(1, encoding_indices, 1)
            quantized = lib.matmul(encodings, self.embedding.weight).view(shape)
            e_latent_loss = F.mse_loss(quantized.detach(), inputs)
            q_latent_loss = F.mse_loss(quantized, inputs.detach())
            loss = q_latent_loss + self.commitment_cost * e_latent_loss
            quantized = inputs + (quantized - inputs).detach()
            avg_probs = lib.mean(encodings, dim=0)
            perplexity = lib.exp(-lib.sum(avg_probs * lib.log(avg_probs + 1e-10)))
            return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encoding_indices, idx2

    enc = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1), nn.ReLU(), nn.Conv2d(4, 3, 1))
    vq = VectorQuantizer(5, 3, 0.25)
    dec = nn.Sequential(nn.ConvTranspose2d(3, 4, 4, 2, 1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
    model = _init(lib, nn.ModuleList([enc, vq, dec]))
    with lib.no_grad():
        vq.embedding.weight.mul_(3.0)  # codes spread over the encoder's range
    x = _data(lib, 2, 1, 8, 8)

    def loss_fn():
        vq_loss, q, perplexity, idx, idx2 = vq(enc(x))
        return F.mse_loss(dec(q), x) + vq_loss
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    res = _train(lib, model, loss_fn, opt, step_fn=jit)
    vq_loss, q, perplexity, idx, idx2 = vq(enc(x))
    return res, perplexity, idx.squeeze(1), idx2, _meta(q), _meta(idx)


def case_nerf_hierarchical_sampling(lib):
    """NeRF's sample_pdf: weights + 1e-5 normalised to a pdf, cumsum into a cdf with a zero prepended,
    ``torch.searchsorted(cdf, u, right=True)``, below/above clamped with max/min against zeros_like/ones_like,
    ``torch.gather`` on an expanded cdf and bins, the denom fix ``torch.where(denom < 1e-5, ones_like, denom)``,
    then the fine samples merged by ``torch.sort(torch.cat([z_vals, z_samples], -1))``."""
    def sample_pdf(bins, weights, N_samples):
        weights = weights + 1e-5
        pdf = weights / lib.sum(weights, -1, keepdim=True)
        cdf = lib.cumsum(pdf, -1)
        cdf = lib.cat([lib.zeros_like(cdf[..., :1]), cdf], -1)
        # (NeRF uses linspace(0, 1): u = 1 against cdf[-1] = 1 +- 1 ulp is a coin flip of the sum's rounding)
        u = lib.linspace(0.0, 1.0, steps=N_samples + 2)[1:-1]
        u = u.expand(list(cdf.shape[:-1]) + [N_samples]).contiguous()
        inds = lib.searchsorted(cdf, u, right=True)
        below = lib.max(lib.zeros_like(inds - 1), inds - 1)
        above = lib.min((cdf.shape[-1] - 1) * lib.ones_like(inds), inds)
        inds_g = lib.stack([below, above], -1)
        matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
        cdf_g = lib.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
        bins_g = lib.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
        denom = cdf_g[..., 1] - cdf_g[..., 0]
        denom = lib.where(denom < 1e-5, lib.ones_like(denom), denom)
        t = (u - cdf_g[..., 0]) / denom
        return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0]), inds

    z_vals = lib.linspace(2.0, 6.0, 8).expand(3, 8)
    mids = 0.5 * (z_vals[..., 1:] + z_vals[..., :-1])
    w = (_data(lib, 3, 8) + 1.0).requires_grad_()
    w2 = w.detach().clone()
    w2[1, 2:5] = 0.0
    samples, inds = sample_pdf(mids, w[..., 1:-1], 5)
    samples.sum().backward()
    s2, i2 = sample_pdf(mids, w2[..., 1:-1], 6)
    z_all, order = lib.sort(lib.cat([z_vals, samples.detach()], -1), -1)
    b = lib.bucketize(lib.tensor([2.5, 4.0, 9.0]), lib.tensor([2.0, 4.0, 6.0]), right=False)
    return samples, inds, w.grad, s2, i2, z_all, order, b


def case_maml_inner_loop(lib):
    """MAML: the inner loop by ``torch.autograd.grad(loss, params, create_graph=True)`` and fast weights passed
    through ``torch.func.functional_call``, the meta-loss backpropagated through the inner updates into the meta
    parameters, first-order MAML beside it (create_graph=False), meta-SGD per-parameter learning rates."""
    nn, F = lib.nn, lib.nn.functional
    net = _init(lib, nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)))
    lrs = nn.ParameterList([nn.Parameter(lib.full_like(p, 0.1)) for p in net.parameters()])
    meta_opt = lib.optim.Adam(list(net.parameters()) + list(lrs.parameters()), lr=1e-2)
    tasks = []
    for k in range(2):
        xs = lib.linspace(-2, 2, 5)[:, None] + 0.1 * k
        amp, phase = 1.0 + 0.5 * k, 0.3 * k
        tasks.append((xs, amp * lib.sin(xs + phase), xs * 0.9, amp * lib.sin(xs * 0.9 + phase)))
    losses = []
    for _ in range(2):
        meta_opt.zero_grad()
        total = 0.0
        for xs, ys, xq, yq in tasks:
            params = dict(net.named_parameters())
            for _ in range(2):
                loss = F.mse_loss(lib.func.functional_call(net, params, (xs,)), ys)
                grads = lib.autograd.grad(loss, list(params.values()), create_graph=True)
                params = {n: p - lr * g for (n, p), g, lr in zip(params.items(), grads, lrs)}
            total = total + F.mse_loss(lib.func.functional_call(net, params, (xq,)), yq)
        (total / len(tasks)).backward()
        meta_opt.step()
        losses.append(total.item())
    xs, ys, xq, yq = tasks[0]
    params = dict(net.named_parameters())
    g = lib.autograd.grad(F.mse_loss(lib.func.functional_call(net, params, (xs,)), ys), list(params.values()))
    fo = {n: (p - 0.1 * gi).detach().requires_grad_() for (n, p), gi in zip(params.items(), g)}
    fo_loss = F.mse_loss(lib.func.functional_call(net, fo, (xq,)), yq)
    fo_loss.backward()
    return losses, [p.grad for p in lrs], list(net.parameters()), [p.grad for p in fo.values()]


test_script_matches_torch = script_test(globals())


def _complex_steps(lib, name, kw):
    p = lib.nn.Parameter(lib.tensor([1 + 2j, -0.5 + 0.25j, 0.1 - 0.3j], dtype=lib.complex64))
    q = lib.nn.Parameter(lib.tensor([0.3, -0.2]))
    opt = getattr(lib.optim, name)([p, q], **kw)

    def closure():
        opt.zero_grad()
        loss = ((p * lib.tensor([0.3 - 1j, 2 + 0.1j, -1 + 0.5j])).real.sum() + (p.abs() ** 2).sum()
                + (p.imag ** 3).sum() + (q * q).sum())
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    return p.detach(), q.detach(), dict(opt.state[p])


@needs_torch
@pytest.mark.parametrize("name, kw", [
    ("Adam", dict(lr=0.1, weight_decay=1e-2)), ("Adam", dict(lr=0.1, amsgrad=True)), ("AdamW", dict(lr=0.1)),
    ("Adamax", dict(lr=0.1)), ("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1)), ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict(lr=1.0)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)), ("Rprop", dict(lr=0.1)),
    ("ASGD", dict(lr=0.1, t0=1)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("LBFGS", dict(lr=0.5, max_iter=3))])
def test_complex_parameters_step_as_their_real_view(name, kw):
    """PyTorch's optimizers step a complex parameter as ``view_as_real``: Adam's second moment is re(g)^2 and
    im(g)^2 apiece (not |g|^2), Rprop's step sizes start at complex(lr, lr), LBFGS's flat vectors hold the real and
    imaginary parts; states keep the parameter's complex dtype."""
    assert_same(_complex_steps(torch, name, kw), _complex_steps(torchish, name, kw))


def _complex_embedding(lib):
    w = lib.complex(lib.ones(5, 3), lib.arange(15.0).reshape(5, 3))
    out = []
    for requires_grad, no_grad, idx in ((False, False, [1, 2]), (True, True, [1, 4]), (True, False, [1, 2]),
                                        (True, False, [7])):
        weight = w.clone().requires_grad_(requires_grad)
        try:
            with lib.set_grad_enabled(not no_grad):
                out.append(lib.nn.functional.embedding(lib.tensor(idx), weight))
        except Exception as e:  # noqa: BLE001 - the error is the outcome
            out.append((type(e).__name__, str(e)))
    return out


@needs_torch
def test_complex_embedding_refuses_autograd_as_torch():
    """A complex embedding table looks up rows without autograd, but one that requires grad raises PyTorch's
    'embedding does not support automatic differentiation for outputs with complex dtype.' (after the index
    check); torchish returned a result."""
    assert_same(_complex_embedding(torch), _complex_embedding(torchish))


def _complex_linalg_grads(lib, jit):
    A = lib.complex(lib.tensor([[0.5, -1.0, 0.3], [0.2, 0.8, -0.6], [0.4, 0.1, 0.9]]),
                    lib.tensor([[0.1, 0.4, -0.7], [0.9, -0.3, 0.25], [-0.2, 0.5, 0.3]])).requires_grad_()
    c = lib.complex(lib.tensor(0.7), lib.tensor(-0.4))

    @jit
    def losses(A):
        H = A @ A.mH + lib.eye(3)
        w, V = lib.linalg.eigh(H)
        ev, EV = lib.linalg.eig(A)
        return [(lib.linalg.det(A) * c).real, (lib.linalg.inv(A)[0, 1] * c).real,
                (lib.linalg.cholesky(H)[2, 0] * c).real, w.sum() + (V.abs() ** 2 * lib.arange(3.0)).sum(),
                (ev.sum() * c).real + (EV.abs() ** 2 * lib.arange(3.0)).sum()]
    return [lib.autograd.grad(loss, A, retain_graph=True)[0] for loss in losses(A)]


@needs_torch
def test_complex_linalg_gradients_match_torch():
    """det, inv, cholesky, eigh and eig of a complex matrix backpropagate PyTorch's (conjugate Wirtinger)
    gradients, eagerly and compiled: their formulas are PyTorch's and take the registry's gradients as they are
    (a conj in and out around them gave the conjugate-transposed derivative, e.g. ``conj(c) * d`` for d/da det)."""
    ref = _complex_linalg_grads(torch, lambda f: f)
    assert_same(ref, _complex_linalg_grads(torchish, lambda f: f))
    assert_same(ref, _complex_linalg_grads(torchish, torchish.compile))


def _complex_func_transforms(lib):
    a = lib.complex(lib.tensor([0.5, -1.0]), lib.tensor([0.1, 0.4]))
    c = lib.complex(lib.tensor(0.7), lib.tensor(-0.4))

    def f(z):
        return (z.exp().sum() * c).real + (lib.linalg.det(z[:, None] * z[None, :] + lib.eye(2)) * c).real
    out = [lib.func.grad(f)(a), lib.func.grad_and_value(f)(a)]
    _, vjp_fn = lib.func.vjp(lambda z: z.sin() * c, a)
    out.append(vjp_fn(lib.complex(lib.tensor([1.0, -0.5]), lib.tensor([0.3, 0.2]))))
    _, vjp_fn = lib.func.vjp(lambda z: z.abs(), a)
    out.append(vjp_fn(lib.tensor([1.0, -0.5])))
    for jac in (lib.func.jacrev, lib.func.jacfwd):
        for fn, x in ((lambda z: z.sin(), a), (lambda z: z.abs(), a), (lambda x: lib.complex(x, x), a.real)):
            try:
                out.append(jac(fn)(x))
            except Exception as e:  # noqa: BLE001 - the error is the outcome
                out.append((type(e).__name__, str(e)))
    return out


@needs_torch
def test_complex_func_transforms_match_torch():
    """torch.func.grad / grad_and_value / vjp of functions of complex tensors give PyTorch's (conjugate) gradients,
    not JAX's (torchish returned their conjugates), and jacrev/jacfwd refuse complex inputs and outputs with
    PyTorch's RuntimeError (torchish returned a Jacobian or raised JAX's TypeError)."""
    assert_same(_complex_func_transforms(torch), _complex_func_transforms(torchish))


def _complex_jax_derived_grads(lib, jit):
    A = lib.complex(lib.tensor([[0.5, -1.0, 0.3], [0.2, 0.8, -0.6], [0.4, 0.1, 0.9]]),
                    lib.tensor([[0.1, 0.4, -0.7], [0.9, -0.3, 0.25], [-0.2, 0.5, 0.3]])).requires_grad_()
    c = lib.complex(lib.tensor(0.7), lib.tensor(-0.4))

    @jit
    def losses(A):
        Q, R = lib.linalg.qr(A)
        U, S, Vh = lib.linalg.svd(A, full_matrices=False)
        return [(Q[0, 1] * c).real + (R[0, 2] * c).real, (U.abs() ** 2 * lib.arange(3.0)).sum() + S.sum(),
                (A.sinc() * c).real.sum()]
    return [lib.autograd.grad(loss, A, retain_graph=True)[0] for loss in losses(A)]


@needs_torch
def test_complex_qr_svd_sinc_gradients_match_torch():
    """linalg.qr and linalg.svd (singular vectors) backpropagate through JAX's VJP, and sinc through PyTorch's
    formula: for complex inputs the first now takes and gives PyTorch's conjugate gradients (JAX's were returned)
    and sinc conjugates its derivative as PyTorch's sinc_backward does; eager and compiled."""
    ref = _complex_jax_derived_grads(torch, lambda f: f)
    assert_same(ref, _complex_jax_derived_grads(torchish, lambda f: f))
    assert_same(ref, _complex_jax_derived_grads(torchish, torchish.compile))
