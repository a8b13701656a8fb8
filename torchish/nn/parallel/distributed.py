"""``DistributedDataParallel``: the batch split over a device mesh, parameters replicated, gradients averaged by
XLA's collectives.

PyTorch runs one process per device and all-reduces gradients in buckets during ``backward()``. torchish runs one
program over all devices (SPMD): the wrapped module's parameters and buffers are copied to every device of the
mesh once, at wrap time; each forward lays its tensor inputs out split along ``dim`` (the batch) over the mesh;
XLA partitions every op accordingly. The loss of a global batch (a mean over it) then has the gradient PyTorch's
DDP produces (the average over ranks of each rank's local-mean gradient, for equal local batches): XLA inserts
the all-reduce itself, in the eager kernels and inside ``torchish.compile``'s single step program alike.

Every other Tensor that meets the model's outputs (targets, masks) must live on the same devices, as in PyTorch
every tensor must be on the module's device: split it like the batch with ``torchish.distributed.shard_batch(y)``
(the counterpart of ``y.to(rank)``). A compiled step's Tensor arguments must be laid out this way before the
call. With several processes (one per host), each process passes its own batch, as with PyTorch's DDP, and the
global batch is their concatenation.

What differs from PyTorch: gradients are global as soon as ``backward()`` returns, also inside :meth:`no_sync`
(PyTorch holds rank-local gradients there until the next synchronised backward). The accumulated gradient after
the synchronised step is the same; ``no_sync`` saves no communication. Batch statistics (BatchNorm) are global,
as with ``SyncBatchNorm``.
"""
from __future__ import annotations

import contextlib

import jax

from ..._tensor import Tensor
from ..module import Module
from ...distributed import _process_group as _pg
from ...distributed.device_mesh import DeviceMesh
from ...distributed.tensor import layout, shard_batch


def place_inputs(inputs, kwargs, mesh, dim):
    """Tensor leaves of ``(inputs, kwargs)`` split along ``dim`` over ``mesh`` (0-d ones replicated)."""
    def place(x):
        return shard_batch(x, mesh, dim) if isinstance(x, Tensor) else x
    return jax.tree_util.tree_map(place, (inputs, kwargs), is_leaf=lambda x: isinstance(x, Tensor))


def place_state(module, param_sharding, buffer_sharding):
    """Lay out every parameter of ``module`` (with its ``.grad``) as ``param_sharding(param)`` and every buffer
    as ``buffer_sharding``."""
    for p in module.parameters():
        sharding = param_sharding(p)
        p._set_value(layout(p._d, sharding))
        if p._gval is not None:
            p._gval._set_value(layout(p._gval._d, sharding))
    for b in module.buffers():
        if b is not None:
            b._set_value(layout(b._d, buffer_sharding))


class DistributedDataParallel(Module):
    """Data parallelism over a device mesh (``torch.nn.parallel.DistributedDataParallel``).

    Args:
        module: the model; its parameters and buffers are replicated over the mesh (in place).
        dim: the batch dimension of the inputs.
        device_mesh: a 1-D (or n-D: the batch is split over all its axes) ``DeviceMesh``; default: all devices.
        process_group: a ``DeviceMesh`` is accepted here too.
        device_ids, output_device, broadcast_buffers, bucket_cap_mb, find_unused_parameters, static_graph, ...:
            accepted for compatibility; SPMD needs none of them.

    Example:
        >>> model = DistributedDataParallel(torchish.nn.Linear(4, 2))
        >>> x = torchish.distributed.shard_batch(torchish.randn(16, 4))
        >>> model(x).sum().backward()          # model.module.weight.grad: the global gradient
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel expects an nn.Module, got {type(module).__name__}")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        if isinstance(process_group, DeviceMesh):
            device_mesh = process_group
        self.module = module
        self.device_mesh = _pg.resolve_mesh(device_mesh)
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self._place_parameters()

    def _place_parameters(self):
        replicated = self.device_mesh.replicated()
        place_state(self.module, lambda p: replicated, replicated)

    def forward(self, *inputs, **kwargs):
        inputs, kwargs = place_inputs(inputs, kwargs, self.device_mesh, self.dim)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients over several backward passes before one optimizer step (see the module
        docstring: the gradients are global throughout; the result after the synchronised backward is
        PyTorch's)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _set_static_graph(self):
        self.static_graph = True

    def extra_repr(self):
        return f"device_mesh={self.device_mesh!r}"
