"""Edge cases a fuzzer found against PyTorch: casting setitem through a boolean mask, 0-d tensors in movedim /
scatter / unflatten, out-of-range index errors, bool accumulation, heaviside dtypes, the sign of softshrink's zeros,
empty tensors, and kron / cartesian_prod / block_diag / fill_diagonal_ — values, dtypes, shapes, gradients, errors."""
import warnings

import numpy as np
import pytest

from oracle import arr, check, check_raises, needs_torch, run_both, assert_same, to_numpy

warnings.filterwarnings("ignore", category=UserWarning)

X3 = arr(3)
X23 = arr(2, 3, seed=1)
X234 = arr(2, 3, 4, seed=2)
S = np.array(1.5, np.float32)


def _set(index_fn, value_fn):
    """``y = x * 1; y[index] = value`` (a non-leaf, so gradients reach x and a float value)."""
    def fn(T, x, *rest):
        y = x * 1
        y[index_fn(T, y)] = value_fn(T, *rest)
        return y
    return fn


# ----------------------------------------------------------------------------------------------------------------
# 1. setitem: a one-element value through a lone boolean mask is cast; other dtype mismatches raise


SETITEM_CAST = [
    ("int_into_float", lambda T, y: y > 0, lambda T: T.tensor([2])),
    ("0d_int_into_float", lambda T, y: y > 0, lambda T: T.tensor(2)),
    ("double_into_float", lambda T, y: y > 0, lambda T: T.tensor([2.5], dtype=T.float64)),
    ("nested_value", lambda T, y: y > 0, lambda T: T.tensor([[[7]]])),
    ("mask_in_tuple", lambda T, y: (y > 0,), lambda T: T.tensor([2])),
    ("mask_after_int", lambda T, y: (0, y[0] > 0), lambda T: T.tensor([2])),
    ("mask_before_int", lambda T, y: (y[:, 0] > 0, 1), lambda T: T.tensor(5)),
    ("leading_mask", lambda T, y: y[:, 0] > 0, lambda T: T.tensor([[5]])),
]


@needs_torch
@pytest.mark.parametrize("name,index,value", SETITEM_CAST, ids=[c[0] for c in SETITEM_CAST])
def test_setitem_mask_casts_one_element(name, index, value):
    check(_set(index, value), [X23])


@needs_torch
def test_setitem_mask_cast_grad_to_value():
    check(lambda T, x, v: _set(lambda T, y: y > 0, lambda T: v.double())(T, x), [X23, arr(1, seed=3)])


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_setitem_mask_casts_into_bool_and_int(dtype):
    def fn(T):
        y = T.tensor([1, 0, 3]).to(getattr(T, dtype))
        y[y != 0] = T.tensor([2.7])
        return y
    assert_same(*run_both(fn))


SETITEM_RAISE = [
    ("list_0d_int", lambda T, y: [0, 2], lambda T: T.tensor(5)),
    ("list_0d_double", lambda T, y: [0, 2], lambda T: T.tensor(5, dtype=T.float64)),
    ("list_1_element", lambda T, y: [0, 2], lambda T: T.tensor([5])),
    ("int_and_list", lambda T, y: (0, [0, 2]), lambda T: T.tensor(5)),
    ("mask_many_elements", lambda T, y: y > -2, lambda T: T.tensor([1, 2, 3])),
    ("0d_mask", lambda T, y: T.tensor(True), lambda T: T.tensor([2])),
    ("complex_into_float", lambda T, y: y > -2, lambda T: T.tensor([2 + 1j])),
]


@needs_torch
@pytest.mark.parametrize("name,index,value", SETITEM_RAISE, ids=[c[0] for c in SETITEM_RAISE])
def test_setitem_dtype_mismatch_raises(name, index, value):
    def fn(T):
        y = T.zeros(3)
        y[index(T, y)] = value(T)
        return y
    err = check_raises(fn)
    if "dtypes match" in str(err):
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            fn(__import__("torchish"))


# ----------------------------------------------------------------------------------------------------------------
# 2. 0-d tensors: movedim, scatter family, gather, unflatten


