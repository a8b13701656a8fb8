"""Every nn module's default initialisation, every nn.init function and the random nn utilities draw PyTorch's
numbers after ``manual_seed``: each case seeds both libraries (two seeds), builds or fills, and compares every
parameter and buffer in ``named_parameters()``/``named_buffers()`` order exactly, then a trailing ``rand(3)`` and
``randn(1)`` (``oracle.same_draws``), so the number of words drawn and the cached normal match too.

Fixed while sweeping:
- RReLU's float64 slopes (training): PyTorch's serial kernel rounds ``u * (upper - lower)`` before adding
  ``lower`` (built without FMA); XLA fused the multiply-add (1 ulp off in ~20% of slopes).
- ``nn.init.trunc_normal_`` of a transposed / sliced / channels_last tensor: PyTorch redraws into
  ``empty_like(result)`` (the view's layout, so serially in memory order) and its rejection sampler's buffers are
  ``empty_like(tensor)``; torchish drew into contiguous buffers, so redrawn values landed elsewhere.
- ``nn.init.orthogonal_`` of a float16/bfloat16 or complex tensor raises as PyTorch does after its normal_ draw
  (LAPACK's geqrf has no half types; ``sign`` refuses complex); torchish returned values. The householder
  ``parametrizations.orthogonal`` in half precision raises PyTorch's ``"orgqr_cpu"`` NotImplementedError (it
  now goes through ``linalg.householder_product``); torchish failed later with a TypeError on ``None @ Q``.
- Meta tensors: nn.init's trunc_normal_/orthogonal_/sparse_/eye_/dirac_ return a meta tensor untouched as
  PyTorch's (they raised); Embedding/EmbeddingBag(padding_idx, device="meta") build (writing through a view of a
  meta tensor failed in ops/inplace's view replay); parametrizations.orthogonal of a meta weight completes its
  basis with a meta randn (it drew from the CPU generator and failed).

Swept and matching exactly (seeds 0 and 2024): Linear (bias=False, float64, bfloat16, float16, device="cpu"),
Bilinear, LazyLinear after a forward, Conv1d/2d/3d and ConvTranspose1d/2d/3d (groups, dilation, padding_mode,
float64/bfloat16/float16), the Lazy conv and norm modules after a forward, Embedding (padding_idx, negative
padding_idx, max_norm, float64/bfloat16/float16), EmbeddingBag, RNN/LSTM/GRU (num_layers, bidirectional,
proj_size, bias=False, nonlinearity, float64/bfloat16), RNNCell/LSTMCell/GRUCell, MultiheadAttention
(kdim/vdim, add_bias_kv, add_zero_attn, bias=False), TransformerEncoder/DecoderLayer, TransformerEncoder/Decoder,
Transformer (bias=False, norm_first), BatchNorm1d/2d/3d, SyncBatchNorm, InstanceNorm (affine, running stats),
LayerNorm/GroupNorm/RMSNorm (affine or not), PReLU, AdaptiveLogSoftmaxWithLoss (head_bias),
LinearCrossEntropyLoss, Sequential/ModuleDict, device="meta" (draws nothing), to_empty + reset_parameters,
skip_init, reset_parameters() after construction; nn.init uniform_/normal_/trunc_normal_/xavier_*/kaiming_*
(every mode and nonlinearity, gains) on 1-d..4-d tensors, float64/bfloat16/float16, with ``generator=``, on
transposed, sliced and channels_last tensors, sparse_, the deterministic fills, the deprecated aliases and the
private ``_no_grad_*`` helpers (added: third-party code imports them);
nn.utils.prune random_unstructured / random_structured (dims, repeated) / global_unstructured; the random
forwards: Dropout/1d/2d/3d (batched and not, in place, p=0/1, float64/bfloat16/float16, transposed, sliced,
expanded and channels_last inputs), AlphaDropout, FeatureAlphaDropout, RReLU (float32/float64/bfloat16, in place
on transposed and channels_last inputs, strided slices, torch.rrelu's generator),
FractionalMaxPool2d/3d (float64, bfloat16 inputs), gumbel_softmax.

Matching to a few ulps, not bit for bit (the draws are the same, the arithmetic after them is not): orthogonal_
and parametrizations.orthogonal (every orthogonal_map; LAPACK's QR against XLA's), spectral_norm (both APIs; the
power iterations), weight_norm (the norm's summation order), float64 normals of fewer than 16 values (PyTorch's
serial float64 Box-Muller through libm, torchish's through XLA), and the training forwards with dropout
(Transformer layers, MultiheadAttention, stacked RNN/LSTM/GRU, scaled_dot_product_attention): a wrong mask would
differ by whole values.

Found and fixed meanwhile by the sampler's owners (4bffc75): float16/bfloat16 normals of 16 or more values with a
mean or std not 0/1 (xavier_normal_, normal_(std=0.02) in half precision; the half_xavier_normal_/half_normal_
cases), and float64 uniform_(a, b) and normal_fill's mean/std (Linear/MultiheadAttention in float64,
kaiming/xavier_uniform_), which relied on XLA contracting x * scale + shift into PyTorch's FMA (on at XLA's default
flags, off at the suite's): ops/_samplers.fma64 builds the fused value exactly, so they are compared exactly under
either. RReLU's fix shows only under XLA's default flags (the suite's never contracted)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from oracle import needs_torch, raised, same_draws, torch, torchish

EXACT = dict(rtol=0, atol=0)
# float64 values past libm's or LAPACK's arithmetic (serial Box-Muller through XLA's log/cos, QR): ~1e-14
F64_ULPS = dict(rtol=1e-13, atol=1e-15)
ULPS = dict(rtol=1e-5, atol=1e-6)  # computed after the draws (QR, norms, matmuls); see the docstring
SEEDS = (0, 2024)


def _state(m):
    return [p for _, p in m.named_parameters()] + [b for _, b in m.named_buffers()]


def _dt(T, name):
    return getattr(T, name) if isinstance(name, str) else name


def _module(cls, *args, forward=None, **kwargs):
    """A case: ``T.nn.<cls>(*args, **kwargs)`` (dtype names as strings), optionally called on ``forward(T)``."""
    def build(T):
        kw = {k: (_dt(T, v) if k == "dtype" else v) for k, v in kwargs.items()}
        m = getattr(T.nn, cls)(*args, **kw)
        if forward is not None:
            m(forward(T))
        return _state(m)
    return build


def _ones(*shape, dtype="float32"):
    return lambda T: T.ones(*shape, dtype=_dt(T, dtype))


def _x(T, *shape, dtype="float32"):
    """Exact deterministic inputs (multiples of 1/4)."""
    n = int(np.prod(shape))
    return ((T.arange(n) * 5 % 13 - 6) / 4).reshape(*shape).to(_dt(T, dtype))


MODULES = {
    "linear": _module("Linear", 7, 5),
    "linear_no_bias": _module("Linear", 7, 5, bias=False),
    "linear_float64_cpu": (_module("Linear", 7, 5, dtype="float64", device="cpu"), EXACT),
    "linear_bfloat16": _module("Linear", 7, 5, dtype="bfloat16"),
    "linear_float16": _module("Linear", 7, 5, dtype="float16"),
    "bilinear": _module("Bilinear", 3, 4, 5),
    "bilinear_no_bias": _module("Bilinear", 3, 4, 5, bias=False),
    "lazy_linear": _module("LazyLinear", 5, forward=_ones(2, 7)),
    "lazy_linear_float64": (_module("LazyLinear", 5, dtype="float64", forward=_ones(2, 7, dtype="float64")),
                            EXACT),
    "conv1d_groups_dilation": _module("Conv1d", 4, 6, 3, groups=2, dilation=2),
    "conv2d": _module("Conv2d", 3, 4, 3),
    "conv2d_circular_depthwise": _module("Conv2d", 4, 4, (2, 3), groups=4, padding=1, padding_mode="circular",
                                         bias=False),
    "conv2d_bfloat16": _module("Conv2d", 3, 4, 2, dtype="bfloat16"),
    "conv3d": _module("Conv3d", 2, 3, 2),
    "conv_transpose1d_groups": _module("ConvTranspose1d", 4, 6, 3, groups=2),
    "conv_transpose2d_dilation": _module("ConvTranspose2d", 3, 4, (2, 3), dilation=2),
    "conv_transpose2d_float16": _module("ConvTranspose2d", 3, 4, 2, dtype="float16"),
    "conv_transpose3d_no_bias": _module("ConvTranspose3d", 2, 3, 2, bias=False),
    "lazy_conv1d": _module("LazyConv1d", 4, 3, forward=_ones(1, 2, 8)),
    "lazy_conv2d": _module("LazyConv2d", 4, 3, forward=_ones(1, 2, 5, 5)),
    "lazy_conv3d": _module("LazyConv3d", 4, 2, forward=_ones(1, 2, 3, 3, 3)),
    "lazy_conv_transpose1d": _module("LazyConvTranspose1d", 4, 3, forward=_ones(1, 2, 8)),
    "lazy_conv_transpose2d_groups": _module("LazyConvTranspose2d", 4, 3, groups=2, forward=_ones(1, 2, 5, 5)),
    "lazy_conv_transpose3d": _module("LazyConvTranspose3d", 4, 2, forward=_ones(1, 2, 3, 3, 3)),
    "embedding": _module("Embedding", 6, 4),
    "embedding_padding_idx": _module("Embedding", 6, 4, padding_idx=2),
    "embedding_negative_padding_max_norm": _module("Embedding", 6, 4, padding_idx=-1, max_norm=1.0),
    "embedding_float64": _module("Embedding", 6, 4, dtype="float64"),
    "embedding_bfloat16": _module("Embedding", 6, 4, dtype="bfloat16"),
    "embedding_bag": _module("EmbeddingBag", 6, 4, mode="sum"),
    "embedding_bag_padding_idx": _module("EmbeddingBag", 6, 4, padding_idx=0),
    "rnn": _module("RNN", 3, 4),
    "rnn_two_layers_bidirectional_relu": _module("RNN", 3, 4, num_layers=2, bidirectional=True,
                                                 nonlinearity="relu"),
    "rnn_no_bias": _module("RNN", 3, 4, bias=False),
    "lstm": _module("LSTM", 3, 4),
    "lstm_proj_bidirectional": _module("LSTM", 3, 4, num_layers=2, proj_size=2, bidirectional=True),
    "lstm_float64_no_bias": _module("LSTM", 3, 4, dtype="float64", bias=False),
    "lstm_bfloat16": _module("LSTM", 3, 4, dtype="bfloat16"),
    "gru_two_layers": _module("GRU", 3, 4, num_layers=2),
    "gru_bidirectional_batch_first": _module("GRU", 3, 4, bidirectional=True, batch_first=True),
    "rnn_cell": _module("RNNCell", 3, 4),
    "rnn_cell_relu_no_bias": _module("RNNCell", 3, 4, bias=False, nonlinearity="relu"),
    "lstm_cell": _module("LSTMCell", 3, 4),
    "gru_cell_float64": _module("GRUCell", 3, 4, dtype="float64"),
    "mha": _module("MultiheadAttention", 8, 2),
    "mha_kdim_vdim": _module("MultiheadAttention", 8, 2, kdim=3, vdim=5),
    "mha_bias_kv_zero_attn": _module("MultiheadAttention", 8, 2, add_bias_kv=True, add_zero_attn=True),
    "mha_no_bias_kdim_bias_kv": _module("MultiheadAttention", 8, 2, bias=False, kdim=3, vdim=5, add_bias_kv=True),
    "mha_float64": (_module("MultiheadAttention", 8, 2, dtype="float64"), EXACT),
    "encoder_layer": _module("TransformerEncoderLayer", 8, 2, dim_feedforward=16),
    "encoder_layer_no_bias_norm_first": _module("TransformerEncoderLayer", 8, 2, dim_feedforward=16, bias=False,
                                                norm_first=True),
    "decoder_layer": _module("TransformerDecoderLayer", 8, 2, dim_feedforward=16),
    "transformer": _module("Transformer", 8, 2, 2, 1, 16),
    "transformer_no_bias": _module("Transformer", 8, 2, 1, 1, 16, bias=False),
    "transformer_encoder": lambda T: _state(T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(8, 2, 16), 2,
                                                                    enable_nested_tensor=False)),
    "transformer_decoder_norm": lambda T: _state(T.nn.TransformerDecoder(T.nn.TransformerDecoderLayer(8, 2, 16), 2,
                                                                         norm=T.nn.LayerNorm(8))),
    "batch_norm1d": _module("BatchNorm1d", 4),
    "batch_norm2d_no_affine": _module("BatchNorm2d", 4, affine=False),
    "batch_norm3d_no_stats_float64": _module("BatchNorm3d", 4, track_running_stats=False, dtype="float64"),
    "sync_batch_norm": _module("SyncBatchNorm", 4),
    "lazy_batch_norm2d": _module("LazyBatchNorm2d", forward=_ones(2, 3, 2, 2)),
    "instance_norm1d_affine_stats": _module("InstanceNorm1d", 4, affine=True, track_running_stats=True),
    "lazy_instance_norm1d": _module("LazyInstanceNorm1d", affine=True, forward=_ones(2, 3, 4)),
    "lazy_instance_norm3d_stats": _module("LazyInstanceNorm3d", affine=True, track_running_stats=True,
                                          forward=_ones(1, 3, 2, 2, 2)),
    "layer_norm": _module("LayerNorm", (3, 4)),
    "layer_norm_no_bias": _module("LayerNorm", 4, bias=False),
    "group_norm": _module("GroupNorm", 2, 4),
    "rms_norm": _module("RMSNorm", 4),
    "prelu": _module("PReLU"),
    "prelu_channels_float64": _module("PReLU", 3, init=0.1, dtype="float64"),
    "adaptive_log_softmax": _module("AdaptiveLogSoftmaxWithLoss", 8, 10, [4, 7], div_value=2.0),
    "adaptive_log_softmax_head_bias": _module("AdaptiveLogSoftmaxWithLoss", 8, 10, [4], head_bias=True),
    "linear_cross_entropy_bias": _module("LinearCrossEntropyLoss", 4, 3, bias=True),
    "sequential": lambda T: _state(T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2),
                                                   T.nn.BatchNorm1d(2))),
    "module_dict": lambda T: _state(T.nn.ModuleDict({"b": T.nn.Linear(3, 4), "a": T.nn.Conv1d(2, 2, 2)})),
}


def _meta_draws_nothing(T):
    T.nn.Linear(5, 4, device="meta")
    T.nn.TransformerEncoderLayer(8, 2, 16, device="meta")
    T.nn.LSTM(3, 4, proj_size=2, device="meta")
    T.nn.Embedding(6, 4, padding_idx=1, device="meta")  # (its padding row is zeroed through a view of a meta tensor)
    T.nn.EmbeddingBag(6, 4, padding_idx=1, device="meta")
    T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 4, device="meta"))  # (completes the basis with a meta randn)
    T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(3, 4, device="meta"))
    for fn, shape, args in (("trunc_normal_", (4, 3), ()), ("orthogonal_", (4, 3), ()), ("sparse_", (4, 3), (0.5,)),
                            ("eye_", (4, 3), ()), ("dirac_", (4, 2, 3), ()), ("kaiming_normal_", (4, 3), ())):
        getattr(T.nn.init, fn)(T.empty(shape, device="meta"), *args)
    return [T.rand(2)]


def _to_empty_then_reset(T):
    m = T.nn.Linear(5, 4, device="meta").to_empty(device="cpu")
    m.reset_parameters()
    return _state(m)


def _deferred_init(T):
    """Built on the meta device, moved with to_empty, then every module reset (deferred initialisation)."""
    with T.device("meta"):
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Embedding(6, 4, padding_idx=1),
                            T.nn.TransformerEncoderLayer(8, 2, 16), T.nn.LSTM(3, 4))
    m.to_empty(device="cpu")
    for mod in m.modules():
        if hasattr(mod, "reset_parameters"):
            mod.reset_parameters()
        elif hasattr(mod, "_reset_parameters"):
            mod._reset_parameters()
    return _state(m)


def _skip_init(T):
    m = T.nn.utils.skip_init(T.nn.Linear, 5, 4)
    return [T.tensor(list(m.weight.shape))]


def _reset(build, method="reset_parameters"):
    """Build, draw once, then call the module's reset method: the second initialisation draws on."""
    def fn(T):
        m = build(T)
        T.rand(1)
        getattr(m, method)()
        return _state(m)
    return fn


