"""The jitted kernels behind the op registry (:mod:`.registry`): an op's forward with its promoted inputs cast to
the compute dtype inside the kernel (so the cast fuses with the op; half types in float32 "opmath" where PyTorch's
CPU kernels compute so), cached per ``(static arguments, compute dtype)`` in ``op.kernels``, and how a forward runs
on raw values on each execution path (jitted kernel, inline under a trace, recorded under lazy capture)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._config import config
from ..autograd.grad_mode import STATE
from . import dynamic as _dynamic, lazy, tracing
from . import float8 as _float8
from .casting import cast as _cast
from . import opnode as _opnode


_HALF_NP = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))
_F32 = np.dtype(np.float32)
# Ops PyTorch's CPU kernels evaluate in float32 ("opmath") for float16/bfloat16 and round once, with the positions
# whose Python number or 0-dim tensor they take at float32 precision (the operand's original value, not first
# rounded to the half type): ``x * 0.1`` in bfloat16 is round(float(x) * 0.1f), not x * round(0.1).
OPMATH = {"mul": (1,), "div": (1,), "div_mode": (1,), "floor_divide": (1,), "addcmul": (3,), "addcdiv": (3,)}


def _opmath_fn(fwd, idx, npdt, keep):
    """fwd in float32 for a half-precision ``npdt``: promoted inputs rounded to ``npdt`` (except a 0-dim operand at
    a ``keep`` position), then widened; a float32 result is rounded back to ``npdt``."""
    def opmath_fwd(*vals, **static):
        vals = list(vals)
        for i in range(len(vals)):
            v = vals[i]
            promoted = idx is None or i in idx
            if v is None or not (promoted or i in keep):
                continue
            v = jnp.asarray(v)
            if promoted and not (i in keep and v.ndim == 0):
                v = _astype(v, npdt)
            vals[i] = v.astype(_F32)
        out = fwd(*vals, **static)
        return out.astype(npdt) if out.dtype == _F32 else out

    return opmath_fwd


def _astype(v, npdt):
    """An array cast to ``npdt`` inside a kernel (a bool one by ``casting.cast``, which fences it from the product
    XLA would turn into a select)."""
    return _cast(v, npdt) if v.dtype == np.bool_ else v.astype(npdt)


def _number_as(v, npdt):
    """A Python number cast to ``npdt`` as the jitted kernel casts it (an int64 argument there): an int outside an
    integer type's range wraps (-1 into uint8 is 255; jnp.asarray raised OverflowError inside torchish.compile); into a
    float8 type it rounds as PyTorch's (``casting.cast``: XLA's convert makes e4m3fn's overflow and e8m0fnu's 0 NaN)."""
    if npdt in _dtype.FLOAT8_NP:
        return _cast(v, npdt)
    if type(v) is int and -2 ** 63 <= v < 2 ** 63:
        return jnp.asarray(v, jnp.int64).astype(npdt)
    return jnp.asarray(v, npdt)


def _cast_fn(op, cdt):
    """fwd with promoted inputs cast to ``cdt`` inside the kernel (so the cast fuses with the op)."""
    fwd = op.fwd
    if op.name in _float8.COMPUTES:
        fwd = _float8.widened(fwd)
    elif op.name in _float8.BITWISE:
        fwd = _float8.bitwise(fwd)
    if cdt is None:
        return fwd
    npdt = cdt.np
    idx = op.promote_args
    f8 = npdt in _dtype.FLOAT8_NP  # (a number into a float8 type: PyTorch's rounding, casting.cast)
    if npdt in _HALF_NP and op.name in OPMATH:
        return _opmath_fn(fwd, idx, npdt, OPMATH[op.name])

    def cast_fwd(*vals, **static):
        vals = list(vals)
        for i in (range(len(vals)) if idx is None else idx):
            v = vals[i]
            if v is not None:
                vals[i] = _astype(v, npdt) if hasattr(v, "astype") and not f8 else _number_as(v, npdt)
        return fwd(*vals, **static)

    return cast_fwd


def _jitted(op, static, cdt):
    """The cached jitted forward for ``static``; where it holds Slots (``ops/dynamic.py``) it takes their values
    after the op's inputs."""
    key = (static, cdt)
    k = op.kernels.get(key)
    if k is None:
        fn = _cast_fn(op, cdt)
        n = _dynamic.count(static) if op.dynamic is not None else 0
        if op.eager is not None:
            k = op.eager(fn, static)
        elif op.bucket is not None:
            kw = dict(static)
            k = functools.partial(op.bucket.forward, jax.jit(lambda *vals: fn(*vals, **kw)))
        elif n:
            def k(*vals):
                return fn(*vals[:-n], **dict(_dynamic.fill(static, vals[-n:])))
            k = jax.jit(k)
        else:
            kw = dict(static)
            k = jax.jit(lambda *vals: fn(*vals, **kw))
        op.kernels[key] = k
    return k


def kernel(op, static, cdt):
    """A callable ``(*vals) -> outputs`` running ``op``'s cached jitted forward."""
    kst, dv = _dynamic.split_values(op, static)
    k = _jitted(op, kst, cdt)
    return (lambda *vals: k(*vals, *dv)) if dv else k


def run_forward(op, vals, static, cdt):
    """Run op's forward on raw values: through the cached jitted kernel, or inline when tracing."""
    if tracing.active():
        return _opnode.traced_fn(op, static, cdt)(*vals)
    if config.lazy:
        if STATE.recorder is None:
            return lazy.record(op, vals, static, cdt)
    if lazy.STATS["calls_recorded"]:
        vals = lazy.concrete_all(vals)
    return kernel(op, static, cdt)(*vals)
