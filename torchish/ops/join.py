"""Copies that join or repeat tensors: cat (concat, concatenate), stack, hstack/vstack/dstack/column_stack,
atleast_1d/2d/3d, meshgrid, repeat, tile and repeat_interleave."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._global_flags import warn_once
from .._tensor import Tensor, wrap_dim
from .._tensor_cpp_str import cpp_str
from ..autograd.grad_mode import STATE
from .broadcast import expand
from .reduce import numpy_kwargs
from .elementwise import parser_worded, require_int, type_name
from .registry import apply, defop
from .registry import Family as _Family
from .shape import _args_or_kw, _size_args, reshape, unsqueeze, view

_public = _Family(globals()).public


# copies: cat / stack


def _tensor_list(tensors, name):
    """A list or tuple of Tensors (a Tensor, a generator or a set raise PyTorch's TypeError)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type_name(tensors)}")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
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


@numpy_kwargs
def cat(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # legacy: 1-D empty tensors are skipped (they still take part in the dtype)
    keep = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    all_skipped = not keep
    if all_skipped:  # every operand is a 1-D empty tensor: PyTorch wraps no dim
        if not hasattr(dim, "__index__"):
            raise TypeError(f"cat(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")
        keep = tensors[:1]
    if len(keep) < len(tensors):
        from .convert import to_dtype
        dt = _result_dtype(tensors)
        keep = [to_dtype(t, dt) for t in keep]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = keep[0]
    d = 0 if all_skipped else wrap_dim(dim, ref.ndim)
    for t in keep[1:]:
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
    for t in keep[1:]:
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number "
                                   f"{_index_of(tensors, t)} in the list.")
    return _joined_out(apply(_CAT, tuple(keep), axis=d), out)


def _index_of(seq, x):
    return next(i for i, y in enumerate(seq) if y is x)


@numpy_kwargs
def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0].shape
    d = wrap_dim(dim, len(shp) + 1)
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    res = apply(_STACK, tuple(tensors), axis=d)
    if d < len(shp) and any(t._view is not None or t._layout is not None for t in tensors):
        from .out_layout import set_stack_layout
        set_stack_layout(res, tensors, d)
    return _joined_out(res, out)


def _joined_out(result, out):
    """cat/stack's ``out=``: a result dtype that cannot be cast to ``out``'s is a TypeError in PyTorch's cat."""
    from .elementwise import _out
    if isinstance(out, Tensor) and not _dtype.can_cast(result.dtype, out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{_dtype.scalar_type_name(out.dtype)}")
    return _out(result, out)


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
        name = f"atleast_{nd}d"
        if len(tensors) == 1 and not isinstance(tensors[0], (Tensor, list, tuple)):  # (neither overload's type)
            got = type_name(tensors[0])
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                            f"of:\n * (Tensor input)\n      didn't match because some of the arguments have invalid "
                            f"types: (!{got}!)\n * (tuple of Tensors tensors)\n      didn't match because some of "
                            f"the arguments have invalid types: (!{got}!)\n")
        flat = _flat(tensors)
        for i, t in enumerate(flat):
            if not isinstance(t, Tensor):
                raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
        out = []
        for t in flat:
            if t.ndim == 0:
                t = reshape(t, (1,) * nd)
            elif t.ndim < nd:  # (PyTorch's unsqueezes, as its graph shows them: (1, n, 1) from (n,) is two)
                t = unsqueeze(t, 0) if t.ndim == 1 else t
                t = unsqueeze(t, -1) if t.ndim < nd else t
            out.append(t)
        return out[0] if len(out) == 1 and not (len(tensors) == 1 and isinstance(tensors[0], (list, tuple))) \
            else tuple(out)
    f.__name__ = f"atleast_{nd}d"
    return f


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


# ----------------------------------------------------------------------------------------------------------------
# copies: repeat / tile / repeat_interleave


_REPEAT = defop("repeat", lambda x, *, reps: jnp.tile(x, reps), grad_name="RepeatBackward0", linear=True)


def repeat(self, *sizes, repeats=None):
    sizes = _args_or_kw(sizes, repeats, "repeat", "repeats")
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    sizes = _size_args(sizes, "repeat", "repeats")
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
    if not isinstance(dims, (tuple, list)):  # ``x.tile(2)`` is the method's varargs; ``torch.tile`` wants a sequence
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    dims = _size_args((dims,))
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


