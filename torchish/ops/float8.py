"""The float8 dtypes' kernels, as PyTorch's CPU build has them.

PyTorch stores float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz and float8_e8m0fnu, converts, copies,
views, indexes, pads and joins them, but computes with them in only a few kernels: ``mul`` (not by a one-element
second operand: its scalar path has no float8 version), ``abs``, ``eq``/``ne``, ``isnan``, ``any``/``all``, and the
matrix products that fold into ``mm`` (``mm``, ``addmm``, ``linear``, 2-D ``matmul``), which compute in float32 and
round once to the float8 type (saturating for float8_e4m3fn: ``casting.cast``). Every other op raises PyTorch's
NotImplementedError (``"add_stub" not implemented for 'Float8_e4m3fn'``), and mixing a float8 tensor with another
dtype raises its promotion error (``_dtype.promote_types``). float8_e8m0fnu (a scale type: powers of two) has fewer
still: no ``abs``, no product, no ``index_put``.

:func:`check` runs on a dispatch-cache miss of ``registry.apply`` (the first call of an op with a float8 operand);
:func:`widened` wraps the forward of the computing ops (``kernels._cast_fn``).

>>> x = torchish.tensor([1.0, 2.0]).to(torchish.float8_e4m3fn)
>>> x * x                       # tensor([1., 4.], dtype=torch.float8_e4m3fn)
>>> x + x                       # NotImplementedError: "add_stub" not implemented for 'Float8_e4m3fn'
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype, _meta
from .._tensor import Tensor
from .casting import cast

_MM = ("matmul_MmBackward0", "matmul_SqueezeBackward4", "matmul_UnsafeViewBackward0", "matmul_CloneBackward0",
       "matmul_TransposeBackward0")
_MM_OPS = frozenset(m + s for m in _MM for s in ("", "_copy0", "_copy01", "_copy1")) | {"addmm", "linear",
                                                                                         "linear_nobias"}
# the ops that compute a float8 result: in float32, rounded once as PyTorch's float8 constructors round
COMPUTES = _MM_OPS | {"mul", "outer"}
BITWISE = frozenset({"diag_embed", "block_diag"})  # (ops that place values among zeros: run on the bits)

# registry ops that PyTorch runs on float8 tensors: storage, views, copies, indexing, joins and the few kernels above
ALLOWED = COMPUTES | frozenset({
    "abs", "eq", "ne", "isnan", "any", "all", "to_copy", "clone", "copy", "fill", "zero", "view_dtype", "view",
    "unsafe_view", "view_copy", "alias", "alias_copy", "getitem_Alias", "getitem_Select", "getitem_Slice",
    "getitem_Unsqueeze", "view_write", "view_replay", "index", "index_select", "index_put", "masked_select", "t",
    "t_copy", "transpose", "transpose_copy", "permute", "permute_copy", "expand", "expand_copy", "unsqueeze",
    "unsqueeze_copy", "squeeze0", "squeeze1", "squeeze2", "squeeze_copy", "split", "split_copy", "split_with_sizes",
    "split_with_sizes_copy", "unsafe_split", "unsafe_split_with_sizes", "unbind", "unbind_copy", "narrow",
    "narrow_copy", "select", "select_copy", "slice_copy", "as_strided", "as_strided_copy", "unfold", "unfold_copy",
    "diagonal", "diagonal_copy", "diag_embed", "detach_copy", "cat", "stack", "repeat", "roll", "constant_pad_nd",
    "conj_physical", "where", "embedding", "bincount", "real", "scaled_mm", "block_diag",
})

# reductions and scans whose ``dtype=`` casts the input first (a float8 input then reaches no float8 kernel)
_CASTS_FIRST = frozenset({"sum_all", "sum", "mean_all", "mean", "nansum", "prod_all", "prod", "cumsum", "cumprod"})

# ops whose float8 support depends on the operands' sizes (checked on every call, not cached)
_BY_SIZE = frozenset({"mul", "gather", "sum_all", "sum", "mean_all", "mean"})

# PyTorch's kernel names in its error, by registry op (others: the op's own name)
KERNELS = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "rsub_scalar": "add_stub", "div": "div_cpu",
    "div_mode": "div_cpu", "neg": "neg_cpu", "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "sum": "sum_cpu", "sum_all": "sum_cpu", "mean": "sum_cpu", "mean_all": "sum_cpu", "nansum": "nansum_cpu",
    "max_all": "max_all", "min_all": "min_all", "amax": "max_values_cpu", "amin": "min_values_cpu",
    "max_dim": "max_cpu", "min_dim": "min_cpu", "aminmax": "aminmax_cpu", "aminmax_all": "aminmax_cpu",
    "argmax": "argmax_cpu", "argmin": "argmin_cpu", "prod": "prod_out_cpu", "prod_all": "prod_out_cpu",
    "cumsum": "cumsum_out_cpu", "cumprod": "cumprod_out_cpu", "cummax": "cummax_cpu", "cummin": "cummin_cpu",
    "logcumsumexp": "logcumsumexp_out_cpu", "sort": "sorting_kernel_method_name",
    "searchsorted": "sorting_kernel_method_name", "topk": "topk_cpu", "kthvalue": "kthvalue_cpu",
    "median": "median_cpu", "median_dim": "median_cpu", "clamp": "clamp_scalar_cpu", "clamp_min": "clamp_min_scalar_cpu",
    "clamp_max": "clamp_max_scalar_cpu", "relu": "clamp_min_scalar_cpu", "maximum": "maximum_cpu",
    "minimum": "minimum_cpu", "sigmoid": "sigmoid_cpu_reduced_float", "sign": "sign_cpu", "signbit": "signbit_cpu",
    "reciprocal": "reciprocal_cpu", "pow": "pow", "fmod": "fmod_cpu", "remainder": "remainder_cpu",
    "flip": "flip_cpu", "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "scatter_add": "scatter_add_", "index_add": "index_add_", "index_fill": "index_fill_cpu",
    "index_fill_t": "index_fill_cpu", "index_copy": "index_copy_cpu", "masked_fill": "masked_fill",
    "masked_fill_t": "masked_fill", "masked_set": "masked_fill", "masked_scatter": "masked_scatter", "take": "take_cpu", "tril": "tril",
    "triu": "triu", "trace": "trace", "lerp": "lerp_kernel_scalar", "softmax": "softmax_lastdim_kernel_impl",
    "log_softmax": "log_softmax_lastdim_kernel_impl", "count_nonzero": "nonzero_count_cpu",
    "nonzero_static": "nonzero_count_cpu", "nan_to_num": "nan_to_num", "linalg_vector_norm": "norm_cpu",
    "angle": "angle_cpu", "logsumexp": "max_values_cpu", "histc": "aminmax_cpu", "linalg_cross": "cross",
    "matmul_BmmBackward0": "bmm", "matmul_MvBackward0": "addmv_impl_cpu", "matmul_DotBackward0": "dot",
    "tensordot": "dot", "einsum_ViewBackward0": "bmm", "gelu": "GeluKernelImpl", "silu": "silu_cpu",
    "layer_norm": "LayerNormKernelImpl", "isclose": "mul_cpu_reduced_float", "exp": "exp_vml_cpu",
    "log": "log_vml_cpu", "sqrt": "sqrt_vml_cpu", "rsqrt": "rsqrt_cpu", "sin": "sin_vml_cpu", "cos": "cos_vml_cpu",
    "tanh": "tanh_vml_cpu", "erf": "erf_vml_cpu", "floor": "floor_vml_cpu", "ceil": "ceil_vml_cpu",
    "round": "round_vml_cpu", "trunc": "trunc_vml_cpu", "isinf": "isinf", "isfinite": "isfinite", "var": "std_cpu",
    "std": "std_cpu", "isin": "isin_default_cpu", "dropout": "bernoulli_scalar_cpu_",
    "convolution": "slow_conv2d_cpu", "mse_loss": "mse_cpu",
}
_E8M0_MISSING = {"abs": "abs_cpu", "index_put": "index_put", **{m: "addmm_impl_cpu_" for m in _MM_OPS}}
_E5M2_HAS = frozenset({"isinf", "isfinite"})  # (float8_e5m2 has infinities; float8_e8m0fnu has isfinite)


def not_implemented(kernel, dt):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_type_name(dt)}'")


def refuse(t, kernel):
    """PyTorch's NotImplementedError when the Tensor ``t`` is float8 (for front-ends that reach no registry op)."""
    if t._v.dtype in _dtype.FLOAT8_NP:
        raise not_implemented(kernel, t.dtype)


