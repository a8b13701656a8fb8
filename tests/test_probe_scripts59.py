"""Third-party programs, round 59 (helper 174): image processing written in PyTorch the way kornia,
torchvision.transforms.v2 (tensor backend), torchvision.ops and scikit-image-style utilities write it (colour-space
conversions, separable and grouped ``conv2d`` filters with reflect/replicate ``F.pad``, median blur by ``unfold``,
morphology by ``max_pool2d``, histogram equalisation, ``interpolate`` resizes with antialias, ``affine_grid`` /
``grid_sample`` warps, uint8 crops and ``to_dtype`` scaling, seeded augmentation pipelines on a ``torch.Generator``,
canny non-max suppression, SSIM/PSNR/total variation and image pyramids), re-implemented here (no imports of those
libraries), run with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _image(torch, seed, c=3, h=6, w=7):
    torch.manual_seed(seed)
    return torch.rand(1, c, h, w)


def _gaussian_kernel1d(torch, size, sigma):
    x = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = torch.exp(-x.pow(2.0) / (2 * sigma ** 2))
    return g / g.sum()


def case_color_spaces_hsv_yuv_lab_gray(lib):
    """kornia-style colour conversions: rgb->hsv with ``max(dim)`` / ``gather`` of the hue branch and ``% 1.0``,
    hsv->rgb through ``floor``/``fmod`` and a gather into 18 stacked candidates, rgb->yuv by a 3x3 ``einsum``,
    rgb->lab with the sRGB ``where`` linearisation and the cube root by ``pow(1/3)``, ITU-R 601 grayscale; the
    round trip error and the hue's gradient back to the image."""
    torch = lib
    img = _image(torch, 0).requires_grad_()
    eps = 1e-8
    maxc, argmax = img.max(-3)
    minc = img.min(-3).values
    delta = maxc - minc
    s = delta / (maxc + eps)
    delta = torch.where(delta == 0, torch.ones_like(delta), delta)
    rc, gc, bc = torch.unbind(maxc.unsqueeze(-3) - img, dim=-3)
    h = torch.stack([bc - gc, (rc - bc) + 2.0 * delta, (gc - rc) + 4.0 * delta], dim=-3) / delta.unsqueeze(-3)
    h = torch.gather(h, -3, argmax.unsqueeze(-3)).squeeze(-3)
    h = 2 * math.pi * ((h / 6.0) % 1.0)
    hsv = torch.stack([h, s, maxc], -3)
    hsv.select(-3, 0).sum().backward()

    hh, ss, vv = hsv.detach().unbind(-3)
    hh = hh / (2 * math.pi)
    hi = torch.floor(hh * 6) % 6
    f = torch.fmod(hh * 6, 6) - hi
    p, q, t = vv * (1 - ss), vv * (1 - f * ss), vv * (1 - (1 - f) * ss)
    hi = hi.long()
    cand = torch.stack((vv, q, p, p, t, vv, t, vv, vv, q, p, p, p, p, t, vv, vv, q), dim=-3)
    rgb = torch.gather(cand, -3, torch.stack([hi, hi + 6, hi + 12], dim=-3))

    m = torch.tensor([[0.299, 0.587, 0.114], [-0.147, -0.289, 0.436], [0.615, -0.515, -0.100]])
    yuv = torch.einsum("ij,bjhw->bihw", m, img.detach())
    x = img.detach()
    lin = torch.where(x > 0.04045, torch.pow((x + 0.055) / 1.055, 2.4), x / 12.92)
    r, g, b = lin.unbind(-3)
    xyz = torch.stack([0.412453 * r + 0.357580 * g + 0.180423 * b, 0.212671 * r + 0.715160 * g + 0.072169 * b,
                       0.019334 * r + 0.119193 * g + 0.950227 * b], -3)
    white = torch.tensor([0.95047, 1.0, 1.08883], device=xyz.device, dtype=xyz.dtype)[..., :, None, None]
    xn = xyz / white
    fx = torch.where(xn > 0.008856, torch.pow(xn.clamp(min=0.008856), 1 / 3.0), 7.787 * xn + 4.0 / 29.0)
    L = 116.0 * fx[:, 1] - 16.0
    lab = torch.stack([L, 500.0 * (fx[:, 0] - fx[:, 1]), 200.0 * (fx[:, 1] - fx[:, 2])], 1)
    gray = (torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1) * x).sum(1, keepdim=True)
    return (hsv.detach(), argmax, rgb, (rgb - x).abs().max() < 1e-5, yuv, lab, gray, img.grad,
            hi.dtype, torch.atan2(yuv[:, 2], yuv[:, 1]))


