"""Views that reshape: view/reshape/flatten/unflatten/ravel, squeeze/unsqueeze, ``view(dtype)`` and real/imag, the
layout queries (stride, storage_offset, is_contiguous, contiguous), and the shape-argument helpers the other shape
modules share.

Views are registered with ``view=True``: their outputs share storage with their input, so writes through them reach
the base; each also registers the strides PyTorch would give it (``inplace.layout_rule``). The rest of the shape ops:
``broadcast`` (expand, broadcast_*), ``reorder`` (permute, transpose, flip, roll), ``slicing`` (narrow, select, split,
unbind, unfold), ``diag`` (diagonal, diag, tril/triu), ``join`` (cat, stack, repeat)."""
from __future__ import annotations

import math
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._layout import check_memory_format
from .._tensor import Size, Tensor, wrap_dim
from ..autograd.saved_attrs import show_raw_dims
from .opnode import SHOWN_KIND
from .._tensor_meta import wrap_item_dim
from . import inplace as _ip, parser_errors
from .elementwise import parser_worded, require_tensor, type_name
from .inplace import layout_rule
from . import registry as _registry
from .registry import apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public


def _size_args(size, name=None, key="size", position=1):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(torch.Size(...))`` -> a tuple of ints. With the op's ``name``
    (and the argument's ``key`` and ``position``), a value that is not an int raises PyTorch's argument-parser
    TypeError: a list or float first among several positional values makes them too many arguments, a later one
    cannot be unpacked. A bool is not an int to that parser where it looks at the type (the first value, or a
    value alone); it unpacks later ones as indices (``zeros(2, True)`` is ``zeros(2, 1)``). A Tensor is taken
    where it has one integer element (``x.view(2, torch.tensor([3]))``), as ``__index__`` takes it."""
    varargs = len(size) > 1
    bare = len(size) == 1 and not isinstance(size[0], (tuple, list))
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and (name is None or s.numel() == 1 and s._v.dtype.kind in "iub"):
            s = int(s.item())  # (PyTorch unpacks a Tensor by its __index__: one integer element)
        elif not isinstance(s, int) or isinstance(s, bool) and i == 0 and name is not None:
            if name is not None and (isinstance(s, (bool, Tensor)) or not hasattr(type(s), "__index__")):
                if i == 0 and varargs:
                    raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
                if i == 0 and bare:
                    raise TypeError(f"{name}(): argument '{key}' (position {position}) must be tuple of ints, not "
                                    f"{type(s).__name__}")
                if i == 0:
                    raise TypeError(f"{name}(): argument '{key}' (position {position}) must be tuple of ints, but "
                                    f"found element of type {type(s).__name__} at pos 0")
                raise TypeError(f"{name}(): argument '{key}' failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {type(s).__name__}\"")
            try:
                s = s.__index__()
            except AttributeError:
                raise TypeError(f"expected a sequence of integers, got an element of type {type(s).__name__}") \
                    from None
        out.append(int(s))
    return tuple(out)


def int_list_arg(value, name, key, position, sized=False):
    """An ``int[]`` parameter of PyTorch's schema given as one value (``rot90``'s ``dims``, ``as_strided``'s ``size``)
    -> a tuple of ints, with its parser's TypeErrors: no tuple or list (a lone int only where the list is ``sized``,
    ``int[1]``: ``roll``'s ``shifts``), or an item that is no int (:func:`_size_args`)."""
    if not isinstance(value, (tuple, list)) and \
            (not sized or isinstance(value, bool) or not hasattr(type(value), "__index__")):
        raise TypeError(f"{name}(): argument '{key}' (position {position}) must be tuple of ints, not "
                        f"{type_name(value)}")
    return _size_args((value,), name, key, position)


def _args_or_kw(args, value, name, key):
    """The int-list argument of ``f(*args)`` ops (``x.flip(0, 1)``), which PyTorch's parser also takes by its
    keyword (``x.flip(dims=(0, 1))``, ``x.view(size=(6, 4))``): ``args``, or ``(value,)`` when given by keyword."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument '{key}'")
    if not isinstance(value, (tuple, list)):  # a bare int is taken only positionally
        raise TypeError(f"{name}(): argument '{key}' must be tuple of ints, not {type(value).__name__}")
    return (value,)


def later_bools_as_ints(seq) -> tuple:
    """An int-list argument's values as PyTorch's parser reads them: it checks the first value's type only (a bool
    there is refused by ``wrap_dim`` or the op) and unpacks a later bool as an index, 0 or 1."""
    seq = tuple(seq)
    return seq[:1] + tuple(int(d) if isinstance(d, bool) else d for d in seq[1:])


def _dims_arg(dims, ndim):
    """An int or a sequence of dims -> wrapped dims, refusing repeats as PyTorch does."""
    if not isinstance(dims, (tuple, list)):  # (an ``int dim``: no Tensor with dims, as a list's item may be)
        return (wrap_dim(dims, ndim),)
    out = tuple(wrap_item_dim(d, ndim) for d in later_bools_as_ints(dims))
    for i, d in enumerate(out):
        if d in out[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def infer_size(shape, numel):
    """Resolve one -1 in ``shape`` so the product is ``numel``, with PyTorch's errors."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if neg:
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                   "unspecified dimension size -1 can be any value and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# ----------------------------------------------------------------------------------------------------------------
# layout queries (strides of views; bases are contiguous)