def _lazy_reset(T):
    m = T.nn.LazyLinear(4)
    m(T.ones(2, 3))
    m.reset_parameters()
    return _state(m)


def _lazy_reset_before_forward(T):
    T.nn.LazyLinear(4).reset_parameters()  # (uninitialised parameters: PyTorch skips the reset, draws nothing)
    return [T.rand(1)]


def _lazy_initialize_parameters(T):
    m = T.nn.LazyConv1d(3, 2)
    m.initialize_parameters(T.ones(1, 2, 5))
    return _state(m)


MODULES.update({
    "linear_zero_in_features": _module("Linear", 0, 3),
    "linear_zero_out_features": _module("Linear", 3, 0),
    "embedding_zero_rows": _module("Embedding", 0, 3),
    "prelu_zero_parameters": _module("PReLU", 0),
    "lazy_reset_before_forward": _lazy_reset_before_forward,
    "lazy_initialize_parameters": _lazy_initialize_parameters,
    "meta_draws_nothing": _meta_draws_nothing,
    "to_empty_then_reset": _to_empty_then_reset,
    "deferred_init": _deferred_init,
    "skip_init": _skip_init,
    "reset_linear": _reset(lambda T: T.nn.Linear(4, 3)),
    "reset_bilinear": _reset(lambda T: T.nn.Bilinear(2, 3, 4)),
    "reset_conv_transpose1d_groups": _reset(lambda T: T.nn.ConvTranspose1d(2, 4, 3, groups=2)),
    "reset_embedding_padding_idx": _reset(lambda T: T.nn.Embedding(5, 3, padding_idx=1)),
    "reset_embedding_bag_padding_idx": _reset(lambda T: T.nn.EmbeddingBag(5, 3, padding_idx=1)),
    "reset_batch_norm": _reset(lambda T: T.nn.BatchNorm1d(3)),
    "reset_prelu": _reset(lambda T: T.nn.PReLU(3)),
    "reset_lazy_linear": _lazy_reset,
    "reset_mha": _reset(lambda T: T.nn.MultiheadAttention(8, 2, kdim=3, add_bias_kv=True), "_reset_parameters"),
    "reset_lstm": _reset(lambda T: T.nn.LSTM(3, 4, 2)),
    "reset_gru_cell": _reset(lambda T: T.nn.GRUCell(3, 4)),
    "reset_adaptive_log_softmax": _reset(lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7])),
})


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("seed", SEEDS)
def test_module_initialisation_draws_pytorchs_numbers(name, seed):
    fn, tols = MODULES[name] if isinstance(MODULES[name], tuple) else (MODULES[name], EXACT)
    same_draws(fn, seed, **tols)


