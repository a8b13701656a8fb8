"""Seeded third-party-style training scripts, written as tutorials and GitHub repositories write them:
``torch.manual_seed(0)`` at the top, DEFAULT layer initialisation (no formula_init), data from randn/randint/rand
(or a shuffled DataLoader), dropout active in training, a few epochs, eval mode under ``no_grad`` at the end. Each
returns per-epoch losses, a final metric, a few parameters and the next ``rand(2)`` (the stream is in step) and is
compared with torch 2.13 by ``assert_script_matches`` (tests/oracle.py); the ``jit`` cases run their training step
through torchish.compile, with dropout's draws inside the compiled step.

Fixed here: Wishart.rsample now redraws as PyTorch 2.13 does (its first singularity test is inverted, so every
positive-definite first draw is replaced by a fresh one, with a "Singular sample detected." warning): torchish
kept the first draw and the seeded stream fell out of step; linalg.cholesky_ex answered info=0 for a NaN factor
when XLA's factorization failed on a rounding-level pivot (linalg.cholesky returned the NaNs silently).

Probed and matching: the 60-minute-blitz CNN; a regression MLP with DataLoader(shuffle=True), Adam and StepLR
(compiled step); a char-level LSTM LM (Embedding, LSTM dropout between layers, clip_grad_norm_); a GRU seq2seq with
teacher forcing from a torch.rand coin; a VAE (randn_like reparameterisation, compiled step); a GAN with two Adams,
detach and BCEWithLogitsLoss; a Transformer encoder classifier (dropout, batch_first, compiled step, padding mask);
a ResNet basic block with BatchNorm2d + Dropout2d, nesterov SGD and CosineAnnealingLR; a denoising autoencoder
with weight decay, both gradient clippings and ReduceLROnPlateau; a GPT-style ``_init_weights`` (xavier_uniform_,
normal_, zeros_, ones_, trunc_normal_, orthogonal_, kaiming_normal_/uniform_, uniform_, constant_); random_split with fractions
and a seeded Generator plus a WeightedRandomSampler; a torch.Generator given to DataLoader, randn, randperm; a DDPM
toy (randint timesteps, ancestral sampling); BERT's masked-LM collator and REINFORCE with Categorical; checkpoint
over dropout (both use_reentrant settings); a Wishart prior.
Also probed and matching (kept out for time): the PyTorch examples' word_language_model (LSTM/GRU/RNN_TANH,
tied weights, manual SGD), DCGAN (weights_init, BCELoss, fixed noise) and MNIST (Adadelta, StepLR) scripts at
small sizes; the full-size blitz CNN (2 epochs over 64 images) and a 2-layer causal Transformer LM with top-k
multinomial sampling (losses within 2.4e-7 relative at every step); AWD-LSTM idioms (embedded dropout through
``weight.new().resize_().bernoulli_()``, LockedDropout, ASGD); prune.random_unstructured/random_structured;
DistributedSampler with set_epoch; random_split with lengths and ConcatDataset; legacy constructors
(``Tensor(3, 2).normal_()``, LongTensor.random_); a GRU LM sampling with multinomial; compiled steps with LSTM dropout,
BatchNorm2d + Dropout2d and randn_like; a packed bidirectional LSTM with dropout; DropPath (bernoulli_) with
gumbel_softmax; word2vec negative sampling; an RBM with bernoulli; MC dropout; mixup with Beta, randperm and
cutout; init of Bilinear, MultiheadAttention (kdim/vdim, bias_kv), Transformer, ConvTranspose, Conv3d, LSTM with
proj_size, cells, EmbeddingBag, LazyLinear, float64 modules; sparse_, eye_, dirac_, orthogonal_ of non-square
shapes; exponential_/geometric_/cauchy_/log_normal_/random_, normal with tensor arguments, bernoulli with tensor
p, poisson, Gamma/Dirichlet/Binomial samples, the alpha/feature dropouts, RReLU, attention dropout; large draws
(randn(1001), bernoulli_ of 5001, randperm(70000), randint of ranges past 2**32, multinomial over 300 classes);
RandomSampler/SubsetRandomSampler/BatchSampler, get/set_rng_state (byte-equal to torch's; a torch state loads),
fork_rng, Generator get/set_state, seeds past 2**63 and negative; compiled steps drawing from a Generator object,
multinomial/bernoulli/randperm/Categorical inside the step, train/eval toggling, MultiheadAttention and
scaled_dot_product_attention dropout; dropout's p=0/p=1/empty edges (no draws), RReLU in place.

Not fixed (the sampler files are being rewritten by the lead): randn/normal_ of float16/bfloat16 with 16 or more
elements not a multiple of 16 (PyTorch 2.13 draws the remainder only once, in the redrawn last block); randint_like
of a non-contiguous input (PyTorch fills it in memory order); bernoulli_(p tensor) into a non-contiguous tensor
(raises a JAX ValueError).
"""
import warnings

