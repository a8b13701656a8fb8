"""The lowered backward: a whole backward pass as ONE cached jitted function.

Running a backward node by node costs one kernel launch per node. When a graph's *structure* — the ops, their static
arguments, the shapes and dtypes of what they saved, the edges, the roots and the leaves, and the order the nodes
were made in (it decides which of the nodes ready at once runs first) — has been seen before, the engine instead
calls one jitted function that runs every node's VJP (the same pure rules the node-by-node path uses) in the same
order and returns the leaf gradients, already added to the existing ``.grad`` values. A structure seen for the first
time runs node by node when its nodes' kernels are compiled already (a structure seen once is often never seen
again); when the node-by-node run would have to compile many of them (a new program's first backward), it is lowered
at once, since one program compiles in less time than its nodes' kernels one by one (see :func:`_lower_at_once`).
Graphs with hooks, ``retain_grad``, custom Functions, anomaly mode or ``create_graph`` always run node by node,
since those need real tensors at each node. Same rules, same order of summation; XLA's fusion across nodes can round
differently in the last bit, unless ``torchish.config.exact_programs`` (``ops/nesting.py``).

``torchish.config.lowered_backward`` ("auto" | "always" | "never") is the one visible switch.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _executables
from .._config import config
from .._meta import MetaArray
from .._tensor import Tensor
from .graph import AccumulateGrad
from .grad_mode import STATE
from ..ops import dynamic as _dynamic, lazy, nesting
from ..ops.opnode import live_values
from ..ops.out_layout import keep_format

_CACHE: dict = {}
_SEEN = object()
# The nodes (op, static arguments, dtype, mask, shapes) whose backward kernels a node-by-node first sighting compiled
# (forgotten when JAX's caches are dropped: torchish/_executables.py)
_COMPILED: set = set()
_executables.ON_CLEAR.append(_COMPILED.clear)
STATS = {"lowered": 0, "node_by_node": 0, "compiles": 0}


def new_leaf_grad(var, grad):
    """``grad`` (a fresh tensor) as the first ``.grad`` of the leaf ``var``, as PyTorch's AccumulateGrad makes it:
    cast to the ``grad_dtype`` set on ``var``, with ``var``'s strides."""
    want = var.__dict__.get("_grad_dtype", False)
    if want and grad.dtype != want:
        grad = grad.to(want)
    if var._layout is not None or var._view is not None:  # (a leaf that is a view, Parameter(w.t()), has strides)
        keep_format(grad, var)
    return grad


def _eligible(nodes, targets, accumulate, create_graph):
    from ..ops.opnode import OpNode
    from . import engine
    if create_graph or STATE.anomaly or STATE.tracing or config.lowered_backward == "never" \
            or engine.node_hook is not None:  # (a FlopCounterMode counts each node's backward as it runs)
        return False
    for node in nodes:
        if node._pre_hooks or node._post_hooks or node._tensor_pre_hooks or node._retains:
            return False
        if isinstance(node, AccumulateGrad):
            var = node.variable
            if var._hooks or var._post_acc_hooks:
                return False
            if var._gval is not None and (var._gval._rg or var._gval._v.shape != var._v.shape
                                          or var._gval._v.dtype != var._v.dtype or var._gval._coo is not None):
                return False  # (a sparse .grad: PyTorch's sparse accumulation, node by node)
        elif not isinstance(node, OpNode) or type(node).apply_grads is not OpNode.apply_grads or node._released \
                or node.packed is not None or (
                node.op.bucket is not None and node.op.bucket.active(node.vals)):
            return False  # (packed saved values: the unpack hooks run node by node, as PyTorch calls them; an op
            # with bucketed eager kernels, a packed RNN, would compile a program per shape: see OpDef.bucket; a
            # node with a backward of its own, a sparse embedding's, needs real tensors)
        elif accumulate and targets is not None and id(node) in targets:
            return False  # backward(inputs=[non-leaf]): rare, node by node
    return True


def _aval(v):
    if type(v) is lazy.ARRAY_TYPE or hasattr(v, "shape"):  # (a concrete array first: its hasattr reads a property)
        return lazy.shape_dtype(v)
    return type(v)


