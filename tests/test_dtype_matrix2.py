"""More cases of the dtype-matrix sweep (helper-86's, continued): functions that take PyTorch's ``out=`` with each op's
own dtype rule and wording, reductions' ``out=`` dtype checks, dtype tables of kernels, and 0-d / size-0 inputs —
each against PyTorch."""
from __future__ import annotations

import warnings

import pytest

from oracle import check_raises, needs_torch, same, same_error, torch

pytestmark = needs_torch
warnings.filterwarnings("ignore", category=UserWarning)


def _x(T):
    return T.tensor([[1.5, -0.25, 0.75], [-2.0, 0.5, 3.0]])


def _same_outcome(fn):
    """``fn(lib)`` gives PyTorch's result, or raises PyTorch's exception with its message."""
    try:
        fn(torch)
    except Exception:  # noqa: BLE001 - torch's outcome is an error: the same one
        same_error(fn)
        return
    same(fn)


# ---------------------------------------------------------------------------------------------------------------
# functions that took no out= (TypeError) where PyTorch's do: each with its kernel's out= dtype rule

OUT = {
    "diff": lambda T, o: T.diff(_x(T), out=o),
    "threshold": lambda T, o: T.threshold(_x(T), 0.5, 2.0, out=o),
    "F.linear": lambda T, o: T.nn.functional.linear(_x(T), _x(T), T.ones(2), out=o),
    "F.avg_pool2d": lambda T, o: T.nn.functional.avg_pool2d(_x(T)[None, None], 2, 1, out=o),
    "F.avg_pool3d": lambda T, o: T.nn.functional.avg_pool3d(_x(T)[None, None, None], 1, out=o),
    "hardshrink": lambda T, o: T.hardshrink(_x(T), out=o),
    "F.hardshrink": lambda T, o: T.nn.functional.hardshrink(_x(T), 0.6, out=o),
    "F.softshrink": lambda T, o: T.nn.functional.softshrink(_x(T), out=o),
    "F.gelu": lambda T, o: T.nn.functional.gelu(_x(T), approximate="tanh", out=o),
    "F.softplus": lambda T, o: T.nn.functional.softplus(_x(T), out=o),
    "F.logsigmoid": lambda T, o: T.nn.functional.logsigmoid(_x(T), out=o),
    "frobenius_norm": lambda T, o: T.frobenius_norm(_x(T), [1], out=o),
    "nuclear_norm": lambda T, o: T.nuclear_norm(_x(T), out=o),
    "linalg.matrix_norm": lambda T, o: T.linalg.matrix_norm(_x(T), 1, out=o),
    "linalg.norm": lambda T, o: T.linalg.norm(_x(T), out=o),
    "renorm": lambda T, o: T.renorm(_x(T), 2, 0, 1.0, out=o),
    "scatter": lambda T, o: T.scatter(_x(T), 1, T.tensor([[2], [0]]), _x(T), out=o),
    "scatter value": lambda T, o: T.scatter(_x(T), 1, T.tensor([[2], [0]]), 7.0, out=o),
    "scatter_add": lambda T, o: T.scatter_add(_x(T), 0, T.tensor([[1, 0, 1]]), _x(T), out=o),
    "scatter_reduce": lambda T, o: T.scatter_reduce(_x(T), 0, T.tensor([[1, 0, 1]]), _x(T), "amax", out=o),
    "slice_scatter": lambda T, o: T.slice_scatter(_x(T), T.zeros(2, 1), 1, 1, 2, out=o),
    "spmm": lambda T, o: T.spmm(_x(T), _x(T).T, out=o),
    "orgqr": lambda T, o: T.orgqr(_x(T).T, T.tensor([1.2, 0.5]), out=o),
    "linalg.householder_product": lambda T, o: T.linalg.householder_product(_x(T).T, T.tensor([1.2, 0.5]), out=o),
    "complex": lambda T, o: T.complex(_x(T), _x(T), out=o),
    "polar": lambda T, o: T.polar(_x(T).abs(), _x(T), out=o),
    "nonzero_static": lambda T, o: T.nonzero_static(_x(T) > 0, size=4, out=o),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "complex64"])
