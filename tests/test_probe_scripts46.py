"""Third-party programs, round 46: segmentation code in the style of popular repositories (a tiny U-Net with
bilinear upsampling and ``ConvTranspose2d``, dice loss and a ``bincount`` confusion matrix; RetinaNet's sigmoid focal
loss and head; the Lovasz hinge, OHEM and focal cross-entropy), seeded by ``torch.manual_seed`` with default
initialisation, run with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_tiny_unet_dice_bincount_iou(lib):
    """A two-level U-Net: double-conv blocks with BatchNorm, ``MaxPool2d``, one up path by
    ``F.interpolate(scale_factor=2, mode="bilinear", align_corners=False)`` and one by ``ConvTranspose2d(k=2,
    s=2)``, ``F.pad`` to match sizes, ``torch.cat([skip, x], dim=1)``; soft multi-class dice on
    ``softmax`` probabilities against ``F.one_hot(...).permute(0, 3, 1, 2)`` plus cross-entropy, Adam for 2 steps,
    then eval-mode ``argmax`` predictions scored by a ``torch.bincount(n * t + p, minlength=n*n)`` confusion matrix
    and per-class IoU with ``nanmean``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(3)

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                             nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self, n_cls=3):
            super().__init__()
            self.d1, self.d2, self.bott = block(1, 4), block(4, 8), block(8, 8)
            self.pool = nn.MaxPool2d(2)
            self.up_t = nn.ConvTranspose2d(8, 8, kernel_size=2, stride=2)
            self.u2, self.u1 = block(16, 4), block(8, 4)
            self.head = nn.Conv2d(4, n_cls, 1)

        def forward(self, x):
            s1 = self.d1(x)
            s2 = self.d2(self.pool(s1))
            b = self.bott(self.pool(s2))
            x = self.up_t(b)
            dy, dx = s2.size(2) - x.size(2), s2.size(3) - x.size(3)
            x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
            x = self.u2(torch.cat([s2, x], dim=1))
            x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
            x = self.u1(torch.cat([s1, x], dim=1))
            return self.head(x)

    def dice_loss(logits, target, eps=1e-6):
        probs = logits.softmax(dim=1)
        oh = F.one_hot(target, logits.shape[1]).permute(0, 3, 1, 2).float()
        inter = (probs * oh).sum(dim=(0, 2, 3))
        card = probs.sum(dim=(0, 2, 3)) + oh.sum(dim=(0, 2, 3))
        return 1 - ((2 * inter + eps) / (card + eps)).mean()

    net = UNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    x = torch.randn(2, 1, 8, 8)
    y = torch.randint(0, 3, (2, 8, 8))
    losses = []
    for _ in range(2):
        logits = net(x)
        loss = F.cross_entropy(logits, y) + dice_loss(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    net.eval()
    with torch.no_grad():
        pred = net(x).argmax(1)
    n = 3
    k = (y >= 0) & (y < n)
    hist = torch.bincount(n * y[k] + pred[k], minlength=n * n).reshape(n, n)
    iou = torch.diag(hist).float() / (hist.sum(0) + hist.sum(1) - torch.diag(hist)).float()
    return losses, pred, hist, iou, iou.nanmean(), net.d1[1].running_mean, net.up_t.weight.grad


def case_focal_loss_retinanet_head(lib):
    """RetinaNet's ``sigmoid_focal_loss`` (torchvision.ops form with ``reduction`` and ``alpha``), ``F.one_hot``
    targets with a background column dropped, a conv classification/regression head with prior-probability bias
    init ``-math.log((1 - p) / p)`` filled by ``nn.init.constant_``, ``permute(0, 2, 3, 1).reshape(N, -1, K)``,
    ``smooth_l1_loss(beta=1/9)`` on positive anchors selected by a boolean mask, SGD with momentum for 3 steps."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1)

    def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0, reduction="none"):
        p = torch.sigmoid(inputs)
        ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce * ((1 - p_t) ** gamma)
        if alpha >= 0:
            alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
            loss = alpha_t * loss
        if reduction == "mean":
            loss = loss.mean()
        elif reduction == "sum":
            loss = loss.sum()
        return loss

    K, A = 3, 2
    cls = nn.Conv2d(4, A * K, 3, padding=1)
    reg = nn.Conv2d(4, A * 4, 3, padding=1)
    nn.init.normal_(cls.weight, std=0.01)
    nn.init.constant_(cls.bias, -math.log((1 - 0.01) / 0.01))
    opt = torch.optim.SGD(list(cls.parameters()) + list(reg.parameters()), lr=0.1, momentum=0.9)
    feats = torch.randn(2, 4, 3, 3)
    labels = torch.randint(0, K + 1, (2, 9 * A))
    reg_t = torch.randn(2, 9 * A, 4)
    losses = []
    for _ in range(3):
        logits = cls(feats).permute(0, 2, 3, 1).reshape(2, -1, K)
        deltas = reg(feats).permute(0, 2, 3, 1).reshape(2, -1, 4)
        onehot = F.one_hot(labels, K + 1)[..., 1:].float()
        pos = labels > 0
        num_pos = max(1, pos.sum().item())
        l_cls = sigmoid_focal_loss(logits, onehot, reduction="sum") / num_pos
        l_reg = F.smooth_l1_loss(deltas[pos], reg_t[pos], beta=1 / 9, reduction="sum") / num_pos
        loss = l_cls + l_reg
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    p = torch.rand(5)
    t = (torch.rand(5) > 0.5).float()
    return (torch.stack(losses), cls.weight.grad, reg.bias.grad, cls.bias,
            sigmoid_focal_loss(p, t, alpha=-1, reduction="mean"), sigmoid_focal_loss(p, t, gamma=0.0))


def case_lovasz_hinge_ohem_and_focal_ce(lib):
    """Segmentation losses from popular repositories: the Lovasz hinge (``torch.sort(errors, descending=True)``,
    ``labels[perm.data]``, ``lovasz_grad``'s cumsums and the overlapping in-place slice write ``jaccard[1:p] =
    jaccard[1:p] - jaccard[0:-1]``, ``torch.dot(F.relu(...), grad)``), OHEM by ``topk`` of per-pixel
    ``cross_entropy(ignore_index=255, reduction="none")`` and by a probability threshold from a sorted masked
    selection with ``masked_fill(~sel, 255)``, and a focal cross-entropy ``(1 - exp(-ce)) ** 2 * ce``."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(18)
    def lovasz_grad(gt_sorted):
        p = len(gt_sorted)
        gts = gt_sorted.sum()
        intersection = gts - gt_sorted.float().cumsum(0)
        union = gts + (1 - gt_sorted).float().cumsum(0)
        jaccard = 1. - intersection / union
        if p > 1:
            jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]
        return jaccard
    logits = torch.randn(20, requires_grad=True)
    labels = (torch.rand(20) > 0.5).float()
    signs = 2. * labels - 1.
    errors = (1. - logits * signs)
    errors_sorted, perm = torch.sort(errors, dim=0, descending=True)
    gt_sorted = labels[perm.data]
    grad = lovasz_grad(gt_sorted)
    loss = torch.dot(F.relu(errors_sorted), grad)
    seg = torch.randn(2, 3, 4, 4, requires_grad=True)
    tgt = torch.randint(0, 3, (2, 4, 4))
    tgt[0, 0, :2] = 255
    pix = F.cross_entropy(seg, tgt, ignore_index=255, reduction="none").view(-1)
    kept, _ = pix.topk(10)
    ohem = kept.mean()
    probs = F.softmax(seg, 1)
    pt = probs.gather(1, tgt.clamp(max=2).unsqueeze(1)).squeeze(1)
    mask = tgt != 255
    thr_sorted = pt[mask].sort()[0]
    thr = max(thr_sorted[min(5, thr_sorted.numel() - 1)].item(), 0.3)
    sel = (pt < thr) & mask
    ohem2 = F.cross_entropy(seg, tgt.masked_fill(~sel, 255), ignore_index=255)
    ce = F.cross_entropy(seg, tgt, ignore_index=255, reduction="none")
    focal = ((1 - torch.exp(-ce)) ** 2 * ce).sum() / mask.sum()
    (loss + ohem + ohem2 + focal).backward()
    return grad, loss, logits.grad, ohem, ohem2, focal, seg.grad


test_script_matches_torch = script_test(globals())
