"""Regression tests from running sequence-model / NLP programs (embeddings, RNNs, packing, attention,
transformers, decoding, sequence losses) on torchish and on PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


def _outcome(f):
    """"ok", or the name of the exception ``f()`` raised (the exception type is what is compared)."""
    try:
        f()
        return "ok"
    except Exception as e:  # noqa: BLE001
        return type(e).__name__


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


@needs_torch
def test_unpad_sequence_transposes_in_place_as_torch():
    # PyTorch's unpad_sequence turns a time-major batch batch-major with padded.transpose_(0, 1) on the caller's
    # tensor, zips the lengths strictly and keeps min(length, T) steps of each sequence
    a = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    for lib in (torch, torchish):
        p = lib.tensor(a)
        out = lib.nn.utils.rnn.unpad_sequence(p, lib.tensor([4, 1, 3]))
        res = [tuple(p.shape)] + [_np(u) for u in out]
        res += [_np(u) for u in lib.nn.utils.rnn.unpad_sequence(lib.tensor(a), lib.tensor([9, -1, 2]))]
        if lib is torch:
            ref = res
        with pytest.raises(ValueError):
            lib.nn.utils.rnn.unpad_sequence(lib.tensor(a), lib.tensor([4, 1]))
        with pytest.raises(RuntimeError):
            lib.nn.utils.rnn.unpad_sequence(lib.tensor(a, requires_grad=True), lib.tensor([4, 1, 3]))
    assert res[0] == ref[0] == (3, 4, 2)
    for r, g in zip(ref[1:], res[1:]):
        np.testing.assert_array_equal(g, r)


@needs_torch
def test_lstm_cell_hx_must_be_a_pair_of_tensors():
    # h = cell(x, h) written for a GRUCell but run on an LSTMCell: PyTorch's binding refuses a Tensor hx
    # (TypeError) and a tuple/list of other than two (RuntimeError), after iterating hx for its dim check
    def run(lib):
        cell, x, h = lib.nn.LSTMCell(3, 4), lib.zeros(2, 3), lib.zeros(2, 4)
        out = []
        for hx in (h, [h], (h,), (h, h, h)):
            out.append(_outcome(lambda: cell(x, hx)))
        try:
            lib.lstm_cell(x, h, lib.zeros(16, 3), lib.zeros(16, 4))
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
        out.append(tuple(cell(x, [h, h])[0].shape))
        return out
    assert run(torchish) == run(torch) == ["TypeError", "RuntimeError", "RuntimeError", "RuntimeError",
                                           "TypeError", (2, 4)]


@needs_torch
def test_pack_padded_unsorted_gathers_the_batch_first():
    # enforce_sorted=False: PyTorch index_selects the batch in sorted order before packing, so fewer lengths than
    # sequences pack the first ones only and more fail that gather (IndexError); sorted: the length check holds
    a = np.arange(24, dtype=np.float32).reshape(3, 4, 2)

    def run(lib):
        pack = lib.nn.utils.rnn.pack_padded_sequence
        out = []
        for bf in (True, False):
            p = pack(lib.tensor(a), [2, 3], batch_first=bf, enforce_sorted=False)
            out += [p.data.numpy(), p.batch_sizes.numpy(), p.unsorted_indices.numpy()]
        for kw in (dict(lengths=[3, 2]), dict(lengths=[3, 2, 1, 1], enforce_sorted=False)):
            try:
                pack(lib.tensor(a), batch_first=True, **kw)
            except Exception as e:  # noqa: BLE001 - the exception type is what is compared
                out.append(type(e).__name__)
        return out
    ref, got = run(torch), run(torchish)
    assert got[-2:] == ref[-2:] == ["RuntimeError", "IndexError"]
    for r, g in zip(ref[:-2], got[:-2]):
        np.testing.assert_array_equal(g, r)


@needs_torch
def test_pad_and_pack_reject_degenerate_inputs_as_torch():
    def run(lib):
        R = lib.nn.utils.rnn
        out = []
        for f in (lambda: R.pad_sequence([lib.tensor(1.0)]),                       # RuntimeError (sizes slice)
                  lambda: R.pad_sequence([lib.ones(2, 3), lib.tensor(1.0)]),        # IndexError (size(0))
                  lambda: R.pack_padded_sequence(lib.ones(3, 0, 1), []),            # RuntimeError (empty)
                  lambda: R.pack_padded_sequence(lib.ones(3, 0, 1), [], enforce_sorted=False),
                  lambda: R.pack_padded_sequence(lib.ones(3, 2, 1), [])):
            out.append(_outcome(f))
        return out
    assert run(torchish) == run(torch) == ["RuntimeError", "IndexError", "RuntimeError", "RuntimeError",
                                           "RuntimeError"]


@needs_torch
def test_rnn_rejects_an_empty_sequence_as_torch():
    # a batch whose padded length is 0 (e.g. all lengths filtered out): PyTorch's RNN kernels refuse it; an empty
    # batch of non-empty sequences runs
    def run(lib):
        out = []
        for f in (lambda: lib.nn.GRU(3, 4)(lib.zeros(0, 2, 3)),
                  lambda: lib.nn.LSTM(3, 4, batch_first=True)(lib.zeros(2, 0, 3)),
                  lambda: lib.nn.RNN(3, 4)(lib.zeros(0, 3)),
                  lambda: lib.nn.LSTM(3, 4, batch_first=True)(lib.zeros(0, 2, 3))[0].shape):
            try:
                out.append(tuple(f()))
            except Exception as e:  # noqa: BLE001 - the exception type is what is compared
                out.append(type(e).__name__)
        return out
    assert run(torchish) == run(torch) == ["RuntimeError"] * 3 + [(0, 2, 4)]


def _sdpa_edge_run(lib):
    F = lib.nn.functional
    rng = np.random.default_rng(0)
    qn, mn = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32), rng.uniform(-1, 1, (3, 3)).astype(np.float32)
    out = []
    for dt in (lib.float64, lib.bfloat16):                    # a float32 mask goes with any query dtype
        q = lib.tensor(qn).to(dt).requires_grad_()
        o = F.scaled_dot_product_attention(q, q, q, attn_mask=lib.tensor(mn))
        o.sum().backward()
        out += [str(o.dtype), o.double().detach().numpy(), q.grad.double().numpy()]
    q = lib.tensor(qn[0], requires_grad=True)
    k = lib.zeros(2, 0, 4, requires_grad=True)                # no keys at all: zeros, as an all-masked row
    o = F.scaled_dot_product_attention(q, k, k)
    o.sum().backward()
    out += [o.detach().numpy(), q.grad.numpy(), tuple(k.grad.shape)]
    for f in (lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=lib.zeros(3, 3, dtype=lib.float64)),
              lambda: lib.nn.MultiheadAttention(4, 2, kdim=3, vdim=3)(lib.zeros(3, 2, 4), lib.zeros(5, 2, 4),
                                                                        lib.zeros(5, 2, 3))):
        out.append(_outcome(f))
    return out


@needs_torch
def test_sdpa_float32_mask_empty_keys_and_mha_weight_asserts():
    ref, got = _sdpa_edge_run(torch), _sdpa_edge_run(torchish)
    assert got[-2:] == ref[-2:] == ["RuntimeError", "AssertionError"]
    for i, (r, g) in enumerate(zip(ref[:-2], got[:-2])):
        if isinstance(r, np.ndarray):
            tol = dict(rtol=1e-2, atol=1e-2) if 3 <= i < 6 else dict(rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(g, r, **tol)
        else:
            assert g == r


def _ctc_edge_run(lib):
    F = lib.nn.functional
    lp = lib.tensor(np.random.default_rng(0).uniform(-2, 2, (5, 2, 4)).astype(np.float32)).log_softmax(-1)
    out = []
    for args in ((lp[:, 0], lib.tensor([[1, 2]]), lib.tensor([5]), lib.tensor([2])),     # unbatched, 2-D targets
                 (lp[:, 0], lib.tensor([1, 2]), lib.tensor(5), lib.tensor(2)),           # unbatched, concatenated
                 (lp, lib.tensor([1, 2, 1, 3]), lib.tensor([5, 4]), lib.tensor([2, 2])),
                 (lp, lib.zeros(2, 0, dtype=lib.long), lib.tensor([5, 3]), lib.tensor([0, 0])),  # no labels at all
                 (lp, lib.tensor([], dtype=lib.long), lib.tensor([5, 3]), lib.tensor([0, 0]))):
        x = args[0].detach().requires_grad_()
        loss = F.ctc_loss(x, *args[1:], reduction="none")
        loss.sum().backward()
        out += [loss.detach().numpy(), x.grad.numpy()]
    for args in ((lp, lib.tensor([[1, 2], [1, 1]]), lib.tensor([5.0, 5.0]), lib.tensor([2, 2])),
                 (lp, lib.tensor([1, 2, 1]), lib.tensor([5, 5]), lib.tensor([2, 2])),
                 (lp, lib.tensor([[1, 2], [1, 1], [2, 2]]), lib.tensor([5, 5]), lib.tensor([2, 2])),
                 (lp[:, 0], lib.tensor([[1, 2], [1, 2]]), lib.tensor([5]), lib.tensor([2]))):
        out.append(_outcome(lambda: F.ctc_loss(*args)))
    return out


@needs_torch
def test_ctc_loss_target_layouts_and_checks_as_torch():
    # PyTorch does not unsqueeze the targets of unbatched log_probs (1-D: concatenated, 2-D: a batch of one), checks
    # the lengths are integral and the targets' first size (sum of lengths / batch), and takes empty label sequences
    ref, got = _ctc_edge_run(torch), _ctc_edge_run(torchish)
    assert got[-4:] == ref[-4:] == ["RuntimeError"] * 4
    for r, g in zip(ref[:-4], got[:-4]):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)


@needs_torch
def test_label_smoothing_with_every_target_ignored_has_zero_gradient():
    # a fully padded batch through CrossEntropyLoss(ignore_index=pad, label_smoothing=...): the mean is 0/0 = NaN,
    # and PyTorch's backward gives the ignored targets no gradient (not NaN)
    a = np.random.default_rng(0).uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    res = {}
    for lib in (torch, torchish):
        out = []
        for tg in ([[0, 0, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]]):
            for kw in (dict(), dict(weight=lib.tensor([1.0, 2.0, 0.5, 1.0, 1.0]))):
                x = lib.tensor(a, requires_grad=True)
                loss = lib.nn.functional.cross_entropy(x, lib.tensor(tg), ignore_index=0, label_smoothing=0.1, **kw)
                loss.backward()
                out += [loss.item(), x.grad.numpy()]
        res[lib] = out
    for r, g in zip(res[torch], res[torchish]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-7)


# ----------------------------------------------------------------------------------------------------------------
# whole programs (probe programs kept as regression guards): parameters copied from PyTorch's model, data from numpy


def _copy_params(src, dst):
    dst.load_state_dict({k: torchish.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def _assert_close_tree(ref, got, rtol=2e-4, atol=2e-5):
    assert type(got) is type(ref) or hasattr(ref, "detach"), (type(ref), type(got))
    if isinstance(ref, (list, tuple)):
        assert len(ref) == len(got)
        for r, g in zip(ref, got):
            _assert_close_tree(r, g, rtol, atol)
    elif hasattr(ref, "detach"):
        assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
        np.testing.assert_allclose(_np(got), _np(ref), rtol=rtol, atol=atol)
    elif isinstance(ref, float):
        assert got == pytest.approx(ref, rel=rtol, abs=atol)
    else:
        assert got == ref


def _char_rnn(lib, model):
    nn = lib.nn
    enc = [lib.tensor(s) for s in ([3, 4, 5, 5, 6], [7, 6, 8, 5], [9, 4, 5])]
    batch = nn.utils.rnn.pad_sequence(enc, batch_first=True, padding_value=0)
    inp, tgt = batch[:, :-1], batch[:, 1:]
    crit = nn.CrossEntropyLoss(ignore_index=0)
    opt = lib.optim.RMSprop(model.parameters(), lr=0.01)
    out = []
    for _ in range(1):
        opt.zero_grad()
        y, _ = model[1](model[0](inp))
        loss = crit(model[2](y).reshape(-1, 10), tgt.reshape(-1))
        loss.backward()
        out += [loss.item(), nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)]
        opt.step()
    model.eval()
    with lib.no_grad():
        x, h, seq = lib.tensor([[3]]), None, []
        for _ in range(2):
            y, h = model[1](model[0](x), h)
            x = model[2](y)[:, -1].argmax(dim=-1, keepdim=True)
            seq.append(x.item())
    return out + [seq, h, model[0].weight.grad]


@needs_torch
def test_char_rnn_teacher_forcing_program():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Embedding(10, 6, padding_idx=0), nn.GRU(6, 8, batch_first=True), nn.Linear(8, 10))
    ref_m, got_m = build(torch), build(torchish)
    _copy_params(ref_m, got_m)
    _assert_close_tree(_char_rnn(torch, ref_m), _char_rnn(torchish, got_m))


def _seq2seq(lib, enc, dec):
    nn, F = lib.nn, lib.nn.functional
    src = lib.tensor([[3, 4, 5, 2], [6, 2, 0, 0], [7, 8, 3, 2]])
    trg = lib.tensor([[1, 4, 2], [1, 5, 0], [1, 3, 0]])
    lens = (src != 0).sum(dim=1)
    packed = nn.utils.rnn.pack_padded_sequence(enc[0](src), lens, batch_first=True, enforce_sorted=False)
    out, h = enc[1](packed)
    enc_out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    hidden = lib.tanh(enc[2](lib.cat((h[-2], h[-1]), dim=1)))
    mask = (src != 0)[:, :enc_out.size(1)]
    logits = []
    for t in range(trg.size(1) - 1):
        scores = lib.bmm(dec[1](enc_out), hidden.unsqueeze(2)).squeeze(2).masked_fill(mask == 0, float("-inf"))
        a = F.softmax(scores, dim=1)
        ctx = lib.bmm(a.unsqueeze(1), enc_out).squeeze(1)
        hidden = dec[2](lib.cat([dec[0](trg[:, t]), ctx], dim=1), hidden)
        logits.append(dec[3](hidden))
    loss = F.cross_entropy(lib.stack(logits, 1).reshape(-1, 9), trg[:, 1:].reshape(-1), ignore_index=0,
                           label_smoothing=0.1)
    loss.backward()
    return [loss, a, enc[1].weight_hh_l0_reverse.grad, dec[1].weight.grad, enc[0].weight.grad]


@needs_torch
def test_seq2seq_packed_encoder_attention_program():
    def build(lib):
        nn = lib.nn
        enc = nn.ModuleList([nn.Embedding(9, 4, padding_idx=0), nn.GRU(4, 5, batch_first=True, bidirectional=True),
                             nn.Linear(10, 5)])
        dec = nn.ModuleList([nn.Embedding(9, 4), nn.Linear(10, 5, bias=False), nn.GRUCell(14, 5), nn.Linear(5, 9)])
        return enc, dec
    (re, rd), (ge, gd) = build(torch), build(torchish)
    _copy_params(re, ge)
    _copy_params(rd, gd)
    _assert_close_tree(_seq2seq(torch, re, rd), _seq2seq(torchish, ge, gd))


def _lstm_classifier(lib, jit, model):
    opt = lib.optim.Adam(model.parameters(), lr=0.01)

    def train_step(x, y):
        opt.zero_grad()
        _, (h, _) = model[1](model[0](x))
        logits = model[2](lib.cat([h[-2], h[-1]], dim=-1))
        loss = lib.nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, logits

    step = jit(train_step)
    rng = np.random.default_rng(0)
    out = []
    for _ in range(2):
        x, y = lib.tensor(rng.integers(0, 12, (3, 5))), lib.tensor(rng.integers(0, 3, 3))
        loss, logits = step(x, y)
        out += [loss.item(), logits.detach()]
    return out + [model[2].weight.detach(), model[1].weight_hh_l0_reverse.detach()]


@needs_torch
def test_compiled_bidirectional_lstm_classifier_step():
    def build(lib):
        nn = lib.nn
        return nn.ModuleList([nn.Embedding(12, 4, padding_idx=0),
                              nn.LSTM(4, 5, batch_first=True, bidirectional=True), nn.Linear(10, 3)])
    ref_m, got_m = build(torch), build(torchish)
    _copy_params(ref_m, got_m)
    _assert_close_tree(_lstm_classifier(torch, lambda f: f, ref_m), _lstm_classifier(torchish, torchish.compile, got_m))


@needs_torch
def test_embedding_bag_max_mode_refuses_scale_grad_by_freq():
    w = np.ones((8, 3), np.float32)
    for lib in (torch, torchish):
        with pytest.raises(ValueError):
            lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(w), lib.tensor([0, 1]), mode="max",
                                            scale_grad_by_freq=True)
        with pytest.raises(ValueError):
            lib.nn.EmbeddingBag(8, 3, mode="max", scale_grad_by_freq=True)(lib.tensor([[1, 2]]))


@needs_torch
def test_embedding_bag_offsets_and_sample_weights_dtypes():
    w = np.ones((8, 3), np.float32)

    def run(lib):
        F, out = lib.nn.functional, []
        for kw in (dict(offsets=lib.tensor([0.0, 1.0])),
                   dict(offsets=lib.tensor([0, 1]), mode="sum", per_sample_weights=lib.ones(3, dtype=lib.float64)),
                   dict(offsets=lib.tensor([0, 1], dtype=lib.int32))):
            try:
                out.append(tuple(F.embedding_bag(lib.tensor([1, 2, 4]), lib.tensor(w), **kw).shape))
            except Exception as e:  # noqa: BLE001 - the exception type is what is compared
                out.append(type(e).__name__)
        return out
    assert run(torchish) == run(torch) == ["RuntimeError", "RuntimeError", (2, 3)]


@needs_torch
def test_ctc_loss_half_inputs_and_autocast():
    # the CPU kernel has no float16/bfloat16 version (NotImplementedError); autocast runs it in float32 (whatever
    # the reduction), the gradient coming back in the input's dtype
    lp = np.log(np.full((5, 2, 4), 0.25, np.float32))
    for lib in (torch, torchish):
        args = (lib.tensor([[1, 2], [1, 1]]), lib.tensor([5, 5]), lib.tensor([2, 2]))
        for red in ("mean", "none"):
            with pytest.raises(NotImplementedError):
                lib.nn.functional.ctc_loss(lib.tensor(lp).half(), *args, reduction=red)
            x = lib.tensor(lp).bfloat16().requires_grad_()
            with lib.autocast("cpu", dtype=lib.bfloat16):
                loss = lib.nn.functional.ctc_loss(x, *args, reduction=red)
            loss.sum().backward()
            assert (str(loss.dtype), str(x.grad.dtype)) == ("torch.float32", "torch.bfloat16")


@needs_torch
def test_mha_float_mask_dtype_rules_as_torch():
    # a float mask of another dtype than the query meets the scores in baddbmm (need_weights: an error) or in
    # scaled_dot_product_attention (need_weights=False: float32 allowed, other dtypes an error)
    def run(lib):
        out = []
        for qdt, mdt in ((lib.float32, lib.float64), (lib.float64, lib.float32), (lib.bfloat16, lib.float32)):
            m, x = lib.nn.MultiheadAttention(4, 2).to(qdt), lib.ones(3, 1, 4).to(qdt)
            for nw in (True, False):
                for kw in (dict(attn_mask=lib.zeros(3, 3, dtype=mdt)), dict(key_padding_mask=lib.zeros(1, 3,
                                                                                                      dtype=mdt))):
                    try:
                        out.append(str(m(x, x, x, need_weights=nw, **kw)[0].dtype))
                    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
                        out.append(type(e).__name__)
        return out
    assert run(torchish) == run(torch)
