"""Regression tests from probe scripts in the style of third-party code bases written in pure torch: detection
utilities (box IoU/GIoU, encode/decode, anchors from meshgrid, a greedy NMS loop), quantization-aware training
(fake_quantize_per_tensor/per_channel_affine, straight-through estimators, a learned step size), recommendation
models (EmbeddingBag, sparse embeddings with SparseAdam, BPR), metric learning (triplet/cosine/ranking losses,
cdist/pdist, hard-negative mining) and mixture-of-experts routing. Each ``case_*`` is written against the PyTorch
API only, with inputs and weights from formulas (tests/oracle.py).

Also probed and matching (kept out for time): an FCN head with bilinear upsampling, cross entropy with
ignore_index, sigmoid focal, dice and Tversky losses in a compiled step; affine_grid/grid_sample (all modes and
padding modes, align_corners both, float64/bfloat16/float16) and their errors; roi crops with F.interpolate
(bilinear, nearest, area, antialias) and adaptive pooling; interpolate/pad/fold errors; a Mamba-style selective
scan (sequential loop, cumsum-of-log-decay parallel form, compiled) and an S4 FFT convolution; logcumsumexp,
cumprod, cummax/cummin edges; FGSM, PGD (L-inf and L2) eager and compiled; Gram-matrix style transfer with LBFGS
on the image; a linear-chain CRF (forward algorithm, Viterbi backtracking, compiled Adam step); capsule squash with
dynamic routing; LIF spiking neurons with a surrogate-gradient autograd.Function in a compiled step; autograd.Function
misuse errors; pairwise_distance/cosine_similarity and the distance modules' reprs."""
import math

from oracle import formula_data as _data, formula_init as _init, raised as _err, script_test


def _boxes(lib, n, seed=0.0):
    # (x1, y1, x2, y2) boxes with positive sizes, from formulas
    c = _data(lib, n, 2, seed=seed) * 4 + 8
    wh = _data(lib, n, 2, seed=seed + 1.3).abs() * 3 + 1
    return lib.cat([c - wh / 2, c + wh / 2], dim=1)


