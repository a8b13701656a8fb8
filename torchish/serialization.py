"""``torchish.save`` / ``torchish.load``: PyTorch's API; with ``weights_only=True`` (the default) loading never
runs code from the file.

Formats:

* PyTorch's zip checkpoints (what :func:`save` writes, and what ``torch.save`` writes): written by
  :mod:`torchish._pt_writer` so that ``torch.load`` reads them, with its default ``weights_only=True`` for
  state_dicts, optimizer state and plain containers; read with a restricted unpickler that only knows the
  tensor-rebuild functions and storage types (:mod:`torchish._pt_reader`), never PyTorch itself. Loading a whole
  object (a module, an optimizer, a dataclass: pickled with torchish's class paths) needs ``weights_only=False``
  or the user's safe globals. Writes to a path are atomic: the file is written beside the target and moved over
  it with ``os.replace``, so a failure mid-save leaves the old file.
* torchish's own (written only with ``_use_new_zipfile_serialization=False``, read always, as earlier torchish
  versions wrote it): a header (magic, payload length, CRC-32) and a msgpack payload. Tensors are stored as their
  raw little-endian bytes with dtype, shape, ``requires_grad`` and device; containers and Python
  scalars/strings/None/bytes keep their types; a tensor reachable twice is stored once and comes back as one object
  (tied weights). Any other object is pickled (:mod:`torchish._pickled`), its tensors still stored as records.
* safetensors (``.safetensors`` paths, or :func:`save_safetensors`/:func:`load_safetensors`).

Example:
    >>> import io, torchish as torch
    >>> buf = io.BytesIO()
    >>> torch.save({"w": torch.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf)["step"]
    3
"""
from __future__ import annotations

import errno
import os
import pickle
import struct
import sys
import tempfile
import zlib
from collections import OrderedDict

import jax
import msgpack
import numpy as np

from . import _device, _dtype, _pickled, _safe_globals
from ._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals  # noqa: F401
from ._serialization_extras import (  # noqa: F401
    LoadEndianness, SourceChangeWarning, default_restore_location, get_crc32_options, get_default_load_endianness,
    get_default_mmap_options, get_unsafe_globals_in_checkpoint, location_tag, register_package, set_crc32_options,
    set_default_load_endianness, set_default_mmap_options, skip_data, MAGIC_NUMBER, PROTOCOL_VERSION,
    STORAGE_KEY_SEPARATOR, LONG_SIZE, INT_SIZE, SHORT_SIZE, UNSAFE_MESSAGE, check_module_version_greater_or_equal,
    validate_cuda_device)
from . import _serialization_extras
from ._safetensors import load_safetensors, save_safetensors, is_safetensors_path  # noqa: F401
from ._tensor import Size, Tensor

DEFAULT_PROTOCOL = _pickled.DEFAULT_PROTOCOL
MAGIC = b"\x93TORCHISH\x01"
_HEADER = struct.Struct("<QI")  # payload length, crc32
_CHUNK = 1 << 22

# ExtType codes: containers are msgpack arrays whose first element is one of these markers
_LIST, _TUPLE, _DICT, _ODICT, _TENSOR, _REF, _COMPLEX, _BIGINT, _DTYPE, _DEVICE, _NDARRAY, _SET, _FROZENSET, \
    _NPSCALAR, _SIZE, _PICKLED = range(16)
_SCALARS = (bool, str, bytes, float)


class _NeedsPickle(Exception):
    """Raised by the record encoder for an object only pickle can store (any other type, or a cycle)."""


# ----------------------------------------------------------------------------------------------------------------
# encoding


