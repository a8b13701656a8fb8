"""Reading PyTorch's zip checkpoints (``torch.save`` since 1.6) without PyTorch and without running pickled code.

A checkpoint is a zip archive holding ``<name>/data.pkl`` (a pickle of the saved object in which each tensor is a
call to ``torch._utils._rebuild_tensor_v2`` on a *persistent id* naming a storage) and ``<name>/data/<key>`` (the
raw bytes of each storage). :class:`RestrictedUnpickler` resolves only a fixed table of globals — the tensor
rebuild functions, storage types, dtypes, ``OrderedDict`` and a few harmless builtins — to torchish's own builders;
any other global (``os.system``, ``builtins.eval``...) raises ``pickle.UnpicklingError`` before anything runs.
"""
from __future__ import annotations

import io
import pickle
import struct
import sys
import zipfile
import zlib

import numpy as np

from . import _device, _dtype, _safe_globals
from ._tensor import Size, Tensor

_STORAGES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16", "BFloat16Storage": "bfloat16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8",
    "ByteStorage": "uint8", "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "UInt16Storage": "uint16", "UInt32Storage": "uint32",
    "UInt64Storage": "uint64", "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
}
_QUANTIZED = ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")  # (torchish._quantized's dtypes)
_DTYPE_NAMES = {d.name for d in _dtype.ALL} | {"half", "float", "double", "long", "int", "short", "cfloat", "cdouble",
                                               *_QUANTIZED}
_QSCHEMES = ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
             "per_channel_affine_float_qparams")


# what zipfile raises on a truncated or corrupted archive (a bad CRC, a header pointing outside the file)
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error, zlib.error)


class Refused(pickle.UnpicklingError):
    """A checkpoint's pickle asked for something torchish does not allow (a foreign global, a storage outside the
    archive, a tensor reaching outside its storage). Other pickle errors mean a corrupted file (RuntimeError)."""


class MapLocationError(RuntimeError):
    """``map_location`` names a location PyTorch cannot restore storages to (an unknown name, CUDA without CUDA)."""


class _StorageType:
    """Stands for ``torch.FloatStorage`` and friends inside the pickle: only its dtype matters."""

    def __init__(self, dtype_name):
        self.dtype = _dtype._lookup(dtype_name)


class _TypeMarker:
    """Stands for ``torch.Tensor``/``torch.nn.Parameter`` as an argument of ``_rebuild_from_type_v2``; it cannot be
    instantiated from a pickle."""

    def __new__(cls, *args, **kwargs):
        raise Refused("tensor types may only appear as an argument of _rebuild_from_type_v2")


class _Storage:
    __slots__ = ("array", "location")

    def __init__(self, array, location):
        self.array = array
        self.location = location