# ---------------------------------------------------------------------------------------------------------------
# nn.init

def _init(fn, shape, *args, dtype="float32", **kwargs):
    return lambda T: getattr(T.nn.init, fn)(T.empty(tuple(shape), dtype=_dt(T, dtype)), *args, **kwargs)


def _with_generator(fn, *args):
    """The fill from its own Generator, then a draw from the default one (which the fill must not touch)."""
    return lambda T: [getattr(T.nn.init, fn)(T.empty(4, 3), *args, generator=T.Generator().manual_seed(7)),
                      T.rand(2)]


def _on_layout(fn, layout, *args):
    """``fn`` filling a transposed view, a strided slice or a channels_last tensor; the whole base is returned."""
    def build(T):
        if layout == "channels_last":
            base = T.zeros(4, 3, 2, 2).to(memory_format=T.channels_last)
            target = base
        else:
            base = T.zeros(6, 8)
            target = base.t() if layout == "transposed" else base[:, ::2]
        getattr(T.nn.init, fn)(target, *args)
        return base
    return build


INIT = {}
for _shape in ((5,), (4, 3), (4, 3, 2), (4, 2, 3, 2)):
    _k = "x".join(map(str, _shape))
    INIT[f"uniform_{_k}"] = (_init("uniform_", _shape, -0.3, 0.5), EXACT)
    INIT[f"normal_{_k}"] = (_init("normal_", _shape, 0.2, 1.5), EXACT)
    INIT[f"trunc_normal_{_k}"] = (_init("trunc_normal_", _shape, 0.1, 0.7, -1.0, 1.2), EXACT)
