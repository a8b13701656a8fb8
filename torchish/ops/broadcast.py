"""Broadcasting: expand/expand_as/broadcast_to (views whose broadcast dims have stride 0), broadcast_shapes and
broadcast_tensors, with PyTorch's errors."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Size, Tensor
from .elementwise import require_tensor, type_name
from .inplace import layout_rule
from .registry import apply, defop
from .registry import Family as _Family
from .shape import _args_or_kw, _size_args

_family = _Family(globals())
_public = _family.public


_EXPAND = defop("expand", lambda x, *, shape: jnp.broadcast_to(x, shape), view=True, linear=True,
                grad_name="ExpandBackward0")


@layout_rule("expand")
def _expand_layout(lay, *, shape):
    """PyTorch's ``inferExpandGeometry``: an expanded dimension's stride is 0; a new leading dimension of size 1
    gets the size times the stride of the dimension after it (``arange(4).expand(2, 1, 4)``: ``(0, 4, 1)``)."""
    (old, strides, offset), new = lay, shape
    lead = len(new) - len(old)
    st = [s if old[i] == new[i + lead] else 0 for i, s in enumerate(strides)]
    for i in range(lead - 1, -1, -1):
        st.insert(0, 0 if new[i] != 1 or not st else new[i + 1] * st[0])
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


def expand(input, *sizes, size=None, implicit=False, _name="expand"):
    sizes = _args_or_kw(sizes, size, _name, "size")
    if not sizes:  # PyTorch's parser wants the size even for a 0-d tensor (``expand(())`` is fine)
        raise TypeError(f'{_name}() missing 1 required positional arguments: "size"')
    return apply(_EXPAND, (input,), shape=expand_shape(input.shape, _size_args(sizes, _name), input.dtype))


def expand_as(input, other):
    require_tensor(other, "expand_as", 1, "other")
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    if not isinstance(size, (tuple, list)):  # (``x.broadcast_to(2, 4)`` is the method's varargs)
        raise TypeError(f"broadcast_to(): argument 'size' (position 2) must be tuple of ints, not {type_name(size)}")
    return expand(input, size, _name="broadcast_to")


def _broadcast_to_method(self, *sizes, size=None):
    return expand(self, *sizes, size=size, _name="broadcast_to")


def broadcast_shapes(*shapes):
    given = [(s,) if isinstance(s, int) else s for s in shapes]  # (the message shows each shape as given)
    shapes = [tuple(s) for s in given]
    result = [1] * max((len(s) for s in shapes), default=0)
    for k, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if s[i] == 1 or s[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                                   f"argument at index {k} had {given[k]}; but expected shape should be broadcastable "
                                   f"to {result}")
            result[i] = s[i]
    return Size(result)


def broadcast_error(a, b):
    """PyTorch's RuntimeError for two shapes (tuples) that do not broadcast: the last dimension where they clash."""
    nd = max(len(a), len(b))
    pa, pb = (1,) * (nd - len(a)) + tuple(a), (1,) * (nd - len(b)) + tuple(b)
    i = max(i for i in range(nd) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
    return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at non-singleton "
                        f"dimension {i}")


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
    try:
        shape = broadcast_shapes(*[t.shape for t in tensors])
    except RuntimeError:
        a, b = _mismatch(tensors)
        raise RuntimeError(f"The size of tensor a ({a[0]}) must match the size of tensor b ({b[0]}) at non-singleton "
                           f"dimension {a[1]}") from None
    shape = tuple(shape)
    # (PyTorch's expand_outputs: a tensor that has the shape already is returned itself, with no ExpandBackward0)
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def _mismatch(tensors):
    shapes = [tuple(t.shape) for t in tensors]
    nd = max(len(s) for s in shapes)
    padded = [(1,) * (nd - len(s)) + s for s in shapes]
    for i in range(nd - 1, -1, -1):
        sizes = [p[i] for p in padded if p[i] != 1]
        if len(set(sizes)) > 1:
            return (sizes[0], i), (sizes[1], i)
    return (1, 0), (1, 0)


for _n in ("expand", "expand_as", "broadcast_to"):
    _public(_n, globals()[_n], method=_n != "broadcast_to")
_family.methods["broadcast_to"] = _broadcast_to_method  # (the method takes its sizes as varargs too)
__all__.remove("expand")
__all__.remove("expand_as")
for _n in ("broadcast_shapes", "broadcast_tensors"):
    _public(_n, globals()[_n], method=False)
