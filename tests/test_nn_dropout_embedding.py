"""Dropout layers (statistics of the masks, scaling, channel-wise masks, eval identity, in-place, seeding) and
Embedding / EmbeddingBag against PyTorch (values, weight gradients with padding_idx / scale_grad_by_freq, max_norm
renormalising the weight in place, bags with offsets / per_sample_weights / padding, errors, repr)."""
import warnings

import numpy as np
import pytest

from layer_oracle import check_module
from oracle import arr, check, check_raises, same, same_error, to_numpy, torch, torchish

F = torchish.nn.functional
nn = torchish.nn


# ----------------------------------------------------------------------------------------------------------------
# dropout


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics_and_scaling(p):
    torchish.manual_seed(0)
    x = torchish.ones(40000, requires_grad=True)
    y = F.dropout(x, p)
    v = y.detach().numpy()
    zero = v == 0
    assert abs(zero.mean() - p) < 0.015
    np.testing.assert_allclose(v[~zero], 1 / (1 - p), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy() == 0, zero)                   # the same mask in the backward
    np.testing.assert_allclose(x.grad.numpy()[~zero], 1 / (1 - p), rtol=1e-6)


def test_dropout_is_seeded_by_torchish_generator():
    torchish.manual_seed(3)
    a = F.dropout(torchish.ones(64)).numpy()
    b = F.dropout(torchish.ones(64)).numpy()
    torchish.manual_seed(3)
    np.testing.assert_array_equal(F.dropout(torchish.ones(64)).numpy(), a)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("layer,shape,channel_axes", [
    (lambda: nn.Dropout1d(0.5), (8, 30, 5), (2,)),
    (lambda: nn.Dropout1d(0.5), (30, 5), (1,)),
    (lambda: nn.Dropout2d(0.5), (8, 30, 3, 2), (2, 3)),
    (lambda: nn.Dropout3d(0.5), (4, 30, 2, 2, 2), (2, 3, 4)),
    (lambda: nn.Dropout3d(0.5), (30, 2, 3, 2), (1, 2, 3)),
])
def test_channel_dropout_masks_whole_channels(layer, shape, channel_axes):
    torchish.manual_seed(1)
    v = layer()(torchish.ones(*shape)).numpy()
    lo, hi = v.min(axis=channel_axes), v.max(axis=channel_axes)
    np.testing.assert_array_equal(lo, hi)                                       # each channel all kept or all zero
    assert set(np.unique(lo)) <= {0.0, 2.0}
    assert 0.3 < (lo == 0).mean() < 0.7


def test_alpha_dropout_keeps_mean_and_variance():
    torchish.manual_seed(0)
    x = torchish.randn(200000)
    for layer in (nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(0.2)):
        y = layer(x.reshape(2000, 100, 1) if isinstance(layer, nn.FeatureAlphaDropout) else x)
        assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
    # dropped positions take the same value as PyTorch's: a * (-alpha) + b with PyTorch's constants
    v = F.alpha_dropout(torchish.zeros(10000), 0.3, True).numpy()
    if torch is not None:
        ref = torch.nn.functional.alpha_dropout(torch.zeros(10000), 0.3, True).numpy()
        np.testing.assert_allclose(np.unique(v), np.unique(ref), rtol=1e-6)


@pytest.mark.parametrize("layer", [nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
                                   nn.FeatureAlphaDropout])
def test_dropout_eval_is_identity(layer):
    m = layer(0.5).eval()
    shape = (2, 3, 4) if layer is nn.Dropout1d else (2, 3, 4, 5)  # dropout1d rejects 4-D input even in eval (torch)
    x = torchish.tensor(arr(*shape), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert m(x) is x


def test_dropout_inplace_and_edge_probabilities():
    x = torchish.ones(10)
    assert F.dropout(x, 0.5, inplace=True) is x and set(np.unique(x.numpy())) <= {0.0, 2.0}
    z = torchish.ones(6, 4)
    assert F.dropout1d(z, 0.5, inplace=True) is z
    w = torchish.ones(3, requires_grad=True)
    y = F.dropout(w, 1.0)
    assert not y.detach().numpy().any()
    y.sum().backward()
    assert not w.grad.numpy().any()
    assert F.dropout(w, 0.0) is w


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.functional.dropout(T.ones(3), 1.5),
    lambda T: T.nn.functional.feature_alpha_dropout(T.ones(3, 2), -0.1, True),
    lambda T: T.nn.functional.dropout1d(T.ones(1, 2, 3, 4)),
    lambda T: T.nn.functional.dropout(T.ones(3, dtype=T.long)),
    lambda T: T.nn.functional.dropout(T.ones(3, requires_grad=True), inplace=True),
    lambda T: T.nn.Dropout(-0.5),
])
def test_dropout_errors(fn):
    check_raises(fn)


