"""Moving values and models between torchish and the rest of the array world: JAX, DLPack, numpy, flax.nnx.

Values:

- ``tensor.jax()`` is the ``jax.Array`` behind a tensor, without a copy (a pending lazy value is computed first).
  A tensor that requires grad gives its value too — a JAX array carries no graph, so the result is always
  detached (``.numpy()`` refuses instead, as PyTorch's does, because numpy users expect shared memory).
- ``torchish.from_jax(array)`` wraps a ``jax.Array`` without a copy: ``from_jax(a).jax() is a``.
- ``torchish.from_dlpack(obj)`` takes anything with ``__dlpack__`` (numpy arrays, JAX arrays, real ``torch``
  tensors, CuPy ...). The buffer is shared when XLA can use it as it is (``torch`` tensors on CPU, JAX arrays);
  JAX copies buffers it cannot alias (e.g. numpy's, whose alignment XLA does not accept, or strided ones).
  Tensors export themselves through ``__dlpack__``, so ``torch.from_dlpack(t)`` and ``np.from_dlpack(t)`` work.
- numpy: unlike PyTorch's, ``torchish.from_numpy(a)`` and ``tensor.numpy()`` do not give shared, writable
  memory. JAX arrays are immutable: an in-place op on the tensor rebinds it to a new value and never writes into
  ``a``; ``tensor.numpy()`` returns a copy. (On CPU, XLA may alias a suitably aligned numpy buffer instead of
  copying it, so writing into ``a`` after ``from_numpy`` is undefined: copy it first if you mean to.)

Models: :class:`NNXModule` wraps a ``flax.nnx`` Module as a torchish ``nn.Module`` (and
``torchish.func.to_jax`` goes the other way).

Example:
    >>> import jax.numpy as jnp, torchish
    >>> a = jnp.arange(3.0)
    >>> torchish.from_jax(a).jax() is a
    True
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype
from ._tensor import Tensor
from .autograd.grad_mode import STATE, no_grad
from .nn.module import Module
from .nn.parameter import Parameter
from .ops.registry import OpDef, apply


def _check_dtype(dt, api):
    try:
        _dtype.from_np(np.dtype(dt))
    except (TypeError, KeyError, ValueError):
        raise TypeError(f"{api}: JAX dtype {dt} has no torchish equivalent") from None


def from_jax(array) -> Tensor:
    """Wrap a JAX array as a Tensor, sharing it (no copy). The tensor does not require grad.

    Args:
        array: a ``jax.Array`` (or a tracer, inside a JAX transformation).

    Example:
        >>> import jax.numpy as jnp, torchish
        >>> torchish.from_jax(jnp.ones(2)).sum().item()
        2.0
    """
    if not isinstance(array, (jax.Array, jax.core.Tracer)):
        raise TypeError(f"from_jax(): expected a jax.Array, but got {type(array).__name__}")
    _check_dtype(array.dtype, "from_jax()")
    return Tensor._make(array)


def from_dlpack(ext_tensor) -> Tensor:
    """A Tensor viewing the buffer of any object that implements the DLPack protocol (``__dlpack__``).

    The buffer is shared when XLA can alias it (``torch`` CPU tensors, JAX arrays); otherwise JAX copies it (numpy
    arrays whose alignment XLA rejects, non-contiguous strides). Either way the values are the producer's at the
    time of the call. A torchish Tensor gives a new Tensor on the same value.

    Example:
        >>> import numpy as np, torchish
        >>> torchish.from_dlpack(np.arange(3.0)).tolist()
        [0.0, 1.0, 2.0]
    """
    if isinstance(ext_tensor, Tensor):
        if ext_tensor._rg:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return Tensor._make(ext_tensor._d)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise RuntimeError(f"from_dlpack(): expected an object with __dlpack__, but got {type(ext_tensor).__name__}")
    try:
        arr = jnp.from_dlpack(ext_tensor)
    except (RuntimeError, ValueError, TypeError, jax.errors.JaxRuntimeError):
        # XLA accepts only compact strides: let numpy read the buffer (it takes any CPU layout), then copy
        try:
            host = np.from_dlpack(ext_tensor)
        except (RuntimeError, ValueError, TypeError, BufferError) as e:
            raise BufferError(f"from_dlpack(): cannot import this buffer: {e}") from None
        arr = jnp.asarray(np.ascontiguousarray(host))
    _check_dtype(arr.dtype, "from_dlpack()")
    return Tensor._make(arr)


# ----------------------------------------------------------------------------------------------------------------
# flax.nnx -> torchish


class _Scope(Module):
    """A sub-object of the wrapped nnx module (``linear1``, ``layers.0``): it only holds parameters and buffers,
    so that their names follow the nnx paths (``linear1.kernel``)."""

    def __init__(self, nnx_type: str):
        super().__init__()
        self._nnx_type = nnx_type

    def extra_repr(self):
        return f"nnx: {self._nnx_type}"


def _key_parts(path):
    return [str(p) for p in path]


class NNXModule(Module):
    """A ``flax.nnx`` Module seen as a torchish ``nn.Module``.

    Every ``nnx.Param`` becomes a torchish :class:`~torchish.nn.Parameter` named by its nnx path
    (``linear1.kernel``); other nnx state (``BatchStat``, RNG counters and keys) becomes buffers (batch statistics
    persistent, RNG state not). ``forward`` merges the nnx graph with the current parameter values inside one op of
    torchish's registry, so gradients flow back to the Parameters through torchish's autograd (eager, lowered,
    lazy and ``torchish.compile`` alike), torchish optimizers train it, and state the nnx call updates (running
    statistics, RNG counts) is written back to the buffers.

    ``train()``/``eval()`` switch the nnx module too (``nnx.Module.train/eval``: dropout's ``deterministic``,
    batch norm's ``use_running_average``). ``to_nnx()`` writes the current values back into the nnx module.
    Positional arguments of ``forward`` must be Tensors or arrays; keyword arguments are passed through as static
    (hashable) values.

    Args:
        module: the ``flax.nnx.Module`` to wrap (its Variables are read once; it is updated only by ``to_nnx``).

    Example:
        >>> from flax import nnx
        >>> import torchish
        >>> m = torchish.interop.NNXModule(nnx.Linear(3, 2, rngs=nnx.Rngs(0)))
        >>> [n for n, _ in m.named_parameters()]
        ['bias', 'kernel']
        >>> m(torchish.ones(4, 3)).sum().backward()
    """

    def __init__(self, module):
        from flax import nnx
        if not isinstance(module, nnx.Module):
            raise TypeError(f"NNXModule(): expected a flax.nnx.Module, but got {type(module).__name__}")
        super().__init__()
        self._nnx = module
        graphdef, params, rest = nnx.split(module, nnx.Param, ...)
        self._ptree = jax.tree.structure(params)
        self._rtree = jax.tree.structure(rest)
        self._pnames = self._register(nnx.to_flat_state(params), is_param=True)
        self._rnames = self._register(nnx.to_flat_state(rest), is_param=False)
        self._ops = {}  # graphdef -> OpDef (a new graphdef after train()/eval())
        self._graphdef = graphdef
        self._out_tree = None

    # ---- building -------------------------------------------------------------------------------------------
    def _register(self, flat, is_param):
        from flax import nnx
        names = []
        self._key_impls = getattr(self, "_key_impls", {})
        for path, var in flat:
            *scopes, leaf = _key_parts(path)
            owner, obj = self, self._nnx
            for key, s in zip(path, scopes):
                obj = obj[key] if isinstance(key, int) else getattr(obj, key, None)
                if s not in owner._modules:
                    owner.add_module(s, _Scope(type(obj).__name__))
                owner = owner._modules[s]
            value = var.get_value()
            name = ".".join(_key_parts(path))
            if jnp.issubdtype(value.dtype, jax.dtypes.prng_key):
                self._key_impls[name] = jax.random.key_impl(value)
                value = jax.random.key_data(value)
            if is_param:
                owner.register_parameter(leaf, Parameter(from_jax(value)))
            else:
                owner.register_buffer(leaf, from_jax(value), persistent=isinstance(var, nnx.BatchStat))
            names.append(name)
        return names

    def _tensors(self, names):
        return [self.get_parameter(n) if n in self._pnames else self.get_buffer(n) for n in names]

    def _op(self):
        op = self._ops.get(self._graphdef)
        if op is None:
            op = OpDef(f"nnx_{type(self._nnx).__name__}", self._pure_call(self._graphdef),
                       grad_name="NNXModuleBackward0")
            self._ops[self._graphdef] = op
        return op

    def _pure_call(self, graphdef):
        """``f(*param_leaves, *state_leaves, *inputs, **kwargs) -> (*output_leaves, *new_state_leaves)``."""
        from flax import nnx
        n_p, n_r = len(self._pnames), len(self._rnames)
        impls = [self._key_impls.get(n) for n in self._rnames]

        def call(*vals, **kwargs):
            params = jax.tree.unflatten(self._ptree, vals[:n_p])
            rest_leaves = [v if impl is None else jax.random.wrap_key_data(v, impl=impl)
                           for v, impl in zip(vals[n_p:n_p + n_r], impls)]
            model = nnx.merge(graphdef, params, jax.tree.unflatten(self._rtree, rest_leaves))
            out = model(*vals[n_p + n_r:], **kwargs)
            out_leaves, self._out_tree = jax.tree.flatten(out)
            new_rest = jax.tree.leaves(nnx.split(model, nnx.Param, ...)[2])
            new_rest = [v if impl is None else jax.random.key_data(v) for v, impl in zip(new_rest, impls)]
            return tuple(out_leaves) + tuple(new_rest)

        return call

    # ---- what torchish sees ---------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        for i, a in enumerate(args):
            if not isinstance(a, (Tensor, jax.Array, np.ndarray)):
                raise TypeError(f"NNXModule.forward(): argument {i} must be a Tensor or an array, not "
                                f"{type(a).__name__} (pass non-array options as keyword arguments)")
        params, bufs = self._tensors(self._pnames), self._tensors(self._rnames)
        if STATE.recorder is not None:
            STATE.recorder.read(bufs)
        # the state goes in as raw values: it is not differentiated, and writing the new state back must not
        # invalidate what backward saved
        try:
            res = apply(self._op(), (*params, *(b._v for b in bufs), *args), **kwargs)
        except TypeError as e:  # unhashable keyword arguments
            raise TypeError(f"NNXModule.forward(): keyword arguments must be hashable: {e}") from None
        n_out = len(res) - len(bufs)
        with no_grad():
            for b, new in zip(bufs, res[n_out:]):
                b._set_value(new._v)
        return jax.tree.unflatten(self._out_tree, res[:n_out])

    def train(self, mode: bool = True):
        super().train(mode)
        if "_nnx" in self.__dict__:
            from flax import nnx
            if mode:
                self._nnx.train()
            else:
                self._nnx.eval()
            self._graphdef = nnx.split(self._nnx, nnx.Param, ...)[0]
        return self

    def to_nnx(self):
        """Write the current parameter and state values into the wrapped nnx module and return it."""
        from flax import nnx
        with no_grad():
            params = jax.tree.unflatten(self._ptree, [p._d for p in self._tensors(self._pnames)])
            rest = [b._d if self._key_impls.get(n) is None else jax.random.wrap_key_data(b._d, impl=self._key_impls[n])
                    for n, b in zip(self._rnames, self._tensors(self._rnames))]
        nnx.update(self._nnx, params, jax.tree.unflatten(self._rtree, rest))
        return self._nnx

    def extra_repr(self):
        return f"nnx: {type(self._nnx).__name__}"
