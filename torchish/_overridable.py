"""The names of the functions and Tensor methods PyTorch 2.13 hands to ``__torch_function__``
(``torch.overrides.get_overridable_functions()`` without private names; for Tensor every public method, as
PyTorch's methods all check, and the operators, ``__pow__`` included): torchish dispatches the same ones
(``torchish/_subclass.py``). Regenerate from a PyTorch install when its API grows."""

TORCH = (
    'abs', 'absolute', 'acos', 'acosh', 'adaptive_avg_pool1d', 'adaptive_max_pool1d', 'add', 'addbmm', 'addcdiv',
    'addcmul', 'addmm', 'addmv', 'addr', 'adjoint', 'affine_grid_generator', 'alias_copy', 'all', 'allclose',
    'alpha_dropout', 'amax', 'amin', 'aminmax', 'angle', 'any', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan',
    'arctan2', 'arctanh', 'argmax', 'argmin', 'argsort', 'argwhere', 'as_strided_copy', 'as_strided_scatter',
    'asin', 'asinh', 'atan', 'atan2', 'atanh', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'autocast', 'avg_pool1d',
    'baddbmm', 'batch_norm', 'batch_norm_backward_elemt', 'batch_norm_backward_reduce', 'batch_norm_elemt',
    'batch_norm_gather_stats', 'batch_norm_gather_stats_with_counts', 'batch_norm_stats', 'batch_norm_update_stats',
    'bernoulli', 'bilinear', 'binary_cross_entropy_with_logits', 'bincount', 'binomial', 'bitwise_and',
    'bitwise_left_shift', 'bitwise_not', 'bitwise_or', 'bitwise_right_shift', 'bitwise_xor', 'block_diag', 'bmm',
    'broadcast_tensors', 'broadcast_to', 'bucketize', 'cartesian_prod', 'cat', 'ccol_indices_copy', 'cdist', 'ceil',
    'celu', 'chain_matmul', 'channel_shuffle', 'cholesky', 'cholesky_inverse', 'cholesky_solve',
    'choose_qparams_optimized', 'chunk', 'clamp', 'clamp_max', 'clamp_min', 'clip', 'clone', 'col_indices_copy',
    'column_stack', 'combinations', 'complex', 'concat', 'concatenate', 'conj', 'conj_physical', 'constant_pad_nd',
    'conv1d', 'conv2d', 'conv3d', 'conv_tbc', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d',
    'convolution', 'copysign', 'corrcoef', 'cos', 'cosh', 'cosine_embedding_loss', 'cosine_similarity',
    'count_nonzero', 'cov', 'cross', 'crow_indices_copy', 'ctc_loss', 'cummax', 'cummin', 'cumprod', 'cumsum',
    'cumulative_trapezoid', 'deg2rad', 'dequantize', 'det', 'detach', 'detach_copy', 'diag', 'diag_embed',
    'diagflat', 'diagonal', 'diagonal_copy', 'diagonal_scatter', 'diff', 'digamma', 'dist', 'div', 'divide', 'dot',
    'dropout', 'dsmm', 'dsplit', 'dstack', 'einsum', 'embedding', 'embedding_bag', 'empty_like', 'eq', 'equal',
    'erf', 'erfc', 'erfinv', 'exp', 'exp2', 'expand_copy', 'expm1', 'fake_quantize_per_channel_affine',
    'fake_quantize_per_tensor_affine', 'fbgemm_linear_fp16_weight', 'fbgemm_linear_fp16_weight_fp32_activation',
    'fbgemm_linear_int8_weight', 'fbgemm_linear_int8_weight_fp32_activation', 'fbgemm_linear_quantize_weight',
    'fbgemm_pack_gemm_matrix_fp16', 'fbgemm_pack_quantized_matrix', 'feature_alpha_dropout', 'feature_dropout',
    'fix', 'flatten', 'flip', 'fliplr', 'flipud', 'float_power', 'floor', 'floor_divide', 'fmax', 'fmin', 'fmod',
    'frac', 'frexp', 'frobenius_norm', 'full_like', 'fused_moving_avg_obs_fake_quant', 'gather', 'gcd', 'ge',
    'geqrf', 'ger', 'get_device', 'gradient', 'greater', 'greater_equal', 'grid_sampler', 'grid_sampler_2d',
    'grid_sampler_3d', 'group_norm', 'gru', 'gru_cell', 'gt', 'hardshrink', 'hash_tensor', 'heaviside',
    'hinge_embedding_loss', 'histc', 'histogram', 'histogramdd', 'hsmm', 'hsplit', 'hspmm', 'hstack', 'hypot', 'i0',
    'igamma', 'igammac', 'imag', 'index_add', 'index_copy', 'index_fill', 'index_put', 'index_reduce',
    'index_select', 'indices_copy', 'inner', 'instance_norm', 'int_repr', 'inverse', 'is_complex', 'is_conj',
    'is_distributed', 'is_floating_point', 'is_inference', 'is_neg', 'is_nonzero', 'is_same_size', 'is_signed',
    'isclose', 'isfinite', 'isin', 'isinf', 'isnan', 'isneginf', 'isposinf', 'isreal', 'istft', 'kl_div', 'kron',
    'kthvalue', 'layer_norm', 'lcm', 'ldexp', 'le', 'lerp', 'less', 'less_equal', 'lgamma', 'lobpcg', 'log',
    'log10', 'log1p', 'log2', 'log_softmax', 'logaddexp', 'logaddexp2', 'logcumsumexp', 'logdet', 'logical_and',
    'logical_not', 'logical_or', 'logical_xor', 'logit', 'logsumexp', 'lstm', 'lstm_cell', 'lt', 'lu', 'lu_solve',
    'lu_unpack', 'margin_ranking_loss', 'masked_fill', 'masked_scatter', 'masked_select', 'matmul', 'matrix_exp',
    'matrix_power', 'max', 'max_pool1d', 'max_pool1d_with_indices', 'max_pool2d', 'max_pool3d', 'maximum', 'mean',
    'median', 'meshgrid', 'min', 'minimum', 'miopen_batch_norm', 'miopen_convolution',
    'miopen_convolution_add_relu', 'miopen_convolution_relu', 'miopen_convolution_transpose',
    'miopen_depthwise_convolution', 'miopen_rnn', 'mm', 'mode', 'moveaxis', 'movedim', 'msort', 'mul',
    'multinomial', 'multiply', 'mv', 'mvlgamma', 'nan_to_num', 'nanmean', 'nanmedian', 'nanquantile', 'nansum',
    'narrow', 'narrow_copy', 'native_batch_norm', 'native_channel_shuffle', 'native_dropout', 'native_group_norm',
    'native_layer_norm', 'native_norm', 'ne', 'neg', 'negative', 'nextafter', 'nonzero', 'nonzero_static', 'norm',
    'norm_except_dim', 'not_equal', 'nuclear_norm', 'numel', 'ones_like', 'orgqr', 'ormqr', 'outer',
    'pairwise_distance', 'pca_lowrank', 'pdist', 'permute', 'permute_copy', 'pinverse', 'pixel_shuffle',
    'pixel_unshuffle', 'poisson', 'poisson_nll_loss', 'polar', 'polygamma', 'positive', 'pow', 'prelu', 'prod',
    'put', 'q_per_channel_axis', 'q_per_channel_scales', 'q_per_channel_zero_points', 'q_scale', 'q_zero_point',
    'qr', 'quantile', 'quantize_per_channel', 'quantize_per_tensor', 'quantize_per_tensor_dynamic',
    'quantized_batch_norm', 'quantized_gru_cell', 'quantized_lstm_cell', 'quantized_max_pool1d',
    'quantized_max_pool2d', 'quantized_max_pool3d', 'quantized_rnn_relu_cell', 'quantized_rnn_tanh_cell', 'rad2deg',
    'ravel', 'real', 'reciprocal', 'relu', 'remainder', 'renorm', 'repeat_interleave', 'reshape', 'resolve_conj',
    'resolve_neg', 'rms_norm', 'rnn_relu', 'rnn_relu_cell', 'rnn_tanh', 'rnn_tanh_cell', 'roll', 'rot90', 'round',
    'row_indices_copy', 'row_stack', 'rrelu', 'rsqrt', 'rsub', 'saddmm', 'scatter', 'scatter_add', 'scatter_reduce',
    'searchsorted', 'select', 'select_copy', 'select_scatter', 'selu', 'sgn', 'sigmoid', 'sign', 'signbit', 'sin',
    'sinc', 'sinh', 'slice_copy', 'slice_inverse', 'slice_scatter', 'slogdet', 'smm', 'softmax', 'sort', 'split',
    'split_copy', 'split_with_sizes', 'split_with_sizes_copy', 'spmm', 'sqrt', 'square', 'squeeze', 'squeeze_copy',
    'sspaddmm', 'stack', 'std', 'std_mean', 'stft', 'sub', 'subtract', 'sum', 'svd', 'svd_lowrank', 'swapaxes',
    'swapdims', 'sym_float', 'sym_int', 'sym_ite', 'sym_max', 'sym_min', 'sym_not', 'sym_sqrt', 'sym_sum', 't',
    't_copy', 'take', 'take_along_dim', 'tan', 'tanh', 'tensor_split', 'tensordot', 'threshold', 'tile', 'topk',
    'trace', 'transpose', 'transpose_copy', 'trapezoid', 'trapz', 'triangular_solve', 'tril', 'triplet_margin_loss',
    'triu', 'true_divide', 'trunc', 'unbind', 'unbind_copy', 'unflatten', 'unfold_copy', 'unique',
    'unique_consecutive', 'unravel_index', 'unsafe_chunk', 'unsafe_split', 'unsafe_split_with_sizes', 'unsqueeze',
    'unsqueeze_copy', 'values_copy', 'var', 'var_mean', 'vdot', 'view_as_complex', 'view_as_complex_copy',
    'view_as_real', 'view_as_real_copy', 'view_copy', 'vsplit', 'vstack', 'where', 'xlogy', 'zeros_like',
)

