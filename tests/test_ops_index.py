"""Indexing against PyTorch: __getitem__/__setitem__ (basic, advanced, boolean, mixed), index_put, gather/scatter,
index_* ops, masked ops, take/put, where, nonzero — values, dtypes, gradients, grad_fn names and errors."""
import warnings

import numpy as np
import pytest

from oracle import arr, assert_same, check, check_raises, needs_torch, run_both, torch, torchish

warnings.filterwarnings("ignore", category=UserWarning)

X = arr(3, 4)
Y = arr(2, 3, 4, seed=1)
M = arr(3, 4, seed=5) > 0.5
I = arr(3, 4, lo=-9, hi=9, dtype=np.int64)


def same_error(fn, *args):
    """Both libraries raise the same builtin exception type with the same message (first line)."""
    ref = check_raises(fn, *args)
    with pytest.raises(Exception) as got:
        fn(torchish, *args)
    assert str(got.value).split("\n")[0] == str(ref).split("\n")[0]


def L(T, *v):
    return T.tensor(list(v))


GETITEM = [
    # basic
    ("int", lambda T, x: x[1], [X]),
    ("neg_int", lambda T, x: x[-1], [X]),
    ("int_int", lambda T, x: x[1, -2], [X]),
    ("slice", lambda T, x: x[1:], [X]),
    ("slice_step", lambda T, x: x[::2, 1::2], [X]),
    ("slice_neg", lambda T, x: x[-2:, :-1], [X]),
    ("slice_clamp", lambda T, x: x[-10:10, 5:], [X]),
    ("slice_empty", lambda T, x: x[2:1], [X]),
    ("none", lambda T, x: x[None], [X]),
    ("none_mid", lambda T, x: x[:, None, 1], [X]),
    ("none_end", lambda T, x: x[..., None], [X]),
    ("ellipsis", lambda T, x: x[..., 1], [Y]),
    ("ellipsis_mid", lambda T, x: x[0, ..., 2], [Y]),
    ("ellipsis_only", lambda T, x: x[...], [X]),
    ("full_tuple", lambda T, x: x[:, :], [X]),
    ("two_ellipsis", lambda T, x: x[..., ...], [X]),
    ("two_ellipsis_int", lambda T, x: x[0, ..., 1, ...], [Y]),
    ("tensor_int", lambda T, x: x[T.tensor(1)], [X]),
    ("tensor_int_mixed", lambda T, x: x[1:, T.tensor(-1)], [X]),
    ("true", lambda T, x: x[True], [X]),
    ("false", lambda T, x: x[False], [X]),
    ("true_tensor", lambda T, x: x[T.tensor(True)], [X]),
    ("0d_none", lambda T, x: x[None], [np.array(2.0, np.float32)]),
    ("0d_ellipsis", lambda T, x: x[...], [np.array(2.0, np.float32)]),
    ("0d_true", lambda T, x: x[True], [np.array(2.0, np.float32)]),
    # advanced
    ("list", lambda T, x: x[[0, 2]], [X]),
    ("list_dup", lambda T, x: x[[0, 2, 0, 0]], [X]),
    ("list_neg", lambda T, x: x[[-1, 0]], [X]),
    ("tensor", lambda T, x: x[L(T, 2, 0)], [X]),
    ("tensor_2d", lambda T, x: x[T.tensor([[0, 1], [2, 2]])], [X]),
    ("tensor_int32", lambda T, x: x[T.tensor([1, 0], dtype=T.int32)], [X]),
    ("two_arrays", lambda T, x: x[[0, 2], [1, 3]], [X]),
    ("broadcast_arrays", lambda T, x: x[T.tensor([[0], [2]]), T.tensor([1, 3, 0])], [X]),
    ("array_slice", lambda T, x: x[[0, 2], 1:], [X]),
    ("slice_array", lambda T, x: x[1:, [0, 0, 3]], [X]),
    ("separated", lambda T, x: x[[0, 1], :, [1, 3]], [Y]),
    ("adjacent_mid", lambda T, x: x[:, [0, 2], [1, 3]], [Y]),
    ("int_and_array", lambda T, x: x[0, :, [1, 3]], [Y]),
    ("int_and_array_adj", lambda T, x: x[[1, 0], 0, [1]], [Y]),
    ("array_none", lambda T, x: x[[0, 1], None, [1, 2]], [Y]),
    ("array_ellipsis", lambda T, x: x[[1], ..., [2]], [Y]),
    ("none_array", lambda T, x: x[None, [0, 2]], [X]),
    ("tuple_in_tuple", lambda T, x: x[(0, 2), ], [X]),
    ("list_as_tuple", lambda T, x: x[[[0, 1], [1, 0]]], [X]),
    ("list_slice", lambda T, x: x[[slice(0, 2), 1]], [X]),
    ("numpy_index", lambda T, x: x[np.array([2, 1])], [X]),
    ("empty_list", lambda T, x: x[[]], [X]),
    ("0d_tensor_adv", lambda T, x: x[[1], T.tensor(2)], [X]),
    # boolean masks
    ("mask_full", lambda T, x, m: x[m], [X, M]),
    ("mask_rows", lambda T, x: x[T.tensor([True, False, True])], [X]),
    ("mask_cols", lambda T, x: x[:, T.tensor([True, False, True, True])], [X]),
    ("mask_list", lambda T, x: x[[True, False, True]], [X]),
    ("mask_leading", lambda T, x, m: x[m[:2, :3]], [Y, M]),
    ("mask_and_array", lambda T, x: x[T.tensor([True, False]), :, [1]], [Y]),
    ("mask_mid", lambda T, x: x[1, T.tensor([True, False, True]), [1, 2]], [Y]),
    ("mask_uint8", lambda T, x: x[T.tensor([1, 0, 1], dtype=T.uint8)], [X]),
    ("mask_empty", lambda T, x: x[T.zeros(3, 4, dtype=T.bool)], [X]),
    ("mask_int_tensor", lambda T, x, m: x[m], [I, M]),
    # chains
    ("chain", lambda T, x: x[1:][0][::2], [X]),
    ("chain_adv", lambda T, x: x.t()[[1, 3]][:, 0], [X]),
]


