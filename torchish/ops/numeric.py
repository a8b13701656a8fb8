"""NumPy-style numerical helpers PyTorch has at the top level: ``cov``, ``corrcoef``, ``vander``, ``combinations``,
``renorm``, ``frexp``. Written on the registry's ops, so they are differentiable where PyTorch's are."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp

from .. import _dtype
from .casting import ACC
from .._tensor import Tensor, wrap_dim
from .elementwise import require_int, require_number, require_tensor, structured_out
from .reduce import _return_type
from .stats import _norm_grad, _vector_norm_fwd
from .registry import Family as _Family, apply, defop

_LOW = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))

_public = _Family(globals()).public


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of ``input`` (observations in the columns), as ``torch.cov``."""
    require_tensor(input, "cov")
    require_int(correction, "cov", None, "correction")
    correction = int(correction)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{fweights.ndim} dimensions")
        if fweights.is_floating_point() or fweights.is_complex():
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{_dtype.scalar_type_name(fweights.dtype)} dtype")
        if fweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {fweights.numel()} != {n_obs}")
        _require_nonnegative(fweights, "fweights")
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aweights.ndim} dimensions")
        if not aweights.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{_dtype.scalar_type_name(aweights.dtype)} dtype")
        if aweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aweights.numel()} != {n_obs}")
        _require_nonnegative(aweights, "aweights")
        w = aweights if w is None else w * aweights
    if w is None:
        # (ATen: the sum over the observations divided by their count: DivBackward0 with a None edge)
        avg = x.sum(1) / n_obs if x.is_floating_point() or x.is_complex() else x.to(_dtype.DEFAULTS.float).mean(1)
        w_sum = n_obs
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if isinstance(norm, Tensor):
        if bool((norm <= 0).item()):
            _dof_warning()
            norm = norm.clamp(min=0)
    elif norm <= 0:
        _dof_warning()
        norm = 0
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = xm @ (xw.t().conj() if xw.is_complex() else xw.t())  # (ATen: mm(in, (in * w).t().conj()))
    return (c / norm).squeeze()


def _require_nonnegative(weights, name):
    """PyTorch's RuntimeError for a negative frequency or observation weight (a data check, as its kernel's)."""
    if weights.numel() and bool((weights.detach().min() < 0).item()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _dof_warning():
    warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                  "observations.", UserWarning, stacklevel=3)


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (``cov`` normalised, clipped to [-1, 1])."""
    require_tensor(input, "corrcoef")
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.view(-1, 1)  # (ATen's views: ViewBackward0)
    c = c / std.view(1, -1)
    if c.is_complex():
        from .creation import complex as _complex
        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def vander(x, N=None, increasing=False):
    """Columns ``x ** (N-1), ..., x ** 0`` (reversed with ``increasing=True``); integers become int64.

    Built as ATen builds it, so that its autograd graph is PyTorch's: an empty result whose first column is filled
    with ones, ``x`` copied into the other columns, then their cumprod copied over them (two CopySlices, the second
    over CumprodBackward0 of a SliceBackward0 of the first), flipped unless ``increasing``. As in PyTorch, N <= 1
    gives a result without history, and backward through N >= 2 raises: cumprod saved the columns the last copy
    overwrote.

    Example:
        >>> torchish.vander(torchish.tensor([1, 2, 3]), N=3)
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    require_tensor(x, "vander", arg="x")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from .filled import empty
    result = empty((x.shape[0], n), dtype=_dtype.promote_types(x.dtype, _dtype.int64), device=x.device)
    if n > 0:
        result.select(1, 0).fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(result[:, 1:].cumprod(1))
    return result if increasing else result.flip(1)


def combinations(input, r=2, with_replacement=False):
    """Length-``r`` combinations of the elements of a 1-D tensor, as rows (``itertools.combinations`` order)."""
    require_tensor(input, "combinations")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    # as PyTorch builds it: masked_select of the r-fold meshgrid under "indices increasing" (itertools' order)
    from .creation import arange
    from .join import meshgrid, stack
    n = input.shape[0]
    grids = meshgrid(*([input] * r), indexing="ij")
    idx = meshgrid(*([arange(n)] * r), indexing="ij")
    mask = None
    for a, b in zip(idx[:-1], idx[1:]):
        m = a <= b if with_replacement else a < b
        mask = m if mask is None else mask & m
    if mask is None:  # r == 1: every element, selected and stacked all the same (PyTorch's node: StackBackward0)
        mask = idx[0] >= 0
    return stack([g.masked_select(mask) for g in grids], 1)


