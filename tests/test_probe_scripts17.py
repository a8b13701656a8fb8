"""Regression tests from detection, segmentation, 3-D and audio code as research repositories write it:
cross_entropy with ignore_index, class weights and label smoothing, NeRF's hierarchical sampling by searchsorted
(NaN in the cdf), magnitude/phase of an STFT with silent frames, torch.signal.windows, a compiled mask-based speech
enhancement step through istft, and the messages of affine_grid/meshgrid/stft/istft. Each ``case_*`` is written
against the PyTorch API only; inputs and weights come from formulas (tests/oracle.py). Also probed and matching
(kept out for time): box utilities, pairwise IoU and GIoU/DIoU/CIoU losses, NMS by a while loop and batched NMS by
offsets, anchors from meshgrid, box-delta coding, the sigmoid focal loss, YOLO target assignment, roi_align by
affine_grid/grid_sample, dice and Lovasz losses, unfold/fold patches, an aux-loss segmentation head (compiled), mIoU
by bincount, NeRF volume rendering (compiled), PointNet with a T-Net (compiled), kNN/FPS/chamfer,
Rodrigues/quaternion/Kabsch rotations, stft/istft variants, log-mel and MFCC, SpecAugment, a sinc resampling kernel,
a conformer convolution module (compiled), CTC losses, scatter_reduce/unique voxelisation, pooling with ceil_mode and
max_unpool, channels_last strides."""
import pytest

from oracle import (assert_same, check_raises, formula_data as _data, formula_init as _init, run_both,
                    same_error, script_test, torch, torchish)


# ------------------------------------------------------------------------------------------------------- segmentation


def case_ce_ignore(lib):
    F = lib.nn.functional
    logits = (_data(lib, 2, 4, 3, 5) * 2).requires_grad_()
    target = (lib.arange(30).reshape(2, 3, 5) * 5 % 5)
    target[target == 4] = 255
    w = lib.tensor([1.0, 2.0, 0.5, 1.5])
    outs = []
    for ls in (0.0, 0.1):
        for red in ("mean", "sum", "none"):
            outs.append(F.cross_entropy(logits, target, weight=w, ignore_index=255, label_smoothing=ls, reduction=red))
    aux = F.cross_entropy(logits[:, :, :2], target[:, :2], ignore_index=255, label_smoothing=0.2)
    tot = sum(o.sum() for o in outs) + 0.4 * aux
    tot.backward()
    return outs, aux, logits.grad


# ------------------------------------------------------------------------------------------ 3-D / NeRF / point clouds


def _sample_pdf(lib, bins, weights, N_samples, det=True):
    weights = weights + 1e-5
    pdf = weights / lib.sum(weights, -1, keepdim=True)
    cdf = lib.cumsum(pdf, -1)
    cdf = lib.cat([lib.zeros_like(cdf[..., :1]), cdf], -1)
    u = lib.linspace(0., 1., steps=N_samples)
    u = u.expand(list(cdf.shape[:-1]) + [N_samples])
    u = u.contiguous()
    inds = lib.searchsorted(cdf, u, right=True)
    below = lib.max(lib.zeros_like(inds - 1), inds - 1)
    above = lib.min((cdf.shape[-1] - 1) * lib.ones_like(inds), inds)
    inds_g = lib.stack([below, above], -1)
    matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = lib.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = lib.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
    denom = (cdf_g[..., 1] - cdf_g[..., 0])
    denom = lib.where(denom < 1e-5, lib.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    samples = bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])
    return samples, inds


def case_hier_sample(lib):
    N, S = 3, 7
    z = lib.linspace(2., 6., S + 1).expand(N, S + 1).contiguous()
    bins = (0.5 * (z[..., 1:] + z[..., :-1])).requires_grad_()
    w = (_data(lib, N, S - 1) + 1).requires_grad_()
    samples, inds = _sample_pdf(lib, bins, w, 9)
    z_all, _ = lib.sort(lib.cat([z, samples.detach()], -1), -1)
    samples.sum().backward()
    ss = lib.searchsorted(lib.tensor([1., 2., 2., 3.]), lib.tensor([[2., 0.5], [3., 9.]]), right=True)
    ss2 = lib.searchsorted(lib.tensor([1., 2., 2., 3.]), lib.tensor([2., 0.5, 3.]), side="left")
    ss3 = lib.searchsorted(lib.tensor([1, 2, 2, 3]), 2, right=True)
    ss4 = lib.searchsorted(lib.tensor([3., 1., 2.]), lib.tensor([2.5]), sorter=lib.tensor([1, 2, 0]), out_int32=True)
    # PyTorch's binary search compares with plain IEEE operators: a NaN value goes last, and a NaN boundary on the
    # search path counts as smaller (a depth of NaN from a degenerate ray, a cdf of 0/0)
    nan = float("nan")
    cdf = lib.tensor([[0., 0.5, nan, nan], [0., 0.25, 0.5, 1.]])
    ss5 = [lib.searchsorted(cdf, lib.tensor([[0.3, 0.7, nan], [nan, 0.5, 2.]]), right=r) for r in (False, True)]
    ss6 = lib.bucketize(lib.tensor([nan, 1., 0.]), lib.tensor([0., nan, 2., nan]))
    return samples, inds, z_all, bins.grad, w.grad, ss, ss2, ss3, ss4, ss5, ss6


