"""nn modules and nn.functional given bad or unusual inputs: wrong rank, empty dimensions, zero-sized kernels and
windows, targets of the wrong shape. torchish raises PyTorch's builtin exception type with PyTorch's message (the
words users search for), or computes what PyTorch computes. Cases found by a table-driven sweep over torch.nn's
modules with both libraries."""
import numpy as np
import pytest

from oracle import check_raises, same, same_error, torch, torchish  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def F(T):
    return T.nn.functional


def x(T, *shape, dtype=None):
    # float32 values computed by numpy, the same array for both libraries (no kernels to compile per shape)
    n = int(np.prod(shape))
    return T.tensor(np.cos(np.arange(n, dtype=np.float32) * np.float32(0.417)).reshape(shape)).to(dtype or T.float32)


def idx(T, values):
    return T.tensor(np.asarray(values, np.int64))


# each raises the same builtin exception type with the same message in both libraries
SAME_ERROR = {
    # linear
    "linear_of_a_scalar": lambda T: T.nn.Linear(4, 3)(x(T, 1)[0]),
    "linear_scalar_weight": lambda T: F(T).linear(x(T, 4), x(T, 1)[0]),
    "linear_3d_weight": lambda T: F(T).linear(x(T, 2, 4), x(T, 3, 3, 4), x(T, 3)),
    # convolution: an empty weight (no output channels, a zero-sized kernel), worded by the kernel that meets it
    "conv2d_no_out_channels": lambda T: F(T).conv2d(x(T, 1, 2, 5, 5), x(T, 0, 2, 3, 3)),
    "conv2d_groups_above_out_channels": lambda T: F(T).conv2d(x(T, 1, 4, 5, 5), x(T, 1, 2, 3, 3), groups=2),
    "conv1d_zero_kernel": lambda T: T.nn.Conv1d(2, 3, 0)(x(T, 1, 2, 5)),
    "conv2d_zero_kernel": lambda T: F(T).conv2d(x(T, 1, 2, 5, 5), x(T, 3, 2, 0, 0)),
    "conv3d_zero_kernel": lambda T: F(T).conv3d(x(T, 1, 2, 5, 5, 5), x(T, 3, 2, 0, 1, 1)),
    "conv1d_zero_kernel_dilated": lambda T: F(T).conv1d(x(T, 1, 2, 5), x(T, 3, 2, 0), dilation=2),
    "conv_transpose2d_zero_kernel": lambda T: F(T).conv_transpose2d(x(T, 1, 2, 5, 5), x(T, 2, 3, 0, 0)),
    "conv_transpose1d_no_out_channels": lambda T: F(T).conv_transpose1d(x(T, 1, 2, 5), x(T, 2, 0, 3)),
    "conv_transpose3d_empty_weight": lambda T: F(T).conv_transpose3d(x(T, 1, 2, 3, 3, 3), x(T, 2, 3, 0, 0, 0)),
    "conv_transpose1d_output_size_tuple": lambda T: T.nn.ConvTranspose1d(2, 3, 3, stride=2)(x(T, 1, 2, 5),
                                                                                       output_size=(20,)),
    "conv_transpose2d_output_size_with_batch": lambda T: T.nn.ConvTranspose2d(2, 3, 3, stride=2)(
        x(T, 1, 2, 5, 5), output_size=(1, 3, 20, 11)),
    # pooling: empty non-batch dimensions, zero or negative windows, too-small inputs
    "max_pool1d_no_channels": lambda T: T.nn.MaxPool1d(2)(x(T, 1, 0, 6)),
    "max_pool1d_indices_no_channels": lambda T: F(T).max_pool1d(x(T, 1, 0, 6), 2, return_indices=True),
    "avg_pool1d_empty_length": lambda T: T.nn.AvgPool1d(2)(x(T, 1, 2, 0)),
    "max_pool2d_no_channels": lambda T: T.nn.MaxPool2d(2)(x(T, 1, 0, 6, 6)),
    "avg_pool2d_rank5": lambda T: T.nn.AvgPool2d(2)(x(T, 1, 1, 2, 6, 6)),
    "max_pool3d_empty_depth": lambda T: T.nn.MaxPool3d(2)(x(T, 1, 2, 0, 4, 4)),
    "avg_pool3d_no_channels": lambda T: T.nn.AvgPool3d(2)(x(T, 1, 0, 4, 4, 4)),
    "max_pool1d_zero_kernel": lambda T: T.nn.MaxPool1d(0)(x(T, 1, 2, 6)),
    "max_pool1d_negative_stride": lambda T: T.nn.MaxPool1d(2, stride=-1)(x(T, 1, 2, 6)),
    "max_pool1d_kernel_too_big": lambda T: T.nn.MaxPool1d(4)(x(T, 1, 2, 2)),
    "max_pool1d_indices_zero_kernel": lambda T: F(T).max_pool1d(x(T, 1, 2, 6), 0, 1, return_indices=True),
    "avg_pool1d_kernel_too_big": lambda T: T.nn.AvgPool1d(4)(x(T, 1, 2, 2)),
    "max_pool2d_zero_kernel": lambda T: T.nn.MaxPool2d(0)(x(T, 1, 2, 6, 6)),
    "max_pool2d_zero_kernel_unit_stride": lambda T: T.nn.MaxPool2d(0, 1)(x(T, 1, 2, 6, 6)),
    "avg_pool2d_negative_stride": lambda T: T.nn.AvgPool2d(2, (1, -1))(x(T, 1, 2, 6, 6)),
    "avg_pool3d_negative_stride": lambda T: T.nn.AvgPool3d(2, -1)(x(T, 1, 2, 4, 4, 4)),
    "avg_pool3d_kernel_too_big": lambda T: T.nn.AvgPool3d(4)(x(T, 1, 2, 2, 2, 2)),
    "lp_pool1d_rank1": lambda T: T.nn.LPPool1d(2, 2)(x(T, 6)),
    "lp_pool2d_rank2": lambda T: T.nn.LPPool2d(2, 2)(x(T, 6, 6)),
    # activations
    "prelu_of_a_scalar_with_channels": lambda T: T.nn.PReLU(3)(x(T, 1)[0]),
    # normalization
    "group_norm_groups_do_not_divide": lambda T: T.nn.GroupNorm(3, 4),
    "rms_norm_input_rank_below_normalized_shape": lambda T: T.nn.RMSNorm((2, 4))(x(T, 4)),
    "rms_norm_empty_normalized_shape": lambda T: F(T).rms_norm(x(T, 2, 4), ()),
    "rms_norm_weight_checked_before_rank": lambda T: F(T).rms_norm(x(T, 4), (2, 4), x(T, 4)),
    # padding: empty non-batch dimensions, crops that leave nothing
    "replication_pad1d_empty_length": lambda T: T.nn.ReplicationPad1d(1)(x(T, 1, 2, 0)),
    "reflection_pad_2d_input_no_columns": lambda T: F(T).pad(x(T, 2, 0), (1, 1), mode="reflect"),
    "replication_pad3d_empty_volume": lambda T: T.nn.ReplicationPad3d(1)(x(T, 1, 2, 0, 0, 0)),
    "reflection_pad1d_crop_to_nothing": lambda T: T.nn.ReflectionPad1d((-1, -2))(x(T, 1, 2, 3)),
    "replication_pad2d_crop_below_zero": lambda T: T.nn.ReplicationPad2d(-2)(x(T, 1, 2, 3, 3)),
    "reflection_pad2d_crop_below_zero": lambda T: T.nn.ReflectionPad2d(-2)(x(T, 1, 2, 3, 3)),
    "reflection_pad3d_crop_below_zero": lambda T: T.nn.ReflectionPad3d(-2)(x(T, 1, 2, 3, 3, 3)),
    "replication_pad3d_crop_below_zero": lambda T: T.nn.ReplicationPad3d(-2)(x(T, 1, 2, 3, 3, 3)),
    "circular_pad1d_crop_below_zero": lambda T: T.nn.CircularPad1d(-2)(x(T, 1, 2, 3)),
    # shape modules
    "flatten_module_of_a_scalar": lambda T: T.nn.Flatten()(x(T, 1)[0]),
    "flatten_scalar_end_dim_out_of_range": lambda T: T.flatten(x(T, 1)[0], 0, 1),
    # resampling
    "upsample_bicubic_of_3d_input": lambda T: T.nn.Upsample(scale_factor=2, mode="bicubic")(x(T, 1, 2, 3)),
    "interpolate_area_float_size": lambda T: F(T).interpolate(x(T, 1, 2, 3, 3), size=4.0, mode="area"),
    # losses
    "ctc_loss_negative_target_length": lambda T: F(T).ctc_loss(x(T, 6, 2, 4).log_softmax(2), idx(T, [[1, 2], [3, 1]]),
                                                               idx(T, [6, 5]), idx(T, [-1, 1])),
    "ctc_loss_negative_input_length": lambda T: F(T).ctc_loss(x(T, 6, 2, 4).log_softmax(2), idx(T, [[1, 2], [3, 1]]),
                                                              (6, -5), (2, 1)),
    "soft_margin_loss_input_broadcast_to_target": lambda T: T.nn.SoftMarginLoss()(x(T, 2, 1), x(T, 2, 4)),
    "multi_margin_loss_no_classes": lambda T: F(T).multi_margin_loss(x(T, 2, 0), idx(T, [0, 0])),
}


