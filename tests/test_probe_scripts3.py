"""Regression tests from running vision-style PyTorch programs (CNN training, augmentation with tensor ops,
U-Net / autoencoder decoders, evaluation bookkeeping) on torchish and on PyTorch."""
import warnings

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
        lambda T, x: x.hsplit(1, 2)[1], lambda T, x: x.hsplit(sections=3)[2], lambda T, x: T.vsplit(x, indices=[1])[1],
        lambda T, x: x.dsplit(indices=[1, 2])[2], lambda T, x: x.tile(2, 1), lambda T, x: x.tile(dims=(2, 1)),
        lambda T, x: x.tile(2), lambda T, x: T.tile(x, dims=[1, 2]),
        lambda T, x: T.nn.functional.one_hot(input=x.long()[0, 0], num_classes=5),
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
           lambda T: T.ones(3).sum_to_size(1, 3), lambda T: T.ones(1, 3, 4).sum_to_size(1, 1, 4),
           lambda T: T.ones(2, 4).hsplit(sections=[1]), lambda T: T.ones(2, 4).hsplit(2, sections=2),
           lambda T: T.ones(2, 4).hsplit(), lambda T: T.hsplit(T.ones(2, 4), 1, 2), lambda T: T.ones(2).tile(),
           lambda T: T.ones(2).tile(dims=2), lambda T: T.tile(T.ones(2), 2), lambda T: T.tile(T.ones(2), 2, 1),
           lambda T: T.nn.functional.one_hot(tensor=T.tensor([0]), num_classes=2)]
    for f in bad:
        assert _outcome(f, torchish) == _outcome(f, torch)


@needs_torch
def test_deprecated_scalar_first_overloads():
    # old optimizer code: p.data.add_(-lr, grad); exp_avg_sq.addcmul_(1 - beta2, grad, grad); addcdiv_(-step, m, d)
    calls = ["x.clone().add_(-0.5, y)", "T.add(x, 2, y)", "x.sub(2, y)", "x.clone().sub_(0.5, y)", "x.add(1, 2)",
             "T.sub(x, 1, 2.5)", "T.subtract(x, 1, 2)", "x.clone().addcmul_(0.5, y, y)", "T.addcdiv(x, -2, y, y + 1)",
             "T.addcmul(x, 2, y, y, out=T.empty(3))", "x.long().add(2, y.long())", "x.add(2, y.long())",
             # errors: the deprecated form is add/sub only, keyword and positional alpha/value together
             "T.subtract(x, 2, y)", "x.clone().subtract_(2, y)", "x.add(2, y, alpha=3)", "x.add(y, 2)",
             "x.add(1, y, y)", "x.addcmul(0.5, y, y, value=2)", "x.addcmul(y, y, 0.5)",
             "x.long().add(2.5, y.long())", "x.sub(True, y)"]
    for c in calls:
        out = []
        for T in (torch, torchish):
            x, y = T.tensor([1.0, -2.0, 0.5]), T.arange(3.0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = eval(c)
                out.append((str(r.dtype).split(".")[-1], r.tolist()))
            except (TypeError, RuntimeError) as e:
                out.append(type(e).__name__)
        assert out[0] == out[1], c
    with pytest.warns(UserWarning, match="deprecated"):
        torchish.ones(2).add_(-0.1, torchish.ones(2))


@needs_torch
def test_negative_numpy_strides_refused():
    # a horizontally flipped numpy image must be copied before it becomes a tensor
    img = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, :, ::-1]
    for lib in (torch, torchish):
        for make in (lib.from_numpy, lib.tensor, lib.as_tensor, lib.Tensor,
                     lambda a: lib.utils.data.default_collate([a, a])):
            with pytest.raises(ValueError, match="negative"):
                make(img)
        np.testing.assert_array_equal(lib.from_numpy(img.copy()).numpy(), img)
        assert lib.from_numpy(np.zeros((0, 3))[::-1]).shape == (0, 3)
        assert lib.tensor([img[0, 0], img[1, 0]]).shape == (2, 4)   # a list of arrays is copied element-wise


@needs_torch
def test_antialias_resize_of_one_pixel_wide_image():
    # PyTorch's float anti-aliasing kernel gives every output row the first row's value when it resizes the height
    # of a one-pixel-wide result; its backward (and the uint8 kernel) are the true resize
    a = np.random.default_rng(0).standard_normal((1, 2, 5, 3)).astype(np.float32)
    img = (np.arange(30).reshape(1, 1, 5, 6) * 8).astype(np.uint8)
    for mode, size in (("bilinear", (4, 1)), ("bicubic", (7, 1)), ("bilinear", (5, 1)), ("bicubic", (2, 2))):
        got = []
        for lib in (torch, torchish):
            x = lib.tensor(a, requires_grad=True)
            y = lib.nn.functional.interpolate(x, size=size, mode=mode, antialias=True)
            (y * lib.arange(float(y.numel())).view(y.shape)).sum().backward()
            u = lib.nn.functional.interpolate(lib.tensor(img), size=size, mode=mode, antialias=True)
            got.append((y.detach().numpy(), x.grad.numpy(), u.numpy()))
        for r, g in zip(*got):
            np.testing.assert_allclose(g, r, rtol=2e-4, atol=2e-5)
