"""Sharded data parallelism (FSDP-style): parameters, gradients and optimizer state split over a mesh axis.

Each parameter is laid out with a ``NamedSharding`` that splits one of its dimensions over the shard axis, so each
device stores ``1/N`` of it. Nothing else is needed: XLA's SPMD partitioner gathers a parameter where an op needs it
whole and reduce-scatters its gradient, and the optimizer's update (elementwise) keeps the parameter's layout, so
its state (momenta, Adam's moments) is created and kept sharded the same way.

Two spellings, as in PyTorch:

* :func:`fully_shard` (FSDP2): shards ``module``'s parameters in place and returns the module. On a 2-D mesh it is
  hybrid sharding (HSDP): replicated over the first axis, sharded over the second; the batch is split over both.
* :class:`FullyShardedDataParallel` (FSDP1): a wrapper like ``DistributedDataParallel`` whose parameters are
  sharded instead of replicated.

The dimension split is the first one whose size the shard axis divides (PyTorch pads dim 0 instead); a
parameter with no such dimension (a bias of size 1) stays replicated. ``shard_placement_fn(param)`` may return
``Shard(dim)`` to choose, or ``None`` for the default.

Example:
    >>> from torchish.distributed.fsdp import fully_shard
    >>> model = fully_shard(torchish.nn.Linear(8, 16))
    >>> model.weight.jax().sharding.spec
    PartitionSpec('data', None)
"""
from __future__ import annotations

import jax

from .._tensor import Tensor
from ..nn.module import Module
from ..nn.parallel.distributed import DistributedDataParallel, place_inputs, place_state
from . import _process_group as _pg
from .device_mesh import DeviceMesh
from .tensor import Shard


def _shard_spec(shape, axis_name, n, placement):
    if placement is not None:
        if not isinstance(placement, Shard):
            raise TypeError(f"shard_placement_fn must return Shard(dim) or None, got {placement!r}")
        d = placement.dim + len(shape) if placement.dim < 0 else placement.dim
        if not 0 <= d < len(shape) or shape[d] % n:
            raise ValueError(f"cannot shard dimension {placement.dim} of a parameter of shape {tuple(shape)} evenly "
                             f"over {n} devices")
        dims = [d]
    else:
        dims = [d for d, s in enumerate(shape) if s % n == 0]
    spec = [None] * len(shape)
    if dims:
        spec[dims[0]] = axis_name
    return tuple(spec)


def _shard_parameters(module, mesh, shard_placement_fn=None):
    """Lay out ``module``'s parameters (and grads) split over the last mesh axis; buffers are replicated."""
    axis = mesh.mesh_dim_names[-1]
    n = mesh.size(axis)

    def sharding_of(p):
        placement = shard_placement_fn(p) if shard_placement_fn is not None else None
        return mesh.sharding(_shard_spec(tuple(p.shape), axis, n, placement))
    place_state(module, sharding_of, mesh.replicated())


def _on_mesh(x, mesh):
    v = x._v
    if isinstance(v, jax.core.Tracer):
        return True  # inside a compiled step: the caller laid the arguments out
    return set(x._d.sharding.device_set) == set(mesh.jax_mesh.devices.flat)


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None, mp_policy=None,
                offload_policy=None, ignored_params=None):
    """Shard ``module``'s parameters over ``mesh`` in place (``torch.distributed.fsdp.fully_shard``).

    Inputs not yet on the mesh's devices are split along dim 0 over all mesh axes when the module is called.

    Args:
        module: an ``nn.Module`` (or a list of them).
        mesh: a 1-D ``DeviceMesh`` (FSDP) or 2-D (HSDP: replicate, shard); default: all devices.
        shard_placement_fn: ``param -> Shard(dim) | None``.
        reshard_after_forward, mp_policy, offload_policy: accepted for compatibility (XLA schedules the
            gathers; memory is its decision).

    Returns:
        ``module``.
    """
    modules = list(module) if isinstance(module, (list, tuple)) else [module]
    dmesh = _pg.resolve_mesh(mesh)
    if dmesh.ndim > 2:
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {dmesh.ndim}D")
    for m in modules:
        if not isinstance(m, Module):
            raise ValueError(f"fully_shard does not support containers that do not implement forward: {m}")
        _shard_parameters(m, dmesh, shard_placement_fn)

        def pre_hook(mod, args, kwargs, _mesh=dmesh):
            leaves = jax.tree_util.tree_leaves((args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))
            if all(_on_mesh(x, _mesh) for x in leaves if isinstance(x, Tensor)):
                return None
            return place_inputs(args, kwargs, _mesh, 0)
        m.register_forward_pre_hook(pre_hook, with_kwargs=True)
        m._fsdp_mesh = dmesh
    return module


class FullyShardedDataParallel(DistributedDataParallel):
    """``torch.distributed.fsdp.FullyShardedDataParallel``: :class:`DistributedDataParallel` whose parameters
    (hence gradients and optimizer state) are split over the mesh instead of replicated.

    Example:
        >>> model = FullyShardedDataParallel(torchish.nn.Linear(8, 16))
        >>> model.module.weight.jax().sharding.spec
        PartitionSpec('data', None)
    """

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=None, mixed_precision=None, ignored_modules=None,
                 param_init_fn=None, device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None, device_mesh=None):
        self._shard_placement_fn = None
        if isinstance(process_group, DeviceMesh) and device_mesh is None:
            device_mesh, process_group = process_group, None
        super().__init__(module, process_group=process_group, device_mesh=device_mesh)

    def _place_parameters(self):
        _shard_parameters(self.module, self.device_mesh, self._shard_placement_fn)
