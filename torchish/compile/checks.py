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
from jax.core import eval_jaxpr
from jax.interpreters import partial_eval as pe


def program(traced, info, flat, written):
    """``(failed, details, inputs, kept)`` for the checks in ``info["checks"]``, whose values (whether any element
    is bad, the first bad value) the traced step returns as the last of its outputs: ``failed(*values)`` whether any
    kept check fails, ``details(*values)`` their values. ``flat``: the values the step was traced with (arguments,
    state, hyper-parameters); ``written``: the positions among them of the state the step writes; ``inputs``: the
    positions of those the checks read. A check that reads written state (an index computed from the model's
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
    return jax.jit(failed), jax.jit(lambda *vals: eval_jaxpr(jaxpr, consts, *vals)), inputs, kept


def run(entry, arg_vals, state_vals, scalar_vals):
    """Raise PyTorch's error for the first failed check of ``entry``'s program on these values."""
    failed, details, inputs, kept = entry.check
    flat = list(arg_vals) + [state_vals[i] for i in entry.check_uniq] + list(scalar_vals)
    vals = [flat[k] for k in inputs]
    seen = entry.check_seen
    if seen is not None and all(map(operator.is_, [r() for r in seen], vals)):
        return  # the arrays checked last time (a loop over one batch): arrays do not change
    if failed(*vals):
        out = details(*vals)
        m = len(kept)
        for i, flag, first in zip(kept, out[:m], out[m:]):
            err, message = entry.info["checks"][i]
            if flag:
                raise err(message(first.item()))
    try:
        entry.check_seen = [weakref.ref(v) for v in vals]
    except TypeError:  # (a Python number among them: checked every time)
        entry.check_seen = None