_REPEAT_INTERLEAVE_T = defop("repeat_interleave_t", lambda x, *, repeats, axis, total:
                             jnp.repeat(x, np.asarray(repeats) if isinstance(repeats, tuple) else repeats, axis=axis,
                                        total_repeat_length=total),
                             grad_name="IndexSelectBackward0", linear=True)


@parser_worded
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None and dim is not None:  # (no overload of PyTorch's takes None for repeats)
        raise TypeError("repeat_interleave(): argument 'repeats' (position 2) must be Tensor, not NoneType")
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        from .creation import arange
        if input.dtype not in (_dtype.int32, _dtype.int64):  # (PyTorch's kernel checks the dtype first)
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                      f"'{_dtype.scalar_type_name(input.dtype)}'")
        if input.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        idx = arange(input.shape[0], dtype=input.dtype if input.dtype.category == _dtype._INT else None)
        return repeat_interleave(idx, input, 0, output_size=output_size)  # (indices of the counts' dtype)
    x = input if dim is not None else reshape(input, (-1,))
    d = wrap_dim(dim, input.ndim) if dim is not None else 0
    if dim is not None and input.ndim == 0:  # PyTorch repeats along a dim that a 0-d tensor does not have
        if isinstance(repeats, Tensor):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    n = x.shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype not in (_dtype.int32, _dtype.int64):  # (PyTorch's kernel takes these two only)
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
        require_int(repeats, "repeat_interleave", 2, "repeats", symint=True)
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != r * n:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {r * n} but got {output_size}")
        if not (STATE.grad_enabled and x._rg):  # nothing records: one kernel (the same values)
            return apply(_REPEAT_INTERLEAVE_T, (x,), repeats=r, axis=d, total=r * n)
        # ATen's composite for a number of repeats: each slice along d copied r times as an expanded new dim, cloned
        # (always, even when that is contiguous already) and merged into d (graph: ViewBackward0 -> CloneBackward0
        # -> ExpandBackward0 -> UnsqueezeBackward0)
        from .._aliases import contiguous_format
        from .copying import clone
        x = unsqueeze(x, d + 1)
        x = clone(expand(x, x.shape[:d + 1] + (r,) + x.shape[d + 2:]), memory_format=contiguous_format)
        return x.flatten(d, d + 1)
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return apply(op, (x,), repeats=r, axis=d, total=total)


# ----------------------------------------------------------------------------------------------------------------
# meshgrid


def meshgrid(*tensors, indexing=None):
    ts = _flat(tensors)
    for i, t in enumerate(ts):  # (PyTorch's parser: a list of Tensors, then a str)
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
    if indexing is not None and not isinstance(indexing, str):
        raise TypeError(f"meshgrid(): argument 'indexing' must be str, not {type_name(indexing)}")
    if indexing is None:
        warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                  stacklevel=3)
        indexing = "ij"
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t.dtype != ts[0].dtype for t in ts):  # (PyTorch's order of checks: dtypes, indexing, dims)
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {cpp_str(t)}")
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


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, one per row (a single tensor comes back as it is).

    Example::

        >>> torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4]))
        tensor([[1, 3],
                [1, 4],
                [2, 3],
                [2, 4]])
    """
    ts = _tensor_list(tensors, "cartesian_prod")
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], dim=1)


row_stack = vstack


for _n in ("cat", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack", "atleast_1d", "atleast_2d",
           "atleast_3d", "meshgrid", "cartesian_prod"):
    _public(_n, globals()[_n], method=False)
for _n in ("repeat", "tile", "repeat_interleave"):
    _public(_n, globals()[_n])


def _tile_method(self, *args, dims=None):
    """``Tensor.tile``: the dims as separate ints (``x.tile(2, 1)``), one sequence, or ``dims=``."""
    args = _args_or_kw(args, dims, "tile", "dims")
    if not args:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    return tile(self, _size_args(args, "tile", "dims"))


METHODS["tile"] = _tile_method
__all__.remove("repeat")
concat = concatenate = cat
__all__ += ["concat", "concatenate"]
