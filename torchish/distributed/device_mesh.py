"""``DeviceMesh``: PyTorch's n-D arrangement of ranks, backed by a ``jax.sharding.Mesh``.

A mesh names its axes (``("data",)``, or ``("replicate", "shard")`` for hybrid sharding); data parallelism
shards the batch over an axis and XLA inserts the collectives between the devices of that axis. Indexing a mesh by
axis name gives the sub-mesh of that axis (same devices, the other axes replicate).

Example:
    >>> from torchish.distributed.device_mesh import init_device_mesh
    >>> mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("replicate", "shard"))
    >>> mesh["shard"].size()
    4
"""
from __future__ import annotations

import math

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec


class DeviceMesh:
    """A set of devices arranged on named axes (``torch.distributed.device_mesh.DeviceMesh``).

    Args:
        mesh: the ``jax.sharding.Mesh`` (or, as in PyTorch, a device type and an array of device ids).
        mesh_dim_names: axis names when building from device ids.
    """

    def __init__(self, mesh, ids=None, *, mesh_dim_names=None, _dims=None):
        if not isinstance(mesh, jax.sharding.Mesh):
            ids = np.asarray(ids if ids is not None else range(len(_devices(mesh))))
            names = tuple(mesh_dim_names) if mesh_dim_names is not None else tuple(f"dim_{i}"
                                                                                   for i in range(ids.ndim))
            by_id = {d.id: d for d in _devices(mesh)}
            mesh = jax.sharding.Mesh(np.vectorize(by_id.__getitem__, otypes=[object])(ids), names)
        self.jax_mesh = mesh
        self._dims = tuple(_dims) if _dims is not None else tuple(mesh.axis_names)

    # ---- PyTorch's surface ----------------------------------------------------------------------------
    @property
    def device_type(self) -> str:
        return "cpu" if self.jax_mesh.devices.flat[0].platform == "cpu" else "cuda"

    @property
    def mesh_dim_names(self):
        return self._dims

    @property
    def ndim(self) -> int:
        return len(self._dims)

    @property
    def shape(self):
        return tuple(self.jax_mesh.shape[n] for n in self._dims)

    def size(self, mesh_dim=None) -> int:
        if mesh_dim is None:
            return math.prod(self.shape)
        return self.shape[self._dim_index(mesh_dim)]

    def get_rank(self) -> int:
        """The mesh position (row-major over this mesh's axes) of this process's first device."""
        local = jax.local_devices()[0]
        flat = list(self._ordered_devices())
        return flat.index(local) if local in flat else -1

    def get_local_rank(self, mesh_dim=None) -> int:
        if mesh_dim is None and self.ndim > 1:
            raise RuntimeError("Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.")
        name = self._dims[0 if mesh_dim is None else self._dim_index(mesh_dim)]
        local = jax.local_devices()[0]
        where = np.argwhere(self.jax_mesh.devices == local)
        return int(where[0][list(self.jax_mesh.axis_names).index(name)]) if len(where) else -1

    def __getitem__(self, names):
        names = (names,) if isinstance(names, str) else tuple(names)
        for n in names:
            if n not in self._dims:
                raise KeyError(f"Invalid mesh_dim_name {n!r} specified. Valid mesh_dim_names are {self._dims}.")
        return DeviceMesh(self.jax_mesh, _dims=names)

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and self.jax_mesh == other.jax_mesh and self._dims == other._dims

    def __hash__(self):
        return hash((self.jax_mesh, self._dims))

    def __repr__(self):
        ids = np.vectorize(lambda d: d.id)(self.jax_mesh.devices)
        return f"DeviceMesh('{self.device_type}', {ids.tolist()}, mesh_dim_names={self._dims})"

    # ---- for the sharding code --------------------------------------------------------------------------
    def sharding(self, spec=()) -> NamedSharding:
        """A ``NamedSharding`` over this mesh; ``spec`` entries are axis names (or tuples of names) per dim."""
        return NamedSharding(self.jax_mesh, PartitionSpec(*spec))

    def replicated(self) -> NamedSharding:
        return self.sharding(())

    @property
    def axis(self):
        """This mesh's axes as one PartitionSpec entry (a name, or a tuple of names for a several-axis mesh)."""
        return self._dims[0] if len(self._dims) == 1 else self._dims

    def _dim_index(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if mesh_dim not in self._dims:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh dimensions are: "
                               f"mesh_dim_names={self._dims}")
            return self._dims.index(mesh_dim)
        return mesh_dim

    def _ordered_devices(self):
        order = [list(self.jax_mesh.axis_names).index(n) for n in self._dims]
        rest = [i for i in range(self.jax_mesh.devices.ndim) if i not in order]
        return np.transpose(self.jax_mesh.devices, order + rest).reshape(-1)


def _devices(device_type):
    platform = {"cuda": None, "cpu": "cpu"}.get(device_type, None)
    return jax.devices(platform) if platform else jax.devices()


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A mesh over all devices of ``device_type`` (``"cpu"``, or ``"cuda"`` for the accelerator), shaped
    ``mesh_shape`` (its product must be the device count).

    Example:
        >>> mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("data",))
    """
    shape = tuple(mesh_shape)
    devs = _devices(device_type)
    if math.prod(shape) != len(devs):
        raise RuntimeError(f"Mesh shape {shape} needs {math.prod(shape)} devices but {len(devs)} "
                           f"{device_type} devices are available")
    if mesh_dim_names is not None:
        if len(mesh_dim_names) != len(shape):
            raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): "
                               f"{len(mesh_dim_names)} and len(mesh_shape):{len(shape)}.")
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name in "
                               f"mesh_dim_names {tuple(mesh_dim_names)}")
    names = tuple(mesh_dim_names) if mesh_dim_names is not None else tuple(f"dim_{i}" for i in range(len(shape)))
    return DeviceMesh(jax.sharding.Mesh(np.array(devs, dtype=object).reshape(shape), names))