def check_matmul(a, b):
    """PyTorch's matmul on float8 operands reaches a kernel only where it folds into ``mm``: a vector-matrix or
    matrix-matrix product, a batch times a matrix (its batch dims foldable), or a matrix times a batch when the
    matrix requires grad; ``dot``, ``mv`` and ``bmm`` have no float8 version."""
    if a._v.dtype not in _dtype.FLOAT8_NP or a._v.dtype != b._v.dtype:
        return
    da, db = a.ndim, b.ndim
    if db == 1:
        raise not_implemented("dot" if da == 1 else "addmv_impl_cpu", a.dtype)
    if da >= 3 and db >= 3 or (da <= 2 and db >= 3 and not a.requires_grad):
        raise not_implemented("bmm", a.dtype)


def check(op, args, static):
    """Raise PyTorch's error when ``op`` has no CPU kernel for the float8 dtype among ``args`` (Tensors). Returns
    whether the answer depended on the operands' sizes (then the dispatch must not be cached)."""
    dt = next(_dtype.from_np(a._v.dtype) for a in args if isinstance(a, Tensor) and a._v.dtype in _dtype.FLOAT8_NP)
    name = op.name
    if _meta.has_meta([a._v for a in args if isinstance(a, Tensor)]):
        return True  # (PyTorch's meta kernels check no dtype support; not cached: real tensors share the key)
    if name in ("var", "std") and static.get("axis") is None:
        raise RuntimeError(f"std_var_all: Unsupported dtype {_dtype.scalar_type_name(dt)}")
    if name.startswith("fft_"):
        raise RuntimeError(f"Unsupported dtype {_dtype.scalar_type_name(dt)}")
    cast_to = static.get("dtype")  # (not ``in (None, ...)``: numpy's float64 dtype equals None)
    if name in _CASTS_FIRST and cast_to is not None and cast_to != dt.np:
        return False  # (with dtype=float32 PyTorch casts the input first)
    if name in ("sum_all", "sum", "mean_all", "mean") and any(isinstance(a, Tensor) and 0 in a._v.shape for a in args):
        if name.startswith("mean"):  # (the zeros are divided by the count)
            raise not_implemented("div_cpu_reduced_float", dt)
        return True  # (an empty sum returns zeros without a kernel)
    if name in _E5M2_HAS and (dt is _dtype.float8_e5m2 or (dt is _dtype.float8_e8m0fnu and name == "isfinite")):
        return False
    if dt is _dtype.float8_e8m0fnu and name in _E8M0_MISSING:
        raise not_implemented(_E8M0_MISSING[name], dt)
    if name == "flip" and args[0].ndim - 1 not in static.get("dims", ()):
        return False  # (without the last dim, PyTorch's flip is a strided copy: no kernel)
    if name == "gather" and args[-1].ndim == 1:
        raise not_implemented("gather_expanded_index", dt)
    if name == "mul" and (not isinstance(args[1], Tensor) or args[1]._v.size == 1):
        raise not_implemented("mul_cpu_reduced_float", dt)  # (a one-element second operand takes the scalar path)
    if name not in ALLOWED:
        raise not_implemented(KERNELS.get(name, name), dt)
    return name in _BY_SIZE


