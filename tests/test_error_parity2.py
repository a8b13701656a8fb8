"""User mistakes found by scanning nn construction and calls, losses, optim/lr_scheduler, data utilities,
distributions, torch.func and seeding against PyTorch: each case raises PyTorch's builtin exception type, with
PyTorch's message where that is what users search for (``same_error``), or is accepted where PyTorch accepts it.
Each case is ``fn(lib)`` doing one wrong thing, run with PyTorch and with torchish.
"""
import importlib
import io

import numpy as np
import pytest

from oracle import check_raises, formula_data, formula_init, needs_torch, same, same_error, torchish

pytestmark = [needs_torch]


# Generator.manual_seed takes a Python int only (PyTorch's C++ binding): floats, strings, bools, None and tensors
# are a RuntimeError naming the type, numpy integers a TypeError; torch.manual_seed converts with int() first and
# so accepts all of those that int() takes.
GENERATOR_SEEDS = {
    "str": "a", "float": 1.5, "bool": True, "none": None, "numpy_int": np.int64(3), "numpy_float": np.float64(2.0),
    "tensor": "tensor", "too_big": 2 ** 64,
}


def _seed_value(lib, v):
    return lib.tensor(3) if v == "tensor" else v


@pytest.mark.parametrize("name", sorted(GENERATOR_SEEDS))
def test_generator_manual_seed_refuses_what_pytorch_refuses(name):
    same_error(lambda lib: lib.Generator().manual_seed(_seed_value(lib, GENERATOR_SEEDS[name])))


def test_module_manual_seed_converts_with_int():
    same(lambda lib: [lib.manual_seed(v).initial_seed()
                      for v in (1.5, True, np.int64(3), np.float64(2.0), lib.tensor(7), "12")])


@pytest.mark.parametrize("zip_format", [True, False])
def test_save_to_a_directory(tmp_path, zip_format):
    """PyTorch's zip writer cannot open a directory (RuntimeError); its legacy writer raises open()'s
    IsADirectoryError. torchish raised IsADirectoryError from os.replace after writing a temporary file beside the
    directory, for both formats."""
    same_error(lambda lib: lib.save(lib.ones(2), tmp_path, _use_new_zipfile_serialization=zip_format))
    assert [p.name for p in tmp_path.parent.iterdir() if p.name.endswith(".tmp")] == []


# Reading a value that vmap batches: PyTorch's vmap errors (item, float/int/format, control flow, tolist/numpy).
# torchish raised torchish.compile's ConcretizationError text for all, and a TypeError for f"{x:.2f}".
VMAP_READS = {
    "item": lambda a: a.sum().item(), "float": lambda a: float(a.sum()), "if": lambda a: a if a.sum() > 0 else -a,
    "format_spec": lambda a: f"{a.sum():.2f}", "format": lambda a: (f"{a.sum()}", a)[1],
    "list_index": lambda a: [1, 2, 3][a.long()[0]], "tolist": lambda a: a.tolist(), "numpy": lambda a: a.numpy(),
}


@pytest.mark.parametrize("name", sorted(VMAP_READS))
def test_reading_a_vmapped_value_is_vmaps_error(name):
    same_error(lambda lib: lib.func.vmap(VMAP_READS[name])(lib.ones(2, 3)))


