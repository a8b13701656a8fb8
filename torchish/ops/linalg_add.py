"""The addmm family, ``beta * input + alpha * product``: addmm, addmv, addr, addbmm and baddbmm."""
from __future__ import annotations

import functools
import numbers
import warnings

import jax
import jax.numpy as jnp

from .. import _dtype, _precision
from .._tensor import Tensor
from .casting import check_scalar_fits
from .elementwise import _out, c10_name, out_structured, require_tensor
from . import registry as _registry
from .registry import apply, defop
from .registry import Family as _Family
from .linalg import _c, _check_bmm, _mm, _mm_error, _name, _same_dtype

_public = _Family(globals()).public


def _scaled_sum(c, prod, beta, alpha, *, beta_zero):
    """``beta * c + alpha * prod``; beta == 0 ignores ``c``, NaNs included."""
    out = alpha * prod
    if not beta_zero:
        out = beta * c + out
    return jnp.broadcast_to(out, jnp.broadcast_shapes(c.shape, prod.shape)).astype(prod.dtype)


def _half_gemm(c, a, b, beta, alpha, *, beta_zero):
    """float16/bfloat16 addmm/addmv/baddbmm as PyTorch's CPU gemm: ``beta * input + alpha * product`` in float32,
    rounded once (rounding the product first moves results by an ulp, and cancellations by far more)."""
    w = jnp.float32
    return _scaled_sum(c.astype(w), _mm(a.astype(w), b.astype(w)), beta, alpha, beta_zero=beta_zero).astype(a.dtype)


def _half_addbmm(c, a, b, beta, alpha, *, beta_zero):
    """float16/bfloat16 addbmm as PyTorch's CPU kernel: one addmm per batch into the result (beta applied with the
    first), each in float32 and rounded to the half type."""
    wide, r = _precision.stepper(a.dtype)
    prods = alpha * jnp.einsum("bij,bjk->bik", wide(a), wide(b), precision=_precision.matmul())
    first = prods[0] if beta_zero else beta * wide(c) + prods[0]
    acc = r(jnp.broadcast_to(first, prods.shape[1:]))
    for p in prods[1:]:  # (few batches: unrolled)
        acc = r(acc + p)
    return acc.astype(a.dtype)


def _half_addr(c, a, b, beta, alpha, *, beta_zero):
    """float16/bfloat16 addr as PyTorch's CPU kernel: ``beta * input + alpha * vec1 * vec2`` one operation at a
    time in the half type, beta and alpha converted to it."""
    wide, r = _precision.stepper(a.dtype)
    scaled = r(r(r(jnp.asarray(alpha, jnp.float32)) * wide(a)[:, None]) * wide(b)[None, :])
    if not beta_zero:  # (a number converts to the half type through float, as C++ converts a double to c10::Half)
        scaled = r(r(r(jnp.asarray(beta, jnp.float32)) * wide(c)) + scaled)
    return jnp.broadcast_to(scaled, (a.shape[0], b.shape[0])).astype(a.dtype)


def _addop(name, product, half, vjp=None):
    def fwd(c, a, b, beta, alpha, *, beta_zero):
        if a.dtype in _precision.LOW and a.size:
            return half(c, a, b, beta, alpha, beta_zero=beta_zero)
        return _scaled_sum(c, product(a, b), beta, alpha, beta_zero=beta_zero)
    return defop(name, fwd, vjp=vjp and functools.partial(vjp, fwd),
                 grad_name="".join(p.capitalize() for p in name.split("_")) + "Backward0")


