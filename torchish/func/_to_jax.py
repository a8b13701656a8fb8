"""``torchish.func.to_jax``: a torchish Module as a pure JAX ``(params, apply_fn)`` pair.

``apply_fn(params, *args, rng_key=None, **kwargs)`` takes a dict of ``jax.Array`` parameters (by name, as
``named_parameters``) and JAX arrays as inputs, runs the module's forward through :func:`functional_call` with
Tensors around the given values, and returns the output's arrays (same structure). Nothing outside the call is
read or written but the module's structure, its ``training`` flag and its buffers' current values; buffer updates
(BatchNorm statistics in training mode) are discarded. It can therefore be used under ``jax.jit``, ``jax.grad``
and trained with optax. Random ops (dropout in training mode) draw from ``rng_key``.

Example::

    >>> import jax, optax
    >>> model = torchish.nn.Linear(3, 1)
    >>> params, apply_fn = torchish.func.to_jax(model)
    >>> loss = lambda p, x: (apply_fn(p, x) ** 2).mean()
    >>> grads = jax.grad(loss)(params, jax.numpy.ones((4, 3)))
    >>> sorted(grads)
    ['bias', 'weight']
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from ..ops.tracing import to_tensors, to_values, transform_scope
from ._functional_call import functional_call
from ._rng import KeyStream, key_source


def _no_key(_generator):
    raise RuntimeError("to_jax: the module called a random operation (dropout in training mode?) but apply_fn was "
                       "given no key; pass rng_key=jax.random.key(seed) to apply_fn, or call module.eval() first")


def _as_key(rng_key):
    if jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key):
        return rng_key
    return jax.random.wrap_key_data(rng_key, impl="threefry2x32")


def to_jax(module):
    """``(params, apply_fn)``: the module's parameters as a dict of ``jax.Array`` and its forward as a pure function.

    Args:
        module: a torchish ``nn.Module``.

    Returns:
        ``params`` (``{name: jax.Array}``, tied parameters once) and ``apply_fn(params, *args, rng_key=None,
        **kwargs)``, a pure JAX function returning the forward's output as JAX arrays.
    """
    params = {name: p._d for name, p in module.named_parameters()}

    def apply_fn(params, *args, rng_key=None, **kwargs):
        buffers = {name: Tensor._make(b._d) for name, b in module.named_buffers()}  # writes land on copies
        source = _no_key if rng_key is None else KeyStream(_as_key(rng_key))
        args, kwargs = jax.tree_util.tree_map(lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a,
                                              (args, kwargs))
        with key_source(source), transform_scope(captured_writes=True):
            out = functional_call(module, (to_tensors(dict(params)), buffers), to_tensors(args), to_tensors(kwargs))
        return to_values(out)

    return params, apply_fn
