"""The grad_fn of a compiled forward's outputs (a compiled function called with inputs that require grad and
differentiated outside it): the compiled pullback as one autograd node; and that of outputs whose graph the
function used up itself (the loss of a training step that ran ``backward()``)."""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
from jax.extend.core import jaxpr_as_fun

from .._tensor import Tensor
from ..autograd.graph import _ERR_FREED, Node, node_class, saved_origin
from ..ops.opnode import _conj
from ..ops.registry import OpDef, apply


class CompiledBackward(Node):
    """grad_fn of the outputs of a compiled forward: runs the compiled pullback. Subclasses change ``_pull``
    (how the saved pullback is called) and the create_graph refusal."""

    __slots__ = ()
    _create_graph_error = ("torchish.compile: create_graph=True through a compiled forward is not supported; "
                           "call backward(create_graph=True) inside the compiled function instead")

    def release_saved(self):
        self.pull = None

    def _pull(self, gs):
        return self.pullback(self.pull, gs)

    def check_outputs_alive(self, grads):
        """As PyTorch's engine, refuse a backward that passes through a traced node whose saved tensors an earlier
        backward (without ``retain_graph``) freed; outputs whose graphs share no such node stay usable (``saving``:
        per output, the traced nodes that save tensors)."""
        self.check_alive()
        saving = getattr(self, "saving", None)
        if saving is not None:
            self.live = [j for j, g in enumerate(grads) if g is not None]
            if any(saving[j] & self.freed for j in self.live):
                raise RuntimeError(_ERR_FREED)
            for j in self.live:  # a traced node's saved tensor, written in place by the function after it was saved
                if self.stale[j] is not None:
                    raise RuntimeError(self.stale[j])
            for j in self.live:  # an output the traced graph saved, modified in place since
                for counter, version, what in self.saved_outputs[j]:
                    if counter.value != version:
                        if isinstance(what, weakref.ref):  # a saved input: named with the grad_fn it has now
                            t = what()
                            what = "" if t is None else \
                                f"{t.type()} {list(t.shape)}]{saved_origin(t._gfn, t._out_nr)}"
                        raise RuntimeError(
                            "one of the variables needed for gradient computation has been modified by an inplace "
                            f"operation: [{what} is at version {counter.value}; expected version {version} instead. "
                            "Hint: enable anomaly detection to find the operation that failed to compute its "
                            "gradient, with torchish.autograd.set_detect_anomaly(True, check_nan=False).")

    def release(self):
        saving = getattr(self, "saving", None)
        if saving is None:
            return super().release()
        for j in self.live:
            self.freed = self.freed | saving[j]
        if all(s and s <= self.freed for s in saving):  # no output can use the pullback any more: free it
            super().release()

    def apply_grads(self, grads, create_graph):
        self.check_outputs_alive(grads)
        if create_graph:
            return self._grads_with_graph(grads)
        # (the pullback is JAX's: complex gradients are conjugated on the way in and out, see opnode._conj)
        gs = [_conj(g._d) if g is not None else jnp.zeros(shape, dt) for g, (shape, dt) in zip(grads, self.out_meta)]
        da, ds = self._pull(gs)
        da, ds = list(map(_conj, da)), list(map(_conj, ds))
        reach = getattr(self, "reach", None)  # per output, the inputs (positions in next_edges) its graph reaches
        if reach is None:
            return [Tensor._make(g) for g in da + ds]
        live = set()  # the inputs the outputs that got a gradient reach: the others keep .grad None, as in PyTorch
        for g, r in zip(grads, reach):
            if g is not None:
                live.update(r)
        return [Tensor._make(g) if p in live else None for p, g in enumerate(da + ds)]


    def _grads_with_graph(self, grads):
        """``create_graph=True``: the gradients as ops recorded on the call's arguments, state and the incoming
        gradients (one op whose forward is the program's VJP, from the traced forward's jaxpr), so a second
        backward differentiates them as PyTorch's engine differentiates the eager graph's backward."""
        second = getattr(self, "second", None)
        if second is None:
            raise RuntimeError(self._create_graph_error)
        op, tensors, scalar_vals = second
        gs = [g if g is not None else Tensor._make(jnp.zeros(shape, dt))
              for g, (shape, dt) in zip(grads, self.out_meta)]
        out = apply(op, tuple(tensors) + tuple(scalar_vals) + tuple(gs))
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        reach = getattr(self, "reach", None)
        if reach is None:
            return out
        live = set()
        for g, r in zip(grads, reach):
            if g is not None:
                live.update(r)
        return [g if p in live else None for p, g in enumerate(out)]


