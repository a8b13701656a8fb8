"""Seeded tutorial programs (pytorch.org/tutorials and the blog posts that copy them), run with torch 2.13 and with
torchish from ``torch.manual_seed`` with default initialisation: the character-level RNN name classifier (one-hot
rows written by ``tensor[li][0][i] = 1``) and name generator (dropout, ``loss += l``, greedy and multinomial
sampling; test_probe_scripts28's copy merged in), the BiLSTM-CRF tagger (0-d tensors as indices, Viterbi by Python
loops), Gaussian-process regression (cdist, cholesky_solve, solve_triangular, slogdet), a hand-written bidirectional
LSTM writing ``outputs[:, t] = h``, an energy-based model sampled by Langevin dynamics through ``.data`` (the UvA
tutorial's replay buffer) and a DQN against a CartPole written in numpy (numpy bools and float32 rewards in
``torch.tensor([reward, done])``). Each ``case_*`` is written against the PyTorch API only and compared with torch
by ``assert_script_matches`` (tests/oracle.py). The fusing-Conv2d+BatchNorm2d tutorial that was here is
test_probe_scripts29's ``fuse_conv_bn_custom_function`` (the two copies merged there).

Fixed here: numpy scalars where PyTorch's parser takes them (np.int64 sizes of a TransformerEncoderLayer,
matrix_power, movedim, ``Tensor(np.int64(2))``; a np.float32 dropout probability drew a float32 bernoulli) or
refuses them (distribution parameters other than int/float/bool), tested by
test_numpy_scalars_as_int_and_float_arguments; ``torch.tensor([0.5, np.True_])`` raised 'must be real number, not
complex', linspace steps and roll shifts of numpy integers, 0-d arrays in lists (test_creation.py,
test_ops_shape.py); frexp of subnormals (test_numeric.py).

Also probed and matching (kept out for time): a Kalman filter and RTS smoother written into preallocated tensors by
integer indices, log-domain Sinkhorn, Poincare embeddings (Embedding(max_norm), renorm, a Riemannian SGD step by
hand), the nn.Transformer translation tutorial (generate_square_subsequent_mask, padding masks, greedy decoding) and
TransformerEncoder's eval fast path with a padding mask, the empirical NTK tutorial (torch.func vmap/jacrev/vjp/jvp
+ einsum), vmap with randomness='different'/'same', grad_and_value/jacfwd/hessian/linearize,
autograd.grad(is_grads_batched=True), a windowed LSTM forecaster fed by a custom bucketing Sampler and a pad/pack
collate_fn, DataLoader workers drawing random augmentations, k-means with boolean-mask centroid updates, DANN's
gradient-reversal Function, a Hamiltonian NN (autograd.grad with create_graph, functional.hessian and jacobian), the
AG_NEWS EmbeddingBag classifier (offsets collate, random_split, StepLR), variational Bayesian regression
(kl_divergence, rsample), a MixtureSameFamily GMM and a TransformedDistribution flow, a checkpoint through BytesIO
with the RNG state and a SequentialLR resumed mid-schedule, compiled hand-written LSTM (OneCycleLR), CRF and
Kalman-filter steps, chained view writes (``y[t][1:] =``, ``y.T[t] =``, ``z.unfold(0, 2, 1)[t][1][t] =``) eager and
compiled, tensor hooks registered in loops, an LBFGS fit under set_default_dtype(float64), ImageNet's top-k accuracy
and confusion-matrix metrics, seeded samples of ~40 distributions and in-place samplers, the Tensors/Autograd
tutorials' prints and reprs.
"""
import math

import numpy as np
import pytest

