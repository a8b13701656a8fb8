"""What PyTorch's sparse COO tensors have no kernel for, refused in its words: ``s.exp()``, ``s.cos()``,
``s.sigmoid()``, ``s.mean()``, ``s.max()``, ``s.clamp(0, 1)``, ``s == 0``, ``s.softmax(1)``, ``s.flip(0)``,
``s.sort()``, ``s.tril()``... raise its NotImplementedError (``Could not run 'aten::exp' with arguments from the
'SparseCPU' backend...``), and the ops it refuses on the way to a strided kernel (``s.ravel()``, ``s.repeat(2, 1)``,
``s.masked_fill(m, 1)``, ``s.tolist()``...) raise its RuntimeError. torchish ran them on the dense value, giving
dense results that PyTorch never gives (``s.exp()`` is 1 where ``s`` has no entry).

The table is PyTorch 2.13's, read off its errors: each method with the ATen op its error names, which for some
depends on an argument (``s.eq(0)``: ``eq.Scalar``, ``s.eq(t)``: ``eq.Tensor``; ``s.max()``: ``max``,
``s.max(0)``: ``max.dim``, ``s.max(t)``: ``maximum``). A tensor that kept no entries (a dense value left behind by
an in-place op) runs the dense method. The function forms (``torch.exp(s)``, ``torch.where(m, s, x)``,
``F.gelu(s)``) raise the same (:mod:`torchish._sparse_coo_functions`).

Example:
    >>> import torchish as torch
    >>> s = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    >>> s.exp()
    Traceback (most recent call last):
    ...
    NotImplementedError: Could not run 'aten::exp' with arguments from the 'SparseCPU' backend. ...
"""
from __future__ import annotations

from ._tensor import Tensor
from .sparse import _SparseTensor, dispatch_error


class _By:
    """An ATen name chosen by the call: ``none`` without arguments, else ``tensor`` when the argument at ``pos``
    (positional, or any keyword argument when there are too few) is a Tensor, else ``scalar``."""

    __slots__ = ("pos", "scalar", "tensor", "none")

    def __init__(self, scalar, tensor, pos=0, none=None):
        self.pos, self.scalar, self.tensor, self.none = pos, scalar, tensor, none

    def name(self, args, kwargs):
        if not args and not kwargs:
            return self.none or self.scalar
        arg = args[self.pos] if len(args) > self.pos else next(iter(kwargs.values()), None)
        return self.tensor if isinstance(arg, Tensor) else self.scalar


def _cmp(op):
    return _By(f"{op}.Scalar", f"{op}.Tensor")


