"""``DataParallel``: one process splitting each batch over several devices and gathering the outputs.

The same SPMD machinery as :class:`DistributedDataParallel` (parameters replicated over a mesh of ``device_ids``,
inputs split along ``dim``), plus PyTorch's gather: outputs come back whole on ``output_device`` (default the
first device) when run eagerly, so targets created on the default device work with them unchanged; the gradient
flows back to the devices that computed each part. Inside ``torchish.compile`` the outputs are replicated over
the mesh instead (one program spans all the devices).
"""
from __future__ import annotations

import jax
import numpy as np

from ..._tensor import Tensor
from ...distributed.device_mesh import DeviceMesh
from ...distributed.tensor import redistribute
from ...ops import tracing
from .distributed import DistributedDataParallel


class DataParallel(DistributedDataParallel):
    """``torch.nn.DataParallel``: split the batch over ``device_ids`` (default: all devices), gather outputs on
    ``output_device``.

    Example:
        >>> model = DataParallel(torchish.nn.Linear(4, 2))
        >>> out = model(torchish.randn(16, 4))      # computed on all devices, returned on the first one
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        devs = jax.devices()
        if device_ids is not None:
            ids = [d.index if hasattr(d, "index") else d for d in device_ids]
            for i in ids:
                if not isinstance(i, int) or not 0 <= i < len(devs):
                    raise RuntimeError("CUDA error: invalid device ordinal")
            devs = [devs[i] for i in ids]
        out = output_device.index if hasattr(output_device, "index") else output_device
        self._output_device = devs[0] if out is None else jax.devices()[out]
        mesh = DeviceMesh(jax.sharding.Mesh(np.array(devs, dtype=object), ("data",)))
        super().__init__(module, dim=dim, device_mesh=mesh)
        self.device_ids = [d.id for d in devs]
        self.output_device = self._output_device.id

    def forward(self, *inputs, **kwargs):
        out = super().forward(*inputs, **kwargs)
        if tracing.active():
            target = self.device_mesh.replicated()
        else:
            target = jax.sharding.SingleDeviceSharding(self._output_device)
        return jax.tree_util.tree_map(lambda x: redistribute(x, target) if isinstance(x, Tensor) else x, out,
                                      is_leaf=lambda x: isinstance(x, Tensor))
