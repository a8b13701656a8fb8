"""Regression tests from running widely copied training programs on torchish and on PyTorch: karpathy/nanoGPT's GPT
and train.py loop (flash attention under autocast(bfloat16), the manual masked path, configure_optimizers, gradient
accumulation, crop_block_size, generate), and pytorch/examples' regression, siamese_network, mnist_forward_forward
and reinforcement_learning (REINFORCE, actor-critic). Each ``case_*`` is written against the PyTorch API only;
inputs and weights come from formulas (tests/oracle.py) and random draws are replaced by deterministic choices
(argmax for multinomial/sample, no dropout). Also probed and matching (kept out for time): minGPT's GPT and trainer
callbacks, mnist, word_language_model (LSTM/GRU/RNN/Transformer), time_sequence_prediction (LBFGS), dcgan,
super_resolution, fast_neural_style, gcn/gat, a float16 GradScaler on the CPU.

Where a program differs from the repository it imitates, a comment says why."""
import math
import inspect
from collections import namedtuple
from dataclasses import dataclass

from oracle import formula_data as _data, formula_init as _init, script_test


def _nanogpt(lib, flash):
    nn, F = lib.nn, lib.nn.functional

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(ndim))
            self.bias = nn.Parameter(lib.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.dropout = config.dropout
            self.flash = flash and hasattr(lib.nn.functional, 'scaled_dot_product_attention')
            if not self.flash:
                self.register_buffer("bias", lib.tril(lib.ones(config.block_size, config.block_size))
                                     .view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if self.flash:
                y = lib.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            y = self.resid_dropout(self.c_proj(y))
            return y

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    @dataclass
    class GPTConfig:
        block_size: int = 8
        vocab_size: int = 11
        n_layer: int = 1
        n_head: int = 2
        n_embd: int = 8
        dropout: float = 0.0
        bias: bool = True

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    lib.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
            self.n_params = self.get_num_params()

        def get_num_params(self, non_embedding=True):
            n_params = sum(p.numel() for p in self.parameters())
            if non_embedding:
                n_params -= self.transformer.wpe.weight.numel()
            return n_params

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                lib.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    lib.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                lib.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
            pos = lib.arange(0, t, dtype=lib.long, device=device)
            tok_emb = self.transformer.wte(idx)
            pos_emb = self.transformer.wpe(pos)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            else:
                logits = self.lm_head(x[:, [-1], :])
                loss = None
            return logits, loss

        def crop_block_size(self, block_size):
            assert block_size <= self.config.block_size
            self.config.block_size = block_size
            self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
            for block in self.transformer.h:
                if hasattr(block.attn, 'bias'):
                    block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters()}
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {'params': decay_params, 'weight_decay': weight_decay},
                {'params': nodecay_params, 'weight_decay': 0.0}
            ]
            num_decay_params = sum(p.numel() for p in decay_params)
            num_nodecay_params = sum(p.numel() for p in nodecay_params)
            fused_available = 'fused' in inspect.signature(lib.optim.AdamW).parameters
            use_fused = fused_available and device_type == 'cuda'
            extra_args = dict(fused=True) if use_fused else dict()
            optimizer = lib.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
            return optimizer, (num_decay_params, num_nodecay_params, fused_available, len(decay_params))

        def estimate_mfu(self, fwdbwd_per_iter, dt):
            N = self.get_num_params()
            cfg = self.config
            L, H, Q, T = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.block_size
            flops_per_token = 6 * N + 12 * L * H * Q * T
            flops_per_fwdbwd = flops_per_token * T
            flops_per_iter = flops_per_fwdbwd * fwdbwd_per_iter
            flops_achieved = flops_per_iter * (1.0 / dt)
            flops_promised = 312e12
            return flops_achieved / flops_promised

        @lib.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = lib.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('Inf')
                probs = F.softmax(logits, dim=-1)
                idx_next = lib.argmax(probs, dim=-1, keepdim=True)  # multinomial -> argmax
                idx = lib.cat((idx, idx_next), dim=1)
            return idx

    return GPT, GPTConfig


