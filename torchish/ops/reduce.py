"""Reductions: sum, nansum, mean, nanmean, prod, sum_to_size, all/any/count_nonzero, and what the other reduction
modules share: PyTorch's ``dim``/``keepdim`` conventions (``axis``/``keepdims`` accepted too, ``numpy_kwargs``),
accumulation dtypes and the ``torch.return_types`` tuples. The rest of the family: ``extrema`` (max/min, argmax),
``stats`` (var/std, norms), ``softmax`` (logsumexp, softmax), ``scan`` (cumsum and friends, diff, trapezoid)."""
from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _precision
from .._tensor import Tensor, wrap_dim
from .._tensor_meta import wrap_item_dim
from ..autograd.grad_mode import STATE
from .casting import cast, rounded
from .elementwise import (_out, need_bool, not_implemented, out_grad_error, out_structured, parser_worded,
                          require_tensor, type_name)
from . import complex_c, parser_errors
from . import registry as _registry
from .registry import apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public
_INT, _FLOAT = _dtype._INT, _dtype._FLOAT


def _return_type(name, fields=("values", "indices")):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: f"torch.return_types.{name}(\n" + ",\n".join(
        f"{f}={v!r}" for f, v in zip(fields, self)) + ")"
    return ALL_RETURN_TYPES.setdefault(name, cls)  # torchish.return_types.<name>: the first made is the one used


ALL_RETURN_TYPES: dict = {}


RETURN_TYPES = {n: _return_type(n) for n in ("max", "min", "median", "nanmedian", "mode", "kthvalue", "sort",
                                              "topk", "cummax", "cummin")}
RETURN_TYPES["aminmax"] = _return_type("aminmax", ("min", "max"))


def values_indices(name, values, indices, out=None):
    """``torch.return_types.<name>(values, indices)``, written into the ``out=(values, indices)`` pair when given
    (of the result's dtypes exactly, as PyTorch's kernels require)."""
    return out_structured(RETURN_TYPES[name](values, indices), out, name)


def numpy_kwargs(fn=None, *, keepdim_needs_dim=False):
    """Accept NumPy's spellings ``axis=`` and ``keepdims=``, as PyTorch's argument parser does; an error of a call
    PyTorch's parser refuses is its TypeError (``parser_errors.refused``: on the error path only).
    ``keepdim_needs_dim``: the op's only overload with ``keepdim`` requires ``dim`` (sum, mean, prod), so PyTorch's
    parser refuses ``keepdim=`` without a dim, whatever its value (torchish's ``dim`` has a default)."""
    if fn is None:
        return functools.partial(numpy_kwargs, keepdim_needs_dim=keepdim_needs_dim)

    @functools.wraps(fn)
    def f(*args, **kw):
        if kw:
            # (both spellings: passed on as given, so that ``fn`` refuses the NumPy one and the TypeError is worded
            # as PyTorch's parser words it, below or in a method's wrapper)
            if "axis" in kw and "dim" not in kw:
                kw["dim"] = kw.pop("axis")
            if "keepdims" in kw and "keepdim" not in kw:
                kw["keepdim"] = kw.pop("keepdims")
            if keepdim_needs_dim and "keepdim" in kw and len(args) < 2 and "dim" not in kw:
                raise TypeError(parser_errors.message(f.__name__, args, kw))
        try:
            return fn(*args, **kw)
        except Exception as e:  # noqa: BLE001 - re-raised, as the parser's TypeError where it refuses the call
            err = parser_errors.refused(e, f.__name__, args, kw)
            if err is e:
                raise
            raise err from None
    return f


