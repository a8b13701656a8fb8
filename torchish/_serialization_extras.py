"""The rest of PyTorch's ``torch.serialization`` namespace: :class:`skip_data`, the checkpoint scan
:func:`get_unsafe_globals_in_checkpoint`, location tags and the restore-location registry, and the load/save
options (CRC, mmap, byte order) PyTorch lets scripts set.

Example:
    >>> import io, torchish
    >>> buf = io.BytesIO()
    >>> with torchish.serialization.skip_data():
    ...     torchish.save(torchish.ones(2), buf)
    >>> _ = buf.seek(0)
    >>> torchish.load(buf)
    tensor([0., 0.])
"""
from __future__ import annotations

import enum
import os
import threading

from . import _device

_TLS = threading.local()  # skip_data is per thread, as PyTorch's

# PyTorch's constants of its legacy format, kept for scripts that read them
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
STORAGE_KEY_SEPARATOR = ","
LONG_SIZE, INT_SIZE, SHORT_SIZE = 8, 4, 2
UNSAFE_MESSAGE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from "
                  "`False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
                  "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
                  "trusted source.")


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True) -> bool:
    """Whether ``module.__version__`` (``"x.y.z"``) is at least ``req_version_tuple``, as PyTorch checks it."""
    try:
        fields = module.__version__.split(".")
        version = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed '{module.__version__}' and cannot be "
                   f"compared with tuple {req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        import warnings
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        return True


def validate_cuda_device(location) -> int:
    """The index of the CUDA device ``location`` names; RuntimeError when this machine has no such device."""
    dev = _device.device(location)
    if dev.type != "cuda":
        raise RuntimeError(f"expected a cuda device, got {location!r}")
    try:
        _device.to_jax(dev)
    except Exception:
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.") from None
    return dev.index or 0


class SourceChangeWarning(Warning):
    """PyTorch warns with this when a pickled module's source changed; kept for code that filters it."""


class LoadEndianness(enum.Enum):
    """The byte order assumed for a PyTorch checkpoint that does not record one."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_OPTIONS = {"crc32": True, "mmap_flags": None, "endianness": None}


def get_crc32_options() -> bool:
    """Whether saves compute checksums (torchish's records always carry one; the flag is kept for parity)."""
    return _OPTIONS["crc32"]


def set_crc32_options(compute_crc32: bool) -> None:
    _OPTIONS["crc32"] = bool(compute_crc32)


def get_default_mmap_options():
    """The mmap flags ``load(mmap=True)`` would use (torchish reads files whole; kept for parity)."""
    return _OPTIONS["mmap_flags"]


def set_default_mmap_options(flags) -> None:
    _OPTIONS["mmap_flags"] = flags


def get_default_load_endianness():
    """The byte order a PyTorch checkpoint without a ``byteorder`` record is read in (None: little-endian)."""
    return _OPTIONS["endianness"]


def set_default_load_endianness(endianness) -> None:
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _OPTIONS["endianness"] = endianness


def checkpoint_byteorder_default() -> str:
    import sys
    choice = _OPTIONS["endianness"]
    if choice is LoadEndianness.BIG:
        return "big"
    if choice is LoadEndianness.NATIVE:
        return sys.byteorder
    return "little"


class skip_data:
    """Context manager: ``save`` writes each tensor's bytes as zeros and ``load`` leaves them unread (zeros), so
    the structure of a checkpoint can be written or read without its data.

    Args:
        materialize_fake_tensors: accepted for PyTorch's signature (torchish has no fake tensors).
    """

    def __init__(self, materialize_fake_tensors: bool = False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._before = skipping()
        _TLS.skip = True
        return self

    def __exit__(self, *exc):
        _TLS.skip = self._before


def skipping() -> bool:
    """Whether :class:`skip_data` is active in this thread."""
    return getattr(_TLS, "skip", False)


# ----------------------------------------------------------------------------------------------------------------
# locations


def _cpu_tag(obj):
    return "cpu" if _device_of(obj).type == "cpu" else None


def _accelerator_tag(obj):
    dev = _device_of(obj)
    return None if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


def _device_of(obj):
    dev = getattr(obj, "device", None)
    if dev is None:
        raise RuntimeError(f"don't know how to determine data location of {type(obj).__module__}."
                           f"{type(obj).__qualname__}")
    return dev if isinstance(dev, _device.device) else _device.device(str(dev))


def _restore(obj, location):
    try:
        target = _device.device(location)
        _device.to_jax(target)
    except Exception:  # a location this machine does not have: let another handler (or the error) answer
        return None
    return obj.to(target) if hasattr(obj, "to") else obj


_REGISTRY = [(10, _cpu_tag, _restore), (20, _accelerator_tag, _restore)]


def register_package(priority: int, tagger, deserializer) -> None:
    """Register ``tagger(obj) -> location or None`` and ``deserializer(obj, location) -> obj or None``, tried in
    priority order by :func:`location_tag` and :func:`default_restore_location`."""
    _REGISTRY.append((priority, tagger, deserializer))
    _REGISTRY.sort(key=lambda entry: entry[0])


def location_tag(storage) -> str:
    """The location string (``"cpu"``, ``"cuda:0"``) of a tensor (torchish has no separate storages)."""
    for _, tagger, _ in _REGISTRY:
        tag = tagger(storage)
        if tag:
            return tag
    raise RuntimeError(f"don't know how to determine data location of {type(storage).__qualname__}")


def default_restore_location(storage, location: str):
    """``storage`` (a tensor) moved to ``location`` by the first registered deserializer that answers."""
    for _, _, restore in _REGISTRY:
        out = restore(storage, location)
        if out is not None:
            return out
    raise RuntimeError(f"don't know how to restore data location of {type(storage).__qualname__} (tagged with "
                       f"{location})")


# ----------------------------------------------------------------------------------------------------------------
# scanning


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The globals a checkpoint (torchish's or PyTorch's zip) names that ``load(weights_only=True)`` would refuse,
    found without loading it; those PyTorch allows by default or marked safe are left out.

    Raises:
        ValueError: ``f`` is not a checkpoint saved by ``save`` (nor a PyTorch zip checkpoint).
    """
    from . import _safe_globals, serialization
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(os.fsdecode(f), "rb") as fh:
            blob = fh.read()
    else:
        blob = f.read()
    if blob.startswith(serialization.MAGIC):
        data = serialization._pickled_part(blob)
        found = [] if data is None else _safe_globals.globals_in_pickle(data)
    elif blob.startswith(b"PK\x03\x04"):
        from ._pt_reader import data_pickle
        found = _safe_globals.globals_in_pickle(data_pickle(blob))
    else:
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    from ._pt_reader import torch_allowed_names
    safe = set(_safe_globals.DEFAULT_ALLOWED) | set(_safe_globals.allowed_user_globals()) | torch_allowed_names()
    return [name for name in found if name not in safe]
