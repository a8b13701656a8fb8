"""Losses: values and gradients (inputs, targets where PyTorch differentiates them, weights) against PyTorch for
every reduction, the legacy size_average/reduce flags, the exact cross_entropy combinations (class indices with
extra dims, probabilities, weight, ignore_index, label_smoothing), CTC, module forms and PyTorch's errors."""
import numpy as np
import pytest

from oracle import arr, check, check_raises, needs_torch, run_both, same, to_numpy, torch, torchish

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")

REDUCTIONS = ["none", "mean", "sum"]


def F(T):
    return T.nn.functional


def probs(*shape, seed=0):
    return arr(*shape, seed=seed, lo=0.05, hi=0.95)


def idx(*shape, hi, seed=0):
    return arr(*shape, seed=seed, lo=0, hi=hi, dtype=np.int64)


def signs(*shape, seed=0):
    return np.where(arr(*shape, seed=seed) > 0, 1.0, -1.0).astype(np.float32)


# name -> (fn(T, reduction, *tensors), inputs). Targets that PyTorch does not differentiate are detached.
POINTWISE = {
    "mse": (lambda T, r, x, y: F(T).mse_loss(x, y, reduction=r), [arr(3, 4), arr(3, 4, seed=1)]),
    "mse_broadcast": (lambda T, r, x, y: F(T).mse_loss(x, y, reduction=r), [arr(3, 4), arr(4, seed=1)]),
    "mse_mean": (lambda T, r, x, y: F(T).mse_loss(x, y), [arr(3, 4), arr(3, 4, seed=1)]),
    "mse_weight": (lambda T, r, x, y, w: F(T).mse_loss(x, y, reduction=r, weight=w),
                   [arr(3, 4), arr(3, 4, seed=1), probs(3, 4, seed=2)]),
    "l1": (lambda T, r, x, y: F(T).l1_loss(x, y, reduction=r), [arr(3, 4), arr(3, 4, seed=1)]),
    "l1_weight": (lambda T, r, x, y, w: F(T).l1_loss(x, y, reduction=r, weight=w),
                  [arr(3, 4), arr(3, 4, seed=1), probs(3, 4, seed=2)]),
    "smooth_l1": (lambda T, r, x, y: F(T).smooth_l1_loss(x, y, reduction=r, beta=0.5),
                  [arr(3, 4, lo=-2, hi=2), arr(3, 4, seed=1)]),
    "smooth_l1_beta0": (lambda T, r, x, y: F(T).smooth_l1_loss(x, y, reduction=r, beta=0.0),
                        [arr(3, 4), arr(3, 4, seed=1)]),
    "huber": (lambda T, r, x, y: F(T).huber_loss(x, y, reduction=r, delta=0.7), [arr(3, 4, lo=-2, hi=2),
                                                                                 arr(3, 4, seed=1)]),
    "huber_weight": (lambda T, r, x, y, w: F(T).huber_loss(x, y, reduction=r, weight=w),
                     [arr(3, 4, lo=-3, hi=3), arr(3, 4, seed=1), probs(3, 4, seed=2)]),
    "bce": (lambda T, r, x, y: F(T).binary_cross_entropy(x, y, reduction=r), [probs(3, 4), probs(3, 4, seed=1)]),
    "bce_weight": (lambda T, r, x, y, w: F(T).binary_cross_entropy(x, y, w.detach(), reduction=r),
                   [probs(3, 4), probs(3, 4, seed=1), probs(4, seed=2)]),
    "bce_logits": (lambda T, r, x, y: F(T).binary_cross_entropy_with_logits(x, y, reduction=r),
                   [arr(3, 4, lo=-30, hi=30), probs(3, 4, seed=1)]),
    "bce_logits_weights": (lambda T, r, x, y, w, pw: F(T).binary_cross_entropy_with_logits(
        x, y, w.detach(), reduction=r, pos_weight=pw.detach()), [arr(3, 4, lo=-3, hi=3), probs(3, 4, seed=1), probs(3, 1, seed=2),
                                               probs(4, seed=3)]),
    "kl_div": (lambda T, r, x, y: F(T).kl_div(x, y, reduction=r), [arr(3, 4, lo=-3, hi=0), probs(3, 4, seed=1)]),
    "kl_div_log_target": (lambda T, r, x, y: F(T).kl_div(x, y, reduction=r, log_target=True),
                          [arr(3, 4, lo=-3, hi=0), arr(3, 4, seed=1, lo=-3, hi=0)]),
    "poisson_log": (lambda T, r, x, y: F(T).poisson_nll_loss(x, y, reduction=r), [arr(3, 4), probs(3, 4, seed=1)]),
    "poisson_full": (lambda T, r, x, y: F(T).poisson_nll_loss(x, y.detach(), log_input=False, full=True, reduction=r),
                     [probs(3, 4), arr(3, 4, seed=1, lo=0.5, hi=4)]),
    "gaussian": (lambda T, r, x, y, v: F(T).gaussian_nll_loss(x, y, v, reduction=r),
                 [arr(3, 4), arr(3, 4, seed=1), arr(3, 4, seed=2, lo=1e-7, hi=2)]),
    "gaussian_var_short": (lambda T, r, x, y, v: F(T).gaussian_nll_loss(x, y, v, full=True, eps=0.1, reduction=r),
                           [arr(3, 4), arr(3, 4, seed=1), arr(3, seed=2, lo=0.01, hi=2)]),
    "gaussian_var_bcast": (lambda T, r, x, y, v: F(T).gaussian_nll_loss(x, y, v, reduction=r),
                           [arr(3, 4), arr(3, 4, seed=1), arr(3, 1, seed=2, lo=0.1, hi=2)]),
    "soft_margin": (lambda T, r, x, y: F(T).soft_margin_loss(x, y.detach(), reduction=r), [arr(3, 4), signs(3, 4)]),
    "hinge": (lambda T, r, x, y: F(T).hinge_embedding_loss(x, y, margin=0.5, reduction=r),
              [np.array([[0.5, -1.0, 0.2], [2.0, 0.0, -0.5]], np.float32), signs(2, 3)]),
    "margin_ranking": (lambda T, r, a, b, y: F(T).margin_ranking_loss(a, b, y, margin=0.1, reduction=r),
                       [arr(5), arr(5, seed=1), signs(5, seed=2)]),
    "cosine_embedding": (lambda T, r, a, b, y: F(T).cosine_embedding_loss(a, b, y, margin=0.2, reduction=r),
                         [arr(4, 3), arr(4, 3, seed=1), signs(4, seed=2)]),
    "cosine_embedding_1d": (lambda T, r, a, b, y: F(T).cosine_embedding_loss(a, b, y, reduction=r),
                            [arr(3), arr(3, seed=1), np.array(-1.0, np.float32)]),
    "multilabel_soft_margin": (lambda T, r, x, y, w: F(T).multilabel_soft_margin_loss(x, y, w, reduction=r),
                               [arr(3, 4), probs(3, 4, seed=1), probs(4, seed=2)]),
    "triplet": (lambda T, r, a, p, n: F(T).triplet_margin_loss(a, p, n, margin=0.5, reduction=r),
                [arr(4, 3), arr(4, 3, seed=1), arr(4, 3, seed=2)]),
    "triplet_p1_swap": (lambda T, r, a, p, n: F(T).triplet_margin_loss(a, p, n, p=1, swap=True, reduction=r),
                        [arr(4, 3), arr(4, 3, seed=1), arr(4, 3, seed=2)]),
    "triplet_distance": (lambda T, r, a, p, n: F(T).triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F(T).cosine_similarity(u, v), swap=True, reduction=r),
        [arr(4, 3), arr(4, 3, seed=1), arr(4, 3, seed=2)]),
    "multi_margin": (lambda T, r, x, t: F(T).multi_margin_loss(x, t, reduction=r), [arr(4, 5), idx(4, hi=5)]),
    "multi_margin_p2_weight": (lambda T, r, x, t, w: F(T).multi_margin_loss(x, t, p=2, margin=0.7, weight=w.detach(),
                                                                           reduction=r),
                               [arr(4, 5), idx(4, hi=5), probs(5, seed=3)]),
    "multi_margin_1d": (lambda T, r, x, t: F(T).multi_margin_loss(x, t, reduction=r), [arr(5), np.array(2)]),
    "multilabel_margin": (lambda T, r, x, t: F(T).multilabel_margin_loss(x, t, reduction=r),
                          [arr(3, 4), np.array([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 2, 2, 2]])]),
    "multilabel_margin_1d": (lambda T, r, x, t: F(T).multilabel_margin_loss(x, t, reduction=r),
                             [arr(4), np.array([1, 1, -1, 0])]),
}


