"""``torch.gradient``: the derivative of a sampled function along one or more dims by second-order accurate central
differences in the interior and first- or second-order one-sided differences at the two ends.

Composed of public ops (slices, arithmetic, ``cat``) in PyTorch's order of operations, so its autograd graph,
dtypes and rounding follow PyTorch's. ``spacing`` is a number (the same step along every dim), a list of numbers
(one step per dim) or a list of 1-D coordinate tensors (one per dim, unevenly spaced samples allowed).

Example:
    >>> import torchish as torch
    >>> torch.gradient(torch.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
"""
from __future__ import annotations

import numbers

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from .join import cat
from .registry import Family

_public = Family(globals()).public


def _sl(x, d, start, stop=None):
    """``x`` sliced along ``d`` from ``start`` to ``stop`` (negative positions count from the end)."""
    n = x.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else (stop + n if stop < 0 else stop)
    return x.narrow(d, start, stop - start)


def _uniform(x, d, h, edge_order):
    """PyTorch's ``gradient_helper_float`` along ``d`` with step ``h``."""
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        first = (-1.5 * _sl(x, d, 0, 1) + 2 * _sl(x, d, 1, 2) - 0.5 * _sl(x, d, 2, 3)) / h
        last = (0.5 * _sl(x, d, -3, -2) - 2 * _sl(x, d, -2, -1) + 1.5 * _sl(x, d, -1)) / h
    return cat([first, center / 2, last], d)


def _coordinates(x, d, coords, edge_order):
    """PyTorch's ``gradient_helper`` along ``d`` for samples at the 1-D ``coords``."""
    shape = [1] * x.ndim
    shape[d] = -1
    dx = coords.diff()
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    h0, h1, hl, hm = dx[0], dx[1] if dx.shape[0] > 1 else None, dx[-1], dx[-2] if dx.shape[0] > 1 else None
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h0
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / hl
    else:
        a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = -h0 / (h1 * (h0 + h1))
        first = a * _sl(x, d, 0, 1) + b * _sl(x, d, 1, 2) + c * _sl(x, d, 2, 3)
        a = hl / (hm * (hl + hm))
        b = -(hl + hm) / (hl * hm)
        c = (2 * hl + hm) / (hl * (hl + hm))
        last = a * _sl(x, d, -3, -2) + b * _sl(x, d, -2, -1) + c * _sl(x, d, -1)
    return cat([first, center, last], d)


def _dims(input, dim):
    if dim is None:
        return list(range(input.ndim)), False
    dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [wrap_dim(d, input.ndim) for d in dims]
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return dims, True


_OVERLOADS = "".join(f" * (Tensor input, *, {sig}, int edge_order = 1)\n" for sig in (
    "tuple of ints dim", "Number spacing, tuple of ints dim", "Number spacing = None, int dim = None",
    "tuple of Scalars spacing, int dim = None", "tuple of Scalars spacing, tuple of ints dim",
    "tuple of Tensors spacing, int dim = None", "tuple of Tensors spacing, tuple of ints dim"))


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The estimated derivative of ``input`` along each of ``dim`` (all dims by default): a tuple of tensors."""
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if isinstance(spacing, Tensor):
        raise TypeError("gradient() received an invalid combination of arguments - got (Tensor, spacing=Tensor), "
                        "but expected spacing to be a Number, a tuple of Scalars or a tuple of Tensors")
    if spacing is None:  # (PyTorch's `Number spacing = None` overload: an int dim or none, a unit spacing)
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"gradient() received an invalid combination of arguments - got (Tensor, "
                            f"dim={type(dim).__name__}, spacing=NoneType), but expected one of:\n" + _OVERLOADS)
        spacing = 1
    if input.dtype is _dtype.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims, given = _dims(input, dim)
    if isinstance(spacing, numbers.Number):
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if not given and len(spacing) != input.ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.ndim}', since dim argument was not given, but got a list of "
                           f"length {len(spacing)}")
    if given and len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {len(spacing)} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    tensors = [isinstance(s, Tensor) for s in spacing]
    if any(tensors):
        for s in spacing:
            if isinstance(s, Tensor) and s.ndim != 1:
                raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got "
                                   f"an element with {s.ndim} dimensions!")
        return tuple(_coordinates(input, d, s, edge_order) for d, s in zip(dims, spacing))
    return tuple(_uniform(input, d, h, edge_order) for d, h in zip(dims, spacing))


_public("gradient", gradient, method=False)
