"""Arguments of the wrong Python type fail as PyTorch's do (same builtin exception), and the valid spellings
(Python and numpy numbers, integer 0-dim Tensors, tuples of ints, numpy arrays through the operators) keep
working."""
import warnings

import numpy as np
import pytest

from oracle import assert_same, check_raises, needs_torch, torch, torchish

pytestmark = needs_torch
warnings.filterwarnings("ignore", category=UserWarning)


def _env(T):
    return dict(x=T.tensor([1.0, 2.0]), y=T.tensor([3.0, 4.0]), m=T.tensor([[1.0, 2.0], [3.0, 4.0]]),
                i=T.tensor([1, 2]), b=T.tensor([True, False]), idx=T.tensor([0, 1]))


# (id, fn(T, env)): PyTorch raises (TypeError, unless noted by the oracle) for each
BAD = [
    # arithmetic: 'other' / 'input' must be a Tensor or a Number
    ("mul_list", lambda T, e: e["x"].mul([1.0, 2.0])),
    ("mul_tuple", lambda T, e: e["x"].mul((1.0, 2.0))),
    ("mul_ndarray", lambda T, e: e["x"].mul(np.ones(2))),
    ("mul_0d_ndarray", lambda T, e: e["x"].mul(np.array(2.0))),
    ("mul_inplace_ndarray", lambda T, e: e["x"].mul_(np.ones(2))),
    ("add_fn_list", lambda T, e: T.add(e["x"], [1.0, 2.0])),
    ("add_fn_list_first", lambda T, e: T.add([1.0, 2.0], e["x"])),
    ("add_alpha_list", lambda T, e: T.add(e["x"], 1, alpha=[1])),
    ("add_inplace_list", lambda T, e: e["x"].add_([1.0, 2.0])),
    ("sub_list", lambda T, e: e["x"].sub([1.0, 2.0])),
    ("div_list", lambda T, e: e["x"].div([1.0, 2.0])),
    ("div_fn_list_first", lambda T, e: T.div([1.0, 2.0], e["x"])),
    ("floor_divide_list", lambda T, e: e["x"].floor_divide([1.0, 2.0])),
    ("remainder_list", lambda T, e: e["x"].remainder([1.0, 2.0])),
    ("fmod_list", lambda T, e: e["x"].fmod([1.0, 2.0])),
    ("pow_list", lambda T, e: e["x"].pow([1, 2])),
    ("pow_ndarray", lambda T, e: e["x"].pow(np.ones(2))),
    ("pow_fn_list_base", lambda T, e: T.pow([1, 2], e["x"])),
    ("float_power_list", lambda T, e: e["x"].float_power([1.0])),
    ("rsub_list", lambda T, e: T.rsub(e["x"], [1.0, 2.0])),
    ("atan2_list", lambda T, e: e["x"].atan2([1.0, 2.0])),
    ("maximum_list", lambda T, e: e["x"].maximum([1.0, 2.0])),
    ("hypot_list", lambda T, e: e["x"].hypot([1.0, 2.0])),
    ("xlogy_list", lambda T, e: e["x"].xlogy([1.0, 2.0])),
    ("bitwise_and_list", lambda T, e: e["i"].bitwise_and([1, 2])),
    ("logical_or_list", lambda T, e: e["b"].logical_or([True, False])),
    ("eq_list", lambda T, e: e["x"].eq([1.0, 2.0])),
    ("lt_fn_list", lambda T, e: T.lt(e["x"], [1.0, 2.0])),
    # where / clamp / lerp / addcmul
    ("where_list_input", lambda T, e: T.where(e["b"], [1.0, 2.0], e["y"])),
    ("where_ndarray_other", lambda T, e: T.where(e["b"], e["x"], np.ones(2))),
    ("where_bool_cond", lambda T, e: T.where(True, e["x"], e["y"])),
    ("where_list_cond", lambda T, e: T.where([True, False], e["x"], e["y"])),
    ("where_method_list", lambda T, e: e["x"].where(e["b"], [1.0, 2.0])),
    ("clamp_list", lambda T, e: e["x"].clamp([0, 1])),
    ("clamp_max_list", lambda T, e: e["x"].clamp(T.tensor(0.0), [1.0, 2.0])),
    ("clamp_inplace_list", lambda T, e: e["x"].clamp_([0, 1])),
    ("clamp_min_list", lambda T, e: e["x"].clamp_min([0.0])),
    ("lerp_weight_list", lambda T, e: e["x"].lerp(e["y"], [0.5])),
    ("addcmul_value_list", lambda T, e: e["x"].addcmul(e["y"], e["y"], value=[1.0])),
    # copy_ / fill_ / full
    ("copy_list", lambda T, e: e["x"].copy_([1.0, 2.0])),
    ("copy_ndarray", lambda T, e: e["x"].copy_(np.ones(2))),
    ("fill_list", lambda T, e: e["x"].fill_([1.0])),
    ("full_list", lambda T, e: T.full((2,), [1.0])),
    ("full_1d_tensor", lambda T, e: T.full((2,), T.tensor([1.0]))),
    ("new_full_list", lambda T, e: e["m"].new_full((2,), [1.0])),
    ("zeros_like_list", lambda T, e: T.zeros_like([1.0, 2.0])),
    ("full_like_list", lambda T, e: T.full_like([1.0], 2.0)),
    ("rand_like_list", lambda T, e: T.rand_like([1.0])),
    # int-only arguments given floats or bools
    ("narrow_float_start", lambda T, e: e["x"].narrow(0, 1.0, 1)),
    ("narrow_float_length", lambda T, e: e["x"].narrow(0, 0, 1.0)),
    ("narrow_float_tensor_start", lambda T, e: e["x"].narrow(0, T.tensor(0.0), 1)),  # RuntimeError
    ("topk_float", lambda T, e: e["x"].topk(2.0)),
    ("topk_bool", lambda T, e: e["x"].topk(True)),
    ("topk_float_tensor", lambda T, e: e["x"].topk(T.tensor(1.0))),
    ("kthvalue_float", lambda T, e: e["x"].kthvalue(1.0)),
    ("split_float_sizes", lambda T, e: e["m"].split([1.0, 1.0])),
    ("repeat_interleave_float", lambda T, e: e["m"].repeat_interleave(2.0)),
    ("diagonal_float", lambda T, e: e["m"].diagonal(0.0)),
    ("tril_float", lambda T, e: e["m"].tril(1.0)),
    ("triu_bool", lambda T, e: e["m"].triu(True)),
    ("unfold_float", lambda T, e: e["x"].unfold(0, 1.0, 1)),
    ("histc_float", lambda T, e: e["x"].histc(2.0)),
    ("sum_float_dim", lambda T, e: e["m"].sum(dim=1.0)),
    ("zeros_float", lambda T, e: T.zeros(2.0)),
    ("view_float", lambda T, e: e["m"].view(2, 2.0)),
    # softmax without dim (F.softmax may pick one; torch.softmax and Tensor.softmax may not)
    ("softmax_method_no_dim", lambda T, e: e["m"].softmax()),
    ("log_softmax_method_no_dim", lambda T, e: e["m"].log_softmax()),
    ("softmax_fn_no_dim", lambda T, e: T.softmax(e["m"])),
    ("log_softmax_fn_dtype_no_dim", lambda T, e: T.log_softmax(e["m"], dtype=T.float64)),
    # index ops: index / mask / other must be Tensors
    ("gather_list", lambda T, e: e["m"].gather(1, [[0], [1]])),
    ("gather_fn_list", lambda T, e: T.gather(e["x"], 0, [0, 1])),
    ("index_select_list", lambda T, e: e["x"].index_select(0, [0, 1])),
    ("scatter_list_index", lambda T, e: e["x"].scatter(0, [0, 1], e["y"])),
    ("scatter_list_src", lambda T, e: e["x"].scatter(0, e["idx"], [1.0, 2.0])),
    ("scatter_add_list", lambda T, e: e["x"].scatter_add(0, [0, 1], e["y"])),
    ("scatter_reduce_list", lambda T, e: e["x"].scatter_reduce(0, [0, 1], e["y"], "sum")),
    ("index_add_list_index", lambda T, e: e["x"].index_add(0, [0, 1], e["y"])),
    ("index_add_list_source", lambda T, e: e["x"].index_add(0, e["idx"], [1.0, 2.0])),
    ("index_copy_list", lambda T, e: e["x"].index_copy(0, [0, 1], e["y"])),
    ("index_fill_list", lambda T, e: e["x"].index_fill(0, [0, 1], 1.0)),
    ("masked_fill_list_mask", lambda T, e: e["x"].masked_fill([True, False], 0.0)),
    ("masked_fill_list_value", lambda T, e: e["x"].masked_fill(e["b"], [0.0])),
    ("masked_select_list", lambda T, e: e["x"].masked_select([True, False])),
    ("masked_scatter_list", lambda T, e: e["x"].masked_scatter([True, False], e["y"])),
    ("take_list", lambda T, e: e["x"].take([0])),
    ("take_along_dim_list", lambda T, e: e["x"].take_along_dim([0], 0)),
    ("put_list", lambda T, e: e["x"].put_([0], e["y"])),
    ("expand_as_list", lambda T, e: e["x"].expand_as([1, 2])),
    ("view_as_list", lambda T, e: e["x"].view_as([1, 2])),
    ("reshape_as_list", lambda T, e: e["x"].reshape_as([1, 2])),
    ("type_as_list", lambda T, e: e["x"].type_as([1, 2])),
    ("type_as_ndarray", lambda T, e: e["x"].type_as(np.ones(2))),
    ("broadcast_tensors_list", lambda T, e: T.broadcast_tensors(e["x"], [1.0, 2.0])),
    ("searchsorted_list", lambda T, e: T.searchsorted(e["x"], [1.0, 2.0])),
    ("isin_list", lambda T, e: T.isin(e["x"], [1.0, 2.0])),
    # containers of cat / stack
    ("stack_generator", lambda T, e: T.stack(t for t in [e["x"], e["y"]])),
    ("cat_generator", lambda T, e: T.cat(t for t in [e["x"], e["y"]])),
    ("hstack_generator", lambda T, e: T.hstack(t for t in [e["x"], e["y"]])),
    ("cat_tensor", lambda T, e: T.cat(e["x"])),
    ("stack_list_element", lambda T, e: T.stack([e["x"], [1.0, 2.0]])),
    # matmul family and torch.* functions given lists
    ("addmm_list", lambda T, e: e["m"].addmm(e["m"], [[1.0, 2.0], [3.0, 4.0]])),
    ("addmv_list", lambda T, e: T.addmv(e["x"], e["m"], [1.0, 2.0])),
    ("cross_list", lambda T, e: T.tensor([1.0, 2.0, 3.0]).cross([1.0, 2.0, 3.0])),
    ("cdist_list", lambda T, e: T.cdist(e["m"], [[1.0, 2.0]])),
    ("flatten_fn_list", lambda T, e: T.flatten([1.0, 2.0])),
    ("reshape_fn_list", lambda T, e: T.reshape([1.0, 2.0], (2,))),
    ("transpose_fn_list", lambda T, e: T.transpose([[1.0]], 0, 1)),
    ("squeeze_fn_list", lambda T, e: T.squeeze([1.0])),
    ("flip_fn_list", lambda T, e: T.flip([1.0, 2.0], [0])),
    ("clone_fn_list", lambda T, e: T.clone([1.0])),
    ("diag_fn_list", lambda T, e: T.diag([1.0, 2.0])),
]