ZERO_D = [
    ("movedim_0_-1", lambda T, x: T.movedim(x, 0, -1)),
    ("movedim_method", lambda T, x: x.movedim(0, 0)),
    ("movedim_tuple", lambda T, x: x.movedim((-1,), (0,))),
    ("scatter_add", lambda T, x: T.scatter_add(x, 0, T.tensor(0), x * 2)),
    ("scatter_add_const", lambda T, x: T.scatter_add(x, 0, T.tensor(0), T.tensor(2.))),
    ("scatter_value", lambda T, x: x.scatter(0, T.tensor(0), 0.5)),
    ("scatter_src", lambda T, x: x.scatter(0, T.tensor(0), x * 3)),
    ("scatter_1d_index", lambda T, x: x.scatter(0, T.tensor([0]), (x * 3).reshape(1))),
    ("scatter_reduce_prod", lambda T, x: x.scatter_reduce(0, T.tensor(0), x + 1, "prod")),
    ("scatter_reduce_amax", lambda T, x: x.scatter_reduce(0, T.tensor(0), x * 2, "amax")),
    ("scatter_reduce_mean", lambda T, x: x.scatter_reduce(0, T.tensor(0), x * 2, "mean", include_self=False)),
    ("gather", lambda T, x: x.gather(0, T.tensor(0))),
    ("gather_1d_input", lambda T, x: (x * T.ones(3)).gather(0, T.tensor(2))),
    ("scatter_1d_input", lambda T, x: T.zeros(3).scatter(0, T.tensor(1), x)),
]


@needs_torch
@pytest.mark.parametrize("name,fn", ZERO_D, ids=[c[0] for c in ZERO_D])
def test_zero_dim(name, fn):
    check(fn, [S])


@needs_torch
@pytest.mark.parametrize("sizes", [(-1, 1), (1,), (2,)])
def test_unflatten_zero_dim_raises(sizes):
    check_raises(lambda T: T.tensor(1.5).unflatten(0, sizes), match="unflatten got an unexpected error")


@needs_torch
def test_movedim_zero_dim_bad_dim_raises():
    check_raises(lambda T: T.tensor(1.5).movedim(1, 0))


# ----------------------------------------------------------------------------------------------------------------
# 3. out-of-range indices: index_select / index_add raise what PyTorch's CPU kernels raise


INDEX_ERRORS = [
    ("select_1d", lambda T: T.zeros(3).index_select(0, T.tensor([5]))),
    ("select_1d_neg", lambda T: T.zeros(3).index_select(0, T.tensor([-1]))),
    ("select_2d_dim0", lambda T: T.zeros(2, 3).index_select(0, T.tensor([0, 7]))),
    ("select_2d_dim1", lambda T: T.zeros(2, 3).index_select(1, T.tensor([5]))),
    ("select_3d_dim1", lambda T: T.zeros(2, 3, 4).index_select(1, T.tensor([5]))),
    ("select_3d_dim2", lambda T: T.zeros(2, 3, 4).index_select(2, T.tensor([5], dtype=T.int32))),
    ("select_0d", lambda T: T.tensor(1.).index_select(0, T.tensor([1]))),
    ("add_1d", lambda T: T.zeros(3).index_add(0, T.tensor([5]), T.ones(1))),
    ("add_1d_neg", lambda T: T.zeros(3).index_add(0, T.tensor([-1]), T.ones(1))),
    ("add_2d_dim0", lambda T: T.zeros(2, 3).index_add(0, T.tensor([5]), T.ones(1, 3))),
    ("add_2d_dim1", lambda T: T.zeros(2, 3).index_add(1, T.tensor([5]), T.ones(2, 1))),
    ("add_2d_int32", lambda T: T.zeros(2, 3).index_add(0, T.tensor([5], dtype=T.int32), T.ones(1, 3))),
    ("add_2d_alpha", lambda T: T.zeros(2, 3).index_add(0, T.tensor([5]), T.ones(1, 3), alpha=2)),
    ("add_3d_dim1", lambda T: T.zeros(2, 3, 4).index_add(1, T.tensor([5]), T.ones(2, 1, 4))),
    ("add_3d_dim2", lambda T: T.zeros(2, 3, 4).index_add(2, T.tensor([5]), T.ones(2, 3, 1))),
    ("add_inplace", lambda T: T.zeros(3).index_add_(0, T.tensor([3]), T.ones(1))),
]


@needs_torch
@pytest.mark.parametrize("name,fn", INDEX_ERRORS, ids=[c[0] for c in INDEX_ERRORS])
def test_out_of_range_index_errors(name, fn):
    err = check_raises(fn)
    import torchish
    with pytest.raises(Exception) as got:
        fn(torchish)
    assert str(got.value).split("\n")[0] == str(err).split("\n")[0]


# ----------------------------------------------------------------------------------------------------------------
# 4. bools accumulate as a logical or (prod / amin as a logical and)


def _b(T, *v):
    return T.tensor(list(v))


