"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: what a registry op's node keeps, under the names
PyTorch's generated nodes give it (``torchish.ops.saved.NAMES``).

``_saved_self`` is the saved tensor (unpacked by its hook when a :class:`saved_tensors_hooks` packed it), None
when the inputs requiring grad did not need it; after a backward without ``retain_graph`` reading a saved tensor
raises PyTorch's "Trying to backward through the graph a second time" error, while shapes and Python numbers
(``_saved_self_sym_sizes``, ``_saved_exponent``) stay readable. ``_raw_saved_self`` is a :class:`SavedTensor`,
whose ``register_hooks(pack, unpack)`` packs that one saved tensor.

Example::

    >>> y = x * w
    >>> y.grad_fn._saved_other is w
    True
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from . import saved_hooks
from .graph import AccumulateGrad, _ERR_FREED


def _entry(node):
    """``(input names, output names, extra names)`` lists for ``node`` (empty when PyTorch's shows nothing)."""
    from ..ops import saved as _saved
    op = node.op
    e = _saved.names(op.name, op.grad_name, op.saved, len(node.mask), len(node.out_meta))
    if e is None:
        return [], [], []
    vals = node.vals
    if op.name in ("add", "mul") and not hasattr(vals[0], "dtype") and hasattr(vals[1], "dtype"):
        e[0][0], e[0][1] = e[0][1], e[0][0]  # ``2 * x`` is ``x.mul(2)`` in PyTorch: self is the tensor
    return e


def _savable(node, everything):
    """``(input positions, output positions)`` the node saves: for its mask, or for any mask (``everything``)."""
    from ..ops import saved as _saved
    op = node.op
    mask = (True,) * len(node.mask) if everything else node.mask
    if op.saved is None:
        if op.linear:
            return (), ()
        return range(len(mask)), (range(len(node.out_meta)) if op.save_out else ())
    return _saved.needed(op.saved, mask, len(node.out_meta))


def _table(node):
    """name -> ("in", position, is_number) / ("out", position) / ("extra", token)."""
    ins, outs, extras = _entry(node)
    any_in, any_out = _savable(node, True)
    table = {}
    for i, n in enumerate(ins):
        if n.endswith("#"):
            table[n[:-1]] = ("in", i, True)
        elif n != "_" and i in any_in:
            table[n] = ("in", i, False)
    for j, n in enumerate(outs):
        if j in any_out:
            table[n] = ("out", j)
    for tok in extras:
        table[tok.split("=")[0]] = ("extra", tok)
    return table


def names(node):
    """The ``_saved_*``/``_raw_saved_*`` attribute names ``node`` shows (for ``dir(grad_fn)``)."""
    out = []
    for n, how in _table(node).items():
        out.append("_saved_" + n)
        if how[0] == "out" or (how[0] == "in" and not how[2]):
            out.append("_raw_saved_" + n)
    return out


def get(node, attr):
    raw = attr.startswith("_raw_saved_")
    key = attr[len("_raw_saved_"):] if raw else attr[len("_saved_"):]
    how = _table(node).get(key)
    if how is None or (raw and (how[0] == "extra" or (how[0] == "in" and how[2]))):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    if how[0] == "extra":
        return _extra(node, how[1])
    if how[0] == "in" and how[2]:
        v = node.vals[how[1]]
        return 1 if v is None else v
    slot = ("i" if how[0] == "in" else "o", how[1])
    if raw:
        return SavedTensor(node, slot)
    return saved_tensor(node, slot)


def _saved_now(node, slot):
    ins, outs = _savable(node, False)
    return slot[1] in (ins if slot[0] == "i" else outs)


def saved_tensor(node, slot):
    """The tensor ``node`` saved at ``slot`` (``("i", input)`` / ``("o", output)``), or None."""
    if not _saved_now(node, slot):
        return None
    if node._released:
        raise RuntimeError(_ERR_FREED)
    kind, j = slot
    for k, pos, p in node.packed or ():
        if (k, pos) == slot:
            value = p.unpack()._d
            break
    else:
        value = None
    if kind == "o":
        if value is None:
            if node.outs is None:
                return None
            value = node.outs[j]
        return Tensor._make(value, True, node, j)
    edge = node.next_edges[j]
    if value is None:
        value = node.vals[j]
        if not hasattr(value, "dtype"):  # a Python number PyTorch wraps into a (double or long) tensor
            return Tensor._make(jnp.asarray(np.asarray(value)))
        if edge is not None and isinstance(edge[0], AccumulateGrad):
            return edge[0].variable  # a leaf is saved as itself
    if edge is None:
        return Tensor._make(value)
    if isinstance(edge[0], AccumulateGrad):
        return Tensor._make(value, True)
    return Tensor._make(value, True, edge[0], edge[1])


