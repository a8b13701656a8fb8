"""The value checks of a compiled program (an index out of range, a class target out of bounds): eager mode reads
the values and raises PyTorch's error at once; a trace has no values, so the checks met while tracing
(``ops.tracing.defer_check``) become a small program of their own, cut out of the traced step. It runs before
each call of the step and reads only what the checks depend on: the call's arguments (token ids, targets), never
the state the step writes, so waiting for its answer does not wait for the previous step's updates; a failed
check raises before the step runs, which then has no effect, as a PyTorch step that raises in its forward has
none."""
from __future__ import annotations

import operator
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import eval_jaxpr
from jax.interpreters import partial_eval as pe

from ..ops import nesting
from . import host_eval

HOST_MAX = 1 << 15  # elements read to the host for a check (larger inputs: numpy is slower than the program)


def program(traced, info, flat, written):
    """``(failed, details, inputs, kept, host)`` for the checks in ``info["checks"]``, whose values (whether any
    element is bad, the first bad value) the traced step returns as the last of its outputs: ``failed(*values)``
    whether any kept check fails, ``details(*values)`` their values; ``host``: the same two as numpy functions of a
    list of values (:func:`host_eval.build`), None where the checks have primitives numpy cannot match exactly.
    ``flat``: the values the step was traced with (arguments, state, hyper-parameters); ``written``: the positions
    among them of the state the step writes; ``inputs``: the positions of those the checks read. A check that reads written state (an index computed from the model's
    output: ``argmax``, ``topk``, valid by construction) is not kept: it would compute the model again and wait
    for the previous step. None where no check is kept, or the checks cannot be cut out (the step has effects
    that would run twice)."""
    closed = traced.jaxpr
    jaxpr = closed.jaxpr
    n = len(info["checks"])
    if len(jaxpr.invars) != len(flat):  # (a hyper-parameter that is not one value: the checks are skipped)
        return None
    end = info["n_written"] + info["n_outputs"]
    outs = jaxpr.outvars[end - 2 * n:end]
    kept = []
    for i in range(n):
        one, used = pe.dce_jaxpr(jaxpr.replace(outvars=[outs[i], outs[n + i]]), True)
        if not one.effects and not any(used[k] for k in written):
            kept.append(i)
    if not kept:
        return None
    m = len(kept)
    jaxpr, used = pe.dce_jaxpr(jaxpr.replace(outvars=[outs[i] for i in kept] + [outs[n + i] for i in kept]), True)
    inputs = [k for k, u in enumerate(used) if u]  # (the jaxpr takes those only now)
    consts = closed.consts

    def failed(*vals):
        return jnp.any(jnp.stack(eval_jaxpr(jaxpr, consts, *vals)[:m]))
    # (jitted functions, not lowered executables: a jitted call dispatches several times faster, and this one runs
    # before every step)
    try:  # (numpy evaluators of the flags alone, and of the flags and first bad values)
        flags, used = pe.dce_jaxpr(jaxpr.replace(outvars=jaxpr.outvars[:m]), [True] * m, instantiate=True)
        host = (host_eval.build(flags, consts), used, host_eval.build(jaxpr, consts))
    except host_eval.Unsupported:
        host = None
    evaluate = nesting.jit(lambda *vals: eval_jaxpr(jaxpr, consts, *vals))
    return nesting.jit(failed), evaluate, inputs, kept, host


def _readable(vals):
    """Whether numpy can evaluate checks on these inputs cheaply: arrays of a few thousand elements, numbers."""
    n = 0
    for v in vals:
        if isinstance(v, jax.Array):
            if not v.is_fully_addressable:  # (another host holds part of it: the program reads it there)
                return False
            n += v.size
        elif isinstance(v, (np.ndarray, np.generic)):
            n += v.size
        elif not isinstance(v, (int, float, bool)):
            return False
    return n <= HOST_MAX


def _on_host(host, vals):
    """The checks' values evaluated by numpy (``()`` where none fails); None where the compiled program must
    decide."""
    if host is None or not _readable(vals):
        return None
    try:
        flags, used, details = host
        if not any(flags([v for v, u in zip(vals, used) if u])):
            return ()
        return details(vals)
    except host_eval.Unsupported:
        return None


def run(entry, arg_vals, state_vals, scalar_vals):
    """Raise PyTorch's error for the first failed check of ``entry``'s program on these values."""
    failed, details, inputs, kept, host = entry.check
    uniq, na = entry.check_uniq, len(arg_vals)  # (the inputs' positions among arguments, state, hyper-parameters)
    nu = na + len(uniq)
    vals = [arg_vals[k] if k < na else state_vals[uniq[k - na]] if k < nu else scalar_vals[k - nu] for k in inputs]
    seen = entry.check_seen
    if seen is not None and all(map(operator.is_, [r() for r in seen], vals)):
        return  # the arrays checked last time (a loop over one batch): arrays do not change
    m = len(kept)
    out = _on_host(host, vals)
    if out is None and failed(*vals):
        out = details(*vals)
    if out is not None:
        for i, flag, first in zip(kept, out[:m], out[m:]):
            err, message = entry.info["checks"][i]
            if flag:
                raise err(message(first.item()))
    try:
        entry.check_seen = [weakref.ref(v) for v in vals]
    except TypeError:  # (a Python number among them: checked every time)
        entry.check_seen = None
