"""``torch.layout`` and its instances (``torch.strided``, ``torch.sparse_coo``, ...).

torchish tensors are all dense, so ``Tensor.layout`` is always :data:`strided`; the other layouts exist so that code
naming them (``layout=torch.strided`` checks, ``x.layout == torch.sparse_coo``) runs as under PyTorch.

Example:
    >>> import torchish as torch
    >>> torch.ones(2).layout is torch.strided
    True
"""
from __future__ import annotations


class layout:
    """A memory layout. Instances are singletons made here; ``torch.layout()`` cannot be called, as in PyTorch."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.layout' instances")

    @classmethod
    def _make(cls, name):
        obj = object.__new__(cls)
        obj._name = name
        return obj

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return _lookup, (self._name,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


strided = layout._make("strided")
sparse_coo = layout._make("sparse_coo")
sparse_csr = layout._make("sparse_csr")
sparse_csc = layout._make("sparse_csc")
sparse_bsr = layout._make("sparse_bsr")
sparse_bsc = layout._make("sparse_bsc")
_mkldnn = layout._make("_mkldnn")
jagged = layout._make("jagged")


_CPP_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr", "sparse_csc": "SparseCsc",
              "sparse_bsr": "SparseBsr", "sparse_bsc": "SparseBsc", "_mkldnn": "Mkldnn", "jagged": "Jagged"}


def cpp_name(lay):
    """The layout's name in PyTorch's C++ error messages (``Strided``, ``Sparse``, ``SparseCsr``...)."""
    return _CPP_NAMES[lay._name]


def _lookup(name):
    """The layout called ``name`` (unpickling)."""
    return globals()[name]


def check_memory_format(memory_format, ndim):
    """PyTorch's error for a channels-last ``memory_format`` (a ``torch.memory_format``) asked of a tensor of another
    rank than the format's; torchish keeps every layout contiguous otherwise."""
    need = {"channels_last": 4, "channels_last_3d": 5}.get(getattr(memory_format, "_name", None))
    if need is not None and ndim != need:
        raise RuntimeError(f"required rank {need} tensor to use {memory_format._name} format")
