"""The matmul family (matmul, mm, bmm, mv, dot, outer, einsum, tensordot, addmm, baddbmm...) with PyTorch's shape
checks and error messages."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public



def _check_same_dtype(a, b, name):
    if a._d.dtype != b._d.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_dtype.scalar_type_name(a.dtype)} "
                           f"!= {_dtype.scalar_type_name(b.dtype)}" if name in ("mm", "matmul", "addmm") else
                           f"{name}: expected both inputs to have the same dtype, but got "
                           f"{_dtype.scalar_type_name(a.dtype)} and {_dtype.scalar_type_name(b.dtype)}")


_MATMUL = defop("matmul", lambda a, b: jnp.matmul(a, b), grad_name="MmBackward0")
_BMM = defop("bmm", lambda a, b: jnp.matmul(a, b), grad_name="BmmBackward0")
_MV = defop("mv", lambda a, b: jnp.matmul(a, b), grad_name="MvBackward0")
_DOT = defop("dot", lambda a, b: jnp.dot(a, b), grad_name="DotBackward0")
_UNSAFE_VIEW = defop("matmul_nd", lambda a, b: jnp.matmul(a, b), grad_name="UnsafeViewBackward0")
_EXPAND_MM = defop("matmul_bcast", lambda a, b: jnp.matmul(a, b), grad_name="ExpandBackward0")


def matmul(input, other, *, out=None):
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(other).__name__}")
    a, b = input.shape, other.shape
    if len(a) == 0 or len(b) == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and {len(b)}D")
    _check_same_dtype(input, other, "matmul")
    ka = a[-1]
    kb = b[0] if len(b) == 1 else b[-2]
    if ka != kb:
        if len(a) == 1 and len(b) == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same "
                               f"number of elements, but got {a[0]} and {b[0]} elements respectively")
        if len(a) == 2 and len(b) == 1:
            raise RuntimeError(f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({b[0]})")
        ra = a[0] if len(a) == 1 else int(jnp.prod(jnp.array(a[:-1])))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ra}x{ka} and {kb}x{b[-1]})"
                           if len(b) == 2 else
                           f"Expected size for first two dimensions of batch2 tensor to be: {list(b[:-2]) + [ka]} but "
                           f"got: {list(b[:-1])}.")
    if len(a) == 1 and len(b) == 1:
        op = _DOT
    elif len(a) == 2 and len(b) == 1:
        op = _MV
    elif len(a) <= 2 and len(b) <= 2:
        op = _MATMUL
    elif len(a) == 3 and len(b) == 3 and a[0] == b[0]:
        op = _BMM
    else:
        op = _UNSAFE_VIEW
    from .elementwise import _out
    return _out(apply(op, (input, other)), out)


def mm(input, mat2, *, out=None):
    if input.ndim != 2:
        raise RuntimeError(f"self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _check_same_dtype(input, mat2, "mm")
    return apply(_MATMUL, (input, mat2))


def bmm(input, mat2, *, out=None):
    if input.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_same_dtype(input, mat2, "bmm")
    return apply(_BMM, (input, mat2))


def mv(input, vec, *, out=None):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    return apply(_MV, (input, vec))


def dot(input, other, *, out=None):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] "
                           f"to have the same number of elements, but got {input.shape[0]} and {other.shape[0]} "
                           "elements respectively")
    _check_same_dtype(input, other, "dot")
    return apply(_DOT, (input, other))


vdot_op = defop("vdot", lambda a, b: jnp.vdot(a, b), grad_name="VdotBackward0")


def vdot(input, other, *, out=None):
    return apply(vdot_op, (input, other))


_OUTER = defop("outer", lambda a, b: jnp.outer(a, b), promote="same", grad_name="OuterBackward0")


def outer(input, vec2, *, out=None):
    return apply(_OUTER, (input, vec2))


def _einsum_fwd(*xs, eq):
    return jnp.einsum(eq, *xs)


_EINSUM = defop("einsum", _einsum_fwd, grad_name="EinsumBackward0")


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return apply(_EINSUM, tuple(operands), eq=equation.replace(" ", ""))


def _tensordot_fwd(a, b, *, axes):
    return jnp.tensordot(a, b, axes)


_TENSORDOT = defop("tensordot", _tensordot_fwd, grad_name="TensordotBackward0")


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        axes = dims
    else:
        axes = (tuple(dims[0]) if isinstance(dims[0], (list, tuple)) else (dims[0],),
                tuple(dims[1]) if isinstance(dims[1], (list, tuple)) else (dims[1],))
    return apply(_TENSORDOT, (a, b), axes=axes)


_ADDMM = defop("addmm", lambda c, a, b, beta, alpha: beta * c + alpha * jnp.matmul(a, b), grad_name="AddmmBackward0")
_BADDBMM = defop("baddbmm", lambda c, a, b, beta, alpha: beta * c + alpha * jnp.matmul(a, b),
                 grad_name="BaddbmmBackward0")
_ADDMV = defop("addmv", lambda c, a, b, beta, alpha: beta * c + alpha * jnp.matmul(a, b), grad_name="AddmvBackward0")
_ADDBMM = defop("addbmm", lambda c, a, b, beta, alpha: beta * c + alpha * jnp.einsum("bij,bjk->ik", a, b),
                grad_name="AddbmmBackward0")
_ADDR = defop("addr", lambda c, a, b, beta, alpha: beta * c + alpha * jnp.outer(a, b), grad_name="AddrBackward0")


def _beta_term(beta):
    return 0 if beta == 0 else beta


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if mat1.ndim != 2 or mat2.ndim != 2 or mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[-1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[-1]})")
    return apply(_ADDMM, (input, mat1, mat2, beta, alpha))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if batch1.ndim != 3 or batch2.ndim != 3 or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[-1]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    return apply(_BADDBMM, (input, batch1, batch2, beta, alpha))


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    return apply(_ADDMV, (input, mat, vec, beta, alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return apply(_ADDBMM, (input, batch1, batch2, beta, alpha))


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    return apply(_ADDR, (input, vec1, vec2, beta, alpha))


for _n in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "tensordot", "addmm", "baddbmm", "addmv",
           "addbmm", "addr"):
    _public(_n, globals()[_n])
_public("einsum", einsum, method=False)
ger = outer
inner_op = defop("inner", lambda a, b: jnp.inner(a, b), grad_name="InnerBackward0")


def inner(input, other, *, out=None):
    return apply(inner_op, (input, other))


_public("inner", inner)
_public("ger", ger)


def _matmul_dunder(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def _rmatmul_dunder(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


METHODS["__matmul__"] = _matmul_dunder
METHODS["__rmatmul__"] = _rmatmul_dunder