def stride(self, dim=None):
    st = _ip.layout(self)[1]
    if type(dim) is not int and isinstance(dim, Tensor) and dim.ndim:  # (named as PyTorch's parser names it)
        raise TypeError("stride(): argument 'dim' (position 1) must be int, not Tensor")
    return st if dim is None else st[wrap_dim(dim, self.ndim, False)]


def storage_offset(self):
    return _ip.layout(self)[2]


# id(storage root) -> (address, the buffer it was read from): a storage keeps the address it first reported while
# in-place ops give its root new buffers (PyTorch writes into the same memory); the first buffer is kept alive so
# no other tensor's buffer reports that address meanwhile
_ADDRESSES = {}


def storage_root(t):
    """The tensor holding ``t``'s storage: its base for a view or alias, else ``t``."""
    return t._view[0] if t._view is not None else t


def storage_address(root):
    """The address of ``root``'s storage (0 when empty): the address of its buffer when first asked, kept while
    in-place ops replace the buffer (a storage grown past the first buffer gets a new one, as PyTorch reallocates)."""
    arr = root._d
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError("data_ptr() of a tensor traced by torchish.compile has no address (it is not computed "
                           "yet); read it outside the compiled function")
    if arr.size == 0:
        return 0
    known = _ADDRESSES.get(id(root))
    if known is not None and known[1].nbytes >= arr.nbytes:
        return known[0]
    if known is None:
        weakref.finalize(root, _ADDRESSES.pop, id(root), None)
    addr = arr.unsafe_buffer_pointer()
    _ADDRESSES[id(root)] = (addr, arr)
    return addr


def move_storage_address(old_root, new_root):
    """``new_root`` now holds the storage ``old_root`` held (an in-place view op, ``set_``): it keeps the address."""
    known = _ADDRESSES.pop(id(old_root), None)
    if known is not None:
        if id(new_root) not in _ADDRESSES:
            weakref.finalize(new_root, _ADDRESSES.pop, id(new_root), None)
        _ADDRESSES[id(new_root)] = known


def data_ptr(self):
    """The address of the first element: its storage's address plus the storage offset. Tensors that share a
    storage (tied weights, a view and its base) compare equal as in PyTorch, in-place ops keep the address, and a
    value computed out of place has a new one."""
    root = storage_root(self)
    addr = storage_address(root)
    return addr and addr + storage_offset(self) * self._v.dtype.itemsize  # (the offset counts self's dtype)


