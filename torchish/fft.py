"""``torchish.fft``: PyTorch's discrete Fourier transforms, differentiable, on ``jnp.fft``.

Three registry ops carry every transform, as in PyTorch: complex-to-complex (``FftC2CBackward0``), real-to-complex
(``FftR2CBackward0``, one-sided or full) and complex-to-real (``FftC2RBackward0``). Their gradients are JAX's
transposes, conjugated into PyTorch's convention by the registry. The ``n``/``s`` arguments zero-pad or trim the
input first (``ConstantPadNdBackward0`` / ``SliceBackward0``); ``hfft``/``ihfft`` are the conjugate-symmetric
transforms written with a conjugate and the opposite normalisation.

Example:
    >>> import torchish as torch
    >>> torch.fft.rfft(torch.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from . import _dtype
from ._tensor import Tensor, wrap_dim
from .ops import creation as _creation, reorder as _reorder, slicing as _slicing, unary as _unary
from .ops.elementwise import _out, require_tensor, type_name
from .ops import registry as _registry
from .ops.registry import apply, defop

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = {None: "backward", "backward": "backward", "forward": "forward", "ortho": "ortho"}
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _c2c(x, *, dims, norm, forward):
    return (jnp.fft.fftn if forward else jnp.fft.ifftn)(x, axes=dims, norm=norm)


def _r2c(x, *, dims, norm, onesided):
    """The forward real-to-complex transform (PyTorch's ``_fft_r2c`` has no inverse: see :func:`_inverse_r2c`)."""
    if onesided:
        return jnp.fft.rfftn(x, axes=dims, norm=norm)
    return jnp.fft.fftn(x.astype(jnp.result_type(x.dtype, jnp.complex64)), axes=dims, norm=norm)


def _c2r(x, *, dims, norm, sizes):
    return jnp.fft.irfftn(x, s=sizes, axes=dims, norm=norm)


_C2C = defop("fft_c2c", _c2c, linear=True, grad_name="FftC2CBackward0")
_R2C = defop("fft_r2c", _r2c, linear=True, grad_name="FftR2CBackward0", saved=("0",))  # PyTorch keeps the input
_C2R = defop("fft_c2r", _c2r, linear=True, grad_name="FftC2RBackward0")


# ----------------------------------------------------------------------------------------------------------------
# argument handling


def _norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm]


def _float_input(x, name, real=False):
    """Integers and bools become the default float; half precision is refused as PyTorch's CPU kernels do."""
    require_tensor(x, name)
    if _registry.autocast_hook is not None:  # (CPU autocast lists the 1-d, 2-d and n-d transforms but hfft2/hfftn)
        x, = _registry.autocast_hook("fft_" + name, (x,))
    dt = x.dtype
    if real and dt.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype.scalar_type_name(dt)}")
    if dt in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_dtype.scalar_type_name(dt)}")
    if not dt.is_floating_point and not dt.is_complex:
        x = x.to(_dtype.DEFAULTS.float)
    return x


