"""The backward engine: iterative reverse accumulation over the recorded nodes, with PyTorch's semantics.

``run_backward`` discovers the graph from the roots (iterative DFS, no recursion limit), keeps only the nodes that
lead to what was asked for (``inputs=``), then runs nodes in dependency order, latest-created first (PyTorch's
ready-queue order), calling hooks in PyTorch's order: tensor hooks, retain_grad, node pre-hooks, the node, node
post-hooks; at the leaves, tensor hooks, accumulation into ``.grad``, post-accumulate hooks.
"""
from __future__ import annotations

import heapq
import itertools
import threading

import jax
import jax.numpy as jnp

from .. import _device, _dtype
from .._global_flags import warn_once
from .._meta import MetaArray
from .._tensor import Size, Tensor
from . import lowering
from . import anomaly_mode
from .graph import AccumulateGrad, GradientEdge
from .grad_mode import STATE
from ..ops import tracing
from ..ops.opnode import OpNode


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


class _EdgeOutput:
    """A :class:`GradientEdge` given as an output to ``grad``: the gradient given for it enters the graph there."""

    _rg = True

    def __init__(self, edge):
        self._e = (edge.node, edge.output_nr)
        shape, dt = edge.node.out_meta[edge.output_nr]
        self._v = jax.ShapeDtypeStruct(tuple(shape), dt)
        self.shape = Size(shape)
        self.dtype = _dtype.from_np(dt)

    def _edge(self):
        return self._e


# PyTorch's checkpoint_valid: False while a backward pass runs towards given ``inputs`` (``grad()``,
# ``backward(inputs=)``), where the reentrant checkpoint cannot work
_CHECKPOINT_VALID = [True]


def _is_checkpoint_valid() -> bool:
    return _CHECKPOINT_VALID[-1]


def _run_marked(roots, root_grads, retain_graph, create_graph, inputs, accumulate):
    _CHECKPOINT_VALID.append(_CHECKPOINT_VALID[-1] and inputs is None)
    try:
        return run_backward(roots, root_grads, retain_graph, create_graph, inputs, accumulate)
    finally:
        _CHECKPOINT_VALID.pop()


def _edge_of(t):
    return (t.node, t.output_nr) if isinstance(t, GradientEdge) else t._edge()


_ONES: dict = {}


def _ones_like(d):
    """The implicit gradient of a one-element output: a cached constant per (shape, dtype, placement), since
    ``loss.backward()`` runs every step and an eager ``jnp.ones`` costs a dispatch each time."""
    if isinstance(d, jax.core.Tracer) or STATE.tracing or tracing.active():
        return jnp.ones(d.shape, d.dtype)  # inside a trace: never cache a tracer
    if type(d) is MetaArray:  # a meta output's gradient is a meta tensor too
        return MetaArray(d.shape, d.dtype)
    # a pending lazy value's placement is not known yet: an uncommitted constant follows the other operands
    key = (d.shape, d.dtype, d.sharding if isinstance(d, jax.Array) else None)
    v = _ONES.get(key)
    if v is None:
        v = jnp.ones(d.shape, d.dtype)
        v = _ONES[key] = jax.device_put(v, key[2]) if key[2] is not None else v
    return v


