"""Batch assembly: ``collate`` / ``default_collate`` / ``default_convert`` with PyTorch's rules and output types.

``collate(batch, collate_fn_map=...)`` walks the structure of the first sample (mappings, namedtuples, sequences) and
hands each leaf column to the first entry of ``collate_fn_map`` whose type matches, exactly as
``torch.utils.data._utils.collate`` does: Tensors are stacked, numpy arrays and numpy scalars become Tensors of their
own dtype, Python floats become float64, ints int64, bools bool, ``str``/``bytes`` stay lists, tuples come back as
lists (PyTorch's backward-compatible choice) and other sequences keep their type.

Worker processes must not run JAX programs for the default path, so ``_collate`` also builds a *host* variant of the
map: the same rules, but every leaf becomes a ``HostTensor`` (a numpy array marked "this is a Tensor"), which the main
process turns into a ``torchish.Tensor`` after the batch crosses the process boundary (``_worker.py``).
"""
from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...ops.out_layout import stack_strides, strides_format, suggest_format

_NP_STR_OBJ = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


class HostTensor:
    """A numpy array standing for a Tensor while a batch travels from a worker to the main process."""

    __slots__ = ("array", "requires_grad")

    def __init__(self, array, requires_grad=False):
        self.array = array
        self.requires_grad = requires_grad


def host_array(t: Tensor) -> np.ndarray:
    """A torchish Tensor's value as a numpy array (a host copy; no autograd)."""
    return np.asarray(t.detach()._concrete())


def to_tensor(array: np.ndarray) -> Tensor:
    """A numpy array as a torchish Tensor of the same dtype (``torch.as_tensor``)."""
    import torchish
    return torchish.as_tensor(array)


def _stack_host(arrays, what="tensor", formats=()) -> np.ndarray:
    """``torch.stack(batch, 0)`` on numpy arrays: equal shapes required, dtypes promoted as PyTorch promotes, and
    the memory layout of PyTorch's result (as the tensor made from it keeps): contiguous, unless every sample's
    ``formats`` entry (its suggested memory format) is channels-last, where PyTorch concatenates in that format."""
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise RuntimeError(f"stack expects each {what} to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(a.shape)} at entry {i}")
    out = _dtype.from_np(arrays[0].dtype)
    for a in arrays[1:]:
        out = _dtype.promote_types(out, _dtype.from_np(a.dtype))
    stacked = np.stack([a.astype(out.np, copy=False) for a in arrays])
    strides = stack_strides(shape, len(arrays), 0, formats) if len(shape) > 0 else None
    if strides is None:
        return np.ascontiguousarray(stacked)
    res = np.lib.stride_tricks.as_strided(np.empty(stacked.size, stacked.dtype), stacked.shape,
                                          [s * stacked.itemsize for s in strides])
    res[...] = stacked
    return res