FUNCTIONAL = (
    'adaptive_avg_pool1d', 'adaptive_avg_pool2d', 'adaptive_avg_pool3d', 'adaptive_max_pool1d',
    'adaptive_max_pool1d_with_indices', 'adaptive_max_pool2d', 'adaptive_max_pool2d_with_indices',
    'adaptive_max_pool3d', 'adaptive_max_pool3d_with_indices', 'affine_grid', 'alpha_dropout', 'avg_pool1d',
    'avg_pool2d', 'avg_pool3d', 'batch_norm', 'bilinear', 'binary_cross_entropy',
    'binary_cross_entropy_with_logits', 'celu', 'channel_shuffle', 'conv1d', 'conv2d', 'conv3d', 'conv_tbc',
    'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'cosine_embedding_loss', 'cosine_similarity',
    'cross_entropy', 'ctc_loss', 'dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'elu', 'embedding',
    'embedding_bag', 'feature_alpha_dropout', 'fold', 'fractional_max_pool2d', 'fractional_max_pool2d_with_indices',
    'fractional_max_pool3d', 'fractional_max_pool3d_with_indices', 'gaussian_nll_loss', 'gelu', 'glu',
    'grid_sample', 'group_norm', 'gumbel_softmax', 'hardshrink', 'hardtanh', 'hinge_embedding_loss', 'huber_loss',
    'instance_norm', 'interpolate', 'kl_div', 'l1_loss', 'layer_norm', 'leaky_relu', 'linear',
    'linear_cross_entropy', 'local_response_norm', 'log_softmax', 'logsigmoid', 'lp_pool1d', 'lp_pool2d',
    'lp_pool3d', 'margin_ranking_loss', 'max_pool1d', 'max_pool1d_with_indices', 'max_pool2d',
    'max_pool2d_with_indices', 'max_pool3d', 'max_pool3d_with_indices', 'max_unpool1d', 'max_unpool2d',
    'max_unpool3d', 'mish', 'mse_loss', 'multi_head_attention_forward', 'multi_margin_loss',
    'multilabel_margin_loss', 'multilabel_soft_margin_loss', 'native_channel_shuffle', 'nll_loss', 'normalize',
    'one_hot', 'pad', 'pairwise_distance', 'pdist', 'pixel_shuffle', 'pixel_unshuffle', 'poisson_nll_loss', 'prelu',
    'relu', 'relu6', 'rms_norm', 'rrelu', 'scaled_dot_product_attention', 'selu', 'silu', 'smooth_l1_loss',
    'soft_margin_loss', 'softmax', 'softmin', 'softplus', 'softshrink', 'softsign', 'tanhshrink', 'threshold',
    'triplet_margin_loss', 'triplet_margin_with_distance_loss', 'unfold',
)

