"""Tensor ops found missing or different by differential probing against PyTorch 2.13: torch.histogram,
torch.dist, hsplit/vsplit/dsplit, row_stack, index_reduce, and max()/min() with an explicit ``dim=None``."""
import numpy as np
import pytest

from oracle import arr, check, check_raises, same, torch, torchish, needs_torch

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")]

DATA = np.array([1.0, 2.0, 1.0, 5.0], np.float32)


@pytest.mark.parametrize("call", [
    lambda T, x: tuple(T.histogram(x, bins=4, range=(0.0, 3.0))),
    lambda T, x: tuple(T.histogram(x, 3)),
    lambda T, x: tuple(x.histogram(5, density=True)),
    lambda T, x: tuple(T.histogram(x, T.tensor([0.0, 1.5, 6.0]), weight=T.tensor([1.0, 2, 3, 4]), density=True)),
    lambda T, x: tuple(T.histogram(x.double(), 2, range=(1.0, 1.0))),
    lambda T, x: tuple(T.histogram(T.zeros(0), 2)),
    lambda T, x: (T.histogram(x, 3).hist, T.histogram(x, 3).bin_edges),
], ids=["range", "auto", "density", "edges_weight", "equal_range", "empty", "fields"])
def test_histogram(call):
    check(call, [DATA], grad=False)


@pytest.mark.parametrize("call", [
    lambda T, x: T.histogram(T.arange(3), 3),
    lambda T, x: T.histogram(x, 0),
    lambda T, x: T.histogram(x, 2, range=(3.0, 1.0)),
    lambda T, x: T.histogram(x.double(), 2, weight=T.ones(4)),
    lambda T, x: T.histogram(x, 2, weight=T.ones(3)),
], ids=["int_input", "zero_bins", "bad_range", "weight_dtype", "weight_shape"])
def test_histogram_errors(call):
    check_raises(lambda T: call(T, T.tensor(DATA)))


@pytest.mark.parametrize("call", [
    lambda T, a, b: T.dist(a, b),
    lambda T, a, b: T.dist(a, b[0], 1),
    lambda T, a, b: a.dist(b, p=float("inf")),
    lambda T, a, b: T.dist(a, b, 3),
])
def test_dist(call):
    check(call, [arr(2, 3), arr(2, 3, seed=1)])


def test_dist_p0():  # PyTorch's own backward of p=0 fails, so values only
    check(lambda T, a, b: T.dist(a, b, 0), [arr(2, 3), arr(2, 3, seed=1)], grad=False)


def test_dist_errors():
    check_raises(lambda T: T.dist(T.arange(3), T.arange(3)))
    check_raises(lambda T: T.dist(T.ones(3), T.ones(2)))


@pytest.mark.parametrize("call", [
    lambda T, x: T.hsplit(x, 2),
    lambda T, x: x.hsplit([1, 3]),
    lambda T, x: T.vsplit(x, [1]),
    lambda T, x: T.dsplit(x.reshape(2, 2, 2), 2),
    lambda T, x: T.hsplit(x.reshape(-1), 4),
])
def test_directional_split(call):
    check(call, [arr(2, 4)])


@pytest.mark.parametrize("call", [
    lambda T: T.hsplit(T.zeros(2, 3), 2),
    lambda T: T.hsplit(T.zeros(2, 3), 0),
    lambda T: T.hsplit(T.zeros(()), 1),
    lambda T: T.vsplit(T.zeros(3), 1),
    lambda T: T.dsplit(T.zeros(2, 2), 1),
])
def test_directional_split_errors(call):
    check_raises(call)


def test_row_stack():
    check(lambda T, a, b: T.row_stack([a, b]), [arr(3), arr(3, seed=1)])
    check(lambda T, a, b: T.row_stack((a, b)), [arr(2, 3), arr(3, seed=1)])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    idx = np.array([0, 2, 0])
    check(lambda T, x, s, i: x.index_reduce(0, i, s, reduce, include_self=include_self),
          [arr(4, 2), arr(3, 2, seed=1), idx])
    check(lambda T, x, s, i: T.index_reduce(x, -1, i, s, reduce, include_self=include_self),
          [arr(2, 4), arr(2, 3, seed=1), np.array([3, 3, 1])])


