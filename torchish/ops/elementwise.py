"""Helpers shared by the op families, and the factory of the binary elementwise ops.

Python numbers against Tensors (``scalar_or_tensor``), PyTorch's argument errors (``require_tensor``,
``require_int``, ``not_implemented``, ``c10_name``), PyTorch's result dtype (``common_dtype``), the ``out=`` keyword
(``_out``), the integer division-by-zero check, the dtype categories ops reject, and :func:`binary_op`, from which
``arith`` and ``compare`` build their op tables. The op families themselves are ``unary``, ``arith``, ``compare``, ``ternary``,
``copying`` and ``operators`` (the Tensor dunders).
"""
from __future__ import annotations

import functools
import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import tracing
from .registry import ELEMENTWISE, apply, defop, overload

_BOOL, _INT, _FLOAT, _COMPLEX = _dtype._BOOL, _dtype._INT, _dtype._FLOAT, _dtype._COMPLEX
NO_BOOL = frozenset({_BOOL})
FLOATS_ONLY = frozenset({_BOOL, _INT})
INTS_ONLY = frozenset({_FLOAT, _COMPLEX})
INTS_NO_BOOL = frozenset({_BOOL, _FLOAT, _COMPLEX})


# ----------------------------------------------------------------------------------------------------------------
# helpers shared by the op families


def type_name(x):
    """The type name PyTorch's argument errors print: ``list``, ``float``, ``numpy.ndarray``."""
    t = type(x)
    return f"numpy.{t.__name__}" if t.__module__.split(".")[0] == "numpy" else t.__name__


def scalar_or_tensor(x, fname=None, pos=2, arg="other"):
    """A Tensor-or-Number argument: Python numbers stay Python numbers (PyTorch's "wrapped numbers"), numpy
    scalars become Python numbers, jax arrays become Tensors. Lists, tuples and numpy arrays raise PyTorch's
    TypeError (``mul(): argument 'other' (position 2) must be Tensor, not list``); the operators convert numpy
    arrays themselves, as PyTorch's do."""
    if isinstance(x, np.generic):  # before the Python types: np.float64 is a float (and would stay float64)
        return _dtype.numpy_scalar(x)
    if isinstance(x, (Tensor, bool, int, float, complex)):
        return x
    if isinstance(x, numbers.Number):
        return complex(x) if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real) else float(x)
    if isinstance(x, jax.Array):
        from .creation import tensor
        return tensor(x)
    if fname is None:
        raise TypeError(f"expected a Tensor or a number, got {type_name(x)}")
    raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type_name(x)}")


def require_tensor(x, fname, pos=1, arg="input"):
    """PyTorch's TypeError for a non-Tensor where a Tensor argument is required."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type_name(x)}")


def require_str(x, fname, arg, pos):
    """PyTorch's TypeError for a non-str where a ``str`` argument is declared (``linalg_qr(): argument 'mode'
    (position 2) must be str, not float``)."""
    if not isinstance(x, str):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be str, not {type_name(x)}")


def need_bool(fname, x, arg="keepdim", pos=None):
    """PyTorch's TypeError unless ``x`` is a Python bool (its argument parser refuses ints, numpy bools, None and
    Tensors where a bool is declared); ``pos`` None gives the keyword form of the message."""
    if type(x) is bool:
        return
    where = f" (position {pos})" if pos else ""
    raise TypeError(f"{fname}(): argument '{arg}'{where} must be bool, not {type_name(x)}")


def require_int(x, fname, pos, arg, symint=False):
    """PyTorch's TypeError for a non-integer where an int argument is required: Python and numpy ints and integer
    Tensors without dims pass (a ``symint``, a ``SymInt`` of PyTorch's schema, takes one of one element with dims too,
    through ``__index__``: ``narrow(x, 0, 0, torch.tensor([2]))``); bools, floats and the rest raise (``pos`` None:
    the keyword form of the message)."""
    ok = (isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))) or \
        (isinstance(x, Tensor) and x.dtype.category == _INT and (x.ndim == 0 or symint and x.numel() == 1))
    if not ok:
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{arg}'{where} must be int, not {type_name(x)}")


def require_number(x, fname, pos, arg, kind="float"):
    """PyTorch's TypeError where its parser refuses ``x`` for a ``float`` (``kind``) or ``Number`` parameter: it takes
    Python and numpy numbers (a complex one only as a ``Number``) and Tensors without dims that do not require grad;
    ``pos`` None gives the keyword form of the message."""
    if isinstance(x, Tensor):
        ok = x.ndim == 0 and not x.requires_grad
    else:
        ok = isinstance(x, (int, float, np.integer, np.floating, np.bool_)) or \
            kind == "Number" and isinstance(x, (complex, np.complexfloating))
    if not ok:
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{arg}'{where} must be {kind}, not {type_name(x)}")


def _rank_key(a):
    if isinstance(a, Tensor):
        d = a._d
        return (_dtype.from_np(d.dtype), 2 if d.ndim else 1)
    return (_dtype.scalar_dtype(a), 0)


def common_dtype(args):
    """PyTorch's result dtype of Tensors and Python scalars (``None`` entries ignored)."""
    return _dtype.result_type_from_keys(tuple(_rank_key(a) for a in args if a is not None))