LINALG = (
    'cholesky', 'cholesky_ex', 'cond', 'cross', 'det', 'diagonal', 'eig', 'eigh', 'eigvals', 'eigvalsh',
    'householder_product', 'inv', 'inv_ex', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve', 'lstsq', 'lu', 'lu_factor',
    'lu_factor_ex', 'lu_solve', 'matmul', 'matrix_exp', 'matrix_norm', 'matrix_power', 'matrix_rank', 'multi_dot',
    'norm', 'pinv', 'qr', 'slogdet', 'solve', 'solve_ex', 'solve_triangular', 'svd', 'svdvals', 'tensorinv',
    'tensorsolve', 'vander', 'vecdot', 'vector_norm',
)

FFT = (
    'fft', 'fft2', 'fftn', 'fftshift', 'hfft', 'hfft2', 'hfftn', 'ifft', 'ifft2', 'ifftn', 'ifftshift', 'ihfft',
    'ihfft2', 'ihfftn', 'irfft', 'irfft2', 'irfftn', 'rfft', 'rfft2', 'rfftn',
)

SPECIAL = (
    'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'chebyshev_polynomial_t',
    'chebyshev_polynomial_u', 'chebyshev_polynomial_v', 'chebyshev_polynomial_w', 'digamma', 'entr', 'erf', 'erfc',
    'erfcx', 'erfinv', 'exp2', 'expit', 'expm1', 'gammainc', 'gammaincc', 'gammaln', 'hermite_polynomial_h',
    'hermite_polynomial_he', 'i0', 'i0e', 'i1', 'i1e', 'laguerre_polynomial_l', 'legendre_polynomial_p', 'log1p',
    'log_ndtr', 'log_softmax', 'logit', 'logsumexp', 'modified_bessel_i0', 'modified_bessel_i1',
    'modified_bessel_k0', 'modified_bessel_k1', 'multigammaln', 'ndtr', 'ndtri', 'polygamma', 'psi', 'round',
    'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1', 'shifted_chebyshev_polynomial_t',
    'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'sinc',
    'softmax', 'spherical_bessel_j0', 'xlog1py', 'xlogy', 'zeta',
)