def case_gaussian_box_sobel_laplacian_filters(lib):
    """Linear filters the kornia way: a separable Gaussian as two grouped ``conv2d`` (groups=C) after
    ``F.pad(mode="reflect")``, a box blur by a normalised ones kernel and by ``avg_pool2d(count_include_pad=False)``,
    Sobel x/y on ``replicate`` padding with the magnitude ``sqrt(gx^2 + gy^2 + eps)``, a 3x3 Laplacian, an
    unsharp mask with ``clamp(0, 1)``; the magnitude's gradient to the input."""
    torch, F = lib, lib.nn.functional
    img = _image(torch, 1).requires_grad_()
    C = img.shape[1]
    k1 = _gaussian_kernel1d(torch, 5, 1.2)
    kx = k1.view(1, 1, 1, 5).repeat(C, 1, 1, 1)
    ky = k1.view(1, 1, 5, 1).expand(C, 1, 5, 1)
    blur = F.conv2d(F.conv2d(F.pad(img, (2, 2, 2, 2), mode="reflect"), kx, groups=C), ky, groups=C)
    box = F.conv2d(F.pad(img, (1, 1, 1, 1), mode="reflect"), torch.ones(C, 1, 3, 3) / 9.0, groups=C)
    box2 = F.avg_pool2d(img, 3, stride=1, padding=1, count_include_pad=False)
    sobel = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
    kern = torch.stack([sobel, sobel.t()]).unsqueeze(1).repeat(C, 1, 1, 1)
    grads = F.conv2d(F.pad(img, [1, 1, 1, 1], mode="replicate"), kern, groups=C).view(1, C, 2, *img.shape[-2:])
    mag = torch.sqrt(grads[:, :, 0] ** 2 + grads[:, :, 1] ** 2 + 1e-6)
    lap_k = torch.tensor([[1.0, 1.0, 1.0], [1.0, -8.0, 1.0], [1.0, 1.0, 1.0]]).expand(C, 1, 3, 3)
    lap = F.conv2d(F.pad(img, (1, 1, 1, 1), mode="reflect"), lap_k, groups=C)
    sharp = (img + 1.5 * (img - blur)).clamp(0, 1)
    mag.mean().backward()
    return blur, box, box2, grads, mag, lap, sharp, img.grad, kx.shape, ky.is_contiguous()