@pytest.mark.parametrize("fn,inputs", [g[1:] for g in GETITEM], ids=[g[0] for g in GETITEM])
def test_getitem(fn, inputs):
    check(fn, inputs)


GETITEM_GRAD_FN = [
    ("select", lambda x: x[0]), ("select2", lambda x: x[0, 1]), ("slice", lambda x: x[:]),
    ("slice_part", lambda x: x[1:]), ("full_tuple", lambda x: x[:, :]), ("select_full", lambda x: x[0, :]),
    ("ellipsis", lambda x: x[...]), ("ellipsis_int", lambda x: x[..., 1]), ("none", lambda x: x[:, None]),
    ("none_ellipsis", lambda x: x[None, ..., None]), ("index", lambda x: x[[0]]), ("true", lambda x: x[True]),
    ("mask", lambda x: x[x > 0]), ("slice_then_int", lambda x: x[1:, 0]), ("int_then_none", lambda x: x[0, None]),
]


@pytest.mark.parametrize("fn", [g[1] for g in GETITEM_GRAD_FN], ids=[g[0] for g in GETITEM_GRAD_FN])
def test_getitem_grad_fn(fn):
    def name(T):
        x = T.tensor(X, requires_grad=True) * 1
        y = fn(x)
        return type(y.grad_fn).__name__, y._base is not None
    ref, got = run_both(name)
    assert got == ref


# setitem on a copy of x (so x's gradient flows through the write) with a value that may require grad
SETITEM = [
    ("int_scalar", lambda T, x: _set(x, 1, 5.0), [X]),
    ("int_tensor", lambda T, x, v: _set(x, 1, v), [X, arr(4, seed=7)]),
    ("int_bcast", lambda T, x, v: _set(x, -1, v), [X, arr(1, seed=7)]),
    ("int_lead_ones", lambda T, x, v: _set(x, 0, v), [X, arr(1, 1, 4, seed=7)]),
    ("slice", lambda T, x, v: _set(x, (slice(1, None), slice(None, None, 2)), v), [X, arr(2, 2, seed=7)]),
    ("slice_bcast", lambda T, x, v: _set(x, (slice(None), 1), v), [X, arr(1, seed=7)]),
    ("ellipsis", lambda T, x: _set(x, (Ellipsis, 0), -1.0), [Y]),
    ("none", lambda T, x, v: _set(x, (None, 1), v), [X, arr(4, seed=7)]),
    ("all", lambda T, x, v: _set(x, slice(None), v), [X, arr(4, seed=7)]),
    ("value_0d", lambda T, x, v: _set(x, (0, slice(1, 3)), v), [X, np.array(2.5, np.float32)]),
    ("list", lambda T, x, v: _set(x, [0, 2], v), [X, arr(2, 4, seed=7)]),
    ("list_scalar", lambda T, x: _set(x, [2, 0], 7.0), [X]),
    ("list_bcast", lambda T, x, v: _set(x, [2, 0], v), [X, arr(4, seed=7)]),
    ("list_lead_ones", lambda T, x, v: _set(x, [2, 0], v), [X, arr(1, 1, 2, 4, seed=7)]),
    ("two_arrays", lambda T, x, v: _set(x, ([0, 2], [1, 3]), v), [X, arr(2, seed=7)]),
    ("separated", lambda T, x, v: _set(x, ([0, 1], slice(None), [1, 3]), v), [Y, arr(2, 3, seed=7)]),
    ("int_array", lambda T, x, v: _set(x, (0, slice(None), [1, 3]), v), [Y, arr(3, 2, seed=7)]),
    ("mask_scalar", lambda T, x, m: _set(x, m, 0.0), [X, M]),
    ("mask_value0d", lambda T, x, m, v: _set(x, m, v), [X, M, np.array(3.0, np.float32)]),
    ("mask_tensor", lambda T, x, m, v: _set(x, m, v[:int(m.sum())]), [X, M, arr(12, seed=7)]),
    ("mask_rows", lambda T, x, v: _set(x, T.tensor([True, False, True]), v), [X, arr(4, seed=7)]),
    ("mask_rows_scalar", lambda T, x: _set(x, T.tensor([True, False, True]), 1.0), [X]),
    ("mask_cols", lambda T, x, v: _set(x, (slice(None), T.tensor([True, False, True, False])), v),
     [X, arr(3, 1, seed=7)]),
    ("mask_leading", lambda T, x, m: _set(x, m[:2, :3], 4.0), [Y, M]),
    ("true", lambda T, x: _set(x, True, 1.0), [X]),
    ("false", lambda T, x: _set(x, False, 1.0), [X]),
    ("tensor_int", lambda T, x, v: _set(x, T.tensor(2), v), [X, arr(4, seed=7)]),
    ("dtype_value_f64", lambda T, x, v: _set(x, 0, v.double()), [X, arr(4, seed=7)]),
    ("dtype_value_int", lambda T, x: _set(x, 1, T.arange(4)), [X]),
    ("dtype_bool", lambda T, x: _set(x, 0, True), [X]),
    ("int_target_float", lambda T, x: _set(x, 0, 2.7), [I]),
    ("int_target_neg_float", lambda T, x: _set(x, (0, 1), -2.7), [I]),
    ("int_target_tensor", lambda T, x: _set(x, 1, T.tensor([1.9, -1.9, 0.5, 3.0])), [I]),
    ("bool_target", lambda T, x: _set(x > 0, 0, False), [I]),
    ("numpy_scalar", lambda T, x: _set(x, 0, np.float64(1.25)), [X]),
    ("self_value", lambda T, x: _set(x, 0, x[2]), [X]),
]


