"""User mistakes and edge cases compared with PyTorch, continued from tests/test_error_parity2.py: attention with
head size 0, grad-mode contexts left without being entered, the torch.cuda device calls of a CPU-only build,
empty non-batch dimensions in adaptive pooling and interpolation, bools where PyTorch's argument parser wants
ints, and InstanceNorm's grad_fn. Each case is ``fn(lib)`` run with PyTorch and with torchish: the same results
(``same``), the same builtin exception type (``check_raises``), or that and the same message (``same_error``).
"""
import math

import pytest

from oracle import check_raises, needs_torch, same, same_error, torchish

pytestmark = [needs_torch]


def _F(lib):
    return lib.nn.functional


def _sdpa(lib, qs, vs, **kw):
    """Attention of deterministic q (qs), k and v (vs): output, its node's name and the three gradients."""
    ks = qs[:-2] + (vs[-2], qs[-1])
    q, k, v = [(lib.arange(float(math.prod(s))).reshape(s) / d).requires_grad_() for s, d in ((qs, 7), (ks, 5),
                                                                                               (vs, 3))]
    o = _F(lib).scaled_dot_product_attention(q, k, v, **kw)
    (o * 1.5).sum().backward()
    return [o.detach(), o.grad_fn.name(), q.grad, k.grad, v.grad]


@pytest.mark.parametrize("qs, vs, kw", [
    ((1, 2, 3, 0), (1, 2, 3, 0), {}), ((1, 2, 3, 0), (1, 2, 3, 2), {}), ((2, 3, 0), (2, 3, 2), {}),
    ((2, 3, 0), (2, 3, 2), {"is_causal": True}), ((3, 0), (3, 2), {"scale": 0.5}), ((1, 2, 3, 4), (1, 2, 3, 0), {}),
    ((1, 2, 3, 4), (1, 2, 0, 4), {}), ((0, 2, 3, 4), (0, 2, 3, 4), {}), ((2, 3, 4), (2, 3, 4), {}),
    ((3, 4), (3, 4), {}),
], ids=["all_head0", "qk_head0", "3d_head0", "3d_head0_causal", "2d_head0_scale", "v_head0", "no_keys",
        "empty_batch", "3d", "2d"])
def test_attention_with_empty_dims(qs, vs, kw):
    """Head size 0: PyTorch's default scale 1/sqrt(0) multiplies only empty tensors (scores are 0, the softmax
    uniform); torchish raised ZeroDivisionError. The node on top is that of PyTorch's kernel: its early return for
    an empty output or no keys (AddBackward0), the math kernel's last matmul (MmBackward0 / UnsafeViewBackward0),
    else the CPU flash kernel's; torchish named a ScaledDotProductAttentionBackward0 PyTorch does not have."""
    same(lambda lib: _sdpa(lib, qs, vs, **kw))


def test_attention_node_of_an_upcast_half_computation():
    same(lambda lib: [_F(lib).scaled_dot_product_attention(*[lib.ones(2, 3, 4, dtype=dt, requires_grad=True)] * 3)
                      .grad_fn.name() for dt in (lib.float16, lib.bfloat16)])


# Leaving a grad-mode block never entered: PyTorch's no_grad starts with prev=False (grad mode turns off),
# enable_grad and inference_mode have no saved state yet (AttributeError); set_grad_enabled saved it when made.
# torchish raised TypeError unpacking None.
def _exit_fresh(make):
    def fn(lib):
        lib.set_grad_enabled(True)
        try:
            make(lib).__exit__(None, None, None)
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()
        finally:
            lib.set_grad_enabled(True)
    return fn


def test_exit_of_a_fresh_no_grad_turns_grad_mode_off():
    same(_exit_fresh(lambda lib: lib.no_grad()))
    same(_exit_fresh(lambda lib: lib.set_grad_enabled(False)))


@pytest.mark.parametrize("name", ["enable_grad", "inference_mode"])
def test_exit_of_a_fresh_context_without_saved_state(name):
    same_error(_exit_fresh(lambda lib: getattr(lib, name)()))


