"""Outputs of a compiled function that are views of its arguments or of its state (``return x[0]``, ``x.t()``,
``self.weight.view(-1)``): PyTorch returns views sharing the input's storage, with the view op's grad_fn
(``SelectBackward0``) leading into the input's own graph, so an in-place write to the output changes the input
and its gradient flows through the input's graph. The program cannot return a view, so such an output is no
output of the program: each call takes the view again, eagerly, from the input (after the program's writes), as
PyTorch's AOTAutograd regenerates views of inputs outside its compiled graph."""
from __future__ import annotations

import jax

from ..autograd.grad_mode import no_grad
from ..ops.registry import apply


def view_spec(x, held):
    """``("V", (where, chain, alias_at, nograd))`` when ``x`` (a traced output) is a view of an argument or state
    tensor (``held``: id -> ``("A", k)`` / ``("S", j)``) that can be taken again outside, else None. ``alias_at``:
    how many of the chain's ops come before its ``detach()`` (None when it has none)."""
    view = x._view
    if view is None or x._fn_view is not None or x._inf:
        return None
    base, chain, diff = view
    where = held.get(id(base))
    if where is None or any(isinstance(v, jax.core.Tracer) for _, st in chain for _, v in st):
        return None
    alias_at = None
    if not diff:  # a detach() on the way: x itself (x[0].detach()) or the alias x was taken from (x.detach()[0])
        alias = x if x._alias else x._alias_base
        if alias is None or alias._view is None or alias._view[0] is not base:
            return None
        alias_at = len(alias._view[1])
    return ("V", (where, chain, alias_at, x._nograd_view))


def take_view(base, chain, alias_at, nograd):
    """The view ``chain`` of ``base`` again, through the registry: the same grad_fn, ``_base`` and version as
    the eager call's output."""
    if nograd:
        with no_grad():
            return _replay(base, chain, alias_at)
    return _replay(base, chain, alias_at)


def _replay(t, chain, alias_at):
    for n, (op, st) in enumerate(chain):
        if n == alias_at:
            t = t.detach()
        kw = dict(st)
        i = kw.pop("_out", None)
        t = apply(op, (t,), **kw)
        if i is not None:  # (an output of unbind/split)
            t = t[i]
    if alias_at == len(chain):
        t = t.detach()
    return t

