"""``allow_mutation_on_saved_tensors`` and ``increment_version``: what in-place writes do to saved tensors.

Normally a tensor saved for backward and then modified in place makes that backward raise (its version counter
moved). Inside :func:`allow_mutation_on_saved_tensors` the tensors new nodes save go through a saved-tensor pack
hook that keeps the value they have when saved, so backward uses that value whatever was written since. PyTorch
clones a saved tensor at its first in-place write; torchish needs no copy at all: a value is a jax array, which
never changes, and an in-place op rebinds the tensor to a new one. Both forward and backward must run inside the
same context, as in PyTorch.

Example::

    >>> with allow_mutation_on_saved_tensors():
    ...     a = torchish.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     b.sin_()
    ...     out.backward()          # the gradient of (b ** 2).sum() at b as it was: 2 * ones
"""
from __future__ import annotations

import contextlib
import weakref

from .saved_hooks import saved_tensors_hooks

# Whether an allow_mutation_on_saved_tensors context is open (a process-wide flag, as PyTorch's)
_enabled = False

_ERR_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph was "
                "originally recorded.")  # (PyTorch's words, without the space)


class _Handle:
    """What a node keeps for a tensor it saved inside the context."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one :func:`allow_mutation_on_saved_tensors` context: per saved tensor, the tensor and the value
    and version it had when saved (``original``); ``cloned`` holds, for those modified since, the saved value as a
    tensor of its own, made on the first unpack. Cleared when the context exits."""

    def __init__(self):
        self.original = weakref.WeakKeyDictionary()
        self.cloned = weakref.WeakKeyDictionary()

    def clear(self):
        self.cloned.clear()
        self.original.clear()


class _swap_with_cloned(saved_tensors_hooks):
    """The saved-tensor hooks of a context: pack keeps the tensor with its value and version; unpack gives the
    tensor back while it is unchanged, else its value when saved."""

    def __init__(self, ctx):
        def pack_hook(tensor):
            handle = _Handle()
            ctx.original[handle] = (tensor, tensor._v, tensor._vc.value)
            return handle

        def unpack_hook(handle):
            if not _enabled:
                raise AssertionError(_ERR_OUTSIDE)
            res = ctx.cloned.get(handle)
            if res is not None:
                return res
            if handle not in ctx.original:
                raise AssertionError(_ERR_OUTSIDE)
            tensor, value, version = ctx.original[handle]
            if tensor._v is value and tensor._vc.value == version:
                return tensor
            from .._tensor import Tensor
            res = ctx.cloned[handle] = Tensor._make(value)
            del ctx.original[handle]
            return res

        super().__init__(pack_hook, unpack_hook)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be modified in place: backward uses the values
    they had when saved. Run both the forward and the backward inside it; it cannot be nested.

    Yields:
        The context's state (:class:`_AllowMutationOnSavedContext`), cleared on exit.

    Example::

        >>> with allow_mutation_on_saved_tensors():
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     b.sin_()
        ...     out.backward()
    """
    global _enabled
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx):
        try:
            if _enabled:  # (as PyTorch's, the failed inner context still closes the outer one's flag)
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled = True
            yield ctx
        finally:
            ctx.clear()
            _enabled = False


def increment_version(tensor):
    """Mark ``tensor`` (or each tensor of an iterable) as modified in place: a backward that saved it then raises,
    as after any in-place op. For writes autograd cannot see; inference tensors have no version to bump.

    Example::

        >>> y = x * x
        >>> increment_version(x)
        >>> y.sum().backward()   # RuntimeError: ... modified by an inplace operation
    """
    from .._tensor import Tensor
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        tensors = iter(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in tensors:  # (as PyTorch, the tensors before a non-tensor are bumped)
        if not isinstance(t, Tensor):
            raise RuntimeError("increment_version expects each element of the iterable to be a tensor")
        if not t._inf:
            t._vc.value += 1
