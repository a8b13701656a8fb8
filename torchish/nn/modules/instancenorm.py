"""Instance normalisation layers: InstanceNorm1d/2d/3d (optionally affine, optionally tracking running stats), and
their lazy forms (``num_features`` inferred at the first call)."""
from __future__ import annotations

import warnings

from .._functional.normalization import instance_norm
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        d = self._no_batch_dim
        if input.dim() not in (d, d + 1):
            raise ValueError(f"expected {d}D or {d + 1}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                             self.training or not self.track_running_stats,
                             self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:   # checkpoints from before running stats were optional
            found = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if found:
                name = type(self).__name__
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {' and '.join(repr(k) for k in found)} for {name} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, this may be "
                    f"expected because {name} does not track running stats by default since 0.4.0. Please remove "
                    "these keys from state_dict. If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {name} to enable them. See the documentation of {name} for "
                    "details.")
                for k in found:
                    state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class InstanceNorm1d(_InstanceNorm):
    """Normalise each ``(sample, channel)`` of ``(N, C, L)`` (or ``(C, L)``) inputs over ``L``.

    Example::

        >>> torchish.nn.InstanceNorm1d(3)(torchish.randn(2, 3, 5)).shape
        torch.Size([2, 3, 5])
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalise each ``(sample, channel)`` of ``(N, C, H, W)`` (or ``(C, H, W)``) inputs over ``H, W``."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalise each ``(sample, channel)`` of ``(N, C, D, H, W)`` inputs over ``D, H, W``."""

    _no_batch_dim = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm1d` with ``num_features`` inferred from ``input.shape[1]`` at the first call, when it
    becomes an :class:`InstanceNorm1d`. As in PyTorch, ``affine`` and ``track_running_stats`` default to True here.

    Example::

        >>> m = torchish.nn.LazyInstanceNorm1d()
        >>> _ = m(torchish.randn(2, 3, 5))
        >>> m.num_features, type(m).__name__
        (3, 'InstanceNorm1d')
    """

    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm2d` with ``num_features`` inferred at the first call (see :class:`LazyInstanceNorm1d`).
    """

    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm3d` with ``num_features`` inferred at the first call (see :class:`LazyInstanceNorm1d`).
    """

    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