@pytest.mark.parametrize("case", SAME_ERROR)
def test_same_error(case):
    same_error(SAME_ERROR[case])


# each computes what PyTorch computes (values, dtype, shape), and the same gradients where one is taken
SAME_RESULT = {
    "group_norm_empty_batch": lambda T: T.nn.GroupNorm(2, 4)(x(T, 0, 4, 3)),
    "group_norm_no_channels": lambda T: F(T).group_norm(x(T, 2, 0, 3), 2),
    "flatten_scalar_dims_0_and_minus_1": lambda T: (T.flatten(x(T, 1)[0], 0, -1), T.nn.Flatten(-1, 0)(x(T, 1)[0])),
    "replication_pad_empty_batch": lambda T: F(T).pad(x(T, 0, 2, 3), (1, 1), mode="replicate"),
    "circular_pad_crop_to_nothing": lambda T: F(T).pad(x(T, 1, 2, 3), (-1, -2), mode="circular"),
    "soft_margin_loss_target_broadcast_to_input": lambda T: T.nn.SoftMarginLoss()(x(T, 2, 4), x(T, 4)),
    "multi_margin_loss_empty_batch": lambda T: F(T).multi_margin_loss(x(T, 0, 4), idx(T, np.zeros(0)),
                                                                       reduction="none"),
    # (PyTorch's mean of no samples is uninitialised memory: only the shape is compared)
    "multi_margin_loss_empty_batch_mean_shape": lambda T: F(T).multi_margin_loss(x(T, 0, 4),
                                                                                  idx(T, np.zeros(0))).shape,
}


