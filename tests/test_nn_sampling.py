"""Padding, resizing and resampling against PyTorch: pad (all modes, negative amounts), interpolate (every mode,
size / scale_factor, align_corners, recompute_scale_factor, antialias), grid_sample / affine_grid (gradients for
the input and the grid), unfold / fold, one_hot, normalize and the distances; module forms, reprs and errors."""
import numpy as np
import pytest

from oracle import arr, assert_same, check, check_raises, run_both, to_numpy, torch, torchish

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def F(T):
    return T.nn.functional


X4 = arr(2, 3, 4, 5)
X3 = arr(2, 3, 5)
X5 = arr(1, 2, 3, 4, 5)

PAD = {
    "constant": lambda T, x: F(T).pad(x, (1, 2, 0, 1), value=0.5),
    "constant_negative": lambda T, x: F(T).pad(x, (-1, 2, 1, -2, 1, 0)),
    "constant_all_dims": lambda T, x: F(T).pad(x, (1, 0, 0, 1, 1, 1, 0, 1)),
    "reflect_2d": lambda T, x: F(T).pad(x, (3, 2, -1, 1), mode="reflect"),
    "reflect_1d": lambda T, x: F(T).pad(x[0], (4, 1), mode="reflect"),
    "reflect_3d": lambda T, x: F(T).pad(x, (1, 1, 2, 1, 1, 0), mode="reflect"),
    "replicate_2d": lambda T, x: F(T).pad(x, (3, -2, 4, 1), mode="replicate"),
    "replicate_3d": lambda T, x: F(T).pad(x, (2, 1, 1, 1, 2, 0), mode="replicate"),
    "circular_2d": lambda T, x: F(T).pad(x, (3, -2, 4, 1), mode="circular"),
    "circular_1d_negative": lambda T, x: F(T).pad(x[0], (-1, 2), mode="circular"),
    "circular_full_wrap": lambda T, x: F(T).pad(x, (5, 5, 4, 0), mode="circular"),
}


@pytest.mark.parametrize("name", sorted(PAD))
def test_pad(name):
    check(PAD[name], [X4])


def test_pad_integer_and_bool_values():
    check(lambda T, x: F(T).pad(x, (1, 1), value=2.5), [np.arange(6).reshape(2, 3)], grad=False)
    check(lambda T, x: F(T).pad(x, (1, 2), mode="reflect"), [np.arange(12).reshape(1, 3, 4)], grad=False)
    check(lambda T, x: F(T).pad(x, (0, 1)), [np.array([[True, False]])], grad=False)


PAD_MODULES = {
    "ZeroPad1d": lambda T: T.nn.ZeroPad1d((1, 2)), "ZeroPad2d": lambda T: T.nn.ZeroPad2d(1),
    "ZeroPad3d": lambda T: T.nn.ZeroPad3d((1, 0, 0, 1, 1, 0)), "ConstantPad1d": lambda T: T.nn.ConstantPad1d(2, 3.5),
    "ConstantPad2d": lambda T: T.nn.ConstantPad2d((1, 0, 2, 1), -1.0), "ConstantPad3d": lambda T: T.nn.ConstantPad3d(1, 2.0),
    "ReflectionPad1d": lambda T: T.nn.ReflectionPad1d((2, 3)), "ReflectionPad2d": lambda T: T.nn.ReflectionPad2d(1),
    "ReflectionPad3d": lambda T: T.nn.ReflectionPad3d((1, 1, 1, 0, 0, 1)),
    "ReplicationPad1d": lambda T: T.nn.ReplicationPad1d(3), "ReplicationPad2d": lambda T: T.nn.ReplicationPad2d((2, 0, 1, 3)),
    "ReplicationPad3d": lambda T: T.nn.ReplicationPad3d(1), "CircularPad1d": lambda T: T.nn.CircularPad1d(2),
    "CircularPad2d": lambda T: T.nn.CircularPad2d((1, 2, 0, 1)), "CircularPad3d": lambda T: T.nn.CircularPad3d(1),
}