# losses whose reductions are more than a plain mean/sum of the elementwise loss (or reshape it) run all three
ALL_REDUCTIONS = {"mse_weight", "huber_weight", "multi_margin_1d", "multilabel_margin", "cosine_embedding_1d",
                  "multilabel_soft_margin"}
LOSS_CASES = [(n, r) for n in sorted(POINTWISE) for r in (REDUCTIONS if n in ALL_REDUCTIONS else ["none"])]


@pytest.mark.parametrize("name,reduction", LOSS_CASES)
def test_loss(name, reduction):
    fn, inputs = POINTWISE[name]
    check(lambda T, *xs: fn(T, reduction, *xs), inputs)


def test_margin_ties_pass_gradient_like_clamp_min():
    # hinge terms exactly at zero: PyTorch's clamp_min passes the gradient there, multi-margin (z > 0) does not
    a = np.array([0.0, 1.0, -0.5], np.float32)
    check(lambda T, a, b, y: F(T).margin_ranking_loss(a, b, y, margin=0.0, reduction="sum"),
          [a, a.copy(), np.array([1.0, -1.0, 1.0], np.float32)])
    check(lambda T, x: F(T).hinge_embedding_loss(x, T.tensor([-1.0, -1.0, 1.0]), margin=1.0),
          [np.array([1.0, 0.5, 0.0], np.float32)])
    check(lambda T, x: F(T).multi_margin_loss(x, T.tensor([0, 1])), [np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)])