def bitwise(fwd):
    """``fwd`` (an op that only places values, with zeros around them) on float8 inputs' bits: the zeros it makes
    are PyTorch's (bits 0: 2^-127 in float8_e8m0fnu, which XLA would make NaN)."""
    def f8_fwd(*vals, **static):
        f8 = next((v.dtype for v in vals if hasattr(v, "dtype") and v.dtype in _dtype.FLOAT8_NP), None)
        if f8 is None:
            return fwd(*vals, **static)
        vals = [jax.lax.bitcast_convert_type(v, jnp.uint8) if hasattr(v, "dtype") and v.dtype == f8 else v
                for v in vals]
        return jax.lax.bitcast_convert_type(fwd(*vals, **static), f8)
    return f8_fwd


def widened(fwd):
    """``fwd`` computing in float32 when its inputs are float8, its float32 result rounded to their float8 type as
    PyTorch's ``Float8_*(float)`` rounds (``casting.cast``: float8_e4m3fn saturates at +-448)."""
    def f8_fwd(*vals, **static):
        f8 = next((v.dtype for v in vals if hasattr(v, "dtype") and v.dtype in _dtype.FLOAT8_NP), None)
        if f8 is None:
            return fwd(*vals, **static)
        vals = [v.astype(jnp.float32) if hasattr(v, "dtype") and v.dtype == f8 else v for v in vals]
        out = fwd(*vals, **static)
        return cast(out, f8) if out.dtype == jnp.float32 else out
    return f8_fwd
