"""Third-party programs, round 48: tabular and recommender code in the style of popular repositories (fastai-style
categorical embeddings + BatchNorm1d, ``BCEWithLogitsLoss(pos_weight=...)``, ``nn.EmbeddingBag`` with offsets and
per-sample weights, matrix factorisation on ``sparse=True`` embeddings with ``SparseAdam``, sparse gradients
accumulated over two backwards and stepped by Adagrad/SGD), seeded by ``torch.manual_seed`` with default
initialisation, run with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import warnings

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_tabular_embeddings_batchnorm_bce_pos_weight(lib):
    """A fastai-style tabular model: one ``nn.Embedding`` per categorical column in an ``nn.ModuleList`` with
    sizes ``min(50, (n + 1) // 2)``, ``torch.cat`` of the embeddings with ``BatchNorm1d``-normalised continuous
    columns, ``nn.Dropout``, Linear/ReLU/BatchNorm1d layers, ``BCEWithLogitsLoss(pos_weight=torch.tensor([3.]))``
    on an imbalanced target, Adam for 3 steps, then eval-mode ``torch.sigmoid`` scores and an accuracy by
    ``(probs > 0.5).float().eq(y).float().mean()``; a multi-label head with per-column ``pos_weight`` computed
    from the label counts, ``weight=`` and ``reduction="none"``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(7)
    cards = [4, 7, 3]

    class TabularModel(nn.Module):
        def __init__(self, cards, n_cont, hidden=(8, 6)):
            super().__init__()
            szs = [(c, min(50, (c + 1) // 2)) for c in cards]
            self.embeds = nn.ModuleList([nn.Embedding(c, s) for c, s in szs])
            self.emb_drop = nn.Dropout(0.1)
            self.bn_cont = nn.BatchNorm1d(n_cont)
            n_in = sum(s for _, s in szs) + n_cont
            layers = []
            for h in hidden:
                layers += [nn.Linear(n_in, h), nn.ReLU(inplace=True), nn.BatchNorm1d(h)]
                n_in = h
            layers.append(nn.Linear(n_in, 1))
            self.layers = nn.Sequential(*layers)

        def forward(self, x_cat, x_cont):
            x = torch.cat([e(x_cat[:, i]) for i, e in enumerate(self.embeds)], 1)
            x = self.emb_drop(x)
            x = torch.cat([x, self.bn_cont(x_cont)], 1)
            return self.layers(x).squeeze(-1)

    x_cat = torch.stack([torch.randint(0, c, (10,)) for c in cards], dim=1)
    x_cont = torch.randn(10, 2) * torch.tensor([1.0, 10.0]) + torch.tensor([0.0, 5.0])
    y = (torch.rand(10) < 0.25).float()
    model = TabularModel(cards, 2)
    crit = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        model.train()
        loss = crit(model(x_cat, x_cont), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        probs = torch.sigmoid(model(x_cat, x_cont))
    acc = (probs > 0.5).float().eq(y).float().mean()

    logits = torch.randn(4, 3, requires_grad=True)
    ym = (torch.rand(4, 3) > 0.6).float()
    pw = (ym.shape[0] - ym.sum(0)) / ym.sum(0).clamp(min=1)
    l1 = nn.BCEWithLogitsLoss(pos_weight=pw, weight=torch.tensor([1.0, 2.0, 0.5]))(logits, ym)
    l2 = F.binary_cross_entropy(torch.sigmoid(logits), ym, weight=torch.rand(4, 1))
    l3 = F.multilabel_soft_margin_loss(logits, ym)
    l4 = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]), reduction="none")(logits[:, 0], ym[:, 0])
    (l1 + l2 + l3 + l4.sum()).backward()
    return (losses, probs, acc, model.embeds[1].weight.grad, model.bn_cont.running_var,
            model.bn_cont.num_batches_tracked, l1, l2, l3, l4, logits.grad)


def case_embedding_bag_offsets_and_sparse_adam_mf(lib):
    """Recommender pieces: a bag-of-items user tower from ``nn.EmbeddingBag(mode="mean")`` on flattened item ids
    with ``offsets`` (one empty bag included) and with ``per_sample_weights`` in ``mode="sum"``, ``mode="max"`` with
    a ``padding_idx`` and ``include_last_offset=True``; then matrix factorisation with ``nn.Embedding(...,
    sparse=True)`` user/item factors and biases, prediction ``(u * i).sum(1) + bu + bi + mu``, MSE on observed
    ratings, ``torch.optim.SparseAdam`` on the sparse factors and plain SGD on the global bias, 3 steps; the sparse
    gradient checked by ``is_sparse`` and ``to_dense()``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(8)
    bag = nn.EmbeddingBag(10, 4, mode="mean")
    items = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 3, 6])
    u_vec = bag(items, offsets)
    bag_sum = nn.EmbeddingBag.from_pretrained(bag.weight.detach().clone(), mode="sum", freeze=False)
    w = torch.rand(8)
    u_sum = bag_sum(items, offsets, per_sample_weights=w)
    bag_max = nn.EmbeddingBag(10, 4, mode="max", padding_idx=0, include_last_offset=True)
    u_max = bag_max(torch.tensor([0, 2, 3, 1, 0, 7, 7]), torch.tensor([0, 2, 5, 7]))
    (u_vec.sum() + u_sum.pow(2).sum() + u_max.sum()).backward()
    fn_max = F.embedding_bag(items.view(2, 4), bag.weight, mode="max")

    class MF(nn.Module):
        def __init__(self, n_users, n_items, k=3):
            super().__init__()
            self.u = nn.Embedding(n_users, k, sparse=True)
            self.i = nn.Embedding(n_items, k, sparse=True)
            self.bu = nn.Embedding(n_users, 1, sparse=True)
            self.bi = nn.Embedding(n_items, 1, sparse=True)
            nn.init.normal_(self.u.weight, std=0.1)
            nn.init.normal_(self.i.weight, std=0.1)
            nn.init.zeros_(self.bu.weight)
            nn.init.zeros_(self.bi.weight)
            self.mu = nn.Parameter(torch.tensor(3.0))

        def forward(self, users, items):
            dot = (self.u(users) * self.i(items)).sum(1)
            return dot + self.bu(users).squeeze(1) + self.bi(items).squeeze(1) + self.mu

    mf = MF(5, 6)
    users = torch.tensor([0, 1, 1, 2, 3, 4, 0])
    its = torch.tensor([1, 2, 5, 0, 2, 3, 1])
    r = torch.tensor([4.0, 3.0, 5.0, 1.0, 2.0, 4.5, 3.5])
    sparse_params = [p for n, p in mf.named_parameters() if n != "mu"]
    opt_s = torch.optim.SparseAdam(sparse_params, lr=0.05)
    opt_d = torch.optim.SGD([mf.mu], lr=0.1)
    losses = []
    for _ in range(3):
        loss = F.mse_loss(mf(users, its), r)
        opt_s.zero_grad()
        opt_d.zero_grad()
        loss.backward()
        opt_s.step()
        opt_d.step()
        losses.append(loss.item())
    g = mf.u.weight.grad
    return (u_vec, u_sum, u_max, bag.weight.grad, bag_sum.weight.grad, bag_max.weight.grad, fn_max, losses,
            g.is_sparse, g.to_dense(), mf.u.weight, mf.bi.weight, mf.mu, opt_s.state[mf.u.weight]["exp_avg"])


def case_sparse_gradients_accumulated_adagrad_sgd(lib):
    """Sparse embedding gradients as recommender code meets them: two backwards accumulated into one uncoalesced
    gradient (``is_coalesced()``, ``_nnz()``, ``coalesce().indices()/values()``), ``padding_idx`` and
    ``max_norm`` (the lookup renormalises rows in place) with ``sparse=True``, then Adagrad (``lr_decay``,
    ``initial_accumulator_value``: its state stays dense), SGD with and without momentum and SparseAdam stepping
    embeddings whose batches repeat and skip rows."""
    torch, nn = lib, lib.nn
    torch.manual_seed(15)
    e = nn.Embedding(6, 2, sparse=True)
    e(torch.tensor([1, 1, 3])).sum().backward()
    e(torch.tensor([0, 3])).pow(2).sum().backward()
    g = e.weight.grad
    gc = g.coalesce()
    e2 = nn.Embedding(6, 2, sparse=True, padding_idx=1)
    e2(torch.tensor([1, 2, 2])).sum().backward()
    e3 = nn.Embedding(6, 2, sparse=True, max_norm=0.5)
    e3(torch.tensor([4, 4, 5])).sum().backward()
    opt = torch.optim.Adagrad(e.parameters(), lr=0.5, lr_decay=0.1, initial_accumulator_value=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's Adagrad warns about sparse invariant checks)
        opt.step()
        opt.step()
    res = [g.is_coalesced(), g._nnz(), gc.indices(), gc.values(), e2.weight.grad.to_dense(), e3.weight,
           e3.weight.grad.to_dense(), e.weight, opt.state[e.weight]["sum"].is_sparse, opt.state[e.weight]["sum"]]
    for opt_cls, kw in ((torch.optim.SGD, dict(lr=0.1)), (torch.optim.SparseAdam, dict(lr=0.1, betas=(0.8, 0.9))),
                        (torch.optim.SGD, dict(lr=0.1, momentum=0.9))):
        emb = nn.Embedding(6, 3, sparse=True)
        o = opt_cls(emb.parameters(), **kw)
        for step in range(3):
            idx = torch.tensor([[0, 2, 2], [5, 0, 1]]) if step % 2 == 0 else torch.tensor([[3, 3, 4]])
            loss = emb(idx).pow(2).sum()
            o.zero_grad()
            loss.backward()
            o.step()
        res += [emb.weight, emb.weight.grad.coalesce().indices(), emb.weight.grad._nnz()]
    return res


test_script_matches_torch = script_test(globals())