def test_bce_clamps_log_and_gradient_guard():
    x = np.array([0.0, 1.0, 1e-30, 0.5], np.float32)
    check(lambda T, x, y: F(T).binary_cross_entropy(x, y, reduction="none"),
          [x, np.array([0.0, 1.0, 0.0, 0.3], np.float32)])
    check(lambda T, x: F(T).binary_cross_entropy(x, T.tensor([1.0, 0.0, 1.0, 0.5])), [x])


LEGACY = [dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True),
          dict(size_average=False, reduce=True), dict(reduce=False, reduction="sum")]


def test_legacy_reduction_args():
    check(lambda T, x, y: [F(T).mse_loss(x, y, **kw) for kw in LEGACY], [arr(3, 4), arr(3, 4, seed=1)])
    check(lambda T, x, t: F(T).nll_loss(x, t, size_average=False), [arr(3, 4), idx(3, hi=4)])
    for kw in LEGACY:
        ref, got = run_both(lambda T: T.nn.L1Loss(**kw).reduction)
        assert got == ref


def test_kl_div_batchmean():
    check(lambda T, x, y: F(T).kl_div(x, y, reduction="batchmean"), [arr(3, 4, lo=-2, hi=0), probs(3, 4)])
    check(lambda T, x, y: F(T).kl_div(x, y, reduction="batchmean", log_target=True),
          [arr(2, 5, lo=-2, hi=0), arr(2, 5, seed=1, lo=-2, hi=0)])


# ------------------------------------------------------------------------------------------------------------
# nll_loss / cross_entropy

W4 = np.array([0.2, 1.0, 0.5, 2.0], np.float32)


def _t(*vals):
    return np.array(vals, np.int64)


CLASS = {
    # name: (kwargs, input shape, target)
    "plain": ({}, (3, 4), _t(0, 3, 1)),
    "weight": (dict(weight=W4), (3, 4), _t(0, 3, 1)),
    "ignore": (dict(ignore_index=1), (3, 4), _t(0, 1, 1)),
    "ignore_weight": (dict(weight=W4, ignore_index=3), (3, 4), _t(0, 3, 2)),
    "ignore_out_of_range": (dict(ignore_index=-1), (3, 4), _t(0, -1, 2)),
    "all_ignored": ({}, (2, 4), _t(-100, -100)),
    "extra_dims": ({}, (2, 4, 3), np.array([[0, 1, 3], [2, 2, 0]])),
    "extra_dims_weight_ignore": (dict(weight=W4, ignore_index=2), (2, 4, 3, 2),
                                 np.array([[[0, 1], [3, 2], [2, 2]], [[2, 1], [0, 3], [1, 1]]])),
    "extra_dims_5d": (dict(weight=W4), (2, 4, 2, 2, 1), np.array([[[[0], [1]], [[3], [2]]], [[[2], [1]], [[0], [3]]]])),
    "unbatched": (dict(weight=W4), (4,), np.array(2)),
    "smoothing": (dict(label_smoothing=0.2), (3, 4), _t(0, 3, 1)),
    "smoothing_weight": (dict(label_smoothing=0.3, weight=W4), (3, 4), _t(0, 3, 1)),
    "smoothing_ignore": (dict(label_smoothing=0.1, ignore_index=0), (3, 4), _t(0, 3, 1)),
    "smoothing_weight_ignore_dims": (dict(label_smoothing=0.25, weight=W4, ignore_index=1), (2, 4, 3),
                                     np.array([[0, 1, 3], [1, 2, 0]])),
    "smoothing_unbatched": (dict(label_smoothing=0.5), (4,), np.array(3)),
}


