"""``torch._check`` and its siblings: the condition checks PyTorch's fake impls and meta functions use
(``torch._check(a.shape == b.shape)`` in the custom-operator tutorials), raising PyTorch's error types.

    >>> torchish._check(x.dim() == 2, lambda: f"expected 2-D, got {x.dim()}-D")
"""
from __future__ import annotations

import warnings

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? If so, please report "
            "an enhancement request to PyTorch.)")


def _check_with(error_type, cond, message=None):
    from ._tensor import Tensor
    if not isinstance(cond, bool):
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got {error_type}")
    if message is None:
        raise error_type(_DEFAULT)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond, message=None):
    """RuntimeError unless ``cond`` (a bool); ``message`` is a callable giving the text."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None):
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i, message=None, *, max=None):  # noqa: A002  (PyTorch's keyword)
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with guard_size_oblivious.     "
                  "Use _check(i >= 0) instead.", FutureWarning, stacklevel=2)
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _check_tensor_all_with(error_type, cond, message=None):
    from ._dtype import bool as bool_
    from ._tensor import Tensor
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype != bool_:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, bool(cond.all().item()), message)


def _check_tensor_all(cond, message=None):
    _check_tensor_all_with(RuntimeError, cond, message)
