"""Third-party programs, round 56 (helper 164): TransE knowledge-graph embeddings as OpenKE/PyKEEN-style scripts
write them and a mixture density network on ``torch.distributions``, seeded by ``torch.manual_seed``, run with
torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_kg_embeddings_transe(lib):
    """Knowledge-graph embedding scripts: TransE with ``margin_ranking_loss`` on corrupted heads or tails drawn by
    ``torch.randint``/``torch.rand`` and entity embeddings renormalised under ``no_grad`` through
    ``weight.data.copy_(F.normalize(..., p=2, dim=1))``, Adagrad; filtered ranks by ``argsort`` of distances to all
    entities and the MRR."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(54)
    n_ent, n_rel, d, B = 7, 3, 4, 5
    triples = torch.stack([torch.randint(0, n_ent, (B,)), torch.randint(0, n_rel, (B,)),
                           torch.randint(0, n_ent, (B,))], dim=1)

    def corrupt(tr):
        neg = tr.clone()
        heads = torch.rand(tr.size(0)) < 0.5
        rnd = torch.randint(0, n_ent, (tr.size(0),))
        neg[heads, 0] = rnd[heads]
        neg[~heads, 2] = rnd[~heads]
        return neg

    ent, rel = nn.Embedding(n_ent, d), nn.Embedding(n_rel, d)
    bound = 6 / math.sqrt(d)
    nn.init.uniform_(ent.weight, -bound, bound)
    nn.init.uniform_(rel.weight, -bound, bound)
    with torch.no_grad():
        rel.weight.data.copy_(F.normalize(rel.weight.data, p=2, dim=1))
    opt = torch.optim.Adagrad(list(ent.parameters()) + list(rel.parameters()), lr=0.1)
    transe = []
    for _ in range(2):
        with torch.no_grad():
            ent.weight.data.copy_(F.normalize(ent.weight.data, p=2, dim=1))
        neg = corrupt(triples)
        def dist(t):
            return (ent(t[:, 0]) + rel(t[:, 1]) - ent(t[:, 2])).norm(p=1, dim=1)
        pos_d, neg_d = dist(triples), dist(neg)
        loss = F.margin_ranking_loss(pos_d, neg_d, target=-torch.ones_like(pos_d), margin=1.0)
        opt.zero_grad(); loss.backward(); opt.step()
        transe.append(loss.item())
    with torch.no_grad():
        h, r = ent(triples[:, 0]), rel(triples[:, 1])
        all_d = (h[:, None, :] + r[:, None, :] - ent.weight[None]).norm(p=1, dim=2)
        ranks = (all_d.argsort(dim=1) == triples[:, 2:3]).nonzero()[:, 1] + 1
    mrr = (1.0 / ranks.float()).mean()

    return transe, ranks, mrr, ent.weight, rel.weight.grad


def case_mixture_density_network(lib):
    """A mixture density network: a trunk and one head ``split`` into mixture logits, means and log-scales, the
    ``MixtureSameFamily(Categorical(logits=...), Independent(Normal(mu, sigma), 1))``, its ``log_prob`` as the loss
    for two Adam steps, then its ``mean``, ``variance``, ``batch_shape``/``event_shape`` and a seeded
    ``sample((3,))`` (and the random stream after it)."""
    torch, nn, D = lib, lib.nn, lib.distributions
    torch.manual_seed(55)
    M, dy = 3, 2

    class MDN(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(1, 8), nn.Tanh())
            self.head = nn.Linear(8, M + 2 * M * dy)

        def forward(self, x):
            logits, mu, log_sigma = self.head(self.trunk(x)).split([M, M * dy, M * dy], dim=-1)
            mu = mu.view(-1, M, dy)
            sigma = log_sigma.reshape(-1, M, dy).clamp(-5, 3).exp()
            mix = D.Categorical(logits=logits)
            comp = D.Independent(D.Normal(mu, sigma), 1)
            return D.MixtureSameFamily(mix, comp)

    net = MDN()
    x = torch.linspace(-1, 1, 6).unsqueeze(1)
    y = torch.cat([torch.sin(3 * x), torch.cos(2 * x)], dim=1) + 0.1 * torch.randn(6, dy)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    losses = []
    for _ in range(2):
        dist = net(x)
        loss = -dist.log_prob(y).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        dist = net(x)
        samples = dist.sample((3,))
    return (losses, net.head.weight.grad, net.head.bias, dist.mean, dist.variance, tuple(dist.batch_shape),
            tuple(dist.event_shape), samples, torch.rand(2))


test_script_matches_torch = script_test(globals())
