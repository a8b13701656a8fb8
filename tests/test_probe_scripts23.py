"""Seeded tutorial and blog programs of kinds the earlier probe files do not cover, run with torch 2.13 and with
torchish from ``torch.manual_seed`` with default initialisation: ESPCN super-resolution (PixelShuffle /
PixelUnshuffle, bicubic, antialiased and nearest-exact resizing), word2vec skip-gram with negative sampling
(subsampling by ``rand``, ``multinomial`` on unigram^0.75, ``bmm``, ``logsigmoid``), matrix factorisation with
per-group weight decay and learning rates (SGD Nesterov, AdamW), prototypical networks (episodes by ``randperm``,
``cdist``), ``pack_sequence(enforce_sorted=False)`` through a bidirectional GRU, preprocessing statistics
(``nan_to_num``, ``nanmean``, ``bucketize``, ``searchsorted`` with ``sorter``, ``histc``, ``histogram``,
``quantile`` in every interpolation, ``nanquantile``) and their errors, magnitude pruning then fine-tuning
(``torch.nn.utils.prune``), a neural cellular automaton (depthwise Sobel perception, circular padding, stochastic
updates), evolution strategies through ``parameters_to_vector``, the ``torch.utils.data`` toolbox (ConcatDataset,
Subset, samplers, ChainDataset, namedtuple collation, ``random_split`` by fractions), the ``nn.init`` zoo and a
k-NN classifier voting over tied distances (topk, mode, kthvalue, stable sort). Each ``case_*`` is written against
the PyTorch API only and compared with torch by ``assert_script_matches`` (tests/oracle.py).

Also probed and matching (kept out for time): a mixture density network (MixtureSameFamily of Independent Normals),
Bayes-by-backprop layers with MC dropout at test time, an LSTM forecaster on ``Tensor.unfold`` windows with
ReduceLROnPlateau, a tabular model (ModuleDict of Embeddings, BatchNorm1d, BCE with pos_weight), SegNet
(MaxPool2d return_indices + MaxUnpool2d), Grad-CAM with full backward hooks, saliency and integrated gradients
(trapezoid, cumulative_trapezoid), a TextCNN with Adagrad and gumbel_softmax(hard=True), SN-GAN with both
spectral norms and hinge losses, a scheduler zoo (CosineAnnealingWarmRestarts at fractional epochs, CyclicLR
exp_range with momentum cycling, three-phase OneCycleLR, LambdaLR per group with MultiplicativeLR, PolynomialLR),
FFT image filtering with a learnt frequency mask, polynomial fits (vander, lstsq, pinv, QR, torch.gradient, diff),
SIREN with a Laplacian by double backward and Fourier features, a 3-D UNet (Conv3d, ConvTranspose3d output_size,
trilinear Upsample, dice), AlexNet/ShuffleNet layers (LocalResponseNorm, ChannelShuffle, grouped dilated conv,
multi_margin_loss p=2), fold/unfold overlap-add, a multi-label loss zoo with NAdam; compiled steps for word2vec,
pruned models, ESPCN, an MDN, prototypical episodes, a packed GRU (a graph break), SN-GAN with
BatchNorm1d(momentum=None), MC dropout and PGD adversarial training.

Fixed while probing (each tested where the behaviour lives): histc's range checks and %g bounds
(test_ops_sort.py), searchsorted's sorter checks, nanquantile's messages and quantile's size limit, histogram's
bins-tensor and weight checks, nan_to_num's argument types, renorm's NaN checks, full() overflowing its default
dtype, byte-order and buffer inputs to torch.tensor, Embedding(max_norm)'s index error and C++ type names,
bilinear's message; and CPU autocast: ConvTranspose, avg_pool3d, cdist, affine_grid, fft, polar, view_as_complex,
cholesky_solve, triangular_solve, linalg.cond, huber/soft_margin/poisson_nll losses, local_response_norm, the
margin losses, and recurrent layers fed a bfloat16 activation (test_amp.py).

Not compared (PyTorch leaves them unspecified): the order of ties in ``argsort``/``sort(stable=False)`` beyond
small sizes.
"""
import collections
import importlib

