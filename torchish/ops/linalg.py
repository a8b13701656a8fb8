"""The matmul family: matmul (every broadcasting case), mm, bmm, mv, dot, vdot, outer/ger, inner and tensordot,
with PyTorch's shape checks, error messages and ``grad_fn`` names (addmm and its kin: ``linalg_add.py``).

Products run at the precision of ``torchish/_precision.py``: full float32 (``Precision.HIGHEST``) by default, as
PyTorch's ``get_float32_matmul_precision() == 'highest'``, so accelerators do not silently drop to TF32/bf16 passes;
``set_float32_matmul_precision('high')`` allows them.
``matmul`` follows PyTorch's dispatch (dot / mv / mm / folding the batch into one mm / batched bmm) only to report
the same errors and ``grad_fn`` names; every path computes ``jnp.matmul``.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype, _precision
from .._tensor import Tensor
from .broadcast import broadcast_error
from .contraction_graph import records_graph, tensordot_graph
from . import float8 as _float8
from .elementwise import _out, c10_name, not_implemented, out_structured, require_tensor
from . import opnode as _opnode, registry as _registry, saved as _saved
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


_mm = _precision.mm


# the operands a product copies before multiplying ("0", "1", "01"): its node saves the copies, not the operands
_COPIES = {"": "", "0": "_copy0", "1": "_copy1", "01": "_copy01"}


def _ops(names):
    """One op per grad_fn name and per set of operands PyTorch's matmul copies (``saved.SAVED["matmul..."]``)."""
    return {(n, c): defop(f"matmul_{n}{sfx}", _mm, grad_name=n, saved=_saved.SAVED["matmul" + sfx])
            for n in names for c, sfx in _COPIES.items()}


_MATMUL = _ops(("DotBackward0", "MvBackward0", "SqueezeBackward4", "MmBackward0", "UnsafeViewBackward0",
                "CloneBackward0", "TransposeBackward0", "BmmBackward0"))
# the views and products PyTorch's matmul records under these nodes (ops.shown_graph)
_opnode.SHOWN_KIND.update((op, ("matmul", c)) for (n, c), op in _MATMUL.items()
                          if n in ("SqueezeBackward4", "UnsafeViewBackward0"))


def _c(dt):
    return {"int16": "short int", "int8": "signed char", "uint8": "unsigned char", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(dt.name) or c10_name(dt)


def _name(dt):
    return _dtype.scalar_type_name(dt)


def _require(x, fname, arg, pos=None):
    """PyTorch's TypeError for a non-Tensor operand (its parser's ``pos``, counted from ``input``)."""
    if not isinstance(x, Tensor):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{arg}'{where} must be Tensor, not {type(x).__name__}")


def _same_dtype(a, b, kind, kernel):
    """PyTorch's dtype errors: the products never promote. mm, mv and bmm check the sizes before the dtypes (their
    meta functions run before the kernel), dot the dtypes first."""
    if a.dtype is not b.dtype:
        if kind == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_name(a.dtype)} and "
                               f"{_name(b.dtype)}")
        if kind == "mv":
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_name(b.dtype)}, "
                               f"{_name(a.dtype)}, and {_name(b.dtype)}")
        if kind == "mm":
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c(a.dtype)} != {_c(b.dtype)}")
        raise RuntimeError(f"expected scalar type {_name(a.dtype)} but found {_name(b.dtype)}")
    if a.dtype is _dtype.bool and not (kind in ("mm", "bmm", "mv") and 0 in tuple(a.shape) + tuple(b.shape)):
        raise not_implemented(kernel, a.dtype)  # an empty product returns before PyTorch's kernel dispatch


def _mm_error(r1, c1, r2, c2):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({r1}x{c1} and {r2}x{c2})")


def _mv_error(n, m, k):
    return RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{m}), vec ({k})")


def _dot_error(n, k):
    return RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{k}] to have the same number of "
                        f"elements, but got {n} and {k} elements respectively")


def _bmm_error(b, m1, b2, m2):
    return RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {m1}] but got: "
                        f"[{b2}, {m2}].")


