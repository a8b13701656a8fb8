"""Saved-tensor hooks: what autograd keeps for backward, packed and unpacked by the user.

While a :class:`saved_tensors_hooks` context is open (per thread; the innermost one wins), every tensor a new graph
node saves for its backward — an op's inputs and outputs as :data:`torchish.ops.saved.SAVED` lists them, the
tensors a custom Function passes to ``ctx.save_for_backward`` — is given to ``pack_hook`` once, when the node is
recorded, and the node keeps what the hook returns instead of the tensor. When backward (or ``grad_fn._saved_*``,
``ctx.saved_tensors``) needs the value, the ``unpack_hook`` of that same context turns it back into a Tensor.
Both hooks run with grad recording off, as PyTorch's. A packed value is not version-checked (PyTorch's neither):
the hooks own it.

Example::

    >>> with torchish.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(), torchish.from_numpy):
    ...     y = (x * w).sum()       # x and w are kept as numpy arrays until backward
    >>> y.backward()
"""
from __future__ import annotations

import contextlib
import threading

from .grad_mode import STATE

# How many saved_tensors_hooks contexts are open, in all threads: the recording path reads this global (cheap)
# before the thread's own stack (a thread-local read costs more than the rest of the check).
ACTIVE = 0
_LOCK = threading.Lock()

ERR_PACK_INPLACE = ("A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                    "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please "
                    "open an issue if you need to perform in-place operations on the input to a pack hook.")


class saved_tensors_hooks:
    """Context manager: pack and unpack the tensors autograd saves for backward (``torch.autograd.graph``'s).

    Args:
        pack_hook: ``pack_hook(tensor) -> Any``, called once per saved tensor when its node is recorded; must not
            modify the tensor in place.
        unpack_hook: ``unpack_hook(packed) -> Tensor``, called each time the saved value is needed.

    Example::

        >>> with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        ...     y = x.exp()
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        msg = STATE.saved_hooks_disabled
        if msg is not None:
            raise RuntimeError(msg)
        global ACTIVE
        STATE.saved_hooks = STATE.saved_hooks + ((self.pack_hook, self.unpack_hook),)
        with _LOCK:
            ACTIVE += 1

    def __exit__(self, *exc):
        global ACTIVE
        STATE.saved_hooks = STATE.saved_hooks[:-1]
        with _LOCK:
            ACTIVE -= 1
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU between forward and backward; backward moves them back to their device.

    Args:
        pin_memory: accepted for PyTorch's signature (JAX manages host buffers itself).
        device_type: accepted for PyTorch's signature.

    Example::

        >>> with save_on_cpu():
        ...     loss = model(x).sum()   # activations saved on the host
        >>> loss.backward()
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within it, opening a :class:`saved_tensors_hooks` raises ``RuntimeError(error_message)`` (as does entering
    it while hooks are open). Usable as a decorator."""
    if STATE.saved_hooks:
        raise RuntimeError(error_message)
    prev = STATE.saved_hooks_disabled
    STATE.saved_hooks_disabled = error_message
    try:
        yield
    finally:
        STATE.saved_hooks_disabled = prev


class Packed:
    """A saved tensor as its pack hook returned it, with the unpack hook that turns it back into a Tensor."""

    __slots__ = ("value", "unpack_hook")

    def __init__(self, value, unpack_hook):
        self.value = value
        self.unpack_hook = unpack_hook

    def unpack(self):
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            res = self.unpack_hook(self.value)
        finally:
            STATE.grad_enabled = prev
        from .._tensor import Tensor
        if not isinstance(res, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(res).__name__}")
        return res


def pack(hooks, tensor) -> Packed:
    """Run ``hooks``' pack hook on ``tensor`` (recording off); what the node keeps instead of the tensor."""
    pack_hook, unpack_hook = hooks
    version = tensor._vc.value
    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        value = pack_hook(tensor)
    finally:
        STATE.grad_enabled = prev
    if tensor._vc.value != version:
        raise RuntimeError(ERR_PACK_INPLACE)
    return Packed(value, unpack_hook)


def current():
    """The (pack, unpack) hooks new nodes use in this thread, or None."""
    hooks = STATE.saved_hooks
    return hooks[-1] if hooks else None