@pytest.mark.parametrize("name", list(OUT))
def test_functions_take_out_with_their_kernels_dtype_rule(name, dtype):
    def f(T):
        o = T.empty(0, dtype=getattr(T, dtype))
        return OUT[name](T, o) is o, o
    _same_outcome(f)


def test_methods_and_in_place_methods_take_no_out():
    x = lambda T: _x(T)[:, :2]  # noqa: E731
    for fn in (lambda T: x(T).renorm_(2, 0, 1.0, out=x(T)), lambda T: x(T).diff(out=x(T)),
               lambda T: x(T).orgqr(T.ones(1), out=x(T)), lambda T: x(T).cholesky_solve(T.eye(2), out=x(T)),
               lambda T: x(T).scatter_add_(0, T.zeros(1, 2).long(), x(T), out=x(T))):
        same_error(fn)


# ---------------------------------------------------------------------------------------------------------------
# reductions' out=: mean sums into out in out's dtype (integer out: its in-place division fails), the overload
# without dim first checks that the input casts to out; nanmean's own words; median/nanmedian take out= (and
# keepdim=) only with a dim


MEAN_OUT = {
    "mean int64 into float32": lambda T: T.mean(T.arange(6).view(2, 3), out=T.empty(0)),
    "mean int64 dim into float32": lambda T: T.mean(T.arange(6).view(2, 3), 0, out=T.empty(0)),
    "mean bool into float32": lambda T: T.mean(T.arange(6).view(2, 3) > 2, 1, out=T.empty(0)),
    "mean float32 into int64": lambda T: T.mean(_x(T), out=T.empty(0, dtype=T.int64)),
    "mean float64 dim into int64": lambda T: T.mean(_x(T).double(), 1, out=T.empty(0, dtype=T.int64)),
    "mean complex64 into float32": lambda T: T.mean(_x(T).to(T.complex64), out=T.empty(0)),
    "mean complex64 dim into float32": lambda T: T.mean(_x(T).to(T.complex64), 0, out=T.empty(0)),
    "mean dtype float64 into float32": lambda T: T.mean(_x(T), 0, dtype=T.float64, out=T.empty(0)),
    "mean int64 dtype float32 into float64": lambda T: T.mean(T.arange(6), 0, dtype=T.float32,
                                                              out=T.empty(0, dtype=T.float64)),
    "mean float32 into float64": lambda T: T.mean(_x(T), 1, out=T.empty(0, dtype=T.float64)),
    "nanmean int64 into float32": lambda T: T.nanmean(T.arange(6), out=T.empty(0)),
    "nanmean float32 into complex64": lambda T: T.nanmean(_x(T), out=T.empty(0, dtype=T.complex64)),
    "logsumexp complex64 into float32": lambda T: T.logsumexp(_x(T).to(T.complex64) * 1j, 0, out=T.empty(0)),
    "logsumexp float32 into float64": lambda T: T.logsumexp(_x(T), 1, out=T.empty(0, dtype=T.float64)),
    "logsumexp int64 into float64 keepdim": lambda T: T.logsumexp(T.arange(6).view(2, 3), 1, True,
                                                                  out=T.empty(0, dtype=T.float64)),
    "logsumexp float32 into int64": lambda T: T.logsumexp(_x(T), 1, out=T.empty(0, dtype=T.int64)),
    "logsumexp float32 into complex128": lambda T: T.logsumexp(_x(T), 0, out=T.empty(0, dtype=T.complex128)),
    "median into out": lambda T: T.median(_x(T), out=T.empty(0)),
    "nanmedian keepdim": lambda T: T.nanmedian(_x(T), keepdim=True),
    "median method keepdim": lambda T: _x(T).median(keepdim=False),
}


@pytest.mark.parametrize("name", list(MEAN_OUT))
def test_reductions_out_dtype_rules(name):
    _same_outcome(MEAN_OUT[name])


