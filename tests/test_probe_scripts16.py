"""Regression tests from reinforcement-learning and sequence-model code as people write it: a PPO update (GAE by a
reversed Python loop, advantage normalisation, clipped surrogate and value loss, entropy of Categorical and Normal),
DQN and double DQN (target network by load_state_dict, Polyak updates by in-place ops and _foreach_, gather,
max(1)[0].detach(), Huber loss), SAC's tanh-squashed Normal, A2C; a GRU seq2seq with Bahdanau and Luong attention
and teacher forcing, packed sequences with enforce_sorted=False, a bidirectional 2-layer LSTM with proj_size, beam
search, a WaveNet-style dilated causal Conv1d, a TCN with parametrizations.weight_norm, a CTC training step and
log-mel features by torch.stft. Each ``case_*`` is written against the PyTorch API only; inputs and weights come from
formulas (tests/oracle.py) and random draws are replaced by deterministic choices (argmax, given tensors, fixed eps)."""
import math

from oracle import formula_data as _data, formula_init as _init, same_error, script_test


# ----------------------------------------------------------------------------------------------------------- RL


def _actor_critic(lib, obs=4, act=3, hidden=8, continuous=False):
    nn = lib.nn

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
            self.pi = nn.Linear(hidden, act)
            self.v = nn.Linear(hidden, 1)
            if continuous:
                self.log_std = nn.Parameter(lib.zeros(act) - 0.5)

        def forward(self, x):
            h = self.body(x)
            return self.pi(h), self.v(h).squeeze(-1)

    return ActorCritic()


def _gae(lib, rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    advantages = lib.zeros_like(rewards)
    lastgaelam = 0
    T = rewards.shape[0]
    for t in reversed(range(T)):
        if t == T - 1:
            nextnonterminal = 1.0 - dones[t]
            nextvalues = last_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    return advantages, advantages + values


def _ppo_batch(lib, model, continuous, T=6, N=2, obs=4):
    D = lib.distributions
    x = _data(lib, T, N, obs)
    rewards = _data(lib, T, N, seed=2) * 0.5
    dones = lib.tensor([[0., 0.], [0., 1.], [0., 0.], [1., 0.], [0., 0.], [0., 1.]])
    with lib.no_grad():
        logits, values = model(x)
        if continuous:
            dist = D.Normal(logits, model.log_std.exp())
            actions = logits + 0.3 * _data(lib, T, N, logits.shape[-1], seed=5)
            old_logp = dist.log_prob(actions).sum(-1)
        else:
            dist = D.Categorical(logits=logits)
            actions = (logits + _data(lib, T, N, logits.shape[-1], seed=5)).argmax(-1)
            old_logp = dist.log_prob(actions)
        _, last_value = model(_data(lib, N, obs, seed=7))
    adv, returns = _gae(lib, rewards, values, dones, last_value)
    return x, actions, old_logp, adv, returns, values


def _ppo_loss(lib, model, continuous, b_obs, b_act, b_logp, b_adv, b_ret, b_val, clip=0.2):
    D = lib.distributions
    logits, newvalue = model(b_obs)
    if continuous:
        dist = D.Normal(logits, model.log_std.exp().expand_as(logits))
        newlogp = dist.log_prob(b_act).sum(1)
        entropy = dist.entropy().sum(1)
    else:
        dist = D.Categorical(logits=logits)
        newlogp = dist.log_prob(b_act)
        entropy = dist.entropy()
    logratio = newlogp - b_logp
    ratio = logratio.exp()
    with lib.no_grad():
        old_approx_kl = (-logratio).mean()
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip).float().mean()
    b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
    pg_loss1 = -b_adv * ratio
    pg_loss2 = -b_adv * lib.clamp(ratio, 1 - clip, 1 + clip)
    pg_loss = lib.max(pg_loss1, pg_loss2).mean()
    v_loss_unclipped = (newvalue - b_ret) ** 2
    v_clipped = b_val + lib.clamp(newvalue - b_val, -clip, clip)
    v_loss_clipped = (v_clipped - b_ret) ** 2
    v_loss = 0.5 * lib.max(v_loss_unclipped, v_loss_clipped).mean()
    surr = -lib.min(ratio * b_adv, ratio.clamp(1 - clip, 1 + clip) * b_adv).mean()
    loss = pg_loss - 0.01 * entropy.mean() + v_loss * 0.5
    return loss, [pg_loss, v_loss, surr, old_approx_kl, approx_kl, clipfrac]