import numpy as np
import pytest

from oracle import script_test, torchish


def _floats(xs):
    return [float(x) for x in xs]


def case_blitz_cnn_classifier(lib):
    """The 60-minute-blitz CNN on tiny synthetic images: default init, SGD with momentum."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(4, 6, 3)
            self.fc1 = nn.Linear(6 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = F.relu(self.conv2(x))
            x = lib.flatten(self.pool(x), 1)
            return self.fc2(F.relu(self.fc1(x)))

    net = Net()
    images = lib.randn(16, 3, 14, 14)
    labels = lib.randint(0, 10, (16,))
    criterion = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for epoch in range(3):
        running = 0.0
        for i in range(0, 16, 4):
            inputs, y = images[i:i + 4], labels[i:i + 4]
            optimizer.zero_grad()
            loss = criterion(net(inputs), y)
            loss.backward()
            optimizer.step()
            running += loss.item()
        losses.append(running / 4)
    net.eval()
    with lib.no_grad():
        _, predicted = lib.max(net(images), 1)
        acc = (predicted == labels).sum().item() / labels.size(0)
    return losses, acc, net.conv1.weight, net.fc2.bias, lib.rand(2)


def case_regression_mlp_dataloader_adam_steplr(lib, jit):
    """A regression MLP fed by DataLoader(shuffle=True), Adam and StepLR, dropout in training; the training step
    compiled (dropout's draws inside the compiled step)."""
    nn = lib.nn
    from_data = lib.utils.data
    lib.manual_seed(0)
    X = lib.randn(40, 5)
    y = X @ lib.randn(5, 1) + 0.1 * lib.randn(40, 1)
    loader = from_data.DataLoader(from_data.TensorDataset(X, y), batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loss_fn = nn.MSELoss()
    losses = []

    @jit
    def train_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    for epoch in range(3):
        model.train()
        total = 0.0
        for xb, yb in loader:
            total += train_step(xb, yb).item() * xb.size(0)
        sched.step()
        losses.append(total / len(loader.dataset))
    model.eval()
    with lib.no_grad():
        val = loss_fn(model(X), y).item()
    return losses, val, model[0].weight, model[3].bias, lib.rand(2)


def case_char_lstm_language_model(lib):
    """A char-level LSTM LM: Embedding, nn.LSTM(num_layers=2, dropout=0.3), dropout on the output, Adam,
    gradient clipping, then greedy scoring in eval mode."""
    nn = lib.nn
    lib.manual_seed(0)
    vocab, seq, batch = 11, 7, 3

    class CharLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, 8)
            self.rnn = nn.LSTM(8, 12, num_layers=2, dropout=0.3, batch_first=True)
            self.drop = nn.Dropout(0.25)
            self.head = nn.Linear(12, vocab)

        def forward(self, x, hidden=None):
            out, hidden = self.rnn(self.embed(x), hidden)
            return self.head(self.drop(out)), hidden

    model = CharLM()
    data = lib.randint(0, vocab, (batch, seq + 1))
    opt = lib.optim.Adam(model.parameters(), lr=3e-3)
    crit = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(3):
        model.train()
        logits, _ = model(data[:, :-1])
        loss = crit(logits.reshape(-1, vocab), data[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    model.eval()
    with lib.no_grad():
        logits, (h, c) = model(data[:, :-1])
        acc = (logits.argmax(-1) == data[:, 1:]).float().mean().item()
    return losses, acc, h, model.rnn.weight_hh_l1, model.head.weight, lib.rand(2)


def case_seq2seq_teacher_forcing(lib):
    """A GRU encoder-decoder with teacher forcing decided by a torch.rand coin each step."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    vocab, hid = 8, 10
    enc_emb, dec_emb = nn.Embedding(vocab, 6), nn.Embedding(vocab, 6)
    enc, dec = nn.GRU(6, hid, batch_first=True), nn.GRU(6, hid, batch_first=True)
    out_proj = nn.Linear(hid, vocab)
    drop = nn.Dropout(0.1)
    mods = nn.ModuleList([enc_emb, dec_emb, enc, dec, out_proj])
    opt = lib.optim.Adam(mods.parameters(), lr=5e-3)
    src = lib.randint(1, vocab, (4, 5))
    tgt = lib.flip(src, [1])
    losses, forced = [], []
    for epoch in range(3):
        mods.train()
        _, h = enc(drop(enc_emb(src)))
        tok = lib.zeros(4, 1, dtype=lib.long)
        loss = 0
        for t in range(tgt.size(1)):
            o, h = dec(drop(dec_emb(tok)), h)
            logits = out_proj(o[:, 0])
            loss = loss + F.cross_entropy(logits, tgt[:, t])
            teacher = lib.rand(1).item() < 0.5
            forced.append(teacher)
            tok = tgt[:, t:t + 1] if teacher else logits.argmax(-1, keepdim=True).detach()
        opt.zero_grad()
        (loss / tgt.size(1)).backward()
        opt.step()
        losses.append(loss.item() / tgt.size(1))
    mods.eval()
    with lib.no_grad():
        _, h = enc(enc_emb(src))
        tok = lib.zeros(4, 1, dtype=lib.long)
        preds = []
        for t in range(tgt.size(1)):
            o, h = dec(dec_emb(tok), h)
            tok = out_proj(o[:, 0]).argmax(-1, keepdim=True)
            preds.append(tok)
        acc = (lib.cat(preds, 1) == tgt).float().mean().item()
    return losses, forced, acc, dec.weight_hh_l0, lib.rand(2)


def case_vae_reparameterisation(lib, jit):
    """A VAE on rand data: randn_like in the reparameterisation, BCE + KL, Adam, the training step compiled;
    sampling from the prior."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(20, 16)
            self.fc21 = nn.Linear(16, 3)
            self.fc22 = nn.Linear(16, 3)
            self.fc3 = nn.Linear(3, 16)
            self.fc4 = nn.Linear(16, 20)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = lib.exp(0.5 * logvar)
            eps = lib.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            return lib.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 20))
            z = self.reparameterize(mu, logvar)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        bce = F.binary_cross_entropy(recon_x, x.view(-1, 20), reduction="sum")
        kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return bce + kld

    model = VAE()
    data = lib.rand(24, 20)
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    losses = []

    @jit
    def train_step(x):
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        loss = loss_function(recon, x, mu, logvar)
        loss.backward()
        optimizer.step()
        return loss

    for epoch in range(3):
        model.train()
        train_loss = 0
        for i in range(0, 24, 8):
            train_loss += train_step(data[i:i + 8]).item()
        losses.append(train_loss / 24)
    model.eval()
    with lib.no_grad():
        sample = model.decode(lib.randn(4, 3))
        recon, mu, logvar = model(data)
        test_loss = loss_function(recon, data, mu, logvar).item()
    return losses, test_loss, sample, model.fc21.weight, lib.rand(2)


def case_gan_two_optimizers(lib):
    """A small GAN: generator and discriminator with their own Adam, detach() for the D step,
    BCEWithLogitsLoss, LeakyReLU and dropout in D."""
    nn = lib.nn
    lib.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Dropout(0.3), nn.Linear(16, 1))
    optG = lib.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optD = lib.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    crit = nn.BCEWithLogitsLoss()
    real_data = lib.randn(32, 2) * 0.5 + lib.tensor([2.0, -1.0])
    d_losses, g_losses = [], []
    for epoch in range(3):
        for i in range(0, 32, 16):
            real = real_data[i:i + 16]
            b = real.size(0)
            ones, zeros = lib.ones(b, 1), lib.zeros(b, 1)
            z = lib.randn(b, 4)
            fake = G(z)
            optD.zero_grad()
            d_loss = crit(D(real), ones) + crit(D(fake.detach()), zeros)
            d_loss.backward()
            optD.step()
            optG.zero_grad()
            g_loss = crit(D(fake), ones)
            g_loss.backward()
            optG.step()
        d_losses.append(d_loss.item())
        g_losses.append(g_loss.item())
    G.eval()
    D.eval()
    with lib.no_grad():
        samples = G(lib.randn(5, 4))
        score = lib.sigmoid(D(samples)).mean().item()
    return d_losses, g_losses, samples, score, G[2].weight, lib.rand(2)