from oracle import same, same_error, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_char_rnn_classify_and_generate(lib):
    """"NLP From Scratch": the character-level RNN name classifier and name generator. Classifier: names turned
    to ASCII by ``unicodedata``, one-hot letters set by chained indexing (``tensor[li][0][i] = 1``), an RNN of
    Linear layers with tanh and LogSoftmax unrolled by ``line_tensor[i]``, training examples drawn by ``randint``,
    manual SGD by ``p.data.add_(p.grad.data, alpha=-lr)``, ``topk`` categories, a confusion matrix filled by
    ``confusion[i][j] += 1`` and normalised row by row. Generator: category + letter + hidden concatenated, dropout,
    a ``Tensor([0])`` loss accumulated by ``loss += l`` over ``LongTensor`` targets ``unsqueeze_``d, then greedy
    ``topk`` decoding in eval mode and ``multinomial`` sampling (of ``output.data.view(-1).div(0.8).exp()`` in eval
    mode, of ``output.exp()`` with dropout on), a letter picked by a 0-d tensor index. Default initialisation from
    ``manual_seed``. Every name has five letters: the engine compiles one backward program per graph shape, and a
    length per name made the program's XLA compiles several times longer without reaching more of the library."""
    import string
    import unicodedata
    nn = lib.nn
    lib.manual_seed(0)
    all_letters = string.ascii_letters + " .,;'"
    n_letters = len(all_letters)

    def unicodeToAscii(s):
        return ''.join(c for c in unicodedata.normalize('NFD', s)
                       if unicodedata.category(c) != 'Mn' and c in all_letters)

    category_lines = {"Czech": ["Novák", "Černý"], "French": ["Fèvre", "Godin"], "Irish": ["O'Dea", "Kelly"]}
    all_categories = list(category_lines)
    n_categories = len(all_categories)
    category_lines = {k: [unicodeToAscii(s) for s in v] for k, v in category_lines.items()}

    def letterToTensor(letter):
        tensor = lib.zeros(1, n_letters)
        tensor[0][all_letters.find(letter)] = 1
        return tensor

    def lineToTensor(line):
        tensor = lib.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][all_letters.find(letter)] = 1
        return tensor

    res = {"ascii": category_lines, "J": letterToTensor('J').nonzero(), "Jones": lineToTensor('Jones').size()}

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size, hidden_size)
            self.h2h = nn.Linear(hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            hidden = lib.nn.functional.tanh(self.i2h(input) + self.h2h(hidden))
            output = self.h2o(hidden)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return lib.zeros(1, self.hidden_size)

    n_hidden = 8
    rnn = RNN(n_letters, n_hidden, n_categories)
    output, next_hidden = rnn(lineToTensor('Albert')[0], lib.zeros(1, n_hidden))
    res["out0"] = output

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return all_categories[category_i], category_i

    res["cat0"] = categoryFromOutput(output)
    criterion = nn.NLLLoss()
    learning_rate = 0.05

    def evaluate(line_tensor):
        hidden = rnn.initHidden()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        return output

    losses = []
    for _ in range(8):
        category = all_categories[lib.randint(0, n_categories, (1,)).item()]
        line = category_lines[category][lib.randint(0, 2, (1,)).item()]
        category_tensor = lib.tensor([all_categories.index(category)], dtype=lib.long)
        rnn.zero_grad()
        output = evaluate(lineToTensor(line))
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        guess, guess_i = categoryFromOutput(output)
        losses.append((loss.item(), guess, '✓' if guess == category else '✗ (%s)' % category))
    res["train"] = losses, rnn.i2h.weight.grad
    confusion = lib.zeros(n_categories, n_categories)
    with lib.no_grad():
        for category in all_categories:
            for line in category_lines[category]:
                top_n, top_i = evaluate(lineToTensor(line)).topk(1)
                confusion[all_categories.index(category)][top_i[0].item()] += 1
    for i in range(n_categories):
        confusion[i] = confusion[i] / confusion[i].sum()
    res["confusion"] = confusion, top_n, top_i

    class GenRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
            self.o2o = nn.Linear(hidden_size + output_size, output_size)
            self.dropout = nn.Dropout(0.1)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, category, input, hidden):
            input_combined = lib.cat((category, input, hidden), 1)
            hidden = self.i2h(input_combined)
            output = self.i2o(input_combined)
            output_combined = lib.cat((hidden, output), 1)
            output = self.o2o(output_combined)
            output = self.dropout(output)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return lib.zeros(1, self.hidden_size)

    gen = GenRNN(n_letters, n_hidden, n_letters + 1)
    eos = n_letters

    def categoryTensor(category):
        tensor = lib.zeros(1, n_categories)
        tensor[0][all_categories.index(category)] = 1
        return tensor

    def targetTensor(line):
        letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
        letter_indexes.append(eos)
        return lib.LongTensor(letter_indexes)

    gen_losses = []
    for _ in range(6):
        category = all_categories[lib.randint(0, n_categories, (1,)).item()]
        line = category_lines[category][lib.randint(0, 2, (1,)).item()]
        category_tensor, input_line_tensor = categoryTensor(category), lineToTensor(line)
        target_line_tensor = targetTensor(line)
        target_line_tensor.unsqueeze_(-1)
        hidden = gen.initHidden()
        gen.zero_grad()
        loss = lib.Tensor([0])
        for i in range(input_line_tensor.size(0)):
            output, hidden = gen(category_tensor, input_line_tensor[i], hidden)
            l = criterion(output, target_line_tensor[i])
            loss += l
        loss.backward()
        for p in gen.parameters():
            p.data.add_(p.grad.data, alpha=-0.05)
        gen_losses.append(loss.item() / input_line_tensor.size(0))
    res["gen_losses"] = gen_losses, loss, gen.o2o.weight

    def sample(category, start_letter='A', max_length=6, how="multinomial"):
        with lib.no_grad():
            category_tensor = categoryTensor(category)
            input = lineToTensor(start_letter)
            hidden = gen.initHidden()
            output_name = start_letter
            for i in range(max_length):
                output, hidden = gen(category_tensor, input[0], hidden)
                if how == "greedy":
                    topv, topi = output.topk(1)
                    topi = topi[0][0]
                elif how == "temperature":
                    topi = lib.multinomial(output.data.view(-1).div(0.8).exp(), 1)[0]
                else:
                    topi = lib.multinomial(output.exp(), 1)[0][0]
                if topi == eos:
                    break
                letter = all_letters[topi]
                output_name += letter
                input = lineToTensor(letter)
            return output_name

    gen.eval()
    res["greedy"] = [sample(c, s, how="greedy") for c, s in zip(all_categories, "DLK")]
    res["temperature"] = [sample(c, s, how="temperature") for c, s in zip(all_categories, "DLK")]
    gen.train()
    res["sampled"] = [sample(c, s) for c, s in zip(all_categories, "DLK")]
    res["r"] = lib.rand(2)
    return res


