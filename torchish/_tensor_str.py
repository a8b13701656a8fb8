"""PyTorch-style printing of tensors."""
from __future__ import annotations

import jax
import numpy as np


def tensor_repr(t) -> str:
    d = t._d
    if isinstance(d, jax.core.Tracer):
        body = f"tensor(<traced {t.dtype.name} {list(t.shape)}>)"
    else:
        body = "tensor(" + np.array2string(np.asarray(d), separator=", ", prefix="tensor(") + ")"
    extras = []
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    if extras:
        body = body[:-1] + ", " + ", ".join(extras) + ")"
    return body
