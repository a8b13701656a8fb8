"""Shape ops. Views (view/reshape, permute, transpose, squeeze, expand, narrow, select, split, unbind, diagonal,
unfold...) are registered with ``view=True``: their outputs share storage with their input, so writes through them
reach the base; each also registers the strides PyTorch would give it (``inplace.layout_rule``). Copies (cat,
stack, repeat, flip, roll, tril, diag...) are ordinary ops."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor, wrap_dim
from . import inplace as _ip
from .inplace import layout_rule
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


def _size_args(size):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(torch.Size(...))`` -> a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        elif not isinstance(s, int):
            try:
                s = s.__index__()
            except AttributeError:
                raise TypeError(f"expected a sequence of integers, got an element of type {type(s).__name__}") \
                    from None
        out.append(s)
    return tuple(out)


def _dims_arg(dims, ndim):
    """An int or a sequence of dims -> wrapped dims, refusing repeats as PyTorch does."""
    ds = (dims,) if not isinstance(dims, (tuple, list)) else tuple(dims)
    out = tuple(wrap_dim(d, ndim) for d in ds)
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
    return st if dim is None else st[wrap_dim(dim, self.ndim)]


def storage_offset(self):
    return _ip.layout(self)[2]


def is_contiguous(self, memory_format=None):
    shape, st, _ = _ip.layout(self)
    return _ip.is_contiguous(shape, st)


def contiguous(self, memory_format=None):
    if is_contiguous(self):
        return self
    from .elementwise import clone
    return clone(self)


def _base(self):
    v = self._view
    if v is None or not v[2] or v[0].__dict__.get("_hidden_base") or \
            any(not op.differentiable for op, _ in v[1]):
        return None
    return v[0]


def _is_view(self):
    return _base(self) is not None


# ----------------------------------------------------------------------------------------------------------------
# view / reshape

_VIEW = defop("view", lambda x, *, shape: jnp.reshape(x, shape), view=True, linear=True, grad_name="ViewBackward0")
_UNSAFE_VIEW = defop("unsafe_view", lambda x, *, shape: jnp.reshape(x, shape), linear=True,
                     grad_name="UnsafeViewBackward0")
_ALIAS = defop("alias", lambda x: x, view=True, linear=True, grad_name="AliasBackward0")


@layout_rule("view")
def _view_layout(lay, *, shape):
    return shape, _ip.view_strides(lay[0], lay[1], shape), lay[2]


@layout_rule("alias")
def _alias_layout(lay):
    return lay


def _bitcast_fwd(x, *, dtype):
    dst = np.dtype(dtype)
    if dst == x.dtype:
        return x
    if dst == np.bool_:
        return _bitcast_fwd(x, dtype=np.uint8) != 0
    if x.dtype == np.bool_:
        x = x.astype(np.uint8)
    src_size, dst_size = x.dtype.itemsize, dst.itemsize
    if src_size == dst_size:
        return jax.lax.bitcast_convert_type(x, dst)
    if src_size > dst_size:
        y = jax.lax.bitcast_convert_type(x, dst)
        return y.reshape(x.shape[:-1] + (x.shape[-1] * (src_size // dst_size),))
    r = dst_size // src_size
    return jax.lax.bitcast_convert_type(x.reshape(x.shape[:-1] + (x.shape[-1] // r, r)), dst)


_VIEW_DTYPE = defop("view_dtype", lambda x, *, dtype, src: _bitcast_fwd(x, dtype=dtype), view=True,
                    differentiable=False)
_ip.BITCASTS["view_dtype"] = lambda new, like, **static: _bitcast_fwd(new, dtype=like.dtype)


# real / imag of a complex tensor: views onto its real or imaginary parts (writes reach the complex base)
_REAL = defop("real", lambda x: jnp.real(x), view=True, linear=True, grad_name="RealBackward0")
_IMAG = defop("imag", lambda x: jnp.imag(x), view=True, linear=True, grad_name="ImagBackward0")
_ip.BITCASTS["real"] = lambda new, like: jax.lax.complex(new.astype(jnp.real(like).dtype), jnp.imag(like))
_ip.BITCASTS["imag"] = lambda new, like: jax.lax.complex(jnp.real(like), new.astype(jnp.imag(like).dtype))


@layout_rule("real")
def _real_imag_layout(lay, part=0):
    shape, strides, offset = lay  # in units of the real dtype: each complex element is two of them
    return shape, tuple(2 * st for st in strides), 2 * offset + part


layout_rule("imag")(lambda lay: _real_imag_layout(lay, 1))


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
    if src.itemsize != dst.itemsize:
        sname, dname = _dtype.scalar_type_name(self.dtype), _dtype.scalar_type_name(dt)
        what = f"to view {sname} as {dname} (different element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        shape, st, off = _ip.layout(self)
        if st[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st[-1]}")
        if src.itemsize < dst.itemsize:
            r = dst.itemsize // src.itemsize
            if shape[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
            if off % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {off}")
            for i, s in enumerate(st[:-1]):
                if s % r:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
    return apply(_VIEW_DTYPE, (self,), dtype=dst, src=src)



def view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size, Tensor)) \
            and not hasattr(shape[0], "__index__"):
        return _view_dtype(self, shape[0])
    shape = infer_size(_size_args(shape), self.numel())
    old_shape, old_st, _ = _ip.layout(self)
    if _ip.view_strides(old_shape, old_st, shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(_VIEW, (self,), shape=shape)


def reshape(input, *shape):
    shape = infer_size(_size_args(shape), input.numel())
    old_shape, old_st, _ = _ip.layout(input)
    if _ip.view_strides(old_shape, old_st, shape) is None:
        return apply(_UNSAFE_VIEW, (input,), shape=shape)   # a copy, as in PyTorch
    return apply(_VIEW, (input,), shape=shape)


def view_as(self, other):
    return view(self, tuple(other.shape))


def reshape_as(self, other):
    return reshape(self, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input.shape
    return reshape(input, tuple(shp[:s]) + (math.prod(shp[s:e + 1]),) + tuple(shp[e + 1:]))


def unflatten(input, dim, sizes):
    d = wrap_dim(dim, input.ndim)
    sizes = _size_args((sizes,)) if not isinstance(sizes, int) else (sizes,)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_size(sizes, input.shape[d])
    except RuntimeError as e:
        if "only one dimension" in str(e) or "invalid shape dimension" in str(e):
            raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({input.shape[d]}) in the input tensor") from None
    return view(input, tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1:]))


def ravel(input):
    return reshape(input, (-1,))


# ----------------------------------------------------------------------------------------------------------------
# permutations

_PERMUTE = defop("permute", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True,
                 grad_name="PermuteBackward0")
_TRANSPOSE = defop("transpose", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True,
                   grad_name="TransposeBackward0")
_T = defop("t", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True, grad_name="TBackward0")


@layout_rule("permute", "transpose", "t")
def _permute_layout(lay, *, dims):
    shape, strides, offset = lay
    return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims), offset


def permute(input, *dims):
    dims = _size_args(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(_PERMUTE, (input,), dims=dims)


def _swap_perm(nd, dim0, dim1):
    if nd == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return ()
    a, b = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    p = list(range(nd))
    p[a], p[b] = p[b], p[a]
    return tuple(p)


def transpose(input, dim0, dim1):
    return apply(_TRANSPOSE, (input,), dims=_swap_perm(input.ndim, dim0, dim1))


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return apply(_T, (input,), dims=tuple(reversed(range(input.ndim))))


def _T_prop(self):
    import warnings
    if self.ndim == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
    elif self.ndim != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                      "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
                      "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=2)
    return apply(_PERMUTE, (self,), dims=tuple(reversed(range(self.ndim))))


def _mT(self):
    if self.ndim == 0:
        import warnings
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
        return apply(_ALIAS, (self,))
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    return transpose(self, -2, -1)


def movedim(input, source, destination):
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    nd = input.ndim
    src = [wrap_dim(s, nd) for s in src]
    dst = [wrap_dim(d, nd) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return apply(_PERMUTE, (input,), dims=tuple(order))


def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


# ----------------------------------------------------------------------------------------------------------------
# squeeze / unsqueeze / expand

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


def squeeze(input, dim=None):
    shp = input.shape
    if dim is None:
        kind, ax = 0, [i for i, s in enumerate(shp) if s == 1]
    else:
        kind = 2 if isinstance(dim, (tuple, list)) else 1
        ax = [a for a in _dims_arg(dim, input.ndim) if input.ndim and shp[a] == 1]
    return apply(_SQUEEZE[kind], (input,), dims=tuple(sorted(ax)))


def unsqueeze(input, dim):
    return apply(_UNSQUEEZE, (input,), dim=wrap_dim(dim, input.ndim + 1))


_EXPAND = defop("expand", lambda x, *, shape: jnp.broadcast_to(x, shape), view=True, linear=True,
                grad_name="ExpandBackward0")


@layout_rule("expand")
def _expand_layout(lay, *, shape):
    (old, strides, offset), new = lay, shape
    shape = old
    lead = len(new) - len(shape)
    st = [0] * lead + [s if shape[i] == new[i + lead] else 0 for i, s in enumerate(strides)]
    return tuple(new), tuple(st), offset


def expand_shape(shp, sizes, dtype):
    """The shape ``expand(sizes)`` gives a tensor of shape ``shp``, with PyTorch's errors."""
    shp = tuple(shp)
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand({_dtype.legacy_type_name(dtype)}{{{list(shp)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            out.append(s)
            continue
        cur = shp[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shp)}")
        out.append(s)
    return tuple(out)


def expand(input, *sizes):
    return apply(_EXPAND, (input,), shape=expand_shape(input.shape, _size_args(sizes), input.dtype))


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, tuple(size))


def broadcast_shapes(*shapes):
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    result = [1] * max((len(s) for s in shapes), default=0)
    for k, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if s[i] == 1 or s[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                                   f"argument at index {k} had {s}; but expected shape should be broadcastable to "
                                   f"{result}")
            result[i] = s[i]
    return Size(result)


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    try:
        shape = broadcast_shapes(*[t.shape for t in tensors])
    except RuntimeError:
        a, b = _mismatch(tensors)
        raise RuntimeError(f"The size of tensor a ({a[0]}) must match the size of tensor b ({b[0]}) at non-singleton "
                           f"dimension {a[1]}") from None
    return tuple(expand(t, shape) for t in tensors)


def _mismatch(tensors):
    shapes = [tuple(t.shape) for t in tensors]
    nd = max(len(s) for s in shapes)
    padded = [(1,) * (nd - len(s)) + s for s in shapes]
    for i in range(nd - 1, -1, -1):
        sizes = [p[i] for p in padded if p[i] != 1]
        if len(set(sizes)) > 1:
            return (sizes[0], i), (sizes[1], i)
    return (1, 0), (1, 0)


# ----------------------------------------------------------------------------------------------------------------
# narrow / select / split / unbind / diagonal / unfold


def _narrow_fwd(x, *, dim, start, length):
    return jax.lax.slice_in_dim(x, start, start + length, axis=dim)


_NARROW = defop("narrow", _narrow_fwd, view=True, linear=True, grad_name="SliceBackward0")


@layout_rule("narrow")
def _narrow_layout(lay, *, dim, start, length):
    shape, strides, offset = lay
    return shape[:dim] + (length,) + shape[dim + 1:], strides, offset + start * strides[dim]


def narrow(input, dim, start, length):
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < -n or start > n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply(_NARROW, (input,), dim=d, start=start, length=length)


def _select_fwd(x, *, dim, index):
    return jax.lax.index_in_dim(x, index, axis=dim, keepdims=False)


_SELECT = defop("select", _select_fwd, view=True, linear=True, grad_name="SelectBackward0")


@layout_rule("select")
def _select_layout(lay, *, dim, index):
    shape, strides, offset = lay
    return shape[:dim] + shape[dim + 1:], strides[:dim] + strides[dim + 1:], offset + index * strides[dim]


def select(input, dim, index):
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return apply(_SELECT, (input,), dim=d, index=index % n)


def _split_fwd(x, *, dim, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(_narrow_fwd(x, dim=dim, start=start, length=s))
        start += s
    return tuple(out)


_SPLIT = defop("split", _split_fwd, view=True, linear=True, grad_name="SplitBackward0")
_SPLIT_WS = defop("split_with_sizes", _split_fwd, view=True, linear=True, grad_name="SplitWithSizesBackward0")


@layout_rule("split", "split_with_sizes")
def _split_layout(lay, *, dim, sizes, _out):
    return _narrow_layout(lay, dim=dim, start=sum(sizes[:_out]), length=sizes[_out])


def split(tensor, split_size_or_sections, dim=0):
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = tuple([s] * (n // s) + ([n % s] if n % s else [])) if s else (0,)
        return apply(_SPLIT, (tensor,), dim=d, sizes=sizes or (0,))
    sizes = tuple(int(s) for s in split_size_or_sections)
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={list(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={list(sizes)}")
    return apply(_SPLIT_WS, (tensor,), dim=d, sizes=sizes)


def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def _slice_range(x, dim, start, stop):
    """``x[..., start:stop]`` along ``dim`` (Python slice semantics) as a view."""
    n = x.shape[dim]
    s, e, _ = slice(start, stop).indices(n)
    return apply(_NARROW, (x,), dim=dim, start=s, length=max(e - s, 0))


def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec._v.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_dtype.scalar_type_name(spec.dtype)}")
        if spec.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {spec.ndim} dims")
        spec = int(spec.item()) if spec.ndim == 0 else [int(i) for i in spec.tolist()]
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        k = spec
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        bounds = [0] + [int(i) for i in spec] + [None]
    return tuple(_slice_range(input, d, a, b) for a, b in zip(bounds[:-1], bounds[1:]))


def chunk(input, chunks, dim=0):
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    size = -(-n // chunks)
    if size == 0:  # an empty dim: `chunks` empty pieces
        return split(input, [0] * chunks, d) if chunks > 1 else split(input, 0, d)
    return split(input, size, d)


def _unbind_fwd(x, *, dim):
    return tuple(_select_fwd(x, dim=dim, index=i) for i in range(x.shape[dim]))


_UNBIND = defop("unbind", _unbind_fwd, view=True, linear=True, grad_name="UnbindBackward0")


@layout_rule("unbind")
def _unbind_layout(lay, *, dim, _out):
    return _select_layout(lay, dim=dim, index=_out)


def unbind(input, dim=0):
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] == 0:
        return ()
    return apply(_UNBIND, (input,), dim=d)


def _diagonal_fwd(x, *, offset, dim1, dim2):
    return jnp.diagonal(x, offset, dim1, dim2)


_DIAGONAL = defop("diagonal", _diagonal_fwd, view=True, linear=True, grad_name="DiagonalBackward0")


@layout_rule("diagonal")
def _diagonal_layout(lay, *, offset, dim1, dim2):
    shape, strides, off = lay
    if offset >= 0:
        n = max(min(shape[dim1], shape[dim2] - offset), 0)
        start = offset * strides[dim2]
    else:
        n = max(min(shape[dim1] + offset, shape[dim2]), 0)
        start = -offset * strides[dim1]
    keep = [i for i in range(len(shape)) if i not in (dim1, dim2)]
    return (tuple(shape[i] for i in keep) + (n,), tuple(strides[i] for i in keep) + (strides[dim1] + strides[dim2],),
            off + (start if n else 0))


def diagonal(input, offset=0, dim1=0, dim2=1):
    a, b = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_DIAGONAL, (input,), offset=int(offset), dim1=a, dim2=b)


def _unfold_fwd(x, *, dim, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    n = (x.shape[dim] - size) // step + 1
    idx = (np.arange(n) * step)[:, None] + np.arange(size)[None, :]
    y = jnp.take(x, jnp.asarray(idx.reshape(-1)), axis=dim)
    y = y.reshape(x.shape[:dim] + (n, size) + x.shape[dim + 1:])
    return jnp.moveaxis(y, dim + 1, -1)


_UNFOLD = defop("unfold", _unfold_fwd, view=True, linear=True, grad_name="UnfoldBackward0")


@layout_rule("unfold")
def _unfold_layout(lay, *, dim, size, step):
    shape, strides, offset = lay
    if not shape:
        return (1,), (1,), offset
    n = (shape[dim] - size) // step + 1
    return (shape[:dim] + (n,) + shape[dim + 1:] + (size,),
            strides[:dim] + (strides[dim] * step,) + strides[dim + 1:] + (strides[dim],), offset)


def unfold(self, dimension, size, step):
    d = wrap_dim(dimension, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(_UNFOLD, (self,), dim=d, size=int(size), step=int(step))


# ----------------------------------------------------------------------------------------------------------------
# in-place view ops (the tensor itself takes the new shape, keeping its storage)


def _inplace_view(fn):
    def method(self, *args, **kwargs):
        return _ip.inplace_view(self, fn(self, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


for _n in ("view", "view_as", "reshape_as", "unfold", "stride", "storage_offset", "is_contiguous", "contiguous"):
    _public(_n, globals()[_n], method=True, function=_n == "unfold")
for _n in ("reshape", "flatten", "unflatten", "ravel", "permute", "transpose", "t", "movedim", "squeeze",
           "unsqueeze", "expand", "expand_as", "broadcast_to", "narrow", "select", "split", "split_with_sizes",
           "tensor_split", "chunk", "unbind", "diagonal", "swapaxes"):
    _public(_n, globals()[_n])
__all__.remove("expand")
__all__.remove("expand_as")
for _n in ("broadcast_shapes", "broadcast_tensors"):
    _public(_n, globals()[_n], method=False)
for _n in ("squeeze", "unsqueeze", "t", "transpose", "swapaxes"):
    METHODS[_n + "_"] = _inplace_view(globals()[_n])
METHODS["swapdims_"] = METHODS["swapaxes_"]
METHODS["moveaxis"] = movedim
METHODS["swapdims"] = swapaxes
METHODS["T"] = property(_T_prop)
METHODS["mT"] = property(_mT)
METHODS["H"] = property(lambda self: _T_prop(self).conj() if self.is_complex() else _T_prop(self))
METHODS["mH"] = property(lambda self: _mT(self).conj() if self.is_complex() else _mT(self))
METHODS["_base"] = property(_base)
_public("real", real)
_public("imag", imag)
METHODS["real"] = property(real, _part_setter(real))  # attributes on tensors, functions in the namespace
METHODS["imag"] = property(imag, _part_setter(imag))
METHODS["_is_view"] = _is_view
__all__ += ["moveaxis", "swapdims"]
moveaxis = movedim
swapdims = swapaxes
# ----------------------------------------------------------------------------------------------------------------
# copies: cat / stack


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def _result_dtype(tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = _dtype.promote_types(dt, t.dtype)
    return dt


_CAT = defop("cat", lambda *xs, axis: jnp.concatenate(xs, axis=axis), promote="same", linear=True,
             grad_name="CatBackward0")
_STACK = defop("stack", lambda *xs, axis: jnp.stack(xs, axis=axis), promote="same", linear=True,
               grad_name="StackBackward0")


def cat(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # legacy: 1-D empty tensors are skipped (they still take part in the dtype)
    keep = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not keep:
        keep = tensors[:1]
    elif len(keep) < len(tensors):
        from .convert import to_dtype
        dt = _result_dtype(tensors)
        keep = [to_dtype(t, dt) for t in keep]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = keep[0]
    d = wrap_dim(dim, ref.ndim)
    for t in keep[1:]:
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
    for t in keep[1:]:
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number "
                                   f"{_index_of(tensors, t)} in the list.")
    from .elementwise import _out
    return _out(apply(_CAT, tuple(keep), axis=d), out)


def _index_of(seq, x):
    return next(i for i, y in enumerate(seq) if y is x)


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    d = wrap_dim(dim, len(shp) + 1)
    from .elementwise import _out
    return _out(apply(_STACK, tuple(tensors), axis=d), out)


def _nonempty(tensors, name):
    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    tensors = [atleast_1d(t) for t in _nonempty(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat([atleast_2d(t) for t in _nonempty(tensors, "vstack")], 0, out=out)


def dstack(tensors, *, out=None):
    return cat([atleast_3d(t) for t in _nonempty(tensors, "dstack")], 2, out=out)


def column_stack(tensors, *, out=None):
    ts = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in _nonempty(tensors, "column_stack")]
    return hstack(ts, out=out)


def _flat(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def _atleast(nd):
    def f(*tensors):
        out = []
        for t in _flat(tensors):
            if t.ndim < nd:
                shape = {0: (1,) * nd, 1: (1,) + tuple(t.shape) + (1,) * (nd - 2), 2: tuple(t.shape) + (1,)}[t.ndim]
                t = reshape(t, shape) if t.ndim == 0 else unsqueeze(t, 0) if nd == 2 else view(t, shape)
            out.append(t)
        return out[0] if len(out) == 1 and not (len(tensors) == 1 and isinstance(tensors[0], (list, tuple))) \
            else tuple(out)
    f.__name__ = f"atleast_{nd}d"
    return f


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


# ----------------------------------------------------------------------------------------------------------------
# copies: repeat / tile / repeat_interleave / flip / roll / rot90 / tril / triu / meshgrid

_REPEAT = defop("repeat", lambda x, *, reps: jnp.tile(x, reps), grad_name="RepeatBackward0", linear=True)


def repeat(self, *sizes):
    sizes = _size_args(sizes)
    if len(sizes) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
    target = [a * b for a, b in zip(shape, sizes)]
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {target}")
    return apply(_REPEAT, (self,), reps=sizes)


def tile(input, dims):
    dims = _size_args((dims,))
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


_REPEAT_INTERLEAVE = defop("repeat_interleave", lambda x, *, repeats, axis, total:
                           jnp.repeat(x, np.asarray(repeats) if isinstance(repeats, tuple) else repeats, axis=axis,
                                      total_repeat_length=total), grad_name="ViewBackward0", linear=True)
_REPEAT_INTERLEAVE_T = defop("repeat_interleave_t", _REPEAT_INTERLEAVE.fwd, grad_name="IndexSelectBackward0",
                             linear=True)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        from .creation import arange
        if input.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(input.shape[0]), input, 0, output_size=output_size)
    x = input if dim is not None else reshape(input, (-1,))
    d = wrap_dim(dim, input.ndim) if dim is not None else 0
    n = x.shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats._v.dtype.kind not in "iu":
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "  # mirrors PyTorch's error
                                      f"'{_dtype.scalar_type_name(repeats.dtype)}'")
        r = [int(v) for v in np.asarray(repeats._concrete()).reshape(-1)]
        if len(r) == 1:
            r = r * n
        if len(r) != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{len(r)} and input.size({d}) = {n}")
        if any(v < 0 for v in r):
            raise RuntimeError("repeats can not be negative")
        op, r = _REPEAT_INTERLEAVE_T, tuple(r)
        total = sum(r)
    else:
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        op, total = _REPEAT_INTERLEAVE, r * n
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return apply(op, (x,), repeats=r, axis=d, total=total)


_FLIP = defop("flip", lambda x, *, dims: jnp.flip(x, dims), linear=True, grad_name="FlipBackward0")


def flip(input, *dims):
    dims = _size_args(dims)
    if input.ndim == 0:
        for d in dims:
            wrap_dim(d, 0)
        return apply(_FLIP, (input,), dims=())
    return apply(_FLIP, (input,), dims=_dims_arg(dims, input.ndim))


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def _roll_fwd(x, *, shifts, dims):
    if dims is None:
        return jnp.roll(x.reshape(-1), shifts).reshape(x.shape)
    return jnp.roll(x, shifts, dims)


_ROLL = defop("roll", _roll_fwd, linear=True, grad_name="RollBackward0")


def roll(input, shifts, dims=None):
    sh = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    ds = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not ds:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
        return apply(_ROLL, (input,), shifts=sh[0], dims=None)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    return apply(_ROLL, (input,), shifts=sh, dims=tuple(wrap_dim(d, input.ndim) for d in ds))


_ROT90 = defop("rot90", lambda x, *, k, dims: jnp.rot90(x, k, dims), linear=True, grad_name="Rot90Backward0")


def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return apply(_ROT90, (input,), k=int(k) % 4, dims=(a, b))


_TRIL = defop("tril", lambda x, *, k: jnp.tril(x, k), linear=True, grad_name="TrilBackward0")
_TRIU = defop("triu", lambda x, *, k: jnp.triu(x, k), linear=True, grad_name="TriuBackward0")


def tril(input, diagonal=0, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    from .elementwise import _out
    return _out(apply(_TRIL, (input,), k=int(diagonal)), out)


def triu(input, diagonal=0, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    from .elementwise import _out
    return _out(apply(_TRIU, (input,), k=int(diagonal)), out)


def meshgrid(*tensors, indexing=None):
    ts = _flat(tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if any(t.dtype != ts[0].dtype for t in ts):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(ts) >= 2
    shape = [t.numel() for t in ts]
    if swap:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(ts):
        vshape = [1] * len(ts)
        vshape[(1 - i) if swap and i < 2 else i] = -1
        out.append(expand(view(t, tuple(vshape)), tuple(shape)))
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------------
# diagonals: diag / diag_embed / diagflat / trace


def _diag_embed_fwd(x, *, offset, dim1, dim2):
    m = x.shape[-1]
    n = m + abs(offset)
    rows = np.arange(m) + max(-offset, 0)
    cols = np.arange(m) + max(offset, 0)
    z = jnp.zeros(x.shape[:-1] + (n, n), x.dtype).at[..., rows, cols].set(x)
    return jnp.moveaxis(z, (-2, -1), (dim1, dim2))


_DIAG_EMBED = defop("diag_embed", _diag_embed_fwd, linear=True, grad_name="DiagEmbedBackward0")
_DIAG_COPY = defop("diagonal_copy", _diagonal_fwd, linear=True, grad_name="DiagonalBackward0_copy")


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    nd = input.ndim + 1
    a, b = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_DIAG_EMBED, (input,), offset=int(offset), dim1=a, dim2=b)


def diag(input, diagonal=0, *, out=None):
    from .elementwise import _out
    if input.ndim == 1:
        return _out(apply(_DIAG_EMBED, (input,), offset=int(diagonal), dim1=0, dim2=1), out)
    if input.ndim == 2:
        return _out(apply(_DIAG_COPY, (input,), offset=int(diagonal), dim1=0, dim2=1), out)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagflat(input, offset=0):
    return apply(_DIAG_EMBED, (reshape(input, (-1,)),), offset=int(offset), dim1=0, dim2=1)


def _trace_fwd(x):
    d = jnp.diagonal(x)
    return jnp.sum(d, dtype=jnp.int64 if jnp.issubdtype(x.dtype, jnp.integer) else x.dtype)


_TRACE = defop("trace", _trace_fwd, linear=True, grad_name="TraceBackward0")


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input._v.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")  # mirrors PyTorch's error
    return apply(_TRACE, (input,))


for _n in ("cat", "stack", "hstack", "vstack", "dstack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d",
           "meshgrid"):
    _public(_n, globals()[_n], method=False)
for _n in ("repeat", "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90", "tril", "triu",
           "diag", "diag_embed", "diagflat", "trace"):
    _public(_n, globals()[_n])
__all__.remove("repeat")
concat = concatenate = cat
__all__ += ["concat", "concatenate"]
METHODS["tril_"] = _ip.make_inplace(tril, "tril_")
METHODS["triu_"] = _ip.make_inplace(triu, "triu_")
