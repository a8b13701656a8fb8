"""How the op registry (:mod:`.registry`) turns a failed kernel call into PyTorch's error: Python ints beyond
int64 read as PyTorch's argument parser reads them, operands on different devices, shapes that do not broadcast,
and 0-dim CPU tensors joining an op on an accelerator (allowed, as PyTorch allows them)."""
from __future__ import annotations

import jax
import numpy as np

from .. import _dtype
from .._tensor import Tensor


def unsigned_numbers(args):
    """``args`` with each Python int beyond int64 as PyTorch's argument parser reads it: an int in [2^63, 2^64) is a
    uint64 number, which joins the promotion as an integer and is converted to the result type (wrapping into an
    integer type: ``int64_t + 2**63`` is ``t - 2**63``); one outside [-2^63, 2^64) is an OverflowError. A bool tensor
    with such a number is PyTorch's refused promotion of Bool and UInt64. None when no argument is such an int."""
    if not any(type(a) is int and not -2 ** 63 <= a < 2 ** 63 for a in args):
        return None
    tensors = [(a.dtype, 2 if a.ndim else 1) for a in args if isinstance(a, Tensor)]
    dt = _dtype.result_type_from_keys(tuple(tensors)) if tensors else _dtype.int64
    out = []
    for a in args:
        if type(a) is int and not -2 ** 63 <= a < 2 ** 63:
            if a < -2 ** 63 or a >= 2 ** 64:
                raise OverflowError("can't convert negative int to unsigned" if a < 0 else "int too big to convert")
            if dt is _dtype.bool:
                raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                                   "promote Bool and UInt64")
            a = a - 2 ** 64 if dt.category <= _dtype._INT else float(a)
        out.append(a)
    return tuple(out)


def translate_error(op, args, static, e):
    """Turn a JAX error raised by bad user input into the builtin exception PyTorch raises, with its wording."""
    mixed = _device_mismatch(args)
    if mixed is not None:
        return mixed
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    if len(shapes) >= 2 and not _broadcastable(shapes):
        nd = max(len(sh) for sh in shapes)
        padded = [(1,) * (nd - len(sh)) + sh for sh in shapes]
        for i in range(nd - 1, -1, -1):
            sizes = [p[i] for p in padded if p[i] != 1]
            if any(n != sizes[0] for n in sizes):
                other = next(n for n in sizes if n != sizes[0])
                return RuntimeError(f"The size of tensor a ({sizes[0]}) must match the size of tensor b ({other}) "
                                    f"at non-singleton dimension {i}")
    msg = str(e).split("\n")[0]
    return RuntimeError(f"{op.name}: {msg}")


def _device_mismatch(args):
    """PyTorch's error when the arguments of one op live on different devices (None when they do not)."""
    from .. import _device
    devs, _ = _device.committed_devices([a._v for a in args if isinstance(a, Tensor)])
    by_name = {}
    for d in devs:  # host devices of a multi-device CPU run are all "cpu": not a mismatch PyTorch would see
        by_name.setdefault(_device.from_jax(d), d)
    return _device.mixed_devices_error(list(by_name.values())) if len(by_name) > 1 else None


def _cpu_scalars_moved(args, vals):
    """PyTorch lets a 0-dim CPU tensor join an op on an accelerator (``cuda_t * torch.tensor(2.)``): the values with
    such scalars moved to the other tensors' device, or None when the op's devices differ in another way."""
    from .. import _device
    cpu, other, scalars = [], set(), []
    for i, a in enumerate(args):
        v = vals[i]
        if not isinstance(a, Tensor) or not isinstance(v, jax.Array) or isinstance(v, jax.core.Tracer) \
                or not v.committed:
            continue
        dev = next(iter(v.devices()))
        if _device.from_jax(dev).type == "cpu":
            cpu.append(i)
            if v.ndim == 0:
                scalars.append(i)
        else:
            other.add(dev)
    if len(other) != 1 or not scalars or len(scalars) != len(cpu):
        return None
    target = next(iter(other))
    return [jax.device_put(v, target) if i in scalars else v for i, v in enumerate(vals)]


def _broadcastable(shapes):
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False
