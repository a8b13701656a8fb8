"""Indexing with ``[]``: parsing a Python index, ``__getitem__`` (basic, advanced and boolean), iteration, and
nonzero/argwhere. The writes (``__setitem__``, index_put) are in ``setitem.py``; the index ops (index_select, gather,
scatter, masked_*, take/put) in ``gather.py`` and ``scatter.py``.

A Python index is parsed into a hashable *template* plus the index arrays, so each indexing pattern is one cached
kernel whatever the index values. Template items: ``('i', n)`` select, ``('s', start, stop, step)`` slice,
``('n',)`` new axis, ``('b', flag)`` a boolean scalar, ``('a', k)`` index array ``k``.

PyTorch's semantics (which differ from NumPy's where integers meet index arrays): the basic part (integers,
slices, None) is applied first; the index arrays then index the remaining dims, their result dims replacing the
indexed ones when the arrays are adjacent and going first otherwise. Pure basic indexing is a view (writes reach
the base); advanced indexing copies. Out-of-range indices raise IndexError (JAX would clamp them silently), checked
on concrete values.
"""
from __future__ import annotations

import math
import warnings

import jax
import numpy as np
from jax import lax

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import tracing
from .elementwise import require_tensor
from .barebones import refuse as refuse_barebones
from .float8 import refuse as refuse_float8
from .inplace import layout, layout_rule, view_strides
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public

_INDEX_DTYPES = (np.int64, np.int32)


# ----------------------------------------------------------------------------------------------------------------
# parsing


def _as_index_tensor(v, hosts=None):
    """An index given as a Python sequence or numpy array, as an index Tensor; with a dict ``hosts``, its numpy
    value is kept there under the Tensor's id (the bounds check then reads it instead of waiting for the device)."""
    from .creation import tensor
    if isinstance(v, Tensor):
        return v
    try:
        arr = np.asarray(v)
    except ValueError:
        arr = np.asarray(v, dtype=object)
    if arr.dtype == np.object_ or arr.dtype.kind not in "biuf":
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         "indices")
    if arr.size == 0 or arr.dtype.kind == "f":  # PyTorch converts a float sequence index to long (truncating)
        arr = arr.astype(np.int64)
    t = tensor(arr)
    if hosts is not None:
        hosts[id(t)] = arr
    return t


def check_bounds(idx: Tensor, size: int, dim: int, err=IndexError, fmt=None, host=None):
    """Raise PyTorch's error when an index tensor holds an index outside ``[-size, size)`` (a traced one: before
    each run of torchish.compile's program, see ``tracing.defer_check``). ``host``: the index's value as a numpy
    array where the caller has it."""
    d = idx._d if host is None else host
    if isinstance(d, jax.core.Tracer):
        tracing.defer_check((d >= size) | (d < -size), d, err, lambda b: fmt.format(b=b, dim=dim, size=size) if fmt
                            else f"index {b} is out of bounds for dimension {dim} with size {size}")
        return
    if d.size == 0:
        return
    a = np.asarray(d)
    bad = a[(a >= size) | (a < -size)]
    if bad.size:
        b = int(bad.reshape(-1)[0])
        raise err(fmt.format(b=b, dim=dim, size=size) if fmt else
                  f"index {b} is out of bounds for dimension {dim} with size {size}")


def _seq_as_tuple(index):
    """PyTorch's (deprecated) rule: a list holding sequences, slices, None, Ellipsis or Tensors is a tuple."""
    if isinstance(index, list) and len(index) < 32:
        return any(isinstance(i, (list, tuple, slice, Tensor, np.ndarray)) or i is None or i is Ellipsis
                   for i in index)
    return False


def _is_int(it):
    return isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_))


def _int_scalar_tensor(it):
    return isinstance(it, Tensor) and it.ndim == 0 and it._v.dtype.kind in "iu" and \
        not isinstance(it._d, jax.core.Tracer)