def case_transformer_encoder_classifier(lib, jit):
    """A Transformer encoder classifier: Embedding + learned positions, TransformerEncoderLayer(dropout,
    batch_first), mean pooling, AdamW with the training step compiled, a padding mask in eval."""
    nn = lib.nn
    lib.manual_seed(0)
    vocab, d, L = 13, 8, 6

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d, padding_idx=0)
            self.pos = nn.Parameter(lib.zeros(1, L, d))
            layer = nn.TransformerEncoderLayer(d, nhead=2, dim_feedforward=16, dropout=0.1, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
            self.fc = nn.Linear(d, 3)

        def forward(self, x, mask=None):
            h = self.encoder(self.emb(x) + self.pos, src_key_padding_mask=mask)
            return self.fc(h.mean(1))

    model = Classifier()
    nn.init.normal_(model.pos, std=0.02)
    x = lib.randint(1, vocab, (8, L))
    y = lib.randint(0, 3, (8,))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    @jit
    def train_step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    losses = []
    for epoch in range(3):
        model.train()
        losses.append(train_step(x, y).item())
    model.eval()
    with lib.no_grad():
        mask = lib.zeros(8, L, dtype=lib.bool)
        mask[:, -2:] = True
        logits = model(x, mask)
        acc = (logits.argmax(1) == y).float().mean().item()
    return losses, acc, logits, model.encoder.layers[0].linear1.weight, lib.rand(2)


def case_resnet_block_batchnorm_dropout2d(lib):
    """A ResNet-ish basic block with BatchNorm2d and Dropout2d, SGD with nesterov and weight decay,
    CosineAnnealingLR, running stats in eval."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.drop = nn.Dropout2d(0.2)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(self.drop(out)))
            return F.relu(out + self.shortcut(x))

    model = nn.Sequential(BasicBlock(3, 6, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4))
    x = lib.randn(6, 3, 6, 6)
    y = lib.randint(0, 4, (6,))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    losses = []
    for epoch in range(3):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with lib.no_grad():
        out = model(x)
    block = model[0]
    return (losses, out, block.bn2.running_mean, block.bn2.running_var, block.shortcut[1].num_batches_tracked,
            block.conv1.weight, lib.rand(2))


def case_autoencoder_weight_decay_clipping(lib):
    """A dense autoencoder with Adam(weight_decay), clip_grad_norm_ and clip_grad_value_, ReduceLROnPlateau, and a
    denoising input from randn_like."""
    nn = lib.nn
    lib.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(12, 6), nn.Tanh(), nn.Linear(6, 3))
    decoder = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Dropout(0.1), nn.Linear(6, 12))
    model = nn.Sequential(encoder, decoder)
    opt = lib.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    data = lib.rand(20, 12)
    losses, norms = [], []
    for epoch in range(3):
        model.train()
        noisy = data + 0.1 * lib.randn_like(data)
        loss = nn.functional.mse_loss(model(noisy), data)
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5).item())
        nn.utils.clip_grad_value_(model.parameters(), 0.05)
        opt.step()
        sched.step(loss.item())
        losses.append(loss.item())
    model.eval()
    with lib.no_grad():
        codes = encoder(data)
    return losses, norms, opt.param_groups[0]["lr"], codes, decoder[3].weight, lib.rand(2)


def case_custom_init_weights(lib):
    """A GPT-style ``_init_weights`` applied with Module.apply: xavier_uniform_, normal_(std=0.02), zeros_, ones_,
    trunc_normal_, orthogonal_, kaiming_normal_/kaiming_uniform_, uniform_, constant_; then two Adam steps."""
    nn = lib.nn
    lib.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)
            self.mix = nn.Linear(8, 8)  # orthogonal_
            self.gate = nn.Linear(8, 8)  # kaiming_normal_, constant_ bias
            self.conv = nn.Conv1d(8, 8, 1)  # kaiming_uniform_, uniform_ bias

        def forward(self, x):
            h = self.ln(x)
            h = self.mix(h) * lib.sigmoid(self.gate(h))
            return x + self.conv(h.transpose(1, 2)).transpose(1, 2)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 8)
            self.proj = nn.Linear(8, 8)
            self.block = Block()
            self.head = nn.Linear(8, 10, bias=False)
            self.cls = nn.Parameter(lib.empty(1, 1, 8))
            self.apply(self._init_weights)
            nn.init.trunc_normal_(self.cls, std=0.02)

        def _init_weights(self, m):
            if isinstance(m, Block):
                nn.init.orthogonal_(m.mix.weight, gain=nn.init.calculate_gain("tanh"))
                nn.init.kaiming_normal_(m.gate.weight, nonlinearity="relu")
                nn.init.constant_(m.gate.bias, 0.1)
                nn.init.kaiming_uniform_(m.conv.weight, a=0.1, mode="fan_out")
                nn.init.uniform_(m.conv.bias, -0.1, 0.1)
            elif isinstance(m, nn.Linear) and m.out_features == 10:
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            elif isinstance(m, nn.Linear) and m is self.proj:
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

        def forward(self, idx):
            return self.head(self.block(self.proj(self.wte(idx) + self.cls)))

    model = Model()
    init = [p.detach().clone() for p in model.parameters()]
    idx = lib.randint(0, 10, (2, 5))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(2):
        loss = nn.functional.cross_entropy(model(idx).flatten(0, 1), idx.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return init, losses, model.block.mix.weight, lib.rand(2)


def case_random_split_weighted_sampler(lib):
    """random_split with a seeded Generator and fractions, a WeightedRandomSampler with class-balancing weights
    on the training subset, and a sequential validation loader."""
    nn, data = lib.nn, lib.utils.data
    lib.manual_seed(0)
    X = lib.randn(30, 4)
    y = (lib.rand(30) < 0.3).long()
    ds = data.TensorDataset(X, y)
    train_ds, val_ds = data.random_split(ds, [0.8, 0.2], generator=lib.Generator().manual_seed(42))
    train_labels = y[lib.tensor(train_ds.indices)]
    counts = lib.bincount(train_labels, minlength=2).float()
    weights = (1.0 / counts)[train_labels]
    sampler = data.WeightedRandomSampler(weights, num_samples=len(train_ds), replacement=True)
    train_loader = data.DataLoader(train_ds, batch_size=6, sampler=sampler)
    val_loader = data.DataLoader(val_ds, batch_size=6)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 2))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    losses, seen = [], []
    for epoch in range(3):
        model.train()
        total = 0.0
        for xb, yb in train_loader:
            seen.append(yb.tolist())
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total / len(train_loader))
    model.eval()
    correct = 0
    with lib.no_grad():
        for xb, yb in val_loader:
            correct += (model(xb).argmax(1) == yb).sum().item()
    return list(train_ds.indices), list(val_ds.indices), seen, losses, correct / len(val_ds), lib.rand(2)


def case_generator_object_dataloader(lib):
    """A torch.Generator passed to DataLoader(shuffle=True) and to randn/randint/randperm/dropout-free
    augmentation, leaving the global stream alone until the end."""
    nn, data = lib.nn, lib.utils.data
    lib.manual_seed(0)
    g = lib.Generator()
    g.manual_seed(1234)
    X = lib.randn(24, 3, generator=g)
    y = lib.randint(0, 2, (24,), generator=g)
    loader = data.DataLoader(data.TensorDataset(X, y), batch_size=6, shuffle=True, generator=g)
    model = nn.Linear(3, 2)
    opt = lib.optim.RMSprop(model.parameters(), lr=1e-2)
    losses, orders = [], []
    for epoch in range(3):
        for xb, yb in loader:
            xb = xb + 0.05 * lib.randn(xb.shape, generator=g)
            perm = lib.randperm(xb.size(0), generator=g)
            orders.append(perm.tolist())
            loss = nn.functional.cross_entropy(model(xb[perm]), yb[perm])
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(loss.item())
    return losses, orders, model.weight, g.initial_seed(), lib.rand(2, generator=g), lib.rand(2)


def case_ddpm_noise_prediction(lib):
    """A DDPM toy: randint timesteps, randn_like noise, an MLP noise predictor with SiLU, then ancestral sampling
    with fresh randn_like noise at each step."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    T = 10
    betas = lib.linspace(1e-4, 0.2, T)
    alphas = 1 - betas
    alpha_bar = lib.cumprod(alphas, 0)
    net = nn.Sequential(nn.Linear(3, 32), nn.SiLU(), nn.Linear(32, 2))
    opt = lib.optim.Adam(net.parameters(), lr=1e-3)
    data = lib.randn(32, 2) * 0.3 + 1.0
    losses = []
    for epoch in range(3):
        for i in range(0, 32, 16):
            x0 = data[i:i + 16]
            t = lib.randint(0, T, (x0.shape[0],))
            noise = lib.randn_like(x0)
            a = alpha_bar[t].unsqueeze(1)
            xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
            loss = F.mse_loss(net(lib.cat([xt, t.float().unsqueeze(1) / T], 1)), noise)
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(loss.item())
    with lib.no_grad():
        x = lib.randn(4, 2)
        for t in reversed(range(T)):
            eps = net(lib.cat([x, lib.full((4, 1), t / T)], 1))
            x = (x - betas[t] / (1 - alpha_bar[t]).sqrt() * eps) / alphas[t].sqrt()
            if t > 0:
                x = x + betas[t].sqrt() * lib.randn_like(x)
    return losses, x, net[2].weight, lib.rand(2)


def case_bert_masking_and_reinforce(lib):
    """BERT's masked-LM data collator (bernoulli of full probability matrices, randint replacement words) and a
    REINFORCE policy sampling actions from distributions.Categorical, with dropout in the policy."""
    nn = lib.nn
    lib.manual_seed(0)
    inputs = lib.randint(5, 30, (4, 12))
    labels = inputs.clone()
    probability_matrix = lib.full(labels.shape, 0.15)
    probability_matrix.masked_fill_(inputs == 7, value=0.0)
    masked = lib.bernoulli(probability_matrix).bool()
    labels[~masked] = -100
    replaced = lib.bernoulli(lib.full(labels.shape, 0.8)).bool() & masked
    inputs[replaced] = 3
    randomized = lib.bernoulli(lib.full(labels.shape, 0.5)).bool() & masked & ~replaced
    random_words = lib.randint(30, labels.shape, dtype=lib.long)
    inputs[randomized] = random_words[randomized]

    policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3))
    opt = lib.optim.Adam(policy.parameters(), lr=1e-2)
    episode_rewards = []
    for episode in range(3):
        state = lib.rand(4)
        log_probs, rewards = [], []
        for t in range(6):
            m = lib.distributions.Categorical(logits=policy(state))
            action = m.sample()
            log_probs.append(m.log_prob(action))
            rewards.append(float(action.item() == 1) + 0.1 * lib.randn(()).item())
            state = lib.rand(4) + 0.1 * action.float()
        R, returns = 0.0, []
        for r in reversed(rewards):
            R = r + 0.99 * R
            returns.insert(0, R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = -(lib.stack(log_probs) * returns).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        episode_rewards.append(sum(rewards))
    return inputs, labels, episode_rewards, policy[3].weight, lib.rand(2)


def case_checkpoint_with_dropout(lib):
    """torch.utils.checkpoint over a block with dropout and randn_like (both use_reentrant settings): the
    recomputation replays the forward's draws, and the global stream continues from after the forward."""
    nn = lib.nn
    lib.manual_seed(0)
    lin1, lin2 = nn.Linear(8, 8), nn.Linear(8, 1)
    drop = nn.Dropout(0.5)
    x = lib.randn(4, 8, requires_grad=True)

    def block(h):
        return drop(lib.relu(lin1(h))) + lib.randn_like(h) * 0.1

    y = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    between = lib.rand(3)
    lin2(y).sum().backward()
    y2 = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=True)
    lin2(y2).sum().backward()
    return y, y2, between, x.grad, lin1.weight.grad, lib.rand(2)


