"""The safetensors format, read and written directly (no dependency): an 8-byte little-endian header length, a
JSON header ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}`` padded with
spaces to 8 bytes, then the tensors' raw little-endian bytes, contiguous and without holes."""
from __future__ import annotations

import json
import os
import struct
import sys
from collections import OrderedDict

import jax
import numpy as np

from . import _device, _dtype
from ._tensor import Tensor

_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "float16": "F16",
          "bfloat16": "BF16", "int32": "I32", "uint32": "U32", "float32": "F32", "float64": "F64", "int64": "I64",
          "uint64": "U64", "complex64": "C64", "complex128": "C128", "float8_e4m3fn": "F8_E4M3",
          "float8_e5m2": "F8_E5M2", "float8_e8m0fnu": "F8_E8M0"}
_NAMES = {v: k for k, v in _CODES.items()}


def is_safetensors_path(f) -> bool:
    return os.fsdecode(f).endswith(".safetensors")


def _serialize(tensors, metadata):
    header = {}
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safetensors metadata must be a dict of str -> str")
        header["__metadata__"] = dict(metadata)
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise TypeError(f"save_safetensors needs a dict of str -> Tensor; got {type(name).__name__} -> "
                            f"{type(t).__name__}")
        arr = np.asarray(t._concrete(), order="C")
        if sys.byteorder == "big" and arr.dtype.itemsize > 1:
            arr = arr.byteswap()
        data = arr.tobytes()
        header[name] = {"dtype": _CODES[t.dtype.name], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return b"".join([struct.pack("<Q", len(head)), head] + blobs)


def save_safetensors(tensors, filename, metadata=None) -> None:
    """Write ``tensors`` (a dict of str -> Tensor) as safetensors to a path (atomically) or a binary file."""
    data = _serialize(tensors, metadata)
    if isinstance(filename, (str, bytes, os.PathLike)):
        from .serialization import write_atomic
        write_atomic(filename, data)
    else:
        filename.write(data)


def _bad(msg):
    return RuntimeError(f"load_safetensors: invalid or truncated safetensors data: {msg}")


def _parse(blob):
    if len(blob) < 8:
        raise _bad("shorter than its 8-byte header length")
    (n,) = struct.unpack_from("<Q", blob)
    if n > len(blob) - 8:
        raise _bad(f"header of {n} bytes but only {len(blob) - 8} bytes follow")
    try:
        header = json.loads(bytes(blob[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _bad(f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad("the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    body = memoryview(blob)[8 + n:]
    entries = []
    for name, info in header.items():
        try:
            npdt = _dtype._lookup(_NAMES[info["dtype"]]).np
            shape = tuple(int(s) for s in info["shape"])
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as e:
            raise _bad(f"entry {name!r} is malformed ({e!r})") from None
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * npdt.itemsize or begin < 0 or end > len(body):
            raise _bad(f"entry {name!r}: offsets [{begin}, {end}) do not fit shape {list(shape)} of "
                       f"{info['dtype']} in a buffer of {len(body)} bytes")
        entries.append((begin, end, name, npdt, shape))
    entries.sort()
    pos = 0
    for begin, end, name, _, _ in entries:
        if begin != pos:
            raise _bad(f"entry {name!r} starts at {begin}, expected {pos} (overlap or hole)")
        pos = end
    if pos != len(body):
        raise _bad(f"{len(body) - pos} trailing bytes after the last tensor")
    return entries, body, metadata


def load_safetensors(f, map_location=None, device=None):
    """Read safetensors from a path, a binary file object or bytes; returns an OrderedDict name -> Tensor in the
    file's order of names (sorted)."""
    if isinstance(f, (bytes, bytearray, memoryview)):
        blob = f
    elif isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            blob = fh.read()
    else:
        blob = f.read()
    entries, body, _ = _parse(blob)
    where = device if device is not None else map_location
    target = _device.to_jax(where if isinstance(where, (str, _device.device)) else _device.get_default_device())
    out = OrderedDict()
    for begin, end, name, npdt, shape in sorted(entries, key=lambda e: e[2]):
        arr = np.frombuffer(body[begin:end], dtype=npdt).reshape(shape)
        if sys.byteorder == "big" and npdt.itemsize > 1:
            arr = arr.byteswap()
        out[name] = Tensor._make(jax.device_put(arr, target))
    return out


def safetensors_metadata(f):
    """The ``__metadata__`` dict of a safetensors file (or None)."""
    if isinstance(f, (bytes, bytearray)):
        return _parse(f)[2]
    with open(f, "rb") as fh:
        return _parse(fh.read())[2]
