"""Third-party programs, round 53: structured prediction in the style of popular repositories (a batched
BiLSTM-CRF tagger as pytorch-crf and NER repositories write it, sparsemax/entmax as the entmax package writes them,
custom autograd Functions), seeded by ``torch.manual_seed``, run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py). Knowledge-graph embeddings and a mixture density network are in
test_probe_scripts56.py.
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_batched_bilstm_crf_ner(lib):
    """pytorch-crf style batched CRF over BiLSTM emissions: the mask from lengths by ``arange < lengths``,
    the forward algorithm by ``logsumexp`` over a broadcast sum with ``where(mask)`` carrying finished sequences,
    the gold score by ``gather`` of emissions and transition indexing, Viterbi by ``max(dim)`` with its indices and a
    Python backtrace over ``.tolist()``; Adam."""
    torch, nn = lib, lib.nn
    torch.manual_seed(53)
    V, E, H, K = 12, 4, 4, 4

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, E, padding_idx=0)
            self.lstm = nn.LSTM(E, H, batch_first=True, bidirectional=True)
            self.proj = nn.Linear(2 * H, K)
            self.start = nn.Parameter(torch.empty(K).uniform_(-0.1, 0.1))
            self.end = nn.Parameter(torch.empty(K).uniform_(-0.1, 0.1))
            self.trans = nn.Parameter(torch.empty(K, K).uniform_(-0.1, 0.1))

        def emissions(self, tokens, lengths):
            out, _ = self.lstm(self.emb(tokens))
            return self.proj(out * (tokens != 0).unsqueeze(-1))

        def log_partition(self, em, mask):
            score = self.start + em[:, 0]
            for i in range(1, em.size(1)):
                nxt = torch.logsumexp(score.unsqueeze(2) + self.trans + em[:, i].unsqueeze(1), dim=1)
                score = torch.where(mask[:, i].unsqueeze(1), nxt, score)
            return torch.logsumexp(score + self.end, dim=1)

        def gold(self, em, tags, mask):
            B, T = tags.shape
            m = mask.float()
            s = self.start[tags[:, 0]] + em[:, 0].gather(1, tags[:, :1]).squeeze(1)
            s = s + (em[:, 1:].gather(2, tags[:, 1:, None]).squeeze(2) * m[:, 1:]).sum(1)
            s = s + (self.trans[tags[:, :-1], tags[:, 1:]] * m[:, 1:]).sum(1)
            last = tags[torch.arange(B), mask.long().sum(1) - 1]
            return s + self.end[last]

        def decode(self, em, mask):
            score, history = self.start + em[:, 0], []
            for i in range(1, em.size(1)):
                best, idx = (score.unsqueeze(2) + self.trans).max(dim=1)
                history.append(idx)
                score = torch.where(mask[:, i].unsqueeze(1), best + em[:, i], score)
            score = score + self.end
            lengths = mask.sum(1).tolist()
            paths = []
            for b in range(em.size(0)):
                best_last = score[b].argmax().item()
                path = [best_last]
                for hist in reversed(history[:lengths[b] - 1]):
                    best_last = hist[b][path[-1]].item()
                    path.append(best_last)
                paths.append(path[::-1])
            return paths

    model = Tagger()
    lengths = torch.tensor([5, 3, 4])
    T = int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]
    tokens = torch.randint(1, V, (3, T)).masked_fill(~mask, 0)
    tags = torch.randint(0, K, (3, T)) * mask
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(2):
        em = model.emissions(tokens, lengths)
        nll = (model.log_partition(em, mask) - model.gold(em, tags, mask)).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
        losses.append(nll.item())
    with torch.no_grad():
        em = model.emissions(tokens, lengths)
        paths = model.decode(em, mask)
    return losses, paths, em, model.trans, model.start.grad, model.emb.weight.grad


def case_sparsemax_entmax_functions(lib):
    """Sparsemax and 1.5-entmax (bisection-free sorting form) as ``torch.autograd.Function`` subclasses as the entmax
    package writes them: ``sort(descending=True)``, ``cumsum``, a support size by ``(... > cumsum).sum(dim,
    keepdim=True)``, ``gather`` of the threshold, ``ctx.save_for_backward`` and backward from the support; used as
    sparsemax as an attention normaliser in a small classifier trained two steps, entmax's backward through its
    Function (gradients compared with torch's)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    class Sparsemax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z, dim=-1):
            ctx.dim = dim
            zs, _ = torch.sort(z, dim=dim, descending=True)
            k = torch.arange(1, z.size(dim) + 1, dtype=z.dtype).view(-1, *([1] * (z.dim() - 1))).transpose(0, dim)
            cs = zs.cumsum(dim) - 1
            support = (k * zs > cs).sum(dim=dim, keepdim=True)
            tau = cs.gather(dim, support - 1) / support.to(z.dtype)
            out = torch.clamp(z - tau, min=0)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            nz = (out > 0).to(g.dtype)
            v = (g * nz).sum(ctx.dim, keepdim=True) / nz.sum(ctx.dim, keepdim=True)
            return nz * (g - v), None

    class Entmax15(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, dim=-1):
            ctx.dim = dim
            x = (x - x.max(dim=dim, keepdim=True).values) / 2
            xs, _ = torch.sort(x, dim=dim, descending=True)
            rho = torch.arange(1, x.size(dim) + 1, dtype=x.dtype)
            mean = xs.cumsum(dim) / rho
            mean_sq = (xs ** 2).cumsum(dim) / rho
            ss = rho * (mean_sq - mean ** 2)
            delta = (1 - ss) / rho
            tau = mean - torch.sqrt(torch.clamp(delta, min=0))
            support = (tau <= xs).sum(dim=dim, keepdim=True)
            tau_star = tau.gather(dim, support - 1)
            y = torch.clamp(x - tau_star, min=0) ** 2
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            y, = ctx.saved_tensors
            gppr = y.sqrt()
            dx = dy * gppr
            q = dx.sum(ctx.dim, keepdim=True) / gppr.sum(ctx.dim, keepdim=True)
            return dx - q * gppr, None

    torch.manual_seed(56)
    z = torch.randn(2, 6) * 2
    probs = Sparsemax.apply(z, -1)
    ent = Entmax15.apply(z, -1)

    class AttnPool(nn.Module):
        def __init__(self, norm):
            super().__init__()
            self.norm = norm
            self.score = nn.Linear(4, 1)
            self.out = nn.Linear(4, 2)

        def forward(self, h):
            a = self.norm(self.score(h).squeeze(-1) * 3, 1)
            return self.out((a.unsqueeze(-1) * h).sum(1)), a

    model = AttnPool(Sparsemax.apply)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    h = torch.randn(2, 6, 4)
    y = torch.tensor([0, 1])
    for _ in range(2):
        logits, a = model(h)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(); loss.backward(); opt.step()
    zz = z.clone().requires_grad_()
    (Entmax15.apply(zz, -1) * torch.arange(6.0)).sum().backward()
    return (probs, probs.sum(-1), ent, ent.sum(-1), zz.grad, loss.item(), a, (a == 0).sum().item(),
            model.score.weight.grad, a.grad_fn.name())


test_script_matches_torch = script_test(globals())