# f-strings of tensors: PyTorch formats only a plain 0-dim tensor as its number; a Parameter, a meta tensor or any
# other shape goes through object.__format__ (str() for an empty spec, TypeError otherwise). torchish formatted a
# 0-dim Parameter as a number and raised RuntimeError for a 0-dim meta tensor.
FORMATS = {
    "parameter_spec": lambda lib: f"{lib.nn.Parameter(lib.tensor(1.5)):.2f}",
    "meta_spec": lambda lib: f"{lib.tensor(1.5, device='meta'):.2f}",
    "vector_spec": lambda lib: f"{lib.ones(2):.2f}",
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_format_spec_refusals(name):
    same_error(FORMATS[name])


def test_formats_that_pytorch_accepts():
    same(lambda lib: [f"{lib.nn.Parameter(lib.tensor(1.5))}", f"{lib.tensor(1.5, device='meta')}",
                      f"{lib.tensor(1.5, requires_grad=True):.2f}", f"{lib.tensor(3):04d}", f"{lib.ones(2)}"])


def test_format_spec_in_a_compiled_function_breaks_the_graph():
    """f"{loss:.3f}" inside torchish.compile reads the value: a graph break (the function runs eagerly), as in
    torch.compile; the traced call raised TypeError."""
    def step(a):
        return a * 2, f"{a.sum():.3f}"
    f = torchish.compile(step)
    with pytest.warns(UserWarning):
        outs = [f(torchish.ones(2))[1] for _ in range(3)]
    assert outs == ["2.000"] * 3


@pytest.mark.filterwarnings("ignore::FutureWarning")  # (the legacy weight_norm's deprecation)
@pytest.mark.parametrize("dim", [2, -3])
@pytest.mark.parametrize("legacy", [True, False])
def test_weight_norm_dim_out_of_range(dim, legacy):
    """PyTorch's norm_except_dim wraps ``dim`` (IndexError); torchish took it modulo the rank and ran."""
    def fn(lib):
        wn = lib.nn.utils.weight_norm if legacy else lib.nn.utils.parametrizations.weight_norm
        wn(lib.nn.Linear(2, 2), dim=dim)
    same_error(fn)


def test_norm_except_dim_of_a_vector_is_elementwise():
    """torch.norm_except_dim of a 1-d tensor is |v| (each element its own norm): torchish reduced to one norm.
    weight_norm of a bias goes through it."""
    def fn(lib):
        m = formula_init(lib, lib.nn.Linear(3, 4))
        lib.nn.utils.parametrizations.weight_norm(m, "bias")
        v = formula_data(lib, 4)
        return [lib.norm_except_dim(v, 2, 0), lib.norm_except_dim(v, 3, -1), m(formula_data(lib, 2, 3))]
    same(fn)


def _saving_function(lib, saved):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(saved)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Twice


@pytest.mark.parametrize("saved", [3, 1.5, [1.0], np.ones(2)], ids=["int", "float", "list", "ndarray"])
@pytest.mark.parametrize("records", [True, False])
def test_save_for_backward_of_a_non_tensor(saved, records):
    """TypeError naming the type (numpy's as 'numpy.ndarray') when the Function's graph is recorded; PyTorch never
    reads what an unrecorded Function saved (no input requires grad, or no_grad), where torchish raised too."""
    def fn(lib):
        y = _saving_function(lib, saved).apply(lib.ones(2, requires_grad=records))
        if records:
            y.sum().backward()
        with lib.no_grad():
            z = _saving_function(lib, saved).apply(lib.ones(2, requires_grad=True))
        return y.detach(), z
    if records:
        same_error(fn)
    else:
        same(fn)


@pytest.mark.parametrize("shape", [(5, 0, 4), (0, 2, 4), (5, 2, 0), (0,)])
def test_ctc_loss_of_empty_log_probs(shape):
    """PyTorch refuses empty log-probs (an empty batch included) before any shape check; torchish returned nan
    for an empty batch and raised IndexError for zero time steps."""
    same_error(lambda lib: lib.nn.functional.ctc_loss(lib.zeros(shape), lib.ones(2, 3, dtype=lib.long),
                                                      lib.tensor([5, 5]), lib.tensor([2, 2])))


@pytest.mark.parametrize("shape, normalized", [((2, 0), 0), ((2, 0, 3), (0, 3)), ((0, 3), 3)])
def test_layer_norm_backward_over_an_empty_normalized_shape(shape, normalized):
    """A normalized_shape holding a 0 runs forward and backward in PyTorch (empty gradients); torchish's backward
    raised ZeroDivisionError (1 / N, and a reshape to (-1, 0))."""
    def fn(lib):
        m = lib.nn.LayerNorm(normalized)
        x = lib.zeros(shape, requires_grad=True)
        y = m(x)
        y.sum().backward()
        return y.detach(), x.grad, m.weight.grad, m.bias.grad
    same(fn)


NORMS_OF_EMPTY = {
    "group_norm_no_channels": (lambda lib: lib.nn.GroupNorm(1, 0), (2, 0, 3)),
    "instance_norm_no_spatial": (lambda lib: lib.nn.InstanceNorm1d(2, affine=True), (3, 2, 0)),
    "instance_norm2d_no_spatial": (lambda lib: lib.nn.InstanceNorm2d(2), (3, 2, 0, 4)),
}


@pytest.mark.parametrize("name", sorted(NORMS_OF_EMPTY))
def test_norms_over_empty_groups(name):
    """PyTorch runs these (its instance_norm check refuses exactly one spatial element, not zero); torchish raised
    ValueError for zero spatial elements and ZeroDivisionError in group_norm's backward over empty groups."""
    make, shape = NORMS_OF_EMPTY[name]

    def fn(lib):
        m = make(lib)
        x = lib.zeros(shape, requires_grad=True)
        y = m(x)
        y.sum().backward()
        return [y.detach(), x.grad] + [p.grad for p in m.parameters()]
    same(fn)


EMPTY_BATCH_NORMS = {
    "bn2d_empty_batch": (lambda lib: lib.nn.BatchNorm2d(3), (0, 3, 2, 2)),
    "bn1d_empty_batch": (lambda lib: lib.nn.BatchNorm1d(3), (0, 3)),
    "bn2d_empty_spatial": (lambda lib: lib.nn.BatchNorm2d(3), (2, 3, 0, 2)),
    "in2d_tracked_empty_batch": (lambda lib: lib.nn.InstanceNorm2d(3, track_running_stats=True), (0, 3, 2, 2)),
    "in2d_affine_tracked_empty_spatial": (lambda lib: lib.nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
                                          (2, 3, 0, 2)),
}


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name", sorted(EMPTY_BATCH_NORMS))
def test_batch_norm_of_an_input_without_elements(name, train):
    """PyTorch's batch_norm of an empty input is input * weight[0] + bias[0] in either mode: zero weight and bias
    gradients, running statistics left as they are (instance_norm averages its per-sample copies back: nan for an
    empty batch). torchish normalised with the 0/0 statistics: nan weight gradients and nan running statistics,
    which then spoilt every later evaluation."""
    make, shape = EMPTY_BATCH_NORMS[name]

    def fn(lib):
        m = make(lib).train(train)
        x = lib.zeros(shape, requires_grad=True)
        y = m(x)
        y.sum().backward()
        return [y.detach(), x.grad, y.grad_fn.name()] + [p.grad for p in m.parameters()] + list(m.buffers())
    same(fn)


def test_instance_norm_affine_of_an_empty_batch():
    """weight[0] of the per-sample copies of the weight: PyTorch's IndexError of select()."""
    same_error(lambda lib: lib.nn.InstanceNorm2d(3, affine=True)(lib.zeros(0, 3, 2, 2)))


# Explicit dim=None where PyTorch's signatures have no such overload (prod, squeeze: TypeError; torchish reduced
# over / squeezed every dim), and p=None for norm (PyTorch's 2-norm; torchish compared None with a number)
DIM_NONE = {
    "prod": lambda lib: lib.ones(2, 1).prod(None),
    "prod_kw": lambda lib: lib.prod(lib.ones(2, 1), dim=None),
    "squeeze": lambda lib: lib.ones(2, 1).squeeze(None),
    "squeeze_kw": lambda lib: lib.squeeze(lib.ones(2, 1), dim=None),
}


@pytest.mark.parametrize("name", sorted(DIM_NONE))
def test_explicit_dim_none_is_refused(name):
    check_raises(DIM_NONE[name])


def test_dims_left_out_and_norm_p_none():
    same(lambda lib: [lib.ones(2, 1).prod(), lib.ones(2, 1).squeeze(), lib.ones(2, 1).prod(dtype=lib.float64),
                      lib.norm(lib.tensor([[3.0, 4.0]]), None), lib.tensor([[3.0, 4.0]]).norm(p=None, dim=1)])


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("where", ["cuda", "cuda:1", "foo"])
def test_load_with_a_map_location_this_machine_cannot_restore(where, weights_only):
    """PyTorch's RuntimeErrors: 'Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is
    False...' (what users search for) and "don't know how to restore data location"; torchish reported a corrupted
    data.pkl (weights_only) or raised the AssertionError of its device lookup."""
    if where != "foo" and torchish.cuda.is_available():
        pytest.skip("this machine restores storages to CUDA")

    def fn(lib):
        b = io.BytesIO()
        lib.save({"a": lib.ones(2)}, b)
        b.seek(0)
        lib.load(b, map_location=where, weights_only=weights_only)
    same_error(fn)


def test_a_numpy_array_where_a_module_takes_a_tensor_is_named_as_pytorch_names_it():
    """'must be Tensor, not numpy.ndarray' (torchish printed 'not ndarray')."""
    same_error(lambda lib: lib.nn.Linear(2, 2)(np.ones((1, 2), np.float32)))


@pytest.mark.parametrize("kw", [{"mode": "max"}, {"padding_idx": 0}, {"padding_idx": 2, "mode": "mean"}],
                         ids=["max", "padding_sum", "padding_mean"])
def test_embedding_bag_index_out_of_range_in_the_general_kernel(kw):
    """max mode and a padding_idx take PyTorch's general kernel, which names the bad value ('embedding_bag:
    Expected idx >= 0 && idx < num_embeddings but found idx to be 7'); torchish gave the fast kernel's message."""
    same_error(lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 7, -1]]), lib.ones(5, 3), **kw))