import numpy as np
import pytest

from oracle import raised as _err, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_espcn_super_resolution(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class ESPCN(nn.Module):
        def __init__(self, scale=2, ch=1):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(ch, 8, 5, padding=2), nn.Tanh(), nn.Conv2d(8, 6, 3, padding=1),
                                      nn.Tanh(), nn.Conv2d(6, ch * scale ** 2, 3, padding=1))
            self.shuffle = nn.PixelShuffle(scale)

        def forward(self, x):
            return lib.sigmoid(self.shuffle(self.body(x)))

    model = ESPCN()
    hr = (lib.sin(lib.arange(2 * 1 * 12 * 12, dtype=lib.float32).reshape(2, 1, 12, 12) * 0.3) + 1) / 2
    lr_img = F.interpolate(hr, scale_factor=0.5, mode="bicubic", align_corners=False)
    lr_aa = F.interpolate(hr, size=(6, 6), mode="bilinear", antialias=True)
    down = nn.PixelUnshuffle(2)(hr)
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    losses, psnrs = [], []
    for step in range(4):
        opt.zero_grad()
        sr = model(lr_img)
        loss = F.mse_loss(sr, hr)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        psnrs.append((10 * lib.log10(1 / loss.detach())).item())
    bic = F.interpolate(lr_img, scale_factor=2, mode="bicubic", align_corners=True).clamp(0, 1)
    near = F.interpolate(lr_img, scale_factor=2, mode="nearest-exact")
    return (losses, psnrs, lr_img, lr_aa, down, down.shape, bic, near, model.body[0].weight.grad,
            F.pixel_shuffle(down, 2).equal(hr), sr.detach())


def case_word2vec_sgns(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(3)
    corpus = "the quick brown fox jumps over the lazy dog the dog barks at the fox and the fox runs".split()
    vocab = sorted(set(corpus))
    w2i = {w: i for i, w in enumerate(vocab)}
    ids = lib.tensor([w2i[w] for w in corpus])
    counts = lib.bincount(ids, minlength=len(vocab)).float()
    freq = counts / counts.sum()
    noise = freq ** 0.75
    noise = noise / noise.sum()
    # subsampling of frequent words
    t = 1e-2
    p_drop = 1 - lib.sqrt(t / freq)
    keep = lib.rand(len(ids)) > p_drop[ids]
    kept = ids[keep]
    window = 2
    pairs = []
    for i in range(len(kept)):
        for j in range(max(0, i - window), min(len(kept), i + window + 1)):
            if i != j:
                pairs.append((kept[i].item(), kept[j].item()))
    pairs = lib.tensor(pairs)

    class SGNS(nn.Module):
        def __init__(self, V, D):
            super().__init__()
            self.inp = nn.Embedding(V, D)
            self.out = nn.Embedding(V, D)
            self.inp.weight.data.uniform_(-0.5 / D, 0.5 / D)
            self.out.weight.data.zero_()

        def forward(self, c, o, negs):
            v = self.inp(c)                     # B, D
            u = self.out(o)                     # B, D
            un = self.out(negs)                 # B, K, D
            pos = F.logsigmoid((v * u).sum(1))
            neg = F.logsigmoid(-lib.bmm(un, v.unsqueeze(2)).squeeze(2)).sum(1)
            return -(pos + neg).mean()

    model = SGNS(len(vocab), 6)
    opt = lib.optim.SGD(model.parameters(), lr=0.5)
    K, B = 3, 8
    losses = []
    for epoch in range(3):
        perm = lib.randperm(len(pairs))
        for b in range(0, len(pairs) - B + 1, B):
            batch = pairs[perm[b:b + B]]
            negs = lib.multinomial(noise, B * K, replacement=True).view(B, K)
            loss = model(batch[:, 0], batch[:, 1], negs)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    emb = F.normalize(model.inp.weight.detach(), dim=1)
    sims = emb @ emb[w2i["fox"]]
    top = sims.topk(3)
    nomult = lib.multinomial(noise, 5, replacement=False)
    return losses, keep, pairs.shape, emb, top.values, top.indices, nomult, noise


def case_matrix_factorisation_param_groups(lib):
    nn = lib.nn
    lib.manual_seed(5)
    n_users, n_items, k = 7, 9, 4
    users = lib.randint(0, n_users, (40,))
    items = lib.randint(0, n_items, (40,))
    ratings = (lib.rand(40) * 4 + 1).round()

    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.U = nn.Embedding(n_users, k, sparse=False)
            self.V = nn.Embedding(n_items, k)
            self.ub = nn.Embedding(n_users, 1)
            self.ib = nn.Embedding(n_items, 1)
            self.mu = nn.Parameter(lib.tensor(3.0))
            nn.init.normal_(self.U.weight, std=0.1)
            nn.init.normal_(self.V.weight, std=0.1)
            nn.init.zeros_(self.ub.weight)
            nn.init.zeros_(self.ib.weight)

        def forward(self, u, i):
            dot = (self.U(u) * self.V(i)).sum(-1)
            return dot + self.ub(u).squeeze(-1) + self.ib(i).squeeze(-1) + self.mu

    model = MF()
    decay = [p for n, p in model.named_parameters() if n in ("U.weight", "V.weight")]
    no_decay = [p for n, p in model.named_parameters() if n not in ("U.weight", "V.weight")]
    opt = lib.optim.SGD([{"params": decay, "weight_decay": 1e-2}, {"params": no_decay, "lr": 0.05}],
                        lr=0.1, momentum=0.9, nesterov=True)
    opt2 = lib.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2)
    losses = []
    for epoch in range(3):
        for o in (opt, opt2):
            perm = lib.randperm(40)
            for b in range(0, 40, 10):
                idx = perm[b:b + 10]
                pred = model(users[idx], items[idx])
                loss = nn.functional.mse_loss(pred, ratings[idx])
                o.zero_grad(set_to_none=True)
                loss.backward()
                o.step()
                losses.append(loss.item())
    rmse = lib.sqrt(((model(users, items) - ratings) ** 2).mean())
    sd = opt.state_dict()
    full = model.U.weight @ model.V.weight.T + model.ub.weight + model.ib.weight.T + model.mu
    return (losses, rmse, [g["weight_decay"] for g in sd["param_groups"]], [g["lr"] for g in sd["param_groups"]],
            sd["param_groups"][1]["params"], sd["state"][0]["momentum_buffer"], full.detach(),
            model.U.weight.grad, model.mu.grad)