def test_index_reduce_int_and_inplace():
    same(lambda T: T.ones(3, dtype=T.long).index_reduce(0, T.tensor([0, 0]), T.tensor([2, 3]), "mean",
                                                        include_self=False))

    def inplace(T):
        x = T.ones(3)
        x.index_reduce_(0, T.tensor([0, 0]), T.tensor([2.0, 3.0]), "prod")
        return x
    same(inplace)


@pytest.mark.parametrize("call", [
    lambda T: T.ones(3).index_reduce(0, T.tensor([0]), T.ones(1), "sum"),
    lambda T: T.ones(3).index_reduce(0, T.tensor([5]), T.ones(1), "prod"),
    lambda T: T.ones(3).index_reduce(0, T.tensor([0, 1]), T.ones(1), "prod"),
    lambda T: T.ones(3).index_reduce(0, T.tensor([0]), T.ones(1).double(), "prod"),
], ids=["sum", "out_of_range", "length", "dtype"])
def test_index_reduce_errors(call):
    check_raises(call)


@pytest.mark.parametrize("call", [
    lambda T, x: x.max(dim=None),
    lambda T, x: x.min(keepdim=True),
    lambda T, x: T.max(x, None),
    lambda T, x: T.min(x, dim=None, keepdim=True),
])
def test_max_min_explicit_none_dim_is_type_error(call):
    check_raises(lambda T: call(T, T.tensor(arr(3))))


def test_max_min_dim_forms_still_work():
    check(lambda T, x: (x.max(), T.max(x, axis=1), x.min(1, True), T.max(x, dim=0, keepdim=False),
                        T.min(x, -1).indices), [arr(2, 3)])


@pytest.mark.parametrize("call", [
    lambda T, x: T.linalg.vander(x),
    lambda T, x: T.linalg.vander(x, N=4),
    lambda T, x: T.linalg.vander(x.double().reshape(2, 2), N=3),
])
def test_linalg_vander(call):
    check(call, [np.array([1.0, 2.0, -0.5, 3.0], np.float32)])


def test_linalg_vander_integer_promotes_to_int64():
    same(lambda T: (T.linalg.vander(T.tensor([[1, 2], [3, 4]]), N=3),
                    T.linalg.vander(T.tensor([1, 2], dtype=T.int32))))


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.vander(T.tensor(2.0)),
    lambda T: T.linalg.vander(T.tensor([1.0]), N=1),
    lambda T: T.linalg.vander(T.tensor([True])),
    lambda T: T.linalg.vander(T.tensor([1.0], dtype=T.float16)),
])
def test_linalg_vander_errors(call):
    check_raises(call)


@pytest.mark.parametrize("call", [
    lambda T, x, s: T.slice_scatter(x, s[:2], start=1, end=3),
    lambda T, x, s: x.slice_scatter(s[:, :2], dim=1, start=0, step=2),
    lambda T, x, s: T.slice_scatter(x, s[:1], start=-1),
    lambda T, x, s: T.select_scatter(x, s[0], 0, -1),
    lambda T, x, s: x.select_scatter(s[:, 1], 1, 2),
    lambda T, x, s: T.diagonal_scatter(x, s[0, :2], -2),
    lambda T, x, s: x.diagonal_scatter(s[1, :2], 1),
])
def test_view_scatter_ops(call):
    check(call, [arr(4, 3), arr(4, 3, seed=1)])


@pytest.mark.parametrize("call", [
    lambda T: T.slice_scatter(T.zeros(4, 3), T.ones(3, 3), start=1, end=3),
    lambda T: T.select_scatter(T.zeros(4, 3), T.ones(3), 0, 5),
    lambda T: T.select_scatter(T.zeros(4, 3), T.ones(3, 1), 0, 1),
    lambda T: T.diagonal_scatter(T.zeros(4, 3), T.ones(3), 1),
])
def test_view_scatter_errors(call):
    check_raises(call)


def test_view_scatter_casts_src_and_leaves_input_alone():
    def f(T):
        x = T.zeros(4, dtype=T.long)
        return T.slice_scatter(x, T.ones(2), start=2), T.select_scatter(T.zeros(2, 2), T.ones(2, dtype=T.long), 0, 0), x
    same(f)


def test_arctan2_alias():
    check(lambda T, a, b: (T.arctan2(a, b), a.arctan2(b)), [arr(3), arr(3, seed=1)])
    same(lambda T: (T.tensor([1.0, -2.0]).arctan2_(T.tensor([3.0, 4.0])), T.arctan2(T.tensor([1, 2]), T.tensor([3, 4]))))