# method -> the ATen op PyTorch's NotImplementedError names (a str, or a _By choosing by the arguments)
NOT_IMPLEMENTED = {
    # elementwise ops whose value at an absent entry is not zero, or that have no sparse kernel
    **{name: name for name in (
        "acos", "acosh", "angle", "cos", "cosh", "digamma", "erfc", "exp", "exp2", "i0", "lgamma", "log", "log10",
        "log2", "logit", "reciprocal", "rsqrt", "sigmoid", "sinc", "hardshrink", "bitwise_not", "atan2", "hypot",
        "igamma", "igammac", "nextafter", "heaviside", "fmax", "fmin", "maximum", "minimum", "logaddexp",
        "logaddexp2", "polygamma", "gcd", "lcm", "addcdiv", "addcmul")},
    **{name + "_": name + "_" for name in (
        "acos", "acosh", "cos", "cosh", "digamma", "erfc", "exp", "exp2", "i0", "lgamma", "log", "log10", "log2",
        "logit", "reciprocal", "rsqrt", "sigmoid", "sinc", "bitwise_not", "atan2", "hypot", "igamma", "igammac",
        "nextafter", "heaviside", "gcd", "lcm", "addcdiv", "addcmul")},
    "arccos": "acos", "arccos_": "acos_", "arccosh": "acosh", "arccosh_": "acosh_", "arctan2": "atan2",
    "arctan2_": "atan2_", "polygamma_": "polygamma.out", "isfinite": "ne.Scalar",
    "remainder": "remainder.Tensor", "remainder_": "remainder_.Tensor", "__mod__": "remainder.Tensor",
    "__imod__": "remainder_.Tensor", "__rmod__": _By("remainder.Scalar_Tensor", "remainder.Tensor"),
    "fmod": "fmod.Tensor", "fmod_": "fmod_.Tensor", "copysign": "copysign.Tensor", "copysign_": "copysign_.Tensor",
    "xlogy": "xlogy.Tensor", "xlogy_": "xlogy_.Tensor", "__rpow__": _By("pow.Scalar", "pow.Tensor_Tensor"),
    "lerp": _By("lerp.Scalar", "lerp.Tensor", pos=1), "lerp_": _By("lerp_.Scalar", "lerp_.Tensor", pos=1),
    "clamp": _By("clamp", "clamp.Tensor", none="clamp.Tensor"),
    "clip": _By("clamp", "clamp.Tensor", none="clamp.Tensor"),
    "clamp_": _By("clamp_", "clamp_.Tensor", none="clamp_.Tensor"),
    "clip_": _By("clamp_", "clamp_.Tensor", none="clamp_.Tensor"),
    "clamp_min": _By("clamp_min", "clamp_min.Tensor"), "clamp_min_": _By("clamp_min_", "clamp_min_.Tensor"),
    "clamp_max": _By("clamp_max", "clamp_max.Tensor"), "clamp_max_": _By("clamp_max_", "clamp_max_.Tensor"),
    # comparisons and logical / bitwise ops
    **{name: _cmp(op) for name, op in (
        ("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"), ("__eq__", "eq"),
        ("__ne__", "ne"), ("__lt__", "lt"), ("__le__", "le"), ("__gt__", "gt"), ("__ge__", "ge"),
        ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne"),
        ("eq_", "eq_"), ("ne_", "ne_"), ("lt_", "lt_"), ("le_", "le_"), ("gt_", "gt_"), ("ge_", "ge_"),
        ("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"), ("less_equal_", "le_"),
        ("not_equal_", "ne_"), ("__contains__", "eq"), ("__lshift__", "__lshift__"), ("__rshift__", "__rshift__"),
        ("__ilshift__", "__ilshift__"), ("__irshift__", "__irshift__"))},
    "__ipow__": _By("pow_.Scalar", "pow_.Tensor"),
    **{f"{prefix}{op}{suffix}": f"bitwise_{op}{suffix}.Tensor" for op in ("and", "or", "xor")
       for prefix, suffix in (("bitwise_", ""), ("bitwise_", "_"))},
    **{f"__{r}{op}__": f"bitwise_{op}.Tensor" for op in ("and", "or", "xor") for r in ("", "r")},
    **{f"__i{op}__": f"bitwise_{op}_.Tensor" for op in ("and", "or", "xor")},
    "bitwise_left_shift": "bitwise_left_shift.Tensor", "bitwise_right_shift": "bitwise_right_shift.Tensor",
    "__rlshift__": "bitwise_left_shift.Tensor", "__rrshift__": "bitwise_right_shift.Tensor",
    **{f"logical_{op}{suffix}": f"logical_{op}.out" for op in ("and", "or", "xor", "not") for suffix in ("", "_")},
    "isclose": "eq.Tensor", "allclose": "eq.Tensor", "equal": "equal",
    # reductions, scans, sorting
    "max": _By("max.dim", "maximum", none="max"), "min": _By("min.dim", "minimum", none="min"),
    "prod": _By("prod.dim_int", "prod.dim_int", none="prod"), "all": _By("all.dim", "all.dim", none="all"),
    "median": _By("median.dim_values", "median.dim_values", none="median"),
    "nanmedian": _By("nanmedian.dim_values", "nanmedian.dim_values", none="nanmedian"),
    "amax": "amax", "amin": "amin", "aminmax": "aminmax", "argmax": "argmax", "argmin": "argmin",
    "mean": "mean.dim", "nanmean": "ne.Tensor", "nansum": "nansum", "std": "std.correction",
    "var": "var.correction", "logsumexp": "logsumexp.out", "count_nonzero": "count_nonzero.dim_IntList",
    "mode": "mode", "kthvalue": "kthvalue.values", "renorm": "renorm", "renorm_": "renorm_",
    "frexp": "frexp.Tensor_out", "hash_tensor": "hash_tensor", "is_set_to": "is_set_to", "softmax": "_softmax",
    "log_softmax": "_log_softmax",
    "cumsum": "cumsum", "cumsum_": "cumsum_", "cumprod": "cumprod", "cumprod_": "cumprod_",
    "logcumsumexp": "_logcumsumexp", "cummax": "_cummax_helper", "cummin": "_cummin_helper",
    "sort": "sort.stable", "argsort": "sort.stable", "msort": "sort.stable", "topk": "topk",
    "unique": "_unique2", "unique_consecutive": "unique_consecutive", "nonzero": "nonzero", "argwhere": "nonzero",
    "histc": "histc", "histogram": _By("histogram.bin_ct", "histogram.bins_tensor"), "bincount": "bincount",
    # reordering, views and indexing (PyTorch's strided kernels)
    "flip": "flip", "fliplr": "flip", "flipud": "flip", "rot90": "flip", "__reversed__": "flip", "roll": "roll",
    "tril": "tril", "tril_": "tril_", "triu": "triu", "triu_": "triu_", "trace": "trace", "diag": "diagonal_copy",
    "diag_embed": "diag_embed", "diagonal_scatter": "diagonal_scatter", "slice_scatter": "slice_scatter",
    **{name: "as_strided" for name in ("diagonal", "diff", "chunk", "split", "tensor_split", "hsplit", "vsplit",
                                       "unsafe_chunk", "unsafe_split", "fill_diagonal_")},
    "unsqueeze_": "as_strided_", "squeeze_": "as_strided_", "unfold": "unfold", "take": "take",
    "take_along_dim": "view", "gather": "gather", "masked_select": "masked_select", "put_": "put_",
    "masked_fill_": _By("masked_fill_.Scalar", "masked_fill_.Tensor", pos=1), "masked_scatter_": "masked_scatter_",
    "index_fill_": _By("index_fill_.int_Scalar", "index_fill_.int_Tensor", pos=2),
    "scatter": _By("scatter.value", "scatter.src", pos=2), "scatter_": _By("scatter_.value", "scatter_.src", pos=2),
    "where": "where.self", "new_ones": "fill_.Scalar", "new_full": "fill_.Scalar",
    "fill_": _By("fill_.Scalar", "fill_.Tensor"),
    # products and linear algebra with a dense kernel only
    "dot": "dot", "vdot": "vdot", "cross": "linalg_cross", "addmv": "addmv", "addmv_": "addmv_",
    "addbmm": "addbmm", "addbmm_": "addbmm_", "baddbmm": "baddbmm", "baddbmm_": "baddbmm_", "det": "_linalg_det",
    "slogdet": "_linalg_slogdet", "inverse": "linalg_inv_ex", "svd": "_linalg_svd", "qr": "linalg_qr",
    "lu": "linalg_lu_factor_ex", "lu_solve": "linalg_lu_solve", "cholesky": "cholesky",
    "cholesky_inverse": "cholesky_inverse", "matrix_exp": "linalg_matrix_exp", "geqrf": "geqrf",
    "orgqr": "linalg_householder_product", "ormqr": "ormqr", "triangular_solve": "triangular_solve",
    # random fills
    "uniform_": "uniform_", "normal_": "normal_", "cauchy_": "cauchy_", "exponential_": "exponential_",
    "geometric_": "geometric_", "log_normal_": "log_normal_",
    "random_": _By("random_.to", "random_.to", none="random_"),
    "bernoulli_": _By("bernoulli_.float", "bernoulli_.Tensor"),
}
_CONTIGUOUS = "unsupported memory format option Contiguous"
_RESHAPE = "reshape is not implemented for sparse tensors"
_EXPAND = "expand is unsupported for Sparse tensors"
_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"