def case_prototypical_network(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(7)
    n_classes, per_class, dim = 6, 8, 5
    centers = lib.randn(n_classes, dim) * 2
    data = centers.repeat_interleave(per_class, 0) + 0.5 * lib.randn(n_classes * per_class, dim)
    labels = lib.arange(n_classes).repeat_interleave(per_class)
    enc = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, 8))
    opt = lib.optim.Adam(enc.parameters(), lr=1e-2)
    n_way, k_shot, n_query = 3, 2, 3
    losses, accs = [], []
    for episode in range(4):
        classes = lib.randperm(n_classes)[:n_way]
        support, query = [], []
        for c in classes:
            idx = (labels == c).nonzero(as_tuple=True)[0]
            idx = idx[lib.randperm(len(idx))]
            support.append(data[idx[:k_shot]])
            query.append(data[idx[k_shot:k_shot + n_query]])
        support = lib.stack(support)              # n_way, k_shot, dim
        query = lib.cat(query)                    # n_way*n_query, dim
        zs = enc(support.view(-1, dim)).view(n_way, k_shot, -1)
        protos = zs.mean(1)
        zq = enc(query)
        dists = lib.cdist(zq, protos) ** 2
        log_p = F.log_softmax(-dists, dim=1)
        target = lib.arange(n_way).repeat_interleave(n_query)
        loss = F.nll_loss(log_p, target)
        acc = (log_p.argmax(1) == target).float().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        accs.append(acc.item())
    d2 = lib.cdist(zq.detach(), protos.detach(), p=2.0, compute_mode="donot_use_mm_for_euclid_dist")
    d1 = lib.cdist(zq.detach(), protos.detach(), p=1)
    return losses, accs, classes, dists.detach(), d2, d1, enc[0].weight.grad


