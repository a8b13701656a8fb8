"""Transformer layers, stacks and nn.Transformer against PyTorch (outputs, input and parameter gradients).

Train mode runs with dropout=0; eval mode keeps PyTorch's default dropout (inactive). Eval under no_grad is where
PyTorch takes its inference fast paths (including nested tensors for padded batches): the numbers must agree too.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from module_oracle import compare, pair
from oracle import arr, check_raises, needs_torch, run_both, assert_same, torch, torchish

pytestmark = needs_torch

D, NH, FF, L, S, N = 8, 2, 16, 4, 3, 2

KPM = np.array([[False, False, False, True], [False, False, True, True]])  # left aligned: padding at the end
MEM_KPM = np.array([[False, True, False], [False, False, False]])


def _t(lib, v):
    return lib.tensor(v) if isinstance(v, np.ndarray) else v


def _causal(lib, n):
    return lib.nn.Transformer.generate_square_subsequent_mask(n)


ENC_LAYERS = [
    ("relu_post_norm", lambda lib: dict(dropout=0.0)),
    ("gelu_norm_first", lambda lib: dict(activation="gelu", norm_first=True, dropout=0.0)),
    ("callable_activation", lambda lib: dict(activation=lib.nn.functional.silu, dropout=0.0)),
    ("gelu_module_batch_first", lambda lib: dict(activation=lib.nn.GELU(), batch_first=True, dropout=0.0)),
    ("no_bias_eps", lambda lib: dict(bias=False, layer_norm_eps=1e-3, dropout=0.0)),
]


@pytest.mark.parametrize("make_kw", [c[1] for c in ENC_LAYERS], ids=[c[0] for c in ENC_LAYERS])
def test_encoder_layer_matches_torch(make_kw):
    tm, xm = pair(lambda lib: lib.nn.TransformerEncoderLayer(D, NH, FF, **make_kw(lib)))
    bf = xm.self_attn.batch_first
    x = arr(N, L, D) if bf else arr(L, N, D)

    def call(lib, m, x):
        plain = m(x)
        masked = m(x, src_mask=_causal(lib, L), src_key_padding_mask=_t(lib, KPM), is_causal=True)
        return plain, masked

    compare(tm, xm, [x], call)


def test_encoder_layer_eval_with_dropout_and_bool_masks():
    tm, xm = pair(lambda lib: lib.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True))
    tm.eval()
    xm.eval()
    attn = np.triu(np.ones((L, L), bool), 1)

    def call(lib, m, x):
        return m(x, src_mask=_t(lib, attn), src_key_padding_mask=_t(lib, KPM))

    compare(tm, xm, [arr(N, L, D)], call)
    with torch.no_grad(), torchish.no_grad():  # PyTorch's fused encoder-layer kernel
        compare(tm, xm, [arr(N, L, D)], call, grad=False)
        compare(tm, xm, [arr(N, L, D)], lambda lib, m, x: m(x, src_key_padding_mask=_t(lib, KPM)), grad=False)


def test_encoder_layer_dropout_in_training():
    xm = torchish.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.5)
    x = torchish.tensor(arr(L, N, D))
    with torchish.no_grad():
        torchish.manual_seed(0)
        a = xm(x).numpy()
        torchish.manual_seed(0)
        b = xm(x).numpy()
        c = xm(x).numpy()
        xm.eval()
        e = xm(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c) and not np.allclose(a, e)


DEC_LAYERS = [
    ("relu_post_norm", lambda lib: dict(dropout=0.0)),
    ("gelu_norm_first_batch_first", lambda lib: dict(activation="gelu", norm_first=True, batch_first=True,
                                                     dropout=0.0)),
    ("no_bias", lambda lib: dict(bias=False, dropout=0.0, activation=lib.nn.functional.silu)),
]


@pytest.mark.parametrize("make_kw", [c[1] for c in DEC_LAYERS], ids=[c[0] for c in DEC_LAYERS])
def test_decoder_layer_matches_torch(make_kw):
    tm, xm = pair(lambda lib: lib.nn.TransformerDecoderLayer(D, NH, FF, **make_kw(lib)))
    bf = xm.self_attn.batch_first
    tgt = arr(N, L, D) if bf else arr(L, N, D)
    mem = arr(N, S, D, seed=1) if bf else arr(S, N, D, seed=1)

    def call(lib, m, tgt, mem):
        plain = m(tgt, mem)
        masked = m(tgt, mem, tgt_mask=_causal(lib, L), tgt_key_padding_mask=_t(lib, KPM),
                   memory_key_padding_mask=_t(lib, MEM_KPM), tgt_is_causal=True)
        return plain, masked

    compare(tm, xm, [tgt, mem], call)


# ----------------------------------------------------------------------------------------------------------------
# stacks


def _encoder(lib, batch_first=True, nested=True):
    layer = lib.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0, batch_first=batch_first)
    return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(D), enable_nested_tensor=nested)


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack_matches_torch(batch_first):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if not batch_first else "error")
        tm, xm = pair(lambda lib: _encoder(lib, batch_first))
    x = arr(N, L, D) if batch_first else arr(L, N, D)

    def call(lib, m, x):
        return m(x, src_key_padding_mask=_t(lib, KPM)), m(x, mask=_causal(lib, L))  # causal mask detected

    compare(tm, xm, [x], call)


def test_nested_tensor_warning():
    layer = torchish.nn.TransformerEncoderLayer(D, NH, FF)
    with pytest.warns(UserWarning, match="self.use_nested_tensor is False because encoder_layer.self_attn.batch_first"):
        enc = torchish.nn.TransformerEncoder(layer, 2)
    assert enc.enable_nested_tensor and not enc.use_nested_tensor


def test_encoder_stack_nested_tensor_path_in_inference():
    """Eval + no_grad + batch_first + padding mask: PyTorch runs on nested tensors and pads with zeros."""
    tm, xm = pair(lambda lib: _encoder(lib, True))
    tm.eval()
    xm.eval()
    call = lambda lib, m, x: m(x, src_key_padding_mask=_t(lib, KPM))  # noqa: E731
    with torch.no_grad(), torchish.no_grad():
        compare(tm, xm, [arr(N, L, D)], call, grad=False)
        # not left aligned: no nested tensors
        compare(tm, xm, [arr(N, L, D)], lambda lib, m, x: m(x, src_key_padding_mask=_t(lib, KPM[:, ::-1].copy())),
                grad=False)
    tm2, xm2 = pair(lambda lib: _encoder(lib, True, nested=False))
    tm2.eval()
    xm2.eval()
    with torch.no_grad(), torchish.no_grad():
        compare(tm2, xm2, [arr(N, L, D)], call, grad=False)


def test_decoder_stack_matches_torch():
    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(D))

    tm, xm = pair(make)

    def call(lib, m, tgt, mem):
        return m(tgt, mem, tgt_mask=_causal(lib, L), memory_key_padding_mask=_t(lib, MEM_KPM))

    compare(tm, xm, [arr(L, N, D), arr(S, N, D, seed=1)], call)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first):
    def make(lib):
        return lib.nn.Transformer(D, NH, 1, 1, FF, dropout=0.0, batch_first=batch_first)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, xm = pair(make)
    src = arr(N, S, D) if batch_first else arr(S, N, D)
    tgt = arr(N, L, D, seed=1) if batch_first else arr(L, N, D, seed=1)

    def call(lib, m, src, tgt):
        return m(src, tgt, tgt_mask=_causal(lib, L), src_key_padding_mask=_t(lib, MEM_KPM),
                 memory_key_padding_mask=_t(lib, MEM_KPM))

    compare(tm, xm, [src, tgt], call)


def test_transformer_parameters_and_init():
    tm = torch.nn.Transformer(D, NH, 2, 1, FF)
    xm = torchish.nn.Transformer(D, NH, 2, 1, FF)
    assert [(n, tuple(p.shape)) for n, p in xm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    w = xm.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (D + FF))  # xavier_uniform on every matrix
    assert np.all(np.abs(w) <= bound) and w.std() > bound / 3
    a, b = xm.encoder.layers[0].linear1.weight, xm.encoder.layers[1].linear1.weight
    assert a is not b and not np.allclose(a.detach().numpy(), b.detach().numpy())


def test_generate_square_subsequent_mask():
    ref, got = run_both(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(4))
    assert_same(ref, got)
    ref, got = run_both(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(3, dtype=lib.float64))
    assert_same(ref, got)


def _err_cases():
    def model(lib):
        return lib.nn.Transformer(D, NH, 1, 1, FF)

    return [
        lambda lib: model(lib)(lib.ones(S, N, D), lib.ones(L, N + 1, D)),
        lambda lib: model(lib)(lib.ones(S, N, D), lib.ones(L, N, D + 1)),
        lambda lib: lib.nn.TransformerEncoderLayer(D, NH, FF, activation="tanh"),
        lambda lib: lib.nn.TransformerEncoderLayer(D, NH, FF)(lib.ones(L, N, D),
                                                              src_key_padding_mask=lib.ones(N, L, dtype=lib.int64)),
    ]


@pytest.mark.parametrize("case", range(len(_err_cases())))
def test_errors_match_torch(case):
    fn = _err_cases()[case]
    ref = check_raises(fn)
    with pytest.raises(type(ref)) as got:
        fn(torchish)
    assert str(got.value) == str(ref)