# (id, fn(T, env)): valid spellings both libraries accept, with equal results
GOOD = [
    ("mul_number", lambda T, e: e["x"].mul(2)),
    ("mul_numpy_scalar", lambda T, e: e["x"].mul(np.float64(2.0))),
    ("mul_0d_tensor", lambda T, e: e["x"].mul(T.tensor(2.0))),
    ("mul_two_numbers", lambda T, e: T.mul(2, 3)),
    ("add_number_first", lambda T, e: T.add(1, e["x"])),
    ("add_alpha_numpy", lambda T, e: e["x"].add(1, alpha=np.float64(2))),
    ("operator_ndarray", lambda T, e: e["x"] + np.ones(2, np.float32)),
    ("operator_reflected_ndarray", lambda T, e: e["x"] * np.ones(2, np.float32)),
    ("operator_eq_ndarray", lambda T, e: e["x"] == np.ones(2, np.float32)),
    ("pow_number_base", lambda T, e: T.pow(2, e["x"])),
    ("where_numbers", lambda T, e: T.where(e["b"], 1.0, 2.0)),
    ("where_0d_cond", lambda T, e: T.where(T.tensor(True), e["x"], e["y"])),
    ("clamp_numpy_scalar", lambda T, e: e["x"].clamp(np.float32(1.5))),
    ("clamp_0d_tensor", lambda T, e: e["x"].clamp(T.tensor(1.5))),
    ("lerp_numpy_weight", lambda T, e: e["x"].lerp(e["y"], np.float64(0.5))),
    ("copy_number", lambda T, e: e["x"].clone().copy_(1.0)),
    ("fill_0d_tensor", lambda T, e: e["x"].clone().fill_(T.tensor(3.0))),
    ("full_0d_tensor", lambda T, e: T.full((2,), T.tensor(2.0))),
    ("masked_fill_numpy_scalar", lambda T, e: e["x"].masked_fill(e["b"], np.float64(1))),
    ("narrow_tensor_start", lambda T, e: e["x"].narrow(0, T.tensor(1), 1)),
    ("topk_numpy_int", lambda T, e: e["x"].topk(np.int64(1)).values),
    ("topk_int_tensor", lambda T, e: e["x"].topk(T.tensor(1)).values),
    ("split_numpy_sizes", lambda T, e: e["m"].split([np.int64(1), 1])),
    ("split_0d_tensor", lambda T, e: e["m"].split(T.tensor(1))),
    ("tril_numpy_int", lambda T, e: e["m"].tril(np.int64(1))),
    ("repeat_interleave_int_tensor", lambda T, e: e["m"].repeat_interleave(T.tensor(2))),
    ("histc_numpy_int", lambda T, e: e["x"].histc(np.int64(2))),
    ("reshape_tuple", lambda T, e: e["m"].reshape((4,))),
    ("softmax_dim", lambda T, e: e["m"].softmax(1)),
    ("softmax_fn_dim_dtype", lambda T, e: T.softmax(e["m"], 1, T.float64)),
    ("functional_softmax_no_dim", lambda T, e: T.nn.functional.softmax(e["m"])),
    ("cat_tuple", lambda T, e: T.cat((e["x"], e["y"]))),
    ("cat_axis", lambda T, e: T.cat([e["x"], e["y"]], axis=0)),
    ("concatenate_axis", lambda T, e: T.concatenate([e["x"], e["y"]], axis=0)),
    ("stack_axis", lambda T, e: T.stack([e["x"], e["y"]], axis=1)),
    ("isin_number", lambda T, e: T.isin(e["x"], 1.0)),
    ("searchsorted_number", lambda T, e: T.searchsorted(e["x"], 1.5)),
]