def _ppo(lib, jit, continuous):
    model = _init(lib, _actor_critic(lib, continuous=continuous))
    opt = lib.optim.Adam(model.parameters(), lr=3e-3, eps=1e-5)
    x, actions, old_logp, adv, returns, values = _ppo_batch(lib, model, continuous)
    out = [adv, returns, old_logp]
    T, N = adv.shape
    b_obs = x.reshape(T * N, -1)
    b_act = actions.reshape((T * N,) + actions.shape[2:])
    b_logp, b_adv, b_ret, b_val = old_logp.reshape(-1), adv.reshape(-1), returns.reshape(-1), values.reshape(-1)

    def update(idx):
        loss, stats = _ppo_loss(lib, model, continuous, b_obs[idx], b_act[idx], b_logp[idx], b_adv[idx],
                                b_ret[idx], b_val[idx])
        opt.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss.detach(), stats
    update = jit(update)
    order = lib.arange(T * N).flip(0)
    for epoch in range(2):
        for start in range(0, T * N, 6):
            out.append(update(order[start:start + 6]))
        order = order.roll(epoch + 1)
    out.append(model.state_dict())
    return out


def case_ppo_discrete(lib):
    """CleanRL-style PPO on a Categorical policy, eager."""
    return _ppo(lib, lambda f: f, False)


def case_ppo_continuous_jit(lib, jit):
    """PPO on a Normal policy with a learned log_std (sum of log_prob over the action dim), update traced; the GAE
    loop (setitem of a chained assignment per step) traced too, for two reward batches."""
    gae = jit(lambda r, v, d, lv: _gae(lib, r, v, d, lv))
    r, v, d = _data(lib, 6, 2), _data(lib, 6, 2, seed=1), (_data(lib, 6, 2, seed=2) > 0.5).float()
    return [_ppo(lib, jit, True), gae(r, v, d, _data(lib, 2, seed=3)), gae(r * 2, v, d, _data(lib, 2, seed=4))]


def _qnet(lib, obs=4, act=3, hidden=8):
    nn = lib.nn
    return nn.Sequential(nn.Linear(obs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, act))


def _dqn(lib, jit, double, foreach):
    F = lib.nn.functional
    q = _init(lib, _qnet(lib))
    target = _qnet(lib)
    target.load_state_dict(q.state_dict())
    opt = lib.optim.Adam(q.parameters(), lr=1e-2)
    gamma, tau = 0.99, 0.05

    def train(s, a, r, s2, d):
        q_sa = q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with lib.no_grad():
            if double:
                next_a = q(s2).argmax(dim=1, keepdim=True)
                next_q = target(s2).gather(1, next_a).squeeze(1)
            else:
                next_q = target(s2).max(1)[0].detach()
            y = r + gamma * next_q * (1 - d)
        loss = F.smooth_l1_loss(q_sa, y) if not double else F.huber_loss(q_sa, y, delta=0.5)
        opt.zero_grad()
        loss.backward()
        for p in q.parameters():
            p.grad.data.clamp_(-1, 1)
        opt.step()
        with lib.no_grad():
            if foreach:
                tp, op = list(target.parameters()), list(q.parameters())
                lib._foreach_mul_(tp, 1 - tau)
                lib._foreach_add_(tp, op, alpha=tau)
            else:
                for tp, p in zip(target.parameters(), q.parameters()):
                    tp.data.mul_(1 - tau).add_(tau * p.data)
        return loss.detach(), q_sa.detach()
    train = jit(train)
    out = []
    for i in range(3):
        s, s2 = _data(lib, 5, 4, seed=i), _data(lib, 5, 4, seed=i + 10)
        a = lib.tensor([(i + k) % 3 for k in range(5)])
        r = _data(lib, 5, seed=i + 20)
        d = lib.tensor([0., 1., 0., 0., float(i == 2)])
        out.append(train(s, a, r, s2, d))
    with lib.no_grad():
        greedy = q(_data(lib, 4, 4, seed=3)).max(1)
    out += [greedy.values, greedy.indices, q.state_dict(), target.state_dict()]
    target.load_state_dict(q.state_dict())
    out.append(target(_data(lib, 2, 4)))
    return out