def second_order_op(closed, n_written, n_arg, n_state, d_arg, d_state, out_rg):
    """The op a compiled forward's backward records under ``create_graph=True``: from (arguments, state,
    hyper-parameters, output gradients) to the gradients of the differentiable inputs, the VJP of the traced
    forward (``closed``: its jaxpr over the flattened (arguments, state, scalars)), differentiable again by JAX."""
    forward = jaxpr_as_fun(closed)
    n_g = len(out_rg)

    def grads(*vals):
        arg_vals, state_vals = list(vals[:n_arg]), list(vals[n_arg:n_arg + n_state])
        scalar_vals, gs = list(vals[n_arg + n_state:len(vals) - n_g]), vals[len(vals) - n_g:]

        def f(da, ds):
            av, sv = with_inputs(arg_vals, state_vals, d_arg, d_state, da, ds)
            outs = forward(*jax.tree_util.tree_leaves((av, sv, scalar_vals)))
            return [outs[n_written + j] for j in out_rg]
        _, pull = jax.vjp(f, [arg_vals[k] for k in d_arg], [state_vals[i] for i in d_state])
        da, ds = pull([_conj(g) for g in gs])  # (JAX's convention: see opnode._conj)
        return tuple(_conj(g) for g in list(da) + list(ds))
    return OpDef("compiled_function_backward", grads, grad_name="CompiledFunctionBackwardBackward")


_COMPILED_NODE = node_class(CompiledBackward, "CompiledFunctionBackward")


class ArgumentNode(Node):
    """Inside a trace, the grad_fn of an argument that is not a leaf outside (the output of an earlier layer): it
    stands for the argument's graph outside the call, so the argument is no leaf inside either (an in-place op
    on it is allowed, as in PyTorch); the walk of :func:`reached_inputs` stops at it."""

    __slots__ = ()

    def apply_grads(self, grads, create_graph):
        raise RuntimeError("torchish.compile: an argument's graph outside a trace cannot run inside it")


def with_inputs(arg_vals, state_vals, d_arg, d_state, da, ds):
    """Copies of a program's argument and state values with those at positions ``d_arg``/``d_state`` (the
    differentiated ones) replaced by ``da``/``ds``: the function a compiled forward's ``jax.vjp`` is taken of."""
    av, sv = list(arg_vals), list(state_vals)
    for k, v in zip(d_arg, da):
        av[k] = v
    for i, v in zip(d_state, ds):
        sv[i] = v
    return av, sv


def argument_wrapper(tensor, value, rg):
    """The Tensor that stands for the argument ``tensor`` inside a trace, holding ``value``."""
    tt = Tensor._make(value, rg)
    if "_grad_dtype" in tensor.__dict__:  # (the dtype its .grad is cast to)
        tt.__dict__["_grad_dtype"] = tensor.__dict__["_grad_dtype"]
    if rg and tensor._gfn is not None:
        node = node_class(ArgumentNode, tensor._gfn.name())((), ((value.shape, value.dtype),), saves=False)
        tt._gfn, tt._out_nr = node, 0
        tt._arg_node = node
    return tt


