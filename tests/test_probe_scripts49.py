"""Third-party programs, round 49: reinforcement-learning code in the style of popular repositories (a DQN with a
replay buffer and target network, SAC's tanh-squashed Gaussian policy with a learned temperature, an A2C-style
``Categorical`` entropy bonus, GAE and discounted returns, prioritized-replay weights, and the distributions RL code
leans on), seeded by ``torch.manual_seed`` with default initialisation, run with torch 2.13 and torchish and
compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math
import random
from collections import deque

import numpy as np
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_dqn_replay_target_net_smooth_l1(lib):
    """A DQN in the style of the classic tutorials on a numpy toy environment: a ``deque`` replay buffer of
    tensors sampled by Python's ``random.sample`` (seeded), ``torch.stack``/``torch.cat`` batches,
    ``q.gather(1, a.unsqueeze(1)).squeeze(1)``, the target ``max(1)[0]`` under ``torch.no_grad()`` masked by
    ``(1 - done)``, ``F.smooth_l1_loss``, RMSprop with ``clip_grad_norm_``, epsilon-greedy ``argmax().item()``,
    and the target network synced every 3 updates by ``load_state_dict(policy.state_dict())``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(9)
    rng = random.Random(0)
    nrng = np.random.default_rng(0)

    def make():
        return nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))

    policy, target = make(), make()
    target.load_state_dict(policy.state_dict())
    target.eval()
    opt = torch.optim.RMSprop(policy.parameters(), lr=1e-2)
    memory = deque(maxlen=20)
    state = torch.tensor(nrng.standard_normal(3), dtype=torch.float32)
    losses, actions = [], []
    for step in range(14):
        if rng.random() < 0.3:
            action = rng.randrange(2)
        else:
            with torch.no_grad():
                action = policy(state.unsqueeze(0)).argmax(1).item()
        actions.append(action)
        nxt = torch.tensor(nrng.standard_normal(3), dtype=torch.float32)
        reward = float(state[action] > 0)
        done = step % 5 == 4
        memory.append((state, torch.tensor([action]), torch.tensor([reward]), nxt, torch.tensor([float(done)])))
        state = nxt
        if len(memory) < 6:
            continue
        batch = rng.sample(list(memory), 4)
        s, a, r, s2, d = zip(*batch)
        s, s2 = torch.stack(s), torch.stack(s2)
        a, r, d = torch.cat(a), torch.cat(r), torch.cat(d)
        q = policy(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            q_next = target(s2).max(1)[0]
            tgt = r + 0.99 * q_next * (1 - d)
        loss = F.smooth_l1_loss(q, tgt)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 3 == 0:
            target.load_state_dict(policy.state_dict())
    return losses, actions, policy[0].weight, target[2].bias, opt.state[policy[2].weight]["square_avg"]


def case_sac_tanh_normal_and_categorical_entropy(lib):
    """SAC's actor: ``Normal(mu, log_std.clamp(-20, 2).exp()).rsample()``, ``tanh`` squashing with the
    log-prob correction ``log_prob(u).sum(-1) - (2 * (log(2) - u - F.softplus(-2 * u))).sum(-1)``, twin Q critics
    on ``torch.cat([s, a], -1)`` with ``torch.min``, a learned temperature ``log_alpha`` and its loss,
    polyak averaging with ``mul_(tau).add_((1 - tau) * p)`` in ``torch.no_grad()``; then an A2C-style loss with
    ``Categorical(logits=...)``: ``sample``, ``log_prob``, ``entropy().mean()`` bonus and ``probs``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    D = torch.distributions
    torch.manual_seed(10)
    actor = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
    q1, q2 = (nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)) for _ in range(2))
    q1_t = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    q1_t.load_state_dict(q1.state_dict())
    log_alpha = torch.zeros(1, requires_grad=True)
    a_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
    al_opt = torch.optim.Adam([log_alpha], lr=3e-3)
    s = torch.randn(6, 3)
    out = []
    for _ in range(2):
        mu, log_std = actor(s).chunk(2, dim=-1)
        std = log_std.clamp(-20, 2).exp()
        dist = D.Normal(mu, std)
        u = dist.rsample()
        a = torch.tanh(u)
        logp = dist.log_prob(u).sum(-1) - (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)
        sa = torch.cat([s, a], -1)
        q = torch.min(q1(sa), q2(sa)).squeeze(-1)
        alpha = log_alpha.exp().detach()
        actor_loss = (alpha * logp - q).mean()
        a_opt.zero_grad()
        actor_loss.backward()
        a_opt.step()
        alpha_loss = -(log_alpha * (logp.detach() - 2.0)).mean()
        al_opt.zero_grad()
        alpha_loss.backward()
        al_opt.step()
        with torch.no_grad():
            for p, pt in zip(q1.parameters(), q1_t.parameters()):
                pt.mul_(0.995).add_((1 - 0.995) * p)
        out += [actor_loss.detach(), alpha_loss.detach(), logp.detach()]
    logits = torch.randn(5, 3, requires_grad=True)
    cat = D.Categorical(logits=logits)
    acts = cat.sample()
    adv = torch.randn(5)
    pg = -(cat.log_prob(acts) * adv).mean() - 0.01 * cat.entropy().mean()
    pg.backward()
    return out, log_alpha, q1_t[0].weight, q1[0].weight.grad, acts, cat.probs, logits.grad, pg


def case_gae_returns_prioritized_weights(lib):
    """On-policy bookkeeping: GAE by a reversed Python loop writing ``adv[t] = last`` with ``nonterminal = 1 -
    dones[t]`` on an ``expand``-ed done mask, returns ``adv + values[:-1]``, normalised advantages, discounted
    returns by a ``range(T - 1, -1, -1)`` loop, PPO's clipped surrogate ``torch.min(ratio * adv, clamp(ratio, 0.8,
    1.2) * adv)``; prioritized replay's rank-based probabilities ``(rank + 1).pow(-alpha)``, ``torch.multinomial``
    without replacement and importance weights ``(N * p[idx]).pow(-beta) / max``; a dueling head ``V + A -
    A.mean(1, keepdim=True)``, ``scatter_`` one-hots and ``F.huber_loss(delta=0.5)``."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(16)
    T = 6
    rewards, values = torch.rand(T, 2), torch.rand(T + 1, 2)
    dones = torch.tensor([0, 0, 1, 0, 0, 1.0]).unsqueeze(1).expand(T, 2)
    adv = torch.zeros(T, 2)
    last = torch.zeros(2)
    for t in reversed(range(T)):
        nonterm = 1.0 - dones[t]
        delta = rewards[t] + 0.99 * values[t + 1] * nonterm - values[t]
        last = delta + 0.99 * 0.95 * nonterm * last
        adv[t] = last
    ret = adv + values[:-1]
    norm = (adv - adv.mean()) / (adv.std() + 1e-8)
    disc = torch.zeros_like(rewards)
    run = torch.zeros(2)
    for t in range(T - 1, -1, -1):
        run = rewards[t] + 0.99 * run * (1 - dones[t])
        disc[t] = run
    ratio = torch.exp(torch.randn(T, 2) * 0.1)
    pl = -torch.min(ratio * norm, torch.clamp(ratio, 1 - 0.2, 1 + 0.2) * norm).mean()

    probs = (torch.arange(4.0) + 1).pow(-0.6)
    probs = probs / probs.sum()
    idx = torch.multinomial(probs, 3, replacement=False)
    isw = (4 * probs[idx]).pow(-0.4)
    isw = isw / isw.max()
    q = torch.randn(4, 3, requires_grad=True)
    a = torch.tensor([[2], [0], [1], [1]])
    duel = torch.randn(4, 1) + (q - q.mean(dim=1, keepdim=True))
    onehot = torch.zeros(4, 3).scatter_(1, a, 1.0)
    td = F.huber_loss(duel.gather(1, a).squeeze(1), torch.ones(4), delta=0.5, reduction="none")
    (td * isw.repeat(2)[:4]).mean().backward()
    return adv, ret, norm, disc, pl, idx, isw, onehot, td, q.grad


