"""nn.functional with Bool, complex and integer inputs that PyTorch's CPU kernels refuse: torchish raises the same
builtin exception type (and, where marked, PyTorch's exact message); float32 controls still compute the same
values. Cases found by comparing every function's outcome with both libraries on each dtype."""
import numpy as np
import pytest

from oracle import assert_same, check_raises, run_both, same_error, torch, torchish

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def data(dt, *shape, seed=0, positive=False):
    """Deterministic numpy inputs of the dtype named ``dt``."""
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.uniform(size=shape) > 0.5
    if dt == "int64":
        a = rng.integers(-3, 4, size=shape).astype(np.int64)
        return np.abs(a) if positive else a
    if dt == "complex64":
        return (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)).astype(np.complex64)
    a = rng.uniform(-1, 1, size=shape).astype(np.float32)
    return np.abs(a) * 0.9 + 0.05 if positive else a


def t(T, dt, *shape, seed=0, positive=False):
    return T.tensor(data(dt, *shape, seed=seed, positive=positive))


def idx(T, values):
    return T.tensor(np.asarray(values, np.int64))


def F(T):
    return T.nn.functional


CASES = {
    # activations
    "elu": lambda T, dt: F(T).elu(t(T, dt, 2, 4)),
    "selu": lambda T, dt: F(T).selu(t(T, dt, 2, 4)),
    "celu": lambda T, dt: F(T).celu(t(T, dt, 2, 4)),
    "gelu": lambda T, dt: F(T).gelu(t(T, dt, 2, 4)),
    "leaky_relu": lambda T, dt: F(T).leaky_relu(t(T, dt, 2, 4)),
    "rrelu": lambda T, dt: F(T).rrelu(t(T, dt, 2, 4)),
    "hardtanh": lambda T, dt: F(T).hardtanh(t(T, dt, 2, 4)),
    "relu6": lambda T, dt: F(T).relu6(t(T, dt, 2, 4)),
    "hardswish": lambda T, dt: F(T).hardswish(t(T, dt, 2, 4)),
    "hardsigmoid": lambda T, dt: F(T).hardsigmoid(t(T, dt, 2, 4)),
    "mish": lambda T, dt: F(T).mish(t(T, dt, 2, 4)),
    "softplus": lambda T, dt: F(T).softplus(t(T, dt, 2, 4)),
    "softsign": lambda T, dt: F(T).softsign(t(T, dt, 2, 4)),
    "softshrink": lambda T, dt: F(T).softshrink(t(T, dt, 2, 4)),
    "hardshrink": lambda T, dt: F(T).hardshrink(t(T, dt, 2, 4)),
    "logsigmoid": lambda T, dt: F(T).logsigmoid(t(T, dt, 2, 4)),
    "threshold": lambda T, dt: F(T).threshold(t(T, dt, 2, 4), 0.1, 2.0),
    "softmax": lambda T, dt: F(T).softmax(t(T, dt, 2, 4), dim=1),
    "softmax_dim0": lambda T, dt: F(T).softmax(t(T, dt, 2, 4), dim=0),
    "log_softmax": lambda T, dt: F(T).log_softmax(t(T, dt, 2, 4), dim=1),
    "softmin": lambda T, dt: F(T).softmin(t(T, dt, 2, 4), dim=1),
    # linear and convolution
    "linear": lambda T, dt: F(T).linear(t(T, dt, 2, 4), t(T, dt, 3, 4, seed=1), t(T, dt, 3, seed=2)),
    "linear_vec_weight": lambda T, dt: F(T).linear(t(T, dt, 4), t(T, dt, 4, seed=1)),
    "bilinear": lambda T, dt: F(T).bilinear(t(T, dt, 2, 4), t(T, dt, 2, 3, seed=1), t(T, dt, 5, 4, 3, seed=2)),
    "conv1d": lambda T, dt: F(T).conv1d(t(T, dt, 1, 2, 6), t(T, dt, 3, 2, 3, seed=1)),
    "conv2d": lambda T, dt: F(T).conv2d(t(T, dt, 1, 2, 5, 5), t(T, dt, 3, 2, 3, 3, seed=1)),
    "conv2d_dilated": lambda T, dt: F(T).conv2d(t(T, dt, 1, 2, 5, 5), t(T, dt, 3, 2, 2, 2, seed=1), dilation=2),
    "conv3d": lambda T, dt: F(T).conv3d(t(T, dt, 1, 2, 4, 4, 4), t(T, dt, 3, 2, 2, 2, 2, seed=1)),
    "conv_transpose1d": lambda T, dt: F(T).conv_transpose1d(t(T, dt, 1, 2, 6), t(T, dt, 2, 3, 3, seed=1)),
    "conv_transpose2d": lambda T, dt: F(T).conv_transpose2d(t(T, dt, 1, 2, 4, 4), t(T, dt, 2, 3, 3, 3, seed=1)),
    # pooling
    "max_pool1d": lambda T, dt: F(T).max_pool1d(t(T, dt, 1, 2, 6), 2),
    "max_pool2d": lambda T, dt: F(T).max_pool2d(t(T, dt, 1, 2, 4, 4), 2),
    "max_pool2d_indices": lambda T, dt: F(T).max_pool2d(t(T, dt, 1, 2, 4, 4), 2, return_indices=True),
    "max_pool3d": lambda T, dt: F(T).max_pool3d(t(T, dt, 1, 2, 4, 4, 4), 2),
    "lp_pool1d": lambda T, dt: F(T).lp_pool1d(t(T, dt, 1, 2, 6), 2, 2),
    "lp_pool2d": lambda T, dt: F(T).lp_pool2d(t(T, dt, 1, 2, 4, 4), 2, 2),
    "lp_pool3d": lambda T, dt: F(T).lp_pool3d(t(T, dt, 1, 2, 4, 4, 4), 2, 2),
    # normalization
    "layer_norm": lambda T, dt: F(T).layer_norm(t(T, dt, 2, 4), (4,)),
    "group_norm": lambda T, dt: F(T).group_norm(t(T, dt, 2, 4, 3), 2),
    "batch_norm": lambda T, dt: F(T).batch_norm(t(T, dt, 2, 3, 4), None, None, training=True),
    "instance_norm": lambda T, dt: F(T).instance_norm(t(T, dt, 2, 3, 4)),
    "local_response_norm": lambda T, dt: F(T).local_response_norm(t(T, dt, 1, 4, 3), 2),
    "local_response_norm_4d": lambda T, dt: F(T).local_response_norm(t(T, dt, 1, 4, 3, 3), 2),
    # losses
    "mse_loss": lambda T, dt: F(T).mse_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "smooth_l1_loss": lambda T, dt: F(T).smooth_l1_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "huber_loss": lambda T, dt: F(T).huber_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "soft_margin_loss": lambda T, dt: F(T).soft_margin_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "kl_div": lambda T, dt: F(T).kl_div(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1), reduction="batchmean"),
    "multilabel_soft_margin_loss": lambda T, dt: F(T).multilabel_soft_margin_loss(t(T, dt, 2, 4),
                                                                                  t(T, dt, 2, 4, seed=1)),
    "poisson_nll_loss": lambda T, dt: F(T).poisson_nll_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "bce_with_logits": lambda T, dt: F(T).binary_cross_entropy_with_logits(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "bce": lambda T, dt: F(T).binary_cross_entropy(t(T, dt, 2, 4, positive=True),
                                                   t(T, dt, 2, 4, seed=1, positive=True)),
    "hinge_embedding_loss": lambda T, dt: F(T).hinge_embedding_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "cross_entropy": lambda T, dt: F(T).cross_entropy(t(T, dt, 2, 4), idx(T, [1, 3])),
    "cross_entropy_probs": lambda T, dt: F(T).cross_entropy(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "nll_loss": lambda T, dt: F(T).nll_loss(t(T, dt, 2, 4), idx(T, [1, 3])),
    "cosine_embedding_loss": lambda T, dt: F(T).cosine_embedding_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1),
                                                                      t(T, dt, 2, seed=2)),
    "margin_ranking_loss": lambda T, dt: F(T).margin_ranking_loss(t(T, dt, 4), t(T, dt, 4, seed=1),
                                                                  t(T, dt, 4, seed=2)),
    "gaussian_nll_loss": lambda T, dt: F(T).gaussian_nll_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1),
                                                              t(T, dt, 2, 4, seed=2, positive=True)),
    "multi_margin_loss": lambda T, dt: F(T).multi_margin_loss(t(T, dt, 2, 4), idx(T, [1, 3])),
    "multilabel_margin_loss": lambda T, dt: F(T).multilabel_margin_loss(t(T, dt, 2, 4),
                                                                        idx(T, [[1, -1, 0, 0], [3, 0, -1, 0]])),
    "triplet_margin_loss": lambda T, dt: F(T).triplet_margin_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1),
                                                                  t(T, dt, 2, 4, seed=2)),
    # padding, resampling, distances, embeddings, attention
    "pad_reflect": lambda T, dt: F(T).pad(t(T, dt, 1, 2, 4), (1, 1), mode="reflect"),
    "pad_replicate": lambda T, dt: F(T).pad(t(T, dt, 1, 2, 4, 4), (1, 1, 1, 1), mode="replicate"),
    "interpolate_nearest": lambda T, dt: F(T).interpolate(t(T, dt, 1, 2, 4), scale_factor=2),
    "interpolate_bilinear": lambda T, dt: F(T).interpolate(t(T, dt, 1, 2, 4, 4), scale_factor=2, mode="bilinear"),
    "interpolate_area": lambda T, dt: F(T).interpolate(t(T, dt, 1, 2, 4, 4), size=2, mode="area"),
    "cosine_similarity": lambda T, dt: F(T).cosine_similarity(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "pairwise_distance": lambda T, dt: F(T).pairwise_distance(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "embedding_bag": lambda T, dt: F(T).embedding_bag(idx(T, [0, 2, 1, 3]), t(T, dt, 4, 3), idx(T, [0, 2])),
    "grid_sample": lambda T, dt: F(T).grid_sample(t(T, dt, 1, 1, 3, 3), t(T, dt, 1, 2, 2, 2, seed=1),
                                                  align_corners=False),
    "sdpa": lambda T, dt: F(T).scaled_dot_product_attention(t(T, dt, 1, 2, 4), t(T, dt, 1, 2, 4, seed=1),
                                                            t(T, dt, 1, 2, 4, seed=2)),
}

# (case, dtype) pairs PyTorch refuses; "=" after the dtype: torchish's message is PyTorch's, word for word
REFUSED = """
elu complex64=  selu complex64=  celu complex64=  gelu complex64=  leaky_relu complex64=  rrelu complex64=
hardtanh complex64=  relu6 complex64=  hardswish complex64=  hardsigmoid complex64=  mish complex64=
softplus complex64=  softsign bool=  softshrink complex64=  hardshrink complex64=  logsigmoid complex64=
threshold bool=  threshold complex64=  softmax complex64=  softmax_dim0 complex64=  log_softmax complex64=
softmin complex64=
linear bool=  linear_vec_weight bool=  bilinear bool=  conv1d bool=  conv2d bool=  conv2d_dilated bool=  conv3d bool=
conv_transpose1d bool=  conv_transpose2d bool=
max_pool1d bool=  max_pool1d complex64=  max_pool1d int64=  max_pool2d bool=  max_pool2d complex64=
max_pool2d_indices bool=  max_pool2d_indices complex64=  max_pool3d bool=  max_pool3d complex64=
lp_pool1d complex64=  lp_pool2d complex64=  lp_pool3d complex64=
layer_norm complex64=  group_norm complex64=  batch_norm complex64=  instance_norm complex64=
local_response_norm bool=  local_response_norm complex64=  local_response_norm_4d bool=
mse_loss complex64=  smooth_l1_loss complex64=  huber_loss complex64=  soft_margin_loss bool=
soft_margin_loss int64=  kl_div complex64=  multilabel_soft_margin_loss bool=  multilabel_soft_margin_loss complex64=
multilabel_soft_margin_loss int64=  poisson_nll_loss bool=  bce_with_logits bool=  bce_with_logits complex64=
bce_with_logits int64=  bce bool=  bce complex64=  bce int64=  hinge_embedding_loss bool=
hinge_embedding_loss complex64=  hinge_embedding_loss int64=  cross_entropy complex64=  cross_entropy_probs bool=
cross_entropy_probs complex64=  cross_entropy_probs int64=  nll_loss complex64=  cosine_embedding_loss complex64=
margin_ranking_loss complex64=  gaussian_nll_loss complex64=  gaussian_nll_loss int64=  multi_margin_loss complex64=
multilabel_margin_loss complex64=  triplet_margin_loss bool=
pad_reflect bool=  pad_replicate bool=  interpolate_nearest complex64  interpolate_bilinear complex64
interpolate_area complex64  cosine_similarity complex64=  pairwise_distance bool=  embedding_bag int64=
embedding_bag complex64  grid_sample complex64  sdpa complex64=
""".split("\n")
REFUSED = [(c, d.rstrip("="), d.endswith("=")) for line in REFUSED for c, d in zip(line.split()[::2],
                                                                                       line.split()[1::2])]


def builtin_type(e):
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


@pytest.mark.parametrize("case,dt,same_message", REFUSED, ids=[f"{c}-{d}" for c, d, _ in REFUSED])
def test_refused_dtype(case, dt, same_message):
    ref = check_raises(CASES[case], dt)
    with pytest.raises(Exception) as got:
        CASES[case](torchish, dt)
    assert builtin_type(got.value) is builtin_type(ref), f"{type(got.value).__name__} != torch's {type(ref).__name__}"
    if same_message:
        assert str(got.value) == str(ref)


# float32 (and dtypes PyTorch accepts) still compute what PyTorch computes
ACCEPTED = [("elu", "float32"), ("gelu", "float32"), ("silu_complex", "complex64"), ("softmax", "float32"),
            ("linear", "float32"), ("linear", "int64"), ("conv2d", "float32"), ("conv2d", "int64"),
            ("max_pool1d", "float32"), ("max_pool2d", "int64"), ("layer_norm", "float32"), ("rms_norm", "complex64"),
            ("mse_loss", "float32"), ("l1_loss", "complex64"), ("soft_margin_loss", "complex64"),
            ("cross_entropy_probs", "float32"), ("pad_reflect", "int64"),
            ("pairwise_distance", "int64"), ("unfold", "bool"), ("fold", "bool"),
            ("unfold", "complex64")]
CASES.update({
    "silu_complex": lambda T, dt: F(T).silu(t(T, dt, 2, 4)),
    "rms_norm": lambda T, dt: F(T).rms_norm(t(T, dt, 2, 4), (4,)),
    "l1_loss": lambda T, dt: F(T).l1_loss(t(T, dt, 2, 4), t(T, dt, 2, 4, seed=1)),
    "unfold": lambda T, dt: F(T).unfold(t(T, dt, 2, 3, 5, 5), 3, padding=1, stride=2),
    "fold": lambda T, dt: F(T).fold(t(T, dt, 1, 8, 9), (4, 4), 2),
})


@pytest.mark.parametrize("case,dt", ACCEPTED, ids=[f"{c}-{d}" for c, d in ACCEPTED])
def test_accepted_dtype(case, dt):
    ref, got = run_both(CASES[case], dt)
    assert_same(ref, got)


def test_empty_bool_linear_and_conv_still_run():
    for fn in (lambda T: F(T).linear(T.ones(0, 3, dtype=T.bool), T.ones(2, 3, dtype=T.bool)),
               lambda T: F(T).conv2d(T.ones(0, 2, 4, 4, dtype=T.bool), T.ones(3, 2, 2, 2, dtype=T.bool))):
        ref, got = run_both(fn)
        assert_same(ref, got)


def pair(name, d1, d2):
    """``F.<name>(input of d1, target of d2)``."""
    return lambda T: getattr(F(T), name)(t(T, d1, 2, 4), t(T, d2, 2, 4, seed=1))


# losses whose PyTorch composites fail on one argument's dtype (a Bool subtraction, a float result written into a
# tensor like the input...)
MIXED = [("l1_loss", "float32", "bool"), ("l1_loss", "bool", "bool"), ("huber_loss", "bool", "float32"),
         ("huber_loss", "int64", "float32"), ("huber_loss", "float32", "complex64"),
         ("soft_margin_loss", "float32", "complex64"), ("soft_margin_loss", "int64", "float32"),
         ("multilabel_soft_margin_loss", "float32", "bool"), ("poisson_nll_loss", "bool", "bool")]


@pytest.mark.parametrize("name,d1,d2", MIXED, ids=[f"{n}-{a}-{b}" for n, a, b in MIXED])
def test_refused_mixed_dtypes(name, d1, d2):
    ref = check_raises(pair(name, d1, d2))
    with pytest.raises(Exception) as got:
        pair(name, d1, d2)(torchish)
    assert str(got.value) == str(ref)


@pytest.mark.parametrize("fn", [
    lambda T: F(T).poisson_nll_loss(t(T, "bool", 2, 4), t(T, "float32", 2, 4)),  # exp(input) - target * input
    lambda T: F(T).margin_ranking_loss(t(T, "float32", 4), t(T, "float32", 4, seed=1), t(T, "int64", 4, seed=2)),
    lambda T: F(T).gaussian_nll_loss(t(T, "int64", 2, 4), t(T, "float32", 2, 4, seed=1),
                                     t(T, "float32", 2, 4, seed=2, positive=True)),
    lambda T: F(T).huber_loss(t(T, "float32", 2, 4), t(T, "int64", 2, 4, seed=1)),
], ids=["poisson-bool-input", "margin-ranking-int-target", "gaussian-int-input",
        "huber-int-target"])
def test_accepted_mixed_dtypes(fn):
    ref, got = run_both(fn)
    assert_same(ref, got)


@pytest.mark.parametrize("fn", [
    lambda T: F(T).margin_ranking_loss(t(T, "bool", 4), t(T, "bool", 4, seed=1), t(T, "float32", 4, seed=2)),
    lambda T: F(T).margin_ranking_loss(t(T, "float32", 4), t(T, "float32", 4, seed=1), t(T, "bool", 4, seed=2)),
    lambda T: F(T).gaussian_nll_loss(t(T, "float32", 2, 4), t(T, "float32", 2, 4, seed=1),
                                     t(T, "int64", 2, 4, seed=2, positive=True)),
], ids=["margin-ranking-bool-inputs", "margin-ranking-bool-target", "gaussian-int-var"])
def test_refused_mixed_arguments(fn):
    ref = check_raises(fn)
    with pytest.raises(Exception) as got:
        fn(torchish)
    assert str(got.value) == str(ref)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 5, 2, 3), (1, 4, 2, 2, 2)])