@pytest.mark.parametrize("name", ["ZeroPad2d", "ConstantPad1d", "ReflectionPad3d", "ReplicationPad2d",
                                  "CircularPad1d", "CircularPad3d"])
def test_pad_module(name):
    x = X3 if name.endswith("1d") else (X4 if name.endswith("2d") else X5)
    check(lambda T, x: PAD_MODULES[name](T)(x), [x])


def test_pad_module_reprs():
    for name, make in PAD_MODULES.items():
        r, g = run_both(lambda T: repr(make(T)))
        assert g == r, name


# ------------------------------------------------------------------------------------------------------------
# interpolate

INTERP = [
    # (mode, input, kwargs)
    ("nearest", X4, dict(size=(7, 3))), ("nearest", X4, dict(scale_factor=(0.6, 2.3))),
    ("nearest", X4, dict(scale_factor=2)), ("nearest", X5, dict(scale_factor=1.7)),
    ("nearest", X4, dict(scale_factor=1.7, recompute_scale_factor=True)),
    # sizes kept or doubled by a scale that is not 1 or 2: PyTorch's 1-d/3-d forwards read floor(dst / scale),
    # its 2-d forward and every backward take nearest_idx's exact shortcut (nn fuzzer, seed 8400022)
    ("nearest", X3, dict(scale_factor=1.1)), ("nearest", X5, dict(scale_factor=(1.3, 2.2, 1.1))),
    ("nearest", X4, dict(scale_factor=(2.2, 1.1))),
    ("nearest-exact", X4, dict(scale_factor=(0.6, 2.3))), ("nearest-exact", X3, dict(size=7)),
    ("linear", X3, dict(scale_factor=2.5)), ("linear", X3, dict(size=4, align_corners=True)),
    ("bilinear", X4, dict(size=(7, 3))), ("bilinear", X4, dict(size=(7, 3), align_corners=True)),
    ("bilinear", X4, dict(scale_factor=(0.6, 2.3))),
    ("bilinear", X4, dict(size=(1, 1), align_corners=True)),
    ("bicubic", X4, dict(scale_factor=(1.7, 0.6))), ("bicubic", X4, dict(size=(7, 3), align_corners=True)),
    ("bicubic", X4, dict(size=(4, 5))),
    ("trilinear", X5, dict(size=(5, 2, 7))), ("trilinear", X5, dict(scale_factor=1.5, align_corners=True)),
    ("area", X4, dict(scale_factor=1.7)), ("area", X3, dict(size=3)), ("area", X5, dict(size=(2, 3, 3))),
    ("bilinear", X4, dict(scale_factor=0.4, antialias=True)),
    ("bilinear", X4, dict(size=(9, 2), align_corners=True, antialias=True)),
    ("bicubic", X4, dict(size=(2, 3), antialias=True)),
]


@pytest.mark.parametrize("i", range(len(INTERP)), ids=[f"{m}-{x.ndim}d-{k}" for m, x, k in INTERP])
def test_interpolate(i):
    mode, x, kw = INTERP[i]
    check(lambda T, x: F(T).interpolate(x, mode=mode, **kw), [x])


def test_interpolate_float64_and_aliases():
    check(lambda T, x: F(T).interpolate(x, scale_factor=1.5, mode="bicubic"), [arr(1, 2, 3, 4, dtype=np.float64)])
    check(lambda T, x: F(T).upsample(x, size=(7, 3), mode="bilinear"), [X4])
    check(lambda T, x: F(T).upsample_nearest(x, size=(7, 3)), [X4])
    check(lambda T, x: F(T).upsample_bilinear(x, size=(7, 3)), [X4])


UPSAMPLE_MODULES = {
    "Upsample_bilinear": lambda T: T.nn.Upsample(size=(7, 3), mode="bilinear"),
    "Upsample_scale": lambda T: T.nn.Upsample(scale_factor=2),
    "Upsample_tuple": lambda T: T.nn.Upsample(scale_factor=(0.6, 2.3), mode="nearest-exact"),
    "UpsamplingNearest2d": lambda T: T.nn.UpsamplingNearest2d(size=(7, 3)),
    "UpsamplingBilinear2d": lambda T: T.nn.UpsamplingBilinear2d(size=(7, 3)),
}


