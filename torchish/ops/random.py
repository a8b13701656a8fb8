"""Random sampling: rand/randn/randint/randperm/normal/bernoulli/multinomial/poisson and the in-place samplers
``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``, ``random_``...

Arguments are checked here, in Python, with PyTorch's errors before anything is drawn; the draw itself
(``ops.draw``) runs PyTorch's CPU sampler on the generator's mt19937 state, so a seed gives PyTorch's numbers.
"""
from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype
from .. import _random as _generators
from .._layout import check_memory_format
from .._tensor import Tensor
from .out_layout import like_format
from ..autograd.grad_mode import STATE, no_grad
from . import tracing
from .from_data import _check_grad_dtype, _finish
from .elementwise import (_out, castable_out, factory_out, no_derivative, parser_worded, require_number, require_tensor,
                          structured_out)
from .inplace import make_inplace
from .registry import Family as _Family
from .registry import apply, defop, overload
from .draw import draw

_public = _Family(globals()).public

# ----------------------------------------------------------------------------------------------------------------
# argument checks with PyTorch's errors


def _num(x):
    """``%g``-style number as PyTorch prints it in messages (``-1``, ``1.5``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _not_implemented(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(dt)}\'')


def _need_float(dt, kernel):
    if dt.category < _dtype._FLOAT or dt in _dtype.FLOAT8:
        raise _not_implemented(kernel, dt)


_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
            "int64": "long int", "float16": "Half", "bfloat16": "BFloat16", "float32": "float", "float64": "double"}


_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}  # significand bits


def _bounds(dt):
    """The range random_/randint can produce for ``dt``: ints by their limits, floats by exact integers."""
    if dt is _dtype.bool:
        return 0, 1
    if dt.category == _dtype._INT:
        info = np.iinfo(dt.np)
        return int(info.min), int(info.max)
    digits = _DIGITS.get(dt.to_real().name, 24)
    return -(2 ** digits), 2 ** digits


def _check_int_range(lo, hi, dt):
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    if dt.category <= _dtype._INT:
        mn, mx = _bounds(dt)
        cname = _C_NAMES.get(dt.name, dt.name)
        if lo < mn or lo > mx:
            raise RuntimeError(f"from is out of bounds for {cname}")
        if hi - 1 > mx:
            raise RuntimeError(f"to - 1 is out of bounds for {cname}")
    else:
        _, top = _bounds(dt)
        name = {"float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(dt.name, _C_NAMES.get(dt.name, dt.name))
        for what, v in (("from", lo), ("to - 1", hi - 1)):
            if not -top <= v <= top:
                warnings.warn(f"{what} is out of bounds [-(2^{top.bit_length() - 1}), 2^{top.bit_length() - 1}]. Due "
                              f"to precision limitations {name} can support discrete uniform distribution only within "
                              "this range. This warning will become an error in version 1.7 release, please fix the "
                              "code in advance", UserWarning, stacklevel=4)


def _round_bits(v, bits):
    """The integer ``v`` rounded to ``bits`` significant bits (to nearest, ties to even): one IEEE rounding."""
    shift = abs(v).bit_length() - bits
    if shift <= 0:
        return v
    q, r = divmod(abs(v), 1 << shift)
    half = 1 << (shift - 1)
    q += r > half or (r == half and q & 1)
    return (q << shift) if v >= 0 else -(q << shift)


def _float_ends(lo, hi, dt):
    """PyTorch's update_from/update_to for a floating result: ends moved inward to values the dtype holds, so the
    cast of ``lo + k`` stays in ``[lo, hi)`` (only ranges beyond the dtype's exact integers change)."""
    if dt.category != _dtype._FLOAT:
        return lo, hi
    digits = _DIGITS[dt.name]

    def cast(v):  # static_cast<scalar_t>(int64): one rounding to float (or double), then to the half type
        r = _round_bits(v, 53 if dt.name == "float64" else 24)
        return r if dt.name in ("float32", "float64") else int(np.float32(r).astype(dt.np))

    lo1 = cast(lo + 1)
    if lo1 < lo:
        lo = lo1 + (1 << (abs(lo + 1).bit_length() - 1 - digits + 1))
    hi1 = cast(hi - 1)
    if hi1 >= hi:
        hi = hi1 - (1 << (abs(hi - 1).bit_length() - 1 - digits + 1))
    return lo, hi


def _int_arg(x, name, fn, pos):
    if isinstance(x, Tensor) and x.ndim:  # (PyTorch's parser reads an ``int`` from a Tensor without dims only)
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not Tensor")
    if isinstance(x, Tensor):
        x = x.item()
    if not isinstance(x, (int, np.integer)) or isinstance(x, bool):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not {type(x).__name__}")
    x = int(x)
    if not -2 ** 63 <= x < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return x


def _place(value, requires_grad, dt):
    _check_grad_dtype(dt, requires_grad)
    return _finish(value, requires_grad)


def _shape(size, name, kw_size=None):
    from .filled import _shape_args
    from .shape import _args_or_kw
    size = _args_or_kw(size, kw_size, name, "size")
    if not size:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (), but expected "
                        "(tuple of ints size, *, Generator generator, ...)")
    return _shape_args(size, name)


