"""``torchish.utils.checkpoint``: activation checkpointing — trade compute for memory.

A checkpointed ``function`` keeps none of its intermediate activations for backward: backward runs it again
(with the random state of the forward, so dropout masks match) and backpropagates through that recomputation.
Outputs and gradients (of the inputs and of parameters the function uses) are those of the plain call.

How each path does it:

* eager, ``use_reentrant=True``: PyTorch's ``CheckpointFunction`` — an ``autograd.Function`` whose forward runs
  under ``no_grad`` and whose backward recomputes and calls ``autograd.backward`` inside the outer backward
  (parameters get their ``.grad`` from that inner backward; at least one input should require grad).
* eager, ``use_reentrant=False``: the forward runs recording as usual, then the recorded nodes inside the function
  are dropped: the outputs hang off one ``CheckpointBackward`` node whose edges are where the function's graph
  left it (inputs, parameters, earlier results). Its backward recomputes, routes the recomputed graph's outer
  edges to those of the node and runs ``autograd.grad`` over them — so ``autograd.grad``, ``inputs=``, hooks and
  ``create_graph=True`` behave as without checkpointing.
* inside ``torchish.compile`` (or any JAX trace), either variant: the function is traced to a pure JAX function
  of its tensor inputs and of the traced values it reads (parameters, RNG key), wrapped in ``jax.checkpoint`` and
  differentiated with ``jax.vjp``: XLA rematerialises the block in the backward pass.

Beyond PyTorch (keywords taken out of ``**kwargs``): ``policy=`` a ``jax.checkpoint_policies`` policy for the
traced path (which intermediates XLA may keep), and ``offload=True``, shorthand for
``jax.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")``: the matmul results are
saved to host memory instead of recomputed where the backend has host memory spaces; on CPU XLA accepts the
policy and the transfers are no-ops. Both are ignored in eager mode, which always recomputes everything.

Example::

    >>> from torchish.utils.checkpoint import checkpoint
    >>> block = torchish.nn.Sequential(torchish.nn.Linear(4, 4), torchish.nn.GELU())
    >>> x = torchish.randn(2, 4, requires_grad=True)
    >>> y = checkpoint(block, x, use_reentrant=False)
    >>> y.sum().backward()
"""
from __future__ import annotations

import contextlib
import warnings

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import Tensor
from ..autograd import engine, saved_hooks as _saved_hooks
from ..autograd.function import Function
from ..autograd.grad_mode import STATE, enable_grad, no_grad
from ..autograd.graph import AccumulateGrad, Node, _SEQ, saved_origin
from ..ops import tracing
from ._checkpoint_traced import checkpoint_traced

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn", "set_checkpoint_debug_enabled",
           "set_checkpoint_early_stop"]

_DEBUG = [None]  # set_checkpoint_debug_enabled's override


class CheckpointError(RuntimeError):
    """The recomputation did not match the original forward (PyTorch's ``CheckpointError``)."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Override every checkpoint's ``debug`` flag inside the block (None: use each call's own)."""
    prev, _DEBUG[0] = _DEBUG[0], enabled
    try:
        yield
    finally:
        _DEBUG[0] = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Accepted for PyTorch compatibility: torchish's recomputation always runs the whole function."""
    yield


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


@contextlib.contextmanager
def _rng_at(state, enabled):
    """Run the block from the default generator's ``state`` and put the current stream back afterwards."""
    if not enabled:
        yield
        return
    gen = _random.default_generator
    current = (gen._state._d, gen._seed)
    gen._set_state(state[0])
    gen._seed = state[1]
    try:
        yield
    finally:
        gen._set_state(current[0])
        gen._seed = current[1]


def _rng_state():
    gen = _random.default_generator
    return gen._state._d, gen._seed


def _is_tensor(x):
    return isinstance(x, Tensor)