def case_pack_sequence_unsorted_gru(lib):
    nn, rnn = lib.nn, lib.nn.utils.rnn
    lib.manual_seed(23)
    lengths = [3, 5, 2, 4]
    seqs = [lib.randn(L, 3) for L in lengths]
    padded = rnn.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    padded_left = rnn.pad_sequence(seqs, batch_first=True, padding_side="left")
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    gru = nn.GRU(3, 4, batch_first=True, bidirectional=True)
    out, h = gru(packed)
    unpacked, lens = rnn.pad_packed_sequence(out, batch_first=True, total_length=6)
    last = unpacked[lib.arange(4), lens - 1]
    loss = last.pow(2).sum() + h.sum()
    loss.backward()
    packed2 = rnn.pack_padded_sequence(padded, lib.tensor(lengths), batch_first=True, enforce_sorted=False)
    out2, h2 = gru(packed2)
    unp = rnn.unpad_sequence(unpacked, lens, batch_first=True)
    errs = [_err(lambda: rnn.pack_sequence(seqs)),
            _err(lambda: rnn.pad_sequence([lib.zeros(2, 3), lib.zeros(2, 4)]))]
    return (padded, padded_left, packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices,
            unpacked, lens, last, h, gru.weight_ih_l0_reverse.grad, out2.data.equal(out.data) if False else out2.data,
            h2, [u.shape for u in unp], errs)


def case_preprocessing_stats(lib):
    x = lib.tensor([[1.0, float("nan"), 3.0, 7.5], [float("inf"), 2.0, -1.0, float("nan")],
                    [0.5, 0.25, float("-inf"), 4.0]])
    clean = lib.nan_to_num(x, nan=0.0, posinf=100.0, neginf=-100.0)
    clean2 = x.nan_to_num()
    nm = x.nanmean(dim=1)
    nm_all = lib.nanmean(x[:, :2])
    ns = x.nansum(0)
    med = x.nanmedian(dim=1)
    data = lib.tensor([0.1, 2.5, 3.3, 4.0, 7.9, 5.5, 6.1, 1.2, 9.0, 3.3])
    boundaries = lib.tensor([1.0, 3.3, 5.0, 8.0])
    b1 = lib.bucketize(data, boundaries)
    b2 = lib.bucketize(data, boundaries, right=True, out_int32=True)
    s1 = lib.searchsorted(boundaries, data)
    s2 = lib.searchsorted(boundaries, data, side="right")
    unsorted = lib.tensor([5.0, 1.0, 8.0, 3.3])
    sorter = lib.argsort(unsorted)
    s3 = lib.searchsorted(unsorted, data, sorter=sorter)
    s4 = lib.searchsorted(lib.tensor([[1.0, 2.0, 3.0], [0.0, 5.0, 9.0]]), lib.tensor([[2.5, 0.0], [5.0, 10.0]]))
    s5 = lib.searchsorted(boundaries, 3.3)
    h = lib.histc(data, bins=4, min=0, max=10)
    h2 = lib.histc(data, bins=5)
    h3 = lib.histc(lib.tensor([1.0, 1.0, 1.0]), bins=3)
    hist, edges = lib.histogram(data, bins=3)
    hist_w, edges_w = lib.histogram(data, bins=lib.tensor([0.0, 2.0, 5.0, 10.0]), weight=data, density=True)
    qs = lib.tensor([0.1, 0.5, 0.9])
    q = {m: lib.quantile(data, qs, interpolation=m) for m in ("linear", "lower", "higher", "midpoint", "nearest")}
    q2 = lib.quantile(x.nan_to_num(0.0, 10.0, -10.0), 0.25, dim=1, keepdim=True)
    nq = lib.nanquantile(x, qs, dim=1)
    qnan = lib.quantile(x, 0.5, dim=1)
    z = (data - data.mean()) / data.std()
    robust = (data - data.median()) / (lib.quantile(data, 0.75) - lib.quantile(data, 0.25))
    onehot = lib.nn.functional.one_hot(b1, num_classes=5)
    clipped = data.clamp(lib.quantile(data, 0.05).item(), lib.quantile(data, 0.95).item())
    errs = [_err(lambda: lib.quantile(data, 1.5)), _err(lambda: lib.quantile(data.long(), 0.5)),
            _err(lambda: lib.histc(data, bins=3, min=5, max=1)),
            _err(lambda: lib.bucketize(data, lib.tensor([[1.0, 2.0]]))),
            _err(lambda: lib.quantile(data, lib.tensor([[0.5]]))),
            _err(lambda: lib.searchsorted(boundaries, data, side="right", right=False))]
    return (clean, clean2, nm, nm_all, ns, med.values, med.indices, b1, b1.dtype, b2, b2.dtype, s1, s2, s3, s4, s5,
            h, h2, h3, hist, edges, hist_w, edges_w, q, q2, nq, qnan, z, robust, onehot, clipped,
            errs)


