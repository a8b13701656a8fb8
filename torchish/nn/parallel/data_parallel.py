"""``DataParallel``: one process splitting each batch over several devices and gathering the outputs.

The same SPMD machinery as :class:`DistributedDataParallel` (parameters replicated over a mesh of ``device_ids``,
inputs split along ``dim``), plus PyTorch's gather: outputs come back whole on ``output_device`` (default the
first device) when run eagerly, so targets created on the default device work with them unchanged; the gradient
flows back to the devices that computed each part. Inside ``torchish.compile`` the outputs are replicated over
the mesh instead (one program spans all the devices).

On a host with no accelerator and a single JAX device, ``DataParallel`` is PyTorch's CPU one: it keeps the module
(``device_ids == []``) and just calls it; :func:`data_parallel` raises there, as PyTorch's does.
"""
from __future__ import annotations

import jax
import numpy as np

from ..._tensor import Tensor
from ...distributed.device_mesh import DeviceMesh
from ...distributed.tensor import redistribute
from ... import _device
from ...ops import tracing
from ..module import Module
from .distributed import DistributedDataParallel


def _host_only():
    """No accelerator and one JAX device: where PyTorch finds no device type to parallelise over."""
    return not _device.accelerators() and len(jax.devices()) == 1


class DataParallel(DistributedDataParallel):
    """``torch.nn.DataParallel``: split the batch over ``device_ids`` (default: all devices), gather outputs on
    ``output_device``.

    Example:
        >>> model = DataParallel(torchish.nn.Linear(4, 2))
        >>> out = model(torchish.randn(16, 4))      # computed on all devices, returned on the first one
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        if _host_only():                  # PyTorch without a device type: a plain wrapper
            Module.__init__(self)
            self.module = module
            self.device_ids = []
            return
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
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        out = super().forward(*inputs, **kwargs)
        if tracing.active():
            target = self.device_mesh.replicated()
        else:
            target = jax.sharding.SingleDeviceSharding(self._output_device)
        return jax.tree_util.tree_map(lambda x: redistribute(x, target) if isinstance(x, Tensor) else x, out,
                                      is_leaf=lambda x: isinstance(x, Tensor))

    def extra_repr(self):
        return super().extra_repr() if self.device_ids else ""


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """``torch.nn.parallel.data_parallel``: ``module(*inputs, **module_kwargs)`` evaluated as
    :class:`DataParallel` does (the functional form).

    Example:
        >>> out = data_parallel(torchish.nn.Linear(4, 2), torchish.randn(16, 4))   # needs several devices
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if _host_only():
        raise RuntimeError("device type could not be determined")
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
