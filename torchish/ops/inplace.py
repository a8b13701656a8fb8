"""In-place ops, writes through views, and the strided layout of views.

An in-place op computes its result out of place (recording the graph as usual) and then rebinds the target
(:meth:`Tensor._assign`). Writing into a view writes a new value into its *base* with ``view_write`` — a scatter of
the view's elements into the base (PyTorch's ``CopySlices``) — and every live view of that base is refreshed by
replaying its chain of view ops.

A base holds a contiguous buffer; the strides a view would have in PyTorch are derived from its chain of view ops
(each view op registers a *layout rule* here). They decide what ``stride()``, ``is_contiguous()`` and
``contiguous()`` report, whether ``view()`` is allowed and whether ``reshape()`` returns a view or a copy.
"""
from __future__ import annotations

import contextlib
import functools
import math
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _meta
from .._tensor import Tensor, multi_output_view_error, wrap
from .._tensor_views import _VIEW_WRITE
from ..autograd import graph as _graph
from ..autograd.grad_mode import STATE
from . import dynamic as _dynamic, kernels, lazy, registry, tracing
from .registry import apply, defop

# ----------------------------------------------------------------------------------------------------------------
# layout: (shape, strides, storage offset) of a view, in elements

LAYOUT_RULES: dict = {}   # view op name -> rule((shape, strides, offset), **static) -> (shape, strides, offset)
BITCASTS: dict = {}       # view op name -> inverse(value, like, **static): views that reinterpret bits


def layout_rule(*names):
    """Decorator registering the layout rule of the view ops ``names``."""
    def deco(fn):
        for n in names:
            LAYOUT_RULES[n] = fn
        return fn
    return deco


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(tuple(shape)):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _own_layout(t: Tensor):
    """The layout of a tensor that is not a view: contiguous, or the eager argument's layout that a traced argument
    stands for (``Tensor._layout``; dropped once its value changes shape, as ``resize_`` makes it contiguous)."""
    lay = t._layout
    if lay is not None and lay[0] == tuple(t._v.shape):
        return lay
    return tuple(t._v.shape), contiguous_strides(t._v.shape), 0


def layout(t: Tensor):
    """PyTorch's ``(sizes, strides, storage_offset)`` for ``t``, replaying its view chain on its base's layout."""
    if t._view is None:
        return _own_layout(t)
    base, chain, _ = t._view
    if not chain:  # an alias (``detach()``, ``.data``): its base's layout
        return _own_layout(t if base._v.shape != t._v.shape else base)
    shape, strides, offset = _own_layout(base)
    for op, st in chain:
        rule = LAYOUT_RULES.get(op.name)
        if rule is None:  # an op without a rule: treat its output as a fresh contiguous buffer
            shape = tuple(jax.eval_shape(functools.partial(_chain_apply, chain=((op, st),)),
                                         jax.ShapeDtypeStruct(shape, base._v.dtype)).shape)
            strides, offset = contiguous_strides(shape), 0
            continue
        shape, strides, offset = rule((shape, strides, offset), **dict(st))
    return tuple(shape), tuple(strides), offset


def is_contiguous(shape, strides) -> bool:
    expected = 1
    if math.prod(shape) == 0:
        return True
    for s, st in zip(reversed(shape), reversed(strides)):
        if s != 1:
            if st != expected:
                return False
            expected *= s
    return True


def view_strides(old_shape, old_strides, new_shape):
    """The strides ``view(new_shape)`` would have (PyTorch's ``computeStride``), or None if it needs a copy."""
    old_shape, new_shape = tuple(old_shape), tuple(new_shape)
    numel = math.prod(old_shape)
    if numel == 0 and old_shape == new_shape:
        return tuple(old_strides)
    if numel == 0 or not old_shape:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


_OVERLAP_OK: list = []  # the tensors now written by an op PyTorch lets write an expanded view (see overlap_ok)


class overlap_ok:
    """``with overlap_ok(t):`` the in-place op writing ``t`` may write it where several of its elements share one
    memory location (an expanded view): PyTorch checks internal overlap only in some in-place ops (those built on
    TensorIterator with its default check); fill_, zero_, tril_/triu_, masked_fill_, index_fill_, fill_diagonal_,
    index_put_ and threshold_ skip it. Such an op writes only some elements, with values that agree where they
    meet, so the write stores the elements it changed (``_scatter``'s ``changed``)."""

    def __init__(self, t):
        self.t = t

    def __enter__(self):
        _OVERLAP_OK.append(self.t)

    def __exit__(self, *exc):
        _OVERLAP_OK.pop()
        return False


