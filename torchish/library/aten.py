"""``torchish.ops.aten``: handles that name PyTorch's ATen operators (``torch.ops.aten.mm``).

torchish runs its own op registry, not ATen, so these handles exist to *name* operators the way PyTorch does:
they are the keys of :class:`torchish.utils.flop_counter.FlopCounterMode`'s counts (which report the ATen products
PyTorch's decomposition would run), they print and compare as PyTorch's packets (``aten.mm``,
``<OpOverloadPacket(op='aten.mm')>``), and :func:`register_flop_formula` accepts them. Calling one runs the
``torchish`` function of the same name where there is one (``torch.ops.aten.mm(a, b)`` is ``torchish.mm(a, b)``;
arguments it refuses are a RuntimeError, as PyTorch's schema matching refuses them); an ATen-only operator
(``convolution_backward``) cannot be called.

    >>> torchish.ops.aten.mm
    <OpOverloadPacket(op='aten.mm')>
"""
from __future__ import annotations

from .registry import OpOverloadPacket

# the ATen operators torchish can name without a torchish function of the same name (FlopCounterMode's formulas)
KNOWN = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "dot", "_scaled_mm", "convolution", "_convolution",
    "cudnn_convolution", "convolution_overrideable", "_slow_conv2d_forward", "convolution_backward",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention_backward", "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_flash_attention_forward", "_flash_attention_backward", "_efficient_attention_forward",
    "_efficient_attention_backward",
})


def _function(name):
    """The torchish function an ATen operator's call runs: ``torchish.<name>``, else the Tensor method
    (``aten.view(x, [2, 3])``, ``aten.expand``), else ``torchish.nn.functional.<name>`` (``aten.linear``); None
    for an ATen-only operator."""
    import torchish
    for holder in (torchish, torchish.Tensor, torchish.nn.functional):
        fn = getattr(holder, name, None)
        if callable(fn) and not isinstance(fn, type):
            return fn
    return None


class AtenPacket(OpOverloadPacket):
    """``torchish.ops.aten.<name>``: one per name, so identity, equality and hashing follow the name."""

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        if name == "default":
            return self
        return super().__getattr__(name)

    def __call__(self, *args, **kwargs):
        fn = _function(self.__name__)
        if fn is None:
            raise RuntimeError(f"torchish cannot run the ATen operator aten::{self.__name__} directly; call the "
                               "torchish function that computes it")
        try:
            return fn(*args, **kwargs)
        except TypeError as e:  # (PyTorch binds an ATen call by the operator's schemas, not by the Python API's
            # parser: arguments no schema takes are its RuntimeError, whose first line this is for the overloaded
            # operators; the Python API's words follow)
            raise RuntimeError(f"Overloaded torch operator invoked from Python failed to match any schema:\n{e}") \
                from None

    def __eq__(self, other):
        return isinstance(other, AtenPacket) and other.__name__ == self.__name__

    def __hash__(self):
        return hash(("aten", self.__name__))


class AtenNamespace:
    """``torchish.ops.aten``: a packet for each ATen operator name torchish knows (see :data:`KNOWN`) and for each
    public ``torchish`` function, Tensor method and ``nn.functional`` function."""

    name = "aten"

    def __init__(self):
        self._packets = {}

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        packet = self._packets.get(op)
        if packet is None:
            if op not in KNOWN and _function(op) is None:
                raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{op}'")
            packet = self._packets[op] = AtenPacket(f"aten::{op}")
        return packet

    def __repr__(self):
        return "<module 'torch.ops.aten' from 'torch.ops'>"


ATEN = AtenNamespace()
