"""``torchish.testing.assert_close``: PyTorch's closeness assertion (the same default tolerances and messages).

Compares Tensors, Python/numpy numbers and (nested) sequences and mappings of them: shapes, dtypes and devices
must agree (unless ``check_dtype``/``check_device`` are off), then ``|actual - expected| <= atol + rtol *
|expected|`` elementwise. Default tolerances by dtype, as PyTorch: float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5,
float32 1.3e-6/1e-5, float64 1e-7/1e-7 (rtol/atol), exact for integers and bools.
"""
from __future__ import annotations

import collections.abc
import math
import warnings

import numpy as np

from . import _dtype
from ._tensor import Tensor
from .ops.creation import as_tensor
from ._make_tensor import make_tensor as make_tensor

_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
        "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}

_NUMBERS = (bool, int, float, complex, np.number)

__all__ = ["assert_close", "assert_allclose", "make_tensor"]


def _check_pair(rtol, atol):
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")


def _tolerances(dt, rtol, atol):
    _check_pair(rtol, atol)
    return (rtol, atol) if rtol is not None else _TOL.get(dt.name, (0.0, 0.0))


def _fail(msg, extra, path):
    where = "".join(f"[{p!r}]" for p in path)
    if where:
        msg += f"\n\nThe failure occurred for item {where}"
    raise AssertionError(extra if extra is not None else msg)


def _no_pair(actual, expected, path):
    """PyTorch's TypeError for inputs no comparison handles (``msg=`` is not used for it)."""
    where = "".join(f"[{p!r}]" for p in path)
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
                    + (f"\n\nThe failure occurred for item {where}" if where else ""))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path):
    if actual.shape != expected.shape:
        _fail(f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.", msg, path)
    if check_device and actual.device != expected.device:
        _fail(f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.", msg, path)
    if check_dtype and actual.dtype != expected.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.", msg, path)
    dt = _dtype.promote_types(actual.dtype, expected.dtype) if not check_dtype else actual.dtype
    rtol, atol = _tolerances(dt, rtol, atol)
    a = np.asarray(actual.detach().cpu()._concrete())  # (bfloat16 too, which Tensor.numpy() refuses)
    e = np.asarray(expected.detach().cpu()._concrete())
    integer = not np.issubdtype(np.result_type(a, e), np.inexact)
    ct = np.float64 if integer else np.result_type(a, e)  # PyTorch reports differences in the tensors' precision
    a, e = a.astype(ct), e.astype(ct)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan) if a.size else np.zeros(0, bool)
    if close.all():
        return
    n, total = int((~close).sum()), a.size
    with np.errstate(divide="ignore", invalid="ignore"):
        absd = np.abs(a - e)
        reld = (absd / np.abs(e)).astype(np.float32 if integer else np.finfo(ct).dtype)  # int/int: default float
    ia = np.unravel_index(int(np.argmax(np.where(np.isnan(absd), np.inf, absd))), a.shape) if a.ndim else ()
    ir = np.unravel_index(int(np.argmax(np.where(np.isnan(reld), -np.inf, reld))), a.shape) if a.ndim else ()
    exact = rtol == 0 and atol == 0
    big_abs = int(absd[ia]) if integer else float(absd[ia])
    if a.ndim == 0:
        av, ev = actual.item(), expected.item()
        rel = abs(av - ev) / abs(ev) if integer and ev != 0 else float(reld[ir])  # ints: Python's division
        _fail(_scalar_text(av, ev, big_abs, rel, rtol, atol), msg, path)
    text = (f"Tensor-likes are not {'equal' if exact else 'close'}!\n\nMismatched elements: {n} / {total} "
            f"({100.0 * n / total:.1f}%)\n"
            f"Greatest absolute difference: {big_abs} at index {tuple(int(i) for i in ia)}"
            + ("" if exact else f" (up to {atol} allowed)") + "\n"
            f"Greatest relative difference: {float(reld[ir])} at index {tuple(int(i) for i in ir)}"
            + ("" if exact else f" (up to {rtol} allowed)"))
    _fail(text, msg, path)


def _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path):
    if check_dtype and type(actual) is not type(expected):
        _fail(f"The values for attribute 'dtype' do not match: {type(actual)} != {type(expected)}.", msg, path)
    _check_pair(rtol, atol)
    if rtol is None:
        rtol, atol = (1e-7, 1e-7) if isinstance(actual, (float, complex)) or isinstance(expected, (float, complex)) \
            else (0.0, 0.0)
    if actual == expected or (equal_nan and _isnan(actual) and _isnan(expected)):
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    rel = diff / abs(expected) if expected != 0 else math.inf
    _fail(_scalar_text(actual, expected, diff, rel, rtol, atol), msg, path)


def _scalar_text(actual, expected, diff, rel, rtol, atol):
    exact = rtol == 0 and atol == 0
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {expected} but got {actual}.\n"
            f"Absolute difference: {diff}" + ("" if exact else f" (up to {atol} allowed)") + "\n"
            f"Relative difference: {rel}" + ("" if exact else f" (up to {rtol} allowed)"))


def _isnan(x):
    return isinstance(x, (float, complex)) and x != x


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close (PyTorch's rules and messages)."""
    _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, (), allow_subclasses)


def _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path, subclasses=True):
    if (actual is None) != (expected is None):
        _fail(f"None mismatch: {actual} is not {expected}", msg, path)
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        # (never a Tensor against a number, array or list; with allow_subclasses=False a Parameter is no Tensor)
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)) or (
                not subclasses and type(actual) is not type(expected)):
            _no_pair(actual, expected, path)
        _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path)
        return
    if isinstance(actual, _NUMBERS) and isinstance(expected, _NUMBERS):
        _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path)
        return
    if isinstance(actual, np.ndarray) or isinstance(expected, np.ndarray):
        _compare_tensors(as_tensor(np.asarray(actual)), as_tensor(np.asarray(expected)), rtol, atol, equal_nan,
                         check_device, check_dtype, msg, path)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(set(expected) - set(actual))}\nAdditional keys in the actual mapping: "
                  f"{sorted(set(actual) - set(expected))}", msg, path)
        for k in expected:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_device, check_dtype, msg, path + (k,),
                     subclasses)
        return
    if isinstance(actual, collections.abc.Sequence) and isinstance(expected, collections.abc.Sequence) \
            and not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg, path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_device, check_dtype, msg, path + (i,), subclasses)
        return
    if actual is None and expected is None:
        return
    _no_pair(actual, expected, path)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated spelling: values only (dtypes may differ)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from .ops.from_data import tensor
    actual = actual if isinstance(actual, Tensor) else tensor(actual)
    expected = expected if isinstance(expected, Tensor) else tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:  # (its own table: the largest of the two dtypes', 0 for the others)
        rtol, atol = (max(p) for p in zip(*(_ALLCLOSE_TOLS.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected))))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                 msg=msg or None)


_ALLCLOSE_TOLS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