def overlaps_itself(shape, strides) -> bool:
    """Whether elements of a layout share memory (a stride-0 dim of more than one element; an empty layout
    does not)."""
    return 0 not in shape and any(st == 0 and s > 1 for s, st in zip(shape, strides))


def _check_overlap(view) -> bool:
    """Whether ``view`` overlaps itself (only an op allowed to write it so gets True; it then stores only what it
    changed); PyTorch's error for the others."""
    shape, strides, _ = layout(view)
    if overlaps_itself(shape, strides):
        if _OVERLAP_OK and _OVERLAP_OK[-1] is view:
            return True
        raise RuntimeError(_INTERNAL_OVERLAP)
    return False


_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                     "location. Please clone() the tensor before performing the operation.")


# ----------------------------------------------------------------------------------------------------------------
# writing through views


def _chain_apply(x, chain):
    """Apply a chain of view ops (pure JAX) to ``x``."""
    for op, st in chain:
        kw = dict(st)
        i = kw.pop("_out", None)
        x = op.fwd(x, **kw)
        if i is not None:
            x = x[i]
    return x


def _scatter(base, chain, new, changed=False):
    """``base`` with the elements that ``chain`` selects replaced by ``new`` (broadcast to the view's shape); with
    ``changed`` only those ``new`` changes (a view that selects an element several times: see overlap_ok)."""
    if not chain:
        return jnp.broadcast_to(jnp.asarray(new, base.dtype), base.shape)
    idx = jnp.arange(base.size, dtype=jnp.int64 if base.size > 2**31 - 1 else jnp.int32).reshape(base.shape)
    sel = _chain_apply(idx, chain)
    new = jnp.broadcast_to(jnp.asarray(new, base.dtype), sel.shape).reshape(-1)
    sel, flat = sel.reshape(-1), base.reshape(-1)
    if changed:
        old = flat[sel]
        sel = jnp.where((new != old) & ((new == new) | (old == old)), sel, flat.size)  # (NaN over NaN: unchanged)
        return flat.at[sel].set(new, mode="drop").reshape(base.shape)
    return flat.at[sel].set(new).reshape(base.shape)


def _view_write_fwd(base, new, *, chain, changed=False):
    """``base`` after the view reached by ``chain`` takes the value ``new``. Index-selecting view ops are undone
    by a scatter; bit-reinterpreting ones (``view(dtype)``) by their inverse. ``changed``: see ``_scatter``."""
    k = next((i for i, (op, _) in enumerate(chain) if op.name in BITCASTS), None)
    if k is None:
        return _scatter(base, chain, new, changed)
    head, (op, st), rest = chain[:k], chain[k], chain[k + 1:]
    sub = _chain_apply(base, head)
    cast = _chain_apply(sub, ((op, st),))
    sub_new = BITCASTS[op.name](_view_write_fwd(cast, new, chain=rest), sub, **dict(st))
    return _scatter(base, head, sub_new)


VIEW_WRITE = defop("view_write", _view_write_fwd, linear=True, grad_name="CopySlices",  # linear in both
                   dynamic=_dynamic.chain_static)
VIEW_REPLAY = defop("view_replay", lambda x, *, chain: _chain_apply(x, chain), linear=True,
                    grad_name="AsStridedBackward0", dynamic=_dynamic.chain_static)