def parse_index(x: Tensor, index, tensor_ints=True, deferred=None, raw=None):
    """-> (template, arrays). With ``tensor_ints`` a 0-d integer tensor acts as an int (as in ``x[t]``). With a
    ``deferred`` list, the bounds checks of index tensors are appended to it (as argument-less callables) instead of
    run: a write checks the value first, as PyTorch's index_put kernel does. A ``raw`` list receives, per template
    item, the integer or ``(start, stop, step)`` the user wrote (None elsewhere): what PyTorch's nodes save."""
    if isinstance(index, tuple):
        items = list(index)
    elif _seq_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                      "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                      "tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                      "result", UserWarning, stacklevel=3)
        items = list(index)
    else:
        items = [index]
    hosts = {}  # id -> numpy value of the index tensors made here from host values
    for k, it in enumerate(items):
        if isinstance(it, (list, tuple, range, np.ndarray)):
            items[k] = _as_index_tensor(it, hosts)
        elif isinstance(it, str):
            raise TypeError(f"new(): invalid data type '{type(it).__name__}'")
    consumed = 0
    for it in items:
        if isinstance(it, Tensor) and it._v.dtype in (np.bool_, np.uint8):
            consumed += it.ndim
        elif not (it is None or it is Ellipsis or isinstance(it, (bool, np.bool_))):
            consumed += 1
    nd = x.ndim
    if nd == 0 and len(items) == 1:
        it = items[0]
        if _is_int(it):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        if isinstance(it, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    template, arrays = [], []
    bounds = []  # (index tensor, size of its dim, position): checked once the result is known to be non-empty
    indexes_empty_dim = False  # an index tensor on a dim of size 0: out of bounds unless the indices broadcast empty
    dim = 0
    shape = x.shape
    for pos, it in enumerate(items):
        if raw is not None:
            raw.extend([None] * (len(template) - len(raw)))
        if it is Ellipsis:  # every ellipsis spans the unindexed dims (PyTorch accepts more than one)
            n = min(nd - consumed, nd - dim)
            template.extend(("s", 0, shape[dim + j], 1) for j in range(n))
            dim += n
        elif it is None:
            template.append(("n",))
        elif isinstance(it, (bool, np.bool_)) or (isinstance(it, Tensor) and it.ndim == 0 and
                                                   it._v.dtype == np.bool_):
            template.append(("b", bool(it.item() if isinstance(it, Tensor) else it)))
        elif isinstance(it, slice):
            template.append(_slice_item(it, shape[dim]))
            if raw is not None:
                raw.append(tuple(None if v is None else _int(v) for v in (it.start, it.stop, it.step)))
            dim += 1
        elif isinstance(it, Tensor) and it._v.dtype in (np.bool_, np.uint8):
            if it._v.dtype == np.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=3)
            for j in range(it.ndim):
                if it.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(it.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + j}")
            for j, a in enumerate(nonzero(it, as_tuple=True)):
                arrays.append(a)
                template.append(("a", len(arrays) - 1))
                if raw is not None:  # (PyTorch's IndexBackward0 saves the mask once, for all the dims it spans)
                    raw.append(it if j == 0 else ())
            dim += it.ndim
        elif isinstance(it, Tensor) and not (tensor_ints and _int_scalar_tensor(it)):
            if it._v.dtype not in _INDEX_DTYPES:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            indexes_empty_dim = indexes_empty_dim or shape[dim] == 0
            bounds.append((it, shape[dim], len(arrays)))
            arrays.append(it)
            template.append(("a", len(arrays) - 1))
            if raw is not None:
                raw.append(it)
            dim += 1
        else:
            try:
                n = _int(it)
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                                 "valid indices (got " + type(it).__name__ + ")") from None
            size = shape[dim]
            if n < -size or n >= size:
                raise IndexError(f"index {n} is out of bounds for dimension {pos} with size {size}")
            template.append(("i", n % size))
            if raw is not None:
                raw.append(n)
            dim += 1
    if raw is not None:
        raw.extend([None] * (len(template) - len(raw)))
    if _check_broadcast(template, arrays) and indexes_empty_dim:
        raise IndexError("index is out of bounds for dimension with size 0")
    # PyTorch's index kernel checks the bounds of the elements it reads or writes: none for an empty result
    if bounds and math.prod(index_shape(shape, arrays, template)):
        for it, size, k in bounds:
            host = hosts.get(id(it))
            if deferred is None:
                check_bounds(it, size, k, host=host)
            else:
                deferred.append(lambda it=it, size=size, k=k, host=host: check_bounds(it, size, k, host=host))
    return tuple(template), arrays