# method -> PyTorch's RuntimeError (its strided path refuses the sparse layout on the way)
RUNTIME_ERRORS = {
    "ravel": _CONTIGUOUS, "diagflat": _CONTIGUOUS, "masked_fill": _CONTIGUOUS, "masked_scatter": _CONTIGUOUS,
    "index_fill": "unsupported memory format option Preserve", "put": "unsupported memory format option Preserve",
    "isreal": "memory format option is only supported by strided tensors", "reshape_as": _RESHAPE,
    "repeat_interleave": _RESHAPE, "inner": _RESHAPE, "quantile": _RESHAPE, "nanquantile": _RESHAPE,
    "expand_as": _EXPAND, "broadcast_to": _EXPAND, "tile": _EXPAND, "repeat": _EXPAND,
    "pinverse": "full(...) is not implemented for sparse layout", "tolist": _NO_STORAGE,
    "const_data_ptr": _NO_STORAGE, "addmm_": "addmm_sparse_dense: expected strided result tensor, got tensor with "
                                             "layout Sparse",
}


def aten_name(method, args=(), kwargs=None):
    """The ATen op PyTorch's error names for ``method`` called with these arguments."""
    entry = NOT_IMPLEMENTED[method]
    return entry if isinstance(entry, str) else entry.name(args, kwargs or {})


def _refuses(name, raise_error):
    """Install the refusal of method ``name`` (the dense method, looked up when called, serves a tensor that kept
    no entries: some of Tensor's methods are installed after this module runs)."""
    comparison = name.startswith("__") and name not in ("__reversed__", "__contains__")

    def method(self, *args, **kwargs):
        if self._coo is None:
            return getattr(Tensor, name)(self, *args, **kwargs)
        if comparison and args and not isinstance(args[0], (Tensor, int, float, complex, bool)):
            return NotImplemented  # (``s == None``: Python's fallback, as for PyTorch's tensors)
        raise_error(name, args, kwargs)
    method.__name__ = method.__qualname__ = name
    setattr(_SparseTensor, name, method)


def _not_implemented(name, args, kwargs):
    raise NotImplementedError(dispatch_error(aten_name(name, args, kwargs)))


def _runtime_error(name, args, kwargs):
    raise RuntimeError(RUNTIME_ERRORS[name])


for _name in NOT_IMPLEMENTED:
    _refuses(_name, _not_implemented)
for _name in RUNTIME_ERRORS:
    _refuses(_name, _runtime_error)
