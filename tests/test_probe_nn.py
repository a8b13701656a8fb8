"""Regression tests from differential probing of torchish.nn against PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


def _image(*shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=shape).astype(np.uint8)


@needs_torch
@pytest.mark.parametrize("shape,kw", [
    ((1, 2, 5), dict(scale_factor=2.5)),
    ((1, 3, 5, 7), dict(scale_factor=2)),
    ((1, 3, 5, 7), dict(size=(4, 9), mode="nearest-exact")),
    ((1, 2, 2, 3, 2), dict(size=(3, 4, 5))),
])
def test_interpolate_uint8_nearest_matches_torch(shape, kw):
    a = _image(*shape)
    ref = torch.nn.functional.interpolate(torch.tensor(a), **kw)
    got = torchish.nn.functional.interpolate(torchish.tensor(a), **kw)
    assert got.dtype == torchish.uint8
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@needs_torch
@pytest.mark.parametrize("kw", [
    dict(scale_factor=1.6, mode="bilinear"),
    dict(scale_factor=0.5, mode="bilinear"),
    dict(size=(3, 4), mode="bilinear", antialias=True),
    dict(size=(8, 11), mode="bilinear", align_corners=True),
    dict(size=(9, 13), mode="bicubic"),
])
def test_interpolate_uint8_bilinear_bicubic(kw):
    # PyTorch resizes uint8 images separably (width, then height), rounding half up after each pass; its fixed-point
    # weights can still move a rare pixel by one.
    a = _image(2, 3, 6, 7)
    ref = torch.nn.functional.interpolate(torch.tensor(a), **kw).numpy().astype(int)
    got = torchish.nn.functional.interpolate(torchish.tensor(a), **kw)
    assert got.dtype == torchish.uint8
    diff = np.abs(got.numpy().astype(int) - ref)
    assert diff.max() <= 1 and (diff != 0).mean() < 0.05


@pytest.mark.parametrize("dtype,mode,shape", [
    (np.int32, "nearest", (1, 1, 2, 3)),
    (np.uint8, "linear", (1, 1, 3)),
    (np.uint8, "area", (1, 1, 2, 3)),
])
def test_interpolate_integer_unsupported_raises(dtype, mode, shape):
    x = torchish.tensor(np.zeros(shape, dtype=dtype))
    with pytest.raises(NotImplementedError):
        torchish.nn.functional.interpolate(x, scale_factor=2, mode=mode)
