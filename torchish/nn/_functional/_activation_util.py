"""Shared pieces of the activation functions: float32 evaluation of half-precision inputs (PyTorch's opmath),
PyTorch's dtype errors for float-only kernels, and the ``inplace=`` write-back."""
from __future__ import annotations

import jax.numpy as jnp

from ... import _dtype
from ... import _precision
from ...ops.inplace import assign, write_scope


def _zero(g):
    return jnp.zeros((), g.dtype)


def _half(v, like):
    """``v`` stored in ``like``'s float16/bfloat16 dtype and widened back: a value PyTorch's kernel keeps in the
    half type between two steps (a saved buffer, an intermediate tensor of a composite)."""
    return _precision.stepper(like.dtype)[1](v)


def _opmath(f):
    """``f`` evaluated in float32 for float16/bfloat16 inputs and rounded once, as PyTorch's CPU kernels do."""
    def wrapped(x, *args, **kw):
        if x.dtype not in (jnp.float16, jnp.bfloat16):
            return f(x, *args, **kw)
        args = (None if a is None else a.astype(jnp.float32) for a in args)
        prev, _HALF_INPUT[0] = _HALF_INPUT[0], True  # (read while tracing: see _tanh)
        try:
            return f(x.astype(jnp.float32), *args, **kw).astype(x.dtype)
        finally:
            _HALF_INPUT[0] = prev
    return wrapped


_HALF_INPUT = [False]  # whether the function being traced computes a float16/bfloat16 op in float32


def _float_only(x, kernel, complex_ok=False):
    """PyTorch's "not implemented" error for activations whose kernels take real floating point inputs only
    (``complex_ok``: complex ones too)."""
    if x.dtype.category < _dtype._FLOAT or (x.dtype.category == _dtype._COMPLEX and not complex_ok):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(x.dtype)}\'')


def _result(input, compute, inplace):
    """``compute()``, or (PyTorch's ``inplace=True``) its value written into ``input``, which is returned; the
    in-place op's own record keeps the overwritten input, as every torchish in-place op does."""
    if not inplace:
        return compute()
    input._check_inplace()
    with write_scope(input):
        return assign(input, compute())
