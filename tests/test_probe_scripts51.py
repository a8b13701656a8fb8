"""Third-party programs, round 51: the training steps of rounds 45-50's domains compiled by ``torchish.compile``
(``torch.compile`` in the PyTorch program; ``assert_script_matches`` hands the oracle the identity): a PGD attack
with ``autograd.grad`` and an adversarial step, a second-order MAML meta-step, a DQN update with a soft target
update, a SAC actor step with ``rsample``, a small U-Net-style segmentation step and an LSTM forecaster, each
called a few times so the compiled program runs after its recording call, compared with torch 2.13's eager results.
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_jit_pgd_step(lib, jit):
    """An adversarial-training loop with both halves compiled by ``jit`` (``torch.compile`` in the PyTorch
    program, the identity for the oracle): a PGD attack from ``zeros_like(x).uniform_(-eps, eps)`` (the RNG
    draw inside the compiled function) with ``requires_grad_`` and ``torch.autograd.grad`` in a Python loop, then
    an SGD-momentum step on the adversarial batch; 3 rounds with new inputs."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(20)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    eps, alpha = 0.1, 0.03
    @jit
    def attack(x, y):
        d = torch.zeros_like(x).uniform_(-eps, eps)
        for _ in range(2):
            d.requires_grad_(True)
            loss = F.cross_entropy(model(x + d), y)
            g, = torch.autograd.grad(loss, d)
            d = (d.detach() + alpha * g.sign()).clamp(-eps, eps)
        return (x + d).detach()
    @jit
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        return loss.detach()
    out = []
    for i in range(3):
        x = torch.randn(4, 6); y = torch.randint(0, 3, (4,))
        xa = attack(x, y)
        out += [xa, step(xa, y)]
    return out, model[0].weight


def case_jit_maml(lib, jit):
    """A compiled MAML meta-step: ``functional_call`` on ``dict(model.named_parameters())``, an inner gradient
    with ``create_graph=True``, the fast weights ``p - 0.1 * g`` and the query loss's second-order backward into
    Adam, all in one ``jit``-ed function called 3 times."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(21)
    model = nn.Sequential(nn.Linear(1, 5), nn.Tanh(), nn.Linear(5, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    @jit
    def meta_step(xs, ys, xq, yq):
        params = dict(model.named_parameters())
        loss = F.mse_loss(torch.func.functional_call(model, params, (xs,)), ys)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        fast = {k: p - 0.1 * g for (k, p), g in zip(params.items(), grads)}
        q = F.mse_loss(torch.func.functional_call(model, fast, (xq,)), yq)
        opt.zero_grad(); q.backward(); opt.step()
        return q.detach()
    out = []
    for _ in range(3):
        xs, xq = torch.randn(4, 1), torch.randn(4, 1)
        out.append(meta_step(xs, torch.sin(xs), xq, torch.sin(xq)))
    return out, model[0].weight, model[2].bias.grad


def case_jit_dqn(lib, jit):
    """A compiled DQN update: ``gather`` of the taken actions, a target from ``tgt(s2).max(1).values`` under
    ``no_grad``, ``smooth_l1_loss``, ``clip_grad_value_``, Adam and a soft target update by ``lerp_`` in
    ``no_grad``, called 3 times with fresh batches."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(22)
    pol = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2))
    tgt = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2))
    tgt.load_state_dict(pol.state_dict())
    opt = torch.optim.Adam(pol.parameters(), lr=1e-2)
    @jit
    def step(s, a, r, s2, d):
        q = pol(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            t = r + 0.9 * tgt(s2).max(1).values * (1 - d)
        loss = F.smooth_l1_loss(q, t)
        opt.zero_grad(); loss.backward()
        nn.utils.clip_grad_value_(pol.parameters(), 0.5)
        opt.step()
        with torch.no_grad():
            for p, pt in zip(pol.parameters(), tgt.parameters()):
                pt.lerp_(p, 0.1)
        return loss.detach()
    out = []
    for _ in range(3):
        batch = (torch.randn(5, 3), torch.randint(0, 2, (5,)), torch.rand(5), torch.randn(5, 3),
                 (torch.rand(5) > 0.7).float())
        out.append(step(*batch))
    return out, tgt[0].weight, pol[2].weight.grad


def case_jit_sac(lib, jit):
    """A compiled SAC actor step: ``Normal(mu, ls.clamp(-5, 2).exp()).rsample()`` inside the compiled function,
    ``tanh`` squashing with the ``log(1 - a ** 2 + 1e-6)`` correction, Adam; 3 calls."""
    torch, nn = lib, lib.nn
    D = torch.distributions
    torch.manual_seed(23)
    actor = nn.Linear(3, 4)
    opt = torch.optim.Adam(actor.parameters(), lr=1e-2)
    @jit
    def step(s):
        mu, ls = actor(s).chunk(2, -1)
        d = D.Normal(mu, ls.clamp(-5, 2).exp())
        u = d.rsample()
        a = torch.tanh(u)
        lp = d.log_prob(u).sum(-1) - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        loss = (0.2 * lp - a.sum(-1)).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        return loss.detach(), a.detach()
    return [step(torch.randn(4, 3)) for _ in range(3)], actor.weight


def case_jit_unet_dice(lib, jit):
    """A compiled segmentation step: conv, ``max_pool2d``, ``ConvTranspose2d`` and bilinear ``interpolate`` paths
    added, ``torch.cat`` skip, soft dice plus cross-entropy on ``y.long()``, AdamW; 3 calls."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(24)
    enc = nn.Conv2d(1, 4, 3, padding=1)
    up = nn.ConvTranspose2d(4, 4, 2, stride=2)
    head = nn.Conv2d(8, 2, 1)
    params = [*enc.parameters(), *up.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-2)
    @jit
    def step(x, y):
        s = F.relu(enc(x))
        d = F.max_pool2d(s, 2)
        u = up(d)
        u2 = F.interpolate(d, scale_factor=2, mode="bilinear", align_corners=False)
        logits = head(torch.cat([s, u + u2], 1))
        p = logits.softmax(1)[:, 1]
        dice = 1 - (2 * (p * y).sum() + 1) / (p.sum() + y.sum() + 1)
        loss = dice + F.cross_entropy(logits, y.long())
        opt.zero_grad(); loss.backward(); opt.step()
        return loss.detach()
    x = torch.randn(2, 1, 6, 6); y = (torch.rand(2, 6, 6) > 0.5).float()
    return [step(x, y) for _ in range(3)], up.weight


def case_jit_lstm_forecast(lib, jit):
    """A compiled forecaster step on ``series.unfold(0, 6, 2)`` windows: ``nn.LSTM(batch_first=True)``, the last
    step's output through a Linear, MSE, ``clip_grad_value_`` and Adam; 3 calls."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(25)
    lstm = nn.LSTM(1, 4, batch_first=True); lin = nn.Linear(4, 1)
    opt = torch.optim.Adam([*lstm.parameters(), *lin.parameters()], lr=1e-2)
    series = torch.sin(torch.arange(30.0) * 0.4)
    w = series.unfold(0, 6, 2)
    @jit
    def step(x, y):
        o, _ = lstm(x.unsqueeze(-1))
        loss = F.mse_loss(lin(o[:, -1]).squeeze(-1), y)
        opt.zero_grad(); loss.backward()
        nn.utils.clip_grad_value_([*lstm.parameters(), *lin.parameters()], 0.1)
        opt.step()
        return loss.detach()
    return [step(w[:, :5], w[:, 5]) for _ in range(3)], lin.weight


test_script_matches_torch = script_test(globals())