def case_detection_box_utils(lib):
    """torchvision-style box_iou / generalized_box_iou / encode / decode, anchors from meshgrid, a greedy NMS loop
    and a GIoU + smooth-L1 + L1 loss on decoded boxes, backward into the regression deltas."""
    def box_area(b):
        return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])

    def box_iou(a, b):
        area1, area2 = box_area(a), box_area(b)
        lt = lib.max(a[:, None, :2], b[:, :2])
        rb = lib.min(a[:, None, 2:], b[:, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[:, :, 0] * wh[:, :, 1]
        union = area1[:, None] + area2 - inter
        return inter / union, union

    def giou(a, b):
        iou, union = box_iou(a, b)
        lt = lib.min(a[:, None, :2], b[:, :2])
        rb = lib.max(a[:, None, 2:], b[:, 2:])
        wh = (rb - lt).clamp(min=0)
        area = wh[:, :, 0] * wh[:, :, 1]
        return iou - (area - union) / area

    def encode(ref, prop, weights=(10.0, 10.0, 5.0, 5.0)):
        wx, wy, ww, wh = weights
        pw, ph = prop[:, 2] - prop[:, 0], prop[:, 3] - prop[:, 1]
        px, py = prop[:, 0] + 0.5 * pw, prop[:, 1] + 0.5 * ph
        gw, gh = ref[:, 2] - ref[:, 0], ref[:, 3] - ref[:, 1]
        gx, gy = ref[:, 0] + 0.5 * gw, ref[:, 1] + 0.5 * gh
        return lib.stack((wx * (gx - px) / pw, wy * (gy - py) / ph, ww * lib.log(gw / pw), wh * lib.log(gh / ph)),
                         dim=1)

    def decode(codes, boxes, weights=(10.0, 10.0, 5.0, 5.0), clip=math.log(1000.0 / 16)):
        boxes = boxes.to(codes.dtype)
        widths, heights = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        ctr_x, ctr_y = boxes[:, 0] + 0.5 * widths, boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = weights
        dx, dy = codes[:, 0::4] / wx, codes[:, 1::4] / wy
        dw = lib.clamp(codes[:, 2::4] / ww, max=clip)
        dh = lib.clamp(codes[:, 3::4] / wh, max=clip)
        pcx, pcy = dx * widths[:, None] + ctr_x[:, None], dy * heights[:, None] + ctr_y[:, None]
        pw, ph = lib.exp(dw) * widths[:, None], lib.exp(dh) * heights[:, None]
        c_to_c_h = lib.tensor(0.5, dtype=pcy.dtype, device=pcy.device) * ph
        c_to_c_w = lib.tensor(0.5, dtype=pcx.dtype, device=pcx.device) * pw
        return lib.stack((pcx - c_to_c_w, pcy - c_to_c_h, pcx + c_to_c_w, pcy + c_to_c_h), dim=2).flatten(1)

    def anchors(fh, fw, stride, sizes):
        shifts_x = lib.arange(0, fw, dtype=lib.int32) * stride
        shifts_y = lib.arange(0, fh, dtype=lib.int32) * stride
        shift_y, shift_x = lib.meshgrid(shifts_y, shifts_x, indexing="ij")
        shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
        shifts = lib.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
        base = lib.tensor([[-s / 2, -s / 2, s / 2, s / 2] for s in sizes]).round()
        return (shifts.view(-1, 1, 4) + base.view(1, -1, 4)).reshape(-1, 4)

    def nms(boxes, scores, thr):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i)
            if order.numel() == 1:
                break
            ious, _ = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])
            order = order[1:][ious[0] <= thr]
        return lib.stack(keep) if keep else lib.empty(0, dtype=lib.long)

    a = anchors(3, 4, 8, (8, 16))
    gt = _boxes(lib, 3, seed=0.5)
    prop = _boxes(lib, 6, seed=2.0)
    iou, _ = box_iou(prop, gt)
    matched_vals, matches = iou.max(dim=1)
    targets = encode(gt[matches], prop)
    deltas = (_data(lib, 6, 4, seed=3.0) * 0.5).requires_grad_()
    pred = decode(deltas, prop)
    g = giou(pred, gt[matches]).diagonal()
    loss = (1 - g).mean() + lib.nn.functional.smooth_l1_loss(deltas, targets, beta=1 / 9, reduction="sum") / 6
    # an L1 penalty whose target equals the input where |delta| <= 0.2: no gradient there (abs' sgn(0) = 0)
    loss = loss + lib.nn.functional.l1_loss(deltas, deltas.detach().clamp(-0.2, 0.2))
    loss.backward()
    scores = _data(lib, 6, seed=4.0)
    keep = nms(prop, scores, 0.3)
    return [a, a.dtype, iou, matched_vals, matches, targets, pred, g, loss, deltas.grad, keep, keep.dtype,
            giou(gt, gt).diagonal()]


