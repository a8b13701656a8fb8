"""Gradient clipping: ``clip_grad_norm_`` (any p-norm, ``inf`` included), ``clip_grad_value_``,
``get_total_norm`` and ``clip_grads_with_norm_``, with PyTorch's numerics (coefficient
``min(max_norm / (total_norm + 1e-6), 1)``) and errors.

The work is done with torchish ops on the gradient tensors, so it also traces inside ``torchish.compile``.

Example:
    >>> import torchish as torch
    >>> p = torch.nn.Parameter(torch.ones(4))
    >>> p.grad = torch.full((4,), 3.0)
    >>> float(torch.nn.utils.clip_grad_norm_([p], max_norm=1.0))
    6.0
"""
from __future__ import annotations

import types
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _check_foreach(foreach, tensors):
    """torchish has one implementation on every device: ``foreach`` is accepted and needs no fallback."""
    if foreach not in (None, True, False):
        raise TypeError(f"foreach must be a bool or None, got {type(foreach).__name__}")


def _refuse_sparse(tensors, op):
    """PyTorch's error for a sparse gradient (``Embedding(sparse=True)``'s), which its norms and clamps refuse."""
    if any(t._coo is not None for t in tensors):
        from ...sparse import dispatch_error
        raise NotImplementedError(dispatch_error(op))


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` viewed as one vector."""
    from ...ops.creation import tensor as _tensor
    from ...ops.stats import vector_norm
    from ...ops.join import stack
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tensor(0.0)
    _check_foreach(foreach, tensors)
    _refuse_sparse(tensors, "linalg_vector_norm")
    first_device = tensors[0].device
    with no_grad():
        norms = [vector_norm(t, norm_type).to(first_device) for t in tensors]
        total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    _check_foreach(foreach, grads)
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """Clip the gradient norm of ``parameters`` (a tensor or an iterable) in place.

    Args:
        parameters: tensors whose ``.grad`` is clipped.
        max_norm: the largest norm allowed.
        norm_type: the p of the p-norm; ``float('inf')`` or ``'inf'`` for the max norm.
        error_if_nonfinite: raise RuntimeError when the total norm is nan or inf.
        foreach: accepted for compatibility (one implementation serves every device).

    Returns:
        The total norm of the gradients before clipping (a 0-d Tensor).
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:  # (PyTorch first groups the gradients by device and dtype, which refuses an empty list)
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    _check_foreach(foreach, grads)
    _refuse_sparse(grads, "clamp_min_")
    with no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)


__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]