def _signature(order, index, root_edges, root_grads, targets, accumulate):
    """The structure's key (over the nodes in ``order``), and what the program takes from each node there: its saved
    inputs and outputs (live: any released as zeros) and its dynamic integers (ops/dynamic.py); None for the
    leaves' nodes. One pass: this runs on every lowered backward."""
    parts, vals, outs, ints, seqs = [], [], [], [], []
    get = index.get
    for node in order:
        if type(node) is AccumulateGrad:
            var = node.variable
            parts.append(("acc", var._v.shape, var._v.dtype, var._gval is not None))
            seqs.append(-1)
            vals.append(None)
            outs.append(None)
            ints.append(None)
            continue
        op = node.op
        seqs.append(node.seq)
        kst, dv = _dynamic.split_values(op, node.static)  # (one program whatever the indices)
        v, o = live_values(node.vals), node.outs
        vals.append(v)
        ints.append(dv)
        if o is not None:
            o = live_values(o)
            outs.append(o)
            oav = tuple(map(_aval, o))
        else:
            outs.append(None)
            oav = False
        parts.append((op, kst, node.cdt, node.mask, tuple(map(_aval, v)), oav, node.out_meta,
                      tuple([(get(id(e[0]), -1), e[1]) if e is not None else None for e in node.next_edges])))
    roots = tuple((get(id(n), -1), nr, _aval(g._v) if g is not None else None)
                  for (n, nr), g in zip(root_edges, root_grads))
    tg = None if targets is None else tuple(sorted((index[k], tuple(v)) for k, v in targets.items() if k in index))
    # the nodes' creation order, which decides among ready nodes which runs first (engine._schedule)
    made = tuple(sorted(range(len(seqs)), key=seqs.__getitem__))
    return (tuple(parts), roots, tg, accumulate, made), vals, outs, ints


def try_run(order, schedule_of, root_edges, root_grads, targets, needed, results, accumulate, retain_graph,
            create_graph):
    """Run the backward lowered if eligible and its structure was seen before. ``order``: the graph's nodes as
    ``engine._discover`` lists them (the same order for the same structure); ``schedule_of(order)``: the order they
    run in, computed only when the structure is new (a seen one keeps it as a permutation of ``order``). Returns
    True when it ran, else the schedule if it computed one (None otherwise) for the node-by-node run."""
    if not order or not _eligible(order, targets, accumulate, create_graph) or \
            any(g is not None and type(g._v) is MetaArray for g in root_grads):  # meta: shapes only, node by node
        STATS["node_by_node"] += 1
        return None
    index = {id(n): i for i, n in enumerate(order)}
    sig, vals, outs, ints = _signature(order, index, root_edges, root_grads, targets, accumulate)
    sig = sig, config.exact_programs
    entry = _CACHE.get(sig)
    if entry is None and config.lowered_backward != "always" and not _lower_at_once(sig[0][0]):
        _CACHE[sig] = _SEEN  # first sighting: node by node
        STATS["node_by_node"] += 1
        return None
    if entry is None or entry is _SEEN:
        schedule = schedule_of(order)
        if not schedule:
            return schedule
        perm = [index[id(n)] for n in schedule]
        ops = [j for j in perm if type(order[j]) is not AccumulateGrad]
        entry = _CACHE[sig] = _build(schedule, root_edges, targets, accumulate) + (perm, ops)
        STATS["compiles"] += 1
    fn, nested, leaf_nodes, captures, perm, ops = entry
    schedule = [order[j] for j in perm]
    vals, outs, ints = [vals[j] for j in ops], [outs[j] for j in ops], [ints[j] for j in ops]
    for node in schedule:
        if type(node) is not AccumulateGrad and node.versions:
            node._check_versions()
    rgs = [g._v if g is not None else None for g in root_grads]
    prev = [schedule[i].variable._gval._v if schedule[i].variable._gval is not None else None for i in leaf_nodes]
    if config.lazy and STATE.recorder is None:
        # lazy capture: the backward joins the pending program (forward, and the optimizer update that follows)
        leaf_out, captured = lazy.record_pytree("lowered_backward", fn, fn.__wrapped__,
                                                   (vals, outs, rgs, prev, ints), jitted=fn, nested=nested)
    else:
        args = (vals, outs, rgs, prev, ints)
        if lazy.STATS["calls_recorded"]:  # lazy mode was used: pending values may remain
            args = jax.tree.map(lazy.concrete, args, is_leaf=lazy.is_pending)
        leaf_out, captured = fn(*args)
    STATS["lowered"] += 1
    for i, g in zip(leaf_nodes, leaf_out):
        var = schedule[i].variable
        if g is None or not var._rg:  # a leaf detach_()ed after use: PyTorch's AccumulateGrad skips it
            continue
        if var._gval is None:
            var._gval = new_leaf_grad(var, lazy.adopt(Tensor._make(g), g))
        else:
            var._gval._set_value(g)  # accumulated in place, as PyTorch does
    for (_, _, k), g in zip(captures, captured):
        results[k] = lazy.adopt(Tensor._make(g), g) if g is not None else None
    if not retain_graph:
        for node in schedule:
            node.release()
    return True