def test_lstm_with_three_hidden_states():
    """PyTorch's op: 'lstm expects two hidden states' (RuntimeError); torchish raised the ValueError of unpacking."""
    same_error(lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(2, 1, 3), (lib.zeros(1, 1, 4),) * 3))


def test_prune_custom_mask_of_another_shape():
    """PyTorch asserts the shapes match (AssertionError with its text); torchish raised ValueError."""
    same_error(lambda lib: importlib.import_module(lib.__name__ + ".nn.utils.prune").custom_from_mask(
        lib.nn.Linear(2, 2), "weight", mask=lib.ones(3)))


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv_transpose_module_with_a_padding_string(padding):
    """PyTorch's ConvTranspose2d keeps the string and its op's parser refuses it at the call (TypeError); torchish
    raised ValueError."""
    same_error(lambda lib: lib.nn.ConvTranspose2d(1, 1, 3, padding=padding)(lib.ones(1, 1, 4, 4)))


def test_max_unpool_with_a_negative_default_output_size():
    """A negative kernel size gives a negative output size: PyTorch's ValueError; torchish raised RuntimeError."""
    same_error(lambda lib: lib.nn.MaxUnpool2d(-1)(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 2, 2, dtype=lib.long)))


@pytest.mark.parametrize("call", ["sdpa", "mha_weights", "mha_no_weights", "mha_eval"])
def test_attention_dropout_above_one(call):
    """Dropout probability 2: scaled_dot_product_attention's RuntimeError, MultiheadAttention's F.dropout
    ValueError with need_weights (the sdpa error without); nothing in eval mode. torchish zeroed the weights."""
    def fn(lib):
        x = lib.ones(3, 2, 4)
        if call == "sdpa":
            return lib.nn.functional.scaled_dot_product_attention(x, x, x, dropout_p=2.0)
        m = lib.nn.MultiheadAttention(4, 2, dropout=2.0).train(call != "mha_eval")
        return m(x, x, x, need_weights=call == "mha_weights")[0].shape
    if call == "mha_eval":
        same(fn)
    else:
        same_error(fn)


def test_conv2d_with_a_one_element_kernel_size():
    """PyTorch keeps kernel_size=(2,) as given: a 3-d weight (in the state_dict too) that the 2-d call refuses;
    torchish expanded it to (2, 2) and ran."""
    same(lambda lib: [tuple(lib.nn.Conv2d(1, 1, (2,)).weight.shape), lib.nn.Conv2d(1, 1, (2,)).kernel_size])
    same_error(lambda lib: lib.nn.Conv2d(1, 1, (2,))(lib.ones(1, 1, 4, 4)))


def test_hardtanh_inplace_function_does_not_check_the_limits():
    """F.hardtanh_ is PyTorch's kernel without F.hardtanh's 'min_val cannot be greater than max_val' check (the
    clamp gives max_val); torchish raised ValueError. F.hardtanh still refuses."""
    same(lambda lib: lib.nn.functional.hardtanh_(lib.arange(3.0) - 1, 1.0, -1.0))
    same_error(lambda lib: lib.nn.functional.hardtanh(lib.arange(3.0), 1.0, -1.0))
