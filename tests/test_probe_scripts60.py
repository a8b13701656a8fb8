"""Third-party programs, round 60 (helper 174): evaluation metrics written in PyTorch the way torchmetrics,
torchvision's references and retrieval/NLP evaluation scripts write them (confusion matrices by ``bincount``,
precision/recall/F1 with macro/micro/weighted averaging and zero-division handling, top-k accuracy, AUROC and
average precision by stable descending ``argsort`` + ``cumsum`` + ``unique_consecutive``, calibration error by
``bucketize``, regression scores, rank correlations with averaged ties, retrieval metrics by ``topk``, BLEU n-gram
counts by ``unfold`` + ``unique(dim=0)``, streaming metric state in module buffers merged across batches, mean IoU
and dice), re-implemented here (no imports of those libraries), run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _safe_divide(torch, num, den, zero_division=0.0):
    """torchmetrics' _safe_divide: ``num / den`` where ``den != 0``, ``zero_division`` elsewhere."""
    num = num if num.is_floating_point() else num.float()
    den = den if den.is_floating_point() else den.float()
    return torch.where(den != 0, num / torch.where(den != 0, den, torch.ones_like(den)),
                       torch.full_like(num, zero_division))


def _binary_clf_curve(torch, preds, target):
    """Distinct-threshold counts of true and false positives (torchmetrics' _binary_clf_curve)."""
    order = torch.argsort(preds, descending=True, stable=True)
    preds, target = preds[order], target[order]
    distinct = torch.where(preds[1:] - preds[:-1])[0]
    idx = torch.cat([distinct, torch.tensor([target.numel() - 1], device=preds.device)])
    tps = torch.cumsum(target, dim=0)[idx]
    fps = 1 + idx - tps
    return fps, tps, preds[idx]


def case_confusion_matrix_prf_averaging(lib):
    """Multiclass stat scores from a ``bincount(target * C + pred, minlength=C*C)`` confusion matrix: tp/fp/fn/tn
    per class as int64, precision/recall/F1 with macro, micro, weighted (by support) and none averaging, a class that
    is never predicted (zero division to 0 and to 1), ``ignore_index`` by a boolean mask, a normalised matrix
    (``normalize="true"`` with ``nan_to_num``) and balanced accuracy."""
    torch = lib
    C = 4
    target = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3, 3, 1, 1, 0, 2, -1])
    pred = torch.tensor([0, 2, 2, 0, 0, 1, 2, 0, 1, 1, 2, 0, 1, 3])
    keep = target != -1
    t, p = target[keep], pred[keep]
    cm = torch.bincount(t * C + p, minlength=C * C).reshape(C, C)
    tp = cm.diag()
    fp = cm.sum(0) - tp
    fn = cm.sum(1) - tp
    tn = cm.sum() - (tp + fp + fn)
    support = tp + fn
    prec, rec = _safe_divide(torch, tp, tp + fp), _safe_divide(torch, tp, tp + fn)
    prec1 = _safe_divide(torch, tp, tp + fp, zero_division=1.0)
    f1 = _safe_divide(torch, 2 * prec * rec, prec + rec)
    macro = f1.mean()
    weighted = (f1 * support).sum() / support.sum()
    micro_p = tp.sum() / (tp.sum() + fp.sum())
    micro_f1 = _safe_divide(torch, 2 * tp.sum(), 2 * tp.sum() + fp.sum() + fn.sum())
    fbeta = _safe_divide(torch, (1 + 0.5 ** 2) * prec * rec, 0.5 ** 2 * prec + rec)
    norm = (cm / cm.sum(1, keepdim=True)).nan_to_num(0.0)
    balanced = rec.mean()
    spec = tn / (tn + fp)
    return (cm, tp, fp, fn, tn, tn.dtype, prec, prec1, rec, f1, macro, weighted, micro_p, micro_f1, fbeta, norm,
            balanced, spec, support.dtype, cm.trace().item() / t.numel())