def _set(x, index, value):
    y = x * 1 if x.dtype.is_floating_point else x.clone()
    y[index] = value
    return y


@pytest.mark.parametrize("fn,inputs", [s[1:] for s in SETITEM], ids=[s[0] for s in SETITEM])
def test_setitem(fn, inputs):
    check(fn, inputs)


def test_setitem_makes_leaf_require_grad():
    def f(T):
        x = T.zeros(3, 4)
        v = T.tensor(arr(4, seed=3), requires_grad=True)
        x[1] = v
        w = T.zeros(3)
        w[[0, 2]] = v[:2]
        name = type(x.grad_fn).__name__, type(w.grad_fn).__name__
        ((x * x).sum() + w.sum()).backward()
        return x.requires_grad, x.is_leaf, name, v.grad, x._version
    ref, got = run_both(f)
    assert_same(ref, got)


def test_index_put_accumulate():
    def f(T):
        x = T.tensor(X, requires_grad=True) * 1
        v = T.tensor(arr(4, seed=3), requires_grad=True)
        y = x.index_put((T.tensor([0, 2, 0, 0]), T.tensor([1, 1, 1, 3])), v, accumulate=True)
        z = x.clone().index_put_((T.tensor([True, False, True]),), v[:1] * 2, accumulate=True)
        (y * y).sum().backward()
        return y, z, v.grad
    ref, got = run_both(f)
    assert_same(ref, got)


def test_index_put_set_and_fn():
    def f(T):
        x = T.tensor(X, requires_grad=True)
        v = T.tensor(arr(2, seed=3), requires_grad=True)
        y = T.index_put(x, [T.tensor([0, 2]), T.tensor([1, 3])], v)
        z = x.detach().clone()
        z.index_put_((T.tensor(1),), T.tensor(9.0))
        g = T.autograd.grad((y * y).sum(), [x, v])
        return y, z, g, type(y.grad_fn).__name__
    ref, got = run_both(f)
    assert_same(ref, got)


def test_getitem_grad_duplicates_accumulate():
    def f(T):
        x = T.tensor(X, requires_grad=True)
        y = x[[0, 0, 2]] * 2 + x[T.tensor([[1, 1], [1, 0]]), T.tensor([3, 3])].sum()
        y.sum().backward()
        return x.grad
    ref, got = run_both(f)
    assert_same(ref, got)


GETITEM_ERRORS = [
    ("int_hi", lambda T: T.zeros(2, 3)[5]),
    ("int_lo", lambda T: T.zeros(2, 3)[0, -4]),
    ("int_pos_ellipsis", lambda T: T.zeros(2, 3, 4)[..., 9]),
    ("int_pos_none", lambda T: T.zeros(2, 3, 4)[None, 0, None, 9]),
    ("list_hi", lambda T: T.zeros(2, 3)[[0, 5]]),
    ("list_lo", lambda T: T.zeros(2, 3)[:, [-4]]),
    ("second_array", lambda T: T.zeros(2, 3)[[0], [5]]),
    ("array_after_int", lambda T: T.zeros(2, 3, 4)[0, :, [7]]),
    ("array_after_mask", lambda T: T.zeros(2, 3, 4)[T.ones(2, 3, dtype=T.bool), [7]]),
    ("tensor_hi", lambda T: T.zeros(2, 3)[T.tensor([5])]),
    ("tensor_0d_hi", lambda T: T.zeros(2, 3)[T.tensor(5)]),
    ("tensor_0d_lo", lambda T: T.zeros(2, 3)[1:, T.tensor(-4)]),
    ("too_many", lambda T: T.zeros(2, 3)[0, 0, 0]),
    ("float", lambda T: T.zeros(2, 3)[1.5]),
    ("float_tensor", lambda T: T.zeros(2, 3)[T.tensor([0.])]),
    ("int16_tensor", lambda T: T.zeros(2, 3)[T.tensor([0, 1], dtype=T.int16)]),
    ("str", lambda T: T.zeros(2, 3)["a"]),
    ("mask_shape", lambda T: T.zeros(2, 3)[T.tensor([True, False, True])]),
    ("mask_shape_col", lambda T: T.zeros(2, 3)[:, T.tensor([True, False])]),
    ("mask_shape_2d", lambda T: T.zeros(2, 3)[T.tensor([[True, False, True]])]),
    ("step_neg", lambda T: T.zeros(2, 3)[::-1]),
    ("step_zero", lambda T: T.zeros(2, 3)[::0]),
    ("0d_int", lambda T: T.zeros(())[0]),
    ("0d_slice", lambda T: T.zeros(())[:]),
    ("0d_list", lambda T: T.zeros(())[[0]]),
    ("0d_tensor", lambda T: T.zeros(())[T.tensor(0)]),
    ("iter_0d", lambda T: iter(T.zeros(()))),
]


@pytest.mark.parametrize("fn", [e[1] for e in GETITEM_ERRORS], ids=[e[0] for e in GETITEM_ERRORS])
def test_getitem_error(fn):
    same_error(fn)