def _dims(x, s, dim, name):
    """(dims, sizes) as PyTorch resolves them for the n-dimensional transforms."""
    if s is not None:  # (a list of ints, as PyTorch's parser reads one: a lone int too)
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            s = (s,)
        if not isinstance(s, (tuple, list)) and not (isinstance(s, Tensor) and s.ndim == 1):
            raise TypeError(f"fft_{name}(): argument 's' (position 2) must be tuple of ints, not {type_name(s)}")
        s = s.tolist() if isinstance(s, Tensor) else s
        bad = next((i for i, v in enumerate(s) if isinstance(v, bool) or not isinstance(v, (int, np.integer))), None)
        if bad is not None:
            raise TypeError(f"fft_{name}(): argument 's' (position 2) must be tuple of ints, but found element of "
                            f"type {type_name(s[bad])} at pos {bad}")
        s = [int(v) for v in s]
    if x.ndim == 0 and dim is not None:
        d = dim if isinstance(dim, int) else list(dim)[0]
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if dim is None:
        dims = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
        if s is not None and len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
    else:
        dims = [wrap_dim(d, x.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    sizes = [x.shape[d] for d in dims] if s is None else [x.shape[d] if v == -1 else v for d, v in zip(dims, s)]
    for v in sizes:
        if v < 1:
            raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return dims, sizes


def _resize(x, dims, sizes):
    """Zero-pad or trim ``x`` to ``sizes`` along ``dims``: PyTorch's trims first (SliceBackward0 each), then one
    pad of every dim that grows (ConstantPadNdBackward0)."""
    pad = [0] * (2 * x.ndim)
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n < have:
            x = _slicing.narrow(x, d, 0, n)
        elif n > have:
            pad[2 * (x.ndim - 1 - d) + 1] = n - have
    if any(pad):
        from .nn.functional import pad as _pad
        x = _pad(x, tuple(pad))
    return x


def _int_arg(v, fname, arg, pos):
    """``v`` as PyTorch's parser reads an ``int`` argument: a Python or numpy integer, or an integer Tensor of no
    dims; anything else (a bool, float, str, Tensor with dims) is its TypeError."""
    if isinstance(v, Tensor) and v.ndim == 0 and not v.dtype.is_floating_point and not v.dtype.is_complex \
            and v.dtype is not _dtype.bool:
        return int(v.item())
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"fft_{fname}(): argument '{arg}' (position {pos}) must be int, not {type_name(v)}")
    return int(v)


def _one(n, dim, name):
    return (None if n is None else [_int_arg(n, name, "n", 2)]), [dim]


# ----------------------------------------------------------------------------------------------------------------
# transforms


def _fftn(input, s, dim, norm, forward, name, r2c=False):
    x = _float_input(input, name)
    dims, sizes = _dims(x, s, dim, name)
    norm = _norm(norm)
    if not x.dtype.is_complex:
        if r2c:  # PyTorch: fft/ifft transform a real input real-to-complex, the n-dim forms a complex copy
            x = _resize(x, dims, sizes)
            if forward:
                return apply(_R2C, (x,), dims=tuple(dims), norm=norm, onesided=False)
            return _inverse_r2c(x, dims, norm, onesided=False)
        x = x.to(_dtype.complex128 if x.dtype is _dtype.float64 else _dtype.complex64)  # (before the resize)
    return apply(_C2C, (_resize(x, dims, sizes),), dims=tuple(dims), norm=norm, forward=forward)


def _rfftn(input, s, dim, norm, forward, name):
    """Real-to-complex, one-sided along the last transformed dim (``ihfft`` is the conjugated inverse)."""
    x = _float_input(input, name, real=True)
    dims, sizes = _dims(x, s, dim, name)
    if not dims:  # (a 0-d input with dim=None: the one-sided transforms need a last dim)
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    if forward:
        return apply(_R2C, (x,), dims=tuple(dims), norm=norm, onesided=True)
    if len(dims) == 1:
        return _inverse_r2c(x, dims, norm, onesided=True)
    # ihfft2/ihfftn as PyTorch writes them: the one-sided inverse along the last dim, conjugated physically, then
    # the complex inverse along the others (FftC2CBackward0 <- ConjPhysicalBackward0 <- FftR2CBackward0)
    last = apply(_R2C, (x,), dims=(dims[-1],), norm=_SWAP[norm], onesided=True)
    return apply(_C2C, (_unary.conj_physical(last),), dims=tuple(dims[:-1]), norm=norm, forward=False)


def _inverse_r2c(x, dims, norm, onesided):
    """The inverse transform of a real ``x``: the conjugate (a lazy one, ``ConjBackward0``) of the forward
    transform with the opposite scaling, as PyTorch computes ``ifft``/``ihfft`` of a real input."""
    return _unary.conj(apply(_R2C, (x,), dims=tuple(dims), norm=_SWAP[norm], onesided=onesided))


def _irfftn(input, s, dim, norm, name, hermitian=False):
    x = _float_input(input, name)
    if not x.dtype.is_complex:
        x = x.to(_dtype.complex128 if x.dtype is _dtype.float64 else _dtype.complex64)
    dims, sizes = _dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        if sizes[-1] < 1:
            raise RuntimeError(f"Invalid number of data points ({sizes[-1]}) specified")
    half = sizes[:-1] + [sizes[-1] // 2 + 1]
    x = _resize(x, dims, half)
    norm = _norm(norm)
    if hermitian:
        x, norm = _unary.conj(x), _SWAP[norm]
    return apply(_C2R, (x,), dims=tuple(dims), norm=norm, sizes=tuple(sizes))


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_fftn(input, *_one(n, dim, "fft"), norm, True, "fft", r2c=True), out, "fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_fftn(input, *_one(n, dim, "ifft"), norm, False, "ifft", r2c=True), out, "ifft")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, True, "fft2"), out, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, False, "ifft2"), out, "ifft2")


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, True, "fftn"), out, "fftn")


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, False, "ifftn"), out, "ifftn")


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_rfftn(input, *_one(n, dim, "rfft"), norm, True, "rfft"), out, "rfft")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_rfftn(input, s, dim, norm, True, "rfft2"), out, "rfft2")


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_rfftn(input, s, dim, norm, True, "rfftn"), out, "rfftn")


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_irfftn(input, *_one(n, dim, "irfft"), norm, "irfft"), out, "irfft")


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_irfftn(input, s, dim, norm, "irfft2"), out, "irfft2")


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_irfftn(input, s, dim, norm, "irfftn"), out, "irfftn")


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_irfftn(input, *_one(n, dim, "hfft"), norm, "hfft", hermitian=True), out, "hfft")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_irfftn(input, s, dim, norm, "hfft2", hermitian=True), out, "hfft2")


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_irfftn(input, s, dim, norm, "hfftn", hermitian=True), out, "hfftn")


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_rfftn(input, *_one(n, dim, "ihfft"), norm, False, "ihfft"), out, "ihfft")


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_rfftn(input, s, dim, norm, False, "ihfft2"), out, "ihfft2")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_rfftn(input, s, dim, norm, False, "ihfftn"), out, "ihfftn")