def case_wishart_prior(lib):
    """A seeded Bayesian toy: covariances from a Wishart prior (a batch of df and a sample shape), then data from
    MultivariateNormal with one of them. PyTorch 2.13's Wishart.rsample redraws every positive-definite first draw
    (its first singularity test is the wrong way round) and warns; torchish kept the first draw, so every later
    number was out of step (fixed)."""
    D = lib.distributions
    lib.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        covs = D.Wishart(df=lib.tensor([3.5, 6.0]), covariance_matrix=lib.eye(2)).rsample((2,))
    messages = sorted({str(w.message) for w in caught})
    data = D.MultivariateNormal(lib.zeros(2), covariance_matrix=covs[0, 1]).sample((5,))
    return covs, messages, data, lib.rand(2)


test_script_matches_torch = script_test(globals())


def test_cholesky_ex_never_reports_success_for_a_nan_factor():
    """Rank-2 3x3 Gram matrices (the third pivot is rounding noise): where XLA's factorization fails (a NaN factor),
    cholesky_ex's info is a positive order, eagerly and compiled, as LAPACK's is for a failed factor. The check
    that re-eliminates to find LAPACK's order used to find every pivot positive for some of them and answer 0 —
    success with a NaN factor (and linalg.cholesky returned the NaNs silently; a Wishart scored such samples as
    positive-definite)."""
    k = np.arange(40 * 3 * 2, dtype=np.float32).reshape(40, 3, 2)
    b = np.cos(k * 0.37 + 0.2).astype(np.float32)
    a = torchish.tensor(b @ b.transpose(0, 2, 1))
    res = torchish.linalg.cholesky_ex(a)
    failed = np.isnan(res.L.numpy()).any((1, 2))
    if not failed.any():
        pytest.skip("XLA factored every matrix on this host: no failed factor to check")
    for info in (res.info.numpy(), torchish.compile(lambda m: torchish.linalg.cholesky_ex(m).info)(a).numpy()):
        np.testing.assert_array_equal(info > 0, failed)
        assert set(info[failed]) <= {2, 3}