def case_median_blur_and_morphology(lib):
    """kornia's median_blur: ``F.pad(reflect)``, ``F.unfold(kernel_size=3)``, ``median(dim=...)`` of the patches
    (odd count, no ties); dilation and erosion by ``max_pool2d`` of x and -x, opening, closing, the morphological
    gradient and top-hat; a cross-shaped structuring element applied through unfold with ``-inf`` outside it and
    ``amax``/``amin``; a binary mask dilated as ``bool`` via float and back."""
    torch, F = lib, lib.nn.functional
    img = _image(torch, 2, c=2)
    B, C, H, W = img.shape
    patches = F.unfold(F.pad(img, (1, 1, 1, 1), mode="reflect"), kernel_size=3).view(B, C, 9, H, W)
    med = patches.median(dim=2)
    dil = F.max_pool2d(img, 3, stride=1, padding=1)
    ero = -F.max_pool2d(-img, 3, stride=1, padding=1)
    opening = F.max_pool2d(-F.max_pool2d(-img, 3, 1, 1), 3, 1, 1)
    closing = -F.max_pool2d(-F.max_pool2d(img, 3, 1, 1), 3, 1, 1)
    se = torch.tensor([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    neigh = torch.where(se.flatten().bool(), 0.0, -float("inf")).view(1, 1, 9, 1, 1)
    pp = F.unfold(F.pad(img, (1, 1, 1, 1), value=-1e4), 3).view(B, C, 9, H, W)
    cross_dil = (pp + neigh).amax(2)
    pe = F.unfold(F.pad(img, (1, 1, 1, 1), value=1e4), 3).view(B, C, 9, H, W)
    cross_ero = (pe - neigh).amin(2)
    mask = img[:, :1] > 0.8
    grown = F.max_pool2d(mask.float(), 3, 1, 1).bool()
    return (med.values, med.indices, dil, ero, opening, closing, dil - ero, img - opening, cross_dil, cross_ero,
            grown, grown.sum(), (cross_dil <= dil).all())


def case_histogram_equalisation_uint8(lib):
    """scikit-image style equalisation of a uint8 image per channel: ``torch.bincount(minlength=256)`` and
    ``histc(bins=256, min=0, max=255)`` agreeing, the CDF by ``cumsum``, the first nonzero bin via ``nonzero``,
    the lookup table ``((cdf - cdf_min) * 255 / (n - cdf_min)).round().clamp(0, 255).to(uint8)`` and ``gather`` /
    indexing of it by the pixels; contrast stretching by ``quantile`` percentiles."""
    torch = lib
    torch.manual_seed(3)
    img = torch.randint(40, 120, (3, 6, 6), dtype=torch.uint8)
    out, hists = [], []
    for ch in img:
        flat = ch.flatten().long()
        hist = torch.bincount(flat, minlength=256)
        hc = torch.histc(ch.float(), bins=256, min=0, max=255)
        cdf = hist.cumsum(0)
        cdf_min = cdf[hist.nonzero()[0, 0]]
        lut = ((cdf - cdf_min).float() * 255 / (flat.numel() - cdf_min)).round().clamp(0, 255).to(torch.uint8)
        out.append(torch.gather(lut, 0, flat).view_as(ch))
        hists.append((hist.float() == hc).all())
    eq = torch.stack(out)
    f = img.float()
    lo, hi = torch.quantile(f.flatten(1), torch.tensor([0.02, 0.98]), dim=1)
    stretched = ((f - lo[:, None, None]) / (hi - lo)[:, None, None]).clamp(0, 1)
    return eq, eq.dtype, hists, lut[38:45], cdf.dtype, lo, hi, stretched, (stretched * 255).to(torch.uint8)


def case_resize_interpolate_antialias(lib):
    """torchvision's resize on tensors: ``interpolate`` bilinear and bicubic downscales with and without
    ``antialias=True``, ``align_corners`` True/False upscales, ``nearest`` and ``nearest-exact``, ``area``; a uint8
    image resized bilinear with antialias (uint8 kernels, round to nearest) and nearest; bicubic overshoot then
    ``clamp_``; the shorter-side resize rule computing the size in Python."""
    torch, F = lib, lib.nn.functional
    img = _image(torch, 4, h=8, w=10)
    outs = []
    for mode in ("bilinear", "bicubic"):
        for aa in (False, True):
            outs.append(F.interpolate(img, size=(5, 4), mode=mode, antialias=aa, align_corners=False))
        for ac in (False, True):
            outs.append(F.interpolate(img[:, :, :4, :5], size=(7, 9), mode=mode, align_corners=ac))
    near = F.interpolate(img, size=(5, 6), mode="nearest")
    near_x = F.interpolate(img, size=(5, 6), mode="nearest-exact")
    area = F.interpolate(img, size=(4, 5), mode="area")
    u8 = (img * 255).round().to(torch.uint8)
    u8_aa = F.interpolate(u8, size=(5, 4), mode="bilinear", antialias=True, align_corners=False)
    u8_near = F.interpolate(u8, scale_factor=0.5, mode="nearest")
    h, w = img.shape[-2:]
    short = 6
    new_h, new_w = (short, int(short * w / h)) if h <= w else (int(short * h / w), short)
    bic = F.interpolate(img, size=(new_h, new_w), mode="bicubic", antialias=True).clamp_(0, 1)
    return outs, near, near_x, area, u8_aa, u8_aa.dtype, u8_near, bic, (new_h, new_w)


def case_affine_rotate_perspective_warps(lib):
    """Warps by ``affine_grid`` + ``grid_sample``: rotation about the centre with scale and translation for a batch
    of angles, bilinear/nearest/bicubic sampling with zeros/border/reflection padding and both ``align_corners``;
    a kornia-style perspective warp by a 3x3 homography on a ``meshgrid(indexing="xy")`` normalised to [-1, 1];
    gradients to the angles through the sampler."""
    torch, F = lib, lib.nn.functional
    img = _image(torch, 5, c=2, h=5, w=6).expand(2, -1, -1, -1).contiguous()
    ang = torch.tensor([0.3, -0.7], requires_grad=True)
    sc = torch.tensor([1.1, 0.9])
    cos, sin = torch.cos(ang) * sc, torch.sin(ang) * sc
    theta = torch.stack([torch.stack([cos, -sin, torch.full_like(cos, 0.1)], -1),
                         torch.stack([sin, cos, torch.full_like(cos, -0.05)], -1)], 1)
    outs = []
    for ac in (False, True):
        grid = F.affine_grid(theta, list(img.shape), align_corners=ac)
        for mode, pad in (("bilinear", "zeros"), ("bilinear", "border"), ("nearest", "reflection"),
                          ("bicubic", "zeros")):
            outs.append(F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=ac))
    torch.stack(outs[:2] + outs[4:6]).sum().backward()
    Hm = torch.tensor([[1.0, 0.1, 0.2], [0.05, 0.95, -0.3], [0.01, 0.02, 1.0]])
    H, W = img.shape[-2:]
    xs, ys = torch.meshgrid(torch.arange(W, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="xy")
    pts = torch.stack([xs, ys, torch.ones_like(xs)], -1) @ torch.linalg.inv(Hm).T
    pts = pts[..., :2] / pts[..., 2:].clamp(min=1e-8)
    norm = torch.stack([pts[..., 0] / (W - 1), pts[..., 1] / (H - 1)], -1) * 2 - 1
    persp = F.grid_sample(img[:1], norm.unsqueeze(0), align_corners=True)
    return theta.detach(), outs, ang.grad, persp, norm


def case_uint8_crops_flips_pads_to_dtype(lib):
    """torchvision.transforms.v2 tensor kernels on uint8: center crop offsets by ``int(round(...))``, ``flip`` and
    ``hflip`` by slicing ``[..., ::-1]``-free ``flip(-1)``, constant/edge/reflect pads, ``to_dtype`` uint8->float
    by ``/ 255`` and float->uint8 by ``mul(255).round_().clamp_(0, 255)``, ``convert_image_dtype`` to uint16-free
    int32 and back, ``normalize`` with ``sub_``/``div_`` on a clone and its inverse, ``permute`` HWC<->CHW."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(6)
    img = torch.randint(0, 256, (3, 7, 8), dtype=torch.uint8)
    h, w = img.shape[-2:]
    ch, cw = 4, 5
    top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
    crop = img[..., top:top + ch, left:left + cw]
    hflip, vflip = crop.flip(-1), torch.flip(crop, dims=[-2])
    pc = F.pad(crop, [1, 2, 0, 1], value=7)
    pe = F.pad(crop.float(), [2, 1, 1, 1], mode="replicate").to(torch.uint8)
    pr = F.pad(crop.unsqueeze(0).float(), [1, 1, 2, 0], mode="reflect").squeeze(0).to(torch.uint8)
    fl = crop.to(torch.float32) / 255
    back = fl.mul(255).round_().clamp_(0, 255).to(torch.uint8)
    as_i32 = crop.to(torch.int32) << 23
    from_i32 = (as_i32 >> 23).to(torch.uint8)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    normed = fl.clone().sub_(mean).div_(std)
    unnorm = normed * std + mean
    hwc = crop.permute(1, 2, 0).contiguous()
    return (crop, hflip, vflip, pc, pe, pr, fl, torch.equal(back, crop), as_i32, from_i32, normed, unnorm,
            hwc, hwc.stride(), pc.dtype, (fl * 255).to(torch.uint8))


def case_random_resized_crop_color_jitter_generator(lib):
    """A seeded transforms.v2 pipeline on a ``torch.Generator``: RandomResizedCrop's parameter loop with
    ``torch.empty(1).uniform_(..., generator=g)``, ``exp`` of a log-ratio draw and ``torch.randint(...,
    generator=g)`` offsets; the crop resized bilinear with antialias; ColorJitter with factors from ``uniform_`` and
    the order from ``torch.randperm(4, generator=g)``: brightness, contrast (blend with the grayscale mean),
    saturation (blend with grayscale), hue (shift in hsv by ``% 1.0``); a random horizontal flip by ``torch.rand(1,
    generator=g) < 0.5``; the generator's state continues across two images."""
    torch, F = lib, lib.nn.functional
    g = torch.Generator().manual_seed(17)
    torch.manual_seed(7)
    imgs = torch.rand(2, 3, 8, 9)

    def rrc_params(H, W, scale=(0.3, 1.0), ratio=(3 / 4, 4 / 3)):
        area = H * W
        log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            target = area * torch.empty(1).uniform_(scale[0], scale[1], generator=g).item()
            ar = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1], generator=g)).item()
            w, h = int(round(math.sqrt(target * ar))), int(round(math.sqrt(target / ar)))
            if 0 < w <= W and 0 < h <= H:
                i = torch.randint(0, H - h + 1, size=(1,), generator=g).item()
                j = torch.randint(0, W - w + 1, size=(1,), generator=g).item()
                return i, j, h, w
        return 0, 0, H, W

    def gray(x):
        r, gg, b = x.unbind(-3)
        return (0.2989 * r + 0.587 * gg + 0.114 * b).unsqueeze(-3)

    def blend(a, b, ratio):
        return (ratio * a + (1.0 - ratio) * b).clamp(0, 1)

    def hue_shift(x, hf):
        maxc, _ = x.max(-3)
        minc = x.min(-3).values
        cr = maxc - minc
        eqc = maxc == minc
        s = cr / torch.where(eqc, torch.ones_like(maxc), maxc)
        crd = torch.where(eqc, torch.ones_like(cr), cr)
        rc, gc, bc = ((maxc.unsqueeze(-3) - x) / crd.unsqueeze(-3)).unbind(-3)
        hr = (maxc == x[0]) * (bc - gc)
        hg = ((maxc == x[1]) & (maxc != x[0])) * (2.0 + rc - bc)
        hb = ((maxc != x[1]) & (maxc != x[0])) * (4.0 + gc - rc)
        h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
        h = (h + hf) % 1.0
        i = torch.floor(h * 6.0)
        f = h * 6.0 - i
        i = i.to(torch.int32) % 6
        p = (maxc * (1 - s)).clamp(0, 1)
        q = (maxc * (1 - s * f)).clamp(0, 1)
        t = (maxc * (1 - s * (1 - f))).clamp(0, 1)
        mask = i.unsqueeze(-3) == torch.arange(6, dtype=torch.int32).view(-1, 1, 1)
        a1 = torch.stack((maxc, q, p, p, t, maxc), -3)
        a2 = torch.stack((t, maxc, maxc, q, p, p), -3)
        a3 = torch.stack((p, p, t, maxc, maxc, q), -3)
        a4 = torch.stack((a1, a2, a3), -4)
        return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(x.dtype), a4)

    results = []
    for img in imgs:
        i, j, h, w = rrc_params(*img.shape[-2:])
        out = F.interpolate(img[:, i:i + h, j:j + w].unsqueeze(0), size=(5, 5), mode="bilinear",
                            antialias=True, align_corners=False).squeeze(0)
        order = torch.randperm(4, generator=g)
        b = torch.empty(1).uniform_(0.6, 1.4, generator=g).item()
        c = torch.empty(1).uniform_(0.6, 1.4, generator=g).item()
        s = torch.empty(1).uniform_(0.6, 1.4, generator=g).item()
        hf = torch.empty(1).uniform_(-0.1, 0.1, generator=g).item()
        for fn in order.tolist():
            if fn == 0:
                out = blend(out, torch.zeros_like(out), b)
            elif fn == 1:
                out = blend(out, gray(out).mean(dim=(-3, -2, -1), keepdim=True), c)
            elif fn == 2:
                out = blend(out, gray(out), s)
            else:
                out = hue_shift(out, hf)
        if torch.rand(1, generator=g) < 0.5:
            out = out.flip(-1)
        results.append(((i, j, h, w), order, round(b, 5), round(hf, 5), out))
    return results, g.initial_seed(), torch.randint(0, 100, (3,), generator=g)


