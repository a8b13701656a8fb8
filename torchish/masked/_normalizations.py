"""Masked normalizations and scans (``torch.masked.softmax``, ``log_softmax``, ``softmin``, ``normalize``,
``cumsum``, ``cumprod``) and the binary ``logaddexp``: each replaces the masked-out elements with an identity and
runs the ordinary op. The result keeps the input's shape; a softmax row with every element masked out is ``nan``,
as in PyTorch.

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([1., 2., 3.])
    >>> torch.masked.softmax(x, 0, mask=torch.tensor([True, False, True]))
    tensor([0.1192, 0.0000, 0.8808])
"""
from __future__ import annotations

import torchish as torch

from ._mask import canonical_dim, check_strided, combine
from ._reductions import norm


def _scan(name, identity_of, input, dim, dtype, mask):
    check_strided(name, input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    d = canonical_dim(dim, input.ndim)[0]
    return getattr(torch, name)(combine(identity_of, input, mask), d, dtype=dtype).to(dtype=dtype)


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along ``dim`` with the masked-out elements counted as 0."""
    return _scan("cumsum", "sum", input, dim, dtype, mask)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along ``dim`` with the masked-out elements counted as 1."""
    return _scan("cumprod", "prod", input, dim, dtype, mask)


def _softmax_like(name, identity_of, input, dim, dtype, mask):
    check_strided(name, input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    d = canonical_dim(dim, input.ndim)[0]
    return getattr(torch.nn.functional, name)(combine(identity_of, input, mask), d, dtype=dtype)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax along ``dim`` over the masked-in elements (masked-out ones get 0; a fully masked row ``nan``)."""
    return _softmax_like("softmax", "amax", input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax along ``dim`` over the masked-in elements (masked-out ones get ``-inf``)."""
    return _softmax_like("log_softmax", "amax", input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmin along ``dim`` over the masked-in elements (masked-out ones get 0)."""
    return _softmax_like("softmin", "amin", input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """The input divided by the masked ``ord``-norm along ``dim`` (at least ``eps``); masked-out elements are 0."""
    check_strided("normalize", input, torch_has_sparse=False)
    dtype = input.dtype if dtype is None else dtype
    masked = combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return torch.divide(masked, torch.maximum(nrm, nrm.new_full([], eps)))


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """``log(exp(input) + exp(other))`` with each operand's masked-out elements taken as ``-inf``.

    Example::

        >>> torch.masked.logaddexp(torch.tensor([-100., -200, -300]), torch.tensor([-1., -2, -3]),
        ...                        input_mask=torch.tensor([True, False, True]),
        ...                        other_mask=torch.tensor([True, False, True]))
        tensor([-1., -inf, -3.])
    """
    dtype = input.dtype if dtype is None else dtype
    if input.layout != torch.strided or other.layout != torch.strided:
        raise ValueError(f"masked logaddexp expects strided tensors (got {input.layout} tensor for input, "
                         f"{other.layout} for other)")
    return torch.logaddexp(combine("logaddexp", input, input_mask),
                           combine("logaddexp", other, other_mask)).to(dtype=dtype)