@pytest.mark.parametrize("name", sorted(UPSAMPLE_MODULES))
def test_upsample_module(name):
    check(lambda T, x: UPSAMPLE_MODULES[name](T)(x), [X4])
    r, g = run_both(lambda T: repr(UPSAMPLE_MODULES[name](T)))
    assert g == r


# ------------------------------------------------------------------------------------------------------------
# grid_sample / affine_grid

GRID4 = arr(2, 3, 4, 2, lo=-1.2, hi=1.2, seed=5)
GRID4_EDGES = np.array([[[[-1.0, -1.0], [1.0, 1.0], [0.0, 0.5]], [[-1.1, 0.25], [1.0, -1.0], [0.3, 1.3]]]] * 2,
                       np.float32)
GRID5 = arr(1, 2, 3, 4, 3, lo=-1.2, hi=1.2, seed=6)
GS = ([("bilinear", p, a) for p in ("zeros", "border", "reflection") for a in (False, True)]
      + [("nearest", "zeros", True), ("nearest", "reflection", False), ("bicubic", "zeros", False),
         ("bicubic", "border", True), ("bicubic", "reflection", False)])


@pytest.mark.parametrize("mode,padding,align", GS)
def test_grid_sample_2d(mode, padding, align):
    check(lambda T, x, g: F(T).grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align), [X4, GRID4])


@pytest.mark.parametrize("mode,padding,align", [("bilinear", "zeros", True), ("bilinear", "border", False),
                                                ("bilinear", "reflection", True), ("bicubic", "reflection", True)])
def test_grid_sample_exact_borders(mode, padding, align):
    # coordinates exactly on the borders: the coordinate clipping passes no gradient there (PyTorch's convention)
    check(lambda T, x, g: F(T).grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align),
          [X4, GRID4_EDGES])


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bilinear", "reflection"), ("nearest", "border")])
def test_grid_sample_3d(mode, padding):
    check(lambda T, x, g: F(T).grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False), [X5, GRID5])


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("padding", ["zeros", "border"])
def test_grid_sample_3d_float64_on_pixel_centres(padding):
    """Every point on a pixel centre (the identity transform): the 3-d sampler's ``((c + 1) * size - 1) / 2`` with
    the product rounded before the subtraction, as PyTorch's, so that the output and the gradient with respect to
    theta look at PyTorch's neighbours. (XLA at its default optimisation level contracted the two into one FMA: 73
    of 336 outputs and theta's gradient off by 4.3; test_float32_bitparity runs this under the default flags.)"""
    size = (2, 1, 4, 6, 7)
    x = np.cos(np.arange(2 * 4 * 6 * 7) * 0.37).reshape(size)
    got = []
    for lib in (torch, torchish):
        theta = lib.eye(3, 4, dtype=lib.float64).expand(2, 3, 4).clone().requires_grad_(True)
        out = F(lib).grid_sample(lib.tensor(x), F(lib).affine_grid(theta, size, align_corners=False),
                                 padding_mode=padding, align_corners=False)
        (out * lib.tensor(x[::-1].copy())).sum().backward()
        got.append((out.detach().numpy(), theta.grad.numpy()))
    np.testing.assert_array_equal(got[1][0], got[0][0])
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12, atol=1e-12)