def case_dqn_polyak_inplace(lib):
    """DQN with max(1)[0].detach() targets, smooth_l1_loss, grad.data.clamp_ and a Polyak update by
    tp.data.mul_(1 - tau).add_(tau * p.data)."""
    return _dqn(lib, lambda f: f, False, False)


def case_double_dqn_foreach_jit(lib, jit):
    """Double DQN (argmax of the online net, gather from the target net), huber_loss(delta=0.5), Polyak by
    _foreach_mul_/_foreach_add_, the whole step traced."""
    return _dqn(lib, jit, True, True)


def case_dqn_foreach_eager_inplace_jit(lib, jit):
    """The foreach Polyak update eagerly, and the in-place one traced."""
    return [_dqn(lib, lambda f: f, True, True), _dqn(lib, jit, False, False)]


def _sac_actor(lib, obs=4, act=2, hidden=8):
    nn = lib.nn

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(obs, hidden), nn.ReLU())
            self.mu = nn.Linear(hidden, act)
            self.log_std = nn.Linear(hidden, act)
            self.register_buffer("action_scale", lib.tensor([2.0, 0.5]))
            self.register_buffer("action_bias", lib.tensor([0.0, 0.5]))

        def forward(self, x, eps):
            h = self.net(x)
            mean = self.mu(h)
            log_std = lib.tanh(self.log_std(h))
            log_std = -5 + 0.5 * (2 - (-5)) * (log_std + 1)
            std = log_std.exp()
            normal = lib.distributions.Normal(mean, std)
            x_t = mean + std * eps  # rsample with a fixed eps
            y_t = lib.tanh(x_t)
            action = y_t * self.action_scale + self.action_bias
            log_prob = normal.log_prob(x_t)
            log_prob -= lib.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
            log_prob = log_prob.sum(1, keepdim=True)
            mean = lib.tanh(mean) * self.action_scale + self.action_bias
            return action, log_prob, mean

    return Actor()


def _sac(lib, jit):
    nn, F = lib.nn, lib.nn.functional
    actor = _init(lib, _sac_actor(lib))
    q1 = _init(lib, nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1)), seed=1)
    q2 = _init(lib, nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1)), seed=2)
    q1_t, q2_t = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1)), \
        nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
    q1_t.load_state_dict(q1.state_dict())
    q2_t.load_state_dict(q2.state_dict())
    q_opt = lib.optim.Adam(list(q1.parameters()) + list(q2.parameters()), lr=1e-2)
    a_opt = lib.optim.Adam(actor.parameters(), lr=1e-2)
    log_alpha = lib.zeros(1, requires_grad=True)
    alpha_opt = lib.optim.Adam([log_alpha], lr=1e-2)
    target_entropy = -2.0

    def step(s, a, r, s2, d, eps, eps2):
        alpha = log_alpha.exp().item() if jit is None else log_alpha.exp().detach()
        with lib.no_grad():
            na, nlogp, _ = actor(s2, eps2)
            qt = lib.min(q1_t(lib.cat([s2, na], 1)), q2_t(lib.cat([s2, na], 1))) - alpha * nlogp
            y = r.flatten() + (1 - d.flatten()) * 0.99 * qt.view(-1)
        qa1 = q1(lib.cat([s, a], 1)).view(-1)
        qa2 = q2(lib.cat([s, a], 1)).view(-1)
        qf_loss = F.mse_loss(qa1, y) + F.mse_loss(qa2, y)
        q_opt.zero_grad()
        qf_loss.backward()
        q_opt.step()
        pi, logp, mean = actor(s, eps)
        min_q = lib.min(q1(lib.cat([s, pi], 1)), q2(lib.cat([s, pi], 1)))
        actor_loss = ((alpha * logp) - min_q).mean()
        a_opt.zero_grad()
        actor_loss.backward()
        a_opt.step()
        with lib.no_grad():
            _, logp2, _ = actor(s, eps)
        alpha_loss = (-log_alpha.exp() * (logp2 + target_entropy)).mean()
        alpha_opt.zero_grad()
        alpha_loss.backward()
        alpha_opt.step()
        for p, tp in zip(q1.parameters(), q1_t.parameters()):
            tp.data.copy_(0.005 * p.data + (1 - 0.005) * tp.data)
        for p, tp in zip(q2.parameters(), q2_t.parameters()):
            tp.data.copy_(0.005 * p.data + (1 - 0.005) * tp.data)
        return qf_loss.detach(), actor_loss.detach(), alpha_loss.detach(), mean.detach()
    return actor, q1_t, log_alpha, step


