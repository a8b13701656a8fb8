"""Ops of three operands: clamp/clip (a tensor between bounds), where (choose by a condition), lerp
(interpolate by a weight), addcmul/addcdiv (``input + value * tensor1 (*|/) tensor2``).

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([-2.0, 0.5, 3.0])
    >>> (x.clamp(-1, 1), torch.where(x > 0, x, 0.0))
    (tensor([-1.0000,  0.5000,  1.0000]), tensor([0.0000, 0.5000, 3.0000]))
"""
from __future__ import annotations

import numbers
import warnings

import jax.numpy as jnp

from .. import _dtype, _precision
from .._global_flags import warn_once
from .._tensor import Tensor
from . import complex_c
from .casting import check_scalar_fits, rounded
from .elementwise import (_COMPLEX, _INT, FLOATS_ONLY, _out, c10_name, common_dtype, not_implemented, out_exact,
                          parser_worded, require_tensor, scalar_or_tensor, type_name)
from .registry import NotDifferentiable, apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public


def _clamp_fwd(x, lo, hi):
    """PyTorch's ``min(max(x, lo), hi)`` as comparisons: -0.0 stays -0.0 at a 0 bound (XLA's max gives +0.0),
    NaN inputs stay NaN and a NaN bound gives NaN."""
    if lo is not None:
        x = jnp.where((x < lo) | jnp.isnan(lo), lo, x)
    if hi is not None:
        x = jnp.where((x > hi) | jnp.isnan(hi), hi, x)
    return x


def _clamp_vjp(g, x, lo, hi, out):
    """PyTorch passes the gradient where min <= x <= max (boundaries included; JAX's max/min would halve it).
    A bound gets it where it was chosen: x < min (when min < max), x > max (or everywhere when max < min)."""
    zero = jnp.zeros((), g.dtype)
    keep = jnp.ones(x.shape, bool)
    glo = ghi = None
    if lo is not None:
        keep = keep & (x >= lo)
        below = x < lo
        glo = jnp.where(below & (lo < hi) if hi is not None else below, g, zero)
    if hi is not None:
        keep = keep & (x <= hi)
        above = x > hi
        ghi = jnp.where(above | (hi < lo) if lo is not None else above, g, zero)
    return jnp.where(keep, g, zero), glo, ghi


_CLAMP = defop("clamp", _clamp_fwd, promote="same", vjp=_clamp_vjp, grad_name="ClampBackward1")
_CLAMP_T = defop("clamp_tensor", _clamp_fwd, promote="same", vjp=_clamp_vjp,
                 grad_name="ClampBackward0")
_CLAMP_MIN = defop("clamp_min", _clamp_fwd, promote="same", vjp=_clamp_vjp,
                   grad_name="ClampMinBackward0")
_CLAMP_MAX = defop("clamp_max", _clamp_fwd, promote="same", vjp=_clamp_vjp,
                   grad_name="ClampMaxBackward0")
# the overloads with a Tensor bound (``clamp_min.Tensor``...): PyTorch's nodes of another name
_TENSOR_BOUND = {_CLAMP: _CLAMP_T, _CLAMP_MIN: overload(_CLAMP_MIN, "ClampMinBackward1"),
                 _CLAMP_MAX: overload(_CLAMP_MAX, "ClampMaxBackward1")}