CLASS_CASES = [(n, "mean") for n in sorted(CLASS)] + [
    ("extra_dims_weight_ignore", "none"), ("smoothing_weight_ignore_dims", "none"), ("ignore_weight", "sum"),
    ("smoothing_unbatched", "sum")]


@pytest.mark.parametrize("name,reduction", CLASS_CASES)
def test_cross_entropy_class_indices(name, reduction):
    kw, shape, target = CLASS[name]

    def fn(T, x, t):
        k = {key: (T.tensor(v) if isinstance(v, np.ndarray) else v) for key, v in kw.items()}
        return F(T).cross_entropy(x, t, reduction=reduction, **k)
    check(fn, [arr(*shape, lo=-2, hi=2), target])


NLL_CASES = [(n, "mean") for n in ("weight", "ignore_weight", "all_ignored", "extra_dims_weight_ignore",
                                   "unbatched")] + [("ignore_weight", "none"), ("extra_dims_weight_ignore", "sum")]


@pytest.mark.parametrize("name,reduction", NLL_CASES)
def test_nll_loss(name, reduction):
    kw, shape, target = CLASS[name]

    def fn(T, x, t):
        k = {key: (T.tensor(v) if isinstance(v, np.ndarray) else v) for key, v in kw.items()}
        return F(T).nll_loss(x, t, reduction=reduction, **k)
    check(fn, [arr(*shape, lo=-3, hi=0), target])


PROB = {
    "plain": ({}, (3, 4)),
    "weight": (dict(weight=W4), (3, 4)),
    "smoothing": (dict(label_smoothing=0.3), (3, 4)),
    "weight_smoothing_dims": (dict(weight=W4, label_smoothing=0.1), (2, 4, 3)),
    "unbatched": ({}, (4,)),
}


PROB_CASES = [(n, "mean") for n in sorted(PROB)] + [("weight_smoothing_dims", "none"), ("weight", "sum")]


@pytest.mark.parametrize("name,reduction", PROB_CASES)
def test_cross_entropy_probabilities(name, reduction):
    kw, shape = PROB[name]

    def fn(T, x, p):
        k = {key: (T.tensor(v) if isinstance(v, np.ndarray) else v) for key, v in kw.items()}
        return F(T).cross_entropy(x, p, reduction=reduction, **k)
    check(fn, [arr(*shape, lo=-2, hi=2), probs(*shape, seed=4)])


def test_cross_entropy_float64_and_grad_fn():
    check(lambda T, x, t: F(T).cross_entropy(x, t), [arr(3, 5, dtype=np.float64), idx(3, hi=5)])
    ref, got = run_both(lambda T: type(F(T).nll_loss(T.zeros(2, 3, requires_grad=True),
                                                    T.tensor([0, 1])).grad_fn).__name__)
    assert got == ref


# ------------------------------------------------------------------------------------------------------------
# CTC

T_, N_, C_ = 6, 2, 4
PADDED = np.array([[1, 2, 2], [3, 1, 0]])


@pytest.mark.parametrize("reduction,log_softmax", [("none", True), ("mean", True), ("sum", False)])
def test_ctc_padded(reduction, log_softmax):
    def fn(T, x):
        lp = x.log_softmax(2) if log_softmax else x
        return F(T).ctc_loss(lp, T.tensor(PADDED), [6, 5], [3, 2], reduction=reduction)
    check(fn, [arr(T_, N_, C_, lo=-2, hi=2)])


@pytest.mark.parametrize("variant", ["concatenated_int32", "blank_last_zero_length_tensors", "unbatched_float64"])
def test_ctc_variants(variant):
    def fn(T, x):
        lp = x.log_softmax(-1)
        if variant == "concatenated_int32":
            return F(T).ctc_loss(lp, T.tensor([1, 2, 2, 3, 1], dtype=T.int32), (6, 5), (3, 2), reduction="none")
        if variant == "blank_last_zero_length_tensors":
            return F(T).ctc_loss(lp, T.tensor([[0, 1, 1], [2, 0, 0]]), T.tensor([6, 4]), T.tensor([3, 0]), blank=3)
        return F(T).ctc_loss(lp[:, 0].double(), T.tensor([1, 2, 2]), T.tensor([6]), T.tensor([3]), reduction="none")
    check(fn, [arr(T_, N_, C_, lo=-2, hi=2)])


def test_ctc_impossible_alignment_and_zero_infinity():
    def fn(zero_inf):
        return lambda T, x: F(T).ctc_loss(x.log_softmax(2), T.tensor(PADDED), [2, 5], [3, 2], reduction="none",
                                          zero_infinity=zero_inf)
    ref, got = check(fn(True), [arr(T_, N_, C_)])
    assert to_numpy(got)[0] == 0.0
    ref, got = check(fn(False), [arr(T_, N_, C_)], grad=False)
    assert np.isinf(to_numpy(got)[0])


