"""The meta device: tensors with a shape and a dtype and no data, as PyTorch's ``device="meta"``. They let a model be
built without memory (``with torch.device("meta"): model = Big()``, then ``model.to_empty(device="cpu")``) or serve
as a template whose parameters ``torch.func.functional_call`` replaces (``copy.deepcopy(model).to("meta")`` in
model ensembling). Ops on meta tensors infer their results' shapes and dtypes with ``jax.eval_shape`` of the op's
kernel; reading values (``tolist``, ``item``, ``numpy``, moving to a real device) fails as in PyTorch.
"""
from __future__ import annotations

import math

import jax
import numpy as np


class MetaArray:
    """A meta tensor's value: shape and dtype only."""

    __slots__ = ("shape", "dtype")
    weak_type = False

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def aval(self):
        return jax.ShapeDtypeStruct(self.shape, self.dtype)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


NO_DATA = "Cannot copy out of meta tensor; no data!"
TO_REAL = (NO_DATA + " Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving "
           "module from meta to a different device.")


def is_meta_device(device):
    """Whether ``device`` (a device, a string, or None for the default device) is the meta device."""
    from . import _device
    if device is None:
        device = _device.get_default_device()
    if isinstance(device, str):
        return device.split(":")[0] == "meta"
    return getattr(device, "type", None) == "meta"


def has_meta(vals):
    return any(type(v) is MetaArray for v in vals)


def eval_meta(kernel, vals):
    """The outputs of ``kernel(*vals)`` as MetaArrays, for inputs of which some are meta (the rest are taken by
    their shapes and dtypes too: PyTorch refuses to mix meta tensors with real ones, which the caller checks)."""
    specs = jax.tree_util.tree_map(lambda v: v.aval if type(v) is MetaArray else (
        jax.ShapeDtypeStruct(v.shape, v.dtype) if isinstance(v, jax.Array) else v), list(vals))  # (pytrees too)
    out = jax.eval_shape(kernel, *specs)
    return jax.tree_util.tree_map(lambda s: MetaArray(s.shape, s.dtype), out)


def mixed_error(vals):
    """PyTorch's error for a meta tensor meeting a real one in one op (None when every tensor is meta): the first
    tensor's device is the expected one (a real 0-dim tensor, a CPU scalar there, may join either)."""
    from . import _device
    devices = []
    for v in vals:
        if type(v) is MetaArray:
            devices.append("meta")
        elif isinstance(v, jax.Array) and v.ndim > 0:
            devices.append(_device.from_jax(next(iter(v.devices()))) if not isinstance(v, jax.core.Tracer) else "cpu")
    other = next((d for d in devices if str(d) != str(devices[0])), None) if devices else None
    if other is None:
        return None
    return RuntimeError(f"Tensor on device {other} is not on the expected device {devices[0]}!")
