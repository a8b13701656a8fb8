"""User mistakes raise PyTorch's builtin exception type (and, where PyTorch's wording is the searchable one, its
message): non-Tensor arguments to the functional ops, dtype checks of the norm kernels, argument checks of
optimizers, grad mode, init, distributions and ``torch.tensor``. Each case is ``fn(lib)`` doing one wrong thing,
run with PyTorch and torchish (``check_raises``), or compared exactly (``same_error``).
"""
import numpy as np
import pytest

from oracle import check_raises, needs_torch, same, same_error, torch, torchish

pytestmark = [needs_torch, pytest.mark.filterwarnings("ignore::UserWarning")]

L = [[1.0, 2.0]]


def _F(lib):
    return lib.nn.functional


def _t(lib):
    return lib.ones(1, 2)


# Non-Tensor inputs: PyTorch's argument parser raises TypeError naming the op, argument and position; where its
# Python wrapper touches the argument first, the AttributeError of that attribute.
NON_TENSOR = {
    "linear_input": lambda lib: _F(lib).linear(L, _t(lib)),
    "linear_weight": lambda lib: _F(lib).linear(_t(lib), L),
    "linear_bias": lambda lib: _F(lib).linear(_t(lib), _t(lib), [1.0]),
    "linear_none": lambda lib: _F(lib).linear(None, _t(lib)),
    "linear_numpy": lambda lib: _F(lib).linear(np.ones((1, 2), np.float32), _t(lib)),
    "module_linear_list": lambda lib: lib.nn.Linear(2, 2)(L),
    "module_conv_list": lambda lib: lib.nn.Conv2d(1, 1, 1)(L),
    "bilinear_weight": lambda lib: _F(lib).bilinear(_t(lib), _t(lib), [1.0]),
    "conv_transpose2d_weight": lambda lib: _F(lib).conv_transpose2d(lib.ones(1, 1, 2, 2), L),
    "gelu": lambda lib: _F(lib).gelu(L),
    "elu_inplace": lambda lib: _F(lib).elu_(L),
    "hardtanh": lambda lib: _F(lib).hardtanh(L),
    "relu6": lambda lib: _F(lib).relu6(L),
    "prelu_weight": lambda lib: _F(lib).prelu(_t(lib), [1.0]),
    "threshold": lambda lib: _F(lib).threshold(L, 0.0, 0.0),
    "gumbel_softmax": lambda lib: _F(lib).gumbel_softmax(L),
    "F_softmax": lambda lib: _F(lib).softmax(L, 0),
    "F_softmax_nodim": lambda lib: _F(lib).softmax(L),
    "F_sigmoid": lambda lib: _F(lib).sigmoid(L),
    "F_tanh": lambda lib: _F(lib).tanh(L),
    "F_softsign": lambda lib: _F(lib).softsign(L),
    "module_sigmoid": lambda lib: lib.nn.Sigmoid()(L),
    "module_tanh": lambda lib: lib.nn.Tanh()(L),
    "module_softmax": lambda lib: lib.nn.Softmax(0)(L),
    "max_pool2d": lambda lib: _F(lib).max_pool2d(L, 1),
    "max_pool2d_indices": lambda lib: _F(lib).max_pool2d(L, 1, return_indices=True),
    "max_pool3d_indices": lambda lib: _F(lib).max_pool3d(L, 1, return_indices=True),
    "avg_pool1d": lambda lib: _F(lib).avg_pool1d(L, 1),
    "adaptive_avg_pool1d": lambda lib: _F(lib).adaptive_avg_pool1d(L, 1),
    "batch_norm_train": lambda lib: _F(lib).batch_norm(L, None, None, training=True),
    "batch_norm_running_var": lambda lib: _F(lib).batch_norm(_t(lib), lib.zeros(2), [1.0, 1.0]),
    "layer_norm": lambda lib: _F(lib).layer_norm(L, (2,)),
    "layer_norm_bias": lambda lib: _F(lib).layer_norm(_t(lib), (2,), None, [1.0, 1.0]),
    "group_norm_weight": lambda lib: _F(lib).group_norm(_t(lib), 1, [1.0, 1.0]),
    "dropout_eval": lambda lib: _F(lib).dropout(L, training=False),
    "dropout_inplace": lambda lib: _F(lib).dropout(L, inplace=True),
    "embedding_indices": lambda lib: _F(lib).embedding([0], lib.ones(2, 2)),
    "embedding_weight": lambda lib: _F(lib).embedding(lib.tensor([0]), L),
    "module_embedding_numpy": lambda lib: lib.nn.Embedding(3, 2)(np.array([0, 1])),
    "pad": lambda lib: _F(lib).pad(L, (1, 1)),
    "pad_float_amount": lambda lib: _F(lib).pad(_t(lib), (1.5, 1)),
    "one_hot": lambda lib: _F(lib).one_hot([0]),
    "sdpa_value": lambda lib: _F(lib).scaled_dot_product_attention(_t(lib), _t(lib), L),
    "cosine_similarity": lambda lib: _F(lib).cosine_similarity(_t(lib), L),
    "pdist": lambda lib: _F(lib).pdist(L),
    "unfold": lambda lib: _F(lib).unfold(L, 1),
    "grid_sample_grid": lambda lib: _F(lib).grid_sample(lib.ones(1, 1, 1, 1), L, align_corners=False),
    "cross_entropy_target": lambda lib: _F(lib).cross_entropy(_t(lib), [0]),
    "module_ce_target": lambda lib: lib.nn.CrossEntropyLoss()(_t(lib), [0]),
    "nll_loss_input": lambda lib: _F(lib).nll_loss(L, lib.tensor([0])),
    "kl_div_target": lambda lib: _F(lib).kl_div(_t(lib), L),
    "triplet_negative": lambda lib: _F(lib).triplet_margin_loss(_t(lib), _t(lib), L),
    "hinge_target": lambda lib: _F(lib).hinge_embedding_loss(_t(lib), L),
    "multi_margin_input": lambda lib: _F(lib).multi_margin_loss(L, lib.tensor([0])),
    "ctc_log_probs": lambda lib: _F(lib).ctc_loss(L, lib.ones(1, 1, dtype=lib.long), [1], [1]),
    "mse_loss": lambda lib: _F(lib).mse_loss(L, _t(lib)),
    "to_dtype_string": lambda lib: lib.ones(2).to(dtype="float32"),
}