def index_shape(shape, arrays, template):
    """The shape of ``x[index]`` for ``x`` of ``shape`` (PyTorch's two stages, computed without tracing): the basic
    part, then the index arrays (a boolean scalar as an array of 0 or 1 zeros), whose broadcast shape replaces the
    dims they index where those are adjacent and goes first otherwise. Slices may be ``S`` items (the kernels' form,
    :func:`dynamic_template`)."""
    basic, adv, d = [], [], 0  # the dims after the basic stage; per dim of it, its index array's shape or None
    for t in template:
        kind = t[0]
        if kind == "i":
            d += 1
        elif kind in "sS":
            basic.append(len(range(t[1], t[2], t[3])) if kind == "s" else t[2])
            adv.append(None)
            d += 1
        elif kind == "n":
            basic.append(1)
            adv.append(None)
        elif kind == "b":
            basic.append(1)
            adv.append((int(t[1]),))
        else:
            basic.append(shape[d])
            adv.append(tuple(arrays[t[1]].shape))
            d += 1
    basic += shape[d:]
    adv += [None] * (len(basic) - len(adv))
    pos = [k for k, a in enumerate(adv) if a is not None]
    if not pos:
        return tuple(basic)
    b = tuple(np.broadcast_shapes(*(adv[k] for k in pos)))  # (parse_index checked that they broadcast)
    if pos == list(range(pos[0], pos[-1] + 1)):
        return tuple(basic[:pos[0]]) + b + tuple(basic[pos[-1] + 1:])
    return b + tuple(s for s, a in zip(basic, adv) if a is None)


def _check_broadcast(template, arrays):
    """PyTorch's IndexError when the index arrays (and boolean scalars, as arrays of 0 or 1) do not broadcast.

    Returns whether the broadcast indices pick any element (the shape they broadcast to has no zero).
    """
    shapes = [tuple(arrays[t[1]].shape) if t[0] == "a" else (int(t[1]),) for t in template if t[0] in "ab"]
    try:
        return 0 not in np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes " +
                         ", ".join(str(list(s)) for s in shapes)) from None