def _make_grads(outputs, grads, is_grads_batched=False):
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if not isinstance(o, (Tensor, _EdgeOutput)):  # (PyTorch's Python _make_grads asserts it)
            raise AssertionError("Expected output to be a torch.Tensor")
        if g is None:
            if o._rg:
                v = o._v  # shape and dtype only: a pending lazy value stays pending
                if v.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if v.dtype.kind not in "f" and v.dtype != jnp.bfloat16:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{o.dtype}")
                out.append(Tensor._make(_ones_like(v)))
            else:
                out.append(None)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        gshape = g._v.shape[1:] if is_grads_batched else g._v.shape
        if tuple(gshape) != tuple(o._v.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                               f"shape of {o.shape}.")
        if o.dtype.is_complex != g.dtype.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same "
                               f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] "
                               f"has a dtype of {o.dtype}.")
        out.append(g)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """``torch.autograd.backward``: accumulate d(tensors)/d(leaf) into each leaf's ``.grad``."""
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grad_tensors) < len(tensors):  # as PyTorch: extra gradients are ignored, missing ones are an error
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    grad_tensors = grad_tensors[:len(tensors)]
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for t in inputs or ():
        if isinstance(t, GradientEdge):
            continue  # a leaf's edge accumulates into its .grad; another node's receives nothing to keep
        t.retain_grad()  # as PyTorch: a non-leaf in inputs= keeps its .grad (and says so in retains_grad); an
        # input that does not require grad raises retain_grad's error
    grads = _make_grads(tensors, grad_tensors)  # (the gradients' types and shapes first, as PyTorch's order)
    for i, t in enumerate(tensors):
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    if create_graph:
        warn_once("Using backward() with create_graph=True will create a reference cycle between the parameter and "
                  "its gradient which can cause a memory leak. We recommend using autograd.grad when creating the "
                  "graph to avoid this. If you have to use this function, make sure to reset the .grad fields of your "
                  "parameters to None after use to break the cycle and avoid the leak.")
    if retain_graph is None:
        retain_graph = create_graph
    _run_marked(tensors, grads, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: the gradients of ``outputs`` w.r.t. ``inputs``, without touching ``.grad``."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = tuple(_EdgeOutput(o) if isinstance(o, GradientEdge) else o for o in _as_tuple(outputs))
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grad_outputs) < len(outputs):  # as PyTorch: extra gradients are ignored, missing ones are an error
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    grad_outputs = grad_outputs[:len(outputs)]
    for i, t in enumerate(outputs):
        if not isinstance(t, (Tensor, _EdgeOutput)):  # (PyTorch's _make_grads asserts it first)
            raise AssertionError("Expected output to be a torch.Tensor")
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for i, t in enumerate(inputs):
        if isinstance(t, GradientEdge):
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)
    grads = _make_grads(outputs, grad_outputs)
    res = _run_marked(outputs, grads, retain_graph, create_graph, inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, res)):
        if g is None:
            if materialize_grads:
                if isinstance(t, GradientEdge):
                    raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
                # PyTorch's materialized zeros require grad under create_graph
                g = Tensor._make(jnp.zeros(t._v.shape, t._v.dtype, device=_device.placement(t._v)),
                                 bool(create_graph))
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    return tuple(out)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """``is_grads_batched=True``: one backward per leading slice of the grad_outputs, stacked."""
    from ..ops import join as _join
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is not None and tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               "shape of corresponding output, but a mismatch was detected: grad_output["
                               f"{i}] has a shape of {g.shape[1:]} and output[{i}] has a shape of {o.shape}. If "
                               "you only want some tensors in `grad_output` to be considered batched, consider "
                               "using vmap.")
    n = grad_outputs[0].shape[0]
    rows = []
    for b in range(n):
        gos = tuple(g[b] if g is not None else None for g in grad_outputs)
        rows.append(grad(outputs, inputs, gos, retain_graph=True, create_graph=create_graph,
                         allow_unused=allow_unused))
    return tuple(_join.stack([r[i] for r in rows]) if rows[0][i] is not None else None for i in range(len(inputs)))


# ----------------------------------------------------------------------------------------------------------------
# the walk