class _Encoder:
    def __init__(self):
        self.memo = {}  # id(tensor) -> index
        self.keep = []  # keeps memoised tensors alive while encoding (ids stay unique)
        self.active = set()

    def tagged(self, code, items, payload=b""):
        return [msgpack.ExtType(code, payload)] + items

    def enc(self, x):
        if isinstance(x, np.generic):  # before the Python scalars: np.float64 is a float subclass
            return self.tagged(_NPSCALAR, [x.dtype.str, x.tobytes()])
        kind = type(x)  # exact types only: subclasses (defaultdict, Counter, namedtuples, enums) are pickled
        if x is None or kind in _SCALARS:
            return x
        if kind is int:
            return x if -(1 << 63) <= x < (1 << 64) else msgpack.ExtType(_BIGINT, str(x).encode())
        if isinstance(x, Tensor):
            return self.tensor(x)
        if kind is complex:
            return msgpack.ExtType(_COMPLEX, struct.pack("<dd", x.real, x.imag))
        if kind is _dtype.dtype:
            return msgpack.ExtType(_DTYPE, x.name.encode())
        if kind is _device.device:
            return msgpack.ExtType(_DEVICE, str(x).encode())
        if kind is np.ndarray and not x.dtype.hasobject:
            x = np.asarray(x, order="C")
            return self.tagged(_NDARRAY, [x.dtype.str, list(x.shape), x.tobytes()])
        code = _CONTAINERS.get(kind)
        if code is None:
            raise _NeedsPickle
        return self.container(x, code)

    def container(self, x, code):
        if id(x) in self.active:
            raise _NeedsPickle  # a container holding itself: pickle keeps the cycle
        self.active.add(id(x))
        try:
            if code in (_DICT, _ODICT):
                items = []
                payload = b""
                meta = getattr(x, "_metadata", None) if code == _ODICT else None
                if isinstance(meta, dict):
                    payload = b"m"
                    items.append(self.enc(meta))
                for k, v in x.items():
                    items.append(self.enc(k))
                    items.append(self.enc(v))
                return self.tagged(code, items, payload)
            seq = sorted(x, key=repr) if code in (_SET, _FROZENSET) else x
            return self.tagged(code, [self.enc(v) for v in seq])
        finally:
            self.active.discard(id(x))

    def tensor(self, t):
        idx = self.memo.get(id(t))
        if idx is not None:
            return msgpack.ExtType(_REF, struct.pack("<Q", idx))
        idx = len(self.memo)
        self.memo[id(t)] = idx
        self.keep.append(t)
        arr = np.asarray(t._concrete(), order="C")
        if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
            arr = arr.byteswap()
        data = bytes(arr.nbytes) if _serialization_extras.skipping() else arr.tobytes()  # skip_data: zeros
        fields = [t.dtype.name, list(arr.shape), bool(t._rg), str(t.device), data]
        from .nn.parameter import Parameter
        if isinstance(t, Parameter):  # comes back as a Parameter, as PyTorch's do
            fields.append("parameter")
        from .ops.inplace import dense_layout
        lay = dense_layout(t)  # dense strides (channels_last, a transposed copy) too
        if lay is not None:
            fields.append(list(lay[1]))
        return self.tagged(_TENSOR, fields)


_CONTAINERS = {Size: _SIZE, OrderedDict: _ODICT, dict: _DICT, tuple: _TUPLE, list: _LIST, frozenset: _FROZENSET,
               set: _SET}


def _encode(obj, pickle_module=None, pickle_protocol=None) -> bytes:
    """The record of ``obj``: msgpack alone when it holds only torchish's record types, else a pickle of it (its
    tensors beside it as records, :mod:`torchish._pickled`)."""
    try:
        tree = _Encoder().enc(obj)
    except _NeedsPickle:
        data, tensors = _pickled.dumps(obj, pickle_protocol, pickle_module)
        enc = _Encoder()
        tree = enc.tagged(_PICKLED, [[enc.tensor(t) for t in tensors], data])
    payload = msgpack.packb(tree, use_bin_type=True)
    return MAGIC + _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


# ----------------------------------------------------------------------------------------------------------------
# decoding


class _Marker:
    __slots__ = ("code", "payload")

    def __init__(self, code, payload):
        self.code = code
        self.payload = payload


