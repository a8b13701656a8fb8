"""Batch normalisation layers: BatchNorm1d/2d/3d with PyTorch's buffers, momentum rule and repr, and their lazy
forms (``num_features`` inferred at the first call).

The running statistics and ``num_batches_tracked`` are buffers updated IN PLACE (through the buffers' own in-place
ops under ``no_grad``), so ``torchish.compile`` sees them as state.
"""
from __future__ import annotations

import jax

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty, ones, tensor, zeros
from ... import _dtype
from .. import init
from .._functional.normalization import batch_norm
from ..module import Module
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]


class _NormBase(Module):
    """What batch and instance normalisation share: affine parameters, running-statistics buffers, repr."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"     # added in version 2: older checkpoints start at 0
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else tensor(0, dtype=_dtype.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


def _momentum_factor(module):
    """The running-average weight of this step: ``momentum``, or ``1 / num_batches_tracked`` when it is None."""
    if module.momentum is not None:
        return module.momentum
    n = module.num_batches_tracked
    if isinstance(n._d, jax.core.Tracer):                   # inside torchish.compile: keep it a value, not a constant
        return 1.0 / n
    return 1.0 / float(n)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = _momentum_factor(self)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                          self.weight, self.bias, bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)`` inputs.

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-average weight; None for a cumulative average.
        affine: learn ``weight`` (ones) and ``bias`` (zeros).
        track_running_stats: keep ``running_mean``/``running_var``/``num_batches_tracked`` buffers.

    Example::

        >>> bn = torchish.nn.BatchNorm1d(3)
        >>> _ = bn(torchish.randn(4, 3))
        >>> int(bn.num_batches_tracked)
        1
    """

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)`` inputs (see :class:`BatchNorm1d`)."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)`` inputs (see :class:`BatchNorm1d`)."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """Batch or instance normalisation whose ``num_features`` is inferred from ``input.shape[1]`` at the first call,
    when the affine parameters and running statistics are materialised (see
    :class:`~torchish.nn.modules.lazy.LazyModuleMixin`)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)   # nothing to replace later
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dtype.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm1d` with ``num_features`` inferred at the first call, when it becomes a
    :class:`BatchNorm1d`.

    Example::

        >>> bn = torchish.nn.LazyBatchNorm1d()
        >>> _ = bn(torchish.randn(4, 3))
        >>> bn.num_features, type(bn).__name__
        (3, 'BatchNorm1d')
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm2d` with ``num_features`` inferred at the first call (see :class:`LazyBatchNorm1d`)."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm3d` with ``num_features`` inferred at the first call (see :class:`LazyBatchNorm1d`)."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


from .syncbatchnorm import SyncBatchNorm  # noqa: E402,F401  (torch.nn.modules.batchnorm.SyncBatchNorm)