def case_bilstm_crf_tagger(lib):
    """"Advanced: Making Dynamic Decisions and the Bi-LSTM CRF": transitions written through ``.data[i, :]``, the
    forward algorithm over ``feat[next_tag].view(1, -1).expand(1, n)`` with a list of alphas, the gold path score
    indexed by 0-d tensors ``transitions[tags[i + 1], tags[i]]``, Viterbi decoding with back pointers, SGD with
    weight decay."""
    nn = lib.nn
    lib.manual_seed(1)
    START_TAG, STOP_TAG = "<START>", "<STOP>"

    def argmax(vec):
        _, idx = lib.max(vec, 1)
        return idx.item()

    def prepare_sequence(seq, to_ix):
        return lib.tensor([to_ix[w] for w in seq], dtype=lib.long)

    def log_sum_exp(vec):
        max_score = vec[0, argmax(vec)]
        max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
        return max_score + lib.log(lib.sum(lib.exp(vec - max_score_broadcast)))

    class BiLSTM_CRF(nn.Module):
        def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.tag_to_ix = tag_to_ix
            self.tagset_size = len(tag_to_ix)
            self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
            self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
            self.transitions = nn.Parameter(lib.randn(self.tagset_size, self.tagset_size))
            self.transitions.data[tag_to_ix[START_TAG], :] = -10000
            self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
            self.hidden = self.init_hidden()

        def init_hidden(self):
            return (lib.randn(2, 1, self.hidden_dim // 2), lib.randn(2, 1, self.hidden_dim // 2))

        def _forward_alg(self, feats):
            init_alphas = lib.full((1, self.tagset_size), -10000.)
            init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
            forward_var = init_alphas
            for feat in feats:
                alphas_t = []
                for next_tag in range(self.tagset_size):
                    emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                    trans_score = self.transitions[next_tag].view(1, -1)
                    next_tag_var = forward_var + trans_score + emit_score
                    alphas_t.append(log_sum_exp(next_tag_var).view(1))
                forward_var = lib.cat(alphas_t).view(1, -1)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            return log_sum_exp(terminal_var)

        def _get_lstm_features(self, sentence):
            self.hidden = self.init_hidden()
            embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
            lstm_out, self.hidden = self.lstm(embeds, self.hidden)
            return self.hidden2tag(lstm_out.view(len(sentence), self.hidden_dim))

        def _score_sentence(self, feats, tags):
            score = lib.zeros(1)
            tags = lib.cat([lib.tensor([self.tag_to_ix[START_TAG]], dtype=lib.long), tags])
            for i, feat in enumerate(feats):
                score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
            return score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]

        def _viterbi_decode(self, feats):
            backpointers = []
            init_vvars = lib.full((1, self.tagset_size), -10000.)
            init_vvars[0][self.tag_to_ix[START_TAG]] = 0
            forward_var = init_vvars
            for feat in feats:
                bptrs_t, viterbivars_t = [], []
                for next_tag in range(self.tagset_size):
                    next_tag_var = forward_var + self.transitions[next_tag]
                    best_tag_id = argmax(next_tag_var)
                    bptrs_t.append(best_tag_id)
                    viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
                forward_var = (lib.cat(viterbivars_t) + feat).view(1, -1)
                backpointers.append(bptrs_t)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            best_tag_id = argmax(terminal_var)
            path_score = terminal_var[0][best_tag_id]
            best_path = [best_tag_id]
            for bptrs_t in reversed(backpointers):
                best_tag_id = bptrs_t[best_tag_id]
                best_path.append(best_tag_id)
            start = best_path.pop()
            best_path.reverse()
            return path_score, best_path, start

        def neg_log_likelihood(self, sentence, tags):
            feats = self._get_lstm_features(sentence)
            return self._forward_alg(feats) - self._score_sentence(feats, tags)

        def forward(self, sentence):
            return self._viterbi_decode(self._get_lstm_features(sentence))

    training_data = [("the wall street journal reported".split(), "B I I I O".split()),  # (one length: one compile)
                     ("georgia tech is a university".split(), "B I O O O".split())]
    word_to_ix = {}
    for sentence, tags in training_data:
        for word in sentence:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
    model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, 5, 4)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    with lib.no_grad():
        before = model(prepare_sequence(training_data[0][0], word_to_ix))
    losses = []
    for epoch in range(2):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = lib.tensor([tag_to_ix[t] for t in tags], dtype=lib.long)
            loss = model.neg_log_likelihood(sentence_in, targets)
            loss.backward()
            optimizer.step()
            losses.append(loss)
    with lib.no_grad():
        after = model(prepare_sequence(training_data[0][0], word_to_ix))
    return before, after, losses, model.transitions, model.lstm.weight_hh_l0_reverse.grad, lib.rand(2)



