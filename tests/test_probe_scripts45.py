"""Third-party programs, round 45: object detection code in the style of popular repositories
(torchvision's box_ops and AnchorGenerator, hand-written NMS loops, an RoI pool written with ``grid_sample``,
ssd.pytorch's matching and hard negative mining, YOLOv5's grid decode), seeded by ``torch.manual_seed`` with default
initialisation, run with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_anchors_iou_nms_loop(lib):
    """torchvision-style ``box_area``/``box_iou`` with ``[:, None, :2]`` broadcasting and ``clamp(min=0)``, anchors
    from ``torch.meshgrid(indexing="ij")`` and ``indexing="xy"`` over strided shifts, ``(shifts.view(-1, 1, 4) +
    base.view(1, -1, 4)).reshape(-1, 4)``, a greedy NMS loop (``argsort(descending=True)``, boolean masks,
    ``nonzero().squeeze(1)``, ``torch.tensor(keep)``), and per-class batched NMS by coordinate offsets written in
    torchvision's CPU kernel's form (a suppressed mask updated by ``|=``, ``if suppressed[i]``, ``order[~mask]``)."""
    torch = lib
    torch.manual_seed(0)

    def box_area(b):
        return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])

    def box_iou(b1, b2):
        a1, a2 = box_area(b1), box_area(b2)
        lt = torch.max(b1[:, None, :2], b2[:, :2])
        rb = torch.min(b1[:, None, 2:], b2[:, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[:, :, 0] * wh[:, :, 1]
        return inter / (a1[:, None] + a2 - inter)

    def anchors(sizes, ratios, grid, stride, indexing):
        scales, ratios = torch.as_tensor(sizes, dtype=torch.float32), torch.as_tensor(ratios)
        h_r = torch.sqrt(ratios)
        w_r = 1 / h_r
        ws = (w_r[:, None] * scales[None, :]).view(-1)
        hs = (h_r[:, None] * scales[None, :]).view(-1)
        base = torch.stack([-ws, -hs, ws, hs], dim=1) / 2
        base = base.round()
        sx = torch.arange(0, grid[1], dtype=torch.int32) * stride
        sy = torch.arange(0, grid[0], dtype=torch.int32) * stride
        if indexing == "ij":
            yy, xx = torch.meshgrid(sy, sx, indexing="ij")
        else:
            xx, yy = torch.meshgrid(sx, sy, indexing="xy")
        xx, yy = xx.reshape(-1), yy.reshape(-1)
        shifts = torch.stack((xx, yy, xx, yy), dim=1)
        return (shifts.view(-1, 1, 4) + base.view(1, -1, 4)).reshape(-1, 4)

    def nms(boxes, scores, thr):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0].item()
            keep.append(i)
            if order.numel() == 1:
                break
            ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])[0]
            mask = ious <= thr
            order = order[1:][mask.nonzero().squeeze(1)]
        return torch.tensor(keep, dtype=torch.int64)

    a_ij = anchors((8, 16), (0.5, 1.0, 2.0), (3, 4), 4, "ij")
    a_xy = anchors((8, 16), (0.5, 1.0, 2.0), (3, 4), 4, "xy")
    def nms_mask(boxes, scores, thr):
        order = torch.argsort(scores, descending=True)
        ious = box_iou(boxes[order], boxes[order])
        suppressed = torch.zeros(len(order), dtype=torch.bool)
        for i in range(len(order)):
            if suppressed[i]:
                continue
            suppressed |= (ious[i] > thr) & (torch.arange(len(order)) > i)
        return order[~suppressed]

    boxes = torch.rand(8, 2) * 20
    boxes = torch.cat([boxes, boxes + torch.rand(8, 2) * 10 + 2], dim=1)
    scores = torch.rand(8)
    labels = torch.randint(0, 3, (8,))
    keep = nms(boxes, scores, 0.3)
    offsets = labels.to(boxes) * (boxes.max() + 1)
    keep_b = nms_mask(boxes + offsets[:, None], scores, 0.3)
    iou = box_iou(a_ij[:10], boxes)
    best, idx = iou.max(dim=1)
    matched = torch.where(best >= 0.2, idx, torch.full_like(idx, -1))
    return a_ij, a_xy, keep, keep_b, iou, matched, (a_ij == a_xy).all().item()


def case_roi_pool_with_grid_sample(lib):
    """An RoI pool written with ``F.affine_grid`` + ``F.grid_sample`` (the Spatial-Transformer / older
    detectron trick): boxes in pixel coordinates turned into normalised ``theta`` rows by ``torch.zeros(R, 2, 3)``
    and in-place slice writes, features gathered per RoI by ``feat[batch_idx]``, bilinear sampling with
    ``align_corners=False`` then a 2x2 max pool, and gradients to the feature map and to the box coordinates."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(2)
    feat = torch.randn(2, 3, 8, 8, requires_grad=True)
    rois = torch.tensor([[0, 1.0, 1.0, 5.0, 6.0], [1, 0.5, 2.0, 7.5, 7.0], [0, 2.0, 0.0, 4.0, 3.0]])
    rois.requires_grad_()
    H = W = 8
    bidx = rois[:, 0].long()
    x1, y1, x2, y2 = rois[:, 1], rois[:, 2], rois[:, 3], rois[:, 4]
    theta = torch.zeros(rois.size(0), 2, 3)
    theta[:, 0, 0] = (x2 - x1) / W
    theta[:, 0, 2] = (x1 + x2) / W - 1
    theta[:, 1, 1] = (y2 - y1) / H
    theta[:, 1, 2] = (y1 + y2) / H - 1
    grid = F.affine_grid(theta, (rois.size(0), 3, 4, 4), align_corners=False)
    sampled = F.grid_sample(feat[bidx], grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    pooled = F.max_pool2d(sampled, 2)
    out = pooled.flatten(1) @ torch.linspace(-1, 1, 12)
    out.sum().backward()
    nearest = F.grid_sample(feat.detach()[bidx], grid.detach(), mode="nearest", padding_mode="border",
                            align_corners=True)
    return pooled, out, feat.grad, rois.grad, theta.grad_fn.name(), nearest


def case_ssd_matching_hard_negative_mining(lib):
    """ssd.pytorch's ``match``/``encode``/``MultiBoxLoss``: ``jaccard`` on ``expand``-ed corners, ``max(1,
    keepdim=True)``/``max(0, keepdim=True)`` with ``squeeze_``, ``index_fill_(0, best_prior_idx, 2)``, the
    ``best_truth_idx[best_prior_idx[j]] = j`` loop, ``conf[overlap < thr] = 0``, in-place ``/=`` of an encoded
    slice, boolean-mask selection with ``unsqueeze(...).expand_as``, the log-sum-exp confidence loss with
    ``loss_c[pos] = 0`` and hard negative mining by a sort of a sort (``loss_idx.sort(1)``: ties among the zeroed
    positives), ``(pos + neg).gt(0)`` selection and the normalised sum."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(0)
    def point_form(b):
        return torch.cat((b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2), 1)
    def intersect(a, b):
        A, B = a.size(0), b.size(0)
        max_xy = torch.min(a[:, 2:].unsqueeze(1).expand(A, B, 2), b[:, 2:].unsqueeze(0).expand(A, B, 2))
        min_xy = torch.max(a[:, :2].unsqueeze(1).expand(A, B, 2), b[:, :2].unsqueeze(0).expand(A, B, 2))
        inter = torch.clamp((max_xy - min_xy), min=0)
        return inter[:, :, 0] * inter[:, :, 1]
    def jaccard(a, b):
        inter = intersect(a, b)
        area_a = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])).unsqueeze(1).expand_as(inter)
        area_b = ((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])).unsqueeze(0).expand_as(inter)
        return inter / (area_a + area_b - inter)
    priors = torch.rand(12, 4) * 0.5 + torch.tensor([0.25, 0.25, 0.1, 0.1])
    truths = torch.tensor([[0.1, 0.1, 0.5, 0.6], [0.4, 0.3, 0.9, 0.8]])
    labels = torch.tensor([1, 2])
    overlaps = jaccard(truths, point_form(priors))
    best_prior_overlap, best_prior_idx = overlaps.max(1, keepdim=True)
    best_truth_overlap, best_truth_idx = overlaps.max(0, keepdim=True)
    best_truth_idx.squeeze_(0)
    best_truth_overlap.squeeze_(0)
    best_prior_idx.squeeze_(1)
    best_truth_overlap.index_fill_(0, best_prior_idx, 2)
    for j in range(best_prior_idx.size(0)):
        best_truth_idx[best_prior_idx[j]] = j
    matches = truths[best_truth_idx]
    conf = labels[best_truth_idx] + 1
    conf[best_truth_overlap < 0.35] = 0
    g_cxcy = (matches[:, :2] + matches[:, 2:]) / 2 - priors[:, :2]
    g_cxcy /= (0.1 * priors[:, 2:])
    g_wh = torch.log((matches[:, 2:] - matches[:, :2]) / priors[:, 2:]) / 0.2
    loc_t = torch.cat([g_cxcy, g_wh], 1).unsqueeze(0).repeat(2, 1, 1)
    conf_t = torch.stack([conf, conf.flip(0)])
    head = nn.Linear(5, 4 + 4)
    feats = torch.randn(2, 12, 5)
    out = head(feats)
    loc_p, conf_p = out[..., :4], out[..., 4:]
    pos = conf_t > 0
    pos_idx = pos.unsqueeze(pos.dim()).expand_as(loc_p)
    loss_l = F.smooth_l1_loss(loc_p[pos_idx].view(-1, 4), loc_t[pos_idx].view(-1, 4), reduction="sum")
    batch_conf = conf_p.reshape(-1, 4)
    x_max = batch_conf.data.max()
    lse = torch.log(torch.sum(torch.exp(batch_conf - x_max), 1, keepdim=True)) + x_max
    loss_c = lse - batch_conf.gather(1, conf_t.view(-1, 1))
    loss_c = loss_c.view(2, -1)
    loss_c[pos] = 0
    _, loss_idx = loss_c.sort(1, descending=True)
    _, idx_rank = loss_idx.sort(1)
    num_pos = pos.long().sum(1, keepdim=True)
    num_neg = torch.clamp(3 * num_pos, max=pos.size(1) - 1)
    neg = idx_rank < num_neg.expand_as(idx_rank)
    pos_i = pos.unsqueeze(2).expand_as(conf_p)
    neg_i = neg.unsqueeze(2).expand_as(conf_p)
    conf_sel = conf_p[(pos_i + neg_i).gt(0)].view(-1, 4)
    targets = conf_t[(pos + neg).gt(0)]
    loss_cf = F.cross_entropy(conf_sel, targets, reduction="sum")
    N = num_pos.data.sum().float()
    total = (loss_l + loss_cf) / N
    total.backward()
    return overlaps, best_truth_idx, conf, loc_t, loss_idx, idx_rank, neg, total, head.weight.grad


def case_yolo_grid_decode(lib):
    """YOLOv5's Detect head decode: ``view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()``, the grid by
    ``torch.meshgrid([arange(ny), arange(nx)], indexing="ij")`` stacked as ``(x, y)``, ``(sig * 2 - 0.5 + grid) *
    stride`` and ``(sig * 2) ** 2 * anchor_grid``, both as ``torch.cat`` and as in-place slice writes on a
    ``clone`` (the older export form), confidence ``obj * cls``, ``max(2)`` and a boolean-mask filter; gradients
    through the strided slice ``view(-1)[::3]``; an ``indexing="xy"`` grid of linspace points."""
    torch = lib
    torch.manual_seed(0)
    na, no, ny, nx = 2, 7, 3, 4
    p = torch.randn(2, na * no, ny, nx, requires_grad=True)
    x = p.view(2, na, no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
    yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
    grid = torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()
    anchor_grid = torch.tensor([[10., 13.], [16., 30.]]).view(1, na, 1, 1, 2)
    y = x.sigmoid()
    xy = (y[..., 0:2] * 2 - 0.5 + grid) * 8
    wh = (y[..., 2:4] * 2) ** 2 * anchor_grid
    z = torch.cat((xy, wh, y[..., 4:]), -1).view(2, -1, no)
    y2 = x.sigmoid().clone()
    y2[..., 0:2] = (y2[..., 0:2] * 2 - 0.5 + grid) * 8
    y2[..., 2:4] = (y2[..., 2:4] * 2) ** 2 * anchor_grid
    conf = z[..., 4:5] * z[..., 5:]
    best, cls = conf.max(2)
    keep = best > 0.2
    sel = z[keep]
    (z.sum() + y2.view(-1)[::3].sum()).backward()
    xs = torch.linspace(0, 1, 4)
    g_xy = torch.stack(torch.meshgrid(xs, xs[:3], indexing="xy"), dim=-1)
    return z, y2, best, cls, sel, p.grad, g_xy


test_script_matches_torch = script_test(globals())