def _discover(roots):
    """Post-order (children first) of every node reachable from ``roots``; iterative."""
    order = []
    seen = set()
    for r in roots:
        if id(r) in seen:
            continue
        seen.add(id(r))
        stack = [(r, iter(r.next_edges))]
        while stack:
            node, it = stack[-1]
            for e in it:
                if e is not None and id(e[0]) not in seen:
                    seen.add(id(e[0]))
                    stack.append((e[0], iter(e[0].next_edges)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class GraphTask:
    """The backward pass running now (PyTorch's GraphTask): which nodes it runs, for hooks that must know
    (``register_multi_grad_hook``). One per ``backward()``/``grad()`` call; a hook that itself runs a backward
    opens a nested one. torchish runs a backward on the calling thread, node after node."""

    __slots__ = ("schedule", "targets", "accumulate", "_ids", "_scratch")

    def __init__(self, schedule, targets, accumulate):
        self.schedule = schedule
        self.targets = targets
        self.accumulate = accumulate
        self._ids = None
        self._scratch = None

    @property
    def scratch(self) -> dict:
        """What hooks keep for this backward only (a multi-grad hook's gradients so far), gone with it: nothing
        outlives the pass, so a backward traced by torchish.compile changes no Python state through them."""
        if self._scratch is None:
            self._scratch = {}
        return self._scratch

    def will_execute(self, node) -> bool:
        """Whether this backward runs ``node`` (PyTorch's ``_will_engine_execute_node``)."""
        if self._ids is None:
            self._ids = {id(n) for n in self.schedule}
        if id(node) not in self._ids:
            return False
        if (not self.accumulate and self.targets is not None and id(node) in self.targets
                and not any(e is not None for e in node.next_edges)):
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                               "autograd.grad(). This is currently not supported.")
        return True


class _Tasks(threading.local):
    def __init__(self):
        self.running = []  # this thread's backward passes running now, innermost last


_TASKS = _Tasks()


def current_task():
    """The innermost backward pass this thread runs now, or None outside backward."""
    running = _TASKS.running
    return running[-1] if running else None


_CALLBACKS = "final callbacks"  # the key of a GraphTask's scratch holding queue_callback's functions
# Set by ``torchish.utils.flop_counter`` while a FlopCounterMode is active: ``node_hook(node, needed)`` sees each node
# just before its backward runs (``needed``: the ids of the nodes a gradient must reach, None for all). None otherwise.
node_hook = None


def queue_callback(fn):
    """Run ``fn()`` once the backward pass running now has finished (PyTorch's
    ``Variable._execution_engine.queue_callback``)."""
    task = current_task()
    if task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task.scratch.setdefault(_CALLBACKS, []).append(fn)


def run_backward(roots, root_grads, retain_graph, create_graph, inputs, accumulate):
    """Run the backward pass. With ``accumulate`` leaves get ``.grad``; otherwise the gradients reaching
    ``inputs`` are returned (one per input, None where none arrived)."""
    if STATE.recorder is not None and (accumulate or not create_graph):
        # torchish.compile: the step computes its own gradients. autograd.grad(create_graph=True) does not count:
        # its graph is kept, so the outputs stay differentiable (a physics-informed loss of u'' backpropagated
        # outside the compiled function)
        STATE.recorder.backward_ran = True
    root_edges = [t._edge() for t in roots]
    targets = None  # id(node) -> list of (output_nr, input index)
    if inputs is not None:
        targets = {}
        for i, t in enumerate(inputs):
            e = _edge_of(t)
            if e is not None:  # None: a view made under no_grad, which no gradient reaches
                targets.setdefault(id(e[0]), []).append((e[1], i))
    order = _discover([e[0] for e in root_edges])
    # which nodes must receive gradients (lie on a path to a target), and which must run
    if targets is None:
        needed = None
    else:
        needed = set()
        for node in order:  # children come before parents
            if id(node) in targets or any(e is not None and id(e[0]) in needed for e in node.next_edges):
                needed.add(id(node))
    results = [None] * len(inputs) if inputs is not None else None
    root_nodes = [e[0] for e in root_edges]

    def schedule_of(order):
        return _schedule(root_nodes, order, needed)
    # (no user code runs inside a lowered backward: it has no hooks, so it needs no GraphTask)
    schedule = lowering.try_run(order, schedule_of, root_edges, root_grads, targets, needed, results, accumulate,
                                retain_graph, create_graph)
    if schedule is True:
        return results
    if schedule is None:
        schedule = schedule_of(order)
    running = _TASKS.running
    running.append(GraphTask(schedule, targets, accumulate))
    try:
        _run_schedule(schedule, root_edges, root_grads, targets, needed, results, accumulate, inputs, retain_graph,
                      create_graph)
        scratch = running[-1]._scratch
        if scratch is not None and _CALLBACKS in scratch:
            callbacks = scratch[_CALLBACKS]
            while callbacks:  # (a callback may queue another)
                callbacks.pop(0)()
    finally:
        running.pop()
    return results


def _run_schedule(schedule, root_edges, root_grads, targets, needed, results, accumulate, inputs, retain_graph,
                  create_graph):
    """Run the scheduled nodes one by one, filling ``results`` for ``grad()``."""
    buffers = {}
    for (node, nr), g in zip(root_edges, root_grads):
        if g is None or (needed is not None and id(node) not in needed):
            continue
        _add_to_buffer(buffers, node, nr, g, None)
    prev = STATE.grad_enabled
    STATE.grad_enabled = bool(create_graph)
    try:
        for node in schedule:
            grads = buffers.pop(id(node), None)
            if grads is None:
                grads = [None] * len(node.out_meta)
            try:
                grads_in = _run_node(node, grads, targets, results, accumulate, inputs, retain_graph,
                                     create_graph, needed)
            except Exception:
                if STATE.anomaly:
                    anomaly_mode.report_error(node)
                raise
            for e, g in zip(node.next_edges, grads_in):
                if e is None or g is None:
                    continue
                if needed is not None and id(e[0]) not in needed:
                    continue
                _add_to_buffer(buffers, e[0], e[1], g, node)
    finally:
        STATE.grad_enabled = prev


_ACC_FIRST = -(1 << 62)  # the heap key of an AccumulateGrad node: before every other node (keys are -seq)


def _schedule(roots, order, needed):
    """The order nodes run in: dependencies first, and among ready nodes the latest created first (PyTorch's
    ready queue), AccumulateGrad nodes before all others as soon as they are ready (PyTorch gives them the largest
    sequence number), in the order they became ready (PyTorch's heap keeps that order for up to three at once).
    Depends only on the graph's structure and the order its nodes were made, so the lowered backward, keyed on
    both, follows the same order."""
    deps = {}
    for node in order:
        if needed is not None and id(node) not in needed:
            continue
        for e in node.next_edges:
            if e is not None and (needed is None or id(e[0]) in needed):
                deps[id(e[0])] = deps.get(id(e[0]), 0) + 1
    heap = []
    pushed = set()
    count = itertools.count()
    for node in roots:
        if deps.get(id(node), 0) == 0 and id(node) not in pushed and (needed is None or id(node) in needed):
            pushed.add(id(node))
            heapq.heappush(heap, (_ACC_FIRST if type(node) is AccumulateGrad else -node.seq, next(count), node))
    out = []
    while heap:
        _, _, node = heapq.heappop(heap)
        out.append(node)
        accs = None  # the AccumulateGrad nodes this one makes ready: (input position, node)
        for k, e in enumerate(node.next_edges):
            if e is None or (needed is not None and id(e[0]) not in needed):
                continue
            left = deps[id(e[0])] - 1
            deps[id(e[0])] = left
            if left == 0:
                nxt = e[0]
                if type(nxt) is AccumulateGrad:
                    accs = [(k, nxt)] if accs is None else accs + [(k, nxt)]
                else:
                    heapq.heappush(heap, (-nxt.seq, next(count), nxt))
        if accs is not None:
            for nxt in _in_torch_order(node, accs):
                heapq.heappush(heap, (_ACC_FIRST, next(count), nxt))
    return out


def _in_torch_order(node, accs):
    """The leaves' AccumulateGrad nodes ``node`` made ready, in the order PyTorch's node lists its inputs
    (``next_functions``: an op's operands may sit elsewhere in torchish's own node, ``addmm``'s bias first)."""
    if len(accs) == 1:
        return [accs[0][1]]
    order = getattr(node, "torch_input_order", None)
    if order is None:
        return [n for _, n in accs]
    rank = {k: r for r, k in enumerate(order())}
    return [n for _, n in sorted(accs, key=lambda a: rank.get(a[0], len(rank) + a[0]))]


def _run_node(node, grads, targets, results, accumulate, inputs, retain_graph, create_graph, needed):
    """Hooks, capture, the node's backward; returns the gradients for its next_edges."""
    hooks = node._tensor_pre_hooks
    raw = None
    if (hooks and not accumulate and targets is not None and id(node) in targets
            and any(e is not None and id(e[0]) in needed for e in node.next_edges)):
        raw = list(grads)  # as PyTorch: grad() captures a node that still runs before its tensor hooks
    if hooks:
        for nr, hd in hooks.items():
            for fn in list(hd.values()):  # PyTorch calls them with None for an output no gradient reached
                r = fn(grads[nr])
                if r is not None:
                    grads[nr] = _check_hook_result(r, grads[nr], fn)
    if isinstance(node, AccumulateGrad):
        var = node.variable
        g = grads[0]
        if var._hooks:  # as PyTorch's, also with None when no gradient reached the leaf (a Function returned None)
            for fn in list(var._hooks.values()):
                r = fn(g)
                if r is not None:
                    g = _check_hook_result(r, g, fn)
        if g is None:
            return []
        if targets is not None and id(node) in targets:
            for _, i in targets[id(node)]:
                if results is not None and not accumulate:
                    results[i] = g
        if accumulate and g is not None and (targets is None or id(node) in targets):
            if node._pre_hooks:
                for fn in list(node._pre_hooks.values()):
                    r = fn((g,))
                    if r is not None:
                        g = _hook_values(fn, r, (g,))[0]
            if var._rg:  # a leaf detach_()ed after use keeps no gradient (PyTorch's AccumulateGrad)
                _accumulate(var, g, create_graph)
            if node._post_hooks:
                for fn in list(node._post_hooks.values()):
                    fn((), (g,))
        return []
    if node._retains:
        for nr, ref in node._retains.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr]
                if t._gval is None:
                    t._gval = g if create_graph else Tensor._make(g._d)
                else:
                    t._gval = t._gval + g
    if targets is not None and id(node) in targets:
        for nr, i in targets[id(node)]:
            if accumulate:
                if isinstance(inputs[i], GradientEdge):
                    continue
                if not inputs[i]._retains_grad:  # retained tensors got their .grad just above
                    _accumulate_nonleaf(inputs[i], grads[nr], create_graph)
            else:
                results[i] = (grads if raw is None else raw)[nr]
        if not any(e is not None and id(e[0]) in needed for e in node.next_edges):
            return [None] * len(node.next_edges)
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = _hook_values(fn, r, grads)
    if all(g is None for g in grads):
        grads_in = [None] * len(node.next_edges)
    else:
        if node_hook is not None:
            node_hook(node, needed)
        if needed is not None and type(node).apply_grads is OpNode.apply_grads:  # (the inputs a gradient must reach)
            grads_in = node.apply_grads(grads, create_graph,
                                        [e is not None and id(e[0]) in needed for e in node.next_edges])
        else:
            grads_in = node.apply_grads(grads, create_graph)
    if node._post_hooks:
        grads_in = _post_hooks(node, grads_in, grads, create_graph)
    if STATE.anomaly:
        anomaly_mode.check_nan(node, grads_in)
    if not retain_graph:
        node.release()
    return grads_in