def case_gp_regression(lib):
    """Exact GP regression written by hand: RBF kernel by cdist, Cholesky, cholesky_solve, the negative log marginal
    likelihood with softplus-constrained hyper-parameters trained by Adam, predictive mean and variance by
    solve_triangular."""
    lib.manual_seed(0)
    X = lib.linspace(0, 5, 12).unsqueeze(-1)
    y = lib.sin(X).squeeze(-1) + 0.1 * lib.randn(12)
    Xs = lib.linspace(-0.5, 5.5, 7).unsqueeze(-1)
    raw_ls = lib.zeros(1, requires_grad=True)
    raw_sf = lib.zeros(1, requires_grad=True)
    raw_sn = lib.full((1,), -2.0, requires_grad=True)
    F = lib.nn.functional

    def kernel(a, b, ls, sf):
        d2 = lib.cdist(a / ls, b / ls).pow(2)
        return sf ** 2 * lib.exp(-0.5 * d2)

    opt = lib.optim.Adam([raw_ls, raw_sf, raw_sn], lr=0.05)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        ls, sf, sn = F.softplus(raw_ls), F.softplus(raw_sf), F.softplus(raw_sn) + 1e-4
        K = kernel(X, X, ls, sf) + sn ** 2 * lib.eye(12)
        L = lib.linalg.cholesky(K)
        alpha = lib.cholesky_solve(y.unsqueeze(-1), L)
        nll = 0.5 * (y.unsqueeze(-1) * alpha).sum() + lib.log(lib.diagonal(L)).sum() + 6 * math.log(2 * math.pi)
        nll.backward()
        opt.step()
        losses.append(nll.item())
    with lib.no_grad():
        ls, sf, sn = F.softplus(raw_ls), F.softplus(raw_sf), F.softplus(raw_sn) + 1e-4
        K = kernel(X, X, ls, sf) + sn ** 2 * lib.eye(12)
        L = lib.linalg.cholesky(K)
        Ks = kernel(X, Xs, ls, sf)
        alpha = lib.cholesky_solve(y.unsqueeze(-1), L)
        mean = (Ks.T @ alpha).squeeze(-1)
        v = lib.linalg.solve_triangular(L, Ks, upper=False)
        var = sf ** 2 - (v ** 2).sum(0)
        logdet = lib.logdet(K)
        sign, ld2 = lib.linalg.slogdet(K)
    return losses, mean, var, logdet, sign, ld2, raw_ls.grad, raw_sn, lib.rand(2)