NONFINITE_GRID = [[float("nan"), 0.0], [float("inf"), 0.0], [-float("inf"), 0.5], [1e10, -1e10], [0.5, float("nan")],
                  [3e9, 0.3], [-7.3, 13.1]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_2d_nonfinite_and_huge_coordinates(dtype, mode):
    """NaN, infinite and huge grid points go where PyTorch's vectorized 2-d kernel sends them: a NaN or infinite
    weight makes a NaN output with zeros padding (torchish gave 0: it sent them to -100, the scalar 3-d kernel's
    ``safe_downgrade_to_int_range``), border and reflection clamp NaN to 0 (``clamp_min(0, in)``) and +inf to the
    last pixel, reflection folds by ``trunc(|c| / twice_span)`` (3e9 landed on another pixel by ``fmod``), and
    integer coordinates outside int32 are outside the image; float64's unnormalisation keeps an infinity."""
    def fn(T):
        x = T.arange(12.0, dtype=getattr(T, dtype)).view(1, 1, 3, 4)
        g = T.tensor([[NONFINITE_GRID]], dtype=getattr(T, dtype))
        return [F(T).grid_sample(x, g, mode=mode, padding_mode=p, align_corners=a)
                for p in ("zeros", "border", "reflection") for a in (False, True)]
    ref, got = run_both(fn)
    assert_same(ref, got)


def test_grid_sample_3d_nonfinite_coordinates():
    """PyTorch's scalar 3-d kernel clips NaN to the last pixel (``std::min(size - 1, std::max(in, 0))``) with border
    and reflection padding, and sends it to -100 (outside, 0) with zeros (torchish's clip kept NaN, then 0)."""
    def fn(T):
        x = T.arange(24.0).view(1, 1, 2, 3, 4)
        g = T.tensor([[[[[float("nan"), 0.0, -1.0], [float("inf"), 0.0, -1.0], [-float("inf"), 0.5, -1.0],
                         [0.5, float("nan"), -1.0], [1e10, 0.3, -1.0]]]]])
        return [F(T).grid_sample(x, g, mode=m, padding_mode=p, align_corners=a) for m in ("bilinear", "nearest")
                for p in ("zeros", "border", "reflection") for a in (False, True)]
    ref, got = run_both(fn)
    assert_same(ref, got)


HALF_BICUBIC = [("bfloat16", "zeros", False), ("bfloat16", "border", True), ("bfloat16", "reflection", False),
                ("float16", "zeros", True)]


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("dtype,padding,align", HALF_BICUBIC)
def test_grid_sample_bicubic_half_rounds_every_operation(dtype, padding, align):
    """Half-precision bicubic sampling through affine_grid, bit for bit: PyTorch's kernel rounds every operation
    to the half type, the gradients' running sums included (float32 throughout, the grid's gradient was 4-12% and
    theta's 3-8% off); the input's gradient takes its contributions in the kernel's order (90 grid points: several
    vectors of 16, PyTorch's AVX-512 build)."""
    from oracle import needs_avx512_torch
    needs_avx512_torch("the order of the input gradient's half-precision sums")
    x = np.cos(np.arange(2 * 3 * 5 * 6) * 0.37).reshape(2, 3, 5, 6)
    theta = np.array([[[np.cos(a), -np.sin(a), 0.1], [np.sin(a), np.cos(a), -0.05]] for a in (0.3, -1.1)]) * 1.3
    got = []
    for lib in (torch, torchish):
        dt = getattr(lib, dtype)
        t, xi = lib.tensor(theta, dtype=dt, requires_grad=True), lib.tensor(x, dtype=dt, requires_grad=True)
        grid = F(lib).affine_grid(t, (2, 3, 9, 10), align_corners=align)
        grid.retain_grad()
        out = F(lib).grid_sample(xi, grid, mode="bicubic", padding_mode=padding, align_corners=align)
        out.backward(lib.linspace(-1, 1, out.numel(), dtype=dt).reshape(out.shape))
        got.append([v.detach().float().numpy() for v in (out, xi.grad, grid.grad, t.grad)])
    for name, r, g in zip(("output", "input grad", "grid grad", "theta grad"), *got):
        np.testing.assert_array_equal(g, r, err_msg=name)


@pytest.mark.parametrize("size,align", [((2, 3, 4, 5), True), ((2, 1, 1, 3), True), ((2, 3, 4, 5, 2), False)])
def test_affine_grid(size, align):
    theta = arr(2, 2, 3, seed=1) if len(size) == 4 else arr(2, 3, 4, seed=1)
    check(lambda T, t: F(T).affine_grid(t, size, align_corners=align), [theta])


def test_affine_grid_then_grid_sample():
    check(lambda T, x, t: F(T).grid_sample(x, F(T).affine_grid(t, (2, 3, 4, 5), align_corners=False),
                                           align_corners=False), [X4, arr(2, 2, 3, seed=1)])


# ------------------------------------------------------------------------------------------------------------
# unfold / fold

FOLDS = [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))]