def _check_view_modifiable(view, chain, base):
    """PyTorch's refusals for in-place writes that need gradients through a view of ``base``."""
    multi = multi_output_view_error(chain)
    if multi is not None:
        raise multi
    if view._gfn is None and base._rg:
        raise RuntimeError("A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
                           "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                           "your code by moving both the view and the inplace either both inside the no_grad block (if "
                           "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
                           "tracked).")


def _write(view, base, chain, diff, r):
    """``view`` (of ``base`` via ``chain``) takes the value of ``r``: write it into the base."""
    sparse = {"changed": True} if _check_overlap(view) else {}
    if diff and STATE.grad_enabled and (base._rg or r._rg):
        if sparse:  # (PyTorch refuses it in CopySlices' backward; here at once)
            raise RuntimeError(_INTERNAL_OVERLAP)
        _check_view_modifiable(view, chain, base)
        marker, old, old_d = next(_graph._SEQ), view._vc.value, base._d
        fn = r._gfn  # the node of an op applied to the view itself (``v.mul_(2)``): CopySlices shows its inputs
        inplace = fn if fn is not None and view._gfn is not None and fn.next_edges and \
            fn.next_edges[0] is not None and fn.next_edges[0][0] is view._gfn else None
        if inplace is not None:
            _bypass_old_view(inplace, view, base, chain)
        elif fn is not None and view._gfn is None and fn.next_edges and fn.next_edges[0] is None and \
                fn.vals and fn.vals[0] is view._d:
            inplace = fn  # (an op applied in place to a view without history: shown wrapped too, its None edge
            # replaced by the base's)
        new_base = apply(VIEW_WRITE, (base, r), chain=chain, **sparse)
        if inplace is not None and new_base._gfn is not None:
            new_base._gfn.inplace_fn = inplace
        base._rebind(new_base, view._vc)
        restamp((base._gfn,), view._vc, old, old_d, marker)
        return
    alias = view._alias_base
    if alias is not None and STATE.grad_enabled and (alias._rg or r._rg):
        # a view of a `detach()` / `.data` alias: the write is recorded on the alias (PyTorch's CopySlices there)
        sub = chain[len(alias._view[1]):]
        _check_view_modifiable(view, sub, alias)
        new_alias = apply(VIEW_WRITE, (alias, r), chain=sub, **sparse)
        _write(alias, base, alias._view[1], False, new_alias)
        return
    # nothing to record (or an alias outside the graph: `.data`, `detach()`): the base's graph is left as it is
    if chain:
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            new = apply(VIEW_WRITE, (base, r), chain=chain, **sparse)._d
        finally:
            STATE.grad_enabled = prev
    else:
        new = r._d
    if STATE.recorder is not None:
        STATE.recorder.wrote(base)
    if base._rg and tracing.writes_behind_autograd():  # (a write via `.data` or under no_grad: the same tensor to the
        new = tracing.through(base._d, new)     # trace's differentiation, as to PyTorch's graph)
    base._d = new
    if view._alias and STATE.grad_enabled:  # the alias is its own autograd base: it takes the write's graph
        if r._gfn is not None:
            view._move_retain(r._gfn, r._out_nr)
            view._gfn, view._out_nr, view._rg = r._gfn, r._out_nr, True
        elif view._gfn is not None:
            view._gfn, view._rg = None, False
    view._vc.value += 1  # a `.data` alias bumps a counter of its own
    if base._views:
        _WRITER[0] = view._vc  # the views whose version moved get their grad_fn rebuilt (see _refresh)
        try:
            for v in list(base._views):
                v._refresh()
        finally:
            _WRITER[0] = None


def _bypass_old_view(fn, view, base, chain):
    """PyTorch's CopySlices runs the in-place op's node ``fn`` itself and writes the gradient of the view's old
    value straight into the base's gradient: the view's old grad_fn (and the nodes of the chain up to the base) is
    not on that path, so the hooks registered there (``v.register_hook`` before ``v.mul_``) do not see it. Here
    ``fn``'s first edge is rerouted the same way, through one hookless view node from the base's old edge; the
    op's other inputs (``v.mul_(v)``: the second ``v``) still reach the old view node, and its hooks, as in
    PyTorch, and so does a double backward through the saved old value of the view."""
    if not (all(op.differentiable for op, _ in chain) and _inexact(base._v)):
        return
    st = (("chain", chain),)
    old_view = wrap(view._v)  # (only its shape and dtype are read: the node's output metadata)
    registry._record(VIEW_REPLAY, (base,), [base._v], st, None, (old_view,))
    fn.saved_edges = fn.next_edges  # (a saved ``self`` rebuilt for create_graph keeps the old view's grad_fn)
    fn.next_edges = ((old_view._gfn, 0),) + tuple(fn.next_edges[1:])


def _refresh(view, base, chain, diff):
    """Replay the view's chain on the (changed) base, recording the graph when the base requires grad."""
    alias = view._alias_base
    if not diff and alias is not None and alias._rg:
        # a view of a `detach()` alias that requires grad (a write made it, `x.detach()[1].add_(y)`, or
        # requires_grad_()): its autograd base is the alias, from which PyTorch rebuilds its grad_fn (also after a
        # write under no_grad)
        _refresh(view, alias, chain[len(alias._view[1]):], True)
        return
    record = diff and base._rg and STATE.grad_enabled and not view._nograd_view and view._fn_view is None
    moved = _WRITER[0] is None or view._vc is _WRITER[0]  # a `.data` write leaves other views' versions alone
    if not record or not moved:
        if moved and diff and view._gfn is not None and view._fn_view is None:
            # written with grad recording off: PyTorch rebuilds the view's grad_fn from its base, also from a base
            # that does not require grad (a view of a leaf that is itself a view, `x.t().requires_grad_()[0]`):
            # then the rebuilt node leads nowhere and the view's gradient is lost
            _regenerate(view, base, chain)
            return
        view._d = _replay_value(base._d, chain)
        if not diff and STATE.tracing:  # a view of a `.data` / `detach()` alias stays outside differentiation
            view._d = tracing.cut(view._d)
        return
    if any("_out" in dict(st) for _, st in chain):
        _regenerate(view, base, chain)  # an output of a multi-view op (unbind, split): PyTorch refuses to rebuild it
        return
    if all(op.differentiable for op, _ in chain) and _inexact(base._d):
        # PyTorch regenerates the grad_fn of a view whose storage was written as ONE AsStridedBackward0 from the base
        t = apply(VIEW_REPLAY, (base,), chain=chain)
        view._move_retain(t._gfn, 0)
        view._d, view._gfn, view._out_nr, view._rg = t._d, t._gfn, 0, t._rg
        return
    t = base
    for op, st in chain:
        kw = dict(st)
        i = kw.pop("_out", None)
        st2 = tuple(kw.items())
        out = kernels.run_forward(op, [t._d], st2, None)
        outs = tuple(wrap(o) for o in out) if isinstance(out, (tuple, list)) else (wrap(out),)
        if op.differentiable and _inexact(outs[0]._d):
            registry._record(op, (t,), [t._d], st2, None, outs)
        t = outs[i if i is not None else 0]
    view._move_retain(t._gfn, t._out_nr)
    view._d = t._d
    view._gfn = t._gfn
    view._out_nr = t._out_nr
    view._rg = t._rg


_WRITER = [None]  # the version counter of the write now refreshing views made with grad recording off


def _regenerate(view, base, chain):
    """A view that had a grad_fn, after a write made with grad recording off: one AsStridedBackward0 from the
    base, as PyTorch rebuilds it; an output of a multi-view op (unbind, split) refuses it instead."""
    multi = [dict(st)["_out"] for _, st in chain if "_out" in dict(st)]
    if multi or not all(op.differentiable for op, _ in chain) or not _inexact(base._d):
        view._d = _replay_value(base._d, chain)
        if multi:
            op = next(op for op, st in reversed(chain) if "_out" in dict(st))
            name = op.grad_name[:-len("Backward0")] if op.grad_name.endswith("Backward0") else op.grad_name
            view._fn_view, view._view_ver = (name, multi[-1], "multi"), -1
        return
    st = (("chain", chain),)
    t = wrap(kernels.run_forward(VIEW_REPLAY, [base._d], st, None))
    registry._record(VIEW_REPLAY, (base,), [base._d], st, None, (t,))
    view._move_retain(t._gfn, 0)
    view._d, view._gfn, view._out_nr = t._d, t._gfn, 0


def _inexact(v):
    return jnp.issubdtype(v.dtype, jnp.inexact)


@functools.lru_cache(maxsize=512)
def _chain_kernel(chain):
    """``(x, ints) -> x`` seen through ``chain``, whose Slots ``ints`` fill (``ops/dynamic.py``)."""
    return jax.jit(lambda x, ints: _chain_apply(x, _dynamic.fill(chain, ints)))


def _replay_value(x, chain):
    if type(x) is _meta.MetaArray:  # (a view of a written meta tensor: its shape and dtype only)
        return _meta.eval_meta(lambda v: _chain_apply(v, chain), [x])
    if tracing.active():
        return _chain_apply(x, chain)
    kchain, ints = _dynamic.split_with(_dynamic.split_chain, chain)
    return _chain_kernel(kchain)(lazy.concrete(x), _dynamic.values(ints))


_VIEW_WRITE.write = _write
_VIEW_WRITE.refresh = _refresh


# ----------------------------------------------------------------------------------------------------------------
# in-place ops


_SNAPSHOT = _graph.VersionCounter()  # stands for a saved pre-write value: its version never changes


def restamp(nodes, vc, old, old_d, marker, tid=None, result=None):
    """After an in-place write bumped ``vc`` past ``old``, let the nodes this write itself recorded (``seq`` after
    ``marker``, reached from ``nodes``) keep the overwritten value ``old_d`` they saved: JAX values never change,
    so it is still the original (what PyTorch keeps as ``original_self``). Other saved references to the tensor
    stay stale. Each node is restamped once, however many of ``nodes`` reach it.

    ``result`` is the out-of-place result the write stored, when the op saved it (``exp_`` saves its result): that
    saved output IS the written tensor in PyTorch, so it takes the tensor's counter at its new version — a later
    write to the tensor makes the backward fail."""
    stack, seen = list(nodes), set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or getattr(n, "seq", -1) <= marker:
            continue
        seen.add(id(n))
        vs = getattr(n, "versions", None)
        if vs:  # the snapshot is immutable: later writes to the tensor cannot stale it (own, never-bumped counter)
            # only the entry the node saved as its ``self`` (input 0, the first record when saved) for the written
            # tensor itself (``tid``) — not other operands that are the same tensor or aliases of it, such as
            # ``y.mul_(y)``'s or ``v.addcmul_(v, v)``'s, ``y.mul_(y.detach())``'s, all of which PyTorch finds stale
            own = getattr(n, "saves_self", False)
            out = []
            for k, (c, v, val, who, nonleaf) in enumerate(vs):
                if k == 0 and own and c is vc and v == old and val is old_d and (tid is None or who == tid):
                    out.append((_SNAPSHOT, 0, val, who, nonleaf))
                elif result is not None and c is result:
                    out.append((vc, vc.value, val, tid, nonleaf))
                else:
                    out.append((c, v, val, who, nonleaf))
            n.versions = tuple(out)
        stack.extend(e[0] for e in n.next_edges if e is not None)


_SCOPES: list = []  # the open write scopes, innermost last (``assign`` tells the innermost what it stored)


class write_scope:
    """``with write_scope(t): assign(t, op(t, ...))`` — the in-place op's own records keep ``t``'s old value, and
    its saved result stands for ``t`` itself."""

    def __init__(self, t):
        self.t = t
        self.result = None

    def __enter__(self):
        t = self.t
        self.marker, self.old, self.old_d = next(_graph._SEQ), t._vc.value, t._d
        _SCOPES.append(self)
        return self

    def __exit__(self, *exc):
        _SCOPES.pop()
        if exc[0] is None:
            t = self.t
            res = self.result._vc if self.result is not None else None
            root = t._view[0] if t._view is not None and t._view[2] else t
            nodes = (root._gfn,) if root is t else (root._gfn, t._gfn)
            restamp(nodes, t._vc, self.old, self.old_d, self.marker, id(t), res)
        return False


def writing(t) -> bool:
    """Whether ``t`` is the tensor the innermost open in-place op is writing."""
    return bool(_SCOPES) and _SCOPES[-1].t is t


def assign(self: Tensor, r) -> Tensor:
    """Write result ``r`` into ``self`` with PyTorch's checks: the dtype must be castable and the shape must be
    self's (a broadcastable result is expanded)."""
    from . import convert
    if not isinstance(r, Tensor):
        r = Tensor._make(jnp.asarray(r, self._v.dtype))
    if _SCOPES and _SCOPES[-1].t is self:
        _SCOPES[-1].result = r
    if r._v.dtype != self._v.dtype:
        rd, sd = r.dtype, self.dtype
        if not _dtype.can_cast(rd, sd):
            raise RuntimeError(f"result type {_dtype.scalar_type_name(rd)} can't be cast to the desired output type "
                               f"{_dtype.scalar_type_name(sd)}")
        r = convert.to_dtype(r, sd)
    if r._v.shape != self._v.shape:
        try:
            full = np.broadcast_shapes(r._v.shape, self._v.shape)
        except ValueError:
            full = None
        if full is None or tuple(full) != self._v.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(full) if full is not None else list(r.shape)}")
        r = apply(_BROADCAST, (r,), shape=self._v.shape)
    return self._assign(r)