def case_canny_non_max_suppression(lib):
    """kornia/scikit-image canny: Gaussian blur, Sobel gradients, magnitude and ``atan2`` angle quantised to four
    directions by ``torch.round(angle / (pi / 4)) % 4``, the two neighbours per direction picked from eight shifted
    copies by ``gather`` on ``F.pad``'d magnitude, non-max suppression by ``>=``, double thresholds and hysteresis
    by repeated 3x3 ``max_pool2d`` dilation of strong edges masked to weak ones until it stops changing."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(8)
    x = torch.zeros(1, 1, 9, 9)
    x[..., 2:7, 3:6] = 1.0
    x = x + 0.1 * torch.rand_like(x)
    k = _gaussian_kernel1d(torch, 3, 0.8)
    x = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), (k[:, None] * k[None, :]).view(1, 1, 3, 3))
    sob = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
    g = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), torch.stack([sob, sob.T]).unsqueeze(1))
    gx, gy = g[:, 0:1], g[:, 1:2]
    mag = torch.sqrt(gx * gx + gy * gy + 1e-6)
    angle = torch.atan2(gy, gx)
    direction = (torch.round(angle / (math.pi / 4)) % 4).long()
    offsets = torch.tensor([[0, 1], [1, 1], [1, 0], [1, -1]])
    padded = F.pad(mag, (1, 1, 1, 1))
    H, W = mag.shape[-2:]
    shifted = torch.stack([padded[..., 1 + dy:1 + dy + H, 1 + dx:1 + dx + W]
                           for dy, dx in [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]], 2)
    n1 = torch.gather(shifted, 2, direction.unsqueeze(2)).squeeze(2)
    n2 = torch.gather(shifted, 2, (direction + 4).unsqueeze(2)).squeeze(2)
    nms = torch.where((mag >= n1) & (mag >= n2), mag, torch.zeros_like(mag))
    hi, lo = 0.6 * nms.max(), 0.2 * nms.max()
    strong, weak = nms > hi, (nms > lo) & (nms <= hi)
    edges, steps = strong.float(), 0
    while True:
        grown = (F.max_pool2d(edges, 3, 1, 1) > 0) & weak | strong
        steps += 1
        if torch.equal(grown.float(), edges):
            break
        edges = grown.float()
    return mag, direction, offsets[direction.flatten()[:5]], nms, strong, weak, edges, steps, edges.sum().item()


def case_ssim_psnr_total_variation(lib):
    """Image-quality losses the way kornia/torchmetrics write them: SSIM with an 11-free 5x5 Gaussian window as a
    grouped ``conv2d``, the mean SSIM map and a ``1 - ssim`` loss backpropagated to a noisy image; PSNR by
    ``10 * log10(max^2 / mse)`` per image with ``mean(dim=(1, 2, 3))``; anisotropic total variation by ``diff``
    along H and W, summed per image, and its gradient; a charbonnier loss."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(9)
    ref = torch.rand(2, 3, 8, 8)
    noisy = (ref + 0.1 * torch.randn_like(ref)).clamp(0, 1).requires_grad_()
    k1 = _gaussian_kernel1d(torch, 5, 1.5)
    win = (k1[:, None] @ k1[None, :]).expand(3, 1, 5, 5)
    C1, C2 = 0.01 ** 2, 0.03 ** 2

    def filt(t):
        return F.conv2d(F.pad(t, (2, 2, 2, 2), mode="reflect"), win, groups=3)

    mu1, mu2 = filt(noisy), filt(ref)
    s11 = filt(noisy * noisy) - mu1 ** 2
    s22 = filt(ref * ref) - mu2 ** 2
    s12 = filt(noisy * ref) - mu1 * mu2
    ssim_map = ((2 * mu1 * mu2 + C1) * (2 * s12 + C2)) / ((mu1 ** 2 + mu2 ** 2 + C1) * (s11 + s22 + C2))
    loss = (1 - ssim_map.mean()) / 2
    loss.backward()
    mse = ((noisy.detach() - ref) ** 2).mean(dim=(1, 2, 3))
    psnr = 10 * torch.log10(1.0 / mse)
    x = noisy.detach().requires_grad_()
    tv = x.diff(dim=-2).abs().sum(dim=(1, 2, 3)) + (x[..., :, 1:] - x[..., :, :-1]).abs().sum(dim=(1, 2, 3))
    tv.sum().backward()
    charb = torch.sqrt((noisy.detach() - ref) ** 2 + 1e-6).mean()
    return ssim_map.mean((1, 2, 3)), loss, noisy.grad, psnr, psnr.dtype, tv, x.grad, charb


