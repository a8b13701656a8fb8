"""``torch.fx.passes.shape_prop``: run a GraphModule on example inputs and record, in each node's
``meta['tensor_meta']``, the shape, dtype, strides and memory format of the tensor(s) it produced."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate


class TensorMetadata(NamedTuple):
    """What :class:`ShapeProp` records of one tensor (PyTorch's field names and order)."""
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity: bool = True) -> TensorMetadata:
    import torchish
    memory_format = None
    if include_contiguity:
        for candidate in (torchish.contiguous_format, torchish.channels_last, torchish.channels_last_3d):
            if result.is_contiguous(memory_format=candidate):
                memory_format = candidate
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """``ShapeProp(gm).propagate(*example_inputs)`` fills ``node.meta['tensor_meta']`` (a :class:`TensorMetadata`,
    or a structure of them for nodes returning several tensors) and ``node.meta['type']``.

    Example::

        >>> ShapeProp(gm).propagate(torchish.randn(2, 3))  # doctest: +SKIP
        >>> [n.meta["tensor_meta"].shape for n in gm.graph.nodes if "tensor_meta" in n.meta]  # doctest: +SKIP
    """

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n):
        from ..._tensor import Tensor
        result = super().run_node(n)
        found = []

        def extract(obj):
            if isinstance(obj, Tensor):
                found.append(True)
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on ``args``, recording each node's metadata; returns the result."""
        return super().run(*args)