_BROADCAST = defop("expand_copy", lambda x, *, shape: jnp.broadcast_to(x, shape), linear=True,
                   grad_name="ExpandBackward0")


_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
            "memory location. Please clone() the tensor before performing the operation.")


def _dense(shape, strides):
    """PyTorch's ``is_non_overlapping_and_dense``: the strides are a permutation of contiguous ones."""
    expected = 1
    for size, st in sorted((d for d in zip(shape, strides) if d[0] != 1), key=lambda d: d[1]):
        if st != expected:
            return False
        expected *= size
    return True


def dense_layout(t: Tensor):
    """``(shape, strides, 0)`` when ``t``'s strides are dense but not exactly the contiguous ones (a channels-last
    or transposed tensor: what a copy, a ``.data`` swap, a saved file or a compiled output keeps), else None."""
    if t._view is None and t._layout is None:
        return None
    shape, strides, _ = layout(t)
    if tuple(strides) == contiguous_strides(shape) or not _dense(shape, strides):
        return None
    return tuple(shape), tuple(strides), 0


def check_overlap(dst: Tensor, src, full=False) -> None:
    """Refuse a write of ``src`` into ``dst`` when they share storage and partly overlap, as PyTorch does (its
    ``get_overlap_status``: dense views of one storage whose element ranges intersect without being the same
    tensor layout). Layouts PyTorch cannot judge (not dense) pass, as there. ``full``: the indexed writes
    (scatter_, index_add_, ...) refuse a full overlap too — ``x.scatter_(0, i, x)``."""
    if src is dst and full and math.prod(dst._v.shape):
        raise RuntimeError(_OVERLAP)
    if src is dst or not isinstance(src, Tensor) or dst._view is None and src._view is None:
        return
    base = dst._view[0] if dst._view is not None else dst
    if (src._view[0] if src._view is not None else src) is not base or src._v.dtype != dst._v.dtype:
        return
    n_dst, n_src = math.prod(dst._v.shape), math.prod(src._v.shape)
    if not n_dst or not n_src:
        return
    (sd, td, od), (ss, ts, os_) = layout(dst), layout(src)
    if not (_dense(sd, td) and _dense(ss, ts)):
        return
    if (od, n_dst) == (os_, n_src):
        if full:
            raise RuntimeError(_OVERLAP)
        if td == ts or sd == ss and all(a == b for a, b, n in zip(td, ts, sd) if n != 1):
            return
        raise RuntimeError(_OVERLAP)
    if od < os_ + n_src and os_ < od + n_dst:
        raise RuntimeError(_OVERLAP)


