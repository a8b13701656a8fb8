"""Third-party programs, round 31 (continued from test_probe_scripts31.py): training loops and data code as
repositories write them, run with ``torch.manual_seed`` and default initialisation in both libraries and compared
with torch 2.13 by ``assert_script_matches`` (tests/oracle.py): a VAE on ``torch.distributions`` (Independent
Normal/Bernoulli, ``kl_divergence``, rsample, an IWAE bound with ``logsumexp``), a hinge-loss GAN with old-style
``spectral_norm``, an R1 penalty through ``autograd.grad(create_graph=True)``, ``requires_grad`` toggling, Adam with
beta1 = 0 and a ``lerp`` EMA generator; a data pipeline (a bucketing batch sampler, a padding collate_fn,
``random_split`` by fractions, ConcatDataset/Subset, SubsetRandomSampler/BatchSampler/RandomSampler/
WeightedRandomSampler/DistributedSampler with seeds, ``default_collate`` of namedtuples and numpy, IterableDataset
and ChainDataset); custom ``optim.Optimizer`` subclasses (Lion, Muon's Newton-Schulz in bfloat16) with their state
dicts, one of them stepping inside a compiled step whose DropPath draws from a Generator; a tabular model cast with
``model.to(float)``; a LoRA ``nn.Linear`` subclass that merges its update in ``train(False)``, with HF's
``_init_weights`` and ``resize_token_embeddings`` under tied weights.

What differed, fixed: ``Tensor.to`` and ``Module.to`` refused the Python types PyTorch's parser takes as dtypes
(``x.to(float)``, ``x.to(int)``, ``x.to(dtype=bool)``, ``x.to("cpu", complex)``: TypeError instead of float64, int64,
bool and complex128 results), while ``Tensor.type(float)`` converted where PyTorch raises "ValueError: invalid type:
'float'"; a product whose operands differ both in shape and in dtype reported the dtype where PyTorch reports the
shapes ("mat1 and mat2 shapes cannot be multiplied", from mm/mv/matmul/F.linear without a bias, and the size error
for Bool operands where torchish raised NotImplementedError), and ``torch.dot``/``vdot`` the sizes where PyTorch
reports the dtypes (``test_product_shape_and_dtype_errors_in_torchs_order``).
"""
import collections
import math

import numpy as np
import pytest

from oracle import raised as _err, same_error, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_vae_distributions_kl_iwae(lib):
    """A VAE whose posterior and prior are ``Independent(Normal)`` and likelihood ``Independent(Bernoulli(logits))``:
    ``rsample``, ``kl_divergence`` with KL annealing, Adamax, entropy and batch/event shapes, then an importance-
    weighted bound from K samples with ``logsumexp``; the closed-form KL beside ``kl_divergence`` with a scalar
    standard normal."""
    nn, D = lib.nn, lib.distributions
    lib.manual_seed(0)

    class VAE(nn.Module):
        def __init__(self, x_dim=6, z_dim=2):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(x_dim, 8), nn.Softplus())
            self.mu, self.logvar = nn.Linear(8, z_dim), nn.Linear(8, z_dim)
            self.dec = nn.Sequential(nn.Linear(z_dim, 8), nn.ELU(), nn.Linear(8, x_dim))

        def posterior(self, x):
            h = self.enc(x)
            return D.Independent(D.Normal(self.mu(h), (0.5 * self.logvar(h)).exp()), 1)

        def prior(self, like):
            return D.Independent(D.Normal(lib.zeros_like(like), lib.ones_like(like)), 1)

        def likelihood(self, z):
            return D.Independent(D.Bernoulli(logits=self.dec(z)), 1)

    x = (lib.rand(5, 6) > 0.5).float()
    model = VAE()
    opt = lib.optim.Adamax(model.parameters(), lr=1e-2)
    out = []
    for it in range(3):
        q = model.posterior(x)
        z = q.rsample()
        kl = D.kl_divergence(q, model.prior(z))
        loss = -(model.likelihood(z).log_prob(x) - min(1.0, (it + 1) / 2) * kl).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append((loss, kl, q.batch_shape, q.event_shape, q.entropy()))
    K = 4
    with lib.no_grad():
        q = model.posterior(x)
        zs = q.rsample((K,))
        log_w = model.likelihood(zs).log_prob(x) + model.prior(zs).log_prob(zs) - q.log_prob(zs)
        out += [zs.shape, log_w, (lib.logsumexp(log_w, dim=0) - np.log(K)).mean()]
        h = model.enc(x)
        mu, logvar = model.mu(h), model.logvar(h)
        out += [-0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1),
                D.kl_divergence(D.Normal(mu, (0.5 * logvar).exp()), D.Normal(0.0, 1.0)).sum(-1)]
    return out