class _Decoder:
    def __init__(self, placer, weights_only=True):
        self.memo = []
        self.placer = placer
        self.weights_only = weights_only

    def refuse(self, qualified):
        if self.weights_only and qualified not in _safe_globals.allowed_user_globals():
            raise _safe_globals.refusal(qualified)

    def refuse_numpy(self):
        if self.weights_only:  # PyTorch's weights-only unpickler refuses numpy's globals
            raise _WeightsOnlyError("Weights only load failed: the file holds numpy arrays or scalars, which "
                                    "weights_only=True (the default) does not load; pass weights_only=False if you "
                                    "trust the file")

    def ext(self, code, data):
        if code == _REF:
            (idx,) = struct.unpack("<Q", data)
            if idx >= len(self.memo):
                raise ValueError(f"reference to tensor {idx} before it was stored")
            return self.memo[idx]
        if code == _COMPLEX:
            re, im = struct.unpack("<dd", data)
            return complex(re, im)
        if code == _BIGINT:
            return int(data.decode())
        if code == _DTYPE:
            return _dtype._lookup(data.decode())
        if code == _DEVICE:
            return _device.device(data.decode())
        return _Marker(code, data)

    def array(self, items):
        if not items or not isinstance(items[0], _Marker):
            return items  # an internal field (a shape); every saved container is tagged
        head, rest = items[0], items[1:]
        code = head.code
        if code == _LIST:
            return rest
        if code == _TUPLE:
            return tuple(rest)
        if code == _SIZE:
            return Size(rest)
        if code == _SET:
            return set(rest)
        if code == _FROZENSET:
            self.refuse("builtins.frozenset")  # not on PyTorch's weights-only allow-list
            return frozenset(rest)
        if code in (_DICT, _ODICT):
            meta = None
            if head.payload == b"m":
                meta, rest = rest[0], rest[1:]
            if len(rest) % 2:
                raise ValueError("odd number of entries in a dict")
            out = (OrderedDict if code == _ODICT else dict)(zip(rest[0::2], rest[1::2]))
            if meta is not None:
                out._metadata = meta
            return out
        if code == _TENSOR:
            dtype_name, shape, requires_grad, location, data = rest[:5]
            if _serialization_extras.skipping() and isinstance(data, bytes):  # skip_data: the bytes are not read
                data = bytes(len(data))
            t = self.placer(_array(data, _dtype._lookup(dtype_name).np, shape), location, requires_grad)
            if "parameter" in rest[5:]:
                from .nn.parameter import Parameter
                t = Parameter(t, requires_grad=bool(requires_grad))
            strides = [tuple(int(s) for s in f) for f in rest[5:] if isinstance(f, list)]
            if strides and len(strides[0]) == t.ndim:  # the saved tensor's dense strides
                t._layout = (tuple(t.shape), strides[0], 0)
            self.memo.append(t)
            return t
        if code == _NDARRAY:
            self.refuse_numpy()
            dt, shape, data = rest
            return _array(data, np.dtype(dt), shape).copy()
        if code == _NPSCALAR:
            self.refuse_numpy()
            dt, data = rest
            return np.frombuffer(data, dtype=np.dtype(dt))[0]
        if code == _PICKLED:
            tensors, data = rest
            return _Pickled(tensors, data)
        raise ValueError(f"unknown tag {code}")


def _array(data, npdt, shape):
    shape = tuple(int(s) for s in shape)
    n = int(np.prod(shape, dtype=np.int64))
    if len(data) != n * npdt.itemsize:
        raise ValueError(f"tensor data holds {len(data)} bytes; shape {list(shape)} of {npdt} needs "
                         f"{n * npdt.itemsize}")
    arr = np.frombuffer(data, dtype=npdt).reshape(shape)
    if sys.byteorder == "big" and npdt.itemsize > 1:
        arr = arr.byteswap()
    return arr


_WeightsOnlyError = _safe_globals.WeightsOnlyError


class _Pickled:
    """A pickled record read but not yet unpickled (so that unpickling errors reach the caller unchanged)."""

    __slots__ = ("tensors", "data")

    def __init__(self, tensors, data):
        if not isinstance(data, bytes) or not isinstance(tensors, list):
            raise ValueError("malformed pickled record")
        self.tensors = tensors
        self.data = data


class _EmptyFileError(EOFError, RuntimeError):
    """Loading from an empty file or a stream at its end (PyTorch raises EOFError: its base comes first, so the
    error's first builtin class is PyTorch's; a RuntimeError too, as torchish documents its load errors)."""


class _UnknownFormatError(pickle.UnpicklingError, RuntimeError):
    """Bytes in no format torchish knows (PyTorch's unpickler raises UnpicklingError, first; and RuntimeError)."""