def case_hand_lstm_outputs_by_index(lib):
    """A hand-written (bidirectional) LSTM as blog posts write it: gates from one Linear chunked in four,
    ``x[:, t]`` in the loop, ``outputs[:, t] = h`` into a preallocated zeros tensor (forward) and
    ``outputs_b[:, t] = h`` for ``t in reversed(range(T))``, concatenated, a classifier head, Adam."""
    nn = lib.nn
    lib.manual_seed(0)

    class LSTMCell(nn.Module):
        def __init__(self, n_in, n_hid):
            super().__init__()
            self.n_hid = n_hid
            self.x2h = nn.Linear(n_in, 4 * n_hid)
            self.h2h = nn.Linear(n_hid, 4 * n_hid, bias=False)

        def forward(self, x, hc):
            h, c = hc
            gates = self.x2h(x) + self.h2h(h)
            i, f, g, o = gates.chunk(4, 1)
            c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)
            h = lib.sigmoid(o) * lib.tanh(c)
            return h, c

    class BiLSTM(nn.Module):
        def __init__(self, n_in, n_hid, n_cls):
            super().__init__()
            self.fw, self.bw = LSTMCell(n_in, n_hid), LSTMCell(n_in, n_hid)
            self.n_hid = n_hid
            self.fc = nn.Linear(2 * n_hid, n_cls)

        def forward(self, x):
            B, T, _ = x.shape
            out_f = lib.zeros(B, T, self.n_hid)
            out_b = lib.zeros(B, T, self.n_hid)
            h = c = x.new_zeros(B, self.n_hid)
            for t in range(T):
                h, c = self.fw(x[:, t], (h, c))
                out_f[:, t] = h
            h = c = x.new_zeros(B, self.n_hid)
            for t in reversed(range(T)):
                h, c = self.bw(x[:, t, :], (h, c))
                out_b[:, t] = h
            out = lib.cat([out_f, out_b], dim=-1)
            return self.fc(out.mean(1)), out

    model = BiLSTM(3, 5, 2)
    x = lib.randn(4, 6, 3)
    y = lib.tensor([0, 1, 1, 0])
    opt = lib.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        logits, out = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, out, model.fw.h2h.weight.grad, model.bw.x2h.bias, lib.rand(2)