def is_contiguous(self, memory_format=None):
    if memory_format is None and self._view is None and self._layout is None:
        return True  # (no view of another tensor, no strides of its own: row-major, as every fresh result)
    shape, st, _ = _ip.layout(self)
    name = getattr(memory_format, "_name", None)
    if name in ("channels_last", "channels_last_3d"):
        from .out_layout import is_channels_last_contiguous
        return len(shape) == (4 if name == "channels_last" else 5) and is_channels_last_contiguous(shape, st)
    return _ip.is_contiguous(shape, st)


def contiguous(self, *, memory_format=None):
    check_memory_format(memory_format, self.ndim)
    if is_contiguous(self, memory_format):
        return self
    name = getattr(memory_format, "_name", None)
    if name == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    from .._aliases import contiguous_format
    from .copying import clone
    return clone(self, memory_format=memory_format if name is not None else contiguous_format)


def _base(self):
    v = self._view
    if v is None:
        return None
    base = v[0]
    hidden = base.__dict__.get("_hidden_base")
    if hidden is not None:  # the storage of a tensor that became a view of it in place (``t_()``): no view
        base = hidden if hidden is not True else None  # itself, it is the base of its views, before and since
        if base is None or base is self:
            return None
    if not v[2]:  # a view taken of a detach()/.data alias: its base is that alias (itself no view), as PyTorch's
        return self._alias_base if v[1] and self._alias_base is not None else None
    if any(not op.differentiable for op, _ in v[1]):
        return None
    return base


def _is_view(self):
    return _base(self) is not None


# ----------------------------------------------------------------------------------------------------------------
# view / reshape

_VIEW = defop("view", lambda x, *, shape: jnp.reshape(x, shape), view=True, linear=True, grad_name="ViewBackward0")
_RESHAPE_ALIAS = overload(_VIEW, "ReshapeAliasBackward0")
_UNSAFE_VIEW = defop("unsafe_view", lambda x, *, shape: jnp.reshape(x, shape), linear=True,
                     grad_name="UnsafeViewBackward0")
# reshape of a tensor it cannot view: PyTorch's _unsafe_view(self.clone(contiguous), shape), one node in torchish
# that shows the CloneBackward0 below it (ops.shown_graph)
_RESHAPE_COPY = overload(_UNSAFE_VIEW, "UnsafeViewBackward0")
SHOWN_KIND[_RESHAPE_COPY] = "clone"
_ALIAS = defop("alias", lambda x: x, view=True, linear=True, grad_name="AliasBackward0")


@layout_rule("view")
def _view_layout(lay, *, shape):
    return shape, _ip.view_strides(lay[0], lay[1], shape), lay[2]


@layout_rule("alias")
def _alias_layout(lay):
    return lay


def _to_bytes(x):
    """The bytes of each element of ``x``, in memory order: an extra trailing dim of its itemsize."""
    if x.dtype == np.bool_:
        return x.astype(np.uint8)[..., None]
    if jnp.iscomplexobj(x):   # (real, imag) pairs, as complex numbers lie in memory
        x = jnp.stack([jnp.real(x), jnp.imag(x)], -1)
        return jax.lax.bitcast_convert_type(x, np.uint8).reshape(x.shape[:-1] + (-1,))
    return jax.lax.bitcast_convert_type(x, np.uint8)


def _from_bytes(raw, dst):
    """Inverse of ``_to_bytes``: elements of dtype ``dst`` from a trailing dim of their bytes."""
    if dst == np.bool_:
        return raw[..., 0] != 0
    if dst.kind == "c":
        part = np.dtype(np.float32 if dst == np.complex64 else np.float64)
        pairs = jax.lax.bitcast_convert_type(raw.reshape(raw.shape[:-1] + (2, part.itemsize)), part)
        return jax.lax.complex(pairs[..., 0], pairs[..., 1])
    if dst.itemsize == 1:   # a same-size bitcast keeps the trailing dim of one byte
        return jax.lax.bitcast_convert_type(raw[..., 0], dst)
    return jax.lax.bitcast_convert_type(raw, dst)


