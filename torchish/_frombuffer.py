"""``torch.frombuffer``: a 1-D tensor from an object exposing the Python buffer protocol.

PyTorch's tensor shares the buffer's memory (writes to either show in the other). A JAX array owns its memory, so
torchish copies the bytes: the values, dtype, shape and errors are PyTorch's, later writes to the buffer are not seen.

Example:
    >>> import torchish as torch
    >>> torch.frombuffer(bytearray(b"\\x01\\x00\\x00\\x00"), dtype=torch.int32)
    tensor([1], dtype=torch.int32)
"""
from __future__ import annotations

import numpy as np

from . import _dtype
from .ops.creation import place

__all__ = ["frombuffer"]


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """``count`` elements of ``dtype`` read from ``buffer`` starting ``offset`` bytes in (all when ``count=-1``)."""
    dt = _dtype.as_dtype(dtype)
    view = memoryview(buffer).cast("B")
    length, size = view.nbytes, dt.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({length} bytes)")
    arr = np.frombuffer(view, dtype=dt.np, count=count, offset=offset).copy()
    return place(arr, dt, None, requires_grad=requires_grad)