def case_topk_accuracy_and_multilabel(lib):
    """Top-k accuracy the torchvision-references way: ``output.topk(maxk, 1, True, True)``, ``pred.t()``,
    ``eq(target.view(1, -1).expand_as(pred))``, ``correct[:k].reshape(-1).float().sum(0, keepdim=True)`` times
    ``100 / batch``; multilabel accuracy, hamming distance and exact match on ``sigmoid(logits) > 0.5``, subset
    and per-label F1 with ``sum(dim=0)``; a ``logits.argmax`` accuracy accumulated over batches in int64."""
    torch = lib
    torch.manual_seed(1)
    logits = torch.randn(8, 5)
    target = torch.tensor([0, 4, 2, 1, 3, 3, 0, 2])
    maxk = 3
    _, pred = logits.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in (1, 3)]
    ml_logits = torch.randn(6, 4)
    ml_target = (torch.rand(6, 4) > 0.5).long()
    ml_pred = (torch.sigmoid(ml_logits) > 0.5).long()
    hamming = (ml_pred != ml_target).float().mean()
    exact = (ml_pred == ml_target).all(dim=1).float().mean()
    tp = (ml_pred * ml_target).sum(0)
    fp = (ml_pred * (1 - ml_target)).sum(0)
    fn = ((1 - ml_pred) * ml_target).sum(0)
    f1 = _safe_divide(torch, 2 * tp, 2 * tp + fp + fn)
    correct_total, seen = torch.tensor(0), 0
    for chunk_l, chunk_t in zip(logits.split(3), target.split(3)):
        correct_total += (chunk_l.argmax(-1) == chunk_t).sum()
        seen += chunk_t.numel()
    return (pred, correct, res, hamming, exact, tp, f1, correct_total, correct_total.dtype,
            correct_total.item() / seen, (correct_total / seen).dtype)


def case_binary_auroc_average_precision(lib):
    """Binary AUROC and average precision from ``_binary_clf_curve`` (stable descending ``argsort``, distinct
    thresholds by ``torch.where`` on the diffs, ``cumsum`` of targets): ROC points with a prepended origin and
    ``trapezoid``; the precision-recall curve reversed by ``flip`` with the final (1, 0) point; AP as
    ``-sum(diff(recall) * precision[:-1])``; tied scores; thresholds kept; a rank-based (Mann-Whitney) AUROC with
    averaged ranks for comparison."""
    torch = lib
    preds = torch.tensor([0.9, 0.8, 0.8, 0.7, 0.6, 0.55, 0.55, 0.4, 0.3, 0.1])
    target = torch.tensor([1, 1, 0, 1, 0, 1, 0, 0, 1, 0])
    fps, tps, thr = _binary_clf_curve(torch, preds, target)
    tps_ = torch.cat([torch.zeros(1, dtype=tps.dtype), tps])
    fps_ = torch.cat([torch.zeros(1, dtype=fps.dtype), fps])
    fpr, tpr = fps_ / fps_[-1], tps_ / tps_[-1]
    auroc = torch.trapezoid(tpr, fpr)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    precision = torch.cat([precision.flip(0), torch.ones(1)])
    recall = torch.cat([recall.flip(0), torch.zeros(1)])
    ap = -torch.sum((recall[1:] - recall[:-1]) * precision[:-1])
    vals, inv, counts = torch.unique_consecutive(preds.sort().values, return_inverse=True, return_counts=True)
    first = torch.cumsum(counts, 0) - counts
    avg_rank_sorted = (first + (counts - 1) / 2.0 + 1)[inv]
    ranks = torch.empty_like(avg_rank_sorted).scatter_(0, preds.argsort(stable=True), avg_rank_sorted)
    n_pos = target.sum()
    n_neg = target.numel() - n_pos
    auroc_mw = (ranks[target == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return fps, tps, thr, tps.dtype, fpr, tpr, auroc, precision, recall, ap, vals, counts, ranks, auroc_mw


def case_multiclass_auroc_pr_curve_ovr(lib):
    """One-vs-rest multiclass AUROC and AP from ``softmax`` probabilities: per class the binary curve on
    ``target == c`` (as int), macro and support-weighted averages, a class whose positives are absent giving NaN
    excluded by ``isnan``/``nanmean``, and the PR curve's thresholds clipped where recall first reaches 1 via
    ``nonzero``."""
    torch = lib
    torch.manual_seed(3)
    probs = torch.softmax(torch.randn(9, 4), dim=1)
    target = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 1])
    aurocs, aps, last = [], [], []
    for c in range(4):
        t = (target == c).long()
        fps, tps, thr = _binary_clf_curve(torch, probs[:, c], t)
        fps = torch.cat([torch.zeros(1, dtype=fps.dtype), fps])
        tps = torch.cat([torch.zeros(1, dtype=tps.dtype), tps])
        fpr = fps / fps[-1]
        tpr = tps / tps[-1]
        aurocs.append(torch.trapezoid(tpr, fpr))
        prec = tps[1:] / (tps[1:] + fps[1:])
        rec = tps[1:] / tps[-1]
        aps.append(torch.sum((rec - torch.cat([torch.zeros(1), rec[:-1]])) * prec))
        full = torch.nonzero(rec >= 1)
        last.append(thr[: full[0, 0] + 1] if full.numel() else thr)
    aurocs, aps = torch.stack(aurocs), torch.stack(aps)
    support = torch.bincount(target, minlength=4)
    ok = ~torch.isnan(aurocs)
    weighted = (aurocs[ok] * support[ok]).sum() / support[ok].sum()
    return aurocs, aps, aurocs.nanmean(), aps[ok].mean(), weighted, support, last, ok


