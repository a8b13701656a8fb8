"""Writing PyTorch's zip checkpoints (what ``torch.save`` writes), so that real ``torch.load`` reads what
``torchish.save`` writes — with its default ``weights_only=True`` for state_dicts, optimizer state and plain
containers of tensors. The reading side is :mod:`torchish._pt_reader`.

The archive holds ``<name>/data.pkl`` (the object pickled; each tensor a call to ``torch._utils._rebuild_tensor_v2``
on a *persistent id* ``('storage', torch.FloatStorage, key, location, numel)``, each Parameter a call to
``torch._utils._rebuild_parameter``), ``<name>/data/<key>`` (each storage's raw little-endian bytes),
``.format_version``, ``.storage_alignment``, ``byteorder``, ``version`` and ``.data/serialization_id``; every record's
data starts at a multiple of 64 bytes and is followed by a data descriptor, as PyTorch's miniz writer lays it out
(so ``torch.load(mmap=True)`` and its storage-offset calculation work on it). One difference remains: a record over
about 2 GiB gets zipfile's 24-byte zip64 data descriptor where miniz uses it from 4 GiB, so the offsets torch
*calculates* (``map_location="meta"``, ``calculate_storage_offsets``) are off for the storages after such a record;
ordinary and mmap loads read the real offsets.

Tensors that share a storage in torchish (the same tensor twice, a view and its base, tied weights) share one
storage record, each with its own offset and strides (a transposed or channels-last tensor keeps its strides).
Other objects (a whole module, an optimizer, a dataclass) are pickled as usual, with torchish's class paths.

The pickle is written by Python's own pickler: torchish's tensors, dtypes, sizes and devices reduce to stand-ins
defined here, and the globals naming the stand-ins are then renamed to PyTorch's (``torch._utils
_rebuild_tensor_v2``, ``torch float16``...) — torch need not be installed.

Example:
    >>> import io, torchish
    >>> blob = dumps({"w": torchish.ones(2)})
    >>> blob[:4], b"archive/data/0" in blob
    (b'PK\\x03\\x04', True)
"""
from __future__ import annotations

import io
import os
import pickle
import pickletools
import secrets
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from . import _device, _dtype, _layout, _serialization_extras
from ._tensor import Size, Tensor
from ._tensor_values import user_state

ALIGNMENT = 64  # PyTorch's default storage alignment (torch.utils.serialization.config.save.storage_alignment)
_FORMAT_VERSION = "1"
_VERSION = "3\n"

_STORAGE_TYPES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}  # other dtypes (uint16/32/64) are saved as PyTorch saves them: bytes in an UntypedStorage, _rebuild_tensor_v3

# ----------------------------------------------------------------------------------------------------------------
# stand-ins for PyTorch's globals: module-level functions (so that pickle can save them), renamed afterwards

_RENAMES: dict = {}  # (module, name) the pickler writes -> (module, name) PyTorch's


def _stand_in(module, name):
    def stand_in(*args, **kwargs):
        raise RuntimeError(f"{module}.{name} is a stand-in used while writing a PyTorch checkpoint")
    qualname = "_torch_" + (module + "." + name).replace(".", "_")
    stand_in.__name__ = stand_in.__qualname__ = qualname
    stand_in.__module__ = __name__
    globals()[qualname] = stand_in
    _RENAMES[(__name__, qualname)] = (module, name)
    return stand_in