def dims(dim, ndim, sized=True):
    """``dim`` (int, sequence or None) as a sorted tuple of non-negative axes, or None for all; () for a 0-dim
    input (whose only valid dims are 0 and -1). A lone dim is read as an item of the list (``int[1] dim``: a Tensor of
    one element is taken), unless not ``sized`` (``int dim``: a Tensor only without dims)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        # (PyTorch's parser checks only the first value's type: a later bool is unpacked as an index)
        out = [wrap_item_dim(int(d) if i and isinstance(d, bool) else d, ndim) for i, d in enumerate(dim)]
        seen = set()
        for d in out:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
        return tuple(sorted(out)) if ndim else ()
    d = wrap_item_dim(dim, ndim) if sized else wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def one_dim(dim, ndim):
    """A single reduction dim, or None for a 0-dim input."""
    d = wrap_dim(dim, ndim)
    return d if ndim else None


def dtype_arg(name, dtype):
    """``dtype=`` of a reduction as a dtype: PyTorch's parser takes a dtype or a Python type (``float``), never a
    Tensor, a name or a numpy type (TypeError, which the op's wrapper words as PyTorch's parser does)."""
    if not parser_errors.is_dtype(dtype):
        raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {type_name(dtype)}")
    return _dtype.as_dtype(dtype)


def _acc_dtype(x, dtype, out=None, name=None):
    """Result dtype of sum/prod/cumsum: integers and bools accumulate in int64 unless dtype= (or the dtype of an
    ``out=`` tensor) says otherwise."""
    if dtype is not None:
        dt = dtype_arg(name, dtype)
        if dt.category <= _INT and x.requires_grad and STATE.grad_enabled:  # an integer result cannot carry grads
            if out is not None:  # (PyTorch's out= variant refuses the grad input first)
                raise out_grad_error(name)
            raise RuntimeError(f"Autograd not support dtype: {_dtype.scalar_type_name(dt)}")
        return dt
    if out is not None:
        return out.dtype
    d = x.dtype
    return _dtype.int64 if d.category <= _INT else d


def scatter_add_along(shape, dtype, idx, g, axis):
    """Zeros of ``shape`` with ``g`` added at positions ``idx`` along ``axis`` (the backward of selecting values
    by index: max/min with dim, sort, topk, kthvalue, median, mode, cummax)."""
    grids = list(jnp.indices(idx.shape, sparse=True))
    grids[axis] = idx
    return jnp.zeros(shape, dtype).at[tuple(grids)].add(g.astype(dtype))


# ----------------------------------------------------------------------------------------------------------------
# sum / mean / prod


_HALF = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))

_COMBINE = {"sum": np.add, "nansum": np.add, "prod": np.multiply, "amax": np.fmax, "amin": np.fmin}


def reduction_out(result, out, name):
    """``_out`` for the reductions PyTorch computes into ``out`` without TensorIterator's internal-overlap check
    (sum, nansum, prod, amax, amin): where elements of ``out`` share one memory location (an expanded view), that
    location gets the reduction of every input element reduced into any of them (PyTorch's kernel accumulates
    there), where ``_out`` would raise."""
    if out is None or not isinstance(out, Tensor) or out._view is None or STATE.grad_enabled and result._rg:
        return _out(result, out, name)
    from . import inplace as _ip
    from .strided import positions
    shape, strides, offset = _ip.layout(out)
    if not _ip.overlaps_itself(shape, strides):
        return _out(result, out, name)
    if tuple(out.shape) != tuple(result.shape):  # (resized first, as resize_ would: contiguous in its storage)
        with _ip.overlap_ok(out):
            return _out(result, out, name)
    group = np.unique(positions(shape, strides, offset).reshape(-1), return_inverse=True)[1].reshape(-1)
    order = np.argsort(group, kind="stable")  # (each location's elements together, in order)
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    vals = np.asarray(result.detach().numpy()).reshape(-1)
    acc = _COMBINE[name].reduceat(vals[order], starts)  # (indexed by group: unique's groups are sorted)
    combined = Tensor._make(jnp.asarray(acc[group].reshape(result.shape)))
    with _ip.overlap_ok(out):
        return _out(combined, out, name)


def _sum_fwd(x, *, axis, keepdims, dtype):
    x = cast(x, dtype)
    if x.dtype in _HALF:  # PyTorch accumulates float16/bfloat16 sums in float32 and rounds once
        return jnp.sum(x, axis=axis, keepdims=keepdims, dtype=np.float32).astype(x.dtype)
    if x.dtype in _dtype.FLOAT8_NP:  # (only empty ones run: zeros as PyTorch rounds 0, 2^-127 in float8_e8m0fnu)
        return cast(jnp.sum(x.astype(np.float32), axis=axis, keepdims=keepdims), x.dtype)
    return jnp.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)


_SUM = defop("sum", _sum_fwd, linear=True, grad_name="SumBackward1")
_SUM_ALL = defop("sum_all", _sum_fwd, linear=True, grad_name="SumBackward0")
# every dim reduced through the dim overload (``dim=()``): PyTorch's sum.dim_IntList node
_SUM_ALL_DIMS = overload(_SUM_ALL, "SumBackward1")


def _nansum_vjp(g, x, out, *, axis, keepdims, dtype):
    """PyTorch's ``grad.expand(...) * self.isnan().logical_not()``: a NaN or infinite gradient stays NaN at the
    skipped positions (``nanmean`` of all-NaN values: NaN gradients, not zeros)."""
    if x.ndim and not keepdims:
        g = jnp.expand_dims(g, tuple(range(x.ndim)) if axis is None else axis)
    g = jnp.broadcast_to(g, x.shape)
    return jnp.where(jnp.isnan(x), g * 0, g).astype(x.dtype)  # (g * 0: XLA folds a product by a 0/1 mask to a select)


_NANSUM = defop("nansum", lambda x, *, axis, keepdims, dtype: _sum_fwd(jnp.where(jnp.isnan(x), 0, x), axis=axis,
                                                                           keepdims=keepdims, dtype=dtype),
                vjp=_nansum_vjp, grad_name="NansumBackward0")


# sum/mean/prod called without a dim: PyTorch's overload without one (SumBackward0, MeanBackward0; sum and prod take
# no out= there); an explicit dim=None is the dim overload's (SumBackward1, MeanBackward1), or prod's TypeError
_NO_DIM = object()


@numpy_kwargs(keepdim_needs_dim=True)
def sum(input, dim=_NO_DIM, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "sum")
    need_bool("sum", keepdim)
    if out is not None and dim is _NO_DIM:
        raise TypeError(parser_errors.message("sum", (input,), {"out": out}))
    if _registry.autocast_hook is not None and dtype is None and out is None:  # the result dtype follows the cast
        input, = _registry.autocast_hook("sum", (input,))
    dt = _acc_dtype(input, dtype, out, "sum")
    ax = dims(None if dim is _NO_DIM else dim, input.ndim)
    op = _SUM if ax is not None else _SUM_ALL if dim is _NO_DIM else _SUM_ALL_DIMS
    return reduction_out(apply(op, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out, "sum")


@numpy_kwargs
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "nansum")
    need_bool("nansum", keepdim)
    if input.is_complex():
        raise RuntimeError("nansum on CPU does not support complex inputs")
    dt = _acc_dtype(input, dtype, out, "nansum")
    runs = input.numel() > 0  # PyTorch's kernel (and its dtype dispatch) runs only on a non-empty input
    if runs and dtype is None and dt.category <= _INT and input.dtype.category >= _FLOAT:  # (an integer out= of a
        raise not_implemented("nansum_cpu", dt)  # float sum; dtype=int64 is fine: NaN zeroed, each element cast)
    if runs and dt.category == _dtype._COMPLEX and input.dtype.category >= _FLOAT:  # a float input's kernel has no
        raise not_implemented("nansum_cpu", dt)  # complex version (an integer input is summed by sum's kernel)
    return reduction_out(apply(_NANSUM, (input,), axis=dims(dim, input.ndim), keepdims=bool(keepdim), dtype=dt.np),
                         out, "nansum")


def _mean_fwd(x, *, axis, keepdims, dtype):
    # PyTorch: sum(...).div_(n), one true division (jnp.mean's division by the count becomes XLA's multiplication
    # by its reciprocal: an ulp off in half of the float32 means); float16/bfloat16: the float32 sum divided, then
    # rounded once; complex numbers: c10's division by n + 0j (an infinite part makes the other one NaN)
    x = x.astype(dtype)
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    n = int(np.prod([x.shape[a] for a in axes]))
    if x.dtype in _HALF:
        return _precision.mean(x.astype(jnp.float32), axis, keepdims).astype(x.dtype)
    if jnp.iscomplexobj(x):
        return complex_c.div_c10(jnp.sum(x, axis=axis, keepdims=keepdims), jnp.asarray(n, x.dtype))
    return _precision.mean(x, axis, keepdims)


_MEAN = defop("mean", _mean_fwd, linear=True, grad_name="MeanBackward1")
_MEAN_ALL = defop("mean_all", _mean_fwd, linear=True, grad_name="MeanBackward0")
_MEAN_ALL_DIMS = overload(_MEAN_ALL, "MeanBackward1")  # (as _SUM_ALL_DIMS)


@numpy_kwargs(keepdim_needs_dim=True)
def mean(input, dim=_NO_DIM, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "mean")
    need_bool("mean", keepdim)
    if isinstance(out, Tensor) and dim is _NO_DIM and not _dtype.can_cast(input.dtype, out.dtype):  # mean.dtype_out
        raise RuntimeError("mean.dtype_out(): input types can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(out.dtype)}")
    if dtype is not None:
        dt = dtype_arg("mean", dtype)
        if dt.category < _FLOAT:
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating point "
                               f"or complex dtype. Got: {_dtype.scalar_type_name(dt)}")
    else:
        dt = input.dtype
        if dt.category < _FLOAT:
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {_dtype.scalar_type_name(dt)}")
    if isinstance(out, Tensor) and dtype is None:  # PyTorch sums into out, in out's dtype, then divides it in place
        if out.dtype.category < _FLOAT:
            raise RuntimeError(f"result type {_dtype.scalar_type_name(_dtype.get_default_dtype())} can't be cast to "
                               f"the desired output type {_dtype.scalar_type_name(out.dtype)}")
        dt = out.dtype
    ax = dims(None if dim is _NO_DIM else dim, input.ndim)
    op = _MEAN if ax is not None else _MEAN_ALL if dim is _NO_DIM else _MEAN_ALL_DIMS
    return out_structured(apply(op, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np), out, "mean")


@numpy_kwargs
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "nanmean")
    need_bool("nanmean", keepdim)
    if out is not None and input.dtype.category < _FLOAT:
        raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for nanmean, even for empty "
                           "tensors.")
    if input.dtype.category < _FLOAT:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    if dtype is not None and dtype_arg("nanmean", dtype).category < _FLOAT:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {_dtype.scalar_type_name(_dtype.as_dtype(dtype))}")
    if dtype is None and isinstance(out, Tensor) and out.dtype.category != _FLOAT and input.numel() > 0:
        raise not_implemented("nansum_cpu", out.dtype)  # (PyTorch sums into out; its kernel runs when non-empty)
    from .compare import isnan, logical_not
    n = sum(logical_not(isnan(input)), dim, keepdim)
    return _out(nansum(input, dim, keepdim, dtype=dtype) / n, out, "nanmean")


def _prod_fwd(x, *, axis, keepdims, dtype, lanes=None):
    x = cast(x, dtype)
    if lanes is not None:
        return _half_prod(x, axis, keepdims, lanes)
    return jnp.prod(x, axis=axis, keepdims=keepdims, dtype=dtype)


def _half_prod(x, axis, keepdims, lanes):
    """float16/bfloat16 prod as PyTorch's CPU kernel (a contiguous input, one thread): every product rounded to the
    half type, in its order. Over the last dimension (or all of them) it multiplies ``lanes``-wide vectors into 4
    accumulators over blocks of 4 vectors, combines them ``(a0 * a1) * (a2 * a3)``,
    folds the lanes in order and multiplies in the remaining elements one by one; over another dimension each
    result is a running product in index order. (In float32 and rounded once, a product of 300 bfloat16 values was
    up to 7% off PyTorch's; rounded one element at a time in order, 4%.)"""
    dt, f32 = x.dtype, jnp.float32
    ax = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    ax = tuple(a % max(x.ndim, 1) for a in ax)
    if x.ndim == 0:
        return x
    shape = tuple(1 if i in ax else n for i, n in enumerate(x.shape)) if keepdims else \
        tuple(n for i, n in enumerate(x.shape) if i not in ax)
    w = x.astype(f32)

    def r(v):
        return rounded(v, dt)

    def running(acc, rows):  # acc * rows[0] * rows[1] ... in order, rounded each time
        return jax.lax.scan(lambda a, row: (r(a * row), None), acc, rows)[0]

    lo = min(ax)  # (dimensions of size 1 after the reduced ones change nothing in PyTorch's iteration)
    last = set(ax) | {i for i in range(lo, x.ndim) if x.shape[i] == 1} == set(range(lo, x.ndim))
    if not last and len(ax) == 1:  # an outer reduction: one running product per result, in index order
        moved = jnp.moveaxis(w, ax[0], 0)
        return running(jnp.ones(moved.shape[1:], f32), moved).reshape(shape).astype(dt)
    if not last:
        return jnp.prod(w, axis=ax).reshape(shape).astype(dt)  # (several inner dims: not emulated)
    rows = w.reshape(w.shape[:lo] + (int(np.prod(w.shape[lo:])),))
    n, block = rows.shape[-1], 4 * lanes
    count = n // block
    acc = jnp.ones(rows.shape[:-1], f32)
    if count:
        vecs = jnp.moveaxis(rows[..., :count * block].reshape(rows.shape[:-1] + (count, 4, lanes)), -3, 0)
        v = running(vecs[0], vecs[1:])
        v = r(r(v[..., 0, :] * v[..., 1, :]) * r(v[..., 2, :] * v[..., 3, :]))
        acc = running(v[..., 0], jnp.moveaxis(v[..., 1:], -1, 0))
    if n > count * block:
        acc = running(acc, jnp.moveaxis(rows[..., count * block:], -1, 0))
    return acc.reshape(shape).astype(dt)


def first_order_formula(formula, exact):
    """A VJP giving PyTorch's first-order formula ``formula(g, x, out, *static)`` — its values at zeros,
    infinities and NaNs — that differentiates (create_graph=True) as ``exact(g, x, *static)``, the true VJP.
    PyTorch's formulas of this kind (prod, cumprod) are not differentiable at the zeros and switch to an exact one
    under grad mode for that reason."""
    @functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
    def f(g, x, out, static):
        return formula(g, x, out, *static)

    @f.defjvp
    def f_jvp(static, primals, tangents):
        g, x, out = primals
        res = f(g, x, out, static)
        _, d = jax.jvp(lambda a, b: exact(a, b, *static), (g, x), tangents[:2])
        return res, d.astype(res.dtype)
    return f


def _exclusive_products(x, axis):
    """The product of the other elements along ``axis``, safe at zeros: exclusive cumprods from both ends."""
    n = x.shape[axis]
    ones = jnp.ones_like(jax.lax.slice_in_dim(x, 0, 1, axis=axis))
    before = jnp.cumprod(jnp.concatenate([ones, jax.lax.slice_in_dim(x, 0, n - 1, axis=axis)], axis), axis=axis)
    rest = jnp.flip(jax.lax.slice_in_dim(x, 1, n, axis=axis), axis)
    return before * jnp.flip(jnp.cumprod(jnp.concatenate([ones, rest], axis), axis=axis), axis)


def _prod_formula(g, x, out, axis, keepdims):
    """PyTorch's prod_backward: ``grad * result / input`` when the input holds no zero (so an infinite input
    meets inf / inf = NaN), else the products of the others; prod() of two or more zeros: 0."""
    x = x.astype(out.dtype)
    zeros = jnp.sum(x == 0)
    if axis is None:
        safe = _exclusive_products(x.reshape(-1), 0).reshape(x.shape)
    else:
        if not keepdims:
            g, out = jnp.expand_dims(g, axis), jnp.expand_dims(out, axis)
        safe = _exclusive_products(x, axis)
    res = jnp.where(zeros == 0, g * jnp.conj(out / x), g * jnp.conj(safe))
    return res if axis is not None else jnp.where(zeros > 1, jnp.zeros((), res.dtype), res)


def _prod_exact(g, x, axis, keepdims):
    pull = jax.vjp(lambda v: jnp.prod(v.astype(g.dtype), axis=axis, keepdims=keepdims), x)[1]
    return jnp.conj(pull(jnp.conj(g))[0])


_PROD_GRAD = first_order_formula(_prod_formula, _prod_exact)


def _prod_vjp(g, x, out, *, axis, keepdims, dtype, lanes=None):
    if x.ndim == 0:
        return g
    if x.size == 0:  # nothing to differentiate (the formula's exclusive products slice an empty axis)
        return jnp.zeros(x.shape, g.dtype)
    if axis is not None:
        axis = axis[0] if isinstance(axis, tuple) else axis
    return _PROD_GRAD(g, x, out, (axis, keepdims))


_PROD = defop("prod", _prod_fwd, vjp=_prod_vjp, grad_name="ProdBackward1")
_PROD_ALL = defop("prod_all", _prod_fwd, vjp=_prod_vjp, grad_name="ProdBackward0")




@numpy_kwargs(keepdim_needs_dim=True)
def prod(input, dim=_NO_DIM, keepdim=False, *, dtype=None, out=None):
    require_tensor(input, "prod")
    need_bool("prod", keepdim)
    if dim is not _NO_DIM and not isinstance(dim, int) and not hasattr(dim, "__index__"):
        raise TypeError(f"prod() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of: (Tensor input, *, torch.dtype dtype = None) or "
                        "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None)")
    if out is not None and dim is _NO_DIM:
        raise TypeError(parser_errors.message("prod", (input,), {"out": out}))
    if _registry.autocast_hook is not None and dtype is None and out is None:  # the result dtype follows the cast
        input, = _registry.autocast_hook("prod", (input,))
    dt = _acc_dtype(input, dtype, out, "prod")
    # (float16/bfloat16: PyTorch's vectorised kernel, 16 lanes, measured on its AVX-512 and AVX2 builds alike;
    # beyond 32768 elements its threads split the work: not emulated)
    lanes = {"lanes": 16} if dt in (_dtype.float16, _dtype.bfloat16) and input.numel() <= 32768 else {}
    if dim is _NO_DIM:
        return _out(apply(_PROD_ALL, (input,), axis=None, keepdims=False, dtype=dt.np, **lanes), out, "prod")
    ax = dims(dim, input.ndim, sized=False)  # (``int dim``)
    return reduction_out(apply(_PROD, (input,), axis=ax, keepdims=bool(keepdim), dtype=dt.np, **lanes), out, "prod")


def sum_to_size(input, *args, size=None):
    """Sum ``input`` down to ``size`` (the inverse of broadcasting)."""
    from .shape import _args_or_kw
    size = _args_or_kw(args, size, "sum_to_size", "size")
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    lead = input.ndim - len(shape)
    if lead < 0 or [s for s, n in zip(shape, input.shape[lead:]) if s != 1 and s != n]:  # (any() is the op here)
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(input.shape)}}}.")
    if not shape:  # (PyTorch's at::sum_to sums a 0-d target outright, a 0-d input too: SumBackward0)
        return sum(input)
    ax = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and input.shape[i + lead] != 1)
    out = input
    if ax:
        out = sum(out, ax, keepdim=True)
    if lead:
        from .shape import reshape
        out = reshape(out, shape)
    return out