for _shape in ((4, 3), (4, 2, 3, 2)):
    _k = "x".join(map(str, _shape))
    INIT[f"xavier_uniform_{_k}"] = (_init("xavier_uniform_", _shape, gain=1.7), EXACT)
    INIT[f"xavier_normal_{_k}"] = (_init("xavier_normal_", _shape, gain=1.7), EXACT)
    INIT[f"orthogonal_{_k}"] = (_init("orthogonal_", _shape, gain=2.0), ULPS)
    INIT[f"float64_uniform_{_k}"] = (_init("uniform_", _shape, -0.3, 0.5, dtype="float64"), EXACT)
    INIT[f"float64_kaiming_uniform_{_k}"] = (_init("kaiming_uniform_", _shape, dtype="float64"), EXACT)
    INIT[f"float64_xavier_uniform_{_k}"] = (_init("xavier_uniform_", _shape, dtype="float64"), EXACT)
    INIT[f"float64_orthogonal_{_k}"] = (_init("orthogonal_", _shape, dtype="float64"), F64_ULPS)
    for _dtype in ("bfloat16", "float16"):
        for _fn in ("uniform_", "normal_", "kaiming_uniform_", "trunc_normal_"):
            INIT[f"{_dtype}_{_fn}{_k}"] = (_init(_fn, _shape, dtype=_dtype), EXACT)