def case_qat_fake_quantize(lib, jit):
    """Quantization-aware training: torch.fake_quantize_per_tensor_affine (float and Tensor qparams) and
    fake_quantize_per_channel_affine (int32, float and half zero points, axis 0 and 1) on float32/64 and bfloat16
    with NaN/inf, their straight-through gradients, node names, strides and errors; a min/max observer
    feeding Tensor qparams in a compiled QAT step, STE weight quantization with ``w + (q - w).detach()`` and an
    LSQ-style learned scale."""
    nn = lib.nn
    x = _data(lib, 3, 8) * 3
    x[0, :4] = lib.tensor([float("nan"), float("inf"), -float("inf"), 0.25])
    x[1, :3] = lib.tensor([0.35, -0.25, 0.05])  # ties of x / scale: rounded half to even
    s, z = lib.tensor([0.05, 0.1, 0.2]), lib.tensor([0, 3, -2], dtype=lib.int32)
    out = []
    for dt in (lib.float32, lib.float64, lib.bfloat16):
        xd = x.to(dt).detach().requires_grad_()
        ys = [lib.fake_quantize_per_tensor_affine(xd, 0.1, 3, -10, 50),
              lib.fake_quantize_per_tensor_affine(xd, lib.tensor(0.07), lib.tensor(2.7), -128, 127),
              lib.fake_quantize_per_channel_affine(xd, s, z, 0, -128, 127),
              lib.fake_quantize_per_channel_affine(xd, s, z.float() + 0.4, 0, -8, 7),
              lib.fake_quantize_per_channel_affine(xd, s, z.half(), 0, -8, 7),
              lib.fake_quantize_per_channel_affine(xd.t(), s, z, 1, -4, 11)]
        gs = lib.autograd.grad([y.sum() for y in ys], xd)
        out += [ys, gs, [type(y.grad_fn).__name__ for y in ys], [y.stride() for y in ys]]
    x64 = lib.linspace(-2, 2, 101, dtype=lib.float64)
    out.append(lib.fake_quantize_per_tensor_affine(x64, 0.0301, 1, -60, 60) - x64)
    # PyTorch saves the mask only: writing the input after the forward is fine, a second backward is not
    xg = x.nan_to_num().requires_grad_()
    h = xg * 1
    y = lib.fake_quantize_per_tensor_affine(h, 0.1, 0, -20, 20)
    with lib.no_grad():
        h.mul_(2)
    y.sum().backward()
    out += [xg.grad, _err(lambda: y.sum().backward())]
    zf = z.float()
    for bad in [lambda: lib.fake_quantize_per_tensor_affine(x, 0.1, 0, 10, 5),
                lambda: lib.fake_quantize_per_tensor_affine(x, 0.1, 300, 10, 50),
                lambda: lib.fake_quantize_per_tensor_affine(x.long(), 0.1, 0, -10, 50),
                lambda: lib.fake_quantize_per_tensor_affine(x, lib.tensor([0.1, 0.2]), lib.tensor([3, 4]), -10, 50),
                lambda: lib.fake_quantize_per_tensor_affine(x, lib.tensor(0.1, requires_grad=True), lib.tensor(3),
                                                            -10, 50),
                lambda: lib.fake_quantize_per_channel_affine(x, s.double(), z, 0, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s, z.long(), 0, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s[:2], z, 0, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s, z, 1, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s, z, 2, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s, z, -2, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s, z + 200, 0, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s.reshape(3, 1), z.reshape(3, 1), 0, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x.int(), s, z, 0, -128, 127),
                lambda: lib.fake_quantize_per_channel_affine(x, s, zf.requires_grad_(), 0, -128, 127)]:
        out.append(_err(bad))
    out.append(_err(lambda: lib.fake_quantize_per_channel_affine(x, s.bfloat16(), z, 0, -128, 127))[0])

    class MinMaxFakeQuant(nn.Module):  # an observer and fake-quantizer, as torch.ao's FakeQuantize
        def __init__(self):
            super().__init__()
            self.register_buffer("min_val", lib.tensor(float("inf")))
            self.register_buffer("max_val", lib.tensor(float("-inf")))

        def forward(self, v):
            with lib.no_grad():
                self.min_val.copy_(lib.minimum(self.min_val, v.min()))
                self.max_val.copy_(lib.maximum(self.max_val, v.max()))
            lo, hi = lib.clamp(self.min_val, max=0), lib.clamp(self.max_val, min=0)
            scale = ((hi - lo) / 255).clamp(min=1e-8)
            zp = (-128 - lib.round(lo / scale)).clamp(-128, 127).to(lib.int32)
            return lib.fake_quantize_per_tensor_affine(v, scale, zp, -128, 127)

    class STEQuant(nn.Module):
        def __init__(self, bits=4):
            super().__init__()
            self.bits = bits
            self.scale = nn.Parameter(lib.tensor(0.1))

        def forward(self, w):
            qmax = 2 ** (self.bits - 1) - 1
            q = lib.clamp(lib.round(w / self.scale), -qmax - 1, qmax) * self.scale
            return w + (q - w).detach()

    class QLinear(nn.Linear):
        def __init__(self, *a):
            super().__init__(*a)
            self.wq = STEQuant()
            self.aq = MinMaxFakeQuant()

        def forward(self, v):
            return nn.functional.linear(self.aq(v), self.wq(self.weight), self.bias)

    model = nn.Sequential(QLinear(8, 5), nn.ReLU(), QLinear(5, 2))
    _init(lib, model)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)

    @jit
    def step(v):
        opt.zero_grad()
        loss = model(v).pow(2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    xd = x.nan_to_num(posinf=2.0, neginf=-2.0)
    out += [step(xd), step(xd * 0.5), list(model.parameters()), [p.grad for p in model.parameters()],
            list(model.buffers())]
    # LSQ: a learned step size whose gradient is scaled by 1 / sqrt(numel * qmax)
    xs = xd.clone().requires_grad_()
    st = lib.tensor(0.2, requires_grad=True)
    gscale = 1.0 / math.sqrt(xs.numel() * 7)
    s_scaled = (st - st * gscale).detach() + st * gscale
    q = lib.clamp(xs / s_scaled, -8, 7)
    q = (q.round() - q).detach() + q
    yq = q * s_scaled
    yq.sum().backward()
    return out + [yq, st.grad, xs.grad]


def case_recsys_embedding_bag_and_bpr(lib):
    """DLRM-style nn.EmbeddingBag (sum/mean/max, padding_idx, include_last_offset, per_sample_weights, 2-D input,
    max_norm, offsets of another integer dtype) with its errors; matrix factorization with BPR loss on sparse=True
    embeddings trained by optim.SparseAdam, then SGD and Adagrad on a sparse embedding."""
    nn, F = lib.nn, lib.nn.functional
    out = []
    inp = lib.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
    offsets = lib.tensor([0, 4, 4, 7])
    psw = _data(lib, 10, seed=1.0)
    for mode, pad, last in [("sum", None, False), ("mean", 0, True), ("max", 2, False), ("mean", 2, False),
                            ("max", None, True)]:
        bag = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=pad, include_last_offset=last)
        _init(lib, bag)
        o = bag(inp, lib.cat([offsets, lib.tensor([10])]) if last else offsets.int())
        o.pow(2).sum().backward()
        out.append((o, bag.weight.grad))
    bag = nn.EmbeddingBag(10, 3, mode="sum")
    _init(lib, bag)
    o = bag(inp, offsets.short(), per_sample_weights=psw)
    o.sum().backward()
    out += [o, bag.weight.grad, bag(inp.view(2, 5)), F.embedding_bag(inp, bag.weight, offsets, mode="mean",
                                                                     max_norm=1.0), bag.weight.detach().clone(),
            repr(nn.EmbeddingBag(10, 3, mode="max", padding_idx=1)),
            repr(nn.EmbeddingBag(10, 3, max_norm=2.0, scale_grad_by_freq=True, sparse=True)),
            nn.EmbeddingBag.from_pretrained(lib.eye(4), mode="mean")(lib.tensor([[0, 1], [2, 3]]))]
    for bad in [lambda: bag(inp, offsets, per_sample_weights=psw[:3]),
                lambda: nn.EmbeddingBag(10, 3, mode="mean")(inp, offsets, per_sample_weights=psw),
                lambda: bag(inp.view(2, 5), offsets), lambda: bag(inp),
                lambda: bag(inp, lib.tensor([1, 4])), lambda: bag(inp.int(), lib.tensor([1, 4], dtype=lib.int32)),
                lambda: bag(inp, lib.tensor([0.0, 4.0])), lambda: bag(inp.short(), offsets.short()),
                lambda: bag(inp.float(), offsets), lambda: bag(inp, lib.tensor([0, 4, 20])),
                lambda: nn.EmbeddingBag(10, 3, mode="foo"), lambda: nn.EmbeddingBag(10, 3, padding_idx=10)]:
        out.append(_err(bad))
    out.append(_err(lambda: bag(inp + 10, offsets))[0])  # (PyTorch's message depends on its kernel's path)

    class MF(nn.Module):
        def __init__(self, nu=5, ni=7, d=4):
            super().__init__()
            self.u = nn.Embedding(nu, d, sparse=True)
            self.i = nn.Embedding(ni, d, sparse=True)
            self.ib = nn.Embedding(ni, 1, sparse=True)

        def forward(self, u, i, j):
            pu = self.u(u)
            xi = (pu * self.i(i)).sum(-1) + self.ib(i).squeeze(-1)
            xj = (pu * self.i(j)).sum(-1) + self.ib(j).squeeze(-1)
            return xi - xj

    m = MF()
    _init(lib, m)
    opt = lib.optim.SparseAdam(list(m.parameters()), lr=0.05)
    u, i, j = lib.tensor([0, 1, 1, 3]), lib.tensor([2, 3, 3, 6]), lib.tensor([1, 0, 5, 6])
    for _ in range(3):
        opt.zero_grad()
        loss = -F.logsigmoid(m(u, i, j)).mean()
        loss.backward()
        out.append((loss.detach(), m.i.weight.grad.to_dense()))
        opt.step()
    st = opt.state[m.i.weight]
    out += [list(m.parameters()), st["step"], st["exp_avg"], st["exp_avg_sq"]]
    e = nn.Embedding(4, 2)
    e(lib.tensor([1])).sum().backward()
    out.append(_err(lambda: lib.optim.SparseAdam(e.parameters()).step()))
    m2 = nn.Embedding(6, 3, sparse=True)
    _init(lib, m2)
    m2(lib.tensor([[1, 2], [2, 5]])).pow(2).sum().backward()
    lib.optim.SGD(m2.parameters(), lr=0.1).step()
    lib.optim.Adagrad(m2.parameters(), lr=0.1).step()
    out += [m2.weight, _err(lambda: lib.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9).step())]
    return out


