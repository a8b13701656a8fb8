"""The state a compiled program reads and writes, as the executable takes it: donation of the written buffers,
state tensors that share one array, hyper-parameters as device scalars, the device the program runs on, and the
guarded flags."""
from __future__ import annotations

import collections
import itertools
import operator
import sys

import jax
import jax.numpy as jnp
from jax.core import eval_jaxpr

from .._tensor import Tensor
from ..ops import nesting


# written state arrays smaller than this are not donated (benchmarks/compile_overhead.py varies it; donating all is
# the fastest on the GPU and CPU measured)
DONATE_MIN_BYTES = 0


def _lower_donating(traced, written, arg_vals, state_vals, scalar_vals, drop=0):
    """Lower the traced step with the buffers of the state it writes donated, so XLA updates parameters,
    gradients and optimizer state in place instead of holding old and new copies. Returns the lowering and the
    ``(donated, kept)`` split of the state indices (None when nothing is written). The step is replayed from its
    jaxpr: the user's Python is not run a second time. ``drop``: how many of the step's last outputs (the value
    checks' results, which ``compile.checks`` computes before the call) the program leaves out, each output
    costing time at every call; the program returns them where nothing is donated."""
    donated = [i for i in written if getattr(state_vals[i], "nbytes", 0) >= DONATE_MIN_BYTES]
    if not donated:
        return traced.lower(), None
    donated_set = set(donated)
    kept = [i for i in range(len(state_vals)) if i not in donated_set]
    closed, out_tree, n = traced.jaxpr, traced.out_tree, len(state_vals)

    def replay(arg_vals, donated_vals, kept_vals, scalar_vals):
        sv = [None] * n
        for i, v in zip(donated, donated_vals):
            sv[i] = v
        for i, v in zip(kept, kept_vals):
            sv[i] = v
        out = eval_jaxpr(closed.jaxpr, closed.consts, *jax.tree.leaves((arg_vals, sv, scalar_vals)))
        written, outs, *rest = jax.tree.unflatten(out_tree, out)
        return (written, outs[:len(outs) - drop], *rest)

    lowered = nesting.jit(replay, donate_argnums=(1,)).lower(
        arg_vals, [state_vals[i] for i in donated], [state_vals[i] for i in kept], scalar_vals)
    return lowered, (donated, kept)


# references to a donated state value while `_donated_values` counts them: its Tensor, the state-values list
# (`entry.seen`), the list of donated values and getrefcount's argument. An input shared by k state tensors (see
# `_share_classes`) has k Tensors and k places in `entry.seen`.
_OWN_REFS = itertools.repeat(4)


def _own_refs(sizes):
    return [2 * k + 2 for k in sizes]


def _donated_values(state_vals, donated, own_refs=_OWN_REFS):
    """The donated state values, each replaced by a copy where something besides its Tensor(s) holds the same
    array (a ``detach()``ed or ``clone()``d alias, a user's ``.jax()``): donating would delete it under the alias."""
    out = [state_vals[i] for i in donated]
    for k, extra in enumerate(map(operator.gt, map(sys.getrefcount, out), own_refs)):
        if extra:
            out[k] = jnp.array(out[k], copy=True)
    return out


def _share_classes(state, state_vals, split):
    """The state tensors that hold one array (Adam's per-parameter step counts, see ``optim.optimizer._share_steps``)
    become ONE input of the program: ``rep[i]`` is the first index holding ``state_vals[i]`` with the same label in
    ``split`` (tensor id -> label, from :func:`_unstable`)."""
    first = {}
    return [first.setdefault((id(v), split.get(id(t))), i) for i, (t, v) in enumerate(zip(state, state_vals))]


def _unstable(state, rep, written, written_out, split):
    """Labels for the tensors of each input class that a run would split (some members written and others not, or
    written with different values): after one run they no longer hold one array, so the class must not be one
    input. Members keep sharing with those that get the same output; a tensor split before gets an input of its
    own (the trace loop ends)."""
    out_of = dict(zip(written, written_out))
    classes = {}
    for i, r in enumerate(rep):
        classes.setdefault(r, []).append(i)
    labels = {}
    for members in classes.values():
        if len(members) > 1 and len({out_of.get(i, -1) for i in members}) > 1:
            for i in members:
                t = state[i]
                labels[id(t)] = ("own", id(t)) if id(t) in split else out_of.get(i, -1)
    return labels