def not_implemented(kernel, dt):
    """PyTorch's error for a kernel that has no version for ``dt`` (builtin NotImplementedError, a RuntimeError)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_type_name(dt)}'")


c10_name = _dtype.cpp_type_name  # the C++ type name PyTorch prints in some dtype errors ('float', 'double', ...)


def out_grad_error(name=None):
    """PyTorch's error for ``out=`` where an argument requires grad (checked before its kernel runs)."""
    label = f"{name}(): " if name else ""
    return RuntimeError(f"{label}functions with out=... arguments don't support automatic differentiation, but one of "
                        "the arguments requires grad.")


def _out(result, out, name=None, warn=True):
    """Support PyTorch's ``out=`` keyword: write the result into ``out`` (resizing it as PyTorch does) and return it.
    ``warn``: PyTorch's deprecation warning when ``out`` has elements and another shape (the factories other than
    ``arange`` resize their ``out`` without it)."""
    if out is None:
        return result
    label = f"{name}(): " if name else ""
    if not isinstance(out, Tensor):
        raise TypeError(f"{label}argument 'out' must be Tensor, not {type(out).__name__}")
    if STATE.grad_enabled and (result._rg or out._rg):
        raise out_grad_error(name)
    from .inplace import assign
    if tuple(out.shape) != tuple(result.shape):
        if warn and out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          "which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch release "
                          "outputs will not be resized unless they have zero elements. You can explicitly reuse an "
                          "out tensor t by resizing it, inplace, to zero elements with t.resize_(0).", UserWarning,
                          stacklevel=3)
        if out._view is not None:  # a view is resized in its storage, as resize_ (contiguous at its offset)
            from .inplace import _check_overlap
            from .resize import resize_
            _check_overlap(out)  # (TensorIterator refuses an output overlapping itself before resizing it)
            resize_(out, tuple(result.shape))
            return assign(out, result)
        if STATE.recorder is not None:
            STATE.recorder.wrote(out)
        out._v = jnp.zeros(result._v.shape, out._v.dtype)  # resized: no version bump, as in PyTorch
    return assign(out, result)


def out_structured(result, out, name):
    """``_out`` for PyTorch's structured kernels (mm, bmm, addmm, the decompositions and solvers...): ``out`` must
    have the result's dtype exactly; for a tuple result, a tuple of that many tensors, each checked, returned as the
    result's (named) tuple type."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        if len(out) != len(result):
            raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
        outs = [out_structured(r, o, name) for r, o in zip(result, out)]
        return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {c10_name(result.dtype)}, but got "
                           f"{c10_name(out.dtype)} instead")
    return _out(result, out, name)


def structured_out(fn):
    """``fn`` (which computes its result) taking PyTorch's ``out=`` as a structured kernel does
    (:func:`out_structured`)."""
    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except TypeError as e:
            parser_wording(e, fn.__name__, args, kwargs if out is None else {**kwargs, "out": out})
            raise
        return out_structured(result, out, fn.__name__)
    return f


def parser_wording(e, name, args, kwargs):
    """The TypeError ``e`` of the call ``name(*args, **kwargs)`` in PyTorch's parser's words where its parser
    refuses the call (``parser_errors``, for the ops it lists)."""
    from .parser_errors import reword
    reword(e, name, args, kwargs)


def parser_worded(fn, name=None, method=False):
    """``fn`` (a ``torchish`` function of ``parser_errors.SIGNATURES`` with no other wrapper, or with ``method`` a
    Tensor method of its own) whose TypeErrors say what PyTorch's argument parser says where it refuses the call
    (``torch.mode(x, True)``: "mode(): argument 'dim' (position 2) must be int, not bool"; a keyword argument has no
    position), and whose other errors are that TypeError where the parser refuses the call (it runs first). The
    tables are read on the error path only: a call that succeeds pays one Python call."""
    from .parser_errors import refused
    name = name or fn.__name__

    @functools.wraps(fn)
    def f(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - re-raised, as the parser's TypeError where it refuses the call
            err = refused(e, name, args[1:] if method else args, kwargs, method)
            if err is e:
                raise
            raise err from None
    if name != fn.__name__:
        f.__name__ = f.__qualname__ = name
    return f


def linalg_out(result, out, label):
    """``_out`` for PyTorch's linear-algebra functions that copy their result into ``out`` after
    ``checkLinalgCompatibleDtype`` (pinv, matrix_rank, cholesky_solve/inverse...): any dtype the result safely casts
    to (``can_cast``), else PyTorch's '``label``: Expected result to be safely castable from ...'."""
    if out is not None and isinstance(out, Tensor) and not _dtype.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{label}: Expected result to be safely castable from "
                           f"{_dtype.scalar_type_name(result.dtype)} dtype, but got result with dtype "
                           f"{_dtype.scalar_type_name(out.dtype)}")
    return _out(result, out, label)