BOOL_ACC = [
    ("scatter_add", lambda T: T.scatter_add(T.zeros(3, dtype=T.bool), 0, _b(T, 1, 1), _b(T, True, False))),
    ("scatter_add_same_len", lambda T: T.zeros(3, dtype=T.bool).scatter_add(0, _b(T, 1, 1, 2),
                                                                            _b(T, True, True, False))),
    ("scatter_add_2d", lambda T: T.zeros(2, 3, dtype=T.bool).scatter_add(1, T.tensor([[0, 0], [2, 1]]),
                                                                         T.tensor([[True, True], [False, True]]))),
    ("index_add", lambda T: T.zeros(3, dtype=T.bool).index_add(0, _b(T, 1, 2), _b(T, True, False))),
    ("index_add_alpha", lambda T: T.zeros(3, dtype=T.bool).index_add(0, _b(T, 1, 1), _b(T, True, True), alpha=2)),
    ("index_add_2d", lambda T: T.zeros(2, 3, dtype=T.bool).index_add(1, _b(T, 0, 0), T.ones(2, 2, dtype=T.bool))),
    ("reduce_sum", lambda T: T.zeros(3, dtype=T.bool).scatter_reduce(0, _b(T, 1, 1), _b(T, True, True), "sum")),
    ("reduce_sum_no_self", lambda T: _b(T, True, True, False).scatter_reduce(
        0, _b(T, 1, 1), _b(T, False, False), "sum", include_self=False)),
    ("reduce_prod", lambda T: _b(T, True, True, False).scatter_reduce(0, _b(T, 1, 2), _b(T, False, True), "prod")),
    ("reduce_amax", lambda T: _b(T, True, True, False).scatter_reduce(0, _b(T, 1, 2), _b(T, False, True), "amax")),
    ("reduce_amin", lambda T: _b(T, True, True, False).scatter_reduce(
        0, _b(T, 1, 2), _b(T, False, True), "amin", include_self=False)),
    ("put_accumulate", lambda T: T.zeros(3, dtype=T.bool).put_(_b(T, 1, 1), _b(T, True, True), accumulate=True)),
    ("index_put_accumulate", lambda T: T.zeros(3, dtype=T.bool).index_put_((_b(T, 1, 1),), _b(T, True, True),
                                                                          accumulate=True)),
    ("scatter_reduce_add", lambda T: T.zeros(3, dtype=T.bool).scatter_(0, _b(T, 1, 1), _b(T, True, True),
                                                                       reduce="add")),
]


@needs_torch
@pytest.mark.parametrize("name,fn", BOOL_ACC, ids=[c[0] for c in BOOL_ACC])
def test_bool_accumulation(name, fn):
    assert_same(*run_both(fn))


@needs_torch
def test_bool_scatter_reduce_mean_raises():
    check_raises(lambda T: _b(T, True, False).scatter_reduce(0, _b(T, 1), _b(T, True), "mean"))


# ----------------------------------------------------------------------------------------------------------------
# 5. heaviside keeps its (shared) dtype


HEAVISIDE_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"]


@needs_torch
@pytest.mark.parametrize("a", HEAVISIDE_DTYPES)
@pytest.mark.parametrize("b", HEAVISIDE_DTYPES)
def test_heaviside_dtypes(a, b):
    def fn(T):
        x = T.tensor([-1, 0, 2, 0]).to(getattr(T, a))
        v = T.tensor([1, 1, 0, 0]).to(getattr(T, b))
        return T.heaviside(x, v)
    if a == b:
        assert_same(*run_both(fn))
    else:
        check_raises(fn)


@needs_torch
def test_heaviside_nan_inf_and_inplace():
    def fn(T):
        x = T.tensor([float("nan"), -0.0, float("-inf"), float("inf")])
        y = T.tensor([7, -3, 0, 9])
        y.heaviside_(T.tensor([5, 5, 5, 5]))
        return T.heaviside(x, T.full((4,), 0.5)), y
    assert_same(*run_both(fn))


# ----------------------------------------------------------------------------------------------------------------
# 6. softshrink keeps the sign of zero (x * 0 inside the band)


@needs_torch
@pytest.mark.parametrize("lambd", [0.5, 0.0])
def test_softshrink_sign_of_zero(lambd):
    def fn(T):
        x = T.tensor([0.3, -0.2, 0.0, -0.0, 1.0, -1.0, float("nan"), float("-inf")])
        y = T.nn.functional.softshrink(x, lambd)
        return y, y.signbit()
    assert_same(*run_both(fn))


@needs_torch
def test_softshrink_grad():
    check(lambda T, x: T.nn.functional.softshrink(x, 0.3), [X23])