@pytest.mark.parametrize("case", SAME_RESULT)
def test_same_result(case):
    same(SAME_RESULT[case])


def test_group_norm_of_an_empty_batch_differentiates():
    def fn(T):
        m = T.nn.GroupNorm(2, 4)
        inp = x(T, 0, 4, 3).requires_grad_()
        m(inp).sum().backward()
        return inp.grad, m.weight.grad, m.bias.grad
    same(fn)


@pytest.mark.parametrize("mode,rank", [("nearest", 3), ("linear", 3), ("bilinear", 4), ("nearest-exact", 5)])
def test_upsample_refuses_a_float_size(mode, rank):
    """PyTorch's kernels' argument parser refuses the list [4.0]; the first line of its message is the same."""
    err = check_raises(lambda T: T.nn.Upsample(size=4.0, mode=mode)(x(T, 1, 2, *(3,) * (rank - 2))))
    with pytest.raises(TypeError) as got:
        torchish.nn.Upsample(size=4.0, mode=mode)(x(torchish, 1, 2, *(3,) * (rank - 2)))
    assert str(got.value).split("\n")[0] == str(err).split("\n")[0]


@pytest.mark.parametrize("kw", [dict(stride="1"), dict(stride=2.0), dict(padding=1.0), dict(dilation=(1, 1.0)),
                                dict(stride=True)])
def test_convolution_refuses_window_arguments_that_are_not_ints(kw):
    """PyTorch's argument parser raises TypeError (torchish converted them with int())."""
    check_raises(lambda T: F(T).conv2d(x(T, 1, 2, 5, 5), x(T, 3, 2, 3, 3), **kw), match=list(kw)[0])
    check_raises(lambda T: T.nn.Conv2d(2, 3, 3, **kw)(x(T, 1, 2, 5, 5)))
    check_raises(lambda T: F(T).conv_transpose2d(x(T, 1, 2, 5, 5), x(T, 2, 3, 3, 3), **kw))