def case_gan_hinge_spectral_norm_r1(lib):
    """A hinge-loss GAN step as StyleGAN-like repositories write it: a discriminator under
    ``nn.utils.spectral_norm`` (weight_orig, weight_u buffers, eval mode, ``remove_spectral_norm``), an R1 penalty
    on real samples via ``autograd.grad(create_graph=True)``, ``requires_grad`` toggled per network, two Adams with
    betas (0, 0.99), an inplace LeakyReLU in G and a frozen EMA copy updated by ``lerp``."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    def make_g():
        return nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 3))

    G, g_ema = make_g(), make_g()
    Dn = nn.Sequential(nn.utils.spectral_norm(nn.Linear(3, 8)), nn.LeakyReLU(0.2),
                       nn.utils.spectral_norm(nn.Linear(8, 1)))
    g_ema.load_state_dict(G.state_dict())
    g_ema.requires_grad_(False)
    optG = lib.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
    optD = lib.optim.Adam(Dn.parameters(), lr=2e-3, betas=(0.0, 0.99))
    real = lib.randn(6, 3) * 0.5 + 1
    out = [sorted(Dn.state_dict().keys()), [n for n, _ in Dn.named_parameters()]]

    def requires_grad(model, flag=True):
        for p in model.parameters():
            p.requires_grad = flag

    for it in range(3):
        z = lib.randn(6, 2)
        requires_grad(G, False)
        requires_grad(Dn, True)
        d_loss = F.relu(1.0 - Dn(real)).mean() + F.relu(1.0 + Dn(G(z).detach())).mean()
        real_req = real.detach().requires_grad_(True)
        (grad_real,) = lib.autograd.grad(outputs=Dn(real_req).sum(), inputs=real_req, create_graph=True)
        r1 = grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()
        optD.zero_grad()
        (d_loss + 5.0 * r1).backward()
        optD.step()
        requires_grad(G, True)
        requires_grad(Dn, False)
        g_loss = -Dn(G(z)).mean()
        optG.zero_grad()
        g_loss.backward()
        optG.step()
        with lib.no_grad():
            for p_ema, p in zip(g_ema.parameters(), G.parameters()):
                p_ema.copy_(p.lerp(p_ema, 0.9))
        out.append((d_loss.item(), r1.item(), g_loss.item(), Dn[0].weight_u, Dn[2].weight_orig.grad))
    Dn.eval()
    with lib.no_grad():
        out += [Dn(real), g_ema(lib.ones(1, 2)), Dn[0].weight]
    nn.utils.remove_spectral_norm(Dn[0])
    return out + [sorted(Dn.state_dict().keys())]


def case_data_pipeline_samplers_collate(lib):
    """A length-bucketing ``batch_sampler`` with its own Generator and a padding ``collate_fn`` over dict samples
    (numpy scalars through ``default_collate``), ``random_split`` by fractions, ConcatDataset of a TensorDataset
    and a Subset, a shuffled drop_last loader, SubsetRandomSampler/BatchSampler/RandomSampler(replacement)/
    WeightedRandomSampler with generators, DistributedSampler for rank 1 after ``set_epoch``, ``default_collate``
    of namedtuples and of numpy/float/str tuples, an IterableDataset batched and unbatched, ChainDataset."""
    data = lib.utils.data
    lib.manual_seed(0)
    Sample = collections.namedtuple("Sample", ["tokens", "label"])

    class VarLenDataset(data.Dataset):
        def __init__(self, n=11):
            self.lens = [(i * 7) % 5 + 1 for i in range(n)]

        def __len__(self):
            return len(self.lens)

        def __getitem__(self, i):
            return {"tokens": lib.arange(self.lens[i]) + i, "label": i % 3, "meta": np.float32(i) / 2}

    class BucketSampler(data.Sampler):
        def __init__(self, lens, batch_size, generator):
            self.lens, self.bs, self.g = lens, batch_size, generator

        def __iter__(self):
            idx = sorted(lib.randperm(len(self.lens), generator=self.g).tolist(), key=lambda i: self.lens[i])
            batches = [idx[i:i + self.bs] for i in range(0, len(idx), self.bs)]
            for o in lib.randperm(len(batches), generator=self.g).tolist():
                yield batches[o]

        def __len__(self):
            return (len(self.lens) + self.bs - 1) // self.bs

    def collate(batch):
        toks = [b["tokens"] for b in batch]
        padded = lib.nn.utils.rnn.pad_sequence(toks, batch_first=True, padding_value=-1)
        lengths = lib.tensor([len(t) for t in toks])
        return {"tokens": padded, "mask": lib.arange(padded.shape[1])[None, :] < lengths[:, None],
                "label": lib.tensor([b["label"] for b in batch]),
                "meta": data.default_collate([b["meta"] for b in batch])}

    ds = VarLenDataset()
    out = list(data.DataLoader(ds, batch_sampler=BucketSampler(ds.lens, 3, lib.Generator().manual_seed(11)),
                               collate_fn=collate))
    train, val, test = data.random_split(ds, [0.6, 0.2, 0.2], generator=lib.Generator().manual_seed(1))
    out.append((len(train), len(val), len(test), list(val.indices)))
    td = data.TensorDataset(lib.arange(8.0).reshape(8, 1), lib.arange(8))
    cat = data.ConcatDataset([td, data.Subset(td, [7, 0, 3])])
    dl = data.DataLoader(cat, batch_size=3, shuffle=True, drop_last=True, generator=lib.Generator().manual_seed(2))
    out += [len(cat), cat[9], cat.cumulative_sizes, len(dl), list(dl)]
    srs = data.SubsetRandomSampler([1, 4, 6, 9], generator=lib.Generator().manual_seed(4))
    out += [list(srs), list(data.BatchSampler(srs, 3, drop_last=False)), list(data.BatchSampler(range(7), 3, True)),
            list(data.RandomSampler(range(5), replacement=True, num_samples=7,
                                    generator=lib.Generator().manual_seed(5))),
            list(data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0], 6, generator=lib.Generator().manual_seed(9)))]
    dist = data.distributed.DistributedSampler(cat, num_replicas=2, rank=1, shuffle=True, seed=3)
    dist.set_epoch(1)
    out += [list(dist), len(dist), data.default_collate([Sample(lib.ones(2), 1), Sample(lib.zeros(2), 0)]),
            data.default_collate([(np.arange(3), 1.5, "a"), (np.arange(3) * 2, 2.5, "b")])]

    class Stream(data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(lib.arange(self.n) * 2 if data.get_worker_info() is None else [])

    return out + [list(data.DataLoader(Stream(7), batch_size=3)), list(data.DataLoader(Stream(3), batch_size=None)),
                  list(data.ChainDataset([Stream(2), Stream(3)]))]


def _lion(lib):
    class Lion(lib.optim.Optimizer):
        """lucidrains' Lion: the sign of an interpolated momentum, decoupled weight decay through ``p.data``."""

        def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
            if not 0.0 <= lr:
                raise ValueError("Invalid learning rate: {}".format(lr))
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

        @lib.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with lib.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in filter(lambda p: p.grad is not None, group["params"]):
                    p.data.mul_(1 - group["lr"] * group["weight_decay"])
                    state = self.state[p]
                    if len(state) == 0:
                        state["exp_avg"] = lib.zeros_like(p)
                    exp_avg, (beta1, beta2) = state["exp_avg"], group["betas"]
                    update = exp_avg.clone().mul_(beta1).add(p.grad, alpha=1 - beta1).sign_()
                    p.add_(update, alpha=-group["lr"])
                    exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)
            return loss
    return Lion


