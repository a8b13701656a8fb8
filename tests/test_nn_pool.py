"""Pooling layers and their functional forms against PyTorch: max (indices, ceil_mode, padding, dilation), average
(ceil_mode, count_include_pad, divisor_override), adaptive (non-divisible windows), max-unpooling and LP pooling;
values, indices, gradients (to the first maximum), repr and errors."""
import numpy as np
import pytest

from layer_oracle import check_module
from oracle import arr, check, check_raises, needs_torch, raised, same, torch, torchish


def _ties(*shape):
    """Inputs with many equal values (rounded, some clamped to 0) so tie-breaking is exercised."""
    return np.maximum(np.round(arr(*shape, seed=3), 1), 0).astype(np.float32)


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.MaxPool1d(2), (2, 3, 7)),
    (lambda nn: nn.MaxPool1d(3, 2, 1, ceil_mode=True, return_indices=True), (2, 6)),
    (lambda nn: nn.MaxPool1d(2, 1, 1, dilation=2, return_indices=True), (1, 2, 6)),
    (lambda nn: nn.MaxPool2d(2), (2, 2, 5, 4)),
    (lambda nn: nn.MaxPool2d(3, 2, 1), (1, 2, 6, 7)),
    (lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), (1, 2, 6, 7)),
    (lambda nn: nn.MaxPool2d((3, 2), (2, 1), (1, 1), dilation=(2, 1), return_indices=True), (1, 2, 7, 5)),
    (lambda nn: nn.MaxPool2d(2, return_indices=True, ceil_mode=True), (2, 5, 5)),
    (lambda nn: nn.MaxPool3d(2, return_indices=True), (1, 2, 4, 3, 4)),
    (lambda nn: nn.MaxPool3d((1, 2, 2), padding=(0, 1, 1), ceil_mode=True), (1, 1, 2, 3, 3)),
])
def test_max_pool(make, shape):
    check_module(make, [arr(*shape)])


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool2d(2, 1),
    lambda nn: nn.MaxPool2d(3, 1, 1, return_indices=True),
    lambda nn: nn.MaxPool2d(2, 2, dilation=2, ceil_mode=True),
    lambda nn: nn.AdaptiveMaxPool2d((3, 2), return_indices=True),
])
def test_max_pool_gradient_goes_to_first_maximum(make):
    check_module(make, [_ties(2, 2, 6, 5)])


def test_max_pool_all_neg_inf_and_nan():
    x = np.full((1, 1, 2, 2), -np.inf, np.float32)
    check(lambda T, a: T.nn.functional.max_pool2d(a, 2, padding=1, return_indices=True), [x], grad=False)
    y = np.array([[[[1.0, np.nan], [np.nan, 1.0]]]], np.float32)
    check(lambda T, a: T.nn.functional.max_pool2d(a, 2, return_indices=True), [y], grad=False)


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.AvgPool1d(3, 2, 1), (2, 3, 8)),
    (lambda nn: nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False), (3, 8)),
    (lambda nn: nn.AvgPool2d(2), (2, 2, 5, 4)),
    (lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True), (1, 2, 6, 7)),
    (lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 6, 7)),
    (lambda nn: nn.AvgPool2d((3, 2), (2, 1), (1, 0), divisor_override=5), (2, 5, 4)),
    (lambda nn: nn.AvgPool3d(2, ceil_mode=True, padding=1, count_include_pad=False), (1, 2, 3, 4, 3)),
    (lambda nn: nn.AvgPool3d((1, 2, 3), divisor_override=2), (1, 1, 2, 3, 4)),
])
def test_avg_pool(make, shape):
    check_module(make, [arr(*shape)])


def test_avg_pool_integer():
    x = arr(1, 2, 5, 5, lo=-20, hi=20, dtype=np.int64)
    check(lambda T, a: T.nn.functional.avg_pool2d(a, 3, 2, 1), [x], grad=False)
    check(lambda T, a: T.nn.functional.max_pool2d(a, 3, 2, 1, return_indices=True), [x], grad=False)


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    (lambda nn: nn.AdaptiveAvgPool2d((3, 4)), (2, 2, 7, 6)),
    (lambda nn: nn.AdaptiveAvgPool2d((None, 2)), (2, 5, 5)),
    (lambda nn: nn.AdaptiveAvgPool2d(1), (2, 3, 5, 4)),
    (lambda nn: nn.AdaptiveAvgPool3d((2, 3, 2)), (1, 2, 3, 5, 4)),
    (lambda nn: nn.AdaptiveMaxPool1d(4, return_indices=True), (2, 3, 7)),
    (lambda nn: nn.AdaptiveMaxPool2d((3, 4), return_indices=True), (2, 2, 7, 6)),
    (lambda nn: nn.AdaptiveMaxPool2d((5, None)), (2, 3, 4)),
    (lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True), (1, 1, 3, 5, 4)),
])
def test_adaptive_pool(make, shape):
    check_module(make, [arr(*shape)])


