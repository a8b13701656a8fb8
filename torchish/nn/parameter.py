"""``nn.Parameter`` and ``nn.Buffer``: tensors that a :class:`~torchish.nn.Module` registers when assigned.

A Parameter is a Tensor subclass (``isinstance(p, torchish.Tensor)`` holds) that requires grad by default, even
under ``no_grad``. Like PyTorch's ``_make_subclass`` it shares the data of the tensor it was built from: JAX values
never change, so when the source is a plain leaf the source becomes an alias of the Parameter (in-place writes to
either are seen by the other, as with PyTorch's shared storage). Ops on a Parameter return plain Tensors.

Example:
    >>> import torchish as torch
    >>> p = torch.nn.Parameter(torch.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
"""
from __future__ import annotations

import weakref

from .._tensor import Tensor


def _share(param: Tensor, data: Tensor) -> None:
    """Make the plain leaf ``data`` an alias of ``param`` (PyTorch's shared storage), when that is safe: ``data``
    must be an unviewed leaf that does not require grad (so no in-place check is lost on it)."""
    if data._view is not None or data._views or data._grad_fn is not None or data._rg:
        return
    param._vc = data._vc
    data._view = (param, (), False)
    param._views = weakref.WeakSet([data])


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    Args:
        data: the parameter's value (shared, not copied). Defaults to an empty tensor.
        requires_grad: whether the parameter requires gradient (default True, also under ``no_grad``).

    Example:
        >>> import torchish as torch
        >>> w = torch.nn.Parameter(torch.zeros(3, 2))
        >>> w.requires_grad, isinstance(w, torch.Tensor)
        (True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        p = cls._make(data._d)
        if requires_grad:
            p.requires_grad_(True)
        _share(p, data)
        return p

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._d), self._rg)
        result.__dict__.update(self.__dict__)
        memo[id(self)] = result
        return result

    def __repr__(self, *, tensor_contents=None):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor._make(self._concrete()), self._rg))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is True for tensors that were marked as buffers (``Buffer(t)`` returns a plain
    Tensor carrying the mark, as in PyTorch)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Mark a tensor as a module buffer: assigning ``nn.Buffer(t)`` to a Module attribute registers it.

    Args:
        data: the buffer's value (shared with the returned tensor; detached).
        persistent: whether the buffer is part of the module's ``state_dict``.

    Example:
        >>> import torchish as torch
        >>> m = torch.nn.Module()
        >>> m.running = torch.nn.Buffer(torch.zeros(2))
        >>> list(dict(m.named_buffers()))
        ['running']
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not {type(data).__name__}")
        t = data.detach()
        if data._rg:
            t.requires_grad_(True)
        t._is_buffer = True
        t.persistent = persistent
        return t


def is_lazy(param) -> bool:
    """Lazy (uninitialized) parameters are not supported by torchish: always False."""
    return False


__all__ = ["Parameter", "Buffer", "is_lazy"]