def linalg_castable_out(label):
    """``fn`` taking PyTorch's ``out=`` as :func:`linalg_out` does."""
    def wrap(fn):
        @functools.wraps(fn)
        def f(*args, out=None, **kwargs):
            return linalg_out(fn(*args, **kwargs), out, label)
        return f
    return wrap


def castable_out(fn):
    """``fn`` (which computes its result) taking PyTorch's ``out=`` (:func:`_out`: the result is cast to ``out``'s
    dtype)."""
    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        return _out(fn(*args, **kwargs), out, fn.__name__)
    return f


def factory_out(fn):
    """Factory ``fn`` (zeros, arange, randn...) taking PyTorch's ``out=``: the result is made in ``out``'s dtype
    (a ``dtype=`` must name it) and written into ``out``, which is returned."""
    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        if out is None:
            try:
                return fn(*args, **kwargs)
            except TypeError as e:
                parser_wording(e, fn.__name__, args, kwargs)
                raise
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn.__name__}(): argument 'out' must be Tensor, not {type(out).__name__}")
        given = dict(kwargs, out=out)  # (the call as written, for the parser's wording)
        dt = kwargs.get("dtype")
        if dt is None:
            kwargs["dtype"] = out.dtype
        elif _dtype.as_dtype(dt) is not out.dtype:
            raise RuntimeError(f"dtype {_dtype.scalar_type_name(_dtype.as_dtype(dt))} does not match dtype of out "
                               f"parameter ({_dtype.scalar_type_name(out.dtype)})")
        try:
            result = fn(*args, **kwargs)
        except TypeError as e:
            parser_wording(e, fn.__name__, args, given)
            raise
        return range_out(result, out, fn.__name__) if fn.__name__ in RANGES else _out(result, out, fn.__name__,
                                                                                          warn=False)
    return f


RANGES = frozenset({"arange", "linspace", "logspace", "range"})


def range_out(result, out, name):
    """``out=`` of PyTorch's range factories: they compare element counts only, so an ``out`` of another shape
    with as many elements keeps its shape (and strides) and takes the values in order; another count resizes it
    (``arange`` says so in its own warning). The other factories resize their ``out`` without a warning."""
    n = result.numel()
    if out.numel() == n:
        return _out(result.reshape(tuple(out.shape)), out, name)
    if name == "arange" and out.numel():
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} which "
                      f"does not match the computed number of elements {n}. Note that this may occur as a result "
                      f"of rounding error. The out tensor will be resized to a tensor of shape ({n},).", UserWarning,
                      stacklevel=3)
    return _out(result, out, name, warn=False)


def out_exact(result, out, name, message=None):
    """``_out`` for the ops whose ``out=`` must have the result's dtype exactly (abs, neg, floor... in PyTorch:
    "Found dtype Double but expected Float"); ``message``: the op's own wording, formatted with ``out`` and
    ``expected`` (the dtype names)."""
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        names = dict(out=_dtype.scalar_type_name(out.dtype), expected=_dtype.scalar_type_name(result.dtype))
        raise RuntimeError((message or "Found dtype {out} but expected {expected}").format(**names))
    return _out(result, out, name)