TENSOR = (
    '__abs__', '__add__', '__and__', '__array__', '__array_wrap__', '__bool__', '__complex__', '__contains__',
    '__deepcopy__', '__div__', '__dlpack__', '__dlpack_device__', '__eq__', '__float__', '__floordiv__',
    '__format__', '__ge__', '__getitem__', '__gt__', '__iadd__', '__iand__', '__idiv__', '__ifloordiv__',
    '__ilshift__', '__imod__', '__imul__', '__index__', '__int__', '__invert__', '__ior__', '__ipow__',
    '__irshift__', '__isub__', '__itruediv__', '__ixor__', '__le__', '__len__', '__long__', '__lshift__', '__lt__',
    '__matmul__', '__mod__', '__mul__', '__ne__', '__neg__', '__nonzero__', '__or__', '__pos__', '__pow__',
    '__radd__', '__rand__', '__rdiv__', '__reduce_ex__', '__repr__', '__reversed__', '__rfloordiv__', '__rlshift__',
    '__rmatmul__', '__rmod__', '__rmul__', '__ror__', '__rpow__', '__rrshift__', '__rshift__', '__rsub__',
    '__rtruediv__', '__rxor__', '__setitem__', '__setstate__', '__sub__', '__truediv__', '__xor__', 'abs', 'abs_',
    'absolute', 'absolute_', 'acos', 'acos_', 'acosh', 'acosh_', 'add', 'add_', 'addbmm', 'addbmm_', 'addcdiv',
    'addcdiv_', 'addcmul', 'addcmul_', 'addmm', 'addmm_', 'addmv', 'addmv_', 'addr', 'addr_', 'adjoint', 'all',
    'allclose', 'amax', 'amin', 'aminmax', 'angle', 'any', 'apply_', 'arccos', 'arccos_', 'arccosh', 'arccosh_',
    'arcsin', 'arcsin_', 'arcsinh', 'arcsinh_', 'arctan', 'arctan2', 'arctan2_', 'arctan_', 'arctanh', 'arctanh_',
    'argmax', 'argmin', 'argsort', 'argwhere', 'as_strided', 'as_strided_', 'as_strided_scatter',
    'asin', 'asin_', 'asinh', 'asinh_', 'atan', 'atan2', 'atan2_', 'atan_', 'atanh', 'atanh_', 'backward',
    'baddbmm', 'baddbmm_', 'bernoulli', 'bernoulli_', 'bfloat16', 'bincount', 'bitwise_and', 'bitwise_and_',
    'bitwise_left_shift', 'bitwise_left_shift_', 'bitwise_not', 'bitwise_not_', 'bitwise_or', 'bitwise_or_',
    'bitwise_right_shift', 'bitwise_right_shift_', 'bitwise_xor', 'bitwise_xor_', 'bmm', 'bool', 'broadcast_to',
    'byte', 'cauchy_', 'ccol_indices', 'cdouble', 'ceil', 'ceil_', 'cfloat', 'chalf', 'char', 'cholesky',
    'cholesky_inverse', 'cholesky_solve', 'chunk', 'clamp', 'clamp_', 'clamp_max', 'clamp_max_', 'clamp_min',
    'clamp_min_', 'clip', 'clip_', 'clone', 'coalesce', 'col_indices', 'conj', 'conj_physical', 'conj_physical_',
    'const_data_ptr', 'contiguous', 'copy_', 'copysign', 'copysign_', 'corrcoef', 'cos', 'cos_', 'cosh', 'cosh_',
    'count_nonzero', 'cov', 'cpu', 'cross', 'crow_indices', 'cuda', 'cummax', 'cummin', 'cumprod', 'cumprod_',
    'cumsum', 'cumsum_', 'data_ptr', 'deg2rad', 'deg2rad_', 'dense_dim', 'dequantize', 'det', 'detach', 'detach_',
    'diag', 'diag_embed', 'diagflat', 'diagonal', 'diagonal_scatter', 'diff', 'digamma', 'digamma_', 'dim',
    'dim_order', 'dist', 'div', 'div_', 'divide', 'divide_', 'dot', 'double', 'dsplit', 'eig', 'element_size', 'eq',
    'eq_', 'equal', 'erf', 'erf_', 'erfc', 'erfc_', 'erfinv', 'erfinv_', 'exp', 'exp2', 'exp2_', 'exp_', 'expand',
    'expand_as', 'expm1', 'expm1_', 'exponential_', 'fill_', 'fill_diagonal_', 'fix', 'fix_', 'flatten', 'flip',
    'fliplr', 'flipud', 'float', 'float_power', 'float_power_', 'floor', 'floor_', 'floor_divide', 'floor_divide_',
    'fmax', 'fmin', 'fmod', 'fmod_', 'frac', 'frac_', 'frexp', 'gather', 'gcd', 'gcd_', 'ge', 'ge_', 'geometric_',
    'geqrf', 'ger', 'get_device', 'greater', 'greater_', 'greater_equal', 'greater_equal_', 'gt', 'gt_', 'half',
    'hardshrink', 'hash_tensor', 'heaviside', 'heaviside_', 'histc', 'histogram', 'hsplit', 'hypot', 'hypot_', 'i0',
    'i0_', 'igamma', 'igamma_', 'igammac', 'igammac_', 'index', 'index_add', 'index_add_', 'index_copy',
    'index_copy_', 'index_fill', 'index_fill_', 'index_put', 'index_put_', 'index_reduce', 'index_reduce_',
    'index_select', 'indices', 'inner', 'int', 'int_repr', 'inverse', 'ipu', 'is_coalesced', 'is_complex',
    'is_conj', 'is_contiguous', 'is_distributed', 'is_floating_point', 'is_inference', 'is_neg', 'is_nonzero',
    'is_pinned', 'is_same_size', 'is_set_to', 'is_shared', 'is_signed', 'isclose', 'isfinite', 'isinf', 'isnan',
    'isneginf', 'isposinf', 'isreal', 'istft', 'item', 'kron', 'kthvalue', 'lcm', 'lcm_', 'ldexp', 'ldexp_', 'le',
    'le_', 'lerp', 'lerp_', 'less', 'less_', 'less_equal', 'less_equal_', 'lgamma', 'lgamma_', 'log', 'log10',
    'log10_', 'log1p', 'log1p_', 'log2', 'log2_', 'log_', 'log_normal_', 'log_softmax', 'logaddexp', 'logaddexp2',
    'logcumsumexp', 'logdet', 'logical_and', 'logical_and_', 'logical_not', 'logical_not_', 'logical_or',
    'logical_or_', 'logical_xor', 'logical_xor_', 'logit', 'logit_', 'logsumexp', 'long', 'lstsq', 'lt', 'lt_',
    'lu', 'lu_solve', 'map2_', 'map_', 'masked_fill', 'masked_fill_', 'masked_scatter', 'masked_scatter_',
    'masked_select', 'matmul', 'matrix_exp', 'matrix_power', 'max', 'maximum', 'mean', 'median', 'min', 'minimum',
    'mm', 'mode', 'module_load', 'moveaxis', 'movedim', 'msort', 'mtia', 'mul', 'mul_', 'multinomial', 'multiply',
    'multiply_', 'mv', 'mvlgamma', 'mvlgamma_', 'nan_to_num', 'nan_to_num_', 'nanmean', 'nanmedian', 'nanquantile',
    'nansum', 'narrow', 'narrow_copy', 'ndimension', 'ne', 'ne_', 'neg', 'neg_', 'negative', 'negative_',
    'nelement', 'new', 'new_empty', 'new_empty_strided', 'new_full', 'new_ones', 'new_tensor', 'new_zeros',
    'nextafter', 'nextafter_', 'nonzero', 'nonzero_static', 'norm', 'normal_', 'not_equal', 'not_equal_', 'numel',
    'numpy', 'orgqr', 'ormqr', 'outer', 'permute', 'pin_memory', 'pinverse', 'polygamma', 'polygamma_', 'positive',
    'pow', 'pow_', 'prelu', 'prod', 'put', 'put_', 'q_per_channel_axis', 'q_per_channel_scales',
    'q_per_channel_zero_points', 'q_scale', 'q_zero_point', 'qr', 'qscheme', 'quantile', 'rad2deg', 'rad2deg_',
    'random_', 'ravel', 'reciprocal', 'reciprocal_', 'record_stream', 'register_hook',
    'register_post_accumulate_grad_hook', 'reinforce', 'relu', 'relu_', 'remainder', 'remainder_', 'renorm',
    'renorm_', 'repeat', 'repeat_interleave', 'requires_grad_', 'reshape', 'reshape_as', 'resize', 'resize_',
    'resize_as', 'resize_as_', 'resize_as_sparse_', 'resolve_conj', 'resolve_neg', 'retain_grad', 'roll', 'rot90',
    'round', 'round_', 'row_indices', 'rsqrt', 'rsqrt_', 'scatter', 'scatter_', 'scatter_add', 'scatter_add_',
    'scatter_reduce', 'scatter_reduce_', 'select', 'select_scatter', 'set_', 'sgn', 'sgn_', 'share_memory_',
    'short', 'sigmoid', 'sigmoid_', 'sign', 'sign_', 'signbit', 'sin', 'sin_', 'sinc', 'sinc_', 'sinh', 'sinh_',
    'size', 'slice_inverse', 'slice_scatter', 'slogdet', 'smm', 'softmax', 'solve', 'sort', 'sparse_dim',
    'sparse_mask', 'sparse_resize_', 'sparse_resize_and_clear_', 'split', 'split_with_sizes', 'sqrt', 'sqrt_',
    'square', 'square_', 'squeeze', 'squeeze_', 'sspaddmm', 'std', 'stft', 'storage', 'storage_offset',
    'storage_type', 'stride', 'sub', 'sub_', 'subtract', 'subtract_', 'sum', 'sum_to_size', 'svd', 'swapaxes',
    'swapaxes_', 'swapdims', 'swapdims_', 'symeig', 't', 't_', 'take', 'take_along_dim', 'tan', 'tan_', 'tanh',
    'tanh_', 'tensor_split', 'tile', 'to', 'to_dense', 'to_mkldnn', 'to_padded_tensor', 'to_sparse',
    'to_sparse_bsc', 'to_sparse_bsr', 'to_sparse_coo', 'to_sparse_csc', 'to_sparse_csr', 'tolist', 'topk', 'trace',
    'transpose', 'transpose_', 'triangular_solve', 'tril', 'tril_', 'triu', 'triu_', 'true_divide', 'true_divide_',
    'trunc', 'trunc_', 'type', 'type_as', 'unbind', 'unflatten', 'unfold', 'uniform_', 'unique',
    'unique_consecutive', 'unsafe_chunk', 'unsafe_split', 'unsafe_split_with_sizes', 'unsqueeze', 'unsqueeze_',
    'untyped_storage', 'values', 'var', 'vdot', 'view', 'view_as', 'vsplit', 'where', 'xlogy', 'xlogy_', 'xpu',
    'zero_',
)