def test_detect_anomaly_restores_the_mode_read_when_made():
    def fn(lib):
        m = lib.autograd.detect_anomaly()
        lib.autograd.set_detect_anomaly(True)
        m.__enter__()
        m.__exit__(None, None, None)
        out = lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        return out
    with pytest.warns(UserWarning):
        same(fn)


# torch.cuda's device calls in a CPU-only build: an index is parsed as PyTorch's _get_device_index does
# (ValueError for a CPU device or one without an index), a negative one does nothing, and the rest reach the
# missing CUDA bindings: AttributeError (set_device, reset_peak_memory_stats), RuntimeError (device's __enter__).
# torchish raised its AssertionError for all of them.
CUDA_CALLS = {
    "set_device_0": lambda lib: lib.cuda.set_device(0),
    "set_device_str": lambda lib: lib.cuda.set_device("cuda:1"),
    "set_device_cpu": lambda lib: lib.cuda.set_device("cpu"),
    "set_device_cpu_device": lambda lib: lib.cuda.set_device(lib.device("cpu")),
    "set_device_no_index": lambda lib: lib.cuda.set_device("cuda"),
    "set_device_float": lambda lib: lib.cuda.set_device(1.5),
    "set_device_none": lambda lib: lib.cuda.set_device(None),
    "set_device_bad_string": lambda lib: lib.cuda.set_device("0"),
    "device_enter": lambda lib: lib.cuda.device(0).__enter__(),
    "device_enter_str": lambda lib: lib.cuda.device("cuda:1").__enter__(),
    "device_enter_none": lambda lib: lib.cuda.device(None).__enter__(),
    "device_cpu": lambda lib: lib.cuda.device("cpu"),
    "device_of_list": lambda lib: lib.cuda.device_of([1]),
    "current_device": lambda lib: lib.cuda.current_device(),
    "reset_peak": lambda lib: lib.cuda.reset_peak_memory_stats(),
    "reset_peak_0": lambda lib: lib.cuda.reset_peak_memory_stats(0),
    "reset_accumulated": lambda lib: lib.cuda.reset_accumulated_memory_stats(),
}


@pytest.mark.skipif(torchish.cuda.is_available(), reason="an accelerator stands for CUDA here")
@pytest.mark.parametrize("name", sorted(CUDA_CALLS))
def test_cuda_device_calls_of_a_cpu_only_build(name):
    same_error(CUDA_CALLS[name])


@pytest.mark.skipif(torchish.cuda.is_available(), reason="an accelerator stands for CUDA here")
def test_cuda_device_calls_a_cpu_only_build_lets_pass():
    def fn(lib):
        c = lib.cuda
        entered = []
        for m in (c.device(-1), c.device_of(lib.ones(1))):
            entered.append(m.__enter__())
            m.__exit__(None, None, None)
        return (c.set_device(-1), entered, c.device(0).idx, c.device("cuda").idx, c.device(None).idx,
                c.device_of(lib.ones(1)).idx, c.set_rng_state(lib.zeros(8, dtype=lib.uint8)), c.memory_stats() == {})
    same(fn)


# Adaptive pooling and interpolation of an input with an empty dimension after the batch: PyTorch's max kernels
# and avg3d refuse any empty non-batch dim (avg1d/2d only the trailing two), its upsample kernels any (only an empty
# batch passes). torchish returned empty outputs.
EMPTY_POOLS = [("max", 1, (2, 0, 3)), ("max", 2, (1, 0, 3, 3)), ("avg", 3, (1, 0, 2, 2, 2)),
               ("max", 3, (1, 0, 2, 2, 2)), ("max", 2, (2, 0, 3))]


@pytest.mark.parametrize("kind, nd, shape", EMPTY_POOLS)
def test_adaptive_pool_of_empty_channels(kind, nd, shape):
    same_error(lambda lib: getattr(_F(lib), f"adaptive_{kind}_pool{nd}d")(lib.ones(shape), 2))


def test_adaptive_pools_pytorch_runs_on_empty_dims():
    same(lambda lib: [_F(lib).adaptive_avg_pool1d(lib.ones(2, 0, 3), 2), _F(lib).adaptive_avg_pool2d(
        lib.ones(1, 0, 3, 3), 2), _F(lib).adaptive_max_pool2d(lib.ones(0, 3, 3), 2),
        _F(lib).adaptive_avg_pool3d(lib.ones(0, 2, 2, 2), 2)])


