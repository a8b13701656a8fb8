"""Quantized tensors (``torchish._quantized``) against PyTorch: integer representations, parameters, printing, the
views PyTorch keeps quantized, and the errors of what it refuses."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")

X = np.array([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.0]], np.float32)
# halfway cases (x * inv_scale lands on .5) and values past the range of every dtype (one shape for every input:
# the kernels compile once)
EDGE = np.array([[2.5, 0.5, -2.5], [1e4, -1e4, -128.5]], np.float32)
RNG = np.random.default_rng(0)
RAND = (RNG.standard_normal((2, 3)) * 3).astype(np.float32)


def _pair(fn, x=X):
    return fn(torchish, torchish.tensor(x)), fn(torch, torch.tensor(x))


def _same_q(a, b):
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    assert a.qscheme() is getattr(torchish, str(b.qscheme()).split(".")[1])
    np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr().numpy())
    assert str(a.int_repr().dtype) == str(b.int_repr().dtype)
    np.testing.assert_array_equal(a.dequantize().numpy(), b.dequantize().numpy())
    if b.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
        assert type(a.q_zero_point()) is type(b.q_zero_point()) and type(a.q_scale()) is type(b.q_scale())
    else:
        np.testing.assert_array_equal(a.q_per_channel_scales().numpy(), b.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(a.q_per_channel_zero_points().numpy(), b.q_per_channel_zero_points().numpy())
        assert a.q_per_channel_axis() == b.q_per_channel_axis()


@pytest.mark.parametrize("dtype", ["qint8", "quint8", "qint32", "quint4x2", "quint2x4"])
@pytest.mark.parametrize("x", [EDGE, RAND], ids=["edge", "rand"])
def test_quantize_per_tensor(dtype, x):
    for scale, zp in ((0.1, 10), (1.0, 1), (0.0123, 3)):  # (the same kernels: scale and zero point are operands)
        a, b = _pair(lambda lib, t: lib.quantize_per_tensor(t, scale, zp, getattr(lib, dtype)), x)
        _same_q(a, b)


def test_quantize_per_tensor_tensor_qparams_and_list():
    a, b = _pair(lambda lib, t: lib.quantize_per_tensor(t, lib.tensor(0.1), lib.tensor(2), lib.quint8))
    _same_q(a, b)
    assert repr(a) == repr(b)  # (a float32 scale prints as 0.10000000149011612)
    a, b = _pair(lambda lib, t: lib.quantize_per_tensor([t, t * 2], lib.tensor([0.1, 0.2]), lib.tensor([1, 2]),
                                                       lib.quint8))
    assert type(a) is tuple and len(a) == len(b) == 2
    for qa, qb in zip(a, b):
        _same_q(qa, qb)


@pytest.mark.parametrize("dtype", ["qint8", "quint8", "qint32"])
@pytest.mark.parametrize("axis", [0, 1])
def test_quantize_per_channel(dtype, axis):
    n = RAND.shape[axis]
    scales = np.linspace(0.05, 0.3, n)
    zps = np.arange(n) * (1 if dtype != "qint8" else -1)

    def fn(lib, t):
        return lib.quantize_per_channel(t, lib.tensor(scales), lib.tensor(zps), axis, getattr(lib, dtype))
    a, b = _pair(fn, RAND)
    _same_q(a, b)
    assert repr(a) == repr(b)
    _same_q(a.clone(), b.clone())


@pytest.mark.parametrize("dtype", ["qint8", "quint8"])
@pytest.mark.parametrize("x", [X, RAND, np.zeros((2, 3), np.float32), np.full((2, 3), 1e-7, np.float32),
                               -np.abs(RAND) - 1], ids=["x", "rand", "zeros", "tiny", "negative"])
def test_quantize_per_tensor_dynamic(dtype, x):
    for reduce_range in (False, True):
        a, b = _pair(lambda lib, t: lib.quantize_per_tensor_dynamic(t, getattr(lib, dtype), reduce_range), x)
        _same_q(a, b)


def test_repr_and_accessors():
    a, b = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.qint8))
    assert repr(a) == repr(b) and str(a) == str(b)
    assert a.is_quantized and not torchish.tensor(1.0).is_quantized
    assert repr(a.dtype) == "torch.qint8" and repr(a.qscheme()) == "torch.per_tensor_affine"
    assert isinstance(torchish.qint8, torchish.dtype) and not torchish.quint8.is_floating_point
    assert torchish.qint8.itemsize == torch.qint8.itemsize
    a0, b0 = _pair(lambda lib, t: lib.quantize_per_tensor(t[0, 1], 0.1, 10, lib.quint8))
    assert repr(a0) == repr(b0)
    assert a0.item() == b0.item() and float(a0) == float(b0)
    assert a.element_size() == b.element_size() and a.numel() == b.numel() and len(a) == len(b)
    for x, y in zip(torchish.dequantize([a, a]), torch.dequantize([b, b])):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert torchish.dequantize(a).dtype is torchish.float32
    assert a.equal(a.clone()) and torchish.equal(a, a)


VIEWS = [lambda t: t.view(3, 2), lambda t: t.permute(1, 0), lambda t: t[0], lambda t: t[:, 1], lambda t: t.flatten(),
         lambda t: t.unsqueeze(0), lambda t: t.clone(), lambda t: t.expand(2, 2, 3), lambda t: t.flip(0),
         lambda t: t.narrow(1, 0, 2), lambda t: t.data, lambda t: t.view(-1)[1:4]]


def test_views_keep_qparams():
    # (one test, not one per op: each test pays for turning __torch_function__ dispatch on and off, ~0.1 s)
    qa, qb = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.qint8))
    for i, op in enumerate(VIEWS):
        a, b = op(qa), op(qb)
        _same_q(a, b)
        assert repr(a) == repr(b), i


def test_split_unbind_cat_stack():
    a, b = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.quint8))
    for x, y in zip(a.unbind(), b.unbind()):
        _same_q(x, y)
    for x, y in zip(a.chunk(2, 1), b.chunk(2, 1)):
        _same_q(x, y)
    _same_q(torchish.cat([a, a], 1), torch.cat([b, b], 1))
    _same_q(torchish.stack([a, a]), torch.stack([b, b]))
    # another tensor's qparams: requantized to the first one's
    a2, b2 = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.2, 10, lib.quint8))
    _same_q(torchish.cat([a, a2]), torch.cat([b, b2]))


REFUSED = [lambda t: t + t, lambda t: torch_add(t), lambda t: t.sum(), lambda t: -t, lambda t: t.abs(),
           lambda t: t * t, lambda t: t.new_zeros(2)]


def torch_add(t):
    lib = torchish if isinstance(t, torchish.Tensor) else torch
    return lib.add(t, t)


REFUSED_ALL = REFUSED + [lambda t: t + 1, lambda t: t * 2, lambda t: t.float(), lambda t: t.double(),
                                          lambda t: t.to(torchish.float32 if isinstance(t, torchish.Tensor)
                                                         else torch.float32), lambda t: t.numpy(), lambda t: t.tolist(),
                                          lambda t: t.requires_grad_(), lambda t: t.q_per_channel_scales()]


def test_refused_like_torch():
    a, b = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.qint8))
    for op in REFUSED_ALL:
        with pytest.raises(Exception) as eb:
            op(b)
        with pytest.raises(type(eb.value)) as ea:
            op(a)
        if isinstance(eb.value, NotImplementedError):
            start = str(eb.value).split(" with arguments")[0]
            assert str(ea.value).startswith(start + " with arguments from the 'QuantizedCPU' backend")
        else:
            assert str(ea.value).split("(")[0] == str(eb.value).split("(")[0]


@pytest.mark.parametrize("call", [
    lambda lib, t: lib.quantize_per_tensor(t.long(), 0.1, 0, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor(t.double(), 0.1, 0, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, 0, lib.float32),
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, 300, lib.quint8),
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, -1, lib.quint8),
    lambda lib, t: lib.quantize_per_channel(t, lib.tensor([0.1, 0.2, 0.3]), lib.tensor([0, 0, 0]), 0, lib.qint8),
    lambda lib, t: lib.quantize_per_channel(t, lib.tensor([0.1, 0.2]), lib.tensor([0, 0]), 0, lib.qint8).q_scale(),
])
def test_errors_like_torch(call):
    with pytest.raises(Exception) as eb:
        call(torch, torch.tensor(X))
    with pytest.raises(type(eb.value), match=str(eb.value)[:30].replace("(", r"\(").replace(")", r"\)")):
        call(torchish, torchish.tensor(X))


@pytest.mark.parametrize("make", [
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor(t, 0.05, 3, lib.quint8),
    lambda lib, t: lib.quantize_per_tensor(t, 0.01, -7, lib.qint32),
    lambda lib, t: lib.quantize_per_channel(t, lib.tensor([0.1, 0.2]), lib.tensor([0, 3]), 0, lib.quint8),
    lambda lib, t: {"q": lib.quantize_per_tensor(t, 0.1, 10, lib.qint8), "dtype": lib.qint8,
                    "scheme": lib.per_channel_affine},
], ids=["qint8", "quint8", "qint32", "per_channel", "dict"])
def test_save_load_with_torch(make):
    """torch.save files of quantized tensors (_rebuild_qtensor) load in both libraries, either way."""
    import io

    def roundtrip(saver, loader):
        buf = io.BytesIO()
        saver.save(make(saver, saver.tensor(X)), buf)
        buf.seek(0)
        return loader.load(buf)
    for got, ref in ((roundtrip(torchish, torch), make(torch, torch.tensor(X))),
                     (roundtrip(torch, torchish), make(torch, torch.tensor(X))),
                     (roundtrip(torchish, torchish), make(torch, torch.tensor(X)))):
        if isinstance(ref, dict):
            assert repr(got) == repr(ref)
            got, ref = got["q"], ref["q"]
        if isinstance(got, torchish.Tensor):
            _same_q(got, ref)
        else:  # (loaded by torch: compare with torch's own)
            assert repr(got) == repr(ref) and torch.equal(got.int_repr(), ref.int_repr())


def _lib(t):
    return torchish if isinstance(t, torchish.Tensor) else torch


KERNELS = {"relu": lambda t: t.relu(), "torch.relu": lambda t: _lib(t).relu(t),
           "F.relu": lambda t: _lib(t).nn.functional.relu(t), "relu_": lambda t: _lib(t).relu_(t.clone()),
           "max": lambda t: t.max(), "min": lambda t: t.min(), "max_dim": lambda t: _lib(t).max(t, 1).values,
           "mean": lambda t: t.mean(), "mean_dim": lambda t: t.mean(1),
           "torch.mean": lambda t: _lib(t).mean(t, 0, keepdim=True)}


def test_quantized_kernels():
    for x in (X, RAND):
        qa, qb = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.quint8), x)
        for name, op in KERNELS.items():
            try:
                _same_q(op(qa), op(qb))
            except AssertionError as e:
                raise AssertionError(name) from e


def test_compare_dequantized_values_and_max_indices():
    a, b = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 10, lib.quint8))
    a2, b2 = _pair(lambda lib, t: lib.quantize_per_tensor(t, 0.2, 3, lib.quint8))
    for x, y in ((a == a2, b == b2), (a != 1.0, b != 1.0), (torchish.eq(a, a2), torch.eq(b, b2))):
        assert x.dtype is torchish.bool
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    np.testing.assert_array_equal(a.max(dim=1).indices.numpy(), b.max(dim=1).indices.numpy())


def test_pickle_and_deepcopy():
    import copy
    import pickle
    a = torchish.quantize_per_tensor(torchish.tensor(X), 0.1, 10, torchish.qint8)
    c = torchish.quantize_per_channel(torchish.tensor(X), torchish.tensor([0.1, 0.2]), torchish.tensor([0, 3]), 0,
                                      torchish.quint8)
    for q in (a, c):
        for r in (pickle.loads(pickle.dumps(q)), copy.deepcopy(q)):
            assert type(r) is type(q) and repr(r) == repr(q)
            np.testing.assert_array_equal(r.int_repr().numpy(), q.int_repr().numpy())
