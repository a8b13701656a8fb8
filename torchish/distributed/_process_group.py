"""The process group: who takes part in a distributed run, mapped onto ``jax.distributed``.

torchish follows JAX's *single controller per host* model: one Python process per host drives all of that host's
devices, and XLA's SPMD partitioner runs one program over every device of every process. So:

* ``init_process_group`` calls ``jax.distributed.initialize`` when several processes are configured (``env://``
  with torchrun's ``MASTER_ADDR``/``MASTER_PORT``/``WORLD_SIZE``/``RANK``, or ``tcp://host:port`` with
  ``world_size``/``rank``); with one process it only marks the group initialised.
* ``get_rank()``/``get_world_size()`` count *processes* (``jax.process_index()``/``jax.process_count()``), as in
  PyTorch. This is what data loading needs: ``DistributedSampler`` gives each process its slice of the data, and
  the process splits its batch over its local devices (the data-parallel mesh). On one host the world size is 1
  whatever the number of devices, and the process loads the whole global batch.
* The devices are the ranks of the collectives and of data parallelism: ``get_world_size(mesh)`` (or
  ``default_mesh().size()``) is the number of devices along the mesh, see ``torchish.distributed._collectives``.
"""
from __future__ import annotations

import os

import jax
import numpy as np

from .device_mesh import DeviceMesh

_BACKENDS = ("jax", "gloo", "nccl", "mpi", "ucc", "xla", "cpu:gloo,cuda:nccl")


class ReduceOp:
    """Reduction operations of ``all_reduce``/``reduce``/``reduce_scatter`` (``torch.distributed.ReduceOp``)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


class _World:
    initialized = False
    backend = None
    mesh = None            # the default data-parallel DeviceMesh, made on first use
    started_jax = False    # whether this module called jax.distributed.initialize


def is_available() -> bool:
    """Distributed support is always built in (it is JAX's)."""
    return True


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has been called (and not destroyed)."""
    return _World.initialized


def _env_rendezvous():
    """The ``env://`` init method's contract (as in PyTorch): the launcher's variables name the coordinator and
    this process. Returns ``(address or None, world_size or None, rank or None)``."""
    env = os.environ
    addr = env.get("MASTER_ADDR")
    port = env.get("MASTER_PORT")
    world = env.get("WORLD_SIZE")
    rank = env.get("RANK")
    return (f"{addr}:{port}" if addr and port else None, int(world) if world else None,
            int(rank) if rank else None)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the distributed run: ``jax.distributed.initialize`` when several processes take part, a no-op with one.

    Args:
        backend: accepted for compatibility (``"nccl"``, ``"gloo"``, ...): JAX picks the transport itself.
        init_method: ``"env://"`` (default: read ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``, ``RANK`` as set by
            ``torchrun``) or ``"tcp://host:port"``.
        world_size: number of processes (-1: from the environment).
        rank: this process's index (-1: from the environment).
        timeout: a ``datetime.timedelta`` for the coordinator's initialisation.

    Example:
        >>> import torchish.distributed as dist
        >>> dist.init_process_group()        # one process: nothing to connect
        >>> dist.get_world_size(), dist.get_rank()
        (1, 0)
    """
    if _World.initialized:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend must be a string, got {type(backend).__name__}")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    address, env_world, env_rank = None, None, None
    if init_method is None or init_method == "env://":
        address, env_world, env_rank = _env_rendezvous()
    elif isinstance(init_method, str) and init_method.startswith("tcp://"):
        address = init_method[len("tcp://"):]
    elif init_method is not None:
        scheme = str(init_method).split("://")[0]
        raise RuntimeError(f"No rendezvous handler for {scheme}:// (torchish.distributed supports env:// and "
                           "tcp://host:port)")
    world = world_size if world_size != -1 else (env_world if env_world is not None else 1)
    proc = rank if rank != -1 else (env_rank if env_rank is not None else 0)
    if world < 1 or not 0 <= proc < world:
        raise ValueError(f"Invalid rank {proc} for world size {world}")
    if world > 1 and jax.process_count() == 1:
        if address is None:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment variable "
                             "MASTER_ADDR expected, but not set")
        kwargs = {}
        if timeout is not None:
            kwargs["initialization_timeout"] = int(timeout.total_seconds())
        jax.distributed.initialize(coordinator_address=address, num_processes=world, process_id=proc, **kwargs)
        _World.started_jax = True
    elif world > 1 and jax.process_count() != world:
        raise ValueError(f"world_size={world} but JAX is already initialised with {jax.process_count()} processes")
    _World.initialized = True
    _World.backend = backend or "jax"


def destroy_process_group(group=None):
    """Leave the distributed run (``jax.distributed.shutdown`` when this module started it)."""
    if not _World.initialized:
        raise AssertionError("Process group cannot be None")
    if _World.started_jax:
        jax.distributed.shutdown()
        _World.started_jax = False
    _World.initialized = False
    _World.backend = None
    _World.mesh = None


def get_backend(group=None) -> str:
    _require_init()
    return _World.backend


def get_rank(group=None) -> int:
    """This process's index (``jax.process_index()``); with a :class:`DeviceMesh` as ``group``, the mesh
    position of this process's first device along the mesh."""
    if isinstance(group, DeviceMesh):
        return group.get_rank()
    _require_init()
    return jax.process_index()


def get_world_size(group=None) -> int:
    """The number of processes (``jax.process_count()``); with a :class:`DeviceMesh` as ``group``, its number
    of devices (the ranks of the collectives)."""
    if isinstance(group, DeviceMesh):
        return group.size()
    _require_init()
    return jax.process_count()


def get_node_local_rank(fallback_rank=None) -> int:
    return jax.process_index() if fallback_rank is None else fallback_rank


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every process reaches this point (a no-op with one process)."""
    _require_init()
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices("torchish.distributed.barrier")
    return _Work() if async_op else None


class _Work:
    """What ``async_op=True`` returns: the work is already enqueued on the devices; ``wait()`` blocks on it."""

    def __init__(self, tensors=()):
        self._tensors = tuple(tensors)

    def wait(self, timeout=None):
        for t in self._tensors:
            jax.block_until_ready(t._d)
        return True

    def is_completed(self):
        return True

    def result(self):
        return list(self._tensors)


def _require_init():
    if not _World.initialized:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")


def default_mesh() -> DeviceMesh:
    """The default data-parallel mesh: all devices of all processes on one axis named ``"data"``."""
    if _World.mesh is None:
        _World.mesh = DeviceMesh(jax.sharding.Mesh(np.array(jax.devices()), ("data",)))
    return _World.mesh


def resolve_mesh(group) -> DeviceMesh:
    """``group=None`` -> the default mesh; a :class:`DeviceMesh` stays; anything else is an error."""
    if group is None:
        return default_mesh()
    if isinstance(group, DeviceMesh):
        return group
    raise TypeError(f"group must be None or a torchish.distributed.DeviceMesh, got {type(group).__name__}")
