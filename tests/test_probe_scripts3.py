"""Regression tests from running vision-style PyTorch programs (CNN training, augmentation with tensor ops,
U-Net / autoencoder decoders, evaluation bookkeeping) on torchish and on PyTorch."""
import numpy as np
import pytest

import torchish
from oracle import needs_torch, torch


def _outcome(fn, lib):
    """``fn(lib)``'s shape / length, or the builtin exception type it raised."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__
    return tuple(r.shape) if hasattr(r, "shape") else len(r)


@needs_torch
def test_int_list_arguments_by_keyword():
    # torchvision-style code: img.flip(dims=[-1]), x.permute(dims=...), x.view(size=...), x.repeat(repeats=...)
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    calls = [
        lambda T, x: T.flip(x, dims=[2]), lambda T, x: x.flip(dims=(0, -1)), lambda T, x: x.flip(dims=T.Size([1])),
        lambda T, x: T.permute(x, dims=(1, 0, 2)), lambda T, x: x.permute(dims=[2, 0, 1]),
        lambda T, x: x.reshape(shape=(6, 4)), lambda T, x: T.reshape(x, shape=(4, -1)),
        lambda T, x: x.view(size=(6, 4)), lambda T, x: x.view(dtype=T.int32),
        lambda T, x: x.repeat(repeats=(1, 2, 1)), lambda T, x: x[:, :1].expand(size=(2, 5, 4)),
        lambda T, x: x[:, :1].expand(size=(-1, 3, -1), implicit=True),
        lambda T, x: x.sum_to_size(size=(3, 1)), lambda T, x: x.clone().resize_(size=(4, 6)),
        lambda T, x: x.split(split_size=2, dim=2)[1], lambda T, x: T.split(x, split_size_or_sections=[1, 3], dim=2)[1],
        lambda T, x: T.tensor_split(x, sections=2, dim=1)[0], lambda T, x: x.tensor_split(indices=[1, 3], dim=2)[2],
        lambda T, x: x.tensor_split(tensor_indices_or_sections=T.tensor([1]), dim=1)[1],
    ]
    for f in calls:
        ref, got = f(torch, torch.tensor(a)), f(torchish, torchish.tensor(a))
        assert got.dtype.itemsize == ref.dtype.itemsize
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
    assert torchish.rand(size=(2, 3)).shape == (2, 3) and torchish.randn(size=[4]).shape == (4,)


@needs_torch
def test_int_list_keyword_errors():
    bad = [lambda T: T.ones(2, 3).flip(), lambda T: T.ones(2, 3).flip(0, dims=[0]), lambda T: T.ones(2).reshape(),
           lambda T: T.ones(2).repeat(), lambda T: T.ones(2).view(), lambda T: T.ones(2).sum_to_size(),
           lambda T: T.ones(2).view(size=(2,), dtype=T.int32), lambda T: T.rand((2,), size=(2,)),
           lambda T: T.ones(2, 3).permute(dims=0), lambda T: T.ones(2).view(size=2), lambda T: T.rand(size=3),
           lambda T: T.ones(2, 3).tensor_split(sections=[1]), lambda T: T.ones(4).tensor_split(2, sections=2),
           lambda T: T.ones(4).split(split_size_or_sections=2), lambda T: T.split(T.ones(4), split_size=2),
           lambda T: T.ones(24).sum_to_size(1, 1, 4), lambda T: T.ones(2, 3).sum_to_size(2, 1),
           lambda T: T.ones(3).sum_to_size(1, 3), lambda T: T.ones(1, 3, 4).sum_to_size(1, 1, 4)]
    for f in bad:
        assert _outcome(f, torchish) == _outcome(f, torch)
