"""Evaluate a small jaxpr with numpy on the host, for the value checks of a compiled step (``compile.checks``).

A check reads the call's arguments (class targets, token ids) and decides whether the step may run; dispatching it
as an XLA program of its own means waiting for the device, which is busy with the previous step: on CPU the wait
cost more than the step itself. The checks are a handful of comparisons and reductions over a batch, which numpy
evaluates in microseconds as soon as the batch is there.

Only primitives whose numpy result is exactly XLA's are evaluated: comparisons, logic, selection, reshaping,
integer arithmetic. One difference is kept on purpose: XLA:CPU reads float denormals as zero, numpy (like PyTorch
and torchish's eager checks) does not, so a target of -1e-40 fails ``0 <= t`` here as it does in eager mode.
Anything else (a check on a value the step computes with floating-point maths, a primitive not listed here) raises :class:`Unsupported` and the caller falls back to the compiled program, so both paths give the
same answer.
"""
from __future__ import annotations

import numpy as np
from jax.extend.core import Literal

__all__ = ["Unsupported", "build"]


class Unsupported(Exception):
    """The jaxpr (or a value met while evaluating it, an integer division by zero) needs the XLA program."""


def _int_only(fn):
    """``fn`` for integer and bool results; floating-point results need XLA's own arithmetic."""
    def impl(eqn, *xs):
        if eqn.outvars[0].aval.dtype.kind not in "biu":
            raise Unsupported(eqn.primitive.name)
        return fn(*xs)
    return impl


def _plain(fn):
    return lambda eqn, *xs: fn(*xs)


def _convert(eqn, x):
    src, dst = np.dtype(x.dtype), np.dtype(eqn.params["new_dtype"])
    if src.kind in "biu" or (src.kind == "f" and dst.kind == "f" and dst.itemsize >= src.itemsize):
        return x.astype(dst)
    raise Unsupported("convert_element_type")  # (float -> int truncation, narrowing: XLA's rules)


def _broadcast_in_dim(eqn, x):
    shape, dims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    kept = [1] * len(shape)
    for i, d in enumerate(dims):
        kept[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, kept), shape)


def _reshape(eqn, x):
    if eqn.params.get("dimensions") is not None:
        raise Unsupported("reshape")
    return np.reshape(x, eqn.params["new_sizes"])


def _arg(name, ok="biu"):
    """``np.argmax``/``argmin`` over one axis of integer or bool values (XLA's NaN rule for floats differs)."""
    fn = getattr(np, name)

    def impl(eqn, x):
        axes = eqn.params["axes"]
        if len(axes) != 1 or x.dtype.kind not in ok:
            raise Unsupported(name)
        return fn(x, axis=axes[0]).astype(eqn.params["index_dtype"])
    return impl


def _reduce(fn, ints=False):
    def impl(eqn, x):
        if ints and x.dtype.kind not in "biu":
            raise Unsupported(eqn.primitive.name)
        return fn(x, axis=tuple(eqn.params["axes"]))
    return impl


def _select_n(eqn, which, *cases):
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]
    return np.choose(which, cases)


def _dynamic_slice(eqn, x, *starts):
    sizes = eqn.params["slice_sizes"]
    # XLA clamps each start into [0, dim - size]
    idx = tuple(slice(s, s + n) for s, n in
                ((int(min(max(int(s), 0), d - n)), n) for s, d, n in zip(starts, x.shape, sizes)))
    return x[idx]


def _rem(eqn, a, b):
    if eqn.outvars[0].aval.dtype.kind not in "iu" or np.any(b == 0):
        raise Unsupported("rem")
    return np.fmod(a, b)  # (C's truncated remainder, as XLA's)


def _slice(eqn, x):
    p = eqn.params
    strides = p["strides"] or (1,) * x.ndim
    return x[tuple(slice(a, b, c) for a, b, c in zip(p["start_indices"], p["limit_indices"], strides))]


def _iota(eqn):
    p = eqn.params
    shape, dim = p["shape"], p["dimension"]
    line = np.arange(shape[dim], dtype=p["dtype"])
    return np.broadcast_to(line.reshape([-1 if i == dim else 1 for i in range(len(shape))]), shape)