def _addr_vjp(fwd, g, c, a, b, beta, alpha, out, *, beta_zero):
    """float16/bfloat16: PyTorch's formulas, each product rounded to the half type before alpha/beta scale it
    (``grad.mv(vec2) * alpha``, ``grad.t().mv(vec1) * alpha``, ``grad * beta``); other dtypes: derived."""
    if a.dtype not in _precision.LOW:
        return jax.vjp(lambda *v: fwd(*v, beta, alpha, beta_zero=beta_zero), c, a, b)[1](g) + (None, None)
    wide, r = _precision.stepper(a.dtype)
    gw = wide(g)
    ga, gb = r(gw @ wide(b)) * alpha, r(wide(a) @ gw) * alpha
    return tuple(v.astype(a.dtype) for v in (gw * beta, ga, gb)) + (None, None)


_ADDMM = _addop("addmm", _mm, _half_gemm)
_ADDMV = _addop("addmv", _mm, _half_gemm)
_BADDBMM = _addop("baddbmm", _mm, _half_gemm)
_ADDBMM = _addop("addbmm", lambda a, b: jnp.einsum("bij,bjk->ik", a, b, precision=_precision.matmul()), _half_addbmm)
_ADDR = _addop("addr", lambda a, b: a[:, None] * b[None, :], _half_addr, _addr_vjp)


def _expand_check(shape, target):
    shape, target = tuple(shape), tuple(target)
    if len(shape) > len(target):
        raise RuntimeError(f"The expanded size of the tensor ({target[0] if target else 0}) must match the existing "
                           f"size ({shape[0]}) at non-singleton dimension 0.  Target sizes: {list(target)}.  Tensor "
                           f"sizes: {list(shape)}")
    pad = (1,) * (len(target) - len(shape)) + shape
    for i in reversed(range(len(target))):  # PyTorch checks from the last dim
        s, t = pad[i], target[i]
        if s != t and s != 1:
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing size ({s}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: "
                               f"{list(shape)}")


def _add_operands(fname, input, a, b, a_name, b_name):
    """PyTorch's TypeErrors for a non-Tensor operand of addmm and its kin."""
    for pos, (arg, t) in enumerate((("input", input), (a_name, a), (b_name, b)), 1):
        require_tensor(t, fname, pos, arg)


def _addmm_dtypes(input, mat1, mat2):
    """addmm's dtype checks (made before its shape checks): self against mat2, then mat1 against mat2."""
    for first, t in (("self", input), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(f"{first} and mat2 must have the same dtype, but got {_name(t.dtype)} and "
                               f"{_name(mat2.dtype)}")


def _add_apply(op, input, a, b, beta, alpha, out, name):
    for t in (a, b):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_name(input.dtype)} and "
                               f"{_name(t.dtype)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # (addr refused float scalars already)
        beta, alpha = (_to_integer(v, input.dtype) for v in (beta, alpha))
    if out is None or _registry.autocast_hook is None:
        res = apply(op, (input, a, b, beta, alpha), beta_zero=beta == 0)
    else:  # autocast leaves out= calls alone
        from .inplace import autocast_off
        with autocast_off():
            res = apply(op, (input, a, b, beta, alpha), beta_zero=beta == 0)
    return _out(res, out, name) if name == "addr" else out_structured(res, out, name)  # (addr's out may cast)


def _check_empty_product(input, beta, shape, empty):
    """No product to add (an ``empty`` contraction) to a non-empty result of ``shape``: PyTorch's kernel scales the
    result in place (``result.mul_(beta)``), whose cast check refuses a beta of a higher kind than the result:
    ``torch.addmm(bool_c, bool_a[:, :0], bool_b[:0])`` raises ``result type Long can't be cast to the desired
    output type Bool``."""
    if not empty or 0 in shape or not isinstance(beta, numbers.Number) or beta == 0:
        return
    rd = _dtype.result_type_from_keys(((input.dtype, 2), (_dtype.scalar_dtype(beta), 0)))
    if not _dtype.can_cast(rd, input.dtype):
        raise RuntimeError(f"result type {_dtype.scalar_type_name(rd)} can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(input.dtype)}")