# in-place methods whose tensor arguments are values read before the write (a 0-dim value is a scalar to PyTorch)
_NO_OVERLAP_CHECK = {"masked_fill_", "index_fill_", "fill_diagonal_"}
# indexed writes: PyTorch's assert_no_overlap also refuses the destination itself as an argument
_FULL_OVERLAP_CHECK = {"scatter_", "scatter_add_", "scatter_reduce_", "index_add_", "index_copy_", "put_",
                       "index_reduce_"}


# in-place methods PyTorch lets write an expanded view (no internal-overlap check; see overlap_ok)
_INTERNAL_OVERLAP_OK = {"tril_", "triu_", "masked_fill_", "index_fill_", "fill_diagonal_"}
# ... and those that do only for some tensors: nan_to_num_ of an integer or bool tensor is PyTorch's
# ``self.copy_(self)``, which returns before any check (math fuzzer seed 9100386)
_INTERNAL_OVERLAP_OK_IF = {"nan_to_num_": lambda t: not (t.dtype.is_floating_point or t.dtype.is_complex)}


# in-place ops PyTorch does not differentiate: on a tensor that requires grad they leave autograd alone (no leaf
# check, the tensor keeps its history, so gradients pass through as if nothing was written)
_NONDIFF_INPLACE = {"logical_not_", "logical_and_", "logical_or_", "logical_xor_"}