class _Builders:
    """The torchish counterparts of the functions PyTorch pickles call."""

    def __init__(self, placer):
        self.placer = placer
        self.storages = {}  # id(_Storage) -> [the _Storage, its first tensor if it spans it, its hidden base]

    def rebuild_tensor(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
        if not isinstance(storage, _Storage):
            raise Refused("_rebuild_tensor_v2 expects a storage as its first argument")
        size, stride, offset = tuple(int(s) for s in size), tuple(int(s) for s in stride), int(storage_offset)
        arr = _strided(storage.array, offset, size, stride)
        bits = [k for k in ("conj", "neg") if isinstance(metadata, dict) and metadata.get(k)]
        t = self.placer(arr, storage.location, bool(requires_grad) and not bits)
        from .ops.inplace import _dense, contiguous_strides
        if tuple(t.shape) == size:  # (else a map_location function reshaped it: it owns its storage)
            dense = _dense(size, stride)
            if stride != contiguous_strides(size) and dense:
                t._layout = (size, stride, 0)  # a transposed or channels-last tensor keeps its strides
            self._share(t, storage, offset, size, stride, dense)
        if bits:  # PyTorch's conjugate / negative bits: a conjugate view of the storage's values, or their negation
            from .autograd.grad_mode import no_grad
            with no_grad():
                t = t.conj() if "conj" in bits else t.neg()
            if requires_grad:
                t.requires_grad_(True)
        return t

    def _share(self, t, storage, offset, size, stride, dense):
        """The tensors of one storage alias it as PyTorch's do (a write through one shows in the others; storage
        offsets and sizes are the saved ones): a storage that one tensor spans densely is that tensor's own until
        another tensor of it comes; then, or for a tensor that does not span its storage (a saved slice), each
        becomes an ``as_strided`` view of one hidden base holding the storage, as ``empty_strided`` makes them."""
        entry = self.storages.get(id(storage))
        if entry is None:
            entry = self.storages[id(storage)] = [storage, None, None]
            if offset == 0 and dense and storage.array.size == int(np.prod(size)):
                entry[1] = t
                return
        if entry[2] is None:
            from .ops.inplace import hidden_storage
            store = entry[2] = hidden_storage(self.placer(storage.array, storage.location, False))
            first = entry[1]
            if first is not None:
                _view_of(first, store, 0, tuple(first.shape), first.stride())
        _view_of(t, entry[2], offset, size, stride)


    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype=None,
                          metadata=None):
        if isinstance(dtype, _dtype.dtype) and isinstance(storage, _Storage) and storage.array.dtype != dtype.np:
            flat = storage.array  # PyTorch saves uint16/32/64 tensors on an UntypedStorage (bytes)
            if flat.nbytes % dtype.itemsize:
                raise Refused(f"a storage of {flat.nbytes} bytes cannot hold elements of {dtype}")
            storage = _Storage(flat.view(dtype.np), storage.location)
        return self.rebuild_tensor(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata)

    def rebuild_parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if not isinstance(data, Tensor):
            raise Refused("_rebuild_parameter expects a tensor")
        from .nn.parameter import Parameter
        p = Parameter(data, requires_grad=bool(requires_grad))
        if data._view is not None and p._view is None:  # (a view of its storage, see _share: so is the parameter)
            p._view, p._vc, p._layout = data._view, data._vc, data._layout
            data._view[0]._views.add(p)
        return p

    def rebuild_from_type(self, func, new_type, args, state):
        if not callable(func) or func not in (self.rebuild_tensor, self.rebuild_tensor_v3, self.rebuild_parameter):
            raise Refused("_rebuild_from_type_v2 may only wrap a tensor rebuild function")
        ret = func(*args)
        if isinstance(new_type, type) and issubclass(new_type, Tensor) and type(ret) is not new_type:
            ret = ret.as_subclass(new_type)  # (a Tensor subclass, allowed by find_class: weights_only=False)
        if isinstance(state, tuple):  # (PyTorch's _set_obj_state: (dict, slots))
            state = {**(state[0] or {}), **(state[1] or {})}
        for key, value in (state or {}).items():
            if isinstance(key, str) and not key.startswith("_"):  # (torchish's own fields are not the file's)
                setattr(ret, key, value)
        return ret


def _view_of(t, store, offset, size, stride):
    """Make ``t`` (a tensor holding those values) the ``as_strided`` view of ``store`` at that geometry."""
    from .ops.strided import _AS_STRIDED
    t._attach_view(store, _AS_STRIDED, (("size", size), ("stride", stride), ("offset", offset)))
    t._layout = None