class _EmptyBmm(Exception):
    """Raised by :func:`_matmul_plan` for a batched product with nothing to multiply and mixed dtypes."""


def _should_fold(a, b):
    """PyTorch's ``should_fold`` for contiguous inputs: fold the larger operand's batch into one mm/mv."""
    da, db = a.ndim, b.ndim
    larger_a = da >= db
    d1, d2 = (da, db) if larger_a else (db, da)
    if not (d1 >= 3 and d2 <= 2):
        return False
    if (b if larger_a else a)._rg:
        return True
    if da == 2:
        return False
    big = a if larger_a else b
    return big.numel() == 0 or larger_a or b.shape[-2] == 1


def _matmul_plan(a, b):
    """(grad_fn name, dtype-check kind, kernel) for ``a @ b``, raising PyTorch's shape errors."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    da, db = len(sa), len(sb)
    if da == 1 and db == 1:
        _same_dtype(a, b, "dot", "dot")
        if sa[0] != sb[0]:
            raise _dot_error(sa[0], sb[0])
        return "DotBackward0", ""
    if da == 2 and db == 1:
        if sa[1] != sb[0]:
            raise _mv_error(sa[0], sa[1], sb[0])
        _same_dtype(a, b, "mv", "addmv_impl_cpu")
        return "MvBackward0", ""
    if da <= 2 and db <= 2:
        r1, c1 = (1, sa[0]) if da == 1 else sa
        if c1 != sb[0]:
            raise _mm_error(r1, c1, sb[0], sb[1])
        _same_dtype(a, b, "mm", "addmm_impl_cpu_")
        return ("SqueezeBackward4" if da == 1 else "MmBackward0"), ""
    if da == 3 and db == 3 and sa[0] == 1 and sb[0] != 1 and a._rg:  # PyTorch folds a batch-1 3D @ 3D
        return _fold_plan(a, b, sa[1:], sb)
    if _should_fold(a, b):
        return _fold_plan(a, b, sa, sb)
    batch_a, batch_b = sa[:-2], sb[:-2]
    try:
        batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    except ValueError:
        raise broadcast_error(batch_a, batch_b) from None
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    nb = math.prod(batch)
    if m1 != m2:
        raise _bmm_error(nb, m1, nb, m2)
    # each operand is expanded to the common batch and flattened to (batch, rows, cols): a copy unless a view
    mat_a, mat_b = (sa[-2] if da > 1 else 1, m1), (sb[-2:] if db > 1 else (m2,))
    if 0 in (nb, mat_a[0], m1, mat_b[-1]) and a.dtype is not b.dtype:
        raise _EmptyBmm  # bmm's rule: no product to take, no dtype check, the result takes ``b``'s dtype
    _same_dtype(a, b, "bmm", "bmm")
    copies = "0" if copied_by_reshape(a, batch + mat_a, (nb,) + mat_a) else ""
    if copied_by_reshape(b, batch + mat_b, (nb,) + mat_b):
        copies += "1"
    return "UnsafeViewBackward0", copies


def _fold_plan(a, b, sa, sb):
    """The folded path: the larger operand's batch becomes mm/mv rows (transposed when ``b`` is the larger, which
    PyTorch flattens as ``b.mT.reshape(-1, k)``: a copy unless that is a view)."""
    transpose = len(sb) > len(sa)
    if not transpose:
        rows, k = math.prod(sa[:-1]), sa[-1]
        copies = "0" if copied_by_reshape(a, sa, (rows, k)) else ""
        if len(sb) == 2:
            if k != sb[0]:
                raise _mm_error(rows, k, sb[0], sb[1])
            _same_dtype(a, b, "mm", "addmm_impl_cpu_")
            return "UnsafeViewBackward0", copies
        if k != sb[0]:
            raise _mv_error(rows, k, sb[0])
        _same_dtype(a, b, "mv", "addmv_impl_cpu")
        return "UnsafeViewBackward0", copies
    rows, k = math.prod(sb[:-2]) * sb[-1], sb[-2]
    copies = "1" if copied_by_reshape(b, sb, (rows, k), transpose=True) else ""
    # (``b`` flattened is the matrix operand now: PyTorch's messages name it first)
    if len(sa) == 2:
        if k != sa[1]:
            raise _mm_error(rows, k, sa[1], sa[0])
        _same_dtype(b, a, "mm", "addmm_impl_cpu_")
        n, p = sa[0], sb[-1]
        return ("CloneBackward0" if n > 1 and p > 1 and a.numel() and b.numel() else "TransposeBackward0"), copies
    if k != sa[0]:
        raise _mv_error(rows, k, sa[0])
    _same_dtype(b, a, "mv", "addmv_impl_cpu")
    return "UnsafeViewBackward0", copies


def copied_by_reshape(t, shape, new_shape, transpose=False, perm=None):
    """Whether PyTorch's ``t.expand(shape).reshape(new_shape)`` copies (``t.mT.reshape(new_shape)`` when
    ``transpose``, ``t.permute(perm).reshape(new_shape)`` given ``perm``): the strides ``t`` has in PyTorch (a
    view's) cannot be merged into ``new_shape``. Products that save such a copy save a temporary, not ``t``."""
    from .inplace import layout, view_strides
    tshape, tstrides, _ = layout(t)
    if transpose:
        perm = tuple(range(len(tshape) - 2)) + (len(tshape) - 1, len(tshape) - 2)
    if perm is not None:
        tshape, tstrides = tuple(tshape[i] for i in perm), tuple(tstrides[i] for i in perm)
        shape = tshape
    lead = len(shape) - len(tshape)
    strides = [0] * lead + [st if n == s else 0 for n, s, st in zip(tshape, shape[lead:], tstrides)]
    return view_strides(shape, strides, new_shape) is None


def matmul(input, other, *, out=None):
    """``input @ other`` with NumPy/PyTorch broadcasting: 1-D operands are vectors, leading dims are batches."""
    _require(input, "matmul", "input", 1)
    _require(other, "matmul", "other", 2)
    if _registry.autocast_hook is not None and out is None:  # autocast casts before the dtype checks
        input, other = _registry.autocast_hook("matmul", (input, other))
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    _float8.check_matmul(input, other)
    try:
        plan = _matmul_plan(input, other)
    except _EmptyBmm:
        from .convert import to_dtype
        input = to_dtype(input, other.dtype)
        plan = _matmul_plan(input, other)
    res = apply(_MATMUL[plan], (input, other))
    if plan == ("MmBackward0", ""):
        _keep_strides(res, input, other)
    if plan[0] == "UnsafeViewBackward0" and res._gfn is not None and input.ndim >= 2 and other.ndim >= 3:
        res._gfn.__dict__["reshape_alias"] = _reshape_alias(input, other)  # (for ops.shown_graph)
    return out_structured(res, out, "matmul")


def _keep_strides(res, a, b):
    """PyTorch's MmBackward0 keeps its operands' strides (``_saved_self_sym_strides``, ``_saved_mat2_sym_strides``:
    ``x.t() @ w`` saves (1, rows)): the layouts of the operands, read by ``autograd.saved_attrs``."""
    if res._gfn is not None and not (a._view is None is b._view and a._layout is None is b._layout):
        from .inplace import layout  # (contiguous operands, the common case: saved_attrs derives their strides)
        res._gfn.__dict__["sym_strides"] = (tuple(layout(a)[1]), tuple(layout(b)[1]))
    return res


def _reshape_alias(a, b):
    """Per operand of a batched matmul: whether PyTorch's reshape of ``t.expand(batch + matrix)`` to (batch,
    rows, cols) is a ``_reshape_alias`` (ReshapeAliasBackward0: a view of a non-contiguous tensor) rather than a
    ``view`` (ViewBackward0: a contiguous one). Copied operands (clone, then _unsafe_view) are told apart elsewhere."""
    from .inplace import is_contiguous, layout
    sa, sb = tuple(a.shape), tuple(b.shape)
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    flags = []
    for t, st in ((a, sa), (b, sb)):
        shape = batch + st[-2:]
        tshape, tstrides, _ = layout(t)
        lead = len(shape) - len(tshape)
        strides = [0] * lead + [s if n == m else 0 for n, m, s in zip(tshape, shape[lead:], tstrides)]
        flags.append(not is_contiguous(shape, tuple(strides)))
    return tuple(flags)


def mm(input, mat2, *, out=None):
    _require(input, "mm", "input", 1)
    _require(mat2, "mm", "mat2", 2)
    if _registry.autocast_hook is not None and out is None:
        input, mat2 = _registry.autocast_hook("mm", (input, mat2))
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise _mm_error(input.shape[0], input.shape[1], mat2.shape[0], mat2.shape[1])
    _same_dtype(input, mat2, "mm", "addmm_impl_cpu_")
    return out_structured(_keep_strides(apply(_MATMUL["MmBackward0", ""], (input, mat2)), input, mat2), out, "mm")


def _check_bmm(b1, b2, what="batch"):
    if b1.ndim != 3:
        raise RuntimeError(f"{what}1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError(f"{what}2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise _bmm_error(b1.shape[0], b1.shape[2], b2.shape[0], b2.shape[1])


def bmm(input, mat2, *, out=None):
    _require(input, "bmm", "input", 1)
    _require(mat2, "bmm", "mat2", 2)
    if _registry.autocast_hook is not None and out is None:
        input, mat2 = _registry.autocast_hook("bmm", (input, mat2))
    _check_bmm(input, mat2)
    if (input.shape[2] == 0 or 0 in (input.shape[0], input.shape[1], mat2.shape[2])) and input.dtype is not mat2.dtype:
        # no product to take (an empty result or contraction): PyTorch checks no dtype, the result takes mat2's
        from .convert import to_dtype
        input = to_dtype(input, mat2.dtype)
    _same_dtype(input, mat2, "bmm", "bmm")
    return out_structured(apply(_MATMUL["BmmBackward0", ""], (input, mat2)), out, "bmm")


def mv(input, vec, *, out=None):
    _require(input, "mv", "input", 1)
    _require(vec, "mv", "vec", 2)
    if _registry.autocast_hook is not None and out is None:
        input, vec = _registry.autocast_hook("mv", (input, vec))
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise _mv_error(input.shape[0], input.shape[1], vec.shape[0])
    _same_dtype(input, vec, "mv", "addmv_impl_cpu")
    return out_structured(apply(_MATMUL["MvBackward0", ""], (input, vec)), out, "mv")


def _check_dot(a, b, kernel):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype is not b.dtype:  # (PyTorch's dot_check: the dtypes, then the sizes; the kernel's Bool error last)
        _same_dtype(a, b, "dot", kernel)
    if a.shape[0] != b.shape[0]:
        raise _dot_error(a.shape[0], b.shape[0])
    _same_dtype(a, b, "dot", kernel)


def dot(input, tensor, *, out=None):
    _require(input, "dot", "input", 1)
    _require(tensor, "dot", "tensor", 2)
    if _registry.autocast_hook is not None and out is None:
        input, tensor = _registry.autocast_hook("dot", (input, tensor))
    _check_dot(input, tensor, "dot")
    return out_structured(apply(_MATMUL["DotBackward0", ""], (input, tensor)), out, "dot")


_VDOT = defop("vdot", lambda a, b: jnp.vdot(a, b, precision=_precision.matmul()), grad_name="VdotBackward0")


def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` of two vectors."""
    _require(input, "vdot", "input", 1)
    _require(other, "vdot", "other", 2)
    _check_dot(input, other, "vdot")
    return out_structured(apply(_VDOT, (input, other)), out, "vdot")


def outer(input, vec2, *, out=None):
    """The outer product of two vectors (dtypes promoted)."""
    _require(input, "outer", "input", 1)
    _require(vec2, "outer", "vec2", 2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    # ATen's composite: ``input.reshape(-1, 1) * vec2`` (MulBackward0 over a ViewBackward0 of input)
    return _out(input.reshape(input.shape[0], 1) * vec2, out, "outer")


def ger(input, vec2, *, out=None):
    return outer(input, vec2, out=out)


def _check_kron_view(input, a_view, other, b_view, res_shape):
    """PyTorch's last _unsafe_view (a view_impl) raises when the product, laid out as TensorIterator lays out the
    operands' views, cannot be viewed as the result: a transposed ``other`` beside a row-major ``input``."""
    from . import inplace as _ip
    from .out_layout import output_strides
    if 0 in a_view or 0 in b_view:  # (an empty product views as anything)
        return
    ops = []
    for t, shape in ((input, a_view), (other, b_view)):
        t_shape, t_strides, _ = _ip.layout(t)
        ops.append((shape, _ip.view_strides(t_shape, t_strides, shape) or _ip.contiguous_strides(shape)))
    prod_shape = tuple(max(m, n) for m, n in zip(a_view, b_view))
    strides = output_strides(ops, prod_shape) or _ip.contiguous_strides(prod_shape)
    if _ip.view_strides(prod_shape, strides, res_shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")


def kron(input, other, *, out=None):
    """The Kronecker product: each element of ``input`` scales a copy of ``other`` (dtypes promoted; the operand
    with fewer dims gets leading dims of size 1).

    Example::

        >>> torch.kron(torch.tensor([[1., 2.]]), torch.tensor([1., 3.]))
        tensor([[1., 3., 2., 6.]])
    """
    require_tensor(input, "kron")
    require_tensor(other, "kron", 2, "other")
    from .arith import mul
    from .shape import _UNSAFE_VIEW
    nd = max(input.ndim, other.ndim)
    a_shape = (1,) * (nd - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (nd - other.ndim) + tuple(other.shape)
    # interleave the dims, a as (a0, 1, a1, 1, ...) and b as (1, b0, 1, b1, ...), so the product merges pairwise;
    # PyTorch's _unsafe_view: new tensors, not views, so what the product saves is not the operands
    a_view, b_view = tuple(v for n in a_shape for v in (n, 1)), tuple(v for n in b_shape for v in (1, n))
    res_shape = tuple(m * n for m, n in zip(a_shape, b_shape))
    _check_kron_view(input, a_view, other, b_view, res_shape)
    a = apply(_UNSAFE_VIEW, (input,), shape=a_view)
    b = apply(_UNSAFE_VIEW, (other,), shape=b_view)
    res = apply(_UNSAFE_VIEW, (mul(a, b),), shape=res_shape)
    return _out(res, out, "kron")


_INNER = defop("inner", lambda a, b: jnp.inner(a, b, precision=_precision.matmul()), grad_name="ViewBackward0")
_INNER_SCALAR = defop("inner_scalar", lambda a, b: a * b, promote="same", grad_name="MulBackward0")


def inner(input, other, *, out=None):
    """Products summed over the last dimension of both (a scalar operand multiplies)."""
    _require(input, "inner", "input", 1)
    _require(other, "inner", "other", 2)
    if input.ndim == 0 or other.ndim == 0:
        return out_structured(apply(_INNER_SCALAR, (input, other)), out, "inner")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    vectors = input.ndim == 1 and other.ndim == 1  # PyTorch's inner is a dot of vectors, else a matmul
    _same_dtype(input, other, "dot" if vectors else "mm", "dot" if vectors else "addmm_impl_cpu_")
    if out is None and records_graph((input, other)):  # ATen: tensordot over the last dims
        return tensordot_graph(input, other, [input.ndim - 1], [other.ndim - 1])
    return out_structured(apply(_INNER, (input, other)), out, "inner")


# ----------------------------------------------------------------------------------------------------------------
# tensordot


def _tensordot_fwd(a, b, *, axes):
    return jnp.tensordot(a, b, axes, precision=_precision.matmul())


_TENSORDOT = {c: defop("tensordot" + sfx, _tensordot_fwd, grad_name="ViewBackward0", saved=_saved.SAVED["matmul" + sfx])
              for c, sfx in _COPIES.items()}


def _dims_list(d, name):
    if isinstance(d, Tensor):
        d = d.tolist()
    if isinstance(d, int):
        raise TypeError(f"tensordot(): argument '{name}' (position 3) must be tuple of ints, not int")
    if d and isinstance(d[0], bool):  # (the parser checks the first value's type, unpacks later bools)
        raise TypeError(f"tensordot(): argument '{name}' (position 3) must be tuple of ints, but found element of "
                        "type bool at pos 0")
    return [int(x) for x in d]


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` trailing dims of ``a`` with leading dims of ``b``, or the dims listed as two sequences.

    The arguments are checked in the order of PyTorch's Python ``tensordot``: the type of ``dims``; an int ``dims``
    against ``a.dim()`` and ``b.dim()`` (an operand that is no Tensor: the AttributeError of that call); then its
    builtin's parser (the TypeError naming ``input`` or ``other``)."""
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, Tensor):
        if dims.numel() > 1 and dims.shape[0] != 2:  # (PyTorch's Python tensordot asserts it: an AssertionError)
            raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.shape[0]}")
        if dims.numel() > 1:  # (its two rows are the two lists: a row of no dims is a number, refused as a list)
            dims = (dims[0].tolist(), dims[1].tolist())
        else:
            dims = int(dims.item())
        if isinstance(dims, int) and dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
    _require(a, "tensordot", "input", 1)
    _require(b, "tensordot", "other", 2)
    if isinstance(dims, int):  # (a Tensor's count is not checked against the dims: out of range, wrap_dim's error)
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        da, db = _dims_list(dims[0], "dims_self"), _dims_list(dims[1], "dims_other")
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    from .._tensor import wrap_dim
    from .reduce import sum as _sum
    for i, j in zip(da, db):
        sa, sb = a.shape[wrap_dim(i, a.ndim)], b.shape[wrap_dim(j, b.ndim)]
        # PyTorch broadcasts a contracted dim of size 1: the other operand is summed over its dim (kept as size 1;
        # ``a``'s is, when both are 1, as in PyTorch's graph)
        if sb == 1:
            a = _sum(a, wrap_dim(i, a.ndim), True, dtype=a.dtype)
        elif sa == 1:
            b = _sum(b, wrap_dim(j, b.ndim), True, dtype=b.dtype)
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {i} and second "
                               f"has size {sb} in dim {j}")
    axes = (tuple(wrap_dim(i, a.ndim) for i in da), tuple(wrap_dim(j, b.ndim) for j in db))
    for t, ax in zip((a, b), axes):
        repeated = [d for d in ax if ax.count(d) > 1]
        if repeated:
            raise RuntimeError(f"dim {repeated[0]} appears multiple times in the list of dims")
    # PyTorch: mm(a.permute(free + contracted).reshape(m, k), b.permute(contracted + free).reshape(k, n))
    free_a = tuple(i for i in range(a.ndim) if i not in axes[0])
    free_b = tuple(j for j in range(b.ndim) if j not in axes[1])
    m, n = math.prod(a.shape[i] for i in free_a), math.prod(b.shape[j] for j in free_b)
    k = math.prod(a.shape[i] for i in axes[0])
    vectors = m == 1 and n == 1  # (PyTorch's product is then a dot, else an mm: their kernels' dtype errors)
    _same_dtype(a, b, "dot" if vectors else "mm", "dot" if vectors else "addmm_impl_cpu_")
    if out is None and records_graph((a, b)):
        return tensordot_graph(a, b, list(axes[0]), list(axes[1]))
    copies = "0" if copied_by_reshape(a, None, (m, k), perm=free_a + axes[0]) else ""
    if copied_by_reshape(b, None, (k, n), perm=axes[1] + free_b):
        copies += "1"
    return out_structured(apply(_TENSORDOT[copies], (a, b), axes=axes), out, "tensordot")


for _n in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "kron", "inner"):
    _public(_n, globals()[_n])
_public("tensordot", tensordot, method=False)


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


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """``torch.linalg.matrix_norm`` (defined with the decompositions; reachable here for ``torch.norm``)."""
    from .matfuncs import matrix_norm as _matrix_norm
    return _matrix_norm(A, ord, dim, keepdim, dtype=dtype)