def _lower_at_once(parts):
    """Whether a structure seen for the first time (its nodes' signature ``parts``) is lowered at once: when the
    node-by-node run would compile at least two new kernels and a quarter of its nodes' (a node adds less to one
    program's compile time than a kernel of its own costs). Otherwise it runs node by node, and its nodes' kernels
    are noted as compiled."""
    nodes = [p[:7] for p in parts if p[0] != "acc"]
    new = sum(p not in _COMPILED for p in nodes)
    if new >= 2 and 4 * new >= len(nodes):
        return True
    _COMPILED.update(nodes)
    return False


def _build(schedule, root_edges, targets, accumulate):
    """The jitted ``(vals, outs, root_grads, prev_leaf_grads) -> (leaf grads, captured grads)``."""
    index = {id(n): i for i, n in enumerate(schedule)}
    from ..ops.opnode import _bwd_fn, dynamic_bwd_fn, live_inputs
    steps = []
    leaf_nodes = []
    captures = []  # (node index, output_nr, input index) for autograd.grad
    op_pos = {}
    for i, node in enumerate(schedule):
        tk = targets.get(id(node), ()) if targets is not None else ()
        if not accumulate:
            captures.extend((i, nr, k) for nr, k in tk)
        if isinstance(node, AccumulateGrad):
            if accumulate:
                leaf_nodes.append(i)
                steps.append(("acc", i, len(leaf_nodes) - 1))
            continue
        op_pos[i] = len(op_pos)
        edges = tuple((index[id(e[0])], e[1]) if e is not None and id(e[0]) in index else None
                      for e in node.next_edges)
        kst, dv = _dynamic.split_values(node.op, node.static)
        # only the inputs the backward reaches (PyTorch's should_compute_output; see OpNode.apply_grads)
        mask = tuple(m and e is not None for m, e in zip(node.mask, edges))
        bwd = dynamic_bwd_fn(node.op, kst, node.cdt, mask) if dv else _bwd_fn(node.op, kst, node.cdt, mask)
        steps.append(("op", i, nesting.nested(bwd, ("backward", node.op, kst, node.cdt, mask, bool(dv))),
                      mask, edges, node.op, bool(dv)))
    metas = [n.out_meta for n in schedule]
    roots = [(index.get(id(n)), nr) for n, nr in root_edges]

    def add(bufs, j, nr, g):
        shape, dt = metas[j][nr]
        if g.shape != tuple(shape):
            lead = g.ndim - len(shape)
            axes = tuple(range(lead)) + tuple(a + lead for a, s in enumerate(shape)
                                              if s == 1 and g.shape[a + lead] != 1)
            g = jnp.sum(g, axis=axes).reshape(shape)
        if g.dtype != dt:
            g = g.astype(dt)
        slot = bufs.setdefault(j, [None] * len(metas[j]))
        slot[nr] = g if slot[nr] is None else slot[nr] + g

    def run(vals, outs, rgs, prev, ints):
        bufs = {}
        for (j, nr), g in zip(roots, rgs):
            if j is not None and g is not None:
                add(bufs, j, nr, g)
        seen = {}
        leaf_out = [None] * len(leaf_nodes)
        for st in steps:
            if st[0] == "acc":
                _, i, k = st
                g = bufs.get(i, [None])[0]
                if g is not None:
                    leaf_out[k] = g if prev[k] is None else prev[k] + g
                continue
            _, i, bwd, mask, edges, op, dyn = st
            gs = bufs.pop(i, None)
            seen[i] = gs
            if gs is None or all(g is None for g in gs):
                continue
            p = op_pos[i]
            args = (tuple(vals[p]), tuple(outs[p]) if outs[p] is not None else None, tuple(gs))
            res = iter(bwd(*args, ints[p]) if dyn else bwd(*args))
            live = live_inputs(op, gs)
            for k, (m, e) in enumerate(zip(mask, edges)):
                if m:
                    g = next(res)
                    if e is not None and (live is None or k in live):
                        add(bufs, e[0], e[1], g)
        captured = []
        for i, nr, _ in captures:
            gs = seen.get(i) if i in seen else bufs.get(i)
            captured.append(gs[nr] if gs is not None else None)
        return leaf_out, captured

    return jax.jit(run, compiler_options=nesting.options()), jax.jit(run), leaf_nodes, captures