def _float_dtype(dtype):
    return _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float


def _value_check(x, bad, message):
    """PyTorch's ``RuntimeError(message)`` where ``bad(xp, values)`` (``xp``: numpy, or jax.numpy in a trace) marks an
    element of ``x``'s values. Inside torchish.compile's trace the check runs before each call of the program
    (``tracing.defer_check``)."""
    if isinstance(x, Tensor):
        x = x._d
    if isinstance(x, jax.core.Tracer):
        mask = bad(jnp, x)
        tracing.defer_check(mask, mask, RuntimeError, lambda b: message)
    elif bool(bad(np, np.asarray(x)).any()):
        raise RuntimeError(message)


# ----------------------------------------------------------------------------------------------------------------
# samplers


@factory_out
def rand(*args, size=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Uniform samples in ``[0, 1)``."""
    _dtype.user_dtype(dtype, "rand")
    dt = _float_dtype(dtype)
    _need_float(dt, "check_uniform_bounds")
    return _place(draw("uniform", _shape(args, "rand", size), dt, (0.0, 1.0), generator, device=device),
                  requires_grad, dt)


@factory_out
def randn(*args, size=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Standard normal samples (complex dtypes: each part of variance 1/2)."""
    _dtype.user_dtype(dtype, "randn")
    dt = _float_dtype(dtype)
    _need_float(dt, "normal_kernel_cpu")
    return _place(draw("normal", _shape(args, "randn", size), dt, (0.0, 1.0), generator, device=device),
                  requires_grad, dt)


_UNSET = object()  # (an argument of randint not given: PyTorch has no None overload, ``randint(0, None, (3,))``
                   # is its TypeError)


@factory_out
def randint(low=_UNSET, high=_UNSET, size=_UNSET, *, generator=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is _UNSET:  # randint(high, size)
        low, high, size = _UNSET, low, high
    elif high is _UNSET:  # randint(high, size=...)
        low, high = _UNSET, low
    low = 0 if low is _UNSET else low
    if high is _UNSET or size is _UNSET or high is None or size is None or low is None:
        raise TypeError("randint() missing required arguments: expected (int high, tuple of ints size) or "
                        "(int low, int high, tuple of ints size)")  # (factory_out words it from the table)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type(size).__name__}")
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    ends = _randint_ends(low, high, dt)
    return _place(draw("randint", _shape((tuple(size),), "randint"), dt, ends, generator, device=device),
                  requires_grad, dt)


def _randint_ends(low, high, dt):
    """randint's ``(low, high)`` checked as PyTorch checks them, moved inward for a floating ``dt``."""
    low, high = _int_arg(low, "low", "randint", 1), _int_arg(high, "high", "randint", 2)
    if dt in _dtype.FLOAT8:
        raise _not_implemented("random_update_from_to", dt)
    _check_int_range(low, high, dt)
    return _float_ends(low, high, dt)


@factory_out
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of ``0 .. n-1``."""
    n = _int_arg(n, "n", "randperm", 1)
    _dtype.user_dtype(dtype, "randperm")  # (its TypeError worded from parser_errors' table by factory_out)
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    if dt is _dtype.bool or dt in (_dtype.uint16, _dtype.uint32, _dtype.uint64):
        raise _not_implemented("randperm", dt)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dt.category == _dtype._INT and n > _bounds(dt)[1] + 1:
        raise RuntimeError(f"value cannot be converted to type {dt.np.name}_t without overflow")
    return _place(draw("randperm", (n,), dt, (), generator, device=device), requires_grad, dt)


def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        from .broadcast import broadcast_error
        raise broadcast_error(tuple(a), tuple(b)) from None


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Normal samples: ``normal(mean_tensor, std)``, ``normal(mean, std_tensor)``, ``normal(mean, std, size)``.

    With tensor arguments the result is ``mean + std * z`` and differentiable in both. With ``out=`` the samples
    are drawn in ``out``'s dtype, as PyTorch draws into ``out``; ``normal(mean_tensor, std, out=o)`` keeps ``o``'s
    shape (PyTorch's ``o.normal_(0, std).add_(mean)``: ``mean`` must broadcast to it).
    """
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"normal(): argument 'out' must be Tensor, not {type(out).__name__}")
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        return _normal_tensors(mean, std, generator, out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), but expected "
                        "a Tensor mean or std, or a size")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    dt = _float_dtype(dtype if out is None or dtype is not None else out.dtype)
    _need_float(dt, "normal_kernel_cpu")
    shp = _shape((tuple(size),), "normal")
    result = _place(draw("normal", shp, dt, (float(mean), float(std)), generator, device=device), requires_grad, dt)
    return result if out is None else _out(result, out, "normal", warn=False)  # (resized as a factory's out)