@pytest.mark.parametrize("name", sorted(NON_TENSOR))
def test_non_tensor_argument(name):
    check_raises(NON_TENSOR[name])


# The same message as PyTorch where it is the one users search for.
EXACT = {
    "linear_input": NON_TENSOR["linear_input"],
    "linear_bias": NON_TENSOR["linear_bias"],
    "embedding_indices": NON_TENSOR["embedding_indices"],
    "batch_norm_running_var": NON_TENSOR["batch_norm_running_var"],
    "F_softmax": NON_TENSOR["F_softmax"],
    "pad_float_amount": NON_TENSOR["pad_float_amount"],
    "layer_norm_mixed": lambda lib: _F(lib).layer_norm(lib.ones(2, 3, dtype=lib.float64), (3,), lib.ones(3)),
    "batch_norm_long": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, dtype=lib.long)),
    "group_norm_long": lambda lib: _F(lib).group_norm(lib.ones(2, 4, dtype=lib.long), 2),
    "adam_fused_foreach": lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(2))], foreach=True, fused=True),
    "sgd_fused_differentiable": lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1, fused=True,
                                                          differentiable=True),
    "set_grad_enabled_str": lambda lib: lib.set_grad_enabled("x"),
    "set_grad_enabled_int": lambda lib: lib.set_grad_enabled(1),
    "trunc_normal_bounds": lambda lib: lib.nn.init.trunc_normal_(lib.zeros(3), a=1.0, b=0.0),
    "backward_too_few_grads": lambda lib: lib.autograd.backward(
        [lib.ones(2, requires_grad=True) * 2, lib.ones(2, requires_grad=True) * 3], [lib.ones(2)]),
    "grad_too_few_grads": lambda lib: (lambda x: lib.autograd.grad([x * 2, x * 3], [x], [lib.ones(2)]))(
        lib.ones(2, requires_grad=True)),
    "type_bad_string": lambda lib: lib.ones(2).type("torch.Bogus"),
    "type_dtype_name": lambda lib: lib.ones(2).type("float32"),
    "parameter_of_list": lambda lib: lib.nn.Parameter([1.0, 2.0]),
    "uniform_low_above_high": lambda lib: lib.distributions.Uniform(lib.tensor(1.0), lib.tensor(0.0)),
    # clamp_ of an integer tensor by a float Number: clamp's meta function prints self's C++ type ("long int"), the
    # Tensor-bound overload TensorIterator's scalar type name ("Long")
    "clamp_long_number": lambda lib: lib.arange(3).clamp_(0.5),
    "clamp_max_int16_number": lambda lib: lib.arange(3, dtype=lib.int16).clamp_(min=0, max=1.5),
    "clamp_min_uint8_number": lambda lib: lib.arange(3, dtype=lib.uint8).clamp_min_(0.5),
    "clip_bool_number": lambda lib: lib.tensor([True]).clip_(0.5, 1.5),
    "clamp_long_tensor_bound": lambda lib: lib.arange(3).clamp_(lib.tensor(0.5)),
    # size arguments that are not ints, as PyTorch's argument parser words it: a list or float first among several
    # positional values makes them too many arguments; a later one cannot be unpacked; view has two overloads
    **{f"{op}_{how}": (lambda op, args: lambda lib: getattr(lib.zeros(4), op)(*args))(op, args)
       for op in ("reshape", "expand", "broadcast_to", "repeat", "tile", "permute", "flip", "new_zeros", "new_ones",
                  "new_empty", "resize_")
       for how, args in (("list_first", ([2], 2)), ("float_first", (2.0, 2)), ("float_later", (2, 2.0)),
                         ("float_later_in_tuple", ((2, 2.0),)), ("float_first_in_tuple", ((2.0,),)))},
    **{f"{op}_{how}": (lambda op, args: lambda lib: getattr(lib, op)(*args))(op, args)
       for op in ("zeros", "ones", "empty")
       for how, args in (("list_first", ([2], 2)), ("float_first", (2.0, 2)), ("float_later", (2, 2.0)),
                         ("float_first_in_tuple", ((2.0,),)), ("float_alone", (2.0,)))},
    # requires_grad must be a Python bool (None is the default of the factories, not of tensor())
    **{f"{name}_requires_grad_{kind}": (lambda f, v: lambda lib: f(lib, v))(f, v)
       for name, f in (("zeros", lambda lib, v: lib.zeros(2, requires_grad=v)),
                       ("full", lambda lib, v: lib.full((2,), 1.0, requires_grad=v)),
                       ("tensor", lambda lib, v: lib.tensor([1.0], requires_grad=v)),
                       ("zeros_like", lambda lib, v: lib.zeros_like(lib.ones(2), requires_grad=v)),
                       ("parameter", lambda lib, v: lib.nn.Parameter(lib.ones(2), requires_grad=v)))
       for kind, v in (("int", 1), ("numpy_bool", np.bool_(True)))},
    "tensor_requires_grad_none": lambda lib: lib.tensor([1.0], requires_grad=None),
    # classes named by torch.typename, under PyTorch's module paths
    "assign_module_as_parameter": lambda lib: setattr(lib.nn.Linear(2, 2), "weight", lib.nn.Sequential()),
    "module_as_buffer": lambda lib: lib.nn.Module().register_buffer("b", lib.nn.ReLU()),
    "optimizer_of_a_module": lambda lib: lib.optim.SGD([lib.nn.ReLU()], lr=0.1),
    "optimizer_of_a_tensor": lambda lib: lib.optim.SGD(lib.ones(2), lr=1),
    "parameter_list_as_parameter": lambda lib: setattr(lib.nn.Linear(2, 2), "bias", lib.nn.ParameterList()),
    "view_list_first": lambda lib: lib.zeros(4).view([2], 2),
    "view_float_first": lambda lib: lib.zeros(4).view(2.0, 2),
    "view_float_later": lambda lib: lib.zeros(4).view(2, 2.0),
    "view_no_size": lambda lib: lib.zeros(4).view(),
    "broadcast_to_int_size": lambda lib: lib.broadcast_to(lib.zeros(4), 4),
    "broadcast_to_no_size": lambda lib: lib.zeros(4).broadcast_to(),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_message(name):
    same_error(EXACT[name])