def case_metric_learning_losses_and_distances(lib):
    """TripletMarginLoss (p, swap, reductions), triplet_margin_with_distance_loss, CosineEmbeddingLoss,
    MarginRankingLoss, cdist/pdist for p = 0, 0.5, 1, 2, inf and the compute modes, their gradients at coincident
    points, batch-hard and semi-hard negative mining with masks, lp_pool descriptors, and the shape errors."""
    nn, F = lib.nn, lib.nn.functional
    a = _data(lib, 6, 5).requires_grad_()
    p = _data(lib, 6, 5, seed=1.0).requires_grad_()
    n = _data(lib, 6, 5, seed=2.0).requires_grad_()
    out = []
    for swap, pn, red in [(False, 1, "mean"), (True, 2, "none"), (True, 3.5, "sum"), (False, 2, "none")]:
        out.append(nn.TripletMarginLoss(margin=0.5, p=pn, swap=swap, reduction=red)(a, p, n))
    out.append(F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), margin=0.3, swap=True))
    y = lib.tensor([1, -1, 1, -1, 1, 1])
    out += [nn.CosineEmbeddingLoss(margin=0.2)(a, p, y), nn.CosineEmbeddingLoss(reduction="none")(a, p, y),
            nn.MarginRankingLoss(margin=0.1)(a[:, 0], p[:, 0], y.float()),
            F.margin_ranking_loss(a[:, 0], p[:, 0], y, reduction="none")]
    for pp in (1.0, 2.0, float("inf"), 0.5, 0.0):
        out += [lib.cdist(a, p, p=pp), lib.pdist(a, p=pp)]
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        out.append(lib.cdist(a.unsqueeze(0), n.unsqueeze(0), compute_mode=mode))
    out += [lib.autograd.grad(lib.cdist(a, a).sum(), a)[0],
            lib.autograd.grad(lib.pdist(lib.cat([a, a[:1]])).sum(), a)[0],
            lib.autograd.grad(lib.cdist(a, a, p=float("inf")).sum(), a)[0],
            lib.autograd.grad(lib.cdist(a, a, p=1).sum(), a)[0]]
    emb = F.normalize(a, dim=1)
    labels = lib.tensor([0, 0, 1, 1, 2, 2])
    dist = lib.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    eye = lib.eye(6, dtype=lib.bool)
    hardest_pos = (dist * (same & ~eye)).max(1)[0]
    hardest_neg = (dist + 1e5 * same).min(1)[0]
    out.append(F.relu(hardest_pos - hardest_neg + 0.2).mean())
    sorted_d, idx = dist.masked_fill(same, float("inf")).sort(dim=1)
    out += [sorted_d, idx]
    total = sum(o.sum() for o in out if isinstance(o, lib.Tensor) and o.requires_grad and lib.isfinite(o).all())
    total.backward()
    out += [a.grad, p.grad, n.grad]
    # descriptors by power-average pooling of a ReLU feature map (some windows all zero: zero gradient, not NaN)
    fmap = F.relu(_data(lib, 2, 3, 4, 4, seed=5.0) - 0.3).requires_grad_()
    desc = F.normalize(F.lp_pool2d(fmap, 2, 2).flatten(1) + F.lp_pool1d(fmap.flatten(2), 3, 4).flatten(1).sum(1, True))
    out += [desc, lib.autograd.grad(lib.cdist(desc, desc.flip(0)).sum(), fmap)[0]]
    for bad in [lambda: lib.cdist(a, p[:, :3]), lambda: lib.cdist(a, p, p=-1), lambda: lib.pdist(a.unsqueeze(0)),
                lambda: nn.TripletMarginLoss()(a, p, n[:, :3]), lambda: nn.CosineEmbeddingLoss()(a, p, y[:3]),
                lambda: nn.CosineEmbeddingLoss()(a, p[:3], y), lambda: nn.MarginRankingLoss()(a[:, 0], p[:3, 0], y)]:
        out.append(_err(bad))
    return out