@pytest.mark.parametrize("i", range(len(FOLDS)))
def test_unfold_fold_roundtrip(i):
    kw = FOLDS[i]
    check(lambda T, x: F(T).unfold(x, **kw), [X4])
    ref, _ = run_both(lambda T: F(T).unfold(T.tensor(X4), **kw))
    cols = arr(*ref.shape, seed=3)
    check(lambda T, c: (F(T).fold(c, (4, 5), **kw), F(T).fold(c[0], (4, 5), **kw)), [cols])  # batched, unbatched
    check(lambda T, x: T.nn.Fold((4, 5), **kw)(T.nn.Unfold(**kw)(x)), [X4])


def test_unfold_unbatched_and_reprs():
    check(lambda T, x: F(T).unfold(x[0], 2), [X4])
    for make in (lambda T: T.nn.Fold((4, 5), 2), lambda T: T.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))):
        r, g = run_both(lambda T: repr(make(T)))
        assert g == r


# ------------------------------------------------------------------------------------------------------------
# one_hot, normalize, distances

def test_one_hot():
    check(lambda T, t: F(T).one_hot(t), [np.array([[1, 0], [3, 2]])], grad=False)
    check(lambda T, t: F(T).one_hot(t, 5), [np.array([1, 0, 4])], grad=False)
    check(lambda T, t: F(T).one_hot(t, 3), [np.zeros(0, np.int64)], grad=False)


DIST = {
    "normalize": (lambda T, x: F(T).normalize(x), [X4]),
    "normalize_zero_rows": (lambda T, x: F(T).normalize(x * T.tensor([[0.0], [1.0], [0.0]]), dim=1), [arr(3, 4)]),
    "cosine_similarity": (lambda T, a, b: F(T).cosine_similarity(a, b, dim=-1), [arr(3, 4), arr(4, seed=1)]),
    "cosine_similarity_zero": (lambda T, a, b: F(T).cosine_similarity(a * 0, b, dim=0), [arr(3, 4), arr(3, 4, seed=1)]),
    "pairwise_distance_p": (lambda T, a, b: F(T).pairwise_distance(a, b, p=1.5, keepdim=True), [arr(3, 4), arr(4)]),
    "pairwise_distance_inf": (lambda T, a, b: F(T).pairwise_distance(a, b, p=float("inf"), eps=0.0),
                              [arr(3, 4), arr(3, 4, seed=1)]),
    "pairwise_distance_1d": (lambda T, a, b: F(T).pairwise_distance(a, b, p=0.5), [arr(4), arr(4, seed=1)]),
    "pdist_zero_rows": (lambda T, x: F(T).pdist(T.cat([x, x[:1]])), [arr(3, 4)]),
}
for _p in (0, 0.5, 1.5, 2, float("inf")):
    DIST[f"pdist_p{_p}"] = (lambda T, x, p=_p: F(T).pdist(x, p), [arr(4, 3)])
for _p in (0.5, 1, 2, 3, float("inf")):
    DIST[f"cdist_p{_p}"] = (lambda T, a, b, p=_p: T.cdist(a, b, p), [arr(4, 3), arr(2, 3, seed=1)])
DIST["cdist_batched_broadcast"] = (lambda T, a, b: T.cdist(a, b, 1.0), [arr(2, 1, 3, 4), arr(5, 2, 4, seed=1)])
DIST["cdist_mm_large"] = (lambda T, a, b: T.cdist(a, b), [arr(30, 3), arr(4, 3, seed=1)])
DIST["cdist_mm_forced"] = (lambda T, a, b: T.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                           [arr(4, 3), arr(2, 3, seed=1)])
DIST["cdist_no_mm"] = (lambda T, a, b: T.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
                       [arr(30, 3), arr(2, 3, seed=1)])