def test_layer_norm_half_input_float_weight_is_allowed():
    same(lambda lib: _F(lib).layer_norm(lib.ones(2, 3, dtype=lib.float16), (3,), lib.ones(3)))


def test_extra_grad_outputs_are_ignored():
    def f(lib):
        x = lib.ones(3, requires_grad=True)
        return lib.autograd.grad([x * 2], x, grad_outputs=[lib.ones(3), lib.ones(3) * 5])
    same(f)


def test_unsigned_tensor_from_negative_ints_wraps():
    same(lambda lib: [lib.tensor([-1, -128, -255], dtype=lib.uint8), lib.tensor(-1, dtype=lib.uint8),
                      lib.tensor([-1], dtype=lib.int16)])
    check_raises(lambda lib: lib.tensor([-256], dtype=lib.uint8))
    check_raises(lambda lib: lib.tensor([-1.5], dtype=lib.uint8))


@pytest.mark.parametrize("make", [lambda lib: lib.arange(3.0, requires_grad=1), lambda lib: lib.randn(2, requires_grad=1),
                                  lambda lib: lib.eye(2, requires_grad=1), lambda lib: lib.rand(2, requires_grad=1),
                                  lambda lib: lib.linspace(0, 1, 3, requires_grad=1),
                                  lambda lib: lib.ones(2).new_zeros(2, requires_grad=1)])
