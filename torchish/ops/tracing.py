"""Whether Tensors currently hold JAX tracers (inside ``torchish.compile`` or a user's ``jax.jit``).

Inside a trace the registry calls op forwards inline instead of through their cached jitted kernels: nesting a
jitted call per op into the outer trace only adds tracing work.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..autograd.grad_mode import STATE, unusual


def active() -> bool:
    return STATE.tracing > 0


class tracing_scope:
    """Mark the block as running on tracers."""

    def __enter__(self):
        STATE.tracing += 1
        unusual(1)

    def __exit__(self, *exc):
        STATE.tracing -= 1
        unusual(-1)
        return False


class ConcretizationError(RuntimeError):
    """A value-dependent operation met a traced tensor inside ``torchish.compile``."""


def concrete_error(what: str) -> ConcretizationError:
    return ConcretizationError(
        f"torchish.compile: {what} needs concrete values, but this tensor is being traced into an XLA program. "
        "Move this out of the compiled function, keep it as a tensor (e.g. use torchish.where instead of a Python "
        "`if`); torchish.compile runs the function eagerly instead unless fullgraph=True.")


# ----------------------------------------------------------------------------------------------------------------
# running torchish code inside a JAX transform (jax.grad / jax.vmap / jax.jit of a torchish function)


def _jax_differentiated() -> bool:
    """Whether JAX differentiates the code running now (a ``torchish.func`` transform's body, a checkpointed
    block inside ``torchish.compile``): torchish turns its own recording off there (grad mode), while the user's
    ``no_grad`` blocks in it show in ``STATE.user_grad``."""
    return bool(getattr(STATE, "functional_trace", 0) or STATE.jax_diff)


def cuts(record) -> bool:
    """Whether an op's outputs must be cut from the trace's own differentiation: inside ``torchish.compile``'s
    trace where torchish's autograd does not record the op (``record`` False: under ``no_grad``, on inputs that
    do not require grad, not differentiable); in code JAX differentiates itself, under the user's ``no_grad``
    (which PyTorch's function transforms and checkpointed blocks respect)."""
    if _jax_differentiated():
        return not STATE.user_grad
    return not record


def writes_behind_autograd() -> bool:
    """Whether an in-place write into a tensor that requires grad, made now without recording it (under
    ``no_grad``, through ``.data``), must leave the trace's differentiation treating the written tensor as the
    one before the write, as PyTorch's graph does: inside ``torchish.compile``'s trace, and in code JAX
    differentiates only under the user's own ``no_grad``."""
    if not STATE.tracing:
        return False
    return not STATE.user_grad if _jax_differentiated() else True


def cut(out):
    """``out`` (a value or a tuple/list of values) with JAX's differentiation stopped at its floating ones."""
    def one(v):
        return jax.lax.stop_gradient(v) if hasattr(v, "dtype") and jnp.issubdtype(v.dtype, jnp.inexact) else v
    if isinstance(out, (tuple, list)):
        return type(out)(one(v) for v in out)
    return one(out)


@jax.custom_jvp
def through(old, new):
    """``new`` as the value that replaced ``old`` behind autograd's back (an in-place write under ``no_grad``, a
    write through ``.data``): to the trace's differentiation it IS ``old`` (tangent and cotangent pass straight
    through), as PyTorch's graph keeps treating the written tensor as the one it recorded (see
    :func:`writes_behind_autograd`)."""
    return new


through.defjvp(lambda primals, tangents: (primals[1], tangents[0]))


def _is_tensor(x) -> bool:
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def to_values(tree):
    """A pytree with every Tensor leaf replaced by its JAX value (other leaves kept)."""
    return jax.tree_util.tree_map(lambda t: t._d if _is_tensor(t) else t, tree, is_leaf=_is_tensor)


def to_tensors(tree):
    """A pytree with every JAX value (array or tracer) wrapped in a fresh Tensor (other leaves kept)."""
    from .._tensor import Tensor
    return jax.tree_util.tree_map(lambda v: Tensor._make(v) if isinstance(v, (jax.Array, jax.core.Tracer)) else v,
                                  tree)


def forward_mode() -> bool:
    """Whether a forward-mode JAX transform (``jax.jvp``) runs the current trace: ops must not be ``custom_vjp``."""
    return getattr(STATE, "forward_mode", 0) > 0


class transform_scope:
    """Run the block as a JAX transform's body: Tensors hold tracers (ops run inline), torchish's own autograd
    records nothing (the transform differentiates), and custom ``autograd.Function``\\ s become JAX custom rules
    (``autograd._function_transform``). ``forward=True`` for forward-mode transforms (see ``forward_mode``),
    ``batched=True`` where the body is vmapped (custom Functions must allow it, unbatched Tensors cannot take batched
    values in place), ``batched_tangents=True`` where only the tangents are (jacfwd, PyTorch's vmap of a jvp: custom
    Functions must allow vmapping), ``engine_fallback=True`` to make custom
    Functions raise instead (``autograd.functional``'s vectorised path then runs the engine). In-place writes into
    Tensors from outside the transform raise as in PyTorch (``_tensor_views._check_captured_write``) unless
    ``captured_writes``.
    Used by ``torchish.func`` and ``autograd.functional``'s vectorised path."""

    def __init__(self, forward=False, batched=False, engine_fallback=False, captured_writes=False,
                 batched_tangents=False):
        self._forward, self._batched, self._fallback = int(forward), int(batched), int(engine_fallback)
        self._writes, self._tangents = int(captured_writes), int(batched_tangents)

    def __enter__(self):
        from ..autograd.grad_mode import no_grad
        if not getattr(STATE, "functional_trace", 0):
            from .._tensor import transform_scope_start
            STATE.transform_start = transform_scope_start()
        STATE.functional_trace = getattr(STATE, "functional_trace", 0) + 1
        STATE.forward_mode = getattr(STATE, "forward_mode", 0) + self._forward
        STATE.vmap_level = getattr(STATE, "vmap_level", 0) + self._batched
        STATE.tangent_vmap_level = getattr(STATE, "tangent_vmap_level", 0) + self._tangents
        STATE.engine_fallback = getattr(STATE, "engine_fallback", 0) + self._fallback
        STATE.captured_writes = getattr(STATE, "captured_writes", 0) + self._writes
        STATE.tracing += 1
        unusual(1)
        self._no_grad = no_grad()
        self._no_grad.__enter__()
        STATE.user_grad = True  # (the body runs under the transform's own grad mode, not an outer no_grad)

    def __exit__(self, *exc):
        self._no_grad.__exit__(*exc)
        STATE.tracing -= 1
        unusual(-1)
        STATE.forward_mode -= self._forward
        STATE.vmap_level -= self._batched
        STATE.tangent_vmap_level -= self._tangents
        STATE.engine_fallback -= self._fallback
        STATE.captured_writes -= self._writes
        STATE.functional_trace -= 1
        return False


# ----------------------------------------------------------------------------------------------------------------
# value checks inside torchish.compile's trace


class deferred_checks:
    """Collect the value checks met while ``torchish.compile`` traces a function (an index out of range, a class
    target out of bounds): eager mode reads the values and raises at once; a trace has none, so each check becomes
    a pair of outputs of the traced step (whether any element is bad, the first bad value), cut out into a program
    that runs before the step to raise PyTorch's error (``compile.checks``). Only checks made at the trace's own
    level are collected: inside an inner transform (a checkpointed block, ``torchish.func``) the values cannot
    leave it, and those checks are skipped as before."""

    def __enter__(self):
        import jax.extend.core
        self.checks = []  # (any bad, first bad value, exception type, message of the bad value)
        self.level = jax.extend.core.get_opaque_trace_state()
        self.prev = getattr(STATE, "deferred_checks", None)
        STATE.deferred_checks = self
        return self

    def __exit__(self, *exc):
        STATE.deferred_checks = self.prev
        return False


def defer_check(bad, values, err, message):
    """Inside a :class:`deferred_checks` scope, check the traced boolean mask ``bad`` (elements that fail) before
    each run of the program: raise ``err(message(b))``, ``b`` the first bad element of ``values`` (a Python
    number). Elsewhere (a user's ``jax.jit``, an inner transform) the check is skipped, as value checks on traced
    tensors always were."""
    scope = getattr(STATE, "deferred_checks", None)
    if scope is None:
        return
    import jax.extend.core
    if jax.extend.core.get_opaque_trace_state() != scope.level:
        return
    bad, values = jnp.ravel(bad), jnp.ravel(values)
    if bad.size == 0:  # nothing to check (an empty index): no element can fail, and argmax of none is an error
        return
    scope.checks.append((jnp.any(bad), values[jnp.argmax(bad)], err, message))