def _clamp(op, input, lo, hi, out):
    require_tensor(input, "clamp")
    lo = scalar_or_tensor(lo, "clamp", 2, "min") if lo is not None else None
    hi = scalar_or_tensor(hi, "clamp", 3, "max") if hi is not None else None
    kinds = [isinstance(v, Tensor) and v.ndim > 0 for v in (lo, hi) if v is not None]
    if any(kinds) and (len(kinds) == 2 and not all(isinstance(v, Tensor) for v in (lo, hi))):
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, {type(lo).__name__}, "
                        f"{type(hi).__name__}), but expected (Tensor input, Tensor min, Tensor max) or (Tensor "
                        "input, Number min, Number max)")
    dt = common_dtype((input, lo, hi))
    if dt.category == _COMPLEX:
        raise NotImplementedError("clamp is not supported for complex types")
    tensor_bounds = [isinstance(v, Tensor) for v in (lo, hi) if v is not None]
    if dt is _dtype.bool and tensor_bounds == [True, True]:  # a single Tensor bound is maximum/minimum: bool is fine
        raise not_implemented("clamp_cpu", dt)
    if dt is _dtype.bool and not any(tensor_bounds):
        raise not_implemented("clamp_scalar_cpu" if len(tensor_bounds) == 2 else
                              "clamp_min_scalar_cpu" if hi is None else "clamp_max_scalar_cpu", dt)
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        return _out(apply(_TENSOR_BOUND[op], (input, lo, hi)), out, "clamp")
    if dt != input.dtype and not input.dtype.is_floating_point:
        from .inplace import writing
        if writing(input):  # clamp_ with Number bounds: clamp's meta function names self's type as C++ does
            raise RuntimeError(f"result type {_dtype.scalar_type_name(dt)} can't be cast to the desired output type "
                               f"{_dtype.cpp_type_name(input.dtype)}")
    for v in (lo, hi):  # Number bounds: converted to the result type, checked
        check_scalar_fits(v, dt)
    return out_exact(apply(op, (input, lo, hi)), out, "clamp")  # (PyTorch's Number-bounds kernel does not cast)


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _clamp(_CLAMP, input, min, max, out)


@parser_worded
def clamp_min(input, min, *, out=None):
    if min is None:  # (clamp's None means "no bound"; clamp_min's bound is required)
        raise TypeError("clamp_min(): argument 'min' must be Tensor or Number, not NoneType")
    return _clamp(_CLAMP_MIN, input, min, None, out)


@parser_worded
def clamp_max(input, max, *, out=None):
    if max is None:
        raise TypeError("clamp_max(): argument 'max' must be Tensor or Number, not NoneType")
    return _clamp(_CLAMP_MAX, input, None, max, out)


for _n in ("clamp", "clamp_min", "clamp_max"):
    _public(_n, globals()[_n], inplace=True)
_public("clip", clamp, inplace=True)

_WHERE = defop("where", lambda c, a, b: jnp.where(c, a, b), promote="same", promote_args=(1, 2),
               grad_name="WhereBackward0")


_UNSET = object()  # (an argument of where not given: ``where(c, None, None)`` is PyTorch's TypeError, not nonzero)


@parser_worded  # (two arguments, or None for one: the parser's TypeError listing the overloads)
def where(condition, input=_UNSET, other=_UNSET, *, out=None):
    if input is _UNSET and other is _UNSET and out is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    if input is _UNSET or other is _UNSET:
        raise TypeError("where() takes a condition alone or with both input and other")
    require_tensor(condition, "where", 1, "condition")
    if condition._v.dtype != jnp.bool_:
        if condition._v.dtype == jnp.uint8:
            warn_once("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                      "future version of PyTorch. Use a boolean condition instead.")
            from .convert import to_dtype
            condition = to_dtype(condition, _dtype.bool)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_dtype.scalar_type_name(condition.dtype)}")
    a, b = scalar_or_tensor(input, "where", 2, "input"), scalar_or_tensor(other, "where", 3, "other")
    if out is not None:  # where.self_out: Tensors only, and ``out`` of the result's dtype exactly
        require_tensor(a, "where", 2, "input")
        require_tensor(b, "where", 3, "other")
        res = apply(_WHERE, (condition, a, b))
        if isinstance(out, Tensor) and out.dtype is not res.dtype:
            raise RuntimeError(f"Expected out type to be {_dtype.scalar_type_name(res.dtype)} but got "
                               f"{_dtype.scalar_type_name(out.dtype)}")
        return _out(res, out, "where")
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):  # a number becomes a 0-d tensor of the result type,
        dt = common_dtype((a, b))  # checked as a one-element fill (a float16/bfloat16 one is not)
        a, b = (v if isinstance(v, Tensor) else check_scalar_fits(v, dt, numel=1) for v in (a, b))
    return apply(_WHERE, (condition, a, b))