def _to_integer(v, dtype):
    """PyTorch converts addmm's beta/alpha to an integer result's type, truncating: 0.5 -> 0, -1.5 -> -1 (NaN
    and numbers out of range raise its RuntimeError)."""
    if not isinstance(v, float):
        return v
    check_scalar_fits(v, dtype)
    return int(v)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    _add_operands("addmm", input, mat1, mat2, "mat1", "mat2")
    if _registry.autocast_hook is not None and out is None:
        input, mat1, mat2 = _registry.autocast_hook("addmm", (input, mat1, mat2))
    _addmm_dtypes(input, mat1, mat2)
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise _mm_error(mat1.shape[0], mat1.shape[1], mat2.shape[0], mat2.shape[1])
    _same_dtype(mat1, mat2, "mm", "addmm_impl_cpu_")
    _expand_check(input.shape, (mat1.shape[0], mat2.shape[1]))
    _check_empty_product(input, beta, (mat1.shape[0], mat2.shape[1]), mat1.shape[1] == 0)
    return _add_apply(_ADDMM, input, mat1, mat2, beta, alpha, out, "addmm")


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    _add_operands("addmv", input, mat, vec, "mat", "vec")
    if _registry.autocast_hook is not None and out is None:
        input, mat, vec = _registry.autocast_hook("addmv", (input, mat, vec))
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    n = input.shape[0] if input.ndim else 1
    if mat.shape[1] != vec.shape[0] or (n != mat.shape[0] and n != 1):
        if input.ndim == 0:  # PyTorch's message reads input.size(0), which a 0-d input does not have
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({mat.shape[0]}x{mat.shape[1]}), vec "
                           f"({vec.shape[0]})")
    _same_dtype(mat, vec, "mv", "addmv_impl_cpu")
    if mat.numel() == 0 and beta != 0 and out is None and all(t.dtype is input.dtype for t in (mat, vec)):
        # PyTorch's CPU kernel returns ``beta * input`` in input's own shape (not broadcast to mat's rows), beta
        # taken in input's dtype (an integer input truncates 0.5 to 0, a Bool one makes 2 True)
        from .arith import mul
        if input.dtype is _dtype.bool:
            beta = bool(beta)
        elif not (input.dtype.is_floating_point or input.dtype.is_complex):
            beta = _to_integer(beta, input.dtype)
        return mul(input, beta) if beta != 1 else input.clone()
    return _add_apply(_ADDMV, input, mat, vec, beta, alpha, out, "addmv")


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    _add_operands("addr", input, vec1, vec2, "vec1", "vec2")
    if _registry.autocast_hook is not None and out is None:
        input, vec1, vec2 = _registry.autocast_hook("addr", (input, vec1, vec2))
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    _expand_check(input.shape, (vec1.shape[0], vec2.shape[0]))
    # unlike addmm, PyTorch's addr is composite (``beta * input + alpha * outer(vec1, vec2)``): operands promote
    from .convert import to_dtype
    from .elementwise import common_dtype
    dt = common_dtype((input, vec1, vec2))
    for arg, s in (("beta", beta), ("alpha", alpha)):   # PyTorch's check_addr_scalar, on the result's dtype
        if isinstance(s, bool) and dt is not _dtype.bool:
            raise RuntimeError(f"Boolean {arg} only supported for Boolean results.")
        if dt.category <= _dtype._INT and isinstance(s, (float, complex)):
            raise RuntimeError(f"For integral input tensors, argument {arg} must not be a floating point number.")
    for s in (beta, alpha):
        if dt.category != _dtype._COMPLEX and isinstance(s, complex) and s.imag:
            raise RuntimeError(f"value cannot be converted to type {c10_name(dt)} without overflow")
    input, vec1, vec2 = (t if t.dtype is dt else to_dtype(t, dt) for t in (input, vec1, vec2))
    return _add_apply(_ADDR, input, vec1, vec2, beta, alpha, out, "addr")


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    _add_operands("addbmm", input, batch1, batch2, "batch1", "batch2")
    if _registry.autocast_hook is not None and out is None:
        input, batch1, batch2 = _registry.autocast_hook("addbmm", (input, batch1, batch2))
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{t.ndim}, {t.ndim - 1}], but "
                             "got 2)")
        if t.ndim > 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    if batch1.shape[0] == 0:  # no product to take: PyTorch checks no dtype
        from .convert import to_dtype
        batch1, batch2 = (b if b.dtype is input.dtype else to_dtype(b, input.dtype) for b in (batch1, batch2))
    _addmm_dtypes(input, batch1, batch2)  # (PyTorch's addbmm runs addmm on each batch)
    _same_dtype(batch1, batch2, "bmm", "addmm_impl_cpu_")
    _expand_check(input.shape, (batch1.shape[1], batch2.shape[2]))
    # no batches: PyTorch's kernel scales the result in place before any product, whatever its shape (its cast
    # check refuses an integer result with a float beta even when the result is empty)
    no_batches = batch1.shape[0] == 0
    _check_empty_product(input, beta, () if no_batches else (batch1.shape[1], batch2.shape[2]),
                         no_batches or batch1.shape[2] == 0)
    return _add_apply(_ADDBMM, input, batch1, batch2, beta, alpha, out, "addbmm")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (batch1 @ batch2)`` batch by batch."""
    _add_operands("baddbmm", input, batch1, batch2, "batch1", "batch2")
    if _registry.autocast_hook is not None and out is None:
        input, batch1, batch2 = _registry.autocast_hook("baddbmm", (input, batch1, batch2))
    # PyTorch's order: input against the result's shape, input's dtype against batch1's, then bmm's checks
    _expand_check(input.shape, (batch1.size(0), batch1.size(1), batch2.size(2)))
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_c(input.dtype)}, batch1: "
                           f"{_c(batch1.dtype)}, batch2: {_c(batch2.dtype)}")
    _check_bmm(batch1, batch2)
    if batch2.dtype is not batch1.dtype and 0 in (*batch1.shape, batch2.shape[2]):
        # nothing to multiply: no dtype check, the result takes batch2's dtype (``beta * input`` in it)
        from .convert import to_dtype
        input, batch1 = to_dtype(input, batch2.dtype), to_dtype(batch1, batch2.dtype)
    _same_dtype(batch1, batch2, "bmm", "baddbmm")
    _check_empty_product(input, beta, (batch1.shape[0], batch1.shape[1], batch2.shape[2]), batch1.shape[2] == 0)
    return _add_apply(_BADDBMM, input, batch1, batch2, beta, alpha, out, "baddbmm")


def _scalars_first(fn):
    """``fn`` also taking PyTorch's deprecated overloads with beta (and alpha) first, as old code writes them:
    ``torch.addmm(beta, input, [alpha,] mat1, mat2)``, ``x.addmm_(beta, [alpha,] mat1, mat2)``."""
    @functools.wraps(fn)
    def f(*args, **kwargs):
        if len(args) in (4, 5) and "beta" not in kwargs and "alpha" not in kwargs:
            first = 1 if isinstance(args[0], Tensor) else 0  # the method form binds the tensor first
            spots = (first,) if len(args) == 4 else (first, 2)
            if all(isinstance(args[i], numbers.Number) == (i in spots) for i in range(len(args))):
                warnings.warn(f"This overload of {fn.__name__} is deprecated: pass beta and alpha as keywords",
                              UserWarning, stacklevel=2)
                tensors = [a for i, a in enumerate(args) if i not in spots]
                scalars = dict(zip(("beta", "alpha"), (args[i] for i in spots)))
                return fn(*tensors, **scalars, **kwargs)
        return fn(*args, **kwargs)
    return f


for _n in ("addmm", "addmv", "addbmm", "baddbmm", "addr"):
    _public(_n, _scalars_first(globals()[_n]), inplace=True)