# the properties whose reads PyTorch hands to ``__torch_function__`` (``func`` is ``Tensor.shape.__get__``), the public
# ones of ``torch.overrides.get_testing_overrides()``, and those whose assignments it hands (``Tensor.grad.__set__``)
TENSOR_PROPERTIES = (
    'H', 'T', 'data', 'device', 'dtype', 'grad', 'grad_dtype', 'grad_fn', 'imag', 'is_cpu', 'is_cuda', 'is_ipu',
    'is_leaf', 'is_maia', 'is_meta', 'is_mkldnn', 'is_mps', 'is_mtia', 'is_nested', 'is_quantized', 'is_sparse',
    'is_sparse_csr', 'is_vulkan', 'is_xla', 'is_xpu', 'itemsize', 'layout', 'mH', 'mT', 'name', 'nbytes', 'ndim',
    'output_nr', 'real', 'requires_grad', 'retains_grad', 'shape', 'volatile',
)
TENSOR_SETTERS = ('data', 'grad', 'grad_dtype', 'requires_grad', 'volatile', '_backward_hooks',
                  '_post_accumulate_grad_hooks')
# private properties whose reads PyTorch hands too (``t._version``: ``Tensor._version.__get__``); ``t._grad`` and
# ``t._grad_fn`` read ``grad`` and ``grad_fn``, which hand theirs (torchish's own fields are ``_gval`` and ``_gfn``)
TENSOR_PRIVATE_PROPERTIES = ('_backward_hooks', '_base', '_cdata', '_post_accumulate_grad_hooks', '_version')

# The functions PyTorch writes in Python (its Python ``handle_torch_function``: the plain Tensors among the
# arguments take part too, and a call every handler declines raises "no implementation found for '<name>'"):
# these ``torch.nn.functional`` ones, the ``torch`` ones below with their modules, and the Tensor methods of
# ``torch._tensor``.
PYTHON_FUNCTIONAL = (
    'adaptive_avg_pool2d', 'adaptive_avg_pool3d', 'adaptive_max_pool1d', 'adaptive_max_pool1d_with_indices',
    'adaptive_max_pool2d', 'adaptive_max_pool2d_with_indices', 'adaptive_max_pool3d',
    'adaptive_max_pool3d_with_indices', 'affine_grid', 'alpha_dropout', 'batch_norm', 'binary_cross_entropy',
    'binary_cross_entropy_with_logits', 'celu', 'cosine_embedding_loss', 'cross_entropy', 'ctc_loss', 'dropout',
    'dropout1d', 'dropout2d', 'dropout3d', 'elu', 'embedding', 'embedding_bag', 'feature_alpha_dropout', 'fold',
    'fractional_max_pool2d', 'fractional_max_pool2d_with_indices', 'fractional_max_pool3d',
    'fractional_max_pool3d_with_indices', 'gaussian_nll_loss', 'glu', 'grid_sample', 'group_norm', 'gumbel_softmax',
    'hardtanh', 'hinge_embedding_loss', 'huber_loss', 'instance_norm', 'interpolate', 'kl_div', 'l1_loss',
    'layer_norm', 'leaky_relu', 'linear_cross_entropy', 'local_response_norm', 'log_softmax', 'lp_pool1d',
    'lp_pool2d', 'lp_pool3d', 'margin_ranking_loss', 'max_pool1d', 'max_pool1d_with_indices', 'max_pool2d',
    'max_pool2d_with_indices', 'max_pool3d', 'max_pool3d_with_indices', 'max_unpool1d', 'max_unpool2d',
    'max_unpool3d', 'mish', 'mse_loss', 'multi_head_attention_forward', 'multi_margin_loss',
    'multilabel_margin_loss', 'multilabel_soft_margin_loss', 'nll_loss', 'normalize', 'pad', 'poisson_nll_loss',
    'relu', 'relu6', 'rms_norm', 'rrelu', 'selu', 'silu', 'smooth_l1_loss', 'soft_margin_loss', 'softmax',
    'softmin', 'softsign', 'tanhshrink', 'threshold', 'triplet_margin_loss', 'triplet_margin_with_distance_loss',
    'unfold',
)

# ``torch.nn.functional`` functions that PyTorch's lists leave out (``get_ignored_functions()`` holds them) though their
# Python code hands them to ``__torch_function__`` as the ones above
PYTHON_FUNCTIONAL_UNLISTED = ('hardsigmoid', 'hardswish')

# in-place activations that PyTorch's lists leave out though its builtins dispatch them (``F.elu_`` is
# ``torch._C._nn.elu_``, ``F.relu_`` is ``torch.relu_``: torch.fx records them so); the ``torch`` ones dispatch there
# too (their ``BUILTIN_NAMES`` give the functional ones PyTorch's names)
FUNCTIONAL_INPLACE_UNLISTED = ('celu_', 'elu_', 'hardtanh_', 'leaky_relu_', 'relu_', 'rrelu_', 'selu_', 'threshold_')
TORCH_INPLACE_UNLISTED = ('celu_', 'relu_', 'rrelu_', 'selu_', 'threshold_')

