"""``torch._scaled_mm``, the float8 matrix product of float8 inference code (torchao, transformers' FP8 linear), as
PyTorch's CPU build computes it: float8_e4m3fn/e5m2 operands in float32, scaled tensor-wise or row-wise, rounded
once to the output dtype."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype
from .registry import apply, defop


def _scaled_mm_fwd(a, b, scale_a, scale_b, bias, *, out_dtype):
    f32 = jnp.float32
    r = jnp.matmul(a.astype(f32), b.astype(f32), preferred_element_type=f32) * scale_a.astype(f32) * \
        scale_b.astype(f32)
    if bias is not None:
        r = r + bias.astype(f32)
    return r.astype(out_dtype)  # (into float8: XLA's conversion, overflow NaN, as PyTorch's oneDNN path)


_SCALED_MM = defop("scaled_mm", _scaled_mm_fwd, differentiable=False)
_ONEDNN = frozenset({_dtype.float32, _dtype.float16, _dtype.bfloat16, _dtype.int8, _dtype.float8_e4m3fn,
                     _dtype.float8_e5m2})


def _scaled_mm(self, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    """``torch._scaled_mm``: ``(self @ mat2) * scale_a * scale_b (+ bias)`` from float8_e4m3fn/e5m2 matrices, in
    float32, rounded once to ``out_dtype`` (default: ``self``'s dtype). Scales are tensor-wise (one element each) or
    row-wise (``scale_a`` of shape (M, 1), ``scale_b`` (1, N)); ``scale_result`` is ignored, as on PyTorch's CPU.

    Example:
        >>> a = torchish.ones(2, 3).to(torchish.float8_e4m3fn)
        >>> torchish._scaled_mm(a, a.t(), torchish.tensor(0.5), torchish.tensor(1.0), out_dtype=torchish.float32)
    """
    for name, t in (("mat1", self), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    m, n = self.shape[0], mat2.shape[1]
    f8 = all(t.dtype in (_dtype.float8_e4m3fn, _dtype.float8_e5m2, _dtype.float8_e4m3fnuz, _dtype.float8_e5m2fnuz,
                         _dtype.float8_e8m0fnu) for t in (self, mat2))
    # (scales of any float type pass for operands of one dtype; mixed e4m3fn/e5m2 operands need float32 ones)
    floats = all((s.dtype.is_floating_point and s.dtype not in _dtype.FLOAT8) if self.dtype is mat2.dtype else
                 s.dtype is _dtype.float32 for s in (scale_a, scale_b))
    tensorwise = scale_a.numel() == 1 and scale_b.numel() == 1
    rowwise = tuple(scale_a.shape) == (m, 1) and tuple(scale_b.shape) == (1, n) and \
        scale_a.dtype is scale_b.dtype is _dtype.float32
    if not (f8 and floats and (tensorwise or rowwise)):
        def desc(t):
            return f"{_dtype.scalar_type_name(t.dtype)}"
        raise ValueError(
            "Invalid scaling configuration.\n- For TensorWise scaling, a and b should be float8, scales should be "
            "float and singletons.\n- For RowWise scaling, a and b should be float8, scales should be float, scale_a "
            f"should be ({m}, 1) and scale_b should be (1, {n}), and both should be contiguous.\nGot "
            f"mat_a.dtype()={desc(self)}, scale_a.dtype()={desc(scale_a)}, scale_a.size()={list(scale_a.shape)}, "
            f"scale_a.stride()={list(scale_a.stride())}, mat_b.dtype()={desc(mat2)}, scale_b.dtype()={desc(scale_b)}, "
            f"scale_b.size()={list(scale_b.shape)} and scale_b.stride()={list(scale_b.stride())}")
    out = _dtype.as_dtype(out_dtype) if out_dtype is not None else self.dtype
    for t in (self, mat2, None if out_dtype is None else out):
        d = t if isinstance(t, _dtype.dtype) else getattr(t, "dtype", None)
        if d is not None and d not in _ONEDNN:
            raise RuntimeError(f"itensor_view_from_dense expects float/bfloat16/half/int8/fp8 tensor input"
                               f"{_dtype.scalar_type_name(d)}")
    sa, sb = (s.reshape(()) if s.numel() == 1 else s for s in (scale_a, scale_b))
    return apply(_SCALED_MM, (self, mat2, sa, sb, bias), out_dtype=out.np)