def case_nanogpt_train_flash_bf16(lib, jit):
    """nanoGPT's train.py loop with the flash path (F.scaled_dot_product_attention(is_causal=True)) under
    autocast(bfloat16) as on a GPU: gradient accumulation over two micro-steps through a (disabled) GradScaler,
    clip_grad_norm_, cosine lr with warmup set per param group, AdamW over configure_optimizers' groups (by dim),
    weight tying; then estimate_mfu, generate with top-k (argmax for multinomial), crop_block_size."""
    GPT, GPTConfig = _nanogpt(lib, True)
    model = GPT(GPTConfig())
    _init(lib, model)
    out = [model.n_params]
    optimizer, info = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cpu')
    out.append(info)
    scaler = lib.amp.GradScaler("cpu", enabled=False)
    ctx = lib.amp.autocast(device_type="cpu", dtype=lib.bfloat16)
    data = (lib.arange(200) * 7 % 11)

    def get_batch(i):
        ix = lib.tensor([3 * i, 5 * i + 1, 17])
        x = lib.stack([data[j:j + 8] for j in ix])
        y = lib.stack([data[j + 1:j + 1 + 8] for j in ix])
        return x, y
    warmup_iters, lr_decay_iters, learning_rate, min_lr = 1, 4, 6e-4, 6e-5

    def get_lr(it):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)
    gas = 2

    def train_step(X, Y, X2, Y2):
        for micro_step in range(gas):
            with ctx:
                logits, loss = model(X if micro_step == 0 else X2, Y if micro_step == 0 else Y2)
                loss = loss / gas
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach() * gas, norm
    step = jit(train_step)
    for it in range(3):
        lr = get_lr(it)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        X, Y = get_batch(it)
        X2, Y2 = get_batch(it + 5)
        loss, norm = step(X, Y, X2, Y2)
        out.append((loss, norm, loss.item()))
    out.append({n: p.detach().clone() for n, p in model.named_parameters()})
    out.append(model.estimate_mfu(3, 0.5))
    model.eval()
    # a prompt as long as the cropped model's input below and two new tokens: the same kernels serve both
    out.append(model.generate(lib.tensor([[1, 2, 3, 4]]), 2, temperature=0.8, top_k=3))
    model.crop_block_size(4)
    logits, _ = model(lib.tensor([[1, 2, 3, 4]]))
    out += [model.transformer.wpe.weight.shape, logits, str(optimizer).replace("torchish", "torch")]
    return out


