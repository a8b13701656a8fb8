"""Views onto parts of a tensor: narrow, select, split/split_with_sizes/tensor_split/chunk, unbind, and unfold
(sliding windows). Each registers the strides PyTorch gives its outputs (``inplace.layout_rule``)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from ..autograd.saved_attrs import show_raw_dims
from .casting import cast
from .elementwise import parser_worded, require_int, structured_out, type_name
from . import dynamic as _dynamic
from .inplace import _dense, contiguous_strides, layout, layout_rule, overlaps_itself
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


# ----------------------------------------------------------------------------------------------------------------
# narrow / select / split / unbind / unfold


def _narrow_fwd(x, *, dim, start, length):
    if type(start) is not int:  # (an eager kernel's start, as a value: ops/dynamic.py)
        return jax.lax.dynamic_slice_in_dim(x, start, length, axis=dim)
    return jax.lax.slice_in_dim(x, start, start + length, axis=dim)


def _dynamic_arg(name, zero=False):
    """``OpDef.dynamic`` taking the static argument ``name`` as a value (with ``zero``, a 0 too: a start of 0
    stays static otherwise)."""
    def dynamic(static, take):
        return tuple((k, take(v) if k == name and (v or zero) else v) for k, v in static)
    return dynamic


_NARROW = defop("narrow", _narrow_fwd, view=True, linear=True, grad_name="SliceBackward0",
                dynamic=_dynamic_arg("start"))


@layout_rule("narrow")
def _narrow_layout(lay, *, dim, start, length):
    shape, strides, offset = lay
    return shape[:dim] + (length,) + shape[dim + 1:], strides, offset + start * strides[dim]


@parser_worded
def narrow(input, dim, start, length):
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor) and (start.ndim or start.dtype.category != _dtype._INT):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    require_int(start, "narrow", 3, "start", symint=True)
    require_int(length, "narrow", 4, "length", symint=True)
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
    return show_raw_dims(apply(_NARROW, (input,), dim=d, start=start, length=length), dim=int(dim))


def _select_fwd(x, *, dim, index):
    if type(index) is not int:
        return jax.lax.dynamic_index_in_dim(x, index, axis=dim, keepdims=False)
    return jax.lax.index_in_dim(x, index, axis=dim, keepdims=False)


_SELECT = defop("select", _select_fwd, view=True, linear=True, grad_name="SelectBackward0",
                dynamic=_dynamic_arg("index", zero=True))


@layout_rule("select")
def _select_layout(lay, *, dim, index):
    shape, strides, offset = lay
    return shape[:dim] + shape[dim + 1:], strides[:dim] + strides[dim + 1:], offset + index * strides[dim]


def select(input, dim, index):
    require_int(index, "select", 3, "index", symint=True)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return show_raw_dims(apply(_SELECT, (input,), dim=d, index=index % n), dim=int(dim))


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
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.numel() == 1:
        split_size_or_sections = int(split_size_or_sections)  # (as PyTorch's Tensor.split: int() of one element)
    if isinstance(split_size_or_sections, bool):  # (no overload of PyTorch's takes it)
        raise TypeError("split(): argument 'split_size' must be int or tuple of ints, not bool")
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = tuple([s] * (n // s) + ([n % s] if n % s else [])) if s else (0,)
        return apply(_SPLIT, (tensor,), dim=d, sizes=sizes or (0,))
    # (anything else is PyTorch's split_with_sizes's list: its parser checks the first value's type, unpacks later
    # ones by __index__)
    from .shape import int_list_arg
    sizes = int_list_arg(split_size_or_sections, "split_with_sizes", "split_sizes", 2)
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={list(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={list(sizes)}")
    if not sizes:  # no sections of an empty dim: no outputs
        return ()
    return apply(_SPLIT_WS, (tensor,), dim=d, sizes=sizes)


def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def _slice_range(x, dim, start, stop):
    """``x[..., start:stop]`` along ``dim`` (Python slice semantics) as a view."""
    n = x.shape[dim]
    s, e, _ = slice(start, stop).indices(n)
    return apply(_NARROW, (x,), dim=dim, start=s, length=max(e - s, 0))


def _split_spec(name, positional, sections=None, indices=None, tensor_indices_or_sections=None):
    """The split spec of tensor_split/hsplit/...: given positionally (``positional``: the arguments after ``input``,
    the spec alone), or by the keyword of PyTorch's overload for its kind: ``sections`` (an int), ``indices`` (ints)
    or ``tensor_indices_or_sections``. ``indices_or_sections``, the documentation's name, is no keyword of any
    overload (PyTorch refuses it)."""
    named = {k: v for k, v in (("sections", sections), ("indices", indices),
                               ("tensor_indices_or_sections", tensor_indices_or_sections)) if v is not None}
    if len(positional) > 1:
        dim = ", int dim" * (name == "tensor_split")
        raise TypeError(f"{name}() received an invalid combination of arguments - got {len(positional) + 1} "
                        f"positional arguments, but expected (Tensor input, spec{dim})")
    positional = positional[0] if positional else None
    if len(named) + (positional is not None) != 1 or isinstance(positional, bool) \
            or "sections" in named and (not isinstance(sections, int) or isinstance(sections, bool)) \
            or "indices" in named and not isinstance(indices, (tuple, list)) \
            or "tensor_indices_or_sections" in named and not isinstance(tensor_indices_or_sections, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments: expected one of (sections), "
                        f"(indices){' or (tensor_indices_or_sections), and dim' * (name == 'tensor_split')}")
    return next(iter(named.values())) if named else positional


@parser_worded
def tensor_split(input, *args, dim=None, sections=None, indices=None, tensor_indices_or_sections=None):
    """``tensor_split(input, sections | indices | tensor_indices_or_sections, dim=0)``: the spec positionally or by
    its overload's keyword, ``dim`` positionally after it or by keyword."""
    if len(args) == 2 and dim is None:
        if args[1] is None:  # (an int: PyTorch's parser refuses None)
            raise TypeError("tensor_split(): argument 'dim' must be int, not NoneType")
        args, dim = args[:1], args[1]
    indices_or_sections = _split_spec("tensor_split", args, sections, indices, tensor_indices_or_sections)
    dim = 0 if dim is None else dim
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
    if isinstance(spec, np.integer) and not isinstance(spec, np.bool_):
        spec = int(spec)
    if not isinstance(spec, (int, tuple, list)):
        raise TypeError(f"tensor_split(): argument 'indices' must be tuple of ints, not {type_name(spec)}")
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        k = spec
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        from .shape import int_list_arg
        bounds = [0] + list(int_list_arg(spec, "tensor_split", "indices", 2)) + [None]
    return tuple(_slice_range(input, d, a, b) for a, b in zip(bounds[:-1], bounds[1:]))