def _dedupe(values):
    """The distinct objects of ``values`` (by identity) and the index of each value among them."""
    pos, out = {}, []
    index = [pos.setdefault(id(v), len(pos)) for v in values]
    for v, j in zip(values, index):
        if j == len(out):
            out.append(v)
    return out, index


def _as_weak_array(v):
    if type(v) in (float, int):  # weakly typed, as jit would make it from the Python number (device_put of a
        return jax.device_put(v)  # Python number is a plain transfer; jnp.asarray compiled a conversion per dtype)
    if type(v) is tuple:
        return tuple(_as_weak_array(x) for x in v)
    return v


def _scalar_values(entry):
    """The hyper-parameters as the executable takes them. A Python number is turned into a (weakly typed) device
    array once and reused while it keeps its value: passing the number itself costs a host-to-device transfer per
    call. A changed value (a scheduler's new learning rate) is converted afresh — never a retrace."""
    scalars = entry.scalars
    now = [c[k] for c, k in scalars]
    last = entry.scalar_last
    if last is not None and last[0] is scalars and all(map(operator.is_, now, last[1])):  # as the last call's
        return last[2]
    cache = entry.scalar_cache
    out = []
    for j, v in enumerate(now):
        hit = cache.get(j)
        if hit is None or hit[0] != v or type(hit[0]) is not type(v):
            hit = cache[j] = (v, _as_weak_array(v))
        out.append(hit[1])
    entry.scalar_last = (scalars, now, out)
    return out


def _one_device(state, state_vals, arg_vals):
    """A program runs on one device: the devices of the arguments and state (generator keys aside) must agree, as
    PyTorch requires of one op's inputs; generator keys (torchish has one stream for every device) are moved to
    that device. Returns the state values to pass (None when nothing moved)."""
    from .. import _device
    # sharded: a data-parallel program, which XLA places by the shardings
    devs, sharded = _device.committed_devices(list(arg_vals) + [v for t, v in zip(state, state_vals)
                                                                 if not _is_key(t)])
    if len(devs) > 1:
        raise _device.mixed_devices_error(devs, " (torchish.compile: the arguments and the state the function reads)")
    if not devs and not sharded:
        return None
    moved = None
    for i, t in enumerate(state):
        v = state_vals[i]
        if not _is_key(t) or not isinstance(v, jax.Array):
            continue
        if sharded:  # the key goes uncommitted: jit places it with the sharded arrays
            if not v.committed:
                continue
            new = _device.uncommitted(v)
        elif v.devices() != {devs[0]}:
            new = jax.device_put(v, devs[0])
        else:
            continue
        moved = list(state_vals) if moved is None else moved
        moved[i] = t._v = new
    return moved


_REQUIRES_GRAD = operator.attrgetter("_rg")
_VALUE = operator.attrgetter("_v")
_make = Tensor._make
_GRAD = operator.attrgetter("_gval")
_TRAINING = operator.attrgetter("training")
_NONES = itertools.repeat(None)


def _flags(entry):
    """The guarded flags: each state tensor's requires_grad and whether it has a ``.grad``, each module's
    training mode."""
    state = entry.state
    return (tuple(map(_REQUIRES_GRAD, state)), tuple(map(operator.is_, map(_GRAD, state), _NONES)),
            tuple(map(_TRAINING, entry.modules)))


_VERSION = operator.attrgetter("_vc")
_VIEWS = operator.attrgetter("_views")
_DRAIN = collections.deque(maxlen=0).extend  # (runs an iterator in C, keeping nothing)


def _write_back(tensors, values):
    """``_tensor.set_values`` for a compiled call's outputs: no recorder is active and no value is lazy there,
    so only the value, the version counter and live views change. Without live views (the usual case: parameters
    and optimizer state) the values are set by a loop in C."""
    if any(map(_VIEWS, tensors)):
        from .._tensor import _refresh_views
        for t, v in zip(tensors, values):
            t._v = v
            t._vc.value += 1
            if t._views is not None:
                _refresh_views(t._views)
        return
    _DRAIN(map(setattr, tensors, itertools.repeat("_v"), values))
    for vc in map(_VERSION, tensors):
        vc.value += 1


def _is_key(t):
    return getattr(t, "_is_rng_key", False)