_public("where", where, method=False)
METHODS["where"] = lambda self, condition, other: where(condition, self, other)


def _lerp_fwd(a, b, w):
    """PyTorch's formula (exact at both ends): ``a + w (b - a)`` for w < 0.5, else ``b - (b - a)(1 - w)``, each a
    fused multiply-add as its CPU kernels compute them (``vec::fmadd``/``fnmadd``; a number weight taken in the
    compute type first); float16/bfloat16 computed in float32 and rounded once (a weight of 1e5 is no inf).
    ``_precision.fma`` makes float32 bit for bit; float64 is an FMA where XLA contracts it (its default
    optimisation level)."""
    dt = jnp.result_type(a)
    if dt in (jnp.float16, jnp.bfloat16):
        return _lerp_fwd(a.astype(jnp.float32), b.astype(jnp.float32), jnp.asarray(w).astype(jnp.float32)).astype(dt)
    w = jnp.asarray(w, dt)
    d = b - a
    return jnp.where(jnp.abs(w) < 0.5, _precision.fma(w, d, a), _precision.fma(-(1 - w), d, b))


def _lerp_scalar_vjp(g, a, b, w, out):
    """PyTorch's ``grad * (1 - weight)`` and ``grad * weight`` with the weight a double: a number multiplying a
    tensor, so rounded to float32 for float16/bfloat16/float32 gradients (computed in float32, rounded once)."""
    if jnp.iscomplexobj(g):
        return g * jnp.conj(1 - w), g * jnp.conj(w), None
    wide = jnp.float64 if g.dtype == jnp.float64 else jnp.float32
    w64 = jnp.asarray(w, jnp.float64)
    gw = g.astype(wide)
    ga, gb = gw * (1 - w64).astype(wide), gw * w64.astype(wide)
    if g.dtype in _precision.LOW:  # each product stored in the half type before a broadcast operand's gradient is
        # summed, as PyTorch's (``rounded``: XLA would fold a plain cast into the float32 sum that follows)
        ga, gb = (rounded(v, g.dtype).astype(g.dtype) for v in (ga, gb))
    return ga, gb, None


def _lerp_tensor_vjp(g, a, b, w, out):
    """PyTorch's ``grad * (1 - weight)``, ``grad * weight`` and ``grad * (end - self)``, op by op in the dtype
    (conjugated factors for complex values)."""
    return g * jnp.conj(1 - w), g * jnp.conj(w), g * jnp.conj(b - a)


_LERP = defop("lerp", _lerp_fwd, promote="same", promote_args=(0, 1), vjp=_lerp_scalar_vjp,
              grad_name="LerpBackward0")
_LERP_T = defop("lerp_tensor", _lerp_fwd, vjp=_lerp_tensor_vjp, grad_name="LerpBackward1")


def lerp(input, end, weight, *, out=None):
    require_tensor(input, "lerp")
    require_tensor(end, "lerp", 2, "end")
    w = scalar_or_tensor(weight, "lerp", 3, "weight")
    tensor_w = isinstance(w, Tensor)
    if not tensor_w:  # a number weight is converted to the computation type, checked (a complex one into a real one)
        if end.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {c10_name(input.dtype)} for `end` but got dtype {c10_name(end.dtype)}")
        if input.dtype.category in FLOATS_ONLY:
            raise not_implemented("lerp_kernel_scalar", input.dtype)
        w = check_scalar_fits(w, input.dtype, opmath=True)
        return _out(apply(_LERP, (input, end, w)), out, "lerp")
    for arg, t in (("end", end), ("weight", w)):
        if t.dtype is not input.dtype and (arg == "end" or t.ndim):
            raise RuntimeError(f"expected dtype {c10_name(input.dtype)} for `{arg}` but got dtype {c10_name(t.dtype)}")
    # a 0-d weight of another dtype takes part in the type promotion (all 0-d: the widest; a float weight of
    # integer tensors: its float type), and the kernel runs in the result type
    dt = common_dtype((input, end, w))
    if dt.category in FLOATS_ONLY:
        raise not_implemented("lerp_kernel_tensor", dt)
    if isinstance(out, Tensor) and out.dtype is not dt:  # (this kernel's iterator wants one dtype for all)
        raise RuntimeError(f"Found dtype {_dtype.scalar_type_name(out.dtype)} but expected "
                           f"{_dtype.scalar_type_name(dt)}")
    from .convert import to_dtype
    input, end, w = (t if t.dtype is dt else to_dtype(t, dt) for t in (input, end, w))
    return _out(apply(_LERP_T, (input, end, w)), out, "lerp")


