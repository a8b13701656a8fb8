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
             "x.long().add(2.5, y.long())", "x.sub(True, y)",
             # the matrix forms: beta (and alpha) first
             "x.view(3, 1).addmm(0.5, y.view(3, 1), y.view(1, 1))", "T.addmm(0.5, x.view(3, 1), 2, y.view(3, 1), "
             "y.view(1, 1))", "x.view(3, 1).clone().addmm_(2, -1, y.view(3, 1), y.view(1, 1))",
             "x.addmv(0.5, y.view(3, 1), y[:1])", "x.view(3, 1).addr(2, 3, y, y[:1])", "x.view(1, 3, 1).baddbmm("
             "0.5, y.view(1, 3, 1), y.view(1, 1, 1))", "x.view(3, 1).addbmm(0.5, 2, y.view(1, 3, 1), y.view(1, 1, 1))",
             "x.view(3, 1).addmm(y.view(3, 1), y.view(1, 1), 0.5)", "x.view(3, 1).addmm(0.5, y.view(3, 1), "
             "y.view(1, 1), beta=2)", "x.view(3, 1).addmm(y.view(3, 1), 0.5, y.view(1, 1))"]
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


# ----------------------------------------------------------------------------------------------------------------
# whole programs, run with both libraries (parameters set from numpy, so no random draws are compared)


def _set_params(lib, module, seed):
    with lib.no_grad():
        for i, (_, p) in enumerate(module.named_parameters()):
            p.copy_(lib.tensor(np.random.default_rng(seed + i).uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
    return module


def _assert_same(ref, got, path="out"):
    if isinstance(ref, torch.Tensor):
        assert str(got.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1], path
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=2e-4, atol=2e-5, err_msg=path)
    elif isinstance(ref, (list, tuple)):
        assert len(got) == len(ref), path
        for i, (r, g) in enumerate(zip(ref, got)):
            _assert_same(r, g, f"{path}[{i}]")
    elif isinstance(ref, float):
        assert got == pytest.approx(ref, rel=2e-4, abs=2e-5), path
    else:
        assert got == ref, path


def _cnn_classifier_program(lib):
    nn = lib.nn
    model = _set_params(lib, nn.Sequential(
        nn.Conv2d(3, 4, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 3)), seed=1)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 3, 4, 4)).astype(np.float32), rng.integers(0, 3, 6)
    dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.from_numpy(x), lib.from_numpy(y)), batch_size=3)
    crit = nn.CrossEntropyLoss(label_smoothing=0.1, weight=lib.tensor([1.0, 2.0, 0.5]))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    losses = []
    for _ in range(1):
        for xb, yb in dl:
            opt.zero_grad()
            loss = crit(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    model.eval()
    with lib.no_grad():
        logits = model(lib.from_numpy(x))
    pred = logits.argmax(dim=1)
    cm = lib.zeros(3, 3, dtype=lib.int64).index_put_((lib.from_numpy(y), pred), lib.tensor(1), accumulate=True)
    top2 = logits.topk(2, dim=1).indices.eq(lib.from_numpy(y).view(-1, 1)).any(dim=1).sum().item()
    return losses, sched.get_last_lr(), logits, cm, top2, model[1].running_var, model[1].num_batches_tracked


@needs_torch
def test_program_cnn_classifier():
    _assert_same(_cnn_classifier_program(torch), _cnn_classifier_program(torchish))


def _unet_old_optimizer_program(lib):
    nn, F = lib.nn, lib.nn.functional

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.GroupNorm(2, 4), nn.ReLU())
            self.pool = nn.MaxPool2d(2)
            self.mid = nn.Conv2d(4, 4, 3, padding=1, groups=2)
            self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
            self.head = nn.Conv2d(8, 3, 1)

        def forward(self, x):
            c1 = self.down(x)
            c2 = F.relu(self.mid(self.pool(c1)))
            skip = F.interpolate(c2, size=c1.shape[-2:], mode="bilinear", align_corners=True)
            return self.head(lib.cat([self.up(c2) + skip, c1], dim=1))

    m = _set_params(lib, UNet(), seed=4)
    rng = np.random.default_rng(5)
    x = lib.tensor(rng.standard_normal((2, 2, 6, 6)).astype(np.float32))
    tgt = lib.from_numpy(rng.integers(0, 3, (2, 6, 6)))
    tgt[0, 0] = 255
    state = {}
    losses = []
    body = lib.optim.SGD([p for n, p in m.named_parameters() if not n.startswith("head")], lr=0.1)
    for step in range(1, 3):
        m.zero_grad()
        loss = F.cross_entropy(m(x), tgt, ignore_index=255)
        loss.backward()
        losses.append(loss.item())
        body.step()
        with lib.no_grad():  # the head: an Adam written the way older third-party code writes it
            for p in m.head.parameters():
                if p not in state:
                    state[p] = (lib.zeros_like(p), lib.zeros_like(p))
                exp_avg, exp_avg_sq = state[p]
                exp_avg.mul_(0.9).add_(1 - 0.9, p.grad)
                exp_avg_sq.mul_(0.999).addcmul_(1 - 0.999, p.grad, p.grad)
                p.data.addcdiv_(-0.01 / (1 - 0.9 ** step), exp_avg, exp_avg_sq.sqrt().add_(1e-8))
    return losses, m.up.weight, m.head.bias.grad, m.mid.weight


@needs_torch
def test_program_unet_with_old_style_adam():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = _unet_old_optimizer_program(torch)
        got = _unet_old_optimizer_program(torchish)
    _assert_same(ref, got)


def _augment_program(lib):
    rng = np.random.default_rng(7)
    imgs = lib.from_numpy(rng.integers(0, 256, (2, 3, 6, 6)).astype(np.uint8))
    x = imgs.float().div_(255.0)
    mean, std = lib.tensor([0.485, 0.456, 0.406]).view(3, 1, 1), lib.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    xn = (x - mean) / std
    theta = lib.tensor([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]]).repeat(2, 1, 1)
    grid = lib.nn.functional.affine_grid(theta, list(xn.shape), align_corners=False)
    warped = lib.nn.functional.grid_sample(xn, grid, padding_mode="reflection", align_corners=False)
    crops = lib.stack([xn[i, :, oy:oy + 4, ox:ox + 4] for i, (oy, ox) in enumerate([(0, 1), (2, 2)])])
    patches = lib.nn.functional.unfold(xn, kernel_size=2, stride=2)
    return (lib.flip(xn, dims=[3]), xn.roll(shifts=(1, -2), dims=(2, 3)), warped, crops,
            lib.nn.functional.fold(patches, (6, 6), 2, stride=2), lib.nn.functional.pixel_shuffle(xn[:, :1].repeat(
                1, 4, 1, 1), 2), (xn * std + mean).mul(255).round().to(lib.uint8).eq(imgs).all().item(),
            xn.permute(0, 2, 3, 1).contiguous().view(2, -1, 3).mean(dim=1))


@needs_torch
def test_program_tensor_augmentation():
    _assert_same(_augment_program(torch), _augment_program(torchish))
