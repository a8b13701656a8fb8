"""Regression tests from probes of the less common corners of nn and optim, each ``case_*`` written against the
PyTorch API only, with weights and inputs from formulas (tests/oracle.py).

Fixed here: nn.utils.parametrize's errors and the assignment through ``right_inverse`` (PyTorch checks only the
dtype there and takes a new shape as it is); adaptive pooling's ValueError for an output_size longer than the
input's dimensions and its negative-size / empty-input errors; TypeErrors for non-number scalar arguments of the
activations and F.pad; interpolate's 1-d size error, area mode with output size 0; nll_loss/cross_entropy weight
checks of spatial inputs; ctc_loss's target size errors; RNN constructor checks (bias/batch_first types,
input_size > 0, float(dropout) first), Bilinear in1_features=0, fold/unfold block-count errors; TypeErrors
for non-number scalar arguments of the losses and pixel_(un)shuffle; max pooling's ceil_mode, dropout's
training, grid_sample's align_corners and embedding's padding_idx type checks; batch_norm's eps checks and the
norms' argument types; int-list arguments (F.pad, affine_grid, fold/unfold, local_response_norm's size);
Hardtanh's deprecation wording and NLLLoss2d's FutureWarning; avg_pool's and scaled_dot_product_attention's flag
and float types.

Also probed and matching (kept out for time): every optimizer's less common flags over 5 steps with state_dict
contents, keys and dtypes (Adam/AdamW amsgrad, maximize, decoupled_weight_decay, Tensor lr, fused, foreach and
single-tensor paths with weight decay and maximize for all of SGD, Adam, AdamW, NAdam, RAdam, Adamax, Adagrad
lr_decay/initial_accumulator_value, Adadelta, RMSprop centered, Rprop etas/step_sizes, ASGD t0/lambd, Adafactor,
SparseAdam, complex parameters), LBFGS with and without strong_wolfe in float64 (float32 runs diverge with
PyTorch's own float32 forward rounding: the line search amplifies 1-ulp loss differences), param groups with
different hyper-parameters, zero_grad(set_to_none=False), load_state_dict round trips mid-training and into
float64 parameters, optimizer hooks, a custom Optimizer and LRScheduler subclass, differentiable=True's leaf
error, bad hyper-parameter errors; OneCycleLR (cos/linear, three_phase, Adam betas), CyclicLR modes and scale_fn,
CosineAnnealingWarmRestarts with fractional epochs, ReduceLROnPlateau modes/threshold_mode/cooldown/min_lr,
SequentialLR, ChainedScheduler, PolynomialLR, LinearLR, ConstantLR, MultiStepLR, LambdaLR state_dict,
CosineAnnealingLR past T_max, Tensor lr, SWALR/AveragedModel/update_bn, scheduler warnings; MultiheadAttention
(kdim/vdim, add_bias_kv, add_zero_attn, per-head weights, bool/float key_padding_mask, causal, unbatched), the
Transformer encoder fast path with padding, TransformerDecoder with masks, norm_first and a callable activation;
LSTM with proj_size/bidirectional/2 layers/h0/unbatched/packed input, GRU/RNN/cells; GroupNorm, InstanceNorm with
running stats, LocalResponseNorm, CrossMapLRN2d, BatchNorm momentum=None; Fold/Unfold, PixelShuffle/Unshuffle,
Upsample modes with align_corners and recompute_scale_factor; CTC, PoissonNLL, GaussianNLL, MultiLabelSoftMargin,
MultiMargin, cross entropy with weights/label smoothing/ignore_index/probabilities and the other margin losses;
scaled_dot_product_attention with GQA; Embedding max_norm/scale_grad_by_freq, EmbeddingBag modes;
AdaptiveLogSoftmaxWithLoss; weight_norm, spectral_norm and orthogonal parametrizations, prune, pad_sequence
padding_side, clip_grad_norm_ foreach; module API (named_modules remove_duplicate, non-persistent buffers,
load_state_dict strict=False and its hooks, hooks with kwargs, containers, nn.init errors), ~60 reprs, ~40 nn
warnings, ~33 optimizer/scheduler constructor errors and ~170 nn constructor/input errors."""
import warnings