def _engine_only(node):
    """What about a node of the traced graph the program's ``jax.vjp`` cannot reproduce, or None: a hook on it or
    on a tensor it made (``register_hook``, ``retain_grad``, a module's backward hooks) or a custom
    ``autograd.Function``, whose ``backward`` replaces the derivative of its forward. PyTorch's engine runs them
    in the backward of the outputs."""
    if node._pre_hooks or node._post_hooks or node._tensor_pre_hooks or node._retains:
        return "registers a gradient hook (register_hook, retain_grad or a module's backward hook)"
    if getattr(node, "fn_cls", None) is not None and not getattr(node, "_routed", False):
        return f"applies the custom autograd.Function {node.fn_cls.__name__}"
    return None


def hook_marks(t):
    """What of ``t``'s gradient hooks a trace could add to: the keys of its hooks and post-accumulate hooks, and
    whether it retains its gradient."""
    return tuple(t._hooks or ()), tuple(t._post_acc_hooks or ()), t._retains_grad


def drop_added_hooks(t, marks):
    """Remove the hooks a trace registered on the state tensor ``t`` (``marks``: :func:`hook_marks` before it), in
    place: handles made before the trace keep working."""
    keys, post_keys, retains = marks
    for hooks, before in ((t._hooks, keys), (t._post_acc_hooks, post_keys)):
        for k in [k for k in (hooks or ()) if k not in before]:
            del hooks[k]
    t._retains_grad = retains


def reached_inputs(out_leaves, state, saved, arg_tensors, first_seq):
    """Which arguments and state tensors each traced output's graph reaches: only those get a gradient from a
    compiled forward's backward, as PyTorch's engine leaves the ``.grad`` of an input that requires grad but feeds
    no output that gets a gradient through a differentiable path (a float mask, a detached input, an output left
    out of the loss) None. ``saved``: each state tensor's ``(value, grad, grad_fn, ...)`` before the call; nodes
    older than ``first_seq`` were made before the trace (the boundary: not walked through).

    Returns ``(per_leaf, engine_only)``: per output leaf, None where it is no tensor with a graph, else the set of
    ``("A", argument index)`` and ``("S", state index)`` it reaches, the set of the traced nodes it passes
    through that save tensors for backward (numbered in the order first met), the ids of the version counters
    of the tensors those nodes saved, and PyTorch's error for a backward through it where the function wrote one
    of them in place after it was saved (else None: see :func:`_stale`); and why the graph needs PyTorch's engine
    rather than the program's differentiation (see :func:`_engine_only`; None when it does not)."""
    boundary = {}
    for i, (t, before) in enumerate(zip(state, saved)):
        if t._rg or before[4]:
            node = before[2]
            if node is None:
                acc = t._acc() if t._acc is not None else None
                node = acc
            if node is not None:
                boundary[id(node)] = ("S", i)
    engine_only = None
    for k, tt in enumerate(arg_tensors):
        acc = tt._acc() if tt._acc is not None else None
        if acc is not None:
            boundary[id(acc)] = ("A", k)
        node = getattr(tt, "_arg_node", None)
        if node is not None:
            boundary[id(node)] = ("A", k)
        if tt._hooks or tt._post_acc_hooks or node is not None and _engine_only(node):
            engine_only = "registers a gradient hook on an argument"  # (on the argument itself, inside)
    per_leaf, walked = [], {}
    for x in out_leaves:
        if not (isinstance(x, Tensor) and x._rg and x._gfn is not None):
            per_leaf.append(None)
            continue
        hit, saving, counters, seen, stack = set(), set(), set(), set(), [x._gfn]
        stale = None
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            where = boundary.get(id(node))
            if where is not None:
                hit.add(where)
                continue
            if getattr(node, "seq", first_seq) < first_seq:
                continue
            if id(node) not in walked:
                engine_only = engine_only or _engine_only(node)
                walked[id(node)] = (len(walked), node, _stale(node))
            stale = stale or walked[id(node)][2]
            if node._saves:
                saving.add(walked[id(node)][0])
            counters.update(id(v[0]) for v in getattr(node, "versions", ()))  # (the saved tensors' counters)
            stack.extend(e[0] for e in node.next_edges if e is not None)
        per_leaf.append((hit, frozenset(saving), counters, stale))
    return per_leaf, engine_only


