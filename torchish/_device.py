"""Devices: PyTorch's ``device("cpu" | "cuda:0")`` mapped onto JAX devices.

``cuda`` names the first accelerator backend JAX has (GPU, or TPU where there is no GPU), so that scripts written
``device = "cuda" if torch.cuda.is_available() else "cpu"`` use the accelerator on any JAX platform. The other
accelerator names PyTorch knows (``xla``, ``mps``, ...) parse and print as themselves and map to the same
accelerator. Without one, using an accelerator device fails as it does in a CPU-only PyTorch build.
"""
from __future__ import annotations

import functools
import os
import re

import jax
import jax.numpy as jnp
import numpy as np

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
          "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")
_NO_CUDA = "Torch not compiled with CUDA enabled"
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


class device:
    """A device: ``torchish.device("cuda:1")``, ``device("cpu")``, ``device("cuda", 0)``, ``device(0)``.

    Used as a context manager it becomes the default device of the creation functions inside the block.

    Example:
        >>> torchish.device("cuda:1")
        device(type='cuda', index=1)
        >>> str(torchish.device("cuda", 1))
        'cuda:1'
    """

    __slots__ = ("type", "index")

    def __init__(self, type=None, index=None, *, device=None):
        if device is not None:
            type = device
        if isinstance(type, _device_cls()):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            accs = accelerators()
            if not accs:
                raise RuntimeError(_NO_ACCELERATOR)
            type, index = "cuda", type
        if not isinstance(type, str) or (index is not None and not isinstance(index, int)):
            got = ", ".join(x.__class__.__name__ for x in (type, index) if x is not None)
            raise TypeError(f"device() received an invalid combination of arguments - got ({got}), but expected "
                            "one of:\n * (torch.device device)\n * (str type, int index = -1)\n")
        m = _DEVICE_RE.fullmatch(type)
        if m is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        name, idx = m.group(1), m.group(2)
        if name not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: {type}")
        if idx is not None:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = name
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        _ENTERED.append(_Default.device)  # (one stack, as PyTorch's mode stack: the same device object may nest)
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        _Default.device = _ENTERED.pop()
        return False


_ENTERED = []  # the default device each ``with torch.device(...)`` block found, innermost last


def _device_cls():
    return device


@functools.lru_cache(maxsize=None)
def accelerators():
    """The JAX devices that ``cuda`` maps to: GPUs if there are any, else TPUs, else none.

    ``TORCHISH_HOST_ACCELERATOR=1`` (for tests on machines without one) makes the host CPU devices after the first
    stand for ``cuda`` (run with ``XLA_FLAGS=--xla_force_host_platform_device_count=N``, N >= 2)."""
    if os.environ.get("TORCHISH_HOST_ACCELERATOR") == "1":
        return tuple(jax.devices("cpu")[1:])
    for backend in ("gpu", "tpu"):
        try:
            devs = jax.devices(backend)
        except RuntimeError:
            continue
        if devs:
            return tuple(devs)
    return ()


@functools.lru_cache(maxsize=None)
def _cpu_devices():
    return tuple(jax.devices("cpu"))


def cpu() -> jax.Device:
    """The host CPU's JAX device (where PyTorch keeps host-side metadata such as ``batch_sizes``)."""
    return _cpu_devices()[0]


class _Current:
    """The accelerator index ``cuda`` (without an index) means: ``torchish.cuda.set_device``."""

    index = 0


def current_index() -> int:
    return _Current.index


def set_current_index(index: int):
    _Current.index = index


def to_jax(dev) -> jax.Device:
    """The JAX device a torchish device (or string, or accelerator index) stands for; fails like PyTorch's
    CPU-only build when there is no accelerator."""
    dev = dev if isinstance(dev, device) else device(dev)
    if dev.type == "cpu":
        return cpu()
    if dev.type == "meta":
        raise NotImplementedError("torchish has no meta device; use shapes via jax.eval_shape instead")
    accs = accelerators()
    if not accs:
        if dev.type == "cuda":
            raise AssertionError(_NO_CUDA)
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    idx = dev.index if dev.index is not None else _Current.index
    if idx >= len(accs):
        raise RuntimeError("CUDA error: invalid device ordinal")
    return accs[idx]


