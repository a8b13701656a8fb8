"""Placing Tensors on a device mesh: ``distribute_tensor`` with ``Shard``/``Replicate`` placements.

torchish has no separate DTensor class: a Tensor's value is a ``jax.Array``, and a jax.Array already is a global
array laid out over devices (its ``.sharding``). ``distribute_tensor`` therefore returns an ordinary Tensor with
the same global value, laid out as asked: the counterpart of PyTorch's ``x.to(rank)`` in a data-parallel script
(every Tensor that meets a mesh-placed parameter must live on the same devices, as in PyTorch every tensor must be
on the module's device). Inside ``torchish.compile`` the same call becomes a sharding constraint on the traced
value, so XLA's partitioner lays out the program accordingly.

Example:
    >>> import torchish
    >>> from torchish.distributed.tensor import distribute_tensor, Shard
    >>> from torchish.distributed.device_mesh import init_device_mesh
    >>> mesh = init_device_mesh("cpu", (torchish.distributed.default_mesh().size(),), mesh_dim_names=("data",))
    >>> x = distribute_tensor(torchish.ones(16, 4), mesh, [Shard(0)])   # rows split over the devices
"""
from __future__ import annotations

import jax

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..ops import tracing
from . import _process_group as _pg


class Shard:
    """Split a tensor dimension evenly over a mesh axis."""

    def __init__(self, dim: int):
        self.dim = dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"


class Replicate:
    """Keep a full copy of the tensor on every device of a mesh axis."""

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"


def spec_for(shape, mesh, placements):
    """The PartitionSpec entries (one per tensor dim) of ``placements`` (one per mesh axis)."""
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements length: "
                         f"{len(placements)}, and device_mesh.ndim: {mesh.ndim}.")
    spec = [[] for _ in shape]
    for axis, p in zip(mesh.mesh_dim_names, placements):
        if isinstance(p, Replicate):
            continue
        if not isinstance(p, Shard):
            raise TypeError(f"placements must be Shard(dim) or Replicate(), got {p!r}")
        d = p.dim + len(shape) if p.dim < 0 else p.dim
        if not 0 <= d < len(shape):
            raise IndexError(f"Shard(dim={p.dim}) is out of range for a tensor with {len(shape)} dimensions")
        spec[d].append(axis)
    out = []
    for d, axes in enumerate(spec):
        n = 1
        for a in axes:
            n *= mesh.jax_mesh.shape[a]
        if shape[d] % n:
            raise ValueError(f"cannot shard dimension {d} of size {shape[d]} evenly over {n} devices of mesh axes "
                             f"{tuple(axes)}; make it a multiple of {n}")
        out.append(None if not axes else axes[0] if len(axes) == 1 else tuple(axes))
    return tuple(out)


def layout(value, sharding, local=False):
    """``value`` laid out as ``sharding``: a transfer when concrete, a sharding constraint when traced. With
    ``local`` and several processes, ``value`` is this process's part of the global array (a batch loaded
    through ``DistributedSampler``): the processes' parts are concatenated along dim 0."""
    if tracing.active() or isinstance(value, jax.core.Tracer):
        return jax.lax.with_sharding_constraint(value, sharding)
    if local and jax.process_count() > 1 and value.is_fully_addressable:
        return jax.make_array_from_process_local_data(sharding, value)
    return jax.device_put(value, sharding)


class _Redistribute(Function):
    """Re-layout that autograd sees as the identity (eagerly, the gradient returns to the input's layout)."""

    @staticmethod
    def forward(ctx, x, sharding, local):
        v = x._d
        ctx.source = None if isinstance(v, jax.core.Tracer) or local else v.sharding
        return Tensor._make(layout(v, sharding, local))

    @staticmethod
    def backward(ctx, g):
        if ctx.source is None or isinstance(g._v, jax.core.Tracer):
            return g, None, None
        return redistribute(g, ctx.source), None, None  # the gradient goes back to where the input lives


def redistribute(t: Tensor, sharding, local=False) -> Tensor:
    """``t`` with its value laid out as ``sharding`` (differentiable; the same Tensor when nothing changes).
    ``local``: see :func:`layout`."""
    v = t._v
    if not isinstance(v, jax.core.Tracer) and not tracing.active() and getattr(t._d, "sharding", None) == sharding:
        return t
    if t._rg and STATE.grad_enabled:
        return _Redistribute.apply(t, sharding, local)
    return Tensor._make(layout(t._d, sharding, local))


def distribute_tensor(tensor: Tensor, device_mesh=None, placements=None, *, src_data_rank=0) -> Tensor:
    """A leaf Tensor with ``tensor``'s value laid out over ``device_mesh`` (default: the data-parallel mesh)
    by ``placements`` (one per mesh axis; default: replicated).

    Args:
        tensor: the full (global) value.
        device_mesh: a :class:`~torchish.distributed.DeviceMesh`.
        placements: ``[Shard(dim)]`` to split ``dim`` over the axis, ``[Replicate()]`` to copy it.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"distribute_tensor expects a Tensor, got {type(tensor).__name__}")
    mesh = _pg.resolve_mesh(device_mesh)
    placements = tuple(placements) if placements is not None else (Replicate(),) * mesh.ndim
    sharding = mesh.sharding(spec_for(tuple(tensor.shape), mesh, placements))
    out = Tensor._make(layout(tensor._d, sharding))
    if tensor._rg:
        out.requires_grad_(True)
    return out


def shard_batch(tensor: Tensor, device_mesh=None, dim: int = 0) -> Tensor:
    """This process's batch ``tensor`` split along ``dim`` over every axis of ``device_mesh`` (the batch of data
    parallelism; what ``DistributedDataParallel`` does to its inputs; use it for targets). With several processes
    the global batch is the concatenation of the processes' batches, as with PyTorch's DDP. 0-d tensors are
    replicated. Differentiable.

    Example:
        >>> y = shard_batch(torchish.zeros(16, 1))       # with 8 devices: 2 rows on each
    """
    mesh = _pg.resolve_mesh(device_mesh)
    if tensor.ndim == 0:
        return redistribute(tensor, mesh.replicated())
    d = dim + tensor.ndim if dim < 0 else dim
    spec = [None] * tensor.ndim
    spec[d] = mesh.axis
    rows = tensor.shape[d] * (jax.process_count() if not tracing.active() else 1)
    if rows % mesh.size():
        raise ValueError(f"the batch dimension {d} has size {rows}, which cannot be split evenly over "
                         f"{mesh.size()} devices; use a batch size that is a multiple of {mesh.size()}")
    return redistribute(tensor, mesh.sharding(spec), local=True)