_public("lerp", lerp, inplace=True)


def _key(o):
    """``(dtype, rank)`` of a VJP operand for PyTorch's promotion: rank 2 for a tensor with dims, 1 for a 0-d one,
    0 for ``value`` (a Python number, a weakly typed scalar once jitted)."""
    if isinstance(o, numbers.Number) or getattr(o, "weak_type", False):
        kind = jnp.result_type(o).kind
        return _dtype.scalar_dtype({"b": True, "i": 0, "u": 0, "f": 0.0}.get(kind, 0j)), 0
    return _dtype.from_np(o.dtype), 2 if o.ndim else 1


def _torch_op(f, *operands, true_div=False):
    """``f(*operands)`` computed in the dtype PyTorch's op gives them (``true_div``: integers promoted to the
    default float). A float16/bfloat16 result is computed in float32 and rounded once, its operands first rounded
    to it except a number or a 0-d second operand, which the kernel reads at float32 precision (kernels.OPMATH)."""
    dt = _dtype.result_type_from_keys(tuple(map(_key, operands)))
    if true_div and dt.category < _dtype._FLOAT:
        dt = _dtype.DEFAULTS.float
    if dt.np not in _precision.LOW:
        return f(*(jnp.asarray(o).astype(dt.np) for o in operands))
    _, r = _precision.stepper(dt.np)
    vals = [jnp.asarray(o, jnp.float32) if _key(o)[1] == 0 or (i == 1 and o.ndim == 0) else r(jnp.asarray(o))
            for i, o in enumerate(operands)]
    return f(*vals).astype(dt.np)


def _div(p, q):
    return complex_c.div_c10(p, q) if jnp.iscomplexobj(p) or jnp.iscomplexobj(q) else p / q


def _addc_vjp(divide):
    """PyTorch's formulas, each op in the dtype PyTorch computes it in (tensor1 and tensor2 arrive in their own
    dtypes: the op's ``vjp_uncast``; a half type is computed in float32 and rounded after every op):
    addcmul  tensor1: grad * (tensor2 * value)          tensor2: grad * (tensor1 * value)
    addcdiv  tensor1: grad * (value / tensor2)          tensor2: -grad * (value * tensor1 / (tensor2 * tensor2))
    (each factor conjugated for complex inputs). ``value / tensor2`` is ATen's ``empty_like(tensor2).fill_(value)
    .div_(tensor2)``: in tensor2's dtype, and an error for an integer tensor2 (the quotient is float)."""
    def vjp(g, x, a, b, v, out):
        if divide:
            b_dt = _dtype.from_np(b.dtype)
            if b_dt.category < _dtype._FLOAT:  # (only when tensor1's gradient is asked for)
                q_dt = _dtype.result_type_from_keys((_key(v), (b_dt, 2)))
                q_dt = q_dt if q_dt.category >= _dtype._FLOAT else _dtype.DEFAULTS.float
                names = _dtype.scalar_type_name(q_dt), _dtype.scalar_type_name(b_dt)
                g_a = NotDifferentiable(RuntimeError("result type {} can't be cast to the desired output type {}"
                                                     .format(*names)))
            else:
                filled = jnp.full(b.shape, jnp.asarray(v, jnp.float32 if b.dtype in _precision.LOW else None), b.dtype)
                g_a = _torch_op(lambda p, q: p * jnp.conj(q), g, _torch_op(_div, filled, b))
            fb = _torch_op(_div, _torch_op(jnp.multiply, a, v), _torch_op(jnp.multiply, b, b), true_div=True)
            g_b = _torch_op(lambda p, q: -p * jnp.conj(q), g, fb)
        else:
            g_a = _torch_op(lambda p, q: p * jnp.conj(q), g, _torch_op(jnp.multiply, b, v))
            g_b = _torch_op(lambda p, q: p * jnp.conj(q), g, _torch_op(jnp.multiply, a, v))
        return g, g_a, g_b, None
    return vjp