def case_custom_optimizers_lion_and_muon(lib):
    """Muon (momentum by ``lerp_``, Newton-Schulz orthogonalisation in bfloat16 with ``mT``, a shape-scaled step)
    for the matrices and Lion for the biases, each an ``optim.Optimizer`` subclass: a closure step, the state dict
    and loading it into a fresh Lion, ``add_param_group`` filling the defaults, the constructor's ValueError."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    Lion = _lion(lib)

    def zeropower_via_newtonschulz5(G, steps=3):
        a, b, c = (3.4445, -4.7750, 2.0315)
        X = G.bfloat16()
        if G.size(-2) > G.size(-1):
            X = X.mT
        X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
        for _ in range(steps):
            A = X @ X.mT
            X = a * X + (b * A + c * A @ A) @ X
        return X.mT if G.size(-2) > G.size(-1) else X

    class Muon(lib.optim.Optimizer):
        def __init__(self, params, lr=0.02, momentum=0.95, nesterov=True):
            super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov))

        @lib.no_grad()
        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    g, state = p.grad, self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = lib.zeros_like(g)
                    buf = state["momentum_buffer"]
                    buf.lerp_(g, 1 - group["momentum"])
                    g = zeropower_via_newtonschulz5(g.lerp_(buf, group["momentum"]) if group["nesterov"] else buf)
                    p.add_(g.view_as(p), alpha=-group["lr"] * max(1, p.size(-2) / p.size(-1)) ** 0.5)

    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    others = [p for p in model.parameters() if p.ndim < 2]
    opts = [Muon([p for p in model.parameters() if p.ndim >= 2], lr=0.05), Lion(others, lr=1e-2, weight_decay=0.1)]
    x, y = lib.randn(8, 4), lib.randn(8, 2)
    out = [repr(opts[1]).splitlines()[0], opts[1].defaults]
    for it in range(3):
        for o in opts:
            o.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        for o in opts:
            o.step()
        out.append((loss.item(), model[0].weight.clone(), model[2].bias.clone()))

    def closure():
        opts[1].zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    out.append(opts[1].step(closure))
    sd = opts[1].state_dict()
    lion2 = Lion(others, lr=1.0)
    lion2.load_state_dict(sd)
    opts[0].add_param_group({"params": [nn.Parameter(lib.ones(2, 2))], "lr": 0.5})
    return out + [sd["param_groups"], sorted(sd["state"]), lion2.param_groups[0]["lr"],
                  lion2.state[others[0]]["exp_avg"],
                  [(len(g["params"]), g["lr"], g["momentum"]) for g in opts[0].param_groups],
                  _err(lambda: Lion(model.parameters(), lr=-1))]


def case_compiled_step_generator_droppath_lion(lib, jit):
    """The Lion subclass stepping inside a compiled train step (``set_to_none`` zero_grad, a DropPath drawing
    ``bernoulli_`` from a module-level Generator) while a LambdaLR outside changes the rate; the Generator's and the
    global stream's next draws."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    g = lib.Generator().manual_seed(3)

    class DropPath(nn.Module):
        def __init__(self, p):
            super().__init__()
            self.p = p

        def forward(self, x):
            if not self.training or self.p == 0:
                return x
            mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(1 - self.p, generator=g)
            return x * mask.div_(1 - self.p)

    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), DropPath(0.5), nn.Linear(8, 2))
    opt = _lion(lib)(model.parameters(), lr=1e-2, weight_decay=0.1)
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 3))
    x, y = lib.randn(6, 4), lib.randint(0, 2, (6,))

    @jit
    def train_step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    out = []
    for it in range(4):
        out.append(train_step(x, y))
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out + [model[0].weight, opt.state[model[0].weight]["exp_avg"], lib.rand(2, generator=g), lib.rand(1)]