def test_factories_refuse_a_non_bool_requires_grad(make):
    check_raises(make)  # (PyTorch words the overloaded ones as an invalid combination of arguments: TypeError too)
    assert not torchish.empty(2, requires_grad=None).requires_grad


def test_typename_uses_pytorchs_module_paths():
    def names(lib):
        return [lib.typename(x) for x in (lib.nn.Linear, lib.nn.Sequential(), lib.nn.ParameterDict(), lib.nn.Module,
                                          len, 3, lib.ones(2), lib.ones(2, dtype=lib.float64), lib.nn.Parameter)]
    assert names(torchish) == names(torch)


def test_broadcast_to_method_takes_sizes_as_varargs():
    same(lambda lib: [lib.arange(4.0).broadcast_to(2, 4), lib.arange(4.0).broadcast_to(3, -1).stride(),
                      lib.arange(4.0).broadcast_to(size=(2, 4)), lib.broadcast_to(lib.arange(4.0), [2, 4]),
                      lib.arange(4.0).broadcast_to(4), lib.arange(4.0).tile(2, 1), lib.arange(4.0).repeat(2, 1)])


def test_valid_calls_still_work():
    same(lambda lib: [_F(lib).linear(_t(lib), _t(lib), lib.ones(1)), _F(lib).softmax(_t(lib), 1),
                      lib.nn.Sigmoid()(_t(lib)), _F(lib).pad(_t(lib), (1, 1)), lib.ones(2).type("torch.DoubleTensor"),
                      lib.distributions.Uniform(lib.tensor(0.0), lib.tensor(1.0)).log_prob(lib.tensor(0.5))])
