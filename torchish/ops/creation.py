"""The creation family's import path: the functions of ``from_data`` (tensor/as_tensor/asarray/from_numpy),
``filled`` (zeros/ones/full/empty, ``*_like``, ``new_*``, eye, tril/triu_indices) and ``ranges``
(arange/range/linspace/logspace), re-exported, and complex()/polar(), tensors built from two real parts."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from . import filled as _filled, from_data as _from_data, ranges as _ranges
from .elementwise import exact_out
from .filled import *  # noqa: F401,F403
from .from_data import *  # noqa: F401,F403
from .from_data import place  # noqa: F401  (the leaf-tensor maker other modules build on)
from .ranges import *  # noqa: F401,F403
from .registry import Family as _Family

__all__ = [*_from_data.__all__, *_filled.__all__, *_ranges.__all__]
_public = _Family(globals()).public


def _check_parts(a, b):
    """PyTorch's checks of complex()/polar() operands: two floating tensors of one dtype."""
    for t, arg in ((a, "real"), (b, "imag")):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    names = [_dtype.scalar_type_name(t.dtype) for t in (a, b)]
    if not all(t.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) for t in (a, b)):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {names[0]} and "
                           f"{names[1]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {names[0]} but got scalar type {names[1]} for second "
                           "argument")


_PARTS_OUT = exact_out("Expected object of scalar type {expected} but got scalar type {out} for argument 'out'")


@_PARTS_OUT
def complex(real, imag):
    from .registry import apply, defop
    _check_parts(real, imag)
    global _COMPLEX
    if "_COMPLEX" not in globals():
        _COMPLEX = defop("complex", lambda a, b: jax.lax.complex(*jnp.broadcast_arrays(a, b)),
                         grad_name="ComplexBackward0")
    return apply(_COMPLEX, (real, imag))


def _polar_vjp(g, r, theta, out):
    """PyTorch's polar_backward: ``real(conj(g) * sgn(out))`` for abs (so a negative abs flips its gradient's
    sign) and ``real(conj(g) * out * 1j)`` for angle."""
    mag = jnp.abs(out)
    sgn = jnp.where(mag == 0, jnp.zeros((), out.dtype), out / jnp.where(mag == 0, 1, mag))
    gc = jnp.conj(g)
    return jnp.real(gc * sgn), jnp.real(gc * out * 1j)


@_PARTS_OUT
def polar(abs, angle):
    from . import registry
    from .registry import apply, defop
    if registry.autocast_hook is not None and isinstance(abs, Tensor) and isinstance(angle, Tensor):
        abs, angle = registry.autocast_hook("polar", (abs, angle))  # (CPU autocast's float32 list)
    _check_parts(abs, angle)
    if abs.dtype is _dtype.float16:
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    global _POLAR
    if "_POLAR" not in globals():
        _POLAR = defop("polar", lambda r, t: jax.lax.complex(*jnp.broadcast_arrays(r * jnp.cos(t), r * jnp.sin(t))),
                       vjp=_polar_vjp, grad_name="PolarBackward0")
    return apply(_POLAR, (abs, angle))



_public("complex", complex, method=False)
_public("polar", polar, method=False)