class autocast_off:
    """No autocast casts inside: PyTorch's autocast policy lists functional ops only, so an in-place op (``addmm_``,
    ``index_copy_``) or an ``out=`` call runs on its operands' own dtypes (and raises their dtype errors)."""

    def __enter__(self):
        STATE.autocast_off += 1

    def __exit__(self, *exc):
        STATE.autocast_off -= 1


def make_inplace(fn, name=None):
    """``fn_`` from an out-of-place ``fn(self, ...)``: checks, computes out of place, writes back."""
    check = (name or fn.__name__ + "_") not in _NO_OVERLAP_CHECK
    full = (name or fn.__name__ + "_") in _FULL_OVERLAP_CHECK
    nondiff = (name or fn.__name__ + "_") in _NONDIFF_INPLACE
    may_overlap = (name or fn.__name__ + "_") in _INTERNAL_OVERLAP_OK
    overlap_if = _INTERNAL_OVERLAP_OK_IF.get(name or fn.__name__ + "_")

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if nondiff and self._rg and STATE.grad_enabled:
            from . import convert
            from ..autograd.grad_mode import no_grad
            with no_grad():
                r = convert.to_dtype(fn(self.detach(), *args, **kwargs), self.dtype)
            self._set_value(r._d)
            return self
        self._check_inplace()
        if check:
            for a in args:
                if isinstance(a, Tensor):
                    check_overlap(self, a, full)
            for a in kwargs.values():
                if isinstance(a, Tensor):
                    check_overlap(self, a, full)
        ok = may_overlap or (overlap_if is not None and overlap_if(self))
        with write_scope(self), (overlap_ok(self) if ok else contextlib.nullcontext()):
            if registry.autocast_hook is None:
                return assign(self, fn(self, *args, **kwargs))
            with autocast_off():
                return assign(self, fn(self, *args, **kwargs))
    method.__name__ = name or (fn.__name__ + "_")
    method.__qualname__ = "Tensor." + method.__name__
    return method