def _s(T, index, value, shape=(2, 3), dtype=None):
    x = T.zeros(*shape, dtype=dtype)
    x[index] = value
    return x


SETITEM_ERRORS = [
    ("basic_shape", lambda T: _s(T, 0, T.ones(2, 3))),
    ("basic_size", lambda T: _s(T, 0, T.ones(2))),
    ("basic_col", lambda T: _s(T, (slice(None), 0), T.ones(2, 1))),
    ("adv_shape", lambda T: _s(T, [0, 1], T.ones(2, 1, 1, 3))),
    ("adv_size", lambda T: _s(T, T.tensor([[True, False, True], [False, False, True]]), T.tensor([1., 2]))),
    ("adv_dtype", lambda T: _s(T, [0], T.tensor([[1., 1., 1.]], dtype=T.float64))),
    ("adv_dtype_long", lambda T: _s(T, [0], T.tensor([[1, 1, 1]]))),
    ("index_hi", lambda T: _s(T, (0, 5), 1.)),
    ("index_list_hi", lambda T: _s(T, (0, [5]), 1.)),
    ("list_value", lambda T: _s(T, 0, [1, 2, 3])),
    ("tuple_value", lambda T: _s(T, 0, (1, 2, 3))),
    ("ndarray_value", lambda T: _s(T, 0, np.array([1, 2, 3]))),
    ("complex_value", lambda T: _s(T, 0, 1 + 2j)),
    ("leaf_requires_grad", lambda T: T.zeros(2, 3, requires_grad=True).__setitem__(0, 1.)),
    ("leaf_requires_grad_adv", lambda T: T.zeros(2, 3, requires_grad=True).__setitem__([0], 1.)),
    ("leaf_requires_grad_all", lambda T: T.zeros(2, 3, requires_grad=True).__setitem__(..., 1.)),
]


@pytest.mark.parametrize("fn", [e[1] for e in SETITEM_ERRORS], ids=[e[0] for e in SETITEM_ERRORS])
def test_setitem_error(fn):
    same_error(fn)


INDEX_PUT_ERRORS = [
    ("dtype", lambda T: T.zeros(3).index_put_((T.tensor([0]),), T.tensor([1.], dtype=T.float64))),
    ("not_tensor", lambda T: T.zeros(3).index_put_((T.tensor([0]),), 1.)),
    ("none_index", lambda T: T.zeros(2, 3).index_put_((None, T.tensor([0])), T.tensor(1.))),
    ("bounds", lambda T: T.zeros(2, 3).index_put_((T.tensor([5]),), T.tensor(1.))),
    ("float_index", lambda T: T.zeros(2, 3).index_put((T.tensor([1.]),), T.tensor(1.))),
    ("shape", lambda T: T.zeros(2, 3).index_put((T.tensor([0, 1]),), T.ones(3, 3))),
]


@pytest.mark.parametrize("fn", [e[1] for e in INDEX_PUT_ERRORS], ids=[e[0] for e in INDEX_PUT_ERRORS])
def test_index_put_error(fn):
    same_error(fn)


# ----------------------------------------------------------------------------------------------------------------
# index ops

G2 = np.array([[0, 1, 1], [3, 0, 2], [2, 2, 0]], np.int64)      # indices into dim 1 of X (3 x 4)
G_UNIQ = np.array([[0, 1, 3], [3, 0, 2], [2, 1, 0]], np.int64)  # unique per row (for scatter with set)
R = np.array([2, 0, 2, 1], np.int64)