def chunk(input, chunks, dim=0):
    require_int(chunks, "chunk", 2, "chunks")
    chunks = int(chunks)
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
    # (a split, whose VJP is one concatenate: traced and compiled ~3x faster than one of per-index selects)
    shape = x.shape[:dim] + x.shape[dim + 1:]
    return tuple(p.reshape(shape) for p in jax.lax.split(x, [1] * x.shape[dim], axis=dim))


def _unbind_eager(fwd, static):
    """unbind's eager kernel: one program for a few outputs; beyond that one select kernel called per output (the
    index a value: ops/dynamic.py), as XLA's compile time grows with a program's outputs (~10 ms each on CPU: 0.7 s
    for ``for row in x`` over 64 rows, against ~30 ms for the select kernel)."""
    dim = dict(static)["dim"]
    whole = jax.jit(lambda x: fwd(x, dim=dim))
    one = jax.jit(lambda x, i: _select_fwd(x, dim=dim, index=i))

    def run(x):
        n = x.shape[dim]
        if n <= _UNBIND_WHOLE:
            return whole(x)
        return tuple(one(x, i) for i in _dynamic.values(range(n)))
    return run


_UNBIND_WHOLE = 8
_UNBIND = defop("unbind", _unbind_fwd, view=True, linear=True, grad_name="UnbindBackward0", eager=_unbind_eager)


@layout_rule("unbind")
def _unbind_layout(lay, *, dim, _out):
    return _select_layout(lay, dim=dim, index=_out)


@parser_worded
def unbind(input, dim=0):
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] == 0:
        return ()
    return apply(_UNBIND, (input,), dim=d)


