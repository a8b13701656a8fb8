"""The float32 precision of matrix products and convolutions, from PyTorch's own switches.

PyTorch's defaults on a GPU: matrix products (``matmul``, ``nn.Linear``, attention, RNN cells, ``einsum``...) at
full float32 — ``torch.get_float32_matmul_precision() == 'highest'``, ``torch.backends.cuda.matmul.allow_tf32 ==
False`` — and convolutions allowed to use TF32 (``torch.backends.cudnn.allow_tf32 == True``). torchish asks XLA for
the same: ``Precision.HIGHEST`` where PyTorch computes full float32, ``Precision.DEFAULT`` (one TF32/bf16 pass on
GPUs and TPUs) where PyTorch allows TF32. XLA's CPU kernels compute float32 in full under either.

Kernels read these when they are traced, so a change clears JAX's compiled kernels (``jax.clear_caches``) and bumps
:data:`EPOCH`, which ``torchish.compile`` keys its programs by.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

HIGHEST = jax.lax.Precision.HIGHEST
DEFAULT = jax.lax.Precision.DEFAULT

_STATE = {"matmul": HIGHEST, "conv": DEFAULT}

# float16 and bfloat16: products of these accumulate in float32 (``preferred_element_type``) and are rounded once at
# the end, bias included, as PyTorch's CPU and GPU kernels do (what autocast's lower-precision ops run on)
LOW = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))
EPOCH = [0]


def matmul():
    """The precision of matrix products (PyTorch: ``set_float32_matmul_precision``, ``cuda.matmul.allow_tf32``)."""
    return _STATE["matmul"]


def mm(a, b):
    """``a @ b`` at the precision of matrix products."""
    return jnp.matmul(a, b, precision=_STATE["matmul"])


def conv():
    """The precision of convolutions (PyTorch: ``torch.backends.cudnn.allow_tf32``)."""
    return _STATE["conv"]


def set_precision(kind, precision):
    if _STATE[kind] is precision:
        return
    _STATE[kind] = precision
    EPOCH[0] += 1
    jax.clear_caches()  # every jitted kernel traced under the old setting