def test_ctc_module():
    check(lambda T, x: T.nn.CTCLoss(blank=1, reduction="sum")(x.log_softmax(2), T.tensor([[2, 3], [3, 3]]), [6, 6],
                                                              [2, 2]), [arr(T_, N_, C_)])


# ------------------------------------------------------------------------------------------------------------
# modules (buffers for class weights)

MODULES = {
    "L1Loss": (lambda T: T.nn.L1Loss(), [arr(3, 4), arr(3, 4, seed=1)]),
    "SmoothL1Loss": (lambda T: T.nn.SmoothL1Loss(beta=0.3), [arr(3, 4), arr(3, 4, seed=1)]),
    "BCELoss": (lambda T: T.nn.BCELoss(weight=T.tensor(probs(4))), [probs(3, 4, seed=1), probs(3, 4, seed=2)]),
    "BCEWithLogitsLoss": (lambda T: T.nn.BCEWithLogitsLoss(pos_weight=T.tensor([1.0, 2.0, 0.5, 3.0])),
                          [arr(3, 4), probs(3, 4, seed=2)]),
    "KLDivLoss": (lambda T: T.nn.KLDivLoss(reduction="batchmean"), [arr(3, 4, lo=-2, hi=0), probs(3, 4)]),
    "NLLLoss": (lambda T: T.nn.NLLLoss(weight=T.tensor(W4), ignore_index=0), [arr(3, 4), _t(0, 1, 3)]),
    "CrossEntropyLoss": (lambda T: T.nn.CrossEntropyLoss(T.tensor(W4), label_smoothing=0.1), [arr(3, 4), _t(0, 1, 3)]),
    "PoissonNLLLoss": (lambda T: T.nn.PoissonNLLLoss(log_input=False, eps=1e-3), [probs(3, 4), probs(3, 4, seed=1)]),
    "SoftMarginLoss": (lambda T: (lambda x, y: T.nn.SoftMarginLoss()(x, y.detach())), [arr(3, 4), signs(3, 4)]),
    "MultiLabelMarginLoss": (lambda T: T.nn.MultiLabelMarginLoss(), [arr(2, 3), np.array([[2, -1, 0], [0, 1, -1]])]),
    "MultiMarginLoss": (lambda T: T.nn.MultiMarginLoss(p=2, weight=T.tensor(W4)), [arr(3, 4), _t(0, 1, 3)]),
    "CosineEmbeddingLoss": (lambda T: T.nn.CosineEmbeddingLoss(0.1), [arr(3, 4), arr(3, 4, seed=1), signs(3)]),
    "TripletMarginLoss": (lambda T: T.nn.TripletMarginLoss(p=3.0), [arr(3, 4), arr(3, 4, seed=1), arr(3, 4, seed=2)]),
    "TripletMarginWithDistanceLoss": (lambda T: T.nn.TripletMarginWithDistanceLoss(margin=0.3, swap=True),
                                      [arr(3, 4), arr(3, 4, seed=1), arr(3, 4, seed=2)]),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module(name):
    make, inputs = MODULES[name]
    check(lambda T, *xs: make(T)(*xs), inputs)


def test_gaussian_module_and_repr_and_buffers():
    check(lambda T, x, y, v: T.nn.GaussianNLLLoss(full=True)(x, y, v), [arr(3, 4), arr(3, 4, seed=1), probs(3, 4)])
    for make in (lambda T: T.nn.CrossEntropyLoss(), lambda T: T.nn.MSELoss(reduction="sum"),
                 lambda T: T.nn.CTCLoss(), lambda T: T.nn.BCEWithLogitsLoss(pos_weight=T.ones(2))):
        ref, got = run_both(make)
        assert repr(got) == repr(ref)
        assert sorted(dict(got.named_buffers())) == sorted(dict(ref.named_buffers()))
        assert sorted(got.state_dict()) == sorted(ref.state_dict())


# ------------------------------------------------------------------------------------------------------------
# errors

ERRORS = {
    "bad_reduction": lambda T: F(T).mse_loss(T.ones(2), T.ones(2), reduction="foo"),
    "bad_reduction_weighted": lambda T: F(T).mse_loss(T.ones(2), T.ones(2), reduction="foo", weight=T.ones(2)),
    "mse_weight_shape": lambda T: F(T).mse_loss(T.ones(2, 3), T.ones(2, 3), weight=T.ones(3)),
    "mse_broadcast": lambda T: F(T).mse_loss(T.ones(3), T.ones(4)),
    "mse_int": lambda T: F(T).mse_loss(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64)),
    "l1_int_mean": lambda T: F(T).l1_loss(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64)),
    "smooth_l1_neg_beta": lambda T: F(T).smooth_l1_loss(T.ones(2), T.ones(2), beta=-1.0),
    "huber_zero_delta": lambda T: F(T).huber_loss(T.ones(2), T.ones(2), delta=0.0),
    "bce_range": lambda T: F(T).binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0])),
    "bce_shape": lambda T: F(T).binary_cross_entropy(T.tensor([0.5, 0.5]), T.tensor([1.0])),
    "bce_int_target": lambda T: F(T).binary_cross_entropy(T.tensor([0.5, 0.5]), T.tensor([1, 0])),
    "bce_logits_shape": lambda T: F(T).binary_cross_entropy_with_logits(T.ones(2), T.ones(1)),
    "bce_logits_int_target": lambda T: F(T).binary_cross_entropy_with_logits(T.ones(2), T.tensor([1, 0])),
    "kl_int": lambda T: F(T).kl_div(T.ones(2), T.tensor([1, 0])),
    "nll_out_of_bounds": lambda T: F(T).nll_loss(T.zeros(3, 4), T.tensor([0, 4, 1])),
    "nll_negative_target": lambda T: F(T).nll_loss(T.zeros(3, 4), T.tensor([0, -1, 1])),
    "nll_float_target": lambda T: F(T).nll_loss(T.zeros(3, 4), T.tensor([0.0, 1.0, 1.0])),
    "nll_int32_target": lambda T: F(T).nll_loss(T.zeros(3, 4), T.tensor([0, 1, 1], dtype=T.int32)),
    "nll_batch": lambda T: F(T).nll_loss(T.zeros(3, 4), T.tensor([0, 1])),
    "nll_weight": lambda T: F(T).nll_loss(T.zeros(3, 4), T.tensor([0, 1, 1]), weight=T.ones(3)),
    "nll_0d": lambda T: F(T).nll_loss(T.tensor(1.0), T.tensor(0)),
    "nll_target_dims": lambda T: F(T).nll_loss(T.zeros(2, 3, 4), T.zeros(2, 5, dtype=T.int64)),
    "nll_multi_target": lambda T: F(T).nll_loss(T.zeros(3, 4), T.zeros(3, 4, dtype=T.int64)),
    "nll_oob_extra_dims": lambda T: F(T).nll_loss(T.zeros(2, 3, 4), T.full((2, 4), 3, dtype=T.int64)),
    "nll_int_input": lambda T: F(T).nll_loss(T.ones(3, 4, dtype=T.int64), T.tensor([0, 1, 1])),
    "ce_float_target_wrong_shape": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.rand(3)),
    "ce_float_target_2d_wrong_shape": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.rand(3, 5)),
    "ce_prob_long_target": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.ones(3, 4, dtype=T.int64)),
    "ce_prob_ignore_index": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.rand(3, 4), ignore_index=1),
    "ce_prob_weight": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.rand(3, 4), weight=T.ones(3)),
    "ce_smoothing_gt_1": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.tensor([0, 1, 1]), label_smoothing=2.0),
    "ce_smoothing_oob": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.tensor([0, 4, 1]), label_smoothing=0.1),
    "ce_out_of_bounds": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.tensor([0, 4, 1])),
    "ce_int_input": lambda T: F(T).cross_entropy(T.ones(3, 4, dtype=T.int64), T.tensor([0, 1, 1])),
    "multi_margin_p3": lambda T: F(T).multi_margin_loss(T.zeros(3, 4), T.tensor([0, 1, 1]), p=3),
    "multi_margin_oob": lambda T: F(T).multi_margin_loss(T.zeros(3, 4), T.tensor([0, 4, 1])),
    "multi_margin_float_target": lambda T: F(T).multi_margin_loss(T.zeros(3, 4), T.tensor([0.0, 3.0, 1.0])),
    "multi_margin_target_shape": lambda T: F(T).multi_margin_loss(T.zeros(3, 4), T.tensor([0, 3])),
    "multi_margin_3d": lambda T: F(T).multi_margin_loss(T.zeros(2, 3, 4), T.tensor([1, 1])),
    "multi_margin_weight": lambda T: F(T).multi_margin_loss(T.zeros(3, 4), T.tensor([0, 1, 1]), weight=T.ones(3)),
    "MultiMarginLoss_p3": lambda T: T.nn.MultiMarginLoss(p=3),
    "multilabel_margin_oob": lambda T: F(T).multilabel_margin_loss(T.zeros(2, 3), T.tensor([[0, -1, 5], [0, 1, 2]])),
    "multilabel_margin_shape": lambda T: F(T).multilabel_margin_loss(T.zeros(2, 3), T.tensor([[0, -1], [0, 1]])),
    "multilabel_margin_float": lambda T: F(T).multilabel_margin_loss(T.zeros(2, 3), T.zeros(2, 3)),
    "cosine_embedding_2d_target": lambda T: F(T).cosine_embedding_loss(T.ones(3, 4), T.ones(3, 4), T.ones(3, 1)),
    "cosine_embedding_batch": lambda T: F(T).cosine_embedding_loss(T.ones(3, 4), T.ones(3, 4), T.ones(2)),
    "margin_ranking_dims": lambda T: F(T).margin_ranking_loss(T.ones(3, 4), T.ones(3, 4), T.ones(3)),
    "triplet_dims": lambda T: F(T).triplet_margin_loss(T.ones(3, 4), T.ones(3, 4), T.ones(4)),
    "triplet_margin": lambda T: F(T).triplet_margin_loss(T.ones(3, 4), T.ones(3, 4), T.ones(3, 4), margin=-1.0),
    "triplet_distance_margin": lambda T: F(T).triplet_margin_with_distance_loss(T.ones(2), T.ones(2), T.ones(2),
                                                                                margin=0.0),
    "triplet_distance_reduction": lambda T: F(T).triplet_margin_with_distance_loss(T.ones(2), T.ones(2), T.ones(2),
                                                                                   reduction="x"),
    "TripletMarginLoss_margin": lambda T: T.nn.TripletMarginLoss(margin=0.0),
    "gaussian_negative_var": lambda T: F(T).gaussian_nll_loss(T.ones(3, 4), T.ones(3, 4), -T.ones(3, 1)),
    "gaussian_negative_float_var": lambda T: F(T).gaussian_nll_loss(T.ones(3, 4), T.ones(3, 4), -1.0),
    "gaussian_var_size": lambda T: F(T).gaussian_nll_loss(T.ones(3, 4), T.ones(3, 4), T.ones(2, 2)),
    "gaussian_reduction": lambda T: F(T).gaussian_nll_loss(T.ones(3, 4), T.ones(3, 4), T.ones(3, 4), reduction="x"),
    "poisson_reduction": lambda T: F(T).poisson_nll_loss(T.ones(3), T.ones(3), reduction="x"),
    "ctc_input_lengths_value": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4), T.tensor(PADDED), [7, 5], [3, 2]),
    "ctc_input_lengths_size": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4), T.tensor(PADDED), [6, 5, 4], [3, 2]),
    "ctc_target_lengths_size": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4), T.tensor(PADDED), [6, 5], [3]),
    "ctc_target_too_long": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4), T.tensor(PADDED), [6, 5], [4, 2]),
    "ctc_blank": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4), T.tensor(PADDED), [6, 5], [3, 2], blank=4),
    "ctc_1d_log_probs": lambda T: F(T).ctc_loss(T.zeros(6), T.tensor([1]), [6], [1]),
    "ctc_int_log_probs": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4, dtype=T.int64), T.tensor(PADDED), [6, 5], [3, 2]),
    "bce_weight_requires_grad": lambda T: F(T).binary_cross_entropy(T.full((2,), 0.5, requires_grad=True), T.ones(2),
                                                                    T.ones(2, requires_grad=True)),
    "bce_logits_pos_weight_requires_grad": lambda T: F(T).binary_cross_entropy_with_logits(
        T.ones(2), T.ones(2), pos_weight=T.ones(2, requires_grad=True)),
    "nll_weight_requires_grad": lambda T: F(T).cross_entropy(T.zeros(3, 4), T.tensor([0, 1, 1]),
                                                             T.ones(4, requires_grad=True)),
    "soft_margin_target_requires_grad": lambda T: F(T).soft_margin_loss(T.ones(2), T.ones(2, requires_grad=True)),
    "ctc_reduction": lambda T: F(T).ctc_loss(T.zeros(6, 2, 4), T.tensor(PADDED), [6, 5], [3, 2], reduction="x"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])


