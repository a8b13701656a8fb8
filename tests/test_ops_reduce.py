"""Reductions and scans against PyTorch 2.13: values, result dtypes, dim/keepdim conventions (tuples, negative
dims, 0-dim inputs, ``axis=``), gradients (ties, zeros, NaN), errors and ``out=``."""
import numpy as np
import pytest

from oracle import arr, check, check_fd, check_raises, run_both, torch, torchish, needs_torch

pytestmark = needs_torch


def lib_inputs(T, inputs):
    return [T.tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]


def agree(fn, inputs=(), grad=True, **tols):
    """Both libraries give the same values/dtypes (and gradients), or both raise the same builtin exception."""
    try:
        fn(torch, *lib_inputs(torch, inputs))
    except Exception:
        check_raises(lambda T: fn(T, *lib_inputs(T, inputs)))
        return
    check(fn, list(inputs), grad=grad, **tols)


X = arr(3, 4, seed=5)
TIES = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0], [0.0, -4.0, 5.0, 5.0]], np.float32)
ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [0.5, -2.0, 1.0, 3.0]], np.float32)
NANS = np.array([[1.0, np.nan, 2.0, -1.0], [0.5, 3.0, 0.0, 2.0], [np.nan, np.nan, 1.0, 3.0]], np.float32)