def _bitcast_fwd(x, *, dtype):
    """``x``'s bytes read as ``dtype``; with another element size the last dim scales (as Tensor.view(dtype))."""
    dst = np.dtype(dtype)
    if dst == x.dtype:
        return x
    src_size, dst_size = x.dtype.itemsize, dst.itemsize
    lead = x.shape if src_size == dst_size else x.shape[:-1] + (x.shape[-1] * src_size // dst_size,)
    return _from_bytes(_to_bytes(x).reshape(lead + (dst_size,)), dst)


_VIEW_DTYPE = defop("view_dtype", lambda x, *, dtype, src: _bitcast_fwd(x, dtype=dtype), view=True,
                    differentiable=False)
_ip.BITCASTS["view_dtype"] = lambda new, like, **static: _bitcast_fwd(new, dtype=like.dtype)


# real / imag of a complex tensor: views onto its real or imaginary parts (writes reach the complex base)
# (PyTorch's are view_as_real(x).select(-1, 0 or 1): SelectBackward0 over ViewAsRealBackward0, see ops.shown_graph)
_REAL = defop("real", lambda x: jnp.real(x), view=True, linear=True, grad_name="SelectBackward0")
_IMAG = defop("imag", lambda x: jnp.imag(x), view=True, linear=True, grad_name="SelectBackward0")
SHOWN_KIND.update({_REAL: "real", _IMAG: "imag"})
_ip.BITCASTS["real"] = lambda new, like: jax.lax.complex(new.astype(jnp.real(like).dtype), jnp.imag(like))
_ip.BITCASTS["imag"] = lambda new, like: jax.lax.complex(jnp.real(like), new.astype(jnp.imag(like).dtype))


@layout_rule("real")
def _real_imag_layout(lay, part=0):
    shape, strides, offset = lay  # in units of the real dtype: each complex element is two of them
    return shape, tuple(2 * st for st in strides), 2 * offset + part


layout_rule("imag")(lambda lay: _real_imag_layout(lay, 1))


# conj of a complex tensor: a view holding the conjugate (PyTorch's conjugate bit); its inverse is itself
CONJ_VIEW = defop("conj", jnp.conj, view=True, linear=True, grad_name="ConjBackward0")
_ip.BITCASTS["conj"] = lambda new, like: jnp.conj(new).astype(like.dtype)
layout_rule("conj")(lambda lay: lay)


# view_as_real / view_as_complex: the complex elements as (real, imag) pairs in a trailing dim of 2, and back
_VIEW_AS_REAL = defop("view_as_real", lambda x: jnp.stack([jnp.real(x), jnp.imag(x)], -1), view=True, linear=True,
                      grad_name="ViewAsRealBackward0")
_VIEW_AS_COMPLEX = defop("view_as_complex", lambda x: jax.lax.complex(x[..., 0], x[..., 1]), view=True, linear=True,
                         grad_name="ViewAsComplexBackward0")
_ip.BITCASTS["view_as_real"] = lambda new, like: jax.lax.complex(new[..., 0], new[..., 1]).astype(like.dtype)
_ip.BITCASTS["view_as_complex"] = lambda new, like: jnp.stack([jnp.real(new), jnp.imag(new)], -1).astype(like.dtype)


@layout_rule("view_as_real")
def _view_as_real_layout(lay):
    shape, strides, offset = lay
    return shape + (2,), tuple(2 * st for st in strides) + (1,), 2 * offset


@layout_rule("view_as_complex")
def _view_as_complex_layout(lay):
    shape, strides, offset = lay
    return shape[:-1], tuple(st // 2 for st in strides[:-1]), offset // 2


def view_as_real(input):
    """``(..., 2)`` real view of a complex tensor: its real and imaginary parts (writes reach the input)."""
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input.is_conj():
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return apply(_VIEW_AS_REAL, (input,))


def view_as_complex(input):
    """Complex view of a real ``(..., 2)`` tensor whose last dim holds (real, imag) pairs."""
    if _registry.autocast_hook is not None:  # (on CPU autocast's float32 list, cast before the dtype check)
        input, = _registry.autocast_hook("view_as_complex", (input,))
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_dtype.scalar_type_name(input.dtype)}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    shape, strides, offset = _ip.layout(input)
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(st % 2 for st in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply(_VIEW_AS_COMPLEX, (input,))


def real(input):
    """The real part: a view for complex tensors, the tensor itself otherwise."""
    return apply(_REAL, (input,)) if input.is_complex() else input


def imag(input):
    """The imaginary part of a complex tensor, as a view."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(_IMAG, (input,))


def _part_setter(get):
    def setter(self, value):
        get(self).copy_(value)
    return setter


@layout_rule("view_dtype")
def _view_dtype_layout(lay, *, dtype, src):
    shape, strides, offset = lay
    a, b = np.dtype(src).itemsize, np.dtype(dtype).itemsize
    if a == b:
        return shape, strides, offset
    if a > b:
        r = a // b
        return shape[:-1] + (shape[-1] * r,), tuple(s * r for s in strides[:-1]) + (1,), offset * r
    r = b // a
    return shape[:-1] + (shape[-1] // r,), tuple(s // r for s in strides[:-1]) + (1,), offset // r


def _view_dtype(self, dtype):
    dt = _dtype.as_dtype(dtype)
    src, dst = self._v.dtype, np.dtype(dt.np)
    if self.is_conj() or self.is_neg():  # (whatever the dtype, as PyTorch)
        what = "conjugate view tensors" if self.is_conj() else "tensors with negative bit set"
        raise RuntimeError(f"torch.Tensor.view is not supported for {what} when converting to a different dtype.")
    if src.itemsize != dst.itemsize:
        sname, dname = _dtype.scalar_type_name(self.dtype), _dtype.scalar_type_name(dt)
        what = f"to view {sname} as {dname} (different element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        shape, st, off = _ip.layout(self)
        if src.itemsize > dst.itemsize and st[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st[-1]}")
        if src.itemsize < dst.itemsize:   # PyTorch's order: size, offset, last stride, other strides
            r = dst.itemsize // src.itemsize
            if shape[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
            if off % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {off}")
            if st[-1] != 1:
                raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st[-1]}")
            for i, s in enumerate(st[:-1]):
                if s % r:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
    return apply(_VIEW_DTYPE, (self,), dtype=dst, src=src)



def view(self, *shape, size=None, dtype=None):
    if dtype is not None:
        if shape or size is not None or not _is_dtype(dtype):
            kwargs = {k: v for k, v in (("dtype", dtype), ("size", size)) if v is not None}
            raise TypeError(parser_errors.message("view", shape, kwargs, method=True) or
                            "view() received an invalid combination of arguments: give either a dtype or a size")
        return _view_dtype(self, dtype)
    shape = _args_or_kw(shape, size, "view", "size")
    if len(shape) == 1 and _is_dtype(shape[0]):  # (before the sizes: the type int has an __index__)
        return _view_dtype(self, shape[0])
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size, Tensor)) \
            and not hasattr(shape[0], "__index__"):  # (a dtype's name, None, a numpy type: refused)
        raise TypeError(parser_errors.message("view", shape, {}, method=True))
    if not shape or len(shape) > 1 and not hasattr(type(shape[0]), "__index__"):  # view has two overloads
        raise TypeError(f"view() received an invalid combination of arguments - got "
                        f"({', '.join(type(v).__name__ for v in shape)}), but expected one of:\n * (torch.dtype dtype)\n"
                        " * (tuple of ints size)\n")
    shape = infer_size(_size_args(shape, "view"), self.numel())
    old_shape, old_st, _ = _ip.layout(self)
    if _ip.view_strides(old_shape, old_st, shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(_VIEW, (self,), shape=shape)


def _is_dtype(d):
    """What PyTorch's parser takes as a dtype: a dtype or the Python type float, int, bool or complex."""
    return isinstance(d, _dtype.dtype) or d is float or d is int or d is bool or d is complex


def _reshape(input, *args, shape=None):
    """``Tensor.reshape``: the sizes spread out (``x.reshape(3, 2)``) or as one list."""
    require_tensor(input, "reshape")
    shape = _args_or_kw(args, shape, "reshape", "shape")
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    shape = infer_size(_size_args(shape, "reshape", "shape"), input.numel())
    old_shape, old_st, _ = _ip.layout(input)
    if _ip.view_strides(old_shape, old_st, shape) is None:
        return apply(_RESHAPE_COPY, (input,), shape=shape)   # a copy, as in PyTorch
    # PyTorch views a contiguous tensor (ViewBackward0), any other it can by _reshape_alias (ReshapeAliasBackward0)
    return apply(_VIEW if _ip.is_contiguous(old_shape, old_st) else _RESHAPE_ALIAS, (input,), shape=shape)


@parser_worded
def reshape(input, shape):
    """``torch.reshape``: PyTorch's function takes the shape as one list (not spread out, not a lone int)."""
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"reshape(): argument 'shape' (position 2) must be tuple of ints, not {type_name(shape)}")
    return _reshape(input, shape)


def view_as(self, other):
    require_tensor(other, "view_as", 1, "other")
    return view(self, tuple(other.shape))


def reshape_as(self, other):
    require_tensor(other, "reshape_as", 1, "other")
    return reshape(self, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    require_tensor(input, "flatten")
    nd = input.ndim
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)  # (a 0-d tensor takes dims -1 and 0)
    if nd == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input.shape
    return reshape(input, tuple(shp[:s]) + (math.prod(shp[s:e + 1]),) + tuple(shp[e + 1:]))


def unflatten(input, dim, sizes):
    return _unflatten(input, dim, sizes, 2)


def _unflatten_method(self, dim, sizes):
    if not sizes:  # (PyTorch's Python method checks this first: ``x.unflatten(1, None)`` is this RuntimeError)
        raise RuntimeError("unflatten: sizes must be non-empty")
    return _unflatten(self, dim, sizes, 1)


def _unflatten(input, dim, sizes, pos):
    """``pos``: the position PyTorch's TypeError gives ``dim`` (2 in ``torch.unflatten``, 1 in the method)."""
    from .elementwise import require_int
    require_int(dim, "unflatten", pos, "dim")  # (a dim name too: torchish has no named tensors)
    d = wrap_dim(dim, input.ndim)
    sizes = int_list_arg(sizes, "unflatten", "sizes", pos + 1)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if input.ndim == 0:
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions")
    try:
        sizes = infer_size(sizes, input.shape[d])
    except RuntimeError as e:
        if "only one dimension" in str(e) or "invalid shape dimension" in str(e):
            raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({input.shape[d]}) in the input tensor") from None
    return view(input, tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1:]))