def test_dropout2d_warnings_and_repr():
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(torchish.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
        F.dropout2d(torchish.ones(1, 2, 3, 4, 4))
    if torch is not None:
        for make in (lambda n: n.Dropout(0.3), lambda n: n.Dropout2d(inplace=True), lambda n: n.AlphaDropout(0.1)):
            assert repr(make(nn)) == repr(make(torch.nn))


# ----------------------------------------------------------------------------------------------------------------
# embedding


IDX = np.array([[0, 1, 1], [5, 2, 1]])


@pytest.mark.parametrize("make,idx", [
    (lambda n: n.Embedding(6, 3), IDX),
    (lambda n: n.Embedding(6, 3, padding_idx=1), IDX),
    (lambda n: n.Embedding(6, 3, padding_idx=-1), IDX),
    (lambda n: n.Embedding(6, 3, scale_grad_by_freq=True), IDX),
    (lambda n: n.Embedding(6, 3, max_norm=0.7), IDX),
    (lambda n: n.Embedding(6, 3, max_norm=1.0, norm_type=1.0), IDX.astype(np.int32)),
])
def test_embedding(make, idx):
    check_module(make, [idx], steps=2)           # max_norm: the weight rows are renormalised in place


def test_embedding_init_and_padding_row():
    torchish.manual_seed(0)
    e = nn.Embedding(2000, 4, padding_idx=3)
    w = e.weight.detach().numpy()
    assert not w[3].any() and abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05   # N(0, 1), padding row zero


def test_embedding_max_norm_renormalises_weight_in_place():
    e = nn.Embedding(4, 3, max_norm=1.0)
    with torchish.no_grad():
        e.weight.copy_(torchish.tensor(np.full((4, 3), 2.0, np.float32)))
    w, version = e.weight, e.weight._version
    e(torchish.tensor([0, 2, 2]))
    norms = np.linalg.norm(e.weight.detach().numpy(), axis=1)
    assert e.weight is w and w._version > version
    np.testing.assert_allclose(norms[[0, 2]], 1.0, rtol=1e-5)
    np.testing.assert_allclose(norms[[1, 3]], np.linalg.norm([2.0] * 3), rtol=1e-6)


def test_embedding_from_pretrained():
    def make(n):
        lib = torchish if n is torchish.nn else torch
        return n.Embedding.from_pretrained(lib.tensor(arr(5, 3)), freeze=False, padding_idx=2)

    check_module(make, [np.array([1, 2, 2, 4])])
    frozen = nn.Embedding.from_pretrained(torchish.tensor(arr(5, 3)))
    assert not frozen.weight.requires_grad
    assert frozen.weight.detach().numpy()[0].any()
    bag = nn.EmbeddingBag.from_pretrained(torchish.tensor(arr(5, 3)), mode="max")
    assert not bag.weight.requires_grad and bag.mode == "max"


BAG = np.array([0, 1, 4, 2, 1, 1, 3])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("inputs,kw", [
    ([BAG, np.array([0, 2, 2, 5])], {}),
    ([BAG, np.array([0, 2, 2, 5])], {"padding_idx": 1}),
    ([BAG, np.array([0, 2, 2, 7])], {"include_last_offset": True}),
    ([IDX], {}),
    ([IDX], {"padding_idx": 1, "max_norm": 0.8}),
])
def test_embedding_bag(mode, inputs, kw):
    check_module(lambda n: n.EmbeddingBag(6, 3, mode=mode, **kw), inputs)


def test_embedding_bag_per_sample_weights():
    check_module(lambda n: n.EmbeddingBag(6, 3, mode="sum"), [BAG, np.array([0, 3]), arr(7)])   # psw grad too


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("inputs,kw", [
    ([BAG, np.array([0, 2, 2, 5])], {}),
    ([BAG, np.array([0, 2, 2, 5])], {"padding_idx": 1}),
    ([np.array([0, 2, 2, 5, 2, 1]), np.array([0, 3])], {}),
    ([IDX], {}),
])
def test_embedding_bag_scale_grad_by_freq(mode, inputs, kw):
    """PyTorch's CPU embedding_bag divides a row's gradient by ``counts[sorted_indices[g]]`` (``g`` the row's rank
    among the unique indices), which is not always the row's own count (indices [0, 2, 2, 5, 2, 1]: row 5's
    gradient is divided by 3); torchish gives PyTorch's numbers."""
    check_module(lambda n: n.EmbeddingBag(6, 3, mode=mode, scale_grad_by_freq=True, **kw), inputs)


def test_embedding_functional_grad():
    check(lambda T, w: T.nn.functional.embedding(T.tensor(IDX), w, padding_idx=5), [arr(6, 3)])


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.functional.embedding(T.tensor([6]), T.ones(6, 3)),
    lambda T: T.nn.functional.embedding(T.tensor([-1]), T.ones(6, 3)),
    lambda T: T.nn.functional.embedding(T.tensor([1.0]), T.ones(6, 3)),
    lambda T: T.nn.functional.embedding(T.tensor([1]), T.ones(6)),
    lambda T: T.nn.functional.embedding(T.tensor([1]), T.ones(6, 3), padding_idx=6),
    lambda T: T.nn.Embedding(5, 3, padding_idx=-6),
    lambda T: T.nn.Embedding.from_pretrained(T.ones(3)),
    lambda T: T.nn.functional.embedding_bag(T.tensor([[0, 1]]), T.ones(6, 3), T.tensor([0])),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3)),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3), T.tensor([1])),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3), T.tensor([0, 3])),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 6]), T.ones(6, 3), T.tensor([0])),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3), T.tensor([[0]])),
    lambda T: T.nn.functional.embedding_bag(T.tensor([[[0, 1]]]), T.ones(6, 3)),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3), T.tensor([0]), mode="foo"),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3), T.tensor([0]),
                                            per_sample_weights=T.ones(2)),
    lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(6, 3), T.tensor([0]), mode="sum",
                                            per_sample_weights=T.ones(3)),
    lambda T: T.nn.EmbeddingBag(5, 3, padding_idx=5),
])
def test_embedding_errors(fn):
    check_raises(fn)


