"""The value checks of a compiled program (an index out of range, a class target out of bounds): eager mode reads
the values and raises PyTorch's error at once; a trace has no values, so the checks met while tracing
(``ops.tracing.defer_check``) become a small program of their own, cut out of the traced step. It runs before
each call of the step and reads only what the checks depend on, usually the call's arguments (token ids,
targets), so waiting for its answer does not wait for the previous step's updates; a failed check raises before
the step runs, which then has no effect, as a PyTorch step that raises in its forward has none."""
from __future__ import annotations

import operator
import weakref

import jax
import jax.numpy as jnp
from jax.core import eval_jaxpr
from jax.interpreters import partial_eval as pe


def program(traced, info, flat):
    """``(failed, details, inputs)`` for the checks in ``info["checks"]``, whose values (whether any element is
    bad, the first bad value) the traced step returns as the last of its outputs: ``failed(*values)`` whether any
    check fails, ``details(*values)`` every check's values. ``flat``: the values the step was traced with (arguments,
    state, hyper-parameters); ``inputs``: the positions of those the checks read. None where the checks cannot be
    cut out (the step has effects that would run twice)."""
    closed = traced.jaxpr
    jaxpr = closed.jaxpr
    n = len(info["checks"])
    if len(jaxpr.invars) != len(flat):  # (a hyper-parameter that is not one value: the checks are skipped)
        return None
    end = info["n_written"] + info["n_outputs"]
    jaxpr = jaxpr.replace(outvars=jaxpr.outvars[end - 2 * n:end])
    jaxpr, used = pe.dce_jaxpr(jaxpr, True)
    if jaxpr.effects:
        return None
    inputs = [k for k, u in enumerate(used) if u]  # (the jaxpr takes those only now)
    consts = closed.consts

    def failed(*vals):
        return jnp.any(jnp.stack(eval_jaxpr(jaxpr, consts, *vals)[:n]))
    # (jitted functions, not lowered executables: a jitted call dispatches several times faster, and this one runs
    # before every step)
    return jax.jit(failed), jax.jit(lambda *vals: eval_jaxpr(jaxpr, consts, *vals)), inputs


def run(entry, arg_vals, state_vals, scalar_vals):
    """Raise PyTorch's error for the first failed check of ``entry``'s program on these values."""
    failed, details, inputs = entry.check
    flat = list(arg_vals) + [state_vals[i] for i in entry.check_uniq] + list(scalar_vals)
    vals = [flat[k] for k in inputs]
    seen = entry.check_seen
    if seen is not None and all(map(operator.is_, [r() for r in seen], vals)):
        return  # the arrays checked last time (a loop over one batch): arrays do not change
    if failed(*vals):
        out = details(*vals)
        n = len(entry.info["checks"])
        for (err, message), flag, first in zip(entry.info["checks"], out[:n], out[n:]):
            if flag:
                raise err(message(first.item()))
    try:
        entry.check_seen = [weakref.ref(v) for v in vals]
    except TypeError:  # (a Python number among them: checked every time)
        entry.check_seen = None