DIST["CosineSimilarity"] = (lambda T, a, b: T.nn.CosineSimilarity(dim=0, eps=1e-3)(a, b), [arr(3, 4), arr(3, 4, seed=1)])
DIST["PairwiseDistance"] = (lambda T, a, b: T.nn.PairwiseDistance(p=3.0, keepdim=True)(a, b),
                            [arr(3, 4), arr(3, 4, seed=1)])
DIST["torch_namespace"] = (lambda T, a, b: (T.cosine_similarity(a, b), T.pairwise_distance(a, b), T.pdist(a)),
                           [arr(3, 4), arr(3, 4, seed=1)])


@pytest.mark.parametrize("name", sorted(DIST))
def test_distances(name):
    fn, inputs = DIST[name]
    check(fn, inputs)


def test_pdist_duplicate_rows_have_zero_gradient():
    x = torchish.tensor(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]], np.float32), requires_grad=True)
    (g,) = torchish.autograd.grad(F(torchish).pdist(x).sum(), x)
    t = torch.tensor(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]], np.float32), requires_grad=True)
    (gt,) = torch.autograd.grad(torch.nn.functional.pdist(t).sum(), t)
    assert np.all(np.isfinite(to_numpy(g)))
    np.testing.assert_allclose(to_numpy(g), gt.numpy(), rtol=1e-5)


# ------------------------------------------------------------------------------------------------------------
# errors