def _decode(blob: bytes, placer, weights_only=True, pickle_module=None):
    n_head = len(MAGIC) + _HEADER.size
    if len(blob) < n_head:
        raise RuntimeError("torchish.load: the file is truncated (incomplete header)")
    length, crc = _HEADER.unpack_from(blob, len(MAGIC))
    payload = memoryview(blob)[n_head:]
    if len(payload) != length:
        raise RuntimeError(f"torchish.load: the file is truncated or corrupted (payload of {len(payload)} bytes, "
                           f"expected {length})")
    if zlib.crc32(payload) != crc:
        raise RuntimeError("torchish.load: the file is corrupted (checksum mismatch)")
    dec = _Decoder(placer, weights_only)
    try:
        out = msgpack.unpackb(payload, ext_hook=dec.ext, list_hook=dec.array, raw=False, strict_map_key=False,
                              use_list=True)
    except (RuntimeError, _WeightsOnlyError):
        raise
    except Exception as e:  # a well-formed checksum over a malformed payload: report it clearly
        raise RuntimeError(f"torchish.load: the file is corrupted ({type(e).__name__}: {e})") from None
    if isinstance(out, _Pickled):
        return _pickled.loads(out.data, out.tensors, weights_only, pickle_module)
    return out


def _pickled_part(blob: bytes):
    """The pickle inside a torchish record, or None when the record holds no pickle (nothing is loaded)."""
    n_head = len(MAGIC) + _HEADER.size
    found = []

    def array(items):
        if items and isinstance(items[0], _Marker) and items[0].code == _PICKLED:
            found.append(items[2])
        return items

    msgpack.unpackb(memoryview(blob)[n_head:], ext_hook=_Marker, list_hook=array, raw=False, strict_map_key=False)
    return found[0] if found else None


# ----------------------------------------------------------------------------------------------------------------
# devices


_NO_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
            "storages to the CPU.")


def _restore_target(location):
    """The JAX device a ``map_location`` string or device names, with PyTorch's errors for a name it does not know
    and for CUDA on a machine without it (raised when a storage is restored, as PyTorch's)."""
    from ._pt_reader import MapLocationError
    try:
        dev = location if isinstance(location, _device.device) else _device.device(location)
    except (RuntimeError, TypeError):
        raise MapLocationError("don't know how to restore data location of torch.storage.UntypedStorage (tagged "
                               f"with {location})") from None
    try:
        return _device.to_jax(dev)
    except Exception:
        if dev.type == "cuda":
            raise MapLocationError(_NO_CUDA) from None
        raise


def _placer(map_location):
    """``place(numpy array, saved location, requires_grad) -> Tensor`` honouring ``map_location``."""

    def default_target(location):
        try:
            return _device.to_jax(location)
        except Exception:  # saved on an accelerator this machine lacks: the default device
            return _device.to_jax(_device.get_default_device())

    def place(arr, location, requires_grad):
        loc = str(location)
        if isinstance(map_location, dict):
            target = default_target(str(map_location.get(loc, loc)))
        elif map_location is None or callable(map_location):
            target = default_target(loc)
        else:
            target = _restore_target(map_location)
        t = Tensor._make(jax.device_put(arr, target))
        if callable(map_location):
            res = map_location(t, loc)
            if isinstance(res, Tensor):
                t = Tensor._make(res._d)
            elif res is not None:
                t = Tensor._make(jax.device_put(arr, _device.to_jax(res)))
        if requires_grad:
            t.requires_grad_(True)
        return t

    return place


# ----------------------------------------------------------------------------------------------------------------
# files


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def _write_chunks(fh, data):
    view = memoryview(data)
    for i in range(0, len(view), _CHUNK):
        fh.write(view[i:i + _CHUNK])