INDEX_OPS = [
    ("index_select", lambda T, x: x.index_select(0, T.tensor([2, 0, 2])), [X]),
    ("index_select_dim1", lambda T, x: T.index_select(x, -1, T.tensor([3, 1])), [X]),
    ("index_select_int32", lambda T, x: x.index_select(1, T.tensor([0, 0], dtype=T.int32)), [X]),
    ("index_select_0d_index", lambda T, x: x.index_select(1, T.tensor(2)), [X]),
    ("index_select_0d", lambda T, x: x.index_select(0, T.tensor([0])), [np.array(3.0, np.float32)]),
    ("gather", lambda T, x, i: x.gather(1, i), [X, G2]),
    ("gather_dim0", lambda T, x: T.gather(x, 0, T.tensor([[2, 0, 1, 1]])), [X]),
    ("gather_small", lambda T, x: x.gather(1, T.tensor([[0], [3]])), [X]),
    ("gather_int32", lambda T, x: x.gather(-1, T.tensor([[1, 1]], dtype=T.int32)), [X]),
    ("gather_0d", lambda T, x: x.gather(0, T.tensor(0)), [np.array(3.0, np.float32)]),
    ("take_along_dim", lambda T, x, i: T.take_along_dim(x, i, 1), [X, G2]),
    ("take_along_dim_bcast", lambda T, x: x.take_along_dim(T.tensor([[0, 1, 0, 2]]), 0), [X]),
    ("take_along_dim_flat", lambda T, x: T.take_along_dim(x, T.tensor([[5, 0], [11, 11]])), [X]),
    ("take", lambda T, x: x.take(T.tensor([[0, 11], [-1, -12]])), [X]),
    ("take_fn", lambda T, x: T.take(x, T.tensor([3, 3, 3])), [X]),
    ("scatter", lambda T, x, i, s: x.scatter(1, i, s), [X, G_UNIQ, arr(3, 3, seed=8)]),
    ("scatter_value", lambda T, x, i: x.scatter(1, i, 2.5), [X, G_UNIQ]),
    # PyTorch has no gradient for a src larger than index, nor for scatter's legacy `reduce=`: values only
    ("scatter_small_src", lambda T, x, s: x.scatter(0, T.tensor([[2, 1]]), s), [X, arr(2, 4, seed=8)], False),
    ("scatter_reduce_add", lambda T, x, i: x.scatter(1, i, 2.0, reduce="add"), [X, G2], False),
    ("scatter_reduce_mul", lambda T, x, i: x.scatter(1, i, 3.0, reduce="multiply"), [X, G2], False),
    ("scatter_tensor_add", lambda T, x, i, s: x.detach().scatter(1, i, s.detach(), reduce="add"),
     [X, G2, arr(3, 3, seed=8)]),
    ("scatter_add", lambda T, x, i, s: x.scatter_add(1, i, s), [X, G2, arr(3, 3, seed=8)]),
    ("scatter_add_fn", lambda T, x, s: T.scatter_add(x, 0, T.tensor([[0, 0, 2, 2]]), s), [X, arr(1, 4, seed=8)]),
    ("scatter_add_big_src", lambda T, x, s: x.scatter_add(0, T.tensor([[0, 0, 2, 2]]), s), [X, arr(2, 4, seed=8)],
     False),
    ("scatter_add_int", lambda T, x: x.scatter_add(1, T.tensor([[0, 0]]), T.ones(1, 2, dtype=T.int64)), [I]),
    ("index_add", lambda T, x, s: x.index_add(0, T.tensor([0, 2, 0]), s), [X, arr(3, 4, seed=8)]),
    ("index_add_alpha", lambda T, x, s: T.index_add(x, 1, T.tensor([3, 1]), s, alpha=-2), [X, arr(3, 2, seed=8)]),
    ("index_add_int", lambda T, x: x.index_add(1, T.tensor([0, 0]), T.ones(3, 2, dtype=T.int64), alpha=3), [I]),
    ("index_copy", lambda T, x, s: x.index_copy(0, T.tensor([2, 0]), s), [X, arr(2, 4, seed=8)]),
    ("index_copy_dim1", lambda T, x, s: T.index_copy(x, 1, T.tensor([1]), s), [X, arr(3, 1, seed=8)]),
    ("index_fill", lambda T, x: x.index_fill(1, T.tensor([0, 2]), -1.0), [X]),
    ("index_fill_neg", lambda T, x: T.index_fill(x, 0, T.tensor([-1]), 2), [X]),
    ("index_fill_tensor", lambda T, x, v: x.index_fill(0, T.tensor([1]), v), [X, np.array(4.0, np.float32)]),
    ("index_fill_int", lambda T, x: x.index_fill(0, T.tensor([1]), 1.5), [I]),
    ("masked_fill", lambda T, x, m: x.masked_fill(m, 0.5), [X, M]),
    ("masked_fill_bcast", lambda T, x, m: x.masked_fill(m[0], -1), [X, M]),
    ("masked_fill_bigger_mask", lambda T, x, m: x[0].masked_fill(m, 2.0), [X, M]),
    ("masked_fill_tensor", lambda T, x, m, v: T.masked_fill(x, m, v), [X, M, np.array(3.0, np.float32)]),
    ("masked_fill_value_f64", lambda T, x, m: x.masked_fill(m, T.tensor(1.5, dtype=T.float64)), [X, M]),
    ("masked_fill_int", lambda T, x, m: x.masked_fill(m, 1.5), [I, M]),
    ("masked_select", lambda T, x, m: x.masked_select(m), [X, M]),
    ("masked_select_bcast", lambda T, x, m: T.masked_select(x, m[1]), [X, M]),
    ("masked_select_bigger", lambda T, x, m: x[1].masked_select(m), [X, M]),
    ("masked_scatter", lambda T, x, m, s: x.masked_scatter(m, s), [X, M, arr(13, seed=8)]),
    ("masked_scatter_bcast", lambda T, x, m, s: T.masked_scatter(x, m[2], s), [X, M, arr(3, 4, seed=8)]),
    ("masked_scatter_bigger", lambda T, x, m, s: x[0].masked_scatter(m, s), [X, M, arr(3, 4, seed=8)]),
    ("put", lambda T, x, s: x.put(T.tensor([0, 11, -2]), s), [X, arr(3, seed=8)]),
    ("put_acc", lambda T, x, s: x.put(T.tensor([[1, 1], [1, 5]]), s, accumulate=True), [X, arr(2, 2, seed=8)]),
    ("where", lambda T, x, y, m: T.where(m, x, y), [X, arr(3, 4, seed=8), M]),
    ("where_bcast", lambda T, x, y, m: T.where(m[0], x, y), [X, arr(4, seed=8), M]),
    ("where_scalar", lambda T, x, m: T.where(m, x, 0.0), [X, M]),
    ("where_scalars", lambda T, m: T.where(m, 1, 2.0), [M]),
    ("where_int_scalar", lambda T, m: T.where(m, T.tensor(1), 2), [M]),
    ("where_promote", lambda T, x, m, i: T.where(m, x.double(), i), [X, M, I]),
    ("where_method", lambda T, x, y, m: x.where(m, y), [X, arr(3, 4, seed=8), M]),
    ("where_uint8", lambda T, x, m: T.where(m.byte(), x, -x), [X, M]),
    ("nonzero", lambda T, x: x.nonzero(), [I]),
    ("nonzero_tuple", lambda T, x: T.nonzero(x, as_tuple=True), [I]),
    ("nonzero_bool", lambda T, m: T.nonzero(m), [M]),
    ("nonzero_0d", lambda T: (T.nonzero(T.tensor(5)), T.nonzero(T.tensor(0))), []),
    ("nonzero_0d_tuple", lambda T: (T.nonzero(T.tensor(5), as_tuple=True), T.nonzero(T.tensor(0.), as_tuple=True)), []),
    ("nonzero_empty", lambda T: T.nonzero(T.zeros(2, 0)), []),
    ("argwhere", lambda T, x: T.argwhere(x), [I]),
    ("argwhere_0d", lambda T: T.argwhere(T.tensor(5)), []),
    ("where_one_arg", lambda T, x: T.where(x > 0), [I]),
]


