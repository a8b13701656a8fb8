"""``torchish.nn.init``: in-place initialisers with PyTorch's gains, fans and bounds.

Every function fills its tensor in place under ``no_grad`` (so it works on Parameters that require grad) from
torchish's global generator, or from ``generator=`` when given, and returns the tensor. The draws are PyTorch's:
after the same ``manual_seed`` they give PyTorch's numbers (tests/test_nn_init_streams.py).

Example:
    >>> import torchish as torch
    >>> w = torch.nn.Parameter(torch.empty(3, 5))
    >>> _ = torch.nn.init.kaiming_uniform_(w, a=5 ** 0.5)
    >>> bool(w.abs().max() <= 1 / 5 ** 0.5)
    True
"""
from __future__ import annotations

import functools
import math
import warnings

import jax
import jax.numpy as jnp
import jax.scipy.special  # noqa: F401
import jax.scipy.stats  # noqa: F401
import numpy as np

from .. import _dtype
from .. import _random as _generators
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..compile.errors import GraphBreakError
from ..ops import tracing
from ..ops.draw import draw

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (PyTorch's table: 1, 5/3 for tanh, sqrt(2) for relu, ...)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tuple(tensor.shape)[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _write(tensor, value):
    """Write a raw JAX value into ``tensor`` in place (no graph)."""
    with no_grad():
        tensor.copy_(Tensor._make(value))
    return tensor


# ----------------------------------------------------------------------------------------------------------------
# plain fills


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix (2-D tensors only)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:  # (a meta tensor has no values to fill, here and in the fills below)
        return tensor
    return _write(tensor, jnp.eye(*tensor.shape, dtype=tensor._v.dtype))


def dirac_(tensor, groups=1):
    """The Dirac delta for 3/4/5-D convolution weights: convolving with it preserves the input channels."""
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:
        return tensor
    per_group = sizes[0] // groups
    value = np.zeros(sizes, dtype=tensor._v.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            value[(g * per_group + d, d) + centre] = 1
    return _write(tensor, jnp.asarray(value))


# ----------------------------------------------------------------------------------------------------------------
# scaled by fans


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std**2) with std = gain / sqrt(fan) (He)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


# ----------------------------------------------------------------------------------------------------------------
# structured


@functools.lru_cache(maxsize=64)
def _trunc_kernel(dtype):
    def k(u, mean, std, a, b):
        # inverse CDF in float64: exact for any [a, b], including far tails
        lo = jax.scipy.stats.norm.cdf((a - mean) / std)
        hi = jax.scipy.stats.norm.cdf((b - mean) / std)
        x = mean + std * jax.scipy.special.ndtri(lo + u * (hi - lo))
        return jnp.clip(x, a, b).astype(dtype)
    return jax.jit(k)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std**2) truncated to [a, b], by PyTorch's rejection sampler (so a seed gives PyTorch's values):
    normal draws redrawn where they fall outside when most of the mass is inside, else uniform candidates on
    [a, b] accepted with the normal density. The loop needs concrete values: inside torchish.compile the function
    runs eagerly instead (a graph break, as PyTorch's compiler makes at the loop), so a compiled call draws what
    an eager one does; inside torchish.func's transforms (no eager fallback) the inverse CDF of one uniform draw
    per element is used instead."""
    if tensor.is_meta:
        return tensor
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    if isinstance(tensor._d, jax.core.Tracer) and tracing.active() and _generators.key_source is None:
        raise GraphBreakError("torchish.compile: nn.init.trunc_normal_ redraws until its values fall inside [a, b], "
                              "a loop on concrete values (as PyTorch's); initialise outside the compiled function "
                              "to compile it.")
    if isinstance(tensor._d, jax.core.Tracer):
        u = draw("uniform", tuple(tensor.shape), _dtype.float64, (0.0, 1.0), generator, device=tensor)
        value = _trunc_kernel(jnp.dtype(tensor._v.dtype))(u, float(mean), float(std), float(a), float(b))
        return _write(tensor, value)
    from ..ops.filled import empty_like
    from ..ops.ternary import where
    with no_grad():
        p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if p > 0.3:
            lo, hi = tensor.new_tensor(a, device="cpu").item(), tensor.new_tensor(b, device="cpu").item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                # (empty_like keeps the layout of a transposed or channels_last tensor: PyTorch then draws the
                # redraws serially in its memory order rather than by normal_fill)
                result = where(mask, empty_like(result).normal_(mean, std, generator=generator), result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

        def rejected(candidates):  # accept with probability pdf(candidate) / pdf(mode)
            log_pdf = candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            return accept.uniform_(generator=generator).log_().gt(log_pdf)

        candidates, accept = empty_like(tensor), empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        pending = rejected(candidates.copy_(tensor))
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                pending = where(pending, rejected(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
    return tensor


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


@functools.lru_cache(maxsize=64)
def _orthogonal_kernel(rows, cols, shape, dtype):
    def k(flat, gain):
        q, r = jnp.linalg.qr(flat.T if rows < cols else flat)
        q = q * jnp.sign(jnp.diagonal(r))
        if rows < cols:
            q = q.T
        return (q.reshape(shape) * gain).astype(dtype)
    return jax.jit(k)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (the Q of a QR decomposition of a normal draw), scaled by ``gain``; trailing
    dimensions are flattened."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = draw("normal", (rows, cols), tensor.dtype, (0.0, 1.0), generator, device=tensor)
    # PyTorch fails after its normal_ draw: LAPACK's QR has no half types, and r's diagonal goes through sign()
    if tensor.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{_dtype.scalar_type_name(tensor.dtype)}'")
    if tensor.is_complex():
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    k = _orthogonal_kernel(rows, cols, tuple(tensor.shape), jnp.dtype(tensor._v.dtype))
    return _write(tensor, k(flat, float(gain)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std**2) with a fraction ``sparsity`` of each column's entries (``ceil(sparsity * rows)``) set to 0: the
    rows of each column's zeros are the head of a permutation drawn (as in PyTorch) from the default generator."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    from ..ops.join import stack
    from ..ops.random import randperm
    from ..ops.ranges import arange
    rows, cols = tuple(tensor.shape)
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        # PyTorch's draws (one permutation per column, in order); the zeros written at once: a write per column
        # index would compile a kernel per column (400 columns: 50 s)
        perms = [randperm(rows)[:num_zeros] for _ in range(cols)]
        if num_zeros and cols:
            tensor[stack(perms).reshape(-1), arange(cols).repeat_interleave(num_zeros)] = 0
    return tensor


# ----------------------------------------------------------------------------------------------------------------
# deprecated names (without the trailing underscore)


def _deprecated(fn):
    old = fn.__name__[:-1]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.", FutureWarning,
                      stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__name__ = old
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)


# ----------------------------------------------------------------------------------------------------------------
# PyTorch's private helpers, which third-party code imports (timm's trunc_normal_, for one)


def _no_grad_uniform_(tensor, a, b, generator=None):
    return uniform_(tensor, a, b, generator=generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    return normal_(tensor, mean, std, generator=generator)


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    return trunc_normal_(tensor, mean, std, a, b, generator=generator)


def _no_grad_fill_(tensor, val):
    return constant_(tensor, val)


def _no_grad_zero_(tensor):
    return zeros_(tensor)