def case_sac_tanh_normal(lib, jit):
    """CleanRL's SAC: tanh-squashed Normal with action_scale/bias buffers, the log(1 - tanh^2 + 1e-6) correction,
    twin Q with targets by tp.data.copy_, automatic entropy tuning; eager (alpha by .item()) then traced."""
    out = []
    for mode in (None, jit):
        actor, q1_t, log_alpha, step = _sac(lib, mode)
        fn = step if mode is None else mode(step)
        for i in range(2):
            s, s2 = _data(lib, 3, 4, seed=i), _data(lib, 3, 4, seed=i + 4)
            a = _data(lib, 3, 2, seed=i + 8).tanh()
            out.append(fn(s, a, _data(lib, 3, 1, seed=i + 9), s2, lib.tensor([[0.], [1.], [0.]]),
                          _data(lib, 3, 2, seed=i + 11), _data(lib, 3, 2, seed=i + 12)))
        out += [actor.state_dict(), q1_t.state_dict(), log_alpha.detach().clone()]
    # the library's TransformedDistribution gives the same log-prob (without the 1e-6)
    D = lib.distributions
    base = D.Normal(_data(lib, 3, 2), _data(lib, 3, 2, seed=1).exp())
    tn = D.TransformedDistribution(base, [D.transforms.TanhTransform()])
    u = _data(lib, 3, 2, seed=3)
    out += [tn.log_prob(lib.tanh(u)), base.log_prob(u) - lib.log(1 - lib.tanh(u).pow(2) + 1e-6),
            D.Independent(base, 1).log_prob(u), D.Independent(base, 1).entropy()]
    return out


def case_a2c_nstep(lib):
    """A2C with n-step returns by a reversed loop over masks, Categorical log_prob of given actions and entropy,
    RMSprop(alpha=0.99, eps=1e-5) and clip_grad_norm_."""
    F = lib.nn.functional
    model = _init(lib, _actor_critic(lib))
    opt = lib.optim.RMSprop(model.parameters(), lr=7e-4, alpha=0.99, eps=1e-5)
    out = []
    for it in range(2):
        obs = _data(lib, 5, 3, 4, seed=it)
        logits, values = model(obs)
        dist = lib.distributions.Categorical(logits=logits)
        actions = lib.tensor([[0, 1, 2], [2, 2, 0], [1, 0, 1], [0, 0, 2], [2, 1, 1]])
        log_probs = dist.log_prob(actions)
        masks = lib.tensor([[1., 1., 1.], [1., 0., 1.], [1., 1., 1.], [0., 1., 1.], [1., 1., 0.]])
        rewards = _data(lib, 5, 3, seed=it + 3)
        with lib.no_grad():
            _, next_value = model(_data(lib, 3, 4, seed=it + 5))
        returns = lib.zeros(6, 3)
        returns[-1] = next_value
        for step in reversed(range(5)):
            returns[step] = returns[step + 1] * 0.99 * masks[step] + rewards[step]
        advantages = returns[:-1] - values
        value_loss = advantages.pow(2).mean()
        action_loss = -(advantages.detach() * log_probs).mean()
        entropy = dist.entropy().mean()
        opt.zero_grad()
        (value_loss * 0.5 + action_loss - entropy * 0.01).backward()
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        out += [returns, value_loss, action_loss, entropy, norm, dist.probs, F.log_softmax(logits, -1)]
    out.append(model.state_dict())
    out.append(opt.state_dict()["state"])
    return out


# ----------------------------------------------------------------------------------------------------- sequences