from oracle import formula_data as _data, formula_init as _init, raised as _err, script_test


def case_parametrize_errors_and_assignment(lib):
    """register_parametrization's shape/dtype errors (first and chained registration, right_inverse's results)
    carry PyTorch's wording and torch.Size shapes; assigning through right_inverse checks the dtype only, a new
    shape replaces the original as PyTorch's ``set_`` does, and a sequence-valued right_inverse checks each
    tensor's dtype."""
    nn = lib.nn
    P = nn.utils.parametrize

    class Sym(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Drop(nn.Module):  # changes the shape
        def forward(self, X):
            return X[0]

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class BadInv(nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.kind = kind

        def forward(self, X):
            return X

        def right_inverse(self, X):
            return {"shape": lambda: X[:1], "dtype": lambda: X.double(), "list": lambda: [X], "int": lambda: 3,
                    "ok": lambda: X}[self.kind]()

    def lin():
        return _init(lib, nn.Linear(2, 2))

    res = [_err(lambda: P.register_parametrization(lin(), "weight", Drop())),
           _err(lambda: P.register_parametrization(lin(), "weight", ToDouble()))]
    m = P.register_parametrization(lin(), "weight", Sym())
    res += [_err(lambda: P.register_parametrization(m, "weight", Drop())),
            _err(lambda: P.register_parametrization(m, "weight", ToDouble()))]
    for kind in ["shape", "dtype", "list", "int"]:
        res.append(_err(lambda: P.register_parametrization(m, "weight", BadInv(kind))))
    res.append(_err(lambda: P.register_parametrization(lin(), "weight", BadInv("dtype"))))
    m = P.register_parametrization(lin(), "weight", Sym())
    res.append(_err(lambda: setattr(m, "weight", lib.ones(2, 2, dtype=lib.float64))))
    m.weight = _data(lib, 3, 3)
    res += [m.weight, m.parametrizations.weight.original.shape]
    bi = BadInv("ok")
    m = P.register_parametrization(lin(), "weight", bi)
    bi.kind = "int"
    res.append(_err(lambda: setattr(m, "weight", lib.ones(2, 2))))
    bi.kind = "shape"
    m.weight = lib.ones(2, 2)
    res.append(m.weight)

    class Split(nn.Module):
        bad = False

        def forward(self, a, b):
            return a + b

        def right_inverse(self, X):
            return X * 0.5, (X * 0.5).double() if self.bad else X * 0.5

    sp = Split()
    m = P.register_parametrization(lin(), "bias", sp)
    sp.bad = True
    res.append(_err(lambda: setattr(m, "bias", lib.ones(2))))
    sp.bad = False
    m.bias = lib.ones(2)
    res.append(m.bias)
    return res


def case_adaptive_pool_output_size_errors(lib):
    """F.adaptive_{avg,max}_pool{2,3}d (and their modules) with a sequence output_size longer than the input has
    dimensions raise PyTorch's ValueError ('Input dimension should be at least N', from the Python wrapper) before
    the kernel's RuntimeError; an int output_size still reaches the kernel's check."""
    F = lib.nn.functional
    res = []
    for f in (F.adaptive_avg_pool2d, F.adaptive_max_pool2d, F.adaptive_avg_pool3d, F.adaptive_max_pool3d):
        for shape, out in [((3,), (2, 2)), ((3, 3), (2, None)), ((2,), (2.5, 2)), ((3, 3), 2), ((3, 3), (1, 2, 3))]:
            res.append(_err(lambda: f(lib.ones(*shape), out)))
    res.append(_err(lambda: lib.nn.AdaptiveAvgPool2d((2, 2))(lib.ones(3))))
    res.append(_err(lambda: lib.nn.AdaptiveMaxPool3d((1, 2, 2))(lib.ones(2, 2))))
    # a conv's bad padding_mode / padding string: PyTorch prints its set of valid values (in hash order)
    res.append(_err(lambda: lib.nn.Conv2d(2, 2, 2, padding_mode="foo"))[0])
    res.append(_err(lambda: lib.nn.Conv2d(2, 2, 2, padding="foo"))[0])
    return res


def case_functional_argument_errors(lib):
    """Scalar arguments of the activations and F.pad that are not numbers raise PyTorch's parser TypeError (a
    0-dim Tensor is a number); interpolate's 1-d size error says 'and output'; area mode with an output size of 0
    returns an empty tensor (adaptive average pooling) and takes adaptive pooling's errors, whose 1-d average form
    reports the 2-d op on the unsqueezed input and whose max forms fail allocating a negative size; nll_loss and
    cross_entropy of 3-D and wider inputs check only the weight's element count (nll_loss2d's wording); ctc_loss's
    target size errors name ctc_loss_allocate_outputs."""
    F = lib.nn.functional
    x = _data(lib, 2, 3)
    bad = [lambda: F.elu(x, "a"), lambda: F.elu(x, None, inplace=True), lambda: F.celu(x, [1.0]),
           lambda: F.leaky_relu(x, "a"), lambda: F.leaky_relu(x, lib.tensor([0.1])),
           lambda: F.threshold(x, "a", 1.0), lambda: F.threshold(x, 0.5, None, True), lambda: F.softplus(x, "a"),
           lambda: F.softplus(x, 1, None), lambda: F.softshrink(x, "a"), lambda: F.hardshrink(x, None),
           lambda: F.rrelu(x, "a", inplace=True), lambda: F.rrelu(x, 0.1, "b"), lambda: F.gelu(x, approximate=3),
           lambda: F.pad(x, (1, 1), value="a"), lambda: F.pad(x, (1, 1), mode="reflect", value=1 + 2j),
           lambda: F.pad(x, (1.5, 1), value="a"), lambda: F.pad(x, (1, 1), value=lib.tensor([1.0]))]
    res = [_err(f) for f in bad]
    res += [F.elu(x, lib.tensor(0.5)), F.threshold(x, lib.tensor(0.2), lib.tensor(2)), F.pad(x, (1, 0), value=True)]
    x3 = _data(lib, 1, 2, 3)
    for size, mode in [([0], "area"), ([-1], "area"), ([0], "linear"), ([-2], "nearest")]:
        res.append(_err(lambda: F.interpolate(x3, size=size, mode=mode)))
    res.append(F.interpolate(x3, size=[0], mode="area"))
    res.append(F.interpolate(_data(lib, 1, 1, 3, 3), scale_factor=0.1, mode="area"))
    res.append(_err(lambda: F.interpolate(lib.ones(1, 1, 0, 3), size=(1, 2), mode="area")))
    res.append(_err(lambda: F.interpolate(lib.ones(1, 1, 3, 3, 3), size=(-1, 2, 1), mode="area")))
    for f, shape, out in [(F.adaptive_avg_pool1d, (2, 3), -1), (F.adaptive_avg_pool1d, (1, 2, 0), 2),
                          (F.adaptive_max_pool1d, (1, 1, 3), -1), (F.adaptive_max_pool1d, (2, 0), 2),
                          (F.adaptive_max_pool2d, (1, 3, 3), (-1, -2)), (F.adaptive_avg_pool3d, (1, 3, 3, 3), (-2, 2, 1)),
                          (F.adaptive_max_pool3d, (1, 3, 3, 3), (1, -2, -1)), (F.adaptive_avg_pool2d, (1, 0, 3), (-1, 2)),
                          (F.adaptive_max_pool3d, (1, 3, 0, 3), (-1, 2, 1))]:
        res.append(_err(lambda: f(lib.ones(*shape), out)))
    x4 = _data(lib, 2, 3, 2, 2)
    t = lib.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    for w in [lib.ones(2), lib.tensor([[1.0], [2.0], [0.5]]), lib.tensor([[1.0, 2.0, 0.5]])]:
        res.append(_err(lambda: F.nll_loss(x4, t, weight=w)) or F.nll_loss(x4, t, weight=w, reduction="none"))
        res.append(_err(lambda: F.cross_entropy(x4, t, weight=w)) or F.cross_entropy(x4, t, weight=w))
    res.append(_err(lambda: F.nll_loss(x, lib.tensor([0, 1]), weight=lib.ones(3, 1))))
    lp = _data(lib, 5, 2, 4).log_softmax(2)
    res.append(_err(lambda: F.ctc_loss(lp, lib.tensor([1, 2, 3]), (5, 5), (2, 2))))
    res.append(_err(lambda: F.ctc_loss(lp, lib.tensor([[1, 2]]), (5, 5), (2, 2))))
    return res


def case_module_constructor_checks(lib):
    """Constructor checks in PyTorch's order: RNNs store float(dropout) first (a str or None fails there), then
    check bias/batch_first are bools and input_size a positive int; Bilinear refuses in1_features=0 with PyTorch's
    ValueError (it divided by zero); fold checks the block count against the input before the too-small shape,
    whose message has no final period, and unfold/fold count blocks with PyTorch's floor division and take int
    sizes only (a float kernel_size was truncated); Hardtanh compares its limits and words its deprecation warnings
    as PyTorch's, and NLLLoss2d's deprecation is PyTorch's FutureWarning."""
    nn, F = lib.nn, lib.nn.functional
    res = [_err(f) for f in [
        lambda: nn.LSTM(3, 3, bias=1), lambda: nn.GRU(3, 3, batch_first=1), lambda: nn.RNN(3.5, 3),
        lambda: nn.LSTM(0, 3), lambda: nn.LSTM(-1, 2), lambda: nn.GRU(3, 3, dropout=None),
        lambda: nn.RNN(3, 3, dropout=[0.1]), lambda: nn.LSTM(3, 3, dropout="a"), lambda: nn.LSTM(3, 3, dropout=True),
        lambda: nn.Bilinear(0, 2, 2),
        lambda: F.fold(lib.ones(1, 25, 1), (2, 2), 5, stride=2), lambda: F.fold(lib.ones(1, 25, 4), (2, 2), 5, stride=2),
        lambda: F.fold(lib.ones(1, 9, 1), (2, 2), 3), lambda: F.unfold(lib.ones(1, 1, 2, 2), 5, stride=2),
        # their size arguments: ints only, in the parser's two wordings (the first element, then the others)
        lambda: F.unfold(lib.ones(1, 2, 4, 4), 2.5), lambda: F.unfold(lib.ones(1, 2, 4, 4), (2, 2.5)),
        lambda: F.unfold(lib.ones(1, 2, 4, 4), 2, padding="a"), lambda: F.unfold(lib.ones(1, 2, 4, 4), True),
        lambda: F.unfold(lib.ones(1, 2, 4, 4), (2, 2, 2.5)), lambda: F.unfold(lib.ones(1, 2, 4, 4), (2, 2, 2)),
        lambda: F.fold(lib.ones(1, 8, 9), (4.0, 4), 2), lambda: F.fold(lib.ones(1, 8, 9), 4, 2, stride=(1, 1.0)),
        lambda: F.unfold(lib.ones(1, 2, 4, 4), (2, True)),
        # the other int lists PyTorch's parser reads: F.pad's pad (also inside local_response_norm) and affine_grid's size
        lambda: F.pad(lib.ones(1, 2, 4), (1, 1.5)), lambda: F.pad(lib.ones(1, 2, 4), (True, 1)),
        lambda: F.pad(lib.ones(1, 2, 4), (1, None)), lambda: F.local_response_norm(lib.ones(1, 2, 4, 4), 2.5),
        lambda: F.local_response_norm(lib.ones(2, 4, 4), 2.5), lambda: F.local_response_norm(lib.ones(1, 2, 4, 4), 0),
        lambda: F.local_response_norm(lib.ones(2, 4, 4), -1),
        lambda: F.affine_grid(lib.ones(1, 2, 3), (1, 1, 2.5, 2), align_corners=False),
        lambda: F.affine_grid(lib.ones(1, 2, 3), (1.0, 1, 2, 2), align_corners=False)]]
    res.append(F.pad(lib.ones(1, 2, 4), (1, True)))
    res.append(nn.Bilinear(2, 0, 2).weight.shape)
    res += [_err(lambda: nn.Hardtanh(min_val="a")), _err(lambda: nn.Hardtanh(2, 1))]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = nn.Hardtanh(min_value=-2.0, max_value=0.5)
        nn.NLLLoss2d()
    res += [[(x.category.__name__, str(x.message)) for x in w], m(_data(lib, 4) * 3)]
    return res


def case_loss_and_shuffle_argument_errors(lib):
    """Scalar arguments of the losses and of pixel_(un)shuffle that are not numbers (or are floats/bools where
    PyTorch's parser wants an int or a bool) raise its TypeError with its wording; 0-dim Tensors and ints pass."""
    F = lib.nn.functional
    x, y = _data(lib, 1, 4, 2, 2), _data(lib, 3, 4)
    t = lib.tensor([0, 2, 1])
    bad = [lambda: F.pixel_shuffle(x, 1.5), lambda: F.pixel_unshuffle(x, 2.0), lambda: F.pixel_shuffle(x, True),
           lambda: F.pixel_shuffle(x, None), lambda: F.pixel_shuffle(x, lib.tensor(2.0)),
           lambda: F.multi_margin_loss(y, t, margin=None), lambda: F.hinge_embedding_loss(y, y, margin="a"),
           lambda: F.margin_ranking_loss(y, y, y, margin="a"), lambda: F.cosine_embedding_loss(y, y, t, margin="a"),
           lambda: F.triplet_margin_loss(y, y, y, p="a"), lambda: F.triplet_margin_loss(y, y, y, eps=None),
           lambda: F.triplet_margin_loss(y, y, y, swap=1), lambda: F.huber_loss(y, y, delta="a"),
           lambda: F.smooth_l1_loss(y, y, beta="a"), lambda: F.poisson_nll_loss(y, y, eps="a"),
           lambda: F.kl_div(y, y, log_target=1), lambda: F.kl_div(y, y, reduction="bad", log_target=1),
           lambda: F.cross_entropy(y, t, label_smoothing=None), lambda: F.nll_loss(y, t, ignore_index=1.5),
           lambda: F.cross_entropy(y, t, ignore_index=True)]
    res = [_err(f) for f in bad]
    res += [F.pixel_shuffle(x, lib.tensor(2)), F.nll_loss(y, t, ignore_index=lib.tensor(1)),
            F.cross_entropy(y, t, label_smoothing=lib.tensor(0.1)), F.huber_loss(y, y * 2, delta=lib.tensor(0.5)),
            F.margin_ranking_loss(y, y.flip(0), y.sign(), margin=1), F.multi_margin_loss(y, t, margin=lib.tensor(0.5))]
    return res


def case_flag_and_index_argument_errors(lib):
    """Flags and indices the Python wrappers hand to PyTorch's ops positionally: max pooling's ceil_mode, dropout's
    training flag, grid_sample's align_corners must be bools and embedding's padding_idx an int (after the wrapper's
    range assertion); they were taken silently (a str or int flag as true, a float index truncated). Likewise
    avg_pool's ceil_mode/count_include_pad/divisor_override and scaled_dot_product_attention's is_causal, scale and
    dropout_p."""
    F = lib.nn.functional
    x, x3 = _data(lib, 1, 2, 4, 4), _data(lib, 1, 2, 4)
    w = _data(lib, 3, 2)
    bad = [lambda: F.max_pool1d(x3, 2, ceil_mode="a"), lambda: F.max_pool2d(x, 2, ceil_mode=1),
           lambda: F.max_pool2d(x, 2, ceil_mode="a", return_indices=True), lambda: F.dropout(x, training="a"),
           lambda: F.dropout(x, 0.5, 1), lambda: F.dropout(x, 1.5, "a"), lambda: F.dropout(x, 0.5, "a", True),
           lambda: F.dropout(x, 0.0, "a"), lambda: F.grid_sample(x, lib.zeros(1, 2, 2, 2), align_corners="a"),
           lambda: F.grid_sample(x, lib.zeros(1, 2, 2, 2), align_corners=1),
           lambda: F.embedding(lib.tensor([1]), w, padding_idx=1.5), lambda: F.embedding(lib.tensor([1]), w, padding_idx=True),
           lambda: F.embedding(lib.tensor([1]), w, padding_idx=-1.5), lambda: F.embedding(lib.tensor([1]), w, padding_idx=5.5)]
    res = [_err(f) for f in bad]
    # the direct bindings' flags, passed by keyword (PyTorch's message then shows no position)
    res += [_err(lambda: F.avg_pool1d(x3, 2, ceil_mode="a")), _err(lambda: F.avg_pool2d(x, 2, count_include_pad=None)),
            _err(lambda: F.avg_pool2d(x, 2, divisor_override=1.5)), _err(lambda: F.avg_pool2d(x, 2, divisor_override=True)),
            _err(lambda: F.scaled_dot_product_attention(x, x, x, is_causal=1)),
            _err(lambda: F.scaled_dot_product_attention(x, x, x, scale="a")),
            _err(lambda: F.scaled_dot_product_attention(x, x, x, dropout_p="a"))]
    res += [F.avg_pool2d(x, 3, ceil_mode=True, count_include_pad=False, divisor_override=2),
            F.scaled_dot_product_attention(x, x, x, is_causal=True, scale=0.5)]
    res += [F.max_pool2d(x, 3, ceil_mode=True), F.dropout(x, 0.5, False), F.embedding(lib.tensor([1, 2]), w, padding_idx=-1),
            F.grid_sample(x, lib.zeros(1, 2, 2, 2), align_corners=True)]
    return res


def case_norm_argument_checks(lib):
    """F.batch_norm refuses a non-positive eps in training and a negative one in evaluation (PyTorch's wrapper
    ValueErrors; torchish took them); the norms' flags and floats are checked as PyTorch's parser does (a str
    momentum reached a JAX trace; a float num_groups or str use_input_stats was taken), and BatchNorm with
    momentum=None still runs (the cumulative factor is a number)."""
    F, nn = lib.nn.functional, lib.nn
    x = _data(lib, 2, 4, 3)
    rm, rv = lib.zeros(4), lib.ones(4)
    bad = [lambda: F.batch_norm(x, rm, rv, training=True, eps=-1), lambda: F.batch_norm(x, rm, rv, training=True, eps=0.0),
           lambda: F.batch_norm(x, rm, rv, eps=-1e-3), lambda: F.batch_norm(x, rm, rv, training=True, momentum="a"),
           lambda: F.batch_norm(x, rm, rv, training="a"), lambda: F.batch_norm(x, rm, rv, eps="a"),
           lambda: F.batch_norm(x, rm, rv, momentum=None), lambda: F.batch_norm(x, None, None, eps=-1.0),
           lambda: F.layer_norm(x, (3,), eps="a"), lambda: F.layer_norm(x, (3,), eps=None),
           lambda: F.group_norm(x, 2.0), lambda: F.group_norm(x, 2, eps="a"), lambda: F.group_norm(x, True),
           lambda: F.instance_norm(x, eps=None), lambda: F.instance_norm(x, momentum="a"),
           lambda: F.instance_norm(x, use_input_stats="a"), lambda: F.rms_norm(x, (3,), eps="a")]
    res = [_err(f) for f in bad]
    res += [F.batch_norm(x, rm.clone(), rv.clone(), eps=0.0), F.layer_norm(x, (3,), eps=-1e-6 + 1e-5),
            F.rms_norm(x, (3,), eps=None), F.instance_norm(x, rm.clone(), rv.clone(), use_input_stats=False, eps=0.0)]
    bn = nn.BatchNorm1d(4, momentum=None)
    for s in (1.0, 2.0):
        bn(x * s)
    res += [bn.running_mean, bn.running_var]
    return res


test_script_matches_torch = script_test(globals())