def _post_hooks(node, grads_in, grads, create_graph):
    """``node``'s hooks ``fn(grad_inputs, grad_outputs)``; returns its input gradients with their replacements.
    A registry op's node gives them PyTorch's ``grad_inputs`` (the inputs its node lists, in its order), not one per
    input of torchish's op."""
    shown = getattr(node, "hook_grads", None)
    view = grads_in if shown is None else shown(grads_in, grads)
    changed = False
    for fn in list(node._post_hooks.values()):
        r = fn(tuple(view), tuple(grads))
        if r is not None:
            view = _hook_values(fn, r, view)
            changed = True
    if shown is None:
        return view
    return node.unhook_grads(view, grads_in, grads, create_graph) if changed else grads_in


def _hook_name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def _hook_values(fn, r, prev):
    """A node hook's replacement for the gradients ``prev``, checked as PyTorch checks it: a tuple of the same
    length whose entries are None (the gradient is dropped) or Tensors of the same type and size, where a
    gradient was."""
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != len(prev):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(r)}, but "
                           f"expected {len(prev)})")
    out = []
    for g, v in zip(prev, r):
        if v is not None and g is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        out.append(None if v is None else _check_hook_result(v, g, fn))
    return out


def _check_hook_result(r, g, fn=None):
    name = _hook_name(fn) if fn is not None else "hook"
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    if g is None:
        return r
    if r._v.dtype != g._v.dtype or (r._coo is None) != (g._coo is None):  # (the type, then the size; a
        # sparse gradient's type is its layout too)
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_type_name(g)} got {_type_name(r)})")
    if r._v.shape != g._v.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")  # (PyTorch's words, no sizes)
    return r