def test_local_response_norm_of_int64_pools_in_integers(shape):
    """PyTorch's composite averages the int64 squares with an integer pool (truncating), then divides in the
    default float dtype."""
    x = (np.arange(np.prod(shape)).reshape(shape) - 7).astype(np.int64)
    ref, got = run_both(lambda T: T.nn.functional.local_response_norm(T.tensor(x), 3, alpha=0.5, beta=0.75, k=2.0))
    assert_same(ref, got)


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2)])
def test_local_response_norm_of_other_integers_raises(dt, shape):
    check_raises(lambda T: T.nn.functional.local_response_norm(T.tensor(np.ones(shape, dt)), 3))


@pytest.mark.parametrize("dt", ["int64", "int8", "int32"])
@pytest.mark.parametrize("margin", [1.0, 2.7, -1.5])
@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_hinge_embedding_loss_of_integers_stays_integer(dt, margin, reduction):
    """PyTorch's composite computes ``margin - input`` in the input's integer dtype (the margin truncated)."""
    x = np.array([-2, 0, 1, 3, 5], dt)
    y = np.array([1., -1., -1., 1., -1.], np.float32)
    ref, got = run_both(lambda T: T.nn.functional.hinge_embedding_loss(T.tensor(x), T.tensor(y), margin=margin,
                                                                       reduction=reduction))
    assert_same(ref, got)