# (id, fn(T, env)): PyTorch's exact first message line
MESSAGES = [
    ("mul_fn", lambda T, e: T.mul(e["x"], [1.0, 2.0])),
    ("add_fn_first", lambda T, e: T.add([1.0, 2.0], e["x"])),
    ("add_alpha", lambda T, e: T.add(e["x"], 1, alpha=[1])),
    ("mul_fn_ndarray", lambda T, e: T.mul(e["x"], np.ones(2))),
    ("copy_", lambda T, e: e["x"].copy_([1.0, 2.0])),
    ("gather_fn", lambda T, e: T.gather(e["x"], 0, [0, 1])),
    ("index_select_fn", lambda T, e: T.index_select(e["x"], 0, [0, 1])),
    ("topk_fn", lambda T, e: T.topk(e["x"], 2.0)),
    ("softmax", lambda T, e: e["m"].softmax()),
    ("stack_generator", lambda T, e: T.stack(t for t in [e["x"]])),
    ("zeros_like", lambda T, e: T.zeros_like([1.0, 2.0])),
    ("full_like_value", lambda T, e: T.full_like(e["x"], [1.0])),
    ("broadcast_tensors", lambda T, e: T.broadcast_tensors(e["x"], [1.0, 2.0])),
]


@pytest.mark.parametrize("fn", [c[1] for c in BAD], ids=[c[0] for c in BAD])
def test_wrong_type_raises_as_torch(fn):
    check_raises(lambda T: fn(T, _env(T)))