# How the ``handle_torch_function`` calls of PyTorch's Python functions differ from the rule
# (``_torch_function_call._layout``: the parameters without a default positionally, every one with a default by
# keyword): the parameters they leave out when the call leaves them at their default (torchish's own extras among
# them), those they pass by keyword though they have no default, and the functions that hand the arguments as
# written.
LEFT_OUT = {
    'torch.nn.functional.l1_loss': ('weight',), 'torch.chain_matmul': ('out',),
    'torch.Tensor.dim_order': ('ambiguity_check',), 'torch.Tensor.__array__': ('copy',),
    'torch.Tensor.__array_wrap__': ('context', 'return_scalar'), 'torch.autograd.backward': ('grad_variables',),
}
BY_KEYWORD = {'torch.unravel_index': ('shape',), 'torch.Tensor.__array_wrap__': ('array',),
              'torch.nn.init.constant_': ('tensor', 'val'), 'torch.nn.init.kaiming_uniform_': ('tensor',),
              'torch.nn.init.normal_': ('tensor',), 'torch.nn.init.uniform_': ('tensor',)}
AS_WRITTEN = ('torch.Tensor.__dlpack__',)
# the parameters they hand as a tuple (a tensor as a tuple of one; PyTorch's autograd functions)
TUPLED = {'torch.autograd.backward': ('tensors', 'inputs'), 'torch.autograd.grad': ('outputs', 'inputs')}

# the factory and type functions PyTorch leaves out of ``__torch_function__`` (``get_ignored_functions``: no tensor
# argument takes part) that still go to a ``TorchFunctionMode`` (its C++ builtins check the mode stack)
MODE_ONLY = (
    'arange', 'as_strided', 'as_tensor', 'asarray', 'bartlett_window', 'blackman_window', 'can_cast', 'empty',
    'empty_permuted', 'empty_strided', 'eye', 'fill', 'full', 'hamming_window', 'hann_window', 'kaiser_window',
    'linspace', 'logspace', 'normal', 'ones', 'promote_types', 'rand', 'rand_like', 'randint', 'randint_like', 'randn',
    'randn_like', 'randperm', 'result_type', 'scalar_tensor', 'sparse_coo_tensor', 'sparse_csr_tensor', 'tensor',
    'tril_indices', 'triu_indices', 'vander', 'zeros',
)

# the Tensor methods that take nothing but ``self`` (and a few others PyTorch's C++ writes by hand): a mode sees
# ``types`` (Tensor,) for a plain ``self`` where the other builtins hand () (as PyTorch's Python functions do)
SELF_TYPED = (
    '__abs__', '__bool__', '__complex__', '__float__', '__index__', '__int__', '__invert__', '__long__', '__neg__',
    '__nonzero__', '__pos__', 'abs', 'abs_', 'absolute', 'absolute_', 'acos', 'acos_', 'acosh', 'acosh_', 'adjoint',
    'angle', 'arccos', 'arccos_', 'arccosh', 'arccosh_', 'arcsin', 'arcsin_', 'arcsinh', 'arcsinh_', 'arctan',
    'arctan_', 'arctanh', 'arctanh_', 'argwhere', 'asin', 'asin_', 'asinh', 'asinh_', 'atan', 'atan_', 'atanh',
    'atanh_', 'bitwise_not', 'bitwise_not_', 'ccol_indices', 'ceil', 'ceil_', 'coalesce', 'col_indices', 'conj',
    'conj_physical', 'conj_physical_', 'const_data_ptr', 'corrcoef', 'cos', 'cos_', 'cosh', 'cosh_', 'crow_indices',
    'data_ptr', 'deg2rad', 'deg2rad_', 'dense_dim', 'dequantize', 'det', 'detach', 'detach_', 'digamma', 'digamma_',
    'dim', 'element_size', 'erf', 'erf_', 'erfc', 'erfc_', 'erfinv', 'erfinv_', 'exp', 'exp2', 'exp2_', 'exp_',
    'expm1', 'expm1_', 'fix', 'fix_', 'fliplr', 'flipud', 'floor', 'floor_', 'frac', 'frac_', 'frexp', 'geqrf',
    'get_device', 'i0', 'i0_', 'indices', 'int_repr', 'inverse', 'is_coalesced', 'is_complex', 'is_conj',
    'is_distributed', 'is_floating_point', 'is_inference', 'is_neg', 'is_nonzero', 'is_signed', 'isfinite', 'isinf',
    'isnan', 'isneginf', 'isposinf', 'isreal', 'item', 'lgamma', 'lgamma_', 'log', 'log10', 'log10_', 'log1p',
    'log1p_', 'log2', 'log2_', 'log_', 'logdet', 'logical_not', 'logical_not_', 'matrix_exp', 'msort', 'ndimension',
    'neg', 'neg_', 'negative', 'negative_', 'nelement', 'new', 'new_tensor', 'numel', 'positive',
    'q_per_channel_axis', 'q_per_channel_scales', 'q_per_channel_zero_points', 'q_scale', 'q_zero_point', 'qscheme',
    'rad2deg', 'rad2deg_', 'ravel', 'reciprocal', 'reciprocal_', 'relu', 'relu_', 'resolve_conj', 'resolve_neg',
    'retain_grad', 'row_indices', 'rsqrt', 'rsqrt_', 'sgn', 'sgn_', 'sigmoid', 'sigmoid_', 'sign', 'sign_',
    'signbit', 'sin', 'sin_', 'sinc', 'sinc_', 'sinh', 'sinh_', 'slogdet', 'sparse_dim', 'sqrt', 'sqrt_', 'square',
    'square_', 'storage_offset', 't', 't_', 'tan', 'tan_', 'tanh', 'tanh_', 'tolist', 'trace', 'trunc', 'trunc_',
    'untyped_storage', 'values', 'zero_',
)

# ``torch.nn.init``'s functions that hand their calls to ``__torch_function__`` (every argument by keyword)
INIT = ('constant_', 'kaiming_uniform_', 'normal_', 'uniform_')

# ``torch.autograd``'s Python functions that hand their calls to ``__torch_function__`` (the tensors among the
# outputs and inputs take part)
AUTOGRAD = ('backward', 'grad')