def _seq2seq(lib, attn_kind, V=7, E=5, H=6):
    nn, F = lib.nn, lib.nn.functional

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(V, E, padding_idx=0)
            self.gru = nn.GRU(E, H, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * H, H)

        def forward(self, src, lengths):
            emb = self.embedding(src)
            packed = nn.utils.rnn.pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
            out, hidden = self.gru(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
            hidden = lib.tanh(self.fc(lib.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
            return out, hidden

    class Bahdanau(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.Linear(3 * H, H)
            self.v = nn.Linear(H, 1, bias=False)

        def forward(self, hidden, enc, mask):
            L = enc.shape[1]
            hidden = hidden.unsqueeze(1).repeat(1, L, 1)
            energy = lib.tanh(self.attn(lib.cat((hidden, enc), dim=2)))
            scores = self.v(energy).squeeze(2).masked_fill(mask == 0, -1e10)
            return F.softmax(scores, dim=1)

    class Luong(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Linear(2 * H, H, bias=False)

        def forward(self, hidden, enc, mask):
            scores = lib.bmm(self.W(enc), hidden.unsqueeze(2)).squeeze(2)
            scores = scores.masked_fill(~mask, float("-inf"))
            return lib.softmax(scores, -1)

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = Bahdanau() if attn_kind == "bahdanau" else Luong()
            self.embedding = nn.Embedding(V, E)
            self.rnn = nn.GRU(2 * H + E, H)
            self.fc_out = nn.Linear(2 * H + H + E, V)

        def forward(self, inp, hidden, enc, mask):
            embedded = self.embedding(inp.unsqueeze(0))
            a = self.attention(hidden, enc, mask).unsqueeze(1)
            weighted = lib.bmm(a, enc).permute(1, 0, 2)
            output, hidden = self.rnn(lib.cat((embedded, weighted), dim=2), hidden.unsqueeze(0))
            assert (output == hidden).all()
            pred = self.fc_out(lib.cat((output.squeeze(0), weighted.squeeze(0), embedded.squeeze(0)), dim=1))
            return pred, hidden.squeeze(0), a.squeeze(1)

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.decoder = Encoder(), Decoder()

        def forward(self, src, lengths, trg, teacher):
            B, T = trg.shape
            outputs = lib.zeros(T, B, V)
            attns = []
            enc, hidden = self.encoder(src, lengths)
            mask = src != 0
            inp = trg[:, 0]
            for t in range(1, T):
                out, hidden, a = self.decoder(inp, hidden, enc, mask)
                outputs[t] = out
                attns.append(a)
                inp = trg[:, t] if teacher[t] else out.argmax(1)
            return outputs, lib.stack(attns, 1)

    return Seq2Seq()


def _seq2seq_run(lib, kind):
    nn = lib.nn
    model = _init(lib, _seq2seq(lib, kind))
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    crit = nn.CrossEntropyLoss(ignore_index=0)
    src = lib.tensor([[3, 4, 5, 0, 0], [6, 2, 3, 4, 1], [2, 2, 0, 0, 0]])
    lengths = lib.tensor([3, 5, 2])
    trg = lib.tensor([[1, 5, 6, 2], [1, 3, 0, 0], [1, 4, 4, 2]])
    out = []
    for it, teacher in enumerate(([1, 1, 1, 1], [1, 0, 1, 0])):
        output, attn = model(src, lengths, trg, teacher)
        loss = crit(output[1:].view(-1, output.shape[-1]), trg.t()[1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        out += [loss, attn, output]
    out.append({n: p.grad for n, p in model.named_parameters()})
    return out


def case_seq2seq_gru_bahdanau(lib):
    """bentrevett's seq2seq with Bahdanau attention: packed bidirectional GRU encoder (enforce_sorted=False,
    total_length), masked_fill(mask == 0, -1e10), teacher forcing from a fixed schedule, CrossEntropyLoss with
    ignore_index."""
    return _seq2seq_run(lib, "bahdanau")


def case_seq2seq_gru_luong(lib):
    """The same model with Luong's general score (bmm) and a -inf mask."""
    return _seq2seq_run(lib, "luong")


def case_packed_bilstm_proj(lib, jit):
    """A bidirectional 2-layer LSTM with proj_size and given h0/c0 over a packed batch (enforce_sorted=False):
    outputs, final states, sorted/unsorted indices, batch_sizes, gradients; then the padded (unpacked) LSTM traced."""
    nn = lib.nn
    lstm = _init(lib, nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, batch_first=True))
    x = _data(lib, 3, 4, 3).requires_grad_()
    lengths = lib.tensor([2, 4, 1])
    h0 = _data(lib, 4, 3, 2, seed=1) * 0.5
    c0 = _data(lib, 4, 3, 5, seed=2) * 0.5
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, (hn, cn) = lstm(packed, (h0, c0))
    padded, lens = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, padding_value=-1.0)
    (padded.clamp(min=0).sum() + hn.pow(2).sum() + cn.sum()).backward()
    res = [padded, lens, hn, cn, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices,
           out.data, x.grad, {n: p.grad for n, p in lstm.named_parameters()}]
    seqs = [_data(lib, 2, 3, seed=4), _data(lib, 4, 3, seed=5), _data(lib, 1, 3, seed=6)]
    p2 = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    res += [p2.data, p2.batch_sizes, nn.utils.rnn.pad_sequence(seqs, batch_first=True),
            nn.utils.rnn.unpack_sequence(p2), nn.utils.rnn.unpad_sequence(padded, lens, batch_first=True)]
    lstm.zero_grad()

    def f(x, h0, c0):
        o, (h, c) = lstm(x, (h0, c0))
        loss = o.sum() + h.sum() * c.mean()
        loss.backward()
        return o, h, c
    res.append(jit(f)(x.detach(), h0, c0))
    res.append({n: p.grad for n, p in lstm.named_parameters()})
    return res


def case_beam_search(lib):
    """Beam search over a tiny GRUCell decoder: topk over flattened beam x vocab scores, // and % to recover the
    beam and token, index_select of hidden states, finished beams kept by masked_fill, length normalisation."""
    nn, F = lib.nn, lib.nn.functional
    V, H, K = 6, 5, 3
    emb = _init(lib, nn.Embedding(V, H))
    cell = _init(lib, nn.GRUCell(H, H), seed=1)
    proj = _init(lib, nn.Linear(H, V), seed=2)
    eos = 2
    with lib.no_grad():
        h = _data(lib, 1, H).tanh()
        tokens = lib.tensor([[1]])
        scores = lib.zeros(1)
        finished = lib.zeros(1, dtype=lib.bool)
        out = []
        for step in range(4):
            h = cell(emb(tokens[:, -1]), h)
            logp = F.log_softmax(proj(h), dim=-1)
            logp = logp.masked_fill(finished.unsqueeze(1), float("-inf"))
            logp[:, eos] = lib.where(finished, lib.zeros(()), logp[:, eos])
            cand = (scores.unsqueeze(1) + logp).view(-1)
            top, idx = cand.topk(min(K, cand.numel()))
            beam, tok = idx // V, idx % V
            tokens = lib.cat([tokens.index_select(0, beam), tok.unsqueeze(1)], dim=1)
            h = h.index_select(0, beam)
            scores = top
            finished = finished[beam] | (tok == eos)
            out += [top, beam, tok, finished.clone()]
        lengths = (tokens != eos).sum(1).float()
        normed = scores / lengths ** 0.7
        best = normed.argmax()
        out += [tokens, normed, tokens[best], lengths]
    return out


def case_wavenet_tcn(lib, jit):
    """A WaveNet-style stack of dilated causal Conv1d (F.pad on the left, gated tanh*sigmoid, residual and skip
    1x1 convolutions) and a TCN whose convolutions carry nn.utils.parametrizations.weight_norm; one SGD step each,
    the TCN's traced."""
    nn, F = lib.nn, lib.nn.functional

    class CausalConv1d(nn.Conv1d):
        def __init__(self, cin, cout, k, dilation=1):
            super().__init__(cin, cout, k, dilation=dilation)
            self.left = (k - 1) * dilation

        def forward(self, x):
            return super().forward(F.pad(x, (self.left, 0)))

    class WaveBlock(nn.Module):
        def __init__(self, c, d):
            super().__init__()
            self.filt, self.gate = CausalConv1d(c, c, 2, d), CausalConv1d(c, c, 2, d)
            self.res, self.skip = nn.Conv1d(c, c, 1), nn.Conv1d(c, c, 1)

        def forward(self, x):
            z = lib.tanh(self.filt(x)) * lib.sigmoid(self.gate(x))
            return x + self.res(z), self.skip(z)

    class WaveNet(nn.Module):
        def __init__(self, c=4, n_classes=5):
            super().__init__()
            self.inp = CausalConv1d(1, c, 2)
            self.blocks = nn.ModuleList([WaveBlock(c, 2 ** i) for i in range(3)])
            self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(c, c, 1), nn.ReLU(), nn.Conv1d(c, n_classes, 1))

        def forward(self, x):
            x = self.inp(x)
            skips = 0
            for b in self.blocks:
                x, s = b(x)
                skips = skips + s
            return self.out(skips)

    class Chomp1d(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n

        def forward(self, x):
            return x[:, :, :-self.n].contiguous()

    class TemporalBlock(nn.Module):
        def __init__(self, cin, cout, k, d):
            super().__init__()
            pad = (k - 1) * d
            wn = nn.utils.parametrizations.weight_norm
            self.net = nn.Sequential(wn(nn.Conv1d(cin, cout, k, padding=pad, dilation=d)), Chomp1d(pad), nn.ReLU(),
                                     wn(nn.Conv1d(cout, cout, k, padding=pad, dilation=d)), Chomp1d(pad), nn.ReLU())
            self.downsample = nn.Conv1d(cin, cout, 1) if cin != cout else None

        def forward(self, x):
            out = self.net(x)
            res = x if self.downsample is None else self.downsample(x)
            return F.relu(out + res)

    out = []
    wav = _init(lib, WaveNet())
    x = _data(lib, 2, 1, 10)
    target = lib.tensor([[(i * 3 + j) % 5 for i in range(10)] for j in range(2)])
    opt = lib.optim.SGD(wav.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        logits = wav(x)
        loss = F.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out += [loss, logits]
    # causality: changing a future sample leaves earlier outputs alone
    x2 = x.clone()
    x2[:, :, 7:] = 5.0
    with lib.no_grad():
        out.append((wav(x2)[..., :7] - wav(x)[..., :7]).abs().max())

    tcn = nn.Sequential(TemporalBlock(2, 3, 2, 1), TemporalBlock(3, 3, 2, 2))
    _init(lib, tcn)
    out.append({n: p.detach().clone() for n, p in tcn.named_parameters()})
    opt2 = lib.optim.Adam(tcn.parameters(), lr=1e-2)

    def step(x, y):
        loss = F.mse_loss(tcn(x)[:, :, -1], y)
        opt2.zero_grad()
        loss.backward()
        opt2.step()
        return loss.detach()
    step = jit(step)
    for i in range(2):
        out.append(step(_data(lib, 2, 2, 8, seed=i), _data(lib, 2, 3, seed=i + 3)))
    out.append({n: p.grad for n, p in tcn.named_parameters()})
    out.append(tcn.state_dict())
    out.append(tcn[0].net[0].weight)
    return out


def case_ctc_training_step(lib, jit):
    """A CTC step: a BiGRU acoustic model, log_softmax over classes, (T, N, C) permute, ctc_loss with padded
    targets and per-sample lengths (mean and sum reductions, zero_infinity); eager, then traced."""
    nn, F = lib.nn, lib.nn.functional

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 5, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(10, 6)

        def forward(self, x):
            return F.log_softmax(self.fc(self.rnn(x)[0]), dim=-1)

    out = []
    for mode in (lambda f: f, jit):
        model = _init(lib, Model())
        ctc = nn.CTCLoss(blank=0, zero_infinity=True)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
        targets = lib.tensor([[1, 2, 2, 3], [4, 5, 0, 0], [3, 3, 3, 3]])
        in_len = lib.tensor([8, 6, 5])
        tg_len = lib.tensor([4, 2, 4])

        def step(x):
            lp = model(x).permute(1, 0, 2)
            loss = ctc(lp, targets, in_len, tg_len)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach(), F.ctc_loss(lp, targets, in_len, tg_len, reduction="none").detach()
        step = mode(step)
        for i in range(2):
            out.append(step(_data(lib, 3, 8, 4, seed=i)))
        out.append(model.state_dict())
    # a greedy decode
    with lib.no_grad():
        best = model(_data(lib, 3, 8, 4)).argmax(-1)
        out.append([lib.unique_consecutive(b)[lib.unique_consecutive(b) != 0] for b in best])
    return out


def _mel_filters(lib, sr, n_fft, n_mels, fmin=0.0, fmax=None):
    fmax = fmax or sr / 2
    hz_to_mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)
    mels = lib.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    fft_freqs = lib.linspace(0, sr / 2, n_fft // 2 + 1)
    fdiff = hz[1:] - hz[:-1]
    ramps = hz.unsqueeze(1) - fft_freqs.unsqueeze(0)
    lower = -ramps[:-2] / fdiff[:-1].unsqueeze(1)
    upper = ramps[2:] / fdiff[1:].unsqueeze(1)
    fb = lib.maximum(lib.zeros(1), lib.minimum(lower, upper))
    enorm = 2.0 / (hz[2:n_mels + 2] - hz[:n_mels])
    return fb * enorm.unsqueeze(1)


def case_log_mel_stft(lib, jit):
    """Whisper-style log-mel features by hand: stft(window=hann_window, return_complex=True), [..., :-1], abs()**2,
    a mel filterbank from linspace, matmul, clamp(min=1e-10).log10(), max - 8.0 floor, (x + 4) / 4; gradients to the
    waveform; traced too. Also istft round trip and a center=False, onesided power spectrogram."""
    n_fft, hop = 16, 4
    filters = _mel_filters(lib, 800, n_fft, 6)

    def log_mel(audio):
        window = lib.hann_window(n_fft)
        st = lib.stft(audio, n_fft, hop, window=window, return_complex=True)
        magnitudes = st[..., :-1].abs() ** 2
        mel_spec = filters @ magnitudes
        log_spec = lib.clamp(mel_spec, min=1e-10).log10()
        log_spec = lib.maximum(log_spec, log_spec.max() - 8.0)
        return (log_spec + 4.0) / 4.0

    # a chirp on top of the formula's single cosine: every mel band has energy, so 1/mel in the log's gradient
    # does not amplify float32 cancellation in empty bands (a pure cosine left bands at 3e-8 and the waveform's
    # gradient differed by 1e-2 between torch's own float32 and float64)
    i = lib.arange(80.).reshape(2, 40)
    audio = (_data(lib, 2, 40) + lib.sin(i * i * 0.37)).requires_grad_()
    feats = log_mel(audio)
    feats.sum().backward()
    out = [filters, feats, audio.grad]
    out.append(jit(log_mel)(audio.detach()))
    w = lib.hann_window(n_fft, periodic=False)
    spec = lib.stft(audio.detach(), n_fft, hop, win_length=12, window=w[:12], center=False, return_complex=True)
    out += [spec.real, spec.imag, spec.abs().pow(2), spec.angle()]
    s2 = lib.stft(audio.detach(), n_fft, hop, window=lib.hann_window(n_fft), return_complex=True)
    out.append(lib.istft(s2, n_fft, hop, window=lib.hann_window(n_fft), length=40))
    out.append(lib.view_as_real(s2).shape)
    return out


def test_pack_padded_sequence_lengths_must_be_a_vector():
    """Lengths of the wrong rank: PyTorch's packing kernel wants a 1-D CPU int64 tensor (a 2-D or 0-D one, or a
    nested list, raises its RuntimeError), and unsorted it first index_selects the batch with the sorted indices,
    which wants a vector (IndexError); torchish flattened them and packed."""
    R = lambda lib: lib.nn.utils.rnn
    same_error(lambda lib: R(lib).pack_padded_sequence(lib.zeros(3, 2, 1), lib.tensor([[3, 2]])))
    same_error(lambda lib: R(lib).pack_padded_sequence(lib.zeros(3, 2, 1), [[3, 2]]))
    same_error(lambda lib: R(lib).pack_padded_sequence(lib.zeros(3, 1, 1), lib.tensor(3)))
    same_error(lambda lib: R(lib).pack_padded_sequence(lib.zeros(3, 1, 1), lib.tensor(3), enforce_sorted=False))
    same_error(lambda lib: R(lib).pack_padded_sequence(lib.zeros(3, 2, 1), lib.tensor([[2], [3]]),
                                                       enforce_sorted=False))


def test_istft_of_a_real_tensor_message():
    """PyTorch's wording says what istft wants (the output of stft with return_complex=True); torchish's stopped
    after 'tensor'."""
    same_error(lambda lib: lib.istft(lib.zeros(5, 3), 8))


test_script_matches_torch = script_test(globals())