def _strided(flat, offset, size, stride):
    """``as_strided`` over a storage with every element checked to lie inside it (no out-of-bounds reads)."""
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0 or len(size) != len(stride):
        raise Refused(f"invalid tensor geometry: offset {offset}, size {size}, stride {stride}")
    if 0 in size:
        return np.zeros(size, flat.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= flat.size:
        raise Refused(f"tensor of size {list(size)} with stride {list(stride)} at offset {offset} "
                                     f"reaches past its storage of {flat.size} elements")
    f8 = flat.dtype if flat.dtype in _dtype.FLOAT8_NP else None
    if f8 is not None:  # (numpy's as_strided cannot describe some ml_dtypes types: their bytes)
        flat = flat.view(np.uint8)
    item = flat.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(flat[offset:], shape=size, strides=tuple(s * item for s in stride),
                                           writeable=False)
    return np.array(view) if f8 is None else np.array(view).view(f8)


class RestrictedUnpickler(pickle.Unpickler):
    """A pickle reader that knows tensors, storages, dtypes and PyTorch's weights-only allow-list, plus the user's
    safe globals; with ``weights_only=False`` also any other global outside ``torch`` (imported as pickle does)
    and ``torch.X`` names that torchish has as ``torchish.X``.

    Args:
        file: the pickle stream.
        builders: the tensor builders (:class:`_Builders`).
        load_storage: ``(dtype, key, location, numel) -> _Storage`` for persistent ids.
    """

    def __init__(self, file, builders, load_storage, weights_only=True):
        super().__init__(file)
        self.builders = builders
        self.load_storage = load_storage
        b = builders
        self.weights_only = weights_only
        self.table = {
            ("torch._utils", "_rebuild_tensor_v2"): b.rebuild_tensor,
            ("torch._utils", "_rebuild_tensor_v3"): b.rebuild_tensor_v3,
            ("torch._utils", "_rebuild_parameter"): b.rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): b.rebuild_parameter,
            ("torch._tensor", "_rebuild_from_type_v2"): b.rebuild_from_type,
            ("torch", "Tensor"): _TypeMarker, ("torch.nn.parameter", "Parameter"): _TypeMarker,
            ("torch", "Size"): Size,
            ("torch", "device"): _device.device,
            ("torch.serialization", "_get_layout"): _get_layout,
            ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse,
        }
        if not weights_only:  # numpy arrays and scalars, which PyTorch loads only with weights_only=False
            for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
                self.table[(mod, "_reconstruct")] = _np_reconstruct
                self.table[(mod, "scalar")] = _numpy_scalar
            self.table[("numpy", "ndarray")] = np.ndarray
            self.table[("numpy", "dtype")] = np.dtype

    def find_class(self, module, name):
        obj = self.table.get((module, name))
        if obj is not None:
            return obj
        if module == "numpy.dtypes" and name.endswith("DType") and (("numpy", "dtype") in self.table):
            return getattr(np.dtypes, name)
        if module == "torch" and name in _STORAGES:
            return _StorageType(_STORAGES[name])
        if (module, name) == ("torch.storage", "UntypedStorage"):
            return _StorageType("uint8")
        if module == "torch" and name in _DTYPE_NAMES:
            return _dtype._lookup(name)  # (torchish._quantized registered the quantized dtypes' names)
        if module == "torch" and name in _QSCHEMES:
            from . import _quantized
            return getattr(_quantized, name)
        if (module, name) == ("torch._utils", "_rebuild_qtensor"):  # a quantized tensor: its integers and qparams
            from ._quantized import rebuild_qtensor
            rebuild = self.builders.rebuild_tensor
            return lambda *args: rebuild_qtensor(rebuild, *args)
        if self.weights_only:
            return _safe_globals.resolve_weights_only(module, name)
        qualified = _safe_globals.full_name(module, name)
        user = _safe_globals.allowed_user_globals().get(qualified)
        if user is not None:
            return user
        if qualified.split(".")[0] == "torch":
            return _torchish_counterpart(qualified)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str)):
            raise Refused(f"unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid
        return self.load_storage(stype.dtype, key, str(location), int(numel))


def _torchish_counterpart(qualified):
    """``torch.nn.modules.linear.Linear`` -> ``torchish.nn.modules.linear.Linear`` (a whole module saved by
    PyTorch, loaded with ``weights_only=False``), or UnpicklingError when torchish has no such object."""
    import importlib
    module, _, name = qualified.rpartition(".")
    try:
        obj = importlib.import_module("torchish" + module[len("torch"):])
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise Refused(f"torchish.load cannot load the PyTorch global '{qualified}': torchish has no counterpart "
                      "of it (save the state_dict instead)") from None
    return obj


def _get_layout(name):
    """``torch.serialization._get_layout``: the layout PyTorch pickles as its name (``"torch.sparse_coo"``)."""
    from . import _layout
    layout = getattr(_layout, name[len("torch."):], None) if isinstance(name, str) and name.startswith("torch.") \
        else None
    if not isinstance(layout, _layout.layout):
        raise Refused(f"unknown layout {name!r}")
    return layout


def _rebuild_sparse(layout, data):
    """``torch._utils._rebuild_sparse_tensor``: a sparse COO or CSR tensor from its entries' tensors."""
    from . import _layout
    if not isinstance(layout, _layout.layout) or not isinstance(data, tuple) \
            or not all(isinstance(x, (Tensor, Size, bool, type(None))) for x in data):
        raise Refused("_rebuild_sparse_tensor expects a layout and a tuple of tensors, a size and a flag")
    from .sparse import rebuild_sparse
    return rebuild_sparse(layout, data)


def torch_allowed_names() -> set:
    """The ``torch.*`` globals a weights-only load of a PyTorch checkpoint allows (for the checkpoint scan)."""
    names = {"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
             "torch._utils._rebuild_parameter_with_state", "torch._tensor._rebuild_from_type_v2", "torch.Tensor",
             "torch.nn.parameter.Parameter", "torch.Size", "torch.device", "torch._utils._rebuild_qtensor",
             "torch._utils._rebuild_sparse_tensor", "torch.serialization._get_layout"}
    return names | {f"torch.{n}" for n in _QSCHEMES} | {f"torch.{n}" for n in _STORAGES} | {f"torch.{n}" for n in _DTYPE_NAMES} | {
        "torch.storage.UntypedStorage"}


_np_reconstruct = (np._core if hasattr(np, "_core") else np.core).multiarray._reconstruct


def _numpy_scalar(dtype, data=None):
    """``numpy.core.multiarray.scalar``: a numpy scalar of a plain (non-object) dtype from its bytes."""
    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes):
        raise Refused("only numpy scalars of plain dtypes can be loaded")
    return np.frombuffer(data, dtype=dtype)[0]