# ---------------------------------------------------------------------------------------------------------------
# dtype tables: kernels PyTorch lacks for a dtype, a result dtype, and norms checking the input before dtype=


def _m(T, dtype):
    return T.tensor([[2.0, 0.5, -1.0], [0.5, 3.0, 0.25], [-1.0, 0.25, 4.0]]).to(getattr(T, dtype))


DTYPE_TABLE = {
    "binomial float16": lambda T: T.binomial(T.full((3,), 5.0, dtype=T.float16), T.full((3,), 0.5, dtype=T.float16)),
    "binomial bfloat16": lambda T: T.binomial(T.full((3,), 5.0, dtype=T.bfloat16),
                                              T.full((3,), 0.5, dtype=T.bfloat16)),
    "inner bool matrices": lambda T: T.inner(_m(T, "bool"), _m(T, "bool")),
    "inner bool vectors": lambda T: T.inner(_m(T, "bool")[0], _m(T, "bool")[0]),
    "inner bool empty vectors": lambda T: T.inner(_m(T, "bool")[0, :0], _m(T, "bool")[0, :0]),
    "inner bool empty product": lambda T: T.inner(_m(T, "bool")[:, :0], _m(T, "bool")[:2, :0]),
    "margin_ranking_loss uint8": lambda T: T.nn.functional.margin_ranking_loss(_m(T, "uint8"), _m(T, "uint8").T,
                                                                                _m(T, "uint8"), margin=1),
    "margin_ranking_loss int64 none": lambda T: T.nn.functional.margin_ranking_loss(
        _m(T, "int64"), _m(T, "int64").T, -_m(T, "int64"), reduction="none"),
    "margin_ranking_loss float16": lambda T: T.nn.functional.margin_ranking_loss(
        _m(T, "float16"), _m(T, "float16").T, _m(T, "float16").sign(), margin=0.25),
    "matrix_norm int32 dtype float64": lambda T: T.linalg.matrix_norm(_m(T, "int32"), dtype=T.float64),
    "matrix_norm int32 nuc dtype float64": lambda T: T.linalg.matrix_norm(_m(T, "int32"), "nuc", dtype=T.float64),
    "matrix_norm float16 nuc dtype float32": lambda T: T.linalg.matrix_norm(_m(T, "float16"), "nuc",
                                                                           dtype=T.float32),
    "matrix_norm float32 dtype complex128": lambda T: T.linalg.matrix_norm(_m(T, "float32"), dtype=T.complex128),
    "matrix_norm complex64 dtype float64": lambda T: T.linalg.matrix_norm(_m(T, "complex64"), 1, dtype=T.float64),
    "matrix_norm float64 dtype float32": lambda T: T.linalg.matrix_norm(_m(T, "float64"), dtype=T.float32),
    "matrix_norm float32 dtype int64": lambda T: T.linalg.matrix_norm(_m(T, "float32"), dtype=T.int64),
    "matrix_norm int32 order 3": lambda T: T.linalg.matrix_norm(_m(T, "int32"), 3),
    "matrix_norm float32 dtype float64": lambda T: T.linalg.matrix_norm(_m(T, "float32"), -1, dtype=T.float64),
    "linalg.norm int32 ord 1 dtype float64": lambda T: T.linalg.norm(_m(T, "int32"), 1, dtype=T.float64),
    "vector_norm float32 dtype int64": lambda T: T.linalg.vector_norm(_m(T, "float32"), dtype=T.int64),
    "cholesky_solve int64": lambda T: T.cholesky_solve(_m(T, "int64"), _m(T, "int64")),
    "cholesky_solve bool": lambda T: T.cholesky_solve(_m(T, "bool"), _m(T, "bool")),
    "cholesky_solve float16": lambda T: T.cholesky_solve(_m(T, "float16"), _m(T, "float16")),
    "cholesky_solve int64 and float32": lambda T: T.cholesky_solve(_m(T, "int64"), _m(T, "float32")),
    "triangular_solve int32": lambda T: T.triangular_solve(_m(T, "int32"), _m(T, "int32")),
    "triangular_solve bfloat16": lambda T: T.triangular_solve(_m(T, "bfloat16"), _m(T, "bfloat16")),
}