def exact_out(message=None):
    """``fn`` taking PyTorch's ``out=`` as :func:`out_exact` does (``message``: the op's own wording)."""
    def wrap(fn):
        @functools.wraps(fn)
        def f(*args, out=None, **kwargs):
            return out_exact(fn(*args, **kwargs), out, fn.__name__, message)
        return f
    return wrap


_ANY_ZERO = jax.jit(lambda d: jnp.any(d == 0))


def _check_divisor(b):
    """Integer division by zero raises in PyTorch (JAX would return garbage). Needs concrete values."""
    if isinstance(b, Tensor):
        d = b._d
        if isinstance(d, jax.core.Tracer):  # torchish.compile: checked before each run of the program
            tracing.defer_check(d == 0, d, RuntimeError, lambda _: "ZeroDivisionError")
            return
        if tracing.active() or d.size == 0:
            return
        if bool(_ANY_ZERO(d)):
            raise RuntimeError("ZeroDivisionError")
    elif b == 0:
        raise RuntimeError("ZeroDivisionError")


# ----------------------------------------------------------------------------------------------------------------
# the binary-op factory (arith and compare build their tables with it)

OPS = {}


def no_derivative(name):
    """The VJP of an op PyTorch records but cannot differentiate: backward through it raises PyTorch's error."""
    def vjp(g, *inputs, out, **static):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return vjp


def _check_operands(name, a, b, numbers):
    """PyTorch's overloads: ``numbers`` says which operands may be Python numbers ("both", "other" or "none")."""
    if numbers == "both":
        return
    if not isinstance(a, Tensor):
        if numbers == "other":
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(a).__name__}, "
                            f"{type(b).__name__}), but expected (Tensor input, Tensor other) or (Tensor input, "
                            "Number other)")
        require_tensor(a, name)
    if numbers == "none":
        require_tensor(b, name, 2, "other")


def binary_op(public, name, fwd, *, promote="same", vjp=None, grad_name=None, linear=False, reject=(), kernel=None,
              int_div=False, differentiable=True, numbers="other", no_complex=False, overloads=None, choose=None):
    """One binary op: defined in :data:`OPS`, exported through the calling family's ``public`` as function, method
    and in-place method (a family binds it once: ``_binary = partial(binary_op, _public)``). ``reject``: dtype
    categories PyTorch has no kernel for (NotImplementedError); ``no_complex``: PyTorch's RuntimeError "NAME not
    implemented for complex tensors." (maximum and its kin check that before dispatch). ``overloads``: the node
    names of PyTorch's overloads with a Python number operand, ``{"scalar": ...}`` for ``(Tensor, Number)`` and
    ``{"scalar_self": ...}`` for ``(Number, Tensor)`` (``grad_name`` is the ``(Tensor, Tensor)`` one's).
    ``choose(op, a, b)``: the op to run for these operands (another implementation, for operands whose gradient
    PyTorch computes differently: ldexp's integer exponent)."""
    op = OPS[name] = defop(name, fwd, promote=promote, vjp=vjp, grad_name=grad_name, linear=linear,
                           differentiable=differentiable, save_out=False if vjp is None else None)
    ELEMENTWISE.add(name)
    by_form = {form: overload(op, g) for form, g in (overloads or {}).items()}
    kname = kernel or f"{name}_cpu"

    checked = numbers != "both"
    by_dtype = bool(reject or int_div or no_complex)

    def f(input, other, *, out=None):
        a = input if isinstance(input, Tensor) else scalar_or_tensor(input, name, 1, "input")
        b = other if isinstance(other, Tensor) else scalar_or_tensor(other, name)
        if checked and not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            _check_operands(name, a, b, numbers)
        if by_dtype:
            dt = common_dtype((a, b))
            if no_complex and dt.category == _COMPLEX:
                raise RuntimeError(f"{name} not implemented for complex tensors.")
            if dt.category in reject:
                raise not_implemented(kname, dt)
            if int_div and dt.category <= _INT:
                _check_divisor(b)
        if by_form and not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            res = apply(by_form.get("scalar" if isinstance(a, Tensor) else "scalar_self", op), (a, b))
        elif choose is not None:
            res = apply(choose(op, a, b), (a, b))
        else:
            res = apply(op, (a, b))
        return res if out is None else _out(res, out, name)
    # a Tensor and a Tensor or Python int/float need no check (nor another node): its operator calls apply directly
    if not (by_dtype or by_form or choose):
        f.fast = (op, ())
    return public(name, f, inplace=True)