_ADDCMUL = defop("addcmul", lambda x, a, b, v: x + jnp.asarray(v, x.dtype) * a * b, promote="same",
                 promote_args=(0, 1, 2), grad_name="AddcmulBackward0", vjp=_addc_vjp(False), vjp_uncast=True)


def _addcdiv(x, a, b, v):
    """``x + (v * a) / b``; a complex quotient by c10's division, as PyTorch's kernel (NaN parts stay NaN)."""
    va = jnp.asarray(v, x.dtype) * a
    return x + (complex_c.div_c10(va, b) if jnp.iscomplexobj(va) else va / b)


_ADDCDIV = defop("addcdiv", _addcdiv, promote="same", promote_args=(0, 1, 2), grad_name="AddcdivBackward0",
                 vjp=_addc_vjp(True), vjp_uncast=True)


def _require_tensors(name, input, tensor1, tensor2):
    for pos, (arg, x) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        require_tensor(x, name, pos, arg)


def _value(name, value, *operands):
    """The ``value=`` keyword of addcmul/addcdiv: a Number (or a one-element Tensor); a complex number needs a complex
    result (PyTorch's RuntimeError "value cannot be converted to type float without overflow")."""
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type_name(value)}")
    dt = common_dtype(operands)
    if dt is _dtype.bool:
        raise not_implemented(f"{name}_cpu_out", dt)
    if isinstance(value, complex) and value.imag and dt.category != _COMPLEX:
        raise RuntimeError(f"value cannot be converted to type {c10_name(dt)} without overflow")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        check_scalar_fits(value, dt, opmath=True)  # (the kernel converts it to the computation's type, checked)
    return scalar_or_tensor(value)


def _positional_value(name, tensor1, tensor2, rest, value):
    """``(tensor1, tensor2, value)``, also from the deprecated ``addcmul(input, Number value, tensor1, tensor2)``
    overload that old optimizer code uses (``exp_avg_sq.addcmul_(1 - beta2, grad, grad)``)."""
    if not rest:
        return tensor1, tensor2, value
    if len(rest) == 1 and isinstance(tensor1, numbers.Number) and type(value) is int and value == 1:
        warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number value, Tensor tensor1, Tensor tensor2)"
                      f"\nConsider using one of the following signatures instead:\n\t{name}(Tensor tensor1, Tensor "
                      f"tensor2, *, Number value = 1)", UserWarning, stacklevel=3)
        return tensor2, rest[0], tensor1
    raise TypeError(f"{name}() takes 2 positional arguments but {2 + len(rest)} were given")


def addcmul(input, tensor1, tensor2, *rest, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    tensor1, tensor2, value = _positional_value("addcmul", tensor1, tensor2, rest, value)
    _require_tensors("addcmul", input, tensor1, tensor2)
    return _out(apply(_ADDCMUL, (input, tensor1, tensor2, _value("addcmul", value, input, tensor1, tensor2))), out,
                "addcmul")


def addcdiv(input, tensor1, tensor2, *rest, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (floating point only)."""
    tensor1, tensor2, value = _positional_value("addcdiv", tensor1, tensor2, rest, value)
    _require_tensors("addcdiv", input, tensor1, tensor2)
    if tensor1.dtype.category <= _INT and tensor2.dtype.category <= _INT:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _out(apply(_ADDCDIV, (input, tensor1, tensor2, _value("addcdiv", value, input, tensor1, tensor2))), out,
                "addcdiv")


_public("addcmul", addcmul, inplace=True)
_public("addcdiv", addcdiv, inplace=True)
