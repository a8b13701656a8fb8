"""The kernels PyTorch's CPU build lacks for its "barebones" unsigned dtypes, uint16, uint32 and uint64.

PyTorch stores, converts, copies, views, joins, pads (constant), sorts and uniquifies these dtypes and has a few
computing kernels for them (``mul``, ``bitwise_and``/``or``/``xor``, ``eq``/``ne``, ``sum``/``prod`` and their
scans, ``any``/``all``, ``where``, ``isclose``); where an op computes *in* one of them (its common dtype, or its
input's for ops that do not promote) and has no kernel, it raises NotImplementedError naming the kernel
(``"add_stub" not implemented for 'UInt16'``). A uint16 tensor with a float operand computes in the float dtype and
works. :func:`check` runs on a dispatch-cache miss of ``registry.apply``, beside the float8 check.

>>> x = torchish.tensor([1, 2], dtype=torchish.uint16)
>>> x * x                       # tensor([1, 4], dtype=torch.uint16)
>>> x + 1                       # NotImplementedError: "add_stub" not implemented for 'UInt16'
>>> x + 0.5                     # tensor([1.5000, 2.5000]): computed in float32
"""
from __future__ import annotations

from .. import _dtype, _meta
from .._tensor import Tensor

NP = frozenset(d.np for d in _dtype._BAREBONES_UNSIGNED)

_MM = ("matmul_MmBackward0", "matmul_SqueezeBackward4", "matmul_UnsafeViewBackward0", "matmul_CloneBackward0",
       "matmul_TransposeBackward0")

# registry op -> the kernel PyTorch names in its error (each checked against torch 2.13 on uint16/32/64 tensors)
KERNELS = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "rsub_scalar": "add_stub", "diff": "add_stub",
    "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu", "bitwise_not": "bitwise_not_cpu",
    "floor_divide": "div_floor_cpu", "remainder": "remainder_cpu", "fmod": "fmod_cpu", "neg": "neg_cpu",
    "abs": "abs_cpu", "sign": "sign_cpu", "pow": "pow", "maximum": "maximum_cpu", "minimum": "minimum_cpu",
    "gcd": "gcd_cpu", "lcm": "lcm_cpu", "addcmul": "addcmul_cpu_out",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "logical_and": "logical_and_cpu", "logical_or": "logical_or_cpu", "logical_xor": "logical_xor_cpu",
    "logical_not": "logical_not_cpu",
    "max_all": "max_all", "min_all": "min_all", "amax": "max_values_cpu", "amin": "min_values_cpu",
    "aminmax": "aminmax_cpu", "aminmax_all": "aminmax_cpu", "topk": "topk_cpu", "kthvalue": "kthvalue_cpu",
    "median": "median_cpu", "median_dim": "median_out", "nanmedian": "median_cpu", "nanmedian_dim": "median_out",
    "mode": "mode_cpu", "count_nonzero": "nonzero_count_cpu",
    "clamp_tensor": "clamp_cpu", "relu": "clamp_min_scalar_cpu", "clamp_min": "clamp_min_scalar_cpu",
    "clamp_max": "clamp_max_scalar_cpu",
    "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "scatter_add": "scatter_gather_tensor_cpu", "scatter_value": "scatter_gather_scalar_cpu",
    "index_add": "index_add_", "index_fill": "index_fill_cpu", "index_copy": "index_copy_cpu",
    "index_put": "index_put", "index_select": "index_select", "masked_select": "masked_select",
    "masked_scatter": "masked_scatter", "masked_set": "masked_fill", "masked_fill": "masked_fill",
    "masked_fill_t": "masked_fill", "take": "take_cpu",
    "flip": "flip_cpu", "rot90": "flip_cpu", "tril": "tril", "triu": "triu", "trace": "trace",
    "bincount": "bincount_cpu", "isin": "isin_default_cpu",
    "matmul_BmmBackward0": "bmm", "matmul_MvBackward0": "addmv_impl_cpu", "matmul_DotBackward0": "dot",
    **{m: "addmm_impl_cpu_" for m in _MM},
    **{f"reflect_pad{n}d": f"reflection_pad{n}d" for n in (1, 2, 3)},
    **{f"replicate_pad{n}d": f"replication_pad{n}d" for n in (1, 2, 3)},
}


def not_implemented(kernel, dt):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_type_name(dt)}'")


def refuse(t, kernel):
    """PyTorch's NotImplementedError when the Tensor ``t`` is uint16/32/64 (for front-ends that reach no registry
    op: ``nonzero``, ``argwhere``)."""
    if t._v.dtype in NP:
        raise not_implemented(kernel, t.dtype)


def _kernel(name, args, static):
    if name == "div_mode":
        mode = static.get("rounding_mode")
        return None if mode is None else f"div_{mode}_cpu"
    if name in ("argmax", "max_dim", "min_dim", "cummax", "cummin"):
        largest = static.get("largest", True)
        return {"argmax": "argmax_cpu" if largest else "argmin_cpu", "max_dim": "max_cpu" if largest else "min_cpu",
                "min_dim": "min_cpu", "cummax": "cummax_cpu" if largest else "cummin_cpu",
                "cummin": "cummin_cpu"}[name]
    if name == "clamp":  # (Number bounds; a missing one is None)
        lo, hi = (args + (None, None))[1:3]
        return "clamp_min_scalar_cpu" if hi is None else "clamp_max_scalar_cpu" if lo is None else "clamp_scalar_cpu"
    if name == "searchsorted":  # (a float input with uint16 boundaries computes in float: fine)
        return "searchsorted_out_cpu"
    return KERNELS.get(name)


def check(op, args, static, cdt):
    """Raise PyTorch's NotImplementedError where ``op`` computes in uint16/32/64 (``cdt``, its promoted dtype, or its
    first Tensor's dtype when it does not promote) and PyTorch has no CPU kernel for it."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors or _meta.has_meta([a._v for a in tensors]):
        return  # (PyTorch's meta kernels check no dtype support)
    dt = cdt if cdt is not None else _dtype.from_np(tensors[0]._v.dtype)
    if dt.np not in NP:
        return
    kernel = _kernel(op.name, args, static)
    if kernel is not None:
        raise not_implemented(kernel, dt)