def _open_temp(path):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    return os.fdopen(fd, "wb"), tmp


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, fsync, then ``os.replace``."""
    path = os.fsdecode(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(path):  # (before the temporary file: os.replace would only fail after writing it)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    fh, tmp = _open_temp(path)
    try:
        with fh:
            _write_chunks(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Save ``obj`` to ``f``: a path (written atomically; a ``.safetensors`` suffix writes safetensors) or a
    writable binary file, in PyTorch's zip format, so that ``torch.load`` reads it too.

    Tensors (sharing storages as they share them here), dtypes, sizes, devices, Python scalars and containers are
    pickled as ``torch.save`` pickles them, with ``pickle_module`` and ``pickle_protocol`` (default 2); anything else
    (a whole ``nn.Module``, an optimizer, a dataclass) is pickled with its torchish class path, which
    ``torchish.load(..., weights_only=False)`` reads back. ``_use_new_zipfile_serialization=False`` writes
    torchish's own (pre-zip) format instead, which only torchish reads.

    Raises:
        pickle.PicklingError, AttributeError, TypeError: as pickle raises for an object it cannot pickle (a lambda
            hook, a local class, a module object); the file at a path is left as it was.
        RuntimeError: two tensors view one storage as different dtypes (PyTorch's "Cannot save multiple tensors or
            storages that view the same data as different types").
    """
    if _is_path(f) and is_safetensors_path(f):
        save_safetensors(_flat_tensors(obj), f)
        return
    if _use_new_zipfile_serialization:
        from . import _pt_writer
        name = _pt_writer.archive_name_for(f if _is_path(f) else None)
        data = _pt_writer.dumps(obj, name, pickle_module, pickle_protocol, _disable_byteorder_record)
    else:
        data = _encode(obj, pickle_module, pickle_protocol)
    if _is_path(f):
        try:
            write_atomic(f, data)
        except IsADirectoryError as e:
            if not _use_new_zipfile_serialization:
                raise
            # PyTorch's zip writer fails to open the path (its pickle-format writer raises the OSError of open())
            raise RuntimeError("[enforce fail at inline_container.cc:747] . open file failed with strerror: "
                               f"{e.strerror}") from None
    elif hasattr(f, "write"):
        _write_chunks(f, data)
        if hasattr(f, "flush"):
            f.flush()
    else:
        raise AttributeError(f"torchish.save: expected a path or a writable file object, got {type(f).__name__}")