def _type_name(t):
    """A gradient's type as PyTorch's hook check prints it (``torch.FloatTensor``, ``torch.sparse.FloatTensor``)."""
    name = _dtype.cpp_tensor_type_name(t.dtype)
    if t._coo is None:
        return name
    return "torch.sparse." + name[len("torch."):] if name.startswith("torch.") else "Sparse" + name


def _add_to_buffer(buffers, node, nr, g, producer):
    given = g
    shape, dt = node.out_meta[nr]
    if g._v.shape != tuple(shape):
        g = _fit_grad(g, shape, producer, nr)
    if g._v.dtype != dt:
        from ..ops import convert
        g = convert.to_dtype(g, _dtype.from_np(dt))
    buf = buffers.get(id(node))
    if buf is None:
        buf = [None] * len(node.out_meta)
        buffers[id(node)] = buf
    old = buf[nr]
    if node.sees_producers:  # (a gradient summed down or cast here is a new tensor: no producer's layout)
        node.__dict__.setdefault("producers", []).append(producer if g is given else None)
    # (PyTorch's InputBuffer adds a sparse gradient as new + old: its entries come first in the merge)
    buf[nr] = g if old is None else old + g if old._coo is None else g + old


def _fit_grad(g, shape, producer, nr):
    """PyTorch's validate_outputs: a gradient that broadcasts to the expected shape is summed down to it."""
    import numpy as np
    from ..ops import reduce as _reduce
    try:
        full = np.broadcast_shapes(tuple(shape), g._v.shape)
    except ValueError:
        full = None
    if full is None or tuple(full) != g._v.shape:
        name = producer.name() if producer is not None else "backward"
        raise RuntimeError(f"Function {name} returned an invalid gradient at index {nr} - got {list(g.shape)} but "
                           f"expected shape compatible with {list(shape)}")
    return _reduce.sum_to_size(g, tuple(shape))


