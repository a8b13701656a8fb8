"""Diagonals and triangles: diagonal (a view), diag, diag_embed, diagflat, trace, tril/triu (with tril_/triu_),
block_diag and fill_diagonal_."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import wrap_dim
from . import inplace as _ip
from .casting import check_scalar_fits
from .elementwise import out_structured, parser_worded, require_int, require_tensor
from .inplace import layout_rule
from .registry import apply, defop
from .registry import Family as _Family
from .shape import reshape

_public = _Family(globals()).public


# ----------------------------------------------------------------------------------------------------------------
# diagonal (a view)


def _diagonal_fwd(x, *, offset, dim1, dim2):
    return jnp.diagonal(x, offset, dim1, dim2)


_DIAGONAL = defop("diagonal", _diagonal_fwd, view=True, linear=True, grad_name="DiagonalBackward0")


@layout_rule("diagonal")
def _diagonal_layout(lay, *, offset, dim1, dim2):
    shape, strides, off = lay
    if offset >= 0:
        n = max(min(shape[dim1], shape[dim2] - offset), 0)
        start = offset * strides[dim2]
    else:
        n = max(min(shape[dim1] + offset, shape[dim2]), 0)
        start = -offset * strides[dim1]
    keep = [i for i in range(len(shape)) if i not in (dim1, dim2)]
    return (tuple(shape[i] for i in keep) + (n,), tuple(strides[i] for i in keep) + (strides[dim1] + strides[dim2],),
            off + (start if n else 0))


def diagonal(input, offset=0, dim1=0, dim2=1):
    require_tensor(input, "diagonal")
    require_int(offset, "diagonal", 2, "offset")
    a, b = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_DIAGONAL, (input,), offset=int(offset), dim1=a, dim2=b)


# ----------------------------------------------------------------------------------------------------------------
# tril / triu


def _tri_fwd(x, *, k, lower):
    """The lower (``j - i <= k``) or upper (``j - i >= k``) triangle of the last two dims, zeros elsewhere; ``k`` may
    be traced (jnp.tril/triu need a static one)."""
    rows = jax.lax.broadcasted_iota(jnp.int32, x.shape[-2:], 0)
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape[-2:], 1)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return jnp.where(keep, x, jnp.zeros((), x.dtype))


def _tri_dynamic(static, take):
    """``OpDef.dynamic`` of tril/triu: the diagonal is a value of the eager kernels (a loop over diagonals, or
    masks for a new offset each time, compiles one kernel)."""
    return tuple((n, take(v) if n == "k" else v) for n, v in static)


_TRIL = defop("tril", functools.partial(_tri_fwd, lower=True), linear=True, grad_name="TrilBackward0",
              dynamic=_tri_dynamic)
_TRIU = defop("triu", functools.partial(_tri_fwd, lower=False), linear=True, grad_name="TriuBackward0",
              dynamic=_tri_dynamic)


def _diagonal_arg(input, diagonal, name):
    require_int(diagonal, name, 2, "diagonal", symint=True)  # (tril/triu: SymInt diagonal)
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    span = input.shape[-2] + input.shape[-1]  # (any offset past it keeps, or zeroes, everything)
    return max(-span, min(span, int(diagonal)))


def tril(input, diagonal=0, *, out=None):
    require_tensor(input, "tril")
    return out_structured(apply(_TRIL, (input,), k=_diagonal_arg(input, diagonal, "tril")), out, "tril")


def triu(input, diagonal=0, *, out=None):
    require_tensor(input, "triu")
    return out_structured(apply(_TRIU, (input,), k=_diagonal_arg(input, diagonal, "triu")), out, "triu")


# ----------------------------------------------------------------------------------------------------------------
# diagonals: diag / diag_embed / diagflat / trace


def _diag_embed_fwd(x, *, offset, dim1, dim2):
    m = x.shape[-1]
    n = m + abs(offset)
    rows = np.arange(m) + max(-offset, 0)
    cols = np.arange(m) + max(offset, 0)
    z = jnp.zeros(x.shape[:-1] + (n, n), x.dtype).at[..., rows, cols].set(x)
    return jnp.moveaxis(z, (-2, -1), (dim1, dim2))


_DIAG_EMBED = defop("diag_embed", _diag_embed_fwd, linear=True, grad_name="DiagEmbedBackward0")
_DIAG_COPY = defop("diagonal_copy", _diagonal_fwd, linear=True, grad_name="DiagonalBackward0_copy")


@parser_worded
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    require_int(offset, "diag_embed", 2, "offset")
    nd = input.ndim + 1
    a, b = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_DIAG_EMBED, (input,), offset=int(offset), dim1=a, dim2=b)


def diag(input, diagonal=0, *, out=None):
    require_tensor(input, "diag")
    require_int(diagonal, "diag", 2, "diagonal")
    if input.ndim == 1:
        return out_structured(apply(_DIAG_EMBED, (input,), offset=int(diagonal), dim1=0, dim2=1), out, "diag")
    if input.ndim == 2:
        return out_structured(apply(_DIAG_COPY, (input,), offset=int(diagonal), dim1=0, dim2=1), out, "diag")
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagflat(input, offset=0):
    return apply(_DIAG_EMBED, (reshape(input, (-1,)),), offset=int(offset), dim1=0, dim2=1)


def _trace_fwd(x):
    d = jnp.diagonal(x)
    return jnp.sum(d, dtype=jnp.int64 if jnp.issubdtype(x.dtype, jnp.integer) else x.dtype)


_TRACE = defop("trace", _trace_fwd, linear=True, grad_name="TraceBackward0")


def trace(input):
    require_tensor(input, "trace")
    if input._v.dtype == np.bool_:  # checked first, as PyTorch's dispatch does
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")  # mirrors PyTorch's error
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(_TRACE, (input,))


# ----------------------------------------------------------------------------------------------------------------
# block_diag / fill_diagonal_


def block_diag(*tensors):
    """The tensors (0-d, 1-d as one row, or 2-d) as blocks along the diagonal of a zero matrix (dtypes promoted).

    Example::

        >>> torch.block_diag(torch.tensor([[1, 2]]), torch.tensor(3))
        tensor([[1, 2, 0],
                [0, 0, 3]])
    """
    from .creation import zeros
    from .join import _tensor_list
    ts = _tensor_list(tensors, "block_diag")
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not ts:
        return zeros((1, 0))
    return apply(_BLOCK_DIAG, tuple(ts))


def _block_diag_fwd(*xs):
    blocks = [x if x.ndim == 2 else x.reshape(1, x.size) for x in xs]  # (a 0-d or 1-d tensor is one row)
    out = jnp.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), blocks[0].dtype)
    top = left = 0
    for b in blocks:
        out = out.at[top:top + b.shape[0], left:left + b.shape[1]].set(b)
        top, left = top + b.shape[0], left + b.shape[1]
    return out


# one node over every block, as PyTorch's (which saves only their sizes and dtypes)
_BLOCK_DIAG = defop("block_diag", _block_diag_fwd, promote="same", linear=True, grad_name="BlockDiagBackward0")


def _diagonal_mask(shape, wrap):
    """The elements ``fill_diagonal_`` writes, as a boolean mask (PyTorch's strided walk over the storage)."""
    numel = int(np.prod(shape))
    step = sum(int(np.prod(shape[i + 1:])) for i in range(len(shape)))  # the sum of the row-major strides
    size = min(shape[0], shape[1])
    flat = list(np.arange(size) * step)
    if wrap and len(shape) == 2 and shape[0] > shape[1] + 1:  # a tall matrix: the diagonal restarts below
        w = shape[1]
        flat += list(w * (w + 1) + np.arange(-(-numel // (w + 1)) - size) * (w + 1))
    mask = np.zeros(numel, np.bool_)
    mask[np.asarray(flat, np.int64)] = True
    return mask.reshape(shape)


def _fill_diagonal(self, fill_value, wrap=False):
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and any(n != self.shape[0] for n in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    from .._tensor import Tensor
    from .scatter import masked_fill
    mask = _diagonal_mask(tuple(self.shape), bool(wrap))
    if isinstance(fill_value, (int, float, complex)) and not isinstance(fill_value, bool):
        # PyTorch fills the main diagonal, then a tall matrix's wrapped part, each by fill_ (checked unless it is
        # one float16/bfloat16 element); the value below is then the one written, which masked_fill lets through
        size = min(self.shape[0], self.shape[1])
        for n in (size, int(mask.sum()) - size)[:1 + (int(mask.sum()) > size)]:
            fill_value = check_scalar_fits(fill_value, self.dtype, numel=n)
        if self.dtype in (_dtype.float16, _dtype.bfloat16) and not isinstance(fill_value, complex):
            with np.errstate(over="ignore"):
                fill_value = float(np.asarray(fill_value, np.float64).astype(self.dtype.np))
    if self.dtype in _dtype._BAREBONES_UNSIGNED:  # (PyTorch fills uint16/32/64, which have no masked_fill kernel)
        from .ternary import where
        fill = Tensor._make(jnp.asarray(np.asarray(fill_value).astype(self.dtype.np)))  # (checked above: wraps)
        return where(Tensor._make(jnp.asarray(mask)), fill, self)
    return masked_fill(self, Tensor._make(jnp.asarray(mask)), fill_value)


for _n in ("diagonal", "tril", "triu", "diag", "diag_embed", "diagflat", "trace"):
    _public(_n, globals()[_n])
_public("block_diag", block_diag, method=False)
METHODS["fill_diagonal_"] = _ip.make_inplace(_fill_diagonal, "fill_diagonal_")
METHODS["tril_"] = _ip.make_inplace(tril, "tril_")
METHODS["triu_"] = _ip.make_inplace(triu, "triu_")