def _numpy_formats(arrays):
    """The memory format each numpy array suggests as a tensor (``torch.as_tensor`` keeps its strides)."""
    return [strides_format(a.shape, tuple(s // a.itemsize for s in a.strides)) for a in arrays]


def _python_numbers(batch) -> np.ndarray:
    """``torch.tensor(batch)`` dtype inference for Python numbers: bool, int64, default float, default complex."""
    kinds = {type(b) for b in batch}
    if kinds <= {bool}:
        return np.array(batch, dtype=np.bool_)
    if any(issubclass(k, complex) for k in kinds):
        cplx = np.complex128 if _dtype.get_default_dtype().name == "float64" else np.complex64
        return np.array(batch, dtype=cplx)
    if any(issubclass(k, float) for k in kinds):
        return np.array(batch, dtype=_dtype.get_default_dtype().np)
    return np.array(batch, dtype=np.int64)


def _check_numpy(batch):
    """PyTorch's checks on a batch of numpy arrays: no strings/objects, and (``torch.as_tensor`` of each) the
    warning for a read-only array and no negative strides."""
    from ...ops.from_data import _check_strides, _warn_not_writable
    if _NP_STR_OBJ.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    for b in batch:
        _warn_not_writable(b)
        _check_strides(b)


# ----------------------------------------------------------------------------------------------------------------
# Leaf rules in the main process (produce torchish Tensors)

def collate_tensor_fn(batch, *, collate_fn_map=None):
    import torchish
    return torchish.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    _check_numpy(batch)
    arrays = [np.asarray(b) for b in batch]
    return to_tensor(_stack_host(arrays, formats=_numpy_formats(arrays)))


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return to_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return to_tensor(np.array(batch, dtype=np.float64))


def collate_int_fn(batch, *, collate_fn_map=None):
    return to_tensor(_python_numbers(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# ----------------------------------------------------------------------------------------------------------------
# The same rules in a worker process (produce HostTensors; no JAX program runs)

def _host_tensor_fn(batch, *, collate_fn_map=None):
    rg = any(t.requires_grad for t in batch)
    return HostTensor(_stack_host([host_array(t) for t in batch], formats=[suggest_format(t) for t in batch]), rg)


def _host_numpy_array_fn(batch, *, collate_fn_map=None):
    _check_numpy(batch)
    arrays = [np.asarray(b) for b in batch]
    return HostTensor(_stack_host(arrays, formats=_numpy_formats(arrays)))


def _host_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return HostTensor(np.asarray(batch))


def _host_float_fn(batch, *, collate_fn_map=None):
    return HostTensor(np.array(batch, dtype=np.float64))


def _host_int_fn(batch, *, collate_fn_map=None):
    return HostTensor(_python_numbers(batch))


def _make_map(tensor_fn, array_fn, scalar_fn, float_fn, int_fn):
    # Insertion order matters: ``collate`` tries exact types first, then isinstance in this order (np.float64 is a
    # float subclass but must take the numpy-scalar rule; np.str_ is a str and keeps the string rule).
    return {Tensor: tensor_fn, np.ndarray: array_fn, (np.bool_, np.number, np.object_): scalar_fn,
            float: float_fn, int: int_fn, str: collate_str_fn, bytes: collate_str_fn}


default_collate_fn_map = _make_map(collate_tensor_fn, collate_numpy_array_fn, collate_numpy_scalar_fn,
                                   collate_float_fn, collate_int_fn)
_host_collate_fn_map = _make_map(_host_tensor_fn, _host_numpy_array_fn, _host_numpy_scalar_fn, _host_float_fn,
                                 _host_int_fn)


def _rebuild_like(elem, values):
    """A container of ``elem``'s type holding ``values`` (a dict for mappings), falling back as PyTorch does."""
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(values)
                return clone
            return type(elem)(values)
        except TypeError:
            return dict(values)
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return list(values)


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples into a batch, dispatching leaves through ``collate_fn_map``.

    Args:
        batch: the list of samples.
        collate_fn_map: ``{type or tuple of types: fn(batch, *, collate_fn_map)}``; exact type first, then the
            first ``isinstance`` match in insertion order.

    Example:
        >>> collate([(1, 2.0), (3, 4.0)], collate_fn_map=default_collate_fn_map)
        [tensor([1, 3]), tensor([2., 4.], dtype=torchish.float64)]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_like(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                                    for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns tuples of columns as lists (backward compatibility)
        return _rebuild_like(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch):
    """Stack a list of samples into a batch with PyTorch's ``default_collate`` rules.

    Tensors are stacked along a new first dimension; numpy arrays and scalars become Tensors of their dtype; floats
    become float64 Tensors, ints int64, bools bool; ``str``/``bytes`` stay lists; mappings, namedtuples and
    sequences are collated field by field (tuples come back as lists).

    Example:
        >>> default_collate([{"x": np.zeros(2, np.float32), "y": 1}, {"x": np.ones(2, np.float32), "y": 0}])
        {'x': tensor([[0., 0.], [1., 1.]]), 'y': tensor([1, 0])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def _convert(data, leaf):
    """``default_convert``'s walk with the numpy-to-Tensor conversion ``leaf``."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return leaf(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_like(data, {key: _convert(data[key], leaf) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(_convert(d, leaf) for d in data))
    if isinstance(data, tuple):
        return [_convert(d, leaf) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_like(data, [_convert(d, leaf) for d in data])
    return data


def default_convert(data):
    """Turn numpy arrays (inside mappings, namedtuples and sequences too) into Tensors; leave the rest unchanged.

    The collate function of a ``DataLoader`` with ``batch_size=None`` (no automatic batching).

    Example:
        >>> default_convert((np.array([0, 1]), 2))
        [tensor([0, 1]), 2]
    """
    return _convert(data, to_tensor)


def _host_default_collate(batch):
    """``default_collate`` as run inside a worker: leaves become HostTensors."""
    return collate(batch, collate_fn_map=_host_collate_fn_map)


def _host_default_convert(data):
    """``default_convert`` as run inside a worker: numpy leaves become HostTensors."""
    return _convert(data, HostTensor)