def ravel(input):
    require_tensor(input, "ravel")
    old_shape, old_st, _ = _ip.layout(input)
    if _ip.is_contiguous(old_shape, old_st):
        return reshape(input, (-1,))
    return view(input.contiguous(), (-1,))  # PyTorch's contiguous().view(-1): ViewBackward0 over CloneBackward0


# ----------------------------------------------------------------------------------------------------------------
# squeeze / unsqueeze


_SQUEEZE = {k: defop(f"squeeze{k}", lambda x, *, dims: jnp.squeeze(x, dims), view=True, linear=True,
                     grad_name=f"SqueezeBackward{k}") for k in range(3)}
_UNSQUEEZE = defop("unsqueeze", lambda x, *, dim: jnp.expand_dims(x, dim), view=True, linear=True,
                   grad_name="UnsqueezeBackward0")


@layout_rule("squeeze0", "squeeze1", "squeeze2")
def _squeeze_layout(lay, *, dims):
    shape, strides, offset = lay
    keep = [i for i in range(len(shape)) if i not in dims]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep), offset


@layout_rule("unsqueeze")
def _unsqueeze_layout(lay, *, dim):
    shape, strides, offset = lay
    st = 1 if dim >= len(shape) else shape[dim] * strides[dim]
    return shape[:dim] + (1,) + shape[dim:], strides[:dim] + (st,) + strides[dim:], offset