REDUCTIONS = {
    "sum": lambda T, x: x.sum(), "sum_dim": lambda T, x: T.sum(x, 1), "sum_neg": lambda T, x: x.sum(-2),
    "sum_tuple": lambda T, x: x.sum((0, 1)), "sum_keep": lambda T, x: x.sum(1, keepdim=True),
    "sum_dtype": lambda T, x: x.sum(0, dtype=T.float64), "sum_axis": lambda T, x: T.sum(x, axis=0, keepdims=True),
    "sum_empty_tuple": lambda T, x: T.sum(x, ()),
    "mean": lambda T, x: x.mean(), "mean_dim": lambda T, x: x.mean(-1), "mean_tuple": lambda T, x: x.mean([1, 0]),
    "mean_keep": lambda T, x: T.mean(x, 0, True), "mean_dtype": lambda T, x: x.mean(dtype=T.float64),
    "prod": lambda T, x: x.prod(), "prod_dim": lambda T, x: x.prod(1), "prod_keep": lambda T, x: T.prod(x, 0, True),
    "max": lambda T, x: x.max(), "max_dim": lambda T, x: x.max(1), "max_keep": lambda T, x: T.max(x, 0, True),
    "min": lambda T, x: T.min(x), "min_dim": lambda T, x: x.min(dim=-1), "max_other": lambda T, x: T.max(x, x * 0.5),
    "amax": lambda T, x: x.amax(), "amax_dim": lambda T, x: T.amax(x, 1), "amin_tuple": lambda T, x: x.amin((0, 1)),
    "amin_keep": lambda T, x: T.amin(x, -1, keepdim=True), "argmax": lambda T, x: x.argmax(),
    "argmax_dim": lambda T, x: T.argmax(x, 1), "argmin_keep": lambda T, x: x.argmin(0, keepdim=True),
    "argmax_keep_all": lambda T, x: x.argmax(keepdim=True), "aminmax": lambda T, x: T.aminmax(x),
    "aminmax_dim": lambda T, x: T.aminmax(x, dim=0, keepdim=True),
    "var": lambda T, x: x.var(), "var_dim": lambda T, x: x.var(1), "var_biased": lambda T, x: x.var(0, unbiased=False),
    "var_corr": lambda T, x: T.var(x, 1, correction=2), "var_keep": lambda T, x: x.var((0, 1), keepdim=True),
    "var_positional": lambda T, x: x.var(1, True, True), "var_bool": lambda T, x: x.var(False),
    "std": lambda T, x: x.std(), "std_dim": lambda T, x: T.std(x, 0), "std_corr0": lambda T, x: x.std(1, correction=0),
    "var_mean": lambda T, x: T.var_mean(x, 1), "std_mean": lambda T, x: T.std_mean(x, correction=0),
    "norm": lambda T, x: x.norm(), "norm_1": lambda T, x: x.norm(1), "norm_inf": lambda T, x: T.norm(x, float("inf")),
    "norm_3_dim": lambda T, x: x.norm(3, 1, True), "norm_fro": lambda T, x: T.norm(x, "fro", (0, 1)),
    "logsumexp": lambda T, x: T.logsumexp(x, 1), "logsumexp_tuple": lambda T, x: x.logsumexp((0, 1)),
    "logsumexp_keep": lambda T, x: x.logsumexp(0, keepdim=True),
    "nansum": lambda T, x: T.nansum(x), "nansum_dim": lambda T, x: x.nansum(1),
    "nanmean": lambda T, x: T.nanmean(x, 1), "nanmean_all": lambda T, x: x.nanmean(),
    "cumsum": lambda T, x: x.cumsum(1), "cumsum_neg": lambda T, x: T.cumsum(x, -2),
    "cumsum_dtype": lambda T, x: x.cumsum(0, dtype=T.float64), "cumprod": lambda T, x: x.cumprod(1),
    "cumprod_0": lambda T, x: T.cumprod(x, 0), "cummax": lambda T, x: x.cummax(1), "cummin": lambda T, x: T.cummin(x, 0),
    "logcumsumexp": lambda T, x: x.logcumsumexp(1),
    "softmax": lambda T, x: T.softmax(x, 1), "softmax_0": lambda T, x: x.softmax(0),
    "log_softmax": lambda T, x: T.log_softmax(x, -1), "softmax_dtype": lambda T, x: T.softmax(x, 1, dtype=T.float64),
    "diff": lambda T, x: x.diff(), "diff_2": lambda T, x: T.diff(x, n=2, dim=0),
    "diff_pre": lambda T, x: T.diff(x, prepend=x[:, :1], append=x[:, -2:]),
    "trapezoid": lambda T, x: T.trapezoid(x), "trapezoid_dx": lambda T, x: T.trapezoid(x, dx=0.5, dim=0),
    "trapezoid_x": lambda T, x: T.trapezoid(x, T.tensor([0.0, 1.0, 3.0, 3.5])),
    "trapz": lambda T, x: T.trapz(x, dx=2.0), "cumtrapz": lambda T, x: T.cumulative_trapezoid(x),
    "cumtrapz_x": lambda T, x: T.cumulative_trapezoid(x, T.tensor([[0.0], [1.0], [3.0]]) * T.ones(3, 4), dim=0),
    "sum_to_size": lambda T, x: x.sum_to_size(1, 4),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_values_and_grads(name):
    check(lambda T, x: REDUCTIONS[name](T, x), [X])


TIE_CASES = ["max", "max_dim", "min", "min_dim", "amax", "amax_dim", "amin_tuple", "aminmax", "aminmax_dim",
             "norm_inf", "cummax", "cummin", "argmax", "argmax_dim", "argmin_keep", "std_dim", "var_dim"]


@pytest.mark.parametrize("name", TIE_CASES)
def test_reduction_ties(name):
    """Tied maxima: amax/max() split the gradient, max(dim) sends it to the returned index."""
    check(lambda T, x: REDUCTIONS[name](T, x), [TIES])


@pytest.mark.parametrize("name", ["prod", "prod_dim", "prod_keep", "cumprod", "cumprod_0", "norm", "norm_3_dim",
                                  "std_dim", "logsumexp"])
def test_reduction_zeros(name):
    check(lambda T, x: REDUCTIONS[name](T, x), [ZEROS])


@pytest.mark.parametrize("name", ["max", "max_dim", "min_dim", "amax_dim", "argmax", "argmax_dim", "nansum",
                                  "nansum_dim", "nanmean", "nanmean_all", "cummax", "cummin", "sum", "logsumexp"])
def test_reduction_nan(name):
    check(lambda T, x: REDUCTIONS[name](T, x), [NANS])


def test_prod_grad_with_several_zeros_and_std_at_zero_variance():
    check(lambda T, x: x.prod(1), [np.array([[0.0, 0.0, 2.0], [0.0, 3.0, 4.0], [1.0, 2.0, 3.0]], np.float32)])
    check(lambda T, x: x.prod(), [np.array([0.0, 0.0, 2.0], np.float32)])
    check(lambda T, x: x.std(1), [np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], np.float32)])
    check(lambda T, x: x.norm(dim=1), [np.array([[0.0, 0.0], [3.0, 4.0]], np.float32)])