def test_zero_channel_affine_batch_norm_and_empty_embedding_table_raise():
    """A batch norm with affine parameters over zero channels, and an embedding lookup in a table of no rows,
    raise what PyTorch's kernels raise; without affine parameters the empty result is computed."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (initialising an empty weight warns in both)
        for fn in (lambda T: T.nn.BatchNorm1d(0)(T.ones(3, 0)), lambda T: T.nn.BatchNorm2d(0)(T.ones(2, 0, 3, 3)),
                   lambda T: T.nn.Embedding(0, 3)(T.tensor([0])),
                   lambda T: T.nn.functional.embedding(T.tensor([[0]]), T.ones(0, 3))):
            same_error(fn)
    same(lambda T: T.nn.functional.batch_norm(T.ones(3, 0), T.zeros(0), T.ones(0), training=True))


# ---------------------------------------------------------------------------------------------------------------
# a second sweep (wrong dtypes, non-Tensor inputs, tensors where numbers go), each raising PyTorch's builtin type
# where torchish raised another one or returned a value
SAME_ERROR_2 = {
    # convolution kernels: none has Bool; the dilated and transposed ones only floats and int64 (their dtype
    # dispatch comes before the weight's dtype check); a non-zero padding_mode pads with F.pad first
    "conv2d_bool_input_no_bias": lambda T: T.nn.Conv2d(2, 3, 3, bias=False)(x(T, 1, 2, 5, 5) > 0),
    "conv2d_same_padding_bool_input": lambda T: T.nn.Conv2d(2, 3, 3, padding="same")(x(T, 1, 2, 5, 5) > 0),
    "conv_transpose1d_bool_input": lambda T: T.nn.ConvTranspose1d(2, 3, 3)(x(T, 1, 2, 5) > 0),
    "conv_transpose3d_int_input": lambda T: T.nn.ConvTranspose3d(2, 3, 2)(x(T, 1, 2, 3, 3, 3).int()),
    "conv_transpose2d_int32": lambda T: F(T).conv_transpose2d(x(T, 1, 2, 3, 3).int(), x(T, 2, 3, 2, 2).int()),
    "conv2d_dilated_int8": lambda T: F(T).conv2d(x(T, 1, 2, 5, 5).to(T.int8), x(T, 3, 2, 2, 2).to(T.int8),
                                                  dilation=2),
    "conv2d_reflect_bool_input": lambda T: T.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(
        x(T, 1, 2, 5, 5) > 0),
    "conv3d_replicate_bool_input": lambda T: T.nn.Conv3d(2, 3, 3, padding=1, padding_mode="replicate")(
        x(T, 1, 2, 3, 3, 3) > 0),
    "conv2d_reflect_5d_input": lambda T: T.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(
        x(T, 2, 1, 2, 5, 5)),
    # ConvTranspose compares output_size's entries as given: a Tensor row's truth value is ambiguous
    "conv_transpose1d_tensor_as_output_size": lambda T: T.nn.ConvTranspose1d(2, 3, 3)(x(T, 1, 2, 5), x(T, 1, 2, 5)),
    # pooling
    "lp_pool3d_half": lambda T: T.nn.LPPool3d(2, 2)(x(T, 1, 2, 4, 4, 4, dtype=T.float16)),
    "lp_pool2d_int32_with_int_power": lambda T: F(T).lp_pool2d(x(T, 1, 2, 4, 4).int(), 2, 2),
    "adaptive_avg_pool1d_module_list": lambda T: T.nn.AdaptiveAvgPool1d(3)([[1.0, 2.0, 3.0]]),
    "adaptive_max_pool1d_module_none": lambda T: T.nn.AdaptiveMaxPool1d(3)(None),
    # shapes, activations, embeddings, losses
    "unfold_scalar": lambda T: T.nn.Unfold(2)(x(T, 1)[0]),
    "unfold_vector": lambda T: T.nn.Unfold(2)(x(T, 3)),
    "softmin_of_an_int": lambda T: T.nn.Softmin(dim=1)(3),
    "gumbel_softmax_int_logits": lambda T: F(T).gumbel_softmax(idx(T, [[1, 2, 3]])),
    "gumbel_softmax_bool_logits": lambda T: F(T).gumbel_softmax(idx(T, [[1, 0, 3]]) > 0),
    "embedding_max_norm_list_indices": lambda T: T.nn.Embedding(5, 3, max_norm=1.0)([0, 1]),
    "multilabel_soft_margin_loss_scalar": lambda T: T.nn.MultiLabelSoftMarginLoss()(x(T, 1)[0], x(T, 1)[0]),
    "multilabel_soft_margin_loss_list_target": lambda T: T.nn.MultiLabelSoftMarginLoss()(x(T, 2, 3),
                                                                                         [[0.5] * 3] * 2),
    "max_unpool1d_int_input": lambda T: F(T).max_unpool1d((x(T, 1, 1, 2) * 3).long(), idx(T, [[[0, 2]]]), 2),
    "max_unpool3d_bool_input": lambda T: T.nn.MaxUnpool3d(2)(x(T, 1, 1, 1, 1, 2) > 0, idx(T, [[[[[0, 2]]]]])),
    "embedding_bag_vector_weight": lambda T: F(T).embedding_bag(idx(T, [[0, 1]]), x(T, 5)),
    "embedding_bag_padding_idx_out_of_range": lambda T: F(T).embedding_bag(idx(T, [[0, 1]]), x(T, 5, 3),
                                                                           padding_idx=-9),
    "cosine_similarity_negative_eps": lambda T: F(T).cosine_similarity(x(T, 2, 3), x(T, 3, 3), eps=-1e-9),
    "linear_vector_weight_with_bias": lambda T: F(T).linear(x(T, 2, 4), x(T, 4), x(T, 1)),
    "channel_shuffle_float_groups": lambda T: T.nn.ChannelShuffle(2.0)(x(T, 1, 4, 2, 2)),
    "channel_shuffle_bool_groups": lambda T: F(T).channel_shuffle(x(T, 1, 4, 2, 2), True),
    # messages: the first words users search for were torchish's own (or JAX's)
    "multihead_attention_key_batch_mismatch": lambda T: T.nn.MultiheadAttention(4, 2)(x(T, 3, 2, 4), x(T, 3, 1, 4),
                                                                                      x(T, 3, 1, 4)),
    "multihead_attention_bias_kv_batch_mismatch": lambda T: T.nn.MultiheadAttention(4, 2, add_bias_kv=True)(
        x(T, 3, 2, 4), x(T, 3, 1, 4), x(T, 3, 1, 4)),
    "multihead_attention_float64_mask_for_float32": lambda T: T.nn.MultiheadAttention(4, 2)(
        x(T, 3, 2, 4), x(T, 3, 2, 4), x(T, 3, 2, 4), attn_mask=x(T, 3, 3, dtype=T.float64)),
    "multihead_attention_float_mask_for_float64": lambda T: T.nn.MultiheadAttention(4, 2).double()(
        *(x(T, 3, 2, 4, dtype=T.float64),) * 3, key_padding_mask=x(T, 2, 3)),
    "reflect_pad_height_is_argument_6": lambda T: F(T).pad(x(T, 1, 3, 3), (3, 3, 3, 3), mode="reflect"),
    "reflect_pad_depth_is_argument_8": lambda T: F(T).pad(x(T, 1, 1, 2, 3, 3), (1, 1, 1, 1, 3, 3), mode="reflect"),
    "avg_pool1d_two_int_kernel": lambda T: F(T).avg_pool1d(x(T, 1, 2, 6), (2, 2)),
    "avg_pool1d_two_int_padding": lambda T: F(T).avg_pool1d(x(T, 1, 2, 6), 2, 2, (1, 1)),
    "max_unpool1d_of_a_vector": lambda T: F(T).max_unpool1d(x(T, 2), idx(T, [0, 1]), 2),
    "avg_pool2d_of_a_scalar": lambda T: T.nn.AvgPool2d(2)(x(T, 1)[0]),
    "lp_pool2d_of_none": lambda T: T.nn.LPPool2d(2, 2)(None),
    "instance_norm_running_mean_size": lambda T: T.nn.InstanceNorm1d(3, track_running_stats=True)(x(T, 2, 4, 5)),
    "instance_norm_weight_size": lambda T: F(T).instance_norm(x(T, 2, 4, 5), weight=x(T, 3)),
    "rnn_hidden_state_tuple": lambda T: T.nn.RNN(3, 4)(x(T, 5, 2, 3), (x(T, 1, 2, 4), x(T, 1, 2, 4))),
    "gru_hidden_state_list": lambda T: T.nn.GRU(3, 4)(x(T, 5, 2, 3), [x(T, 1, 2, 4)]),
    "gru_cell_hidden_state_tuple": lambda T: T.nn.GRUCell(3, 4)(x(T, 2, 3), (x(T, 2, 4),)),
    "lstm_cell_hidden_state_of_ints": lambda T: T.nn.LSTMCell(3, 4)(x(T, 2, 3), (1, 2)),
    "pack_padded_sequence_of_a_vector": lambda T: T.nn.utils.rnn.pack_padded_sequence(x(T, 5), [5]),
    "pack_padded_sequence_of_a_scalar": lambda T: T.nn.utils.rnn.pack_padded_sequence(x(T, 1)[0], [1],
                                                                                      batch_first=True),
    "layer_norm_empty_normalized_shape": lambda T: F(T).layer_norm(x(T, 2, 4), ()),
    "layer_norm_of_a_scalar_empty_shape": lambda T: F(T).layer_norm(x(T, 1)[0], ()),
    "embedding_bag_float64_index_out_of_range": lambda T: F(T).embedding_bag(idx(T, [0, -3, 9]), x(T, 5, 3).double(),
                                                                             idx(T, [0, 2])),
}


@pytest.mark.parametrize("case", SAME_ERROR_2)
def test_same_error_2(case):
    same_error(SAME_ERROR_2[case])


def lp_pools(T, inp, p):
    return (T.nn.LPPool1d(p, 3)(inp), F(T).lp_pool1d(inp, p, 3), F(T).lp_pool2d(inp.unsqueeze(0), p, (1, 3)),
            F(T).lp_pool3d(inp.unsqueeze(0).unsqueeze(0), p, (1, 1, 3)))


SAME_RESULT_2 = {
    # padding='same'/'valid' adds a bias of another dtype in the output's dtype (an int padding refuses it)
    "conv2d_same_padding_bias_of_another_dtype": lambda T: (
        F(T).conv2d(x(T, 1, 2, 5, 5, dtype=T.float64), x(T, 3, 2, 3, 3, dtype=T.float64), x(T, 3), padding="same"),
        F(T).conv1d(x(T, 2, 5), x(T, 3, 2, 3), x(T, 3, dtype=T.float64), padding="valid")),
    # PyTorch's kernel returns a copy of an empty input, its shape unchanged
    "pixel_unshuffle_empty": lambda T: (T.nn.PixelUnshuffle(2)(x(T, 0, 1, 4, 4)),
                                        F(T).pixel_unshuffle(x(T, 1, 1, 0, 4), 2)),
    # LP pooling of integers: x.pow(p) (the module passes float(p); an int p keeps the average integral), then the
    # default float dtype (torchish gave float64); an infinite p is the max of |x| (torchish computed 1s)
    "lp_pool_int_input_float_power": lambda T: lp_pools(T, (x(T, 1, 2, 6) * 3).long(), 2.0),
    "lp_pool_int_input_int_power": lambda T: lp_pools(T, (x(T, 1, 2, 6) * 3).long(), 2)[1:],
    "lp_pool_bool_input": lambda T: lp_pools(T, x(T, 1, 2, 6) > 0, 2.0),
    "lp_pool_infinite_power": lambda T: lp_pools(T, x(T, 1, 2, 6) * 3, float("inf")),
    "lp_pool_minus_infinite_power": lambda T: lp_pools(T, x(T, 1, 2, 6) * 3, -float("inf")),
    # the composite's + EPSILON turns integral sums into the default float dtype (torchish gave float64)
    "cosine_embedding_loss_int_inputs": lambda T: T.nn.CosineEmbeddingLoss()(
        (x(T, 2, 3) * 3).long(), (x(T, 2, 3) * 2).long(), idx(T, [1, -1])),
    # PyTorch's CPU average pooling sums and divides float16/bfloat16 in float32 and rounds once (torchish summed
    # in the low precision: last-bit differences)
    "avg_and_lp_pool_bfloat16": lambda T: (T.nn.AvgPool1d(3)(x(T, 1, 2, 6, dtype=T.bfloat16)),
                                           T.nn.AvgPool2d(3)(x(T, 1, 2, 6, 6, dtype=T.bfloat16)),
                                           T.nn.LPPool2d(2, 3)(x(T, 1, 2, 6, 6, dtype=T.bfloat16)),
                                           T.nn.AdaptiveAvgPool2d(3)(x(T, 1, 2, 6, 6, dtype=T.bfloat16))),
    "avg_pool_half": lambda T: F(T).avg_pool2d(x(T, 1, 2, 6, 6, dtype=T.float16), 3),
}


@pytest.mark.parametrize("case", SAME_RESULT_2)
def test_same_result_2(case):
    same(SAME_RESULT_2[case])