def _slice_item(sl, n):
    step = 1 if sl.step is None else _int(sl.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(None if sl.start is None else _int(sl.start),
                           None if sl.stop is None else _int(sl.stop), step).indices(n)
    return ("s", start, max(stop, start), step)


def _int(v):
    if isinstance(v, int):
        return v
    if isinstance(v, Tensor):
        if v.numel() != 1 or v._v.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(v.item())
    if isinstance(v, np.integer):
        return int(v)
    try:
        return v.__index__()
    except AttributeError:
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer") from None


def _basic_stage(x, template):
    """PyTorch's first indexing stage: integers select, slices narrow, None and boolean scalars add a dim; the dims
    index arrays index are kept whole. An integer or a slice start may be a traced value (an eager kernel takes
    them as values: :func:`dynamic_template`); a ``('S', start, length, step)`` item is such a slice."""
    d = 0
    for t in template:
        kind = t[0]
        if kind == "i":
            n = t[1]
            x = lax.index_in_dim(x, n, d, keepdims=False) if type(n) is int else \
                lax.dynamic_index_in_dim(x, n, d, keepdims=False)
        elif kind == "s":
            _, start, stop, step = t
            if (start, stop, step) != (0, x.shape[d], 1):
                x = lax.slice_in_dim(x, start, stop, step, d)
            d += 1
        elif kind == "S":
            _, start, length, step = t
            span = (length - 1) * step + 1 if length else 0
            x = lax.dynamic_slice_in_dim(x, start, span, d)
            if step > 1:
                x = lax.slice_in_dim(x, 0, span, step, d)
            d += 1
        elif kind in "nb":
            x = lax.expand_dims(x, (d,))
            d += 1
        else:
            d += 1
    return x


def _getitem_fwd(x, *arrays, template):
    y = _basic_stage(x, template)
    second, advanced = [], False
    for t in template:
        kind = t[0]
        if kind == "a":
            second.append(arrays[t[1]])
            advanced = True
        elif kind == "b":
            second.append(np.zeros(int(t[1]), np.int32))
            advanced = True
        elif kind != "i":
            second.append(slice(None))
    return y[tuple(second)] if advanced else y


def dynamic_template(static, take):
    """``OpDef.dynamic`` of the indexing ops: the integers and the slice starts of the template (a slice from 0
    stays static: ``:`` and ``:k`` are common and cost no argument)."""
    out = []
    for k, v in static:
        if k == "template":
            v = tuple(("i", take(t[1])) if t[0] == "i" else
                      ("S", take(t[1]), len(range(t[1], t[2], t[3])), t[3]) if t[0] == "s" and t[1] else t
                      for t in v)
        out.append((k, v))
    return tuple(out)


_BASIC = {name: defop(f"getitem_{name}", _getitem_fwd, view=True, linear=True, grad_name=f"{name}Backward0",
                      dynamic=dynamic_template)
          for name in ("Select", "Slice", "Unsqueeze", "Alias")}
_INDEX = defop("index", _getitem_fwd, linear=True, grad_name="IndexBackward0", dynamic=dynamic_template)


@layout_rule(*(f"getitem_{name}" for name in ("Select", "Slice", "Unsqueeze", "Alias")))
def _getitem_layout(lay, *, template):
    shape, strides, offset = list(lay[0]), list(lay[1]), lay[2]
    d = 0
    for t in template:
        if t[0] == "i":
            offset += t[1] * strides[d]
            del shape[d], strides[d]
        elif t[0] == "s":
            _, start, stop, step = t
            offset += start * strides[d]
            shape[d] = len(range(start, stop, step))
            strides[d] *= step
            d += 1
        else:
            st = 1 if d >= len(shape) else shape[d] * strides[d]
            shape.insert(d, 1)
            strides.insert(d, st)
            d += 1
    return tuple(shape), tuple(strides), offset


def _basic_op(template, single, n_dims):
    """The view op whose name PyTorch's ``grad_fn`` shows: the last op applied (full slices are skipped)."""
    last = "Alias"
    for t, full in zip(template, n_dims):
        if t[0] == "i":
            last = "Select"
        elif t[0] == "n":
            last = "Unsqueeze"
        elif t[0] == "s" and (single or not full):
            last = "Slice"
    return _BASIC[last]


def getitem(self, index):
    recording = self._rg and STATE.grad_enabled and not STATE.inference
    raw = [] if recording else None  # (what the recorded nodes show: collected only when nodes are recorded)
    template, arrays = parse_index(self, index, raw=raw)
    if arrays or any(t[0] == "b" for t in template):
        if recording:
            if any(t[0] == "b" for t in template):
                self, template, arrays, raw = _bool_steps(self, template, raw, arrays)
                shown = _saved_indices(template, raw)
            else:
                shown = _saved_indices(template, raw)
                self, template = _basic_steps(self, template, raw, _full_flags(self, template), advanced=True)
        res = apply(_INDEX, (self, *arrays), template=template)
        if any(t._view is not None or t._layout is not None for t in (self, *arrays)):
            _set_index_layout(res, self, arrays, template)
        if recording and res._gfn is not None:
            res._gfn.__dict__["index_raw"] = shown
        return res
    full = _full_flags(self, template)
    if recording and sum(t[0] in "in" or t[0] == "s" and not f for t, f in zip(template, full)) > 1:
        return _basic_steps(self, template, raw, full)
    res = apply(_basic_op(template, isinstance(index, slice), full), (self,), template=template)
    if recording and res._gfn is not None:
        res._gfn.__dict__["index_raw"] = next((r for r in reversed(raw) if r is not None), None)
    return res


def _saved_indices(template, raw):
    """What PyTorch's IndexBackward0 shows as ``_saved_indices``: per dim of the indexed view, the index tensor (a
    boolean mask as given, once for the dims it spans) or None, up to the last indexed dim."""
    out = []
    for t, r in zip(template, raw):
        if t[0] == "i" or r == ():
            continue
        out.append(r if t[0] == "a" else None)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _basic_steps(x, template, raw, full, advanced=False):
    """PyTorch's indexing one view op at a time, left to right (``x[1:3, 0]`` is ``SelectBackward0`` over
    ``SliceBackward0``; full slices are skipped), so that the recorded graph is PyTorch's node for node. Used where
    autograd records and the index has several parts. Returns the last view; with ``advanced``, that view and the
    template the index arrays then apply with (its basic parts done)."""
    rest, d = [], 0
    for t, r, f in zip(template, raw, full):
        kind = t[0]
        if kind == "a":
            rest.append(t)
            d += 1
            continue
        if kind == "s" and f:
            rest.append(("s", 0, x.shape[d], 1))
            d += 1
            continue
        step = tuple(("s", 0, x.shape[j], 1) for j in range(d)) + (t,)
        x = apply(_basic_op(step, False, [True] * d + [False]), (x,), template=step)
        if x._gfn is not None:
            x._gfn.__dict__["index_raw"] = r
        if kind != "i":
            rest.append(("s", 0, x.shape[d], 1))
            d += 1
    return (x, tuple(rest)) if advanced else x


def _bool_steps(x, template, raw, arrays):
    """PyTorch's boolean scalars in an index where autograd records: each is an unsqueeze (done with the basic parts,
    one view op at a time), then an index of 0 or 1 zeros on that new dim (IndexBackward0 over UnsqueezeBackward0,
    ``_saved_indices`` showing the zeros). Returns the view, the template of the index stage, its index tensors and
    what each item shows."""
    from .filled import zeros
    steps = tuple(("n",) if t[0] == "b" else t for t in template)
    x, rest = _basic_steps(x, steps, raw, _full_flags(x, steps), advanced=True)
    arrays, items, shown, k = list(arrays), [], [], 0
    for t, r in zip(template, raw):
        if t[0] == "i":
            continue
        if t[0] == "b":
            zero = zeros(int(t[1]), dtype=_dtype.int64)
            items.append(("a", len(arrays)))
            arrays.append(zero)
            shown.append(zero)
        else:
            items.append(rest[k])
            shown.append(r)
        k += 1
    return x, tuple(items), tuple(arrays), shown


def _set_index_layout(res, x, arrays, template):
    """Give ``x[index]`` (``res``, with index tensors) the strides PyTorch's index kernel allocates it with: a
    TensorIterator over the basic-indexed view of ``x`` restrided to the result's shape (0 strides where the index
    tensors' dims go; indexed dims that are not adjacent are first moved to the front) and the broadcast index
    tensors (``AdvancedIndex``'s ``restride_src`` and ``reshape_indexer``)."""
    from .out_layout import output_strides
    shape, strides, _ = layout(x)
    first, per_dim, d = [], [], 0  # the basic stage (indexed dims kept whole); the index (or None) per view dim
    for t in template:
        if t[0] == "a":
            first.append(("s", 0, shape[d], 1))
            per_dim.append(layout(arrays[t[1]])[:2])
        elif t[0] == "b":  # (a boolean scalar: a new dim indexed by 0 or 1 zeros)
            first.append(("n",))
            per_dim.append(((int(t[1]),), (1,)))
        else:
            first.append(t)
            if t[0] != "i":
                per_dim.append(None)
        d += t[0] in "asi"
    vshape, vstrides, _ = _getitem_layout((shape, strides, 0), template=tuple(first))
    per_dim += [None] * (len(vshape) - len(per_dim))
    pos = [k for k, p in enumerate(per_dim) if p is not None]
    if pos != list(range(pos[0], pos[-1] + 1)):  # transposeToFront
        order = pos + [k for k in range(len(per_dim)) if per_dim[k] is None]
        vshape, vstrides, per_dim = ([seq[k] for k in order] for seq in (vshape, vstrides, per_dim))
        pos = list(range(len(pos)))
    before, after = pos[0], len(per_dim) - pos[-1] - 1
    bshape = tuple(np.broadcast_shapes(*(p[0] for p in per_dim if p is not None)))
    ones = (1,) * before, (1,) * after
    operands = [(tuple(vshape[:before]) + bshape + tuple(vshape[pos[-1] + 1:]),
                 tuple(vstrides[:before]) + (0,) * len(bshape) + tuple(vstrides[pos[-1] + 1:]))]
    for p in per_dim:
        if p is not None:  # expanded to the broadcast shape, then viewed with the other dims as ones
            s, st = p
            lead = len(bshape) - len(s)
            est = tuple(0 if k < lead or (s[k - lead] == 1 and bshape[k] != 1) else st[k - lead]
                        for k in range(len(bshape)))
            operands.append((ones[0] + bshape + ones[1], view_strides(bshape, est, ones[0] + bshape + ones[1])))
    out = output_strides(operands, tuple(res._v.shape))
    if out is not None:
        res._layout = (tuple(res._v.shape), out, 0)


def _full_flags(x, template):
    out, d = [], 0
    for t in template:
        if t[0] == "s":
            out.append(t[1] == 0 and t[2] == x.shape[d] and t[3] == 1)
            d += 1
        else:
            out.append(False)
            d += t[0] in "ia"
    return out


# ----------------------------------------------------------------------------------------------------------------
# iteration


def _iter(self):
    """``iter(t)``: its rows. As PyTorch's Python ``Tensor.__iter__``, through ``self.dim()`` and ``self.unbind(0)``
    (a ``__torch_function__`` sees those two calls)."""
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


# ----------------------------------------------------------------------------------------------------------------
# nonzero (needs concrete values: the output shape depends on them)


def nonzero(input, *, as_tuple=False, out=None):
    require_tensor(input, "nonzero")
    refuse_float8(input, "nonzero_count_cpu")
    refuse_barebones(input, "nonzero_count_cpu")
    d = input._d
    if isinstance(d, jax.core.Tracer):
        raise tracing.concrete_error("nonzero() / boolean-mask indexing (the result's shape depends on the values)")
    from .creation import place
    a = np.asarray(d)
    dev = input.device
    if input.ndim == 0:
        n = int(bool(a))
        if as_tuple:
            return (place(np.zeros(n, np.int64), _dtype.int64, dev),)
        return place(np.zeros((n, 0), np.int64), _dtype.int64, dev)
    idx = np.nonzero(a)
    if as_tuple:
        return tuple(place(i.astype(np.int64), _dtype.int64, dev) for i in idx)
    res = place(np.stack(idx, axis=1).astype(np.int64), _dtype.int64, dev)
    n, nd = res.shape
    if (1, n) != (nd, 1):  # PyTorch allocates the (n, ndim) result column by column
        res._layout = ((n, nd), (1, n), 0)
    if out is not None:
        from .elementwise import out_exact
        return out_exact(res, out, "nonzero", "nonzero: Expected out tensor to have scalar type Long but got scalar "
                         "type{out}")
    return res


def argwhere(input):
    require_tensor(input, "argwhere")
    return nonzero(input)


METHODS["__getitem__"] = getitem
METHODS["__iter__"] = _iter
_public("nonzero", nonzero)
_public("argwhere", argwhere)