@functools.lru_cache(maxsize=64)
def from_jax(jdev) -> device:
    """The torchish device of a JAX device."""
    accs = accelerators()
    if jdev in accs:
        return device("cuda", accs.index(jdev))
    if jdev.platform == "cpu":
        return device("cpu")
    return device("cuda", jdev.id)


def placement(v):
    """Where a new array beside ``v`` goes (``device=`` of jnp's constructors): ``v``'s sharding when it is a
    concrete array committed to its device(s), else None (JAX's default device, uncommitted: follows the arrays
    it is combined with)."""
    if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer) and v.committed:
        return v.sharding
    return None


_SHARDINGS = {}        # jax device -> its SingleDeviceSharding (for put)
_FAST_PUT = [None]     # whether jaxlib's batched_device_put works here: None until first tried


def _fast_put(arr, jdev):
    from jax._src import core
    from jax._src.lib import xla_client
    sharding = _SHARDINGS.get(jdev)
    if sharding is None:
        sharding = _SHARDINGS[jdev] = jax.sharding.SingleDeviceSharding(jdev)
    return xla_client.batched_device_put(core.ShapedArray(arr.shape, arr.dtype), sharding, [arr], [jdev], True)


def put(arr: np.ndarray, jdev) -> jax.Array:
    """``jax.device_put(arr, jdev)`` for a numpy array: the array committed to that device. Calls jaxlib's
    transfer directly (4 us instead of jax.device_put's 20 us, which was most of ``torchish.tensor(ndarray)``);
    where that private entry point is missing or gives something else (another jax version), jax.device_put."""
    if type(arr) is np.ndarray:
        ok = _FAST_PUT[0]
        if ok:
            return _fast_put(arr, jdev)
        if ok is None:
            try:
                out = _fast_put(arr, jdev)
                ok = (out.shape == arr.shape and out.dtype == arr.dtype and out.committed and
                      out.devices() == {jdev} and np.asarray(out).tobytes() == arr.tobytes())
            except Exception:  # noqa: BLE001  (whatever went wrong: the public path from now on)
                ok = False
            _FAST_PUT[0] = ok
            if ok:
                return out
    return jax.device_put(arr, jdev)


def uncommitted(v):
    """A copy of small array ``v`` on JAX's default device, uncommitted, so that a computation takes it along to
    wherever its other inputs live (a generator key meeting sharded arrays). Goes through the host."""
    return jnp.asarray(np.asarray(v))


def committed_devices(values):
    """The distinct JAX devices of the concrete arrays among ``values`` committed to ONE device (in order of first
    appearance), and whether any array is committed to several (sharded or replicated)."""
    devs, sharded = [], False
    for v in values:
        if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer) and v.committed:
            ds = v.devices()
            if len(ds) > 1:
                sharded = True
                continue
            d = next(iter(ds))
            if d not in devs:
                devs.append(d)
    return devs, sharded


def mixed_devices_error(devs, where=""):
    """PyTorch's error for one computation over arrays on (at least) the two JAX devices ``devs[:2]``."""
    first, second = (from_jax(d) for d in devs[:2])
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {second} "
                        f"and {first}!{where}")


class _Default:
    device = device("cpu")


def get_default_device() -> device:
    """Where creation functions put tensors when no ``device=`` is given (CPU, as in PyTorch)."""
    return _Default.device


def set_default_device(dev):
    """``torchish.set_default_device("cuda")``: change where new tensors are created."""
    new = device("cpu") if dev is None else device(dev)
    if new.type != "meta":
        to_jax(new)  # fail now, not at the first creation, when the device does not exist
    _Default.device = new