def _open_zip(blob: bytes):
    """``(zipfile, names, path of data.pkl)`` of a PyTorch checkpoint."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(blob))
        names = zf.namelist()
    except _ZIP_ERRORS as e:
        raise RuntimeError(f"torchish.load: the PyTorch checkpoint is corrupted or truncated ({e})") from None
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise RuntimeError("torchish.load: a zip file that is not a PyTorch checkpoint (no <archive>/data.pkl)")
    return zf, names, pkl[0]


def data_pickle(blob: bytes) -> bytes:
    """The ``data.pkl`` bytes of a PyTorch zip checkpoint (for scanning its globals)."""
    zf, _, pkl = _open_zip(blob)
    try:
        return zf.read(pkl)
    except _ZIP_ERRORS as e:
        raise RuntimeError(f"torchish.load: the PyTorch checkpoint is corrupted ({e})") from None


def read_torch_zip(blob: bytes, placer, weights_only=True):
    """The object saved in a PyTorch zip checkpoint, its tensors built by ``placer(array, location, rg)``; with
    ``weights_only`` only PyTorch's allow-list and the user's safe globals."""
    zf, names, pkl_name = _open_zip(blob)
    pkl = [pkl_name]
    prefix = pkl[0][:-len("data.pkl")]
    from ._serialization_extras import checkpoint_byteorder_default
    byteorder = checkpoint_byteorder_default()
    if prefix + "byteorder" in names:
        try:
            byteorder = zf.read(prefix + "byteorder").decode().strip()
        except (*_ZIP_ERRORS, UnicodeDecodeError) as e:
            raise RuntimeError(f"torchish.load: the PyTorch checkpoint is corrupted ({e})") from None
    cache = {}

    def load_storage(dtype, key, location, numel):
        st = cache.get(key)
        if st is None:
            try:
                raw = zf.read(prefix + "data/" + key)
            except KeyError:
                raise Refused(f"storage {key!r} is missing from the checkpoint") from None
            except _ZIP_ERRORS as e:
                raise RuntimeError(f"torchish.load: the PyTorch checkpoint is corrupted ({e})") from None
            npdt = dtype.np
            if len(raw) % npdt.itemsize or len(raw) // npdt.itemsize < numel:
                raise Refused(f"storage {key!r} holds {len(raw)} bytes, too few for {numel} "
                                             f"elements of {dtype}")
            arr = np.frombuffer(raw, dtype=npdt)[:numel]
            if byteorder != sys.byteorder and npdt.itemsize > 1:
                arr = arr.byteswap()
            st = _Storage(arr, location)
            cache[key] = st
        return st

    try:
        data = zf.read(pkl[0])
    except _ZIP_ERRORS as e:
        raise RuntimeError(f"torchish.load: the PyTorch checkpoint is corrupted ({e})") from None
    unpickler = RestrictedUnpickler(io.BytesIO(data), _Builders(placer), load_storage, weights_only)
    if not weights_only:  # the file's own code may raise anything: as PyTorch, let it through
        return unpickler.load()
    try:
        return unpickler.load()
    except (Refused, _safe_globals.WeightsOnlyError, MapLocationError):
        raise
    except Exception as e:
        raise RuntimeError(f"torchish.load: the PyTorch checkpoint's data.pkl is corrupted ({type(e).__name__}: "
                           f"{e})") from None


_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def read_legacy_pickle(blob: bytes):
    """A bare pickle: PyTorch's pre-1.6 format (refused with a clear message) or anything else (its globals are
    checked by the restricted unpickler, so a malicious pickle is refused before it runs)."""
    def no_storage(*_):
        raise Refused("persistent ids are not allowed in a bare pickle")

    unpickler = RestrictedUnpickler(io.BytesIO(blob), _Builders(None), no_storage)
    try:
        first = unpickler.load()
    except (Refused, _safe_globals.WeightsOnlyError):
        raise
    except Exception as e:
        raise RuntimeError("torchish.load: unrecognized file format (not a torchish, PyTorch zip or safetensors "
                           f"file; {type(e).__name__}: {e})") from None
    if first == _LEGACY_MAGIC:
        raise RuntimeError("torchish.load: this is PyTorch's legacy (pre-1.6, non-zip) format, which torchish does "
                           "not read; re-save it with a recent torch.save (the zip format)")
    raise RuntimeError("torchish.load: a bare pickle is not a checkpoint torchish reads (torchish never unpickles "
                       "arbitrary objects); save with torchish.save or torch.save")