def test_target_bounds_are_checked_again_for_another_class_count_and_after_a_write():
    """The bounds check of nll_loss/cross_entropy remembers the last target array it passed: the same target with
    fewer classes, and the same Tensor after an in-place write, are checked afresh (PyTorch checks every call)."""
    def run(T):
        y = T.tensor([0, 4, 2])
        T.nn.functional.cross_entropy(T.zeros(3, 5), y)  # passes: 5 classes
        T.nn.functional.cross_entropy(T.zeros(3, 5), y)
        try:
            T.nn.functional.cross_entropy(T.zeros(3, 4), y)  # 4 is out of bounds for 4 classes
        except IndexError as e:
            first = str(e)
        else:
            first = None
        y[1] = 7
        try:
            T.nn.functional.nll_loss(T.zeros(3, 5), y)
        except IndexError as e:
            return first, str(e)
        return first, None
    got = run(torchish)
    assert got == ("Target 4 is out of bounds.", "Target 7 is out of bounds.")
    if torch is not None:
        assert run(torch) == got


@needs_torch
@pytest.mark.parametrize("kw", [{}, {"bias": True, "label_smoothing": 0.1}, {"out_features": (2,), "bias": True},
                                {"ignore_index": 1, "reduction": "sum"}, {"reduction": "none"}])