def case_prune_then_finetune(lib):
    prune = importlib.import_module(lib.__name__ + '.nn.utils.prune')
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(29)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 10), nn.ReLU(),
                          nn.Linear(10, 3))
    x = lib.randn(6, 1, 6, 6)
    y = lib.tensor([0, 1, 2, 0, 1, 2])
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    prune.l1_unstructured(model[0], name="weight", amount=0.3)
    prune.ln_structured(model[3], name="weight", amount=0.25, n=2, dim=0)
    prune.random_unstructured(model[5], name="bias", amount=1)
    prune.global_unstructured([(model[3], "weight"), (model[5], "weight")], pruning_method=prune.L1Unstructured,
                              amount=0.2)
    sparsity = [float((m.weight == 0).sum()) / m.weight.nelement() for m in (model[0], model[3], model[5])]
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    names = [n for n, _ in model.named_parameters()]
    bufs = [n for n, _ in model.named_buffers()]
    hooks = len(model[3]._forward_pre_hooks)
    grad_orig = model[3].weight_orig.grad
    mask3 = model[3].weight_mask.clone()
    is_pruned = prune.is_pruned(model)
    for m, n in ((model[0], "weight"), (model[3], "weight"), (model[5], "weight"), (model[5], "bias")):
        prune.remove(m, n)
    zeros_after = [(m.weight == 0).sum().item() for m in (model[0], model[3], model[5])]
    return (sparsity, losses, names, bufs, hooks, grad_orig, mask3, is_pruned, prune.is_pruned(model), zeros_after,
            list(model.state_dict().keys()), model[3].weight, model[5].bias)