def _accumulate(var, g, create_graph):
    want = var.__dict__.get("_grad_dtype", False)
    if want and g.dtype != want:  # (a grad_dtype set on the leaf: AccumulateGrad casts to it)
        g = g.to(want)
    old = var._gval
    if old is None:
        var._gval = g if create_graph else lowering.new_leaf_grad(var, _fresh(g))
    elif old._coo is not None or g._coo is not None:
        _accumulate_sparse(var, old, g, create_graph)
    elif create_graph or old._rg:
        var._gval = old + g
    else:
        old.add_(g)
    if var._post_acc_hooks:
        for fn in list(var._post_acc_hooks.values()):
            if fn(var) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _fresh(g):
    """A new tensor holding ``g``'s value (and a sparse gradient's entries, as PyTorch's shallow copy of one)."""
    t = Tensor._make(g._d)
    if g._coo is not None:  # (PyTorch's _sparse_coo_tensor_unsafe of its indices and values: coalesced only if
        coo = g._coo.detach()  # nnz < 2, whatever the flag was; a clone where its values are not contiguous,
        if coo.contiguous:  # which keeps the flag: torch.sparse.sum(s)'s gradient of s)
            coo.coalesced = coo.indices.shape[1] < 2
        coo.contiguous = True
        t._coo = coo
        t.__class__ = type(g)
    return t


def _accumulate_sparse(var, old, g, create_graph):
    """PyTorch's AccumulateGrad where a sparse gradient (``sparse=True`` embeddings) meets the one kept: sparse +
    sparse stays sparse (``old += g``: torchish.sparse's merge of the two entry lists), in place unless
    ``create_graph``; a dense one with a sparse one gives a dense ``.grad`` (a new tensor where the kept one was
    sparse, as PyTorch's ``new_grad + variable_grad``)."""
    if old._coo is None:  # dense += sparse
        if create_graph or old._rg:
            var._gval = old + g
        else:
            old.add_(g)
    elif g._coo is None or create_graph or old._rg:
        var._gval = g + old if g._coo is None else old + g
    else:
        total = old + g
        old._set_value(total._d)
        old._coo = total._coo


def _accumulate_nonleaf(t, g, create_graph):
    if g is None:
        return
    if t._gval is None:
        t._gval = g if create_graph else Tensor._make(g._d)
    else:
        t._gval = t._gval + g


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor w.r.t. the graph leaves into their ``.grad``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = _tensor_backward