def case_distributions_for_policies(lib):
    """The distributions policies use: ``Normal.cdf/icdf``, ``Independent(Normal, 1)`` rsample/log_prob/entropy
    and its repr, a ``TransformedDistribution`` over ``[TanhTransform(), AffineTransform(...)]`` and one with
    ``TanhTransform(cache_size=1)`` whose log_prob reads the cached pre-image, ``Categorical`` from unnormalised
    ``probs`` (``log_prob`` of float actions, broadcast ``[[1], [0]]`` actions, ``enumerate_support``, ``expand``,
    ``kl_divergence``), ``OneHotCategorical``, ``RelaxedOneHotCategorical.rsample``, ``MixtureSameFamily``,
    ``Bernoulli(logits=...)`` and ``MultivariateNormal(scale_tril=...)``; gradients to the policy's mean and
    log-std."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(17)
    mu = torch.randn(3, 2, requires_grad=True)
    ls = torch.randn(3, 2, requires_grad=True)
    ind = D.Independent(D.Normal(mu, ls.exp()), 1)
    s = ind.rsample((2,))
    td = D.TransformedDistribution(D.Normal(mu, ls.exp()), [D.TanhTransform(cache_size=1)])
    a = td.rsample()
    lp = td.log_prob(a).sum(-1)
    (lp.sum() + ind.log_prob(s).sum() + ind.entropy().sum()).backward()
    n = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    comp = D.TransformedDistribution(D.Normal(torch.zeros(2), torch.ones(2)),
                                     [D.TanhTransform(), D.AffineTransform(loc=torch.tensor(1.0), scale=2.0)])
    cs = comp.sample((3,))
    c1 = D.Categorical(probs=torch.tensor([[1.0, 2.0, 1.0], [0.0, 1.0, 3.0]]))
    c2 = D.Categorical(logits=torch.randn(2, 3))
    ex = c2.expand((4, 2))
    mix = D.MixtureSameFamily(D.Categorical(torch.tensor([0.3, 0.7])),
                              D.Normal(torch.tensor([-1.0, 1.0]), torch.tensor([0.5, 0.5])))
    ms = mix.sample((4,))
    mvn = D.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 0.0], [0.5, 2.0]]))
    mv = mvn.rsample((3,))
    bern = D.Bernoulli(logits=torch.randn(3))
    return (s, a, lp, mu.grad, ls.grad, str(ind), n.cdf(torch.tensor([0.5, 0.5])), n.icdf(torch.tensor([0.1, 0.9])),
            cs, comp.log_prob(cs), c1.log_prob(torch.tensor([1.0, 0.0])), c1.log_prob(torch.tensor([[1], [0]])),
            c1.entropy(), c1.sample((4,)), D.kl_divergence(c1, c2), c2.enumerate_support(), ex.sample(),
            ex.batch_shape, D.OneHotCategorical(probs=torch.tensor([0.2, 0.3, 0.5])).sample((3,)),
            D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=torch.zeros(3)).rsample(), ms, mix.log_prob(ms),
            mv, mvn.log_prob(mv), bern.sample(), bern.entropy())


test_script_matches_torch = script_test(globals())