_EVERY = object()  # squeeze() without dim: every size-1 dim; an explicit dim=None is PyTorch's TypeError


@parser_worded
def squeeze(input, dim=_EVERY):
    require_tensor(input, "squeeze")
    if dim is None:
        raise TypeError("squeeze() received an invalid combination of arguments - got (Tensor, NoneType), but "
                        "expected one of: (Tensor input), (Tensor input, int dim), (Tensor input, tuple of ints dim)")
    shp = input.shape
    if dim is _EVERY:
        kind, ax = 0, [i for i, s in enumerate(shp) if s == 1]
    else:
        kind = 2 if isinstance(dim, (tuple, list)) else 1
        ax = [a for a in _dims_arg(dim, input.ndim) if input.ndim and shp[a] == 1]
    res = apply(_SQUEEZE[kind], (input,), dims=tuple(sorted(ax)))
    return res if kind == 0 else show_raw_dims(res, dim=tuple(int(d) for d in dim) if kind == 2 else int(dim))


def _squeeze_method(self, *dims, **kwargs):
    """``Tensor.squeeze``: its list-of-ints overload takes the dims spread out (``x.squeeze(0, 1)``), as PyTorch's
    method does (its function does not)."""
    spread = len(dims) > 1 or dims and isinstance(dims[0], Tensor)  # (``x.squeeze(t)``: t as the list's item)
    return squeeze.__wrapped__(self, *((dims,) if spread else dims), **kwargs)