@pytest.mark.parametrize("name", list(DTYPE_TABLE))
def test_dtype_tables(name):
    _same_outcome(DTYPE_TABLE[name])


# ---------------------------------------------------------------------------------------------------------------
# 0-d and size-0 inputs


EDGES = {
    "cross of 0-d tensors": lambda T: T.cross(T.tensor(1.5), T.tensor(2.0)),
    "linalg.cross of 0-d tensors": lambda T: T.linalg.cross(T.tensor(1.5), T.tensor(2.0)),
    "cross without a dim of size 3": lambda T: T.cross(T.ones(2, 2), T.ones(2, 2)),
    "cross picks the input's dim of size 3": lambda T: T.cross(T.arange(3.0).view(1, 3), T.arange(9.0).view(3, 3)),
    "fftshift of a 0-d tensor": lambda T: T.fft.fftshift(T.tensor(1.5)),
    "ifftshift over no dims": lambda T: T.fft.ifftshift(T.ones(2), dim=()),
    "roll by no shifts": lambda T: T.roll(T.ones(2), [], [0]),
    "norm_except_dim of a 0-d tensor": lambda T: T.norm_except_dim(T.tensor(1.5)),
    "norm_except_dim out of range": lambda T: T.norm_except_dim(T.ones(2), 2, 1),
    "norm_except_dim 0-d dim -1": lambda T: T.norm_except_dim(T.tensor(1.5), 2, -1),
    "embedding of an empty weight": lambda T: T.nn.functional.embedding(T.zeros(0, 3, dtype=T.int64), T.ones(0, 3)),
    "take of an empty tensor": lambda T: T.take(T.ones(0, 3, dtype=T.bool), T.zeros(0, 3, dtype=T.int64)),
    "geqrf of an empty matrix": lambda T: tuple(T.geqrf(T.ones(0, 3))) + tuple(T.geqrf(T.ones(2, 3, 0))),
    "unfold of a 0-d tensor, size 0": lambda T: (T.tensor(1.5).unfold(0, 0, 1), T.tensor(1.5).unfold(-1, 0, 2).stride()),
    "unfold of a 0-d tensor, size 1": lambda T: T.tensor(1.5).unfold(0, 1, 1),
    "adaptive_avg_pool1d of int64 to size 0": lambda T: T.nn.functional.adaptive_avg_pool1d(_m(T, "int64"), 0),
    "adaptive_avg_pool1d of complex64 to size 0": lambda T: T.nn.functional.adaptive_avg_pool1d(_m(T, "complex64"), 0),
    "adaptive_avg_pool2d of an empty int64 batch": lambda T: T.nn.functional.adaptive_avg_pool2d(
        _m(T, "int64")[None, :0], 2),
    "adaptive_avg_pool3d of int64 to size 0": lambda T: T.nn.functional.adaptive_avg_pool3d(_m(T, "int64")[None, None],
                                                                                           (0, 2, 2)),
}


@pytest.mark.parametrize("name", list(EDGES))
def test_zero_dim_and_empty_inputs(name):
    _same_outcome(EDGES[name])


def test_median_none_dim_and_zero_d_trapezoid_errors():
    """median/nanmedian with an explicit dim=None, and the trapezoid rules of a 0-d tensor, raise as PyTorch's."""
    y = lambda T: T.tensor(1.5)  # noqa: E731
    for fn in (lambda T: T.median(T.tensor([3.0, 1.0, 2.0]), None),
               lambda T: T.nanmedian(T.tensor([3.0, 1.0]), None),
               lambda T: T.trapezoid(y(T)), lambda T: T.trapz(y(T), dx=2.0),
               lambda T: T.trapezoid(y(T), T.tensor(2.0)), lambda T: T.cumulative_trapezoid(y(T))):
        same_error(fn)
    check_raises(lambda T: T.tensor([3.0, 1.0]).median(None))  # (the method's message says position 1)