def case_calibration_error_bucketize(lib):
    """Expected / maximum calibration error: confidences and accuracies from ``softmax().max(1)``, bins by
    ``torch.bucketize(conf, boundaries[1:-1], right=...)`` and by ``linspace`` comparisons, per-bin counts by
    ``bincount(minlength=n_bins)``, sums by ``scatter_add``, ``nan_to_num`` of empty bins, ECE (l1), MCE (max) and
    RMS (l2) norms; temperature scaling of the logits by a few LBFGS-free gradient steps on NLL."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4)
    logits = torch.randn(16, 3) * 2
    target = torch.randint(0, 3, (16,))
    conf, pred = torch.softmax(logits, 1).max(1)
    acc = (pred == target).float()
    n_bins = 5
    bounds = torch.linspace(0, 1, n_bins + 1)
    idx = torch.bucketize(conf, bounds[1:-1], right=True)
    idx_l = torch.bucketize(conf, bounds[1:-1])
    counts = torch.bincount(idx, minlength=n_bins)
    conf_sum = torch.zeros(n_bins).scatter_add_(0, idx, conf)
    acc_sum = torch.zeros(n_bins).scatter_add_(0, idx, acc)
    prop = counts.float() / counts.sum()
    gap = ((acc_sum / counts).nan_to_num(0.0) - (conf_sum / counts).nan_to_num(0.0)).abs()
    ece = (gap * prop).sum()
    mce = gap.max()
    rms = torch.sqrt((gap ** 2 * prop).sum())
    in_bin = (conf.unsqueeze(1) > bounds[:-1]) & (conf.unsqueeze(1) <= bounds[1:])
    T = torch.ones(1, requires_grad=True)
    opt = torch.optim.SGD([T], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(logits / T, target)
        loss.backward()
        opt.step()
    return conf, pred, idx, idx_l, counts, counts.dtype, gap, ece, mce, rms, in_bin.sum(0), T.detach(), loss.item()


def case_regression_scores_and_rank_correlations(lib):
    """Regression metrics: MAE, MSE, RMSE, MAPE with an ``eps`` clamp, SMAPE, R² (uniform and variance-weighted
    over two outputs), adjusted R², explained variance; Pearson by centred sums in float64 via ``.double()``,
    Spearman from average ranks (double ``argsort`` on ties fixed by ``unique(return_inverse)`` and
    ``scatter_add`` of positions), Kendall tau-b from pairwise ``sign`` products over ``triu_indices`` pairs."""
    torch = lib
    y = torch.tensor([[3.0, 1.0], [-0.5, 2.0], [2.0, 2.0], [7.0, 4.5], [4.0, 1.0], [2.0, 0.0]])
    p = torch.tensor([[2.5, 1.5], [0.0, 2.0], [2.0, 1.0], [8.0, 4.0], [4.5, 1.0], [1.0, 0.5]])
    err = p - y
    mae, mse = err.abs().mean(0), (err ** 2).mean(0)
    mape = (err.abs() / y.abs().clamp(min=1.17e-6)).mean()
    smape = (2 * err.abs() / (p.abs() + y.abs()).clamp(min=1.17e-6)).mean()
    ss_res = (err ** 2).sum(0)
    ss_tot = ((y - y.mean(0)) ** 2).sum(0)
    r2 = 1 - ss_res / ss_tot
    r2_vw = 1 - ss_res.sum() / ss_tot.sum()
    n, k = y.shape[0], 2
    adj = 1 - (1 - r2.mean()) * (n - 1) / (n - k - 1)
    ev = 1 - (err.var(0, unbiased=False)) / y.var(0, unbiased=False)
    a, b = y[:, 0].double(), p[:, 0].double()
    pearson = ((a - a.mean()) * (b - b.mean())).sum() / ((a - a.mean()).norm() * (b - b.mean()).norm())

    def rank(x):
        uniq, inv = torch.unique(x, return_inverse=True)
        order = x.argsort().argsort().to(x.dtype) + 1
        sums = torch.zeros(uniq.numel(), dtype=x.dtype).scatter_add_(0, inv, order)
        cnt = torch.zeros(uniq.numel(), dtype=x.dtype).scatter_add_(0, inv, torch.ones_like(x))
        return (sums / cnt)[inv]

    ry, rp = rank(y[:, 1]), rank(p[:, 1])
    spearman = torch.corrcoef(torch.stack([ry, rp]))[0, 1]
    i, j = torch.triu_indices(n, n, offset=1)
    sy, sp = torch.sign(y[i, 1] - y[j, 1]), torch.sign(p[i, 1] - p[j, 1])
    concord = (sy * sp).sum()
    n0 = i.numel()
    tau_b = concord / torch.sqrt((n0 - (sy == 0).sum()) * (n0 - (sp == 0).sum()).float())
    return (mae, mse, mse.sqrt(), mape, smape, r2, r2.mean(), r2_vw, adj, ev, pearson, pearson.dtype, ry, rp,
            spearman, concord, tau_b)


def case_retrieval_mrr_ndcg_hit_rate(lib):
    """Retrieval metrics over query groups: scores sorted by ``topk(k, sorted=True)``, relevance gathered with
    ``gather``, reciprocal rank from the first hit via ``argmax`` on a bool-as-int tensor and ``(hits.sum(1) > 0)``,
    hit rate and precision/recall at k, DCG with ``log2(arange + 2)`` discounts and the ideal DCG from the
    relevance ``sort(descending=True)``, NDCG with zero-IDCG queries set to 0, and grouping by ``indexes`` with
    ``unique`` + boolean masks as torchmetrics does."""
    torch = lib
    torch.manual_seed(5)
    indexes = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2])
    scores = torch.rand(12)
    rel = torch.tensor([0, 2, 0, 1, 0, 0, 1, 0, 3, 0, 0, 0])
    k = 3
    mrr, ndcg, hit, prec, recall = [], [], [], [], []
    for q in torch.unique(indexes):
        m = indexes == q
        s, r = scores[m], rel[m]
        top = s.topk(min(k, s.numel()), sorted=True).indices
        rk = r[top]
        hits = rk > 0
        first = hits.int().argmax()
        mrr.append(1.0 / (first.float() + 1) if hits.any() else torch.tensor(0.0))
        hit.append(hits.any().float())
        prec.append(hits.sum().float() / k)
        recall.append(hits.sum() / (r > 0).sum().clamp(min=1))
        disc = torch.log2(torch.arange(rk.numel(), dtype=torch.float32) + 2)
        dcg = ((2.0 ** rk - 1) / disc).sum()
        ideal = r.sort(descending=True).values[: rk.numel()]
        idcg = ((2.0 ** ideal - 1) / disc).sum()
        ndcg.append(dcg / idcg if idcg > 0 else torch.zeros(()))
    all_top = torch.stack([scores[indexes == q].topk(3).indices for q in range(3)])
    return (torch.stack(mrr), torch.stack(ndcg), torch.stack(hit).mean(), torch.stack(prec), torch.stack(recall),
            torch.stack(recall).dtype, all_top, torch.stack(ndcg).mean())


def case_bleu_ngram_counts_unfold_unique(lib):
    """Corpus BLEU the tensor way: token ids, n-grams by ``tensor.unfold(0, n, 1)``, counts by ``torch.unique(dim=0,
    return_counts=True)``, clipped counts by matching hypothesis n-grams against the max reference counts through
    ``(a[:, None] == b[None]).all(-1)`` and ``amax``; modified precisions, the brevity penalty by ``exp(1 - r/c)``,
    the geometric mean by ``exp(mean(log p))`` with add-one smoothing, and a hypothesis shorter than n."""
    torch = lib
    hyps = [torch.tensor([1, 2, 3, 4, 2, 3, 5]), torch.tensor([7, 8, 9]), torch.tensor([4])]
    refs = [[torch.tensor([1, 2, 3, 5, 2, 3, 4]), torch.tensor([2, 3, 4, 2, 3])], [torch.tensor([7, 8, 9, 10])],
            [torch.tensor([4, 4])]]
    max_n = 4
    num, den = torch.zeros(max_n), torch.zeros(max_n)
    hyp_len = ref_len = 0
    per_n = []
    for h, rs in zip(hyps, refs):
        hyp_len += h.numel()
        ref_len += min((r.numel() for r in rs), key=lambda L: (abs(L - h.numel()), L))
        for n in range(1, max_n + 1):
            if h.numel() < n:
                continue
            hg, hc = torch.unique(h.unfold(0, n, 1), dim=0, return_counts=True)
            max_ref = torch.zeros_like(hc)
            for r in rs:
                if r.numel() < n:
                    continue
                rg, rc = torch.unique(r.unfold(0, n, 1), dim=0, return_counts=True)
                match = (hg[:, None, :] == rg[None, :, :]).all(-1)
                max_ref = torch.maximum(max_ref, (match * rc[None, :]).amax(1))
            num[n - 1] += torch.minimum(hc, max_ref).sum()
            den[n - 1] += hc.sum()
            per_n.append((hg, hc))
    prec = num / den
    smooth = (num + 1) / (den + 1)
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    bleu = bp * torch.exp(torch.log(prec).mean())
    bleu_s = bp * torch.exp(torch.log(smooth).mean())
    return num, den, prec, bp, bleu, bleu_s, per_n, hyp_len, ref_len


def case_streaming_metric_buffers_merge(lib):
    """A torchmetrics-like Metric as an ``nn.Module`` with ``register_buffer`` states (int64 counts, float sums,
    a confusion matrix), ``update`` over three batches, ``compute``, a second metric updated on other batches and
    merged by adding states (``merge_state``), ``reset`` by ``zero_()`` / ``fill_``, a running mean/variance by
    Welford's update, ``state_dict`` keys and dtypes, and ``persistent=False`` states left out."""
    torch, nn = lib, lib.nn

    class Stats(nn.Module):
        def __init__(self, C=3):
            super().__init__()
            self.C = C
            self.register_buffer("confmat", torch.zeros(C, C, dtype=torch.long))
            self.register_buffer("total", torch.tensor(0))
            self.register_buffer("sum_sq", torch.tensor(0.0))
            self.register_buffer("mean", torch.zeros(2), persistent=False)
            self.register_buffer("m2", torch.zeros(2), persistent=False)
            self.register_buffer("n", torch.tensor(0.0), persistent=False)

        def update(self, logits, target, feats):
            pred = logits.argmax(1)
            self.confmat += torch.bincount(target * self.C + pred, minlength=self.C ** 2).view(self.C, self.C)
            self.total += target.numel()
            self.sum_sq += ((torch.softmax(logits, 1) - nn.functional.one_hot(target, self.C)) ** 2).sum()
            for x in feats:
                self.n += 1
                delta = x - self.mean
                self.mean += delta / self.n
                self.m2 += delta * (x - self.mean)

        def merge_state(self, other):
            self.confmat += other.confmat
            self.total += other.total
            self.sum_sq += other.sum_sq

        def compute(self):
            acc = self.confmat.diag().sum() / self.total
            iou = self.confmat.diag() / (self.confmat.sum(0) + self.confmat.sum(1) - self.confmat.diag())
            return acc, iou, self.sum_sq / self.total, self.m2 / (self.n - 1)

        def reset(self):
            self.confmat.zero_()
            self.total.fill_(0)
            self.sum_sq.zero_()

    torch.manual_seed(6)
    a, b = Stats(), Stats()
    for i in range(4):
        logits, target, feats = torch.randn(5, 3), torch.randint(0, 3, (5,)), torch.randn(3, 2)
        (a if i % 2 == 0 else b).update(logits, target, feats)
    part = a.compute()
    a.merge_state(b)
    merged = a.compute()
    sd = a.state_dict()
    keys = sorted(sd)
    dtypes = [str(sd[k].dtype) for k in keys]
    a.reset()
    return part, merged, keys, dtypes, a.confmat.sum(), a.total, a.total.dtype, [n for n, _ in b.named_buffers()]


