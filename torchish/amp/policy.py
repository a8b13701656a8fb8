"""Autocast's casting policy: which ops run in the lower-precision dtype, which in float32, which promote.

PyTorch registers an autocast kernel per (device type, aten op); here the key is the name an op has in
``torchish.ops.registry.OPS`` (the single funnel ``apply`` consults :data:`POLICY`), plus a few PyTorch op names
that torchish builds from several registry ops or whose front-end checks dtypes before ``apply``
(``matmul``, ``mm``, ``cross_entropy_loss``...): those front-ends ask for their casts first, under the PyTorch name.

The lists follow PyTorch 2.13's ``aten/src/ATen/autocast_mode.cpp`` (the Autocast Op Reference in its docs), per
device type. Where PyTorch lists a composite op that decomposes into listed ops (``einsum``, ``tensordot`` and
``inner`` on the CPU become ``mm``/``bmm``), the registry op that stands for it carries the policy of the result.
"""
from __future__ import annotations

LOWER = "lower_precision_fp"  # floating inputs cast to the autocast dtype (float16 / bfloat16)
FP32 = "fp32"  # floating inputs cast to float32
PROMOTE = "promote"  # floating inputs cast to the widest floating type among them
BANNED = "banned"  # an error under autocast (binary_cross_entropy on CUDA)

_CPU_LOWER = (
    "convolution", "conv_tbc", "linear", "linear_nobias", "prelu", "scaled_dot_product_attention", "multi_head_attention",
    "matmul", "mm", "bmm", "linalg_vecdot", "addmm", "addbmm", "baddbmm",
    # composites PyTorch runs through mm/bmm/mkldnn_rnn_layer on the CPU (einsum: those of several operands that
    # sum over a label; a single operand or a plain product is not cast)
    "tensordot", "inner", "linalg_multi_dot", "lstm", "rnn_tanh", "rnn_relu", "rnn_tanh_cell", "rnn_relu_cell",
    "einsum_ViewBackward0",
    "affine_grid_generator",  # (PyTorch's composite: the base grid bmm theta)
)

_CPU_FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler_2d", "grid_sampler_3d", "prod", "prod_all", "quantile",
    "nanquantile", "cdist", "cdist_mm", "trace", "linalg_cholesky_ex", "linalg_inv_ex",
    "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "reflect_pad1d", "reflect_pad2d", "replicate_pad1d", "replicate_pad2d", "replicate_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "poisson_nll_loss",
    "poisson_nll_loss_log_input", "smooth_l1_loss",
    "cross_entropy_loss", "cross_entropy_label_smoothing", "cross_entropy_prob_target", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits", "linalg_matrix_rank", "linalg_solve_ex",
    "linalg_svd", "linalg_svdvals", "linalg_eig", "linalg_eigh", "linalg_qr", "linalg_lstsq",
    *(f"fft_{n}" for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
                           "rfftn", "irfftn", "hfft", "ihfft")),
    "polar", "view_as_complex", "cholesky_solve", "triangular_solve", "linalg_cond",
)

_CPU_PROMOTE = ("cat", "stack", "index_copy")

_CUDA_LOWER = (
    "convolution", "conv_tbc", "linear", "linear_nobias", "prelu", "scaled_dot_product_attention", "multi_head_attention",
    "matmul", "mm", "mv", "bmm", "linalg_vecdot", "addmm", "addmv", "addr", "addbmm", "baddbmm", "linalg_multi_dot",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "lstm", "gru", "rnn_tanh", "rnn_relu", "einsum",
    "affine_grid_generator",
)

_UPSAMPLE = tuple(f"upsample_{m}{nd}d{aa}" for m, nd, aa in (
    ("nearest", 1, ""), ("nearest", 2, ""), ("nearest", 3, ""), ("nearest-exact", 1, ""), ("nearest-exact", 2, ""),
    ("nearest-exact", 3, ""), ("linear", 1, ""), ("bilinear", 2, ""), ("bilinear", 2, "_aa"), ("trilinear", 3, ""),
    ("bicubic", 2, ""), ("bicubic", 2, "_aa")))

_CUDA_FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt", "sinh",
    "tan", "pow", "pow_tensor", "pow_scalar_base", "softplus", "layer_norm", "rms_norm", "group_norm",
    "cosine_similarity", "poisson_nll_loss", "poisson_nll_loss_log_input", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div",
    "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits", "pdist",
    "cdist", "cdist_mm", "logsumexp", *_UPSAMPLE,
    # fp32_set_opt_dtype / fp32_append_dtype: float32 results unless a dtype is given
    "prod", "prod_all", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm", "linalg_matrix_norm",
    "sum", "sum_all",
    # cross_entropy is not listed for CUDA: it decomposes into log_softmax and nll_loss, both float32
    "cross_entropy_label_smoothing", "cross_entropy_prob_target",
)

_CUDA_PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "bilinear_nobias", "linalg_cross", "dot", "vdot",
                 "grid_sampler_2d", "grid_sampler_3d", "index_put", "tensordot", "scatter_add")


def _table(**groups):
    table = {}
    for policy, names in groups.items():
        for name in names:
            table[name] = policy
    return table


# device type -> {op name: policy}
POLICY = {
    "cpu": _table(**{LOWER: _CPU_LOWER, FP32: _CPU_FP32, PROMOTE: _CPU_PROMOTE}),
    "cuda": _table(**{LOWER: _CUDA_LOWER, FP32: _CUDA_FP32, PROMOTE: _CUDA_PROMOTE, BANNED: ("binary_cross_entropy",)}),
}

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")