DTYPE_OPS = {
    "sum": lambda T, x: x.sum(0), "mean": lambda T, x: x.mean(), "prod": lambda T, x: x.prod(),
    "max": lambda T, x: x.max(0), "max_all": lambda T, x: x.max(), "amax": lambda T, x: x.amax(1),
    "argmax": lambda T, x: x.argmax(1), "aminmax": lambda T, x: T.aminmax(x),
    "var": lambda T, x: x.var(), "std": lambda T, x: x.std(0), "logsumexp": lambda T, x: T.logsumexp(x, 1),
    "all": lambda T, x: x.all(), "all_axis": lambda T, x: T.all(x, axis=0, keepdims=True),
    "any_dim": lambda T, x: T.any(x, 1), "all_keep": lambda T, x: x.all(0, keepdim=True),
    "cumsum": lambda T, x: x.cumsum(1), "cumprod": lambda T, x: x.cumprod(0), "cummax": lambda T, x: x.cummax(1),
    "logcumsumexp": lambda T, x: x.logcumsumexp(1), "softmax": lambda T, x: x.softmax(1),
    "log_softmax": lambda T, x: T.log_softmax(x, 0), "nansum": lambda T, x: x.nansum(), "nanmean": lambda T, x: x.nanmean(),
    "count_nonzero": lambda T, x: x.count_nonzero(1), "norm": lambda T, x: x.norm(), "diff": lambda T, x: x.diff(),
    "trapezoid": lambda T, x: T.trapezoid(x), "cumtrapz": lambda T, x: T.cumulative_trapezoid(x, dx=2),
    "sum_dtype": lambda T, x: x.sum(dtype=T.int32), "prod_dtype": lambda T, x: x.prod(1, dtype=T.float32),
}


@pytest.mark.parametrize("name", list(DTYPE_OPS))
def test_reduction_dtypes(name):
    """bool, uint8, int32, int64 and float64 inputs: result dtypes, or PyTorch's dtype errors."""
    base = np.array([[0, 1, 3], [2, 0, 1]])
    for dtype in (np.bool_, np.uint8, np.int32, np.int64, np.float64):
        agree(lambda T, x: DTYPE_OPS[name](T, x), [base.astype(dtype)], grad=False)


ZERO_DIM = ["sum", "mean", "prod", "max", "min", "amax", "argmax", "var", "std", "logsumexp", "cumsum", "cumprod",
            "cummax", "cummin", "logcumsumexp", "softmax", "log_softmax", "all", "any", "nansum", "count_nonzero"]


@pytest.mark.parametrize("name", ZERO_DIM)
def test_zero_dim_inputs(name):
    for args in ((0,), (-1,), (0, True), (1,)):
        agree(lambda T, x: getattr(T, name)(x, *args), [np.array(1.5, np.float32)], grad=name not in ("argmax",))


EMPTY = [lambda T, x: x.sum(), lambda T, x: x.sum(0), lambda T, x: x.mean(), lambda T, x: x.mean(1),
         lambda T, x: x.prod(), lambda T, x: x.max(), lambda T, x: x.max(0), lambda T, x: x.max(1),
         lambda T, x: x.amax(), lambda T, x: x.amax(1), lambda T, x: x.amin(0), lambda T, x: x.argmax(),
         lambda T, x: x.argmax(1), lambda T, x: x.argmin(0), lambda T, x: T.aminmax(x),
         lambda T, x: T.aminmax(x, dim=1), lambda T, x: x.var(), lambda T, x: x.std(1), lambda T, x: x.norm(),
         lambda T, x: x.logsumexp(0), lambda T, x: x.all(), lambda T, x: x.any(1), lambda T, x: x.cumsum(0),
         lambda T, x: x.softmax(0), lambda T, x: x.min(dim=0), lambda T, x: T.trapezoid(x, dim=0),
         lambda T, x: T.cumulative_trapezoid(x, dim=0)]


