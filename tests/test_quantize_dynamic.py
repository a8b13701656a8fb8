"""``torch.ao.quantization.quantize_dynamic`` against PyTorch's (x86, fbgemm): the converted modules, their
quantized weights, and forward outputs equal bit for bit."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

warnings.filterwarnings("ignore", message=".*(quantized tensor creation functions|deprecated).*")


def _models(make):
    """The same float model built with torch and torchish (torchish's weights copied from torch's)."""
    torch.manual_seed(0)
    tm = make(torch)
    im = make(torchish)
    im.load_state_dict({k: torchish.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, im


def _mlp(lib, bias=True):
    return lib.nn.Sequential(lib.nn.Linear(6, 5, bias=bias), lib.nn.ReLU(), lib.nn.Linear(5, 3, bias=bias))


def _quantized(lib, model, *args, **kwargs):
    return lib.ao.quantization.quantize_dynamic(model, *args, **kwargs)


RNG = np.random.default_rng(0)
INPUTS = {
    "normal": RNG.standard_normal((4, 6)).astype(np.float32),
    "wide": (RNG.standard_normal((4, 6)) * 40).astype(np.float32),
    "positive": RNG.random((4, 6)).astype(np.float32) + 0.5,
    "negative": -RNG.random((4, 6)).astype(np.float32),
    "zeros": np.zeros((4, 6), np.float32),
    "tiny": (RNG.standard_normal((4, 6)) * 1e-6).astype(np.float32),
    "batched": RNG.standard_normal((2, 3, 6)).astype(np.float32),
    "empty": np.zeros((0, 6), np.float32),
}


@pytest.mark.parametrize("bias", [True, False])
def test_forward_bit_equal(bias):
    # (the inputs in one test: each test pays for turning __torch_function__ dispatch on and off, ~0.1 s)
    tm, im = _models(lambda lib: _mlp(lib, bias))
    tq = _quantized(torch, tm, {torch.nn.Linear}, dtype=torch.qint8)
    iq = _quantized(torchish, im, {torchish.nn.Linear}, dtype=torchish.qint8)
    for name, x in INPUTS.items():
        y_t = tq(torch.tensor(x)).numpy()
        y_i = iq(torchish.tensor(x)).numpy()
        assert y_i.dtype == y_t.dtype and y_i.shape == y_t.shape, name
        np.testing.assert_array_equal(y_i, y_t, err_msg=name)


def test_many_random_inputs_bit_equal():
    tm, im = _models(lambda lib: lib.nn.Linear(6, 5))
    tq = _quantized(torch, torch.nn.Sequential(tm), {torch.nn.Linear})
    iq = _quantized(torchish, torchish.nn.Sequential(im), {torchish.nn.Linear})
    xs = (RNG.standard_normal((20, 4, 6)) * RNG.random((20, 1, 1)) * 10).astype(np.float32)
    for x in xs:
        np.testing.assert_array_equal(iq(torchish.tensor(x)).numpy(), tq(torch.tensor(x)).numpy())


def test_converted_modules_and_weights():
    tm, im = _models(_mlp)
    tq, iq = _quantized(torch, tm), _quantized(torchish, im)
    assert repr(iq) == repr(tq)
    assert type(iq[0]) is torchish.ao.nn.quantized.dynamic.Linear
    for i in (0, 2):
        wt, wi = tq[i].weight(), iq[i].weight()
        assert repr(wi) == repr(wt)
        np.testing.assert_array_equal(wi.int_repr().numpy(), wt.int_repr().numpy())
        assert wi.q_scale() == wt.q_scale() and wi.q_zero_point() == wt.q_zero_point()
        np.testing.assert_array_equal(iq[i].bias().detach().numpy(), tq[i].bias().detach().numpy())
    assert list(iq.parameters()) == [] == list(tq.parameters())
    # not in place: the float model is untouched
    assert type(im[0]) is torchish.nn.Linear and type(tm[0]) is torch.nn.Linear
    assert torchish.quantization.quantize_dynamic is torchish.ao.quantization.quantize_dynamic
    from torchish.quantization import quantize_dynamic  # (the alias imports as a module too)
    assert quantize_dynamic is torchish.ao.quantization.quantize_dynamic


def test_inplace_and_by_name():
    tm, im = _models(_mlp)
    _quantized(torchish, im, {"2"}, inplace=True)
    _quantized(torch, tm, {"2"}, inplace=True)
    assert repr(im) == repr(tm)
    assert type(im[0]) is torchish.nn.Linear


def test_transformer_encoder_layer():
    """Only the exact nn.Linear type converts: attention's out_proj (a Linear subclass) stays float."""
    def make(lib):
        return lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    tm, im = _models(make)
    tq, iq = _quantized(torch, tm, {torch.nn.Linear}), _quantized(torchish, im, {torchish.nn.Linear})
    assert repr(iq) == repr(tq)
    x = RNG.standard_normal((2, 3, 8)).astype(np.float32)
    tq.train(), iq.train()  # (in eval mode PyTorch's fast-path check fails on the quantized weight: AttributeError)
    y_t = tq(torch.tensor(x)).detach().numpy()
    y_i = iq(torchish.tensor(x)).detach().numpy()
    np.testing.assert_allclose(y_i, y_t, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("kwargs", [dict(dtype="qint8", qscheme="per_tensor_symmetric"),
                                    dict(dtype="quint8", qscheme="per_tensor_affine"),
                                    dict(dtype="quint8", qscheme="per_tensor_affine", reduce_range=True),
                                    dict(dtype="qint8", qscheme="per_tensor_affine")])
def test_minmax_observer(kwargs):
    x = RNG.standard_normal((3, 4)).astype(np.float32)

    def run(lib):
        kw = {k: getattr(lib, v) if isinstance(v, str) else v for k, v in kwargs.items()}
        obs = lib.ao.quantization.MinMaxObserver(**kw)
        obs(lib.tensor(x))
        obs(lib.tensor(x * 0.5 + 1))
        return obs.calculate_qparams()
    (si, zi), (st, zt) = run(torchish), run(torch)
    np.testing.assert_array_equal(si.numpy(), st.numpy())
    np.testing.assert_array_equal(zi.numpy(), zt.numpy())
    assert str(si.dtype) == str(st.dtype) and str(zi.dtype) == str(zt.dtype)


def test_stubs_pass_through():
    x = torchish.tensor([1.0, -2.0])
    assert torchish.ao.quantization.QuantStub()(x) is x
    assert torchish.ao.quantization.DeQuantStub()(x) is x


@pytest.mark.parametrize("x", [np.ones(6, np.float32), np.ones((2, 4), np.float32), np.ones((2, 6), np.float64)],
                         ids=["1d", "width", "double"])
def test_input_errors_like_torch(x):
    tm, im = _models(_mlp)
    tq, iq = _quantized(torch, tm), _quantized(torchish, im)
    with pytest.raises(RuntimeError) as et:
        tq(torch.tensor(x))
    with pytest.raises(RuntimeError, match=str(et.value)[:40]):
        iq(torchish.tensor(x))


def test_unsupported_dtype_and_recurrent_warning():
    with pytest.raises(NotImplementedError):  # (PyTorch's quint8 default: Embedding layers)
        _quantized(torchish, _mlp(torchish), dtype=torchish.quint8)
    with pytest.warns(UserWarning, match="GRU"):
        _quantized(torchish, torchish.nn.Sequential(torchish.nn.GRU(3, 3)))


@pytest.mark.parametrize("kwargs", [{}, dict(num_layers=2, bidirectional=True, batch_first=True)],
                         ids=["plain", "stacked_bidirectional"])
def test_lstm(kwargs):
    """nn.LSTM (the dynamic quantization tutorial's model): qint8 weights equal, outputs within float32 rounding
    (the matrix products are bit-equal; the gates' sigmoid/tanh are XLA's)."""
    def make(lib):
        return lib.nn.Sequential(lib.nn.LSTM(3, 4, **kwargs))
    tm, im = _models(make)
    tq = _quantized(torch, tm, {torch.nn.LSTM, torch.nn.Linear})
    iq = _quantized(torchish, im, {torchish.nn.LSTM, torchish.nn.Linear})
    assert repr(iq) == repr(tq)
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    yt, (ht, ct) = tq(torch.tensor(x))
    yi, (hi, ci) = iq(torchish.tensor(x))
    for a, b in ((yi, yt), (hi, ht), (ci, ct)):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=2e-4, atol=2e-5)
    # with a given initial state
    h0 = RNG.standard_normal(tuple(ht.shape)).astype(np.float32)
    yt, _ = tq[0](torch.tensor(x), (torch.tensor(h0), torch.tensor(h0)))
    yi, _ = iq[0](torchish.tensor(x), (torchish.tensor(h0), torchish.tensor(h0)))
    np.testing.assert_allclose(yi.numpy(), yt.detach().numpy(), rtol=2e-4, atol=2e-5)


