"""Tensor methods that round out PyTorch's Tensor API:

- ``apply_`` / ``map_`` / ``map2_``: a Python callable applied element by element (on the host, as PyTorch's CPU
  kernels; never on tensors that require grad);
- method spellings of functions defined elsewhere: ``baddbmm_``, ``hardshrink``, ``prelu``, ``lu_solve`` (and the
  deprecated ``torch.lu_solve``), ``nonzero_static``, ``is_same_size``, ``as_subclass``;
- the predicates and attributes CPU PyTorch answers with constants: ``is_mps``, ``is_xla``... (False),
  ``is_nested`` (False), ``name`` (None: no named tensors), ``volatile`` (False, with PyTorch's warning);
- ``chalf``: complex32 does not exist in JAX, so it raises (see the function).

Example:
    >>> import torchish as torch
    >>> torch.tensor([1.0, 2.0]).apply_(lambda v: v * 10)
    tensor([10., 20.])
"""
from __future__ import annotations

import math
import warnings

import jax.numpy as jnp
import numpy as np

from .._global_flags import warn_once
from .. import _dtype
from .._tensor import Tensor
from . import tracing
from .elementwise import out_exact
from .inplace import make_inplace
from .registry import Family, apply, defop

_fam = Family(globals())


# ----------------------------------------------------------------------------------------------------------------
# Python callables, element by element


def _convert(r, dt):
    """``r`` (a callable's result) as a Python value of dtype ``dt``, with PyTorch's conversion errors."""
    if isinstance(r, Tensor):
        r = r.item()
    if dt.is_complex:
        return complex(r)
    if dt.is_floating_point:
        if isinstance(r, complex) or not hasattr(r, "__float__"):
            raise TypeError(f"must be real number, not {type(r).__name__}")
        return float(r)
    if hasattr(r, "__index__"):
        v = r.__index__()
    elif hasattr(r, "__float__") and not isinstance(r, complex):
        v = math.trunc(float(r))
    else:
        raise TypeError(f"'{type(r).__name__}' object cannot be interpreted as an integer")
    return bool(v) if dt == _dtype.bool else v


def _host_map(name, self, others, fn):
    for t in (self,) + others:
        if t.requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                               "instead.")
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    if self.device.type != "cpu":
        raise RuntimeError(f"{name} is only implemented on CPU tensors")
    if tracing.active():
        raise tracing.concrete_error(f"{name}() (a Python callable on each element)")
    dt = self.dtype
    flat = [self.reshape(-1).tolist()]
    for o in others:
        if o.dtype != dt:
            raise TypeError(f"{name}: expected {_legacy(dt)} for '{'other' if len(others) == 1 else 'x'}' "
                            f"(got {_legacy(o.dtype)})")
        flat.append(o.expand(self.shape).reshape(-1).tolist())
    vals = [_convert(fn(*args), dt) for args in zip(*flat)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float overflow to inf, as the C cast
        arr = np.asarray(vals, dtype=dt.np).reshape(tuple(self.shape))
    from .creation import place
    new = place(arr, dt, self.device)
    self._check_inplace()
    return self._assign(new)


def _legacy(dt):
    from .._legacy_types import CPU_TYPES
    for name, cls in CPU_TYPES.items():
        if getattr(cls, "dtype", None) == dt:
            return "torch." + name
    return str(dt)


def apply_(self, callable):
    """Replace each element ``v`` by ``callable(v)`` (a Python number), in place."""
    return _host_map("apply_", self, (), callable)


def map_(self, tensor, callable):
    """Replace each element ``a`` by ``callable(a, b)`` with ``b`` from ``tensor`` broadcast to ``self``."""
    return _host_map("map_", self, (tensor,), callable)


def map2_(self, x, y, callable):
    """Replace each element ``a`` by ``callable(a, b, c)`` with ``b``, ``c`` from ``x``, ``y`` broadcast."""
    return _host_map("map2_", self, (x, y), callable)


# ----------------------------------------------------------------------------------------------------------------
# method spellings of functions defined elsewhere


def _baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    from .linalg_add import baddbmm
    return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)


def hardshrink(self, lambd=0.5):
    from ..nn._functional.activation import hardshrink as _hardshrink
    return _hardshrink(self, lambd)


def prelu(self, weight):
    from ..nn._functional.activation import prelu as _prelu
    return _prelu(self, weight)


def warn_lu_solve_deprecated(stacklevel=3):
    """``torch.lu_solve`` and ``Tensor.lu_solve`` share PyTorch's once-per-process deprecation warning."""
    warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
              "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
              "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
              stacklevel=stacklevel)


def lu_solve(self, LU_data, LU_pivots, *, out=None):
    """Deprecated ``torch.lu_solve(b, LU, pivots)``: ``torch.linalg.lu_solve(LU, pivots, b)``."""
    warn_lu_solve_deprecated()
    from .solve import lu_solve as _lu_solve
    return _lu_solve(LU_data, LU_pivots, self, out=out)


def _nonzero_static_fwd(x, *, size, fill_value):
    if x.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    idx = jnp.nonzero(x, size=size, fill_value=0)
    out = jnp.stack(idx, axis=1).astype(jnp.int64)
    count = jnp.count_nonzero(x)
    return jnp.where((jnp.arange(size) < count)[:, None], out, jnp.asarray(fill_value, jnp.int64))


_NONZERO_STATIC = defop("nonzero_static", _nonzero_static_fwd, differentiable=False)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """The first ``size`` indices of nonzero elements (``[size, ndim]``), padded with ``fill_value``: a fixed
    output shape, so it also runs inside ``torchish.compile``."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return out_exact(apply(_NONZERO_STATIC, (input,), size=size, fill_value=int(fill_value)), out, "nonzero_static",
                     "nonzero_static: Expected out tensor to have scalar type {expected} but got scalar type{out}")


def is_same_size(input, other):
    """Whether both tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


_ALIAS = defop("alias", lambda x: x, view=True, linear=True, grad_name="AliasBackward0")


def as_subclass(self, cls):
    """An alias of ``self`` (same storage, an ``AliasBackward0`` node when it requires grad) of class ``cls``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = apply(_ALIAS, (self,))
    out.__class__ = cls
    return out


def chalf(self, memory_format=None):
    """``self.to(torch.complex32)``. JAX has no complex32 (complex half) dtype, so this cannot be represented:
    it raises (use ``cfloat()`` for complex64)."""
    raise TypeError("torchish: complex32 (chalf) is not supported: JAX has no complex half-precision dtype; use "
                    "cfloat() (complex64) instead")


# ----------------------------------------------------------------------------------------------------------------
# constant predicates and attributes


def _false(self):
    return False


for _n in ("is_mps", "is_xpu", "is_ipu", "is_xla", "is_maia", "is_mtia", "is_vulkan", "is_mkldnn", "is_sparse_csr",
           "is_nested"):
    _fam.methods[_n] = property(_false)
_fam.methods["is_distributed"] = _false  # a method in PyTorch, the others are properties


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


_fam.methods["volatile"] = property(_volatile)
_fam.methods["name"] = property(lambda self: None)

_fam.method("apply_", apply_)
_fam.method("map_", map_)
_fam.method("map2_", map2_)
_fam.method("baddbmm_", make_inplace(_baddbmm, "baddbmm_"))
_fam.method("hardshrink", hardshrink)
_fam.method("prelu", prelu)
_fam.public("lu_solve", lu_solve)
_fam.public("nonzero_static", nonzero_static)
_fam.public("is_same_size", is_same_size)
_fam.method("as_subclass", as_subclass)
_fam.method("chalf", chalf)
del _n