def _extra(node, tok):
    name, _, src = tok.partition("=")
    raw = node.__dict__.get("raw_dims")
    if raw is not None and name in raw:  # the dims as the user wrote them (see show_raw_dims)
        v = raw[name]
        return tuple(_u64(d) for d in v) if isinstance(v, tuple) else _u64(v)
    static = dict(node.static)
    if name in ("dim0", "dim1"):  # transpose keeps the permutation: the two places it swaps
        moved = [i for i, d in enumerate(static["dims"]) if d != i] or [0, 0]
        return moved[0] if name == "dim0" else moved[-1]
    if src == "out":
        return tuple(node.out_meta[0][0])
    if src.startswith("@"):
        return _COMPUTED[src[1:]](node, static)
    if src:
        key, _, idx = src.partition("[")
        v = static[key]
        return v[int(idx[:-1])] if idx else v
    ins = _entry(node)[0]
    base, _, what = name.partition("_sym_")
    pos = 0 if base == "self" else ins.index(base)
    shape = tuple(node.vals[pos].shape)
    if what == "strides":  # kept for the input's own gradient only (else empty), as PyTorch's node
        if not node.mask[pos]:
            return ()
        kept = node.__dict__.get("sym_strides")
        return kept[pos] if kept is not None else tuple(int(s) for s in np.cumprod((1,) + shape[:0:-1])[::-1])
    return math.prod(shape) if what == "numel" else shape


# the saved numbers PyTorch's node keeps that torchish's op derives (``narrow``'s end; ``real``/``imag`` as a select
# over the (..., 2) view_as_real)
_COMPUTED = {
    "end": lambda node, st: st["start"] + st["length"],
    "one": lambda node, st: 1,
    "last": lambda node, st: len(node.vals[0].shape),
    "part": lambda node, st: 0 if node.op.name == "real" else 1,
    "as_real": lambda node, st: tuple(node.vals[0].shape) + (2,),
    **{"index_" + k: (lambda k: lambda node, st: _index_number(node, st, k))(k)
       for k in ("dim", "index", "start", "end", "step")},
    "index_tensors": lambda node, st: node.__dict__.get("index_raw", ()),
}

_INT64_MAX = (1 << 63) - 1


def _u64(n):
    """A saved ``int64_t``/``SymInt`` as PyTorch's node shows it: a negative one as its unsigned 64-bit wrap."""
    return n + (1 << 64) if n < 0 else n


def show_raw_dims(res, **dims):
    """Let ``res``'s node show ``dims`` (``_saved_dim``, ``_saved_dim0``, ...) as the user passed them: PyTorch's
    view nodes keep the raw argument (``x.select(-2, 1)``: ``_saved_dim`` 2 ** 64 - 2), not the wrapped dim. Only
    where a node was recorded."""
    node = getattr(res, "_gfn", None)
    if node is not None:
        node.__dict__["raw_dims"] = dims
    return res


def _index_number(node, st, what):
    """A number ``x[...]``'s view node saves (``ops.index.getitem``: one select, slice or unsqueeze, the other
    items of its template full slices): PyTorch keeps what the user wrote, an omitted slice end as INT64_MAX and a
    negative number as its unsigned 64-bit wrap (how its autograd codegen prints a saved ``c10::SymInt``)."""
    template = st["template"]
    pos = next((k for k in range(len(template) - 1, -1, -1)
                if template[k][0] != "s" or template[k][1:] != (0, _dim_size(node, template, k), 1)),
               len(template) - 1)
    if what == "dim":
        return sum(1 for t in template[:pos] if t[0] != "i")
    raw = node.__dict__.get("index_raw")
    t = template[pos]
    if what == "index":
        n = raw if isinstance(raw, int) else t[1]
    else:
        start, stop, step = raw if isinstance(raw, tuple) else t[1:]
        n = {"start": 0 if start is None else start, "end": _INT64_MAX if stop is None else stop,
             "step": 1 if step is None else step}[what]
    return n + (1 << 64) if n < 0 else n


def _dim_size(node, template, k):
    """The size of the input dim template item ``k`` indexes."""
    return node.vals[0].shape[sum(1 for t in template[:k] if t[0] in "is")]


class SavedTensor:
    """One saved tensor of a node (``grad_fn._raw_saved_<name>``): ``register_hooks`` packs it now with ``pack_hook``
    and unpacks it with ``unpack_hook`` whenever it is needed."""

    def __init__(self, node, slot):
        self._node = node
        self._slot = slot

    def unpack(self):
        return saved_tensor(self._node, self._slot)

    def register_hooks(self, pack_hook, unpack_hook):
        node, slot = self._node, self._slot
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("Expected pack_hook and unpack_hook to be callable")
        if any((k, pos) == slot for k, pos, _ in node.packed or ()):
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        t = saved_tensor(node, slot)
        if t is None or (slot[0] == "i" and not hasattr(node.vals[slot[1]], "dtype")):
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        from ..ops.opnode import ZerosLike
        packed = saved_hooks.pack((pack_hook, unpack_hook), t)
        node.packed = (node.packed or ()) + ((slot[0], slot[1], packed),)
        if slot[0] == "i":
            vals = list(node.vals)
            vals[slot[1]] = ZerosLike(vals[slot[1]])
            node.vals = tuple(vals)
        elif node.outs is not None:
            outs = list(node.outs)
            outs[slot[1]] = ZerosLike(outs[slot[1]])
            node.outs = tuple(outs)
