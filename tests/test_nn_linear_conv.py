"""Linear, Bilinear, Identity, Flatten/Unflatten, Conv1d/2d/3d, ConvTranspose1d/2d/3d and the channel
rearrangements (PixelShuffle/Unshuffle, ChannelShuffle) against PyTorch: outputs, input and parameter gradients,
state_dict keys, repr, initialisation bounds and errors."""
import math

import numpy as np
import pytest

from layer_oracle import check_module
from oracle import arr, check, check_raises, torch, torchish

F = torchish.nn.functional


# ----------------------------------------------------------------------------------------------------------------
# linear


@pytest.mark.parametrize("make,shapes", [
    (lambda nn: nn.Linear(3, 4), [(2, 3)]),
    (lambda nn: nn.Linear(3, 4, bias=False), [(2, 5, 3)]),
    (lambda nn: nn.Linear(3, 2), [(3,)]),
    (lambda nn: nn.Bilinear(2, 3, 4), [(5, 2), (5, 3)]),
    (lambda nn: nn.Bilinear(2, 3, 4, bias=False), [(2, 2), (2, 3)]),
    (lambda nn: nn.Identity(3, foo=1), [(2, 3)]),
    (lambda nn: nn.Flatten(), [(2, 3, 2)]),
    (lambda nn: nn.Flatten(0, -2), [(2, 3, 2)]),
    (lambda nn: nn.Unflatten(1, (2, 3)), [(2, 6)]),
    (lambda nn: nn.Unflatten(-1, (2, -1)), [(2, 6)]),
])
def test_linear_family(make, shapes):
    check_module(make, [arr(*s, seed=i) for i, s in enumerate(shapes)])


def test_linear_one_kernel_grad_fn():
    x = torchish.ones(2, 3, requires_grad=True)
    y = F.linear(x, torchish.ones(4, 3), torchish.ones(4))
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    # one node does the whole linear; it shows PyTorch's inputs of addmm: (bias: no grad), x, weight.t()
    assert y.grad_fn.next_functions[0] == (None, 0)
    assert y.grad_fn.next_functions[1][0] is x.grad_fn or type(y.grad_fn.next_functions[1][0]).__name__ == \
        "AccumulateGrad"
    assert y.grad_fn.next_functions[2] == (None, 0)  # (the weight has no grad either)


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_linear_grad_fn_name_follows_the_input_rank_as_pytorch():
    """One node, named as the node PyTorch's at::linear leaves on top: a 1-d or N-d input is viewed as a matrix and
    the result viewed back (ViewBackward0 with a bias; SqueezeBackward4 / UnsafeViewBackward0 without)."""
    def names(T):
        w, b = T.ones(4, 3, requires_grad=True), T.ones(4, requires_grad=True)
        return [T.nn.functional.linear(T.ones(*shape, requires_grad=grad_x), w, bias).grad_fn.name()
                for shape in [(3,), (2, 3), (2, 5, 3), (2, 2, 5, 3), (2, 0, 3)] for bias in (b, None)
                for grad_x in (True, False)]
    assert names(torchish) == names(torch)


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.functional.linear(T.ones(2, 3), T.ones(4, 5)),
    lambda T: T.nn.functional.linear(T.ones(2, 3), T.ones(4, 3, dtype=T.float64)),
    lambda T: T.nn.functional.linear(T.ones(2, 3), T.ones(4, 3), T.ones(3)),
    lambda T: T.nn.functional.bilinear(T.ones(2, 3), T.ones(2, 5), T.ones(4, 3, 6)),
    lambda T: T.nn.functional.bilinear(T.ones(2, 3), T.ones(3, 5), T.ones(4, 3, 5)),
    lambda T: T.nn.Unflatten(1, [2, 2.0]),
    lambda T: T.nn.Unflatten(1, 4),
])
def test_linear_errors(fn):
    check_raises(fn)


def test_linear_error_message():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x4\)"):
        F.linear(torchish.ones(2, 3), torchish.ones(4, 5))