for _mode in ("fan_in", "fan_out"):
    for _nl, _a in (("leaky_relu", 0), ("leaky_relu", 0.2), ("relu", 0), ("tanh", 0), ("selu", 0), ("linear", 0),
                    ("conv2d", 0), ("sigmoid", 0)):
        for _fn, _shape in (("kaiming_uniform_", (4, 3)), ("kaiming_normal_", (4, 2, 3, 2))):
            INIT[f"{_fn}{_mode}_{_nl}{_a}"] = (_init(_fn, _shape, a=_a, mode=_mode, nonlinearity=_nl), EXACT)
# float64 normals of under 16 values: PyTorch's serial Box-Muller through libm's log/cos/sin, torchish's XLA's
INIT["float64_normal_4x3"] = (_init("normal_", (4, 3), 0.2, 1.5, dtype="float64"), F64_ULPS)
INIT["float64_normal_4x2x3x2"] = (_init("normal_", (4, 2, 3, 2), 0.2, 1.5, dtype="float64"), EXACT)
INIT["float64_kaiming_normal_4x2x3x2"] = (_init("kaiming_normal_", (4, 2, 3, 2), dtype="float64"), EXACT)
INIT["float64_trunc_normal_4x3"] = (_init("trunc_normal_", (4, 3), 0.1, 0.7, -1.0, 1.2, dtype="float64"),
                                    F64_ULPS)
INIT["float64_sparse"] = (_init("sparse_", (4, 3), 0.5, dtype="float64"), F64_ULPS)
for _dtype in ("bfloat16", "float16"):  # (normal_fill's mean and std as floats, not rounded to the half type)
    INIT[f"half_xavier_normal_{_dtype}"] = (_init("xavier_normal_", (4, 2, 3, 2), gain=1.7, dtype=_dtype), EXACT)
    INIT[f"half_normal_{_dtype}"] = (_init("normal_", (48,), 0.3, 0.2357, dtype=_dtype), EXACT)
INIT["bfloat16_sparse_"] = (_init("sparse_", (4, 3), 0.5, dtype="bfloat16"), EXACT)
INIT["bfloat16_normal_37"] = (_init("normal_", (37,), 0.1, 0.02, dtype="bfloat16"), EXACT)
INIT["bfloat16_trunc_normal_narrow_50"] = (_init("trunc_normal_", (50,), 0.0, 0.02, -0.04, 0.04, dtype="bfloat16"),
                                           EXACT)
for _fn in ("uniform_", "normal_", "trunc_normal_"):
    INIT[f"zero_dim_{_fn}"] = (_init(_fn, ()), EXACT)
INIT["sparse"] = (_init("sparse_", (4, 3), 0.34, std=0.2), EXACT)
INIT["trunc_normal_far_interval"] = (_init("trunc_normal_", (4, 3), 0.0, 1.0, 1.0, 3.0), EXACT)
INIT["xavier_uniform_5d"] = (_init("xavier_uniform_", (3, 2, 2, 2, 2)), EXACT)
INIT["kaiming_uniform_zero_elements"] = (_init("kaiming_uniform_", (0, 3)), EXACT)
for _fn, _args in (("uniform_", (-0.3, 0.5)), ("normal_", (0.2, 1.5)), ("trunc_normal_", (0.1, 0.7, -1.0, 1.2)),
                   ("xavier_uniform_", (1.3,)), ("xavier_normal_", (1.3,)), ("kaiming_uniform_", (0.1,)),
                   ("kaiming_normal_", (0.1,)), ("sparse_", (0.5, 0.01))):
    INIT[f"generator_{_fn}"] = (_with_generator(_fn, *_args), EXACT)