_IMPLS = {
    "lt": _plain(np.less), "le": _plain(np.less_equal), "gt": _plain(np.greater), "ge": _plain(np.greater_equal),
    "eq": _plain(np.equal), "ne": _plain(np.not_equal), "is_finite": _plain(np.isfinite),
    "and": _plain(np.bitwise_and), "or": _plain(np.bitwise_or), "xor": _plain(np.bitwise_xor),
    "not": _plain(np.invert),
    "add": _int_only(np.add), "sub": _int_only(np.subtract), "mul": _int_only(np.multiply),
    "neg": _int_only(np.negative), "abs": _int_only(np.abs), "sign": _int_only(np.sign),
    "max": _int_only(np.maximum), "min": _int_only(np.minimum), "rem": _rem,
    "clamp": _int_only(lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)),
    "convert_element_type": _convert, "copy": _plain(np.copy), "copy_p": _plain(np.copy),
    "reshape": _reshape, "squeeze": lambda eqn, x: np.squeeze(x, axis=tuple(eqn.params["dimensions"])),
    "broadcast_in_dim": _broadcast_in_dim, "transpose": lambda eqn, x: np.transpose(x, eqn.params["permutation"]),
    "concatenate": lambda eqn, *xs: np.concatenate(xs, axis=eqn.params["dimension"]),
    "stack": lambda eqn, *xs: np.stack(xs, axis=eqn.params["axis"]),
    "reduce_or": _reduce(np.any), "reduce_and": _reduce(np.all), "reduce_max": _reduce(np.max, True),
    "reduce_min": _reduce(np.min, True), "reduce_sum": _reduce(np.sum, True),
    "argmax": _arg("argmax"), "argmin": _arg("argmin"),
    "select_n": _select_n, "dynamic_slice": _dynamic_slice, "slice": _slice, "iota": _iota,
}
_CALLS = {  # primitives that call a jaxpr (build makes a function of it), and the parameter that holds it
    "pjit": "jaxpr", "jit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr"}


def build(jaxpr, consts):
    """A function ``args -> outputs`` evaluating ``jaxpr`` with numpy: numpy arrays in, numpy arrays of the
    dtypes the jaxpr declares out. Raises :class:`Unsupported` (here, or at run time for values XLA and numpy
    treat differently) where the compiled program must be used instead."""
    slot = {}
    init = []
    for v, x in zip(jaxpr.constvars, consts):
        slot[v] = len(init)
        init.append(np.asarray(x))
    first_arg = len(init)
    arg_dtypes = [np.dtype(v.aval.dtype) for v in jaxpr.invars]
    for v in jaxpr.invars:
        slot[v] = len(init)
        init.append(None)
    steps = []
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _CALLS:  # (built once, here, not at every call)
            inner = build(eqn.params[_CALLS[name]].jaxpr, eqn.params[_CALLS[name]].consts)
            impl = (lambda inner: lambda eqn, *xs: inner(xs))(inner)
        elif name in _IMPLS:
            impl = _IMPLS[name]
        else:
            raise Unsupported(name)
        ins = []
        for v in eqn.invars:
            if isinstance(v, Literal):
                slot_v = len(init)
                init.append(np.asarray(v.val, v.aval.dtype))
                ins.append(slot_v)
            else:
                ins.append(slot[v])
        outs = []
        for v in eqn.outvars:
            slot[v] = len(init)
            init.append(None)
            outs.append((slot[v], np.dtype(v.aval.dtype)))
        steps.append((impl, eqn, ins, outs, eqn.primitive.multiple_results))
    result = []
    for v in jaxpr.outvars:
        if isinstance(v, Literal):  # (a constant output, unhashable: its own slot)
            result.append(len(init))
            init.append(np.asarray(v.val, v.aval.dtype))
        else:
            result.append(slot[v])

    def run(args):
        env = list(init)
        # (as the program takes them: a Python number in the jaxpr's dtype, not numpy's float64)
        env[first_arg:first_arg + len(args)] = [np.asarray(a, dt) for a, dt in zip(args, arg_dtypes)]
        for impl, eqn, ins, outs, multiple in steps:
            got = impl(eqn, *[env[i] for i in ins])
            if not multiple:
                got = (got,)
            for (k, dt), x in zip(outs, got):
                env[k] = x if getattr(x, "dtype", None) == dt else np.asarray(x, dt)  # (numpy may widen)
        return [env[k] for k in result]
    return run