@parser_worded
def unsqueeze(input, dim):
    return show_raw_dims(apply(_UNSQUEEZE, (input,), dim=wrap_dim(dim, input.ndim + 1)), dim=int(dim))


# ----------------------------------------------------------------------------------------------------------------
# in-place view ops (the tensor itself takes the new shape, keeping its storage)


def _inplace_view(fn):
    def method(self, *args, **kwargs):
        return _ip.inplace_view(self, fn(self, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


for _n in ("view", "view_as", "reshape_as", "stride", "storage_offset", "data_ptr", "is_contiguous", "contiguous"):
    _public(_n, globals()[_n], method=True, function=False)
for _n in ("flatten", "unflatten", "ravel", "squeeze", "unsqueeze"):
    _public(_n, globals()[_n])
_public("reshape", reshape, method=False)
METHODS["reshape"] = parser_worded(_reshape, "reshape", method=True)  # (the function takes one list of sizes)
METHODS["unflatten"] = _unflatten_method
METHODS["squeeze"] = parser_worded(_squeeze_method, "squeeze", method=True)
for _n, _f in (("squeeze", _squeeze_method), ("unsqueeze", unsqueeze.__wrapped__)):  # (worded as squeeze_() ...)
    METHODS[_n + "_"] = parser_worded(_inplace_view(_f), _n + "_", method=True)
METHODS["_base"] = property(_base)
_public("real", real)
_public("imag", imag)
_public("view_as_real", view_as_real, method=False)
_public("view_as_complex", view_as_complex, method=False)
METHODS["real"] = property(real, _part_setter(real))  # attributes on tensors, functions in the namespace
METHODS["imag"] = property(imag, _part_setter(imag))
METHODS["_is_view"] = _is_view
