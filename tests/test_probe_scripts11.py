"""Regression tests from running the PyTorch programs of "Dive into Deep Learning" (d2l.ai, PyTorch edition) on
torchish and on PyTorch: softmax regression and batch normalization from scratch, the RNN/GRU/LSTM language models
from scratch and concise (one-hot inputs, truncated backpropagation with ``state.detach_()``, gradient clipping by
hand), attention scoring (masked_softmax with ``X[~mask] = value``, additive and scaled dot-product attention,
Nadaraya-Watson regression), the optimization chapter's optimizers written by hand (``p[:] -= ...`` under no_grad)
with learning-rate schedules, and a compiled RNN step. (The book's other programs probed, which matched and are
left out to keep this file fast: linear regression, MLPs, weight decay, dropout, initialization, convolutions from
scratch, LeNet/VGG/NiN/ResNet/DenseNet/GoogLeNet, seq2seq, multi-head attention and transformer blocks, BERT, object
detection helpers, FCN, style transfer, SSD, word2vec, TextCNN, decomposable attention, matrix factorization, GANs
and Gaussian processes.) Each ``case_*`` is written
against the PyTorch API only, with the few d2l helpers it needs inlined; inputs and weights come from formulas
(never a framework's RNG), where the book draws random numbers a comment or a formula says so.

The programs found: d2l's ``for s in state: s.detach_()`` made the next step's backward raise "Trying to use a
saved tensor that has been detached in-place" (test_autograd_backward.py has the focused test), and batch-first
RNN outputs were contiguous where PyTorch's are transposed time-major outputs (test_nn_rnn.py)."""
import math

from oracle import formula_data as _data, formula_init as _init, script_test


def _sgd(lib, params, lr, batch_size):
    with lib.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def _synthetic_data(lib, w, b, num_examples):
    X = _data(lib, num_examples, len(w))
    y = lib.matmul(X, w) + b
    y += 0.01 * _data(lib, *y.shape, seed=3)
    return X, y.reshape((-1, 1))


def case_softmax_scratch(lib):
    X = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = [X.sum(0, keepdim=True), X.sum(1, keepdim=True)]
    def softmax(X):
        X_exp = lib.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition
    Xn = _data(lib, 2, 5)
    X_prob = softmax(Xn)
    out += [X_prob, X_prob.sum(1)]
    num_inputs, num_outputs = 12, 4
    W = (_data(lib, num_inputs, num_outputs, seed=1) * 0.01).requires_grad_(True)
    b = lib.zeros(num_outputs, requires_grad=True)
    def net(X):
        return softmax(lib.matmul(X.reshape((-1, W.shape[0])), W) + b)
    y = lib.tensor([0, 2])
    y_hat = lib.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    out.append(y_hat[[0, 1], y])
    def cross_entropy(y_hat, y):
        return - lib.log(y_hat[range(len(y_hat)), y])
    out.append(cross_entropy(y_hat, y))
    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())
    out.append(accuracy(y_hat, y) / len(y))
    Ximg = _data(lib, 8, 1, 3, 4, seed=2)
    yl = lib.arange(8) % 4
    for step in range(3):
        y_hat = net(Ximg)
        l = cross_entropy(y_hat, yl)
        l.sum().backward()
        out.append((float(l.sum()), accuracy(y_hat, yl), yl.numel()))
        _sgd(lib, [W, b], 0.1, 8)
    out += [W, b]
    return out