def case_neural_cellular_automata(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(31)
    C = 6
    ident = lib.tensor([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    sobel_x = lib.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8
    lap = lib.tensor([[1.0, 2.0, 1.0], [2.0, -12, 2.0], [1.0, 2.0, 1.0]]) / 16
    kernel = lib.stack([ident, sobel_x, sobel_x.T, lap])[:, None].repeat(C, 1, 1, 1)   # 4C,1,3,3

    def perceive(x):
        return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="circular"), kernel, groups=C)

    class CA(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Conv2d(4 * C, 32, 1)
            self.w2 = nn.Conv2d(32, C, 1, bias=False)
            with lib.no_grad():
                self.w2.weight.zero_()
                self.w2.weight.add_(0.01)

        def forward(self, x, fire_rate=0.5):
            alive = F.max_pool2d(x[:, 3:4], 3, 1, 1) > 0.1
            dx = self.w2(lib.relu(self.w1(perceive(x))))
            mask = (lib.rand(x[:, :1].shape) <= fire_rate).to(x.dtype)
            x = x + dx * mask
            post = F.max_pool2d(x[:, 3:4], 3, 1, 1) > 0.1
            return x * (alive & post).to(x.dtype)

    ca = CA()
    seed_state = lib.zeros(2, C, 8, 8)
    seed_state[:, 3:, 4, 4] = 1.0
    target = lib.zeros(2, 4, 8, 8)
    target[:, :, 2:6, 2:6] = lib.linspace(0, 1, 16).view(4, 4)
    opt = lib.optim.Adam(ca.parameters(), lr=2e-3)
    losses = []
    for it in range(3):
        x = seed_state.clone()
        steps = int(lib.randint(3, 6, ()).item())
        for _ in range(steps):
            x = ca(x)
        loss = F.mse_loss(x[:, :4], target)
        opt.zero_grad()
        loss.backward()
        for p in ca.parameters():
            p.grad /= p.grad.norm() + 1e-8
        opt.step()
        losses.append(loss.item())
    return losses, x.detach(), ca.w1.weight.grad, perceive(seed_state)


def case_evolution_strategies(lib):
    nn = lib.nn
    from_vec = nn.utils.vector_to_parameters
    to_vec = nn.utils.parameters_to_vector
    lib.manual_seed(43)
    policy = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    X = lib.randn(20, 3)
    Y = lib.stack([X[:, 0] * X[:, 1], X[:, 2].sin()], 1)

    def fitness(vec):
        from_vec(vec, policy.parameters())
        with lib.no_grad():
            return -((policy(X) - Y) ** 2).mean()

    theta = to_vec(policy.parameters()).detach().clone()
    sigma, alpha, pop = 0.1, 0.05, 6
    hist = []
    for gen in range(4):
        eps = lib.randn(pop, theta.numel())
        eps = lib.cat([eps, -eps])
        f = lib.stack([fitness(theta + sigma * e) for e in eps])
        ranks = f.argsort().argsort().float()
        util = ranks / (len(f) - 1) - 0.5
        theta = theta + alpha / (len(f) * sigma) * (util @ eps)
        hist.append(fitness(theta).item())
    from_vec(theta, policy.parameters())
    errs = [_err(lambda: from_vec(theta[:-1], policy.parameters())), _err(lambda: to_vec([theta.double(), theta]))]
    return hist, theta, policy[2].bias, ranks, util, errs


def case_data_pipeline_utilities(lib):
    data = lib.utils.data
    lib.manual_seed(71)

    class Squares(data.Dataset):
        def __init__(self, n, off=0):
            self.n, self.off = n, off

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            if i >= self.n:
                raise IndexError(i)
            return {"x": lib.tensor([float(i + self.off), (i + self.off) ** 2.0]), "id": i + self.off,
                    "name": f"s{i}"}

    class Stream(data.IterableDataset):
        def __iter__(self):
            for i in range(5):
                yield lib.full((2,), float(i)), np.float32(i) * 0.5

    Point = collections.namedtuple("Point", "a b")

    class Points(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return Point(np.array([i, i + 1], dtype=np.float64), lib.tensor(i) * 2)

    cat = data.ConcatDataset([Squares(3), Squares(4, off=10)])
    sub = data.Subset(cat, [6, 0, 4, 2])
    dl = data.DataLoader(cat, batch_size=3, shuffle=True, drop_last=True)
    batches = [(b["x"], b["id"], b["name"]) for b in dl]
    seq = list(data.BatchSampler(data.SequentialSampler(sub), batch_size=3, drop_last=False))
    rnd = list(data.RandomSampler(cat, replacement=True, num_samples=5))
    sub_rnd = list(data.SubsetRandomSampler([1, 3, 5, 7]))
    wr = list(data.WeightedRandomSampler([0.1, 0.5, 2.0, 0.0], 6, replacement=True))
    chained = [(x, y) for x, y in data.DataLoader(data.ChainDataset([Stream(), Stream()]), batch_size=4)]
    pts = next(iter(data.DataLoader(Points(), batch_size=3)))
    g = lib.Generator().manual_seed(5)
    a, b = data.random_split(range(10), [0.3, 0.7], generator=g)
    splits = data.random_split(cat, [3, 2, 2], generator=lib.Generator().manual_seed(1))
    coll = data.default_collate([(1, 2.5, True), (3, 4.5, False)])
    sub_items = [sub[i]["id"] for i in range(len(sub))]
    errs = [_err(lambda: data.random_split(range(10), [3, 3])), _err(lambda: cat[11]),
            _err(lambda: data.DataLoader(cat, batch_size=2, shuffle=True, sampler=data.SequentialSampler(cat)))]
    return (batches, seq, rnd, sub_rnd, wr, chained, type(pts).__name__, pts.a, pts.b, list(a), list(b),
            [list(s.indices) for s in splits], coll, sub_items, len(cat), cat.cumulative_sizes,
            errs, lib.rand(1))


def case_init_zoo(lib):
    nn, init = lib.nn, lib.nn.init
    lib.manual_seed(73)
    conv = nn.Conv2d(3, 3, 3)
    lin = nn.Linear(6, 4)
    lin2 = nn.Linear(6, 8)
    res = {}
    init.orthogonal_(lin.weight, gain=init.calculate_gain("relu"))
    res["orth"] = lin.weight.detach().clone()
    res["orth_check"] = (lin.weight @ lin.weight.T).detach()
    init.dirac_(conv.weight)
    res["dirac"] = conv.weight.detach().clone()
    x = lib.randn(1, 3, 5, 5)
    res["dirac_identity"] = (conv(x) - conv.bias.view(1, 3, 1, 1)).detach()
    init.sparse_(lin2.weight, sparsity=0.5, std=0.02)
    res["sparse"] = lin2.weight.detach().clone()
    init.eye_(lin.weight)
    res["eye"] = lin.weight.detach().clone()
    init.kaiming_uniform_(conv.weight, a=0.2, mode="fan_out", nonlinearity="leaky_relu")
    res["kaiming"] = conv.weight.detach().clone()
    init.xavier_normal_(lin2.weight, gain=init.calculate_gain("leaky_relu", 0.2))
    res["xavier"] = lin2.weight.detach().clone()
    init.trunc_normal_(lin2.weight, mean=0.1, std=0.5, a=-0.3, b=0.6)
    res["trunc"] = lin2.weight.detach().clone()
    init.constant_(lin2.bias, 0.3)
    init.uniform_(lin.bias, -0.1, 0.1)
    res["gains"] = [init.calculate_gain(n) for n in ("tanh", "selu", "conv2d", "sigmoid", "linear")]
    res["errs"] = [e for e in (
        _err(lambda: init.dirac_(lin.weight)), _err(lambda: init.orthogonal_(lin.bias)),
        _err(lambda: init.calculate_gain("leaky_relu", "x")), _err(lambda: init.calculate_gain("swish")),
        _err(lambda: init.sparse_(conv.weight, 0.1)), _err(lambda: init.kaiming_normal_(lin.weight, mode="fan")))]
    w = lib.empty(5, 7)
    init.orthogonal_(w)
    res["orth_wide"] = w
    return res, lin.bias, lin2.bias


def case_knn_vote_ties(lib):
    lib.manual_seed(101)
    train = lib.randint(0, 4, (30, 2)).float()
    labels = lib.randint(0, 3, (30,))
    test = lib.randint(0, 4, (7, 2)).float()
    d = lib.cdist(test, train, p=1)
    vals, idx = d.topk(5, largest=False)
    vals2, idx2 = d.topk(5, largest=True, sorted=True)
    votes = labels[idx]
    pred, cnt = lib.mode(votes, dim=1)
    md = lib.median(votes, dim=1)
    kv = lib.kthvalue(d, 3, dim=1)
    s = lib.sort(d, dim=1, stable=True)
    s2 = lib.sort(d, dim=1, descending=True, stable=True)
    am = d.argmin(1)
    amx = d.argmax(1)
    oh = lib.zeros(7, 3).scatter_add_(1, votes, lib.ones(7, 5))
    weighted = lib.zeros(7, 3).scatter_add_(1, votes, 1 / (vals + 1))
    u, inv, c = lib.unique(train, dim=0, return_inverse=True, return_counts=True)
    uc = lib.unique_consecutive(labels.sort().values, return_counts=True)
    mx = votes.max(dim=1)
    mn = votes.min(dim=1)
    cm = lib.cummax(votes, 1)
    return (vals, idx, vals2, idx2, pred, cnt, md.values, md.indices, kv.values, kv.indices, s.indices, s2.indices,
            am, amx, oh.argmax(1), weighted, u, inv, c, uc, mx.indices, mn.indices, cm.indices,
            lib.argsort(d[0], stable=True))


test_script_matches_torch = script_test(globals())