def case_segmentation_miou_dice(lib):
    """Semantic segmentation scores: ``argmax(1)`` of logits, an ``ignore_index=255`` mask, the confusion matrix by
    ``bincount`` on the masked pixels, per-class IoU and ``nanmean`` mIoU over present classes, frequency-weighted
    IoU, pixel accuracy; dice per class from one-hot masks (``F.one_hot(...).permute(0, 3, 1, 2)``) with
    ``sum(dim=(0, 2, 3))`` and an ``eps``; a boundary-free binary dice with ``sigmoid`` and a soft dice loss's
    gradient."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(7)
    C = 3
    logits = torch.randn(2, C, 4, 5, requires_grad=True)
    target = torch.randint(0, C, (2, 4, 5))
    target[0, 0, :2] = 255
    pred = logits.argmax(1)
    valid = target != 255
    cm = torch.bincount(C * target[valid] + pred[valid], minlength=C * C).reshape(C, C)
    inter = cm.diag()
    union = cm.sum(0) + cm.sum(1) - inter
    iou = inter / union
    miou = torch.nanmean(iou)
    freq = cm.sum(1) / cm.sum()
    fwiou = (freq[freq > 0] * iou[freq > 0]).sum()
    pix_acc = inter.sum().float() / cm.sum()
    tgt = torch.where(valid, target, torch.zeros_like(target))
    oh_t = F.one_hot(tgt, C).permute(0, 3, 1, 2) * valid.unsqueeze(1)
    oh_p = F.one_hot(pred, C).permute(0, 3, 1, 2) * valid.unsqueeze(1)
    dice = (2 * (oh_t * oh_p).sum(dim=(0, 2, 3)) + 1e-6) / (oh_t.sum(dim=(0, 2, 3)) + oh_p.sum(dim=(0, 2, 3)) + 1e-6)
    probs = logits.softmax(1) * valid.unsqueeze(1)
    soft = 1 - (2 * (probs * oh_t).sum((0, 2, 3)) + 1) / (probs.sum((0, 2, 3)) + oh_t.sum((0, 2, 3)) + 1)
    soft.mean().backward()
    bin_p = torch.sigmoid(logits[:, 0].detach()) > 0.5
    bin_t = target == 1
    bdice = 2 * (bin_p & bin_t).sum() / (bin_p.sum() + bin_t.sum())
    return cm, iou, miou, fwiou, pix_acc, oh_t.dtype, dice, soft, logits.grad, bdice, bdice.dtype


def case_detection_map_greedy_matching(lib):
    """Detection mAP at one IoU threshold like the COCO/VOC evaluators: pairwise IoU by broadcasting ``max``/``min``
    of corners, detections sorted by score (stable, descending), greedy matching of each detection to the best
    unmatched ground truth of its class with ``argmax`` and a boolean ``matched`` tensor, TP/FP cumulative sums,
    the VOC all-point interpolated AP by a reversed ``cummax`` of precision and ``where`` on recall changes."""
    torch = lib
    gt = torch.tensor([[0.0, 0.0, 4.0, 4.0], [5.0, 5.0, 9.0, 9.0], [1.0, 6.0, 3.0, 9.0]])
    gt_cls = torch.tensor([0, 0, 1])
    det = torch.tensor([[0.5, 0.2, 4.0, 4.5], [5.5, 5.0, 9.0, 8.5], [0.0, 0.0, 3.0, 3.0], [1.0, 6.5, 3.0, 9.0],
                        [6.0, 0.0, 8.0, 2.0], [4.8, 5.2, 9.2, 9.1]])
    det_cls = torch.tensor([0, 0, 0, 1, 1, 0])
    scores = torch.tensor([0.9, 0.75, 0.75, 0.6, 0.5, 0.3])

    def box_iou(a, b):
        area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
        area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        lt = torch.max(a[:, None, :2], b[None, :, :2])
        rb = torch.min(a[:, None, 2:], b[None, :, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[..., 0] * wh[..., 1]
        return inter / (area_a[:, None] + area_b[None] - inter)

    aps = []
    for c in range(2):
        d, s = det[det_cls == c], scores[det_cls == c]
        g = gt[gt_cls == c]
        order = torch.argsort(s, descending=True, stable=True)
        d = d[order]
        iou = box_iou(d, g)
        matched = torch.zeros(g.shape[0], dtype=torch.bool)
        tp = torch.zeros(d.shape[0])
        for i in range(d.shape[0]):
            cand = torch.where(matched, torch.full_like(iou[i], -1.0), iou[i])
            j = cand.argmax()
            if cand[j] >= 0.5:
                matched[j] = True
                tp[i] = 1.0
        ctp, cfp = tp.cumsum(0), (1 - tp).cumsum(0)
        rec = ctp / g.shape[0]
        prec = ctp / (ctp + cfp)
        mrec = torch.cat([torch.tensor([0.0]), rec, torch.tensor([1.0])])
        mpre = torch.cat([torch.tensor([0.0]), prec, torch.tensor([0.0])])
        mpre = mpre.flip(0).cummax(0).values.flip(0)
        idx = torch.where(mrec[1:] != mrec[:-1])[0]
        aps.append(((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]).sum())
        aps.append(iou)
    return aps, torch.stack(aps[::2]).mean()


def case_generative_and_agreement_scores(lib):
    """torchmetrics' image-generation and agreement scores on stand-in features: FID from ``torch.cov`` of the
    transposed features and ``linalg.eigvals(s1 @ s2).sqrt().real.sum()`` (complex128) in float64, KID's cubic
    polynomial kernel with diagonals removed, the Inception Score over two splits (``exp`` of mean KL, ``std``),
    CLIP score by ``F.normalize`` and a clamped dot product, perplexity with ``ignore_index=-100``, Matthews
    correlation and (quadratic-weighted) Cohen's kappa from a confusion matrix."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(8)
    a = torch.randn(8, 4, dtype=torch.float64)
    b = torch.randn(8, 4, dtype=torch.float64) * 1.3 + 0.2
    s1, s2 = torch.cov(a.T), torch.cov(b.T)
    ev = torch.linalg.eigvals(s1 @ s2)
    fid = (a.mean(0) - b.mean(0)).square().sum() + s1.trace() + s2.trace() - 2 * ev.sqrt().real.sum()
    kern = lambda x, y: (x @ y.T / x.shape[1] + 1) ** 3
    kxx, kyy, m = kern(a, a), kern(b, b), a.shape[0]
    kid = ((kxx.sum() - kxx.diag().sum()) + (kyy.sum() - kyy.diag().sum())) / (m * (m - 1)) - 2 * kern(a, b).mean()
    p = torch.softmax(torch.randn(10, 5), 1)
    kl = (p * (p.log() - p.mean(0, keepdim=True).log())).sum(1)
    splits = torch.stack([kl[i::2].mean().exp() for i in range(2)])
    img_f, txt_f = F.normalize(torch.randn(3, 6), dim=-1), torch.randn(3, 6)
    clip = 100 * (img_f * (txt_f / txt_f.norm(p=2, dim=-1, keepdim=True))).sum(-1).clamp(min=0)
    logits, target = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))
    target[0, -2:] = -100
    ce = F.cross_entropy(logits.reshape(-1, 7), target.reshape(-1), ignore_index=-100, reduction="sum")
    ppl = torch.exp(ce / (target != -100).sum())
    cm = torch.tensor([[5, 2, 0], [1, 6, 1], [0, 2, 4]])
    tk, pk = cm.sum(1).float(), cm.sum(0).float()
    c, s = cm.trace().float(), cm.sum().float()
    mcc = (c * s - (tk * pk).sum()) / torch.sqrt((s ** 2 - (tk * tk).sum()) * (s ** 2 - (pk * pk).sum()))
    pe = (tk * pk).sum() / s ** 2
    kappa = (c / s - pe) / (1 - pe)
    w = (torch.arange(3.0).expand(3, 3) - torch.arange(3.0).expand(3, 3).T) ** 2
    expected = cm.sum(0, keepdim=True) * cm.sum(1, keepdim=True) / cm.sum()
    qwk = 1 - (w * cm).sum() / (w * expected).sum()
    return ev.dtype, fid, kid, splits.mean(), splits.std(), clip, ppl, mcc, kappa, qwk, qwk.dtype


test_script_matches_torch = script_test(globals())