def test_default_init_bounds_and_rng():
    torchish.manual_seed(0)
    a = torchish.nn.Linear(50, 40)
    torchish.manual_seed(0)
    b = torchish.nn.Linear(50, 40)
    assert np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())   # from torchish's generator
    bound = 1 / math.sqrt(50)
    w = a.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound                      # uniform(-b, b)
    assert np.abs(a.bias.detach().numpy()).max() <= bound
    conv = torchish.nn.Conv2d(4, 6, 3)
    cb = 1 / math.sqrt(4 * 9)
    assert np.abs(conv.weight.detach().numpy()).max() <= cb
    assert np.abs(conv.bias.detach().numpy()).max() <= cb
    ct = torchish.nn.ConvTranspose2d(4, 6, 3, groups=2)                            # fan_in from weight dim 1
    tb = 1 / math.sqrt(3 * 9)
    assert np.abs(ct.weight.detach().numpy()).max() <= tb
    bil = torchish.nn.Bilinear(9, 3, 2)
    assert np.abs(bil.weight.detach().numpy()).max() <= 1 / 3


# ----------------------------------------------------------------------------------------------------------------
# convolutions


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.Conv1d(2, 4, 3), (2, 2, 7)),
    (lambda nn: nn.Conv1d(4, 4, 3, stride=2, padding=2, dilation=2, groups=4, bias=False), (1, 4, 9)),
    (lambda nn: nn.Conv1d(2, 3, 4, padding="same", padding_mode="circular"), (1, 2, 6)),
    (lambda nn: nn.Conv1d(2, 3, 3), (2, 6)),                                               # unbatched
    (lambda nn: nn.Conv2d(2, 4, 3), (2, 2, 6, 5)),
    (lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2), (1, 4, 7, 6)),
    (lambda nn: nn.Conv2d(2, 2, 4, padding="same", dilation=1), (1, 2, 5, 5)),
    (lambda nn: nn.Conv2d(2, 3, 3, padding="valid"), (1, 2, 5, 4)),
    (lambda nn: nn.Conv2d(2, 3, 3, padding=2, padding_mode="reflect"), (1, 2, 5, 4)),
    (lambda nn: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="replicate"), (1, 2, 4, 4)),
    (lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular", stride=2), (2, 4, 4)),
    (lambda nn: nn.Conv2d(2, 3, 2, padding="same", padding_mode="reflect"), (1, 2, 4, 4)),
    (lambda nn: nn.Conv3d(2, 2, 2, stride=(1, 2, 1), padding=1), (1, 2, 3, 4, 3)),
    (lambda nn: nn.Conv3d(2, 4, 3, padding="same", groups=2, padding_mode="replicate"), (1, 2, 3, 3, 3)),
])
def test_conv(make, shape):
    check_module(make, [arr(*shape)])


@pytest.mark.parametrize("make,shape,kwargs", [
    (lambda nn: nn.ConvTranspose1d(2, 3, 3), (2, 2, 5), None),
    (lambda nn: nn.ConvTranspose1d(4, 2, 3, stride=3, padding=1, output_padding=2, groups=2, bias=False),
     (1, 4, 4), None),
    (lambda nn: nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1), (1, 2, 3, 4), None),
    (lambda nn: nn.ConvTranspose2d(4, 2, (2, 3), stride=(2, 1), dilation=(1, 2), groups=2), (2, 4, 3, 3), None),
    (lambda nn: nn.ConvTranspose2d(2, 2, 3, stride=2), (2, 3, 3), None),                    # unbatched
    (lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), (1, 2, 3, 3), {"output_size": (6, 6)}),
    (lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=3), (1, 2, 2, 2), {"output_size": [1, 3, 7, 8]}),
    (lambda nn: nn.ConvTranspose3d(2, 2, 2, stride=2, padding=(0, 1, 0)), (1, 2, 2, 3, 2), None),
])
def test_conv_transpose(make, shape, kwargs):
    check_module(make, [arr(*shape)], kwargs=kwargs)