def _flat_tensors(obj):
    if not isinstance(obj, dict) or not all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()):
        raise TypeError("saving to a .safetensors file needs a dict of str -> Tensor (a state_dict)")
    return obj


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what :func:`save` wrote, a PyTorch zip checkpoint, or a safetensors file.

    Args:
        f: a path or a readable binary file object.
        map_location: None (each tensor where it was saved when that device exists, else the default device), a
            device or string (everything there), a dict mapping saved locations to new ones, or a callable
            ``(tensor, saved_location) -> Tensor or device or None``.
        pickle_module: the module whose ``Unpickler`` reads pickled objects (only with ``weights_only=False``).
        weights_only: True (the default unless ``pickle_module`` is given) loads only what PyTorch's weights-only
            unpickler allows (tensors, dtypes, devices, sizes, plain containers, ``OrderedDict``, ``Counter``,
            ``bytearray``, complex) and the globals marked safe (:func:`add_safe_globals`, :class:`safe_globals`);
            it refuses anything else (numpy values, frozensets, slices, custom classes) before it runs. False
            unpickles everything: only for files you trust.

    Returns:
        The saved object; tensors come back with their ``requires_grad``, Parameters as Parameters.

    Raises:
        RuntimeError: the file is truncated, corrupted or in no format torchish knows (also an EOFError when it is
            empty, an UnpicklingError when it is no format at all, as PyTorch raises).
        pickle.UnpicklingError: ``weights_only`` is not False and the file names a global it does not allow
            (PyTorch's "Weights only load failed..." message).
    """
    if weights_only is None:
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    path = os.fsdecode(f) if _is_path(f) else None
    if path is not None:
        with open(path, "rb") as fh:
            blob = _read_record(fh)
    elif hasattr(f, "read"):
        blob = _read_record(f)
    else:
        raise AttributeError(f"torchish.load: expected a path or a readable file object, got {type(f).__name__}")
    placer = _placer(map_location)
    if mmap and path is None and (blob.startswith(MAGIC) or blob.startswith(b"PK\x03\x04")):
        raise ValueError("f must be a file path in order to use the mmap argument")  # (as PyTorch's zip files)
    if blob.startswith(MAGIC):
        return _decode(blob, placer, weights_only, pickle_module)
    if blob.startswith(b"PK\x03\x04") or blob.startswith(b"PK\x05\x06"):
        from ._pt_reader import read_torch_zip
        return read_torch_zip(blob, placer, weights_only)
    if (path is not None and is_safetensors_path(path)) or _looks_like_safetensors(blob):
        return load_safetensors(blob, map_location=map_location)
    if not blob:
        raise _EmptyFileError("torchish.load: the file is empty")
    if MAGIC.startswith(blob) or b"PK\x03\x04".startswith(blob):
        raise RuntimeError("torchish.load: the file is truncated (incomplete header)")
    # anything else may be a bare pickle (PyTorch's legacy format, or a hostile file): the restricted unpickler
    # identifies it without running it, and always raises
    from ._pt_reader import read_legacy_pickle
    try:
        return read_legacy_pickle(blob)
    except pickle.UnpicklingError:
        raise
    except RuntimeError as e:
        raise _UnknownFormatError(str(e)) from None


def _read_record(fh) -> bytes:
    """The bytes of one saved object: a torchish record ends where its header says, a zip archive at its end of
    central directory (so several objects saved one after another into one stream load one by one; the stream is
    left after the one read when it can seek); any other format is the rest of the file."""
    head = fh.read(len(MAGIC) + _HEADER.size)
    if len(head) == len(MAGIC) + _HEADER.size and head.startswith(MAGIC):
        (length, _) = _HEADER.unpack_from(head, len(MAGIC))
        return head + fh.read(length)
    blob = head + fh.read()
    if blob.startswith(b"PK\x03\x04"):
        end = _zip_end(blob)
        if end < len(blob) and getattr(fh, "seekable", lambda: False)():
            fh.seek(end - len(blob), os.SEEK_CUR)
            blob = blob[:end]
    return blob


_EOCD = struct.Struct("<IHHHHIIH")  # zip's end of central directory record


def _zip_end(blob: bytes) -> int:
    """Where the zip archive at the start of ``blob`` ends: after the first end-of-central-directory record whose
    central directory lies right before it (zip64's through its locator); ``len(blob)`` when none does."""
    pos = blob.find(b"PK\x05\x06")
    while pos != -1 and pos + _EOCD.size <= len(blob):
        *_, cd_size, cd_offset, comment = _EOCD.unpack_from(blob, pos)
        cd_end = pos
        if 0xFFFFFFFF in (cd_size, cd_offset) and pos >= 20 and blob[pos - 20:pos - 16] == b"PK\x06\x07":
            (cd_end,) = struct.unpack_from("<Q", blob, pos - 12)  # the zip64 end record's offset
            if cd_end + 56 <= pos and blob[cd_end:cd_end + 4] == b"PK\x06\x06":
                cd_size, cd_offset = struct.unpack_from("<QQ", blob, cd_end + 40)
        end = pos + _EOCD.size + comment
        central = cd_size == 0 or blob[cd_offset:cd_offset + 4] == b"PK\x01\x02"  # a directory entry starts there
        if cd_offset + cd_size == cd_end and end <= len(blob) and central:
            return end
        pos = blob.find(b"PK\x05\x06", pos + 1)
    return len(blob)


def _looks_like_safetensors(blob):
    if len(blob) < 10:
        return False
    (n,) = struct.unpack_from("<Q", blob)
    return 0 < n <= len(blob) - 8 and blob[8:9] == b"{"


__all__ = ["save", "load", "save_safetensors", "load_safetensors", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "safe_globals", "DEFAULT_PROTOCOL", "get_unsafe_globals_in_checkpoint", "skip_data",
           "LoadEndianness", "SourceChangeWarning", "default_restore_location", "location_tag", "register_package",
           "get_crc32_options", "set_crc32_options", "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options", "check_module_version_greater_or_equal",
           "validate_cuda_device", "UNSAFE_MESSAGE", "MAGIC_NUMBER", "PROTOCOL_VERSION",
           "STORAGE_KEY_SEPARATOR", "LONG_SIZE", "INT_SIZE", "SHORT_SIZE"]