def case_ebm_langevin(lib):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.SiLU(), nn.Linear(16, 16), nn.SiLU(), nn.Linear(16, 1))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3, betas=(0.0, 0.999))
    buffer = [(lib.rand((1, 2)) * 2 - 1) for _ in range(16)]
    data = lib.randn(8, 2) * 0.3 + 0.5

    def generate_samples(model, inp_imgs, steps=5, step_size=0.1):
        is_training = model.training
        model.eval()
        for p in model.parameters():
            p.requires_grad = False
        inp_imgs.requires_grad = True
        had_gradients_enabled = lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        noise = lib.randn(inp_imgs.shape, device=inp_imgs.device)
        for _ in range(steps):
            noise.normal_(0, 0.005)
            inp_imgs.data.add_(noise.data)
            inp_imgs.data.clamp_(min=-1.0, max=1.0)
            out_imgs = -model(inp_imgs)
            out_imgs.sum().backward()
            inp_imgs.grad.data.clamp_(-0.03, 0.03)
            inp_imgs.data.add_(-step_size * inp_imgs.grad.data)
            inp_imgs.grad.detach_()
            inp_imgs.grad.zero_()
            inp_imgs.data.clamp_(min=-1.0, max=1.0)
        for p in model.parameters():
            p.requires_grad = True
        model.train(is_training)
        lib.set_grad_enabled(had_gradients_enabled)
        return inp_imgs

    def sample_new_exmps(steps=5, step_size=0.1):
        n_new = int(lib.binomial(lib.tensor(8.0), lib.tensor(0.05)).item())
        rand_imgs = lib.rand((n_new, 2)) * 2 - 1
        old_imgs = lib.cat([buffer[i] for i in lib.randint(0, len(buffer), (8 - n_new,))], dim=0)
        inp_imgs = lib.cat([rand_imgs, old_imgs], dim=0).detach()
        inp_imgs = generate_samples(model, inp_imgs, steps=steps, step_size=step_size)
        buffer[:0] = list(inp_imgs.to(lib.device("cpu")).chunk(8, dim=0))
        del buffer[16:]
        return inp_imgs, n_new

    hist = []
    for _ in range(3):
        real = data + lib.randn_like(data) * 0.005
        real = real.clamp(min=-1.0, max=1.0)
        fake, n_new = sample_new_exmps()
        inp = lib.cat([real, fake], dim=0)
        real_out, fake_out = model(inp).chunk(2, dim=0)
        reg_loss = 0.1 * (real_out ** 2 + fake_out ** 2).mean()
        cdiv_loss = fake_out.mean() - real_out.mean()
        loss = reg_loss + cdiv_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append((loss.item(), n_new))
    return hist, lib.cat(buffer[:4]), model[0].weight, fake.requires_grad, lib.rand(2)


def case_numpy_env_dqn(lib):
    """A DQN loop against a CartPole environment written in numpy (as gym's): float64 observations through
    ``torch.from_numpy(obs).float()``, numpy bool ``done`` and float rewards stacked by ``torch.tensor([r, done])``,
    a replay buffer of tuples turned into batches by ``np.array`` + ``torch.as_tensor``, epsilon-greedy actions from
    ``torch.rand`` and ``randint``, a target network by ``load_state_dict``, SmoothL1Loss and clip_grad_value_."""
    nn = lib.nn

    class CartPole:
        def __init__(self, seed):
            self.rng = np.random.default_rng(seed)

        def reset(self):
            self.state = self.rng.uniform(-0.05, 0.05, size=4)
            self.steps = 0
            return self.state.copy(), {}

        def step(self, action):
            x, x_dot, theta, theta_dot = self.state
            force = 10.0 if action == 1 else -10.0
            costheta, sintheta = math.cos(theta), math.sin(theta)
            temp = (force + 0.05 * theta_dot ** 2 * sintheta) / 1.1
            thetaacc = (9.8 * sintheta - costheta * temp) / (0.5 * (4.0 / 3.0 - 0.1 * costheta ** 2 / 1.1))
            xacc = temp - 0.05 * thetaacc * costheta / 1.1
            self.state = np.array([x + 0.02 * x_dot, x_dot + 0.02 * xacc, theta + 0.02 * theta_dot,
                                   theta_dot + 0.02 * thetaacc])
            self.steps += 1
            terminated = np.bool_(abs(self.state[2]) > 0.2095 or abs(self.state[0]) > 2.4)
            return self.state.copy(), np.float32(1.0), terminated, self.steps >= 12, {}

    lib.manual_seed(0)
    env = CartPole(0)
    policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    target = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    target.load_state_dict(policy.state_dict())
    opt = lib.optim.AdamW(policy.parameters(), lr=1e-3, amsgrad=True)
    memory, losses, returns = [], [], []
    for episode in range(3):
        obs, _ = env.reset()
        state = lib.from_numpy(obs).float().unsqueeze(0)
        total = 0.0
        for t in range(12):
            eps = 0.05 + 0.85 * math.exp(-len(memory) / 20)
            if lib.rand(1).item() > eps:
                with lib.no_grad():
                    action = policy(state).max(1).indices.view(1, 1)
            else:
                action = lib.randint(0, 2, (1, 1))
            obs, reward, terminated, truncated, _ = env.step(action.item())
            info = lib.tensor([reward, terminated])
            total += info[0].item()
            next_state = None if terminated else lib.tensor(obs, dtype=lib.float32).unsqueeze(0)
            memory.append((state, action, next_state, lib.tensor([reward]), info))
            state = next_state
            if len(memory) >= 8:
                idx = lib.randint(0, len(memory), (8,)).tolist()
                batch = [memory[i] for i in idx]
                non_final_mask = lib.tensor(tuple(b[2] is not None for b in batch), dtype=lib.bool)
                non_final = lib.cat([b[2] for b in batch if b[2] is not None])
                state_batch = lib.cat([b[0] for b in batch])
                action_batch = lib.cat([b[1] for b in batch])
                reward_batch = lib.as_tensor(np.array([b[3].item() for b in batch], dtype=np.float32))
                q = policy(state_batch).gather(1, action_batch)
                next_values = lib.zeros(8)
                with lib.no_grad():
                    next_values[non_final_mask] = target(non_final).max(1).values
                expected = next_values * 0.99 + reward_batch
                loss = nn.SmoothL1Loss()(q, expected.unsqueeze(1))
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_value_(policy.parameters(), 100)
                opt.step()
                losses.append(loss.item())
                tsd, psd = target.state_dict(), policy.state_dict()
                for key in psd:
                    tsd[key] = psd[key] * 0.005 + tsd[key] * (1 - 0.005)
                target.load_state_dict(tsd)
            if terminated or truncated:
                break
        returns.append(total)
    infos = lib.stack([m[4] for m in memory])
    return losses, returns, infos, infos.dtype, policy[2].weight, target[0].bias, lib.rand(2)