# -------------------------------------------------------------------------------------------------------------- audio


def case_magphase_with_silence(lib):
    # a clip with leading silence: its frames' spectra are exactly 0, where PyTorch's angle_backward gives 0 (the
    # rest a chirp: no bin near 0, where the phase is float noise)
    n = lib.arange(40.)
    x = lib.cat([lib.zeros(2, 24), lib.cos(n * n * 0.02 + lib.tensor([[0.], [1.]]))], dim=1).requires_grad_()
    w = lib.hann_window(16)
    spec = lib.stft(x, 16, hop_length=4, window=w, return_complex=True)
    mag, phase = spec.abs(), spec.angle()
    rebuilt = lib.polar(mag * 0.5, phase)
    y = lib.istft(rebuilt, 16, hop_length=4, window=w, length=64)
    # (the phase weighted by the magnitude: its gradient is 1/|z|, float noise in the small bins of the edge frames)
    loss = (y - x).pow(2).mean() + (phase * mag.detach()).sum()
    loss.backward()
    z = lib.tensor([0j, 1 + 1j, -2j], requires_grad=True)
    lib.angle(z).sum().backward()
    return mag, phase, y, x.grad, z.grad


def case_signal_windows(lib):
    # torch.signal.windows as spectral code uses it: a periodic window for the STFT, a symmetric one for a filter
    W = lib.signal.windows
    x = _data(lib, 2, 40)
    spec = lib.stft(x, 16, hop_length=4, window=W.hann(16, sym=False), return_complex=True).abs()
    taps = W.kaiser(9, beta=8.0) * lib.sinc(lib.linspace(-2, 2, 9))
    low = lib.nn.functional.conv1d(x[:, None], (taps / taps.sum()).view(1, 1, 9), padding=4)
    wins = [W.bartlett(7), W.blackman(6, sym=False), W.cosine(5), W.exponential(8, sym=False, center=2.5, tau=0.7),
            W.gaussian(9, std=1.5, dtype=lib.float64), W.general_cosine(7, a=[0.46, 0.23, 0.31]),
            W.general_hamming(8, alpha=0.6, sym=False), W.hamming(1), W.nuttall(6), W.kaiser(0), W.hann(5)]
    g = W.hann(6, requires_grad=True)
    return spec, taps, low, wins, g.requires_grad, g.is_leaf


def test_anchor_and_roi_grid_messages():
    """affine_grid shows the size as the caller gave it (tuple, list or torch.Size); grid_sample and meshgrid check
    in PyTorch's order."""
    F = lambda lib: lib.nn.functional  # noqa: E731
    same_error(lambda lib: F(lib).affine_grid(lib.ones(2, 2, 3), (2, 1, 4), align_corners=False))
    same_error(lambda lib: F(lib).affine_grid(lib.ones(2, 2, 3), [2, 1, 0, 3], align_corners=False))
    same_error(lambda lib: F(lib).affine_grid(lib.ones(2, 2, 4), [2, 1, 3, 3], align_corners=False))
    same_error(lambda lib: F(lib).affine_grid(lib.ones(2, 3, 4), lib.Size([2, 1, 3, 3]), align_corners=False))
    # roi_align by grid_sample with a grid of the wrong shape: PyTorch checks batch, the grid's last size and empty
    # spatial dims before the number of dims
    for x, g in [((1, 1, 4, 4), (1, 1, 1, 1, 3)), ((1, 1, 4, 4), (2, 1, 1, 3)), ((1, 1, 4, 4, 4), (1, 1, 1, 2)),
                 ((2, 1, 4, 4), (1, 1, 3)), ((1, 1, 0, 4), (1, 1, 2))]:
        same_error(lambda lib: F(lib).grid_sample(lib.ones(*x), lib.zeros(*g), align_corners=False))
    same_error(lambda lib: lib.meshgrid(lib.arange(2), lib.arange(3.), indexing="zz"))
    same_error(lambda lib: lib.meshgrid(lib.ones(2, 2), lib.arange(3), indexing="ij"))


def test_spectrogram_messages():
    same_error(lambda lib: lib.istft(lib.ones(5, 7, dtype=lib.complex64), 8, window=lib.ones(8), return_complex=True))