@pytest.mark.parametrize("fn", [c[1] for c in GOOD], ids=[c[0] for c in GOOD])
def test_valid_spelling_works(fn):
    assert_same(fn(torch, _env(torch)), fn(torchish, _env(torchish)))


@pytest.mark.parametrize("fn", [c[1] for c in MESSAGES], ids=[c[0] for c in MESSAGES])
def test_message_matches_torch(fn):
    ref = check_raises(lambda T: fn(T, _env(T)))
    with pytest.raises(Exception) as got:
        fn(torchish, _env(torchish))
    assert str(got.value).split("\n")[0] == str(ref).split("\n")[0]


@pytest.mark.parametrize("make", [
    lambda L: L.empty(2, dtype="float32"), lambda L: L.zeros(2, dtype="float32"), lambda L: L.ones(2, dtype=np.float32),
    lambda L: L.full((2,), 1.0, dtype="float32"), lambda L: L.tensor([1.0], dtype="float32"),
    lambda L: L.arange(3, dtype="int64"), lambda L: L.randn(2, dtype="float32"), lambda L: L.rand(2, dtype=np.float64),
    lambda L: L.eye(2, dtype="float32"), lambda L: L.linspace(0, 1, 3, dtype="float32"),
])
def test_creation_dtype_must_be_a_dtype(make):
    check_raises(make)
    assert torchish.zeros(2, dtype=float).dtype == torchish.float64  # a Python type is a dtype, as in PyTorch