@pytest.mark.parametrize("i", range(len(EMPTY)))
def test_empty_inputs(i):
    agree(lambda T, x: EMPTY[i](T, x), [np.zeros((0, 3), np.float32)], grad=False)


ERRORS = [
    lambda T: T.ones(2, 3).sum(2), lambda T: T.ones(2, 3).sum((0, -2)), lambda T: T.ones(2, 3).mean(-3),
    lambda T: T.tensor([1, 2]).mean(), lambda T: T.ones(2).mean(dtype=T.int64), lambda T: T.tensor([1, 2]).nanmean(),
    lambda T: T.ones(2, 3).prod((0, 1)), lambda T: T.ones(2, 3).max(dim=(0, 1)), lambda T: T.tensor([True]).argmax(),
    lambda T: T.tensor([1, 2]).var(), lambda T: T.tensor([1, 2]).std(0), lambda T: T.ones(2).var(0, True, correction=1),
    lambda T: T.tensor([1, 2]).logcumsumexp(0), lambda T: T.softmax(T.tensor([1, 2]), 0),
    lambda T: T.log_softmax(T.tensor([[1, 2]]), 0), lambda T: T.ones(2, 3).cumsum(2), lambda T: T.ones(3).cummax(1),
    lambda T: T.ones(3).logsumexp(), lambda T: T.diff(T.tensor(1.0)), lambda T: T.diff(T.ones(2), n=-1),
    lambda T: T.diff(T.ones(2, 2), prepend=T.ones(2)), lambda T: T.diff(T.ones(2), prepend=1.0),
    lambda T: T.trapezoid(T.ones(2, 2), T.ones(3)), lambda T: T.sum(2.0), lambda T: T.ones(2, 3).amax(5),
    lambda T: T.ones(2, 3).argmax(2), lambda T: T.ones(2, 3).softmax(3),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_reduction_errors(i):
    check_raises(ERRORS[i])


def test_out_and_inplace():
    def fn(T, x):
        o, v, i, c = T.empty(4), T.empty(3), T.empty(3, dtype=T.int64), T.empty(0)
        T.sum(x, 0, out=o)
        T.max(x, 1, out=(v, i))
        T.cumsum(x, 1, out=c)
        m = T.mean(x, 1, out=T.zeros(3))
        y = x.clone()
        y.cumsum_(0)
        return o, v, i, c, m, y
    check(fn, [X], grad=False)
    check(lambda T, x: (T.prod(x, 0, out=T.zeros(4, dtype=T.int64)), T.cumsum(x * 3, 1, out=T.zeros(0, dtype=T.int32)),
                        T.sum(x, 1, out=T.zeros(3, dtype=T.float64))), [X], grad=False)
    for bad in (lambda T: T.sum(T.ones(2), out=T.zeros((), dtype=T.int64)),
                lambda T: T.mean(T.ones(2), 0, out=T.zeros((), dtype=T.int64)),
                lambda T: T.amax(T.ones(2), 0, out=T.zeros((), dtype=T.int64)),
                lambda T: T.all(T.ones(2), 0, out=T.zeros(())),
                lambda T: T.nansum(T.ones(2), 0, out=T.zeros((), dtype=T.int64))):
        check_raises(bad)
    check_raises(lambda T: T.sum(T.ones(2, requires_grad=True), out=T.zeros(())))


def test_return_types():
    ref, got = run_both(lambda T: T.tensor([[1.0, 5.0], [3.0, 2.0]]).max(1))
    assert type(got).__name__ == "max" and got.values is got[0] and got.indices is got[1]
    assert repr(got).startswith("torch.return_types.max(\nvalues=tensor(")
    ref, got = run_both(lambda T: T.aminmax(T.tensor([1.0, 2.0])))
    assert got.min.item() == ref.min.item() and got.max.item() == ref.max.item()
    v, i = torchish.tensor([3.0, 1.0]).cummin(0)
    assert i.tolist() == [0, 1]


def test_grad_fn_names():
    exprs = [lambda T, r: r.sum(), lambda T, r: r.sum(0), lambda T, r: r.mean(), lambda T, r: r.mean(1),
             lambda T, r: r.prod(), lambda T, r: r.prod(0), lambda T, r: r.max(), lambda T, r: r.max(0)[0],
             lambda T, r: r.amax(), lambda T, r: r.var(), lambda T, r: r.std(0), lambda T, r: r.norm(),
             lambda T, r: r.logsumexp(0), lambda T, r: r.cumsum(0), lambda T, r: r.cumprod(0),
             lambda T, r: r.cummax(0)[0], lambda T, r: r.logcumsumexp(0), lambda T, r: r.nansum(),
             lambda T, r: r.softmax(0), lambda T, r: r.log_softmax(1), lambda T, r: r.diff(), lambda T, r: r.nanmean()]
    for e in exprs:
        a, b = run_both(lambda T: e(T, T.ones(2, 3, requires_grad=True)))
        assert type(b.grad_fn).__name__ == type(a.grad_fn).__name__


def test_softmax_implicit_dim_warns():
    ref, got = run_both(lambda T: T.nn.functional.softmax(T.tensor([[1.0, 2.0], [3.0, 5.0]])) if hasattr(
        T.nn.functional, "softmax") else T.softmax(T.tensor([[1.0, 2.0], [3.0, 5.0]]), 1))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        torchish.nn.functional.softmax(torchish.ones(2, 2))
    with pytest.raises(TypeError, match="missing 1 required positional arguments"):  # torch.softmax has no default
        torchish.softmax(torchish.ones(2, 2))


def test_fd_reductions():
    check_fd(lambda a: a.prod(1), np.array([[0.0, 2.0, 3.0], [1.0, -2.0, 0.5]]))
    check_fd(lambda a: a.std(1) + a.var(0).sum(), arr(3, 4, seed=2))
    check_fd(lambda a: torchish.logsumexp(a, 1) + a.logcumsumexp(0).sum(1), arr(3, 4, seed=3))
    check_fd(lambda a: a.cumprod(1).sum(0) + a.norm(3, 0), arr(3, 4, seed=4))
    check_fd(lambda a: torchish.cumulative_trapezoid(a, dx=0.3).sum(1) + torchish.softmax(a, 0)[:, 0], arr(3, 4, seed=6))


@needs_torch
def test_reductions_into_an_overlapping_out_accumulate_as_pytorchs():
    """sum/nansum/prod/amax/amin write out= without TensorIterator's internal-overlap check: where out's elements
    share one memory location (an expanded view), that location ends with the reduction of every input element
    reduced into any of them (the kernel accumulates there); a wrong-shaped one is resized first. torchish raised
    the overlap error (mean still does, as PyTorch's)."""
    def run(T):
        x = T.arange(6.0).reshape(2, 3)
        out = []
        for fn in (lambda o: T.sum(x, 0, out=o), lambda o: T.nansum(x, 0, out=o), lambda o: T.prod(x + 1, 0, out=o),
                   lambda o: T.amax(x, 0, out=o), lambda o: T.amin(x, 0, out=o),
                   lambda o: T.sum(x.int(), 0, out=o)):
            o = T.full((1,), 100.0).expand(3)
            out += [fn(o), o._base]
        o = T.full((2,), 100.0)[:, None].expand(2, 3)
        out += [T.sum(T.arange(12.0).reshape(2, 2, 3), 0, out=o), o._base]
        with pytest.warns(UserWarning, match="resized"):
            out.append(T.sum(x, 0, out=T.zeros(1).expand(2)))
        return out
    ref, got = run(torch), run(torchish)
    assert [r.tolist() for r in ref] == [g.tolist() for g in got]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torchish.mean(torchish.arange(6.0).reshape(2, 3), 0, out=torchish.zeros(1).expand(3))


@needs_torch
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_refuses_dim_none(keepdim):
    """logsumexp has no all-dims overload: dim=None is PyTorch's TypeError (torchish read it as every dim, and with
    keepdim=False raised dim=()'s RuntimeError). Found by a scan of reductions over dims."""
    check_raises(lambda T: T.logsumexp(T.ones(2, 3), dim=None, keepdim=keepdim),
                 match="argument 'dim' must be tuple of ints, not NoneType")
    check_raises(lambda T: T.ones(2, 3).logsumexp(None))