def test_linear_cross_entropy_loss_matches_torch(kw):
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((5, 4)).astype(np.float32), rng.integers(0, 3, 5)
    if "out_features" in kw:
        t = np.stack([t, t[::-1]], 1)
    got = []
    for lib in (torch, torchish):
        m = lib.nn.LinearCrossEntropyLoss(4, 3, **kw)
        m.load_state_dict({k: lib.tensor(rng.standard_normal(tuple(v.shape)).astype(np.float32) if lib is torch
                                         else got[0][3][k]) for k, v in m.state_dict().items()})
        xx = lib.tensor(x, requires_grad=True)
        out = m(xx, lib.tensor(t))
        out.sum().backward()
        got.append((out.detach().numpy(), xx.grad.numpy(), m.linear.weight.grad.numpy(),
                    {k: v.numpy() for k, v in m.state_dict().items()}, repr(m)))
    for a, b in zip(got[0][:3], got[1][:3]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert got[1][4] == got[0][4]


@needs_torch
def test_linear_cross_entropy_checks_and_options():
    for args in (lambda T: (T.ones(2, 3, 4), T.ones(3, 4), T.zeros(2, dtype=T.long)),
                 lambda T: (T.ones(2, 4), T.ones(3, 5), T.zeros(2, dtype=T.long)),
                 lambda T: (T.ones(4), T.ones(3, 2, 4), T.zeros((), dtype=T.long))):
        msgs = []
        for lib in (torch, torchish):
            with pytest.raises(RuntimeError) as info:
                lib.nn.functional.linear_cross_entropy(*args(lib))
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
    x = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    outs = []
    for lib in (torch, torchish):
        opts = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        outs.append(float(lib.nn.functional.linear_cross_entropy(lib.tensor(x), lib.eye(3), lib.tensor([0, 1, 2, 0]),
                                                                 options=opts)))
        with pytest.warns(UserWarning, match="options`` ignored"):
            lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.eye(3), lib.tensor([0, 1]), options=opts,
                                                   label_smoothing=0.1)
    assert abs(outs[0] - outs[1]) < 1e-6
    assert repr(torchish.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())