for _n in ("sum", "mean", "nansum", "nanmean", "prod", "sum_to_size"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# all / any / count_nonzero


def _bool_reduce(f):
    def fwd(x, *, axis, keepdims):
        if jnp.issubdtype(x.dtype, jnp.complexfloating):  # jnp.any/all over an axis read a complex value's real part
            x = x != 0
        r = f(x, axis=axis, keepdims=keepdims)
        return r.astype(jnp.uint8) if x.dtype == jnp.uint8 else r  # PyTorch keeps uint8 for uint8 inputs
    return fwd


_ALL = defop("all", _bool_reduce(jnp.all), differentiable=False)
_ANY = defop("any", _bool_reduce(jnp.any), differentiable=False)


def _check_bool_out(name, input, out):
    want = _dtype.uint8 if input.dtype is _dtype.uint8 else _dtype.bool
    if out is not None and out.dtype is not want:
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {_dtype.scalar_type_name(out.dtype)}")


def _bool_axes(dim, input):
    """all/any reduce over no dim for ``dim=()`` (PyTorch 2.13; sum and mean reduce over every dim there)."""
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return ()
    return dims(dim, input.ndim, sized=False)  # (``int dim``, or ``int[]? dim``, which takes no lone value)


@numpy_kwargs
def all(input, dim=None, keepdim=False, *, out=None):
    require_tensor(input, "all")
    need_bool("all", keepdim)
    _check_bool_out("all", input, out)
    return _out(apply(_ALL, (input,), axis=_bool_axes(dim, input), keepdims=bool(keepdim)), out, "all")


@numpy_kwargs
def any(input, dim=None, keepdim=False, *, out=None):
    require_tensor(input, "any")
    need_bool("any", keepdim)
    _check_bool_out("any", input, out)
    return _out(apply(_ANY, (input,), axis=_bool_axes(dim, input), keepdims=bool(keepdim)), out, "any")


_COUNT_NZ = defop("count_nonzero", lambda x, *, axis: jnp.count_nonzero(x, axis=axis).astype(jnp.int64),
                  differentiable=False)


@parser_worded
def count_nonzero(input, dim=None):
    require_tensor(input, "count_nonzero")
    return apply(_COUNT_NZ, (input,), axis=dims(dim, input.ndim, sized=False))


def _count_nonzero_method(self, *dims, **kwargs):
    """``Tensor.count_nonzero``: its list-of-ints overload takes the dims spread out (``x.count_nonzero(0, 1)``),
    as PyTorch's method does (its function does not)."""
    spread = len(dims) > 1 or dims and isinstance(dims[0], Tensor)  # (``x.count_nonzero(t)``: t as the list's item)
    return count_nonzero.__wrapped__(self, *((dims,) if spread else dims), **kwargs)


def _hash_fwd(x, *, axis, keepdims):
    wide = jnp.float64 if jnp.issubdtype(x.dtype, jnp.floating) else jnp.int64  # (bool and unsigned too)
    bits = jax.lax.bitcast_convert_type(x.astype(wide), jnp.uint64)
    axes = tuple(range(x.ndim)) if axis is None else axis
    out = jax.lax.reduce(bits, np.uint64(0), jax.lax.bitwise_xor, axes)
    return jnp.expand_dims(out, axes) if keepdims else out


_HASH = defop("hash_tensor", _hash_fwd, differentiable=False)


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """PyTorch's ``hash_tensor``: the elements as 64-bit floats or integers, their bits xor-reduced (uint64)."""
    require_tensor(input, "hash_tensor")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.dtype.is_complex:
        raise not_implemented("xor_sum_cpu", input.dtype)
    axes = dims(dim, input.ndim)
    if input.numel() == 0 and not axes:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    for d in (dim if isinstance(dim, (list, tuple)) else [dim]) if axes else ():
        if input.shape[d] == 0:  # (PyTorch names the dim as given)
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    return apply(_HASH, (input,), axis=axes, keepdims=bool(keepdim))


for _n in ("all", "any", "hash_tensor"):
    _public(_n, globals()[_n])
_public("count_nonzero", count_nonzero, method=False)
METHODS["count_nonzero"] = parser_worded(_count_nonzero_method, "count_nonzero", method=True)  # noqa: F821