# PyTorch numbers an op's overloads in one sequence, the in-place ones after the others: ``t_()`` records
# TBackward1 where ``t()`` records TBackward0, ``squeeze_(dim)`` SqueezeBackward4 where ``squeeze(dim)`` records 1
_OUT_OF_PLACE_OVERLOADS = {"TBackward": 1, "UnsqueezeBackward": 1, "SqueezeBackward": 3, "TransposeBackward": 1,
                           "AsStridedBackward": 1}


def _name_inplace_overload(node):
    """Rename the view node ``node`` (just made by the out-of-place op) to its in-place overload's name."""
    name = type(node).__name__
    stem = name.rstrip("0123456789")
    shift = _OUT_OF_PLACE_OVERLOADS.get(stem)
    if shift is not None and stem != name:
        from ..autograd.graph import node_class
        node.__class__ = node_class(type(node).__base__, f"{stem}{int(name[len(stem):]) + shift}")


def hidden_storage(t: Tensor) -> Tensor:
    """Mark ``t`` as a storage no one sees: the base of views that are no views to the user (``_base`` None), as
    PyTorch's tensors that share a storage without one being the base of another (``resize_`` growing a tensor,
    ``empty_strided`` with gaps, tensors loaded from one storage). Returns ``t``."""
    t._views = weakref.WeakSet()
    t.__dict__["_hidden_base"] = True
    return t


def inplace_view(self: Tensor, out: Tensor) -> Tensor:
    """Make ``self`` become ``out`` — a view of ``self`` (``unsqueeze_``, ``t_``...) — keeping its storage.

    A view just extends its chain. A base turns into a view of a hidden base that keeps the storage (and the graph
    record) it had, so its existing views and its strides stay what PyTorch's would be.
    """
    self._check_inplace()
    if STATE.grad_enabled and self._rg and self._view is not None and self._view[2]:
        multi = multi_output_view_error(self._view[1])  # (t_() on split(...)[0]: PyTorch's refusal, as for add_())
        if multi is not None:
            raise multi
    if STATE.recorder is not None:
        STATE.recorder.wrote(self)
    if self._view is None:
        hidden = Tensor._make(self._d, self._rg, self._gfn, self._out_nr)
        hidden._vc = self._vc
        hidden._views = weakref.WeakSet()
        hidden.__dict__["_hidden_base"] = self  # (PyTorch's ``_base`` of its views, which keep it alive)
        for v in list(self._views or ()):
            if v is not out:
                hidden._views.add(v)
                v._view = (hidden,) + v._view[1:]
        self._views = None
        self._view = (hidden, out._view[1], True)
        hidden._views.add(self)
        from .shape import move_storage_address
        move_storage_address(self, hidden)
    else:
        self._view = out._view
    self._d = out._d
    if out._gfn is not None:
        _name_inplace_overload(out._gfn)
    self._gfn = out._gfn
    self._out_nr = out._out_nr
    self._rg = out._rg
    self._vc.value += 1
    return self
