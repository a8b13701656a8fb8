"""``repr(module)`` (what ``print(model)`` shows) as PyTorch's for every nn module class, with default and
non-default constructor arguments: extra_repr fields, their order and formatting, submodules."""
import warnings

import pytest

from oracle import needs_torch, torch, torchish

pytestmark = needs_torch


def _modules(T):
    """One of each nn module, with default and non-default constructor arguments."""
    nn = T.nn
    return [
        nn.Linear(3, 4), nn.Linear(3, 4, bias=False), nn.Bilinear(2, 3, 4), nn.Identity(), nn.LazyLinear(5),
        nn.Conv1d(2, 3, 3), nn.Conv2d(2, 4, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode="reflect"),
        nn.Conv2d(3, 6, 3, padding="same"), nn.Conv3d(1, 2, 3), nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
        nn.ConvTranspose1d(2, 3, 3, dilation=2), nn.MaxPool2d(2), nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True),
        nn.AvgPool2d(2), nn.AvgPool1d(3, count_include_pad=False), nn.AdaptiveAvgPool2d((1, None)), nn.AdaptiveMaxPool1d(3),
        nn.LPPool2d(2, 3), nn.FractionalMaxPool2d(2, output_size=3), nn.MaxUnpool2d(2),
        nn.BatchNorm1d(3), nn.BatchNorm2d(4, momentum=None, affine=False), nn.BatchNorm3d(2, track_running_stats=False),
        nn.InstanceNorm2d(3), nn.InstanceNorm1d(3, affine=True), nn.LayerNorm(4), nn.LayerNorm((2, 3), elementwise_affine=False),
        nn.GroupNorm(2, 4), nn.RMSNorm(4), nn.RMSNorm([2, 3], eps=1e-5), nn.LocalResponseNorm(2), nn.CrossMapLRN2d(3),
        nn.ReLU(), nn.ReLU(inplace=True), nn.LeakyReLU(0.2), nn.PReLU(3), nn.ELU(alpha=0.5), nn.GELU(approximate="tanh"),
        nn.SiLU(), nn.Softmax(dim=1), nn.LogSoftmax(1), nn.Softmin(0), nn.Softmax2d(), nn.Hardtanh(-2, 2), nn.ReLU6(),
        nn.Threshold(0.1, 20), nn.Softplus(beta=2, threshold=10), nn.Softshrink(0.3), nn.Hardshrink(), nn.CELU(), nn.SELU(),
        nn.GLU(), nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(), nn.Sigmoid(), nn.Tanh(), nn.Tanhshrink(), nn.Softsign(),
        nn.LogSigmoid(), nn.RReLU(), nn.MultiheadAttention(8, 2), nn.MultiheadAttention(8, 2, kdim=4, vdim=6, batch_first=True),
        nn.Dropout(0.3), nn.Dropout2d(), nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(), nn.Dropout1d(0.1), nn.Dropout3d(),
        nn.Embedding(10, 3), nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, scale_grad_by_freq=True, sparse=True),
        nn.EmbeddingBag(10, 3, mode="sum"), nn.RNN(3, 4), nn.LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True),
        nn.GRU(3, 4, bias=False), nn.LSTM(3, 4, proj_size=2), nn.RNNCell(3, 4, nonlinearity="relu"), nn.LSTMCell(3, 4), nn.GRUCell(3, 4),
        nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16),
        nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True),
        nn.Flatten(), nn.Flatten(0, 2), nn.Unflatten(1, (2, 3)), nn.Upsample(scale_factor=2), nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
        nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingBilinear2d(size=4), nn.PixelShuffle(2), nn.PixelUnshuffle(2), nn.ChannelShuffle(2),
        nn.ZeroPad2d(2), nn.ConstantPad1d((1, 2), 3.5), nn.ReflectionPad2d(1), nn.ReplicationPad3d((1, 1, 1, 1, 1, 1)), nn.CircularPad2d(1), nn.ZeroPad1d(1),
        nn.Fold((4, 4), 2), nn.Unfold(2, dilation=1, padding=0, stride=1), nn.CosineSimilarity(), nn.PairwiseDistance(p=1.0),
        nn.MSELoss(), nn.L1Loss(reduction="sum"), nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=3), nn.NLLLoss(), nn.BCELoss(), nn.BCEWithLogitsLoss(pos_weight=T.ones(2)),
        nn.HuberLoss(delta=0.5), nn.SmoothL1Loss(beta=0.5), nn.KLDivLoss(reduction="batchmean", log_target=True), nn.CTCLoss(), nn.MarginRankingLoss(0.1), nn.TripletMarginLoss(),
        nn.CosineEmbeddingLoss(), nn.MultiLabelMarginLoss(), nn.MultiMarginLoss(p=2), nn.SoftMarginLoss(), nn.PoissonNLLLoss(), nn.GaussianNLLLoss(), nn.HingeEmbeddingLoss(),
        nn.MultiLabelSoftMarginLoss(), nn.TripletMarginWithDistanceLoss(margin=2.0),
        nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 3))), nn.ModuleList([nn.Linear(1, 1), nn.Tanh()]),
        nn.ModuleDict({"a": nn.Linear(1, 2), "b": nn.ReLU()}), nn.ParameterList([nn.Parameter(T.ones(2)), nn.Parameter(T.ones(2, 3))]),
        nn.ParameterDict({"w": nn.Parameter(T.ones(3))}), nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8]), nn.SyncBatchNorm(3),
        nn.utils.parametrizations.weight_norm(nn.Linear(2, 3)), nn.utils.spectral_norm(nn.Linear(2, 3)),
        nn.LazyConv2d(3, 2), nn.LazyBatchNorm1d(), nn.Hardtanh(inplace=True), nn.Softmax(), nn.Embedding.from_pretrained(T.ones(3, 2)),
    ]


@pytest.fixture(scope="module")
def both():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _modules(torch), _modules(torchish)


def test_every_module_repr_matches_pytorch(both):
    ref, got = both
    assert len(ref) == len(got)
    diff = [(repr(a), repr(b)) for a, b in zip(ref, got) if repr(a) != repr(b)]
    assert not diff, "\n\n".join(f"torch:    {a}\ntorchish: {b}" for a, b in diff)