@pytest.mark.parametrize("fn,w", [
    (lambda T, x, w: T.nn.functional.conv1d(x[0, :, :, 0], w[:, :, :, 0], stride=2, padding=1), (3, 2, 2, 2)),
    (lambda T, x, w: T.nn.functional.conv2d(x, w, None, 1, "same", 2), (3, 2, 2, 2)),
    (lambda T, x, w: T.nn.functional.conv_transpose2d(x, w, None, 2, 1, 1, 1, 1), (2, 3, 3, 3)),
    (lambda T, x, w: T.nn.functional.conv_transpose1d(x[:, :, :, 0], w[:, :, 0], stride=2), (2, 3, 3, 3)),
    (lambda T, x, w: T.nn.functional.conv3d(x[:, :, None], w[:, :, None], padding=(1, 0, 1)), (3, 2, 2, 2)),
    (lambda T, x, w: T.nn.functional.conv_transpose3d(x[:, :, None], w[:, :, None], stride=(1, 2, 2)), (2, 3, 2, 2)),
])
def test_conv_functional(fn, w):
    check(fn, [arr(1, 2, 5, 4), arr(*w, seed=1)])


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 2, 3, 3), stride=2, padding="same"),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 2, 3, 3), padding="foo"),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 3, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.ones(5, 5), T.ones(3, 2, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 2, 2), T.ones(3, 2, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 1, 3, 3), groups=2),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 2, 3, 3), padding=-1),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 2, 3, 3), stride=0),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 2, 3, 3), T.ones(4)),
    lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 2, 3, 3, dtype=T.float64)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 2, 5, 5), T.ones(2, 3, 3, 3), output_padding=1),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 3, 4, 4), T.ones(4, 2, 3, 3)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 1, 1), T.ones(4, 2, 1, 1), padding=1),
    lambda T: T.nn.Conv2d(3, 4, 3, groups=2),
    lambda T: T.nn.Conv2d(2, 3, 3, groups=2),
    lambda T: T.nn.Conv2d(2, 4, 3, padding="same", stride=2),
    lambda T: T.nn.Conv2d(2, 4, 3, padding="full"),
    lambda T: T.nn.Conv2d(2, 4, 3, padding_mode="mirror"),
    lambda T: T.nn.ConvTranspose2d(2, 4, 3, padding_mode="reflect"),
    lambda T: T.nn.Conv2d(2, 2, 7, padding=3, padding_mode="reflect")(T.ones(1, 2, 3, 3)),
    lambda T: T.nn.ConvTranspose2d(2, 3, 3, stride=2)(T.ones(1, 2, 3, 3), output_size=(9, 9)),
    lambda T: T.nn.ConvTranspose2d(2, 3, 3, stride=2)(T.ones(1, 2, 3, 3), output_size=(7,)),
])
def test_conv_errors(fn):
    check_raises(fn)


def test_conv_error_messages():
    with pytest.raises(RuntimeError, match=r"expected input\[1, 2, 5, 5\] to have 3 channels, but got 2 channels"):
        F.conv2d(torchish.ones(1, 2, 5, 5), torchish.ones(3, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"Kernel size: \(3 x 3\)"):
        F.conv2d(torchish.ones(1, 2, 2, 2), torchish.ones(3, 2, 3, 3))


def test_conv_layer_is_one_node():
    m = torchish.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")
    y = m(torchish.ones(1, 2, 4, 4))
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    assert all(type(f).__name__ == "AccumulateGrad" for f, _ in y.grad_fn.next_functions if f is not None)


# ----------------------------------------------------------------------------------------------------------------
# pixel / channel shuffle


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.PixelShuffle(2), (2, 8, 2, 3)),
    (lambda nn: nn.PixelShuffle(3), (9, 1, 2)),
    (lambda nn: nn.PixelUnshuffle(2), (1, 2, 4, 6)),
    (lambda nn: nn.PixelUnshuffle(2), (2, 3, 1, 2, 4)),
    (lambda nn: nn.ChannelShuffle(2), (2, 6, 2, 1)),
    (lambda nn: nn.ChannelShuffle(3), (1, 6, 2)),
])
def test_shuffles(make, shape):
    check_module(make, [arr(*shape)])


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.functional.pixel_shuffle(T.ones(1, 3, 2, 2), 2),
    lambda T: T.nn.functional.pixel_shuffle(T.ones(3, 2), 2),
    lambda T: T.nn.functional.pixel_unshuffle(T.ones(1, 3, 3, 2), 2),
    lambda T: T.nn.functional.channel_shuffle(T.ones(1, 3, 2, 2), 2),
    lambda T: T.nn.functional.channel_shuffle(T.ones(4, 2), 2),
])
def test_shuffle_errors(fn):
    check_raises(fn)


def test_bilinear_batch_dimension_mismatch_names_the_dim():
    err = check_raises(lambda T: T.nn.functional.bilinear(T.ones(2, 5, 2), T.ones(2, 4, 3), T.ones(4, 2, 3)))
    with pytest.raises(RuntimeError) as got:
        torchish.nn.functional.bilinear(torchish.ones(2, 5, 2), torchish.ones(2, 4, 3), torchish.ones(4, 2, 3))
    assert str(got.value) == str(err)