# ----------------------------------------------------------------------------------------------------------------
# helpers


def _float_arg(v, fname):
    """``d`` as PyTorch's parser reads a ``float``: a Python or numpy number, or a Tensor of no dims."""
    if isinstance(v, Tensor) and v.ndim == 0:
        return float(v.item())
    if not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"fft_{fname}(): argument 'd' must be float, not {type_name(v)}")
    return float(v)


def _freq(fname, n, d, dtype, device, requires_grad):
    """PyTorch's ``fftfreq``/``rfftfreq``: the integer frequencies (``torch.arange``, the upper half shifted down by
    ``n`` for ``fftfreq``) times ``1.0 / (n * d)`` in ``dtype``'s arithmetic (so a float32 result rounds as
    PyTorch's; ``n * d == 0`` gives infinities and NaN at zero, not an error)."""
    n, d = _int_arg(n, fname, "n", 1), _float_arg(d, fname)
    dt = dtype or _dtype.DEFAULTS.float
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    size = n if fname == "fftfreq" else int(n / 2) + 1  # (C++'s division: -1 // 2 is 0 there)
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    if dt.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{_dtype.scalar_type_name(dt)}\'')
    k = np.arange(size, dtype=np.float64)
    if fname == "fftfreq":
        k[(n + 1) // 2:] -= n
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.float64(1.0) / np.float64(n * d)
        values = (k.astype(dt.np) * scale.astype(dt.np)).astype(np.float64)
    return _creation.place(values, dt, device, requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Sample frequencies ``[0, 1, ..., n//2-1 (or (n-1)//2), -(n//2), ..., -1] / (d * n)``."""
    return _out(_freq("fftfreq", n, d, dtype, device, requires_grad), out, "fftfreq")


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Sample frequencies ``[0, 1, ..., n//2] / (d * n)`` of :func:`rfft`."""
    return _out(_freq("rfftfreq", n, d, dtype, device, requires_grad), out, "rfftfreq")


def _shift(input, dim, sign, name):
    require_tensor(input, f"fft_{name}")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [wrap_dim(d, input.ndim) for d in dims]
    return _reorder.roll(input, [sign * (input.shape[d] // 2) for d in dims], dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre: a roll by ``n // 2`` along each dim."""
    return _shift(input, dim, 1, "fftshift")


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: a roll by ``-(n // 2)``."""
    return _shift(input, dim, -1, "ifftshift")