@pytest.mark.parametrize("xdt", ["int64", "float32", "float64", "float16"])
@pytest.mark.parametrize("tdt", ["int64", "float32"])
def test_gaussian_nll_loss_with_a_number_var_dtypes(xdt, tdt):
    """A number ``var`` is ``var * ones_like(input)`` (PyTorch's composite): an integer input gives a float32 var."""
    x, t = np.array([1, 2, 3], xdt), np.array([1, 3, 2], tdt)
    ref, got = run_both(lambda T: T.nn.functional.gaussian_nll_loss(T.tensor(x), T.tensor(t), 1.0))
    assert_same(ref, got, rtol=1e-3, atol=1e-3)


INTERP = [("nearest", 3), ("nearest", 4), ("nearest", 5), ("nearest-exact", 3), ("nearest-exact", 4),
          ("nearest-exact", 5), ("linear", 3), ("bilinear", 4), ("bicubic", 4), ("trilinear", 5), ("area", 3),
          ("area", 4), ("area", 5)]


@pytest.mark.parametrize("dt", ["complex64", "int64", "bool"])
@pytest.mark.parametrize("mode,ndim", INTERP)
def test_interpolate_refusal_names_pytorch_kernel(mode, ndim, dt):
    """The kernel a refusal names is PyTorch's: the 2-d nearest and bilinear kernels, otherwise the shared index
    helpers (``compute_indices_weights_*``) or the adaptive pooling that 'area' runs."""
    same_error(lambda T: T.nn.functional.interpolate(t(T, dt, 2, 3, *[4] * (ndim - 2)), scale_factor=2, mode=mode))