@pytest.mark.parametrize("fn,inputs,grad", [(c[1], c[2], c[3] if len(c) > 3 else True) for c in INDEX_OPS],
                         ids=[c[0] for c in INDEX_OPS])
def test_index_op(fn, inputs, grad):
    check(fn, inputs, grad=grad)


SCATTER_REDUCE = [(r, inc) for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)]


@pytest.mark.parametrize("reduce,include_self", SCATTER_REDUCE)
def test_scatter_reduce(reduce, include_self):
    x = np.array([[1.0, 0.0, 2.0, 3.0], [0.5, -1.0, 4.0, 0.0], [2.0, 2.0, 1.0, -3.0]], np.float32)
    src = np.array([[2.0, 0.0, 2.0], [0.0, 0.0, 4.0], [-3.0, 2.0, 5.0]], np.float32)  # ties and zeros
    check(lambda T, a, s: a.scatter_reduce(1, T.tensor(G2), s, reduce, include_self=include_self), [x, src])


def test_scatter_reduce_legacy_names():
    # "max"/"min" are accepted for the forward (PyTorch has no backward for them)
    check(lambda T, a: (a.scatter_reduce(1, T.tensor(G2), a[:, :3] * 2, "max"),
                        a.scatter_reduce(1, T.tensor(G2), a[:, :3] * 2, "min", include_self=False)), [X], grad=False)


def test_scatter_legacy_reduce_warns_once_per_process():
    """scatter(reduce=) with a Tensor src warns of its deprecation once per process, as PyTorch's TORCH_WARN_ONCE
    (even where the user's filter shows every warning); a scalar src does not warn."""
    from torchish import _global_flags
    _global_flags._WARNED_ONCE.clear()
    x, i, s = torchish.zeros(3), torchish.tensor([0, 1]), torchish.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.scatter(0, i, 2.0, reduce="add")
        for _ in range(3):
            x.scatter(0, i, s, reduce="add")
        x.clone().scatter_(0, i, s, reduce="multiply")
    assert [str(w.message)[:44] for w in caught] == ["The reduce argument of torch.scatter with Te"]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_int(reduce):
    check(lambda T, a: T.scatter_reduce(a, 0, T.tensor([0, 0, 1, 2]), T.tensor([1, 2, 4, -7]), reduce),
          [np.array([-4, 5, 6], np.int64)])
    check(lambda T, a: a.scatter_reduce(0, T.tensor([0, 0, 1, 1]), T.tensor([1, 2, 4, -7]), reduce,
                                        include_self=False), [np.array([-4, 5, 6], np.int64)])


INDEX_GRAD_FN = [
    ("index_select", lambda T, x: x.index_select(0, T.tensor([0]))), ("gather", lambda T, x: x.gather(1, T.tensor(G2))),
    ("take", lambda T, x: x.take(T.tensor([1]))), ("take_along_dim", lambda T, x: x.take_along_dim(T.tensor(G2), 1)),
    ("scatter", lambda T, x: x.scatter(1, T.tensor(G2), x)), ("scatter_value", lambda T, x: x.scatter(1, T.tensor(G2), 1.)),
    ("scatter_add", lambda T, x: x.scatter_add(1, T.tensor(G2), x)),
    ("scatter_reduce", lambda T, x: x.scatter_reduce(1, T.tensor(G2), x, "amax")),
    ("index_add", lambda T, x: x.index_add(0, T.tensor([0]), x[:1])),
    ("index_copy", lambda T, x: x.index_copy(0, T.tensor([0]), x[:1])),
    ("index_fill", lambda T, x: x.index_fill(0, T.tensor([0]), 1.)),
    ("index_fill_t", lambda T, x: x.index_fill(0, T.tensor([0]), x[0, 0])),
    ("masked_fill", lambda T, x: x.masked_fill(x > 0, 1.)), ("masked_fill_t", lambda T, x: x.masked_fill(x > 0, x[0, 0])),
    ("masked_select", lambda T, x: x.masked_select(x > 0)),
    ("masked_scatter", lambda T, x: x.masked_scatter(x > 0, x)), ("put", lambda T, x: x.put(T.tensor([0]), x[0, :1])),
    ("index_put", lambda T, x: x.index_put((T.tensor([0]),), x[0])), ("where", lambda T, x: T.where(x > 0, x, 0.)),
]


@pytest.mark.parametrize("fn", [g[1] for g in INDEX_GRAD_FN], ids=[g[0] for g in INDEX_GRAD_FN])
def test_index_grad_fn(fn):
    def name(T):
        return type(fn(T, T.tensor(X, requires_grad=True) * 1).grad_fn).__name__
    ref, got = run_both(name)
    assert got == ref


