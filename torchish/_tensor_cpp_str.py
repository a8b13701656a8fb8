"""A tensor as PyTorch's C++ ``operator<<`` prints it, which is how its kernels' error messages show a tensor
(``torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got:  1  1\\n 1  1\\n[ torch.FloatTensor{2,2} ]``).

This is not Python's ``repr``: the values are read as float64 and one format serves the whole tensor (or each
matrix of it): integer mode where every finite value is whole (``%g``, as wide as the largest magnitude's digits
plus one), else four decimals (``%.4f``), scaled by a printed power of ten when the magnitudes are large or below
one, or scientific (``%.4e``) when they span more than four decades. A matrix wraps its columns at 80 characters
(``Columns 1 to 7``); a tensor of three or more dims prints each matrix under its ``(i,j,.,.) =`` heading. The
footer names the type as the C++ checks do (``torch.FloatTensor``, ``CPUBoolType``) with the sizes.

Example:
    >>> cpp_str(torchish.ones(2, 2))
    ' 1  1\\n 1  1\\n[ torch.FloatTensor{2,2} ]'
"""
from __future__ import annotations

import math

import jax
import numpy as np

from . import _dtype

_LINE = 80  # (at::print's default line size)


def _general(v):
    """C++'s ``defaultfloat`` at its default precision (C's ``%g`` with 6 digits)."""
    return "%g" % v


def _layout(values):
    """``(scale, width, format)`` for ``values`` (a flat float64 array with at least one element): the one format
    every element of them is printed with."""
    finite = values[np.isfinite(values)]
    int_mode = bool(np.all(finite == np.ceil(finite)))
    low = high = 1.0
    if finite.size:  # (the digits before the point of the smallest and the largest magnitudes)
        low, high = float(np.abs(finite).min()), float(np.abs(finite).max())
        low = math.floor(math.log10(low)) + 1 if low != 0 else 1
        high = math.floor(math.log10(high)) + 1 if high != 0 else 1
    if int_mode:
        if high > 9:
            return 1.0, 11, "%.4e"
        return 1.0, int(high) + 1, None
    if high - low > 4:
        return 1.0, 11 + (abs(high) > 99 or abs(low) > 99), "%.4e"
    if high > 5 or high < 0:
        return 10.0 ** (high - 1), 7, "%.4f"
    return 1.0, 7 if high == 0 else int(high) + 6, "%.4f"


def _item(v, width, fmt):
    return (_general(v) if fmt is None else fmt % v).rjust(width)


def _scale_line(scale):
    """The power of ten a matrix is scaled by, in its shortest form (``1000000 *``, ``0.001 *``, ``1e+20 *``)."""
    text = repr(scale)
    return f"{text[:-2] if text.endswith('.0') else text} *\n"


def _matrix(m, indent):
    """The lines of one matrix (a 2-d float64 array with elements), ``indent`` spaces in."""
    scale, width, fmt = _layout(m.reshape(-1))
    pad = " " * indent  # (each row after the first, and each line after a heading)
    out = []
    per_line = (_LINE - indent) // (width + 1)
    rows, cols = m.shape
    first = 0
    while first < cols:
        last = min(first + per_line, cols) - 1
        if per_line < cols:
            if first:
                out.append("\n")
            out.append(f"Columns {first + 1} to {last + 1}{pad}")
        if scale != 1:
            out.append(_scale_line(scale) + pad)
        for r in range(rows):
            for c in range(first, last + 1):
                out.append(_item(m[r, c] / scale, width, fmt))
                if c == last:
                    out.append("\n")
                    if r != rows - 1:
                        out.append(pad + (" " if scale != 1 else ""))
                else:
                    out.append(" ")
        first = last + 1
    return "".join(out)


def cpp_str(t):
    """``t`` (a Tensor) as PyTorch's C++ ``operator<<`` prints it (see the module docstring)."""
    value = t.detach()._d
    shape = tuple(value.shape)
    sizes = ",".join(str(n) for n in shape)
    if isinstance(value, jax.core.Tracer):  # (inside torchish.compile's trace: the values are not known yet)
        return f"[ {_dtype.cpp_tensor_type_name(t.dtype)}{{{sizes}}} ]"
    values = np.asarray(value).real.astype(np.float64)  # (complex: the real parts, as PyTorch's)
    if values.ndim == 0:
        body = _general(float(values)) + "\n"
    elif values.size == 0:
        body = ""
    elif values.ndim == 1:
        scale, width, fmt = _layout(values)
        body = (_scale_line(scale) if scale != 1 else "") + \
            "".join(_item(v / scale, width, fmt) + "\n" for v in values.tolist())
    elif values.ndim == 2:
        body = _matrix(values, 0)
    else:
        parts = []
        for index in np.ndindex(*shape[-3::-1]):  # (the first index runs fastest)
            index = index[::-1]
            heading = "(" + "".join(f"{i + 1}," for i in index) + ".,.) = \n"
            parts.append(heading + _matrix(values[index], 1))
        body = "\n".join(parts)
    return f"{body}[ {_dtype.cpp_tensor_type_name(t.dtype)}{{{sizes}}} ]"