INIT["generator_orthogonal_"] = (_with_generator("orthogonal_", 1.0), ULPS)
INIT["generator_bfloat16"] = (lambda T: [
    T.nn.init.kaiming_uniform_(T.empty(4, 3, dtype=T.bfloat16), generator=T.Generator().manual_seed(3)),
    T.nn.init.trunc_normal_(T.empty(20, dtype=T.bfloat16), generator=T.Generator().manual_seed(4))], EXACT)
for _layout in ("transposed", "sliced", "channels_last"):
    for _fn, _args in (("normal_", ()), ("uniform_", ()), ("kaiming_uniform_", ()), ("xavier_normal_", ()),
                       ("trunc_normal_", ()), ("trunc_normal_", (0.1, 1.0, -0.6, 0.6)),
                       ("trunc_normal_", (0.0, 1.0, 1.0, 3.0))):
        INIT[f"{_layout}_{_fn}{'_'.join(map(str, _args))}"] = (_on_layout(_fn, _layout, *_args), EXACT)
INIT["transposed_orthogonal_"] = (_on_layout("orthogonal_", "transposed"), ULPS)
INIT["transposed_sparse_"] = (_on_layout("sparse_", "transposed", 0.3), EXACT)
for _fn, _args in (("constant_", (0.3,)), ("ones_", ()), ("zeros_", ()), ("eye_", ())):
    INIT[f"deterministic_{_fn}"] = (_init(_fn, (4, 3), *_args), EXACT)
INIT["deterministic_dirac_groups"] = (_init("dirac_", (4, 2, 3, 3), groups=2), EXACT)
for _fn in ("uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal"):
    INIT[f"deprecated_{_fn}"] = (_init(_fn, (4, 3)), EXACT)
INIT["deprecated_sparse"] = (_init("sparse", (4, 3), 0.5), EXACT)
INIT["private_no_grad_uniform_"] = (_init("_no_grad_uniform_", (4, 3), -0.3, 0.5), EXACT)
INIT["private_no_grad_normal_"] = (_init("_no_grad_normal_", (4, 3), 0.2, 1.5), EXACT)
INIT["private_no_grad_trunc_normal_"] = (_init("_no_grad_trunc_normal_", (4, 3), 0.1, 0.7, -1.0, 1.2), EXACT)
INIT["private_no_grad_fill_and_zero_"] = (lambda T: [T.nn.init._no_grad_fill_(T.empty(4, 3), 0.5),
                                                     T.nn.init._no_grad_zero_(T.empty(4, 3))], EXACT)


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("name", sorted(INIT))
@pytest.mark.parametrize("seed", SEEDS)
def test_init_function_draws_pytorchs_numbers(name, seed):
    fn, tols = INIT[name]
    same_draws(fn, seed, **tols)


# ---------------------------------------------------------------------------------------------------------------
# nn.utils: parametrizations and pruning

def _prune(T):
    return importlib.import_module(T.__name__ + ".nn.utils.prune")


def _orthogonal(orthogonal_map=None, shape=(4, 3), **kwargs):
    def build(T):
        m = T.nn.Linear(shape[1], shape[0])
        if orthogonal_map is not None:
            kwargs["orthogonal_map"] = orthogonal_map
        T.nn.utils.parametrizations.orthogonal(m, **kwargs)
        return _state(m) + [m.weight, m(T.ones(2, shape[1]))]
    return build


def _spectral(module, **kwargs):
    def build(T):
        m = module(T)
        T.nn.utils.parametrizations.spectral_norm(m, **kwargs)
        return _state(m) + [m.weight]
    return build


def _old_spectral(T):
    m = T.nn.utils.spectral_norm(T.nn.Linear(5, 4), n_power_iterations=2)
    c = T.nn.utils.spectral_norm(T.nn.ConvTranspose2d(3, 4, 2))
    return _state(m) + [m(T.ones(1, 5))] + _state(c)


def _weight_norm(old):
    def build(T):
        m = T.nn.Linear(5, 4)
        (T.nn.utils.weight_norm if old else T.nn.utils.parametrizations.weight_norm)(m, dim=1)
        return _state(m) + [m.weight]
    return build


def _random_unstructured(T):
    m = T.nn.Linear(5, 4)
    _prune(T).random_unstructured(m, "weight", amount=0.3)
    _prune(T).random_unstructured(m, "bias", amount=2)
    return _state(m) + [m.weight, m.bias]


def _random_structured(dim, amount, twice=False):
    def build(T):
        m = T.nn.Conv2d(3, 4, 2)
        _prune(T).random_structured(m, "weight", amount=amount, dim=dim)
        if twice:
            _prune(T).random_structured(m, "weight", amount=1, dim=1)
        return _state(m) + [m.weight]
    return build


def _global_random(T):
    a, b = T.nn.Linear(5, 4), T.nn.Linear(4, 3)
    _prune(T).global_unstructured([(a, "weight"), (b, "weight")], pruning_method=_prune(T).RandomUnstructured,
                                  amount=0.4)
    return _state(a) + _state(b)