# ----------------------------------------------------------------------------------------------------------------
# use_reentrant=True: PyTorch's CheckpointFunction


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng = _rng_state() if preserve_rng_state else None
        ctx.inputs = [None if _is_tensor(a) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.save_for_backward(*[a for a in args if _is_tensor(a)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not engine._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
                ".backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_at(ctx.rng, ctx.preserve_rng_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if _is_tensor(outputs):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if _is_tensor(o) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if _is_tensor(x) else None for x in detached)


# ----------------------------------------------------------------------------------------------------------------
# use_reentrant=False in eager mode: one node standing for the function's graph, recomputed in backward


class _Boundary(Node):
    """Stands, in a recomputed graph, for an edge leaving the function: gradients stop here (``autograd.grad``
    targets) and, for a graph built with ``create_graph=True``, pass on to the original edge."""

    __slots__ = ()

    def __init__(self, edge):
        super().__init__((edge,), (edge[0].out_meta[edge[1]],), saves=False)

    def apply_grads(self, grads, create_graph):
        return list(grads)


def _is_outer(node, start):
    return isinstance(node, AccumulateGrad) or node.seq < start


def _inner_nodes(tensors, start):
    """Nodes created since ``start`` reachable from ``tensors`` (iterative), in discovery order."""
    stack = [t._gfn for t in tensors if t._gfn is not None and not _is_outer(t._gfn, start)]
    seen = {id(n) for n in stack}
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for e in node.next_edges:
            if e is not None and id(e[0]) not in seen and not _is_outer(e[0], start):
                seen.add(id(e[0]))
                stack.append(e[0])
    return order


def _outer_edges(nodes, start):
    edges, keys = [], set()
    for node in nodes:
        for e in node.next_edges:
            if e is not None and _is_outer(e[0], start) and (id(e[0]), e[1]) not in keys:
                keys.add((id(e[0]), e[1]))
                edges.append(e)
    return edges


class CheckpointBackward(Node):
    """grad_fn of a non-reentrant checkpoint's outputs: recomputes the function and differentiates through it."""

    __slots__ = ()

    def release_saved(self):
        self.fn = self.args = self.kwargs = self.packed_args = self.versions = self.arg_edges = None

    def apply_grads(self, grads, create_graph):
        self.check_alive()
        for t, v in self.versions or ():  # the saved inputs, as PyTorch's SavedVariable checks them
            if t._vc.value != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}]{saved_origin(t._gfn, t._out_nr)} is at "
                    f"version {t._vc.value}; expected version {v} instead. Hint: enable anomaly detection to find "
                    "the operation that failed to compute its gradient, with "
                    "torchish.autograd.set_detect_anomaly(True, check_nan=False).")
        for p in self.packed_args or ():  # PyTorch unpacks the saved inputs to recompute (each backward)
            p.unpack()
        # an input written in place since the forward (by the function itself, or after it): the recomputation
        # reaches it through its grad_fn now, and its gradient goes where it went at the forward
        moved = [((a._gfn, a._out_nr), edge) for a, edge in self.arg_edges or ()
                 if a._gfn is not None and (a._gfn is not edge[0] or a._out_nr != edge[1])]
        start = next(_SEQ)
        with _rng_at(self.rng, self.rng is not None), enable_grad(), self.recompute_ctx, _no_saved_hooks():
            out = self.fn(*self.args, **self.kwargs)
        leaves = jax.tree_util.tree_leaves(out, is_leaf=_is_tensor)
        outs = [leaves[j] if j < len(leaves) else None for j in self.out_idx]
        self._check_recomputed(leaves, outs)
        position = {(id(n), nr): i for i, (n, nr) in enumerate(self.next_edges)}
        for (fn, nr), (fn0, nr0) in moved:
            i = position.get((id(fn0), nr0))
            if i is not None:
                position.setdefault((id(fn), nr), i)
        boundary = [None] * len(self.next_edges)
        for node in _inner_nodes(outs, start):
            new = []
            for e in node.next_edges:
                i = position.get((id(e[0]), e[1])) if e is not None and _is_outer(e[0], start) else None
                if i is not None:
                    if boundary[i] is None:
                        boundary[i] = _Boundary(e)
                    e = (boundary[i], 0)
                new.append(e)
            node.next_edges = tuple(new)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o._rg]
        targets = [(i, Tensor._make(jnp.zeros(()), True, b, 0)) for i, b in enumerate(boundary) if b is not None]
        res = [None] * len(self.next_edges)
        if pairs and targets:
            got = engine.grad([o for o, _ in pairs], [t for _, t in targets], [g for _, g in pairs],
                              create_graph=create_graph, allow_unused=True)
            for (i, _), g in zip(targets, got):
                res[i] = g
        return res

    def _check_recomputed(self, leaves, outs):
        if not self.check:
            return
        now = tuple((tuple(o.shape), o.dtype) if _is_tensor(o) else None for o in outs)
        if len(leaves) != self.n_leaves or now != self.meta:
            msg = ("torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                   "than during the forward pass.\n")
            for k, (a, b) in enumerate(zip(self.meta, now)):
                if a != b:
                    msg += f"output {k}:\nsaved metadata: {a}\nrecomputed metadata: {b}\n"
            if self.debug:
                msg += f"\nforward ops: {', '.join(self.fwd_ops)}"
            raise CheckpointError(msg)


@contextlib.contextmanager
def _no_saved_hooks():
    """The function's own saves are not the user's to pack: PyTorch's checkpoint installs its own (innermost)
    saved-tensor hooks around the forward and the recomputation."""
    prev = STATE.saved_hooks
    STATE.saved_hooks = ()
    try:
        yield
    finally:
        STATE.saved_hooks = prev


def _checkpoint_eager(function, args, kwargs, preserve, context_fn, check, debug):
    fwd_ctx, rec_ctx = context_fn()
    rng = _rng_state() if preserve else None
    if not STATE.grad_enabled:
        return function(*args, **kwargs)
    # what open saved_tensors_hooks see: the positional tensor inputs, packed once here (PyTorch saves them for
    # the recomputation), unpacked at each backward; the function's intermediates are never packed
    hooks = _saved_hooks.current() if _saved_hooks.ACTIVE else None
    packed = [_saved_hooks.pack(hooks, a) for a in args if _is_tensor(a)] if hooks is not None else None
    # PyTorch saves the tensor inputs before running the function (checked at backward if it saved anything) and
    # keeps the forward's graph: where each input's gradient went then is where it goes, written in place or not
    inputs = [a for a in args if _is_tensor(a)]
    versions = tuple((a, a._vc.value) for a in inputs)
    arg_edges = [(a, (a._gfn, a._out_nr)) for a in inputs if a._gfn is not None]
    start = next(_SEQ)
    with fwd_ctx, _no_saved_hooks():
        out = function(*args, **kwargs)
    leaves = jax.tree_util.tree_leaves(out, is_leaf=_is_tensor)
    out_idx, outs, ids = [], [], set()
    for j, t in enumerate(leaves):
        if _is_tensor(t) and t._gfn is not None and not _is_outer(t._gfn, start) and id(t) not in ids:
            ids.add(id(t))
            out_idx.append(j)
            outs.append(t)
    if not outs:
        return out
    inner = _inner_nodes(outs, start)
    node = CheckpointBackward(tuple(_outer_edges(inner, start)), tuple((o._v.shape, o._v.dtype) for o in outs))
    node.fn, node.args, node.kwargs, node.rng, node.recompute_ctx = function, args, kwargs, rng, rec_ctx
    node.packed_args = packed
    saved_any = any(getattr(n, "versions", None) for n in inner)
    node.versions = None if packed is not None or not saved_any else versions
    node.arg_edges = arg_edges
    node.out_idx, node.n_leaves, node.check, node.debug = out_idx, len(leaves), check, debug
    node.meta = tuple((tuple(o.shape), o.dtype) for o in outs)
    node.fwd_ops = [n.name() for n in inner] if debug else None
    for k, o in enumerate(outs):
        o._gfn, o._out_nr = node, k
    return out


# ----------------------------------------------------------------------------------------------------------------
# the public functions


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its activations; recompute them in backward.

    Args:
        function: what to run (a Module or any callable on tensors).
        use_reentrant: ``True`` for PyTorch's reentrant variant, ``False`` (recommended) for the one built on the
            autograd graph. Not passing it warns, as PyTorch 2.13 does, and means ``True``.
        context_fn: returns two context managers, entered around the forward and around the recomputation
            (``use_reentrant=False`` only).
        determinism_check: ``"default"`` checks that the recomputed outputs have the forward's shapes and dtypes
            (raising :class:`CheckpointError`); ``"none"`` skips it.
        debug: add the ops of the forward to a determinism error message.
        early_stop: accepted; the recomputation always runs the whole function.
        preserve_rng_state (keyword): recompute with the forward's random state (default True).
        policy (keyword, torchish extension): a ``jax.checkpoint_policies`` policy for the traced path.
        offload (keyword, torchish extension): ``True`` saves matmul results to host memory on the traced path.

    Returns:
        What ``function`` returns.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    policy = kwargs.pop("policy", None)
    if kwargs.pop("offload", False):
        policy = jax.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    else:
        debug = _DEBUG[0] if _DEBUG[0] is not None else debug
        if debug and context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        if determinism_check not in ("default", "none"):
            raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if tracing.active() and STATE.grad_enabled and not getattr(STATE, "functional_trace", 0):
        if use_reentrant and not any(_is_tensor(a) and a._rg for a in args):
            check_backward_validity(args)
            with no_grad():
                return function(*args)
        return checkpoint_traced(function, args, kwargs, policy)
    if use_reentrant:
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_eager(function, args, kwargs, preserve, context_fn, determinism_check == "default", debug)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of callables) in ``segments`` chunks, checkpointing all
    but the last chunk.

    Example::

        >>> model = torchish.nn.Sequential(*[torchish.nn.Linear(4, 4) for _ in range(4)])
        >>> y = checkpoint_sequential(model, 2, torchish.randn(3, 4), use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