def _unfold_fwd(x, *, dim, size, step):
    if x.ndim == 0:  # one window of the value, or none of size 0
        return x.reshape(1)[:size]
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
        return (size,), (1,), offset
    n = (shape[dim] - size) // step + 1
    return (shape[:dim] + (n,) + shape[dim + 1:] + (size,),
            strides[:dim] + (strides[dim] * step,) + strides[dim + 1:] + (strides[dim],), offset)


def unfold(self, dimension, size, step):
    require_int(size, "unfold", 3, "size")  # (positions counted with self: the method's message counts without)
    require_int(step, "unfold", 4, "step")
    d = wrap_dim(dimension, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(_UNFOLD, (self,), dim=d, size=int(size), step=int(step))


def _directional_split(name, min_dims, dim):
    def f(input, *args, sections=None, indices=None):
        """``torch.{name}``: ``tensor_split`` along a fixed dimension; an int must divide that dimension evenly."""
        indices_or_sections = _split_spec(name, args, sections, indices)
        if input.ndim < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        d = dim if input.ndim > 1 else 0
        if isinstance(indices_or_sections, int):
            n = input.shape[d]
            if indices_or_sections == 0 or n % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split.__wrapped__(input, indices_or_sections, d)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f.__doc__.format(name=name)
    return parser_worded(f)


hsplit = _directional_split("hsplit", 1, 1)
vsplit = _directional_split("vsplit", 2, 0)
dsplit = _directional_split("dsplit", 3, 2)


# ----------------------------------------------------------------------------------------------------------------
# slice_scatter / select_scatter / diagonal_scatter: each one node of both inputs (PyTorch's ``*ScatterBackward0``),
# not a clone written through a view; linear, so the VJP (jax's) gives ``grad`` with the region zeroed to ``input``
# and ``grad``'s region to ``src``


def _set_along(x, src, axis, key):
    return x.at[(slice(None),) * axis + (key,)].set(cast(src, x.dtype))


def _slice_scatter_fwd(x, src, *, axis, start, end, step):
    if type(start) is not int:  # (an eager kernel's start, as a value: ops/dynamic.py; src's length is static)
        if step == 1:
            return jax.lax.dynamic_update_slice_in_dim(x, cast(src, x.dtype), start, axis)
        return _set_along(x, src, axis, start + jnp.arange(src.shape[axis]) * step)
    return _set_along(x, src, axis, slice(start, end, step))


def _select_scatter_fwd(x, src, *, axis, index):
    if type(index) is not int:
        return jax.lax.dynamic_update_index_in_dim(x, cast(src, x.dtype), index, axis)
    return _set_along(x, src, axis, index)


def _dynamic_bounds(static, take):
    """slice_scatter's ``OpDef.dynamic``: a start other than 0 and its end as values (the kernel's length is
    src's)."""
    kw = dict(static)
    if not kw["start"]:
        return static
    return tuple((k, take(v) if k in ("start", "end") else v) for k, v in static)


def _diagonal_scatter_fwd(x, src, *, offset, dim1, dim2):
    n = src.shape[-1]  # the diagonal is src's last dim, as diagonal() puts it
    rows, cols = np.arange(n) + max(-offset, 0), np.arange(n) + max(offset, 0)
    moved = jnp.moveaxis(x, (dim1, dim2), (-2, -1))
    return jnp.moveaxis(moved.at[..., rows, cols].set(cast(src, x.dtype)), (-2, -1), (dim1, dim2))


_SLICE_SCATTER = defop("slice_scatter", _slice_scatter_fwd, linear=True, grad_name="SliceScatterBackward0",
                       dynamic=_dynamic_bounds)
_SELECT_SCATTER = defop("select_scatter", _select_scatter_fwd, linear=True, grad_name="SelectScatterBackward0",
                        dynamic=_dynamic_arg("index", zero=True))
_DIAGONAL_SCATTER = defop("diagonal_scatter", _diagonal_scatter_fwd, linear=True,
                          grad_name="DiagonalScatterBackward0")


def _scatter_region(op, input, src, region, **static):
    """``op`` (one of the ``*_scatter`` ops) of ``input`` and ``src``, once ``src``'s shape is ``region``'s (the
    shape of the part of ``input`` it replaces)."""
    if list(src.shape) != list(region):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region)}")
    return _preserved_strides(_shared_memory(apply(op, (input, src), **static), input, op, region, static), input)