PYTHON_TORCH = {
    'atleast_1d': 'torch.functional.atleast_1d', 'atleast_2d': 'torch.functional.atleast_2d',
    'atleast_3d': 'torch.functional.atleast_3d', 'block_diag': 'torch.functional.block_diag',
    'broadcast_tensors': 'torch.functional.broadcast_tensors', 'cartesian_prod': 'torch.functional.cartesian_prod',
    'cdist': 'torch.functional.cdist', 'chain_matmul': 'torch.functional.chain_matmul',
    'einsum': 'torch.functional.einsum', 'lobpcg': 'torch._lobpcg.lobpcg', 'lu': 'torch.functional.lu',
    'meshgrid': 'torch.functional.meshgrid', 'norm': 'torch.functional.norm',
    'pca_lowrank': 'torch._lowrank.pca_lowrank', 'split': 'torch.functional.split', 'stft': 'torch.functional.stft',
    'svd_lowrank': 'torch._lowrank.svd_lowrank', 'sym_float': 'torch.sym_float', 'sym_int': 'torch.sym_int',
    'sym_ite': 'torch.sym_ite', 'sym_max': 'torch.sym_max', 'sym_min': 'torch.sym_min', 'sym_not': 'torch.sym_not',
    'sym_sqrt': 'torch._sym_sqrt', 'sym_sum': 'torch.sym_sum', 'tensordot': 'torch.functional.tensordot',
    'unique': 'torch.functional.unique', 'unique_consecutive': 'torch.functional.unique_consecutive',
    'unravel_index': 'torch.functional.unravel_index',
}

PYTHON_TENSOR = (
    '__array__', '__array_wrap__', '__contains__', '__deepcopy__', '__dlpack__', '__dlpack_device__',
    '__floordiv__', '__format__', '__ipow__', '__len__', '__pow__', '__rdiv__', '__reduce_ex__', '__repr__',
    '__reversed__', '__rfloordiv__', '__rlshift__', '__rmatmul__', '__rmod__', '__rpow__', '__rrshift__',
    '__rsub__', '__rtruediv__', '__setstate__', 'backward', 'dim_order', 'eig', 'index', 'is_shared', 'istft',
    'lstsq', 'lu', 'module_load', 'norm', 'register_hook', 'register_post_accumulate_grad_hook', 'reinforce',
    'resize', 'resize_as', 'share_memory_', 'solve', 'split', 'stft', 'storage', 'storage_type', 'symeig',
    'to_sparse_coo', 'unflatten', 'unique', 'unique_consecutive',
)

# the functions' own ``__name__`` where it is not the attribute's (``torch.linalg``, ``fft`` and ``special`` prefix
# theirs: ``linalg_norm``), which ``__torch_function__`` sees
OWN_NAMES = {
    'torch.Tensor.__abs__': 'abs', 'torch.Tensor.__ipow__': 'pow_', 'torch.Tensor.__itruediv__': '__idiv__',
    'torch.Tensor.__neg__': 'neg', 'torch.Tensor.__pos__': 'positive', 'torch.Tensor.__pow__': 'pow',
    'torch.Tensor.__rtruediv__': '__rdiv__', 'torch.nn.functional.logsigmoid': 'log_sigmoid',
    'torch.nn.functional.threshold': '_threshold', 'torch.sym_sqrt': '_sym_sqrt',
}

# the builtins whose "Multiple dispatch failed for '<name>'" names the function they are in C++ (``torch.linalg``,
# ``fft`` and ``special`` prefix theirs: ``torch.linalg.linalg_norm``)
BUILTIN_NAMES = {
    'torch.dsmm': 'torch.mm', 'torch.hsmm': 'torch.hspmm',
    'torch.nn.functional.adaptive_avg_pool1d': 'torch.adaptive_avg_pool1d',
    'torch.nn.functional.avg_pool1d': 'torch.avg_pool1d', 'torch.nn.functional.avg_pool2d': 'torch.nn.avg_pool2d',
    'torch.nn.functional.avg_pool3d': 'torch.nn.avg_pool3d', 'torch.nn.functional.bilinear': 'torch.bilinear',
    'torch.nn.functional.channel_shuffle': 'torch.channel_shuffle', 'torch.nn.functional.conv1d': 'torch.conv1d',
    'torch.nn.functional.conv2d': 'torch.conv2d', 'torch.nn.functional.conv3d': 'torch.conv3d',
    'torch.nn.functional.conv_tbc': 'torch.conv_tbc',
    'torch.nn.functional.conv_transpose1d': 'torch.conv_transpose1d',
    'torch.nn.functional.conv_transpose2d': 'torch.conv_transpose2d',
    'torch.nn.functional.conv_transpose3d': 'torch.conv_transpose3d',
    'torch.nn.functional.cosine_similarity': 'torch.cosine_similarity', 'torch.nn.functional.gelu': 'torch.nn.gelu',
    'torch.nn.functional.celu_': 'torch.celu_', 'torch.nn.functional.elu_': 'torch.nn.elu_',
    'torch.nn.functional.hardtanh_': 'torch.nn.hardtanh_', 'torch.nn.functional.leaky_relu_': 'torch.nn.leaky_relu_',
    'torch.nn.functional.relu_': 'torch.relu_', 'torch.nn.functional.rrelu_': 'torch.rrelu_',
    'torch.nn.functional.selu_': 'torch.selu_', 'torch.nn.functional.threshold_': 'torch.threshold_',
    'torch.nn.functional.hardshrink': 'torch.hardshrink', 'torch.nn.functional.linear': 'torch.nn.linear',
    'torch.nn.functional.logsigmoid': 'torch.nn.log_sigmoid',
    'torch.nn.functional.native_channel_shuffle': 'torch.native_channel_shuffle',
    'torch.nn.functional.one_hot': 'torch.nn.one_hot',
    'torch.nn.functional.pairwise_distance': 'torch.pairwise_distance', 'torch.nn.functional.pdist': 'torch.pdist',
    'torch.nn.functional.pixel_shuffle': 'torch.pixel_shuffle',
    'torch.nn.functional.pixel_unshuffle': 'torch.pixel_unshuffle', 'torch.nn.functional.prelu': 'torch.prelu',
    'torch.nn.functional.scaled_dot_product_attention': 'torch.nn.scaled_dot_product_attention',
    'torch.nn.functional.softplus': 'torch.nn.softplus', 'torch.nn.functional.softshrink': 'torch.nn.softshrink',
    'torch.saddmm': 'torch.sspaddmm', 'torch.spmm': 'torch.mm', 'torch.Tensor.nelement': 'torch.Tensor.numel',
}

