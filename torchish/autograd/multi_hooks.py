"""``register_multi_grad_hook``: one hook over the gradients of several tensors (``torch.autograd.graph``'s).

Built on tensor hooks (``Tensor.register_hook``): each tensor's hook files its gradient in the scratch of the
backward pass that is running (the engine's :class:`~torchish.autograd.engine.GraphTask`), so nested and repeated
backwards (``retain_graph=True``) each call ``fn`` once, and no Python state outlives a pass. Mode ``"all"`` waits
for every tensor whose node that backward runs (a tensor outside the graph, or not on a path to ``inputs=``, is
ignored and passed as None); mode ``"any"`` passes the first gradient computed among them. The tensor hooks keep
the backward node by node (the lowered backward refuses hooked graphs), and inside ``torchish.compile`` they are
traced as any tensor hook: a hook that writes into a tensor made before the call (``buf.copy_(g)``) compiles.

Example::

    >>> a = torchish.ones(2, requires_grad=True)
    >>> b = torchish.ones(2, requires_grad=True)
    >>> c = a * b
    >>> handle = register_multi_grad_hook((a, b, c), lambda grads: print([g is not None for g in grads]))
    >>> c.sum().backward(inputs=(a,))
    [True, False, True]
"""
from __future__ import annotations

import functools
import threading

from .graph import GradientEdge, RemovableHandle

_MODES = ("all", "any")


class _MultiHandle(RemovableHandle):
    """The handle of a multi-grad hook: ``remove()`` removes the hook of every tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def _grad_fn_or_grad_acc(t):
    """The node whose run delivers ``t``'s gradient: its grad_fn, or a leaf's AccumulateGrad."""
    if isinstance(t, GradientEdge):
        return t.node
    node = t.grad_fn
    if node is None and t.requires_grad:
        edge = t._edge()
        node = edge[0] if edge is not None else None
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def _current_task():
    from .engine import current_task
    task = current_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Register ``fn`` to run once per backward pass over the gradients of ``tensors``.

    Args:
        tensors: the tensors whose gradients ``fn`` receives; with mode ``"all"`` each must require grad.
        fn: mode ``"all"``: ``fn(grads)``, a list with one entry per tensor (None for a tensor whose gradient
            this backward does not compute), called after all the others were computed. Mode ``"any"``:
            ``fn(grad)``, the first gradient computed among the tensors. It must not modify its arguments; what it
            returns is ignored.
        mode: ``"all"`` (default) or ``"any"``.

    Returns:
        A handle whose ``remove()`` removes the hook.

    Example::

        >>> h = register_multi_grad_hook((x, y), lambda gs: print([g.shape for g in gs]))
        >>> (x * y).sum().backward()
    """
    if mode not in _MODES:
        raise ValueError(f"Expects mode to be one of {_MODES} but got {mode}")
    lock = threading.Lock()  # (torchish runs a backward on the calling thread; kept for backwards in threads)
    key = object()  # this hook's entry in each backward pass's scratch
    if mode == "all":
        grad_fns = [_grad_fn_or_grad_acc(t) for t in tensors]
        n = len(tensors)

        def get_inner_hook(idx):
            def inner_hook(grad):
                task = _current_task()
                with lock:
                    state = task.scratch.get(key)
                    if state is None:  # the first of this backward: how many of the nodes it runs, the gradients
                        state = task.scratch[key] = [0, sum(map(task.will_execute, grad_fns)), [None] * n]
                    state[0] += 1
                    calls = state[0]
                state[2][idx] = grad
                if calls == state[1]:
                    fn(state[2])
            return inner_hook

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        @functools.wraps(fn)
        def wrapped_fn(grad):
            task = _current_task()
            with lock:
                if key in task.scratch:
                    return
                task.scratch[key] = True
            fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