_REBUILD_TENSOR = _stand_in("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _stand_in("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _stand_in("torch._utils", "_rebuild_parameter")
_REBUILD_FROM_TYPE = _stand_in("torch._tensor", "_rebuild_from_type_v2")
_TENSOR_TYPE = _stand_in("torch", "Tensor")
_SIZE = _stand_in("torch", "Size")
_DEVICE = _stand_in("torch", "device")
_UNTYPED_STORAGE = _stand_in("torch.storage", "UntypedStorage")
_STORAGE = {name: _stand_in("torch", storage) for name, storage in _STORAGE_TYPES.items()}
# a dtype pickles as the global torchish._dtype.<name> (see reducer_override), renamed torch.<name>
_RENAMES.update({(_dtype.__name__, d.name): ("torch", d.name) for d in _dtype.ALL})
# quantized tensors (torchish._quantized): PyTorch's _rebuild_qtensor on a QInt8/QUInt8/QInt32Storage, the qscheme
# and quantized dtypes as torch.<name> globals
_REBUILD_QTENSOR = _stand_in("torch._utils", "_rebuild_qtensor")
# sparse tensors: PyTorch's _rebuild_sparse_tensor on the layout (torch.serialization._get_layout("torch.<name>"), as
# PyTorch pickles every layout) and the tensors of the entries
_REBUILD_SPARSE = _stand_in("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _stand_in("torch.serialization", "_get_layout")
_QSTORAGE_TYPES = {"qint8": "QInt8Storage", "quint8": "QUInt8Storage", "qint32": "QInt32Storage"}
_STORAGE.update({name: _stand_in("torch", storage) for name, storage in _QSTORAGE_TYPES.items()})
_RENAMES.update({(_dtype.__name__, n): ("torch", n) for n in ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")})
_RENAMES.update({("torchish._quantized", n): ("torch", n) for n in (
    "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "per_channel_affine_float_qparams")})


# ----------------------------------------------------------------------------------------------------------------
# storages


class _StorageRef:
    """One storage of the archive: what its persistent id says, and its bytes."""

    __slots__ = ("key", "dtype", "numel", "location", "data")

    def __init__(self, key, dtype, data, location):
        self.key = key
        self.dtype = dtype
        self.data = data  # a flat little-endian numpy array of ``dtype``
        self.numel = data.size
        self.location = location

    def persistent_id(self):
        stype = _STORAGE.get(self.dtype.name)
        if stype is None:  # bytes, as PyTorch saves the dtypes without a typed storage class
            return ("storage", _UNTYPED_STORAGE, self.key, self.location, self.data.nbytes)
        return ("storage", stype, self.key, self.location, self.numel)


def _storage_order(arr, shape, strides):
    """The elements of ``arr`` in storage order for dense ``strides`` (a permutation of contiguous ones)."""
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    return np.ascontiguousarray(arr.transpose(order)).reshape(-1)


class _Storages:
    """The storages of the tensors being saved, keyed by the tensor that holds them (a view's base): one record each,
    in the order they are first met, with keys "0", "1", ... as PyTorch numbers them."""

    def __init__(self):
        self.refs = {}    # id(root) or id(tensor) -> _StorageRef
        self.roots = {}   # id(root) -> (root's flat storage array, usable for views)
        self.keep = []    # the tensors whose ids key the tables, alive until the save ends

    def _new(self, ident, dtype, data, tensor):
        from .ops.shape import storage_root
        ref = _StorageRef(str(len(self.refs)), dtype, data, _serialization_extras.location_tag(storage_root(tensor)))
        self.refs[ident] = ref
        self.keep.append(tensor)
        return ref

    def _root_storage(self, root):
        """``(flat elements of root's storage, whether its views' layouts refer to it)``."""
        from .ops.inplace import _dense, layout
        got = self.roots.get(id(root))
        if got is None:
            arr = np.asarray(root._concrete())
            shape, strides, offset = layout(root)
            shares = offset == 0 and _dense(shape, strides)
            got = (_storage_order(arr, shape, strides) if shares else arr.reshape(-1)), shares
            self.roots[id(root)] = got
            self.keep.append(root)
        return got

    def add(self, t):
        """``(storage ref, storage_offset, size, stride)`` of tensor ``t`` in the archive."""
        from .ops.inplace import _dense, contiguous_strides, layout
        from .ops.shape import storage_root
        root = storage_root(t)
        flat, shares = self._root_storage(root)
        shape, strides, offset = layout(t)
        npdt = t.dtype.np
        if shares and flat.nbytes % npdt.itemsize == 0:
            ref = self.refs.get(id(root))
            if ref is not None and ref.dtype != t.dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different "
                                   "types")
            data = flat if flat.dtype == npdt else flat.view(npdt)
            alias = t.dtype == root.dtype and (shape, strides, offset) == layout(root)  # detach(), .data
            if t is root or alias or _matches(data, t, shape, strides, offset):
                if ref is None:
                    ref = self._new(id(root), t.dtype, data, t)
                return ref, offset, shape, strides
        # a layout torchish cannot place in its base's storage: the tensor gets a storage of its own
        ref = self.refs.get(id(t))
        dense = len(strides) == len(shape) and _dense(shape, strides)
        if ref is None:
            arr = np.asarray(t._concrete())
            ref = self._new(id(t), t.dtype, _storage_order(arr, shape, strides) if dense else arr.reshape(-1), t)
        return ref, 0, shape, strides if dense else contiguous_strides(shape)


def _matches(flat, t, shape, strides, offset):
    """Whether ``t``'s elements are those its layout picks from ``flat`` (every element inside it)."""
    if any(s < 0 for s in strides) or offset < 0 or len(shape) != len(strides):
        return False
    if 0 in shape:
        return offset <= flat.size
    if offset + sum((n - 1) * s for n, s in zip(shape, strides)) >= flat.size:
        return False
    if flat.dtype in _dtype.FLOAT8_NP:  # (numpy's as_strided cannot describe some ml_dtypes types: their bytes)
        flat = flat.view(np.uint8)
    item = flat.dtype.itemsize
    picked = np.lib.stride_tricks.as_strided(flat[offset:], shape=shape, strides=[s * item for s in strides],
                                             writeable=False)
    return np.ascontiguousarray(picked).tobytes() == np.ascontiguousarray(np.asarray(t._concrete())).tobytes()


# ----------------------------------------------------------------------------------------------------------------
# the pickle


def _pickler_class(pickle_module):
    base = getattr(pickle_module, "Pickler", pickle.Pickler) if pickle_module is not None else pickle.Pickler

    class _TorchPickler(base):
        def __init__(self, file, protocol, storages):
            super().__init__(file, protocol)
            self.storages = storages
            self.keep = []  # objects made while pickling, alive until the end (their ids stay unique)

        def persistent_id(self, obj):
            if type(obj) is _StorageRef:
                return obj.persistent_id()
            return None

        def reducer_override(self, obj):
            if isinstance(obj, Tensor):
                return self.tensor(obj)
            if type(obj) is _TensorData:
                return self.tensor(obj.tensor, requires_grad=False)
            kind = type(obj)
            if kind is _dtype.dtype:
                return obj.name  # the global torchish._dtype.<name>, renamed torch.<name>
            if kind.__name__ == "qscheme" and kind.__module__ == "torchish._quantized":
                return obj.name  # the global torchish._quantized.<name>, renamed torch.<name>
            if kind is Size:
                return _SIZE, (tuple(int(n) for n in obj),)
            if kind is _layout.layout:
                return _GET_LAYOUT, (repr(obj),)
            if kind is _device.device:
                return _DEVICE, ((obj.type,) if obj.index is None else (obj.type, obj.index))
            return NotImplemented

        def tensor(self, t, requires_grad=None):
            from .nn.parameter import Parameter
            if t.is_quantized:
                ref, offset, shape, strides = self.storages.add(t)
                return _REBUILD_QTENSOR, (ref, int(offset), tuple(int(n) for n in shape),
                                          tuple(int(s) for s in strides), t._qparams_for_pickle(), False,
                                          OrderedDict())
            if requires_grad is None and isinstance(t, Parameter):
                data = _TensorData(t)
                self.keep.append(data)
                return _REBUILD_PARAMETER, (data, bool(t.requires_grad), OrderedDict())
            from .sparse import sparse_reduction
            sparse = sparse_reduction(t)
            if sparse is not None:  # (its layout and the tensors of its entries, as PyTorch saves it)
                self.keep.append(sparse)
                return _REBUILD_SPARSE, sparse
            # A conjugate (or negated) view is saved as PyTorch saves it: the storage's values as they are, and
            # the bit in the rebuild call's metadata, which the loader applies.
            stored, metadata = _physical(t)
            ref, offset, shape, strides = self.storages.add(stored)
            rg = bool(t.requires_grad) if requires_grad is None else requires_grad
            args = (ref, int(offset), tuple(int(n) for n in shape), tuple(int(s) for s in strides), rg,
                    OrderedDict())
            if ref.dtype.name not in _STORAGE_TYPES:
                rebuild = _REBUILD_TENSOR_V3, args + (t.dtype,) + ((metadata,) if metadata else ())
            else:
                rebuild = _REBUILD_TENSOR, args + ((metadata,) if metadata else ())
            state = user_state(t) if requires_grad is None else None
            if state or type(t) is not Tensor and type(t).__module__.split(".")[0] != "torchish":
                new_type = _TENSOR_TYPE if type(t) is Tensor else type(t)  # (a subclass, attributes: as PyTorch)
                return _REBUILD_FROM_TYPE, (rebuild[0], new_type, rebuild[1], state)
            return rebuild

    return _TorchPickler


def _physical(t):
    """``(the tensor whose values the storage holds, PyTorch's metadata dict)`` for ``t``: a conjugate view's storage
    holds its base's values (``t.conj()``, a view of the same storage), a negated view's the negation of its
    values; ``{}`` and ``t`` itself for any other tensor."""
    if t._view is None or not t.is_complex() and not t.is_floating_point():
        return t, {}
    if t.is_conj():
        return t.conj(), {"conj": True}
    if t.is_neg():
        return t.detach().neg(), {"neg": True}  # (a storage of its own: torchish has no negated base to share)
    return t, {}


class _TensorData:
    """A Parameter's data inside its ``_rebuild_parameter`` call (PyTorch pickles ``param.data`` there)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


def _global(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _rename_globals(data: bytes) -> bytes:
    """``data`` with the stand-ins' globals renamed to PyTorch's. A renamed STACK_GLOBAL (protocol 4+) becomes two
    POPs of its strings and a GLOBAL; frames are dropped, as their lengths change (they are optional)."""
    out, last = [], 0
    memo, strings = {}, []  # memo index -> string pushed (to resolve STACK_GLOBAL's operands)
    ops = list(pickletools.genops(data))
    for i, (op, arg, pos) in enumerate(ops):
        end = ops[i + 1][2] if i + 1 < len(ops) else len(data)
        name = op.name
        replacement = None
        if name == "GLOBAL":
            module, _, attr = arg.partition(" ")
            new = _RENAMES.get((module, attr))
            if new is not None:
                replacement = _global(*new)
        elif name == "STACK_GLOBAL" and len(strings) >= 2:
            new = _RENAMES.get((strings[-2], strings[-1]))
            if new is not None:
                replacement = b"00" + _global(*new)
        elif name == "FRAME":
            replacement = b""
        if name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            strings.append(arg)
        elif name == "MEMOIZE":
            memo[len(memo)] = strings[-1]
        elif name in ("BINPUT", "LONG_BINPUT", "PUT") and strings:
            memo[arg] = strings[-1]
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            strings.append(memo.get(arg, None))
        elif name != "MEMOIZE":
            strings.append(None)  # anything else on top of the stack: not a string operand
        if replacement is not None:
            out.append(data[last:pos])
            out.append(replacement)
            last = end
    out.append(data[last:])
    return b"".join(out)


def _pickle(obj, protocol, pickle_module, storages):
    buf = io.BytesIO()
    pickler = _pickler_class(pickle_module)(buf, _PROTOCOL if protocol is None else protocol, storages)
    pickler.dump(obj)
    return _rename_globals(buf.getvalue())


_PROTOCOL = 2  # PyTorch's DEFAULT_PROTOCOL


# ----------------------------------------------------------------------------------------------------------------
# the zip archive


class _Sink:
    """A write-only stream: zipfile then writes a data descriptor after each record, as PyTorch's writer does."""

    def __init__(self):
        self.buf = io.BytesIO()

    def write(self, data):
        return self.buf.write(data)

    def tell(self):
        return self.buf.tell()

    def flush(self):
        pass

    def seekable(self):
        return False

    def seek(self, *args):
        raise io.UnsupportedOperation("seek")


def _write_record(zf, sink, name, data):
    """One stored record whose data starts at a multiple of :data:`ALIGNMENT` (PyTorch pads the local header's extra
    field with an "FB" entry of "Z"s)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    encoded = name.encode("utf-8")
    zip64 = len(data) * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own test: it adds a 20-byte zip64 extra field
    start = sink.tell() + 30 + len(encoded) + 4 + (20 if zip64 else 0)
    pad = -start % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(info, data)


def write_zip(pickled: bytes, storages: dict, archive_name: str = "archive", byteorder=True) -> bytes:
    """The bytes of a PyTorch checkpoint holding ``pickled`` (data.pkl) and ``storages`` (key -> flat array)."""
    sink = _Sink()
    skip = _serialization_extras.skipping()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_STORED) as zf:
        prefix = archive_name + "/"
        _write_record(zf, sink, prefix + "data.pkl", pickled)
        _write_record(zf, sink, prefix + ".format_version", _FORMAT_VERSION.encode())
        _write_record(zf, sink, prefix + ".storage_alignment", str(ALIGNMENT).encode())
        if byteorder:
            _write_record(zf, sink, prefix + "byteorder", b"little")
        for key, arr in storages.items():
            if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
                arr = arr.byteswap()
            data = bytes(arr.nbytes) if skip else memoryview(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
            _write_record(zf, sink, f"{prefix}data/{key}", data)
        _write_record(zf, sink, prefix + "version", _VERSION.encode())
        _write_record(zf, sink, prefix + ".data/serialization_id", _serialization_id().encode())
    return sink.buf.getvalue()


def _serialization_id():
    """A random 40-digit id, as PyTorch writes (it tells checkpoints apart)."""
    return "".join(str(secrets.randbelow(10)) for _ in range(40))


def archive_name_for(path) -> str:
    """The folder name inside the archive: the file's name without its extension, as PyTorch names it; "archive"
    for a stream."""
    if path is None:
        return "archive"
    base = os.path.basename(os.fsdecode(path))
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return stem or "archive"


def dumps(obj, archive_name="archive", pickle_module=None, pickle_protocol=None, disable_byteorder_record=False):
    """``obj`` as a PyTorch zip checkpoint (bytes).

    Raises:
        RuntimeError: two tensors viewing one storage as different dtypes (PyTorch's error).
        pickle.PicklingError, AttributeError, TypeError: what pickle raises for an object it cannot pickle.
    """
    storages = _Storages()
    pickled = _pickle(obj, pickle_protocol, pickle_module, storages)
    return write_zip(pickled, {ref.key: ref.data for ref in storages.refs.values()}, archive_name,
                     not disable_byteorder_record)