def _normal_tensors(mean, std, generator, out):
    """``normal`` with a Tensor mean and/or std."""
    from .arith import add, mul
    for t in (mean, std):
        if isinstance(t, Tensor):
            _need_float(t.dtype, "normal_kernel_cpu")
            if t.is_complex() and t._rg and STATE.grad_enabled:
                raise RuntimeError("normal does not support automatic differentiation for outputs with complex "
                                   "dtype.")
    if isinstance(std, Tensor):
        _value_check(std, lambda xp, s: s < 0, "normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    shapes = [t.shape for t in (mean, std) if isinstance(t, Tensor)]
    shp = _broadcast(*shapes) if len(shapes) == 2 else tuple(shapes[0])
    ref = mean if isinstance(mean, Tensor) else std
    if _generators.key_source is None and any(getattr(t._d, "batch_dim", None) is not None
                                              for t in (mean, std) if isinstance(t, Tensor)):
        raise RuntimeError(_generators._ERR_BATCHED_STATE)  # (vmap's "same" randomness, as in ops.draw)
    dt = ref.dtype
    if out is not None:  # (PyTorch draws into out: its dtype, and for a Tensor mean alone its shape)
        if not isinstance(std, Tensor) and _broadcast(mean.shape, out.shape) != tuple(out.shape):
            from .broadcast import broadcast_error  # (checked before out's dtype, as PyTorch does)
            raise broadcast_error(tuple(mean.shape), tuple(out.shape))
        _need_float(out.dtype, "normal_kernel_cpu")
        dt = out.dtype
        if not isinstance(std, Tensor):
            z = Tensor._make(draw("normal", tuple(out.shape), dt, (0.0, float(std)), generator, device=ref))
            with no_grad():
                return _out(add(z, mean).to(dt), out, "normal")
    z = Tensor._make(draw("normal", shp, dt, (0.0, 1.0), generator, device=ref))
    with no_grad():  # PyTorch's ``out.normal_(0, 1).mul_(std).add_(mean)`` in the first tensor's (out's) dtype
        result = mul(z, std)
        result = add(result if result.dtype == dt else result.to(dt), mean)
        result = result if result.dtype == dt else result.to(dt)
    if out is not None:
        return _out(result, out, "normal")
    if not (STATE.grad_enabled and any(isinstance(t, Tensor) and t._rg for t in (mean, std))):
        return result
    # PyTorch's formula gives mean and std zero gradients (torch.normal is no reparameterised sample)
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        return apply(_NORMAL_TT, (mean, std, result))
    return apply(_NORMAL_T if isinstance(mean, Tensor) else _NORMAL_FT, (ref, result))


def _check_p_tensor(p):
    _value_check(p, lambda xp, v: (v < 0) | (v > 1), "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                 "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_p_float(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")


def _drawn_fwd(input, samples):
    return samples


def _zero_grad(g, input, samples, out):
    return jnp.zeros(jnp.shape(input), g.dtype), None


# bernoulli and poisson record a node of their input (the samples, drawn outside, ride along as a second operand
# that takes no part in promotion, so that next_functions shows the input alone): PyTorch's gradient is
# ``zeros_like(grad)`` for the probabilities (rates) in ``input``; bernoulli with a number ``p`` has no formula (a
# NotImplemented node)
_BERNOULLI = defop("bernoulli", _drawn_fwd, promote="same", promote_args=(0,), linear=True, vjp=_zero_grad,
                   grad_name="BernoulliBackward0")
_POISSON = defop("poisson", _drawn_fwd, promote="same", promote_args=(0,), linear=True, vjp=_zero_grad,
                 grad_name="PoissonBackward0")
_BERNOULLI_P = overload(_BERNOULLI, "NotImplemented", vjp=no_derivative("bernoulli"))


def _drawn2_fwd(mean, std, samples):
    return samples


def _zero_grads2(g, mean, std, samples, out):
    return jnp.zeros(jnp.shape(mean), mean.dtype), jnp.zeros(jnp.shape(std), std.dtype), None


# torch.normal with a Tensor mean and/or std: the samples (computed outside) ride along; zero gradients
_NORMAL_T = defop("normal_tensor_float", _drawn_fwd, promote="same", promote_args=(0,), linear=True, vjp=_zero_grad,
                  grad_name="NormalBackward1")
_NORMAL_FT = defop("normal_float_tensor", _drawn_fwd, promote="same", promote_args=(0,), linear=True,
                   vjp=_zero_grad, grad_name="NormalBackward2")
_NORMAL_TT = defop("normal_tensor_tensor", _drawn2_fwd, linear=True, vjp=_zero_grads2, grad_name="NormalBackward3",
                   vjp_uncast=True, promote="same", promote_args=(0, 1))


@castable_out
def bernoulli(input, p=None, *, generator=None):
    """0/1 samples with probabilities ``input`` (or the scalar ``p``), of ``input``'s dtype."""
    require_tensor(input, "bernoulli")
    _need_float(input.dtype, "bernoulli_scalar_cpu_" if p is not None else "bernoulli_tensor_cpu_self_"
                if input.dtype in _dtype.FLOAT8 else "bernoulli_tensor_cpu_p_")
    if p is None:
        _check_p_tensor(input)
        prob = input._d
    else:
        _check_p_float(p)
        prob = float(p)
    samples = Tensor._make(draw("bernoulli", tuple(input.shape), input.dtype, (prob,), generator, device=input))
    if not (input._rg and STATE.grad_enabled):
        return samples
    return apply(_BERNOULLI if p is None else _BERNOULLI_P, (input, samples))


@structured_out
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn from each row of (unnormalised) probabilities ``input``."""
    if input.dtype.category != _dtype._FLOAT:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if replacement and num_samples > 1:  # PyTorch's sampling kernel checks each entry in order
        negative = "invalid multinomial distribution (encountering probability entry < 0)"
        infinite = "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
        x = input._d
        if isinstance(x, jax.core.Tracer):
            _value_check(x, lambda xp, v: ~(v >= 0), negative)
            _value_check(x, lambda xp, v: ~xp.isfinite(v), infinite)
        else:
            flat = np.asarray(x).reshape(-1)
            bad = np.flatnonzero(~np.isfinite(flat) | ~(flat >= 0))
            if bad.size:
                raise RuntimeError(negative if not flat[bad[0]] >= 0 else infinite)
    else:
        _value_check(input, lambda xp, v: ~xp.isfinite(v) | (v < 0),
                     "probability tensor contains either `inf`, `nan` or element < 0")
    _value_check(input, lambda xp, v: v.reshape(-1, v.shape[-1]).sum(-1) <= 0,
                 "invalid multinomial distribution (sum of probabilities <= 0)")
    shape = tuple(input.shape[:-1]) + (int(num_samples),)
    if not replacement or num_samples == 1:
        from .random_layout import draw_like, fill_order
        if num_samples > 1 or fill_order(input) is not None:
            # the top-k (argmax) of probs / exponential keys, in PyTorch's tie order; the keys fill
            # empty_like(input), in its memory order
            from .sort import topk
            keys = Tensor._make(draw_like("multinomial", input, tuple(input.shape), input.dtype, (input._d,),
                                          generator, static="keys"))
            if num_samples == 1:
                return keys.argmax(-1, keepdim=True)
            return topk(keys, int(num_samples)).indices
    return Tensor._make(draw("multinomial", shape, _dtype.int64, (input._d,), generator, static=bool(replacement),
                             device=input))


def poisson(input, generator=None):
    """Poisson samples with rates ``input``, of ``input``'s dtype."""
    require_tensor(input, "poisson")
    if input.dtype.category < _dtype._FLOAT or input.is_complex():
        raise _not_implemented("poisson_cpu", input.dtype)
    _value_check(input, lambda xp, v: ~(v >= 0), "invalid Poisson rate, expected rate to be non-negative")
    samples = Tensor._make(draw("poisson", tuple(input.shape), input.dtype, (input._d,), generator, device=input))
    if not (input._rg and STATE.grad_enabled):
        return samples
    return apply(_POISSON, (input, samples))


def _like(fn, name, kind):
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
             generator=None):
        require_tensor(input, name)
        check_memory_format(memory_format, input.ndim)
        dt = dtype if dtype is not None else input.dtype
        dev = device if device is not None else input.device
        if _fills_in_memory_order(input, memory_format, dev):  # PyTorch fills empty_like(input) (normal: serially)
            _dtype.user_dtype(dtype, name[:-5])
            dt = _dtype.as_dtype(dt)
            _need_float(dt, "check_uniform_bounds" if kind == "uniform" else "normal_kernel_cpu")
            out = _into(input, kind, dt, (0.0, 1.0), generator)
            return like_format(_place(out._v, requires_grad, dt), input, memory_format)
        out = fn(tuple(input.shape), dtype=dt, device=dev, requires_grad=requires_grad, generator=generator)
        return like_format(out, input, memory_format)
    return like


rand_like = _like(lambda size, **kw: rand(size, **kw), "rand_like", "uniform")
randn_like = _like(lambda size, **kw: randn(size, **kw), "randn_like", "normal")


@parser_worded  # (its TypeErrors in the parser's words, with the call as written: ``high=NoneType``)
def randint_like(input, low=_UNSET, high=_UNSET, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None, generator=None):
    require_tensor(input, "randint_like")
    if high is _UNSET:  # randint_like(input, high)
        low, high = _UNSET, low
    if high is _UNSET or high is None or low is None:  # (no None overload: the parser's TypeError)
        raise TypeError("randint_like() missing required argument 'high'")
    low = 0 if low is _UNSET else low
    _dtype.user_dtype(dtype, "randint_like")
    check_memory_format(memory_format, input.ndim)
    dt = _dtype.as_dtype(dtype) if dtype is not None else input.dtype
    dev = device if device is not None else input.device
    if _fills_in_memory_order(input, memory_format, dev):  # (PyTorch fills empty_like(input))
        from .random_layout import draw_like
        out = draw_like("randint", input, tuple(input.shape), dt, _randint_ends(low, high, dt), generator)
        return like_format(_place(out, requires_grad, dt), input, memory_format)
    out = randint(low, high, tuple(input.shape), dtype=dt, device=dev, requires_grad=requires_grad,
                  generator=generator)
    return like_format(out, input, memory_format)


def _fills_in_memory_order(input, memory_format, device):
    """Whether a ``*_like`` sampler fills ``input``'s own layout (preserve_format on its device), in an order other
    than the logical one."""
    if getattr(memory_format, "_name", "preserve_format") != "preserve_format" or \
            _device.device(device) != input.device:
        return False
    from .random_layout import fill_order
    return fill_order(input) is not None


for _n in ("rand", "randn", "randint", "randperm", "normal", "multinomial", "poisson", "rand_like", "randn_like",
           "randint_like"):
    _public(_n, globals()[_n], method=False)
_public("bernoulli", bernoulli, method=True)
METHODS["multinomial"] = multinomial


# ----------------------------------------------------------------------------------------------------------------
# in-place samplers: each returns fresh samples of self's shape and dtype; make_inplace writes them into self


def _into(self, kind, dtype, params, generator, static=None):
    """Samples for ``self`` (an in-place draw), filled in ``self``'s memory order as PyTorch's kernels fill it; a
    normal draw into a non-contiguous tensor is PyTorch's serial kernel whatever its size."""
    from .random_layout import draw_like
    if kind == "normal" and not self.is_contiguous():
        static = "serial"
    return Tensor._make(draw_like(kind, self, tuple(self.shape), dtype, params, generator, static))


def _uniform(self, a=0.0, b=1.0, *, generator=None, **kw):
    a, b = kw.pop("from", a), kw.pop("to", b)
    if kw:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kw))}'")
    require_number(a, "uniform_", 1, "from")  # (worded by parser_errors' table: see METHODS below)
    require_number(b, "uniform_", 2, "to")
    _need_float(self.dtype, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(a)} > to={_num(b)}")
    return _into(self, "uniform", self.dtype, (float(a), float(b)), generator)


