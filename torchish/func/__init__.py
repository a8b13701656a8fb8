"""``torchish.func``: PyTorch's composable function transforms, over JAX's.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian`` and ``vmap`` run
a function written with torchish ops and modules under ``jax.grad``/``jax.vjp``/``jax.jvp``/``jax.vmap``: inside,
Tensors hold the transform's tracers. They nest (``vmap(grad(f))`` gives per-sample gradients) and take and return
Tensors and pytrees (tuples, lists, dicts) of them. ``functional_call`` and ``stack_module_state`` make modules
usable as functions of their parameters; ``to_jax`` turns a module into a pure JAX ``(params, apply_fn)`` pair.

Results are new Tensors, not connected to the caller's autograd graph (PyTorch's are when the inputs require grad).

Example::

    >>> from torchish.func import functional_call, grad, vmap
    >>> model = torchish.nn.Linear(3, 1)
    >>> params = {k: v.detach() for k, v in model.named_parameters()}
    >>> def loss(p, x, y):
    ...     return ((functional_call(model, p, (x,)) - y) ** 2).sum()
    >>> per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, torchish.ones(8, 3), torchish.ones(8, 1))
    >>> per_sample["weight"].shape
    torch.Size([8, 1, 3])
"""
from __future__ import annotations

from ._functional_call import (functional_call as functional_call, stack_module_state as stack_module_state,
                               replace_all_batch_norm_modules_ as replace_all_batch_norm_modules_)
from ._functionalize import functionalize as functionalize
from ._grad import grad as grad, grad_and_value as grad_and_value, jvp as jvp, linearize as linearize, vjp as vjp
from ._jacobian import hessian as hessian, jacfwd as jacfwd, jacrev as jacrev
from ._rearrange import rearrange as rearrange
from ._to_jax import to_jax as to_jax
from ._vmap import vmap as vmap

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "rearrange", "replace_all_batch_norm_modules_", "stack_module_state", "to_jax", "vjp", "vmap"]
