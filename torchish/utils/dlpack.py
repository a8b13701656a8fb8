"""``torchish.utils.dlpack``: ``to_dlpack`` (a DLPack capsule sharing a tensor's buffer) and ``from_dlpack`` (a
tensor from any ``__dlpack__`` producer or from such a capsule), as ``torch.utils.dlpack``.

Example:
    >>> import torchish
    >>> from torchish.utils.dlpack import from_dlpack, to_dlpack
    >>> from_dlpack(to_dlpack(torchish.arange(3.0))).tolist()
    [0.0, 1.0, 2.0]
"""
from __future__ import annotations

import enum

from .._tensor import Tensor
from ..interop import from_dlpack as _from_dlpack

__all__ = ["to_dlpack", "from_dlpack", "DLDeviceType"]


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor) -> object:
    """A DLPack capsule sharing ``tensor``'s buffer (consumed once, by one ``from_dlpack``); unlike
    ``Tensor.__dlpack__`` it takes a tensor that requires grad (the capsule carries no graph)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    return tensor.detach().__dlpack__()


class _Capsule:
    """A legacy DLPack capsule dressed as a producer: capsules carry no device query, so it is read as a host buffer."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (DLDeviceType.kDLCPU, 0)


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing (where XLA can alias it) the buffer of a ``__dlpack__`` producer or of a DLPack capsule."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    return _from_dlpack(ext_tensor)
