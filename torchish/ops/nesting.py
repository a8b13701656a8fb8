"""Programs made of recorded ops (a lazy segment, a lowered backward) that round exactly as the ops do one by one.

Compiled whole, XLA fuses across ops — a multiply into the reduction that reads it, contracted into FMAs; a
transpose into a matmul — and the same ops can round differently in a program than one by one, so results depend
on which path ran. With ``torchish.config.exact_programs`` such a program is compiled (on CPU: :func:`options`) with
:data:`NO_INLINING`, and each of its ops is a call of :func:`nested`: a computation of its own, which XLA optimises
as it optimises the op's kernel alone. JAX's own jitted helpers inside an op (``jnp.where``, ``jax.nn.relu``...)
are inlined when the op is traced, as XLA's call inliner inlines them in the op's standalone kernel: only the op
boundaries stay calls. Without the setting the same program is compiled with the calls inlined: fused, as fast as
before.

Every program torchish compiles from ops or from a traced step (these segments and lowered backwards, the
``torchish.compile`` step, the optimizer's update) is compiled with :data:`AS_WRITTEN` (:func:`jit`): each
rounding to float16/bfloat16 the program asks for happens, as it does between PyTorch's kernels.
"""
from __future__ import annotations

import functools

import jax
from jax._src import core

NO_INLINING = {"xla_disable_hlo_passes": "call-inliner"}
# XLA's default (``xla_allow_excess_precision``) lets it drop a pair of conversions float32 -> bfloat16 -> float32
# (float16 too): fused, a half-precision value that one op rounds and the next widens stays float32. PyTorch rounds
# every half-precision result: a LLaMA step under autocast(bfloat16) summed its two rotary gradient terms for q
# unrounded in the lowered backward and the compiled step, and its q/k weights drifted from PyTorch's by up to
# 0.6% after three AdamW steps. Programs without half-precision values compile to the same HLO either way.
AS_WRITTEN = {"xla_allow_excess_precision": False}


def _exact():
    from .._config import config
    return config.exact_programs and jax.default_backend() == "cpu"


def options():
    """The compiler options of a program made of recorded ops: :data:`AS_WRITTEN`, and :data:`NO_INLINING` on
    CPU where ``torchish.config.exact_programs`` asks for the ops' own rounding. Otherwise XLA inlines the calls
    and fuses across ops (faster); other backends' compilers expect a flat call graph."""
    return {**AS_WRITTEN, **NO_INLINING} if _exact() else AS_WRITTEN


def jit(fn, **kw):
    """``jax.jit(fn, **kw)`` compiled with :data:`AS_WRITTEN`: a program that rounds to float16/bfloat16 where it
    says so (a ``torchish.compile`` step, an optimizer's update)."""
    return jax.jit(fn, compiler_options=AS_WRITTEN, **kw)


_NESTED: dict = {}


def nested(fn, key):
    """``fn`` jitted as one computation of a program compiled with :func:`options` (cached under ``key``). In a
    :data:`NO_INLINING` program the jitted helpers inside ``fn`` are marked to be inlined; in any other program
    XLA's call inliner inlines every call, and ``fn`` is jitted as it is."""
    exact = _exact()
    k = _NESTED.get((key, exact))
    if k is None:
        k = _NESTED[key, exact] = jax.jit(functools.partial(_inlined_call, fn) if exact else fn)
    return k


def _inlined_call(fn, *args):
    closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
    out = core.eval_jaxpr(_inline_all(closed.jaxpr), closed.consts, *jax.tree.leaves(args))
    return jax.tree.unflatten(jax.tree.structure(shape), out)


def _inline_value():
    """The ``inline`` parameter of a jit equation that inlines it: ``True`` up to jax 0.10; jax 0.11 made the
    parameter an enum (``jax.Inline``) and maps ``True`` onto one of its members."""
    try:
        from jax._src.pjit import _canonicalize_inline
    except ImportError:
        return True
    return _canonicalize_inline(True)


_INLINE = _inline_value()


def _inline_all(jaxpr):
    """``jaxpr`` with every nested ``jit`` (at any depth: in control flow and custom derivatives too) marked to be
    inlined when lowered."""
    eqns = []
    for e in jaxpr.eqns:
        params = {k: _inline_sub(v) for k, v in e.params.items()}
        if e.primitive.name in ("jit", "pjit"):
            params["inline"] = _INLINE
        eqns.append(e.replace(params=params))
    return jaxpr.replace(eqns=eqns)


def _inline_sub(v):
    if isinstance(v, core.ClosedJaxpr):
        return core.ClosedJaxpr(_inline_all(v.jaxpr), v.consts)
    if isinstance(v, core.Jaxpr):
        return _inline_all(v)
    if isinstance(v, tuple):  # branches of a cond; custom_linear_solve's named tuple of jaxprs (some None)
        items = [_inline_sub(x) for x in v]
        if all(a is b for a, b in zip(items, v)):
            return v
        return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
    return v
