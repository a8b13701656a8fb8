"""``parameters_to_vector`` / ``vector_to_parameters``: flatten parameters into one vector and back."""
from __future__ import annotations

from ..._tensor import Tensor


def _check_same_device(params):
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")


def parameters_to_vector(parameters) -> Tensor:
    """One 1-D tensor holding every parameter, flattened, in order (differentiable)."""
    from ...ops.join import cat
    params = list(parameters)
    _check_same_device(params)
    return cat([p.view(-1) for p in params])  # (view, as PyTorch: a non-contiguous parameter raises)


def vector_to_parameters(vec, parameters) -> None:
    """Copy slices of the 1-D ``vec`` into ``parameters`` (their ``.data``; the objects keep their identity)."""
    if not isinstance(vec, Tensor):
        from ..module import typename
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    params = list(parameters)
    _check_same_device(params)
    pointer = 0
    for p in params:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
