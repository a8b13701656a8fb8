"""Masked reductions (``torch.masked.sum``, ``prod``, ``amax``, ``amin``, ``argmax``, ``argmin``, ``mean``,
``median``, ``logsumexp``, ``norm``, ``var``, ``std``): the masked-out elements are replaced with the reduction's
identity, then the ordinary reduction runs, so values, result dtypes and gradients are PyTorch's.

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([[-3., -2., -1.], [0., 1., 2.]])
    >>> torch.masked.sum(x, 1, mask=torch.tensor([[True, False, True], [False, False, False]]))
    tensor([-4.,  0.])
"""
from __future__ import annotations

import torchish as torch

from ._mask import canonical_dim, check_strided, combine, input_mask, sum_dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A001
    """Sum of the masked-in elements over ``dim`` (all dims when None); small integers and bool sum to int64."""
    check_strided("sum", input)
    dtype = sum_dtype(input, dtype)
    dims = canonical_dim(dim, input.ndim)
    return torch.sum(combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the masked-in elements over ``dim`` (one dim at a time, last first, as PyTorch)."""
    check_strided("prod", input)
    dtype = sum_dtype(input, dtype)
    dims = canonical_dim(dim, input.ndim)
    result = combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def _extremum(name, input, dim, keepdim, dtype, mask):
    check_strided(name, input)
    dtype = input.dtype if dtype is None else dtype
    masked = combine(name, input, mask)
    dims = canonical_dim(dim, masked.ndim)
    return getattr(torch, name)(masked, dims, bool(keepdim)).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Maximum of the masked-in elements (``-inf``, or the dtype's lowest value, where all are masked out)."""
    return _extremum("amax", input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Minimum of the masked-in elements (``inf``, or the dtype's largest value, where all are masked out)."""
    return _extremum("amin", input, dim, keepdim, dtype, mask)


def _arg_extremum(name, input, dim, keepdim, dtype, mask):
    check_strided(name, input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    return getattr(torch, name)(combine(name, input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest masked-in element, cast to ``dtype`` (the input's dtype by default, as PyTorch)."""
    return _arg_extremum("argmax", input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest masked-in element, cast to ``dtype`` (the input's dtype by default, as PyTorch)."""
    return _arg_extremum("argmin", input, dim, keepdim, dtype, mask)


def _count_and_total(input, dim, keepdim, dtype, mask):
    """The number of masked-in elements and their sum (``dtype``), and the canonical mask (None without one)."""
    if mask is None:
        count = sum(torch.ones(input.shape, dtype=torch.int64), dim, keepdim=keepdim)
        return count, sum(input, dim, keepdim=keepdim, dtype=dtype), None
    inmask = input_mask(input, mask)
    count = inmask.sum(dim=dim, keepdim=bool(keepdim))
    return count, sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), inmask


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the masked-in elements; ``nan`` where all are masked out. Needs a floating or complex dtype."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    check_strided("mean", input)
    count, total, _ = _count_and_total(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median of the masked-in elements along one ``dim`` (``nan`` where all are masked out: a non-floating
    input then raises)."""
    check_strided("median", input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    d = canonical_dim(dim, input.ndim)[0]
    floating = input.is_floating_point()
    if not floating:
        input = input.to(dtype=torch.float32)
    output = torch.nanmedian(combine("median", input, mask), d, keepdim).values
    if floating:
        return output
    if not torch.isnan(output).any():
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """``log(sum(exp(x)))`` over the masked-in elements (``-inf`` where all are masked out)."""
    check_strided("logsumexp", input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    dims = canonical_dim(dim, input.ndim)
    return torch.logsumexp(combine("logsumexp", input, mask), dims, keepdim=keepdim).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector ``ord``-norm of the masked-in elements (``torch.linalg.vector_norm``)."""
    check_strided("norm", input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    masked = combine("norm", input, mask, ord)
    dims = canonical_dim(dim, input.ndim)
    return torch.linalg.vector_norm(masked, ord, dims, bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = torch.float32
    compute_dtype = dtype if (dtype.is_floating_point or dtype.is_complex) else torch.float32
    check_strided("std/var", input, torch_has_sparse=False)
    count, sample_total, inmask = _count_and_total(input, dim, True, dtype, mask)
    x = torch.subtract(input, torch.divide(sample_total, count))
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        real = compute_dtype.to_real() if compute_dtype.is_complex else compute_dtype
        count = torch.subtract(count.to(real), corr)
        count = torch.maximum(count, count.new_zeros([]))
    output = torch.divide(total, count).to(dtype=dtype)
    return torch.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Variance of the masked-in elements (``correction``/``unbiased`` as ``torch.var``; ``nan`` where none)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Standard deviation of the masked-in elements (see :func:`var`)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)