# ----------------------------------------------------------------------------------------------------------------
# 7. empty tensors


@needs_torch
@pytest.mark.parametrize("shape,dim,index", [((0,), 0, [0]), ((2, 0), 1, [0]), ((0, 2), 0, [-7])])
def test_index_fill_empty_dim_raises(shape, dim, index):
    check_raises(lambda T: T.zeros(shape).index_fill(dim, T.tensor(index), 1.))


@needs_torch
@pytest.mark.parametrize("shape,dim,index", [((0,), 0, []), ((2, 0), 0, [1]), ((2, 0), 0, [5]), ((0, 2), 1, [5])])
def test_index_fill_empty_tensor(shape, dim, index):
    assert_same(*run_both(lambda T: T.zeros(shape).index_fill(dim, T.tensor(index, dtype=T.int64), 1.)))


@needs_torch
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_softmax_int_dtype_on_empty(name, dtype):
    assert_same(*run_both(lambda T: getattr(T, name)(T.zeros(2, 0), 1, dtype=getattr(T, dtype))))
    assert_same(*run_both(lambda T: getattr(T.zeros(0, 3).to(getattr(T, dtype)), name)(0)))


@needs_torch
def test_softmax_int_dtype_nonempty_still_raises():
    check_raises(lambda T: T.softmax(T.zeros(2, 1), 1, dtype=T.int64))


@needs_torch
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("b", [np.array(2.0, np.float32), np.array(-3.0, np.float32), np.array(0.0, np.float32)])
def test_cosine_similarity_zero_dim(dim, b):
    check(lambda T, x, y: T.nn.functional.cosine_similarity(x, y, dim=dim), [S, b])


@needs_torch
def test_cosine_similarity_zero_dim_bad_dim_and_broadcast():
    check_raises(lambda T: T.nn.functional.cosine_similarity(T.tensor(1.), T.tensor(2.)))
    check(lambda T, x, y: T.nn.functional.cosine_similarity(x, y, dim=-1), [S, arr(2, seed=4)])


# ----------------------------------------------------------------------------------------------------------------
# 8. kron, cartesian_prod, block_diag, fill_diagonal_


KRON = [
    ("1d_1d", [arr(2), arr(3, seed=1)]),
    ("2d_1d", [arr(1, 2), arr(2, seed=1)]),
    ("2d_2d", [arr(2, 3), arr(3, 2, seed=1)]),
    ("3d_2d", [arr(2, 1, 2), arr(2, 3, seed=1)]),
    ("0d_1d", [S, arr(2, seed=1)]),
    ("0d_0d", [S, np.array(-2.0, np.float32)]),
    ("empty", [arr(2, 0), arr(3, seed=1)]),
    ("f64_f32", [arr(2, dtype=np.float64), arr(2, 2, seed=1)]),
]


@needs_torch
@pytest.mark.parametrize("name,inputs", KRON, ids=[c[0] for c in KRON])
def test_kron(name, inputs):
    check(lambda T, a, b: T.kron(a, b), inputs)


@needs_torch
def test_kron_dtypes_method_and_errors():
    assert_same(*run_both(lambda T: T.kron(T.tensor([1, 2]), T.tensor([1., 3.]))))
    assert_same(*run_both(lambda T: T.kron(T.tensor(2), T.tensor(3))))
    assert_same(*run_both(lambda T: T.kron(T.tensor([True]), T.tensor([True, False]))))
    check(lambda T, a, b: a.kron(b), [arr(2, 2), arr(2, 2, seed=1)])
    check_raises(lambda T: T.kron(T.tensor([1.]), 2))


@needs_torch
def test_cartesian_prod():
    check(lambda T, a, b: T.cartesian_prod(a, b), [arr(2), arr(3, seed=1)])
    check(lambda T, a, b, c: T.cartesian_prod(a, b, c), [arr(2), arr(3, seed=1), arr(2, seed=2)])
    check(lambda T, a: T.cartesian_prod(a), [arr(3)])
    assert_same(*run_both(lambda T: T.cartesian_prod(T.tensor([1, 2]), T.tensor([3, 4, 5]))))
    assert_same(*run_both(lambda T: T.cartesian_prod(T.tensor([1, 2]), T.tensor([], dtype=T.int64))))


@needs_torch
def test_cartesian_prod_single_tensor_is_returned():
    _, got = run_both(lambda T: T.tensor([1, 2]))
    import torchish
    assert torchish.cartesian_prod(got) is got