def test_embedding_error_message():
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(torchish.tensor([[0, 7]]), torchish.ones(6, 3))


@pytest.mark.parametrize("lookup", [
    lambda m, w: m.nn.functional.embedding(m.tensor([1, 2, 2, 3]), w, sparse=True, scale_grad_by_freq=True),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2, 2, 3]), w, m.tensor([0, 2]), sparse=True,
                                               scale_grad_by_freq=True),
])
def test_sparse_gradient_scaled_by_frequency_raises_in_backward(lookup):
    """The forward runs; PyTorch's backward refuses a sparse gradient scaled by frequency (and a later backward
    without that option still works)."""
    def forward_only(m):
        w = m.ones(6, 3, requires_grad=True)
        return lookup(m, w).detach()
    same(forward_only)

    def backward(m):
        w = m.ones(6, 3, requires_grad=True)
        lookup(m, w).sum().backward()
    same_error(backward)

    def then_dense(m):
        w = m.ones(6, 3, requires_grad=True)
        m.nn.functional.embedding(m.tensor([1, 2, 2, 3]), w, scale_grad_by_freq=True).sum().backward()
        return w.grad
    same(then_dense)


@pytest.mark.parametrize("idx", [[[3]], [[-1]], [[5, -4, 1]], [[-5, 4]]])
def test_embedding_max_norm_index_errors_name_the_renorm_select(idx):
    """With max_norm PyTorch renormalises before the lookup: its select() of each distinct row, in ascending order,
    names the first index outside [-num, num); a negative index in range reaches the lookup's own message."""
    same_error(lambda T: T.nn.functional.embedding(T.tensor(idx), T.ones(3, 2), max_norm=1.0))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool", "complex64", "uint16"])
def test_embedding_type_errors_print_the_cpp_type_names(dtype):
    """PyTorch's C++ checks print the legacy name only for the old TH types (torch.FloatTensor), else
    CPUBFloat16Type, CPUBoolType... (torchish printed torch.BFloat16Tensor for all)."""
    def dt(T):
        return getattr(T, dtype)
    same_error(lambda T: T.nn.functional.embedding(T.tensor([1]).to(dt(T)), T.ones(3, 2)))
    if dtype not in ("bool", "uint16"):  # (both take bool indices in a bag; uint16 ones fail their promotion)
        same_error(lambda T: T.nn.functional.embedding_bag(T.tensor([1]).to(dt(T)), T.ones(3, 2), T.tensor([0])))
    if dtype not in ("float32", "bfloat16"):  # (a weight of any floating type is taken)
        same_error(lambda T: T.nn.functional.embedding_bag(T.tensor([1]), T.ones(3, 2).to(dt(T)), T.tensor([0])))
