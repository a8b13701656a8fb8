"""Helpers shared by the distributions (``torch.distributions.utils``): broadcasting parameters, converting
between probabilities and logits, lazily computed attributes, and the all-true test that argument validation uses.
"""
from __future__ import annotations

import jax

import torchish
from .._tensor import Tensor

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]


def broadcast_all(*values):
    """Tensors and numbers broadcast together; numbers become tensors of the first tensor's dtype (the default
    float dtype when all are numbers)."""
    # PyTorch's numbers here are int, float and bool: np.float64 (a float) passes, np.float32/np.int64/complex do not
    if not all(isinstance(v, (Tensor, int, float, bool)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    if all(isinstance(v, Tensor) for v in values):
        return torchish.broadcast_tensors(*values)
    first = next((v for v in values if isinstance(v, Tensor)), None)
    opts = dict(dtype=torchish.get_default_dtype()) if first is None else dict(dtype=first.dtype, device=first.device)
    return torchish.broadcast_tensors(*[v if isinstance(v, Tensor) else torchish.tensor(v, **opts) for v in values])


def _standard_normal(shape, dtype, device):
    return torchish.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Log-odds -> probabilities (``is_binary``), else unnormalised log-probabilities on the last dim -> softmax."""
    if is_binary:
        return torchish.sigmoid(logits)
    return torchish.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities clamped into ``[eps, 1 - eps]`` for their dtype's machine epsilon."""
    eps = torchish.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Probabilities -> log-odds (``is_binary``) or log-probabilities."""
    p = clamp_probs(probs)
    if is_binary:
        return torchish.log(p) - torchish.log1p(-p)
    return torchish.log(p)


class lazy_property:
    """A property computed on first access, then stored in the instance's ``__dict__`` (where later reads find
    it, and where the argument validation and ``__repr__`` look for the parameters given explicitly)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torchish.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: a property too (for documentation tools)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_indices(n, diag):
    """Row and column indices of the lower triangle (entries with ``col - row <= diag``), row by row."""
    pairs = [(i, j) for i in range(n) for j in range(n) if j - i <= diag]
    return (torchish.tensor([i for i, _ in pairs], dtype=torchish.int64),
            torchish.tensor([j for _, j in pairs], dtype=torchish.int64))


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (up to diagonal ``diag``) of the last two dims, flattened row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of :func:`tril_matrix_to_vec`: lower-triangle entries -> a square matrix (zeros above)."""
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > torchish.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular "
                         "part of a square D x D matrix.")
    n = round(n)
    rows, cols = _tril_indices(n, diag)
    if rows.shape[0] != m:
        raise RuntimeError(f"shape mismatch: value tensor of shape [{m}] cannot be broadcast to indexing result of "
                           f"shape [{rows.shape[0]}]")
    flat_idx = (rows * n + cols).expand(tuple(vec.shape[:-1]) + (rows.shape[0],))
    out = torchish.zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype, device=vec.device)
    return out.scatter(-1, flat_idx, vec).reshape(tuple(vec.shape[:-1]) + (n, n))


# ----------------------------------------------------------------------------------------------------------------
# validation support


def all_true(valid) -> bool:
    """Whether every element of a boolean tensor is true; True (check skipped) while its value is being traced
    by ``torchish.compile`` or a JAX transform, where a Python ``if`` on a value would break the graph."""
    if not isinstance(valid, Tensor):
        return bool(valid)
    if isinstance(valid._v, jax.core.Tracer):
        return True
    return bool(valid.all())