@needs_torch
@pytest.mark.parametrize("fn", [
    lambda T: T.cartesian_prod(T.tensor([[1, 2]])),
    lambda T: T.cartesian_prod(T.tensor(1), T.tensor([1])),
    lambda T: T.cartesian_prod(T.tensor([1]), T.tensor([1.])),
    lambda T: T.cartesian_prod(),
    lambda T: T.cartesian_prod([T.tensor([1, 2])], T.tensor([1])),
])
def test_cartesian_prod_errors(fn):
    check_raises(fn)


@needs_torch
def test_block_diag():
    check(lambda T, a, b, c: T.block_diag(a, b, c), [arr(2, 3), S, arr(2, seed=1)])
    check(lambda T, a, b: T.block_diag(a, b), [arr(0, 2), arr(1, 0, seed=1)])
    check(lambda T, a, b: T.block_diag(a, b), [arr(2, 2, dtype=np.float64), arr(3, 1, seed=1)])
    check(lambda T, a: T.block_diag(a), [arr(3, 2)])
    assert_same(*run_both(lambda T: T.block_diag(T.tensor([[1, 2]]), T.tensor(3), T.tensor([4., 5.]))))
    assert_same(*run_both(lambda T: T.block_diag(T.tensor([True]), T.tensor([2]))))
    assert_same(*run_both(lambda T: T.block_diag(T.tensor([1. + 1j]), T.tensor([2]))))
    assert_same(*run_both(lambda T: T.block_diag()))


@needs_torch
@pytest.mark.parametrize("fn", [
    lambda T: T.block_diag(T.zeros(2, 2, 2)),
    lambda T: T.block_diag(T.tensor([[1, 2]]), 3),
])
def test_block_diag_errors(fn):
    check_raises(fn)


def _fill(shape, value, wrap=False, dtype="float32"):
    def fn(T):
        x = T.zeros(shape, dtype=getattr(T, dtype))
        out = x.fill_diagonal_(value, wrap)
        assert out is x
        return x
    return fn


FILL = [
    ("square", _fill((3, 3), 5)),
    ("tall_wrap", _fill((7, 3), 5, True)),
    ("tall_wrap_one_short", _fill((8, 3), 1, True)),
    ("tall_no_wrap", _fill((7, 3), 5)),
    ("tall_by_one_wrap", _fill((4, 3), 5, True)),
    ("column_wrap", _fill((5, 1), 3., True)),
    ("wide_wrap", _fill((3, 7), 5, True)),
    ("cube", _fill((3, 3, 3), 5)),
    ("4d", _fill((2, 2, 2, 2), 1)),
    ("int_truncates", _fill((2, 2), 2.7, dtype="int64")),
    ("bool", _fill((2, 2), True, dtype="bool")),
    ("numpy_scalar_value", _fill((2, 2), np.float32(3))),
    ("empty", _fill((0, 2), 3.)),
]


@needs_torch
@pytest.mark.parametrize("name,fn", FILL, ids=[c[0] for c in FILL])
def test_fill_diagonal(name, fn):
    assert_same(*run_both(fn))


@needs_torch
@pytest.mark.parametrize("fn", [_fill((3, 2, 3), 5), _fill((3,), 5), _fill((2, 2), 1 + 1j)])
def test_fill_diagonal_errors(fn):
    check_raises(fn)


@needs_torch
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_grad(wrap):
    def fn(T, x):
        y = x * 2
        y.fill_diagonal_(0.5, wrap)
        return y
    check(fn, [arr(5, 2)])


@needs_torch
def test_fill_diagonal_tensor_value_and_view():
    def fn(T):
        x = T.zeros(2, 4)
        x[:, 1:3].fill_diagonal_(T.tensor(3.))
        return x
    ref, got = run_both(fn)
    assert_same(ref, got)
    assert to_numpy(got).sum() == 6


def test_number_divided_by_tensor_is_reciprocal_times_number():
    """``c / t`` is ``t.reciprocal() * c`` in PyTorch: its grad_fn chain and its rounding (forward and backward)."""
    def fn(T):
        x, xi = T.tensor([3.0, 7.0, -0.3], requires_grad=True), T.tensor([4, 0, -3])
        ys = [1 / x, 2.5 / x, T.tensor(2.0) / x, 2 / xi, True / x, np.float32(3) / x]
        names = [(type(y.grad_fn).__name__ if y.grad_fn else None) for y in ys]
        chain = [type(f[0]).__name__ for f in ys[1].grad_fn.next_functions]
        (2.5 / x).sum().backward()
        return names, chain, [(str(y.dtype), y.tolist()) for y in ys], x.grad.tolist()
    ref, got = run_both(fn)
    assert got == ref
