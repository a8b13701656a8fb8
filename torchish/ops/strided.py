"""Explicit strides over a tensor's storage: ``as_strided`` (a view), ``as_strided_``, ``as_strided_scatter``,
``new_empty_strided``, ``empty_permuted`` and ``dim_order``.

A torchish base is one contiguous buffer, its *storage*; a view's elements sit at the positions its chain of view
ops selects in that buffer (``inplace.layout``). ``as_strided`` reads the elements at ``storage_offset + sum(i_d *
stride_d)`` of the storage of its input (PyTorch reads the input's storage too, not the input's own elements): a
gather on the flattened base, registered as a view op with its own layout rule, so writes through it scatter back
and its strides are the ones asked for. Its gradient is JAX's (a scatter-add: overlapping elements sum, as
PyTorch's ``AsStridedBackward0``).

Example:
    >>> import torchish as torch
    >>> x = torch.arange(6.0)
    >>> x.as_strided((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import inplace as _ip
from .elementwise import parser_worded, require_int
from .registry import Family, apply, defop
from .slicing import _preserved_strides
from .writes import set_at

_fam = Family(globals())
_public = _fam.public


def _ints(name, size, stride, position, storage_offset=None):
    """``size`` and ``stride`` (PyTorch's ``SymInt[]``, at ``position`` and the next) as tuples of ints, and the
    ``storage_offset`` checked, with PyTorch's parser TypeErrors."""
    from .shape import int_list_arg
    size, stride = int_list_arg(size, name, "size", position), int_list_arg(stride, name, "stride", position + 1)
    if storage_offset is not None:
        require_int(storage_offset, name, position + 2, "storage_offset", symint=True)
    return size, stride


def positions(size, stride, offset):
    """The storage positions ``offset + sum(i_d * stride_d)`` of a strided layout, as an int array of ``size``."""
    pos = np.full(size, offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return pos


def storage_bytes(size, stride, itemsize, offset):
    """PyTorch's ``computeStorageNbytes``: the bytes a storage needs to hold the layout."""
    if any(n == 0 for n in size):
        return 0
    return itemsize * (offset + 1 + sum((n - 1) * st for n, st in zip(size, stride)))


def _storage(t: Tensor):
    """``(storage tensor, positions of t's elements in it or None)``. The storage is t's base (detached when t is
    an alias outside the graph, ``.data``/``detach()``); t itself when a chain reinterprets bits (``view(dtype)``),
    whose element positions the base's dtype cannot express."""
    if t._view is None:
        return t, None
    base, chain, diff = t._view
    if any(op.name in _ip.BITCASTS for op, _ in chain):
        return t, None
    store = base if diff else base.detach()
    if not chain:
        return store, None
    idx = np.arange(math.prod(base._v.shape), dtype=np.int64).reshape(base._v.shape)
    return store, np.asarray(_ip._chain_apply(jnp.asarray(idx), chain))


def _storage_geometry(store: Tensor):
    """``(storage numel, source)`` of a storage tensor: ``source`` is None when its elements sit in the storage in
    their own order (contiguous, from position 0), else its ``(shape, strides, offset)``, which places them (a
    permuted copy, a ``*_scatter`` result that kept its input's strides and storage offset: seed 9100203)."""
    if store._view is not None:  # (a chain that reinterprets bits: its own elements, in order)
        return math.prod(store._v.shape), None
    shape, strides, offset = _ip.layout(store)
    if offset == 0 and _ip.is_contiguous(shape, strides):
        return math.prod(shape), None
    return storage_bytes(shape, strides, 1, offset), (tuple(shape), tuple(strides), offset)


def _element_at(source):
    """For a storage whose elements ``source`` places: each storage position's flat index into the elements, -1
    where none sits (below the storage offset, between strided elements)."""
    shape, strides, offset = source
    at = np.full(storage_bytes(shape, strides, 1, offset), -1, np.int64)
    at[positions(shape, strides, offset).reshape(-1)] = np.arange(math.prod(shape), dtype=np.int64)
    return at


def _storage_positions(size, stride, offset, source):
    """The flat indices into a storage tensor's elements of the storage positions a strided layout picks."""
    pos = positions(size, stride, offset)
    return pos if source is None else _element_at(source)[pos]


def _not_held(what, source):
    return RuntimeError(f"{what} storage positions outside the elements of a tensor with sizes "
                        f"{list(source[0])}, strides {list(source[1])} and storage offset {source[2]}: torchish "
                        f"holds only a tensor's own elements, not the rest of the storage PyTorch copied with them "
                        f"(call .contiguous() first)")


def _check_owned(size, stride, offset, source):
    """PyTorch reads the storage outside a tensor's own elements too; torchish holds only the elements."""
    if source is not None and math.prod(size) and (_storage_positions(size, stride, offset, source) < 0).any():
        raise _not_held(f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset {offset} read",
                        source)


def storage_order(store: Tensor, flat):
    """``flat`` (``store``'s elements, flattened) in the order of ``store``'s storage, one per storage position."""
    _, source = _storage_geometry(store)
    if source is None:
        return flat
    at = _element_at(source)
    if (at < 0).any():
        raise _not_held("the storage's elements include", source)
    return flat[at]


def _check_layout(size, stride, offset, itemsize, storage_numel):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = storage_bytes(size, stride, itemsize, offset)
    if need > storage_numel * itemsize:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {need} are out of bounds for storage of "
                           f"size {storage_numel * itemsize}")


def _gather_fwd(x, *, size, stride, offset, source=None):
    return x.reshape(-1)[jnp.asarray(_storage_positions(size, stride, offset, source))]


_AS_STRIDED = defop("as_strided", _gather_fwd, view=True, linear=True, grad_name="AsStridedBackward0")


@_ip.layout_rule("as_strided")
def _as_strided_layout(layout, *, size, stride, offset, source=None):
    return size, stride, offset


@parser_worded
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given sizes, strides (in elements) and storage offset (default:
    ``input``'s own)."""
    size, stride = _ints("as_strided", size, stride, 2, storage_offset)
    offset = _ip.layout(input)[2] if storage_offset is None else int(storage_offset)
    store, _ = _storage(input)
    numel, source = _storage_geometry(store)
    _check_layout(size, stride, offset, input.itemsize, numel)
    _check_owned(size, stride, offset, source)
    return apply(_AS_STRIDED, (store,), size=size, stride=stride, offset=offset, source=source)


@parser_worded
def as_strided_(input, size, stride, storage_offset=None):
    """``as_strided`` in place: ``input`` takes the new geometry over the same storage."""
    return _ip.inplace_view(input, as_strided.__wrapped__(input, size, stride, storage_offset))


def _scatter_fwd(x, src, *, size, stride, offset, pick, source=None):
    flat = set_at(x.reshape(-1), jnp.asarray(_storage_positions(size, stride, offset, source)).reshape(-1),
                  src.astype(x.dtype).reshape(-1))
    return flat.reshape(x.shape) if pick is None else flat[jnp.asarray(np.asarray(pick))]


def _scatter_vjp(g, x, src, *, out, size, stride, offset, pick, source=None):
    """PyTorch's ``as_strided_scatter_backward``: ``src`` gets the gradient of the positions it was written to and,
    as PyTorch computes it, so does ``input`` (the same slice, zeros elsewhere — not the complement)."""
    pos = jnp.asarray(_storage_positions(size, stride, offset, source)).reshape(-1)
    flat = jnp.zeros(x.size, g.dtype)
    if pick is None:
        full = g.reshape(-1)
    else:
        full = flat.at[jnp.asarray(np.asarray(pick)).reshape(-1)].set(g.reshape(-1))
    grad_src = full[pos].reshape(size)
    grad_x = flat.at[pos].set(full[pos]).reshape(x.shape)
    return grad_x, grad_src.astype(src.dtype)


_AS_STRIDED_SCATTER = defop("as_strided_scatter", _scatter_fwd, vjp=_scatter_vjp,
                            grad_name="AsStridedScatterBackward0")


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` (a copy) with the elements ``input.as_strided(size, stride, storage_offset)`` selects replaced by
    ``src``."""
    size, stride = _ints("as_strided_scatter", size, stride, 3, storage_offset)
    offset = _ip.layout(input)[2] if storage_offset is None else int(storage_offset)
    store, pick = _storage(input)
    numel, source = _storage_geometry(store)
    _check_layout(size, stride, offset, input.itemsize, numel)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(size)}")
    _check_owned(size, stride, offset, source)
    if pick is not None:
        pick = _nested(pick)
    out = apply(_AS_STRIDED_SCATTER, (store, src), size=size, stride=stride, offset=offset, pick=pick,
                source=source)
    return _preserved_strides(out, input)


def _nested(a):
    """A numpy index array as nested tuples (hashable, for a static argument)."""
    return a.tolist() if a.ndim == 0 else tuple(_nested(r) for r in a)


# ----------------------------------------------------------------------------------------------------------------
# strided creation


def _strided_empty(size, stride, dtype, device, requires_grad):
    """A new tensor (filled as ``empty``) with the given strides. Dense strides (a permutation of contiguous ones)
    are the tensor's own; strides with gaps or overlaps make it a view of a storage of PyTorch's size, hidden (as
    ``resize_`` hides a grown one) so the tensor is no view, and writes alias as PyTorch's do."""
    from .filled import empty
    size, stride = _ints("empty_strided", size, stride, 1)
    _check_layout(size, stride, 0, 1, storage_bytes(size, stride, 1, 0))
    if math.prod(size) == 0 or _ip._dense(size, stride):
        out = empty(size, dtype=dtype, device=device, requires_grad=requires_grad)
        if stride != _ip.contiguous_strides(size):
            out._layout = (size, stride, 0)
        return out
    store = _ip.hidden_storage(empty(storage_bytes(size, stride, 1, 0), dtype=dtype, device=device))
    out = apply(_AS_STRIDED, (store,), size=size, stride=stride, offset=0)
    if requires_grad:  # a fresh leaf: the view's storage is private to it
        out = out.detach().requires_grad_(True)
    return out


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    """A tensor with the given strides, ``self``'s dtype and device unless given (values as ``empty``'s)."""
    return _strided_empty(size, stride, dtype if dtype is not None else self.dtype,
                          device if device is not None else self.device, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """``torch.empty_permuted``: an uninitialised (``empty``) tensor of ``size`` whose memory holds the dims in the
    order ``physical_layout``."""
    size, perm = tuple(int(s) for s in size), tuple(int(p) for p in physical_layout)
    if len(size) != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(perm)}")
    if sorted(perm) != list(range(len(perm))):
        raise RuntimeError("Duplicate dim not allowed")
    physical = _ip.contiguous_strides([size[p] for p in perm])
    stride = [0] * len(size)
    for st, p in zip(physical, perm):
        stride[p] = st
    return _strided_empty(size, stride, dtype or _dtype.get_default_dtype(), device, requires_grad)


# ----------------------------------------------------------------------------------------------------------------
# dim_order


def _should_swap(shape, strides, a, b):
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if shape[a] <= shape[b] else 1
    return -1 if sb > sa else 1


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (PyTorch's ``Tensor.dim_order``)."""
    from .._aliases import memory_format
    if not (isinstance(ambiguity_check, bool) or isinstance(ambiguity_check, list) and all(
            isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides, _ = _ip.layout(self)
    ndim = len(shape)
    if ambiguity_check is not False:
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        ambiguous = any(a == b for a, b in zip(strides, strides[1:])) or any(n == 1 for n in shape)
        legal = sum(1 for f in formats if self.is_contiguous(memory_format=f))
        if ambiguous and legal != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
    if ndim < 2 or _ip.is_contiguous(shape, strides):
        return tuple(range(ndim))
    perm = list(range(ndim))[::-1]  # sorted back to front (TensorIterator's insertion sort), then reversed
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _should_swap(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return tuple(reversed(perm))


_public("as_strided", as_strided)
_public("as_strided_", as_strided_)
METHODS["as_strided_"] = parser_worded(as_strided_.__wrapped__, "as_strided_", method=True)  # noqa: F821
_public("as_strided_scatter", as_strided_scatter)
_public("empty_permuted", empty_permuted, method=False)
_fam.method("new_empty_strided", new_empty_strided)
_fam.method("dim_order", dim_order)