@pytest.mark.parametrize("mode, shape", [("nearest", (2, 0, 3)), ("linear", (2, 0, 3)), ("bilinear", (1, 0, 3, 3)),
                                         ("bicubic", (1, 0, 3, 3)), ("nearest-exact", (1, 0, 3, 3)),
                                         ("trilinear", (1, 0, 2, 2, 2)), ("area", (1, 0, 2, 2, 2))])
def test_interpolate_of_empty_channels(mode, shape):
    same_error(lambda lib: _F(lib).interpolate(lib.ones(shape), size=(4,) * (len(shape) - 2), mode=mode))


def test_interpolate_of_an_empty_batch_and_empty_channels_by_area():
    def fn(lib):
        x = lib.ones(0, 2, 3, 3, requires_grad=True)
        y = _F(lib).interpolate(x, size=(4, 4), mode="bilinear")
        y.sum().backward()
        return [y.detach(), x.grad, _F(lib).interpolate(lib.ones(2, 0, 3), size=4, mode="area"),
                _F(lib).interpolate(lib.ones(1, 0, 3, 3), size=(4, 4), mode="area")]
    same(fn)


# Bools where PyTorch's parser wants ints. An int argument (a dim, one_hot's num_classes) refuses a bool
# (TypeError); an int-list argument checks the type of its first value only, so a bool first (or alone) is refused
# and a later one is unpacked as 0 or 1. torchish took every bool as an int.
BOOL_REFUSED = {
    "sum_dim": lambda lib: lib.ones(2, 3).sum(dim=True),
    "sum_dims_first": lambda lib: lib.ones(2, 3).sum(dim=(True,)),
    "mean": lambda lib: lib.ones(2, 3).mean(True),
    "amax": lambda lib: lib.ones(2, 3).amax(True),
    "softmax": lambda lib: _F(lib).softmax(lib.ones(2, 3), dim=True),
    "transpose": lambda lib: lib.ones(2, 3).transpose(0, True),
    "unsqueeze": lambda lib: lib.ones(2).unsqueeze(True),
    "squeeze": lambda lib: lib.ones(2, 1).squeeze(True),
    "cat": lambda lib: lib.cat([lib.ones(2, 1)] * 2, dim=True),
    "gather": lambda lib: lib.ones(2, 3).gather(True, lib.tensor([[0]])),
    "size": lambda lib: lib.ones(2, 3).size(True),
    "flatten": lambda lib: lib.ones(2, 3, 4).flatten(True),
    "cumsum": lambda lib: lib.ones(2, 3).cumsum(True),
    "view_first": lambda lib: lib.ones(2, 3).view(True, -1),
    "view_tuple_first": lambda lib: lib.ones(2, 3).view((True, -1)),
    "reshape": lambda lib: lib.ones(2, 3).reshape(True, -1),
    "repeat": lambda lib: lib.ones(2).repeat(True),
    "permute": lambda lib: lib.ones(2, 3).permute(True, False),
    "expand": lambda lib: lib.ones(1).expand(True),
    "tile": lambda lib: lib.ones(2).tile((True,)),
    "randint_size": lambda lib: lib.randint(2, (True,)),
    "flip_dims": lambda lib: lib.flip(lib.ones(2, 3), (True,)),
    "split_size": lambda lib: lib.ones(2, 3).split(True),
    "tensor_split": lambda lib: lib.ones(2, 3).tensor_split(True),
    "tensor_split_kw": lambda lib: lib.ones(2, 3).tensor_split(sections=True),
    "hsplit": lambda lib: lib.ones(2, 3).hsplit(True),
    "cummax": lambda lib: lib.ones(2, 3).cummax(True),
    "renorm": lambda lib: lib.ones(2, 3).renorm(2, True, 1.0),
    "index_add": lambda lib: lib.ones(2, 3).index_add(True, lib.tensor([0]), lib.ones(2, 1)),
    "take_along_dim": lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0]]), dim=True),
    "rot90_first": lambda lib: lib.ones(2, 3).rot90(1, (True, 0)),
    "nn_flatten": lambda lib: lib.nn.Flatten(0, True)(lib.ones(2, 3)),
}
BOOL_SAME_MESSAGE = {
    "zeros": lambda lib: lib.zeros(True),
    "zeros_tuple": lambda lib: lib.zeros((True, 2)),
    "ones_varargs": lambda lib: lib.ones(True, False),
    "randn": lambda lib: lib.randn(True),
    "full": lambda lib: lib.full((True,), 1.0),
    "new_zeros": lambda lib: lib.ones(2).new_zeros(True),
    "new_ones": lambda lib: lib.ones(2).new_ones((True,)),
    "reshape_tuple": lambda lib: lib.ones(2, 3).reshape((True, -1)),
    "reshape_alone": lambda lib: lib.ones(2, 3).reshape(True),
    "repeat_varargs": lambda lib: lib.ones(2).repeat(True, 2),
    "expand_tuple": lambda lib: lib.ones(1, 3).expand((True, 3)),
    "permute_tuple": lambda lib: lib.ones(2, 3).permute((True, 0)),
    "flip": lambda lib: lib.ones(2, 3).flip(True),
    "unflatten": lambda lib: lib.ones(2, 3).unflatten(1, (True, 3)),
    "roll": lambda lib: lib.ones(2, 3).roll((True, 1), (0, 1)),
    "split_sizes": lambda lib: lib.ones(2, 3).split([True, 2], 1),
    "tensordot": lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(2, 3), dims=([True], [1])),
    "one_hot": lambda lib: _F(lib).one_hot(lib.tensor([0]), True),
}