@needs_torch
def test_hinge_embedding_loss_target_gets_no_gradient():
    """PyTorch's composite reads the target only through comparisons: a target that requires grad keeps grad None
    (torchish gave it zeros)."""
    def run(T):
        x = T.tensor([0.5, -0.3, 2.0], requires_grad=True)
        y = T.tensor([1.0, -1.0, 1.0], requires_grad=True)
        T.nn.functional.hinge_embedding_loss(x, y, margin=0.7).backward()
        return x.grad, y.grad is None
    same(run)


@needs_torch
def test_cosine_embedding_loss_target_gets_no_gradient():
    """As hinge_embedding_loss: PyTorch's composite reads the target only through comparisons, so a target that
    requires grad keeps grad None (torchish gave it zeros). Found by the nn-module gradient scan."""
    def run(T):
        a = T.tensor([[0.5, -0.3, 2.0], [0.1, 0.4, -0.2]], requires_grad=True)
        b = T.tensor([[0.2, 0.3, -1.0], [0.7, 0.1, 0.5]], requires_grad=True)
        y = T.tensor([1.0, -1.0], requires_grad=True)
        T.nn.CosineEmbeddingLoss(margin=-0.5)(a, b, y).backward()
        return a.grad, b.grad, y.grad is None
    same(run)


@needs_torch
@pytest.mark.parametrize("target", [1, 0.25, True])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_multilabel_soft_margin_loss_takes_a_number_target(target, reduction):
    """PyTorch's composite multiplies by the target, so a Python number works (torchish raised TypeError)."""
    def run(T):
        x = T.tensor(np.linspace(-1, 0.7, 6).reshape(2, 3).astype("f4"), requires_grad=True)
        loss = T.nn.functional.multilabel_soft_margin_loss(x, target, reduction=reduction)
        loss.sum().backward()
        return loss, x.grad
    same(run)