def case_batchnorm_scratch(lib):
    def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
        if not lib.is_grad_enabled():
            X_hat = (X - moving_mean) / lib.sqrt(moving_var + eps)
        else:
            assert len(X.shape) in (2, 4)
            if len(X.shape) == 2:
                mean = X.mean(dim=0)
                var = ((X - mean) ** 2).mean(dim=0)
            else:
                mean = X.mean(dim=(0, 2, 3), keepdim=True)
                var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
            X_hat = (X - mean) / lib.sqrt(var + eps)
            moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
            moving_var = (1.0 - momentum) * moving_var + momentum * var
        Y = gamma * X_hat + beta
        return Y, moving_mean.data, moving_var.data

    class BatchNorm(lib.nn.Module):
        def __init__(self, num_features, num_dims):
            super().__init__()
            shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
            self.gamma = lib.nn.Parameter(lib.ones(shape))
            self.beta = lib.nn.Parameter(lib.zeros(shape))
            self.moving_mean = lib.zeros(shape)
            self.moving_var = lib.ones(shape)
        def forward(self, X):
            if self.moving_mean.device != X.device:
                self.moving_mean = self.moving_mean.to(X.device)
                self.moving_var = self.moving_var.to(X.device)
            Y, self.moving_mean, self.moving_var = batch_norm(
                X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.1)
            return Y
    nn = lib.nn
    net = nn.Sequential(
        nn.Conv2d(1, 3, kernel_size=3), BatchNorm(3, num_dims=4), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
        nn.Linear(24, 5), BatchNorm(5, num_dims=2), nn.Sigmoid(), nn.Linear(5, 3))
    _init(lib, net)
    X = _data(lib, 4, 1, 6, 10)
    y = lib.tensor([0, 1, 2, 1])
    opt = lib.optim.SGD(net.parameters(), lr=0.5)
    out = []
    for _ in range(3):
        l = nn.functional.cross_entropy(net(X), y)
        opt.zero_grad(); l.backward(); opt.step()
        out.append(l.item())
    out += [net[1].gamma.reshape((-1,)), net[1].beta.reshape((-1,)), net[1].moving_mean, net[6].moving_var,
            net[0].weight.grad]
    with lib.no_grad():
        out.append(net(X))
    net2 = nn.Sequential(nn.Conv2d(1, 3, kernel_size=3), nn.BatchNorm2d(3), nn.Sigmoid(), nn.Flatten(),
                         nn.Linear(96, 5), nn.BatchNorm1d(5))
    _init(lib, net2)
    o = net2(X); o.sum().backward()
    out += [o, net2[1].running_mean, net2[1].running_var, net2[5].num_batches_tracked, net2[1].weight.grad]
    net2.eval(); out.append(net2(X))
    return out


def _params_rnn(lib, vocab_size, num_hiddens, kind):
    num_inputs = num_outputs = vocab_size
    k = [0]
    def normal(shape):
        k[0] += 1
        return _data(lib, *shape, seed=k[0]) * 0.01
    def three():
        return (normal((num_inputs, num_hiddens)), normal((num_hiddens, num_hiddens)), lib.zeros(num_hiddens))
    if kind == 'rnn':
        params = [*three()]
    elif kind == 'gru':
        params = [*three(), *three(), *three()]
    else:
        params = [*three(), *three(), *three(), *three()]
    params += [normal((num_hiddens, num_outputs)), lib.zeros(num_outputs)]
    for param in params:
        param.requires_grad_(True)
    return params