def test_stft_of_an_integer_signal_raises():
    check_raises(lambda lib: lib.stft(lib.arange(32), 8, window=lib.hann_window(8), return_complex=True),
                 match="expected a tensor of floating point or complex values")


def test_signal_window_errors():
    W = lambda lib: lib.signal.windows  # noqa: E731
    same_error(lambda lib: W(lib).hann(-1))
    same_error(lambda lib: W(lib).kaiser(5, dtype=lib.float16))
    same_error(lambda lib: W(lib).exponential(5, center=1.0))
    same_error(lambda lib: W(lib).gaussian(5, std=0.0))
    same_error(lambda lib: W(lib).general_cosine(5, a=[]))
    same_error(lambda lib: W(lib).general_cosine(5, a=0.5))


def _enhance_step(lib, jit):
    # a mask-based speech enhancement step: predict a magnitude mask, keep the noisy phase, resynthesise by istft
    nn, F = lib.nn, lib.nn.functional
    n = lib.arange(96.)
    clean = lib.cos(n * n * 2e-3)[None].repeat(2, 1)
    noisy = clean + 0.3 * lib.sin(n * 1.7)[None] * lib.tensor([[1.], [0.5]])
    win = lib.hann_window(16)
    mask_net = _init(lib, nn.Sequential(nn.Linear(9, 9), nn.Sigmoid()))
    opt = lib.optim.SGD(mask_net.parameters(), lr=0.1)

    def step(noisy, clean):
        spec = lib.stft(noisy, 16, 4, window=win, return_complex=True)
        mag, phase = spec.abs(), spec.angle()
        m = mask_net(mag.transpose(1, 2)).transpose(1, 2)
        est = lib.istft(lib.polar(mag * m, phase), 16, 4, window=win, length=noisy.shape[-1])
        loss = F.l1_loss(est, clean)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, est
    s = jit(step)
    return [s(noisy, clean) for _ in range(2)], [p.detach() for p in mask_net.parameters()]


def test_istft_compiles_without_a_graph_break():
    """istft's NOLA check (the window's overlap-added square must not vanish) is deferred under torchish.compile,
    as index bounds are, instead of reading a traced value: the whole enhancement step is one program
    (fullgraph=True), and a window that fails the check still raises PyTorch's RuntimeError."""
    ref, got = run_both(lambda lib: _enhance_step(lib, (lambda f: f) if lib is torch else
                                                  (lambda f: torchish.compile(f, fullgraph=True))))
    assert_same(ref, got)
    w = torchish.hann_window(8, periodic=False)  # zero at both ends: hop 8 leaves gaps in the overlap-add
    spec = torchish.stft(torchish.ones(40), 8, hop_length=8, window=w, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        torchish.compile(lambda s: torchish.istft(s, 8, hop_length=8, window=w), fullgraph=True)(spec)


def test_unbatched_class_loss_messages():
    """An unbatched (C,) score vector with a target of more than one class index: PyTorch raises ValueError."""
    F = lambda lib: lib.nn.functional  # noqa: E731
    same_error(lambda lib: F(lib).nll_loss(lib.ones(3), lib.zeros(2, dtype=lib.long)))
    same_error(lambda lib: F(lib).cross_entropy(lib.ones(3), lib.zeros(3, dtype=lib.long), label_smoothing=0.1))
    same_error(lambda lib: F(lib).cross_entropy(lib.ones(3), lib.zeros(0, dtype=lib.long)))


def test_focal_weights_that_do_not_fit_the_logits():
    """binary_cross_entropy_with_logits multiplies its loss in place by (pos_weight - 1) * target + 1 and by weight,
    as PyTorch's kernel does (binary_cross_entropy by weight): a weight that would grow the loss raises, and
    pos_weight meets the target first."""
    bce = lambda lib, **kw: lib.nn.functional.binary_cross_entropy_with_logits(  # noqa: E731
        lib.ones(2, 3), lib.ones(2, 3), reduction="none", **{k: lib.ones(*v) for k, v in kw.items()})
    same_error(lambda lib: bce(lib, pos_weight=(4, 2, 3)))
    same_error(lambda lib: bce(lib, weight=(4, 2, 3)))
    same_error(lambda lib: bce(lib, pos_weight=(2,)))
    same_error(lambda lib: bce(lib, weight=(3,), pos_weight=(3, 1)))
    for w in [(4, 2, 3), (2,)]:  # (the second: torch.broadcast_shapes' message shows the Size as given)
        same_error(lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(2, 3) / 2, lib.ones(2, 3),
                                                                      weight=lib.ones(*w), reduction="none"))
    same_error(lambda lib: lib.broadcast_shapes((2, 3), [4, 3]))


test_script_matches_torch = script_test(globals())