UTILS = {
    "orthogonal_default": (_orthogonal(), ULPS),
    "orthogonal_matrix_exp": (_orthogonal("matrix_exp"), ULPS),
    "orthogonal_cayley": (_orthogonal("cayley"), ULPS),
    "orthogonal_householder_wide": (_orthogonal("householder", (3, 4)), ULPS),
    "orthogonal_wide": (_orthogonal(None, (3, 4)), ULPS),
    "orthogonal_no_trivialization": (_orthogonal(None, use_trivialization=False), ULPS),
    "spectral_norm": (_spectral(lambda T: T.nn.Linear(5, 4)), ULPS),
    "spectral_norm_iterations_dim1": (_spectral(lambda T: T.nn.Linear(5, 4), n_power_iterations=3, dim=1), ULPS),
    "spectral_norm_conv_transpose": (_spectral(lambda T: T.nn.ConvTranspose2d(3, 4, 2)), ULPS),
    "spectral_norm_old_api": (_old_spectral, ULPS),
    "weight_norm": (_weight_norm(False), ULPS),
    "weight_norm_old_api": (_weight_norm(True), ULPS),
    "prune_random_unstructured": (_random_unstructured, EXACT),
    "prune_random_structured": (_random_structured(0, 0.5), EXACT),
    "prune_random_structured_dim1_count": (_random_structured(1, 2), EXACT),
    "prune_random_structured_negative_dim": (_random_structured(-1, 0.5), EXACT),
    "prune_random_structured_twice": (_random_structured(0, 0.5, twice=True), EXACT),
    "prune_global_random": (_global_random, EXACT),
}


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("name", sorted(UTILS))
@pytest.mark.parametrize("seed", SEEDS)
def test_nn_utils_draw_pytorchs_numbers(name, seed):
    fn, tols = UTILS[name]
    same_draws(fn, seed, **tols)


# ---------------------------------------------------------------------------------------------------------------
# modules with random state: their forwards

def _train(build, *shapes):
    def fn(T):
        out = build(T)(*[_x(T, *s) for s in shapes])
        return [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, T.Tensor)]
    return fn


