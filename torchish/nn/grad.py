"""``torch.nn.grad``: the gradients of a convolution with respect to its input or its weight, given the gradient
of its output (``conv2d_input(input.shape, weight, grad_output)``).

Each is the vector-Jacobian product of the convolution itself, taken through torchish's autograd at a zero point
(the convolution is linear in each argument, so the point does not matter); the result stays differentiable with
respect to the given tensors when grad mode is on.
"""
from __future__ import annotations

from ..autograd.engine import grad as _grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..ops.creation import zeros
from .modules.utils import _pair, _single, _triple  # noqa: F401  (torch.nn.grad._pair, ...)
from ._functional.conv import conv1d, conv2d, conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _vjp(conv, x, w, grad_output, wrt, stride, padding, dilation, groups):
    """The gradient of ``conv(x, w)`` with respect to ``x`` (``wrt == 0``) or ``w`` under ``grad_output``."""
    create = is_grad_enabled() and (grad_output.requires_grad or (x if wrt else w).requires_grad)
    with enable_grad():
        leaf = (x, w)[wrt].detach().requires_grad_(True)
        args = (leaf, w) if wrt == 0 else (x, leaf)
        out = conv(*args, stride=stride, padding=padding, dilation=dilation, groups=groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"Expected grad_output of shape {tuple(out.shape)}, but got "
                               f"{tuple(grad_output.shape)}")
        return _grad(out, leaf, grad_output, create_graph=create)[0]


def _input_fn(conv, doc_dim):
    def grad_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        x = zeros(tuple(input_size), dtype=weight.dtype, device=weight.device)
        return _vjp(conv, x, weight, grad_output, 0, stride, padding, dilation, groups)
    grad_input.__doc__ = (f"The gradient of ``conv{doc_dim}d(input, weight)`` with respect to an input of shape "
                          f"``input_size``, given ``grad_output``.")
    return grad_input


def _weight_fn(conv, doc_dim):
    def grad_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        w = zeros(tuple(weight_size), dtype=input.dtype, device=input.device)
        return _vjp(conv, input, w, grad_output, 1, stride, padding, dilation, groups)
    grad_weight.__doc__ = (f"The gradient of ``conv{doc_dim}d(input, weight)`` with respect to a weight of shape "
                           f"``weight_size``, given ``grad_output``.")
    return grad_weight


conv1d_input, conv1d_weight = _input_fn(conv1d, 1), _weight_fn(conv1d, 1)
conv2d_input, conv2d_weight = _input_fn(conv2d, 2), _weight_fn(conv2d, 2)
conv3d_input, conv3d_weight = _input_fn(conv3d, 3), _weight_fn(conv3d, 3)
for _name in __all__:
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
