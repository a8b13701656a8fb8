"""Sorting and order statistics against PyTorch 2.13: sort/argsort/topk/kthvalue/median/mode/quantile (values,
indices, tie and NaN order, gradients to the selected positions), unique/bincount/histc/searchsorted/bucketize/isin,
and PyTorch's errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oracle import (arr, assert_same, check, check_fd, check_raises, needs_torch, raised, run_both, torch,
                    torchish)

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


X = np.random.default_rng(11).permutation(12).reshape(3, 4).astype(np.float32) / 4 - 1  # distinct values
TIES = np.array([[3.0, 1.0, 3.0, 2.0], [5.0, 5.0, 1.0, 1.0], [0.0, 2.0, 2.0, 2.0]], np.float32)
NANS = np.array([[1.0, np.nan, 0.0, 2.0], [np.nan, 3.0, np.nan, -1.0], [0.5, 0.25, 0.0, 4.0]], np.float32)

ORDER = {
    "sort": lambda T, x: x.sort(), "sort_dim0": lambda T, x: T.sort(x, 0), "sort_desc": lambda T, x: x.sort(descending=True),
    "sort_stable_desc": lambda T, x: T.sort(x, dim=1, descending=True, stable=True),
    "sort_stable": lambda T, x: x.sort(stable=True), "argsort": lambda T, x: T.argsort(x, 0, descending=True),
    "argsort_stable": lambda T, x: x.argsort(stable=True), "msort": lambda T, x: T.msort(x),
    "kthvalue": lambda T, x: x.kthvalue(2), "kthvalue_dim0": lambda T, x: T.kthvalue(x, 3, 0, True),
    "median_all": lambda T, x: x.median(), "median_dim": lambda T, x: x.median(1),
    "median_keep": lambda T, x: T.median(x, 0, keepdim=True), "nanmedian_all": lambda T, x: x.nanmedian(),
    "nanmedian_dim": lambda T, x: T.nanmedian(x, 1), "mode": lambda T, x: x.mode(), "mode_dim0": lambda T, x: T.mode(x, 0),
    "mode_keep": lambda T, x: x.mode(1, keepdim=True),
}
TOPK = {"topk": lambda T, x: x.topk(2), "topk_small": lambda T, x: T.topk(x, 3, largest=False),
        "topk_dim0": lambda T, x: x.topk(2, 0), "topk_keep_all": lambda T, x: x.topk(4, sorted=True),
        "topk_zero": lambda T, x: x.topk(0)}


@pytest.mark.parametrize("name", list(ORDER) + list(TOPK))
def test_order_values_indices_grads(name):
    fn = {**ORDER, **TOPK}[name]
    check(lambda T, x: fn(T, x), [X])


@pytest.mark.parametrize("name", list(ORDER))
def test_order_ties(name):
    """Ties: stable order, PyTorch's lower median and its index, mode's smallest value and last index."""
    check(lambda T, x: ORDER[name](T, x), [TIES])


@pytest.mark.parametrize("name", ["sort", "sort_desc", "sort_stable_desc", "argsort", "kthvalue", "median_all",
                                  "median_dim", "nanmedian_all", "nanmedian_dim", "msort"])
def test_order_nan(name):
    """NaN sorts as the largest value; median propagates it, nanmedian skips it."""
    check(lambda T, x: ORDER[name](T, x), [NANS])


def test_topk_nan_and_all_nan_nanmedian():
    check(lambda T, x: x.topk(2), [NANS[:, [0, 1, 3]]])
    check(lambda T, x: (x.nanmedian(), x.nanmedian(0)), [np.array([np.nan, np.nan], np.float32)])


@pytest.mark.parametrize("name", ["sort", "sort_desc", "argsort", "msort", "kthvalue", "median_all", "median_dim",
                                  "mode", "mode_dim0", "topk", "topk_small"])
def test_order_dtypes(name):
    fn = {**ORDER, **TOPK}[name]
    base = np.array([[3, 1, 2, 2], [0, 5, 5, 1], [2, 2, 4, 0]])
    for dtype in (np.int64, np.int32, np.uint8, np.bool_, np.float64):
        if name in TOPK or name == "kthvalue":
            # ``base`` has ties, and which of the tied indices topk/kthvalue return is unspecified in PyTorch (its
            # CPU kernels' partial sort / quickselect decide): compare the values; check the indices select them.
            agree(lambda T, x: fn(T, x).values, [base.astype(dtype)], grad=False)
            if dtype == np.bool_:
                continue  # both raise (checked by agree)
            x = torchish.tensor(base.astype(dtype))
            v, i = fn(torchish, x)
            i = i if i.ndim == x.ndim else i.unsqueeze(-1)
            v = v if v.ndim == x.ndim else v.unsqueeze(-1)
            np.testing.assert_array_equal(x.gather(-1, i).numpy(), v.numpy())
            assert all(len(set(row)) == len(row) for row in i.tolist())
        else:
            agree(lambda T, x: fn(T, x), [base.astype(dtype)], grad=False)


@pytest.mark.parametrize("name", ["sort", "argsort", "topk", "kthvalue", "median_dim", "mode"])
def test_order_zero_dim_and_empty(name):
    f = {"sort": lambda T, x, d: x.sort(d), "argsort": lambda T, x, d: x.argsort(d), "topk": lambda T, x, d: x.topk(1, d),
         "kthvalue": lambda T, x, d: x.kthvalue(1, d), "median_dim": lambda T, x, d: x.median(d),
         "mode": lambda T, x, d: x.mode(d)}[name]
    agree(lambda T, x: f(T, x, 0), [np.array(2.5, np.float32)])
    agree(lambda T, x: f(T, x, -1), [np.array(2.5, np.float32)])
    agree(lambda T, x: f(T, x, 1), [np.zeros((2, 0), np.float32)], grad=False)
    agree(lambda T, x: f(T, x, 0), [np.zeros((2, 0), np.float32)], grad=False)


ORDER_ERRORS = [
    lambda T: T.ones(2, 3).sort(2), lambda T: T.sort(T.tensor([1j])), lambda T: T.ones(3).topk(4),
    lambda T: T.ones(3).topk(-1), lambda T: T.tensor(1.0).topk(2), lambda T: T.ones(2, 3).kthvalue(4),
    lambda T: T.ones(2, 3).kthvalue(0, 1), lambda T: T.ones(2, 3).median(5), lambda T: T.zeros(0).median(0),
    lambda T: T.tensor([True, False]).median(), lambda T: T.zeros(2, 0).mode(1), lambda T: T.sort(2.0),
]


@pytest.mark.parametrize("i", range(len(ORDER_ERRORS)))
def test_order_errors(i):
    check_raises(ORDER_ERRORS[i])


def test_median_empty_is_nan_and_out():
    agree(lambda T: T.zeros(0).median())

    def fn(T, x):
        v, i = T.empty(0), T.empty(0, dtype=T.int64)
        T.sort(x, 1, out=(v, i))
        w, j = T.empty(3), T.empty(3, dtype=T.int64)
        T.median(x, 1, out=(w, j))
        return v, i, w, j
    check(fn, [X], grad=False)


# ----------------------------------------------------------------------------------------------------------------
# quantile / nanquantile

QUANTILE = [
    lambda T, x, m: T.quantile(x, 0.3, interpolation=m), lambda T, x, m: T.quantile(x, 0.5, dim=1, interpolation=m),
    lambda T, x, m: T.quantile(x, T.tensor([0.0, 0.25, 1.0]), dim=0, keepdim=True, interpolation=m),
    lambda T, x, m: x.quantile(T.tensor(0.75), dim=-1, interpolation=m),
    lambda T, x, m: T.quantile(x, 0.4, keepdim=True, interpolation=m),
    lambda T, x, m: T.nanquantile(x, T.tensor([0.2, 0.9]), dim=1, interpolation=m),
    lambda T, x, m: x.nanquantile(0.5, interpolation=m),
]


@pytest.mark.parametrize("i", range(len(QUANTILE)))
def test_quantile(i):
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        check(lambda T, x: QUANTILE[i](T, x, mode), [X])


def test_quantile_nan_and_float64():
    for f in QUANTILE:
        check(lambda T, x: f(T, x, "linear"), [NANS], grad=False)
    check(lambda T, x: T.quantile(x, T.tensor([0.1, 0.6], dtype=T.float64), dim=1), [X.astype(np.float64)])
    check(lambda T, x: T.quantile(x, 0.5, interpolation="nearest"), [np.array([1.0, 2.0, 3.0, 4.0], np.float32)])


QUANTILE_ERRORS = [
    lambda T: T.quantile(T.ones(3), 1.5), lambda T: T.quantile(T.ones(3), T.tensor([0.5, 1.5])),
    lambda T: T.quantile(T.tensor([1, 2]), 0.5), lambda T: T.quantile(T.ones(3), T.tensor([0.5], dtype=T.float64)),
    lambda T: T.quantile(T.ones(3), T.tensor([[0.5]])), lambda T: T.quantile(T.ones(3), 0.5, interpolation="foo"),
    lambda T: T.quantile(T.zeros(0, 3), 0.5), lambda T: T.quantile(T.ones(2, 3), 0.5, dim=2),
]


@pytest.mark.parametrize("i", range(len(QUANTILE_ERRORS)))
def test_quantile_errors(i):
    check_raises(QUANTILE_ERRORS[i])


# ----------------------------------------------------------------------------------------------------------------
# unique / unique_consecutive / bincount / histc


UNIQUE = [
    lambda T, x: T.unique(x), lambda T, x: x.unique(sorted=False),
    lambda T, x: T.unique(x, return_inverse=True, return_counts=True), lambda T, x: x.unique(return_counts=True),
    lambda T, x: T.unique(x, dim=0, return_inverse=True, return_counts=True), lambda T, x: T.unique(x, dim=1),
    lambda T, x: T.unique_consecutive(x), lambda T, x: x.unique_consecutive(return_inverse=True, return_counts=True),
    lambda T, x: T.unique_consecutive(x, dim=0, return_counts=True, return_inverse=True),
    lambda T, x: T.unique_consecutive(x, dim=1),
]
UNIQUE_INPUTS = {
    "int": np.array([[2, 0, 2, 1], [2, 0, 2, 1], [1, 1, 3, 3]]),
    "float": np.array([[1.5, np.nan, 1.5, 0.0], [1.5, np.nan, 1.5, 0.0], [0.0, 2.0, np.nan, 2.0]], np.float32),
    "bool": np.array([[True, False, True], [True, False, True]]),
}


@pytest.mark.parametrize("kind", list(UNIQUE_INPUTS))
@pytest.mark.parametrize("i", range(len(UNIQUE)))
def test_unique(i, kind):
    x = UNIQUE_INPUTS[kind]
    if kind == "float" and i in (4, 5, 8, 9):  # PyTorch's order of slices holding NaN is unspecified
        x = np.nan_to_num(x, nan=-3.0)
    agree(lambda T, a: UNIQUE[i](T, a), [x], grad=False)


BINCOUNT = [
    lambda T, x, w: T.bincount(x), lambda T, x, w: x.bincount(minlength=8), lambda T, x, w: T.bincount(x, w),
    lambda T, x, w: T.bincount(x, w.double()), lambda T, x, w: T.bincount(x, (w * 4).int()),
    lambda T, x, w: T.bincount(x, minlength=2), lambda T, x, w: T.bincount(x[:0]),
    lambda T, x, w: T.bincount(x[:0], minlength=3), lambda T, x, w: T.bincount(x - 3),
    lambda T, x, w: T.bincount(x.float()), lambda T, x, w: T.bincount(x.reshape(2, 3)),
    lambda T, x, w: T.bincount(x, minlength=-1), lambda T, x, w: T.bincount(x, w[:2]),
    lambda T, x, w: T.bincount(x > 1),
]


@pytest.mark.parametrize("i", range(len(BINCOUNT)))
def test_bincount(i):
    agree(lambda T, x, w: BINCOUNT[i](T, x, w), [np.array([2, 0, 2, 5, 1, 1]), arr(6, lo=0, hi=1)], grad=False)


HISTC = [
    lambda T, x: T.histc(x, 4), lambda T, x: x.histc(4, 0, 3), lambda T, x: T.histc(x, 3, 2, 2),
    lambda T, x: T.histc(x, bins=5, min=-1, max=1), lambda T, x: T.histc(x[:0], 3), lambda T, x: T.histc(x * 0 + 3, 4),
    lambda T, x: T.histc(x, 0), lambda T, x: T.histc(x, 3, 3, 1), lambda T, x: T.histc(x.long(), 3),
    lambda T, x: T.histc(x.double(), 7, -2.5, 4.5),
]


@pytest.mark.parametrize("i", range(len(HISTC)))
def test_histc(i):
    agree(lambda T, x: HISTC[i](T, x), [np.array([1.0, 2.0, 2.0, 5.0, 0.0, 3.0, -0.5, 0.75], np.float32)],
          grad=False)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_bins_elements_on_an_edge_as_pytorch(dtype):
    """Elements exactly on an inner bin edge land where PyTorch's one division puts them: before, XLA folded
    ``(x - min) * bins / (max - min)`` into a multiplication by ``bins / (max - min)`` and 1.3 fell one bin lower
    (in a batch, eager and compiled)."""
    values = [1.3] * 20 + [-0.5, 0.2, 2.6, -2.2, 2.7]
    ref, got = run_both(lambda T: [T.histc(T.tensor(values, dtype=getattr(T, dtype)), 7, -2.2, 2.7),
                                   T.histc(T.tensor(values, dtype=getattr(T, dtype)).round(decimals=1), 49, -2.2, 2.7)])
    assert_same(ref, got, rtol=0, atol=0)
    compiled = torchish.compile(lambda x: torchish.histc(x, 7, -2.2, 2.7))
    assert_same(ref[0], compiled(torchish.tensor(values, dtype=getattr(torchish, dtype))), rtol=0, atol=0)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_density_divides_as_pytorch(dtype):
    """``density=True`` divides by the total and then by each bin's width (histogramdd: by each dimension's widths
    in turn), one rounding each, bit for bit PyTorch's; before, XLA merged the divisions into one by their product
    and the last bit differed in most float32 histograms."""
    values = np.random.default_rng(2).uniform(-3, 3, 36)

    def fn(T):
        x = T.tensor(values, dtype=getattr(T, dtype))
        return [T.histogram(x, 7, density=True).hist, T.histogram(x, 4, range=(-2.0, 2.5), density=True).hist,
                T.histogramdd(x.view(-1, 2), [5, 3], density=True).hist]
    ref, got = run_both(fn)
    assert_same(ref, got, rtol=0, atol=0)


def test_histc_nan():
    x = np.array([1.0, np.nan, 2.0], np.float32)
    agree(lambda T, a: T.histc(a, 2, 0, 3), [x], grad=False)
    check_raises(lambda T: T.histc(T.tensor(x), 3))


_INF, _NAN = float("inf"), float("nan")
HISTC_RANGE_ERRORS = [  # (values, kwargs): explicit non-finite bounds used to give an all-zero histogram
    ([1.0, 2.0], dict(min=0, max=_INF)), ([1.0, 2.0], dict(min=-_INF, max=3)), ([1.0, 2.0], dict(min=_NAN, max=1)),
    ([1.0, 2.0], dict(min=3, max=-_INF)), ([1.0, 2.0], dict(min=3, max=1)), ([1.0, 2.0], dict(min=1e41, max=1e40)),
    ([1.0, 2.0], dict(min=1e40, max=1e41)), ([1.5, _INF], {}), ([1.0, _NAN], {}), ([-_INF, 2.25e-7], {}),
]


@needs_torch
@pytest.mark.parametrize("values, kw", HISTC_RANGE_ERRORS)
def test_histc_range_errors_match_torch(values, kw):
    """PyTorch checks the range (finite first, then ordered, then representable in the input's dtype) and prints
    its bounds as C++ prints doubles: ``[0, inf]``, ``[-nan, -nan]`` for NaN data, ``1e+40``."""
    err = check_raises(lambda T: T.histc(T.tensor(values), bins=2, **kw))
    with pytest.raises(RuntimeError) as got:
        torchish.histc(torchish.tensor(values), bins=2, **kw)
    assert str(got.value) == str(err)


@needs_torch
def test_histogram_range_error_prints_bounds_as_torch():
    err = check_raises(lambda T: T.histogram(T.tensor([1.0, 2.0]), bins=2, range=(0, _INF)))
    with pytest.raises(RuntimeError, match=r"range \[0, inf\] is not finite") as got:
        torchish.histogram(torchish.tensor([1.0, 2.0]), bins=2, range=(0, _INF))
    assert str(got.value) == str(err)


# ----------------------------------------------------------------------------------------------------------------
# searchsorted / bucketize / isin

SEARCH = [
    lambda T, s, v: T.searchsorted(s[0], v), lambda T, s, v: T.searchsorted(s[0], v, right=True),
    lambda T, s, v: T.searchsorted(s, v, side="right"), lambda T, s, v: T.searchsorted(s, v),
    lambda T, s, v: T.searchsorted(s[0], 2.0), lambda T, s, v: T.searchsorted(s[0], v, out_int32=True),
    lambda T, s, v: T.searchsorted(s[0].flip(0), v, sorter=T.tensor([3, 2, 1, 0])),
    lambda T, s, v: T.searchsorted(s[0].long(), v), lambda T, s, v: T.bucketize(v, s[0]),
    lambda T, s, v: T.bucketize(v, s[1], right=True), lambda T, s, v: T.bucketize(2, s[0].long()),
    lambda T, s, v: T.bucketize(v, s[0], out_int32=True),
    lambda T, s, v: T.searchsorted(s[0], v, side="left", right=True), lambda T, s, v: T.searchsorted(s, v[:1]),
    lambda T, s, v: T.searchsorted(s[0], v, side="middle"), lambda T, s, v: T.bucketize(v, s),
]


@pytest.mark.parametrize("i", range(len(SEARCH)))
def test_searchsorted_bucketize(i):
    s = np.array([[1.0, 2.0, 2.0, 3.0], [-1.0, 0.0, 4.0, 5.0]], np.float32)
    v = np.array([[0.5, 2.0, 3.5], [4.0, -1.0, 6.0]], np.float32)
    agree(lambda T, a, b: SEARCH[i](T, a, b), [s, v], grad=False)


def _same_outcome(fn):
    """Both libraries raise the same builtin exception with the same message, or both return equal results."""
    ref, got = raised(lambda: fn(torch)), raised(lambda: fn(torchish))
    assert got == ref
    if ref is None:
        assert_same(fn(torch), fn(torchish))


ARGUMENT_CHECKS = [  # each used to run (a clamped gather, a reshaped weight refused, no size limit) or raise otherwise
    lambda T: T.searchsorted(T.tensor([2.0, 1.0]), T.tensor([1.5]), sorter=T.tensor([1, 0]).int()),
    lambda T: T.searchsorted(T.tensor([2.0, 1.0]), T.tensor([1.5]), sorter=T.tensor([1.0, 0.0])),
    lambda T: T.searchsorted(T.tensor([2.0, 1.0]), T.tensor([1.5]), sorter=T.tensor([1, 2])),
    lambda T: T.searchsorted(T.tensor([[2.0, 1.0]]), T.tensor([[1.5]]), sorter=T.tensor([[-1, 0]])),
    lambda T: T.searchsorted(T.tensor([2.0, 1.0]), T.tensor([1.5, 3.0]), sorter=T.tensor([1, 0]), side="right"),
    lambda T: T.nanquantile(T.zeros(2), 0.5, interpolation="median"),
    lambda T: T.nanquantile(T.tensor([1, 2]), 0.5), lambda T: T.nanquantile(T.zeros(2), T.tensor([0.5, 2.0])),
    lambda T: T.quantile(T.zeros(2 ** 24 + 1), 0.5),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=3, weight=T.ones(3, 1)),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=3, weight=T.ones(2, 2)),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=3, weight=T.ones(3, dtype=T.int64)),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=T.tensor([[1.0, 2.0]]).double(), weight=T.ones(2).double()),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=T.tensor(1.0)),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=T.tensor([])),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=T.tensor([1.0])),
    lambda T: T.histogram(T.tensor([1, 2, 3]), bins=T.tensor([1.0, 2.0])),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=2, range=(1.0,)),
    lambda T: T.histogram(T.tensor([1.0, 2.0, 3.0]), bins=2, range=(3.0, 1.0), weight=T.ones(2)),
    lambda T: T.histogram(T.tensor([[1.0, 2.0, 3.0]]), bins=T.tensor([0.0, 1.5, 4.0]), weight=T.tensor([1.0, 2.0, 3.0])),
]


@needs_torch
@pytest.mark.parametrize("i", range(len(ARGUMENT_CHECKS)))
def test_sorter_quantile_and_histogram_argument_checks_match_torch(i):
    _same_outcome(ARGUMENT_CHECKS[i])


def test_isin():
    e, t = np.array([[1, 2, 3], [4, 2, 0]]), np.array([2.0, 3.5, 0.0], np.float32)
    agree(lambda T, a, b: T.isin(a, b), [e, t], grad=False)
    agree(lambda T, a, b: T.isin(a, b, invert=True), [e, t], grad=False)
    agree(lambda T, a: T.isin(2, a), [e], grad=False)
    agree(lambda T, a: T.isin(a, 2), [e], grad=False)


# ----------------------------------------------------------------------------------------------------------------
# tracing, grad_fn names, finite differences


def test_value_dependent_shapes_need_concrete_values():
    from torchish.ops.tracing import ConcretizationError
    for f in (lambda t: torchish.unique(t), lambda t: torchish.bincount(t.long()),
              lambda t: torchish.unique_consecutive(t)):
        with pytest.raises(ConcretizationError):
            jax.jit(lambda a: f(torchish.from_jax(a))._d)(jnp.ones(3))


def test_traced_order_statistics_work():
    out = jax.jit(lambda a: torchish.from_jax(a).sort(descending=True).values._d)(jnp.array([1.0, 3.0, 2.0]))
    assert out.tolist() == [3.0, 2.0, 1.0]
    q = jax.jit(lambda a: torchish.quantile(torchish.from_jax(a), 0.5)._d)(jnp.array([1.0, 3.0, 2.0, 4.0]))
    assert float(q) == 2.5


def test_grad_fn_names():
    exprs = [lambda T, r: r.sort()[0], lambda T, r: r.topk(1)[0], lambda T, r: r.median(),
             lambda T, r: r.median(0)[0], lambda T, r: r.kthvalue(1)[0], lambda T, r: r.nanmedian(),
             lambda T, r: r.mode()[0], lambda T, r: r.nanmedian(1)[0]]
    for e in exprs:
        a, b = run_both(lambda T: e(T, T.ones(2, 3, requires_grad=True)))
        assert type(b.grad_fn).__name__ == type(a.grad_fn).__name__


def test_fd_order_statistics():
    x = np.array([[0.3, -1.2, 0.8, 2.0], [1.5, 0.1, -0.7, 0.4]])
    check_fd(lambda a: a.sort(1, descending=True).values * torchish.tensor([1.0, 2.0, 3.0, 4.0], dtype=a.dtype), x)
    check_fd(lambda a: a.topk(2).values.sum(1) + a.kthvalue(3, 1).values + a.median(1).values, x)
    check_fd(lambda a: torchish.quantile(a, torchish.tensor([0.3, 0.8], dtype=a.dtype), dim=1), x)


@needs_torch
def test_bincount_with_weights_that_require_grad_records_an_undifferentiable_node():
    """PyTorch's bincount output requires grad when its weights do (a NotImplemented node) and backward raises
    'derivative for aten::bincount is not implemented'; torchish's output did not require grad, so a loss adding
    it to a differentiable term backpropagated silently. Found by a scan of indexing gradients."""
    def run(T):
        w = T.tensor([0.5, 1.5, -2.0, 3.0], requires_grad=True)
        b = T.bincount(T.tensor([1, 3, 0, 3]), weights=w, minlength=6)
        with T.no_grad():
            plain = T.bincount(T.tensor([1, 3, 0, 3]), weights=w)
        return b, b.requires_grad, b.grad_fn.name(), plain.requires_grad
    assert_same(*run_both(run))
    for T in (torch, torchish):
        w = T.tensor([0.5, 1.5, -2.0, 3.0], requires_grad=True)
        loss = T.bincount(T.tensor([1, 3, 0, 3]), weights=w).sum() + w.sum()
        with pytest.raises(RuntimeError, match="derivative for aten::bincount is not implemented"):
            loss.backward()