def _stale(node):
    """PyTorch's error for a backward through the traced ``node`` when the traced function wrote a tensor the node
    saved in place after saving it (``relu(x)``, then an in-place dropout of its output), else None. The
    program's VJP would silently use the value as saved; PyTorch's engine refuses the backward, and so does the
    compiled function's."""
    check = getattr(type(node), "_check_versions", None)
    if check is None:
        return None
    try:
        check(node)
    except RuntimeError as e:
        return str(e)
    return None


def _link_outputs(entry, pull, arg_tensors, tensors_out, scalar_vals, arg_vals, state_vals):
    """Give the differentiable outputs of a compiled call the node that runs its pullback. ``arg_vals`` and
    ``state_vals``: the values the call began with (not donated when outputs are differentiable)."""
    d_arg, d_state, out_rg = entry.diff
    inputs = [arg_tensors[k] for k in d_arg] + [entry.state[i] for i in d_state]
    outs = [tensors_out[j] for j in out_rg]
    node = _COMPILED_NODE(tuple(t._edge() for t in inputs), tuple((o._v.shape, o._v.dtype) for o in outs))
    node.pull = pull
    node.reach, node.saving, node.freed, node.live = entry.diff_reach, entry.diff_saving, frozenset(), []
    node.stale = entry.diff_stale
    node.saved_outputs = [[(tensors_out[k]._vc, tensors_out[k]._vc.value, what) for k, what in saved]
                          for saved in entry.diff_saved]
    held = {"A": arg_tensors, "S": entry.state}
    for j, saved in enumerate(entry.diff_saved_inputs):
        node.saved_outputs[j] += [(t._vc, t._vc.value, weakref.ref(t)) for t in (held[w][k] for w, k in saved)]
    node.pullback = entry.pullback
    if entry.second_op is not None:  # (for a backward with create_graph=True: the tensors and values it reads)
        node.second = (entry.second_op, _read_inputs(entry, arg_tensors, arg_vals, state_vals), scalar_vals)
    for i, o in enumerate(outs):
        o._rg, o._gfn, o._out_nr = True, node, i


def _read_inputs(entry, arg_tensors, arg_vals, state_vals):
    """The arguments and state a create_graph backward re-runs the forward on: the Tensors themselves (gradients
    reach them), except those the call wrote that take no gradient (the random generator's state, a buffer updated
    in place, an argument written in place), which stand as the values the call read: with their values after the
    call, the re-run forward would draw other random numbers than the call did."""
    written_args, written_state = set(entry.info["arg_written"]), set(entry.info["written"])
    args = [Tensor._make(v) if k in written_args and not t._rg else t
            for k, (t, v) in enumerate(zip(arg_tensors, arg_vals))]
    state = [Tensor._make(v) if i in written_state and not t._rg else t
             for i, (t, v) in enumerate(zip(entry.state, state_vals))]
    return args + state


class SpentBackward(Node):
    """grad_fn of an output whose graph the compiled function differentiated itself (the loss a training step
    returns after ``loss.backward()``): it requires grad and has a ``grad_fn`` of its op's name, as in PyTorch,
    whose graph has freed its saved values by then, so a backward through it raises PyTorch's error."""

    __slots__ = ()

    def apply_grads(self, grads, create_graph):
        raise RuntimeError(_ERR_FREED)


def _spent_outputs(out_spec, tensors_out):
    """Give the outputs that had a graph in the trace, and are not linked to the compiled pullback, a spent one."""
    names = [rg for kind, rg in out_spec if kind == "T"]
    for name, o in zip(names, tensors_out):
        if name and o._gfn is None:
            o._rg, o._gfn = True, node_class(SpentBackward, name)((), ((o._v.shape, o._v.dtype),))
