"""Shape ops. Views (view/reshape, permute, transpose, squeeze, expand, narrow, select, split, unbind, diagonal,
unfold...) are registered with ``view=True``: their outputs share storage with their input, so writes through them
reach the base. Copies (cat, stack, repeat, flip, roll, tril...) are ordinary ops."""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .._tensor import Size, Tensor, wrap_dim
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


def infer_size(shape, numel):
    """Resolve one -1 in ``shape`` so the product is ``numel``, with PyTorch's errors."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = math.prod(s for s in shape if s != -1)
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# ----------------------------------------------------------------------------------------------------------------
# views

_RESHAPE = defop("view", lambda x, *, shape: jnp.reshape(x, shape), view=True, linear=True,
                 grad_name="ViewBackward0")
_RESHAPE_R = defop("reshape", lambda x, *, shape: jnp.reshape(x, shape), view=True, linear=True,
                   grad_name="ViewBackward0")


def view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size)) and not hasattr(shape[0], "__index__"):
        from .convert import to_dtype
        return to_dtype(self, shape[0])  # x.view(dtype) of the same item size
    shape = infer_size(_size_args(shape), self.numel())
    if shape == self._d.shape:
        return apply(_RESHAPE, (self,), shape=shape)
    return apply(_RESHAPE, (self,), shape=shape)


def reshape(input, *shape):
    shape = infer_size(_size_args(shape), input.numel())
    return apply(_RESHAPE_R, (input,), shape=shape)


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
    shp = input.shape
    return reshape(input, tuple(shp[:s]) + (math.prod(shp[s:e + 1]),) + tuple(shp[e + 1:]))


def unflatten(input, dim, sizes):
    d = wrap_dim(dim, input.ndim)
    sizes = infer_size(tuple(sizes), input.shape[d])
    return reshape(input, tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1:]))


def ravel(input):
    return reshape(input, (-1,))


_PERMUTE = defop("permute", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True,
                 grad_name="PermuteBackward0")
_TRANSPOSE = defop("transpose", lambda x, *, dims: jnp.transpose(x, dims), view=True, linear=True,
                   grad_name="TransposeBackward0")


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


def transpose(input, dim0, dim1):
    nd = input.ndim
    if nd == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return apply(_TRANSPOSE, (input,), dims=())
    a, b = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    p = list(range(nd))
    p[a], p[b] = p[b], p[a]
    return apply(_TRANSPOSE, (input,), dims=tuple(p))


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else apply(_TRANSPOSE, (input,), dims=tuple(range(input.ndim)))


def _T(self):
    return permute(self, tuple(reversed(range(self.ndim))))


def _mT(self):
    if self.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
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
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))


_SQUEEZE = defop("squeeze", lambda x, *, shape: jnp.reshape(x, shape), view=True, linear=True,
                 grad_name="SqueezeBackward0")
_UNSQUEEZE = defop("unsqueeze", lambda x, *, shape: jnp.reshape(x, shape), view=True, linear=True,
                   grad_name="UnsqueezeBackward0")


def squeeze(input, dim=None):
    shp = input.shape
    if dim is None:
        ax = [i for i, s in enumerate(shp) if s == 1]
    else:
        ds = dim if isinstance(dim, (tuple, list)) else (dim,)
        ax = [wrap_dim(d, input.ndim) for d in ds]
        ax = [a for a in ax if input.ndim and shp[a] == 1]
    new = tuple(s for i, s in enumerate(shp) if i not in ax)
    return apply(_SQUEEZE, (input,), shape=new)


def unsqueeze(input, dim):
    d = wrap_dim(dim, input.ndim + 1)
    shp = list(input.shape)
    shp.insert(d, 1)
    return apply(_UNSQUEEZE, (input,), shape=tuple(shp))


_EXPAND = defop("expand", lambda x, *, shape: jnp.broadcast_to(x, shape), view=True, linear=True,
                grad_name="ExpandBackward0")


def expand(input, *sizes):
    sizes = _size_args(sizes)
    shp = tuple(input.shape)
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shp)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shp)})")
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
    out = tuple(out)
    if out == shp:
        return apply(_EXPAND, (input,), shape=out)
    return apply(_EXPAND, (input,), shape=out)


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, tuple(size))


def broadcast_shapes(*shapes):
    try:
        return Size(np.broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,) for s in shapes]))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape. "
                           f"Got {[list(s) for s in shapes]}") from None


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


def _narrow_fwd(x, *, dim, start, length):
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(start, start + length)
    return x[tuple(idx)]


_NARROW = defop("narrow", _narrow_fwd, view=True, linear=True, grad_name="NarrowBackward0")
_SLICE = defop("slice", _narrow_fwd, view=True, linear=True, grad_name="SliceBackward0")


def narrow(input, dim, start, length):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    start = int(start)
    if start < -n or start > n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start % n if n and start < 0 else start
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply(_NARROW, (input,), dim=d, start=start, length=int(length))


def _select_fwd(x, *, dim, index):
    return x[(slice(None),) * dim + (index,)]


_SELECT = defop("select", _select_fwd, view=True, linear=True, grad_name="SelectBackward0")


def select(input, dim, index):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return apply(_SELECT, (input,), dim=d, index=index % n)


def _split_fwd(x, *, dim, sizes):
    out = []
    start = 0
    for s in sizes:
        out.append(_narrow_fwd(x, dim=dim, start=start, length=s))
        start += s
    return tuple(out)


_SPLIT = defop("split", _split_fwd, view=True, linear=True, grad_name="SplitBackward0")
_SPLIT_WS = defop("split_with_sizes", _split_fwd, view=True, linear=True, grad_name="SplitWithSizesBackward0")


def split(tensor, split_size_or_sections, dim=0):
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0 and not (s == 0 and n == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = tuple([s] * (n // s) + ([n % s] if n % s else [])) if s else (0,)
        op = _SPLIT
    else:
        sizes = tuple(int(s) for s in split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={list(sizes)}")
        op = _SPLIT_WS
    return apply(op, (tensor,), dim=d, sizes=sizes)


def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def tensor_split(input, indices_or_sections, dim=0):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
    else:
        idx = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a, 0) for a, b in zip(idx[:-1], idx[1:])]
    return apply(_SPLIT_WS, (input,), dim=d, sizes=tuple(sizes))


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return split(input, [0] * chunks if n == 0 else [n], d) if n == 0 else (input,)
    return split(input, size, d)


def _unbind_fwd(x, *, dim):
    return tuple(x[(slice(None),) * dim + (i,)] for i in range(x.shape[dim]))


_UNBIND = defop("unbind", _unbind_fwd, view=True, linear=True, grad_name="UnbindBackward0")


def unbind(input, dim=0):
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] == 0:
        return ()
    return apply(_UNBIND, (input,), dim=d)


def _diagonal_fwd(x, *, offset, dim1, dim2):
    return jnp.diagonal(x, offset, dim1, dim2)


_DIAGONAL = defop("diagonal", _diagonal_fwd, view=True, linear=True, grad_name="DiagonalBackward0")


def diagonal(input, offset=0, dim1=0, dim2=1):
    a, b = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_DIAGONAL, (input,), offset=int(offset), dim1=a, dim2=b)


def _unfold_fwd(x, *, dim, size, step):
    n = (x.shape[dim] - size) // step + 1
    starts = np.arange(n) * step
    idx = starts[:, None] + np.arange(size)[None, :]
    y = jnp.take(x, jnp.asarray(idx.reshape(-1)), axis=dim)
    y = y.reshape(x.shape[:dim] + (n, size) + x.shape[dim + 1:])
    return jnp.moveaxis(y, dim + 1, -1)


_UNFOLD = defop("unfold", _unfold_fwd, view=True, linear=True, grad_name="UnfoldBackward0")


def unfold(self, dimension, size, step):
    d = wrap_dim(dimension, self.ndim) if self.ndim else 0
    n = self.shape[d] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(_UNFOLD, (self,), dim=d, size=int(size), step=int(step))


def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


for _n in ("view", "view_as", "reshape_as", "unfold"):
    _public(_n, globals()[_n], method=True)
    if _n != "unfold":
        __all__.remove(_n)
for _n in ("reshape", "flatten", "unflatten", "ravel", "permute", "transpose", "t", "movedim", "squeeze",
           "unsqueeze", "expand", "expand_as", "broadcast_to", "narrow", "select", "split", "split_with_sizes",
           "tensor_split", "chunk", "unbind", "diagonal", "swapaxes"):
    _public(_n, globals()[_n])
__all__.remove("expand")
__all__.remove("expand_as")
for _n in ("broadcast_shapes", "broadcast_tensors"):
    _public(_n, globals()[_n], method=False)
METHODS["moveaxis"] = movedim
METHODS["swapdims"] = swapaxes
METHODS["T"] = property(_T)
METHODS["mT"] = property(_mT)
METHODS["H"] = property(lambda self: _T(self).conj() if self.is_complex() else _T(self))
METHODS["mH"] = property(lambda self: _mT(self).conj() if self.is_complex() else _mT(self))
METHODS["contiguous"] = lambda self, memory_format=None: self
__all__ += ["moveaxis", "swapdims"]
moveaxis = movedim
swapdims = swapaxes


# ----------------------------------------------------------------------------------------------------------------
# copies

def _cat_fwd(*xs, axis):
    return jnp.concatenate(xs, axis=axis)


_CAT = defop("cat", _cat_fwd, promote="same", linear=True, grad_name="CatBackward0")


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def cat(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "cat")
    # legacy: 1-D empty tensors are skipped
    keep = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    ref = keep[0]
    d = wrap_dim(dim, ref.ndim) if ref.ndim else 0
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    for i, t in enumerate(keep[1:], 1):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    from .elementwise import _out
    return _out(apply(_CAT, tuple(keep), axis=d), out)


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    shp = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    d = wrap_dim(dim, len(shp) + 1)
    from .elementwise import _out
    return _out(cat([unsqueeze(t, d) for t in tensors], d), out)


def hstack(tensors):
    tensors = [atleast_1d(t) for t in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([atleast_2d(t) for t in _tensor_list(tensors, "vstack")], 0)


def dstack(tensors):
    return cat([atleast_3d(t) for t in _tensor_list(tensors, "dstack")], 2)


def column_stack(tensors):
    ts = [reshape(t, (-1, 1)) if t.ndim <= 1 else t for t in _tensor_list(tensors, "column_stack")]
    return cat(ts, 1)


def atleast_1d(*tensors):
    out = [reshape(t, (1,)) if t.ndim == 0 else t for t in _flat(tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*tensors):
    out = []
    for t in _flat(tensors):
        out.append(reshape(t, (1, 1)) if t.ndim == 0 else unsqueeze(t, 0) if t.ndim == 1 else t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*tensors):
    out = []
    for t in _flat(tensors):
        if t.ndim == 0:
            t = reshape(t, (1, 1, 1))
        elif t.ndim == 1:
            t = reshape(t, (1, -1, 1))
        elif t.ndim == 2:
            t = unsqueeze(t, -1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def _flat(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


_REPEAT = defop("repeat", lambda x, *, reps: jnp.tile(x, reps), grad_name="RepeatBackward0", linear=True)


def repeat(self, *sizes):
    sizes = _size_args(sizes)
    if len(sizes) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return apply(_REPEAT, (self,), reps=sizes)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


_REPEAT_INTERLEAVE = defop("repeat_interleave", lambda x, *, repeats, axis, total:
                           jnp.repeat(x, jnp.asarray(repeats) if isinstance(repeats, tuple) else repeats, axis=axis,
                                      total_repeat_length=total), grad_name="RepeatInterleaveBackward0", linear=True)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats_tensor)
        reps = input
        from .creation import arange
        return repeat_interleave(arange(reps.shape[0]), reps, 0)
    x = input if dim is not None else reshape(input, (-1,))
    d = wrap_dim(dim, input.ndim) if dim is not None else 0
    if isinstance(repeats, Tensor):
        r = tuple(int(v) for v in np.asarray(repeats._d).reshape(-1))
        r = r[0] if len(r) == 1 else r
    else:
        r = int(repeats)
    total = sum(r) if isinstance(r, tuple) else r * x.shape[d]
    return apply(_REPEAT_INTERLEAVE, (x,), repeats=r, axis=d, total=total)


_FLIP = defop("flip", lambda x, *, dims: jnp.flip(x, dims), linear=True, grad_name="FlipBackward0")


def flip(input, *dims):
    dims = _size_args(dims)
    return apply(_FLIP, (input,), dims=tuple(wrap_dim(d, input.ndim) for d in dims))


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


_ROLL = defop("roll", lambda x, *, shifts, dims: jnp.roll(x, shifts, dims) if dims is not None else
              jnp.roll(x.reshape(-1), shifts).reshape(x.shape), linear=True, grad_name="RollBackward0")


def roll(input, shifts, dims=None):
    sh = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        return apply(_ROLL, (input,), shifts=sh[0], dims=None)
    ds = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    return apply(_ROLL, (input,), shifts=sh, dims=tuple(wrap_dim(d, input.ndim) for d in ds))


_ROT90 = defop("rot90", lambda x, *, k, dims: jnp.rot90(x, k, dims), linear=True, grad_name="Rot90Backward0")


def rot90(input, k=1, dims=(0, 1)):
    return apply(_ROT90, (input,), k=int(k), dims=tuple(wrap_dim(d, input.ndim) for d in dims))


_TRIL = defop("tril", lambda x, *, k: jnp.tril(x, k), linear=True, grad_name="TrilBackward0")
_TRIU = defop("triu", lambda x, *, k: jnp.triu(x, k), linear=True, grad_name="TriuBackward0")


def tril(input, diagonal=0, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply(_TRIL, (input,), k=int(diagonal))


def triu(input, diagonal=0, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply(_TRIU, (input,), k=int(diagonal))


def meshgrid(*tensors, indexing=None):
    ts = _flat(tensors)
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    shape = [t.numel() for t in ts]
    if indexing == "xy" and len(ts) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        pos = i
        if indexing == "xy" and len(ts) >= 2 and i < 2:
            pos = 1 - i
        view_shape[pos] = -1
        out.append(expand(reshape(t, tuple(view_shape)), tuple(shape)))
    return tuple(out)


for _n in ("cat", "stack", "hstack", "vstack", "dstack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d",
           "meshgrid"):
    _public(_n, globals()[_n], method=False)
for _n in ("repeat", "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90", "tril", "triu"):
    _public(_n, globals()[_n])
__all__.remove("repeat")
concat = concatenate = cat
__all__ += ["concat", "concatenate"]
METHODS["tril_"] = lambda self, diagonal=0: self._check_inplace() or _assign(self, tril(self, diagonal))
METHODS["triu_"] = lambda self, diagonal=0: self._check_inplace() or _assign(self, triu(self, diagonal))


def _assign(self, r):
    from .inplace import assign
    return assign(self, r)