@pytest.mark.parametrize("nd,shape,kw", [
    (1, (2, 3, 8), {}),
    (2, (1, 2, 5, 4), {}),
    (2, (1, 2, 5, 5), {"output_size": (5, 5)}),
    (2, (2, 5, 4), {"stride": 1, "padding": 0}),
    (3, (1, 1, 4, 2, 4), {}),
])
def test_max_unpool(nd, shape, kw):
    stride = kw.get("stride", 2)

    def fn(T, x):
        F = T.nn.functional
        pool = getattr(F, f"max_pool{nd}d")
        unpool = getattr(T.nn, f"MaxUnpool{nd}d")(2, stride=stride)
        y, idx = pool(x, 2, stride, return_indices=True)
        return unpool(y, idx, output_size=kw.get("output_size"))

    check(fn, [arr(*shape)])


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.LPPool1d(2, 3, 2), (2, 3, 7)),
    (lambda nn: nn.LPPool1d(1.5, 2, ceil_mode=True), (1, 2, 5)),
    (lambda nn: nn.LPPool2d(2, 2), (2, 2, 4, 5)),
    (lambda nn: nn.LPPool2d(3, (2, 3), stride=(1, 2), ceil_mode=True), (1, 2, 5, 6)),
    (lambda nn: nn.LPPool3d(2, 2), (1, 1, 4, 4, 2)),
])
def test_lp_pool(make, shape):
    x = np.abs(arr(*shape)) + 0.1    # fractional powers of negatives are NaN in both
    check_module(make, [x.astype(np.float32)])


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.functional.max_pool2d(T.ones(1, 2, 5, 5), 2, padding=2),
    lambda T: T.nn.functional.avg_pool2d(T.ones(1, 2, 5, 5), 2, padding=2),
    lambda T: T.nn.functional.max_pool2d(T.ones(5, 5), 2),
    lambda T: T.nn.functional.max_pool2d(T.ones(1, 1, 1, 1), 2),
    lambda T: T.nn.functional.avg_pool2d(T.ones(1, 1, 1, 1), 2),
    lambda T: T.nn.functional.max_pool2d(T.ones(1, 2, 5, 5), 2, stride=0),
    lambda T: T.nn.functional.max_pool2d(T.ones(1, 2, 5, 5), 0, stride=1),
    lambda T: T.nn.functional.max_pool2d(T.ones(1, 2, 5, 5), 2, dilation=0),
    lambda T: T.nn.functional.max_pool2d(T.ones(1, 2, 5, 5), (2, 2, 2)),
    lambda T: T.nn.functional.max_pool1d(T.ones(5), 2),
    lambda T: T.nn.functional.avg_pool1d(T.ones(5), 2),
    lambda T: T.nn.functional.max_pool3d(T.ones(1, 5, 5), 2),
    lambda T: T.nn.functional.avg_pool2d(T.ones(1, 2, 5, 5), 2, divisor_override=0),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(5), 3),
    lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(5), 3),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 2, 0, 3), 3),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 2, 5, 5), (2, 2, 2)),
    lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(1, 2, 5), (2, 2)),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 2, 5, 5), -1),
    lambda T: T.nn.functional.max_unpool2d(T.ones(1, 1, 2, 2), T.full((1, 1, 2, 2), 30), 2),
    lambda T: T.nn.functional.max_unpool2d(T.ones(1, 1, 2, 2), T.full((1, 1, 2, 2), -1), 2),
    lambda T: T.nn.functional.max_unpool2d(T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2,
                                           output_size=(9, 9)),
    lambda T: T.nn.functional.max_unpool2d(T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2,
                                           output_size=(1, 2, 3)),
    lambda T: T.nn.functional.max_unpool2d(T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 3, dtype=T.long), 2),
    lambda T: T.nn.functional.max_unpool2d(T.ones(1, 2, 2), T.zeros(1, 2, 2), 2),
    lambda T: T.nn.functional.max_unpool2d(T.ones(2, 2), T.zeros(2, 2, dtype=T.long), 2),
])
def test_pool_errors(fn):
    check_raises(fn)


def test_pool_error_messages():
    F = torchish.nn.functional
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(torchish.ones(1, 2, 5, 5), 2, padding=2)
    with pytest.raises(RuntimeError, match=r"Calculated output size: \(1x0x0\). Output size is too small"):
        F.max_pool2d(torchish.ones(1, 1, 1, 1), 2)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 30 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(torchish.ones(1, 1, 2, 2), torchish.full((1, 1, 2, 2), 30), 2)


def test_pool_grad_fn_names():
    x = torchish.ones(1, 1, 4, 4, requires_grad=True)
    F = torchish.nn.functional
    assert type(F.max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(F.avg_pool2d(x, 2).grad_fn).__name__ == "AvgPool2DBackward0"
    assert type(F.adaptive_avg_pool2d(x, 3).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    assert type(F.adaptive_max_pool2d(x, 3).grad_fn).__name__ == "AdaptiveMaxPool2DBackward0"


@needs_torch
@pytest.mark.parametrize("shape,nd,size", [((3, 4), 2, 1), ((4,), 2, 1), ((3, 4), 3, 1), ((2, 3, 4, 5, 6), 2, 1),
                                           ((2, 3, 4, 5, 6), 2, (1, None)), ((2, 3, 4, 5, 1), 2, (1, None)),
                                           ((2, 0, 4), 2, 1), ((2, 2, 3, 4, 5, 6), 3, 1), ((2, 0, 3, 4), 2, 1),
                                           ((2, 0, 3, 4), 2, 2), ((3, 4), 2, 2)])
def test_adaptive_avg_pool_of_size_one_is_pytorchs_mean_shortcut(shape, nd, size):
    """PyTorch's 2-d/3-d adaptive average pooling to size 1 is the mean over the last nd dims before any check of
    the input's rank or sizes: 2-d, 1-d and 5-d inputs pool, empty dims give NaN, too few dims raise IndexError."""
    def run(T):
        x = T.tensor(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape), requires_grad=True)
        y = getattr(T.nn.functional, f"adaptive_avg_pool{nd}d")(x, size)
        if y.numel():
            (y * y).sum().backward()
        return y, x.grad
    outcome = raised(lambda: run(torch))
    if outcome is not None:
        assert raised(lambda: run(torchish)) == outcome
        return
    same(run)
