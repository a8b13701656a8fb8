"""Objects beyond torchish's own record types (whole ``nn.Module``s, optimizers, schedulers, dataclasses, argparse
Namespaces, ``defaultdict``...), pickled as ``torch.save`` pickles them, with every tensor kept out of the pickle.

The pickle refers to tensors, dtypes, devices and sizes by *persistent ids*; the tensors themselves are stored by
:mod:`torchish.serialization` as its ordinary tensor records (raw bytes, dtype, shape, ``requires_grad``, device,
Parameter or not), so a tensor reached twice is stored once and comes back as one object (a module's parameters
and the optimizer holding them stay shared). Loading with ``weights_only=True`` resolves globals through the
allow-list of :mod:`torchish._safe_globals` and refuses the rest with PyTorch's error before anything runs;
``weights_only=False`` unpickles everything, as PyTorch does.

Example:
    >>> import collections, torchish
    >>> data, tensors = dumps(collections.defaultdict(list, a=[torchish.ones(1)]))
    >>> loads(data, tensors, weights_only=False)["a"][0] is tensors[0]
    True
"""
from __future__ import annotations

import io
import pickle

from . import _device, _dtype, _safe_globals
from ._tensor import Size, Tensor

DEFAULT_PROTOCOL = 2  # PyTorch's


def _pickler_class(pickle_module):
    base = getattr(pickle_module, "Pickler", pickle.Pickler)

    class _Pickler(base):
        def __init__(self, file, protocol):
            super().__init__(file, protocol)
            self.tensors = []
            self._index = {}  # id(tensor) -> position in self.tensors

        def persistent_id(self, obj):
            if isinstance(obj, Tensor):
                idx = self._index.get(id(obj))
                if idx is None:
                    idx = self._index[id(obj)] = len(self.tensors)
                    self.tensors.append(obj)
                return ("tensor", idx)
            if isinstance(obj, _dtype.dtype):
                return ("dtype", obj.name)
            if isinstance(obj, _device.device):
                return ("device", str(obj))
            if type(obj) is Size:
                return ("size", tuple(int(n) for n in obj))
            return None

    return _Pickler


def dumps(obj, protocol=None, pickle_module=None):
    """``(pickle bytes, tensors)``: ``obj`` pickled with each distinct tensor replaced by its index in ``tensors``.

    Raises what pickle raises for an object it cannot pickle (a lambda: ``pickle.PicklingError``; a local class:
    ``AttributeError``), as ``torch.save`` does.
    """
    buf = io.BytesIO()
    pickler = _pickler_class(pickle_module or pickle)(buf, DEFAULT_PROTOCOL if protocol is None else protocol)
    pickler.dump(obj)
    return buf.getvalue(), pickler.tensors


def _persistent(tensors):
    def load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 2):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        kind, value = pid
        if kind == "tensor" and isinstance(value, int) and 0 <= value < len(tensors):
            return tensors[value]
        if kind == "dtype" and isinstance(value, str):
            return _dtype._lookup(value)
        if kind == "device" and isinstance(value, str):
            return _device.device(value)
        if kind == "size" and isinstance(value, tuple) and all(type(n) is int for n in value):
            return Size(value)
        raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")

    return load


class _WeightsOnlyUnpickler(pickle.Unpickler):
    """Resolves only allowed globals (PyTorch's default list and the user's safe globals); imports nothing."""

    def find_class(self, module, name):
        return _safe_globals.resolve_weights_only(module, name)


def loads(data: bytes, tensors, weights_only=True, pickle_module=None):
    """The object :func:`dumps` pickled, its persistent ids resolved to ``tensors`` (already loaded)."""
    if weights_only:
        cls = _WeightsOnlyUnpickler
    else:
        cls = getattr(pickle_module, "Unpickler", pickle.Unpickler) if pickle_module is not None else pickle.Unpickler
    unpickler = cls(io.BytesIO(data))
    unpickler.persistent_load = _persistent(tensors)
    return unpickler.load()
