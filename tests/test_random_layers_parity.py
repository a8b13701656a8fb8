"""Seeded distributions and random nn layers draw PyTorch's numbers (torchish's generator is PyTorch's mt19937).

As tests/test_random_streams.py: each case seeds both libraries, runs the same PyTorch code, compares the results,
then the trailing ``rand(3)`` and ``randn(1)`` (``oracle.same_draws``) show that as many words of the stream were
used. Masks and integer samples are exact; values computed through transcendental functions or matrix products are
compared at float32 rounding level (a wrong draw differs by O(1)). Inputs are formulas (linspace/arange), never
another generator. The rejection samplers (gamma, Poisson, binomial and the distributions on them) are compared in
tests/test_random_rejection_parity.py.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import torchish
from oracle import needs_torch, same_draws, torch

EXACT = dict(rtol=0, atol=0)
ULPS = dict(rtol=1e-6, atol=1e-6)  # float32 log/exp/sin/cos: PyTorch's vectorised libm against XLA's
LAYER = dict(rtol=1e-5, atol=2e-6)  # a mask applied inside a layer's float32 matrix products


def _x(T, *shape, lo=-1.0, hi=1.0, dtype=None):
    n = int(np.prod(shape))
    return T.linspace(lo, hi, n, dtype=dtype).reshape(shape)


def _dist(T):
    return T.distributions


def _rrelu_with_grad(T, dtype, inplace):
    x = _x(T, 5, 6, lo=-2.0, hi=1.5, dtype=dtype).requires_grad_()
    y = T.nn.functional.rrelu(x * 1, 0.1, 0.3, training=True, inplace=inplace)
    (y * T.arange(30.0).reshape(5, 6).to(dtype)).sum().backward()
    return [y, x.grad]


def _prune_masks(T):
    prune = importlib.import_module(T.__name__ + ".nn.utils.prune")
    layer = T.nn.Linear(6, 4)
    prune.random_unstructured(layer, "weight", 0.5)
    prune.random_structured(layer, "weight", 0.5, dim=0)
    return [layer.weight_mask]


def _data_order(T):
    data = T.utils.data
    shuffled = [b[0] for b in data.DataLoader(data.TensorDataset(T.arange(10.0)), batch_size=4, shuffle=True)]
    split = [T.tensor(s.indices) for s in data.random_split(range(10), [0.3, 0.7])]
    weighted = T.tensor(list(data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 6)))
    return shuffled + split + [weighted]


def _packed_between_layers(T):
    """PyTorch drops out the packed layer output: one draw per packed row, not per padded step."""
    x = T.nn.utils.rnn.pack_padded_sequence(_x(T, 4, 3, 4), T.tensor([4, 3, 2]))
    out, _ = T.nn.GRU(4, 5, num_layers=3, dropout=0.4, bidirectional=True)(x)
    return T.nn.utils.rnn.pad_packed_sequence(out)[0]


def _attn_out(T, batch_first):
    m = T.nn.MultiheadAttention(8, 2, dropout=0.3, batch_first=batch_first)
    x = _x(T, 3, 2, 8)
    out, weights = m(x, x, x)
    return [out, weights]


CASES = {
    # distributions: the calls PyTorch's sample()/rsample() make, in its order and shapes
    "normal_rsample_fill": (lambda T: _dist(T).Normal(T.tensor(1.0), T.tensor(2.0)).rsample((20,)), ULPS),
    "normal_sample_serial": (lambda T: _dist(T).Normal(T.zeros(3), T.ones(3)).sample((2,)), EXACT),
    "uniform": (lambda T: _dist(T).Uniform(T.zeros(3), T.ones(3) * 2).sample((4,)), EXACT),
    "bernoulli_logits": (lambda T: _dist(T).Bernoulli(logits=T.tensor([0.2, -0.5, 0.9])).sample((5,)), EXACT),
    "categorical_batch": (lambda T: _dist(T).Categorical(T.tensor([[0.1, 0.2, 0.3, 0.4], [0.5, 0.1, 0.1, 0.3]]))
                          .sample((3,)), EXACT),
    "one_hot_categorical": (lambda T: _dist(T).OneHotCategorical(T.tensor([0.1, 0.2, 0.3, 0.4])).sample((5,)),
                            EXACT),
    "multinomial": (lambda T: _dist(T).Multinomial(10, T.tensor([0.2, 0.3, 0.5])).sample((3,)), EXACT),
    "laplace_cauchy_gumbel": (lambda T: [d(T.tensor([0.0, 1.0]), T.tensor([1.0, 0.5])).sample((5,)) for d in
                                         (_dist(T).Laplace, _dist(T).Cauchy, _dist(T).Gumbel)], ULPS),
    "exponential_geometric": (lambda T: [_dist(T).Exponential(T.tensor([1.0, 2.0])).sample((5,)),
                                         _dist(T).Geometric(T.tensor([0.3, 0.6])).sample((5,))], EXACT),
    "log_normal_independent": (lambda T: [_dist(T).LogNormal(T.tensor([0.0, 1.0]), T.tensor([1.0, 0.5])).sample((5,)),
                                          _dist(T).Independent(_dist(T).Normal(T.zeros(3), T.ones(3)), 1).sample((2,))],
                               ULPS),
    "multivariate_normal": (lambda T: [_dist(T).MultivariateNormal(T.zeros(3), T.eye(3) * 2).sample((4,)),
                                       _dist(T).LowRankMultivariateNormal(T.zeros(3), T.ones(3, 2) * 0.5, T.ones(3))
                                       .sample((4,))], ULPS),
    "relaxed": (lambda T: [_dist(T).RelaxedBernoulli(T.tensor(0.5), T.tensor([0.2, 0.7])).sample((5,)),
                           _dist(T).RelaxedOneHotCategorical(T.tensor(0.5), T.tensor([0.2, 0.3, 0.5])).sample((5,))],
                ULPS),
    "mixture_same_family": (lambda T: _dist(T).MixtureSameFamily(
        _dist(T).Categorical(T.tensor([0.3, 0.7])), _dist(T).Normal(T.tensor([0.0, 5.0]), T.tensor([1.0, 1.0])))
        .sample((4,)), EXACT),
    # torch's Python rejection loop: an entry accepted again in a later round takes the later value
    "von_mises": (lambda T: _dist(T).VonMises(T.tensor([0.3, 0.8]), T.tensor([1.0, 2.0])).sample((3,)), ULPS),
    # RReLU: one float64 uniform per element <= 0 only, between the bounds rounded to the computation type
    "rrelu_float32": (lambda T: _rrelu_with_grad(T, T.float32, False), EXACT),
    "rrelu_float64_inplace": (lambda T: _rrelu_with_grad(T, T.float64, True), EXACT),
    "rrelu_bfloat16": (lambda T: _rrelu_with_grad(T, T.bfloat16, False), EXACT),
    "rrelu_generator_argument": (lambda T: [T.rrelu(_x(T, 6), 0.1, 0.3, True, generator=T.Generator().manual_seed(3)),
                                            T.rrelu_(_x(T, 6), 0.1, 0.3, True,
                                                     generator=T.Generator().manual_seed(4))], EXACT),
    "rrelu_module_transposed": (lambda T: T.nn.RReLU()(_x(T, 4, 10).t()), EXACT),
    "gumbel_softmax_hard": (lambda T: T.nn.functional.gumbel_softmax(_x(T, 3, 4), tau=0.5, hard=True), EXACT),
    "alpha_dropouts": (lambda T: [T.nn.AlphaDropout(0.3)(_x(T, 4, 6)), T.nn.FeatureAlphaDropout(0.3)(_x(T, 2, 3, 4))],
                       EXACT),
    "channel_dropouts": (lambda T: [T.nn.Dropout1d(0.4)(T.ones(2, 5, 3)), T.nn.Dropout3d(0.4)(T.ones(2, 5, 3, 2, 2))],
                         EXACT),
    # dropout of a non-contiguous input: PyTorch fills empty_like(input), in the input's memory order
    "dropout_transposed": (lambda T: T.nn.functional.dropout(T.arange(24.0).reshape(2, 3, 4).transpose(0, 1), 0.4),
                           EXACT),
    "dropout_channels_last": (lambda T: T.nn.functional.dropout(
        T.arange(48.0).reshape(2, 3, 2, 4).to(memory_format=T.channels_last), 0.4), EXACT),
    "dropout_sliced": (lambda T: T.nn.functional.dropout(T.arange(1.0, 49.0).reshape(4, 12)[:, ::2].t(), 0.4), EXACT),
    "alpha_dropout_transposed": (lambda T: T.nn.functional.alpha_dropout(_x(T, 4, 6).t(), 0.3, True), EXACT),
    "lstm_between_layers": (lambda T: T.nn.LSTM(4, 5, num_layers=3, dropout=0.4)(_x(T, 2, 3, 4))[0], LAYER),
    "gru_packed_between_layers": (_packed_between_layers, LAYER),
    "multihead_attention": (lambda T: _attn_out(T, False), LAYER),
    # batch_first: the attention output is a transposed view, so dropout1's mask is drawn transposed
    "encoder_layer_batch_first": (lambda T: T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True)(
        _x(T, 2, 3, 8)), LAYER),
    "fractional_max_pool": (lambda T: T.nn.FractionalMaxPool2d(3, output_ratio=0.5)(_x(T, 2, 3, 9, 9)), EXACT),
    # torch.nn.utils.prune: random_unstructured drops the largest of rand_like(weight)
    "prune_random": (_prune_masks, EXACT),
    "data_loader_order": (_data_order, EXACT),
    "sdpa_dropout": (lambda T: T.nn.functional.scaled_dot_product_attention(
        *[_x(T, 2, 2, 3, 4) * s for s in (1, 0.5, 2)], dropout_p=0.3), LAYER),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_layers_and_distributions_match_pytorch(name):
    fn, tols = CASES[name]
    same_draws(fn, 0, **tols)


@needs_torch
def test_compiled_rrelu_and_transposed_dropout_draw_as_pytorch():
    """Inside torchish.compile the number of slopes drawn is a traced value: the stream still advances by it; a
    dropout mask of a transposed tensor is drawn in its memory order there too."""
    def step(T, x):
        return T.nn.functional.rrelu(x, training=True) * 2 + T.nn.functional.dropout(x.reshape(2, 5).t(), 0.4).t(
            ).reshape(-1)

    xs = [np.linspace(-1, 1, 10, dtype=np.float32) * s for s in (1.0, -1.0, 0.5)]
    torch.manual_seed(1)
    ref = [step(torch, torch.from_numpy(x)).numpy() for x in xs]
    torchish.manual_seed(1)
    compiled = torchish.compile(lambda x: step(torchish, x))
    got = [compiled(torchish.from_numpy(x)).numpy() for x in xs]
    for r, m in zip(ref, got):
        np.testing.assert_array_equal(m, r)
    np.testing.assert_array_equal(torchish.rand(3).numpy(), torch.rand(3).numpy())


@needs_torch
def test_rrelu_training_errors_as_pytorch():
    for T in (torch, torchish):
        for dt in (T.float16, T.int64):
            with pytest.raises(NotImplementedError, match="rrelu_with_noise_out_cpu"):
                T.nn.functional.rrelu(T.ones(3, dtype=dt), training=True)


def test_rrelu_under_vmap_leaves_the_generator_concrete():
    """(PyTorch's vmap has no rrelu rule; torchish's draws a slope for every element there, so the generator's
    state never depends on the batched values.)"""
    x = torchish.linspace(-1, 1, 4).repeat(3, 1)
    for mode in ("same", "different"):
        out = torchish.func.vmap(lambda r: torchish.nn.functional.rrelu(r, training=True), randomness=mode)(x)
        assert bool((out[:, 2:] == x[:, 2:]).all()) and bool((out[:, :2] < 0).all())
        if mode == "same":
            assert bool((out == out[0]).all())
        assert torchish.rand(3).shape == (3,)  # a leaked tracer in the state would fail here