def _shared_memory(out, input, op, region, static):
    """``out`` showing, as PyTorch's, the writes of ``src`` wherever ``input``'s elements share memory with the
    region written (``input.as_strided((2, 2), (1, 1))``: PyTorch's result is a copy of its storage with that
    layout, so writing row 0 changes element [1, 0] too; ops fuzzer seed 9100597). Its gradients stay those of
    PyTorch's formulas, which do not see the sharing (the recorded op's). A stride-0 input has a contiguous copy:
    nothing to do."""
    from .strided import positions
    shape, strides, offset = layout(input)
    if 0 in shape or overlaps_itself(shape, strides) or _dense(shape, strides):
        return out
    pos = positions(shape, strides, offset).reshape(-1)
    if len(np.unique(pos)) == len(pos):
        return out
    n = pos.size
    writer = np.asarray(op.fwd(jnp.full(tuple(shape), -1), jnp.arange(int(np.prod(region))).reshape(region),
                               **static)).reshape(-1)
    written = np.full(int(pos.max()) + 1, -1)
    written[pos[writer >= 0]] = np.nonzero(writer >= 0)[0]
    shows = np.where(written[pos] >= 0, written[pos], np.arange(n))
    out._d = out._d.reshape(-1)[jnp.asarray(shows)].reshape(out._d.shape)
    return out


def _preserved_strides(out, input):
    """``out`` with the strides and storage offset of ``input``, as PyTorch's ``*_scatter`` results (a clone that
    preserves them, dense or not), unless ``input`` overlaps itself (an expanded one: contiguous)."""
    if input._view is None and input._layout is None:
        return out
    shape, strides, offset = layout(input)
    if (tuple(strides) != contiguous_strides(shape) or offset) and not overlaps_itself(shape, strides):
        out._layout = (tuple(shape), tuple(strides), offset)
    return out


@structured_out
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by ``src``."""
    d = wrap_dim(dim, input.ndim)
    start, end, step = (None if v is None else int(v) for v in (start, end, step))
    if step is not None and step <= 0:
        raise RuntimeError("slice step must be positive")
    size = list(input.shape)
    start, end, step = slice(start, end, step).indices(size[d])  # (normalized: the kernel takes start as a value)
    size[d] = len(range(start, end, step))
    end = max(end, start)
    return _scatter_region(_SLICE_SCATTER, input, src, size, axis=d, start=start, end=end, step=step)


def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    require_int(index, "select_scatter", 4, "index", symint=True)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n, index = input.shape[d], int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    size = list(input.shape)
    del size[d]
    return _scatter_region(_SELECT_SCATTER, input, src, size, axis=d, index=index % n)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    require_int(offset, "diagonal_scatter", 3, "offset")
    offset = int(offset)
    a, b = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = list(input.shape)
    n = max(min(shape[a], shape[b] - offset) if offset >= 0 else min(shape[a] + offset, shape[b]), 0)
    size = [s for i, s in enumerate(shape) if i not in (a, b)] + [n]
    return _scatter_region(_DIAGONAL_SCATTER, input, src, size, offset=offset, dim1=a, dim2=b)


for _n in ("narrow", "select", "split", "split_with_sizes", "tensor_split", "chunk", "unbind", "unfold", "hsplit",
           "vsplit", "dsplit", "slice_scatter", "select_scatter", "diagonal_scatter"):
    _public(_n, globals()[_n])


def _split_method(self, split_size, dim=0):
    """``Tensor.split``: its size argument is named ``split_size`` (``split_size_or_sections`` in ``torch.split``)."""
    return split(self, split_size, dim)


def _directional_split_method(fn):
    def method(self, *args, **kw):
        """``Tensor.hsplit`` and co: unlike the functions, also take the indices as ints (``x.hsplit(1, 2)``)."""
        return fn(self, list(args) if len(args) > 1 else args[0] if args else None, **kw)
    method.__name__ = method.__qualname__ = fn.__name__
    return parser_worded(method, fn.__name__, method=True)


METHODS["split"] = _split_method
for _n in ("hsplit", "vsplit", "dsplit"):
    METHODS[_n] = _directional_split_method(globals()[_n])