def case_tabular_embeddings_auc_python_dtypes(lib):
    """A tabular pipeline in float64 by Python types: NaNs imputed by ``nanmean``/``where``, standardisation,
    quantile bins and ``bucketize``, labels ``.to(float)``, per-column embeddings with BatchNorm1d in a model cast by
    ``model.to(float)``, BCE with ``pos_weight``; ROC-AUC from a stable descending ``argsort``, cumsums and
    ``trapezoid``, predictions ``.to(int)``, F1; then the mistake of multiplying a float32 batch of the wrong width by
    the float64 first layer's weight (PyTorch's error names the shapes) and ``Tensor.type(float)`` (a ValueError)."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    num = lib.randn(12, 2)
    num[2, 0] = float("nan")
    num[5, 1] = float("nan")
    cat = lib.randint(0, 3, (12, 2))
    y = (lib.rand(12) < 0.4).to(float)
    col_means = lib.nanmean(num, dim=0)
    num = lib.where(lib.isnan(num), col_means.expand_as(num), num)
    num = (num - num.mean(0, keepdim=True)) / num.std(0, keepdim=True)
    bins = lib.quantile(num[:, 0], lib.tensor([0.25, 0.5, 0.75]))
    binned = lib.bucketize(num[:, 0].contiguous(), bins)
    out = [col_means, bins, binned, y.dtype]

    class TabNet(nn.Module):
        def __init__(self, cards=(3, 3, 4), d=3):
            super().__init__()
            self.embs = nn.ModuleList([nn.Embedding(c, d) for c in cards])
            self.bn = nn.BatchNorm1d(2)
            self.mlp = nn.Sequential(nn.Linear(3 * d + 2, 8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, x_cat, x_num):
            e = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
            return self.mlp(lib.cat(e + [self.bn(x_num)], dim=1)).squeeze(-1)

    model = TabNet().to(float)
    x_cat, x_num = lib.cat([cat, binned[:, None]], dim=1), num.to("cpu", float)
    pos_weight = ((1 - y).sum() / y.sum()).to(dtype=float)
    opt = lib.optim.Adam(model.parameters(), lr=0.05)
    for epoch in range(3):
        logits = model(x_cat, x_num)
        loss = F.binary_cross_entropy_with_logits(logits, y, pos_weight=pos_weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append((loss.item(), logits.dtype))
    model.eval()
    with lib.no_grad():
        scores = model(x_cat, x_num).sigmoid()
    labels = y[lib.argsort(scores, descending=True, stable=True)]
    tps, fps = lib.cumsum(labels, 0), lib.cumsum(1 - labels, 0)
    tpr = lib.cat([lib.zeros(1, dtype=tps.dtype), tps / tps[-1]])
    fpr = lib.cat([lib.zeros(1, dtype=fps.dtype), fps / fps[-1]])
    preds = (scores > 0.5).to(int)
    tp = ((preds == 1) & (y == 1)).sum().to(float)
    prec, rec = tp / preds.sum().clamp(min=1), tp / y.sum()
    return out + [lib.trapezoid(tpr, fpr), tpr, preds, (2 * prec * rec / (prec + rec)).item(), model.bn.running_var,
                  [p.dtype for p in model.parameters()][:2], _err(lambda: lib.ones(2, 10) @ model.mlp[0].weight.T),
                  _err(lambda: lib.ones(3).type(float))]


def case_lora_linear_subclass_merge_and_hf_resize(lib):
    """loralib's ``Linear(nn.Linear, LoRALayer)``: ``nn.Linear.__init__`` called directly, ``reset_parameters``
    overridden (kaiming_uniform_ of lora_A), ``fan_in_fan_out`` weight transposed through ``.data``, the update
    merged into ``weight.data`` by ``train(False)`` and taken out again; ``mark_only_lora_as_trainable``; HF's
    ``_init_weights`` (``normal_``, padding row zeroed) and ``resize_token_embeddings`` with a tied head."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class LoRALayer:
        def __init__(self, r, lora_alpha, merge_weights):
            self.r, self.lora_alpha, self.merged, self.merge_weights = r, lora_alpha, False, merge_weights

    class Linear(nn.Linear, LoRALayer):
        def __init__(self, in_features, out_features, r=0, lora_alpha=1, fan_in_fan_out=False, merge_weights=True):
            nn.Linear.__init__(self, in_features, out_features)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, merge_weights=merge_weights)
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
            if hasattr(self, "lora_A"):
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def T(self, w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w

        def train(self, mode=True):
            nn.Linear.train(self, mode)
            if mode and self.merge_weights and self.merged:
                self.weight.data -= self.T(self.lora_B @ self.lora_A) * self.scaling
                self.merged = False
            elif not mode and self.merge_weights and not self.merged:
                self.weight.data += self.T(self.lora_B @ self.lora_A) * self.scaling
                self.merged = True
            return self

        def forward(self, x):
            result = F.linear(x, self.T(self.weight), bias=self.bias)
            if self.r > 0 and not self.merged:
                result += (x @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) * self.scaling
            return result

    class TinyLM(nn.Module):
        def __init__(self, vocab=6, d=4):
            super().__init__()
            self.embed_tokens = nn.Embedding(vocab, d, padding_idx=0)
            self.q = Linear(d, d, r=2, lora_alpha=4, fan_in_fan_out=True)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.apply(self._init_weights)
            self.lm_head.weight = self.embed_tokens.weight

        def _init_weights(self, module):
            if isinstance(module, nn.Embedding):
                module.weight.data.normal_(mean=0.0, std=0.2)
                if module.padding_idx is not None:
                    module.weight.data[module.padding_idx].zero_()

        def resize_token_embeddings(self, new_num):
            old = self.embed_tokens
            new = nn.Embedding(new_num, old.embedding_dim, padding_idx=old.padding_idx)
            self._init_weights(new)
            n = min(old.num_embeddings, new_num)
            new.weight.data[:n, :] = old.weight.data[:n, :]
            self.embed_tokens = new
            self.lm_head.weight = self.embed_tokens.weight

        def forward(self, ids, labels=None):
            logits = self.lm_head(self.q(self.embed_tokens(ids)))
            if labels is None:
                return logits
            shift_logits = logits[..., :-1, :].contiguous()
            return F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), labels[..., 1:].contiguous().view(-1))

    model = TinyLM()
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n or n == "q.bias"
    out = [[n for n, p in model.named_parameters() if p.requires_grad], model.q.weight.shape]
    opt = lib.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.05)
    ids = lib.tensor([[1, 2, 3, 4, 0], [5, 4, 3, 0, 0]])
    labels = ids.masked_fill(ids == 0, -100)
    for it in range(3):
        loss = model(ids, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append((loss, model.q.lora_B.grad, model.q.bias.grad, model.embed_tokens.weight.grad))
    model.eval()
    with lib.no_grad():
        merged_logits = model(ids)
    out += [model.q.merged, merged_logits, model.q.weight.clone(), model.train().q.merged, model(ids)]
    model.resize_token_embeddings(9)
    return out + [model.lm_head.weight is model.embed_tokens.weight, model.embed_tokens.weight[[0, 5, 6]],
                  [n for n, p in model.named_parameters()], model(ids).shape]


test_script_matches_torch = script_test(globals())

# Products of operands wrong both in shape and in dtype (or Bool and of the wrong shape): PyTorch's mm/mv/bmm report
# the shapes first, dot/vdot the dtypes first.
_PRODUCTS = {
    "mm": lambda lib, a, b: lib.mm(a(2, 3), b(2, 3)),
    "matmul_2d": lambda lib, a, b: a(2, 3) @ b(2, 3),
    "matmul_1d_2d": lambda lib, a, b: a(3) @ b(2, 3),
    "mv": lambda lib, a, b: lib.mv(a(2, 3), b(2)),
    "matmul_folded_mv": lambda lib, a, b: a(4, 2, 3) @ b(2),
    "matmul_folded_mm": lambda lib, a, b: a(4, 2, 3) @ b(2, 3),
    "linear_no_bias": lambda lib, a, b: lib.nn.functional.linear(a(4, 2, 3), b(2, 2)),
    "dot": lambda lib, a, b: lib.dot(a(3), b(2)),
    "vdot": lambda lib, a, b: lib.vdot(a(3), b(2)),
}


@pytest.mark.parametrize("kind", ["float_double", "bool"])
@pytest.mark.parametrize("name", sorted(_PRODUCTS))
def test_product_shape_and_dtype_errors_in_torchs_order(name, kind):
    def run(lib):
        dts = (lib.float32, lib.float64) if kind == "float_double" else (lib.bool, lib.bool)
        return _PRODUCTS[name](lib, *(lambda *shape, dt=dt: lib.ones(*shape, dtype=dt) for dt in dts))
    same_error(run)