ERRORS = {
    "pad_odd": lambda T: F(T).pad(T.ones(1, 2, 3), (1,)),
    "pad_too_long": lambda T: F(T).pad(T.ones(2, 3), (1,) * 6),
    "pad_mode": lambda T: F(T).pad(T.ones(1, 2, 3), (1, 1), mode="foo"),
    "pad_reflect_dims": lambda T: F(T).pad(T.ones(1, 2, 3, 4), (1, 1), mode="reflect"),
    "pad_reflect_too_big": lambda T: F(T).pad(T.ones(1, 2, 3, 4), (4, 1, 1, 1), mode="reflect"),
    "pad_reflect_value": lambda T: F(T).pad(T.ones(1, 2, 3), (1, 1), mode="reflect", value=1.0),
    "pad_circular_wrap": lambda T: F(T).pad(T.ones(1, 2, 3), (4, 1), mode="circular"),
    "pad_negative_size": lambda T: F(T).pad(T.ones(1, 2, 3), (-3, -2)),
    "pad_replicate_negative_size": lambda T: F(T).pad(T.ones(1, 2, 3), (-4, 0), mode="replicate"),
    "CircularPad2d_dims": lambda T: T.nn.CircularPad2d(1)(T.ones(2, 3)),
    "interp_both": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=3, scale_factor=2),
    "interp_none": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2)),
    "interp_size_len": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=(3,)),
    "interp_scale_len": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), scale_factor=(2.0, 2.0, 2.0)),
    "interp_size_float": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=(3.5, 2)),
    "interp_align_nearest": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=3, align_corners=True),
    "interp_recompute_size": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=3, recompute_scale_factor=True),
    "interp_zero_size": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=(0, 2)),
    "interp_negative_scale": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), scale_factor=-1.0),
    "interp_mode": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=3, mode="foo"),
    "interp_linear_4d": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=3, mode="linear"),
    "interp_bilinear_3d": lambda T: F(T).interpolate(T.ones(1, 1, 2), size=3, mode="bilinear"),
    "interp_2d_input": lambda T: F(T).interpolate(T.ones(2, 2), size=3),
    "interp_antialias_nearest": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2), size=3, antialias=True),
    "interp_int": lambda T: F(T).interpolate(T.ones(1, 1, 2, 2, dtype=T.int64), scale_factor=2),
    "grid_mode": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2), mode="foo"),
    "grid_padding": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2), padding_mode="foo"),
    "grid_last_dim": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 3), align_corners=False),
    "grid_batch": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(2, 1, 1, 2), align_corners=False),
    "grid_bicubic_5d": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2, 2), T.zeros(1, 1, 1, 1, 3), mode="bicubic",
                                                  align_corners=False),
    "grid_dtype": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2, dtype=T.float64),
                                             align_corners=False),
    "grid_ndim": lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 1, 2), align_corners=False),
    "affine_float": lambda T: F(T).affine_grid(T.ones(1, 2, 3, dtype=T.int64), (1, 1, 2, 2), align_corners=False),
    "affine_theta_shape": lambda T: F(T).affine_grid(T.ones(1, 3, 3), (1, 1, 2, 2), align_corners=False),
    "affine_size_len": lambda T: F(T).affine_grid(T.ones(1, 2, 3), (1, 2, 2), align_corners=False),
    "affine_size_zero": lambda T: F(T).affine_grid(T.ones(1, 2, 3), (1, 1, 0, 2), align_corners=False),
    "affine_batch": lambda T: F(T).affine_grid(T.ones(2, 2, 3), (1, 1, 3, 4), align_corners=False),
    "unfold_5d": lambda T: F(T).unfold(T.ones(1, 1, 2, 3, 4), 2),
    "unfold_2d": lambda T: F(T).unfold(T.ones(3, 4), 2),
    "unfold_kernel_too_big": lambda T: F(T).unfold(T.ones(1, 2, 3, 4), 5),
    "unfold_int": lambda T: F(T).unfold(T.ones(1, 2, 3, 4, dtype=T.int64), 2),
    "unfold_zero_stride": lambda T: F(T).unfold(T.ones(1, 2, 3, 4), 2, stride=0),
    "fold_divisible": lambda T: F(T).fold(T.ones(1, 7, 6), (3, 4), 2),
    "fold_blocks": lambda T: F(T).fold(T.ones(1, 8, 5), (3, 4), 2),
    "fold_4d": lambda T: F(T).fold(T.ones(1, 1, 8, 6), (3, 4), 2),
    "one_hot_int32": lambda T: F(T).one_hot(T.tensor([1, 2], dtype=T.int32)),
    "one_hot_negative": lambda T: F(T).one_hot(T.tensor([-1, 2])),
    "one_hot_too_big": lambda T: F(T).one_hot(T.tensor([1, 2]), 2),
    "one_hot_empty": lambda T: F(T).one_hot(T.tensor([], dtype=T.int64)),
    "cosine_int": lambda T: F(T).cosine_similarity(T.ones(3, 4, dtype=T.int64), T.ones(3, 4, dtype=T.int64)),
    "cosine_shapes": lambda T: F(T).cosine_similarity(T.ones(3, 4), T.ones(3, 5)),
    "cosine_dim": lambda T: F(T).cosine_similarity(T.ones(3, 4), T.ones(3, 4), dim=2),
    "normalize_int": lambda T: F(T).normalize(T.ones(3, 4, dtype=T.int64)),
    "pdist_3d": lambda T: F(T).pdist(T.ones(2, 3, 4)),
    "pdist_negative_p": lambda T: F(T).pdist(T.ones(3, 4), -1),
    "pdist_int": lambda T: F(T).pdist(T.ones(3, 4, dtype=T.int64)),
    "cdist_1d": lambda T: T.cdist(T.ones(4), T.ones(3, 4)),
    "cdist_columns": lambda T: T.cdist(T.ones(3, 4), T.ones(3, 5)),
    "cdist_negative_p": lambda T: T.cdist(T.ones(3, 4), T.ones(3, 4), -1.0),
    "cdist_int": lambda T: T.cdist(T.ones(3, 4, dtype=T.int64), T.ones(3, 4, dtype=T.int64)),
    "cdist_mode": lambda T: T.cdist(T.ones(3, 4), T.ones(2, 4), compute_mode="foo"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])
