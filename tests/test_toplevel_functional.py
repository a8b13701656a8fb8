"""The aten spellings of nn.functional ops (``torchish/_aten_nn.py``, ``_aten_rnn.py``, ``_aten_linalg.py``):
values, gradients, dtypes and errors against torch 2.13; sampling and randomized methods by their properties."""
import warnings

import numpy as np
import pytest

import torchish
from oracle import arr, check, check_raises, run_both, same_error, torch, needs_torch, assert_same

X = arr(2, 3, 4, seed=1)
T3 = (arr(2, 3, seed=5) > 0).astype(np.float32) * 2 - 1
Y2 = arr(2, 3, seed=2)
W1 = arr(4, 3, 3, seed=3)

CASES = {
    "cosine_embedding_loss": (lambda T, a, b: T.cosine_embedding_loss(a, b, T.tensor([1.0, -1.0]), 0.1, 2),
                              [Y2, arr(2, 3, seed=3)]),
    "hinge_embedding_loss": (lambda T, a: T.hinge_embedding_loss(a, T.tensor(T3), 0.5, 0), [Y2]),
    "margin_ranking_loss": (lambda T, a, b: T.margin_ranking_loss(a, b, T.tensor(T3), 0.2), [Y2, arr(2, 3, seed=3)]),
    "triplet_margin_loss": (lambda T, a, p, n: T.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True, 1),
                            [Y2, arr(2, 3, seed=3), arr(2, 3, seed=4)]),
    "poisson_nll_loss": (lambda T, a, t: T.poisson_nll_loss(a, t, True, True, 1e-8, 2), [Y2, arr(2, 3, seed=3, lo=0)]),
    "kl_div": (lambda T, a, t: (T.kl_div(a, t), T.kl_div(a, t, 1), T.kl_div(a, t, 2)),
               [Y2, arr(2, 3, seed=3, lo=0.1)]),
    "default reductions": (lambda T, a, b: (T.margin_ranking_loss(a, b, T.tensor(T3)), T.triplet_margin_loss(a, b, a),
                                            T.hinge_embedding_loss(a, T.tensor(T3)),
                                            T.cosine_embedding_loss(a, b, T.tensor([1.0, -1.0]))),
                           [Y2, arr(2, 3, seed=3)]),
    "ctc_loss default": (lambda T, lp: T.ctc_loss(lp.log_softmax(2), T.tensor([[1, 2], [1, 1]]), [5, 4], [2, 2]),
                         [arr(5, 2, 4, seed=7)]),
    "kl_div log_target none": (lambda T, a, t: T.kl_div(a, t, 0, log_target=True), [Y2, arr(2, 3, seed=3)]),
    "bce_with_logits": (lambda T, a, t, w, pw: T.binary_cross_entropy_with_logits(a, t, w.detach(), pw.detach(), 1),
                        [Y2, arr(2, 3, seed=3, lo=0), arr(3, seed=4), arr(3, seed=6, lo=0.5)]),
    "bce_with_logits defaults": (lambda T, a, t: T.binary_cross_entropy_with_logits(a, t), [Y2, arr(2, 3, lo=0)]),
    "ctc_loss": (lambda T, lp: T.ctc_loss(lp.log_softmax(2), T.tensor([[1, 2], [1, 1]]), [5, 4], [2, 2], 0, 2),
                 [arr(5, 2, 4, seed=7)]),
    "rms_norm": (lambda T, x, w: T.rms_norm(x, [4], w, 1e-6), [X, arr(4, seed=8)]),
    "convolution": (lambda T, x, w, b: T.convolution(x, w, b, [2], [1], [1], False, [0], 1),
                    [arr(2, 3, 8, seed=1), W1, arr(4, seed=9)]),
    "convolution transposed": (lambda T, x, w: T.convolution(x, w, None, [2], [1], [1], True, [1], 1),
                               [arr(2, 4, 5, seed=1), W1]),
    "constant_pad_nd": (lambda T, x: T.constant_pad_nd(x, [1, 2, 0, 1], 0.5), [X]),
    "grid_sampler": (lambda T, x, g: (T.grid_sampler(x, g, 0, 0, False), T.grid_sampler_2d(x, g, 1, 1, True),
                                      T.grid_sampler(x, g, 2, 2, True)),
                     [arr(1, 2, 4, 4, seed=1), arr(1, 3, 3, 2, seed=2)]),
    "grid_sampler_3d": (lambda T, x, g: T.grid_sampler_3d(x, g, 0, 1, False),
                        [arr(1, 2, 3, 3, 3, seed=1), arr(1, 2, 2, 2, 3, seed=2)]),
    "affine_grid_generator": (lambda T, th: T.affine_grid_generator(th, [1, 1, 3, 4], False), [arr(1, 2, 3)]),
    "native_layer_norm": (lambda T, x, w, b: T.native_layer_norm(x, [4], w, b, 1e-5),
                          [X, arr(4, seed=2), arr(4, seed=3)]),
    "native_batch_norm train": (lambda T, x, w, b: T.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
                                [X, arr(3, seed=2), arr(3, seed=3)]),
    "native_batch_norm eval": (lambda T, x: T.native_batch_norm(x, None, None, T.zeros(3), T.ones(3), False, 0.1,
                                                                1e-5), [X]),
    "native_group_norm": (lambda T, x, w, b: T.native_group_norm(x, w, b, 2, 3, 4, 3, 1e-5),
                          [X, arr(3, seed=2), arr(3, seed=3)]),
    "native_dropout eval": (lambda T, x: T.native_dropout(x, 0.5, False), [X]),
    "native_channel_shuffle": (lambda T, x: T.native_channel_shuffle(x.detach(), 2), [arr(1, 4, 2, seed=4)]),
    "max_pool1d_with_indices": (lambda T, x: T.max_pool1d_with_indices(x, 3, 2, 1, 1, True), [arr(2, 3, 7)]),
    "dropouts eval": (lambda T, x: (T.feature_dropout(x, 0.5, False), T.feature_alpha_dropout(x, 0.3, False)), [X]),
    "norm_except_dim": (lambda T, x: (T.norm_except_dim(x, 2, 0), T.norm_except_dim(x, 3, 1),
                                      T.norm_except_dim(x, 2, -1), T.norm_except_dim(x, 2, 2)), [X]),
    "frobenius nuclear": (lambda T, x: (T.frobenius_norm(x, [1]), T.frobenius_norm(x, [1, 2], True),
                                        T.nuclear_norm(x[0]), T.nuclear_norm(x, [1, 2]), T.nuclear_norm(x[0], True)),
                          [X]),
    "segment_reduce sum": (lambda T, x: T.segment_reduce(x, "sum", lengths=T.tensor([1, 0, 3])), [arr(4, 2)]),
    "segment_reduce mean": (lambda T, x: T.segment_reduce(x, "mean", lengths=T.tensor([1, 3]), initial=2.0),
                            [arr(4, 2)]),
    "segment_reduce max offsets": (lambda T, x: T.segment_reduce(x, "max", offsets=T.tensor([0, 2, 4])),
                                   [np.array([[1.0, 2.0], [1.0, 0.0], [3.0, 3.0], [-1.0, 3.0]], np.float32)]),
    "segment_reduce prod": (lambda T, x: T.segment_reduce(x, "prod", lengths=T.tensor([2, 2])),
                            [np.array([1.5, 0.0, -2.0, 3.0], np.float32)]),
    "segment_reduce min empty": (lambda T, x: T.segment_reduce(x, "min", lengths=T.tensor([0, 4])),
                                 [np.array([1.0, 1.0, -2.0, 3.0], np.float32)]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, inputs = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(fn, inputs, rtol=1e-4, atol=1e-5)


def _flat_weights(mode, layers, dirs, inp, hidden, proj=0, seed=0):
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    out, s = [], seed
    for layer in range(layers):
        for _ in range(dirs):
            i = inp if layer == 0 else dirs * (proj or hidden)
            out += [arr(gates * hidden, i, seed=s), arr(gates * hidden, proj or hidden, seed=s + 1),
                    arr(gates * hidden, seed=s + 2), arr(gates * hidden, seed=s + 3)]
            if proj:
                out.append(arr(proj, hidden, seed=s + 4))
            s += 5
    return out


@needs_torch
@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_flat_rnn(mode):
    ws = _flat_weights(mode, 2, 2 if mode in ("lstm", "gru") else 1, 3, 4)
    dirs = 2 if mode in ("lstm", "gru") else 1

    def fn(T, x, h, *w):
        hx = (h, h * 0.5) if mode == "lstm" else h
        return getattr(T, mode)(x, hx, list(w), True, 2, 0.0, False, dirs == 2, True)
    check(fn, [arr(2, 5, 3, seed=11), arr(2 * dirs, 2, 4, seed=12)] + ws, rtol=1e-4, atol=1e-5)


@needs_torch
def test_flat_lstm_packed_no_bias_proj():
    ws = [w for i, w in enumerate(_flat_weights("lstm", 1, 1, 3, 4, proj=2)) if i % 5 not in (2, 3)]

    def fn(T, x, h, c, *w):
        return T.lstm(x, T.tensor([2, 2, 1]), (h, c), list(w), False, 1, 0.0, False, False)
    check(fn, [arr(5, 3, seed=1), arr(1, 2, 2, seed=2), arr(1, 2, 4, seed=3)] + ws, rtol=1e-4, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("mode", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
def test_cells(mode):
    g = {"lstm_cell": 4, "gru_cell": 3}.get(mode, 1)

    def fn(T, x, h, wi, wh, bi, bh):
        hx = [h, h * 2] if mode == "lstm_cell" else h
        return getattr(T, mode)(x, hx, wi, wh, bi, bh)
    check(fn, [arr(2, 3), arr(2, 4, seed=1), arr(4 * g, 3, seed=2), arr(4 * g, 4, seed=3), arr(4 * g, seed=4),
               arr(4 * g, seed=5)], rtol=1e-4, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("pad", [None, 2])
def test_embedding_bag(mode, pad):
    check(lambda T, w: T.embedding_bag(w, T.tensor([0, 2, 4, 1, 2]), T.tensor([0, 2, 2]), False, mode, False, None,
                                       False, pad), [arr(5, 3, seed=7)])


@needs_torch
def test_embedding_bag_include_last_offset_float64():
    check(lambda T, w: T.embedding_bag(w, T.tensor([0, 2, 4, 1]), T.tensor([0, 1, 4]), False, 0, False, None, True),
          [arr(5, 3, seed=7, dtype=np.float64)])
    check_raises(lambda T: T.embedding_bag(T.ones(5, 3), T.tensor([0, 1]), None))


@needs_torch
def test_inplace_activations_and_renorm():
    def fn(T):
        xs = [T.tensor(arr(5, seed=s)) for s in range(4)]
        outs = [T.selu_(xs[0]), T.celu_(xs[1], 0.5), T.threshold_(xs[2], 0.1, 9.0), T.rrelu_(xs[3], 0.1, 0.2)]
        w = T.tensor(arr(4, 3, seed=9) * 3)
        r = T.embedding_renorm_(w, T.tensor([0, 2]), 1.0, 2.0)
        return [o is x for o, x in zip(outs, xs)] + [r is w], xs + [w]
    ref, got = run_both(fn)
    assert ref[0] == got[0]
    assert_same(ref[1], got[1])


@needs_torch
def test_dropout_samples():
    torchish.manual_seed(0)
    x = torchish.ones(200, 50)
    out, mask = torchish.native_dropout(x, 0.25, True)
    assert mask.dtype is torchish.bool and out.shape == x.shape
    assert abs(float(mask.float().mean()) - 0.75) < 0.02
    assert torchish.equal(out, mask.float() / 0.75)
    fd = torchish.feature_dropout(torchish.ones(40, 30, 2), 0.5, True)
    assert torchish.equal(fd[:, :, 0], fd[:, :, 1])
    y = torchish.ones(50, 40)
    assert torchish.alpha_dropout_(y, 0.2, True) is y and not torchish.equal(y, torchish.ones(50, 40))
    z = torchish.ones(4, 20, 3)
    assert torchish.feature_alpha_dropout_(z, 0.5, True) is z


@needs_torch
def test_batch_norm_update_stats_and_sync_kernels():
    def upd(T, x):
        rm, rv = T.zeros(3), T.ones(3)
        return T.batch_norm_update_stats(x, rm, rv, 0.1), rm, rv
    check(upd, [X], grad=False)
    # the CUDA-only kernels, checked against the batch-norm they make up (CPU torch has no kernel for them)
    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor(arr(3, seed=2), requires_grad=True)
    ref = torch.nn.functional.batch_norm(x, None, None, w, None, True, 0.1, 1e-5)
    g = torch.tensor(arr(2, 3, 4, seed=9))
    ref.backward(g)
    tx, tw, tg = torchish.tensor(X), torchish.tensor(arr(3, seed=2)), torchish.tensor(arr(2, 3, 4, seed=9))
    halves = [tx[:1], tx[1:]]
    stats = [torchish.batch_norm_stats(h, 1e-5) for h in halves]
    means, invstds = torchish.stack([s[0] for s in stats]), torchish.stack([s[1] for s in stats])
    rm, rv = torchish.zeros(3), torchish.ones(3)
    mean, invstd = torchish.batch_norm_gather_stats_with_counts(tx, means, invstds, rm, rv, 0.1, 1e-5,
                                                                torchish.tensor([4.0, 4.0]))
    m2, i2 = torchish.batch_norm_gather_stats(tx, means, invstds, None, None, 0.1, 1e-5, 4)
    np.testing.assert_allclose(m2.numpy(), mean.numpy(), rtol=1e-6)
    out = torchish.batch_norm_elemt(tx, tw, None, mean, invstd, 1e-5)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rv.numpy(), (0.9 + 0.1 * X.transpose(1, 0, 2).reshape(3, -1).var(1, ddof=1)),
                               rtol=1e-4)
    sum_dy, sum_dy_xmu, gw, gb = torchish.batch_norm_backward_reduce(tg, tx, mean, invstd, tw, True, True, True)
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-4, atol=1e-5)
    gx = torchish.batch_norm_backward_elemt(tg, tx, mean, invstd, tw, sum_dy, sum_dy_xmu,
                                            torchish.tensor([4, 4], dtype=torchish.int32))
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-4, atol=1e-5)


@needs_torch
def test_lu_unpack_solve():
    A, b = arr(2, 4, 4, seed=3), arr(2, 4, 2, seed=4)

    def fn(T, A, b):
        LU, piv = T.linalg.lu_factor(A)
        return T.lu_unpack(LU, piv), T.lu_solve(b, LU, piv)
    check(fn, [A, b], rtol=1e-4, atol=1e-5)
    check(lambda T, A: T.lu_unpack(*T.linalg.lu_factor(A), False, False), [A], grad=False)
    check(lambda T, A: T.lu_unpack(*T.linalg.lu_factor(A)), [arr(5, 3, seed=5)], rtol=1e-4, atol=1e-5)
    check_raises(lambda T: T.matrix_rank(T.ones(3, 3)))


@needs_torch
def test_histogramdd():
    x = arr(20, 2, seed=3)
    w = arr(20, seed=4, lo=0)
    for kw in ({"bins": 3}, {"bins": [2, 4], "range": [-1.0, 1.0, -0.5, 0.5]}, {"bins": 3, "weight": w,
                                                                                 "density": True}):
        def fn(T, kw=kw):
            k = dict(kw)
            if "weight" in k:
                k["weight"] = T.tensor(k["weight"])
            return tuple(T.histogramdd(T.tensor(x), **k))
        ref, got = run_both(fn)
        assert_same(ref, got, rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("case", ["1d", "0d", "int_1d", "int_2d", "bool_2d"])
def test_histogramdd_checks_in_pytorchs_order(case):
    """Rank first (0-d: IndexError of size(-1); 1-d: RuntimeError), then the dtype (NotImplementedError)."""
    make = {"1d": lambda T: T.ones(3), "0d": lambda T: T.ones(()), "int_1d": lambda T: T.ones(3, dtype=T.int64),
            "int_2d": lambda T: T.ones(3, 2, dtype=T.int64), "bool_2d": lambda T: T.ones(3, 2, dtype=T.bool)}[case]
    same_error(lambda T: T.histogramdd(make(T), 2))


@needs_torch
@pytest.mark.parametrize("case", ["nothing", "one_tensor", "equation_only", "empty_list", "subscript_60",
                                  "subscript_negative", "output_subscript_70", "subscript_str"])
def test_einsum_argument_errors_as_pytorchs_python_wrapper(case):
    args = {"nothing": lambda T, x: (), "one_tensor": lambda T, x: (x,), "equation_only": lambda T, x: ("ij",),
            "empty_list": lambda T, x: ("ij", []), "subscript_60": lambda T, x: (x, [60, 1]),
            "subscript_negative": lambda T, x: (x, [-1, 1]), "output_subscript_70": lambda T, x: (x, [0, 1], [70]),
            "subscript_str": lambda T, x: (x, ["a", 1])}[case]
    fn = lambda T: T.einsum(*args(T, T.ones(2, 2)))  # noqa: E731
    if case == "subscript_str":  # (PyTorch's own TypeError comes from comparing a str with 0)
        check_raises(fn)
    else:
        same_error(fn)


@needs_torch
def test_binomial_properties_and_errors():
    torchish.manual_seed(0)
    c, p = torchish.full((4000,), 10.0), torchish.full((4000,), 0.3)
    s = torchish.binomial(c, p)
    assert s.dtype is torchish.float32 and s.shape == (4000,)
    assert abs(float(s.mean()) - 3.0) < 0.15 and abs(float(s.var()) - 2.1) < 0.3
    assert float(s.min()) >= 0 and float(s.max()) <= 10
    check_raises(lambda T: T.binomial(T.tensor([3, 4]), T.tensor([0.5, 0.5])))
    check_raises(lambda T: T.binomial(T.tensor([3.0]), T.tensor([0.5], dtype=T.float64)))


@needs_torch
def test_lowrank_and_lobpcg():
    rng = np.random.default_rng(0)
    A = (rng.standard_normal((12, 3)) @ rng.standard_normal((3, 9))).astype(np.float64)
    torchish.manual_seed(0)
    U, S, V = torchish.svd_lowrank(torchish.tensor(A), q=4)
    ref = torch.svd_lowrank(torch.tensor(A), q=4)
    assert [tuple(t.shape) for t in (U, S, V)] == [tuple(t.shape) for t in ref]
    assert S.dtype is torchish.float64
    np.testing.assert_allclose(S.numpy()[:3], ref[1].numpy()[:3], rtol=1e-8)
    np.testing.assert_allclose((U @ torchish.diag(S) @ V.mT).numpy(), A, atol=1e-8)
    U, S, V = torchish.svd_lowrank(torchish.tensor(A.T), q=3)
    np.testing.assert_allclose((U @ torchish.diag(S) @ V.mT).numpy(), A.T, atol=1e-8)
    Up, Sp, Vp = torchish.pca_lowrank(torchish.tensor(A), q=3)
    rp = torch.pca_lowrank(torch.tensor(A), q=3)
    np.testing.assert_allclose(Sp.numpy(), rp[1].numpy(), rtol=1e-8)
    check_raises(lambda T: T.pca_lowrank(T.ones(3, 4), q=5))
    M = rng.standard_normal((9, 9))
    M = M @ M.T + 9 * np.eye(9)
    E, X = torchish.lobpcg(torchish.tensor(M), k=2)
    Er, Xr = torch.lobpcg(torch.tensor(M), k=2)
    np.testing.assert_allclose(E.numpy(), Er.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.abs(X.numpy().T @ Xr.numpy()), np.eye(2), atol=1e-5)
    check_raises(lambda T: T.lobpcg(T.eye(4, dtype=T.float64), k=2))


@needs_torch
@pytest.mark.parametrize("dim", [1, 5])
def test_sobol_unscrambled_matches_torch(dim):
    def fn(T):
        e = T.quasirandom.SobolEngine(dim)
        pts = [e.draw(5), e.draw(3, dtype=T.float64), e.fast_forward(6).draw(2), e.draw_base2(4)]
        mid = (e.num_generated, e.quasi.clone(), repr(e))
        pts += [e.reset().draw(1), e.draw_base2(0), e.draw_base2(1)]
        return pts, mid, e.sobolstate
    ref, got = run_both(fn)
    assert_same(ref, got, rtol=0, atol=0)
    check_raises(lambda T: T.quasirandom.SobolEngine(2).fast_forward(3).draw_base2(2))
    check_raises(lambda T: T.quasirandom.SobolEngine(0))


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_sobol_scrambled_first_point_is_made_at_construction(default):
    """A scrambled engine's first point comes from construction time, in the default dtype of then: a float64 draw
    shows its float32 rounding, as PyTorch's (before, torchish's float64 first point was exact), also after
    ``reset()``; ``fast_forward`` skips it."""
    def fn(T):
        old = T.get_default_dtype()
        T.set_default_dtype(getattr(T, default))
        try:
            e = T.quasirandom.SobolEngine(3, scramble=True, seed=5)
        finally:
            T.set_default_dtype(old)
        first = [e.draw(2, dtype=T.float64), e.draw(1)]
        e.reset()
        again = [e.draw(1, dtype=T.float64), e.reset().fast_forward(1).draw(1, dtype=T.float64)]
        return first, again
    ref, got = run_both(fn)
    assert_same(ref, got, rtol=0, atol=0)


@needs_torch
def test_sobol_scrambled_properties():
    e = torchish.quasirandom.SobolEngine(3, scramble=True, seed=7)
    ref = torch.quasirandom.SobolEngine(3, scramble=True, seed=7)
    assert repr(e) == repr(ref)
    pts = e.draw_base2(6)
    assert pts.dtype is torchish.float32 and pts.shape == (64, 3)
    again = torchish.quasirandom.SobolEngine(3, scramble=True, seed=7).draw(64)
    assert torchish.equal(pts, again)
    a = pts.numpy()
    assert a.min() >= 0 and a.max() < 1
    # a (0, m, 1)-net in every coordinate: each of the 64 intervals [k/64, (k+1)/64) holds exactly one point
    for d in range(3):
        assert sorted(np.floor(a[:, d] * 64).astype(int).tolist()) == list(range(64))
    # and pairs of coordinates stratify the 8 x 8 grid evenly (t = 0 for Sobol's first two dimensions)
    cells = np.floor(a[:, :2] * 8).astype(int)
    assert len({tuple(c) for c in cells}) == 64
    assert not torchish.equal(pts, torchish.quasirandom.SobolEngine(3, scramble=True, seed=8).draw(64))


@needs_torch
@pytest.mark.parametrize("case", ["histogramdd_bins", "histogramdd_bin_list", "histogram_bins", "bfloat16_bins",
                                  "gradient_uint8"])
def test_half_histograms_and_uint8_gradient_refused_as_pytorch(case):
    """A number of bins has no half-precision kernel in PyTorch (edges tensors do: compared by value below), and
    torch.gradient refuses uint8."""
    fn = {"histogramdd_bins": lambda T: T.histogramdd(T.ones(3, 2, dtype=T.float16), 2),
          "histogramdd_bin_list": lambda T: T.histogramdd(T.ones(3, 2, dtype=T.float16), [2, 2]),
          "histogram_bins": lambda T: T.histogram(T.ones(3, dtype=T.float16), 2),
          "bfloat16_bins": lambda T: T.histogram(T.ones(3, dtype=T.bfloat16), 2),
          "gradient_uint8": lambda T: T.gradient(T.ones(3, dtype=T.uint8))}[case]
    same_error(fn)
    edges = lambda T: T.tensor([0.0, 1.0, 2.0], dtype=T.float16)  # noqa: E731
    ref, got = run_both(lambda T: (T.histogramdd(T.ones(3, 2, dtype=T.float16), [edges(T)] * 2).hist,
                                   T.histogram(T.ones(3, dtype=T.float16), edges(T)).hist))
    assert_same(ref, got)
