"""Top-level spellings of Tensor in-place methods (``torch.abs_(x)``, ``torch.clamp_(x, 0, 1)``, ``torch.fill_``...)
and small Tensor queries PyTorch also exposes as functions (``torch.is_signed``, ``torch.get_device``...).

Each function calls the Tensor method of the same name, so checks, errors and the written result are the method's.

Example:
    >>> import torchish as torch
    >>> x = torch.tensor([-1.0, 2.0])
    >>> torch.abs_(x) is x
    True
"""
from __future__ import annotations

from .._tensor import Tensor

__all__ = []

_INPLACE = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
            "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
            "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "expm1_", "fill_",
            "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_",
            "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_",
            "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "trunc_", "xlogy_", "zero_", "resize_as_")


def _forward(name):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``."
    return fn


for _name in _INPLACE:
    globals()[_name] = _forward(_name)
    __all__.append(_name)
del _name


def fill(input, value):
    """A new tensor of ``input``'s shape and dtype filled with ``value`` (differentiable: a zero gradient)."""
    from .copying import fill as _fill  # (FillBackward0/1: PyTorch's out-of-place overloads)
    return _fill(input, value)


def is_inference(input):
    return input.is_inference()


def is_signed(input):
    return input.is_signed()


def get_device(input):
    return input.get_device()


__all__ += ["fill", "is_inference", "is_signed", "get_device"]