def case_gaussian_laplacian_pyramids(lib):
    """kornia's pyr_down / pyr_up and a Laplacian pyramid: a 5x5 binomial kernel ``[1, 4, 6, 4, 1] / 16`` outer
    product, reflect-padded grouped ``conv2d`` then stride-2 subsampling (and by ``avg_pool2d(ceil_mode=True)`` on
    an odd size), ``interpolate(scale_factor=2, mode="bilinear", align_corners=False)`` up, detail bands by
    subtraction, reconstruction from the coarsest level; ``recompute_scale_factor`` on a 0.5 downscale."""
    torch, F = lib, lib.nn.functional
    img = _image(torch, 10, c=2, h=8, w=8)
    k = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0]) / 16
    kern = (k[:, None] * k[None, :]).expand(2, 1, 5, 5)

    def blur(t):
        return F.conv2d(F.pad(t, (2, 2, 2, 2), mode="reflect"), kern, groups=2)

    def down(t):
        return blur(t)[..., ::2, ::2]

    def up(t, size):
        return blur(F.interpolate(t, size=size, mode="bilinear", align_corners=False))

    gauss = [img]
    for _ in range(2):
        gauss.append(down(gauss[-1]))
    lap = [g - up(gn, g.shape[-2:]) for g, gn in zip(gauss[:-1], gauss[1:])]
    rec = gauss[-1]
    for band in reversed(lap):
        rec = up(rec, band.shape[-2:]) + band
    odd = F.avg_pool2d(_image(torch, 11, c=2, h=5, w=7), 2, ceil_mode=True)
    half = F.interpolate(img, scale_factor=0.5, mode="bilinear", recompute_scale_factor=True, antialias=True)
    return [g.shape for g in gauss], gauss, lap, rec, (rec - img).abs().max() < 1e-5, odd, half


test_script_matches_torch = script_test(globals())
