"""Whether Tensors currently hold JAX tracers (inside ``torchish.compile`` or a user's ``jax.jit``).

Inside a trace the registry calls op forwards inline instead of through their cached jitted kernels: nesting a
jitted call per op into the outer trace only adds tracing work.
"""
from __future__ import annotations

from ..autograd.grad_mode import STATE


def active() -> bool:
    return STATE.tracing > 0


class tracing_scope:
    """Mark the block as running on tracers."""

    def __enter__(self):
        STATE.tracing += 1

    def __exit__(self, *exc):
        STATE.tracing -= 1
        return False


class ConcretizationError(RuntimeError):
    """A value-dependent operation met a traced tensor inside ``torchish.compile``."""


def concrete_error(what: str) -> ConcretizationError:
    return ConcretizationError(
        f"torchish.compile: {what} needs concrete values, but this tensor is being traced into an XLA program. "
        "Move this out of the compiled function, keep it as a tensor (e.g. use torchish.where instead of a Python "
        "`if`), or compile with torchish.compile(fn, fullgraph=False) to let this part run eagerly.")