def case_rnn_scratch(lib):
    F = lib.nn.functional
    out = [F.one_hot(lib.tensor([0, 2]), 5)]
    X = lib.arange(10).reshape((2, 5))
    out.append(F.one_hot(X.T, 28).shape)
    vocab_size, num_hiddens = 7, 6
    params = _params_rnn(lib, vocab_size, num_hiddens, 'rnn')
    def init_rnn_state(batch_size, num_hiddens):
        return (lib.zeros((batch_size, num_hiddens)), )
    def rnn(inputs, state, params):
        W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            H = lib.tanh(lib.mm(X, W_xh) + lib.mm(H, W_hh) + b_h)
            Y = lib.mm(H, W_hq) + b_q
            outputs.append(Y)
        return lib.cat(outputs, dim=0), (H,)
    def net(X, state):
        X = F.one_hot(X.T, vocab_size).type(lib.float32)
        return rnn(X, state, params)
    def grad_clipping(params, theta):
        norm = lib.sqrt(sum(lib.sum((p.grad ** 2)) for p in params))
        if norm > theta:
            for param in params:
                param.grad[:] *= theta / norm
        return norm
    corpus = lib.tensor([(i * 3 + i // 4) % vocab_size for i in range(41)])
    X = corpus[:40].reshape(4, 10)[:, :5]
    Y = corpus[1:41].reshape(4, 10)[:, :5]
    state = init_rnn_state(X.shape[0], num_hiddens)
    Y_hat, new_state = net(X, state)
    out += [Y_hat.shape, len(new_state), new_state[0].shape]
    loss = lib.nn.CrossEntropyLoss()
    for step in range(4):
        for s in state:
            s.detach_()
        y = Y.T.reshape(-1)
        y_hat, state = net(X, state)
        l = loss(y_hat, y.long()).mean()
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        l.backward()
        out.append(grad_clipping(params, 0.01))
        with lib.no_grad():
            for p in params:
                p -= 50.0 * p.grad
        out.append(math.exp(l.item() * y.numel() / y.numel()))
    out += [params[1].grad, params[3]]
    # predict
    def predict(prefix, num_preds):
        st = init_rnn_state(batch_size=1, num_hiddens=num_hiddens)
        outputs = [prefix[0]]
        get_input = lambda: lib.tensor([outputs[-1]]).reshape((1, 1))
        for y in prefix[1:]:
            _, st = net(get_input(), st)
            outputs.append(y)
        for _ in range(num_preds):
            y, st = net(get_input(), st)
            outputs.append(int(y.argmax(dim=1).reshape(1)))
        return outputs
    out.append(predict([1, 2], 6))
    return out


def case_gru_lstm_scratch(lib):
    F = lib.nn.functional
    vocab_size, num_hiddens = 6, 5
    X = lib.tensor([[(i * 5 + j * 2) % 6 for j in range(4)] for i in range(3)])
    Y = (X + 1) % 6
    out = []
    def gru(inputs, state, params):
        W_xz, W_hz, b_z, W_xr, W_hr, b_r, W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            Z = lib.sigmoid((X @ W_xz) + (H @ W_hz) + b_z)
            R = lib.sigmoid((X @ W_xr) + (H @ W_hr) + b_r)
            H_tilda = lib.tanh((X @ W_xh) + ((R * H) @ W_hh) + b_h)
            H = Z * H + (1 - Z) * H_tilda
            Y = H @ W_hq + b_q
            outputs.append(Y)
        return lib.cat(outputs, dim=0), (H,)
    def lstm(inputs, state, params):
        [W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xo, W_ho, b_o, W_xc, W_hc, b_c, W_hq, b_q] = params
        (H, C) = state
        outputs = []
        for X in inputs:
            I = lib.sigmoid((X @ W_xi) + (H @ W_hi) + b_i)
            Fg = lib.sigmoid((X @ W_xf) + (H @ W_hf) + b_f)
            O = lib.sigmoid((X @ W_xo) + (H @ W_ho) + b_o)
            C_tilda = lib.tanh((X @ W_xc) + (H @ W_hc) + b_c)
            C = Fg * C + I * C_tilda
            H = O * lib.tanh(C)
            Y = (H @ W_hq) + b_q
            outputs.append(Y)
        return lib.cat(outputs, dim=0), (H, C)
    for kind, fn in (('gru', gru), ('lstm', lstm)):
        params = _params_rnn(lib, vocab_size, num_hiddens, kind)
        state = tuple(lib.zeros((3, num_hiddens)) for _ in range(1 if kind == 'gru' else 2))
        for step in range(3):
            y_hat, state = fn(F.one_hot(X.T, vocab_size).float(), state, params)
            state = tuple(s.detach() for s in state)
            l = F.cross_entropy(y_hat, Y.T.reshape(-1))
            l.backward()
            with lib.no_grad():
                for p in params:
                    p[:] = p - 5.0 * p.grad
                    p.grad.zero_()
            out.append(l)
        out += [params[0], state[-1]]
    # concise
    for cls in (lib.nn.GRU, lib.nn.LSTM):
        layer = cls(vocab_size, num_hiddens)
        _init(lib, layer)
        class RNNModel(lib.nn.Module):
            def __init__(self, rnn_layer, vocab_size):
                super().__init__()
                self.rnn = rnn_layer
                self.vocab_size = vocab_size
                self.num_hiddens = self.rnn.hidden_size
                self.num_directions = 2 if self.rnn.bidirectional else 1
                self.linear = lib.nn.Linear(self.num_hiddens * self.num_directions, self.vocab_size)
            def forward(self, inputs, state):
                X = F.one_hot(inputs.T.long(), self.vocab_size)
                X = X.to(lib.float32)
                Y, state = self.rnn(X, state)
                output = self.linear(Y.reshape((-1, Y.shape[-1])))
                return output, state
            def begin_state(self, batch_size=1):
                if not isinstance(self.rnn, lib.nn.LSTM):
                    return lib.zeros((self.num_directions * self.rnn.num_layers, batch_size, self.num_hiddens))
                return (lib.zeros((self.num_directions * self.rnn.num_layers, batch_size, self.num_hiddens)),
                        lib.zeros((self.num_directions * self.rnn.num_layers, batch_size, self.num_hiddens)))
        net = RNNModel(layer, vocab_size)
        _init(lib, net.linear)
        opt = lib.optim.SGD(net.parameters(), lr=1.0)
        state = net.begin_state(3)
        for step in range(2):
            if isinstance(state, tuple):
                for s in state:
                    s.detach_()
            else:
                state.detach_()
            y_hat, state = net(X, state)
            l = F.cross_entropy(y_hat, Y.T.reshape(-1).long())
            opt.zero_grad(); l.backward()
            lib.nn.utils.clip_grad_norm_(net.parameters(), 1)
            opt.step()
            out.append(l)
        out.append(net.rnn.weight_hh_l0.grad)
    # batch_first: the output is the time-major output transposed, so view() raises as in PyTorch
    gru = lib.nn.GRU(vocab_size, num_hiddens, batch_first=True)
    _init(lib, gru)
    Yb, hb = gru(F.one_hot(X, vocab_size).float())
    out += [Yb.stride(), Yb.is_contiguous(), Yb[:, -1], hb.stride()]
    try:
        Yb.view(-1)
    except RuntimeError as e:
        out.append(str(e))
    # deep and bidirectional
    lstm_layer = lib.nn.LSTM(vocab_size, num_hiddens, 2, bidirectional=True)
    _init(lib, lstm_layer)
    Xo = F.one_hot(X.T, vocab_size).float()
    Yo, (h, c) = lstm_layer(Xo)
    Yo.pow(2).sum().backward()
    out += [Yo, h, c, lstm_layer.weight_ih_l1_reverse.grad, [n for n, _ in lstm_layer.named_parameters()]]
    return out


def _seq_mask(lib, X, valid_len, value=0):
    maxlen = X.size(1)
    mask = lib.arange((maxlen), dtype=lib.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def _masked_softmax(lib, X, valid_lens):
    if valid_lens is None:
        return lib.nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = lib.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = _seq_mask(lib, X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return lib.nn.functional.softmax(X.reshape(shape), dim=-1)


def _modules(lib):
    nn = lib.nn
    class AdditiveAttention(nn.Module):
        def __init__(self, key_size, query_size, num_hiddens, dropout):
            super().__init__()
            self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
            self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
            self.w_v = nn.Linear(num_hiddens, 1, bias=False)
            self.dropout = nn.Dropout(dropout)
        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = lib.tanh(features)
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = _masked_softmax(lib, scores, valid_lens)
            return lib.bmm(self.dropout(self.attention_weights), values)
    class DotProductAttention(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = lib.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = _masked_softmax(lib, scores, valid_lens)
            return lib.bmm(self.dropout(self.attention_weights), values)
    def transpose_qkv(X, num_heads):
        X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])
    def transpose_output(X, num_heads):
        X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)
    class MultiHeadAttention(nn.Module):
        def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
            super().__init__()
            self.num_heads = num_heads
            self.attention = DotProductAttention(dropout)
            self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_o = nn.LazyLinear(num_hiddens, bias=bias)
        def forward(self, queries, keys, values, valid_lens):
            queries = transpose_qkv(self.W_q(queries), self.num_heads)
            keys = transpose_qkv(self.W_k(keys), self.num_heads)
            values = transpose_qkv(self.W_v(values), self.num_heads)
            if valid_lens is not None:
                valid_lens = lib.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
            output = self.attention(queries, keys, values, valid_lens)
            output_concat = transpose_output(output, self.num_heads)
            return self.W_o(output_concat)
    class PositionalEncoding(nn.Module):
        def __init__(self, num_hiddens, dropout, max_len=1000):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.P = lib.zeros((1, max_len, num_hiddens))
            X = lib.arange(max_len, dtype=lib.float32).reshape(-1, 1) / lib.pow(
                10000, lib.arange(0, num_hiddens, 2, dtype=lib.float32) / num_hiddens)
            self.P[:, :, 0::2] = lib.sin(X)
            self.P[:, :, 1::2] = lib.cos(X)
        def forward(self, X):
            X = X + self.P[:, :X.shape[1], :].to(X.device)
            return self.dropout(X)
    class PositionWiseFFN(nn.Module):
        def __init__(self, ffn_num_hiddens, ffn_num_outputs):
            super().__init__()
            self.dense1 = nn.LazyLinear(ffn_num_hiddens)
            self.relu = nn.ReLU()
            self.dense2 = nn.LazyLinear(ffn_num_outputs)
        def forward(self, X):
            return self.dense2(self.relu(self.dense1(X)))
    class AddNorm(nn.Module):
        def __init__(self, norm_shape, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.ln = nn.LayerNorm(norm_shape)
        def forward(self, X, Y):
            return self.ln(self.dropout(Y) + X)
    class TransformerEncoderBlock(nn.Module):
        def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
            super().__init__()
            self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
            self.addnorm1 = AddNorm(num_hiddens, dropout)
            self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
            self.addnorm2 = AddNorm(num_hiddens, dropout)
        def forward(self, X, valid_lens):
            Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
            return self.addnorm2(Y, self.ffn(Y))
    class TransformerDecoderBlock(nn.Module):
        def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
            super().__init__()
            self.i = i
            self.attention1 = MultiHeadAttention(num_hiddens, num_heads, dropout)
            self.addnorm1 = AddNorm(num_hiddens, dropout)
            self.attention2 = MultiHeadAttention(num_hiddens, num_heads, dropout)
            self.addnorm2 = AddNorm(num_hiddens, dropout)
            self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
            self.addnorm3 = AddNorm(num_hiddens, dropout)
        def forward(self, X, state):
            enc_outputs, enc_valid_lens = state[0], state[1]
            if state[2][self.i] is None:
                key_values = X
            else:
                key_values = lib.cat((state[2][self.i], X), dim=1)
            state[2][self.i] = key_values
            if self.training:
                batch_size, num_steps, _ = X.shape
                dec_valid_lens = lib.arange(1, num_steps + 1, device=X.device).repeat(batch_size, 1)
            else:
                dec_valid_lens = None
            X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
            Y = self.addnorm1(X, X2)
            Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
            Z = self.addnorm2(Y, Y2)
            return self.addnorm3(Z, self.ffn(Z)), state
    return dict(AdditiveAttention=AdditiveAttention, DotProductAttention=DotProductAttention,
                MultiHeadAttention=MultiHeadAttention, PositionalEncoding=PositionalEncoding,
                PositionWiseFFN=PositionWiseFFN, AddNorm=AddNorm, TransformerEncoderBlock=TransformerEncoderBlock,
                TransformerDecoderBlock=TransformerDecoderBlock)


def case_attention_scoring(lib):
    M = _modules(lib)
    out = [_masked_softmax(lib, _data(lib, 2, 2, 4), lib.tensor([2, 3])),
           _masked_softmax(lib, _data(lib, 2, 2, 4), lib.tensor([[1, 3], [2, 4]]))]
    out.append(lib.bmm(lib.ones((2, 3, 4)), lib.ones((2, 4, 6))).shape)
    queries = _data(lib, 2, 1, 20)
    keys = lib.ones((2, 10, 2))
    values = lib.arange(40, dtype=lib.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    valid_lens = lib.tensor([2, 6])
    attention = M['AdditiveAttention'](key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
    _init(lib, attention)
    attention.eval()
    o = attention(queries, keys, values, valid_lens)
    out += [o, attention.attention_weights]
    attention.train()
    queries2 = _data(lib, 2, 1, 2, seed=1).requires_grad_()
    dp = M['DotProductAttention'](dropout=0.0)
    o2 = dp(queries2, keys, values, valid_lens)
    o2.sum().backward()
    out += [o2, dp.attention_weights, queries2.grad]
    # nadaraya-watson
    n_train = 12
    x_train, _ = lib.sort(lib.sin(lib.arange(n_train, dtype=lib.float32) * 1.7) * 2.5 + 2.5)
    f = lambda x: 2 * lib.sin(x) + x ** 0.8
    y_train = f(x_train) + 0.1 * _data(lib, n_train)
    x_test = lib.arange(0, 5, 0.5)
    X_repeat = x_test.repeat_interleave(n_train).reshape((-1, n_train))
    attention_weights = lib.nn.functional.softmax(-(X_repeat - x_train) ** 2 / 2, dim=1)
    y_hat = lib.matmul(attention_weights, y_train)
    out.append(y_hat)
    X_tile = x_train.repeat((n_train, 1))
    Y_tile = y_train.repeat((n_train, 1))
    keys = X_tile[(1 - lib.eye(n_train)).type(lib.bool)].reshape((n_train, -1))
    vals = Y_tile[(1 - lib.eye(n_train)).type(lib.bool)].reshape((n_train, -1))
    class NWKernelRegression(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.tensor([0.7]), requires_grad=True)
        def forward(self, queries, keys, values):
            queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
            self.attention_weights = lib.nn.functional.softmax(-((queries - keys) * self.w) ** 2 / 2, dim=1)
            return lib.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
    net = NWKernelRegression()
    loss = lib.nn.MSELoss(reduction='none')
    trainer = lib.optim.SGD(net.parameters(), lr=0.5)
    for epoch in range(3):
        trainer.zero_grad()
        l = loss(net(x_train, keys, vals), y_train)
        l.sum().backward()
        trainer.step()
        out.append(f'epoch {epoch + 1}, loss {float(l.sum()):.4f}')
    out += [net.w, net.w.grad]
    return out


def case_optimizers_by_hand(lib):
    out = []
    # gradient descent in 1-d and 2-d
    x = lib.tensor(10.0)
    results = [x]
    for i in range(5):
        x = x - 0.2 * 2 * x
        results.append(float(x))
    out.append(results)
    def train_2d(trainer, steps=8):
        x1, x2, s1, s2 = -5, -2, 0, 0
        results = [(x1, x2)]
        for i in range(steps):
            x1, x2, s1, s2 = trainer(x1, x2, s1, s2)
            results.append((x1, x2))
        return results
    eta, gamma = 0.4, 0.9
    def rmsprop_2d(x1, x2, s1, s2):
        g1, g2, eps = 0.2 * x1, 4 * x2, 1e-6
        s1 = gamma * s1 + (1 - gamma) * g1 ** 2
        s2 = gamma * s2 + (1 - gamma) * g2 ** 2
        x1 -= eta / math.sqrt(s1 + eps) * g1
        x2 -= eta / math.sqrt(s2 + eps) * g2
        return x1, x2, s1, s2
    out.append(train_2d(rmsprop_2d)[-1])
    # newton in 1-d with tensors
    c = lib.tensor(0.15 * math.pi)
    f_grad = lambda x: lib.cos(c * x) - c * x * lib.sin(c * x)
    f_hess = lambda x: - 2 * c * lib.sin(c * x) - x * c ** 2 * lib.cos(c * x)
    x = lib.tensor(10.0)
    for i in range(5):
        x -= 0.5 * f_grad(x) / f_hess(x)
    out.append(x)
    # stochastic gradient with lr schedules
    def exponential_lr(t):
        return math.exp(-0.1 * t)
    def polynomial_lr(t):
        return (1 + 0.1 * t) ** (-0.5)
    # minibatch training with hand-written optimizers
    features = _data(lib, 30, 5)
    labels = (features @ lib.tensor([1.0, -2.0, 0.5, 3.0, -1.0]) + 0.3).reshape(-1, 1)
    def init_momentum_states(feature_dim):
        v_w = lib.zeros((feature_dim, 1))
        v_b = lib.zeros(1)
        return (v_w, v_b)
    def sgd_momentum(params, states, hp):
        for p, v in zip(params, states):
            with lib.no_grad():
                v[:] = hp['momentum'] * v + p.grad
                p[:] -= hp['lr'] * v
            p.grad.data.zero_()
    def init_adagrad_states(feature_dim):
        return (lib.zeros((feature_dim, 1)), lib.zeros(1))
    def adagrad(params, states, hp):
        eps = 1e-6
        for p, s in zip(params, states):
            with lib.no_grad():
                s[:] += lib.square(p.grad)
                p[:] -= hp['lr'] * p.grad / lib.sqrt(s + eps)
            p.grad.data.zero_()
    def rmsprop(params, states, hp):
        gamma, eps = hp['gamma'], 1e-6
        for p, s in zip(params, states):
            with lib.no_grad():
                s[:] = gamma * s + (1 - gamma) * lib.square(p.grad)
                p[:] -= hp['lr'] * p.grad / lib.sqrt(s + eps)
            p.grad.data.zero_()
    def init_adadelta_states(feature_dim):
        s_w, s_b = lib.zeros((feature_dim, 1)), lib.zeros(1)
        delta_w, delta_b = lib.zeros((feature_dim, 1)), lib.zeros(1)
        return ((s_w, delta_w), (s_b, delta_b))
    def adadelta(params, states, hp):
        rho, eps = hp['rho'], 1e-5
        for p, (s, delta) in zip(params, states):
            with lib.no_grad():
                s[:] = rho * s + (1 - rho) * lib.square(p.grad)
                g = (lib.sqrt(delta + eps) / lib.sqrt(s + eps)) * p.grad
                p[:] -= g
                delta[:] = rho * delta + (1 - rho) * g * g
            p.grad.data.zero_()
    def adam(params, states, hp):
        beta1, beta2, eps = 0.9, 0.999, 1e-6
        for p, (v, s) in zip(params, states):
            with lib.no_grad():
                v[:] = beta1 * v + (1 - beta1) * p.grad
                s[:] = beta2 * s + (1 - beta2) * lib.square(p.grad)
                v_bias_corr = v / (1 - beta1 ** hp['t'])
                s_bias_corr = s / (1 - beta2 ** hp['t'])
                p[:] -= hp['lr'] * v_bias_corr / (lib.sqrt(s_bias_corr) + eps)
            p.grad.data.zero_()
        hp['t'] += 1
    def yogi(params, states, hp):
        beta1, beta2, eps = 0.9, 0.999, 1e-3
        for p, (v, s) in zip(params, states):
            with lib.no_grad():
                v[:] = beta1 * v + (1 - beta1) * p.grad
                s[:] = s + (1 - beta2) * lib.sign(lib.square(p.grad) - s) * lib.square(p.grad)
                v_bias_corr = v / (1 - beta1 ** hp['t'])
                s_bias_corr = s / (1 - beta2 ** hp['t'])
                p[:] -= hp['lr'] * v_bias_corr / (lib.sqrt(s_bias_corr) + eps)
            p.grad.data.zero_()
        hp['t'] += 1
    pair = lambda: ((lib.zeros((5, 1)), lib.zeros((5, 1))), (lib.zeros(1), lib.zeros(1)))
    for name, fn, states, hp in [
            ('momentum', sgd_momentum, init_momentum_states(5), {'lr': 0.02, 'momentum': 0.5}),
            ('adagrad', adagrad, init_adagrad_states(5), {'lr': 0.1}),
            ('rmsprop', rmsprop, init_adagrad_states(5), {'lr': 0.01, 'gamma': 0.9}),
            ('adadelta', adadelta, init_adadelta_states(5), {'rho': 0.9}),
            ('adam', adam, pair(), {'lr': 0.01, 't': 1}),
            ('yogi', yogi, pair(), {'lr': 0.01, 't': 1})]:
        w = (_data(lib, 5, 1, seed=2) * 0.01).requires_grad_(True)
        b = lib.zeros((1), requires_grad=True)
        for step in range(3):
            X, y = features[step * 10:(step + 1) * 10], labels[step * 10:(step + 1) * 10]
            l = ((X @ w + b - y) ** 2 / 2).mean()
            l.backward()
            fn([w, b], states, hp)
            out.append((name, l.item()))
        out += [w, b, states[0] if not isinstance(states[0], tuple) else states[0][1]]
    # schedulers from scratch
    class SquareRootScheduler:
        def __init__(self, lr=0.1):
            self.lr = lr
        def __call__(self, num_update):
            return self.lr * pow(num_update + 1.0, -0.5)
    class FactorScheduler:
        def __init__(self, factor=1, stop_factor_lr=1e-7, base_lr=0.1):
            self.factor = factor
            self.stop_factor_lr = stop_factor_lr
            self.base_lr = base_lr
        def __call__(self, num_update):
            self.base_lr = max(self.stop_factor_lr, self.base_lr * self.factor)
            return self.base_lr
    class CosineScheduler:
        def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0):
            self.base_lr_orig = base_lr
            self.max_update = max_update
            self.final_lr = final_lr
            self.warmup_steps = warmup_steps
            self.warmup_begin_lr = warmup_begin_lr
            self.max_steps = self.max_update - self.warmup_steps
        def get_warmup_lr(self, epoch):
            increase = (self.base_lr_orig - self.warmup_begin_lr) * float(epoch) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        def __call__(self, epoch):
            if epoch < self.warmup_steps:
                return self.get_warmup_lr(epoch)
            if epoch <= self.max_update:
                self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * (
                    1 + math.cos(math.pi * (epoch - self.warmup_steps) / self.max_steps)) / 2
            return self.base_lr
    net = lib.nn.Sequential(lib.nn.Linear(5, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
    _init(lib, net)
    trainer = lib.optim.SGD(net.parameters(), lr=0.3)
    for sched in (SquareRootScheduler(0.1), FactorScheduler(0.9, 1e-2, 2.0),
                  CosineScheduler(20, warmup_steps=5, base_lr=0.3, final_lr=0.01)):
        for epoch in range(4):
            trainer.zero_grad()
            l = lib.nn.functional.mse_loss(net(features), labels)
            l.backward()
            trainer.step()
            for param_group in trainer.param_groups:
                param_group['lr'] = sched(epoch)
            out.append((l.item(), trainer.param_groups[0]['lr']))
    scheduler = lib.optim.lr_scheduler.MultiStepLR(trainer, milestones=[2, 3], gamma=0.5)
    for epoch in range(4):
        trainer.zero_grad(); lib.nn.functional.mse_loss(net(features), labels).backward(); trainer.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
    out.append(net[0].weight)
    return out


def case_jit_rnn_scratch(lib, jit):
    F = lib.nn.functional
    vocab_size, H = 6, 5
    def p(shape, seed):
        return (_data(lib, *shape, seed=seed) * 0.1).requires_grad_(True)
    params = [p((vocab_size, H), 1), p((H, H), 2), lib.zeros(H, requires_grad=True), p((H, vocab_size), 3),
              lib.zeros(vocab_size, requires_grad=True)]
    def rnn(inputs, state):
        W_xh, W_hh, b_h, W_hq, b_q = params
        Hs, = state
        outputs = []
        for X in inputs:
            Hs = lib.tanh(lib.mm(X, W_xh) + lib.mm(Hs, W_hh) + b_h)
            outputs.append(lib.mm(Hs, W_hq) + b_q)
        return lib.cat(outputs, dim=0), (Hs,)
    def grad_clipping(theta):
        norm = lib.sqrt(sum(lib.sum((q.grad ** 2)) for q in params))
        for q in params:
            q.grad[:] *= lib.clamp(theta / norm, max=1.0)
        return norm
    X = lib.tensor([[(i * 5 + j * 2) % 6 for j in range(4)] for i in range(3)])
    Y = (X + 1) % 6
    @jit
    def step(X, Y, state):
        y_hat, state = rnn(F.one_hot(X.T, vocab_size).float(), state)
        l = F.cross_entropy(y_hat, Y.T.reshape(-1))
        for q in params:
            q.grad = None
        l.backward()
        norm = grad_clipping(0.5)
        with lib.no_grad():
            for q in params:
                q -= 1.0 * q.grad
        return l, norm, state[0].detach()
    state = lib.zeros(3, H)
    out = []
    for i in range(4):
        l, norm, state = step(X, Y, (state,))
        out += [l, norm]
    out += [state, params[1], params[0].grad]
    return out


test_script_matches_torch = script_test(globals())