def _normal(self, mean=0.0, std=1.0, *, generator=None):
    require_number(mean, "normal_", 1, "mean")
    require_number(std, "normal_", 2, "std")
    _need_float(self.dtype, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    return _into(self, "normal", self.dtype, (float(mean), float(std)), generator)


def _bernoulli(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        _check_p_tensor(p)
        prob = p._d
    else:
        _check_p_float(p)
        prob = float(p)
    return _into(self, "bernoulli", self.dtype, (prob,), generator)


def _continuous(self, name):
    if self.dtype.category < _dtype._FLOAT:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_C_NAMES.get(self.dtype.name, self.dtype.name)}"
                           if name == "Cauchy" else
                           f"{name} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_dtype.scalar_type_name(self.dtype)}")


def _exponential(self, lambd=1.0, *, generator=None):
    require_number(lambd, "exponential_", 1, "lambd")
    _continuous(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _into(self, "exponential", self.dtype, (float(lambd),), generator)


def _cauchy(self, median=0.0, sigma=1.0, *, generator=None):
    require_number(median, "cauchy_", 1, "median")
    require_number(sigma, "cauchy_", 2, "sigma")
    _continuous(self, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    return _into(self, "cauchy", self.dtype, (float(median), float(sigma)), generator)


def _log_normal(self, mean=1.0, std=2.0, *, generator=None):
    require_number(mean, "log_normal_", 1, "mean")
    require_number(std, "log_normal_", 2, "std")
    _need_float(self.dtype, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    return _into(self, "log_normal", self.dtype, (float(mean), float(std)), generator)


def _geometric(self, p, *, generator=None):
    require_number(p, "geometric_", 1, "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return _into(self, "geometric", self.dtype, (float(p),), generator)


_NO_ARG = object()


def _random(self, a=_NO_ARG, b=_NO_ARG, *, generator=None, **kw):
    """``random_()``: [0, max] of the dtype (floats: [0, 2**mantissa]); ``random_(to)``; ``random_(from, to)``;
    ``to=None`` means the default upper bound."""
    a, b = kw.pop("from", a), kw.pop("to", b)
    if kw:  # (worded by parser_errors' table: see METHODS below)
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kw))}'")
    dt = self.dtype
    top = _bounds(dt)[1] + 1
    if a is _NO_ARG:
        lo, hi = 0, top
    elif b is _NO_ARG:
        if a is None:
            raise TypeError("random_() received an invalid combination of arguments - got (NoneType), but expected "
                            "one of: (), (int from, int to), (int to)")
        lo, hi = 0, _int_arg(a, "to", "random_", 1)
    else:
        lo = _int_arg(a, "from", "random_", 1)
        hi = top if b is None else _int_arg(b, "to", "random_", 2)
        if b is None and lo == -2 ** 63:  # (the whole int64 range: random64 read as a signed integer)
            return _full_range(self, generator)
    if hi == 2 ** 63 and lo == 0:
        return _into(self, "randint", dt, (0, 0), generator, static="full64")
    _check_int_range(lo, hi, dt)
    # without bounds PyTorch's random_kernel draws one 32-bit word per element (random64 only for int64 and
    # double), where random_(from, to) takes random64 from a range of 2**28 on: int32's [0, 2**31) is the case
    # that tells them apart
    narrow = a is _NO_ARG and dt is not _dtype.float64
    return _into(self, "randint", _dtype.int64, _float_ends(lo, hi, dt), generator,
                 static="narrow" if narrow else None).to(dt)


def _full_range(self, generator):
    """``random_(-2**63, None)``: PyTorch's random_full_64_bits_range kernel (int64, float64, float32, bfloat16:
    random64 as an int64, converted to the dtype)."""
    if self.numel() == 0:
        return self
    dt = self.dtype
    if dt in (_dtype.float16, _dtype.bool) or dt.is_complex:
        raise _not_implemented("random_full_64_bits_range_kernel_cpu", dt)
    if dt not in (_dtype.int64, _dtype.float64, _dtype.float32, _dtype.bfloat16):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
    return _into(self, "randint", dt, (0, 0), generator, static="full64signed")


_INPLACE = {"uniform_": _uniform, "normal_": _normal, "bernoulli_": _bernoulli, "exponential_": _exponential,
            "cauchy_": _cauchy, "log_normal_": _log_normal, "geometric_": _geometric, "random_": _random}
# the node PyTorch records for an in-place draw into a tensor that requires grad (by overload): the tensor stays in
# the graph, and the gradient through it is zero
_DRAW_NODES = {"uniform_": "UniformBackward0", "normal_": "NormalBackward0", "exponential_": "ExponentialBackward0",
               "cauchy_": "CauchyBackward0", "log_normal_": "LogNormalBackward0", "geometric_": "GeometricBackward0"}


def _draw_node_name(name, args, kwargs):
    if name == "bernoulli_":
        p = args[0] if args else kwargs.get("p")
        return "BernoulliBackward1" if isinstance(p, Tensor) else "BernoulliBackward2"
    if name == "random_":
        given = sum(1 for v in args if v is not _NO_ARG) + ("from" in kwargs) + ("to" in kwargs)
        return ("RandomBackward2", "RandomBackward1", "RandomBackward0")[min(given, 2)]
    return _DRAW_NODES[name]


@functools.lru_cache(maxsize=None)
def _draw_op(grad_name):
    # (the drawn value is the last argument; the node's inputs, as PyTorch lists them, are the ones before it)
    shown = (0, 1) if grad_name == "BernoulliBackward1" else (0,)
    return defop(grad_name, lambda x, *rest: rest[-1], grad_name=grad_name, linear=True, promote="same",
                 promote_args=shown)


def _in_graph(fn, name):
    """``fn`` (an in-place draw) leaving a tensor that requires grad in the graph, as PyTorch's node does: the draw
    does not depend on the old values, so no gradient flows through it (a probability tensor of ``bernoulli_``
    is an input of the node too, with a zero gradient: one that requires grad makes the written tensor require
    grad)."""
    def run(self, *args, **kwargs):
        out = fn(self, *args, **kwargs)
        p = args[0] if args else kwargs.get("p")
        p_rg = name == "bernoulli_" and isinstance(p, Tensor) and p._rg  # (then the written tensor requires grad)
        if not ((self._rg or p_rg) and STATE.grad_enabled):
            return out
        grad_name = _draw_node_name(name, args, kwargs)
        inputs = (self, p, out) if grad_name == "BernoulliBackward1" else (self, out)
        return apply(_draw_op(grad_name), inputs)
    functools.update_wrapper(run, fn)
    return run


for _n, _f in _INPLACE.items():
    METHODS[_n] = make_inplace(_in_graph(_f, _n), _n)
for _n in ("uniform_", "normal_", "cauchy_", "log_normal_", "exponential_", "geometric_", "random_"):  # (their
    # TypeErrors in PyTorch's parser's words)
    METHODS[_n] = parser_worded(METHODS[_n], _n, method=True)