INPLACE_INDEX_OPS = [
    ("scatter_", lambda T, x: x.scatter_(1, T.tensor(G_UNIQ), T.full((3, 3), 2.0))),
    ("scatter_value_", lambda T, x: x.scatter_(1, T.tensor(G_UNIQ), 1.5)),
    ("scatter_add_", lambda T, x: x.scatter_add_(1, T.tensor(G2), T.ones(3, 3))),
    ("scatter_reduce_", lambda T, x: x.scatter_reduce_(1, T.tensor(G2), T.ones(3, 3), "prod")),
    ("index_add_", lambda T, x: x.index_add_(0, T.tensor([1, 1]), T.ones(2, 4), alpha=2)),
    ("index_copy_", lambda T, x: x.index_copy_(1, T.tensor([0, 3]), T.zeros(3, 2))),
    ("index_fill_", lambda T, x: x.index_fill_(1, T.tensor([0, 3]), 7.)),
    ("masked_fill_", lambda T, x: x.masked_fill_(x > 0, 0.)),
    ("masked_fill_bcast_", lambda T, x: x.masked_fill_(T.tensor([True, False, True, False]), 0.)),
    ("masked_scatter_", lambda T, x: x.masked_scatter_(x > 0, T.arange(12.))),
    ("put_", lambda T, x: x.put_(T.tensor([0, 5]), T.tensor([9., 8.]))),
    ("put_acc_", lambda T, x: x.put_(T.tensor([1, 1]), T.tensor([9., 8.]), accumulate=True)),
    ("index_put_", lambda T, x: x.index_put_((T.tensor([0, 2]),), T.tensor(3.))),
]


@pytest.mark.parametrize("fn", [g[1] for g in INPLACE_INDEX_OPS], ids=[g[0] for g in INPLACE_INDEX_OPS])
def test_inplace_index_op(fn):
    def f(T, a):
        y = a * 2
        out = fn(T, y)
        assert out is y
        return y, y._version
    check(f, [X])


INDEX_OP_ERRORS = [
    ("gather_int16", lambda T: T.zeros(2, 3).gather(1, T.tensor([[0]], dtype=T.int16))),
    ("gather_float", lambda T: T.zeros(2, 3).gather(1, T.tensor([[0.]]))),
    ("gather_ndim", lambda T: T.zeros(2, 3).gather(1, T.tensor([0, 1]))),
    ("gather_hi", lambda T: T.zeros(2, 3).gather(1, T.tensor([[5]]))),
    ("gather_neg", lambda T: T.zeros(2, 3).gather(1, T.tensor([[-1]]))),
    ("gather_size", lambda T: T.zeros(2, 3).gather(0, T.tensor([[0, 0, 0, 0]]))),
    ("gather_dim", lambda T: T.zeros(2, 3).gather(2, T.tensor([[0]]))),
    ("gather_1d_2d", lambda T: T.zeros(3).gather(0, T.tensor([[0]]))),
    ("scatter_dtype", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[0]]), T.ones(1, 1, dtype=T.float64))),
    ("scatter_src_small", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[0, 1], [2, 0]]), T.ones(1, 1))),
    ("scatter_reduce_name", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[0]]), 2., reduce="mean")),
    ("scatter_reduce_t", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[0]]), T.ones(1, 1), reduce="mean")),
    ("scatter_hi", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[5]]), 1.)),
    ("scatter_neg", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[-1]]), 1.)),
    ("scatter_float_index", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[0.]]), 1.)),
    ("scatter_src_ndim", lambda T: T.zeros(2, 3).scatter_add(1, T.tensor([[0]]), T.ones(1, 1, 1))),
    ("scatter_add_dtype", lambda T: T.zeros(2, 3).scatter_add(1, T.tensor([[0]]), T.ones(1, 1, dtype=T.int64))),
    ("scatter_reduce_bad", lambda T: T.zeros(2, 3).scatter_reduce(1, T.tensor([[0]]), T.ones(1, 1), "add")),
    ("index_select_2d", lambda T: T.zeros(2, 3).index_select(1, T.tensor([[0]]))),
    ("index_select_float", lambda T: T.zeros(2, 3).index_select(1, T.tensor([0.]))),
    ("index_select_hi", lambda T: T.zeros(2, 3).index_select(1, T.tensor([5]))),
    ("index_select_neg", lambda T: T.zeros(2, 3).index_select(1, T.tensor([-1]))),
    ("index_select_0d", lambda T: T.zeros(()).index_select(0, T.tensor([0, 0]))),
    ("index_add_count", lambda T: T.zeros(2, 3).index_add(1, T.tensor([0]), T.ones(2, 2))),
    ("index_add_hi", lambda T: T.zeros(2, 3).index_add(1, T.tensor([5]), T.ones(2, 1))),
    ("index_add_neg", lambda T: T.zeros(2, 3).index_add(1, T.tensor([-1]), T.ones(2, 1))),
    ("index_add_float_index", lambda T: T.zeros(2, 3).index_add(1, T.tensor([0.]), T.ones(2, 1))),
    ("index_add_dtype", lambda T: T.zeros(2, 3).index_add(1, T.tensor([0]), T.ones(2, 1, dtype=T.float64))),
    ("index_copy_count", lambda T: T.zeros(2, 3).index_copy(1, T.tensor([0]), T.ones(2, 2))),
    ("index_copy_dtype", lambda T: T.zeros(2, 3).index_copy(1, T.tensor([0]), T.ones(2, 1, dtype=T.float64))),
    ("index_copy_hi", lambda T: T.zeros(2, 3).index_copy(1, T.tensor([7]), T.ones(2, 1))),
    ("index_copy_neg", lambda T: T.zeros(2, 3).index_copy(1, T.tensor([-1]), T.ones(2, 1))),
    ("index_copy_int32", lambda T: T.zeros(2, 3).index_copy(1, T.tensor([0], dtype=T.int32), T.ones(2, 1))),
    ("index_fill_hi", lambda T: T.zeros(2, 3).index_fill(1, T.tensor([7]), 1.)),
    ("index_fill_lo", lambda T: T.zeros(2, 3).index_fill(1, T.tensor([-4]), 1.)),
    ("index_fill_value", lambda T: T.zeros(2, 3).index_fill(1, T.tensor([0]), T.ones(2))),
    ("index_fill_2d", lambda T: T.zeros(2, 3).index_fill(1, T.tensor([[0]]), 1.)),
    ("index_fill_int32", lambda T: T.zeros(2, 3).index_fill(1, T.tensor([0], dtype=T.int32), 1.)),
    ("masked_fill_float_mask", lambda T: T.zeros(2, 3).masked_fill(T.ones(2, 3), 1.)),
    ("masked_fill_long_mask", lambda T: T.zeros(2, 3).masked_fill(T.ones(2, 3, dtype=T.int64), 1.)),
    ("masked_fill_shape", lambda T: T.zeros(2, 3).masked_fill(T.ones(3, 3, dtype=T.bool), 1.)),
    ("masked_fill_value", lambda T: T.zeros(2, 3).masked_fill(T.ones(3, dtype=T.bool), T.ones(3))),
    ("masked_fill_complex", lambda T: T.zeros(3).masked_fill(T.ones(3, dtype=T.bool), 1 + 1j)),
    ("masked_fill__bcast_self", lambda T: T.zeros(3).masked_fill_(T.ones(2, 3, dtype=T.bool), 1.)),
    ("masked_select_shape", lambda T: T.zeros(2, 3).masked_select(T.ones(3, 3, dtype=T.bool))),
    ("masked_select_float", lambda T: T.zeros(2, 3).masked_select(T.ones(3))),
    ("masked_scatter_few", lambda T: T.zeros(2, 3).masked_scatter(T.ones(2, 3, dtype=T.bool), T.ones(5))),
    ("masked_scatter_float", lambda T: T.zeros(2, 3).masked_scatter(T.ones(2, 3), T.ones(7))),
    ("masked_scatter_long", lambda T: T.zeros(2, 3).masked_scatter(T.ones(2, 3, dtype=T.int64), T.ones(7))),
    ("masked_scatter_dtype", lambda T: T.zeros(2, 3).masked_scatter(T.ones(3, dtype=T.bool),
                                                                    T.ones(7, dtype=T.float64))),
    ("take_hi", lambda T: T.zeros(2, 3).take(T.tensor([6]))),
    ("take_lo", lambda T: T.zeros(2, 3).take(T.tensor([-7]))),
    ("take_float", lambda T: T.zeros(2, 3).take(T.tensor([0.]))),
    ("take_int32", lambda T: T.zeros(2, 3).take(T.tensor([0], dtype=T.int32))),
    ("put_hi", lambda T: T.zeros(2, 3).put(T.tensor([6]), T.ones(1))),
    ("put_count", lambda T: T.zeros(2, 3).put(T.tensor([0, 1]), T.ones(1))),
    ("put_dtype", lambda T: T.zeros(2, 3).put(T.tensor([0]), T.ones(1, dtype=T.float64))),
    ("put_scalar", lambda T: T.zeros(2, 3).put(T.tensor([0]), 1.)),
    ("take_along_dim_int", lambda T: T.zeros(2, 3).take_along_dim(T.tensor([[0]]).int(), 1)),
    ("take_along_dim_ndim", lambda T: T.zeros(2, 3).take_along_dim(T.tensor([0]), 1)),
    ("where_float_cond", lambda T: T.where(T.ones(2, 3), T.zeros(2, 3), T.zeros(2, 3))),
    ("where_shape", lambda T: T.where(T.ones(2, 3, dtype=T.bool), T.zeros(2, 3), T.ones(4))),
]