@pytest.mark.parametrize("dt", ["complex64", "int64"])
@pytest.mark.parametrize("ndim", [4, 5])
def test_grid_sample_refusal_names_pytorch_kernel(ndim, dt):
    grid = np.zeros((2,) + (2,) * (ndim - 2) + (ndim - 2,), np.float32)
    same_error(lambda T: T.nn.functional.grid_sample(t(T, dt, 2, 3, *[4] * (ndim - 2)), T.tensor(grid),
                                                     align_corners=False))


GRID_SHAPES = [((2, 3, 4, 4), (2, 2, 2, 2)), ((2, 3, 4, 4), (2, 2, 2)), ((2, 3, 4, 4), (3, 2, 2, 2)),
               ((2, 3, 4, 4), (2, 2, 2, 3)), ((2, 3, 0, 4), (2, 2, 2, 2)), ((2, 3, 4, 4, 4), (2, 2, 2, 2, 3)),
               ((2, 3, 4), (2, 2, 1))]


@pytest.mark.parametrize("dts", [("float64", "float32"), ("int64", "float32"), ("float32", "int64"),
                                 ("complex64", "complex64")])
@pytest.mark.parametrize("shapes", GRID_SHAPES)
def test_grid_sample_check_order(shapes, dts):
    """Shape checks, then the input's dtype (the kernel's), then the grid's against it."""
    (xs, gs), (xd, gd) = shapes, dts
    same_error(lambda T: T.nn.functional.grid_sample(T.ones(*xs, dtype=getattr(T, xd)),
                                                     T.zeros(*gs, dtype=getattr(T, gd)), align_corners=False))