def test_state_dict_with_torch():
    """The quantized model's state dict has PyTorch's keys (scale, zero_point, _packed_params.dtype,
    _packed_params._packed_params) and loads across the libraries through torch.save files."""
    import io
    tm, im = _models(_mlp)
    tq, iq = _quantized(torch, tm), _quantized(torchish, im)
    assert list(iq.state_dict()) == list(tq.state_dict())
    x = INPUTS["normal"]
    for saver, source, loader, target in ((torch, tq, torchish, _quantized(torchish, _mlp(torchish))),
                                          (torchish, iq, torch, _quantized(torch, _mlp(torch)))):
        buf = io.BytesIO()
        saver.save(source.state_dict(), buf)
        buf.seek(0)
        target.load_state_dict(loader.load(buf))
        np.testing.assert_array_equal(target(loader.tensor(x)).numpy(), tq(torch.tensor(x)).numpy())


def test_float16():
    """dtype=torch.float16: the weight rounded to float16, float32 products (fbgemm's fp16 GEMM order is its own:
    within float32 rounding); the LSTM stays float in torchish (warned)."""
    tm, im = _models(_mlp)
    tq = _quantized(torch, tm, {torch.nn.Linear}, dtype=torch.float16)
    iq = _quantized(torchish, im, {torchish.nn.Linear}, dtype=torchish.float16)
    assert repr(iq) == repr(tq)
    np.testing.assert_array_equal(iq[0].weight().numpy(), tq[0].weight().numpy())
    x = INPUTS["wide"]
    np.testing.assert_allclose(iq(torchish.tensor(x)).numpy(), tq(torch.tensor(x)).detach().numpy(), rtol=2e-4,
                               atol=2e-5)
    assert list(iq.state_dict()) == list(tq.state_dict())
    with pytest.warns(UserWarning, match="float16"):
        _quantized(torchish, torchish.nn.Sequential(torchish.nn.LSTM(3, 3)), dtype=torchish.float16)


def test_quantized_engine():
    assert torchish.backends.quantized.engine == torch.backends.quantized.engine
    assert torchish.backends.quantized.supported_engines == torch.backends.quantized.supported_engines
    for lib in (torch, torchish):
        before = lib.backends.quantized.engine
        try:
            lib.backends.quantized.engine = "fbgemm"
            assert lib.backends.quantized.engine == "fbgemm"
            for bad in ("none", "bogus"):
                with pytest.raises(RuntimeError, match="not supported|not a valid value"):
                    lib.backends.quantized.engine = bad
        finally:
            lib.backends.quantized.engine = before
