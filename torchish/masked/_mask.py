"""The pieces every ``torchish.masked`` operation shares: PyTorch's canonical ``dim`` tuple, the canonical input
mask (broadcast to the input's shape, made boolean), each reduction's identity value, and the step that replaces
the masked-out elements of the input with that identity (``torch.where(mask, input, identity)``), so gradients are
PyTorch's: zero at masked-out elements.

Only strided tensors are handled; a sparse input raises (PyTorch's own error where it refuses the layout too).
"""
from __future__ import annotations

import math

import torchish as torch

_PROMOTED_TO_INT64 = ("uint8", "bool", "int8", "int16", "int32")


def canonical_dim(dim, ndim):
    """``dim`` as a sorted tuple of non-negative dims (None and ``()`` mean every dim), with PyTorch's errors."""
    if dim == ():
        dim = None
    if dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def sum_dtype(input, dtype):
    """The result dtype of masked sum/prod: ``dtype``, else the input's, with small integers and bool -> int64."""
    if dtype is not None:
        return dtype
    return torch.int64 if str(input.dtype).split(".")[-1] in _PROMOTED_TO_INT64 else input.dtype


def check_strided(name, input, torch_has_sparse=True):
    """Raise for a non-strided input: PyTorch's ValueError where it refuses the layout, NotImplementedError where
    PyTorch has a sparse kernel torchish does not."""
    layout = input.layout
    if layout == torch.strided:
        return
    if layout not in (torch.sparse_coo, torch.sparse_csr):
        raise ValueError(f"_input_mask expects strided or sparse COO or sparse CSR tensor but got {layout}")
    if not torch_has_sparse:
        raise ValueError(f"masked {name} expects strided tensor (got {layout} tensor)")
    raise NotImplementedError(f"torchish.masked.{name} supports strided tensors only (got {layout} tensor)")


def input_mask(input, mask):
    """The canonical mask: boolean, strided, with the input's shape (a smaller mask is broadcast)."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.layout != torch.strided:
        mask = mask.to_dense()
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask "
                             "(got mask dimensionality higher than of the input)")
        mask = torch.broadcast_to(mask, input.shape)
    return mask.to(dtype=torch.bool)


def identity(op_name, input, ord=2):
    """The identity value of reduction ``op_name`` for the input's dtype (a 0-dim tensor), None where it is
    undefined (mean, var, std)."""
    dtype = input.dtype
    floating = input.is_floating_point()
    lowest_int = floating is False and (input.dtype.is_signed or dtype == torch.uint8)
    if op_name in ("sum", "cumsum"):
        return torch.tensor(0, dtype=dtype)
    if op_name in ("prod", "cumprod"):
        return torch.tensor(1, dtype=dtype)
    if op_name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if floating:
            return torch.tensor(-math.inf, dtype=dtype)
        if op_name == "logsumexp" and input.is_complex():
            return torch.tensor(complex(-math.inf, 0), dtype=dtype)
        if lowest_int:
            return torch.tensor(torch.iinfo(dtype).min, dtype=dtype)
    elif op_name in ("amin", "argmin"):
        if floating:
            return torch.tensor(math.inf, dtype=dtype)
        if lowest_int:
            return torch.tensor(torch.iinfo(dtype).max, dtype=dtype)
    elif op_name in ("mean", "var", "std"):
        return None
    elif op_name == "norm":
        if ord == -math.inf:
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return torch.tensor(math.inf, dtype=dtype)
        return torch.tensor(0, dtype=dtype)
    elif op_name == "median":
        return torch.tensor(math.nan, dtype=dtype if floating else torch.float32)
    raise NotImplementedError(f"identity of {op_name} on {dtype} input")


def combine(op_name, input, mask, ord=2):
    """The input with its masked-out elements replaced by the identity of ``op_name`` (the input itself when
    ``mask`` is None). A MaskedTensor input brings its own mask."""
    from .maskedtensor.core import is_masked_tensor
    if is_masked_tensor(input):
        from .maskedtensor.reductions import combine_masked
        return combine_masked(op_name, input, ord)
    if mask is None:
        return input
    return torch.where(input_mask(input, mask), input, identity(op_name, input, ord))