# what ``torch.overrides.get_ignored_functions()`` lists (public names, PyTorch 2.13): functions that take part in no
# ``__torch_function__`` dispatch (factories, settings, ...)
IGNORED = (
    'Tensor.__class__', 'Tensor.__delitem__', 'Tensor.__dir__', 'Tensor.__hash__', 'Tensor.__init_subclass__',
    'Tensor.__iter__', 'Tensor.__new__', 'Tensor.__subclasshook__', 'Tensor.__torch_dispatch__',
    'Tensor.__torch_function__', 'Tensor.as_subclass', 'Tensor.eig', 'Tensor.lstsq', 'Tensor.new',
    'Tensor.new_empty', 'Tensor.new_empty_strided', 'Tensor.new_full', 'Tensor.new_ones', 'Tensor.new_tensor',
    'Tensor.new_zeros', 'Tensor.reinforce', 'Tensor.solve', 'Tensor.stride', 'Tensor.symeig',
    'Tensor.to_padded_tensor', 'Tensor.to_sparse_bsc', 'Tensor.to_sparse_bsr', 'Tensor.to_sparse_coo',
    'Tensor.to_sparse_csc', 'Tensor.to_sparse_csr', 'Tensor.unflatten', 'arange',
    'are_deterministic_algorithms_enabled', 'as_strided', 'as_tensor', 'asarray', 'autocast_decrement_nesting',
    'autocast_increment_nesting', 'bartlett_window', 'blackman_window', 'can_cast', 'clear_autocast_cache',
    'compile', 'cond', 'cudnn_affine_grid_generator', 'cudnn_batch_norm', 'cudnn_convolution',
    'cudnn_convolution_add_relu', 'cudnn_convolution_relu', 'cudnn_convolution_transpose', 'cudnn_grid_sampler',
    'cudnn_is_acceptable', 'device', 'dtype', 'empty', 'empty_permuted', 'empty_quantized', 'empty_strided',
    'enable_grad', 'eye', 'fft.fftfreq', 'fft.rfftfreq', 'fill', 'finfo', 'fork', 'from_file', 'from_numpy',
    'frombuffer', 'full', 'functional.broadcast_shapes', 'get_autocast_cpu_dtype', 'get_autocast_dtype',
    'get_autocast_gpu_dtype', 'get_autocast_ipu_dtype', 'get_autocast_xla_dtype', 'get_default_device',
    'get_default_dtype', 'get_deterministic_debug_mode', 'get_device_module', 'get_float32_matmul_precision',
    'get_num_interop_threads', 'get_num_threads', 'get_rng_state', 'hamming_window', 'hann_window', 'iinfo',
    'import_ir_module', 'import_ir_module_from_buffer', 'inference_mode', 'init_num_threads', 'initial_seed',
    'is_anomaly_check_nan_enabled', 'is_anomaly_enabled', 'is_autocast_cache_enabled', 'is_autocast_cpu_enabled',
    'is_autocast_enabled', 'is_autocast_ipu_enabled', 'is_autocast_xla_enabled',
    'is_deterministic_algorithms_warn_only_enabled', 'is_grad_enabled', 'is_inference_mode_enabled', 'is_storage',
    'is_tensor', 'is_vulkan_available', 'is_warn_always_enabled', 'kaiser_window', 'layout', 'linspace', 'load',
    'logspace', 'manual_seed', 'memory_format', 'merge_type_from_type_comment', 'miopen_ctc_loss',
    'mkldnn_adaptive_avg_pool2d', 'mkldnn_convolution', 'mkldnn_linear_backward_weights', 'mkldnn_max_pool2d',
    'mkldnn_max_pool3d', 'mkldnn_rnn_layer', 'nn.functional.assert_int_or_pair', 'nn.functional.boolean_dispatch',
    'nn.functional.grouped_mm', 'nn.functional.handle_torch_function', 'nn.functional.hardsigmoid',
    'nn.functional.hardswish', 'nn.functional.has_torch_function', 'nn.functional.has_torch_function_unary',
    'nn.functional.has_torch_function_variadic', 'nn.functional.scaled_grouped_mm', 'nn.functional.scaled_mm',
    'nn.functional.sigmoid', 'nn.functional.tanh', 'nn.functional.upsample', 'nn.functional.upsample_bilinear',
    'nn.functional.upsample_nearest', 'nn.init.calculate_gain', 'nn.init.constant', 'nn.init.dirac', 'nn.init.eye',
    'nn.init.kaiming_normal', 'nn.init.kaiming_uniform', 'nn.init.normal', 'nn.init.orthogonal', 'nn.init.sparse',
    'nn.init.uniform', 'nn.init.xavier_normal', 'nn.init.xavier_uniform', 'no_grad', 'normal', 'ones', 'parse_ir',
    'parse_schema', 'parse_type_comment', 'promote_types', 'qscheme', 'rand', 'rand_like', 'randint',
    'randint_like', 'randn', 'randn_like', 'randperm', 'range', 'result_type', 'save', 'scalar_tensor', 'seed',
    'set_anomaly_enabled', 'set_autocast_cache_enabled', 'set_autocast_cpu_dtype', 'set_autocast_cpu_enabled',
    'set_autocast_dtype', 'set_autocast_enabled', 'set_autocast_gpu_dtype', 'set_autocast_ipu_dtype',
    'set_autocast_ipu_enabled', 'set_autocast_xla_dtype', 'set_autocast_xla_enabled', 'set_default_device',
    'set_default_tensor_type', 'set_deterministic_debug_mode', 'set_float32_matmul_precision', 'set_flush_denormal',
    'set_num_interop_threads', 'set_num_threads', 'set_printoptions', 'set_rng_state', 'set_warn_always',
    'sparse_bsc_tensor', 'sparse_bsr_tensor', 'sparse_compressed_tensor', 'sparse_coo_tensor', 'sparse_csc_tensor',
    'sparse_csr_tensor', 'sym_constrain_range', 'sym_constrain_range_for_size', 'sym_fresh_size', 'tensor',
    'thread_safe_generator', 'tril_indices', 'triu_indices', 'typename', 'unify_type_list',
    'use_deterministic_algorithms', 'vander', 'vmap', 'wait', 'zeros',
)
