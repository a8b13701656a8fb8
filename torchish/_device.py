"""Devices: PyTorch's ``device("cpu" | "cuda:0")`` mapped onto JAX devices.

``cuda`` names the first accelerator backend JAX has (GPU, or TPU where there is no GPU), so that scripts written
``device = "cuda" if torch.cuda.is_available() else "cpu"`` use the accelerator on any JAX platform.
"""
from __future__ import annotations

import functools

import jax


class device:
    """``torchish.device("cuda:1")``, ``device("cpu")``, ``device("cuda", 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
            type, _, idx = type.partition(":")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'") from None
        if type not in ("cpu", "cuda", "mps", "xla", "tpu", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, xla, tpu, meta device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = "cuda" if type in ("xla", "tpu", "mps") else type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@functools.lru_cache(maxsize=None)
def accelerators():
    """The JAX devices that ``cuda`` maps to: GPUs if there are any, else TPUs, else none."""
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


def to_jax(dev) -> jax.Device:
    """The JAX device a torchish device (or string) stands for; errors like PyTorch's when it is absent."""
    dev = dev if isinstance(dev, device) else device(dev)
    if dev.type == "cpu":
        return _cpu_devices()[0]
    if dev.type == "meta":
        raise NotImplementedError("torchish has no meta device; use shapes via jax.eval_shape instead")
    accs = accelerators()
    if not accs:
        raise AssertionError("Torch not compiled with CUDA enabled")
    idx = dev.index or 0
    if idx >= len(accs):
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {idx} requested, {len(accs)} available)")
    return accs[idx]


@functools.lru_cache(maxsize=64)
def from_jax(jdev) -> device:
    """The torchish device of a JAX device."""
    if jdev.platform == "cpu":
        return device("cpu")
    accs = accelerators()
    return device("cuda", accs.index(jdev) if jdev in accs else jdev.id)


class _Default:
    device = device("cpu")


def get_default_device() -> device:
    """Where creation functions put tensors when no ``device=`` is given (CPU, as in PyTorch)."""
    return _Default.device


def set_default_device(dev):
    """``torchish.set_default_device("cuda")``: change where new tensors are created."""
    _Default.device = device("cpu") if dev is None else device(dev)
    to_jax(_Default.device)  # fail now, not at the first creation, when the device does not exist
