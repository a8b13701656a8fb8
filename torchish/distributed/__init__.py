"""``torchish.distributed``: data-parallel and sharded training on JAX's distributed engine.

There is no home-made communication layer: a :class:`DeviceMesh` is a ``jax.sharding.Mesh``, Tensors are laid out
over it with ``NamedSharding`` (:func:`~torchish.distributed.tensor.distribute_tensor`), and XLA's SPMD partitioner
inserts the collectives inside each program. One process per host drives all of its devices; several hosts join
through :func:`init_process_group` (``jax.distributed.initialize``). See ``_process_group`` for what rank and world
size mean, ``_collectives`` for the collectives' model, ``torchish.nn.parallel.DistributedDataParallel`` and
:func:`~torchish.distributed.fsdp.fully_shard` for training.

Example:
    >>> import torchish.distributed as dist
    >>> dist.init_process_group()
    >>> t = torchish.arange(8.)                       # with 8 devices: rank r holds [r]
    >>> dist.all_reduce(t)                            # every rank now holds [28.]
"""
from __future__ import annotations

from ._process_group import (ReduceOp as ReduceOp, init_process_group as init_process_group,  # noqa: F401
                             destroy_process_group as destroy_process_group, is_available as is_available,
                             is_initialized as is_initialized,
                             get_backend as get_backend, get_rank as get_rank, get_world_size as get_world_size,
                             get_node_local_rank as get_node_local_rank, barrier as barrier,
                             default_mesh as default_mesh)
from ._collectives import (all_reduce as all_reduce, reduce as reduce, broadcast as broadcast,  # noqa: F401
                           all_gather as all_gather, all_gather_into_tensor as all_gather_into_tensor,
                           reduce_scatter as reduce_scatter, reduce_scatter_tensor as reduce_scatter_tensor,
                           all_gather_single as all_gather_single, reduce_scatter_single as reduce_scatter_single)
from .device_mesh import DeviceMesh as DeviceMesh, init_device_mesh as init_device_mesh  # noqa: F401
from . import tensor as tensor  # noqa: F401
from .tensor import (distribute_tensor as distribute_tensor, shard_batch as shard_batch, Shard as Shard,  # noqa: F401
                     Replicate as Replicate)