def case_moe_routing_and_index_errors(lib, jit):
    """Mixture-of-experts routing: top-k gating with softmax over the selected logits, one_hot masks, capacity
    dropping with cumsum positions, Switch load-balancing and router z-losses, tokens gathered per expert with
    nonzero and combined with index_add_, a dense einsum version trained by a compiled AdamW step; then the errors
    of one_hot, topk, scatter_add_ and index_add_/index_copy_/index_reduce_ (a 2-D index) routing code runs into."""
    nn, F = lib.nn, lib.nn.functional
    E, D, H, k, T = 4, 6, 8, 2, 10

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(D, E, bias=False)
            self.w1 = nn.Parameter(lib.empty(E, D, H))
            self.w2 = nn.Parameter(lib.empty(E, H, D))

        def route(self, x, capacity):
            logits = self.gate(x)
            probs = logits.softmax(-1)
            topv, topi = lib.topk(logits, k, dim=-1)
            weights = F.softmax(topv, dim=-1, dtype=lib.float32)
            mask = F.one_hot(topi, num_classes=E)  # T, k, E
            m = mask.permute(1, 0, 2).reshape(k * T, E)  # first choices before second ones
            pos = lib.cumsum(m, dim=0) * m - 1
            keep = ((pos < capacity) & (m > 0)).reshape(k, T, E).permute(1, 0, 2).any(-1)
            weights = weights * keep
            aux = E * (mask[:, 0].float().mean(0) * probs.mean(0)).sum()
            z = lib.logsumexp(logits, -1).pow(2).mean()
            return topi, weights, aux, z

        def forward(self, x, capacity):
            topi, weights, aux, z = self.route(x, capacity)
            h = lib.einsum("teh,ehd->ted", F.silu(lib.einsum("td,edh->teh", x, self.w1)), self.w2)
            return lib.einsum("te,ted->td", lib.zeros(T, E).scatter(1, topi, weights), h), aux, z

        def sparse_forward(self, x, capacity):
            topi, weights, aux, z = self.route(x, capacity)
            flat_i, flat_w = topi.reshape(-1), weights.reshape(-1)
            tok = lib.arange(T).repeat_interleave(k)
            out = lib.zeros_like(x)
            for e in range(E):
                sel = (flat_i == e).nonzero(as_tuple=True)[0]
                if sel.numel() == 0:
                    continue
                h = F.silu(x[tok[sel]] @ self.w1[e]) @ self.w2[e]
                out.index_add_(0, tok[sel], h * flat_w[sel, None])
            counts = lib.zeros(E, dtype=lib.long).scatter_add_(0, flat_i, lib.ones_like(flat_i))
            return out, aux, z, counts

    m = MoE()
    _init(lib, m)
    x = _data(lib, T, D)
    out, aux, z, counts = m.sparse_forward(x, 3)
    dense, _, _ = m(x, 3)
    res = [out, dense, aux, z, counts]
    (out.sum() + aux * 0.01 + z * 0.001).backward()
    res.append([p.grad for p in m.parameters()])
    opt = lib.optim.AdamW(m.parameters(), lr=0.01)

    @jit
    def step(x):
        opt.zero_grad()
        y, aux, z = m(x, 3)
        loss = (y - x).pow(2).mean() + 0.01 * aux + 0.001 * z
        loss.backward()
        opt.step()
        return loss.detach()

    res += [step(x), step(x), list(m.parameters())]
    topv, topi = _data(lib, 6, 3, seed=1.0).topk(2, dim=-1)
    src = _data(lib, 6, 4)
    for bad in [lambda: F.one_hot(topi.int(), 3), lambda: F.one_hot(topi, 1), lambda: F.one_hot(topi - 1, 3),
                lambda: F.one_hot(lib.tensor([], dtype=lib.long)), lambda: topv.topk(4, dim=-1),
                lambda: lib.zeros(3).scatter_add_(0, topi[:, 0].int(), lib.ones(6)),
                lambda: lib.zeros(3, dtype=lib.long).scatter_add_(0, topi[:, 0], lib.ones(6)),
                lambda: lib.zeros(3, 4).index_add_(0, topi[:, 0], src.double()),
                lambda: lib.zeros(3, 4).index_add_(0, topi[:, :1], src),
                lambda: lib.zeros(3, 4).index_add(0, topi[:, :1], src[:, :1]),
                lambda: lib.zeros(3, 4).index_add_(0, topi[:, 0] + 5, src),
                lambda: lib.zeros(3, 4).index_copy_(0, topi[:, :1], src),
                lambda: lib.zeros(3, 4).index_reduce_(0, topi[:, :1], src, "amax"),
                lambda: lib.zeros(3).scatter_reduce(0, topi[:, 0], topv[:, 0], reduce="max")]:
        res.append(_err(bad))
    c = lib.cumsum(F.one_hot(topi[:, 0], 3), 0)
    res += [c, lib.cumsum(topi.bool(), 0).dtype, lib.zeros(3, 4).index_add_(0, topi[:, 0].int(), src, alpha=0.5),
            lib.bincount(topi[:, 0], weights=topv[:, 0]), repr(topv.topk(1)),
            lib.zeros(3).scatter_reduce(0, topi[:, 0], topv[:, 0], reduce="amax", include_self=False)]
    return res


test_script_matches_torch = script_test(globals())