def case_nanogpt_manual_attention_compiled_model(lib, jit):
    """nanoGPT without flash (the tril "bias" buffer, masked_fill, softmax) in float32 as train.py runs on the CPU,
    through torch.compile(model); crop_block_size slices the buffer; the optimizer state."""
    GPT, GPTConfig = _nanogpt(lib, False)
    model = GPT(GPTConfig(bias=False))
    _init(lib, model)
    opt, _ = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), 'cpu')
    cmodel = lib.compile(model) if jit is lib.compile else model  # (torch.compile itself is not under test)
    x = (lib.arange(16).view(2, 8) * 3) % 11
    y = (x + 1) % 11
    losses = []
    for _ in range(2):
        logits, loss = cmodel(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    model.crop_block_size(4)
    sd = opt.state_dict()
    return (losses, logits, sd["state"][0], sd["param_groups"], list(model.state_dict()),
            model.transformer.h[0].attn.bias.shape, model(x[:, :4])[0])


def case_regression(lib, jit):
    """pytorch/examples regression: polynomial features by cat of powers, f(x) with b_target.item(), smooth_l1_loss,
    the manual update param.data.add_(-0.1 * param.grad), early stop on loss, the printed polynomial."""
    POLY_DEGREE = 4
    W_target = lib.linspace(-1, 1, POLY_DEGREE).unsqueeze(1) * 2.0
    b_target = lib.tensor([0.7])

    def make_features(x):
        x = x.unsqueeze(1)
        return lib.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x):
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        result = 'y = '
        for i, w in enumerate(W):
            result += '{:+.2f} x^{} '.format(w, i + 1)
        result += '{:+.2f}'.format(b[0])
        return result

    def get_batch(k, batch_size=8):
        random = _data(lib, batch_size, seed=k)
        x = make_features(random)
        y = f(x)
        return x, y

    fc = lib.nn.Linear(W_target.size(0), 1)
    _init(lib, fc)
    out = []
    for batch_idx in range(1, 30):
        batch_x, batch_y = get_batch(batch_idx)
        fc.zero_grad()
        output = lib.nn.functional.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        if loss < 1e-3:
            break
        out.append(loss)
    out.append('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    out.append('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
    out.append('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
    return out


def case_siamese(lib, jit):
    """pytorch/examples siamese_network: a shared tower (Conv2d, BatchNorm2d, AdaptiveAvgPool2d; the example's
    ResNet-18 shrunk), module.apply(init_weights) with xavier_uniform_ and bias.data.fill_, cat of the two
    embeddings, BCELoss on sigmoid, Adadelta and StepLR, a compiled train step; the test loop's
    torch.where(outputs > 0.5, 1, 0) and pred.eq(targets.view_as(pred)).sum().item()."""
    nn = lib.nn

    class SiameseNetwork(nn.Module):
        def __init__(self):
            super(SiameseNetwork, self).__init__()
            self.resnet = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                                        nn.AdaptiveAvgPool2d((1, 1)))
            self.fc_in_features = 4
            self.fc = nn.Sequential(nn.Linear(self.fc_in_features * 2, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
            self.sigmoid = nn.Sigmoid()
            self.resnet.apply(self.init_weights)
            self.fc.apply(self.init_weights)

        def init_weights(self, m):
            if isinstance(m, nn.Linear):
                lib.nn.init.xavier_uniform_(m.weight)
                m.bias.data.fill_(0.01)

        def forward_once(self, x):
            output = self.resnet(x)
            output = output.view(output.size()[0], -1)
            return output

        def forward(self, input1, input2):
            output1 = self.forward_once(input1)
            output2 = self.forward_once(input2)
            output = lib.cat((output1, output2), 1)
            output = self.fc(output)
            output = self.sigmoid(output)
            return output

    model = SiameseNetwork()
    _init(lib, model)
    optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
    criterion = nn.BCELoss()
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    images_1 = _data(lib, 4, 1, 6, 6)
    images_2 = _data(lib, 4, 1, 6, 6, seed=2)
    targets = lib.tensor([1, 0, 1, 0]).float()

    def train_step(images_1, images_2, targets):
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        return loss.detach()
    step = jit(train_step)
    model.train()
    losses = [step(images_1, images_2, targets) for _ in range(3)]
    scheduler.step()
    model.eval()
    with lib.no_grad():
        outputs = model(images_1, images_2).squeeze()
        test_loss = criterion(outputs, targets).sum().item()
        pred = lib.where(outputs > 0.5, 1, 0)
        correct = pred.eq(targets.view_as(pred)).sum().item()
    return losses, test_loss, correct, pred, model.state_dict(), optimizer.state_dict()["state"][0]


def case_forward_forward(lib, jit):
    """pytorch/examples mnist_forward_forward: labels overlaid on inputs (x_[range(n), y] = x.max()), layers that
    subclass nn.Linear with their own Adam and a train() override, the goodness loss log(1 + exp(...)), per-layer
    training on detached outputs, predict by argmax of summed goodness."""
    nn = lib.nn

    def overlay_y_on_x(x, y):
        x_ = x.clone()
        x_[:, :10] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_

    class Layer(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__(in_features, out_features, bias, device, dtype)
            self.relu = lib.nn.ReLU()
            self.opt = lib.optim.Adam(self.parameters(), lr=0.03)
            self.threshold = 2.0
            self.num_epochs = 4

        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(lib.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

        def train(self, x_pos, x_neg):
            for i in range(self.num_epochs):
                g_pos = self.forward(x_pos).pow(2).mean(1)
                g_neg = self.forward(x_neg).pow(2).mean(1)
                loss = lib.log(1 + lib.exp(lib.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            return self.forward(x_pos).detach(), self.forward(x_neg).detach()

    class Net(lib.nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.layers = [Layer(dims[d], dims[d + 1]) for d in range(len(dims) - 1)]

        def predict(self, x):
            goodness_per_label = []
            for label in range(10):
                h = overlay_y_on_x(x, label)
                goodness = []
                for layer in self.layers:
                    h = layer(h)
                    goodness += [h.pow(2).mean(1)]
                goodness_per_label += [sum(goodness).unsqueeze(1)]
            goodness_per_label = lib.cat(goodness_per_label, 1)
            return goodness_per_label.argmax(1)

        def train(self, x_pos, x_neg):
            h_pos, h_neg = x_pos, x_neg
            for i, layer in enumerate(self.layers):
                for j, p in enumerate(layer.parameters()):
                    with lib.no_grad():
                        idx = lib.arange(p.numel(), dtype=p.dtype)
                        p.copy_((lib.sin(idx * 0.731 + 1.3 * (i + j)) * 0.3).reshape(p.shape))
                h_pos, h_neg = layer.train(h_pos, h_neg)

    x = _data(lib, 6, 16).abs()
    y = lib.arange(6) % 10
    net = Net([16, 12, 12])
    x_pos = overlay_y_on_x(x, y)
    rnd = lib.tensor([3, 0, 5, 1, 2, 4])
    x_neg = overlay_y_on_x(x, y[rnd])
    net.train(x_pos, x_neg)
    pred = net.predict(x)
    err = 1.0 - pred.eq(y).float().mean().item()
    return x_pos, x_neg, pred, err, [p.detach() for l in net.layers for p in l.parameters()]


def case_reinforce_actor_critic(lib, jit):
    """pytorch/examples reinforcement_learning: REINFORCE (Categorical(probs).log_prob of the action, discounted
    returns normalised with finfo(float32).eps, cat of the policy losses) and actor-critic (SavedAction namedtuples,
    advantage R - value.item(), smooth_l1_loss against torch.tensor([R]), stack of both losses); argmax replaces
    m.sample(), states come from numpy as the gym loop's torch.from_numpy(state).float()."""
    nn, F = lib.nn, lib.nn.functional
    SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])
    eps = float(lib.finfo(lib.float32).eps)

    class Policy(nn.Module):
        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 16)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(16, 2)
            self.saved_log_probs = []
            self.rewards = []

        def forward(self, x):
            x = self.affine1(x)
            x = self.dropout(x)
            x = F.relu(x)
            action_scores = self.affine2(x)
            return F.softmax(action_scores, dim=1)

    class ACPolicy(nn.Module):
        def __init__(self):
            super(ACPolicy, self).__init__()
            self.affine1 = nn.Linear(4, 16)
            self.action_head = nn.Linear(16, 2)
            self.value_head = nn.Linear(16, 1)
            self.saved_actions = []
            self.rewards = []

        def forward(self, x):
            x = F.relu(self.affine1(x))
            action_prob = F.softmax(self.action_head(x), dim=-1)
            state_values = self.value_head(x)
            return action_prob, state_values

    out = []
    gamma = 0.99
    # REINFORCE
    policy = _init(lib, Policy())
    policy.eval()
    optimizer = lib.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(2):
        for t in range(5):
            state = lib.from_numpy(_data(lib, 4, seed=t + episode).numpy()).float().unsqueeze(0)
            probs = policy(state)
            m = lib.distributions.Categorical(probs)
            action = probs.argmax(1)  # m.sample() -> argmax for determinism
            policy.saved_log_probs.append(m.log_prob(action))
            out.append(m.entropy())
            policy.rewards.append(1.0 + 0.1 * t)
        R = 0
        policy_loss = []
        returns = []
        for r in policy.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = lib.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        out.append(policy_loss)
        del policy.rewards[:]
        del policy.saved_log_probs[:]
    # actor-critic
    model = _init(lib, ACPolicy(), seed=2)
    optimizer = lib.optim.Adam(model.parameters(), lr=3e-2)
    for episode in range(2):
        for t in range(5):
            state = lib.from_numpy(_data(lib, 4, seed=2 * t + episode).numpy()).float()
            probs, state_value = model(state)
            m = lib.distributions.Categorical(probs)
            action = lib.argmax(probs)
            model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
            model.rewards.append(1.0 if t % 2 else 0.5)
            out.append(action.item())
        R = 0
        saved_actions = model.saved_actions
        policy_losses = []
        value_losses = []
        returns = []
        for r in model.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, lib.tensor([R])))
        optimizer.zero_grad()
        loss = lib.stack(policy_losses).sum() + lib.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        out.append(loss)
        del model.rewards[:]
        del model.saved_actions[:]
    out.append(model.state_dict())
    return out


test_script_matches_torch = script_test(globals(), avx512={
    "nanogpt_train_flash_bf16": "the bfloat16 attention kernel's rounding (weights 3e-4 apart after the loop)"})