test_script_matches_torch = script_test(globals())


def test_numpy_scalars_as_int_and_float_arguments():
    # sizes computed by numpy (np.int64) are ints to PyTorch's argument parser: a TransformerEncoderLayer built with
    # them drew its attention-dropout mask with a shape of numpy integers (AttributeError: no bit_length); a numpy
    # float32 dropout probability is a double to PyTorch, but drew torchish's float32-probability bernoulli (other
    # masks, the seeded stream out of step)
    def f(lib):
        i = np.int64
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(i(4), i(2), dim_feedforward=i(8), dropout=np.float32(0.3))
        x = lib.arange(6.0).reshape(2, 3)
        return [layer(lib.ones(3, 1, 4)), lib.linalg.matrix_power(x[:, :2], i(3)), x[:, :2].matrix_power(np.int32(0)),
                x.movedim(i(0), i(1)), lib.movedim(x.unsqueeze(0), (i(0), 1), (2, i(0))), lib.Tensor(i(2), i(3)).shape,
                lib.FloatTensor(np.int32(2)).shape, lib.nn.functional.dropout(lib.ones(16), np.float32(0.3)),
                lib.nn.Dropout(np.float64(0.6))(lib.ones(16)), lib.empty(16).bernoulli_(np.float32(0.3)), lib.rand(2)]
    same(f)
    same_error(lambda lib: lib.linalg.matrix_power(lib.eye(2), np.float64(2)))
    # the distributions take int, float (np.float64 is one) and bool parameters, and refuse other numpy scalars
    same(lambda lib: lib.distributions.Normal(np.float64(1.0), 2).log_prob(lib.ones(2)))
    same_error(lambda lib: lib.distributions.Normal(np.float32(0.0), 1.0))
    same_error(lambda lib: lib.distributions.Poisson(np.int64(3)))


def test_numpy_scalars_in_setitem_and_chunk():
    # setitem takes numpy's integers, float64 and complex128 (Python number types) and refuses other numpy scalars;
    # chunk and tensor_split take a numpy integer count
    def write(v):
        def f(lib):
            x = lib.zeros(3)
            x[1] = v
            return x
        return f
    for v in (np.float64(3.5), np.int64(2), np.uint8(3)):
        same(write(v))
    for v in (np.float32(3.5), np.bool_(True), np.float16(1), np.complex64(1)):
        same_error(write(v))
    same(lambda lib: lib.arange(5.0).chunk(np.int64(2)) + lib.arange(5.0).tensor_split(np.int64(3)))
    same_error(lambda lib: lib.arange(4.0).chunk(2.0))
