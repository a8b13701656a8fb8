"""``SyncBatchNorm``: batch normalisation whose statistics span the whole data-parallel batch.

torchish runs data parallelism as one SPMD program (``torchish.nn.parallel``): a batch split over a device mesh is
one tensor, so the plain batch-norm kernel already reduces over all of it and no extra all-reduce is needed. What
remains of PyTorch's ``SyncBatchNorm`` is its surface: any input of at least 2 dims, PyTorch's errors (including
the one for a non-accelerator input in training while a process group is initialised), and
:meth:`SyncBatchNorm.convert_sync_batchnorm`.
"""
from __future__ import annotations

from ...distributed import _process_group as _pg
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over ``(N, C, *)`` inputs, synchronised over the data-parallel batch.

    Args:
        num_features: ``C``.
        eps, momentum, affine, track_running_stats, bias: as :class:`BatchNorm1d`.
        process_group: accepted for compatibility (the statistics span the mesh the input is laid out on).

    Example::

        >>> net = torchish.nn.Sequential(torchish.nn.Linear(4, 3), torchish.nn.BatchNorm1d(3))
        >>> net = torchish.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        >>> type(net[1]).__name__
        'SyncBatchNorm'
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training and _pg.is_initialized() and input.device.type != "cuda":
            raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replace every ``BatchNorm*d`` layer in ``module`` by a :class:`SyncBatchNorm` sharing its parameters
        and buffers (in place; a ``BatchNorm*d`` passed itself is returned converted)."""
        root = cls._convert_one(module, process_group)
        # an explicit walk instead of recursion: (converted parent, child name, original child)
        stack = [(root, name, child) for name, child in reversed(list(module.named_children()))]
        while stack:
            parent, name, child = stack.pop()
            converted = cls._convert_one(child, process_group)
            parent.add_module(name, converted)
            stack.extend((converted, n, c) for n, c in reversed(list(child.named_children())))
        return root

    @classmethod
    def _convert_one(cls, module, process_group):
        """``module`` itself, or a :class:`SyncBatchNorm` sharing its state when it is a batch-norm layer."""
        if not isinstance(module, _BatchNorm):
            return module
        out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                  process_group, bias=module.bias is not None)
        if module.affine:
            out.weight = module.weight
            out.bias = module.bias
        out.running_mean = module.running_mean
        out.running_var = module.running_var
        out.num_batches_tracked = module.num_batches_tracked
        out.training = module.training
        if hasattr(module, "qconfig"):
            out.qconfig = module.qconfig
        return out