@pytest.mark.parametrize("fn", [e[1] for e in INDEX_OP_ERRORS], ids=[e[0] for e in INDEX_OP_ERRORS])
def test_index_op_error(fn):
    same_error(fn)


_SCATTERS = {
    "scatter": lambda T, x, i, s: T.scatter(x, 1, i, s),
    "scatter_": lambda T, x, i, s: (x * 1).scatter_(1, i, s),
    "scatter_add": lambda T, x, i, s: T.scatter_add(x, 1, i, s),
    "sum": lambda T, x, i, s: T.scatter_reduce(x, 1, i, s, "sum"),
    "mean": lambda T, x, i, s: T.scatter_reduce(x, 1, i, s, "mean", include_self=False),
    "amax": lambda T, x, i, s: T.scatter_reduce(x, 1, i, s, "amax"),
    "prod": lambda T, x, i, s: T.scatter_reduce(x, 1, i, s, "prod", include_self=False),
}


@needs_torch
@pytest.mark.parametrize("which", ["src", "self", "both"])
@pytest.mark.parametrize("op", sorted(_SCATTERS))
def test_scatter_with_an_index_smaller_than_src_refuses_gradients_as_pytorch(op, which):
    """PyTorch differentiates scatter's src only when index.shape == src.shape (documented): backward raises its
    RuntimeError for src ('invalid gradient ... got [2, 2] but expected shape compatible with [2, 6]'), and amax/
    amin/prod raise for self as well. torchish gave gradients. Found by a scan of indexing gradients."""
    def run(T):
        x = T.tensor(X[:2], requires_grad=which != "src")
        s = T.tensor(arr(2, 6, seed=3), requires_grad=which != "self")
        out = _SCATTERS[op](T, x, T.tensor([[0, 2], [3, 3]]), s)
        (out * T.tensor(X[1:])).sum().backward()
        return x.grad, s.grad
    try:
        ref = run(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            run(torchish)
        assert str(got.value) == str(e)
        return
    assert_same(ref, run(torchish))