FORWARDS = {
    "dropout": (lambda T: T.nn.Dropout(0.3)(_x(T, 4, 5)), EXACT),
    "dropout_float64": (lambda T: T.nn.Dropout(0.3)(_x(T, 4, 5, dtype="float64")), EXACT),
    "dropout_bfloat16": (lambda T: T.nn.Dropout(0.3)(_x(T, 4, 5, dtype="bfloat16")), EXACT),
    "dropout_transposed": (lambda T: T.nn.Dropout(0.3)(_x(T, 4, 5).t()), EXACT),
    "dropout_in_place": (lambda T: T.nn.Dropout(0.3, inplace=True)(_x(T, 4, 5)), EXACT),
    "dropout_p1": (lambda T: T.nn.Dropout(1.0)(_x(T, 4, 5)), EXACT),
    "dropout1d": (lambda T: T.nn.Dropout1d(0.3)(_x(T, 4, 5, 2)), EXACT),
    "dropout1d_unbatched": (lambda T: T.nn.Dropout1d(0.3)(_x(T, 5, 2)), EXACT),
    "dropout2d": (lambda T: T.nn.Dropout2d(0.3)(_x(T, 4, 5, 2, 2)), EXACT),
    "dropout2d_3d_input": (lambda T: T.nn.Dropout2d(0.3)(_x(T, 5, 2, 2)), EXACT),
    "dropout3d": (lambda T: T.nn.Dropout3d(0.3)(_x(T, 4, 5, 2, 2, 2)), EXACT),
    "dropout3d_unbatched": (lambda T: T.nn.Dropout3d(0.3)(_x(T, 5, 2, 2, 2)), EXACT),
    "alpha_dropout_float64": (lambda T: T.nn.AlphaDropout(0.3)(_x(T, 4, 5, dtype="float64")), EXACT),
    "feature_alpha_dropout_5d": (lambda T: T.nn.FeatureAlphaDropout(0.3)(_x(T, 2, 3, 2, 2, 2)), EXACT),
    "rrelu": (lambda T: T.nn.RReLU()(_x(T, 4, 5)), EXACT),
    "rrelu_float64": (lambda T: T.nn.RReLU(0.1, 0.4)(_x(T, 4, 5, dtype="float64")), EXACT),
    "rrelu_float64_many": (lambda T: T.nn.functional.rrelu(-T.ones(512, dtype=T.float64), training=True), EXACT),
    "rrelu_bfloat16": (lambda T: T.nn.RReLU()(_x(T, 4, 5, dtype="bfloat16")), EXACT),
    "rrelu_in_place_transposed": (lambda T: T.nn.RReLU(inplace=True)(_x(T, 4, 5, dtype="float64").t()), EXACT),
    "rrelu_generator": (lambda T: [T.rrelu(_x(T, 4, 5, dtype="float64"), training=True,
                                           generator=T.Generator().manual_seed(3)), T.rand(2)], EXACT),
    "dropout_channels_last": (lambda T: T.nn.Dropout(0.3)(_x(T, 2, 3, 2, 2).to(memory_format=T.channels_last)),
                              EXACT),
    "alpha_dropout_transposed": (lambda T: T.nn.AlphaDropout(0.3)(_x(T, 4, 5).t()), EXACT),
    "rrelu_channels_last": (lambda T: T.nn.RReLU()(_x(T, 2, 3, 2, 2).to(memory_format=T.channels_last)), EXACT),
    "rrelu_strided_slice": (lambda T: T.nn.RReLU()(_x(T, 5, 8)[:, ::2]), EXACT),
    "gumbel_softmax_hard_transposed": (lambda T: T.nn.functional.gumbel_softmax(_x(T, 4, 5).t(), hard=True), EXACT),
    "fractional_max_pool2d": (lambda T: T.nn.FractionalMaxPool2d(2, output_size=3)(_x(T, 2, 3, 7, 7)), EXACT),
    "fractional_max_pool2d_float64_indices": (
        lambda T: list(T.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)(
            _x(T, 3, 7, 7, dtype="float64"))), EXACT),
    "fractional_max_pool2d_bfloat16": (
        lambda T: T.nn.FractionalMaxPool2d(2, output_size=3)(_x(T, 2, 3, 7, 7, dtype="bfloat16")), EXACT),
    "fractional_max_pool3d": (lambda T: T.nn.FractionalMaxPool3d(2, output_size=2)(_x(T, 1, 2, 5, 5, 5)), EXACT),
    "gumbel_softmax_hard": (lambda T: T.nn.functional.gumbel_softmax(_x(T, 4, 5, dtype="float64"), hard=True),
                            EXACT),
    "gumbel_softmax": (lambda T: T.nn.functional.gumbel_softmax(_x(T, 4, 5), tau=0.5), ULPS),
    "encoder_layer_training": (_train(lambda T: T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3), (3, 2, 8)),
                               ULPS),
    "encoder_layer_training_norm_first": (
        _train(lambda T: T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, norm_first=True, batch_first=True),
               (3, 2, 8)), ULPS),
    "transformer_training": (_train(lambda T: T.nn.Transformer(8, 2, 1, 1, 16, dropout=0.2), (3, 2, 8),
                                    (4, 2, 8)), ULPS),
    "mha_training_dropout": (_train(lambda T: (lambda m: lambda q: m(q, q, q))(
        T.nn.MultiheadAttention(8, 2, dropout=0.4)), (3, 2, 8)), ULPS),
    "lstm_training_dropout": (_train(lambda T: T.nn.LSTM(3, 4, num_layers=3, dropout=0.5), (5, 2, 3)), ULPS),
    "gru_training_dropout_bidirectional": (
        _train(lambda T: T.nn.GRU(3, 4, num_layers=3, dropout=0.5, bidirectional=True), (5, 2, 3)), ULPS),
    "sdpa_dropout": (lambda T: T.nn.functional.scaled_dot_product_attention(
        _x(T, 2, 3, 4, 8), _x(T, 2, 3, 4, 8) * 0.5, _x(T, 2, 3, 4, 8) + 1, dropout_p=0.3), ULPS),
}


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(FORWARDS))
@pytest.mark.parametrize("seed", SEEDS)
def test_random_forward_draws_pytorchs_numbers(name, seed):
    fn, tols = FORWARDS[name]
    same_draws(fn, seed, **tols)


# ---------------------------------------------------------------------------------------------------------------
# errors PyTorch raises after drawing: the same error, and the stream advanced as far

def _orthogonal_parametrization(dtype, orthogonal_map, shape=(4, 3)):
    def build(T):
        m = T.nn.Linear(shape[1], shape[0], dtype=_dt(T, dtype))
        T.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
        return m.weight
    return build


ERRORS = {
    "orthogonal_bfloat16": _init("orthogonal_", (4, 3), dtype="bfloat16"),
    "orthogonal_float16": _init("orthogonal_", (4, 3), dtype="float16"),
    "orthogonal_complex64": _init("orthogonal_", (4, 3), dtype="complex64"),
    "trunc_normal_complex64": _init("trunc_normal_", (4, 3), dtype="complex64"),
    "xavier_uniform_zero_dim": _init("xavier_uniform_", ()),
    "dirac_6d": _init("dirac_", (2, 2, 2, 2, 2, 2)),
    "orthogonal_parametrization_householder_bfloat16": _orthogonal_parametrization("bfloat16", None),
    "orthogonal_parametrization_householder_wide_float16": _orthogonal_parametrization("float16", "householder",
                                                                                       (3, 4)),
    "orthogonal_parametrization_cayley_bfloat16": _orthogonal_parametrization("bfloat16", "cayley", (3, 3)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_after_draws_match_pytorch(name):
    outcomes = []
    for T in (torch, torchish):
        T.manual_seed(0)
        outcomes.append((raised(lambda: ERRORS[name](T)), T.rand(3).numpy()))
    (ref_err, ref_next), (err, after) = outcomes
    assert ref_err is not None and err == ref_err, (err, ref_err)
    np.testing.assert_array_equal(after, ref_next)