@pytest.mark.parametrize("name", sorted(BOOL_REFUSED))
def test_bool_where_an_int_is_wanted(name):
    check_raises(BOOL_REFUSED[name])


@pytest.mark.parametrize("name", sorted(BOOL_SAME_MESSAGE))
def test_bool_where_an_int_list_is_wanted_named_as_pytorch_names_it(name):
    same_error(BOOL_SAME_MESSAGE[name])


def test_bools_after_the_first_of_an_int_list_are_indices():
    same(lambda lib: [lib.zeros(2, True), lib.zeros((2, True)), lib.ones(2, 3).view(3, True, 2),
                      lib.ones(2, 3).reshape(2, 3, True), lib.ones(2, 3).repeat(2, True),
                      lib.ones(1, 3).expand(2, True, 3), lib.ones(2, 3).flip((0, True)),
                      lib.ones(2, 3).sum(dim=(0, True)), lib.ones(2, 3).amax((0, True)),
                      lib.ones(2, 3).roll((1, True), (0, 1)), lib.ones(2, 3).split([1, True, 1], 1),
                      lib.ones(2, 3).unflatten(1, (3, True)), lib.nn.Linear(True, 2).weight.shape,
                      lib.ones(2).std(True), lib.ones(2, 3).sum(1, True),
                      lib.arange(6.0).reshape(2, 3).rot90(1, (0, True)),
                      lib.arange(6.0).reshape(2, 3).movedim((0, True), (1, 0)),
                      lib.arange(6.0).reshape(2, 3).tensor_split((1, True), 1)])
    same_error(lambda lib: lib.ones(2, 3).sum(dim=(1, True)))  # (dim 1 twice)


@pytest.mark.parametrize("module", ["InstanceNorm1d", "InstanceNorm2d"])
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True}], ids=["plain", "affine", "tracked"])
@pytest.mark.parametrize("train", [True, False])
def test_instance_norm_output_is_a_view(module, kw, train):
    """PyTorch's instance_norm runs batch_norm on the input viewed as one sample and views the result back: its
    output's node is ViewBackward0 (torchish said NativeBatchNormBackward0)."""
    def fn(lib):
        m = getattr(lib.nn, module)(3, **kw).train(train)
        x = lib.ones((2, 3, 4) if module.endswith("1d") else (2, 3, 2, 2), requires_grad=True)
        return m(x).grad_fn.name()
    same(fn)
