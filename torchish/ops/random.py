"""Random sampling: rand/randn/randint/randperm/normal/bernoulli/multinomial and the in-place ``normal_``,
``uniform_``... Each draw is one cached jitted kernel ``key -> (next key, sample)``; the generator's key lives in
a Tensor (see ``torchish._random``)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import _dtype
from .._random import generator_or_default
from .._tensor import Tensor
from . import tracing
from ..autograd.grad_mode import STATE
from .creation import _finish, _jdev
from .inplace import make_inplace
from .registry import Family as _Family

_public = _Family(globals()).public



def _sample(kind, key, shape, dtype, params):
    if kind == "uniform":
        lo, hi = params
        if jnp.issubdtype(dtype, jnp.complexfloating):
            rd = jnp.finfo(dtype).dtype
            k1, k2 = jax.random.split(key)
            return (jax.random.uniform(k1, shape, rd) + 1j * jax.random.uniform(k2, shape, rd)).astype(dtype)
        return jax.random.uniform(key, shape, jnp.float32 if dtype == jnp.bfloat16 else dtype, lo, hi).astype(dtype)
    if kind == "normal":
        mean, std = params
        if jnp.issubdtype(dtype, jnp.complexfloating):  # PyTorch: real and imaginary parts each of variance 1/2
            rd = jnp.finfo(dtype).dtype
            k1, k2 = jax.random.split(key)
            z = (jax.random.normal(k1, shape, rd) + 1j * jax.random.normal(k2, shape, rd)) / jnp.sqrt(2.0)
            return (mean + std * z).astype(dtype)
        return (mean + std * jax.random.normal(key, shape, jnp.float32 if dtype == jnp.bfloat16 else dtype)
                ).astype(dtype)
    if kind == "randint":
        lo, hi = params
        return jax.random.randint(key, shape, lo, hi, jnp.int64).astype(dtype)
    if kind == "randperm":
        return jax.random.permutation(key, shape[0]).astype(dtype)
    if kind == "bernoulli":
        (p,) = params
        return jax.random.bernoulli(key, p, shape).astype(dtype)
    if kind == "exponential":
        (lam,) = params
        return (jax.random.exponential(key, shape, jnp.float32 if dtype == jnp.bfloat16 else dtype) / lam
                ).astype(dtype)
    if kind == "cauchy":
        median, sigma = params
        return (median + sigma * jax.random.cauchy(key, shape, dtype)).astype(dtype)
    if kind == "log_normal":
        mean, std = params
        return jnp.exp(mean + std * jax.random.normal(key, shape, dtype)).astype(dtype)
    if kind == "geometric":
        (p,) = params
        u = jax.random.uniform(key, shape, jnp.float64, minval=jnp.finfo(jnp.float64).tiny)
        return jnp.ceil(jnp.log(u) / jnp.log1p(-p)).astype(dtype)
    if kind == "poisson":
        (rate,) = params
        return jax.random.poisson(key, rate, shape).astype(dtype)
    if kind == "multinomial":
        probs, n = params[0], shape[-1]
        logits = jnp.log(probs)
        if params[1]:  # with replacement
            return jax.random.categorical(key, logits, axis=-1, shape=(n,) + probs.shape[:-1]).T.astype(dtype) \
                if probs.ndim == 2 else jax.random.categorical(key, logits, shape=(n,)).astype(dtype)
        g = jax.random.gumbel(key, probs.shape, probs.dtype)
        return jnp.argsort(-(logits + g), axis=-1)[..., :n].astype(dtype)
    raise ValueError(kind)


@functools.lru_cache(maxsize=1024)
def _kernel(kind, shape, dtype):
    def k(key_data, *params):
        key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
        new, sub = jax.random.split(key)
        return jax.random.key_data(new), _sample(kind, sub, shape, dtype, params)
    return jax.jit(k)


def draw(kind, shape, dtype, params=(), generator=None):
    """A raw JAX array of samples; advances the generator."""
    gen = generator_or_default(generator)
    npdt = _dtype.as_dtype(dtype).np
    if tracing.active() or isinstance(gen._key._d, jax.core.Tracer):
        return _sample(kind, gen.next_key(), tuple(shape), npdt, params)
    if STATE.recorder is not None:
        STATE.recorder.read((gen._key,))
    new, out = _kernel(kind, tuple(shape), npdt)(gen._key._d, *params)
    gen._key._set_value(new)
    return out


def _place(value, device, requires_grad):
    if device is not None:
        value = jax.device_put(value, _jdev(device))
    return _finish(value, requires_grad)


def _shape(size):
    from .creation import _shape_args
    return _shape_args(size, "random")


def _float_dtype(dtype):
    return _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    return _place(draw("uniform", _shape(size), _float_dtype(dtype), (0.0, 1.0), generator), device, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    return _place(draw("normal", _shape(size), _float_dtype(dtype), (0.0, 1.0), generator), device, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    return _place(draw("randint", _shape((tuple(size),)), dt, (int(low), int(high)), generator), device,
                  requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    return _place(draw("randperm", (int(n),), dt, (), generator), device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        from .elementwise import add, mul
        from .shape import broadcast_shapes
        shp = broadcast_shapes(*[x.shape for x in (mean, std) if isinstance(x, Tensor)])
        ref = mean if isinstance(mean, Tensor) else std
        if isinstance(std, Tensor) and bool((std._d < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        z = Tensor._make(draw("normal", tuple(shp), ref.dtype, (0.0, 1.0), generator))
        return add(mul(z, std), mean)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shp = _shape((tuple(size),)) if size is not None else ()
    return _place(draw("normal", shp, _float_dtype(dtype), (float(mean), float(std)), generator), device,
                  requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    prob = input._d if p is None else p
    if p is None and not isinstance(prob, jax.core.Tracer) and bool(((prob < 0) | (prob > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return Tensor._make(draw("bernoulli", tuple(input.shape), input.dtype, (prob,), generator))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    shape = tuple(input.shape[:-1]) + (int(num_samples),)
    return Tensor._make(draw("multinomial", shape, _dtype.int64, (input._d, bool(replacement)), generator))


def poisson(input, generator=None):
    return Tensor._make(draw("poisson", tuple(input.shape), input.dtype, (input._d,), generator))


def _like(fn):
    def like(input, *args, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, **kw):
        return fn(*args, tuple(input.shape), dtype=dtype if dtype is not None else input.dtype,
                  device=device if device is not None else input.device, requires_grad=requires_grad, **kw)
    return like


rand_like = _like(lambda size, **kw: rand(size, **kw))
randn_like = _like(lambda size, **kw: randn(size, **kw))


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype if dtype is not None else input.dtype,
                   device=device if device is not None else input.device)


for _n in ("rand", "randn", "randint", "randperm", "normal", "multinomial", "poisson", "rand_like", "randn_like",
           "randint_like"):
    _public(_n, globals()[_n], method=False)
_public("bernoulli", bernoulli, method=True)
METHODS["multinomial"] = multinomial


# ----------------------------------------------------------------------------------------------------------------
# in-place samplers


def _fresh(kind, params_fn):
    def fn(self, *args, generator=None, **kwargs):
        params = params_fn(self, *args, **kwargs)
        return Tensor._make(draw(kind, tuple(self.shape), self.dtype, params, generator))
    return fn


def _uniform_params(self, a=0.0, b=1.0, **kw):
    a, b = kw.get("from", a), kw.get("to", b)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    return (float(a), float(b))


def _normal_params(self, mean=0.0, std=1.0):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return (float(mean), float(std))


def _random_params(self, a=None, b=None, **kw):
    if b is None:
        lo, hi = (0, a) if a is not None else (0, 2 ** 24 if self.is_floating_point() else 2 ** 31)
    else:
        lo, hi = a, b
    return (int(lo), int(hi))


def _bernoulli_params(self, p=0.5):
    return (p._d if isinstance(p, Tensor) else float(p),)


def _random_fill(self, *args, generator=None, **kwargs):
    lo, hi = _random_params(self, *args, **kwargs)
    v = draw("randint", tuple(self.shape), _dtype.int64, (lo, hi), generator)
    return Tensor._make(v.astype(self._d.dtype))


_INPLACE = {
    "uniform_": _fresh("uniform", _uniform_params),
    "normal_": _fresh("normal", _normal_params),
    "bernoulli_": _fresh("bernoulli", _bernoulli_params),
    "exponential_": _fresh("exponential", lambda self, lambd=1.0: (float(lambd),)),
    "cauchy_": _fresh("cauchy", lambda self, median=0.0, sigma=1.0: (float(median), float(sigma))),
    "log_normal_": _fresh("log_normal", lambda self, mean=1.0, std=2.0: (float(mean), float(std))),
    "geometric_": _fresh("geometric", lambda self, p: (float(p),)),
    "random_": _random_fill,
}
for _n, _f in _INPLACE.items():
    _f.__name__ = _n[:-1]
    METHODS[_n] = make_inplace(_f, _n)