@structured_out
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` is scaled down to norm ``maxnorm``."""
    require_tensor(input, "renorm")
    require_number(p, "renorm", 2, "p", "Number")
    require_number(maxnorm, "renorm", 4, "maxnorm", "Number")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if not p > 0:  # (NaN fails both checks, as in PyTorch)
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.dtype.category < _dtype._FLOAT:  # (PyTorch's kernel starts with the norm)
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    d = wrap_dim(dim, input.ndim)
    axes = tuple(i for i in range(input.ndim) if i != d)
    return apply(_RENORM, (input,), p=float(p), axes=axes, maxnorm=float(maxnorm))


def _renorm_norm(x, p, axes):
    """The norm of each slice, kept, accumulated in float32 for float16/bfloat16 (PyTorch's ``acc_type``)."""
    return _vector_norm_fwd(x.astype(jnp.float32) if x.dtype in _LOW else x, ord=p, axis=axes, keepdims=True)


def _renorm_fwd(x, *, p, axes, maxnorm):
    """PyTorch's renorm kernel: ``norm > maxnorm ? maxnorm / (norm + 1e-7) : 1`` per slice, stored in the input's
    real dtype, times the input."""
    norm = _renorm_norm(x, p, axes)
    factor = jnp.where(norm > maxnorm, maxnorm / (norm + 1e-7), jnp.ones((), norm.dtype))
    return x * factor.astype(jnp.real(x).dtype)


def _renorm_vjp(g, x, out, *, p, axes, maxnorm):
    """PyTorch's renorm_backward, op by op: the norm in the CPU accumulate type (float64 for float32 and complex64,
    float32 for float16/bfloat16), ``nb`` the norm's backward of ``sum(re(conj(x) * grad))`` over the slice (the
    product in the input's dtype, summed in the real accumulate type), then ``maxnorm / (norm + 1e-7) *
    (grad - nb / (norm + 1e-7))`` where the slice was scaled, ``grad`` elsewhere (a slice of zeros gets ``grad``, not
    NaN). With ``p=inf`` the norm's backward picks the elements whose ``|x|`` (in the input's dtype) equals that
    wider norm: a complex64 modulus seldom does, so those slices get NaN, as PyTorch's do."""
    acc = ACC.get(x.dtype, x.dtype)
    norm = _vector_norm_fwd(x.astype(acc), ord=p, axis=axes, keepdims=True)
    summed = jnp.sum(jnp.real(jnp.conj(x) * g).astype(norm.dtype), axis=axes, keepdims=True)
    nb = _norm_grad(summed, x, norm, p, axes, lambda v: v)
    inv = 1 / (norm + 1e-7)
    return jnp.where(norm > maxnorm, (maxnorm * inv) * (g - inv * nb), g).astype(x.dtype)


_RENORM = defop("renorm", _renorm_fwd, vjp=_renorm_vjp, grad_name="RenormBackward0", saved=("0",))


_FREXP_RESULT = _return_type("frexp", ("mantissa", "exponent"))
_UINT = {16: jnp.uint16, 32: jnp.uint32, 64: jnp.uint64}


def _frexp_fwd(x):
    """By bit operations only: XLA:CPU reads subnormal floats as zero in arithmetic, so ``jnp.frexp`` (which scales
    a subnormal up by a product first) answered 0.5 * 2**-149 for every float32 subnormal, where PyTorch (like C's
    frexp) normalises it: the exponent of a subnormal comes from its mantissa's leading zeros instead."""
    info = jnp.finfo(x.dtype)
    uint = _UINT[info.bits]
    nmant, half_exp = info.nmant, -info.minexp  # a normal number's biased exponent field for [0.5, 1)
    bits = jax.lax.bitcast_convert_type(x, uint)
    sign = bits & uint(1 << (info.bits - 1))
    field = ((bits >> uint(nmant)) & uint((1 << info.nexp) - 1)).astype(jnp.int32)
    mant = bits & uint((1 << nmant) - 1)
    top = info.bits - 1 - jax.lax.clz(mant).astype(jnp.int32)  # the subnormal's highest set bit
    shift = jnp.where(field == 0, nmant - top, 0).astype(uint)
    exponent = jnp.where(field == 0, top + 1 + info.minexp - nmant, field - half_exp)
    frac = (mant << shift) & uint((1 << nmant) - 1)
    mantissa = jax.lax.bitcast_convert_type(sign | (uint(half_exp) << uint(nmant)) | frac, x.dtype)
    special = jnp.isinf(x) | jnp.isnan(x) | (bits & ~sign == 0)  # +-0, inf and NaN come back as they are, exponent 0
    return jnp.where(special, x, mantissa), jnp.where(special, 0, exponent).astype(jnp.int32)


def _frexp_vjp(g, x, out):
    """PyTorch: ``grad / exponent.exp2()`` (the mantissa's gradient; the integer exponent has none)."""
    return (jnp.ldexp(g[0], -out[1]),)  # exact: a division by a power of two


_FREXP = defop("frexp", _frexp_fwd, vjp=_frexp_vjp, saved=("o1",))


@structured_out
def frexp(input):
    """``input = mantissa * 2 ** exponent`` with the mantissa in (-1, 1) and an int32 exponent."""
    require_tensor(input, "frexp")
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _FREXP_RESULT(*apply(_FREXP, (input,)))


for _n in ("cov", "corrcoef", "vander", "combinations", "frexp"):
    _public(_n, globals()[_n], method=_n in ("cov", "corrcoef", "frexp"))
_public("renorm", renorm, inplace=True)
